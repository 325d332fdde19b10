"""The scripts in scripts/ run end to end on small settings (their figures are in docs/benchmarks.md)."""

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def run_script(name, *args):
    completed = subprocess.run([sys.executable, str(SCRIPTS / name), *args], capture_output=True, text=True,
                               timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed.stdout


def test_bench_small_mode_prints_every_row():
    out = run_script("bench.py", "--small")
    for kernel in ("PLRank() grad+hess", "URank() grad+hess", "UMart() grad+hess", "PLPartition() grad+hess",
                   "PLLowerBound() grad+hess", "LightGBM lambdarank gradients", "top partition of 1000",
                   "LightGBM training with PLRank()", "XGBoost training with PLRank()"):
        assert kernel in out, kernel


def test_partition_accuracy_reports_each_step():
    out = run_script("partition_accuracy.py", "--cases", "3")
    assert "| 0.4 |" in out and "| 0.5 |" in out and "| 0.3 |" in out


def test_simulation_quick_mode_fills_its_table():
    out = run_script("pl_partition_simulation.py", "--quick")
    rows = [line for line in out.splitlines() if line.startswith("| 30 ") or line.startswith("| 100 ")]
    assert len(rows) == 4
    assert all("e-" in row for row in rows)


@pytest.mark.parametrize("study", ["plrank", "umart", "partition"])
def test_mq2008_study_on_one_fold(shared_data, study):
    out = run_script("mq2008_folds.py", study, str(shared_data / "MQ2008"), "--folds", "1")
    assert "NDCG@10" in out and "lambdarank [lightgbm]" in out
