"""The ``leaves`` benchmark of ``scripts/bench.py``, with the cost of finding each document's leaf.

LightGBM training time per tree with PLRank's exact Newton leaf values against LightGBM's own (diagonal)
ones, three trainings alternated A/B/C/A/B/C (medians compared, so that drifts of the machine's speed hit
all alike): diagonal leaves, exact leaves whose documents' leaves are read off LightGBM's cached training
scores (the default), and exact leaves found by ``Booster.predict(pred_leaf=True)`` (the former way).

    python scripts/_bench_leaves.py                 # 3000 queries, 50 rounds, 5 repeats
    python scripts/_bench_leaves.py --small
    python scripts/_bench_leaves.py --threads 1 --clock cpu

On a machine shared with other work, wall-clock times of multi-threaded training swing widely (LightGBM's
OpenMP threads wait at every barrier for a thread that was descheduled): ``--threads 1 --clock cpu``
trains on one thread (LightGBM's ``num_threads`` and Numba's) and times the process's CPU time instead,
which other processes barely disturb.
"""

from __future__ import annotations

import argparse
import statistics
import time
from contextlib import contextmanager

from plboost.cli import _positive_int  # counts of at least 1: 0 would read as 'not given'
from plboost.data import make_synthetic
from plboost.objectives import PLRank


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def alternate_all(functions, repeats: int, clock=time.perf_counter) -> list[float]:
    """Median seconds of each of ``functions`` over ``repeats`` alternated runs (after one warm-up each)."""
    for function in functions:
        function()
    times = [[] for _ in functions]
    for _ in range(repeats):
        for function, spent in zip(functions, times, strict=True):
            start = clock()
            function()
            spent.append(clock() - start)
    return [statistics.median(spent) for spent in times]


@contextmanager
def _recording_refits(finder: str, into: list, clock):
    """Train with ``ExactLeafValues.leaf_finder = finder`` and collect the ExactLeafValues objects that
    ``train`` creates (it keeps them to itself: its module's name for the class is swapped for a subclass);
    their per-tree timings read ``clock``."""
    import types

    from plboost.engines import exact_leaves
    from plboost.engines import lightgbm as engine
    from plboost.engines.exact_leaves import ExactLeafValues

    class Recorded(ExactLeafValues):
        leaf_finder = finder

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            into.append(self)

    engine.ExactLeafValues = Recorded
    exact_leaves.time = types.SimpleNamespace(perf_counter=clock)
    try:
        yield
    finally:
        engine.ExactLeafValues = ExactLeafValues
        exact_leaves.time = time


def leaf_rows(n_queries: int, rounds: int, repeats: int, *, threads: int | None = None,
              clock: str = "wall", valid_queries: int = 0) -> list[dict]:
    """Per-tree training time with exact leaf values against the diagonal ones, and per-tree time spent
    finding the documents' leaves from the cached scores against ``predict(pred_leaf=True)``.
    ``threads``: LightGBM's and Numba's thread count (default: theirs); ``clock``: "wall" or "cpu";
    ``valid_queries``: validation data of that many queries for every training (none by default; the
    diagonal run then has LightGBM compute NDCG on it, the exact runs plboost)."""
    import numba

    from plboost.engines import train

    if threads is not None:
        numba.set_num_threads(threads)
    engine_params = {"num_threads": threads} if threads is not None else None
    timer = CLOCKS[clock]
    data = make_synthetic(n_queries=n_queries, seed=1)
    valid = make_synthetic(n_queries=valid_queries, seed=2) if valid_queries else None
    objective = PLRank(top_k=10, n_permutations=3)
    objective.warm_up()
    refits = {"scores": [], "predict": []}

    def run(leaf_values, finder=None):
        def go():
            if finder is None:
                train("lightgbm", objective, data, valid, rounds=rounds, learning_rate=0.1, num_leaves=31,
                      leaf_values=leaf_values, engine_params=engine_params)
                return
            with _recording_refits(finder, refits[finder], timer):
                train("lightgbm", objective, data, valid, rounds=rounds, learning_rate=0.1, num_leaves=31,
                      leaf_values=leaf_values, engine_params=engine_params)
        return go

    exact, diagonal, former = alternate_all([run("exact", "scores"), run("diagonal"), run("exact", "predict")],
                                            repeats, timer)

    def per_tree(finder, attribute):
        return 1e3 * statistics.median(statistics.median(getattr(r, attribute)) for r in refits[finder])

    finding, finding_before = per_tree("scores", "leaf_seconds"), per_tree("predict", "leaf_seconds")
    rewriting, rewriting_before = per_tree("scores", "refit_seconds"), per_tree("predict", "refit_seconds")
    trees = sum(len(r.leaf_seconds) for r in refits["scores"])
    fallbacks = sum(r.fallbacks for r in refits["scores"])
    fallback_docs = sum(r.fallback_documents for r in refits["scores"])
    common = {"documents": data.n_docs, "queries": data.n_queries}
    how = (f"{clock} clock, " + (f"{threads} thread{'s' * (threads != 1)}" if threads else "default threads")
           + (f", validation {valid.n_docs} documents" if valid is not None else ""))
    valid_fallbacks = sum(r.valid_fallback_documents for r in refits["scores"])
    return [
        {"kernel": "LightGBM training with PLRank(n_permutations=3), exact leaves, per tree", **common,
         "ms": 1e3 * exact / rounds, "baseline": "diagonal (LightGBM's) leaves", "baseline ms": 1e3 * diagonal / rounds,
         "ratio": exact / diagonal,
         "note": f"{rounds} rounds, 31 leaves, {how}; rewriting leaves {rewriting:.2f} ms/tree of which finding them "
                 f"{finding:.2f}; {fallbacks} of {trees} trees fell back to pred_leaf ({fallback_docs} documents)"
                 + (f", {valid_fallbacks} validation documents" if valid is not None else "")},
        {"kernel": "the same, exact leaves found by predict(pred_leaf=True) (the former way)", **common,
         "ms": 1e3 * former / rounds, "baseline": "diagonal (LightGBM's) leaves",
         "baseline ms": 1e3 * diagonal / rounds, "ratio": former / diagonal,
         "note": f"rewriting leaves {rewriting_before:.2f} ms/tree of which finding them {finding_before:.2f}"},
        {"kernel": "finding the documents' leaves of one tree, from LightGBM's cached scores", **common,
         "ms": finding, "baseline": "Booster.predict(pred_leaf=True)", "baseline ms": finding_before,
         "ratio": finding / finding_before,
         "note": "medians over trees and runs, from the two exact-leaf trainings above"
                 + ("; LightGBM's walk of the tree over the binned validation data is in its own time"
                    if valid is not None else "")},
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes, to check that the code runs")
    parser.add_argument("--repeats", type=_positive_int, default=None, help="alternated runs per measurement")
    parser.add_argument("--threads", type=_positive_int, default=None, help="LightGBM's and Numba's threads")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall", help="wall-clock or process CPU time")
    parser.add_argument("--valid-queries", type=int, default=0, help="validation data of that many queries")
    args = parser.parse_args(argv)
    repeats = args.repeats or (1 if args.small else 5)
    rows = leaf_rows(30 if args.small else 3_000, 3 if args.small else 50, repeats, threads=args.threads,
                     clock=args.clock, valid_queries=args.valid_queries)
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
