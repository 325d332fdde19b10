import itertools

import lightgbm as lgb
import numpy as np
import pytest
from sklearn.metrics import ndcg_score

from plboost.data import load_svmlight, make_synthetic, write_synthetic_splits
from plboost.data.synthetic import MSLR_LABEL_SHARES


@pytest.fixture(scope="module")
def big():
    return make_synthetic(n_queries=1000, seed=0)


def assert_same(a, b):
    for field in ("X", "labels", "qids", "offsets"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_label_shares_are_mslr_like(big):
    shares = np.bincount(big.labels.astype(int), minlength=5) / big.n_docs
    assert shares.size == 5
    # labels are cut at the quantiles of a continuous score: the shares hold up to one document
    np.testing.assert_allclose(shares, MSLR_LABEL_SHARES, atol=1.5 / big.n_docs)
    assert shares[0] > 0.5 and shares[3] + shares[4] < 0.05


def test_relevant_documents_vary_across_queries(big):
    relevant = np.add.reduceat(big.labels > 0, big.offsets[:-1]) / big.group_sizes
    assert relevant.std() > 0.1  # the per-query offset: some queries are rich in relevant documents, some poor
    assert np.any(relevant == 0)  # and some have none (NDCG's ideal DCG is 0 there)


def test_query_sizes_vary_within_the_range(big):
    sizes = big.group_sizes
    assert sizes.min() >= 5 and sizes.max() <= 150
    assert np.median(sizes) == pytest.approx(np.sqrt(5 * 150), rel=0.15)  # log-normal around the geometric mean
    assert np.unique(sizes).size > 50
    small = make_synthetic(n_queries=50, docs_per_query=(3, 3), seed=0)
    assert set(small.group_sizes) == {3}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_features_look_like_letor_features(seed):
    big = make_synthetic(n_queries=300, seed=seed)
    X = big.X
    assert X.dtype == np.float32 and X.shape == (big.n_docs, 46) and np.isfinite(X).all()
    in_unit = ((X >= 0) & (X <= 1)).all(axis=0)
    assert in_unit.mean() > 0.5  # most columns are scores in [0, 1]
    heavy = X.max(axis=0) > 100 * np.maximum(np.median(X, axis=0), 1)
    assert heavy.sum() >= 2  # some are heavy-tailed counts
    assert ((X == 0).mean(axis=0) > 0.4).sum() >= 2  # some are mostly zero
    query_level = (np.repeat(X[big.offsets[:-1]], big.group_sizes, axis=0) == X).all(axis=0)
    assert 0 < query_level.sum() < 46  # some describe the query, not the document


def test_same_seed_same_data_other_seed_other_data():
    assert_same(make_synthetic(n_queries=40, seed=7), make_synthetic(n_queries=40, seed=7))
    a, b = make_synthetic(n_queries=40, seed=7), make_synthetic(n_queries=40, seed=8)
    assert a.n_docs != b.n_docs or not np.array_equal(a.labels, b.labels)
    assert not np.array_equal(a.X[:10], b.X[:10])


def ndcg_at_10(data, scores):
    values = [ndcg_score([2 ** data.labels[a:b] - 1], [scores[a:b]], k=10)
              for a, b in itertools.pairwise(data.offsets) if data.labels[a:b].max() > 0]
    return np.mean(values)


@pytest.mark.engine
def test_a_tree_model_learns_much_but_not_all():
    data = make_synthetic(n_queries=500, seed=1)
    train, test = data.subset(np.arange(350)), data.subset(np.arange(350, 500))
    booster = lgb.train({"objective": "lambdarank", "num_leaves": 15, "verbose": -1}, train.to_lightgbm(),
                        num_boost_round=60)
    model = ndcg_at_10(test, booster.predict(test.X))
    chance = ndcg_at_10(test, np.random.default_rng(0).random(test.n_docs))
    assert model > chance + 0.2
    assert model < 0.9  # noise and noisy features keep it well below a perfect ranking (1.0)


@pytest.mark.parametrize("compress", [False, True])
def test_written_splits_load_back_identical(tmp_path, compress):
    paths = write_synthetic_splits(tmp_path / "synth", n_queries=(30, 10, 12), seed=5, n_features=12,
                                   compress=compress)
    suffix = ".txt.gz" if compress else ".txt"
    assert paths == {name: tmp_path / "synth" / f"{name}{suffix}" for name in ("train", "vali", "test")}
    full = make_synthetic(n_queries=52, seed=5, n_features=12)
    for name, queries in [("train", np.arange(30)), ("vali", np.arange(30, 40)), ("test", np.arange(40, 52))]:
        loaded = load_svmlight(paths[name], n_features=12)
        assert_same(loaded, full.subset(queries))


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="docs_per_query"):
        make_synthetic(docs_per_query=(10, 5))
    with pytest.raises(ValueError, match="label_shares"):
        make_synthetic(label_shares=(0.5, 0.3))
