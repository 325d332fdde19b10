"""Determinism, large queries and large files."""

import lightgbm as lgb
import numba
import numpy as np
import pytest

from plboost.data import load_svmlight, make_synthetic
from plboost.data import svmlight_parser
from plboost.engines import train
from plboost.objectives import PLRank, UMart

#: besides every registered objective's defaults: PLRank's several permutations and whole rankings, lambdarank's
#: window of one
EXTRA = (PLRank(top_k=10, n_permutations=3), PLRank(top_k=None), UMart(window=1))


@pytest.fixture(scope="module")
def synthetic():
    return make_synthetic(n_queries=120, seed=4)


@pytest.mark.extra_objectives(*EXTRA)
def test_kernels_do_not_depend_on_the_thread_count(synthetic, objective):
    scores = np.random.default_rng(0).normal(size=synthetic.n_docs)
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = objective.gradients(scores, synthetic.labels, synthetic.offsets)
        numba.set_num_threads(previous)
        many = objective.gradients(scores, synthetic.labels, synthetic.offsets)
    finally:
        numba.set_num_threads(previous)
    np.testing.assert_array_equal(one[0], many[0])
    np.testing.assert_array_equal(one[1], many[1])


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_same_seed_and_threads_give_the_same_model(synthetic, engine):
    params = {"num_threads": 2} if engine == "lightgbm" else {"nthread": 2}

    def model():
        trained = train(engine, PLRank(n_permutations=3, seed=7), synthetic, rounds=15, engine_params=params, seed=3)
        booster = trained.booster
        return booster.model_to_string() if engine == "lightgbm" else bytes(booster.save_raw())

    assert model() == model()


@pytest.mark.engine
@pytest.mark.parametrize("objective", [PLRank(top_k=5), "lambdarank"], ids=["plrank", "lambdarank"])
def test_lightgbm_leaves_nothing_to_timing(synthetic, objective, capfd):
    """With both histogram layouts left open, LightGBM times them and keeps the faster, which sums gradients in
    another order (its Info line "Auto-choosing ... multi-threading"): plboost chooses the column-wise one, and
    LightGBM's ``deterministic`` sums, unless the user chooses; a user's choice is kept, under any alias."""
    lgb.train({"objective": objective, "verbosity": 1, "num_threads": 2}, synthetic.to_lightgbm(), num_boost_round=1)
    assert "Auto-choosing" in capfd.readouterr().out  # what LightGBM does by itself, and says at this verbosity
    trained = train("lightgbm", objective, synthetic, rounds=2, engine_params={"verbosity": 1, "num_threads": 2})
    assert "Auto-choosing" not in capfd.readouterr().out
    assert trained.engine_params["force_col_wise"] is True and trained.engine_params["deterministic"] is True
    chosen = train("lightgbm", objective, synthetic, rounds=2,
                   engine_params={"force_row_wise": True, "deterministic": False, "verbosity": 1})
    assert "Auto-choosing" not in capfd.readouterr().out
    assert "force_col_wise" not in chosen.engine_params and chosen.engine_params["deterministic"] is False
    aliased = train("lightgbm", objective, synthetic, rounds=2, engine_params={"verbose": -1, "random_state": 9})
    # the user's value replaces plboost's, under LightGBM's one name for it (aliases are resolved on entry)
    assert aliased.engine_params["verbosity"] == -1 and aliased.engine_params["seed"] == 9
    assert {"verbose", "random_state"}.isdisjoint(aliased.engine_params)


@pytest.mark.extra_objectives(*EXTRA)
def test_a_query_of_ten_thousand_documents(objective):
    """LightGBM's limit per query for its ranking objectives and metrics is 10,000 documents."""
    rng = np.random.default_rng(1)
    labels = np.r_[rng.choice(5, 10_000, p=[0.5, 0.3, 0.13, 0.05, 0.02]), rng.integers(0, 3, 30)].astype(float)
    offsets = np.array([0, 10_000, 10_010, 10_030])
    scores = rng.normal(scale=3.0, size=labels.size)
    grad, hess = objective.gradients(scores, labels, offsets)
    assert np.all(np.isfinite(grad)) and np.all(hess >= 1e-6)
    sums = np.add.reduceat(grad.astype(np.float64), offsets[:-1])
    assert np.all(np.abs(sums) < 1e-4 * np.maximum(1, np.add.reduceat(np.abs(grad), offsets[:-1])))


@pytest.mark.engine
def test_lightgbm_trains_on_a_query_of_ten_thousand_documents():
    data = make_synthetic(n_queries=3, docs_per_query=(3000, 10_000), seed=5)
    assert np.diff(data.offsets).max() <= 10_000
    model = train("lightgbm", PLRank(n_permutations=2), data, data, rounds=3)
    assert model.rounds == 3 and len(model.valid_history) == 3


def test_large_files_are_read_in_chunks_with_progress(tmp_path, monkeypatch, capsys):
    """Parsing streams the file a chunk at a time (here 64 KiB, so a 3 MB file takes about 50 chunks):
    the result equals a one-chunk parse, and the progress bar counts the bytes."""
    data = make_synthetic(n_queries=600, n_features=20, seed=6)
    path = data.save_svmlight(tmp_path / "big.txt.gz")
    whole = load_svmlight(path, cache=False)
    chunks = []
    original = svmlight_parser.read_chunks

    def counting(*args, **kwargs):
        for chunk in original(*args, **kwargs):
            chunks.append(len(chunk[0]))
            yield chunk

    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 64 << 10)
    monkeypatch.setattr(svmlight_parser, "read_chunks", counting)
    streamed = load_svmlight(path, cache=False, progress=True)
    assert len(chunks) > 20 and max(chunks) < (64 << 10) + 10_000
    np.testing.assert_array_equal(streamed.X, whole.X)
    np.testing.assert_array_equal(streamed.offsets, whole.offsets)
    err = capsys.readouterr().err
    assert "big.txt.gz" in err and "B/s" in err and err.count("\r") >= 3  # a bar over bytes, redrawn
