"""scripts/bench.py's ``long`` section: one query of 10,000, 100,000 and 1,000,000 documents, on both engines.

Each (engine, objective, size) runs in a fresh process: it builds the query (20 features, labels 0-4 in
MSLR-WEB10K's shares, from the first feature plus noise) and the engine's matrix, compiles the objective, resets
the process's peak resident memory (``/proc/self/clear_refs``), trains one round and then ``rounds`` more, timing
each. It reports the median seconds of the later rounds and the peak resident memory training added, per document.
Beside every registered objective (its defaults): a custom squared-error objective (gradient s - y, hessian 1)
through the same engine interface, whose memory is what the engine's training costs with any custom objective, and
the engine's own ranker where it runs (LightGBM's lambdarank takes at most 10,000 documents a query; XGBoost's
rank:ndcg).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

LONG_SCRIPT = r"""
import json, sys, time
import numpy as np
engine, name, n, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 20)).astype(np.float32)
noisy = X[:, 0] + 0.7 * rng.normal(size=n)
labels = np.searchsorted(np.quantile(noisy, [0.52, 0.83, 0.96, 0.99]), noisy).astype(np.float64)

def squared_error(scores, data):
    return scores - labels, np.ones_like(scores)

from plboost.objectives import OBJECTIVES
objective = {"squared_error": squared_error}.get(name) or (OBJECTIVES[name]() if name in OBJECTIVES else name)
if hasattr(objective, "warm_up"):
    objective.warm_up()
stamps = []
if engine == "lightgbm":
    import lightgbm as lgb
    data = lgb.Dataset(X, labels, group=[n], params={"verbosity": -1}, free_raw_data=True).construct()
    params = {"objective": objective, "verbosity": -1, "num_leaves": 31, "learning_rate": 0.05, "seed": 0}
    def train():
        lgb.train(params, data, rounds + 1, callbacks=[lambda env: stamps.append(time.perf_counter())])
else:
    import xgboost as xgb
    data = xgb.DMatrix(X, labels, group=[n])
    params = {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
              "learning_rate": 0.05, "seed": 0, "min_child_weight": 1e-3}
    if isinstance(objective, str):
        params["objective"] = objective
    class Stamp(xgb.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            stamps.append(time.perf_counter())
            return False
    def train():
        xgb.train(params, data, rounds + 1, obj=None if isinstance(objective, str) else objective,
                  callbacks=[Stamp()])
del X
status = lambda key: next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key))
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak resident memory starts again from the current
before = status("VmRSS:")
train()
peak = status("VmHWM:")
seconds = [b - a for a, b in zip(stamps, stamps[1:])]
print(json.dumps({"seconds": sorted(seconds)[len(seconds) // 2], "bytes": 1024 * (peak - before)}))
"""

BASELINES = {"lightgbm": ("squared_error", "lambdarank"), "xgboost": ("squared_error", "rank:ndcg")}
#: LightGBM's lambdarank refuses queries above this length
LAMBDARANK_LIMIT = 10_000


def measure(engine: str, name: str, documents: int, rounds: int) -> dict:
    out = subprocess.run([sys.executable, "-c", LONG_SCRIPT, engine, name, str(documents), str(rounds)],
                         capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{engine} {name} {documents}: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def long_query_rows(sizes, rounds: int, repeats: int, objectives) -> list[dict]:
    """Per engine and size: seconds per round and training's added peak memory per document of each objective
    and baseline (medians of ``repeats`` fresh processes), the objectives' time against the engine's ranker
    (LightGBM's lambdarank where the query is within its limit) or the squared-error objective."""
    rows = []
    for engine, baselines in BASELINES.items():
        for documents in sizes:
            names = [b for b in baselines if not (b == "lambdarank" and documents > LAMBDARANK_LIMIT)]
            names += list(objectives)
            runs = {name: [measure(engine, name, documents, rounds) for _ in range(repeats)] for name in names}
            seconds = {name: statistics.median(r["seconds"] for r in results) for name, results in runs.items()}
            memory = {name: statistics.median(r["bytes"] for r in results) for name, results in runs.items()}
            baseline = names[1] if names[1] in baselines else names[0]
            for name in names:
                rows.append({"kernel": f"{engine} {name}, one query", "documents": documents, "queries": 1,
                             "ms": 1e3 * seconds[name], "baseline": baseline, "baseline ms": 1e3 * seconds[baseline],
                             "ratio": seconds[name] / seconds[baseline],
                             "note": f"{1e9 * seconds[name] / documents:.0f} ns per document per round; training "
                                     f"added {memory[name] / documents:.0f} bytes per document to the peak "
                                     f"(squared error: {memory['squared_error'] / documents:.0f})"})
    return rows
