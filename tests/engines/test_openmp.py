"""plboost's commands limit how long the engines' OpenMP threads spin, before an engine loads OpenMP (issue 27)."""

import os
import subprocess
import sys
from pathlib import Path

from plboost.engines.openmp import SPIN_COUNT, limit_spinning, spin_environment

MQ2008 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "MQ2008" / "Fold1"


def test_the_spin_count_is_added_only_where_the_user_chose_no_wait_policy():
    assert spin_environment({}) == {"GOMP_SPINCOUNT": str(SPIN_COUNT)}
    assert spin_environment({"OMP_WAIT_POLICY": "ACTIVE"}) == {}
    assert spin_environment({"GOMP_SPINCOUNT": "infinity"}) == {}
    environ = {"GOMP_SPINCOUNT": "5"}
    assert limit_spinning(environ) is False and environ == {"GOMP_SPINCOUNT": "5"}


def test_the_command_sets_the_spin_count_before_an_engine_is_imported(tmp_path):
    script = f"""
import builtins, os, sys
real_import = builtins.__import__
seen = []

def watching_import(name, *args, **kwargs):
    top = name.split(".")[0]
    if top in ("lightgbm", "xgboost") and top not in sys.modules:
        seen.append((top, os.environ.get("GOMP_SPINCOUNT")))
    return real_import(name, *args, **kwargs)

builtins.__import__ = watching_import
from plboost.cli import main
code = main(["train", "--train", {str(MQ2008 / "train.txt.gz")!r}, "--test", {str(MQ2008 / "test.txt.gz")!r},
             "--objective", "lambdarank", "--rounds", "2", "--quiet"])
print(code, seen)
"""
    environment = {key: value for key, value in os.environ.items() if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                          cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    code, seen = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert code == "0" and "('lightgbm', '1000')" in seen and "None" not in seen, done.stdout


def test_a_script_can_limit_spinning_before_it_imports_an_engine():
    """README: ``limit_spinning()`` as a script's first line; importing it must not load an engine (or OpenMP)."""
    script = """
import sys
from plboost.engines.openmp import limit_spinning
assert limit_spinning() and not {"lightgbm", "xgboost"} & set(sys.modules), sorted(sys.modules)
import lightgbm
assert not limit_spinning({})  # too late once an engine is loaded, whatever the environment
print("ok")
"""
    environment = {key: value for key, value in os.environ.items() if key not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
