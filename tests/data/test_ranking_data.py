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
