"""scripts/ooc_memory.py runs end to end at tiny sizes (its figures are in docs/out_of_core.md)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ooc_memory.py"


@pytest.mark.engine
def test_quick_run_measures_each_size_and_reports_the_ratio(tmp_path):
    completed = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data-dir", str(tmp_path),
                                "--memory-budget", "64K"], capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    out = completed.stdout
    rows = [line for line in out.splitlines() if re.match(r"\| this \| [12]x \|", line)]
    assert len(rows) == 2, out
    for row in rows:
        peak = float(row.split("|")[5].replace(",", ""))
        assert 50 < peak < 4000, row  # MiB of a whole plboost process
    assert re.search(r"^\| this \| 1x -> 2x \| -?\d+ \| \d+ \| -?\d+\.\d\d \|$", out, re.MULTILINE), out
    assert "memory budget 64K" in out and "--memory-budget 64K" in out
    assert "plboost from" in completed.stderr and str(SCRIPT.parents[1]) in completed.stderr
