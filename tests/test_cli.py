"""The plboost command: train, evaluate, demo, and its errors."""

import json

import pytest

from plboost.cli import main, parse_assignment
from plboost.data import make_synthetic


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli-data")
    paths = {}
    for name, n, seed in (("train", 80, 1), ("valid", 30, 2), ("test", 30, 3)):
        paths[name] = make_synthetic(n_queries=n, seed=seed).save_svmlight(directory / f"{name}.txt")
    return paths


@pytest.mark.parametrize("engine, objective, suffix", [("lightgbm", "plrank", ".txt"),
                                                       ("xgboost", "plrank", ".json"),
                                                       ("lightgbm", "lambdarank", ".txt")])
def test_train_then_evaluate_report_the_same_test_metrics(files, tmp_path, capsys, engine, objective, suffix):
    out, model = tmp_path / "results.json", tmp_path / f"model{suffix}"
    argv = ["train", "--train", str(files["train"]), "--valid", str(files["valid"]), "--test", str(files["test"]),
            "--objective", objective, "--engine", engine, "--rounds", "12", "--learning-rate", "0.2",
            "--num-leaves", "7", "--early-stopping", "5", "--eval-at", "1,3,10", "--save-model", str(model),
            "--out", str(out), "--quiet"]
    if objective == "plrank":
        argv += ["--param", "top_k=5", "--param", "n_permutations=2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "NDCG@10" in printed and "ties: stable sort" in printed
    result = json.loads(out.read_text())
    assert result["engine"] == engine and result["evaluated_on"] == "test"
    assert result["best_iteration"] is not None and result["train_seconds"] > 0
    if objective == "plrank":
        assert result["objective_params"]["top_k"] == 5 and result["objective_params"]["n_permutations"] == 2
    assert set(result["metrics"]) == {"NDCG@1", "NDCG@3", "NDCG@10", "ERR@1", "ERR@3", "ERR@10", "ERR", "MAP"}

    evaluated = tmp_path / "evaluated.json"
    assert main(["evaluate", "--model", str(model), "--data", str(files["test"]), "--eval-at", "1,3,10",
                 "--out", str(evaluated), "--quiet"]) == 0
    again = json.loads(evaluated.read_text())["metrics"]
    for name, value in result["metrics"].items():
        assert again[name] == pytest.approx(value, abs=1e-6), name


@pytest.mark.parametrize("argv, message", [
    (["train", "--train", "missing.txt", "--quiet"], "missing.txt"),
    (["train", "--train", "{train}", "--objective", "listnet", "--quiet"], "unknown objective 'listnet'"),
    (["train", "--train", "{train}", "--engine", "xgboost", "--objective", "lambdarank", "--quiet"],
     "unknown objective 'lambdarank' for xgboost"),
    (["train", "--train", "{train}", "--param", "top_k=0", "--quiet"], "top_k must be a positive integer"),
    (["train", "--train", "{train}", "--early-stopping", "5", "--quiet"], "--early-stopping needs --valid"),
    (["evaluate", "--model", "{train}", "--data", "{train}", "--quiet"], "is not a LightGBM model file"),
])
def test_errors_exit_with_status_2_and_a_message(files, capsys, argv, message):
    argv = [a.format(train=files["train"]) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_flag_values_are_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["train", "--train", "x", "--eval-at", "1,a"])
    assert raised.value.code == 2
    assert "comma-separated integers" in capsys.readouterr().err


def test_parse_assignment():
    assert parse_assignment("top_k=10") == ("top_k", 10)
    assert parse_assignment("top_k=None") == ("top_k", None)
    assert parse_assignment("compress_contexts=false") == ("compress_contexts", False)
    assert parse_assignment("sigmoid=1.5") == ("sigmoid", 1.5)
    assert parse_assignment("boosting=dart") == ("boosting", "dart")


def test_demo_prints_the_comparison_table(tmp_path, capsys):
    assert main(["demo", "--queries", "60", "--rounds", "10", "--out", str(tmp_path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    for name in ("lambdarank [lightgbm]", "plrank(top_k=10, n_permutations=1) [lightgbm]",
                 "plrank(top_k=10, n_permutations=3) [lightgbm]", "umart(window=2) [lightgbm]",
                 "urank [lightgbm]", "pl_partition [lightgbm]"):
        assert name in printed
    assert len(list(tmp_path.glob("result-*.json"))) == 6
