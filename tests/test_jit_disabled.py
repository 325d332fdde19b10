"""The kernels give the same results interpreted (NUMBA_DISABLE_JIT=1) as compiled, so that coverage,
which sees only Python, measures the code that runs."""

import json
import os
import subprocess
import sys

import numpy as np

SCRIPT = """
import json, sys
import numpy as np
import numba
from plboost import metrics
from plboost.objectives import PLLowerBound, PLPartition, PLRank, UMart, URank
rng = np.random.default_rng(5)
sizes = rng.integers(1, 25, 30)
offsets = np.r_[0, np.cumsum(sizes)]
labels = rng.integers(0, 4, offsets[-1]).astype(float)
scores = np.round(rng.normal(scale=3, size=offsets[-1]), 2)
objectives = [PLRank(top_k=5, n_permutations=3), PLRank(top_k=None, compress_contexts=False), URank(),
              UMart(window=1), UMart(window=2), UMart(window=1, lightgbm_arithmetic=True, hessian_floor=0),
              PLPartition(), PLLowerBound()]
out = {}
for obj in objectives:
    grad, hess = obj.gradients(scores, labels, offsets)
    out[repr(obj)] = [grad.tolist(), hess.tolist()]
values = metrics.evaluate(scores, labels, offsets=offsets, per_query=True)
out["metrics"] = {k: np.nan_to_num(v).tolist() for k, v in values.items() if k != "conventions"}
out["jit"] = not numba.config.DISABLE_JIT
print(json.dumps(out))
"""


def run(disable_jit: bool) -> dict:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0")
    completed = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return json.loads(completed.stdout)


def test_interpreted_kernels_agree_with_compiled_ones():
    compiled, interpreted = run(False), run(True)
    assert compiled.pop("jit") is True and interpreted.pop("jit") is False
    assert compiled.keys() == interpreted.keys()
    for name in compiled:
        if name == "metrics":
            for metric, values in compiled[name].items():
                np.testing.assert_allclose(interpreted[name][metric], values, rtol=1e-12, err_msg=metric)
            continue
        for a, b, what in zip(compiled[name], interpreted[name], ("gradient", "hessian"), strict=True):
            np.testing.assert_allclose(b, a, rtol=2e-6, atol=1e-7, err_msg=f"{name} {what}")
