"""Each estimator checked for unbiasedness by simulation, as ../shared/spec/clicks.md section 5 does: over many
simulated logs, the mean of the metric it estimates equals the metric computed from the true relevance, within
standard errors; and each estimator that must fail (naive everywhere, IPS beyond a cut-off or under trust bias)
fails visibly."""

import dataclasses
import functools
import re

import numpy as np
import pytest

from plboost.clicks import CascadeModel, PositionBasedModel, simulate_clicks
from plboost.clicks.estimators import logging_policy, relevance_estimates
from plboost.clicks.models import relevance_of_labels
from plboost.clicks.training import cross_fitted_regression
from plboost.engines.lightgbm import regression_model
from plboost.data import RankingData
from plboost.objectives import OBJECTIVES
from plboost.policies import PlackettLucePolicy

N_LOGS, N_IMPRESSIONS = 120, 3000


@pytest.fixture(scope="module")
def queries():
    """50 queries of 10 documents, labels 0-4, a logger's scores that know the labels a little."""
    rng = np.random.default_rng(20240611)
    labels = rng.integers(0, 5, size=500).astype(np.float64)
    offsets = np.arange(0, 501, 10)
    data = RankingData(rng.normal(size=(500, 3)).astype(np.float32), labels, np.arange(50), offsets)
    logger = 0.5 * labels + rng.normal(size=500)
    evaluated = labels + rng.normal(scale=2.0, size=500)  # the ranking whose DCG@5 is estimated
    return data, logger, evaluated


def dcg_weights(scores, offsets, k=5):
    """omega_d: 1 / log2(1 + rank) of each document in the deterministic ranking of ``scores``, 0 below k."""
    return PlackettLucePolicy(scores, offsets, temperature=0.0, top_k=k).exposure().values


def z_of(estimator, queries, model, *, top_k, temperature, estimand, **options):
    """(mean estimate - true value) / its standard error over N_LOGS logs, of the evaluated ranking's DCG@5
    computed from the estimates (``estimand``: what the estimator targets, per document)."""
    data, logger, evaluated = queries
    omega = dcg_weights(evaluated, data.offsets)
    true_value = float(omega @ estimand) / data.n_queries
    values = []
    for seed in range(N_LOGS):
        log = simulate_clicks(data, logger, n_impressions=N_IMPRESSIONS, top_k=top_k, temperature=temperature,
                              click_model=model, seed=seed)
        regression = options.get("regression")
        extra = {} if regression is None else {"regression": regression(log) if callable(regression) else regression}
        estimates = relevance_estimates(log, estimator, click_model=model, **extra)
        assert estimates.observed.all()
        values.append(float(omega @ estimates.values) / data.n_queries)
    values = np.array(values)
    return (values.mean() - true_value) / (values.std(ddof=1) / np.sqrt(N_LOGS))


def gamma(data, model):
    """What IPS and policy-aware estimate under a position-based model: eps- + (eps+ - eps-) R."""
    r = relevance_of_labels(data.labels, max_label=4)
    return model.negative_noise + (model.positive_noise - model.negative_noise) * r


PBM = PositionBasedModel()


def test_ips_is_unbiased_when_every_document_is_shown_and_naive_is_not(queries):
    data = queries[0]
    assert abs(z_of("ips", queries, PBM, top_k=10, temperature=0.0, estimand=gamma(data, PBM))) < 3
    assert abs(z_of("naive", queries, PBM, top_k=10, temperature=0.0, estimand=gamma(data, PBM))) > 5


def test_policy_aware_is_unbiased_with_a_stochastic_top_k_logger_where_ips_fails(queries):
    data = queries[0]
    want = gamma(data, PBM)
    assert abs(z_of("policy_aware", queries, PBM, top_k=5, temperature=1.0, estimand=want)) < 3
    assert abs(z_of("ips", queries, PBM, top_k=5, temperature=1.0, estimand=want)) > 5


def test_a_deterministic_top_k_logger_leaves_documents_unreachable(queries):
    """Beyond a deterministic logger's cut-off no estimator can see a document: IPS and policy-aware are biased
    there, and the documents are reported as unreachable."""
    data, logger, _ = queries
    want = gamma(data, PBM)
    assert abs(z_of("ips", queries, PBM, top_k=5, temperature=0.0, estimand=want)) > 5
    log = simulate_clicks(data, logger, n_impressions=500, top_k=5, click_model=PBM, seed=0)
    estimates = relevance_estimates(log, "policy_aware", click_model=PBM)
    assert estimates.unreachable.sum() == 250  # 5 of each query's 10
    np.testing.assert_array_equal(estimates.values[estimates.unreachable], 0.0)


TRUST = PositionBasedModel.trust_bias(top_k=10)


def test_affine_corrects_trust_bias_where_ips_does_not(queries):
    data = queries[0]
    r = relevance_of_labels(data.labels, max_label=4)
    assert abs(z_of("affine", queries, TRUST, top_k=5, temperature=1.0, estimand=r)) < 3
    # propensities alone estimate eps+_k R + eps-_k (1 - R), with noise that varies by rank: not R
    assert abs(z_of("policy_aware", queries, TRUST, top_k=5, temperature=1.0, estimand=r)) > 5


@pytest.mark.parametrize("prior", ["opposite", "constant", "good"])
def test_doubly_robust_is_unbiased_whatever_its_regression(queries, prior):
    data = queries[0]
    r = relevance_of_labels(data.labels, max_label=4)
    regression = {"opposite": 1 - r, "constant": np.full_like(r, 0.5),
                  "good": np.clip(r + np.random.default_rng(1).normal(scale=0.1, size=r.size), 0, 1)}[prior]
    assert abs(z_of("doubly_robust", queries, TRUST, top_k=5, temperature=1.0, estimand=r,
                    regression=regression)) < 3


@pytest.mark.engine
def test_doubly_robust_with_its_cross_fitted_regression_is_unbiased(queries):
    data = queries[0]
    r = relevance_of_labels(data.labels, max_label=4)
    regressor = functools.partial(regression_model, rounds=10, threads=1)
    assert abs(z_of("doubly_robust", queries, TRUST, top_k=5, temperature=1.0, estimand=r,
                    regression=lambda log: cross_fitted_regression(log, regressor, click_model=TRUST))) < 3


@pytest.mark.engine
def test_no_documents_regression_has_seen_its_own_querys_clicks(queries):
    """Cross-fitting: a query's clicks changed, its documents' regression estimates stay as they were (and the
    other fold's change)."""
    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=2000, top_k=5, temperature=1.0, click_model=TRUST, seed=8)
    regressor = functools.partial(regression_model, rounds=10, threads=1)
    before = cross_fitted_regression(log, regressor, click_model=TRUST, seed=3)
    query = 4
    rows = log.impression_query[log.impression] == query
    changed = dataclasses.replace(log, click=np.where(rows, 1 - log.click, log.click).astype(np.int8))
    after = cross_fitted_regression(changed, regressor, click_model=TRUST, seed=3)
    own = log.query_of_document == query
    np.testing.assert_array_equal(after[own], before[own])
    assert not np.array_equal(after[~own], before[~own])
    # given as a function of the affine estimates, it is fitted on those doubly robust computes in the same pass
    shared = relevance_estimates(log, "doubly_robust", click_model=TRUST, regression=lambda affine:
                                 cross_fitted_regression(log, regressor, seed=3, targets=affine))
    given = relevance_estimates(log, "doubly_robust", click_model=TRUST, regression=before)
    np.testing.assert_array_equal(shared.values, given.values)


def test_the_estimators_read_the_logging_policy_and_click_model_from_a_simulated_log(queries):
    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=400, top_k=4, temperature=0.5, click_model=TRUST, seed=3)
    policy = logging_policy(log)
    assert policy.temperature == 0.5 and policy.top_k == 4
    np.testing.assert_array_equal(relevance_estimates(log, "affine").values,
                                  relevance_estimates(log, "affine", click_model=TRUST).values)


def test_a_log_of_another_click_model_takes_an_examination_for_ips_and_policy_aware_only(queries):
    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=300, top_k=4, temperature=1.0, click_model=CascadeModel(),
                          seed=5)
    theta = [1.0, 0.6, 0.4, 0.3]
    for estimator in ("ips", "policy_aware"):
        given = relevance_estimates(log, estimator, examination=theta).values
        np.testing.assert_array_equal(given, relevance_estimates(
            log, estimator, click_model=PositionBasedModel(examination_table=theta)).values)
        with pytest.raises(ValueError, match="does not record a position-based click model"):
            relevance_estimates(log, estimator)
    with pytest.raises(ValueError, match="give click_model="):  # the affine terms are the model's, not theta's
        relevance_estimates(log, "affine", examination=theta)


@pytest.mark.parametrize("scale", [0.25, 2.5])
def test_an_examination_proportional_to_probabilities_scales_the_estimates_by_its_inverse(queries, scale):
    """EM's relative examination (theta_k / theta_1) may exceed 1 at a lower rank: taken as proportional to the
    probabilities, it scales IPS's and the policy-aware estimates by the inverse of its scale."""
    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=400, top_k=4, temperature=1.0, click_model=CascadeModel(),
                          seed=6)
    theta = np.array([0.9, 1.0, 0.4, 0.3])  # rank 2 above rank 1, as EM's may be
    for estimator in ("ips", "policy_aware"):
        base = relevance_estimates(log, estimator, examination=theta).values
        np.testing.assert_allclose(relevance_estimates(log, estimator, examination=scale * theta).values,
                                   base / scale, rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda log: relevance_estimates(log, "best"), r"estimator must be one of"),
    (lambda log: relevance_estimates(log, "doubly_robust", click_model=PBM), r"doubly_robust needs regression="),
    (lambda log: relevance_estimates(log, "ips", click_model=PBM, examination=[1.0, -0.5]),
     r"examination must be finite numbers >= 0"),
    (lambda log: relevance_estimates(log, "ips", click_model=PBM, examination=[0.0, 0.0]),
     r"examination must be .*not all 0"),
    (lambda log: relevance_estimates(log, "ips", click_model=PBM, clip=0.0), r"clip must be"),
    (lambda log: relevance_estimates("log.parquet"), r"log must be a ClickLog"),
])
def test_bad_arguments_are_refused(queries, call, message):
    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=50, top_k=4, click_model=PBM, seed=0)
    with pytest.raises((ValueError, TypeError), match=message):
        call(log)


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_a_ranker_trains_from_a_click_log_on_both_engines(engine):
    """PL-Rank-3 on the policy-aware estimates of a stochastic logger's clicks ranks the training queries by
    their true labels better than the logger's scores do (the logger knows the labels only a little)."""
    from plboost import metrics
    from plboost.clicks import ClickData
    from plboost.data import make_synthetic
    from plboost.engines import train
    from plboost.objectives import PLRank3

    data = make_synthetic(n_queries=60, docs_per_query=(10, 10), n_features=10, seed=3)
    logger = 0.5 * data.labels + np.random.default_rng(0).normal(size=data.n_docs)
    log = simulate_clicks(data, logger, n_impressions=20_000, top_k=5, temperature=1.0, click_model=PBM, seed=1)
    model = train(engine, PLRank3(gain="estimate", normalize=False, top_k=5), ClickData(log, "policy_aware"),
                  rounds=30, learning_rate=0.2, num_leaves=7)
    ndcg = metrics.ndcg(model.predict(data.X), data.labels, offsets=data.offsets, k=5)
    logger_ndcg = metrics.ndcg(logger, data.labels, offsets=data.offsets, k=5)
    assert ndcg > logger_ndcg, (ndcg, logger_ndcg)


@pytest.mark.parametrize("objective", [*sorted(OBJECTIVES), "lambdarank", "rank:ndcg"])
def test_a_log_trains_only_objectives_that_take_estimates(queries, objective):
    """Every registered objective at its defaults, and the engines' own, refuses estimate labels before training."""
    from plboost.clicks import ClickData
    from plboost.engines import train

    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=200, top_k=5, temperature=1.0, click_model=PBM, seed=1)
    engine = "xgboost" if objective == "rank:ndcg" else "lightgbm"
    chosen = OBJECTIVES[objective]() if objective in OBJECTIVES else objective
    shown = objective if objective in OBJECTIVES else repr(objective)
    with pytest.raises(ValueError, match=rf"relevance estimates \(from a click log\), which {re.escape(shown)} "
                                         r"cannot take"):
        train(engine, chosen, ClickData(log, "policy_aware"), rounds=2)


def test_training_data_holds_the_queries_with_impressions(queries):
    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=20, top_k=5, click_model=PBM, seed=2)
    estimates = relevance_estimates(log, "naive")
    from plboost.clicks import training_data

    labelled = training_data(log, estimates)
    seen = np.unique(log.impression_query)
    assert labelled.relevance_estimates and labelled.n_queries == seen.size < data.n_queries
    np.testing.assert_array_equal(labelled.qids, log.qids[seen])


@pytest.mark.parametrize("top_k, temperature", [(4, 0.0), (7, 0.0), (4, 2.0)])
def test_training_data_leaves_out_what_the_logger_can_never_show_unless_asked_to_keep_it(queries, top_k,
                                                                                          temperature):
    """unreachable="drop" (the default) keeps, of every query with an impression, exactly the documents its
    logging policy can show, with their estimates; "zero" keeps them all; doubly robust keeps its regression's
    estimates of them."""
    from plboost.clicks import training_data

    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=300, top_k=top_k, temperature=temperature, click_model=PBM,
                          seed=4)
    estimates = relevance_estimates(log, "policy_aware", click_model=PBM)
    dropped, kept = training_data(log, estimates), training_data(log, estimates, unreachable="zero")
    seen = estimates.observed
    reachable = seen & ~estimates.unreachable
    assert dropped.n_docs == reachable.sum() and kept.n_docs == seen.sum()
    np.testing.assert_array_equal(dropped.labels, estimates.values[reachable])
    np.testing.assert_array_equal(dropped.X, log.X[reachable])
    np.testing.assert_array_equal(dropped.group_sizes, np.bincount(log.query_of_document[reachable])[
        np.unique(log.query_of_document[seen])])
    if temperature == 0.0:  # each query's top_k by the logger's scores, whatever the queries drawn
        assert estimates.unreachable[seen].sum() == (10 - top_k) * kept.n_queries
    else:
        assert not estimates.unreachable.any()
    prior = np.linspace(0.0, 1.0, log.n_documents)
    robust = relevance_estimates(log, "doubly_robust", click_model=PBM, regression=prior)
    assert training_data(log, robust).n_docs == seen.sum()


def test_training_data_refuses_estimates_of_another_policy_that_shows_nothing_of_a_displayed_query(queries):
    from plboost.clicks import training_data

    data, logger, _ = queries
    log = simulate_clicks(data, logger, n_impressions=300, top_k=4, click_model=PBM, seed=4)
    estimates = relevance_estimates(log, "policy_aware", click_model=PBM)
    wrong = estimates._replace(unreachable=np.ones_like(estimates.unreachable))
    with pytest.raises(ValueError, match=r"query \d+ was displayed, yet the logging policy could show none"):
        training_data(log, wrong)
    with pytest.raises(ValueError, match="unreachable must be one of"):
        training_data(log, estimates, unreachable="keep")
