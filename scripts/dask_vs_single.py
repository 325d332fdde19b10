"""Test NDCG@10 of models trained on a local Dask cluster against one machine (docs/dask.md).

    python scripts/dask_vs_single.py [--fold ../shared/data/MQ2008/Fold1] [--workers 2] [--rounds 50]
"""

import argparse
from pathlib import Path

from distributed import Client, LocalCluster

from plboost import metrics
from plboost.data import load_splits
from plboost.engines import train
from plboost.engines.dask import ranking_collections, train_dask
from plboost.objectives import PLRank


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fold", type=Path, default=Path(__file__).parents[1] / "../shared/data/MQ2008/Fold1")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    train_data, _, test_data = load_splits(args.fold / "train.txt.gz", args.fold / "vali.txt.gz",
                                           args.fold / "test.txt.gz", progress=False)

    def ndcg_at_10(model):
        return metrics.ndcg(model.predict(test_data.X), test_data.labels, offsets=test_data.offsets, k=10)

    print("| engine | partitions | distributed | one machine | difference | seconds (distributed / one) |")
    print("|---|---|---|---|---|---|")
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        for engine in ("lightgbm", "xgboost"):
            single = train(engine, PLRank(n_permutations=3), train_data, rounds=args.rounds,
                           engine_params={"min_data_in_leaf": 20} if engine == "lightgbm" else {})
            for partitions in (args.workers, 2 * args.workers):
                collections = ranking_collections(train_data, n_partitions=partitions)
                distributed = train_dask(engine, client, PLRank(n_permutations=3), collections, rounds=args.rounds)
                ours, theirs = ndcg_at_10(distributed), ndcg_at_10(single)
                print(f"| {engine} | {partitions} | {ours:.4f} | {theirs:.4f} | {ours - theirs:+.4f} | "
                      f"{distributed.train_seconds:.1f} / {single.train_seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
