"""Regression EM recovers the position bias a log was simulated with, and refuses a log that cannot tell it."""

import numpy as np
import pytest

from plboost.clicks import PositionBasedModel, simulate_clicks
from plboost.clicks.estimators import relevance_estimates
from plboost.clicks.propensities import estimate_examination
from plboost.data import RankingData, make_synthetic


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


@pytest.mark.engine  # LightGBM fits the relevance
@pytest.mark.parametrize("eta", [0.7, 1.5])
def test_regression_em_reads_a_deterministic_log(eta):
    """Where the relevance is a function of the features, regression EM gets the examination of a deterministic
    logger's log, which the per-document EM refuses: the same features are shown at different ranks in different
    queries. Where the logger knows more than the features (make_synthetic's labels: noisy views of latent
    qualities), what it knows moves with the rank and EM puts it into the examination: steeper than the truth."""
    base = make_synthetic(n_queries=400, docs_per_query=(10, 10), n_features=5, seed=11)
    score = base.X[:, 0] + base.X[:, 1] - base.X[:, 2]
    labels = np.searchsorted(np.quantile(score, [0.5, 0.8, 0.95]), score).astype(np.float64)
    model = PositionBasedModel(eta=eta)
    truth = model.examination(6) / model.examination(6)[0]
    noise = np.random.default_rng(2).normal(size=base.n_docs)
    for data, within in ((RankingData(base.X, labels, base.qids, base.offsets), True), (base, False)):
        log = simulate_clicks(data, noise + 0.5 * data.labels, n_impressions=100_000, top_k=6, temperature=0.0,
                              click_model=model, seed=int(eta * 10))
        with pytest.raises(ValueError, match=r"shown at one rank only.*relevance='features'"):
            estimate_examination(log)
        relative = estimate_examination(log, relevance="features").relative
        if within:
            np.testing.assert_allclose(relative, truth, rtol=0.1)
            naive = np.bincount(log.position - 1, weights=log.click) / np.bincount(log.position - 1)
            assert np.abs(naive / naive[0] / truth - 1).max() > 0.2  # the logger knows the labels: not the clicks'
        else:
            assert np.all(relative[1:] < truth[1:]), relative


def test_regression_em_refuses_bad_arguments(data):
    log = simulate_clicks(data, data.X[:, 0].astype(np.float64), n_impressions=2000, top_k=5, temperature=1.0,
                          seed=0)
    with pytest.raises(ValueError, match=r"relevance must be one of"):
        estimate_examination(log, relevance="feature")
    with pytest.raises(ValueError, match=r"max_iterations must be"):
        estimate_examination(log, relevance="features", max_iterations=0)
    one_rank = simulate_clicks(data, data.X[:, 0].astype(np.float64), n_impressions=500, top_k=1, temperature=1.0,
                               seed=0)
    with pytest.raises(ValueError, match=r"shows 1 rank"):
        estimate_examination(one_rank, relevance="features")
