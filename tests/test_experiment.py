"""The experiment driver: a run's metrics are the metrics module's on the model's predictions."""

import csv
import itertools
import json

from dataclasses import replace

import numpy as np
import pytest

from plboost import metrics
from plboost.data import make_synthetic
from plboost.experiment import Comparison, FoldResult, RunSpec, format_table, run


@pytest.fixture(scope="module")
def splits():
    return [make_synthetic(n_queries=n, seed=seed) for n, seed in ((80, 1), (30, 2), (30, 3))]


@pytest.mark.engine
@pytest.mark.parametrize("engine, objective, params", [
    ("lightgbm", "plrank", {"n_permutations": 2}), ("lightgbm", "rank_xendcg", {}),
    ("xgboost", "plrank", {"top_k": 5}), ("xgboost", "rank:pairwise", {}),
])
def test_run_reports_the_metrics_of_its_predictions(splits, engine, objective, params, tmp_path):
    train, valid, test = splits
    spec = RunSpec(objective=objective, objective_params=params, engine=engine, rounds=15, num_leaves=7,
                   eval_at=(1, 5), no_relevant="exclude", early_stopping=5)
    result = run(spec, train, valid, test)
    scores = result.model.predict(test.X)
    assert result.evaluated_on == "test"
    assert result.metrics["NDCG@5"] == metrics.ndcg(scores, test.labels, offsets=test.offsets, k=5,
                                                     no_relevant="exclude")
    assert result.metrics["ERR@1"] == metrics.err(scores, test.labels, offsets=test.offsets, k=1,
                                                   no_relevant="exclude")
    assert set(result.metrics) == {"NDCG@1", "NDCG@5", "ERR@1", "ERR@5", "ERR", "MAP"}
    assert "left out" in result.conventions
    result.save_json(tmp_path / "r.json")
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["metrics"] == result.metrics and saved["objective"] == objective
    assert saved["trees_used"] == result.model.trees_used <= 15


@pytest.mark.engine
def test_evaluation_falls_back_to_valid_then_train(splits):
    train, valid, _ = splits
    assert run(RunSpec(rounds=2), train, valid).evaluated_on == "valid"
    assert run(RunSpec(rounds=2), train).evaluated_on == "train"


@pytest.mark.parametrize("kwargs, message", [
    ({"eval_at": (0, 3)}, "eval_at"), ({"rounds": 0}, "rounds"), ({"learning_rate": 0}, "learning_rate"),
    ({"no_relevant": "skip"}, "no_relevant"),
])
def test_bad_specs_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RunSpec(**kwargs)


def test_format_table_aligns_columns():
    table = format_table([{"name": "a", "x": 0.123456}, {"name": "long name", "x": None}], ["name", "x"])
    lines = table.splitlines()
    assert lines[0] == "| name      | x      |"
    assert lines[2] == "| a         | 0.1235 |"
    assert lines[3] == "| long name |        |"
    assert len({len(line) for line in lines}) == 1


# --------------------------------------------------------------------------------------------------
# compare

from plboost.data import load_svmlight  # noqa: E402
from plboost.data.layouts import find_layout  # noqa: E402
from plboost.experiment import compare, load_config, parse_run, record_path_of  # noqa: E402


@pytest.fixture(scope="module")
def mq2008_comparison(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare")
    defaults = RunSpec(rounds=20, num_leaves=15, early_stopping=10)
    specs = [parse_run(text, defaults) for text in ("plrank,n_permutations=2", "lambdarank", "rank:ndcg@xgboost")]
    lines = []
    result = compare(specs, find_layout(shared_data / "MQ2008"), splits=["Fold1", "Fold2"], out_dir=out,
                     log=lines.append)
    return result, out, specs, lines


@pytest.mark.engine
def test_compare_table_equals_the_metrics_of_the_saved_predictions(mq2008_comparison, shared_data):
    result, out, specs, _ = mq2008_comparison
    assert len(result.results) == 6
    assert "(g_max=2)" in result.conventions and "g_max is the data's largest label" in result.header()
    tests = [load_svmlight(shared_data / "MQ2008" / fold / "test.txt.gz") for fold in ("Fold1", "Fold2")]
    n_queries = sum(t.n_queries for t in tests)
    without = sum(int(np.max(t.labels[a:b]) == 0) for t in tests for a, b in itertools.pairwise(t.offsets))
    assert 0 < without < n_queries
    assert (f"{n_queries} test queries, {without} ({without / n_queries:.0%}) of them without a relevant document "
            "(label >= 1), which count as 1 in NDCG and MAP, 0 in ERR") in result.header()
    summary = {row["configuration"]: row for row in result.summary()}
    for spec in specs:
        per_fold = []
        for fold in ("Fold1", "Fold2"):
            record = json.loads(record_path_of(out, spec, fold).read_text())
            scores = np.load(record["predictions"])
            test = load_svmlight(shared_data / "MQ2008" / fold / "test.txt.gz")
            values = metrics.evaluate(scores, test.labels, offsets=test.offsets, ndcg_at=(1, 3, 5, 10),
                                      err_at=(1, 3, 5, 10), g_max=2)  # ERR on the data's scale: MQ2008's 0-2
            assert record["metrics"]["NDCG@10"] == values["NDCG@10"]
            per_fold.append(values)
        for name in ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10", "ERR"):
            column = [v[name] for v in per_fold]
            assert summary[spec.label][name] == pytest.approx(np.mean(column), abs=1e-15)
            assert summary[spec.label][name + " std"] == pytest.approx(np.std(column, ddof=1), abs=1e-15)
            cell = f"{np.mean(column):.4f} ± {np.std(column, ddof=1):.4f}"
            assert cell in [line for line in result.table().splitlines() if spec.label in line][0]


@pytest.mark.engine
def test_compare_writes_csv_json_and_plot_and_resumes(mq2008_comparison, shared_data):
    result, out, specs, lines = mq2008_comparison
    written = result.save(out)
    with open(written["results.csv"]) as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {r["split"] for r in rows} == {"Fold1", "Fold2"}
    with open(written["summary.csv"]) as f:
        summary_rows = list(csv.DictReader(f))
    assert [r["configuration"] for r in summary_rows] == [s.label for s in specs]
    saved = json.loads(written["results.json"].read_text())
    assert saved["conventions"] == result.conventions and len(saved["results"]) == 6
    png = result.plot(out / "curves.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert all("reused" not in line for line in lines)

    again_lines = []
    again = compare(specs, find_layout(shared_data / "MQ2008"), splits=["Fold1", "Fold2"], out_dir=out,
                    log=again_lines.append)
    assert len(again_lines) == 6 and all("reused" in line for line in again_lines)
    assert again.table() == result.table() and again.runs == {"reuse": 6}
    changed = [RunSpec(rounds=21, num_leaves=15, early_stopping=10, objective="lambdarank")]
    recomputed = []
    redone = compare(changed, find_layout(shared_data / "MQ2008"), splits=["Fold1"], out_dir=out,
                     log=recomputed.append)
    # another configuration (its key differs): trained anew beside the first one's records, which stay and are
    # left out of its table, by name
    assert redone.runs == {"new": 1} and "NDCG@10" in recomputed[0]
    assert [r.label for r in redone.results].count("lambdarank [lightgbm]") == 1  # the new run only
    assert any("left out (lambdarank [lightgbm]: another protocol (rounds 20 (this table: 21)" in line
               for line in recomputed)
    assert record_path_of(out, specs[0], "Fold1").is_file() and record_path_of(out, changed[0], "Fold1").is_file()


def test_compare_refuses_bad_input(shared_data):
    layout = find_layout(shared_data / "MQ2008")
    with pytest.raises(ValueError, match="unknown splits"):
        compare([RunSpec()], layout, splits=["Fold9"])
    with pytest.raises(ValueError, match="unknown objective 'plrnak'"):
        compare([parse_run("plrnak", RunSpec())], layout)
    with pytest.raises(ValueError, match=r"configuration #2 \(plrank \[lightgbm\]\) is configuration #1"):
        compare([RunSpec(), RunSpec()], layout)
    with pytest.raises(ValueError, match="same label"):  # two configurations a table could not tell apart
        compare([RunSpec(), RunSpec(rounds=50)], layout)
    with pytest.raises(ValueError, match="same evaluation conventions"):
        compare([RunSpec(), RunSpec(objective="lambdarank", no_relevant="zero")], layout)


def test_run_specs_from_text_and_toml(tmp_path):
    defaults = RunSpec(rounds=50)
    spec = parse_run("umart@xgboost,window=3,sigmoid=1.5,preset=paper,lambdarank_norm=false", defaults)
    assert (spec.objective, spec.engine, spec.rounds) == ("umart", "xgboost", 50)
    assert spec.objective_params == {"window": 3, "sigmoid": 1.5, "preset": "paper", "lambdarank_norm": False}
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        parse_run("plrank,top_k", defaults)
    config = tmp_path / "runs.toml"
    config.write_text('[defaults]\nrounds = 7\nearly_stopping = 3\n\n[[run]]\nobjective = "plrank"\n'
                      'params = { n_permutations = 3 }\n\n[[run]]\nobjective = "rank:ndcg"\nengine = "xgboost"\n'
                      'num_leaves = 15\n')
    first, second = load_config(config, defaults)
    assert (first.rounds, first.early_stopping, first.objective_params) == (7, 3, {"n_permutations": 3})
    assert (second.engine, second.num_leaves, second.rounds) == ("xgboost", 15, 7)
    config.write_text('[[run]]\nobjective = "plrank"\nleaves = 3\n')
    with pytest.raises(ValueError, match=r"\[\[run\]\] #1: unknown keys \['leaves'\]"):
        load_config(config, defaults)
    config.write_text('[defaults]\nrounds = 7\n')
    with pytest.raises(ValueError, match="no \\[\\[run\\]\\] tables"):
        load_config(config, defaults)


# --------------------------------------------------------------------------------------------------
# provenance: a record is reused only when everything that decides its result is the same

from plboost.cli import main  # noqa: E402
from plboost.data import write_synthetic_splits  # noqa: E402
from plboost.experiment import RecordWarning  # noqa: E402


def _folds(directory, seed, n_folds=2):
    for fold in range(1, n_folds + 1):
        write_synthetic_splits(directory / f"Fold{fold}", n_queries=(30, 10, 10), seed=seed * 10 + fold)
    return directory


@pytest.fixture(scope="module")
def two_datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasets")
    return _folds(root / "alpha", 1), _folds(root / "beta", 2)


def _cli_spec(text):
    """The configuration that _compare trains for ``--run text``."""
    return parse_run(text, RunSpec(rounds=3, num_leaves=7))


def _compare(*args):
    return main(["compare", *map(str, args), "--rounds", "3", "--num-leaves", "7", "--quiet"])


def _csv(path):
    return list(csv.DictReader(open(path)))


@pytest.mark.engine
def test_another_dataset_in_the_same_out_directory_reuses_nothing(two_datasets, tmp_path, capsys):
    alpha, beta = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    capsys.readouterr()
    assert _compare(beta, "--run", "plrank", "--out", out) == 0
    captured = capsys.readouterr()
    assert "2 run(s): 0 reused from records, 2 redone" in captured.err
    assert "train file content (2)" in captured.err and "test file content (2)" in captured.err
    rows = _csv(out / "results.csv")
    assert {row["dataset"] for row in rows} == {"beta"} and len(rows) == 2
    record = json.loads(record_path_of(out, _cli_spec("plrank"), "Fold1").read_text())
    assert str(beta / "Fold1" / "test.txt") == record["provenance"]["data"]["test"]["path"]
    # the test metrics are those of beta's test file
    test = load_svmlight(beta / "Fold1" / "test.txt")
    scores = np.load(record["predictions"])
    assert metrics.ndcg(scores, test.labels, offsets=test.offsets, k=10) == record["metrics"]["NDCG@10"]


@pytest.mark.engine
def test_a_file_edited_in_place_is_not_reused(two_datasets, tmp_path, capsys):
    import os
    import shutil

    data = shutil.copytree(two_datasets[0], tmp_path / "alpha")
    out = tmp_path / "R"
    assert _compare(data, "--run", "plrank", "--out", out) == 0
    test = data / "Fold2" / "test.txt"
    status = test.stat()
    lines = test.read_text().splitlines(keepends=True)
    first = lines[0].split(" ", 1)
    lines[0] = ("1" if first[0] == "0" else "0") + " " + first[1]  # one label changed, same size
    test.write_text("".join(lines))
    os.utime(test, ns=(status.st_atime_ns, status.st_mtime_ns))  # and its modification time restored
    capsys.readouterr()
    assert _compare(data, "--run", "plrank", "--out", out) == 0
    assert "1 reused from records, 1 redone, 0 new (redone because: test file content (1))" in capsys.readouterr().err


@pytest.mark.engine
def test_a_table_holds_only_runs_of_its_own_protocol(two_datasets, tmp_path, capsys):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    # in the same --out, under three other protocols: other rounds, learning rate and tuning budget
    assert main(["compare", str(alpha), "--run", "urank", "--rounds", "2", "--num-leaves", "7", "--out", str(out),
                 "--quiet"]) == 0
    assert _compare(alpha, "--run", "listnet", "--learning-rate", "0.3", "--out", out) == 0
    assert _compare(alpha, "--run", "umart", "--tune", "2", "--out", out) == 0
    # and under the same protocol: it joins
    assert _compare(alpha, "--run", "regression", "--out", out) == 0
    capsys.readouterr()
    assert _compare(alpha, "--run", "plrank", "--run", "lambdarank", "--out", out) == 0
    captured = capsys.readouterr()
    in_table = {"plrank [lightgbm]", "lambdarank [lightgbm]", "regression [lightgbm]"}
    assert {row["configuration"] for row in _csv(out / "significance.csv")} == in_table - {"lambdarank [lightgbm]"}
    for name in ("results.csv", "summary.csv", "per_query.csv"):
        assert {row["configuration"] for row in _csv(out / name)} == in_table
    # each one left out is named in the header, with what differs
    assert "protocol: 3 rounds, learning rate 0.1, 7 leaves, no early stopping, seed 0, 1 repeat" in captured.out
    assert "urank [lightgbm]: another protocol (rounds 2 (this table: 3))" in captured.out
    assert "listnet [lightgbm]: another protocol (learning rate 0.3 (this table: 0.1))" in captured.out
    assert "umart [lightgbm]: another protocol (tuning n trials 2, seed 0" in captured.out
    assert "under the same protocol: regression [lightgbm]" in captured.out
    # a changed setting is another configuration: trained beside the first one's records, which stay
    assert main(["compare", str(alpha), "--run", "plrank", "--rounds", "2", "--num-leaves", "7", "--out", str(out),
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "2 run(s): 0 reused from records, 0 redone, 2 new" in captured.err
    assert "urank [lightgbm]" in _csv(out / "summary.csv")[-1]["configuration"]  # the 2-round run joins this one
    assert "plrank [lightgbm]: another protocol (rounds 3 (this table: 2))" in captured.out
    first = json.loads(record_path_of(out, _cli_spec("plrank"), "Fold1").read_text())
    assert first["provenance"]["spec"]["rounds"] == 3 and first["protocol"]["rounds"] == 3


@pytest.mark.engine
def test_a_configurations_own_setting_is_not_its_protocol(two_datasets, tmp_path):
    alpha, _ = two_datasets
    layout, out = find_layout(alpha), tmp_path / "R"
    slow = replace(_cli_spec("listnet"), learning_rate=0.05)
    compare([_cli_spec("plrank"), _cli_spec("lambdarank"), slow], layout, out_dir=out)
    # the protocol's learning rate is now 0.2, but listnet's 0.05 was its own: it joins; plrank's was not
    later = compare([replace(_cli_spec("urank"), learning_rate=0.2)], layout, out_dir=out)
    assert later.protocol["learning_rate"] == 0.2 and later.earlier == [slow.label]
    assert [line.split(":")[0] for line in later.left_out] == ["lambdarank [lightgbm]", "plrank [lightgbm]"]
    twice = compare([_cli_spec("urank")], layout, out_dir=out, repeats=2)
    assert twice.earlier == []
    assert {line.split(":")[0] for line in twice.left_out if "repeats 1 (this table: 2)" in line} == {
        "plrank [lightgbm]", "lambdarank [lightgbm]", slow.label}


@pytest.mark.engine
@pytest.mark.parametrize("damage", ["", '{"label": "plrank [lightgbm]", "metr'])
def test_an_empty_or_truncated_record_is_named_and_recomputed(two_datasets, tmp_path, capsys, damage):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    path = record_path_of(out, _cli_spec("plrank"), "Fold2")
    before = json.loads(path.read_text())
    path.write_text(damage)
    capsys.readouterr()
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    err = capsys.readouterr().err
    assert f"warning: {path}: the run record is" in err and "the run is recomputed" in err
    assert "1 reused from records, 1 redone, 0 new (redone because: unreadable record (1))" in err
    assert json.loads(path.read_text())["metrics"] == before["metrics"]  # the same run, recomputed
    with pytest.warns(RecordWarning, match=str(path)):
        path.write_text(damage)
        compare([RunSpec(rounds=3, num_leaves=7)], find_layout(alpha), out_dir=out)


def _edit_record(path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record))


def _without_provenance_spec(record):
    del record["provenance"]["spec"]


def _short_per_query(record):
    record["per_query"]["NDCG@10"] = record["per_query"]["NDCG@10"][:-1]


DAMAGES = {
    "no conventions": (lambda record: record.pop("conventions"), "no 'conventions' text"),
    "metrics garbage": (lambda record: record.update(metrics="garbage"), "'metrics' is not a table of numbers"),
    "no provenance.spec": (_without_provenance_spec, "no configuration ('provenance.spec')"),
    "a metric as text": (lambda record: record["metrics"].update({"NDCG@10": "0.5"}),
                         "'metrics' is not a table of numbers"),
    "per_query cut": (_short_per_query, "'per_query' does not hold one number per query (10) for each metric"),
    "old format": (lambda record: record.update(format=1), "format 1, where this plboost writes 2"),
}


@pytest.mark.engine
@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_record_is_named_in_one_warning_and_recomputed(two_datasets, tmp_path, capsys, damage):
    """Records edited by hand or cut by another program: one warning line naming the file, never a traceback."""
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    path = record_path_of(out, _cli_spec("plrank"), "Fold2")
    edit, problem = DAMAGES[damage]
    _edit_record(path, edit)
    capsys.readouterr()
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    warnings_ = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings_ == [f"plboost compare: warning: {path}: a damaged run record ({problem}); the run is "
                         "recomputed"], warnings_
    assert json.loads(path.read_text())["format"] == 2 and "conventions" in json.loads(path.read_text())


@pytest.mark.engine
@pytest.mark.parametrize("damage", ["metrics garbage", "no provenance.spec", "no conventions"])
def test_a_damaged_record_of_a_configuration_not_asked_for_is_left_out_with_a_warning(two_datasets, tmp_path, capsys,
                                                                                      damage):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--run", "lambdarank", "--out", out) == 0
    path = record_path_of(out, _cli_spec("lambdarank"), "Fold1")
    _edit_record(path, DAMAGES[damage][0])
    capsys.readouterr()
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    captured = capsys.readouterr()
    warnings_ = [line for line in captured.err.splitlines() if "warning" in line]
    assert warnings_ == [f"plboost compare: warning: {path}: a damaged run record ({DAMAGES[damage][1]}); left out",
                         f"plboost compare: warning: lambdarank [lightgbm]: recorded earlier in {out} without a usable "
                         "record on Fold1; left out"]
    assert "lambdarank [lightgbm]" not in captured.out  # its intact Fold2 record alone would pair other queries


@pytest.mark.engine
def test_an_earlier_record_whose_configuration_is_now_refused_is_left_out(two_datasets, tmp_path, capsys):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--run", "urank", "--out", out) == 0
    for split in ("Fold1", "Fold2"):
        _edit_record(record_path_of(out, _cli_spec("urank"), split),
                     lambda record: record["provenance"]["spec"].update(engine_params={"objective": "regression"}))
    capsys.readouterr()
    assert _compare(alpha, "--run", "plrank", "--out", out) == 0
    captured = capsys.readouterr()
    assert captured.err.count("the recorded configuration cannot be used (engine parameter objective='regression'") == 2
    assert "urank" not in captured.out


def test_records_are_written_atomically(tmp_path, monkeypatch):
    from plboost import records

    path = tmp_path / "runs" / "x" / "Fold1.json"
    records.write_json_atomic(path, {"label": "x", "metrics": {"NDCG@10": 0.5}})
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(records.os, "fsync", fail)
    with pytest.raises(OSError, match="No space left"):
        records.write_json_atomic(path, {"label": "x", "metrics": {"NDCG@10": 0.9}})
    assert json.loads(path.read_text())["metrics"] == {"NDCG@10": 0.5}  # the old record, whole
    assert [p.name for p in path.parent.iterdir()] == ["Fold1.json"]  # no temporary file left behind


@pytest.mark.engine
def test_repeats_shift_the_seeds_and_report_both_spreads(two_datasets, tmp_path):
    alpha, _ = two_datasets
    defaults = RunSpec(rounds=4, num_leaves=7, engine_params={"bagging_fraction": 0.7, "bagging_freq": 1})
    specs = [parse_run("plrank", defaults), parse_run("lambdarank", defaults)]
    result = compare(specs, find_layout(alpha), repeats=3, out_dir=tmp_path)
    assert len(result.results) == 2 * 2 * 3 and result.repeats == 3
    plrank = [r for r in result.results if r.label == "plrank [lightgbm]" and r.split == "Fold1"]
    assert len({tuple(np.load(r.predictions)) for r in plrank}) == 3  # three seeds, three models
    records = [json.loads(record_path_of(tmp_path, specs[0], "Fold1", r).read_text()) for r in range(3)]
    assert [r["objective_params"]["seed"] for r in records] == [0, 1, 2]
    assert [r["engine_params"]["seed"] for r in records] == [0, 1, 2]
    row = next(row for row in result.summary() if row["configuration"] == "plrank [lightgbm]")
    by_split = {split: [r.metrics["NDCG@10"] for r in result.results
                        if r.label == "plrank [lightgbm]" and r.split == split] for split in ("Fold1", "Fold2")}
    assert row["NDCG@10"] == pytest.approx(np.mean([np.mean(v) for v in by_split.values()]))
    assert row["NDCG@10 std"] == pytest.approx(np.std([np.mean(v) for v in by_split.values()], ddof=1))
    assert row["NDCG@10 seed std"] == pytest.approx(np.mean([np.std(v, ddof=1) for v in by_split.values()]))
    assert f"{row['NDCG@10']:.4f} ± {row['NDCG@10 std']:.4f} / {row['NDCG@10 seed std']:.4f}" in result.table()
    assert "x 3 repeats" in result.header() and "std over 3 seeds" in result.header()


# --------------------------------------------------------------------------------------------------
# per-query results and significance

@pytest.mark.engine
def test_per_query_and_significance_files_agree_with_scipy(two_datasets, tmp_path, capsys):
    import pandas as pd
    from scipy import stats

    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--run", "urank", "--run", "lambdarank", "--repeats", "2",
                    "--out", out) == 0
    printed = capsys.readouterr().out
    assert "significantly better/worse than lambdarank [lightgbm]" in printed
    per_query = pd.read_csv(out / "per_query.csv")
    assert list(per_query.columns) == ["dataset", "split", "configuration", "repeat", "qid", "metric", "value"]
    results = pd.read_csv(out / "results.csv")
    metric_names = [c for c in results.columns if c.startswith(("NDCG", "ERR", "MAP"))]
    assert set(per_query["metric"]) == set(metric_names)
    for _, row in results.iterrows():  # each run's metric is the mean of its queries
        mine = per_query[(per_query["configuration"] == row["configuration"]) & (per_query["split"] == row["split"])
                         & (per_query["repeat"] == row["repeat"])]
        for name in metric_names:
            assert mine[mine["metric"] == name]["value"].mean() == pytest.approx(row[name], abs=1e-12)
    significance = pd.read_csv(out / "significance.csv")
    assert list(significance.columns) == ["dataset", "configuration", "baseline", "metric", "n_queries",
                                          "mean_difference", "interval_low", "interval_high", "p_value", "p_adjusted",
                                          "test"]
    assert (significance.interval_low <= significance.mean_difference).all()
    assert (significance.mean_difference <= significance.interval_high).all()
    assert "Differences from lambdarank [lightgbm]:" in printed and "resampling queries and repeats" in printed
    means = per_query.groupby(["configuration", "metric", "split", "qid"])["value"].mean()
    t_tests = significance[significance["test"] == "t-test"]
    assert len(t_tests) == 2 * 6  # plrank and urank against lambdarank, the table's six metrics
    for item in t_tests.itertuples():
        ours, base = means[item.configuration, item.metric], means["lambdarank [lightgbm]", item.metric]
        ours, base = ours.align(base)
        expected = stats.ttest_rel(ours, base)
        assert item.n_queries == len(ours) == 20
        assert item.mean_difference == pytest.approx(float((ours - base).mean()), abs=1e-12)
        if np.all(ours.to_numpy() == base.to_numpy()):
            assert item.p_value == 1.0
        else:
            assert item.p_value == pytest.approx(expected.pvalue, abs=1e-9)


@pytest.mark.engine
def test_kernels_are_warmed_before_the_timed_runs_and_reported_apart(two_datasets, monkeypatch):
    from plboost.experiment import running

    alpha, _ = two_datasets
    monkeypatch.setattr(running, "_WARMED", set())  # as in a new process
    specs = [_cli_spec("plrank,leaf_values=exact"), _cli_spec("umart")]
    first = compare(specs, find_layout(alpha))
    assert list(first.warm_up_seconds) == [spec.label for spec in specs]
    assert "seconds: training time only; compiling or loading kernels before the first run took" in first.header()
    again = compare(specs, find_layout(alpha))  # warm already: nothing to report
    assert again.warm_up_seconds == {} and "compiling" not in again.header()


@pytest.mark.engine
def test_holm_over_the_table_is_one_family_named_in_the_legend(two_datasets, tmp_path, capsys):
    from plboost.significance import holm

    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank", "--run", "urank", "--run", "lambdarank", "--out", out,
                    "--holm-over", "table") == 0
    printed = capsys.readouterr().out
    assert "the family: every configuration and metric of the table together (12 tests)" in printed
    t_tests = _csv_frame(out / "significance.csv").query("test == 't-test'")
    assert len(t_tests) == 12
    np.testing.assert_allclose(t_tests.p_adjusted, holm(t_tests.p_value))
    assert _compare(alpha, "--run", "plrank", "--run", "urank", "--run", "lambdarank") == 0
    assert "the family: the configurations compared with lambdarank [lightgbm], for each metric separately (2 tests)" \
        in capsys.readouterr().out


def _csv_frame(path):
    import pandas as pd

    return pd.read_csv(path)


@pytest.mark.engine
def test_identical_configurations_are_not_significantly_different(two_datasets):
    """The same runs under two names (compare itself refuses a configuration given twice)."""
    from plboost.experiment import Comparison

    alpha, _ = two_datasets
    once = compare([RunSpec(rounds=3, num_leaves=7)], find_layout(alpha))
    other = RunSpec(rounds=3, num_leaves=7, objective_params={"n_permutations": 2})  # only its name is used
    twin = [replace(r, label=other.label) for r in once.results]
    both = Comparison(once.dataset, [*once.specs, other], once.results + twin, once.conventions)
    significance = both.significance("plrank [lightgbm]")
    assert len(significance) and (significance["p_value"] == 1.0).all() and (significance["p_adjusted"] == 1.0).all()
    assert "▲" not in both.table(significance=significance) and "▼" not in both.table(significance=significance)


@pytest.mark.engine
def test_a_trained_model_beats_a_random_scorer_significantly():
    from plboost.experiment import Comparison, FoldResult, evaluate_scores

    train, test = make_synthetic(n_queries=150, seed=11), make_synthetic(n_queries=150, seed=12)
    spec = RunSpec(rounds=30, num_leaves=15)
    trained = run(spec, train, test=test).model.predict(test.X)
    random_scores = np.random.default_rng(0).normal(size=test.n_docs)
    folds = []
    for label, scores in (("trained [lightgbm]", trained), ("random [lightgbm]", random_scores)):
        values, conventions = evaluate_scores(scores, test, spec)
        per_query, _ = evaluate_scores(scores, test, spec, per_query=True)
        folds.append(FoldResult(label, "all", values, 0.0, 30, [], qids=test.qids.tolist(),
                                per_query={k: v.tolist() for k, v in per_query.items()}))
    comparison = Comparison("synthetic", [RunSpec(objective="trained"), RunSpec(objective="random")], folds,
                            conventions)
    significance = comparison.significance("random [lightgbm]")
    ndcg = significance[(significance["metric"] == "NDCG@10")].set_index("test")
    assert (ndcg["mean_difference"] > 0.1).all() and (ndcg["p_adjusted"] < 1e-3).all()
    assert "▲" in comparison.table(significance=significance)


# --------------------------------------------------------------------------------------------------
# one rule each: KEY=VALUE text, leaf_values

@pytest.mark.parametrize("text, value", [
    ("label_gain=[1,3,7]", [1, 3, 7]), ("lambdarank_norm=false", False), ("lambdarank_norm=True", True),
    ("top_k=None", None), ("top_k=null", None), ("top_k=10", 10), ("sigmoid=1.5", 1.5), ("sigmoid=1e-3", 0.001),
    ("sigmoid=inf", float("inf")), ("preset=paper", "paper"), ("preset='paper'", "paper"), ("window=010", 10),
    ("skip_uniform_queries=no", "no"),
])
def test_command_line_and_run_specs_read_key_value_text_alike(text, value):
    from plboost.cli import build_parser, parse_assignment

    key, _ = text.split("=", 1)
    assert parse_assignment(text) == (key, value)
    args = build_parser().parse_args(["train", "--train", "x", "--param", text, "--engine-param", text])
    assert dict(args.param) == dict(args.engine_param) == {key: value}
    # an XGBoost objective's parameters go to XGBoost unchecked: exactly as parsed
    spec = parse_run(f"rank:ndcg@xgboost,{text},n_permutations=2", RunSpec())
    assert spec.objective_params == {key: value, "n_permutations": 2}


def test_label_gain_lists_reach_the_objective_from_every_entry_point():
    from plboost.cli import build_parser

    spec = parse_run("umart,label_gain=[1,3,7],window=2", RunSpec())
    assert spec.objective_params == {"label_gain": [1, 3, 7], "window": 2}
    args = build_parser().parse_args(["train", "--train", "x", "--objective", "umart", "--param", "label_gain=[1,3,7]",
                                      "--param", "window=2"])
    assert dict(args.param) == spec.objective_params
    assert parse_run("lambdarank,label_gain=[0, 1, 3]", RunSpec()).objective_params == {"label_gain": [0, 1, 3]}


def _cli_error(argv, capsys) -> str:
    from plboost.cli import main

    assert main(argv) == 2
    return capsys.readouterr().err.strip().split(": error: ", 1)[1]


@pytest.mark.parametrize("engine, objective, expected", [
    ("xgboost", "plrank", "leaf_values='exact' is for LightGBM only"),
    ("lightgbm", "umart", "exact leaf values are defined for PLRank (the paper's Eqn. 9), not umart"),
])
def test_leaf_values_are_refused_with_one_message_everywhere(splits, tmp_path, capsys, engine, objective, expected):
    from plboost._params import check_leaf_values
    from plboost.engines import resolve_objective, train

    with pytest.raises(ValueError) as raised:
        check_leaf_values("exact", engine, objective)
    message = str(raised.value)
    assert message.startswith(expected)
    with pytest.raises(ValueError) as raised:
        RunSpec(objective=objective, engine=engine, leaf_values="exact")
    assert str(raised.value) == message
    with pytest.raises(ValueError) as raised:
        parse_run(f"{objective}@{engine},leaf_values=exact", RunSpec())
    assert str(raised.value) == message
    instance, _ = resolve_objective(objective, engine)
    with pytest.raises(ValueError) as raised:
        train(engine, instance, splits[0], rounds=1, leaf_values="exact")
    assert str(raised.value) == message
    path = splits[0].save_svmlight(tmp_path / "train.txt")
    common = ["--engine", engine, "--leaf-values", "exact", "--quiet"]
    assert _cli_error(["train", "--train", str(path), "--objective", objective, *common], capsys) == message
    assert _cli_error(["compare", str(tmp_path), "--run", objective, *common], capsys) == message


def test_leaf_values_on_dask_and_bad_names_are_refused_alike(splits):
    from plboost._params import check_leaf_values
    from plboost.engines import train
    from plboost.experiment import run_dask
    from plboost.objectives import PLRank

    with pytest.raises(ValueError, match="not available on Dask"):
        run_dask(RunSpec(leaf_values="exact"), client=None, train_sources=["unused.txt"])
    with pytest.raises(ValueError) as raised:
        check_leaf_values("newton", "lightgbm")
    for entry in (lambda: RunSpec(leaf_values="newton"),
                  lambda: train("lightgbm", PLRank(), splits[0], rounds=1, leaf_values="newton"),
                  lambda: train("xgboost", PLRank(), splits[0], rounds=1, leaf_values="newton")):
        with pytest.raises(ValueError) as again:
            entry()
        assert str(again.value) == str(raised.value) == "leaf_values must be 'diagonal' or 'exact', got 'newton'"


def test_baselines_keep_the_engines_leaf_values_and_are_added_once():
    from plboost.experiment import with_baselines

    defaults = RunSpec(leaf_values="exact", rounds=7)
    specs = with_baselines([parse_run("plrank", defaults), parse_run("rank:ndcg@xgboost", RunSpec())], defaults)
    assert [s.label for s in specs] == ["plrank [lightgbm, exact leaves]", "rank:ndcg [xgboost]",
                                        "lambdarank [lightgbm]", "rank_xendcg [lightgbm]", "regression [lightgbm]",
                                        "rank:pairwise [xgboost]"]
    assert all(s.rounds == 7 for s in specs[2:])


def test_datasets_get_one_output_directory_each(tmp_path):
    from types import SimpleNamespace

    from plboost.experiment import dataset_outputs

    layouts = [SimpleNamespace(directory=tmp_path / name) for name in ("a", "b")]
    assert dataset_outputs(layouts, tmp_path / "out") == [("a", tmp_path / "out" / "a"), ("b", tmp_path / "out" / "b")]
    assert dataset_outputs(layouts[:1], tmp_path / "out") == [("a", tmp_path / "out")]
    assert dataset_outputs(layouts) == [("a", None), ("b", None)]
    with pytest.raises(ValueError, match="same directory name"):
        dataset_outputs([layouts[0], SimpleNamespace(directory=tmp_path / "x" / "a")])


def test_optional_dependencies_name_how_to_install_them(monkeypatch):
    import sys

    from plboost._params import MissingExtra
    from plboost.cli import failure_message
    from plboost.experiment import dask_client, plotting

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(MissingExtra) as raised, dask_client(n_workers=1):
        pass
    assert str(raised.value) == "training on Dask needs distributed: pip install 'plboost[dask]'"
    assert failure_message(raised.value) == str(raised.value)
    with pytest.raises(ImportError, match=r"plotting needs matplotlib: pip install 'plboost\[plot\]'"):
        plotting()


def test_validation_curves_hold_a_stopped_run_at_its_best_value():
    spec = RunSpec()
    runs = [FoldResult(spec.label, "Fold1", {}, 0.0, 2, [0.5, 0.6, 0.55]),
            FoldResult(spec.label, "Fold2", {}, 0.0, 5, [0.4, 0.5, 0.6, 0.7, 0.8])]
    mean, ends = Comparison("d", [spec], runs, "").validation_curves()[spec.label]
    # Fold1 stopped after round 3 and keeps its best model (0.6): no jump to Fold2's 0.8 once it is alone
    np.testing.assert_allclose(mean, [0.45, 0.55, 0.575, 0.65, 0.7])
    assert ends.tolist() == [3]


def test_plots_leave_matplotlib_global_state_alone(tmp_path):
    import subprocess
    import sys

    script = f"""
import sys, matplotlib
def refuse(*args, **kwargs):
    raise AssertionError("matplotlib.use called")
matplotlib.use = refuse
import plboost.cli, plboost.experiment, plboost.winning
assert not any(m.startswith(("matplotlib.pyplot", "dask", "distributed")) for m in sys.modules)
from plboost.experiment import Comparison, FoldResult, RunSpec
folds = [FoldResult("plrank [lightgbm]", "Fold1", {{}}, 0.0, 3, [0.1, 0.2, 0.3])]
Comparison("data", [RunSpec()], folds, "").plot({str(tmp_path / "curves.png")!r})
assert "matplotlib.pyplot" not in sys.modules
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------------------------------
# identity: a configuration is its key, computed from what it trains (issue 25)

def test_a_default_given_parameter_order_and_list_or_tuple_do_not_make_another_configuration():
    defaults = RunSpec()
    assert parse_run("plrank", defaults).key == parse_run("plrank,top_k=10", defaults).key  # 10 is the default
    assert (parse_run("plrank,top_k=5,n_permutations=3", defaults).key
            == parse_run("plrank,n_permutations=3,top_k=5", defaults).key)
    assert (parse_run("umart,label_gain=[0,1,3]", defaults).key
            == parse_run("umart,label_gain=(0,1,3)", defaults).key)
    assert (RunSpec(engine_params={"min_child_samples": 5}).key
            == RunSpec(engine_params={"min_data_in_leaf": 5}).key)  # LightGBM's alias table
    # and what does change the training changes the key
    assert len({RunSpec().key, RunSpec(rounds=99).key, RunSpec(seed=1).key, RunSpec(engine="xgboost").key,
                RunSpec(objective_params={"top_k": 5}).key, RunSpec(engine_params={"min_data_in_leaf": 5}).key,
                RunSpec(leaf_values="exact").key}) == 7
    assert RunSpec(repeat=2).key == RunSpec().key  # a repeat is a run of the configuration, not another one


def test_a_built_in_objectives_parameter_at_the_engines_default_does_not_make_another_configuration():
    defaults = RunSpec()
    lambdarank = parse_run("lambdarank", defaults).key
    # the defaults are read from the engines themselves: LightGBM's truncation level 30 and norm on, XGBoost's
    # top-k pairs and exponential gain
    assert parse_run("lambdarank,lambdarank_truncation_level=30,lambdarank_norm=true", defaults).key == lambdarank
    assert parse_run("lambdarank,lambdarank_truncation_level=20", defaults).key != lambdarank
    assert parse_run("lambdarank,lambdarank_norm=false", defaults).key != lambdarank
    assert (parse_run("rank:ndcg@xgboost,lambdarank_pair_method=topk,ndcg_exp_gain=true", defaults).key
            == parse_run("rank:ndcg@xgboost", defaults).key)
    assert parse_run("rank:ndcg@xgboost,lambdarank_pair_method=mean", defaults).key != parse_run(
        "rank:ndcg@xgboost", defaults).key


def test_labels_show_the_parameters_in_one_order_and_lists_alike():
    defaults = RunSpec()
    assert (parse_run("plrank,n_permutations=3,top_k=5", defaults).label
            == parse_run("plrank,top_k=5,n_permutations=3", defaults).label == "plrank(top_k=5, n_permutations=3) "
                                                                                "[lightgbm]")
    assert parse_run("umart,label_gain=(0,1,3)", defaults).label == "umart(label_gain=[0, 1, 3]) [lightgbm]"


def test_a_configuration_given_twice_is_refused_naming_the_first(two_datasets, capsys):
    alpha, _ = two_datasets
    assert _compare(alpha, "--run", "urank", "--run", "plrank", "--run", "plrank,top_k=10") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["plboost compare: error: configuration #3 (plrank(top_k=10) [lightgbm]) is configuration #2 "
                   "(plrank [lightgbm]) again: the same objective, parameters (defaults included) and settings; "
                   "give it once"]


@pytest.mark.engine
def test_the_same_configuration_written_another_way_reuses_every_record(two_datasets, tmp_path, capsys):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert _compare(alpha, "--run", "plrank,top_k=5,n_permutations=2", "--out", out) == 0
    capsys.readouterr()
    assert _compare(alpha, "--run", "plrank,n_permutations=2,top_k=5.0", "--out", out) == 0
    captured = capsys.readouterr()
    assert "2 run(s): 2 reused from records, 0 redone, 0 new" in captured.err
    assert len(list((out / "runs").iterdir())) == 1  # one record folder
