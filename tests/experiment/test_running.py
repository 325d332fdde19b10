"""Running one configuration (plboost.experiment.running): a run's metrics are the metrics module's on the
model's predictions; specs refuse bad values; tables align."""

import json

import pytest

from plboost import metrics
from plboost.experiment import RunSpec, format_table, run
from plboost.experiment import running
from plboost.experiment.running import warm_up


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
def test_warm_up_ignores_a_g_max_below_its_synthetic_labels():
    """The warm-up's synthetic labels run to 4; a g_max of 2 (MQ2008's grades) refused them, so that
    `plboost compare ../shared/data/MQ2008 --g-max 2` failed before training anything."""
    spec = RunSpec(objective="plrank", rounds=3, g_max=2)
    running._WARMED.discard((spec.objective, spec.engine, spec.leaf_values))  # so that it runs here
    assert warm_up(spec) > 0.0


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
