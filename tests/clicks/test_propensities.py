"""Regression EM recovers the position bias a log was simulated with, and refuses a log that cannot tell it."""

import numpy as np
import pytest

from plboost.clicks import PositionBasedModel, simulate_clicks
from plboost.clicks.estimators import relevance_estimates
from plboost.clicks.propensities import estimate_examination
from plboost.data import make_synthetic


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_queries=50, docs_per_query=(10, 10), n_features=5, seed=6)


@pytest.mark.parametrize("eta", [0.5, 1.0, 2.0])
def test_em_recovers_the_simulated_examination(data, eta):
    model = PositionBasedModel(eta=eta)
    logger = data.labels + np.random.default_rng(1).normal(scale=0.5, size=data.n_docs)  # it knows the labels
    log = simulate_clicks(data, logger, n_impressions=60_000, top_k=6, temperature=1.0, click_model=model,
                          seed=int(eta * 10))
    estimate = estimate_examination(log)
    assert estimate.converged, estimate.iterations
    np.testing.assert_allclose(estimate.relative, model.examination(6), rtol=0.06)
    naive = np.bincount(log.position - 1, weights=log.click) / np.bincount(log.position - 1)
    assert np.abs(naive / naive[0] / model.examination(6) - 1).max() > 0.1  # the clicks' own rates are not it:
    # the logger puts relevant documents on top


def test_estimated_examination_feeds_the_estimators(data):
    model = PositionBasedModel()
    log = simulate_clicks(data, data.X[:, 0].astype(np.float64), n_impressions=30_000, top_k=5, temperature=1.0,
                          click_model=model, seed=3)
    estimate = estimate_examination(log)
    known = relevance_estimates(log, "policy_aware", click_model=model).values
    learned = relevance_estimates(log, "policy_aware", click_model=model,
                                  examination=estimate.relative * model.examination(1)[0]).values
    assert np.corrcoef(known, learned)[0, 1] > 0.99


def test_a_deterministic_log_is_refused(data):
    log = simulate_clicks(data, np.random.default_rng(0).normal(size=data.n_docs), n_impressions=2000, top_k=5,
                          seed=0)
    with pytest.raises(ValueError, match=r"every document of the log was shown at one rank only"):
        estimate_examination(log)
    with pytest.raises(ValueError, match=r"tolerance must be"):
        estimate_examination(log, tolerance=0.0)
