"""scripts/scaling_study.py runs end to end at tiny sizes (its figures are in docs/scaling.md)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "scaling_study.py"


@pytest.mark.engine
@pytest.mark.scikit_learn_in_subprocesses  # its Dask mode trains LightGBM's Dask ranker
def test_quick_study_measures_every_mode_and_reports_the_fits(tmp_path):
    completed = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data-dir", str(tmp_path)],
                               capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    for mode in ("in-memory", "out-of-core", "dask"):
        rows = [line for line in out.splitlines() if line.startswith(("| 1x |", "| 4x |")) and f"| {mode} |" in line]
        assert len(rows) == 2, (mode, out)
    for section in ("## Growth with the number of documents", "ratio to dense", "documents at 24 GiB",
                    "## Dask's overhead per iteration"):
        assert section in out, section
    assert any(line.startswith("| plrank | 1x, 4x |") for line in out.splitlines()), out

    # every measurement ran in its own process, with peaks of its own; the results are kept for --from-json
    saved = tmp_path / "u4000" / "results.json"
    results = json.loads(saved.read_text())["results"]
    assert len(results) == 6
    for result in results:
        assert result["peak_bytes"] >= result["baseline_bytes"] > 0
        assert result["rounds"] == (3 if result["mode"] == "dask" else 2)
    dask = [r for r in results if r["mode"] == "dask"]
    assert all(len(r["worker_bytes"]) == 2 and r["peak_bytes"] > r["client_bytes"] for r in dask)
    again = subprocess.run([sys.executable, str(SCRIPT), "--from-json", str(saved)], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0 and again.stdout == out

    # two blocks of half a unit per size step (Dask reads them), and one file per size
    files = sorted(p.name for p in (tmp_path / "u4000").glob("*.txt"))
    assert files == [f"block-{i:03d}.txt" for i in range(8)] + ["train-1x.txt", "train-4x.txt"]
