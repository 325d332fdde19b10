"""Position bias estimated from a click log itself: regression EM (Wang, Golbandi, Bendersky, Metzler and Najork,
"Position Bias Estimation for Unbiased Learning to Rank in Personal Search", WSDM 2018).

The position-based model says :math:`P(c = 1 \\mid d, k) = \\theta_k \\gamma_d`: a click needs the rank examined
(:math:`\\theta_k`) and the document found relevant (:math:`\\gamma_d`), independently. Both are latent; EM
alternates

- E-step: a click means examined and relevant; a non-click at rank k of document d was examined and irrelevant
  with probability :math:`\\theta_k (1 - \\gamma_d) / (1 - \\theta_k \\gamma_d)`, unexamined and relevant with
  :math:`(1 - \\theta_k) \\gamma_d / (1 - \\theta_k \\gamma_d)`;
- M-step: :math:`\\theta_k` is the mean posterior examination of the rows at rank k, :math:`\\gamma_d` the mean
  posterior relevance of document d's rows,

from :math:`\\theta = 0.5` and :math:`\\gamma` = the overall click rate. The paper fits :math:`\\gamma` by a GBDT on
the documents' features (its "regression" EM); here each document (a (query, document) pair of the log) has its
own :math:`\\gamma_d`, which needs the same document shown at several ranks: a stochastic logger, or several
loggers. With a deterministic logger every document sits at one rank and :math:`\\theta` cannot be told from
:math:`\\gamma` (the likelihood is flat along :math:`\\theta_k \\gamma_d` = const): the estimate is then refused.
Why EM and not intervention harvesting (Agarwal et al., WSDM 2019): harvesting needs two or more rankers whose
assignment does not depend on the query, which a log of one (stochastic) policy does not have, while EM reads any
log in which documents move between ranks.

:math:`\\theta` and :math:`\\gamma` are identified up to a common scale (:math:`a \\theta`, :math:`\\gamma / a`):
:attr:`ExaminationEstimate.relative` is :math:`\\theta_k / \\theta_1`, what IPS and the policy-aware estimator
need to order documents; their estimates' scale then follows the first rank's.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._constraints import Integer, Real, check
from .log import ClickLog


class ExaminationEstimate(NamedTuple):
    """EM's examination per rank (``theta``, ranks 1..K), its ratio to the first rank's (``relative``), each
    document's click probability once examined (``gamma``), and the iterations run."""

    theta: np.ndarray
    relative: np.ndarray
    gamma: np.ndarray
    iterations: int
    converged: bool


def estimate_examination(log: ClickLog, *, max_iterations: int = 1000, tolerance: float = 1e-5) -> ExaminationEstimate:
    """The position bias of ``log`` by EM (see the module), until no :math:`\\theta_k` moves by more than
    ``tolerance`` in an iteration, or ``max_iterations``.

    >>> from plboost.clicks import simulate_clicks
    >>> from plboost.data import make_synthetic
    >>> data = make_synthetic(n_queries=40, docs_per_query=(8, 8), seed=2)
    >>> log = simulate_clicks(data, data.X[:, 0], n_impressions=40_000, top_k=5, temperature=2.0, seed=1)
    >>> estimate_examination(log).relative.round(2)  # the simulator's (1/k)^1: 1, 0.5, 0.33, 0.25, 0.2
    array([1.  , 0.51, 0.34, 0.24, 0.21])
    """
    if not isinstance(log, ClickLog):
        raise TypeError(f"estimate_examination: log must be a ClickLog, got {type(log).__name__}")
    max_iterations = check(max_iterations, Integer(low=1), "max_iterations", "estimate_examination")
    tolerance = check(tolerance, Real(low=0.0, low_open=True), "tolerance", "estimate_examination")
    rank = log.position.astype(np.int64) - 1
    depth = int(rank.max()) + 1
    document = log.document
    click = log.click.astype(np.float64)
    rows = np.bincount(document, minlength=log.n_documents).astype(np.float64)
    shown = rows > 0
    mean_rank = np.divide(np.bincount(document, weights=rank, minlength=log.n_documents), rows,
                          out=np.zeros(log.n_documents), where=shown)
    varied = np.bincount(document, weights=(rank - mean_rank[document]) ** 2, minlength=log.n_documents) > 0
    if not varied[shown].any() or depth < 2:
        raise ValueError("estimate_examination: every document of the log was shown at one rank only (a "
                         "deterministic logger): examination cannot be told from relevance; give the examination "
                         "(from an experiment that swaps ranks) instead")
    per_rank = np.bincount(rank, minlength=depth).astype(np.float64)
    theta = np.full(depth, 0.5)
    gamma = np.full(log.n_documents, float(click.mean()))
    converged, iterations = False, 0
    while not converged and iterations < max_iterations:
        iterations += 1
        t, g = theta[rank], gamma[document]
        neither = np.maximum(1.0 - t * g, 1e-300)
        examined = np.where(click == 1, 1.0, t * (1.0 - g) / neither)
        relevant = np.where(click == 1, 1.0, (1.0 - t) * g / neither)
        new_theta = np.bincount(rank, weights=examined, minlength=depth) / np.maximum(per_rank, 1.0)
        gamma = np.divide(np.bincount(document, weights=relevant, minlength=log.n_documents), rows,
                          out=np.zeros(log.n_documents), where=shown)
        converged = np.abs(new_theta - theta).max() <= tolerance
        theta = new_theta
    return ExaminationEstimate(theta, theta / theta[0], gamma, iterations, bool(converged))
