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

from :math:`\\theta = 0.5` and :math:`\\gamma` = the overall click rate. With ``relevance="document"`` each
document (a (query, document) pair of the log) has its own :math:`\\gamma_d`, which needs the same document shown
at several ranks: a stochastic logger, or several loggers. With a deterministic logger every document sits at one
rank and :math:`\\theta` cannot be told from :math:`\\gamma` (the likelihood is flat along :math:`\\theta_k
\\gamma_d` = const): that estimate is then refused. ``relevance="features"`` is the paper's regression EM:
:math:`\\gamma_d = \\sigma(f(x_d))` of the document's features, f a LightGBM model refitted at each M-step. The
paper fits f to binary relevance labels sampled from the posteriors; here f is fitted to the posteriors themselves
(each document's mean posterior relevance over its rows, weighted by its rows, LightGBM's ``cross_entropy``
objective), the expectation of that sample, with the M-step's objective (the expected log-likelihood) maximised
approximately over the model class. The features carry what one document shown at one rank cannot: similar
documents shown at different ranks, in other queries, so it reads a deterministic logger's log too. That needs the
rank not to be a function of the document's own features: a deterministic logger's rank also depends on the
query's other documents, which is what tells examination from relevance; where it does not (every query alike),
the likelihood is as flat as before and the estimate says what the model class assumed, not what the log showed.
And it needs the relevance to be a function of the features: what a logger knows beyond them moves with the rank,
and EM puts it into the examination (a logger that ranks by labels the features only partly predict gives an
examination that falls too steeply; the tests show both cases).
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

from .._constraints import SEED, Integer, Options, Real, check
from .log import ClickLog


#: what EM's relevance is a function of (module docstring)
RELEVANCE = ("document", "features")
#: LightGBM's settings for regression EM's relevance model, refitted at every M-step
RELEVANCE_MODEL = {"objective": "cross_entropy", "learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 20,
                   "num_threads": 1, "deterministic": True, "verbosity": -1}
#: its boosting rounds at each M-step
RELEVANCE_ROUNDS = 100


class ExaminationEstimate(NamedTuple):
    """EM's examination per rank (``theta``, ranks 1..K), its ratio to the first rank's (``relative``), each
    document's click probability once examined (``gamma``), and the iterations run."""

    theta: np.ndarray
    relative: np.ndarray
    gamma: np.ndarray
    iterations: int
    converged: bool


def estimate_examination(log: ClickLog, *, relevance: str = "document", max_iterations: int | None = None,
                         tolerance: float = 1e-5, seed: int = 0) -> ExaminationEstimate:
    """The position bias of ``log`` by EM (see the module), until no :math:`\\theta_k` moves by more than
    ``tolerance`` in an iteration, or ``max_iterations`` (default 1000, with ``relevance="features"`` 100: each
    of its M-steps fits a LightGBM model of the log's documents, ``RELEVANCE_ROUNDS`` rounds of
    ``RELEVANCE_MODEL``, seeded with ``seed``).

    >>> from plboost.clicks import simulate_clicks
    >>> from plboost.data import make_synthetic
    >>> data = make_synthetic(n_queries=40, docs_per_query=(8, 8), seed=2)
    >>> log = simulate_clicks(data, data.X[:, 0], n_impressions=40_000, top_k=5, temperature=2.0, seed=1)
    >>> estimate_examination(log).relative.round(2)  # the simulator's (1/k)^1: 1, 0.5, 0.33, 0.25, 0.2
    array([1.  , 0.51, 0.34, 0.24, 0.21])
    """
    if not isinstance(log, ClickLog):
        raise TypeError(f"estimate_examination: log must be a ClickLog, got {type(log).__name__}")
    relevance = check(relevance, Options(*RELEVANCE), "relevance", "estimate_examination")
    if max_iterations is None:
        max_iterations = 100 if relevance == "features" else 1000
    max_iterations = check(max_iterations, Integer(low=1), "max_iterations", "estimate_examination")
    tolerance = check(tolerance, Real(low=0.0, low_open=True), "tolerance", "estimate_examination")
    seed = check(seed, SEED, "seed", "estimate_examination")
    rank = log.position.astype(np.int64) - 1
    depth = int(rank.max()) + 1 if rank.size else 0
    document = log.document
    click = log.click.astype(np.float64)
    rows = np.bincount(document, minlength=log.n_documents).astype(np.float64)
    shown = rows > 0
    if depth < 2:
        raise ValueError(f"estimate_examination: the log shows {depth} rank(s): examination is estimated per rank "
                         "relative to the first, which needs two at least")
    if relevance == "document":
        mean_rank = np.divide(np.bincount(document, weights=rank, minlength=log.n_documents), rows,
                              out=np.zeros(log.n_documents), where=shown)
        varied = np.bincount(document, weights=(rank - mean_rank[document]) ** 2, minlength=log.n_documents) > 0
        if not varied[shown].any():
            raise ValueError("estimate_examination: every document of the log was shown at one rank only (a "
                             "deterministic logger): examination cannot be told from relevance per document; use "
                             "relevance='features' (regression EM), or give the examination (from an experiment "
                             "that swaps ranks)")
    per_rank = np.bincount(rank, minlength=depth).astype(np.float64)
    theta = np.full(depth, 0.5)
    gamma = np.full(log.n_documents, float(click.mean()))
    model = _RelevanceModel(log, shown, rows, seed) if relevance == "features" else None
    converged, iterations = False, 0
    while not converged and iterations < max_iterations:
        iterations += 1
        t, g = theta[rank], gamma[document]
        neither = np.maximum(1.0 - t * g, 1e-300)
        examined = np.where(click == 1, 1.0, t * (1.0 - g) / neither)
        posterior = np.where(click == 1, 1.0, (1.0 - t) * g / neither)
        new_theta = np.bincount(rank, weights=examined, minlength=depth) / np.maximum(per_rank, 1.0)
        mean_posterior = np.divide(np.bincount(document, weights=posterior, minlength=log.n_documents), rows,
                                   out=np.zeros(log.n_documents), where=shown)
        gamma = mean_posterior if model is None else model.fit(mean_posterior)
        converged = np.abs(new_theta - theta).max() <= tolerance
        theta = new_theta
    return ExaminationEstimate(theta, theta / theta[0], gamma, iterations, bool(converged))


class _RelevanceModel:
    """Regression EM's M-step for the relevance: a LightGBM model of the shown documents' features fitted to their
    mean posterior relevance, each weighted by its rows (its expected log-likelihood is that weighted cross
    entropy); predicts every document of the log, shown or not. Each M-step fits anew: boosting on from the last
    step's model instead grows it until it tells the documents apart one by one, where the likelihood is flat
    again (on a deterministic log the estimate then drifted by 40%)."""

    def __init__(self, log: ClickLog, shown: np.ndarray, rows: np.ndarray, seed: int):
        import lightgbm as lgb

        self._lgb = lgb
        self._X = np.asarray(log.X, dtype=np.float64)
        self._shown = shown
        self._dataset = lgb.Dataset(self._X[shown], label=np.zeros(int(shown.sum())), weight=rows[shown],
                                    params={"verbosity": -1}, free_raw_data=False).construct()
        self._params = {**RELEVANCE_MODEL, "seed": seed}

    def fit(self, mean_posterior: np.ndarray) -> np.ndarray:
        self._dataset.set_label(np.clip(mean_posterior[self._shown], 0.0, 1.0))
        booster = self._lgb.train(self._params, self._dataset, RELEVANCE_ROUNDS)
        return np.clip(booster.predict(self._X), 1e-6, 1.0 - 1e-6)
