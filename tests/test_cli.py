"""The plboost command: train, evaluate, demo, and its errors."""

import json
from dataclasses import replace
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

from plboost.cli import main, parse_assignment, parse_memory_size
from plboost.data import load_svmlight, make_synthetic, write_synthetic_splits
from plboost.metrics import evaluate as plboost_evaluate


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli-data")
    paths = {}
    for name, n, seed in (("train", 80, 1), ("valid", 30, 2), ("test", 30, 3)):
        paths[name] = make_synthetic(n_queries=n, seed=seed).save_svmlight(directory / f"{name}.txt")
    return paths


@pytest.mark.engine
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

    # predict: the scores the engine gives, one per line in the file's order (issue 40 item 10)
    scores_path = tmp_path / "scores.txt"
    assert main(["predict", "--model", str(model), "--data", str(files["test"]), "--out", str(scores_path)]) == 0
    assert capsys.readouterr().err == f"{scores_path}: {load_svmlight(files['test']).n_docs} scores of {model} on " \
                                      f"{files['test']}\n"
    scores = np.array([float(line) for line in scores_path.read_text().splitlines()])
    test = load_svmlight(files["test"], n_features=46)
    if engine == "lightgbm":
        expected = lgb.Booster(model_file=str(model)).predict(test.X, raw_score=True)
    else:
        booster = xgb.Booster(model_file=str(model))
        expected = booster.predict(xgb.DMatrix(test.X), output_margin=True, iteration_range=(0, result["trees_used"]))
    np.testing.assert_array_equal(scores, expected)
    from_scores = plboost_evaluate(scores, test.labels, offsets=test.offsets, ndcg_at=(1, 3, 10), err_at=(1, 3, 10))
    assert from_scores["NDCG@10"] == pytest.approx(result["metrics"]["NDCG@10"], abs=1e-6)
    assert main(["predict", "--model", str(model), "--data", str(files["test"])]) == 0  # to standard output
    assert capsys.readouterr().out == scores_path.read_text()


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_every_objective_trains_from_the_command_line(files, tmp_path, capsys, objective_class, engine):
    out = tmp_path / "results.json"
    argv = ["train", "--train", str(files["train"]), "--test", str(files["test"]), "--objective", objective_class.name,
            "--engine", engine, "--rounds", "3", "--num-leaves", "7", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    assert f"{objective_class.name} [{engine}]" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["objective"] == objective_class.name and result["engine"] == engine and result["rounds"] == 3
    assert 0 < result["metrics"]["NDCG@10"] <= 1


@pytest.mark.engine
def test_exact_leaf_values_are_saved_in_the_model(files, tmp_path, capsys):
    out, model = tmp_path / "results.json", tmp_path / "model.txt"
    argv = ["train", "--train", str(files["train"]), "--valid", str(files["valid"]), "--test", str(files["test"]),
            "--param", "n_permutations=2", "--leaf-values", "exact", "--rounds", "15", "--early-stopping", "5",
            "--save-model", str(model), "--out", str(out), "--quiet"]
    assert main(argv) == 0
    assert "plrank(n_permutations=2) [lightgbm, exact leaves]" in capsys.readouterr().out
    result = json.loads(out.read_text())
    assert result["spec"]["leaf_values"] == "exact" and result["engine_params"]["leaf_values"] == "exact"
    evaluated = tmp_path / "evaluated.json"
    assert main(["evaluate", "--model", str(model), "--data", str(files["test"]), "--out", str(evaluated),
                 "--quiet"]) == 0
    again = json.loads(evaluated.read_text())["metrics"]
    for name, value in result["metrics"].items():
        assert again[name] == pytest.approx(value, abs=1e-6), name


@pytest.mark.engine
def test_train_and_evaluate_write_standard_json_for_a_metric_without_a_value(files, tmp_path, capsys):
    """No relevant document in the test file and --no-relevant exclude: every metric is NaN, written as null."""
    test = load_svmlight(files["test"])
    unlabelled = replace(test, labels=np.zeros_like(test.labels)).save_svmlight(tmp_path / "unlabelled.txt")
    out, model, evaluated = tmp_path / "train.json", tmp_path / "model.txt", tmp_path / "evaluate.json"
    assert main(["train", "--train", str(files["train"]), "--test", str(unlabelled), "--no-relevant", "exclude",
                 "--rounds", "3", "--save-model", str(model), "--out", str(out), "--quiet"]) == 0
    assert main(["evaluate", "--model", str(model), "--data", str(unlabelled), "--no-relevant", "exclude",
                 "--out", str(evaluated), "--quiet"]) == 0
    for path in (out, evaluated):
        document = json.loads(path.read_text(), parse_constant=lambda name, where=path: pytest.fail(f"{where}: {name}"))
        assert document["metrics"] and all(value is None for value in document["metrics"].values())


@pytest.mark.parametrize("argv, message", [
    (["train", "--train", "{train}", "--leaf-values", "exact", "--engine", "xgboost", "--quiet"], "for LightGBM only"),
    (["train", "--train", "{train}", "--leaf-values", "exact", "--objective", "umart", "--quiet"],
     "defined for PLRank"),
    (["train", "--train", "missing.txt", "--quiet"], "missing.txt"),
    (["train", "--train", "{train}", "--objective", "plrnak", "--quiet"], "unknown objective 'plrnak'"),
    (["train", "--train", "{train}", "--engine", "xgboost", "--objective", "lambdarank", "--quiet"],
     "lambdarank is an objective of lightgbm, not xgboost: add --engine lightgbm"),
    (["train", "--train", "{train}", "--param", "top_k=0", "--quiet"],
     "PLRank: top_k must be an integer >= 1 or None, got 0"),
    (["train", "--train", "{train}", "--early-stopping", "5", "--quiet"], "--early-stopping needs --valid"),
    (["train", "--train", "{train}", "--in-memory", "--memory-budget", "1M", "--quiet"],
     "(memory_budget_bytes, --memory-budget) is the batch size of out-of-core reading, but out_of_core=False "
     "(--in-memory) reads the files into memory whole"),
    (["train", "--train", "{train}", "--dask-local", "1", "--memory-budget", "1M", "--quiet"],
     "--out-of-core, --in-memory and --memory-budget are for one machine"),
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


@pytest.mark.parametrize("command, option, value, bound", [
    ("train", "--rounds", "9223372036854775809", "2**63 - 1"), ("train", "--num-leaves", "2147483648", "2**31 - 1"),
    ("train", "--early-stopping", str(10 ** 25), "2**63 - 1"), ("train", "--eval-at", "1,2147483650", "2**31 - 1"),
    ("evaluate", "--eval-at", "7," + str(2 ** 64), "2**31 - 1"), ("evaluate", "--g-max", str(3 ** 50), "2**63 - 1"),
    ("train", "--dask-local", str(2 ** 70), "2**63 - 1"), ("evaluate", "--max-label", str(2 ** 63), "2**63 - 1"),
    ("train", "--memory-budget", "99999999999T", "2**63 - 1"), ("compare", "--repeats", str(2 ** 63), "2**63 - 1"),
])
def test_every_integer_option_has_an_upper_bound_named_by_the_parser(capsys, command, option, value, bound):
    """An integer the kernels or the engines cannot hold (a C int for the engines' cut-off and leaves, 64 bits
    elsewhere) is refused in one line naming the option, before anything is read or trained."""
    rest = {"train": ["--train", "x"], "evaluate": ["--model", "x", "--data", "x"], "compare": ["x"]}[command]
    with pytest.raises(SystemExit) as raised:
        main([command, *rest, option, value])
    error = capsys.readouterr().err.strip()
    assert raised.value.code == 2 and "\n" not in error
    assert f"argument {option}: " in error and f"at most {bound}" in error


@pytest.fixture(scope="module")
def synthetic_folds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("folds")
    for fold in (1, 2):
        write_synthetic_splits(directory / f"Fold{fold}", n_queries=(40, 15, 15), seed=fold)
    return directory


@pytest.mark.engine
def test_compare_runs_configurations_over_folds(synthetic_folds, tmp_path, capsys):
    config = tmp_path / "runs.toml"
    config.write_text('[[run]]\nobjective = "urank"\n')
    out = tmp_path / "out"
    argv = ["compare", str(synthetic_folds), "--run", "plrank,n_permutations=2", "--run", "rank:ndcg@xgboost",
            "--run", "plrank,n_permutations=2,leaf_values=exact",
            "--config", str(config), "--baselines", "--rounds", "8", "--num-leaves", "7", "--early-stopping", "4",
            "--out", str(out), "--plot", "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    labels = ["plrank(n_permutations=2) [lightgbm]", "rank:ndcg [xgboost]",
              "plrank(n_permutations=2) [lightgbm, exact leaves]", "urank [lightgbm]", "lambdarank [lightgbm]",
              "rank_xendcg [lightgbm]", "regression [lightgbm]", "rank:pairwise [xgboost]"]
    for label in labels:
        assert label in printed
    assert "2 split(s) (Fold1, Fold2)" in printed and "ties: stable sort" in printed
    saved = json.loads((out / "results.json").read_text())
    assert len(saved["results"]) == 2 * len(labels)
    assert (out / "validation_ndcg.png").is_file() and (out / "summary.csv").is_file()


@pytest.mark.engine
def test_compare_trains_yetirank_and_lambdaloss_on_mq2008(shared_data, tmp_path, capsys):
    """Issue 37's objectives on MQ2008 Fold1 from the command line, on both engines; LambdaLoss at mu = 0 with
    LightGBM's arithmetic scores exactly what lambdarank scores."""
    out = tmp_path / "out"
    argv = ["compare", str(shared_data / "MQ2008"), "--folds", "Fold1", "--run", "yetirank", "--run", "lambdaloss",
            "--run", "lambdaloss,mu=0,lightgbm_arithmetic=true,hessian_floor=0", "--run", "lambdarank",
            "--run", "yetirank@xgboost,preset=plackett_luce", "--rounds", "15", "--early-stopping", "5",
            "--out", str(out), "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    for label in ("yetirank [lightgbm]", "lambdaloss [lightgbm]", "yetirank(preset=plackett_luce) [xgboost]"):
        assert label in printed
    runs = {run["label"]: run for run in json.loads((out / "results.json").read_text())["runs"]}
    same = next(run for label, run in runs.items() if "lightgbm_arithmetic" in label)
    assert same["metrics"] == runs["lambdarank [lightgbm]"]["metrics"]
    assert same["valid_history"] == runs["lambdarank [lightgbm]"]["valid_history"]
    assert runs["lambdaloss [lightgbm]"]["valid_history"] != same["valid_history"]


@pytest.mark.parametrize("argv, message", [
    (["compare", "{data}", "--quiet"], "nothing to compare"),
    (["compare", "{data}", "--run", "plrank", "--plot", "--quiet"], "--plot needs --out"),
    (["compare", "{data}", "--run", "plrank,top_k", "--quiet"], "expected KEY=VALUE, got 'top_k'"),
    (["compare", "{data}", "--run", "plrank,top_k=3@xgboost", "--quiet"],
     "the engine goes after the objective's name: plrank@xgboost,top_k=3"),
    (["compare", "{data}/Fold1/train.txt", "--run", "plrank", "--quiet"], "does not exist"),
    (["compare", "{data}", "--run", "urank", "--folds", "Fold2, Fold1,Fold2", "--quiet"],
     "splits (--folds) names Fold2 more than once"),
    (["compare", "{data}", "--run", "urank", "--folds", " , ", "--quiet"], "splits (--folds) names no split"),
])
def test_compare_errors(synthetic_folds, capsys, argv, message):
    assert main([a.format(data=synthetic_folds) for a in argv]) == 2
    assert message in capsys.readouterr().err


def test_compare_of_a_missing_dataset_creates_no_output_directory(tmp_path, capsys):
    out = tmp_path / "new"
    assert main(["compare", str(tmp_path / "missing"), "--run", "plrank", "--out", str(out), "--quiet"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert not out.exists()


def test_parse_assignment():
    assert parse_assignment("top_k=10") == ("top_k", 10)
    assert parse_assignment("top_k=None") == ("top_k", None)
    assert parse_assignment("compress_contexts=false") == ("compress_contexts", False)
    assert parse_assignment("sigmoid=1.5") == ("sigmoid", 1.5)
    assert parse_assignment("boosting=dart") == ("boosting", "dart")


@pytest.mark.engine
def test_demo_prints_the_comparison_table(tmp_path, capsys):
    """LightGBM's lambdarank, then every registered objective's ``demo_runs`` (README: PLRank, uMart, uRank and
    PL-Partition at least)."""
    from plboost.cli import demo_runs
    from plboost.experiment import RunSpec, parse_run

    labels = [parse_run(text, RunSpec()).label for text in demo_runs()]
    assert {"lambdarank [lightgbm]", "plrank(n_permutations=1) [lightgbm]", "plrank(n_permutations=3) [lightgbm]",
            "umart(window=2) [lightgbm]", "urank [lightgbm]", "pl_partition [lightgbm]"} <= set(labels)
    assert main(["demo", "--queries", "60", "--rounds", "10", "--out", str(tmp_path), "--quiet"]) == 0
    printed = capsys.readouterr().out
    for label in labels:
        assert label in printed
    saved = json.loads((tmp_path / "results" / "results.json").read_text())
    assert len(saved["results"]) == len(labels)
    assert (tmp_path / "data" / "train.txt").is_file()
    # a second demo into the same directory would replace the first one's files: refused, nothing touched
    before = (tmp_path / "data" / "train.txt").read_bytes()
    assert main(["demo", "--queries", "60", "--rounds", "10", "--out", str(tmp_path), "--quiet", "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path}: {tmp_path / 'data'} holds test.txt, train.txt, vali.txt, which the demo would " \
           "replace; give a new or empty directory" in err
    assert (tmp_path / "data" / "train.txt").read_bytes() == before


# --------------------------------------------------------------------------------------------------
# failures: one line and exit status 2 (130 for Ctrl-C), and nothing trained before an output is checked

@pytest.mark.parametrize("error, status, message", [
    (KeyboardInterrupt(), 130, "plboost compare: interrupted"),
    (MemoryError(), 2, "plboost compare: error: out of memory (no detail): try smaller data, sparse input"),
    (OSError(28, "No space left on device", "/tmp/out/results.csv"), 2,
     "plboost compare: error: /tmp/out/results.csv: No space left on device"),
    (PermissionError(13, "Permission denied", "/data/x.txt"), 2,
     "plboost compare: error: /data/x.txt: Permission denied"),
])
def test_failures_are_one_line(synthetic_folds, monkeypatch, capsys, error, status, message):
    import plboost.experiment

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(plboost.experiment, "compare", fail)
    assert main(["compare", str(synthetic_folds), "--run", "plrank", "--quiet"]) == status
    err = capsys.readouterr().err
    assert err.strip() == message.strip() or err.startswith(message), err
    assert "Traceback" not in err
    with pytest.raises(type(error)):  # --debug shows the traceback
        main(["compare", str(synthetic_folds), "--run", "plrank", "--quiet", "--debug"])


def test_ctrl_c_before_the_command_starts_is_one_line(monkeypatch, capsys):
    """A Ctrl-C while the command's modules load (the first second) reached Python's traceback (issue 38)."""
    import plboost.__main__
    import plboost.cli

    def interrupted_while_loading(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(plboost.cli, "main", interrupted_while_loading)
    assert plboost.__main__.run(["train", "--train", "x.txt"]) == 130
    assert capsys.readouterr().err == "plboost: interrupted\n"


@pytest.mark.parametrize("bug", [ZeroDivisionError("a bug"), TypeError("unsupported operand type(s) for +")])
def test_a_bug_shows_its_traceback_and_asks_for_a_report(synthetic_folds, monkeypatch, capsys, bug):
    """A TypeError that Python raises inside plboost is a bug, not bad input (InputTypeError is the user's)."""
    import plboost.experiment

    def fail(*args, **kwargs):
        raise bug

    monkeypatch.setattr(plboost.experiment, "compare", fail)
    assert main(["compare", str(synthetic_folds), "--run", "plrank", "--quiet"]) == 3
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and f"{type(bug).__name__}: {bug}" in err
    assert err.rstrip().splitlines()[-1].startswith(f"plboost compare: internal error ({type(bug).__name__}): "
                                                    "this is a bug in plboost")


def test_a_type_the_user_got_wrong_is_one_line(synthetic_folds, monkeypatch, capsys):
    import plboost.experiment
    from plboost import query_folds
    from plboost.errors import InputTypeError

    with pytest.raises(InputTypeError, match="nfold must be an integer") as raised:
        query_folds([3, 1, 2], nfold="3")
    assert isinstance(raised.value, TypeError)  # code that catches TypeError still catches it

    def fail(*args, **kwargs):
        raise raised.value

    monkeypatch.setattr(plboost.experiment, "compare", fail)
    assert main(["compare", str(synthetic_folds), "--run", "plrank", "--quiet"]) == 2
    assert capsys.readouterr().err == ("plboost compare: error: query_folds: nfold must be an integer >= 2, "
                                       "got '3' (str)\n")


def test_outputs_are_checked_before_training(synthetic_folds, tmp_path, monkeypatch, capsys):
    import plboost.experiment

    trained = []
    monkeypatch.setattr(plboost.experiment, "run", lambda *a, **k: trained.append(1))
    train = synthetic_folds / "Fold1" / "train.txt"
    for argv in (["--out", str(train)], ["--save-model", str(tmp_path)], ["--out", str(tmp_path / "no" / "r.json")],
                 ["--save-model", str(tmp_path / "m.txt"), "--out", str(tmp_path / "m.txt")]):
        assert main(["train", "--train", str(train), "--quiet", *argv]) == 2
    assert not trained
    assert not (tmp_path / "m.txt").exists()  # the probe leaves nothing behind


@pytest.mark.engine
def test_parameter_values_are_named_and_booleans_strict(synthetic_folds, tmp_path):
    from plboost.experiment import RunSpec, parse_run

    assert parse_run("plrank,skip_uniform_queries=no", RunSpec()).objective_params == {"skip_uniform_queries": False}
    assert parse_run("plrank,compress_contexts=0", RunSpec()).objective_params == {"compress_contexts": False}
    assert parse_run("plrank,compress_contexts=yes", RunSpec()).objective_params == {"compress_contexts": True}
    train = synthetic_folds / "Fold1" / "train.txt"
    out = tmp_path / "r.json"
    assert main(["train", "--train", str(train), "--rounds", "2", "--param", "skip_uniform_queries=no",
                 "--out", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text())["objective_params"]["skip_uniform_queries"] is False


@pytest.mark.engine
def test_max_label_and_zero_based_reach_the_loader(tmp_path, capsys):
    data = tmp_path / "train.txt"
    rng = np.random.default_rng(0)
    data.write_text("40 qid:1 0:0.5 1:0.1\n" + "".join(f"{rng.integers(0, 4)} qid:{2 + i // 10} 0:{rng.random():.3f} "
                                                        f"1:{rng.random():.3f}\n" for i in range(200)))
    assert main(["train", "--train", str(data), "--rounds", "2", "--quiet"]) == 2
    assert "label 40 exceeds max_label=30" in capsys.readouterr().err
    assert main(["train", "--train", str(data), "--rounds", "2", "--quiet", "--max-label", "40"]) == 2
    assert "feature index 0" in capsys.readouterr().err
    gains = ",".join(str(2 ** min(label, 20) - 1) for label in range(41))  # LightGBM's NDCG needs a gain per label
    assert main(["train", "--train", str(data), "--rounds", "2", "--quiet", "--max-label", "40", "--zero-based",
                 "--engine-param", f"label_gain=[{gains}]", "--g-max", "40"]) == 0


# --------------------------------------------------------------------------------------------------
# tables (Parquet, CSV) beside SVMlight files


def write_table(data, path, query="q", label="rel"):
    """``data`` as a table with the query and label columns named ``query`` and ``label``, then f1..fN."""
    import pandas as pd

    frame = pd.DataFrame(data.X, columns=[f"f{j + 1}" for j in range(data.n_features)])
    frame.insert(0, label, data.labels.astype(np.int64))
    frame.insert(0, query, np.repeat(data.qids, data.group_sizes))
    if path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli-tables")
    return {name: write_table(make_synthetic(n_queries=n, seed=seed), directory / f"{name}{suffix}")
            for name, n, seed, suffix in (("train", 80, 1, ".parquet"), ("valid", 30, 2, ".csv.gz"),
                                          ("test", 30, 3, ".csv"))}


@pytest.mark.engine
def test_train_on_parquet_and_csv_then_evaluate_the_csv(tables, files, tmp_path, capsys):
    out, model = tmp_path / "results.json", tmp_path / "model.txt"
    columns = ["--query-column", "q", "--label-column", "rel"]
    assert main(["train", "--train", str(tables["train"]), "--valid", str(tables["valid"]), "--test",
                 str(tables["test"]), "--rounds", "5", "--early-stopping", "3", "--num-leaves", "7",
                 "--save-model", str(model), "--out", str(out), "--quiet", *columns]) == 0
    result = json.loads(out.read_text())
    assert result["evaluated_on"] == "test" and result["data"]["test"] == str(tables["test"])
    evaluated = tmp_path / "evaluated.json"
    assert main(["evaluate", "--model", str(model), "--data", str(tables["test"]), "--out", str(evaluated),
                 "--quiet", *columns]) == 0
    for name, value in result["metrics"].items():
        assert json.loads(evaluated.read_text())["metrics"][name] == pytest.approx(value, abs=1e-6), name
    # the same documents from the SVMlight file give the same metrics: the table's columns are its features
    capsys.readouterr()
    assert main(["train", "--train", str(files["train"]), "--valid", str(files["valid"]), "--test",
                 str(files["test"]), "--rounds", "5", "--early-stopping", "3", "--num-leaves", "7",
                 "--out", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text())["metrics"] == pytest.approx(result["metrics"])


@pytest.mark.parametrize("argv, message", [
    (["train", "--train", "{train}", "--query-column", "q", "--label-column", "rel", "--out-of-core"],
     "train.parquet: a table is read in memory; out-of-core reading (--out-of-core) is for SVMlight files"),
    (["train", "--train", "{train}", "--query-column", "q", "--label-column", "rel", "--zero-based"],
     "zero_based=True (--zero-based): for SVMlight files, but train.parquet is a table"),
    (["train", "--train", "{train}", "--query-column", "q", "--label-column", "rel", "--dask-local", "1"],
     "train.parquet: training on Dask reads SVMlight files"),
    (["train", "--train", "{train}"], "train.parquet: no query column 'qid' (query=... or --query-column names "
                                      "another); the columns are 'q', 'rel', 'f1'"),
    (["train", "--train", "{svmlight}", "--label-column", "rel"],
     "label='rel' (--label-column): for tables (.parquet, .pq, .csv, .csv.gz), but train.txt is an SVMlight file"),
    (["train", "--train", "{svmlight}", "--sort-queries", "--dask-local", "1"],
     "sort=True (--sort-queries): for tables"),
])
def test_table_options_and_tables_are_refused_where_they_do_not_apply(tables, files, capsys, argv, message):
    assert main([a.format(train=tables["train"], svmlight=files["train"]) for a in argv] + ["--quiet"]) == 2
    assert message in capsys.readouterr().err


def test_evaluate_refuses_a_table_of_another_width(tables, tmp_path, capsys):
    from plboost.data import load_table

    train = load_table(tables["train"], query="q", label="rel")
    model = tmp_path / "model.txt"
    import lightgbm as lgb

    # a model of numbered features (no names): the table's columns can only be taken by position
    lgb.train({"objective": "lambdarank", "verbose": -1, "num_leaves": 3},
              lgb.Dataset(train.X, train.labels, group=train.group_sizes), num_boost_round=1).save_model(model)
    narrow = write_table(train.subset(np.arange(5)), tmp_path / "narrow.csv")
    import pandas as pd

    pd.read_csv(narrow).drop(columns="f3").to_csv(narrow, index=False)
    assert main(["evaluate", "--model", str(model), "--data", str(narrow), "--query-column", "q", "--label-column",
                 "rel", "--quiet"]) == 2
    assert f"narrow.csv: {train.n_features - 1} feature columns, but {model} was trained on" in capsys.readouterr().err


@pytest.mark.engine
@pytest.mark.parametrize("engine, suffix", [("lightgbm", ".parquet"), ("xgboost", ".csv.gz")])
def test_evaluate_and_predict_find_a_tables_columns_by_name(tables, tmp_path, capsys, engine, suffix):
    """A model trained on a table keeps its column names; a table of the same columns in any order scores the same,
    and one with a column missing or extra is refused, naming it."""
    import pandas as pd

    columns = ["--query-column", "q", "--label-column", "rel"]
    model = tmp_path / ("model.txt" if engine == "lightgbm" else "model.json")
    assert main(["train", "--train", str(tables["train"]), "--engine", engine, "--rounds", "4", "--num-leaves", "7",
                 "--save-model", str(model), "--quiet", *columns]) == 0
    frame = pd.read_csv(tables["test"])
    features = [name for name in frame.columns if name not in ("q", "rel")]
    shuffled = [features[i] for i in np.random.default_rng(7).permutation(len(features))]
    assert shuffled != features
    outputs = {}
    for name, order in (("same", features), ("shuffled", shuffled)):
        path = tmp_path / f"{name}{suffix}"
        if suffix == ".parquet":
            frame[["rel", *order, "q"]].to_parquet(path)
        else:
            frame[["rel", *order, "q"]].to_csv(path, index=False)
        for command in ("evaluate", "predict"):
            out = tmp_path / f"{name}.{command}"
            assert main([command, "--model", str(model), "--data", str(path), "--out", str(out), "--quiet",
                         *columns]) == 0
            outputs[name, command] = out.read_text()
    assert capsys.readouterr().err == ""
    assert outputs["same", "predict"] == outputs["shuffled", "predict"]
    assert json.loads(outputs["same", "evaluate"])["metrics"] == json.loads(outputs["shuffled", "evaluate"])["metrics"]
    for edit, expect in ((lambda f: f.drop(columns=shuffled[3]), f"('{shuffled[3]}' missing)"),
                         (lambda f: f.assign(doc_length=1.0), f"('doc_length' not in the model {model})")):
        path = tmp_path / "edited.csv"
        edit(frame).to_csv(path, index=False)
        assert main(["evaluate", "--model", str(model), "--data", str(path), "--quiet", *columns]) == 2
        assert (f"edited.csv: the feature columns differ from those of the model {model} {expect}; a model scores "
                "the columns it was trained on, found by name") in capsys.readouterr().err


def test_evaluate_says_when_features_are_matched_by_position(tables, files, tmp_path, capsys):
    """A table scored by a model of numbered features, or SVMlight data by a model of named columns: one line says
    the features are taken by position."""
    import lightgbm as lgb
    import pandas as pd
    from plboost.data import load_svmlight, load_table

    train = load_table(tables["train"], query="q", label="rel")
    renamed = tmp_path / "renamed.csv"
    write_table(train.subset(np.arange(6)), renamed)
    pd.read_csv(renamed).rename(columns={"f2": "bm25"}).to_csv(renamed, index=False)
    numbered = tmp_path / "numbered.txt"
    lgb.train({"objective": "lambdarank", "verbose": -1, "num_leaves": 3},
              lgb.Dataset(train.X, train.labels, group=train.group_sizes), num_boost_round=1).save_model(numbered)
    assert main(["evaluate", "--model", str(numbered), "--data", str(renamed), "--quiet", "--query-column", "q",
                 "--label-column", "rel"]) == 0
    assert (f"{numbered} records no feature names (trained on numbered features): the features of {renamed} are "
            "matched to the model's by position") in capsys.readouterr().err
    svmlight = load_svmlight(files["train"], cache=False)
    named = tmp_path / "named.txt"
    data = type(svmlight)(svmlight.X, svmlight.labels, svmlight.qids, svmlight.offsets,
                          feature_names=[f"c{j}" for j in range(svmlight.n_features)])
    lgb.train({"objective": "lambdarank", "verbose": -1, "num_leaves": 3}, data.to_lightgbm(),
              num_boost_round=1).save_model(named)
    assert main(["evaluate", "--model", str(named), "--data", str(files["test"]), "--quiet"]) == 0
    assert (f"{named} was trained on the table columns 'c0', 'c1', 'c2', ..., and {files['test']} numbers its "
            "features: the features of") in capsys.readouterr().err


@pytest.mark.engine
def test_compare_reads_folds_of_tables_and_records_how_they_were_read(tmp_path, capsys):
    data = tmp_path / "data"
    for fold in (1, 2):
        (data / f"Fold{fold}").mkdir(parents=True)
        for name, n, suffix in (("train", 40, ".parquet"), ("vali", 15, ".parquet"), ("test", 15, ".csv")):
            write_table(make_synthetic(n_queries=n, seed=fold * 10 + n), data / f"Fold{fold}" / f"{name}{suffix}",
                        query="qid", label="label")
    argv = ["compare", str(data), "--run", "plrank", "--rounds", "3", "--num-leaves", "7", "--folds", "Fold1",
            "--out", str(tmp_path / "out"), "--quiet"]
    assert main(argv) == 0
    assert "1 split(s) (Fold1)" in capsys.readouterr().out
    record = json.loads(next((tmp_path / "out" / "runs").glob("*/Fold1.json")).read_text())
    assert record["provenance"]["data"]["train"]["table"] == {"query": "qid", "label": "label", "features": None,
                                                              "sort": False}
    assert main(argv) == 0
    assert "1 reused from records" in capsys.readouterr().err
    assert main([*argv, "--sort-queries"]) == 0  # read another way: not the same data for the records
    assert "redone because: train table read with sort False -> True" in capsys.readouterr().err


def test_run_scripts_report_a_missing_directory_in_one_line(tmp_path):
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[1] / "scripts" / "run_mslr.py"
    completed = subprocess.run([sys.executable, str(script), str(tmp_path / "missing")], capture_output=True,
                               text=True, timeout=120)
    assert completed.returncode == 2
    assert completed.stderr.strip() == f"run_mslr.py: error: dataset directory {tmp_path / 'missing'} does not exist"


# --- --memory-budget (issue 27) ---------------------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [("512M", 512 << 20), ("2G", 2 << 30), ("1048576", 1 << 20),
                                            ("64k", 64 << 10), ("1.5GiB", 3 << 29), ("256MB", 256 << 20),
                                            (" 10 b ", 10), ("1t", 1 << 40), (".5K", 512)])
def test_memory_sizes(text, expected):
    assert parse_memory_size(text) == expected


@pytest.mark.parametrize("command", ["train", "compare"])
@pytest.mark.parametrize("value, message", [("lots", "expected a size like 512M, 2G or a number of bytes"),
                                            ("12X", "expected a size like"), ("-5", "expected a size like"),
                                            ("0", "expected a positive size"), ("0.5", "expected a positive size")])
def test_memory_budget_errors_name_the_flag(capsys, command, value, message):
    argv = ["train", "--train", "x"] if command == "train" else ["compare", "x", "--run", "plrank"]
    with pytest.raises(SystemExit) as raised:
        main([*argv, f"--memory-budget={value}"])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --memory-budget: {message}" in err and repr(value) in err


@pytest.mark.engine
def test_memory_budget_reaches_the_out_of_core_loader(files, synthetic_folds, monkeypatch, capsys):
    from plboost.data import splits

    budgets = []
    load = splits.load_out_of_core

    def recording(path, **options):
        budgets.append(options.get("memory_budget_bytes"))
        return load(path, **options)

    monkeypatch.setattr(splits, "load_out_of_core", recording)
    common = ["--rounds", "2", "--quiet", "--out-of-core"]
    assert main(["train", "--train", str(files["train"]), "--test", str(files["test"]), *common,
                 "--memory-budget", "64K"]) == 0
    assert budgets == [64 << 10] * 2
    budgets.clear()
    assert main(["compare", str(synthetic_folds), "--run", "plrank", *common, "--memory-budget", "2G"]) == 0
    assert budgets == [2 << 30] * 6  # two folds of three files
    budgets.clear()
    assert main(["train", "--train", str(files["train"]), *common]) == 0
    assert budgets == [None]  # the loader's default
    assert "--memory-budget" not in capsys.readouterr().err


@pytest.mark.engine
def test_memory_budget_with_data_read_in_memory_is_said_in_one_line(files, capsys):
    assert main(["train", "--train", str(files["train"]), "--rounds", "2", "--quiet", "--memory-budget", "1M"]) == 0
    err = capsys.readouterr().err
    assert err == ("plboost: train.txt: read in memory (they fit the memory available; --out-of-core or "
                   "out_of_core=True reads them out of core); the memory budget (--memory-budget, "
                   "memory_budget_bytes) applies only to out-of-core reading\n")


@pytest.mark.engine
def test_evaluate_names_the_model_for_svmlight_data_of_another_width(tmp_path, capsys):
    """A 5-feature model on 46-feature data blamed the data's line without saying that 5 is the model's width; a
    300-feature model on the same data scored it without a word."""
    import lightgbm as lgb

    rng = np.random.default_rng(0)
    data = tmp_path / "test.txt"
    make_synthetic(n_queries=20, n_features=46, seed=1).save_svmlight(data)
    for n_features in (5, 300):
        X = rng.normal(size=(100, n_features))
        lgb.train({"objective": "lambdarank", "verbose": -1, "min_data_in_leaf": 2}, lgb.Dataset(
            X, rng.integers(0, 3, 100), group=[10] * 10), 2).save_model(tmp_path / f"m{n_features}.txt")
    assert main(["evaluate", "--model", str(tmp_path / "m5.txt"), "--data", str(data), "--quiet"]) == 2
    assert (f"is beyond n_features=5 (the number of features the model {tmp_path / 'm5.txt'} was trained on): is "
            "this the data the model is for?") in capsys.readouterr().err
    assert main(["evaluate", "--model", str(tmp_path / "m300.txt"), "--data", str(data), "--quiet"]) == 0
    assert (f"plboost evaluate: warning: {data}: no document has a feature above 46, but {tmp_path / 'm300.txt'} "
            "was trained on 300 features, which read as 0 here") in capsys.readouterr().err


def test_an_unknown_objective_or_parameter_is_refused_before_the_engines_and_the_comparison_load(files):
    """A newcomer waited 10 s for 'unknown objective' (issue 40 item 12): the name and the parameters are checked
    before LightGBM, pandas and SciPy's statistics are imported."""
    import subprocess
    import sys

    heavy = ("lightgbm", "xgboost", "pandas", "scipy.stats")
    code = ("import sys\nfrom plboost.cli import main\n"
            f"for argv in (['--objective', 'plrankk'], ['--param', 'topk=3']):\n"
            f"    assert main(['train', '--train', {str(files['train'])!r}, '--quiet', *argv]) == 2\n"
            f"print([name for name in {heavy!r} if name in sys.modules])\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
    assert "unknown objective 'plrankk'" in result.stderr and "did you mean top_k?" in result.stderr


def test_every_option_has_a_line_of_help_with_its_default():
    """``train --help`` showed --engine and --seed without a word, --learning-rate as "default 0.1" (issue 40
    item 11): every option of every command says what it is, and the default where it has one."""
    import argparse

    from plboost.cli import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert {"train", "evaluate", "predict", "compare", "summarize", "demo"} <= set(commands)
    lacking = []
    for name, parser in commands.items():
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            words = (action.help or "").split()
            has_default = action.default not in (None, False, [], argparse.SUPPRESS) and action.nargs != 0
            if len(words) < 3 or (has_default and "default" not in action.help):
                lacking.append(f"{name} {'/'.join(action.option_strings) or action.dest}: {action.help!r}")
    assert lacking == []


# the process's environment and the command line's conventions, named in one line

@pytest.mark.parametrize("value", ["-3", "four", "1.5", " "])
def test_a_thread_count_numba_cannot_use_is_refused_naming_the_variable(files, monkeypatch, capsys, value):
    monkeypatch.setenv("NUMBA_NUM_THREADS", value)
    assert main(["train", "--train", str(files["train"]), "--rounds", "1", "--quiet"]) == 2
    assert capsys.readouterr().err == (f"plboost train: error: the environment variable NUMBA_NUM_THREADS (the threads "
                                       f"of plboost's kernels) must be an integer >= 1, got {value!r}; set it so, or "
                                       "unset it for one thread per core\n")


@pytest.mark.slow
def test_a_deleted_working_directory_is_said_in_one_line(files, tmp_path):
    import subprocess
    import sys

    gone = tmp_path / "gone"
    gone.mkdir()
    script = f"cd {gone} && rmdir {gone} && exec {sys.executable} -m plboost evaluate --model m.txt --data d.txt"
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert done.returncode == 2
    assert done.stderr == ("plboost evaluate: error: the working directory no longer exists (it was deleted or moved "
                           "away): cd to a directory that exists and run the command again\n")


@pytest.mark.parametrize("argv", [["demo", "--seed", "-4"], ["demo", "--seed", str(2 ** 63)],
                                  ["compare", "x", "--run", "plrank", "--tune", "2", "--tune-seed", "-9"]])
def test_seeds_of_the_demo_and_the_search_are_refused_naming_the_option(capsys, argv):
    with pytest.raises(SystemExit) as raised:
        main(argv)
    assert raised.value.code == 2
    option = argv[argv.index("--seed") if "--seed" in argv else argv.index("--tune-seed")]
    assert capsys.readouterr().err == (f"plboost {argv[0]}: error: argument {option}: expected an integer in "
                                       f"[0, 2**63), got {argv[-1]!r} (see plboost {argv[0]} --help)\n")


@pytest.mark.engine
def test_out_dash_is_standard_output_for_the_scores_and_refused_elsewhere(files, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = tmp_path / "model.txt"
    assert main(["train", "--train", str(files["train"]), "--rounds", "2", "--save-model", str(model),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["predict", "--model", str(model), "--data", str(files["test"]), "--out", "-", "--quiet"]) == 0
    printed = capsys.readouterr()
    assert len(printed.out.splitlines()) == load_svmlight(files["test"]).n_docs and printed.err == ""
    refused = [(["evaluate", "--model", str(model), "--data", str(files["test"]), "--out", "-"], "--out", "file"),
               (["train", "--train", str(files["train"]), "--save-model", "-"], "--save-model", "file"),
               (["compare", str(files["train"].parent), "--run", "plrank", "--out", "-"], "--out", "directory"),
               (["demo", "--out", "-"], "--out", "directory")]
    for argv, option, kind in refused:
        assert main([*argv, "--quiet"]) == 2, argv
        assert capsys.readouterr().err.endswith(f"error: {option} -: '-' stands for standard output, where this "
                                                f"command prints its table; give a {kind} name\n"), argv
    assert list(tmp_path.iterdir()) == [model]  # no file named '-'


@pytest.mark.engine
def test_training_metrics_say_so_and_no_header_line_is_long(files, capsys):
    assert main(["train", "--train", str(files["valid"]), "--rounds", "2", "--quiet", "--eval-at", "2,4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("train metrics: on the data the model was fitted to (no --valid or --test given), not an "
                        "estimate for new queries")
    assert lines[1].startswith("conventions: NDCG: gain 2^y-1")
    header = [line for line in lines if not line.startswith("|")]
    assert header and max(map(len, header)) <= 120, header
    assert main(["train", "--train", str(files["valid"]), "--test", str(files["test"]), "--rounds", "2",
                 "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "test metrics"


@pytest.mark.engine
@pytest.mark.parametrize("trials, few", [(4, True), (10, False)])
def test_a_tuned_table_states_its_early_stopping_once_and_a_small_budget(synthetic_folds, capsys, trials, few):
    pytest.importorskip("optuna")
    assert main(["compare", str(synthetic_folds), "--folds", "Fold1", "--run", "lambdarank", "--run", "rank_xendcg",
                 "--tune", str(trials), "--rounds", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "no early stopping" not in out and "early stopping after 30 rounds (every tuning trial's)" in out
    warning = f"{trials} trial(s) per configuration is too few a budget to compare tuned configurations by"
    assert out.count(warning) == (2 if few else 0)  # in the header, and beside the markers' legend


def test_the_help_and_the_docs_name_what_the_commands_read_and_run(capsys):
    from plboost.cli import demo_runs

    for command in ("evaluate", "predict"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        shown = " ".join(capsys.readouterr().out.split())
        assert "model file: LightGBM text, XGBoost JSON or UBJSON, or CatBoost .cbm" in shown
    text = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text()
    block = text[text.index("## demo"):].split("```")[1]
    comment = " ".join(line.lstrip("# ") for line in block.splitlines() if line.startswith("#"))
    for run in demo_runs():
        assert run.split(",")[0] in comment.replace(",", " ").split(), run


@pytest.fixture(scope="module")
def served_model(files, tmp_path_factory):
    """A small LightGBM model of plrank's, saved, and the raw scores that ``predict`` writes for the test file."""
    directory = tmp_path_factory.mktemp("served")
    model, scores = directory / "model.txt", directory / "scores.txt"
    assert main(["train", "--train", str(files["train"]), "--rounds", "4", "--num-leaves", "5", "--save-model",
                 str(model), "--quiet"]) == 0
    assert main(["predict", "--model", str(model), "--data", str(files["test"]), "--out", str(scores),
                 "--quiet"]) == 0
    return model, np.array([float(line) for line in scores.read_text().splitlines()])


def _sampled(files, model, tmp_path, name, *options):
    """``predict --sample ...`` of the test file into ``name``: its text, and its ranks as (documents, N)."""
    out = tmp_path / name
    assert main(["predict", "--model", str(model), "--data", str(files["test"]), "--out", str(out), "--quiet",
                 *options]) == 0
    text = out.read_text()
    return text, np.array([[int(rank) for rank in line.split(" ")] for line in text.splitlines()], dtype=np.int32)


@pytest.mark.engine
def test_predict_sample_writes_the_policys_rankings_a_line_per_document(files, served_model, tmp_path, capsys):
    """``predict --sample N`` serves the Plackett-Luce policy of the scores that ``predict`` writes: line d holds
    document d's rank in each of the N rankings of its query, PlackettLucePolicy.sample's array transposed."""
    from plboost.policies import PlackettLucePolicy

    model, scores = served_model
    test = load_svmlight(files["test"], n_features=46)
    capsys.readouterr()
    text, ranks = _sampled(files, model, tmp_path, "a.txt", "--sample", "5", "--temperature", "0.5", "--seed", "7")
    assert ranks.shape == (test.n_docs, 5)
    expected = PlackettLucePolicy(scores, test.offsets, temperature=0.5).sample(5, seed=7)
    np.testing.assert_array_equal(ranks.T, expected)
    for q in range(test.n_queries):  # each ranking of a query is a permutation of its ranks 1..n
        lo, hi = test.offsets[q], test.offsets[q + 1]
        for i in range(5):
            assert sorted(ranks[lo:hi, i]) == list(range(1, hi - lo + 1)), (q, i)
    assert _sampled(files, model, tmp_path, "b.txt", "--sample", "5", "--temperature", "0.5", "--seed", "7")[0] == text
    other = _sampled(files, model, tmp_path, "c.txt", "--sample", "5", "--temperature", "0.5", "--seed", "8")[0]
    assert other != text
    # standard output holds the same lines, and the line on standard error says what reproduces them
    assert main(["predict", "--model", str(model), "--data", str(files["test"]), "--sample", "5", "--temperature",
                 "0.5", "--seed", "7"]) == 0
    printed = capsys.readouterr()
    assert printed.out == text
    assert printed.err.splitlines()[-1] == (
        f"standard output: 5 rankings of each of {test.n_queries} queries ({test.n_docs} lines, one per document) "
        f"sampled from the Plackett-Luce policy of the scores of {model} on {files['test']}, temperature 0.5, seed 7")
    # the top 3 ranks only, 0 below: each query's ranking holds 1..min(n, 3) once and 0 for the others
    top = _sampled(files, model, tmp_path, "d.txt", "--sample", "3", "--top-k", "3", "--seed", "2")[1]
    np.testing.assert_array_equal(top.T, PlackettLucePolicy(scores, test.offsets, temperature=1.0, top_k=3).sample(
        3, seed=2))
    for q in range(test.n_queries):
        lo, hi = test.offsets[q], test.offsets[q + 1]
        kept = min(hi - lo, 3)
        for i in range(3):
            assert sorted(top[lo:hi, i]) == [0] * (hi - lo - kept) + list(range(1, kept + 1)), (q, i)
    # the defaults (temperature 1, seed 0) are said, as the options that give them
    out = tmp_path / "e.txt"
    assert main(["predict", "--model", str(model), "--data", str(files["test"]), "--sample", "2", "--out",
                 str(out)]) == 0
    assert capsys.readouterr().err.splitlines()[-1].endswith(f"{model} on {files['test']}, temperature 1.0, seed 0")
    assert out.read_text() == _sampled(files, model, tmp_path, "f.txt", "--sample", "2", "--temperature", "1",
                                       "--seed", "0")[0]


@pytest.mark.engine
def test_predict_sample_at_temperature_zero_is_the_ranking_by_score(files, served_model, tmp_path):
    """Temperature 0 is the deterministic ranking by score, documents of equal scores in the order of the draws."""
    model, scores = served_model
    test = load_svmlight(files["test"], n_features=46)
    ranks = _sampled(files, model, tmp_path, "zero.txt", "--sample", "4", "--temperature", "0", "--seed", "3")[1]
    tied_queries = 0
    for q in range(test.n_queries):
        lo, hi = test.offsets[q], test.offsets[q + 1]
        query_scores = scores[lo:hi]
        tied_queries += len(np.unique(query_scores)) < hi - lo
        for i in range(4):
            by_rank = query_scores[np.argsort(ranks[lo:hi, i])]
            assert (np.diff(by_rank) <= 0).all(), (q, i)  # the best score first, ties next to each other
        if len(np.unique(query_scores)) == hi - lo:  # no tie: one ranking, the same in every draw
            expected = np.empty(hi - lo, dtype=np.int32)
            expected[np.argsort(-query_scores)] = np.arange(1, hi - lo + 1)
            assert (ranks[lo:hi] == expected[:, None]).all(), q
    assert tied_queries > 0  # a model of 4 small trees gives some documents of a query equal scores


@pytest.mark.parametrize("options, message", [
    (["--temperature", "0.5"], "--temperature is for sampled rankings: give --sample N with it (or leave out "
                               "--temperature for the scores)"),
    (["--seed", "3"], "--seed is for sampled rankings: give --sample N with it (or leave out --seed for the scores)"),
    (["--top-k", "5"], "--top-k is for sampled rankings: give --sample N with it (or leave out --top-k for the "
                       "scores)"),
    (["--sample", "0"], "argument --sample: expected a positive integer, got 0 (see plboost predict --help)"),
    (["--sample", "2.5"], "argument --sample: expected a positive integer, got '2.5' (see plboost predict --help)"),
    (["--sample", "2", "--temperature", "-1"], "argument --temperature: expected a finite number >= 0, got '-1' "
                                               "(see plboost predict --help)"),
    (["--sample", "2", "--temperature", "nan"], "argument --temperature: expected a finite number >= 0, got 'nan' "
                                                "(see plboost predict --help)"),
    (["--sample", "2", "--temperature", "inf"], "argument --temperature: expected a finite number >= 0, got 'inf' "
                                                "(see plboost predict --help)"),
    (["--sample", "2", "--seed", "-1"], "argument --seed: expected an integer in [0, 2**63), got '-1' (see plboost "
                                        "predict --help)"),
    (["--sample", "2", "--top-k", "0"], "argument --top-k: expected a positive integer, got 0 (see plboost predict "
                                        "--help)")])
def test_predict_sampling_options_are_refused_without_sample_or_out_of_range(files, tmp_path, capsys, options,
                                                                             message):
    """Each option of sampled rankings is refused in one line naming it, before the model is read (none is here)."""
    argv = ["predict", "--model", str(tmp_path / "absent.txt"), "--data", str(files["test"]), *options]
    try:
        status = main(argv)
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    assert capsys.readouterr().err == f"plboost predict: error: {message}\n"
    assert list(tmp_path.iterdir()) == []
