"""The scripts in scripts/ run end to end on small settings (their figures are in docs/benchmarks.md)."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def run_script(name, *args):
    completed = subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True,
                               timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


#: bench.py's sections in groups of about equal time, each group in a process of its own (so that the suite's
#: workers share them), with rows each must print
BENCH_GROUPS = {
    ("kernels",): ("PLRank() grad+hess", "URank() grad+hess", "UMart() grad+hess", "PLPartition() grad+hess",
                   "PLLowerBound() grad+hess", "LightGBM lambdarank gradients", "top partition of 1000",
                   "PLRank3(n_samples=10) grad+hess", "PLRank(top_k=10)"),
    ("engines", "rounds", "fairness"): ("LightGBM training with PLRank()", "XGBoost training with PLRank()",
                                        "LightGBM round, lambdarank", "LightGBM round, PLPartition()",
                                        "LightGBM round, YetiRank()", "LightGBM round, FairPLRank3(fairness_weight"),
    ("xgboost-rounds",): ("XGBoost round, rank:ndcg", "XGBoost round, PLRank3()", "XGBoost round, YetiRank()"),
    ("memory", "loading", "scaling"): (),
    ("leaves", "first-call", "compile", "startup"): (),
    ("significance",): ("paired randomization test",),
    ("long",): ("lightgbm lambdarank, one query", "lightgbm listnet, one query", "xgboost rank:ndcg, one query",
                "xgboost squared_error, one query"),
}


def _load_script(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bench_groups_cover_every_section():
    assert sorted(name for group in BENCH_GROUPS for name in group) == sorted(_load_script("bench.py").SECTIONS)


@pytest.mark.parametrize("name, args, named", [
    ("bench.py", ["--repeats", "0"], "--repeats"),
    ("bench.py", ["--queries", "0"], "--queries"),
    ("bench.py", ["--queries", "300", "--only", "kernels", "long"], "--queries"),
    ("_bench_partition.py", ["--repeats", "0"], "--repeats"),
    ("_bench_partition.py", ["--threads", "0"], "--threads"),
    ("_bench_partition.py", ["--threads", "100000"], "--threads"),
    ("_bench_leaves.py", ["--repeats", "0"], "--repeats"),
    ("_bench_leaves.py", ["--threads", "0"], "--threads"),
])
def test_the_benchmarks_refuse_counts_they_would_not_honour(name, args, named, capsys):
    """0 used to read as 'not given' (the default ran instead) and too many threads ended in Numba's traceback."""
    with pytest.raises(SystemExit) as exited:
        _load_script(name).main(args)
    assert exited.value.code == 2
    assert named in capsys.readouterr().err


#: sections whose rows need scikit-learn: the parser's baseline is its ``load_svmlight_file``; the start-up rows
#: time ``import plboost.sklearn``
BENCH_SCIKIT_LEARN = {"loading", "startup"}


@pytest.mark.engine
@pytest.mark.parametrize("sections", [
    pytest.param(group, marks=[pytest.mark.scikit_learn_in_subprocesses] if BENCH_SCIKIT_LEARN & set(group) else [])
    for group in BENCH_GROUPS], ids="+".join)
def test_bench_small_mode_prints_every_row(sections):
    out = run_script("bench.py", "--small", "--only", *sections)
    for section, text in zip(sections, out.split("\n## ")[1:], strict=True):
        assert text.startswith(f"{section}\n") and text.count("\n| ") >= 2, text  # a header and a row
    for kernel in BENCH_GROUPS[sections]:
        assert kernel in out, kernel


@pytest.mark.slow
def test_partition_accuracy_reports_each_tolerance():
    out = run_script("partition_accuracy.py", "--cases", "3", "--mslr-queries", "2", "--no-extremes",
                     "--tolerances", "1e-08", "1e-10")
    rows = [line for line in out.splitlines() if line.startswith("| 1e-08 |") or line.startswith("| 1e-10 |")]
    assert len(rows) == 4  # two tolerances for each of the two families
    for row in rows:
        errors = [float(cell) for cell in row.strip("|").split("|")[1:7]]
        assert all(0 <= error < 1e-6 for error in errors), row


@pytest.mark.slow
def test_simulation_quick_mode_fills_its_table():
    out = run_script("pl_partition_simulation.py", "--quick")
    rows = [line for line in out.splitlines() if line.startswith("| 30 ") or line.startswith("| 100 ")]
    assert len(rows) == 4
    assert all("e-" in row for row in rows)


@pytest.mark.engine
@pytest.mark.parametrize("study, label", [("plrank", "lambdarank [lightgbm]"), ("umart", "lambdarank [lightgbm]"),
                                          ("partition", "lambdarank [lightgbm]"),
                                          ("leaves", "plrank(top_k=10, n_permutations=3) [lightgbm, exact leaves]")])
def test_mq2008_study_on_one_fold(shared_data, study, label):
    """Each study on one fold with at most 20 trees (the studies' 1000 with early stopping take minutes)."""
    out = run_script("mq2008_folds.py", study, str(shared_data / "MQ2008"), "--folds", "1", "--rounds", "20")
    assert "NDCG@10" in out and label in out
    assert "at most 20 trees" in out and "(--rounds 20: not the study's 1000)" in out


def test_mq2008_study_names_a_missing_fold_directory(tmp_path):
    completed = subprocess.run([sys.executable, str(SCRIPTS / "mq2008_folds.py"), "umart", str(tmp_path), "--folds",
                                "1"], capture_output=True, text=True, timeout=120)
    assert completed.returncode == 2
    assert completed.stderr.strip().endswith(f"error: no MQ2008 fold directory {tmp_path / 'Fold1'} (DATA_DIR holds "
                                             "Fold1 ... Fold5)")


# --------------------------------------------------------------------------------------------------
# The paper's full-benchmark runs, on synthetic data written in each layout

from plboost.data import make_synthetic  # noqa: E402


def write_split(data, paths):
    for part, path in zip(data, paths, strict=True):
        part.save_svmlight(path)


def synthetic_parts(seed):
    data = make_synthetic(n_queries=60, n_features=8, docs_per_query=(5, 30), seed=seed)
    return data.subset(range(0, 36)), data.subset(range(36, 48)), data.subset(range(48, 60))


def _without_warm_up(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("seconds: training time only"))


@pytest.mark.engine
def test_run_mslr_on_folds_resumes_and_estimates(tmp_path):
    for fold in (1, 2):
        directory = tmp_path / "MSLR" / f"Fold{fold}"
        directory.mkdir(parents=True)
        write_split(synthetic_parts(fold), [directory / name for name in ("train.txt.gz", "vali.txt", "test.txt")])
    out = tmp_path / "results"
    first = run_script("run_mslr.py", str(tmp_path / "MSLR"), "--out", str(out), "--rounds", "3", "--quiet")
    assert "letor4 layout, 2 split(s) x 10 configurations, 20 run(s) to do; estimated" in first
    for label in ("plrank(top_k=10, n_permutations=6) [lightgbm]", "umart(window=2) [lightgbm]",
                  "pl_partition [lightgbm]", "regression [lightgbm]", "rank:pairwise [xgboost]"):
        assert label in first
    assert (out / "results.json").is_file() and (out / "validation_ndcg.png").is_file()
    again = run_script("run_mslr.py", str(tmp_path / "MSLR"), "--out", str(out), "--rounds", "3", "--quiet")
    assert "0 run(s) to do; estimated 0 s" in again
    # the same table, from the records; only the first command compiled or loaded kernels
    assert "seconds: training time only; compiling or loading kernels" in first
    assert _without_warm_up(again.split("\n", 1)[1]) == _without_warm_up(first.split("\n", 1)[1])
    # other rounds: the records do not count as done, and the estimate says so
    changed = run_script("run_mslr.py", str(tmp_path / "MSLR"), "--out", str(out), "--rounds", "4", "--quiet",
                         "--estimate-only")
    assert "20 run(s) to do; estimated " in changed


@pytest.mark.engine
def test_run_mslr_on_letor3_folds_estimate_only(tmp_path):
    directory = tmp_path / "OHSUMED" / "Fold1"
    directory.mkdir(parents=True)
    write_split(synthetic_parts(3), [directory / f"{name}.txt" for name in ("trainingset", "validationset", "testset")])
    out = run_script("run_mslr.py", str(tmp_path / "OHSUMED"), "--out", str(tmp_path / "r"), "--estimate-only",
                     "--runs", "plrank;lambdarank")
    assert "letor3 layout, 1 split(s) x 2 configurations, 2 run(s) to do" in out
    assert not (tmp_path / "r" / "results.json").exists()


@pytest.mark.engine
def test_run_yahoo_runs_each_set_separately(tmp_path):
    for number in (1, 2):
        write_split(synthetic_parts(10 + number),
                    [tmp_path / f"set{number}.{part}.txt" for part in ("train", "valid", "test")])
    out = run_script("run_yahoo.py", str(tmp_path), "--out", str(tmp_path / "r"), "--rounds", "3", "--quiet",
                     "--runs", "plrank,n_permutations=3;pl_partition;rank:ndcg@xgboost")
    assert out.count("1 split(s) x 3 configurations") == 2
    assert (tmp_path / "r" / "set1" / "results.json").is_file() and (tmp_path / "r" / "set2" / "results.json").is_file()


@pytest.mark.engine
def test_run_mslr_on_the_mslr_slice(shared_data, tmp_path):
    out = run_script("run_mslr.py", str(shared_data / "MSLR-WEB10K-5k"), "--out", str(tmp_path), "--rounds", "5",
                     "--quiet", "--runs", "plrank,n_permutations=3;umart,window=2;lambdarank")
    assert "single layout, 1 split(s) x 3 configurations" in out
    table = [line for line in out.splitlines() if line.startswith("| plrank")]
    assert len(table) == 1 and "0." in table[0]


def test_hold_out_validation_splits_training_queries_and_keeps_the_test_file(shared_data, tmp_path):
    from plboost.data import load_svmlight
    from plboost.data.layouts import find_layout

    out = tmp_path / "example"
    printed = run_script("hold_out_validation.py", str(shared_data / "lightgbm_lambdarank"), str(out))
    assert "train.txt 151 queries, vali.txt 50 queries" in printed
    split = find_layout(out).splits[0]
    train, valid, test = (load_svmlight(path, n_features=300, cache=False)
                          for path in (split.train, split.valid, split.test))
    original = load_svmlight(shared_data / "lightgbm_lambdarank" / "rank.test.gz", n_features=300, cache=False)
    np.testing.assert_array_equal(test.X, original.X)
    np.testing.assert_array_equal(test.labels, original.labels)
    assert train.n_docs + valid.n_docs == 3005 and not set(train.qids) & set(valid.qids)
    refused = subprocess.run([sys.executable, str(SCRIPTS / "hold_out_validation.py"),
                              str(shared_data / "lightgbm_lambdarank"), str(out)], capture_output=True, text=True)
    assert refused.returncode == 2 and "exists" in refused.stderr


def test_quality_diagnosis_splits_plranks_loss_and_adds_it_up(shared_data, tmp_path):
    run_script("hold_out_validation.py", str(shared_data / "lightgbm_lambdarank"), str(tmp_path / "example"))
    out = run_script("quality_diagnosis.py", str(tmp_path / "example"), "--rounds", "5")
    gap = float(out.split("kernel's loss within ")[1].split(".\n")[0])
    assert gap < 1e-9  # the loss split into relevant and irrelevant positions adds up to the kernel's loss
    assert "| 6+ | 137 | 0 |" in out  # training queries with six relevant documents or more, none at K = 10


def test_the_campaign_lists_its_cases_and_runs_a_few(shared_data, tmp_path):
    """scripts/campaign.py (issue 38): at least 150 cases; two of them run here, to keep the script working."""
    listing = run_script("campaign.py", "--list")
    assert int(listing.strip().splitlines()[-1].split()[0]) >= 150
    out = run_script("campaign.py", "--only", "qid reappears", "--out", str(tmp_path / "campaign.csv"))
    assert "1 of 1 cases held" in out and (tmp_path / "campaign.csv").is_file()


def test_validation_table_ranks_configurations_by_their_best_validation_score(tmp_path):
    runs = [{"label": "a", "split": f"Fold{i}", "valid_history": [0.5, 0.6 + i / 100, 0.55], "trees_used": 2}
            for i in (1, 2)] + [{"label": "b", "split": "Fold1", "valid_history": [0.7], "trees_used": 1}]
    (tmp_path / "results.json").write_text(json.dumps({"runs": runs}))
    lines = run_script("validation_table.py", str(tmp_path / "results.json")).splitlines()
    assert lines[2] == "| b | 0.7000 ± 0.0000 | 1 | 1 |"
    assert lines[3] == "| a | 0.6150 ± 0.0071 | 2 | 2 |"
    runs[0]["valid_history"] = []
    (tmp_path / "results.json").write_text(json.dumps({"runs": runs}))
    failed = subprocess.run([sys.executable, str(SCRIPTS / "validation_table.py"), str(tmp_path / "results.json")],
                            capture_output=True, text=True)
    assert failed.returncode != 0 and "run a on Fold1 has no validation history" in failed.stderr


@pytest.mark.engine
def test_pl_rank3_rankings_noise_falls_with_the_number_of_rankings(shared_data):
    """scripts/pl_rank3_rankings.py (issue 39): one ranking per query is far noisier than a hundred."""
    out = run_script("pl_rank3_rankings.py", "--fold", str(shared_data / "MQ2008" / "Fold1"), "--samples", "1", "100",
                     "--seeds", "3", "--reference", "2000", "--warm-rounds", "3")
    rows = {int(line.split("|")[1]): [float(x) for x in line.split("|")[2:7]]
            for line in out.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()}
    assert sorted(rows) == [1, 100]
    for column in range(3):  # gradient, hessian and leaf-sum noise
        assert rows[100][column] < rows[1][column] / 10, out
    assert 0.5 < rows[100][3] <= 1.0 and rows[1][3] < rows[100][3], out  # cosine with the reference


def test_partition_step_sizes_print_every_size_and_the_fit_of_a_node():
    out = run_script("_bench_partition.py", "--step-sizes", "--small", "--threads", "1")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [int(row[0]) for row in rows] == [4, 8, 16, 32, 64, 128, 512]
    terms_per_document = [float(row[4]) for row in rows]
    assert all(15 < terms < 40 for terms in terms_per_document), terms_per_document  # the trapezoid's nodes
    assert "ns per node = " in out and "x documents in the step" in out


def test_early_rounds_prints_a_row_per_dataset_and_configuration(shared_data):
    """The table of docs/quality.md's section on first steps: on the LightGBM example, the bounded curvature's
    first tree moves the training scores less than the exact hessian's does."""
    out = run_script("early_rounds.py", "--rounds", "6", "--data", "lgbex", "listnet", "listnet,curvature=bound")
    rows = [line.split(" | ") for line in out.splitlines() if line.startswith("| LightGBM example")]
    assert [row[1] for row in rows] == ["listnet", "listnet,curvature=bound"]
    assert all(len(row) == 9 for row in rows) and all(0 < int(row[3]) <= 6 for row in rows)
    exact, bound = (float(row[2]) for row in rows)
    assert 0 < bound < exact


def test_run_walk_counts_one_objective_and_one_settings_object_per_run():
    """docs/architecture.md's walk of one parameter: plboost builds the objective and the settings once per run."""
    out = run_script("run_walk.py", "--objective", "pa_listmle", "--engine", "xgboost")
    assert "  PositionAwareListMLE built 1 time(s)\n" in out and "  TrainingSettings built 1 time(s)\n" in out
    assert "learning_rate reaches" in out and "experiment.spec" in out


@pytest.mark.engine
@pytest.mark.scikit_learn_in_subprocesses  # xgboost.testing.data imports it
def test_xgboost_clicks_compares_the_two_simulations_per_position(shared_data):
    out = run_script("xgboost_clicks.py", "--train", str(shared_data / "MQ2008" / "Fold1" / "train.txt.gz"),
                     "--impressions", "20", "--positions", "3")
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [int(row[0]) for row in rows] == [1, 2, 3]
    ours, expected = (np.array([float(row[i]) for row in rows]) for i in (1, 2))
    assert np.all(np.abs(ours - expected) < 0.02)  # 9,420 impressions: the shown ranking's rates
    assert "stored position equals the displayed rank for" in out


@pytest.mark.engine
def test_click_training_speed_prints_both_rows_of_each_objective_and_the_one_off_cost():
    out = run_script("click_training_speed.py", "--queries", "40", "--docs", "12", "--impressions", "2000",
                     "--rounds", "2", "--repeats", "1", "--propensity-samples", "50")
    for objective in ("PL-Rank-3", "LambdaLoss, mu 0"):
        assert f"| {objective} | labels |" in out and f"| {objective} | click log |" in out
    assert "one-off: simulating" in out


def test_fairness_study_compares_each_fair_point_with_lambdaranks_front(tmp_path):
    """The report's Pareto comparison on records whose answers are known: lambdarank's temperatures give the
    points (0.8, 0.04), (0.7, 0.01), (0.75, 0.05) (dominated: off the front) per unit; the fair points at NDCG
    0.75 and disparities 0.021-0.023 (0.022 on average) are 0.003 below the front's 0.025 at that NDCG (halfway
    from 0.01 to 0.04), and 0.010 above its NDCG at their disparity (0.74 at 0.022: 0.7 + 0.1 x 0.012 / 0.03)."""
    study = _load_script("fairness_study.py")
    records = tmp_path / "fairness.jsonl"
    metrics = {name: 0.0 for name in study.METRICS}
    rows = []
    for fold in (1, 2, 3):
        shift = 0.001 * fold  # the units differ a little, so that the tests have a spread
        for temperature, (ndcg, disparity) in zip((0.0, 1.0, 0.5), ((0.8, 0.04), (0.7, 0.01), (0.75, 0.05)),
                                                  strict=True):
            rows.append({"key": ["toy", fold, 0, "lambdarank", temperature], **metrics,
                         "expected_NDCG@10": ndcg, "demographic_parity": disparity})
        rows.append({"key": ["toy", fold, 0, "fair_demographic_parity", study.WEIGHTS["demographic_parity"][0]],
                     **metrics, "expected_NDCG@10": 0.75, "demographic_parity": 0.02 + shift})
    records.write_text("".join(json.dumps(row) + "\n" for row in rows))
    report = run_script("fairness_study.py", "report", str(records))
    line = next(row for row in report.split("### demographic_parity")[1].splitlines()
                if row.startswith(f"| {study.WEIGHTS['demographic_parity'][0]:g} |"))
    assert "-0.00300 (3 units" in line and "+0.0100 (3 units" in line, line
