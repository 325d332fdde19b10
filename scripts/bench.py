"""plboost's benchmarks, each a ratio to a baseline measured in the same run (runs alternated A/B/A/B,
medians compared, so that drifts of the machine's speed hit both sides alike). Prints Markdown tables.

    python scripts/bench.py                      # everything at full size (MSLR-like: 1.2M+ documents)
    python scripts/bench.py --small              # tiny sizes: checks that the code runs (CI does)
    python scripts/bench.py --only kernels memory
    python scripts/bench.py --only rounds xgboost-rounds --objectives yetirank lambdaloss  # against the baseline
    python scripts/bench.py --only rounds --queries 2230    # the same at about 300K documents

Sections:

* kernels: one gradient+hessian call of every objective as LightGBM makes it at each round
  (``obj(scores, lgb.Dataset)``), against ``np.exp`` over the same scores; uMart against LightGBM's own
  lambdarank gradients (a lambdarank minus a regression ``Booster.update()``); PL-Partition against
  PLRank, also as the top partition grows from 10 to 1000 documents; PL-Rank-3 (10 and 100 rankings per
  query) against PLRank(top_k=10) on about 90K documents.
* engines: training time per tree with PLRank against LightGBM lambdarank and XGBoost rank:ndcg.
* rounds: LightGBM seconds per boosting round of every registered objective (its defaults) against
  lambdarank, on 1M MSLR-like documents (136 features): every configuration once per repeat, in an order
  rotated from repeat to repeat.
* fairness: the same for FairPLRank3 (each disparity, at a weight that moves the policy) against PL-Rank-3.
* xgboost-rounds: the same for XGBoost (hist, leaf-wise trees of 31 leaves) against its rank:ndcg.
* memory: peak RSS of a fresh process training LightGBM with PLRank(n_permutations=3) against lambdarank,
  on a binned dataset saved by LightGBM (the raw features never enter the process).
* loading: an MSLR-format file (136 features, 363 MB at full size) parsed by plboost, by XGBoost's own
  libsvm reader and by scikit-learn's ``load_svmlight_file``; the cached reload; the parse's peak memory
  in a fresh process; the first load's compile time (scripts/_bench_parser.py).
* scaling: kernel time against documents per query (10 to 10,000), per document; uMart per pair.
* leaves: LightGBM training time per tree with PLRank's exact Newton leaf values against the diagonal
  ones (``leaf_values="exact"`` against the default), and the share of the rewrite spent finding leaves.
* first-call: an objective's first gradient call in a fresh process with an empty Numba cache (a fresh
  install), against the same call with the kernels cached.
* compile: where that time goes: each kernel's compile time (Numba's compile events) in one fresh process.
* startup: ``plboost --help`` and ``import plboost.objectives`` in fresh processes against a bare interpreter.
* long: one query of 10,000, 100,000 and 1,000,000 documents (20 features) on LightGBM and XGBoost: each
  objective's seconds per round and the peak memory training adds per document, in fresh processes, against the
  engine's ranker (lambdarank up to its limit of 10,000 documents a query) and a squared-error custom objective
  (scripts/_bench_long.py). ``--small``: 2,000 documents, ListNet.
* significance: the paired randomization test of ``plboost compare``'s tables (10,000 sign flips) on 50 to
  5,000 queries against SciPy's ``permutation_test`` of paired samples, the same test.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import statistics
import sys
import time

import numba
import numpy as np

from plboost.cli import _positive_int  # counts of at least 1: 0 would read as 'not given'
from plboost.data import make_synthetic

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bench_leaves import leaf_rows  # noqa: E402  (sections in modules of their own)
from _bench_long import long_query_rows  # noqa: E402
from _bench_parser import parser_rows  # noqa: E402
from _bench_partition import partition_rows, print_table  # noqa: E402
from plboost.objectives import OBJECTIVES, PLRank, UMart


def alternate(a, b, repeats: int) -> tuple[float, float]:
    """Median seconds of ``a()`` and ``b()`` over ``repeats`` alternated runs (after one warm-up each)."""
    a(), b()
    times_a, times_b = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        a()
        times_a.append(time.perf_counter() - start)
        start = time.perf_counter()
        b()
        times_b.append(time.perf_counter() - start)
    return statistics.median(times_a), statistics.median(times_b)


def kernel_rows(n_queries: int, repeats: int) -> list[dict]:
    data = make_synthetic(n_queries=n_queries, n_features=1, docs_per_query=(20, 500), seed=0)
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    dataset = data.to_lightgbm(params={"verbosity": -1}).construct()
    # every registered objective with its defaults, and the settings of the performance targets
    objectives = [cls() for cls in OBJECTIVES.values()] + [PLRank(top_k=10, n_permutations=3), UMart(window=1),
                                                          UMart(window=10)]
    rows = []
    for obj in objectives:
        obj.warm_up()
        start = time.perf_counter()
        obj(scores, dataset)  # the first call on a dataset also prepares its state
        first = time.perf_counter() - start
        kernel, baseline = alternate(functools.partial(obj, scores, dataset), lambda: np.exp(scores), repeats)
        note = f"first call on the dataset: {1e3 * first:.0f} ms"
        if isinstance(obj, PLRank):
            note += f"; compression {obj.state(data.labels, data.offsets).compression_ratio:.4f}"
        rows.append({"kernel": f"{_short(obj)} grad+hess", "documents": data.n_docs, "queries": data.n_queries,
                     "ms": 1e3 * kernel, "baseline": "np.exp", "baseline ms": 1e3 * baseline,
                     "ratio": kernel / baseline, "note": note})
    return rows


def lambdarank_rows(n_queries: int, repeats: int) -> list[dict]:
    """uMart's gradient call against LightGBM's own lambdarank gradients on the same data.

    LightGBM does not expose its gradient time; it is estimated as the time of one lambdarank iteration
    (``Booster.update()``) minus that of one regression iteration, same data, 1 feature, 2-leaf trees, so
    that the rest of an iteration costs both the same; boosters are built before timing.
    """
    import lightgbm as lgb

    data = make_synthetic(n_queries=n_queries, n_features=1, docs_per_query=(20, 500), seed=0)
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    dataset = data.to_lightgbm(params={"verbosity": -1}).construct()
    boosters = {name: lgb.Booster({"objective": name, "num_leaves": 2, "verbosity": -1}, dataset)
                for name in ("lambdarank", "regression")}
    lambdarank, regression = alternate(boosters["lambdarank"].update, boosters["regression"].update, repeats)
    builtin = lambdarank - regression
    rows = []
    for window in (1, 2):
        obj = UMart(window=window)
        ours, _ = alternate(functools.partial(obj, scores, dataset), lambda: None, repeats)
        rows.append({"kernel": f"{_short(obj)} grad+hess", "documents": data.n_docs, "queries": data.n_queries,
                     "ms": 1e3 * ours, "baseline": "LightGBM lambdarank gradients", "baseline ms": 1e3 * builtin,
                     "ratio": ours / builtin,
                     "note": f"baseline: lambdarank {1e3 * lambdarank:.1f} ms minus regression "
                             f"{1e3 * regression:.1f} ms per iteration"})
    return rows


def pl_rank3_rows(n_queries: int, repeats: int) -> list[dict]:
    """PL-Rank-3's gradient call against PLRank(top_k=10)'s on the same data, both through
    ``.gradients(scores, labels, offsets)`` (each call prepares nothing: states are cached per dataset).

    Queries of 20-500 documents, MSLR-like label shares and standard-normal scores, as the kernel rows; about
    130 documents per query, so 700 queries are about 90K documents. PL-Rank-3 costs O(N (n + k log k)) per
    query (N rankings), so its ratio grows about linearly in ``n_samples``.
    """
    from plboost.objectives import PLRank3

    data = make_synthetic(n_queries=n_queries, n_features=1, docs_per_query=(20, 500), seed=0)
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    baseline = PLRank(top_k=10)
    rows = []
    for obj in (PLRank3(top_k=10, n_samples=10), PLRank3(top_k=10, n_samples=100), PLRank3(top_k=None, n_samples=10)):
        ours, theirs = alternate(functools.partial(obj.gradients, scores, data.labels, data.offsets),
                                 functools.partial(baseline.gradients, scores, data.labels, data.offsets), repeats)
        rows.append({"kernel": f"{_short(obj)} grad+hess", "documents": data.n_docs, "queries": data.n_queries,
                     "ms": 1e3 * ours, "baseline": "PLRank(top_k=10)", "baseline ms": 1e3 * theirs,
                     "ratio": ours / theirs, "note": f"{1e9 * ours / (data.n_docs * obj.n_samples):.1f} ns "
                                                     "per document and ranking"})
    return rows


def _short(obj) -> str:
    """The objective with only the parameters that differ from their defaults."""
    from plboost._values import plain_value

    defaults = type(obj)().get_params()
    changed = ", ".join(f"{k}=<{len(v):,} values>" if isinstance(v, np.ndarray) else f"{k}={v!r}"
                        for k, v in obj.get_params().items() if plain_value(v) != plain_value(defaults[k]))
    return f"{type(obj).__name__}({changed})"


def engine_rows(n_queries: int, rounds: int, repeats: int) -> list[dict]:
    """Training time per tree with PLRank against the engine's own lambdarank, same data and parameters."""
    import lightgbm as lgb
    import xgboost as xgb

    data = make_synthetic(n_queries=n_queries, seed=1)
    tree = {"learning_rate": 0.1, "num_leaves": 31}
    lgb_set = data.to_lightgbm(params={"verbosity": -1}).construct()
    xgb_matrix = data.to_xgboost()
    xgb_params = {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
                  "learning_rate": 0.1}

    def lightgbm(objective):
        return lambda: lgb.train({"objective": objective, "verbosity": -1, **tree}, lgb_set, rounds)

    def xgboost(objective):
        if isinstance(objective, str):
            return lambda: xgb.train({**xgb_params, "objective": objective}, xgb_matrix, rounds)
        return lambda: xgb.train(xgb_params, xgb_matrix, rounds, obj=objective)

    rows = []
    for engine, train, baseline in (("LightGBM", lightgbm, "lambdarank"), ("XGBoost", xgboost, "rank:ndcg")):
        ours, theirs = alternate(train(PLRank(top_k=10, n_permutations=1)), train(baseline), repeats)
        rows.append({"kernel": f"{engine} training with PLRank(), per tree", "documents": data.n_docs,
                     "queries": data.n_queries, "ms": 1e3 * ours / rounds, "baseline": f"{engine} {baseline}",
                     "baseline ms": 1e3 * theirs / rounds, "ratio": ours / theirs,
                     "note": f"{rounds} rounds, 31 leaves, {data.n_features} features"})
    return rows


def round_robin(runs: dict, repeats: int) -> dict:
    """Median seconds of each of ``runs`` (name -> callable), every one once per repeat, the order rotated
    by one from repeat to repeat so that drifts of the machine hit all alike."""
    names = list(runs)
    seconds = {name: [] for name in names}
    for repeat in range(repeats):
        shift = repeat % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            runs[name]()
            seconds[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in seconds.items()}


def histogram_rows(booster) -> int:
    """Rows LightGBM builds histograms of: at each split, the smaller child's (the larger one's histogram is
    the parent's minus the smaller's), summed over the trees. A round's cost beyond the gradients follows it."""
    def smaller_children(node) -> int:
        if "leaf_index" in node:
            return 0
        left, right = node["left_child"], node["right_child"]
        counts = [child.get("internal_count", child.get("leaf_count", 0)) for child in (left, right)]
        return min(counts) + smaller_children(left) + smaller_children(right)

    return sum(smaller_children(tree["tree_structure"]) for tree in booster.dump_model()["tree_info"])


def round_rows(n_queries: int, rounds: int, repeats: int, names=tuple(OBJECTIVES)) -> list[dict]:
    """LightGBM seconds per round of every registered objective against lambdarank, the same data and trees.

    A round is the objective's gradient call plus LightGBM's tree, whose cost follows the rows it builds
    histograms of (:func:`histogram_rows`), which depend on the gradients; both are in the note."""
    data = make_synthetic(n_queries=n_queries, n_features=136, docs_per_query=(20, 500), seed=3)
    objectives = {"lambdarank": "lambdarank", **{name: OBJECTIVES[name]() for name in names}}
    return _lightgbm_round_rows(data, objectives, "lambdarank", rounds, repeats)


def fairness_round_rows(n_queries: int, rounds: int, repeats: int) -> list[dict]:
    """LightGBM seconds per round of FairPLRank3 (each disparity at a weight that moves the policy) against
    PL-Rank-3's, the same data (groups: one feature above its median) and trees."""
    from plboost.objectives import FairPLRank3, PLRank3

    data = make_synthetic(n_queries=n_queries, n_features=136, docs_per_query=(20, 500), seed=3)
    groups = (data.X[:, 1] > np.median(data.X[:, 1])).astype(np.int64)
    objectives = {"pl_rank3": PLRank3()}
    for disparity, weight in (("demographic_parity", 10.0), ("disparate_treatment", 1.0), ("individual", 1.0),
                              ("expected_exposure", 1.0)):
        objectives[f"fair {disparity}"] = FairPLRank3(disparity=disparity, fairness_weight=weight, groups=groups)
    return _lightgbm_round_rows(data, objectives, "pl_rank3", rounds, repeats)


def _lightgbm_round_rows(data, objectives: dict, baseline: str, rounds: int, repeats: int) -> list[dict]:
    import lightgbm as lgb

    dataset = data.to_lightgbm(params={"verbosity": -1}).construct()
    n_docs, n_queries = data.n_docs, data.n_queries
    del data  # the binned dataset is all that training reads
    tree = {"learning_rate": 0.1, "num_leaves": 31, "verbosity": -1}
    scores = np.random.default_rng(0).normal(size=n_docs)
    gradient_ms = {}
    for name, objective in objectives.items():
        if not isinstance(objective, str):
            objective.warm_up()
            gradient_ms[name] = 1e3 * alternate(functools.partial(objective, scores, dataset), lambda: None, 5)[0]
        lgb.train({**tree, "objective": objective}, dataset, 1)  # LightGBM's first-round set-up, off the clock
    boosters = {}

    def run(name):
        boosters[name] = lgb.train({**tree, "objective": objectives[name]}, dataset, rounds)

    seconds = round_robin({name: functools.partial(run, name) for name in objectives}, repeats)
    base, base_rows = seconds[baseline], histogram_rows(boosters[baseline])
    rows = []
    for name, objective in objectives.items():
        histogram = histogram_rows(boosters[name])
        note = (f"{rounds} rounds, 31 leaves, 136 features, median of {repeats}; histogram rows "
                f"{histogram / base_rows:.2f}x {baseline}'s")
        if name in gradient_ms:
            note += f"; gradient call {gradient_ms[name]:.1f} ms"
        rows.append({"kernel": f"LightGBM round, {name if isinstance(objective, str) else _short(objective)}",
                     "documents": n_docs, "queries": n_queries, "ms": 1e3 * seconds[name] / rounds,
                     "baseline": f"LightGBM {baseline}", "baseline ms": 1e3 * base / rounds,
                     "ratio": seconds[name] / base, "note": note})
    return rows


def xgboost_round_rows(n_queries: int, rounds: int, repeats: int, names=tuple(OBJECTIVES)) -> list[dict]:
    """XGBoost seconds per round of every registered objective against its own rank:ndcg (its defaults), on the
    data of :func:`round_rows`, leaf-wise trees of 31 leaves as LightGBM's (hist, lossguide)."""
    import xgboost as xgb

    data = make_synthetic(n_queries=n_queries, n_features=136, docs_per_query=(20, 500), seed=3)
    matrix = data.to_xgboost()
    n_docs = data.n_docs
    del data
    tree = {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": 31, "max_depth": 0,
            "learning_rate": 0.1, "verbosity": 0}
    objectives = {"rank:ndcg": "rank:ndcg", **{name: OBJECTIVES[name]() for name in names}}

    def train(name, n_rounds):
        objective = objectives[name]
        if isinstance(objective, str):
            return xgb.train({**tree, "objective": objective}, matrix, n_rounds)
        return xgb.train(tree, matrix, n_rounds, obj=objective)

    for name, objective in objectives.items():
        if not isinstance(objective, str):
            objective.warm_up()
        train(name, 1)  # XGBoost's first-round set-up (quantiles), off the clock
    seconds = round_robin({name: functools.partial(train, name, rounds) for name in objectives}, repeats)
    base = seconds["rank:ndcg"]
    return [{"kernel": f"XGBoost round, {'rank:ndcg' if name == 'rank:ndcg' else _short(objective)}",
             "documents": n_docs, "queries": n_queries, "ms": 1e3 * seconds[name] / rounds,
             "baseline": "XGBoost rank:ndcg", "baseline ms": 1e3 * base / rounds, "ratio": seconds[name] / base,
             "note": f"{rounds} rounds, 31 leaves (hist, lossguide), 136 features, median of {repeats}"}
            for name, objective in objectives.items()]


MEMORY_SCRIPT = """
import sys
import lightgbm as lgb
from plboost.objectives import PLRank
path, objective = sys.argv[1], sys.argv[2]
dataset = lgb.Dataset(path, params={"verbosity": -1}).construct()
obj = PLRank(top_k=10, n_permutations=3) if objective == "plrank" else objective
if objective == "plrank":
    obj.warm_up()
lgb.train({"objective": obj, "verbosity": -1, "num_leaves": 31, "learning_rate": 0.1}, dataset, 20)
# VmHWM, the peak RSS of this process image (ru_maxrss would include the parent's, inherited through exec)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(dataset.num_data(), peak)
"""


def memory_rows(n_queries: int, repeats: int, directory) -> list[dict]:
    """Peak RSS of a fresh process that loads a binned LightGBM dataset (MSLR-like, 136 features) and
    trains 20 rounds: the raw features never enter it, so the peak is the engine's and the objective's."""
    import subprocess
    from pathlib import Path

    data = make_synthetic(n_queries=n_queries, n_features=136, docs_per_query=(20, 500), seed=2)
    path = Path(directory) / "memory.bin"
    data.to_lightgbm(params={"verbosity": -1}).save_binary(str(path))
    del data
    peaks = {"plrank": [], "lambdarank": []}
    documents = 0
    for _ in range(repeats):
        for objective in peaks:
            out = subprocess.run([sys.executable, "-c", MEMORY_SCRIPT, str(path), objective],
                                 capture_output=True, text=True, check=True).stdout.split()
            documents, kib = int(out[0]), int(out[1])
            peaks[objective].append(kib / 1024)
    ours, theirs = statistics.median(peaks["plrank"]), statistics.median(peaks["lambdarank"])
    return [{"kernel": "peak RSS, LightGBM training with PLRank(n_permutations=3)", "documents": documents,
             "queries": n_queries, "ms": f"{ours:.0f} MiB", "baseline": "LightGBM lambdarank",
             "baseline ms": f"{theirs:.0f} MiB", "ratio": ours / theirs,
             "note": f"fresh process each, binned dataset from a file, 20 rounds, medians of {repeats}"}]


def scaling_rows(total: int, repeats: int) -> list[dict]:
    """Kernel time per document as queries grow from 10 to 10,000 documents (about ``total`` in all)."""
    rng = np.random.default_rng(4)
    rows = []
    for size in (10, 100, 1000, 10000):
        n_queries = max(1, total // size)
        labels = rng.choice(5, size=n_queries * size, p=[0.52, 0.31, 0.13, 0.03, 0.01]).astype(float)
        offsets = np.arange(n_queries + 1, dtype=np.int64) * size
        scores = rng.normal(size=labels.size)
        for obj in [cls() for cls in OBJECTIVES.values()]:
            seconds, _ = alternate(functools.partial(obj.gradients, scores, labels, offsets), lambda: None, repeats)
            per_doc = 1e9 * seconds / labels.size
            note = f"{per_doc:.0f} ns per document"
            if isinstance(obj, UMart):
                pairs = n_queries * sum(size - 1 - i for i in range(min(size - 1, 30)))
                note += f"; {1e9 * seconds / pairs:.2f} ns per pair visited ({pairs} pairs, truncation 30)"
            rows.append({"kernel": f"{_short(obj)}, queries of {size} documents", "documents": labels.size,
                         "queries": n_queries, "ms": 1e3 * seconds, "baseline": "", "baseline ms": "",
                         "ratio": "", "note": note})
    return rows


FIRST_CALL_SCRIPT = """
import sys, time
import numpy as np
from plboost.data import make_synthetic
from plboost.objectives import get_objective
data = make_synthetic(n_queries=50, n_features=1, seed=0)
scores = np.random.default_rng(0).normal(size=data.n_docs)
for name in sys.argv[1:]:
    obj = get_objective(name)
    start = time.perf_counter()
    obj.gradients(scores, data.labels, data.offsets)
    print(time.perf_counter() - start)
"""

FIRST_CALL_OBJECTIVES = tuple(OBJECTIVES)  # registered names
#: --small: the two that compile fastest (1.6 and 3.3 s of the ten's 35 s), which take the same code path
SMALL_FIRST_CALL_OBJECTIVES = ("listnet", "urank")


def first_call_rows(repeats: int, alone=FIRST_CALL_OBJECTIVES, together=FIRST_CALL_OBJECTIVES) -> list[dict]:
    """The first gradient call of a fresh install: a new process with an empty Numba cache, against the same
    call in a new process that finds the kernels cached (50 queries). Each objective of ``alone`` alone, then
    those of ``together`` in one process (kernels they share compile once). Medians of ``repeats`` fresh caches."""
    import subprocess
    import tempfile

    def run(names, cache_dir):
        env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
        out = subprocess.run([sys.executable, "-c", FIRST_CALL_SCRIPT, *names], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        return [float(x) for x in out]

    rows = []
    for names in [[name] for name in alone] + [list(together)]:
        cold, warm = [], []
        for _ in range(repeats):
            with tempfile.TemporaryDirectory(prefix="plboost-numba-") as cache_dir:
                cold.append(sum(run(names, cache_dir)))
                warm.append(sum(run(names, cache_dir)))
        what = names[0] if len(names) == 1 else (f"all {len(names)} objectives, one process" if
                                                  len(names) == len(FIRST_CALL_OBJECTIVES) else
                                                  f"{', '.join(names)}, one process")
        rows.append({"kernel": f"first call of {what}, empty Numba cache", "documents": "", "queries": 50,
                     "ms": 1e3 * statistics.median(cold), "baseline": "the same, kernels cached",
                     "baseline ms": 1e3 * statistics.median(warm),
                     "ratio": statistics.median(cold) / statistics.median(warm),
                     "note": f"fresh process each; medians of {repeats}"})
    return rows


COMPILE_SCRIPT = """
import json, sys, time
from numba.core import event
import numpy as np
from plboost.data import make_synthetic
from plboost.objectives import get_objective
data = make_synthetic(n_queries=50, n_features=1, seed=0)
scores = np.random.default_rng(0).normal(size=data.n_docs)
with event.install_recorder("numba:compile") as recorder:
    for name in sys.argv[1:]:
        get_objective(name).gradients(scores, data.labels, data.offsets)
started, seconds = {}, {}
for stamp, item in recorder.buffer:
    function = item.data["dispatcher"].py_func
    key = f"{function.__module__}.{function.__qualname__}"
    if item.is_start:
        started[key] = stamp
    else:
        seconds[key] = seconds.get(key, 0.0) + stamp - started.pop(key)
print(json.dumps(seconds))
"""


def compile_rows(top: int, objectives=FIRST_CALL_OBJECTIVES) -> list[dict]:
    """Where a fresh install's first call spends its time: each kernel's compilation (Numba's compile events,
    inclusive of the helpers it compiles first) when each of ``objectives`` (default: every registered one) is
    called once, in order, in a fresh process with an empty Numba cache (50 queries)."""
    import json
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="plboost-numba-") as cache_dir:
        start = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT, *objectives], check=True, text=True,
                             capture_output=True, env={**os.environ, "NUMBA_CACHE_DIR": cache_dir}).stdout
        total = time.perf_counter() - start
    seconds = json.loads(out.strip().splitlines()[-1])
    own = {k: v for k, v in seconds.items() if k.startswith("plboost.")}
    rows = [{"kernel": f"compile {name.removeprefix('plboost.')}", "documents": "", "queries": 50, "ms": 1e3 * value,
             "baseline": "", "baseline ms": "", "ratio": "", "note": "inclusive of the helpers it compiles first"}
            for name, value in sorted(own.items(), key=lambda item: -item[1])[:top]]
    what = f"all {len(objectives)} objectives' first calls" if len(objectives) > 1 else f"{objectives[0]}'s first call"
    rows.append({"kernel": f"the whole process: {what}",
                 "documents": "", "queries": 50, "ms": 1e3 * total, "baseline": "", "baseline ms": "", "ratio": "",
                 "note": f"{len(own)} plboost kernels and helpers compiled; Numba's own: "
                         f"{1e3 * sum(v for k, v in seconds.items() if not k.startswith('plboost.')):.0f} ms"})
    return rows


def startup_rows(repeats: int) -> list[dict]:
    """What a command costs before it does anything: fresh processes of ``plboost --help`` and of importing the
    objectives, against a fresh interpreter that imports nothing (medians of ``repeats``)."""
    import subprocess

    def fresh(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        return time.perf_counter() - start

    cases = {"plboost --help": "import sys; from plboost.__main__ import run; sys.argv = ['plboost', '--help']; run()",
             "import plboost.objectives": "import plboost.objectives",
             "import plboost.sklearn": "import plboost.sklearn"}
    rows = []
    for what, code in cases.items():
        ours, bare = [], []
        for _ in range(repeats):
            ours.append(fresh(code))
            bare.append(fresh("pass"))
        rows.append({"kernel": what, "documents": "", "queries": "", "ms": 1e3 * statistics.median(ours),
                     "baseline": "python -c pass", "baseline ms": 1e3 * statistics.median(bare),
                     "ratio": statistics.median(ours) / statistics.median(bare),
                     "note": f"fresh process each, alternated; medians of {repeats}"})
    return rows


def significance_rows(sizes, repeats: int) -> list[dict]:
    from scipy import stats

    from plboost.significance import randomization_p_value

    def scipy_test(differences):
        return stats.permutation_test((differences, np.zeros_like(differences)),
                                      lambda x, y, axis: np.mean(x - y, axis), permutation_type="samples",
                                      vectorized=True, n_resamples=10_000, alternative="two-sided",
                                      rng=np.random.default_rng(0)).pvalue

    rows = []
    for n_queries in sizes:
        differences = np.random.default_rng(n_queries).normal(0.005, 0.1, n_queries)
        ours, theirs = alternate(functools.partial(randomization_p_value, differences, 10_000),
                                 functools.partial(scipy_test, differences), repeats)
        p_ours, p_scipy = randomization_p_value(differences, 10_000), scipy_test(differences)
        rows.append({"kernel": "paired randomization test, 10,000 sign flips", "documents": "", "queries": n_queries,
                     "ms": 1e3 * ours, "baseline": "scipy.stats.permutation_test", "baseline ms": 1e3 * theirs,
                     "ratio": ours / theirs, "note": f"p {p_ours:.4f} against {p_scipy:.4f}"})
    return rows


SECTIONS = ("kernels", "engines", "rounds", "fairness", "xgboost-rounds", "memory", "loading", "scaling", "leaves",
            "first-call", "compile", "startup", "significance", "long")


def main(argv=None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes, to check that the code runs")
    parser.add_argument("--repeats", type=_positive_int, default=None, help="alternated runs per measurement")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS, help="sections to run")
    parser.add_argument("--objectives", nargs="+", choices=tuple(OBJECTIVES), default=tuple(OBJECTIVES),
                        help="rounds, xgboost-rounds and long: these registered objectives (default: all) against the "
                             "engine's own")
    parser.add_argument("--queries", type=_positive_int, default=None,
                        help="rounds and xgboost-rounds: this many MSLR-like queries (default 7,460: about 1M "
                             "documents; 2,230: about 300K), as the ratios move with the size")
    args = parser.parse_args(argv)
    if args.queries and not {"rounds", "fairness", "xgboost-rounds"} & set(args.only):
        parser.error("--queries sizes only the rounds, fairness and xgboost-rounds sections: add one of them to "
                     "--only")
    small = args.small
    repeats = args.repeats or (3 if small else 21)
    few = args.repeats or (1 if small else 5)
    print(f"# plboost benchmarks: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numba {numba.__version__} ({numba.get_num_threads()} threads), numpy {np.__version__}, "
          f"python {platform.python_version()}")
    sections = {
        "kernels": lambda: (kernel_rows(50 if small else 10_000, repeats)
                            + lambdarank_rows(50 if small else 10_000, repeats)
                            + pl_rank3_rows(50 if small else 700, repeats)
                            + partition_rows(20_000 if small else 1_000_000, few)),
        "engines": lambda: engine_rows(30 if small else 3_000, 3 if small else 50, few),
        "rounds": lambda: round_rows(args.queries or (30 if small else 7_460), 3 if small else 20, few,
                                     args.objectives),
        "fairness": lambda: fairness_round_rows(args.queries or (30 if small else 7_460), 3 if small else 20, few),
        "xgboost-rounds": lambda: xgboost_round_rows(args.queries or (30 if small else 7_460), 3 if small else 20,
                                                     few, args.objectives),
        "memory": lambda: memory_rows(20 if small else 10_000, 1 if small else 3, scratch),
        "loading": lambda: parser_rows(2_000 if small else 207_000, scratch),
        "scaling": lambda: scaling_rows(20_000 if small else 1_000_000, few),
        "leaves": lambda: leaf_rows(30 if small else 3_000, 3 if small else 50, few),
        # --small: one objective alone and two together (the code path of each), not all: each compiles anew
        "first-call": lambda: (first_call_rows(1, SMALL_FIRST_CALL_OBJECTIVES[:1], SMALL_FIRST_CALL_OBJECTIVES)
                               if small else first_call_rows(3)),
        "compile": lambda: compile_rows(5, SMALL_FIRST_CALL_OBJECTIVES[:1]) if small else compile_rows(25),
        "startup": lambda: startup_rows(1 if small else 15),
        "significance": lambda: significance_rows((50, 300) if small else (50, 784, 5_000), few),
        "long": lambda: (long_query_rows((2_000,), 2, 1, ("listnet",)) if small
                         else long_query_rows((10_000, 100_000, 1_000_000), 5, args.repeats or 1, args.objectives)),
    }
    with tempfile.TemporaryDirectory(prefix="plboost-bench-") as scratch:
        for name in args.only:
            print(f"\n## {name}\n", flush=True)
            print_table(sections[name]())
    return 0


if __name__ == "__main__":
    sys.exit(main())
