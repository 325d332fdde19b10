"""Query-safe cross-validation: plboost.query_folds, and objectives refusing lgb.cv folds that cut queries."""

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

import plboost
from plboost import metrics
from plboost import CutQueryError, query_folds
from plboost.data import make_synthetic
from plboost.objectives import PLRank, URank
from plboost.objectives import _base

CV_PARAMS = {"metric": "ndcg", "eval_at": [10], "num_leaves": 31, "learning_rate": 0.1, "verbose": -1, "seed": 0}


@pytest.fixture(scope="module")
def data():
    return make_synthetic(n_queries=60, n_features=5, docs_per_query=(3, 30), seed=3)


def query_of_rows(offsets, rows):
    return np.searchsorted(offsets, rows, side="right") - 1


# ------------------------------------------------------------------------------------------------------
# query_folds
@pytest.mark.parametrize("nfold", [2, 3, 5, 60])
def test_test_folds_partition_the_rows_in_whole_queries(data, nfold):
    folds = query_folds(data, nfold)
    assert len(folds) == nfold
    seen = np.zeros(data.n_docs, dtype=int)
    sizes = data.group_sizes
    for train, test in folds:
        for rows in (train, test):
            assert rows.dtype.kind == "i" and np.all(np.diff(rows) > 0)
        assert test.size > 0
        np.testing.assert_array_equal(train, np.setdiff1d(np.arange(data.n_docs), test))
        seen[test] += 1
        for rows in (train, test):  # every query touched is kept whole
            queries, counts = np.unique(query_of_rows(data.offsets, rows), return_counts=True)
            np.testing.assert_array_equal(counts, sizes[queries])
    np.testing.assert_array_equal(seen, 1)


def test_folds_are_balanced_in_documents(data):
    sizes = data.group_sizes
    for nfold in (2, 3, 5):
        test_sizes = np.array([test.size for _, test in query_folds(data, nfold, seed=7)])
        assert np.all(np.abs(test_sizes - data.n_docs / nfold) <= sizes.max())


def test_the_seed_decides_the_assignment(data):
    def assignment(**kwargs):
        return [test.tolist() for _, test in query_folds(data, 4, **kwargs)]

    assert assignment(seed=1) == assignment(seed=1)
    assert assignment(seed=1) != assignment(seed=2)
    assert assignment(shuffle=False, seed=1) == assignment(shuffle=False, seed=2)


def test_without_shuffle_the_folds_are_runs_of_consecutive_queries(data):
    for _, test in query_folds(data, 4, shuffle=False):
        queries = np.unique(query_of_rows(data.offsets, test))
        np.testing.assert_array_equal(queries, np.arange(queries[0], queries[-1] + 1))


def test_every_input_kind_gives_the_same_folds(data):
    expected = query_folds(data, 3, seed=5)
    constructed = data.to_lightgbm().construct()
    matrix = data.to_xgboost()
    for source in (data.group_sizes, list(data.group_sizes), data.to_lightgbm(), constructed, matrix):
        for (train, test), (want_train, want_test) in zip(query_folds(source, 3, seed=5), expected, strict=True):
            np.testing.assert_array_equal(train, want_train)
            np.testing.assert_array_equal(test, want_test)


def test_data_without_queries_is_refused():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 2)), rng.integers(0, 2, 20).astype(float)
    with pytest.raises(ValueError, match="lgb.Dataset has no group="):
        query_folds(lgb.Dataset(X, y), 2)
    with pytest.raises(ValueError, match="lgb.Dataset has no query groups"):
        query_folds(lgb.Dataset(X, y, params={"verbose": -1}).construct(), 2)
    with pytest.raises(ValueError, match="xgb.DMatrix has no query groups"):
        query_folds(xgb.DMatrix(X, y), 2)
    with pytest.raises(ValueError, match="query 1 has size 0"):
        query_folds([3, 0, 2], 2)


@pytest.mark.parametrize("nfold, error, message", [
    (1, ValueError, r"^query_folds: nfold must be an integer >= 2, got 1$"),
    (0, ValueError, r"^query_folds: nfold must be an integer >= 2, got 0$"),
    (61, ValueError, r"nfold=61 exceeds the number of queries \(60\)"),
    (2.5, TypeError, r"nfold must be an integer >= 2, got 2\.5"),
    (True, TypeError, r"nfold must be an integer >= 2, got True"),
    ("3", TypeError, r"nfold must be an integer >= 2, got '3' \(str\)"),
])
def test_bad_nfold_is_refused(data, nfold, error, message):
    with pytest.raises(error, match=message):
        query_folds(data, nfold)


# ------------------------------------------------------------------------------------------------------
# objectives and lgb.cv
@pytest.mark.engine
@pytest.mark.parametrize("obj", [PLRank(), URank()], ids=lambda o: o.name)
def test_lgb_cv_without_folds_is_refused(data, obj):
    name = type(obj).__name__
    with pytest.raises(CutQueryError, match=rf"^{name}: this lgb\.Dataset is a subset that keeps \d+ of the \d+ rows "
                                            r"of query \d+ .*pass folds=plboost\.query_folds\(train_set"):
        lgb.cv({"objective": obj, **CV_PARAMS, "min_data_in_leaf": 5}, data.to_lightgbm(), 1, nfold=3)


@pytest.mark.engine
def test_the_objective_gets_whole_queries_from_query_folds(data):
    class Spy(PLRank):
        seen = []  # a class attribute: lgb.cv trains deep copies of the objective

        def _query_data_of(self, dataset):
            query_data, weights = super()._query_data_of(dataset)
            Spy.seen.append((query_data.labels.copy(), query_data.offsets.copy()))
            return query_data, weights

    folds = query_folds(data, 3, seed=2)
    lgb.cv({"objective": Spy(), **CV_PARAMS, "min_data_in_leaf": 5}, data.to_lightgbm(), 2, folds=folds)
    assert len(Spy.seen) == 2 * len(folds)  # each fold's training set, each round
    received = {(labels.tobytes(), offsets.tobytes()) for labels, offsets in Spy.seen}
    expected = set()
    for train, _ in folds:
        queries = np.unique(query_of_rows(data.offsets, train))
        whole = data.subset(queries)  # the same queries, whole, in the original order
        np.testing.assert_array_equal(whole.labels, data.labels[train])
        expected.add((whole.labels.tobytes(), whole.offsets.tobytes()))
    assert received == expected


@pytest.mark.engine
def test_plrank_cross_validates_like_lambdarank_on_mq2008(mq2008):
    """One round on MQ2008 Fold1: with query folds PLRank is near lambdarank under LightGBM's own query
    split (measured 0.750 and 0.753); with LightGBM's row split it would report 0.891."""
    train_set = mq2008[0].to_lightgbm()
    ours = lgb.cv({"objective": PLRank(), **CV_PARAMS}, train_set, 1, folds=query_folds(train_set, nfold=3))
    theirs = lgb.cv({"objective": "lambdarank", **CV_PARAMS}, mq2008[0].to_lightgbm(), 1, nfold=3)
    ours, theirs = ours["valid ndcg@10-mean"][0], theirs["valid ndcg@10-mean"][0]
    assert 0.6 < theirs < 0.9
    assert abs(ours - theirs) < 0.05, (ours, theirs)


@pytest.mark.engine
def test_lgb_cv_takes_scikit_learns_group_kfold(data):
    """GroupKFold over query ids keeps queries whole too: lgb.cv trains with a plboost objective on its folds, and
    its mean validation NDCG@10 is that of the models trained on each fold's rows by hand (a query without a
    relevant document counts 1, as LightGBM counts it)."""
    from sklearn.model_selection import GroupKFold

    query_ids = np.repeat(np.arange(data.n_queries), data.group_sizes)
    folds = list(GroupKFold(n_splits=3).split(data.X, data.labels, groups=query_ids))
    params = {"objective": PLRank(), **CV_PARAMS, "min_data_in_leaf": 5}
    result = lgb.cv(params, data.to_lightgbm(), 2, folds=folds)
    scores = []
    full = data.to_lightgbm()
    for train, test in folds:
        train_set = full.subset(train)  # binned on all rows, as lgb.cv bins
        test_data = data.subset(np.unique(query_of_rows(data.offsets, test)))
        booster = lgb.train({**params, "objective": PLRank()}, train_set, 2)
        scores.append(metrics.ndcg(booster.predict(test_data.X), test_data.labels, offsets=test_data.offsets,
                                           k=10))
    assert result["valid ndcg@10-mean"][-1] == pytest.approx(np.mean(scores), abs=1e-6)


# ------------------------------------------------------------------------------------------------------
# which datasets the check concerns, and what it costs
@pytest.mark.engine
def test_subsets_of_whole_queries_and_validation_sets_train(data):
    full = data.to_lightgbm(params={"verbose": -1, "min_data_in_leaf": 5})
    train_rows, test_rows = query_folds(data, 2, seed=0)[0]
    subset = full.subset(train_rows)
    valid = data.to_lightgbm(reference=full)
    booster = lgb.train({"objective": PLRank(), "verbose": -1, "min_data_in_leaf": 5}, subset, 2,
                        valid_sets=[valid])
    assert booster.current_iteration() == 2
    booster = lgb.train({"objective": URank(), "verbose": -1, "min_data_in_leaf": 5}, full, 2, valid_sets=[valid])
    assert booster.current_iteration() == 2


@pytest.mark.engine
def test_a_hand_made_subset_that_cuts_a_query_is_refused(data):
    full = data.to_lightgbm(params={"verbose": -1}).construct()
    first = int(data.offsets[1])  # query 0 loses its first row
    subset = full.subset(np.arange(1, data.n_docs)).construct()
    with pytest.raises(CutQueryError, match=rf"keeps {first - 1} of the {first} rows of query 0: its folds") as error:
        PLRank()(np.zeros(data.n_docs - 1), subset)
    assert (error.value.query, error.value.kept, error.value.size, error.value.n_cut) == (0, first - 1, first, 1)


def test_the_check_runs_once_per_dataset(data, monkeypatch):
    calls = []
    check = _base.cut_queries
    monkeypatch.setattr(_base, "cut_queries", lambda *args: calls.append(1) or check(*args))
    full = data.to_lightgbm(params={"verbose": -1}).construct()
    train_rows, _ = query_folds(data, 3)[0]
    subset = full.subset(train_rows).construct()
    obj = PLRank()
    scores = np.zeros(train_rows.size)
    for _ in range(5):
        obj(scores, subset)
        obj(np.zeros(data.n_docs), full)  # not a subset: not checked
    assert len(calls) == 1


def test_query_folds_is_exported():
    assert plboost.query_folds is query_folds
    assert issubclass(CutQueryError, ValueError)


@pytest.mark.engine
@pytest.mark.parametrize("folds", [3, 4])
def test_folds_of_rows_given_to_lgb_cv_are_refused_without_blaming_a_missing_folds(data, folds):
    from sklearn.model_selection import KFold

    with pytest.raises(CutQueryError) as error:
        lgb.cv({"objective": PLRank(), **CV_PARAMS, "min_data_in_leaf": 5}, data.to_lightgbm(), 1,
               folds=KFold(folds, shuffle=True, random_state=folds))
    message = str(error.value)
    assert "without folds=" not in message and "folds of rows such as KFold's" in message
    assert message.endswith("pass folds=plboost.query_folds(train_set, nfold=...) to lgb.cv, or scikit-learn's "
                            "GroupKFold over the query ids")
