"""Provenance (plboost.experiment.planning): a record is reused only when everything that decides its result
is the same; damaged records are named and recomputed; repeats shift the seeds."""

import itertools
import json
from dataclasses import replace

import numpy as np
import pytest
from experiment_helpers import cli_spec, compare_cli, read_csv

from plboost import metrics
from plboost.cli import main
from plboost.data import load_svmlight
from plboost.data.layouts import find_layout
from plboost.experiment import RecordWarning, RunSpec, compare, parse_run, record_path_of

# --------------------------------------------------------------------------------------------------
# provenance: a record is reused only when everything that decides its result is the same


@pytest.mark.engine
def test_another_dataset_in_the_same_out_directory_reuses_nothing(two_datasets, tmp_path, capsys):
    alpha, beta = two_datasets
    out = tmp_path / "R"
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
    capsys.readouterr()
    assert compare_cli(beta, "--run", "plrank", "--out", out) == 0
    captured = capsys.readouterr()
    assert "2 run(s): 0 reused from records, 2 redone" in captured.err
    assert "train file content (2)" in captured.err and "test file content (2)" in captured.err
    rows = read_csv(out / "results.csv")
    assert {row["dataset"] for row in rows} == {"beta"} and len(rows) == 2
    record = json.loads(record_path_of(out, cli_spec("plrank"), "Fold1").read_text())
    assert str(beta / "Fold1" / "test.txt") == record["provenance"]["data"]["test"]["path"]
    # the test metrics are those of beta's test file
    test = load_svmlight(beta / "Fold1" / "test.txt")
    scores = np.load(record["predictions"])
    assert metrics.ndcg(scores, test.labels, offsets=test.offsets, k=10) == record["metrics"]["NDCG@10"]


@pytest.mark.engine
@pytest.mark.parametrize("recorded", [None, {"force_col_wise": False}, {"deterministic": True}])
def test_a_record_trained_without_the_engine_settings_plboost_chooses_is_redone(two_datasets, tmp_path, capsys,
                                                                             recorded):
    """plboost gives LightGBM the settings that make a run independent of timing; a record written without them
    (an older plboost), or with other values, would not be what a rerun gives, so it is redone and the reason named."""
    out = tmp_path / "R"
    assert compare_cli(two_datasets[0], "--run", "lambdarank", "--out", out) == 0
    path = record_path_of(out, cli_spec("lambdarank"), "Fold1")
    record = json.loads(path.read_text())
    assert record["provenance"]["engine settings"] == {"force_col_wise": True, "deterministic": True}
    if recorded is None:
        del record["provenance"]["engine settings"]
    else:
        record["provenance"]["engine settings"] = recorded
    path.write_text(json.dumps(record))
    capsys.readouterr()
    assert compare_cli(two_datasets[0], "--run", "lambdarank", "--out", out) == 0
    err = capsys.readouterr().err
    assert "1 reused from records, 1 redone, 0 new (redone because: engine settings: " in err
    assert "force_col_wise" in err if recorded != {"deterministic": True} else "force_col_wise unset -> True" in err


@pytest.mark.engine
def test_a_file_edited_in_place_is_not_reused(two_datasets, tmp_path, capsys):
    import os
    import shutil

    data = shutil.copytree(two_datasets[0], tmp_path / "alpha")
    out = tmp_path / "R"
    assert compare_cli(data, "--run", "plrank", "--out", out) == 0
    test = data / "Fold2" / "test.txt"
    status = test.stat()
    lines = test.read_text().splitlines(keepends=True)
    first = lines[0].split(" ", 1)
    lines[0] = ("1" if first[0] == "0" else "0") + " " + first[1]  # one label changed, same size
    test.write_text("".join(lines))
    os.utime(test, ns=(status.st_atime_ns, status.st_mtime_ns))  # and its modification time restored
    capsys.readouterr()
    assert compare_cli(data, "--run", "plrank", "--out", out) == 0
    assert "1 reused from records, 1 redone, 0 new (redone because: test file content (1))" in capsys.readouterr().err


@pytest.mark.engine
def test_a_table_holds_only_runs_of_its_own_protocol(two_datasets, tmp_path, capsys):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    # in the same --out, under three other protocols: other rounds, learning rate and tuning budget
    assert main(["compare", str(alpha), "--run", "urank", "--rounds", "2", "--num-leaves", "7", "--out", str(out),
                 "--quiet"]) == 0
    assert compare_cli(alpha, "--run", "listnet", "--learning-rate", "0.3", "--out", out) == 0
    assert compare_cli(alpha, "--run", "umart", "--tune", "2", "--out", out) == 0
    # and under the same protocol: it joins
    assert compare_cli(alpha, "--run", "regression", "--out", out) == 0
    capsys.readouterr()
    assert compare_cli(alpha, "--run", "plrank", "--run", "lambdarank", "--out", out) == 0
    captured = capsys.readouterr()
    in_table = {"plrank [lightgbm]", "lambdarank [lightgbm]", "regression [lightgbm]"}
    assert {row["configuration"] for row in read_csv(out / "significance.csv")} == in_table - {"lambdarank [lightgbm]"}
    for name in ("results.csv", "summary.csv", "per_query.csv"):
        assert {row["configuration"] for row in read_csv(out / name)} == in_table
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
    assert "urank [lightgbm]" in read_csv(out / "summary.csv")[-1]["configuration"]  # the 2-round run joins this one
    assert "plrank [lightgbm]: another protocol (rounds 3 (this table: 2))" in captured.out
    first = json.loads(record_path_of(out, cli_spec("plrank"), "Fold1").read_text())
    assert first["provenance"]["spec"]["rounds"] == 3 and first["protocol"]["rounds"] == 3


@pytest.mark.engine
def test_a_configurations_own_setting_is_not_its_protocol(two_datasets, tmp_path):
    alpha, _ = two_datasets
    layout, out = find_layout(alpha), tmp_path / "R"
    slow = replace(cli_spec("listnet"), learning_rate=0.05)
    compare([cli_spec("plrank"), cli_spec("lambdarank"), slow], layout, out_dir=out)
    # the protocol's learning rate is now 0.2, but listnet's 0.05 was its own: it joins; plrank's was not
    later = compare([replace(cli_spec("urank"), learning_rate=0.2)], layout, out_dir=out)
    assert later.protocol["learning_rate"] == 0.2 and later.earlier == [slow.label]
    assert "\nown settings: listnet [lightgbm]: learning rate 0.05\n" in later.header() + "\n"  # its label hides it
    assert [line.split(":")[0] for line in later.left_out] == ["lambdarank [lightgbm]", "plrank [lightgbm]"]
    twice = compare([cli_spec("urank")], layout, out_dir=out, repeats=2)
    assert twice.earlier == []
    assert {line.split(":")[0] for line in twice.left_out if "repeats 1 (this table: 2)" in line} == {
        "plrank [lightgbm]", "lambdarank [lightgbm]", slow.label}


@pytest.mark.engine
def test_an_earlier_run_joins_under_its_name_and_never_under_a_label_that_hides_its_engine_parameters(two_datasets,
                                                                                                     tmp_path):
    """A configuration told apart by engine parameters alone joins a later table by its name; without a name its
    label ("lambdarank [lightgbm]") would hide them, so it is left out, saying which."""
    alpha, _ = two_datasets
    layout, out = find_layout(alpha), tmp_path / "R"
    named = replace(cli_spec("lambdarank"), engine_params={"extra_trees": True}, name="lambdarank, extra trees")
    unnamed = replace(cli_spec("lambdarank"), engine_params={"min_data_in_leaf": 2})
    compare([named], layout, out_dir=out)
    compare([unnamed], layout, out_dir=out)
    later = compare([cli_spec("urank")], layout, out_dir=out)
    assert later.earlier == ["lambdarank, extra trees"]
    assert "own settings: lambdarank, extra trees: extra_trees=True" in later.header()
    assert {r.label for r in later.results} == {"urank [lightgbm]", "lambdarank, extra trees"}
    assert later.left_out == ["lambdarank [lightgbm]: engine parameters its label does not show (min_data_in_leaf=2); "
                              "a name would show them"]
    # a named configuration with the same engine parameters does not show them either
    beside = compare([replace(named, engine_params={"min_data_in_leaf": 2})], layout, out_dir=out)
    assert "lambdarank [lightgbm]" not in beside.earlier
    # beside an unnamed configuration with the same engine parameters, the label hides nothing: it joins
    same = compare([replace(cli_spec("urank"), engine_params={"min_data_in_leaf": 2})], layout, out_dir=out)
    assert "lambdarank [lightgbm]" in same.earlier


@pytest.mark.engine
@pytest.mark.parametrize("damage", ["", '{"label": "plrank [lightgbm]", "metr'])
def test_an_empty_or_truncated_record_is_named_and_recomputed(two_datasets, tmp_path, capsys, damage):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
    path = record_path_of(out, cli_spec("plrank"), "Fold2")
    before = json.loads(path.read_text())
    path.write_text(damage)
    capsys.readouterr()
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
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
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
    path = record_path_of(out, cli_spec("plrank"), "Fold2")
    edit, problem = DAMAGES[damage]
    _edit_record(path, edit)
    capsys.readouterr()
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
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
    assert compare_cli(alpha, "--run", "plrank", "--run", "lambdarank", "--out", out) == 0
    path = record_path_of(out, cli_spec("lambdarank"), "Fold1")
    _edit_record(path, DAMAGES[damage][0])
    capsys.readouterr()
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
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
    assert compare_cli(alpha, "--run", "plrank", "--run", "urank", "--out", out) == 0
    for split in ("Fold1", "Fold2"):
        _edit_record(record_path_of(out, cli_spec("urank"), split),
                     lambda record: record["provenance"]["spec"].update(engine_params={"objective": "regression"}))
    capsys.readouterr()
    assert compare_cli(alpha, "--run", "plrank", "--out", out) == 0
    captured = capsys.readouterr()
    assert captured.err.count("the recorded configuration cannot be used (engine parameter objective='regression'") == 2
    assert "urank" not in captured.out


def test_records_are_written_atomically(tmp_path, monkeypatch):
    from plboost import _writing, records

    path = tmp_path / "runs" / "x" / "Fold1.json"
    records.write_json_atomic(path, {"label": "x", "metrics": {"NDCG@10": 0.5}})
    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(_writing.os, "fsync", fail)
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


def _hits_at(ranked_labels, offsets, k):
    """Whether a relevant document is in each query's top k, written plainly."""
    return np.array([float(np.any(ranked_labels[a:b][:k] >= 1)) for a, b in itertools.pairwise(offsets)])


def test_a_registered_metric_joins_the_table_and_records_and_is_never_reused_without(two_datasets, tmp_path):
    alpha, _ = two_datasets
    layout = find_layout(alpha)
    spec = RunSpec(rounds=3, num_leaves=7, eval_at=(3, 10))
    metrics.register_metric("Hits", _hits_at, at_cutoffs=True)
    try:
        lines = []
        result = compare([spec], layout, out_dir=tmp_path, log=lines.append)
        assert {"Hits@3", "Hits@10"} <= set(result.metric_names)
        assert "Hits@3" in result.table().splitlines()[0]
        record = json.loads(record_path_of(tmp_path, spec, "Fold1").read_text())
        assert record["provenance"]["registered metrics"] == ["Hits"] and "Hits@10" in record["metrics"]
        again = []
        compare([spec], layout, out_dir=tmp_path, log=again.append)
        assert sum(": reused (" in line for line in again) == 2, again
    finally:
        metrics.unregister_metric("Hits")
    without = []
    result = compare([spec], layout, out_dir=tmp_path, log=without.append)
    assert "Hits@3" not in result.metric_names
    assert any('registered metrics ["Hits"] -> unset' in line for line in without), without


@pytest.mark.engine
def test_repeats_of_a_configuration_that_ignores_the_seed_are_not_trained_again(two_datasets, tmp_path):
    """``--repeats 3`` of lambdarank without bagging trained three identical models per split (issue 40 item 15):
    once repeats 0 and 1 agree, the later repeats are repeat 0's result, counted and said; a configuration whose
    repeats differ trains every repeat."""
    alpha, _ = two_datasets
    plain = RunSpec(rounds=4, num_leaves=7)
    bagged = RunSpec(rounds=4, num_leaves=7, engine_params={"bagging_fraction": 0.7, "bagging_freq": 1})
    specs = [parse_run("lambdarank", plain), parse_run("plrank", bagged)]
    lines = []
    result = compare(specs, find_layout(alpha), repeats=3, out_dir=tmp_path, log=lines.append)
    assert len(result.results) == 2 * 2 * 3
    lambdarank = {(r.split, r.repeat): r for r in result.results if r.label == "lambdarank [lightgbm]"}
    assert all(lambdarank[split, 2].per_query == lambdarank[split, 0].per_query for split in ("Fold1", "Fold2"))
    assert result.runs["same"] == 2 and result.runs["new"] == 10
    assert sum("lambdarank [lightgbm] repeat 2: not trained: repeats 0 and 1 gave the same test results" in line
               for line in lines) == 2
    assert "2 not trained (repeats of configurations whose repeats 0 and 1 gave the same results" in result.runs_line()
    assert not any("plrank" in line and "not trained" in line for line in lines)
    # a later table under the same protocol: the seed-free configuration joins with all 3 repeats, not left out
    # for the repeat it never trained
    later = compare([parse_run("urank", plain)], find_layout(alpha), repeats=3, out_dir=tmp_path)
    assert later.earlier == ["lambdarank [lightgbm]"]  # plrank's bagging is not in its label: left out
    assert [line.split(":")[0] for line in later.left_out] == ["plrank [lightgbm]"]
    joined = {(r.split, r.repeat): r for r in later.results if r.label == "lambdarank [lightgbm]"}
    assert sorted(joined) == sorted(lambdarank) and joined["Fold1", 2].per_query == lambdarank["Fold1", 0].per_query
