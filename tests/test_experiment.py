"""The experiment driver: a run's metrics are the metrics module's on the model's predictions."""

import csv
import json

import numpy as np
import pytest

from plboost import metrics
from plboost.data import make_synthetic
from plboost.experiment import RunSpec, format_table, run


@pytest.fixture(scope="module")
def splits():
    return [make_synthetic(n_queries=n, seed=seed) for n, seed in ((80, 1), (30, 2), (30, 3))]


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


def test_compare_table_equals_the_metrics_of_the_saved_predictions(mq2008_comparison, shared_data):
    result, out, specs, _ = mq2008_comparison
    assert len(result.results) == 6
    summary = {row["configuration"]: row for row in result.summary()}
    for spec in specs:
        per_fold = []
        for fold in ("Fold1", "Fold2"):
            record = json.loads(record_path_of(out, spec.label, fold).read_text())
            scores = np.load(record["predictions"])
            test = load_svmlight(shared_data / "MQ2008" / fold / "test.txt.gz")
            values = metrics.evaluate(scores, test.labels, offsets=test.offsets, ndcg_at=(1, 3, 5, 10),
                                      err_at=(1, 3, 5, 10))
            assert record["metrics"]["NDCG@10"] == values["NDCG@10"]
            per_fold.append(values)
        for name in ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10", "ERR"):
            column = [v[name] for v in per_fold]
            assert summary[spec.label][name] == pytest.approx(np.mean(column), abs=1e-15)
            assert summary[spec.label][name + " std"] == pytest.approx(np.std(column, ddof=1), abs=1e-15)
            cell = f"{np.mean(column):.4f} ± {np.std(column, ddof=1):.4f}"
            assert cell in [line for line in result.table().splitlines() if spec.label in line][0]


def test_compare_writes_csv_json_and_plot_and_resumes(mq2008_comparison, shared_data):
    result, out, specs, lines = mq2008_comparison
    written = result.save(out)
    rows = list(csv.DictReader(open(written["results.csv"])))
    assert len(rows) == 6 and {r["split"] for r in rows} == {"Fold1", "Fold2"}
    summary_rows = list(csv.DictReader(open(written["summary.csv"])))
    assert [r["configuration"] for r in summary_rows] == [s.label for s in specs]
    saved = json.loads(written["results.json"].read_text())
    assert saved["conventions"] == result.conventions and len(saved["results"]) == 6
    png = result.plot(out / "curves.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert all("done before" not in line for line in lines)

    again_lines = []
    again = compare(specs, find_layout(shared_data / "MQ2008"), splits=["Fold1", "Fold2"], out_dir=out,
                    log=again_lines.append)
    assert len(again_lines) == 6 and all("done before" in line for line in again_lines)
    assert again.table() == result.table()
    changed = [RunSpec(rounds=21, num_leaves=15, early_stopping=10, objective="lambdarank")]
    recomputed = []
    compare(changed, find_layout(shared_data / "MQ2008"), splits=["Fold1"], out_dir=out, log=recomputed.append)
    assert "done before" not in recomputed[0]  # a changed configuration is trained again


def test_compare_refuses_bad_input(shared_data):
    layout = find_layout(shared_data / "MQ2008")
    with pytest.raises(ValueError, match="unknown splits"):
        compare([RunSpec()], layout, splits=["Fold9"])
    with pytest.raises(ValueError, match="unknown objective 'listnet'"):
        compare([parse_run("listnet", RunSpec())], layout)
    with pytest.raises(ValueError, match="same label"):
        compare([RunSpec(), RunSpec()], layout)
    with pytest.raises(ValueError, match="same evaluation conventions"):
        compare([RunSpec(), RunSpec(objective="lambdarank", no_relevant="zero")], layout)


def test_run_specs_from_text_and_toml(tmp_path):
    defaults = RunSpec(rounds=50)
    spec = parse_run("umart@xgboost,window=3,sigmoid=1.5,preset=paper,lambdarank_norm=false", defaults)
    assert (spec.objective, spec.engine, spec.rounds) == ("umart", "xgboost", 50)
    assert spec.objective_params == {"window": 3, "sigmoid": 1.5, "preset": "paper", "lambdarank_norm": False}
    with pytest.raises(ValueError, match="is not key=value"):
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
