"""Configurations that train from a click log (``clicks=``): the specification, :func:`run` from a log, and
``compare`` and ``plboost train`` with ``--click-log``."""

import json
import re
from dataclasses import asdict, replace

import numpy as np
import pytest
from experiment_helpers import compare_cli, read_csv

from plboost.cli import main
from plboost.clicks import CLICK_TRAINING, ClickLogError, find_click_log, simulate_clicks
from plboost.clicks.log import holds_click_log
from plboost.data import make_synthetic, write_synthetic_splits
from plboost.data.layouts import find_layout
from plboost.experiment import RunSpec, compare, parse_run, run
from plboost.experiment.planning import run_provenance

ESTIMATE = {"gain": "estimate", "normalize": False}


def from_clicks(clicks, **options):
    if clicks == "displayed":
        return RunSpec(objective="lambdarank", clicks=clicks, rounds=4, num_leaves=7, **options)
    return RunSpec(objective="pl_rank3", objective_params=ESTIMATE, clicks=clicks, rounds=4, num_leaves=7, **options)


@pytest.fixture(scope="module")
def labelled():
    return [make_synthetic(n_queries=n, n_features=6, docs_per_query=(6, 12), seed=seed)
            for n, seed in ((50, 11), (20, 12), (20, 13))]


@pytest.fixture(scope="module")
def stochastic_log(labelled):
    train = labelled[0]
    return simulate_clicks(train, train.X[:, 0] + 0.3 * train.labels, n_impressions=2500, top_k=5, temperature=1.0,
                           seed=4)


# -- the specification ---------------------------------------------------------------------------------------
def test_a_run_from_clicks_says_so_in_its_label_and_key():
    spec = from_clicks("ips", examination="em")
    assert spec.label.endswith("on clicks (ips, EM examination)")
    assert len({from_clicks("ips").key, spec.key, replace(spec, clicks=None, examination="recorded").key}) == 3
    assert parse_run("pl_rank3,gain=estimate,normalize=false,clicks=affine", RunSpec()).clicks == "affine"


def test_a_run_on_labels_keeps_the_provenance_and_key_it_had_before_click_logs():
    spec = RunSpec(objective="lambdarank", rounds=7)
    shown = run_provenance(spec, {})["spec"]
    assert "clicks" not in shown and "examination" not in shown
    assert "clicks" in run_provenance(from_clicks("displayed"), {})["spec"]
    # a record written before the fields existed still makes the same configuration
    assert RunSpec(**{k: v for k, v in asdict(spec).items() if k not in ("clicks", "examination")}).key == spec.key


@pytest.mark.parametrize("settings, words", [
    (dict(objective="lambdarank", clicks="policy_aware"), "lambdarank cannot take"),
    (dict(objective="umart", clicks="naive"), "umart cannot take"),
    (dict(objective="pl_rank3", clicks="ips"), "which pl_rank3 takes with gain=estimate and normalize=false"),
    (dict(objective="lambdarank", examination="em"), "give clicks= too"),
    (dict(objective="pl_rank3", objective_params=ESTIMATE, clicks="affine", examination="em"), "affine' does not"),
    (dict(objective="lambdarank", clicks="displayed", examination="em"), "displayed' does not"),
    (dict(objective="pl_rank3", objective_params=ESTIMATE, clicks="doubly_robust", examination="em"),
     "doubly_robust' does not"),
    (dict(objective="pl_rank3", objective_params=ESTIMATE, clicks="clicks"), "clicks must be one of"),
    (dict(objective="pl_rank3", objective_params=ESTIMATE, clicks="ips", examination="EM"), "examination must be"),
])
def test_a_click_setting_the_run_cannot_train_with_is_refused_when_it_is_made(settings, words):
    with pytest.raises(ValueError, match=words):
        RunSpec(**settings)


# -- run ---------------------------------------------------------------------------------------------------------
@pytest.mark.engine
@pytest.mark.parametrize("clicks", CLICK_TRAINING)
def test_every_way_of_training_from_a_log_trains_and_is_scored_on_the_labels(clicks, labelled, stochastic_log):
    _, valid, test = labelled
    result = run(from_clicks(clicks), stochastic_log, valid, test)
    assert result.evaluated_on == "test" and result.model.trees_used == 4
    assert 0 < result.metrics["NDCG@10"] <= 1
    # ERR's scale is the labelled data's (labels 0-4 here), never the estimates'
    assert "g_max=4" in result.conventions


@pytest.mark.engine
def test_the_log_estimated_examination_trains_and_differs_from_the_recorded_one(labelled, stochastic_log):
    _, valid, test = labelled
    recorded = run(from_clicks("policy_aware"), stochastic_log, valid, test).model.predict(test.X)
    estimated = run(from_clicks("policy_aware", examination="em"), stochastic_log, valid, test).model.predict(test.X)
    assert not np.allclose(recorded, estimated)


def test_run_refuses_a_log_without_clicks_and_clicks_without_a_log(labelled, stochastic_log):
    train, valid, test = labelled
    with pytest.raises(ValueError, match="does not say how to train from it"):
        run(RunSpec(objective="lambdarank", rounds=2), stochastic_log, valid, test)
    with pytest.raises(ValueError, match="must be a plboost.clicks.ClickLog, got RankingData"):
        run(from_clicks("naive"), train, valid, test)
    with pytest.raises(ValueError, match="evaluated on labelled data"):
        run(from_clicks("naive"), stochastic_log)


@pytest.mark.engine
def test_run_refuses_a_log_of_other_features_and_puts_named_columns_in_order(labelled, stochastic_log):
    _, valid, test = labelled
    narrower = replace(test, X=test.X[:, :4], feature_names=None)
    with pytest.raises(ValueError, match="6 features, the test data 4"):
        run(from_clicks("naive"), stochastic_log, None, narrower)
    names = tuple(f"f{i}" for i in range(6))
    named = replace(stochastic_log, feature_names=names)
    turned = replace(named, X=named.X[:, ::-1], feature_names=names[::-1])
    table = replace(test, feature_names=names)
    same = [run(from_clicks("ips"), log, None, table).model.predict(test.X) for log in (named, turned)]
    np.testing.assert_array_equal(*same)
    with pytest.raises(ValueError, match="the click log's documents"):
        run(from_clicks("ips"), replace(named, feature_names=tuple("abcdef")), None, table)


# -- compare -----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def folds_with_logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("clicks")
    for fold in (1, 2):
        write_synthetic_splits(root / "data" / f"Fold{fold}", n_queries=(30, 10, 10), seed=40 + fold)
        assert main(["simulate-clicks", "--train", str(root / "data" / f"Fold{fold}" / "train.txt"), "--out",
                     str(root / "logs" / f"Fold{fold}"), "--impressions", "600", "--temperature", "1",
                     "--top-k", "5", "--logger-share", "0.2", "--logger-rounds", "5", "--seed", str(fold)]) == 0
    return root


CLICK_RUNS = ["pl_rank3,gain=estimate,normalize=false,clicks=policy_aware", "lambdarank,clicks=displayed",
              "lambdarank"]


@pytest.mark.engine
def test_compare_trains_from_each_splits_log_beside_a_run_on_labels_and_reuses_them(folds_with_logs, tmp_path):
    out = tmp_path / "out"
    args = [folds_with_logs / "data", "--click-log", folds_with_logs / "logs", "--out", out]
    for text in CLICK_RUNS:
        args += ["--run", text]
    assert compare_cli(*args) == 0
    rows = read_csv(out / "results.csv")
    assert len(rows) == 6
    labels = {row["configuration"] for row in rows}
    assert "pl_rank3(gain=estimate, normalize=False) [lightgbm] on clicks (policy_aware)" in labels
    assert "lambdarank [lightgbm] on clicks (displayed)" in labels and "lambdarank [lightgbm]" in labels
    records = sorted((out / "runs").glob("*/*.json"))
    clicked = [json.loads(path.read_text()) for path in records]
    assert sum("clicks" in record["provenance"]["data"] for record in clicked) == 4
    first = {path: path.stat().st_mtime_ns for path in records}
    assert compare_cli(*args) == 0  # everything reused
    assert {path: path.stat().st_mtime_ns for path in records} == first


@pytest.mark.engine
def test_a_changed_log_redoes_the_runs_from_clicks_and_not_those_on_labels(folds_with_logs, tmp_path):
    logs = tmp_path / "logs"
    for fold in (1, 2):
        (logs / f"Fold{fold}").mkdir(parents=True)
        for table in ("clicks", "documents"):
            source = folds_with_logs / "logs" / f"Fold{fold}" / f"{table}.parquet"
            (logs / f"Fold{fold}" / f"{table}.parquet").write_bytes(source.read_bytes())
    layout = find_layout(folds_with_logs / "data")
    specs = [parse_run(text, RunSpec(rounds=3, num_leaves=7)) for text in CLICK_RUNS]
    compare(specs, layout, out_dir=tmp_path / "out", click_log=logs)
    assert main(["simulate-clicks", "--train", str(folds_with_logs / "data" / "Fold1" / "train.txt"), "--out",
                 str(tmp_path / "other"), "--impressions", "300", "--logger-share", "0.2", "--seed", "9"]) == 0
    for table in ("clicks", "documents"):
        (logs / "Fold1" / f"{table}.parquet").write_bytes((tmp_path / "other" / f"{table}.parquet").read_bytes())
    again = compare(specs, layout, out_dir=tmp_path / "out", click_log=logs)
    assert again.runs == {"reuse": 4, "redo": 2}
    assert set(again.redo_reasons) == {"clicks file content", "documents file content"}


def test_compare_refuses_click_logs_that_do_not_fit_the_configurations(folds_with_logs, tmp_path):
    layout = find_layout(folds_with_logs / "data")
    on_labels = [RunSpec(objective="lambdarank", rounds=2)]
    with pytest.raises(ValueError, match="no configuration trains from it"):
        compare(on_labels, layout, click_log=folds_with_logs / "logs")
    with pytest.raises(ValueError, match="trains from a click log .clicks=naive.; give one"):
        compare([from_clicks("naive")], layout)
    with pytest.raises(ValueError, match="is one click log, for 2 splits"):
        compare([from_clicks("naive")], layout, click_log=folds_with_logs / "logs" / "Fold1")
    with pytest.raises(ClickLogError, match=r"missing: not a directory of click logs .one per split: .*Fold1"):
        compare([from_clicks("naive")], layout, click_log=tmp_path / "missing")
    (tmp_path / "Fold1").mkdir()
    with pytest.raises(ClickLogError, match=r"Fold1: no clicks.parquet or clicks.csv"):
        compare([from_clicks("naive")], layout, click_log=tmp_path)
    with pytest.raises(ClickLogError, match=r"Fold2: not a directory"):
        compare([from_clicks("naive")], layout, splits=["Fold2"], click_log=tmp_path)


def test_the_default_baseline_is_lambdarank_on_labels_beside_lambdarank_on_clicks():
    from plboost.experiment import choose_baseline

    specs = [from_clicks("displayed"), RunSpec(objective="lambdarank"), from_clicks("naive")]
    assert choose_baseline(specs) == "lambdarank [lightgbm]"
    assert choose_baseline(specs[:1]) == "lambdarank [lightgbm] on clicks (displayed)"


def test_find_click_log_refuses_a_table_in_two_formats(tmp_path):
    for name in ("clicks.parquet", "clicks.csv"):
        (tmp_path / name).write_text("")
    with pytest.raises(ClickLogError, match="clicks.parquet and clicks.csv are the same table in two formats"):
        find_click_log(tmp_path)
    (tmp_path / "clicks.csv").unlink()
    assert find_click_log(tmp_path) == (tmp_path / "clicks.parquet", None)
    assert holds_click_log(tmp_path) and not holds_click_log(tmp_path / "clicks.parquet")
    assert not holds_click_log(tmp_path / "missing")


# -- plboost train --click-log ---------------------------------------------------------------------------------
@pytest.mark.engine
def test_train_from_a_click_log_writes_what_it_read(folds_with_logs, tmp_path, capsys):
    data, log = folds_with_logs / "data" / "Fold1", folds_with_logs / "logs" / "Fold1"
    out = tmp_path / "result.json"
    assert main(["train", "--click-log", str(log), "--clicks", "ips", "--examination", "em", "--objective",
                 "pl_rank3", "--param", "gain=estimate", "--param", "normalize=false", "--valid",
                 str(data / "vali.txt"), "--test", str(data / "test.txt"), "--rounds", "3", "--quiet",
                 "--out", str(out)]) == 0
    assert "on clicks (ips, EM examination)" in capsys.readouterr().out
    written = json.loads(out.read_text())
    assert written["data"]["clicks"] == "ips" and written["data"]["click_log"][0].endswith("clicks.parquet")
    assert written["spec"]["clicks"] == "ips" and written["spec"]["examination"] == "em"


@pytest.mark.parametrize("args, words", [
    (["--click-log", "LOG", "--train", "DATA/train.txt", "--clicks", "naive"], "not both"),
    (["--click-log", "LOG"], "--click-log needs --clicks"),
    (["--train", "DATA/train.txt", "--clicks", "naive"], "--clicks is for training from a click log"),
    (["--train", "DATA/train.txt", "--examination", "em"], "--examination is for training from a click log"),
    ([], "give --train .labelled data. or --click-log"),
    (["--click-log", "LOG", "--clicks", "naive", "--dask-local", "2", "--test", "DATA/test.txt"], "on Dask"),
])
def test_train_refuses_click_options_that_do_not_go_together(args, words, folds_with_logs, capsys):
    paths = {"LOG": str(folds_with_logs / "logs" / "Fold1"), "DATA": str(folds_with_logs / "data" / "Fold1")}
    given = [paths.get(arg.split("/")[0], arg.split("/")[0]) + ("/" + arg.split("/", 1)[1] if "/" in arg else "")
             for arg in args]
    assert main(["train", *given, "--objective", "pl_rank3", "--param", "gain=estimate", "--param",
                 "normalize=false", "--rounds", "2", "--quiet"]) != 0
    assert re.search(words, capsys.readouterr().err)


@pytest.mark.engine
def test_listnet_trains_on_non_negative_estimates_and_refuses_negative_ones(labelled, stochastic_log):
    _, valid, test = labelled
    listnet = dict(objective="listnet", objective_params={"target": "estimate"}, rounds=4, num_leaves=7)
    result = run(RunSpec(clicks="policy_aware", **listnet), stochastic_log, valid, test)
    assert 0 < result.metrics["NDCG@10"] <= 1
    with pytest.raises(ValueError, match="ListNet.target='estimate'. takes non-negative relevance estimates"):
        run(RunSpec(clicks="affine", **listnet), stochastic_log, valid, test)


def test_train_refuses_an_out_that_is_a_table_of_the_click_log(folds_with_logs, capsys):
    log = folds_with_logs / "logs" / "Fold1"
    before = (log / "clicks.parquet").read_bytes()
    assert main(["train", "--click-log", str(log), "--clicks", "naive", "--objective", "pl_rank3", "--param",
                 "gain=estimate", "--param", "normalize=false", "--test",
                 str(folds_with_logs / "data" / "Fold1" / "test.txt"), "--out", str(log / "clicks.parquet"),
                 "--quiet"]) != 0
    assert "is the click log's clicks table, which this command reads" in capsys.readouterr().err
    assert (log / "clicks.parquet").read_bytes() == before


# -- the logging ranker as a row ---------------------------------------------------------------------------------
@pytest.mark.engine
def test_the_logger_row_scores_the_saved_logging_ranker_and_trains_nothing(folds_with_logs, tmp_path):
    from plboost import metrics
    from plboost.data import load_svmlight
    from plboost.engines import load_model

    layout = find_layout(folds_with_logs / "data")
    specs = [parse_run(text, RunSpec(rounds=3, num_leaves=7)) for text in ("lambdarank,clicks=logger", "lambdarank")]
    comparison = compare(specs, layout, out_dir=tmp_path / "out", click_log=folds_with_logs / "logs")
    rows = [r for r in comparison.results if r.label == "lambdarank [lightgbm]: the click log's logger"]
    assert [r.split for r in rows] == ["Fold1", "Fold2"]
    for row in rows:
        test = load_svmlight(folds_with_logs / "data" / row.split / "test.txt")
        logger = load_model(folds_with_logs / "logs" / row.split / "logger.txt")
        expected = metrics.ndcg(logger.predict(test.X), test.labels, offsets=test.offsets, k=10)
        assert row.metrics["NDCG@10"] == pytest.approx(expected, rel=1e-12)
        assert row.train_seconds == 0.0 and row.trees_used == 5  # --logger-rounds 5, as simulated
    records = [json.loads(path.read_text()) for path in (tmp_path / "out" / "runs").glob("*/*.json")]
    assert sum("logger" in record["provenance"]["data"] for record in records) == 2
    again = compare(specs, layout, out_dir=tmp_path / "out", click_log=folds_with_logs / "logs")
    assert again.runs == {"reuse": 4}


def test_the_logger_row_is_refused_where_it_cannot_be_the_logs_logger(folds_with_logs, labelled, tmp_path, capsys):
    from plboost.clicks import load_click_log

    log = load_click_log(*find_click_log(folds_with_logs / "logs" / "Fold1"))
    assert log.logging_model == folds_with_logs / "logs" / "Fold1" / "logger.txt"
    _, valid, test = labelled
    with pytest.raises(ValueError, match="the click log's logger is 'lambdarank' .objective., not 'pl_rank3'; give "
                                         "lambdarank@lightgbm,clicks=logger"):
        run(RunSpec(objective="pl_rank3", clicks="logger"), log, valid, test)
    with pytest.raises(ValueError, match="give only its objective and engine, not parameters"):
        RunSpec(objective="lambdarank", objective_params={"lambdarank_truncation_level": 5}, clicks="logger")
    with pytest.raises(ValueError, match=r"has no logging ranker's model \(logger.txt beside its clicks table"):
        run(RunSpec(objective="lambdarank", clicks="logger"), replace(log, logging_model=None), valid, test)
    with pytest.raises(ValueError, match="trains nothing"):
        from plboost.clicks import click_training_data
        click_training_data(log, "logger")
    simulate = ["simulate-clicks", "--train", str(folds_with_logs / "data" / "Fold1" / "train.txt"), "--out",
                str(tmp_path / "log"), "--impressions", "50", "--logger-share", "0.2", "--logger-rounds", "3"]
    assert main([*simulate, "--format", "csv"]) == 0
    (tmp_path / "log" / "clicks.csv").unlink()
    (tmp_path / "log" / "documents.csv").unlink()
    capsys.readouterr()
    assert main(simulate) == 2
    assert re.search(r"logger.txt exists already; give another directory", capsys.readouterr().err)


@pytest.mark.engine
def test_a_run_takes_regression_em_examination_from_a_deterministic_log(labelled):
    """``examination="em_features"`` trains where the per-document EM refuses the log (a deterministic logger)."""
    train, valid, test = labelled
    log = simulate_clicks(train, train.X[:, 0] + 0.3 * train.labels, n_impressions=2500, top_k=5, temperature=0.0,
                          seed=4)
    with pytest.raises(ValueError, match=r"shown at one rank only"):
        run(from_clicks("ips", examination="em"), log, valid, test)
    spec = from_clicks("ips", examination="em_features")
    assert spec.label.endswith("on clicks (ips, regression EM examination)")
    assert np.isfinite(run(spec, log, valid, test).model.predict(test.X)).all()
