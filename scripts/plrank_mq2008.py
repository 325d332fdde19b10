"""PLRank on MQ2008 (5 folds): compression ratios, and PLRank against LightGBM's lambdarank.

    python scripts/plrank_mq2008.py [DATA_DIR]      # default ../shared/data/MQ2008

1. Compression ratio of the contexts of 3, 6 and 9 sampled permutations (K = 10) on Fold1 train.
2. For every fold: LightGBM with PLRank (1 and 3 permutations) and with lambdarank, the same tree
   parameters (the PLRank paper's: learning rate 0.1, 30 leaves, at most 1000 trees; early stopping after
   50 rounds without gain in validation NDCG@10), test NDCG@1,3,5,10 and ERR@10; mean and standard
   deviation over folds, under two conventions for queries without relevant documents.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from plboost.data import load_splits
from plboost.experiment import RunSpec, evaluate_scores, format_table, run
from plboost.objectives import PLRank

CONFIGURATIONS = (("plrank", {"top_k": 10, "n_permutations": 1}), ("plrank", {"top_k": 10, "n_permutations": 3}),
                  ("lambdarank", {}))
METRICS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10")


def main(argv=None) -> int:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "MQ2008"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=default)
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)

    train = load_splits(args.data / "Fold1" / "train.txt.gz")[0]
    rows = []
    for n_permutations in (3, 6, 9):
        for skip in (True, False):
            state = PLRank(top_k=10, n_permutations=n_permutations, skip_uniform_queries=skip).state(
                train.labels, train.offsets)
            rows.append({"permutations": n_permutations,
                         "queries": "with two or more labels" if skip else "all",
                         "contexts": state.n_contexts, "distinct": state.n_distinct_contexts,
                         "ratio": state.compression_ratio})
    print("## Compression ratio, K = 10, MQ2008 Fold1 train\n")
    print(format_table(rows, list(rows[0])))

    results = {policy: {} for policy in ("one", "exclude")}
    for fold in range(1, args.folds + 1):
        directory = args.data / f"Fold{fold}"
        train, valid, test = load_splits(*(directory / f"{name}.txt.gz" for name in ("train", "vali", "test")))
        for objective, params in CONFIGURATIONS:
            spec = RunSpec(objective=objective, objective_params=params, rounds=1000, learning_rate=0.1,
                           num_leaves=30, early_stopping=50)
            result = run(spec, train, valid, test)
            scores = result.model.predict(test.X)
            for policy in results:
                values, _ = evaluate_scores(scores, test, RunSpec(no_relevant=policy))
                values["trees"] = result.model.trees_used
                values["seconds"] = result.model.train_seconds
                results[policy].setdefault(spec.label, []).append(values)
            print(f"Fold{fold} {spec.label}: NDCG@10 {result.metrics['NDCG@10']:.4f}, "
                  f"{result.model.trees_used} trees", file=sys.stderr)

    for policy, by_config in results.items():
        print(f"\n## Test metrics, 5 folds, mean ± std; queries without relevant documents: {policy}\n")
        table = []
        for label, folds in by_config.items():
            row = {"configuration": label}
            for name in METRICS:
                values = np.array([f[name] for f in folds])
                row[name] = f"{values.mean():.4f} ± {values.std(ddof=1):.4f}"
            row["trees (mean)"] = f"{np.mean([f['trees'] for f in folds]):.0f}"
            table.append(row)
        print(format_table(table, list(table[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
