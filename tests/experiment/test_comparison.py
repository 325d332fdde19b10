"""compare (plboost.experiment.comparison) on MQ2008: the table is the metrics of the saved predictions, files
are written and resumed, bad input refused; run specs from text and TOML."""

import csv
import itertools
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from plboost import metrics
from plboost.data import load_svmlight
from plboost.data.layouts import find_layout
from plboost.experiment import RunSpec, compare, load_config, parse_run, record_path_of
from plboost.experiment.planning import run_provenance

# --------------------------------------------------------------------------------------------------
# compare


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


@pytest.mark.parametrize("splits, named", [(["Fold3", "Fold4", "Fold3"], "Fold3"),
                                           (["Fold5", "Fold2", "Fold2", "Fold5"], "Fold2, Fold5"),
                                           (("Fold1", "Fold1"), "Fold1")])
def test_compare_refuses_a_split_named_twice_before_training(shared_data, tmp_path, splits, named):
    layout = find_layout(shared_data / "MQ2008")
    with pytest.raises(ValueError, match=rf"splits \(--folds\) names {named} more than once"):
        compare([RunSpec(), RunSpec(objective="lambdarank")], layout, splits=splits, out_dir=tmp_path)
    assert not any(tmp_path.iterdir())  # refused before any run was trained or recorded


def test_compare_refuses_an_empty_list_of_splits(shared_data):
    with pytest.raises(ValueError, match=r"names no split"):
        compare([RunSpec()], find_layout(shared_data / "MQ2008"), splits=[])


def test_compare_refuses_bad_input(shared_data):
    layout = find_layout(shared_data / "MQ2008")
    with pytest.raises(ValueError, match="unknown splits"):
        compare([RunSpec()], layout, splits=["Fold9"])
    with pytest.raises(ValueError, match="unknown objective 'plrnak'"):
        compare([parse_run("plrnak", RunSpec())], layout)
    with pytest.raises(ValueError, match=r"configuration #2 \(plrank \[lightgbm\]\) is configuration #1"):
        compare([RunSpec(), RunSpec()], layout)
    with pytest.raises(ValueError, match=r"same label \(plrank \[lightgbm\]\).*give each a name"):
        compare([RunSpec(), RunSpec(rounds=50)], layout)  # two configurations a table could not tell apart
    with pytest.raises(ValueError, match=r"same name or label \(x\); give each its own name"):
        compare([RunSpec(name="x"), RunSpec(objective="lambdarank", name="x")], layout)
    with pytest.raises(ValueError, match="name must be a non-empty text, got ' '"):
        RunSpec(name=" ")
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



@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[2] / "docs" / "examples").glob("*.toml")),
                         ids=lambda path: path.name)
def test_the_documented_run_files_load(path):
    """The TOML files docs/ runs (docs/examples/*.toml): every configuration in them checks out, labels distinct."""
    specs = load_config(path, RunSpec())
    assert specs and len({spec.label for spec in specs}) == len(specs) == len({spec.key for spec in specs})

def test_a_name_tells_apart_configurations_that_differ_in_engine_parameters(tmp_path):
    """Two [[run]] tables of one objective with other engine parameters: their labels alike, each takes a name.
    The name is display only: it changes neither the configuration's key nor its records' provenance."""
    config = tmp_path / "runs.toml"
    config.write_text('[[run]]\nobjective = "lambdarank"\n\n[[run]]\nobjective = "lambdarank"\n'
                      'name = "lambdarank, extra trees"\nengine_params = { extra_trees = true }\n')
    plain, extra = load_config(config, RunSpec(rounds=3))
    assert (plain.label, extra.label) == ("lambdarank [lightgbm]", "lambdarank, extra trees")
    assert extra.engine_params == {"extra_trees": True}
    unnamed = replace(extra, name=None)
    assert unnamed.key == extra.key != plain.key
    data = {"train": {"path": "t", "content": "sha256:0"}}
    assert run_provenance(unnamed, data) == run_provenance(extra, data)


@pytest.mark.engine
def test_one_err_scale_per_table_whatever_each_fold_holds(tmp_path):
    """Fold1 with labels 0-1 beside Fold2 with 0-2: ERR of Fold1 was on g_max=1 and Fold2's on 2, averaged under a
    header that said 2. Every fold now takes the table's g_max, recorded in each run's provenance."""
    from plboost.data import write_synthetic_splits

    for fold, shares in (("Fold1", (0.6, 0.4)), ("Fold2", (0.5, 0.3, 0.2))):
        write_synthetic_splits(tmp_path / "data" / fold, n_queries=(20, 8, 8), n_features=4, label_shares=shares,
                               seed=len(shares))
    layout = find_layout(tmp_path / "data")
    spec = RunSpec(rounds=2, num_leaves=4)
    result = compare([spec], layout, out_dir=tmp_path / "out")
    assert "(g_max=2)" in result.conventions
    for fold in ("Fold1", "Fold2"):
        record = json.loads(record_path_of(tmp_path / "out", spec, fold).read_text())
        assert "(g_max=2)" in record["conventions"] and record["provenance"]["evaluation"] == {"g_max": 2}
        test = load_svmlight(tmp_path / "data" / fold / "test.txt")
        scores = np.load(record_path_of(tmp_path / "out", spec, fold).with_suffix(".npy"))
        expected = metrics.err(scores, test.labels, offsets=test.offsets, k=None, g_max=2)
        assert record["metrics"]["ERR"] == pytest.approx(expected)
