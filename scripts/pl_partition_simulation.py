"""The PL-Partition paper's simulation (Ma et al., AISTATS 2021, Figure 1): recovering Plackett-Luce
utilities from partitioned rankings.

    python scripts/pl_partition_simulation.py            # N in {100, 1000, 10000}, n from 10 to 1000
    python scripts/pl_partition_simulation.py --quick    # small settings, to check that it runs
    python scripts/pl_partition_simulation.py --settings 1000:1000,10000:10   # some (N, n) of the grid

N items with true utilities p = softmax(q), q_i ~ U(0, log N). n full rankings are drawn from PL(p)
(sorting log p plus Gumbel noise), and each is cut into M = 4 partitions at 3 random cut points, the top
M - 1 partitions holding at most 500 items; the order inside partitions is dropped. N free parameters are
fitted by AdaGrad (learning rate 0.1) on 80% of the rankings, stopping when the loss on the other 20% has
not improved for 25 iterations (at most 2000); reported is the MSE between softmax(parameters) and p,
averaged over repetitions. Methods:

* PL-Partition: the exact likelihood of the partitions (plboost's PLPartition);
* PL-LB: its lower bound (plboost's PLLowerBound);
* RankNet: pairwise logistic loss over all pairs of items in different partitions (skipped where the
  pairs are too many: N n > 200,000);
* PL-TopK: the PL likelihood of the full order of the top M - 1 partitions (it sees more than the
  others: the reference).

The paper reports that PL-Partition recovers p best for every (N, n) and that PL-LB is worse than the
pairwise baselines at small N.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from numba import njit, prange

from plboost.objectives import PLLowerBound, PLPartition

TOP_LIMIT = 500
N_PARTITIONS = 4
RANKNET_LIMIT = 200_000
#: (N, n) settings; N = 10000 stops at n = 100 (n = 1000 takes about 1 s per AdaGrad iteration)
GRID = ((100, 10), (100, 100), (100, 1000), (1000, 10), (1000, 100), (1000, 1000), (10000, 10), (10000, 100))
QUICK_GRID = ((30, 10), (30, 40), (100, 10), (100, 40))


def simulate(n_items: int, n_rankings: int, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True utilities p, and per ranking the item order and the labels (3, 2, 1, 0) of its partitions."""
    q = rng.uniform(0.0, np.log(n_items), size=n_items)
    p = np.exp(q - q.max())
    p /= p.sum()
    orders = np.argsort(-(np.log(p) + rng.gumbel(size=(n_rankings, n_items))), axis=1)
    labels = np.zeros((n_rankings, n_items))
    for r in range(n_rankings):
        cuts = np.sort(rng.choice(np.arange(1, min(TOP_LIMIT, n_items - 1) + 1), size=N_PARTITIONS - 1,
                                  replace=False))
        positions = np.empty(n_items, dtype=np.int64)
        positions[orders[r]] = np.arange(n_items)
        labels[r] = (N_PARTITIONS - 1) - np.searchsorted(cuts, positions, side="right")
    return p, orders, labels


@njit(parallel=True, cache=True)
def _ranknet(theta, labels, grad_out):
    """Mean over rankings of Σ_{pairs y_i > y_j} log(1 + e^{θ_j - θ_i}); gradient summed into rows."""
    n_rankings, n_items = labels.shape
    losses = np.zeros(n_rankings)
    for r in prange(n_rankings):
        for i in range(n_items):
            grad_out[r, i] = 0.0
        for i in range(n_items):
            if labels[r, i] == 0.0:
                continue
            for j in range(n_items):
                if labels[r, j] >= labels[r, i]:
                    continue
                margin = theta[j] - theta[i]
                losses[r] += max(margin, 0.0) + np.log1p(np.exp(-abs(margin)))
                sigma = 1.0 / (1.0 + np.exp(-margin))
                grad_out[r, i] -= sigma
                grad_out[r, j] += sigma
    return losses


@njit(parallel=True, cache=True)
def _pl_top_k(theta, orders, labels, grad_out):
    """PL negative log-likelihood of each ranking's ordered top M - 1 partitions; gradient into rows."""
    n_rankings, n_items = labels.shape
    losses = np.zeros(n_rankings)
    for r in prange(n_rankings):
        k = 0
        while k < n_items and labels[r, orders[r, k]] > 0.0:
            k += 1
        # log-normalisers of the contexts j = 0..k-1, deepest first
        rest = -np.inf
        for t in range(k, n_items):
            rest = np.logaddexp(rest, theta[orders[r, t]])
        log_z = np.empty(k)
        running = rest
        for j in range(k - 1, -1, -1):
            running = np.logaddexp(running, theta[orders[r, j]])
            log_z[j] = running
        for j in range(k):
            losses[r] += log_z[j] - theta[orders[r, j]]
        # the item at position i lies in contexts 0..m, m = min(i, k - 1): its gradient is
        # e^θ Σ_{j<=m} 1/Z_j - [i < k] = exp(θ - log Z_m) a_m - [i < k], a_m = Σ_{j<=m} exp(log Z_m - log Z_j)
        a = np.empty(k)
        for j in range(k):
            a[j] = 1.0 + (a[j - 1] * np.exp(log_z[j] - log_z[j - 1]) if j > 0 else 0.0)
        for i in range(n_items):
            m = min(i, k - 1)
            d = orders[r, i]
            grad_out[r, d] = np.exp(theta[d] - log_z[m]) * a[m] - (1.0 if i < k else 0.0)
    return losses


class Method:
    """A loss over rankings of the same items: mean loss and its gradient in the N parameters."""

    def __init__(self, name, orders, labels):
        self.name, self.orders, self.labels = name, orders, labels
        n_rankings, n_items = labels.shape
        self.flat_labels = labels.ravel()
        self.offsets = np.arange(n_rankings + 1, dtype=np.int64) * n_items
        self.objective = {"PL-Partition": PLPartition(hessian_floor=0.0),
                          "PL-LB": PLLowerBound(hessian_floor=0.0)}.get(name)
        self.scratch = np.empty(labels.shape)

    def __call__(self, theta, need_gradient=True):
        n_rankings, _ = self.labels.shape
        if self.objective is not None:
            scores = np.tile(theta, n_rankings)
            if need_gradient:
                grad, _ = self.objective.gradients(scores, self.flat_labels, self.offsets)
                gradient = grad.astype(np.float64).reshape(n_rankings, -1).sum(axis=0) / n_rankings
            else:
                gradient = None
            return self.objective.losses(scores, self.flat_labels, self.offsets).mean(), gradient
        if self.name == "RankNet":
            losses = _ranknet(theta, self.labels, self.scratch)
        else:
            losses = _pl_top_k(theta, self.orders, self.labels, self.scratch)
        return losses.mean(), self.scratch.sum(axis=0) / n_rankings


def fit(method: Method, valid: Method, n_items: int, *, learning_rate=0.1, patience=25, max_iterations=2000):
    """AdaGrad from zero, early-stopped on the validation loss; returns the best parameters and the
    iterations they took."""
    theta = np.zeros(n_items)
    squares = np.zeros(n_items)
    best, best_theta, best_iteration = np.inf, theta.copy(), 0
    for iteration in range(1, max_iterations + 1):
        _, gradient = method(theta)
        squares += gradient ** 2
        theta -= learning_rate * gradient / (np.sqrt(squares) + 1e-10)
        loss, _ = valid(theta, need_gradient=False)
        if loss < best - 1e-12:
            best, best_theta, best_iteration = loss, theta.copy(), iteration
        elif iteration - best_iteration >= patience:
            break
    return best_theta, best_iteration


def softmax(theta):
    e = np.exp(theta - theta.max())
    return e / e.sum()


def _settings(text: str) -> tuple[tuple[int, int], ...]:
    try:
        pairs = tuple(tuple(int(v) for v in part.split(":")) for part in text.split(",") if part.strip())
    except ValueError:
        pairs = ()
    if not pairs or any(len(pair) != 2 or min(pair) < 2 for pair in pairs):
        raise argparse.ArgumentTypeError(f"expected N:n pairs like 1000:1000,10000:10 (N, n >= 2), got {text!r}")
    return pairs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="N in {30, 100}, n in {10, 40}")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--settings", type=_settings, metavar="N:n,...",
                        help="run these (N, n) settings only; each row is the same as in a full run")
    args = parser.parse_args(argv)
    grid = args.settings or (QUICK_GRID if args.quick else GRID)
    repeats = args.repeats
    methods = ("PL-Partition", "PL-LB", "RankNet", "PL-TopK")
    print(f"# PL-Partition simulation: MSE between softmax(fitted) and p, mean of {repeats} repetition(s); "
          "in brackets the mean AdaGrad iterations to the best validation loss\n")
    print("| N | n | " + " | ".join(methods) + " | best of the first three |")
    print("|---|---|" + "---|" * (len(methods) + 1))
    for n_items, n_rankings in grid:
        results = {name: [] for name in methods}
        iterations = {name: [] for name in methods}
        start = time.perf_counter()
        for repeat in range(repeats):
            rng = np.random.default_rng([args.seed, n_items, n_rankings, repeat])
            p, orders, labels = simulate(n_items, n_rankings, rng)
            n_train = max(1, int(round(0.8 * n_rankings)))
            for name in methods:
                if name == "RankNet" and n_items * n_rankings > RANKNET_LIMIT:
                    continue
                train = Method(name, orders[:n_train], labels[:n_train])
                valid = Method(name, orders[n_train:], labels[n_train:])
                theta, used = fit(train, valid, n_items)
                results[name].append(np.mean((softmax(theta) - p) ** 2))
                iterations[name].append(used)
        cells = [f"{np.mean(results[m]):.3e} ({np.mean(iterations[m]):.0f})" if results[m] else "not run"
                 for m in methods]
        contenders = {m: np.mean(results[m]) for m in methods[:3] if results[m]}
        print(f"| {n_items} | {n_rankings} | " + " | ".join(cells) + f" | {min(contenders, key=contenders.get)} |",
              flush=True)
        print(f"  ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
