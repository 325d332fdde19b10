"""Per-query results and significance (plboost.experiment.reports, results): the files agree with SciPy, Holm's
family is the table, identical configurations do not differ."""


from dataclasses import replace

import numpy as np
import pytest
from experiment_helpers import cli_spec, compare_cli

from plboost.data import make_synthetic
from plboost.data.layouts import find_layout
from plboost.experiment import Comparison, FoldResult, RunSpec, compare, run

# --------------------------------------------------------------------------------------------------
# per-query results and significance

@pytest.mark.engine
def test_per_query_and_significance_files_agree_with_scipy(two_datasets, tmp_path, capsys):
    import pandas as pd
    from scipy import stats

    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert compare_cli(alpha, "--run", "plrank", "--run", "urank", "--run", "lambdarank", "--repeats", "2",
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
    specs = [cli_spec("plrank,leaf_values=exact"), cli_spec("umart")]
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
    assert compare_cli(alpha, "--run", "plrank", "--run", "urank", "--run", "lambdarank", "--out", out,
                    "--holm-over", "table") == 0
    printed = capsys.readouterr().out
    assert "the family: every configuration and metric of the table together (12 tests)" in printed
    t_tests = _csv_frame(out / "significance.csv").query("test == 't-test'")
    assert len(t_tests) == 12
    np.testing.assert_allclose(t_tests.p_adjusted, holm(t_tests.p_value))
    assert compare_cli(alpha, "--run", "plrank", "--run", "urank", "--run", "lambdarank") == 0
    assert "the family: the configurations compared with lambdarank [lightgbm], for each metric separately (2 tests)" \
        in capsys.readouterr().out


def _csv_frame(path):
    import pandas as pd

    return pd.read_csv(path)


@pytest.mark.engine
def test_identical_configurations_are_not_significantly_different(two_datasets):
    """The same runs under two names (compare itself refuses a configuration given twice)."""

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
    from plboost.experiment import evaluate_scores

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
    # results obtained elsewhere join a table under a name (a specification of an unknown objective is refused)
    comparison = Comparison("synthetic", [RunSpec(name="trained [lightgbm]"), RunSpec(name="random [lightgbm]")],
                            folds, conventions)
    significance = comparison.significance("random [lightgbm]")
    ndcg = significance[(significance["metric"] == "NDCG@10")].set_index("test")
    assert (ndcg["mean_difference"] > 0.1).all() and (ndcg["p_adjusted"] < 1e-3).all()
    assert "▲" in comparison.table(significance=significance)


def test_lambdarank_stays_the_baseline_when_every_configuration_gets_engine_parameters():
    """compare --run plrank --baselines --engine-param min_data_in_leaf=5 had lambdarank in the table, yet said
    "no significance tests: no baseline"."""
    from plboost.experiment import RunSpec, choose_baseline, parse_run, with_baselines

    defaults = RunSpec(engine_params={"min_data_in_leaf": 5})
    specs = with_baselines([parse_run("plrank", defaults)], defaults)
    assert choose_baseline(specs) == next(s.label for s in specs if s.objective == "lambdarank")
    both = [RunSpec(objective="lambdarank", engine_params={"min_data_in_leaf": 5}), RunSpec(objective="lambdarank")]
    assert choose_baseline(both) == RunSpec(objective="lambdarank").label
    assert choose_baseline([RunSpec(objective="lambdarank", objective_params={"lambdarank_norm": False})]) is None


# --------------------------------------------------------------------------------------------------
# metrics without a value: standard JSON, read back as they were written

def _strict_json(path):
    import json

    def refuse(constant):
        raise AssertionError(f"{path}: bare {constant} in JSON")
    return json.loads(path.read_text(), parse_constant=refuse)


@pytest.mark.engine
def test_a_metric_without_a_value_is_null_in_json_and_left_out_by_name_in_summarize(tmp_path, capsys):
    from plboost.cli import main
    from plboost.data import load_svmlight, write_synthetic_splits

    for fold, seed in (("Fold1", 5), ("Fold2", 6)):  # Fold2's test file: no relevant document at all
        write_synthetic_splits(tmp_path / "data" / fold, n_queries=(25, 8, 6), seed=seed)
    test = load_svmlight(tmp_path / "data" / "Fold2" / "test.txt")
    replace(test, labels=np.zeros_like(test.labels)).save_svmlight(tmp_path / "data" / "Fold2" / "test.txt")
    out = tmp_path / "R"
    arguments = ["--run", "listnet", "--run", "lambdarank", "--no-relevant", "exclude", "--out", out]
    assert compare_cli(tmp_path / "data", *arguments) == 0
    document = _strict_json(out / "results.json")
    fold2 = [r for r in document["results"] if r["split"] == "Fold2"]
    assert fold2 and all(value is None for r in fold2 for value in r["metrics"].values())
    for record in (out / "runs").rglob("*.json"):
        _strict_json(record)
    first = (out / "results.csv").read_text()
    capsys.readouterr()

    assert compare_cli(tmp_path / "data", *arguments) == 0  # the records read back: reused, the same table
    again = capsys.readouterr()
    assert "4 reused from records" in again.out + again.err
    # the table says that a metric has no value, and why, instead of "nan ± nan"
    assert "nan" not in again.out and "| n/a " in again.out
    assert "n/a: no value, since a split had no test query that counts in the metric" in again.out
    assert (out / "results.csv").read_text() == first
    assert ",," in first and "nan" not in first.lower()

    for given in (out / "results.json", out / "results.csv"):
        assert main(["summarize", str(given)]) == 0
        printed = capsys.readouterr()
        assert "left out, empty or NaN" in printed.err and str(given) in printed.err
        assert "Winning numbers: 2 methods" in printed.out
