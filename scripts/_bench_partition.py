"""The PL-Partition rows of ``scripts/bench.py``'s ``kernels`` section, with what explains them.

PL-Partition's gradient and hessian call against PLRank(top_k=10)'s, both as LightGBM makes it each round,
``objective(scores, dataset)`` on a constructed ``lightgbm.Dataset`` (whose labels and query offsets are
validated and fingerprinted once, on the first call: through ``.gradients(scores, labels, offsets)`` each
call also pays that, about 6 ms per 1M documents on one thread, the same for both). Runs alternated
A/B/A/B and medians compared (so that drifts of the machine's speed hit both alike), on the data of the
kernel benchmark (MSLR-like label shares, queries of 20-500 documents, standard-normal scores); then PL-LB
(the same partitioning and log-sum-exps without the quadrature: the floor under PL-Partition's cost),
PL-Partition at other tolerances, and queries of k relevant documents above 1000 irrelevant ones. Notes
give the (node, document) terms of the integrand evaluated per document: the quadrature's work.

    python scripts/_bench_partition.py                 # about 1M documents, 5 repeats
    python scripts/_bench_partition.py --small
    python scripts/_bench_partition.py --threads 1 --clock cpu
    python scripts/_bench_partition.py --step-sizes --threads 1 --clock cpu   # the quadrature's cost by step size

``--step-sizes`` prints, in place of the rows above, what one step's quadrature costs as its partition grows:
queries of n relevant documents above 40 irrelevant ones, PL-Partition's call less PL-LB's (the same partitioning
and closed-form terms, without the quadrature), per (node, document) term of the integrand and per node (one
evaluation of the integrand at every document of the step). A node's cost is a fixed part plus a part per document;
the fit of the two is printed below the table.

On a machine shared with other work, ``--clock cpu`` times the process's CPU time (all threads) instead
of the wall clock, which other processes barely disturb.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numba
import numpy as np

from plboost.cli import _positive_int  # counts of at least 1: 0 would read as 'not given'
from plboost.data import make_synthetic
from plboost.objectives import PLLowerBound, PLPartition, PLRank
from plboost.objectives._base import QueryData

CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def alternate(a, b, repeats: int, clock=time.perf_counter) -> tuple[float, float]:
    """Median seconds of ``a()`` and ``b()`` over ``repeats`` alternated runs (after one warm-up each)."""
    a(), b()
    times_a, times_b = [], []
    for _ in range(repeats):
        start = clock()
        a()
        times_a.append(clock() - start)
        start = clock()
        b()
        times_b.append(clock() - start)
    return statistics.median(times_a), statistics.median(times_b)


def terms_per_document(objective: PLPartition, scores, labels, offsets) -> tuple[float, float]:
    """(node, document) terms of the integrand PL-Partition evaluates, per document and per document in
    a partition above the lowest (the documents that go through a quadrature or a closed form)."""
    data = QueryData.from_arrays(labels, offsets)
    grad, hess = np.empty(data.n_docs, dtype=np.float32), np.empty(data.n_docs, dtype=np.float32)
    _, evaluations = objective._run_counting(np.asarray(scores, dtype=np.float64), data, grad, hess)
    lowest = np.minimum.reduceat(labels, offsets[:-1])  # offsets of non-empty queries
    above = int(np.count_nonzero(labels > np.repeat(lowest, np.diff(offsets))))
    total = float(evaluations.sum())
    return total / data.n_docs, total / max(above, 1)


def engine_call(objective, scores, labels, offsets):
    """``objective``'s call as LightGBM makes it each round, on a ``lightgbm.Dataset`` of these labels and
    queries (one constant feature: the objective reads only labels and groups), after the first call."""
    import lightgbm as lgb

    dataset = lgb.Dataset(np.zeros((labels.size, 1)), label=labels, group=np.diff(offsets),
                          params={"verbosity": -1}).construct()
    objective(scores, dataset)
    return lambda: objective(scores, dataset)


def partition_rows(n_docs: int, repeats: int, clock=time.perf_counter) -> list[dict]:
    """PL-Partition against PLRank(top_k=10) on the kernel data, the same for PL-LB and other tolerances,
    and as the top partition grows: queries of k relevant documents above 1000 irrelevant ones
    (k = 10, 100, 1000), about ``n_docs`` documents in all."""
    rng = np.random.default_rng(0)
    data = make_synthetic(n_queries=max(1, n_docs // 134), n_features=1, docs_per_query=(20, 500), seed=0)
    scores = rng.normal(size=data.n_docs)
    plrank = PLRank(top_k=10)
    rows = []
    for objective, what in ((PLPartition(), "PLPartition() grad+hess, the kernel data above"),
                            (PLLowerBound(), "PLLowerBound() grad+hess, the same data"),
                            (PLPartition(tolerance=1e-8), "PLPartition(tolerance=1e-8), the same data"),
                            (PLPartition(tolerance=1e-12), "PLPartition(tolerance=1e-12), the same data")):
        ours, theirs = alternate(engine_call(objective, scores, data.labels, data.offsets),
                                 engine_call(plrank, scores, data.labels, data.offsets), repeats, clock)
        note = "both as objective(scores, lightgbm.Dataset)"
        if isinstance(objective, PLPartition):
            per_doc, per_upper = terms_per_document(objective, scores, data.labels, data.offsets)
            note += (f"; {per_doc:.1f} terms of the integrand per document ({per_upper:.1f} per document above "
                     "the lowest grade)")
        rows.append({"kernel": what, "documents": data.n_docs, "queries": data.n_queries, "ms": 1e3 * ours,
                     "baseline": "PLRank(top_k=10)", "baseline ms": 1e3 * theirs, "ratio": ours / theirs,
                     "note": note})
    for top in (10, 100, 1000):
        size = top + 1000
        n_queries = max(1, n_docs // size)
        labels = np.tile(np.r_[np.ones(top), np.zeros(1000)], n_queries)
        offsets = np.arange(n_queries + 1, dtype=np.int64) * size
        scores = rng.normal(size=labels.size)
        partition = PLPartition()
        ours, theirs = alternate(engine_call(partition, scores, labels, offsets),
                                 engine_call(plrank, scores, labels, offsets), repeats, clock)
        per_doc, per_upper = terms_per_document(partition, scores, labels, offsets)
        rows.append({"kernel": f"PLPartition(), top partition of {top} above 1000", "documents": labels.size,
                     "queries": n_queries, "ms": 1e3 * ours, "baseline": "PLRank(top_k=10)",
                     "baseline ms": 1e3 * theirs, "ratio": ours / theirs,
                     "note": f"{1e9 * ours / (n_queries * top):.0f} ns and {per_upper:.1f} terms per top document"})
    return rows


def kernel_call(objective, scores, data, grad, hess):
    """``objective``'s kernel on query data already checked (what each engine call runs after the first)."""
    return lambda: objective._gradients(scores, data, None, grad, hess)


def step_size_rows(n_docs: int, repeats: int, clock=time.perf_counter,
                   sizes=(4, 8, 16, 32, 64, 128, 512)) -> list[dict]:
    """The quadrature's cost per term and per node by the size n of the step's partition: about ``n_docs``
    documents in queries of n relevant documents above 40 irrelevant ones (one step each), PL-Partition's
    call less PL-LB's, both through ``.gradients``' kernel on one set of query data."""
    rng = np.random.default_rng(0)
    rows = []
    for size in sizes:
        width = size + 40
        n_queries = max(1, n_docs // width)
        labels = np.tile(np.r_[np.ones(size, dtype=np.int64), np.zeros(40, dtype=np.int64)], n_queries)
        offsets = np.arange(n_queries + 1, dtype=np.int64) * width
        scores = rng.normal(size=labels.size)
        data = QueryData.from_arrays(labels, offsets)
        grad, hess = np.empty(labels.size, dtype=np.float32), np.empty(labels.size, dtype=np.float32)
        partition, bound = PLPartition(), PLLowerBound()
        ours, theirs = alternate(kernel_call(partition, scores, data, grad, hess),
                                 kernel_call(bound, scores, data, grad, hess), repeats, clock)
        _, evaluations = partition._run_counting(scores, data, grad, hess)
        terms = float(evaluations.sum())
        quadrature = max(ours - theirs, 0.0)
        rows.append({"documents in the step": size, "queries": n_queries, "PL-Partition ms": 1e3 * ours,
                     "PL-LB ms": 1e3 * theirs, "terms per document": terms / (size * n_queries),
                     "ns per term": 1e9 * quadrature / terms, "ns per node": 1e9 * quadrature * size / terms})
    return rows


def node_cost_fit(rows: list[dict]) -> str:
    """Least-squares fit of ns per node = fixed + per document x documents, over the rows."""
    sizes = np.array([row["documents in the step"] for row in rows], dtype=float)
    per_node = np.array([row["ns per node"] for row in rows])
    per_document, fixed = np.polyfit(sizes, per_node, 1)
    return f"ns per node = {fixed:.1f} + {per_document:.2f} x documents in the step (least squares over the rows)"


def print_table(rows: list[dict]) -> None:
    """Rows as a Markdown table (bench.py prints its sections with it too)."""
    columns = list(rows[0])
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for row in rows:
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]
        print("| " + " | ".join(cells) + " |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--small", action="store_true", help="tiny sizes, to check that the code runs")
    parser.add_argument("--repeats", type=_positive_int, default=None, help="alternated runs per measurement (5)")
    parser.add_argument("--threads", type=_positive_int, default=None,
                        help=f"Numba threads, at most {numba.config.NUMBA_NUM_THREADS} here (default: Numba's)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall")
    parser.add_argument("--step-sizes", action="store_true",
                        help="the quadrature's cost per term and per node by the step's size, in place of the rows")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads > numba.config.NUMBA_NUM_THREADS:
        parser.error(f"--threads: at most {numba.config.NUMBA_NUM_THREADS} (NUMBA_NUM_THREADS), got {args.threads}")
    if args.threads:
        numba.set_num_threads(args.threads)
    print(f"# PL-Partition: {numba.get_num_threads()} threads, {args.clock} clock\n")
    if args.step_sizes:
        rows = step_size_rows(20_000 if args.small else 400_000, args.repeats or (1 if args.small else 15),
                              CLOCKS[args.clock])
        print_table(rows)
        print("\n" + node_cost_fit(rows))
        return 0
    print_table(partition_rows(20_000 if args.small else 1_000_000, args.repeats or (1 if args.small else 5),
                               CLOCKS[args.clock]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
