"""Simulated click logs: the rankings shown are the logging policy's, the clicks the click model's, and a log
written and read back is the same log."""

import numpy as np
import pytest

from plboost.clicks import CascadeModel, ClickLog, PositionBasedModel, load_click_log, simulate_clicks
from plboost.clicks.models import relevance_of_labels
from plboost.data import RankingData, make_synthetic
from plboost.policies import PlackettLucePolicy


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_queries=30, docs_per_query=(12, 12), seed=4)


def test_a_deterministic_logger_shows_its_top_k_and_clicks_follow_the_model(data):
    scores = np.random.default_rng(0).normal(size=data.n_docs)  # distinct: one ranking per query
    model = PositionBasedModel(eta=1.0)
    log = simulate_clicks(data, scores, n_impressions=20_000, top_k=4, click_model=model, seed=1)
    assert log.n_impressions == 20_000 and log.document.size == 20_000 * 4
    query = log.query_of_document[log.document]
    for q in np.unique(query)[:5]:
        lo, hi = data.offsets[q], data.offsets[q + 1]
        top = lo + np.argsort(-scores[lo:hi])[:4]
        rows = query == q
        for position in range(1, 5):
            assert set(log.document[rows & (log.position == position)]) == {top[position - 1]}
    relevance = relevance_of_labels(data.labels, max_label=data.labels.max())
    alpha, beta = model.affine(4)
    for position in range(1, 5):
        rows = log.position == position
        expected = alpha[position - 1] * relevance[log.document[rows]] + beta[position - 1]
        error = np.sqrt(np.mean(expected * (1 - expected)) / rows.sum())
        assert abs(log.click[rows].mean() - expected.mean()) < 4.5 * error, position


def test_a_stochastic_logger_shows_its_policy(data):
    scores = data.X[:, 0].astype(np.float64)
    log = simulate_clicks(data, scores, n_impressions=30_000, top_k=3, temperature=0.5, seed=2)
    probabilities = np.zeros((data.n_docs, 3))  # each document's share of its query's impressions, per position
    impressions_of = np.bincount(log.impression_query, minlength=data.n_queries)
    for position in (1, 2, 3):
        rows = log.position == position
        probabilities[:, position - 1] = np.bincount(log.document[rows], minlength=data.n_docs)
    probabilities /= np.repeat(impressions_of, np.diff(data.offsets))[:, None]
    policy = PlackettLucePolicy(scores[:12], [0, 12], temperature=0.5, top_k=3)
    want = policy.rank_probabilities(method="exact").values  # query 0 alone: its rankings are its own
    n = impressions_of[0]
    z = (probabilities[:12] - want) / np.sqrt(np.maximum(want * (1 - want), 1e-12) / n)
    assert n > 500 and np.abs(z).max() < 4.5


def test_the_same_arguments_give_the_same_log_and_the_settings_are_recorded(data):
    scores = data.X[:, 1].astype(np.float64)
    model = CascadeModel(continuation=0.5)
    one = simulate_clicks(data, scores, n_impressions=500, top_k=5, temperature=1.0, click_model=model, seed=9)
    two = simulate_clicks(data, scores, n_impressions=500, top_k=5, temperature=1.0, click_model=model, seed=9)
    other = simulate_clicks(data, scores, n_impressions=500, top_k=5, temperature=1.0, click_model=model, seed=10)
    for name in ("impression", "document", "position", "click"):
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))
    assert not np.array_equal(one.document, other.document)
    assert one.metadata["seed"] == 9 and one.metadata["logging"] == {"temperature": 1.0, "top_k": 5}
    assert one.metadata["click_model"] == "cascade" and one.metadata["continuation"] == 0.5


def test_a_query_shorter_than_the_cut_off_shows_all_its_documents():
    data = RankingData(np.arange(5.0)[:, None], np.array([0, 1, 2, 0, 1.0]), np.array([1, 2]), np.array([0, 2, 5]))
    log = simulate_clicks(data, np.arange(5.0), n_impressions=50, top_k=4, seed=0)
    shown = np.bincount(log.impression, minlength=50)
    np.testing.assert_array_equal(shown, np.where(log.impression_query == 0, 2, 3))


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_written_log_reads_back_the_same(data, tmp_path, suffix):
    log = simulate_clicks(data, data.X[:, 2].astype(np.float64), n_impressions=300, top_k=5, temperature=1.0, seed=5)
    clicks, documents = tmp_path / f"clicks{suffix}", tmp_path / f"documents{suffix}"
    log.save(clicks, documents)
    back = load_click_log(clicks, documents)
    for name in ("offsets", "impression", "document", "position", "click", "doc_ids"):
        np.testing.assert_array_equal(getattr(back, name), getattr(log, name), err_msg=name)
    np.testing.assert_array_equal(back.qids, log.qids)
    np.testing.assert_allclose(back.X, log.X, rtol=1e-6)
    np.testing.assert_allclose(back.logging_scores, log.logging_scores)
    assert back.metadata == log.metadata
    assert back.feature_names == tuple(f"f{j}" for j in range(data.n_features))  # a synthetic set's are numbered


@pytest.mark.parametrize("call, message", [
    (lambda d: simulate_clicks(d, d.X[:, 0], n_impressions=0), r"n_impressions must be an integer >= 1"),
    (lambda d: simulate_clicks(d, d.X[:5, 0], n_impressions=5), r"scores: expected 360 scores"),
    (lambda d: simulate_clicks(d, d.X[:, 0], n_impressions=5, temperature=-1), r"temperature must be"),
    (lambda d: simulate_clicks(d, d.X[:, 0], n_impressions=5, click_model="pbm"), r"click_model must be a click"),
])
def test_bad_arguments_are_refused(data, call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(data)


def test_the_log_checks_its_arrays():
    with pytest.raises(ValueError, match=r"ClickLog: the displayed rows must be grouped by impression"):
        ClickLog(np.zeros((2, 1)), np.array([1]), np.array([0, 2]), np.arange(2), np.array([1, 0]), np.array([0, 1]),
                 np.array([1, 1]), np.array([0, 0]))


def test_the_displayed_rows_are_what_the_engines_debiasing_reads(data):
    log = simulate_clicks(data, data.X[:, 0].astype(np.float64), n_impressions=40, top_k=4, temperature=1.0, seed=7)
    rows = log.displayed_rows()
    assert rows.n_queries == 40 and rows.n_docs == 160
    np.testing.assert_array_equal(rows.positions, np.tile(np.arange(1, 5), 40))  # each impression by position
    first = log.document[(log.impression == 0) & (log.position == 3)][0]
    np.testing.assert_array_equal(rows.X[2], log.X[first])
    assert rows.labels.sum() == log.click.sum()
    dataset = rows.to_lightgbm().construct()
    np.testing.assert_array_equal(dataset.get_position(), np.tile(np.arange(4), 40))


@pytest.mark.engine
@pytest.mark.parametrize("engine, objective, params", [("lightgbm", "lambdarank", {}),
                                                       ("xgboost", "rank:ndcg", {"lambdarank_unbiased": True})])
def test_the_engines_debiasing_trains_from_a_log(data, engine, objective, params):
    from plboost.engines import train

    log = simulate_clicks(data, data.X[:, 0].astype(np.float64), n_impressions=500, top_k=4, temperature=1.0, seed=8)
    model = train(engine, objective, log.displayed_rows(), rounds=3, engine_params=params)
    assert model.rounds == 3 and np.isfinite(model.predict(data.X)).all()
