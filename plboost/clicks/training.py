"""What a run trains on when it learns from a click log, named as a configuration names it (``clicks=``): an
estimator's relevance estimates, for an objective that takes them, or the log's displayed rows, for the engines'
own debiasing (XGBoost's ``lambdarank_unbiased``, LightGBM's ``position``); or, with ``clicks="logger"``, nothing
trained: the log's own logging ranker, scored beside the others.

The examination the estimators divide by is the click model the log records (a simulated log's) or, with
``examination="em"`` or ``"em_features"``, the one EM estimates from the log itself, each document's relevance its
own or a function of its features (regression EM; :mod:`plboost.clicks.propensities`).
``doubly_robust`` takes its regression estimate :math:`\\hat R^0` from :func:`cross_fitted_regression`: a model
of the affine estimates on the features, fitted on the other half of the queries, so that no document's
regression saw its own query's clicks (which keeps the estimator unbiased; Chernozhukov et al., Econometrics
Journal 2018, for cross-fitting; Oosterhuis, TOIS 2023, for the estimator). It needs a regressor
(``regressor(X, y)`` returning a prediction function; the experiment layer passes LightGBM's L2 regression). In
Python, :class:`~plboost.clicks.estimators.ClickData` with ``options={"regression": ...}`` takes any other.
"""

from __future__ import annotations

import numpy as np

from .._constraints import Integer, Options, check
from .estimators import ClickData, relevance_estimates
from .log import ClickLog
from .propensities import estimate_examination

#: how a run trains from a click log: an estimator's relevance estimates, or the displayed rows
CLICK_TRAINING = ("naive", "ips", "policy_aware", "affine", "doubly_robust", "displayed")
#: the run that trains nothing: the click log's own logging ranker (its saved model), scored as the others are
LOGGER = "logger"
#: what a run's ``clicks`` may say
CLICK_RUNS = (*CLICK_TRAINING, LOGGER)
#: where the estimators' examination comes from: the click model the log records, or EM on the log, with each
#: document's relevance its own ("em") or a function of its features ("em_features", the paper's regression EM)
EXAMINATIONS = ("recorded", "em", "em_features")


def check_click_training(clicks: str, examination: str = "recorded") -> tuple[str, str]:
    """``clicks`` and ``examination`` checked together: EM's examination serves the estimators that divide by an
    examination (``ips``, ``policy_aware``); the others refuse it."""
    clicks = check(clicks, Options(*CLICK_RUNS), "clicks")
    examination = check(examination, Options(*EXAMINATIONS), "examination")
    if examination != "recorded" and clicks not in ("ips", "policy_aware"):
        raise ValueError(f"examination={examination!r} is for clicks='ips' or 'policy_aware', which divide by the "
                         f"examination; clicks={clicks!r} does not")
    return clicks, examination


def click_training_data(log: ClickLog, clicks: str, *, examination: str = "recorded", regressor=None,
                        seed: int = 0):
    """The :class:`~plboost.data.RankingData` a run trains on from ``log``: with ``clicks="displayed"``,
    :meth:`ClickLog.displayed_rows`; else the log's documents labelled with ``clicks``' estimates
    (:class:`~plboost.clicks.estimators.ClickData`), the examination the log's or EM's; ``doubly_robust`` with
    :func:`cross_fitted_regression` by ``regressor`` (its folds drawn with ``seed``)."""
    if not isinstance(log, ClickLog):
        raise TypeError(f"click_training_data: log must be a ClickLog, got {type(log).__name__}")
    clicks, examination = check_click_training(clicks, examination)
    if clicks == LOGGER:
        raise ValueError("clicks='logger' trains nothing (it scores the click log's logging ranker): there are no "
                         "training data to make")
    if clicks == "displayed":
        return log.displayed_rows()
    options = {}
    if examination != "recorded":
        relevance = "features" if examination == "em_features" else "document"
        options["examination"] = estimate_examination(log, relevance=relevance, seed=seed).relative
    if clicks == "doubly_robust":
        if regressor is None:
            raise ValueError("clicks='doubly_robust' needs a regressor for its regression model (regressor=)")
        options["regression"] = lambda affine: cross_fitted_regression(log, regressor, seed=seed, targets=affine)
    return ClickData(log, clicks, options).to_ranking_data()


def cross_fitted_regression(log: ClickLog, regressor, *, n_folds: int = 2, seed: int = 0, targets=None,
                            **options) -> np.ndarray:
    """Doubly robust's regression estimate of each document's relevance, cross-fitted: the queries are dealt into
    ``n_folds`` folds (at random, by ``seed``), and a fold's documents are predicted by ``regressor(X, y)`` (a
    function returning a prediction function) fitted on the other folds' documents, ``y`` their affine estimates
    (``targets``, else :func:`~plboost.clicks.estimators.relevance_estimates` with ``options``; unbiased for R where
    the logger can show the document). Documents of queries without an impression, and those the logger cannot
    show, are not fitted on. Given to ``relevance_estimates(..., "doubly_robust", regression=lambda affine:
    cross_fitted_regression(log, regressor, targets=affine))``, it reuses that call's affine estimates."""
    n_folds = check(n_folds, Integer(low=2), "n_folds", "cross_fitted_regression")
    targets = relevance_estimates(log, "affine", **options) if targets is None else targets
    usable = targets.observed & ~targets.unreachable
    fold_of_query = np.random.default_rng([seed, 7]).permutation(log.n_queries) % n_folds
    fold = fold_of_query[log.query_of_document]
    prior = np.zeros(log.n_documents)
    for k in range(n_folds):
        fitted_on = usable & (fold != k)
        if not fitted_on.any():
            raise ValueError(f"cross_fitted_regression: no document outside fold {k} to fit the regression on "
                             "(too few queries with impressions)")
        predict = regressor(log.X[fitted_on], targets.values[fitted_on])
        prior[fold == k] = predict(log.X[fold == k])
    return prior
