"""Relevance estimates from a click log: each document's estimated probability of relevance, corrected for the
position bias of clicks, to train a ranker on (``../shared/spec/clicks.md`` section 2 has the derivations).

Every estimator averages one value per impression of the document's query: over the :math:`N_q` impressions of
query q, :math:`\\hat R_d = \\frac{1}{N_q} \\sum_{i: q_i = q} x_i(d)`, where, for d shown at rank :math:`k_i(d)`
with click :math:`c_i(d)` (and :math:`c = 0`, :math:`\\theta = \\alpha = \\beta = 0` where d was not shown):

- ``naive``: :math:`x = c_i(d)`, the clicks' rate (biased: it rewards what the logger put on top);
- ``ips``: :math:`x = c_i(d) / \\theta_{k_i(d)}`, estimates :math:`\\gamma_d` [1]_;
- ``policy_aware``: :math:`x = c_i(d) / \\rho_d`, :math:`\\rho_d = E_{y \\sim \\pi_0}[\\theta_{k(d|y)}]`,
  estimates :math:`\\gamma_d` [2]_;
- ``affine``: :math:`x = (c_i(d) - \\beta_{k_i(d)}) / \\bar\\alpha_d`, estimates :math:`R_d` [3]_;
- ``doubly_robust``: :math:`x = \\hat R^0_d + (c_i(d) - \\alpha_{k_i(d)} \\hat R^0_d - \\beta_{k_i(d)}) /
  \\bar\\alpha_d`, estimates :math:`R_d` [4]_,

with the click model's examination :math:`\\theta_k` and affine terms :math:`P(c = 1 \\mid k) = \\alpha_k R + \\beta_k`
(:class:`~plboost.clicks.models.PositionBasedModel`), the logging policy :math:`\\pi_0`'s expected examination
:math:`\\rho_d` and :math:`\\bar\\alpha_d = E_{\\pi_0}[\\alpha_{k(d)}]` (:meth:`PlackettLucePolicy.exposure
<plboost.policies.PlackettLucePolicy.exposure>`), and :math:`\\gamma_d = \\epsilon^- + (\\epsilon^+ - \\epsilon^-) R_d`
the examined document's click probability, which orders documents as R does.

.. [1] Inverse propensity scoring (Wang et al., SIGIR 2016; Joachims et al., WSDM 2017). Unbiased only when every
   document that can be clicked is shown in every impression: under a cut-off it estimates
   :math:`P_{\\pi_0}(\\text{shown}) \\gamma_d` (what a deterministic top-k logger never shows it estimates as 0).
.. [2] The policy-aware estimator (Oosterhuis and de Rijke, SIGIR 2020): unbiased wherever :math:`\\rho_d > 0`, so
   with a stochastic logger that can show every document in its top k. A document with :math:`\\rho_d = 0`
   (beyond a deterministic logger's cut-off) gets 0 and is counted in :attr:`RelevanceEstimates.unreachable`.
.. [3] The affine correction of trust bias (Vardasbi et al., CIKM 2020), in its policy-aware form: unbiased where
   :math:`\\bar\\alpha_d > 0`; negative for a document shown and not clicked.
.. [4] Doubly robust (Oosterhuis, TOIS 2023): unbiased wherever :math:`\\bar\\alpha_d > 0`, whatever the regression
   estimate :math:`\\hat R^0` (any prediction of R per document, made without this log's clicks); where
   :math:`\\bar\\alpha_d = 0` it is :math:`\\hat R^0_d`.

``clip`` replaces :math:`\\rho_d` (or :math:`\\bar\\alpha_d`) below it by it, trading the unbiasedness for
variance: clipped IPS estimates :math:`(\\rho_d / \\tau) \\gamma_d` there. Queries without an impression have no
estimate (:attr:`RelevanceEstimates.observed` is False for their documents).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._constraints import Options, Real, check
from .._values import plain_value
from ..policies import PlackettLucePolicy
from .log import ClickLog
from .models import PositionBasedModel

#: the estimators, by name
ESTIMATORS = ("naive", "ips", "policy_aware", "affine", "doubly_robust")


class RelevanceEstimates(NamedTuple):
    """Per document of a click log: the estimate, whether its query had an impression (``observed``), and whether
    the logging policy could never show it where the estimator needs it shown (``unreachable``: a propensity of 0;
    its estimate is 0, or the regression's for doubly robust)."""

    values: np.ndarray
    observed: np.ndarray
    unreachable: np.ndarray
    estimator: str


def logging_policy(log: ClickLog, *, temperature: float | None = None, top_k: int | None = None) -> PlackettLucePolicy:
    """The policy that logged ``log``: its documents' logging scores, shown at the temperature and cut-off its
    metadata records (a simulated log's), unless given."""
    if log.logging_scores is None:
        raise ValueError("the click log has no logging scores (the documents table's logging_score column): the "
                         "policy-aware estimators need the logging policy")
    recorded = log.metadata.get("logging", {})
    temperature = recorded.get("temperature") if temperature is None else temperature
    top_k = recorded.get("top_k") if top_k is None else top_k
    if temperature is None or top_k is None:
        raise ValueError("the click log does not record its logging policy's temperature and cut-off; give "
                         "logging_temperature= and logging_top_k=")
    return PlackettLucePolicy(log.logging_scores, log.offsets, temperature=temperature, top_k=top_k)


def relevance_estimates(log: ClickLog, estimator: str = "policy_aware", *,
                        click_model: PositionBasedModel | None = None, examination=None, regression=None,
                        clip: float | None = None, policy=None,
                        n_samples: int = 10_000, seed: int = 0) -> RelevanceEstimates:
    """Each document's relevance estimate from ``log`` by ``estimator`` (see the module).

    ``click_model``: what the estimators assume of clicks (its examination for ``ips`` and ``policy_aware``, its
    affine terms for ``affine`` and ``doubly_robust``); ``examination`` (theta_1, theta_2, ...) replaces its
    examination, e.g. one estimated from the log: probabilities, or any non-negative numbers proportional to them
    (EM's ``relative``, theta_k / theta_1, may exceed 1 where a lower rank looks more examined), which scale the
    estimates by the inverse of their scale. ``regression``: doubly robust's per-document
    :math:`\\hat R^0`, or a function of the log's affine estimates (a :class:`RelevanceEstimates`) that returns it
    (:func:`plboost.clicks.training.cross_fitted_regression`), which then shares this call's propensities.
    ``policy``: the logging policy (default :func:`logging_policy`); its propensities are exact for queries of at
    most 12 documents and sampled (``n_samples``, ``seed``) otherwise.
    """
    estimator = check(estimator, Options(*ESTIMATORS), "estimator", "relevance_estimates")
    if not isinstance(log, ClickLog):
        raise TypeError(f"relevance_estimates: log must be a ClickLog, got {type(log).__name__}")
    if clip is not None:
        clip = check(clip, Real(low=0.0, high=1.0, low_open=True), "clip", "relevance_estimates")
    impressions = np.bincount(log.impression_query, minlength=log.n_queries)
    per_document = np.repeat(impressions, np.diff(log.offsets)).astype(np.float64)
    observed = per_document > 0
    clicks = np.bincount(log.document, weights=log.click, minlength=log.n_documents)
    unreachable = np.zeros(log.n_documents, dtype=bool)
    if estimator == "naive":
        return RelevanceEstimates(_mean(clicks, per_document), observed, unreachable, estimator)
    affine = estimator in ("affine", "doubly_robust")
    # the log's recorded model where one is needed: its affine terms, or an examination that is not given
    model = _model_of(log) if click_model is None and (affine or examination is None) else click_model
    policy = None if estimator == "ips" else logging_policy(log) if policy is None else policy
    depth = max(int(log.position.max()), 1) if policy is None else max(int(log.position.max()), policy.top_k)
    if not affine:
        theta = model.examination(depth) if examination is None else _examination(examination, depth)
    if estimator == "ips":
        seen = theta[log.position - 1]
        if np.any((seen == 0) & (log.click == 1)):
            raise ValueError("relevance_estimates: a click at a rank the examination gives probability 0")
        weighted = np.where(log.click == 1, 1.0 / np.where(seen > 0, seen, 1.0), 0.0)
        return RelevanceEstimates(_mean(np.bincount(log.document, weights=weighted, minlength=log.n_documents),
                                        per_document), observed, unreachable, estimator)
    if estimator == "policy_aware":
        propensity = policy.exposure(theta[:policy.top_k], n_samples=n_samples, seed=seed).values
        numerator = clicks
    else:
        alpha, beta = model.affine(depth)
        propensity = policy.exposure(alpha[:policy.top_k], n_samples=n_samples, seed=seed).values
        numerator = clicks - np.bincount(log.document, weights=beta[log.position - 1], minlength=log.n_documents)
    unreachable = propensity <= 0
    if clip is not None:
        propensity = np.maximum(propensity, clip)
    safe = np.where(unreachable, 1.0, propensity)
    values = np.where(unreachable, 0.0, _mean(numerator, per_document) / safe)
    if estimator in ("policy_aware", "affine"):
        return RelevanceEstimates(values, observed, unreachable, estimator)
    if callable(regression):  # a regression fitted on the affine estimates, which this pass has computed
        regression = regression(RelevanceEstimates(values, observed, unreachable, "affine"))
    prior = _regression(regression, log.n_documents)
    treated = np.bincount(log.document, weights=alpha[log.position - 1], minlength=log.n_documents)
    correction = _mean(numerator - treated * prior, per_document) / safe
    return RelevanceEstimates(prior + np.where(unreachable, 0.0, correction), observed, unreachable, estimator)


def _mean(total: np.ndarray, impressions: np.ndarray) -> np.ndarray:
    """``total / impressions``, 0 where there were none."""
    return np.divide(total, impressions, out=np.zeros_like(total, dtype=np.float64), where=impressions > 0)


def _model_of(log: ClickLog) -> PositionBasedModel:
    """The position-based click model a simulated log records, or an error asking for one."""
    settings = log.metadata
    if settings.get("click_model") != "pbm":
        raise ValueError("relevance_estimates: give click_model= (for ips and policy_aware, examination= does): "
                         "the log does not record a "
                         "position-based click model")
    noise = {name: tuple(value) if isinstance(value, list) else value
             for name, value in settings.items() if name in ("positive_noise", "negative_noise", "examination_table")}
    return PositionBasedModel(eta=settings["eta"], relevance=settings["relevance"], threshold=settings["threshold"],
                              **noise)


def _examination(examination, depth: int) -> np.ndarray:
    theta = np.asarray(examination, dtype=np.float64)
    if theta.ndim != 1 or theta.size == 0 or not np.all(np.isfinite(theta)) or np.any(theta < 0) or \
            not np.any(theta > 0):
        raise ValueError(f"relevance_estimates: examination must be finite numbers >= 0, theta_1, theta_2, ... (not "
                         f"all 0), probabilities or proportional to them, got {examination!r}")
    return np.r_[theta, np.zeros(max(0, depth - theta.size))]


def _regression(regression, n_documents: int) -> np.ndarray:
    if regression is None:
        raise ValueError("relevance_estimates: doubly_robust needs regression=, a relevance prediction per document")
    prior = np.asarray(regression, dtype=np.float64)
    if prior.shape != (n_documents,) or not np.all(np.isfinite(prior)):
        raise ValueError(f"relevance_estimates: regression must hold a finite prediction per document "
                         f"({n_documents}), got shape {prior.shape}")
    return prior


#: what :func:`training_data` does with the documents the logging policy can never show where an estimator needs
#: them shown (:attr:`RelevanceEstimates.unreachable`): leave them out, or train on their placeholder 0
UNREACHABLE = ("drop", "zero")


def training_data(log: ClickLog, estimates: RelevanceEstimates, *, unreachable: str = "drop"):
    """The log's documents with ``estimates`` as their labels (:class:`~plboost.data.RankingData` with
    ``relevance_estimates=True``), for an objective that takes estimates (``PLRank3(gain="estimate",
    normalize=False)``). Only the queries the log has impressions of: the others have no estimate (their number
    is ``log.n_queries - result.n_queries``).

    ``unreachable``: the documents the logging policy can never show where the estimator needs them (beyond a
    deterministic logger's cut-off) have no estimate, only a placeholder 0; ``"drop"`` (the default) leaves them
    out of their queries, so that the ranker learns among the documents the log can tell apart, as the engines'
    debiasing does from the displayed rows; ``"zero"`` trains on the 0, which teaches the ranker to put them last:
    the logger's own ranking, its bias included. Doubly robust's estimates of them are its regression's, and are
    kept either way."""
    from ..data.ranking_data import RankingData

    unreachable = check(unreachable, Options(*UNREACHABLE), "unreachable", "training_data")
    if estimates.values.shape != (log.n_documents,):
        raise ValueError(f"training_data: {estimates.values.size} estimates for a log of {log.n_documents} documents")
    seen = np.bincount(log.impression_query, minlength=log.n_queries) > 0
    if not seen.any():
        raise ValueError("training_data: the click log has no impression")
    kept = seen[log.query_of_document]
    if unreachable == "drop" and estimates.estimator != "doubly_robust":
        kept &= ~estimates.unreachable
    sizes = np.bincount(log.query_of_document[kept], minlength=log.n_queries)[seen]
    if np.any(sizes == 0):
        query = log.qids[seen][np.flatnonzero(sizes == 0)[0]]
        raise ValueError(f"training_data: query {plain_value(query)!r} was displayed, yet the logging policy could "
                         "show none of its documents: the estimates were made with another policy than the log's")
    names = None if log.feature_names is None else tuple(log.feature_names)
    return RankingData(log.X[kept], estimates.values[kept], log.qids[seen], np.r_[0, np.cumsum(sizes)], None,
                       names, relevance_estimates=True)


class ClickData(NamedTuple):
    """A click log and how to estimate relevance from it: what :func:`plboost.train` (and
    :func:`plboost.engines.train`) take in place of labelled training data. ``options``: the keywords of
    :func:`relevance_estimates` (``click_model``, ``examination``, ``regression``, ``clip``, ...)."""

    log: ClickLog
    estimator: str = "policy_aware"
    options: dict = {}
    #: the documents the logging policy can never show: left out (``"drop"``) or trained on as 0 (``"zero"``);
    #: see :func:`training_data`
    unreachable: str = "drop"

    def to_ranking_data(self):
        """The training data: the log's documents labelled with the estimates (:func:`training_data`)."""
        return training_data(self.log, relevance_estimates(self.log, self.estimator, **self.options),
                             unreachable=self.unreachable)
