"""Benchmarks of plboost's kernels, each as a ratio to a baseline timed in the same run.

    python scripts/bench.py             # full size: about 1.2M documents in 10K queries (MSLR-like)
    python scripts/bench.py --small     # a few thousand documents: checks that the code runs (CI)

Kernels: one gradient+hessian call of PLRank (top_k=10; 1 and 3 permutations), uRank and uMart (windows
1, 2, 10) as LightGBM makes it at every boosting round (``obj(scores, lgb.Dataset)``), on synthetic
labels and standard-normal scores,
against ``np.exp`` over the same score array. Engines: training time per tree with PLRank against the
engine's own lambdarank (LightGBM ``lambdarank``, XGBoost ``rank:ndcg``), same data and parameters. Runs are alternated A/B/A/B and the
medians compared, so that drifts of the machine's speed hit both sides alike. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numba
import numpy as np

from plboost.data import make_synthetic
from plboost.objectives import PLLowerBound, PLPartition, PLRank, UMart, URank


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
    objectives = [PLRank(top_k=10, n_permutations=1), PLRank(top_k=10, n_permutations=3), URank(),
                  UMart(window=1), UMart(window=2), UMart(window=10), PLPartition(), PLLowerBound()]
    rows = []
    for obj in objectives:
        obj.warm_up()
        start = time.perf_counter()
        obj(scores, dataset)  # the first call on a dataset also prepares its state
        first = time.perf_counter() - start
        kernel, baseline = alternate(lambda: obj(scores, dataset), lambda: np.exp(scores), repeats)
        note = f"first call on the dataset: {1e3 * first:.0f} ms"
        if isinstance(obj, PLRank):
            note += f"; compression {obj.state(data.labels, data.offsets).compression_ratio:.4f}"
        rows.append({"kernel": f"{_short(obj)} grad+hess", "documents": data.n_docs, "queries": data.n_queries,
                     "ms": 1e3 * kernel, "baseline": "np.exp", "baseline ms": 1e3 * baseline,
                     "ratio": kernel / baseline, "note": note})
    return rows


def partition_rows(n_docs: int, repeats: int) -> list[dict]:
    """PL-Partition against PLRank as the top partition grows: queries of k relevant documents above
    1000 irrelevant ones (k = 10, 100, 1000), about ``n_docs`` documents in all."""
    rng = np.random.default_rng(0)
    data = make_synthetic(n_queries=n_docs // 134, n_features=1, docs_per_query=(20, 500), seed=0)
    scores = rng.normal(size=data.n_docs)
    partition, plrank = PLPartition(), PLRank(top_k=10)
    ours, theirs = alternate(lambda: partition.gradients(scores, data.labels, data.offsets),
                             lambda: plrank.gradients(scores, data.labels, data.offsets), repeats)
    rows = [{"kernel": "PLPartition() grad+hess, the kernel data above", "documents": data.n_docs,
             "queries": data.n_queries, "ms": 1e3 * ours, "baseline": "PLRank(top_k=10)", "baseline ms": 1e3 * theirs,
             "ratio": ours / theirs, "note": "both through .gradients(scores, labels, offsets)"}]
    for top in (10, 100, 1000):
        size = top + 1000
        n_queries = max(1, n_docs // size)
        labels = np.tile(np.r_[np.ones(top), np.zeros(1000)], n_queries)
        offsets = np.arange(n_queries + 1, dtype=np.int64) * size
        scores = rng.normal(size=labels.size)
        partition, plrank = PLPartition(), PLRank(top_k=10)
        ours, theirs = alternate(lambda: partition.gradients(scores, labels, offsets),
                                 lambda: plrank.gradients(scores, labels, offsets), repeats)
        rows.append({"kernel": f"PLPartition(), top partition of {top} above 1000", "documents": labels.size,
                     "queries": n_queries, "ms": 1e3 * ours, "baseline": "PLRank(top_k=10)",
                     "baseline ms": 1e3 * theirs, "ratio": ours / theirs,
                     "note": f"{1e9 * ours / (n_queries * top):.0f} ns per top document"})
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
        ours, _ = alternate(lambda: obj(scores, dataset), lambda: None, repeats)
        rows.append({"kernel": f"{_short(obj)} grad+hess", "documents": data.n_docs, "queries": data.n_queries,
                     "ms": 1e3 * ours, "baseline": "LightGBM lambdarank gradients", "baseline ms": 1e3 * builtin,
                     "ratio": ours / builtin,
                     "note": f"baseline: lambdarank {1e3 * lambdarank:.1f} ms minus regression "
                             f"{1e3 * regression:.1f} ms per iteration"})
    return rows


def _short(obj) -> str:
    """The objective with only the parameters that differ from their defaults."""
    defaults = type(obj)()._params()
    changed = ", ".join(f"{k}={v!r}" for k, v in obj._params().items() if v != defaults[k])
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


def print_table(rows: list[dict]) -> None:
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]
        print("| " + " | ".join(cells) + " |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes, to check that the code runs")
    parser.add_argument("--repeats", type=int, default=None, help="alternated runs per measurement")
    args = parser.parse_args(argv)
    n_queries, repeats = (50, 3) if args.small else (10_000, args.repeats or 21)
    engine_queries, rounds, engine_repeats = (30, 3, 1) if args.small else (3_000, 50, args.repeats or 5)
    print(f"# plboost kernel benchmarks: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"numba {numba.__version__} ({numba.get_num_threads()} threads), numpy {np.__version__}, "
          f"python {platform.python_version()}; medians of {repeats} alternated runs")
    print_table(kernel_rows(n_queries, repeats) + lambdarank_rows(n_queries, repeats)
                + partition_rows(20_000 if args.small else 1_000_000, engine_repeats)
                + engine_rows(engine_queries, rounds, engine_repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
