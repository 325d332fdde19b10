"""RankingData (plboost.data.ranking_data): its checks, subsets, the engines' datasets, and saving as SVMlight."""

import numpy as np
import pytest
import scipy.sparse as sp

from plboost.data import RankingData, load_svmlight, make_synthetic


@pytest.fixture(scope="module")
def unsorted():
    """Small data whose query ids are not sorted (XGBoost's qid= would refuse them)."""
    data = make_synthetic(n_queries=12, n_features=5, docs_per_query=(2, 9), seed=4)
    return RankingData(data.X, data.labels, np.array([50, 3, 41, 7, 8, 1, 99, 2, 60, 5, 4, 30]), data.offsets)


@pytest.mark.parametrize("name", ["r.txt", "r.txt.gz"])
def test_save_then_load_is_exact(tmp_path, name):
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2**32, size=(300, 7), dtype=np.uint64).astype(np.uint32)
    X = bits.view(np.float32).copy()
    X[~np.isfinite(X)] = np.nan  # every finite float32 pattern is possible, plus NaN; no infinities
    X[rng.random(X.shape) < 0.3] = 0
    X[:, -1] = np.where(np.arange(300) % 2, X[:, -1], 1.0)  # a non-zero in the last column fixes the width
    offsets = np.r_[0, np.sort(rng.choice(np.arange(1, 300), size=39, replace=False)), 300]
    data = RankingData(X, rng.integers(0, 5, 300), rng.permutation(1000)[:40], offsets)
    back = load_svmlight(data.save_svmlight(tmp_path / name))
    np.testing.assert_array_equal(back.X, data.X)  # NaN positions equal too
    for field in ("labels", "qids", "offsets"):
        np.testing.assert_array_equal(getattr(back, field), getattr(data, field))


def test_save_sparse_and_zero_based(tmp_path, unsorted):
    sparse = RankingData(sp.csr_matrix(unsorted.X), unsorted.labels, unsorted.qids, unsorted.offsets)
    back = load_svmlight(sparse.save_svmlight(tmp_path / "s.txt", zero_based=True), zero_based=True,
                         n_features=unsorted.n_features, dense=False)
    np.testing.assert_array_equal(back.X.toarray(), unsorted.X)
    np.testing.assert_array_equal(back.qids, unsorted.qids)


def test_lightgbm_dataset_has_labels_and_groups(unsorted):
    dataset = unsorted.to_lightgbm(params={"verbose": -1}).construct()
    np.testing.assert_array_equal(dataset.get_field("group"), unsorted.offsets)
    np.testing.assert_array_equal(dataset.get_label(), unsorted.labels)
    valid = unsorted.subset([1, 0]).to_lightgbm(reference=dataset).construct()
    np.testing.assert_array_equal(valid.get_field("group"), np.cumsum([0, *unsorted.group_sizes[[1, 0]]]))


def test_xgboost_dmatrix_has_labels_and_groups(unsorted):
    dmatrix = unsorted.to_xgboost()
    np.testing.assert_array_equal(dmatrix.get_uint_info("group_ptr"), unsorted.offsets)
    np.testing.assert_array_equal(dmatrix.get_label(), unsorted.labels)
    assert (dmatrix.num_row(), dmatrix.num_col()) == unsorted.X.shape


def test_subset_keeps_the_given_order(unsorted):
    part = unsorted.subset([3, 0, -1])
    np.testing.assert_array_equal(part.qids, unsorted.qids[[3, 0, 11]])
    expected_rows = np.r_[unsorted.offsets[3]:unsorted.offsets[4], 0:unsorted.offsets[1],
                          unsorted.offsets[11]:unsorted.offsets[12]]
    np.testing.assert_array_equal(part.X, unsorted.X[expected_rows])
    np.testing.assert_array_equal(part.labels, unsorted.labels[expected_rows])
    np.testing.assert_array_equal(part.group_sizes, unsorted.group_sizes[[3, 0, 11]])
    mask = np.zeros(unsorted.n_queries, dtype=bool)
    mask[[2, 5]] = True
    np.testing.assert_array_equal(unsorted.subset(mask).qids, unsorted.qids[[2, 5]])


@pytest.mark.parametrize("change, message", [
    (dict(labels=np.zeros(3)), "3 labels for"),
    (dict(offsets=np.array([0, 5])), "query boundaries end at 5"),
    (dict(qids=np.arange(3)), "one id per query"),
])
def test_inconsistent_ranking_data_is_refused(unsorted, change, message):
    fields = dict(X=unsorted.X, labels=unsorted.labels, qids=unsorted.qids, offsets=unsorted.offsets) | change
    with pytest.raises(ValueError, match=message):
        RankingData(**fields)


@pytest.mark.parametrize("indices, message", [
    ([], "no query selected; RankingData holds at least one query"),
    (np.zeros(4, dtype=bool), "no query selected"),
    ([4], r"query positions must lie in \[0, 4\), got 4"),
    ([-5], r"query positions must lie in \[0, 4\), got -5"),
    ([0.5], "expected query positions \\(integers\\) or a boolean mask, got float64"),
    ([True, False], "a boolean mask of 2 values for 4 queries"),
])
def test_subset_refuses_what_selects_no_query_with_a_reason(indices, message):
    """Issue 24, item 6: subset([]) raised numpy's IndexError about index types."""
    with pytest.raises(ValueError, match="^subset: " + message):
        make_synthetic(n_queries=4, seed=0).subset(indices)


def test_subset_keeps_the_order_given_and_takes_masks_and_negative_positions():
    data = make_synthetic(n_queries=4, seed=0)
    picked = data.subset([3, 0])
    assert list(picked.qids) == [data.qids[3], data.qids[0]]
    np.testing.assert_array_equal(picked.labels, np.r_[data.labels[data.offsets[3]:], data.labels[:data.offsets[1]]])
    assert list(data.subset(np.array([False, True, False, True])).qids) == list(data.qids[[1, 3]])
    assert list(data.subset([-1]).qids) == [data.qids[-1]]


@pytest.mark.parametrize("seed, zero_columns, zero_based, sparse, name", [
    (1, 1, False, False, "r.txt"), (2, 3, True, False, "r.txt.gz"), (3, 2, False, True, "r.txt"),
    (4, 0, True, True, "r.txt.gz")])
def test_what_is_saved_loads_back_as_it_was(tmp_path, seed, zero_columns, zero_based, sparse, name):
    """save_svmlight then load_svmlight, with no option but the layout's, and to_pandas then from_pandas give back
    the same queries, ids (negative and 18-digit ones, whole floats as integers), labels, values and width, trailing
    all-zero columns included."""
    rng = np.random.default_rng(seed)
    n_docs, n_queries = 200, 23
    X = rng.normal(size=(n_docs, 6)).astype(np.float32)
    X[rng.random(X.shape) < 0.4] = 0
    X[:, X.shape[1] - zero_columns:] = 0
    offsets = np.r_[0, np.sort(rng.choice(np.arange(1, n_docs), size=n_queries - 1, replace=False)), n_docs]
    qids = rng.choice(np.r_[-(10 ** 17) + 3, 10 ** 18 - 1, np.arange(-50, 50)], size=n_queries, replace=False)
    for ids in (qids, qids.astype(np.float64) if seed % 2 and abs(qids).max() < 2 ** 53 else qids):
        data = RankingData(sp.csr_matrix(X) if sparse else X, rng.integers(0, 4, n_docs), ids, offsets)
        back = load_svmlight(data.save_svmlight(tmp_path / name, zero_based=zero_based), zero_based=zero_based,
                             dense=not sparse, cache=False)
        assert back.X.shape == X.shape
        np.testing.assert_array_equal(back.X.toarray() if sparse else back.X, X)
        for field in ("labels", "qids", "offsets"):
            np.testing.assert_array_equal(getattr(back, field), getattr(data, field))
        table = RankingData.from_pandas(data.to_pandas())
        np.testing.assert_array_equal(table.X, X)
        for field in ("labels", "qids", "offsets"):
            np.testing.assert_array_equal(getattr(table, field), getattr(data, field))


@pytest.mark.parametrize("qids, message", [
    (["q-17", "q-3"], r"query 0 has the id 'q-17', which SVMlight's qid: cannot hold \(an integer of at most 18 "
                      r"digits\)"),
    ([4, 2.25], r"query 1 has the id 2.25, which SVMlight's qid: cannot hold"),
    ([False, True], r"query 0 has the id False"),
    ([7, -(10 ** 18)], r"query 1 has the id -1000000000000000000"),
    (np.array([2 ** 63 + 7, 1], dtype=np.uint64), r"query 0 has the id 9223372036854775815"),
])
def test_query_ids_svmlight_cannot_hold_are_refused_before_anything_is_written(tmp_path, qids, message):
    data = RankingData(np.ones((3, 2)), [1, 0, 2], qids, [0, 2, 3])
    with pytest.raises(ValueError, match=rf"^save_svmlight: {message}.*number the queries first"):
        data.save_svmlight(tmp_path / "ids.txt")
    assert not (tmp_path / "ids.txt").exists()
    back = RankingData.from_pandas(data.to_pandas())  # a table holds any id
    np.testing.assert_array_equal(back.qids, data.qids)


@pytest.mark.parametrize("positions, first, second", [([2, 2], 0, 1), ([1, 0, 1], 0, 2), ([3, 1, 3, 3], 0, 2)])
def test_queries_that_share_an_id_are_refused_where_they_would_read_back_as_one(tmp_path, unsorted, positions,
                                                                                 first, second):
    """A subset that takes a query twice holds two queries of one id: SVMlight files and tables tell queries apart by
    id, so saving it would merge them (or write a file that is refused); it is refused, and renumbered it saves."""
    import dataclasses

    twice = unsorted.subset(positions)
    qid = unsorted.qids[positions[first]]
    for call, where, kind in ((lambda: twice.save_svmlight(tmp_path / "twice.txt"), "save_svmlight",
                               "an SVMlight file"), (twice.to_pandas, "to_pandas", "a table")):
        with pytest.raises(ValueError, match=rf"^{where}: queries {first} and {second} have the same id {qid} \(a "
                                             rf"subset that takes a query twice\?\); {kind} tells queries apart by "
                                             r"id, so they would read back as one: give each query its own id first"):
            call()
    assert not (tmp_path / "twice.txt").exists()
    numbered = dataclasses.replace(twice, qids=np.arange(twice.n_queries))
    back = load_svmlight(numbered.save_svmlight(tmp_path / "numbered.txt"), cache=False)
    np.testing.assert_array_equal(back.group_sizes, twice.group_sizes)
    np.testing.assert_array_equal(RankingData.from_pandas(numbered.to_pandas()).group_sizes, twice.group_sizes)
