"""Accuracy of PL-Partition's quadrature: log P, gradients and hessians against a dense reference.

    python scripts/partition_accuracy.py [--cases 300] [--mslr-queries 60] [--no-extremes]

Each case is one step, a partition S above the rest R (labels 1 and 0). The reference is computed here,
independently of the kernel: a dense long-double trapezoid in z = log t (12,001 nodes over
[-60, log(n_S + 1) + 6], no mode search, no change of variable) gives log P and the moments G_i, D_i,
Var(Σh), E[h_i^2], and the gradient and hessian follow from the formulas of the module docstring of
``plboost.objectives.partition`` (checked against finite differences of exact likelihoods by the tests).
The kernel runs in float64 (``PLPartition._run_counting`` with float64 outputs).

Families of cases:

* random: partitions of 2-50 documents above 1-200 lower-rated ones, logits uniform over ±10, the partition
  level with R, 10 above or 10 below (the family the former rule was tuned on);
* MSLR-like: every step of queries of ``make_synthetic(docs_per_query=(20, 500))`` with standard-normal
  scores, the data of ``scripts/bench.py``'s PL-Partition rows;
* extremes: partitions of 1, 2, 3, 20, 1000 and 2500 documents above 1 or 1000, logits uniform over ±0
  (all tied), ±10 or ±50, shifted by -50, -10, 0, 10 or 50 (ties far above R make the cliffs of the
  module docstring; all scores equal is spread 0, shift 0).

Prints, per family and tolerance, the largest absolute errors of log P, gradient and hessian, the
largest errors relative to max(1, |value|), and the (node, document) terms the kernel evaluated per
document of S (mean over steps, and the largest; partitions of one or two documents are closed forms
and take none). The extremes take about ten minutes, nearly all in the reference for the partitions of
1000 and 2500 documents; ``--no-extremes`` skips them.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from plboost.objectives import PLPartition
from plboost.objectives._base import QueryData

_NODES = 12001


def reference_step(upper, lower, nodes: int = _NODES, chunk: int = 100):
    """-log P(S ≻ R), gradient and hessian of one step (documents ``upper`` then ``lower``), in long double
    (documents ``chunk`` at a time)."""
    L = np.longdouble
    upper = np.asarray(upper, dtype=L)
    lower = np.asarray(lower, dtype=L)
    w_r = lower.max() + np.log(np.exp(lower - lower.max()).sum())
    log_a = upper - w_r
    z = np.linspace(L(-60), np.log(L(upper.size + 1)) + 6, nodes, dtype=L)

    def terms(part):
        x = np.exp(log_a[part, None] + z[None, :])
        one_minus = -np.expm1(-x)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            h = np.where(x < 1e-30, 1 - x / 2, x * (1 - one_minus) / one_minus)
        h = np.where(x > 1e4, 0, h)
        return one_minus, h, np.where(x > 1e4, 0, x * h)

    parts = [slice(i, i + chunk) for i in range(0, upper.size, chunk)]
    psi = z - np.exp(z)
    sum_h = np.zeros(nodes, dtype=L)
    for part in parts:
        one_minus, h, _ = terms(part)
        psi = psi + np.log(one_minus).sum(axis=0)
        sum_h += h.sum(axis=0)
    peak = psi.max()
    weight = np.exp(psi - peak)
    total = weight.sum()
    log_p = peak + np.log(total * (z[1] - z[0]))
    g, d, e2 = (np.empty(upper.size, dtype=L) for _ in range(3))
    for part in parts:
        _, h, xh = terms(part)
        g[part] = (h * weight).sum(axis=1) / total
        d[part] = (xh * weight).sum(axis=1) / total
        e2[part] = (h * h * weight).sum(axis=1) / total
    mean = (sum_h * weight).sum() / total
    variance = ((sum_h - mean) ** 2 * weight).sum() / total
    big_h = g.sum()
    phi = variance + (g - d - e2).sum()
    p = np.exp(lower - w_r)
    grad = np.concatenate([-g, p * big_h])
    hess = np.concatenate([g * g - g + d, big_h * p * (1 - p) - phi * p * p])
    return -log_p, grad, hess


def kernel_step(upper, lower, tolerance):
    """The kernel's loss, float64 gradient and hessian, and its terms evaluated per document of S."""
    scores = np.concatenate([upper, lower])
    labels = np.concatenate([np.ones(len(upper)), np.zeros(len(lower))])
    data = QueryData.from_arrays(labels, np.array([0, scores.size]))
    grad, hess = np.empty(scores.size), np.empty(scores.size)
    losses, evaluations = PLPartition(tolerance=tolerance, hessian_floor=0.0)._run_counting(scores, data, grad, hess)
    return losses[0], grad, hess, evaluations[0] / len(upper)


def random_cases(count: int):
    for seed in range(count):
        rng = np.random.default_rng(seed)
        size, rest = int(rng.integers(2, 51)), int(rng.integers(1, 201))
        yield rng.uniform(-10, 10, size) + rng.choice([-10.0, 0.0, 10.0]), rng.uniform(-10, 10, rest)


def mslr_cases(n_queries: int):
    from plboost.data import make_synthetic

    data = make_synthetic(n_queries=n_queries, n_features=1, docs_per_query=(20, 500), seed=0)
    scores = np.random.default_rng(0).normal(size=data.n_docs)
    for q in range(data.n_queries):
        lo, hi = data.offsets[q], data.offsets[q + 1]
        s, y = scores[lo:hi], data.labels[lo:hi]
        for level in np.unique(y)[1:]:
            yield s[y == level], s[y < level]


def extreme_cases():
    rng = np.random.default_rng(1234)
    for size in (1, 2, 3, 20, 1000, 2500):
        for rest in (1, 1000):
            for spread in (0.0, 10.0, 50.0):
                for shift in (-50.0, -10.0, 0.0, 10.0, 50.0):
                    yield rng.uniform(-spread, spread, size) + shift, rng.uniform(-spread, spread, rest)


def measure(cases, tolerances, step=kernel_step):
    """Largest errors per tolerance: absolute (log P, gradient, hessian), relative to max(1, |value|),
    and the mean and largest terms per document."""
    worst = {tol: np.zeros(6) for tol in tolerances}
    terms = {tol: [] for tol in tolerances}
    count = 0
    for upper, lower in cases:
        count += 1
        loss0, grad0, hess0 = reference_step(upper, lower)
        truth = [np.atleast_1d(np.asarray(v, dtype=np.float64)) for v in (loss0, grad0, hess0)]
        for tol in tolerances:
            loss, grad, hess, per_doc = step(upper, lower, tol)
            got = [np.atleast_1d(loss), grad, hess]
            absolute = [np.abs(a - b).max() for a, b in zip(got, truth, strict=True)]
            relative = [(np.abs(a - b) / np.maximum(1.0, np.abs(b))).max() for a, b in zip(got, truth, strict=True)]
            worst[tol] = np.maximum(worst[tol], absolute + relative)
            terms[tol].append(per_doc)
    return count, worst, {tol: (float(np.mean(v)), float(np.max(v))) for tol, v in terms.items()}


def print_table(name, count, worst, terms):
    print(f"\n{name} ({count} steps)\n")
    print("| tolerance | log P | gradient | hessian | relative: log P | gradient | hessian | terms per document, "
          "mean / largest |")
    print("|---|---|---|---|---|---|---|---|")
    for tol, w in worst.items():
        cells = " | ".join(f"{v:.1e}" for v in w)
        print(f"| {tol:g} | {cells} | {terms[tol][0]:.1f} / {terms[tol][1]:.0f} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=300, help="random steps")
    parser.add_argument("--mslr-queries", type=int, default=60, help="MSLR-like queries (all their steps)")
    parser.add_argument("--no-extremes", action="store_true", help="skip the extreme cases (the slowest)")
    parser.add_argument("--tolerances", type=float, nargs="+", default=[1e-8, 1e-10, 1e-12])
    args = parser.parse_args(argv)
    families = [("random: S of 2-50 above R of 1-200, logits ±10, S shifted by -10, 0 or 10",
                 lambda: random_cases(args.cases)),
                ("MSLR-like: make_synthetic(docs_per_query=(20, 500)), standard-normal scores",
                 lambda: mslr_cases(args.mslr_queries))]
    if not args.no_extremes:
        families.append(("extremes: S of 1-2500 above R of 1 or 1000, logits ±0/10/50 shifted by up to ±50",
                         extreme_cases))
    print("Largest errors of PL-Partition's float64 kernel against a dense long-double reference "
          "(relative: error / max(1, |value|)); default tolerance 1e-10")
    for name, cases in families:
        start = time.perf_counter()
        print_table(name, *measure(cases(), args.tolerances))
        print(f"\n({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
