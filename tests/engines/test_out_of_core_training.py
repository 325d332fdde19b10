"""Training out of core (issue 19): data made to exceed the loader's memory budget many times over, trained
batch by batch, against the same training in memory."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from plboost import metrics
from plboost.cli import main
from plboost.data import (OutOfCoreData, load_splits, out_of_core, splits, svmlight, svmlight_parser,
                          write_synthetic_splits)
from plboost.engines import train
from plboost.experiment import RunSpec, run
from plboost.objectives import PLRank

pytestmark = pytest.mark.engine

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
BUDGET = 32 << 10  # 32 KiB of dense rows per batch: the training file's dense X is about 0.9 MiB
ROUNDS = 15


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Synthetic LETOR-like train, validation and test files (about 3.5 MB of text for training)."""
    directory = tmp_path_factory.mktemp("out-of-core")
    return write_synthetic_splits(directory, n_queries=(400, 80, 80), n_features=30, docs_per_query=(5, 80), seed=3)


@pytest.fixture
def loaded(files, monkeypatch):
    """(in memory, out of core) pairs of (train, valid, test); the text read 256 KiB at a time, so the training
    file makes over a dozen chunk files, read back in batches of at most BUDGET bytes."""
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 256 << 10)
    in_memory = load_splits(files["train"], files["vali"], files["test"])
    chunked = load_splits(files["train"], files["vali"], files["test"], out_of_core=True, memory_budget_bytes=BUDGET)
    train_data = chunked[0]
    assert isinstance(train_data, OutOfCoreData)
    assert files["train"].stat().st_size > 50 * BUDGET and train_data.nbytes > 10 * BUDGET
    assert train_data.n_chunks > 10 and len(train_data.query_batches()) > 10
    return in_memory, chunked


def ndcg_at_10(model, data):
    return metrics.ndcg(splits.predict_scores(model, data), data.labels, offsets=data.offsets, k=10)


def lightgbm_trees(booster) -> str:
    """The model text up to its parameters section (out-of-core training adds force_col_wise there)."""
    text = booster.model_to_string()
    assert "\nparameters:\n" in text
    return text.split("\nparameters:\n")[0]


def same_model(engine, a, b) -> bool:
    if engine == "lightgbm":
        return lightgbm_trees(a.booster) == lightgbm_trees(b.booster)
    return a.booster.save_raw("json") == b.booster.save_raw("json")


@pytest.mark.parametrize("engine, objective", [("lightgbm", "plrank"), ("lightgbm", "lambdarank"),
                                               ("xgboost", "plrank"), ("xgboost", "rank:ndcg")])
def test_out_of_core_training_gives_the_in_memory_model(loaded, engine, objective):
    (train_data, valid, test), (train_chunks, valid_chunks, test_chunks) = loaded
    if engine == "xgboost":  # XGBoost reads every page of its cache each iteration, at some cost per page
        train_chunks.memory_budget_bytes = valid_chunks.memory_budget_bytes = 4 * BUDGET
        assert len(train_chunks.query_batches()) > 5

    def fit(train_set, valid_set):
        chosen = PLRank(top_k=10) if objective == "plrank" else objective
        return train(engine, chosen, train_set, valid_set, rounds=ROUNDS, early_stopping=5, seed=1)

    expected, got = fit(train_data, valid), fit(train_chunks, valid_chunks)
    assert got.valid_history == expected.valid_history and got.trees_used == expected.trees_used
    assert same_model(engine, got, expected)
    np.testing.assert_array_equal(splits.predict_scores(got, test_chunks), expected.predict(test.X))
    assert abs(ndcg_at_10(got, test_chunks) - ndcg_at_10(expected, test)) <= 0.002  # the tolerance


def test_xgboost_quantised_in_memory_gives_the_same_model(loaded):
    """external_memory=False: XGBoost's QuantileDMatrix from the same batches (the quantised matrix in memory)."""
    (train_data, valid, _), (train_chunks, valid_chunks, _) = loaded
    train_chunks.memory_budget_bytes = valid_chunks.memory_budget_bytes = 4 * BUDGET
    expected = train("xgboost", PLRank(), train_data, valid, rounds=5)
    got = train("xgboost", PLRank(), train_chunks, valid_chunks, rounds=5, external_memory=False)
    assert same_model("xgboost", got, expected) and got.valid_history == expected.valid_history


def test_lightgbm_samples_the_same_rows_for_its_bins(loaded):
    """With fewer rows sampled for the bin boundaries than there are documents, LightGBM's Python sampling of a
    Sequence and its C++ sampling of a matrix draw the same rows (the data seed derived from the seed), for
    any seed; an explicit data_random_seed is used as given."""
    (train_data, valid, _), (train_chunks, valid_chunks, _) = loaded
    for params in ({"bin_construct_sample_cnt": 500}, {"bin_construct_sample_cnt": 500, "data_random_seed": 9}):
        for seed in (0, 12345):
            models = [train("lightgbm", "lambdarank", t, v, rounds=3, seed=seed, engine_params=params)
                      for t, v in ((train_data, valid), (train_chunks, valid_chunks))]
            assert same_model("lightgbm", *models)


def test_paths_read_as_memory_allows(files, monkeypatch, capsys):
    """Files given by path: out_of_core=None reads them out of core when their dense matrix (with the engine's
    copy) would not fit the memory available, and says so in one line; True and False force either way. A
    memory budget given for files read in memory all the same is said to apply only out of core (issue 27)."""
    dense = 4 * 30 * sum(svmlight.load_svmlight(files[n], cache=False).n_docs for n in ("train", "vali"))
    monkeypatch.setattr(out_of_core, "available_memory_bytes", lambda: dense)
    options = dict(rounds=5, load_options={"memory_budget_bytes": BUDGET})
    automatic = train("lightgbm", PLRank(), files["train"], files["vali"], **options)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "train.txt, vali.txt" in err and "reading out of core" in err
    forced = train("lightgbm", PLRank(), files["train"], files["vali"], out_of_core=True, **options)
    in_memory = train("lightgbm", PLRank(), files["train"], files["vali"], out_of_core=False, rounds=5)
    assert capsys.readouterr().err == ""
    assert same_model("lightgbm", automatic, forced) and same_model("lightgbm", automatic, in_memory)
    monkeypatch.setattr(out_of_core, "available_memory_bytes", lambda: 100 * dense)
    train("xgboost", PLRank(), files["train"], files["vali"], rounds=5)
    assert capsys.readouterr().err == ""  # in memory: nothing said
    train("xgboost", PLRank(), files["train"], files["vali"], **options)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "train.txt, vali.txt: read in memory" in err
    assert "applies only to out-of-core reading" in err


def test_refusals(loaded):
    (train_data, valid, _), (train_chunks, valid_chunks, _) = loaded
    with pytest.raises(ValueError, match="leaf_values='exact'.*out-of-core data"):
        train("lightgbm", PLRank(), train_chunks, valid_chunks, rounds=2, leaf_values="exact")
    with pytest.raises(ValueError, match="out-of-core validation data take the quantiles"):
        train("xgboost", PLRank(), train_data, valid_chunks, rounds=2)
    with pytest.raises(ValueError, match="out_of_core=True, but the data are already in memory"):
        train("lightgbm", PLRank(), train_data, out_of_core=True, rounds=2)
    with pytest.raises(ValueError, match="out_of_core=False, but the data are out of core"):
        train("xgboost", PLRank(), train_chunks, out_of_core=False, rounds=2)
    with pytest.raises(ValueError, match="apply to files"):
        train("lightgbm", PLRank(), train_data, load_options={"memory_budget_bytes": 1}, rounds=2)


def test_xgboost_pages_are_removed_after_training(loaded):
    _, (train_chunks, valid_chunks, _) = loaded
    train_chunks.memory_budget_bytes = valid_chunks.memory_budget_bytes = 16 * BUDGET
    train("xgboost", "rank:ndcg", train_chunks, valid_chunks, rounds=2)
    scratch = out_of_core._cache.cache_dir() / "scratch"
    assert not list(scratch.glob("*xgboost-*"))


def test_experiment_run_scores_batch_by_batch(loaded):
    (train_data, valid, test), (train_chunks, valid_chunks, test_chunks) = loaded
    spec = RunSpec(objective="plrank", rounds=5, eval_at=(5, 10))
    expected = run(spec, train_data, valid, test)
    got = run(spec, train_chunks, valid_chunks, test_chunks)
    assert got.metrics == expected.metrics and got.evaluated_on == "test"


def test_command_line_out_of_core_and_in_memory(files, tmp_path, capsys):
    common = ["train", "--train", str(files["train"]), "--valid", str(files["vali"]), "--test", str(files["test"]),
              "--objective", "plrank", "--rounds", "5", "--quiet"]
    results = {}
    for flag in ("--out-of-core", "--in-memory"):
        out = tmp_path / f"{flag.strip('-')}.json"
        assert main([*common, flag, "--out", str(out)]) == 0
        results[flag] = json.loads(out.read_text())["metrics"]
    assert results["--out-of-core"] == results["--in-memory"]
    capsys.readouterr()
    with pytest.raises(SystemExit):  # argparse refuses both
        main([*common, "--out-of-core", "--in-memory"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_command_line_compare_out_of_core(tmp_path, capsys):
    directory = tmp_path / "data"
    write_synthetic_splits(directory, n_queries=(40, 15, 15), n_features=8, seed=2)
    tables = []
    for flag in ("--out-of-core", "--in-memory"):
        assert main(["compare", str(directory), "--run", "plrank", "--run", "rank:ndcg@xgboost", "--rounds", "3",
                     "--quiet", flag]) == 0
        tables.append(capsys.readouterr().out)
    strip = [[line.rsplit("|", 3)[0] for line in table.splitlines() if line.startswith("| ")] for table in tables]
    assert strip[0] == strip[1]  # the same metrics (the seconds differ)


def test_run_script_out_of_core_gives_the_in_memory_table(tmp_path):
    """scripts/run_mslr.py --out-of-core: the same table as --in-memory (the seconds aside)."""
    write_synthetic_splits(tmp_path / "MSLR" / "Fold1", n_queries=(40, 15, 15), n_features=8, seed=4)
    tables = []
    for flag in ("--out-of-core", "--in-memory"):
        completed = subprocess.run([sys.executable, str(SCRIPTS / "run_mslr.py"), str(tmp_path / "MSLR"), "--out",
                                    str(tmp_path / flag.strip("-")), "--rounds", "3", "--runs",
                                    "plrank;rank:ndcg@xgboost", "--quiet", flag],
                                   capture_output=True, text=True, timeout=600)
        assert completed.returncode == 0, completed.stderr[-3000:]
        tables.append([line.rsplit("|", 3)[0] for line in completed.stdout.splitlines() if line.startswith("| ")])
    assert len(tables[0]) == 3 and tables[0] == tables[1]  # the header and two configurations
