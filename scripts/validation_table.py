"""The validation scores of a ``plboost compare`` run, for choosing a default without looking at test data.

    python scripts/validation_table.py OUT/results.json [OUT2/results.json ...]

For each configuration: the best validation score of each split and repeat (the watched metric, NDCG at the
run's eval_at as the engine computes it, at the iteration early stopping keeps), their mean and standard
deviation, and the mean number of trees. Rows are sorted by the mean, best first. Test metrics are not read.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict


def validation_rows(paths: list[str]) -> list[tuple[str, float, float, float, int]]:
    """(configuration, mean, standard deviation, mean trees, runs) of the best validation score per run."""
    best, trees = defaultdict(list), defaultdict(list)
    for path in paths:
        with open(path) as handle:
            results = json.load(handle)
        for run in results["runs"]:
            if not run.get("valid_history"):
                raise SystemExit(f"{path}: run {run['label']} on {run['split']} has no validation history")
            best[run["label"]].append(max(run["valid_history"]))
            trees[run["label"]].append(run["trees_used"])
    rows = [(label, statistics.mean(scores), statistics.stdev(scores) if len(scores) > 1 else 0.0,
             statistics.mean(trees[label]), len(scores)) for label, scores in best.items()]
    return sorted(rows, key=lambda row: -row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.json files written by plboost compare --out")
    args = parser.parse_args()
    print("| configuration | validation (mean ± std over runs) | trees | runs |")
    print("|---|---|---|---|")
    for label, mean, deviation, trees, runs in validation_rows(args.results):
        print(f"| {label} | {mean:.4f} ± {deviation:.4f} | {trees:.0f} | {runs} |")


if __name__ == "__main__":
    main()
