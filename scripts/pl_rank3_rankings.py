"""How PL-Rank-3's estimate improves with the number of rankings it draws per query and call (issue 39).

    python scripts/pl_rank3_rankings.py                          # MQ2008 Fold1, n_samples 1 ... 1000
    python scripts/pl_rank3_rankings.py --fold ../shared/data/MSLR-WEB10K-5k --samples 10 100

LightGBM's lambdarank trains ``--warm-rounds`` rounds on the fold's training file (learning rate 0.1, 31
leaves); at its training scores, PL-Rank-3 (its defaults but ``n_samples``) draws its estimate with ``--seeds``
seeds for each ``n_samples``. A reference estimate with ``--reference`` rankings (another seed) stands in for
the expectation. Printed for each ``n_samples``, means over the seeds:

- gradient noise: ``||g - g_ref||^2 / ||g_ref||^2`` over the documents (falls as 1/n for an unbiased estimate
  once the reference's own noise is small);
- hessian noise: the same for the hessians as the engines get them (absolute value, floor);
- leaf-sum noise: the same for the sums of ``g`` over the leaves of lambdarank's next tree (what a tree's
  split gains and leaf values read), ``||G - G_ref||^2 / ||G_ref||^2``;
- cosine of ``g`` with ``g_ref``; milliseconds per call on the training file (one thread, median of 5).

What training reaches with each ``n_samples`` is measured by ``plboost compare`` (docs/benchmarks.md gives the
command and the table).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import lightgbm as lgb
import numba
import numpy as np

from plboost.data.splits import load_splits
from plboost.objectives import PLRank3

FOLD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "MQ2008" / "Fold1"
SAMPLES = (1, 3, 10, 30, 100, 300, 1000)


def relative_error(estimate: np.ndarray, reference: np.ndarray) -> float:
    return float(np.sum((estimate - reference) ** 2) / np.sum(reference ** 2))


def milliseconds_per_call(objective, scores, data, repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        objective.gradients(scores, data.labels, data.offsets)
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fold", type=Path, default=FOLD, help="a directory with train.txt(.gz) and vali.txt(.gz)")
    parser.add_argument("--samples", nargs="+", type=int, default=list(SAMPLES))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--reference", type=int, default=20_000, help="rankings of the reference estimate")
    parser.add_argument("--warm-rounds", type=int, default=50)
    args = parser.parse_args(argv)
    numba.set_num_threads(1)

    def file(stem):
        for path in (args.fold / f"{stem}.txt.gz", args.fold / f"{stem}.txt"):
            if path.exists():
                return path
        parser.error(f"--fold {args.fold}: no {stem}.txt or {stem}.txt.gz there")
    train_data, valid_data = load_splits(file("train"), file("vali"))
    params = {"objective": "lambdarank", "learning_rate": 0.1, "num_leaves": 31, "verbosity": -1, "seed": 0,
              "deterministic": True, "num_threads": 1}
    train_set = train_data.to_lightgbm(params={"verbosity": -1})
    # one round more than the warm start: its last tree's leaves are the partition whose sums a tree reads
    model = lgb.train(params, train_set, args.warm_rounds + 1)
    scores = model.predict(train_data.X, num_iteration=args.warm_rounds)
    leaves = model.predict(train_data.X, start_iteration=args.warm_rounds, num_iteration=1, pred_leaf=True).ravel()

    def leaf_sums(values):
        return np.bincount(leaves, weights=values.astype(np.float64))

    labels, offsets = train_data.labels, train_data.offsets
    ref_grad, ref_hess = (x.astype(np.float64) for x in PLRank3(n_samples=args.reference, seed=10_000 + args.seeds)
                          .gradients(scores, labels, offsets))
    print(f"# {args.fold}: {train_data.n_docs} documents, {offsets.size - 1} queries; lambdarank's scores after "
          f"{args.warm_rounds} rounds; {args.seeds} seeds each; reference: {args.reference} rankings\n")
    print("| n_samples | gradient noise | hessian noise | leaf-sum noise | cosine | ms per call |")
    print("|---|---|---|---|---|---|")
    for n in args.samples:
        noise = {"grad": [], "hess": [], "leaf": [], "cos": []}
        for seed in range(args.seeds):
            grad, hess = (x.astype(np.float64) for x in PLRank3(n_samples=n, seed=seed).gradients(scores, labels,
                                                                                               offsets))
            noise["grad"].append(relative_error(grad, ref_grad))
            noise["hess"].append(relative_error(hess, ref_hess))
            noise["leaf"].append(relative_error(leaf_sums(grad), leaf_sums(ref_grad)))
            noise["cos"].append(float(grad @ ref_grad / np.sqrt((grad @ grad) * (ref_grad @ ref_grad))))
        ms = milliseconds_per_call(PLRank3(n_samples=n), scores, train_data)
        means = {key: statistics.fmean(values) for key, values in noise.items()}
        print(f"| {n} | {means['grad']:.4f} | {means['hess']:.4f} | {means['leaf']:.4f} | {means['cos']:.4f} "
              f"| {ms:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
