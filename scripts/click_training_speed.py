"""Training from a click log against training on labels, per round, on the same documents: issue 64's speed goal
(at most 1.2x at 1M logged impressions).

    python scripts/click_training_speed.py [--queries 10000] [--docs 100] [--impressions 1000000] [--rounds 20]

Synthetic data (``--queries`` queries of ``--docs`` documents), a PL logger (temperature 1, top 10) shows
``--impressions`` impressions under the position-based model; the policy-aware estimates label the documents.
PL-Rank-3 then trains on LightGBM from the labels (``gain="linear", normalize=False``, the same kernel path)
and from the estimates (``gain="estimate", normalize=False``), and LambdaLoss at mu 0 from the labels (its default:
LightGBM's lambdarank) and from the estimates (``gain="estimate"``), alternately, three times each; the table gives
the median seconds per round of each, its ratio to the same objective on labels, and the one-off cost of
simulating and estimating.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--impressions", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--propensity-samples", type=int, default=1000,
                        help="rankings per query for the logging policy's sampled propensities (default 1000)")
    args = parser.parse_args(argv)
    for name in ("queries", "docs", "impressions", "rounds", "repeats", "propensity_samples"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')}: a positive integer, got {getattr(args, name)}")
    from plboost.clicks import ClickData, PositionBasedModel, simulate_clicks
    from plboost.data import make_synthetic
    from plboost.engines import train
    from plboost.objectives import LambdaLoss, PLRank3

    data = make_synthetic(n_queries=args.queries, docs_per_query=(args.docs, args.docs), n_features=20, seed=1)
    logger = data.labels + np.random.default_rng(0).normal(size=data.n_docs)
    start = time.perf_counter()
    log = simulate_clicks(data, logger, n_impressions=args.impressions, top_k=10, temperature=1.0,
                          click_model=PositionBasedModel(), seed=2)
    simulated = time.perf_counter() - start
    start = time.perf_counter()
    estimated = ClickData(log, "policy_aware", {"n_samples": args.propensity_samples}).to_ranking_data()
    estimating = time.perf_counter() - start
    labelled = data.subset(np.flatnonzero(np.bincount(log.impression_query, minlength=data.n_queries) > 0))
    runs = {("PL-Rank-3", "labels"): (PLRank3(gain="linear", normalize=False), labelled),
            ("PL-Rank-3", "click log"): (PLRank3(gain="estimate", normalize=False), estimated),
            ("LambdaLoss, mu 0", "labels"): (LambdaLoss(mu=0.0), labelled),
            ("LambdaLoss, mu 0", "click log"): (LambdaLoss(mu=0.0, gain="estimate"), estimated)}
    seconds: dict[tuple, list[float]] = {name: [] for name in runs}
    for _ in range(args.repeats):
        for name, (objective, training) in runs.items():
            model = train("lightgbm", objective, training, rounds=args.rounds, progress=False)
            seconds[name].append(model.train_seconds / model.rounds)
    per_round = {name: statistics.median(values) for name, values in seconds.items()}
    print(f"{data.n_queries:,} queries x {args.docs} documents ({labelled.n_docs:,} with impressions), "
          f"{log.n_impressions:,} impressions, {log.document.size:,} displayed rows; LightGBM, "
          f"{args.rounds} rounds, median of {args.repeats}")
    print("| objective | trained from | seconds per round | ratio to labels |")
    print("|---|---|---|---|")
    for (objective, source), value in per_round.items():
        print(f"| {objective} | {source} | {value:.4f} | {value / per_round[objective, 'labels']:.2f} |")
    print(f"one-off: simulating {simulated:.1f} s, estimating (policy-aware propensities from "
          f"{args.propensity_samples} rankings per query, and the estimates) {estimating:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
