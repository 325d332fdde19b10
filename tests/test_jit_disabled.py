"""The kernels give the same results interpreted (NUMBA_DISABLE_JIT=1) as compiled, so that coverage,
which sees only Python, measures the code that runs."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

#: every registered objective with its defaults, then configurations whose kernels take other paths; one
#: process per mode computes them all (starting one per objective would cost seconds each)
SCRIPT = """
import json, sys
import numpy as np
import numba
from plboost import metrics
from plboost.objectives import OBJECTIVES, PLRank, UMart
rng = np.random.default_rng(5)
sizes = rng.integers(1, 25, 30)
offsets = np.r_[0, np.cumsum(sizes)]
labels = rng.integers(0, 4, offsets[-1]).astype(float)
scores = np.round(rng.normal(scale=3, size=offsets[-1]), 2)
objectives = [cls() for cls in OBJECTIVES.values()] + [
    PLRank(top_k=5, n_permutations=3), PLRank(top_k=None, compress_contexts=False), UMart(window=1),
    UMart(window=1, lightgbm_arithmetic=True, hessian_floor=0)]
out = {"objectives": {}}
for obj in objectives:
    grad, hess = obj.gradients(scores, labels, offsets)
    out["objectives"].setdefault(obj.name, {})[repr(obj)] = [grad.tolist(), hess.tolist()]
values = metrics.evaluate(scores, labels, offsets=offsets, per_query=True)
out["metrics"] = {k: np.nan_to_num(v).tolist() for k, v in values.items() if k != "conventions"}
out["jit"] = not numba.config.DISABLE_JIT
print(json.dumps(out))
"""


def run(disable_jit: bool) -> dict:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0")
    completed = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(completed.stdout)


@pytest.fixture(scope="module")
def compiled_and_interpreted():
    compiled, interpreted = run(False), run(True)
    assert compiled.pop("jit") is True and interpreted.pop("jit") is False
    return compiled, interpreted


def test_interpreted_kernels_agree_with_compiled_ones(compiled_and_interpreted, objective_class):
    compiled, interpreted = (results["objectives"][objective_class.name] for results in compiled_and_interpreted)
    assert compiled.keys() == interpreted.keys()
    for name in compiled:
        for a, b, what in zip(compiled[name], interpreted[name], ("gradient", "hessian"), strict=True):
            np.testing.assert_allclose(b, a, rtol=2e-6, atol=1e-7, err_msg=f"{name} {what}")


def test_interpreted_metrics_agree_with_compiled_ones(compiled_and_interpreted):
    compiled, interpreted = (results["metrics"] for results in compiled_and_interpreted)
    assert compiled.keys() == interpreted.keys()
    for metric, values in compiled.items():
        np.testing.assert_allclose(interpreted[metric], values, rtol=1e-12, err_msg=metric)
