"""Objectives against LightGBM's lambdarank on MQ2008, 5 folds, under each paper's protocol.

    python scripts/mq2008_folds.py plrank [DATA_DIR]   # PLRank paper: compression ratios + Table-1 metrics
    python scripts/mq2008_folds.py umart [DATA_DIR]    # uMart paper: uMart (B = 2, 10), uRank, lambdarank
    python scripts/mq2008_folds.py partition [DATA_DIR]  # PL-Partition, PLRank (3 permutations), lambdarank
    python scripts/mq2008_folds.py leaves [DATA_DIR]   # PLRank's exact Newton leaf values against diagonal ones

DATA_DIR defaults to ../shared/data/MQ2008 beside the repository; ``--rounds N`` trains at most N trees in place
of the study's (a quick check that the script runs: the tables are then not the study's, and say so).

Every configuration of a study is trained with the same tree parameters on each fold's train file,
early-stopped on its vali file (validation NDCG@10), and evaluated on its test file; the tables give mean ±
standard deviation over the folds.

plrank: learning rate 0.1, 30 leaves, at most 1000 trees (the PLRank paper's), early stopping after 50
rounds; PLRank with 1 and 3 permutations (K = 10) against lambdarank; NDCG@1,3,5,10 and ERR@10 with
queries without relevant documents counted as 1 (LightGBM) and left out; first, the compression ratio of
3, 6 and 9 permutations on Fold1 train.

partition: the plrank study's tree parameters and metrics, PL-Partition against PLRank (3 permutations)
and lambdarank.

leaves: the plrank study's tree parameters and metrics, PLRank (1 and 3 permutations) with LightGBM's
diagonal-hessian leaf values and with the exact Newton leaf values (the paper's Eqn. 9); "trees" is the
round with the best validation NDCG@10, "ms/tree" the training time per round trained.

umart: the uMart authors' tree settings (learning rate 0.05, 64 leaves, bagging 0.9 every iteration,
min_data_in_leaf 5; their max_bin 10000 and min_sum_hessian_in_leaf 5 are left at LightGBM's defaults,
see the note printed with the table), at most 1000 trees, early stopping after 100 rounds; uMart with
windows 2 and 10, uRank and lambdarank; NDCG and ERR at 1, 3, 5, 10 with queries whose labels are all 0
left out, as in the paper.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from plboost.data import load_splits
from plboost.experiment import RunSpec, evaluate_scores, format_table, run
from plboost.objectives import PLRank

STUDIES = {
    "plrank": dict(
        configurations=(("plrank", {"top_k": 10, "n_permutations": 1}),
                        ("plrank", {"top_k": 10, "n_permutations": 3}), ("lambdarank", {})),
        tree=dict(learning_rate=0.1, num_leaves=30, rounds=1000, early_stopping=50, engine_params={}),
        policies=("one", "exclude"), metrics=("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10"),
    ),
    "partition": dict(
        configurations=(("pl_partition", {}), ("plrank", {"top_k": 10, "n_permutations": 3}), ("lambdarank", {})),
        tree=dict(learning_rate=0.1, num_leaves=30, rounds=1000, early_stopping=50, engine_params={}),
        policies=("one", "exclude"), metrics=("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10"),
    ),
    "leaves": dict(
        configurations=tuple(("plrank", {"top_k": 10, "n_permutations": m}, {"leaf_values": leaves})
                             for m in (1, 3) for leaves in ("diagonal", "exact")),
        tree=dict(learning_rate=0.1, num_leaves=30, rounds=1000, early_stopping=50, engine_params={}),
        policies=("one", "exclude"), metrics=("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10"),
    ),
    "umart": dict(
        configurations=(("umart", {"window": 2}), ("umart", {"window": 10}), ("urank", {}), ("lambdarank", {})),
        tree=dict(learning_rate=0.05, num_leaves=64, rounds=1000, early_stopping=100,
                  engine_params={"bagging_fraction": 0.9, "bagging_freq": 1, "min_data_in_leaf": 5}),
        policies=("exclude",),
        metrics=("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@1", "ERR@3", "ERR@5", "ERR@10"),
    ),
}


def compression_table(data_dir: Path) -> str:
    train = load_splits(data_dir / "Fold1" / "train.txt.gz")[0]
    rows = []
    for n_permutations in (3, 6, 9):
        for skip in (True, False):
            state = PLRank(top_k=10, n_permutations=n_permutations, skip_uniform_queries=skip).state(
                train.labels, train.offsets)
            rows.append({"permutations": n_permutations, "queries": "with two or more labels" if skip else "all",
                         "contexts": state.n_contexts, "distinct": state.n_distinct_contexts,
                         "ratio": state.compression_ratio})
    return format_table(rows, list(rows[0]))


def study_tree(name: str, rounds: int | None) -> dict:
    """The tree parameters of study ``name``, with at most ``rounds`` trees where given."""
    tree = STUDIES[name]["tree"]
    return tree if rounds is None else {**tree, "rounds": rounds, "early_stopping": min(tree["early_stopping"], rounds)}


def run_study(name: str, data_dir: Path, n_folds: int, tree: dict) -> dict:
    """Study ``name`` on the first ``n_folds`` folds with tree parameters ``tree`` (:func:`study_tree`)."""
    study = STUDIES[name]
    results = {policy: {} for policy in study["policies"]}
    for fold in range(1, n_folds + 1):
        directory = data_dir / f"Fold{fold}"
        train, valid, test = load_splits(*(directory / f"{split}.txt.gz" for split in ("train", "vali", "test")))
        for objective, params, *options in study["configurations"]:
            spec = RunSpec(objective=objective, objective_params=params, **tree, **(options or [{}])[0])
            result = run(spec, train, valid, test)
            scores = result.model.predict(test.X)
            for policy in results:
                values, _ = evaluate_scores(scores, test, RunSpec(no_relevant=policy))
                values["trees"] = result.model.trees_used
                values["seconds"] = result.model.train_seconds
                values["ms/tree"] = 1000 * result.model.train_seconds / max(result.model.rounds, 1)
                results[policy].setdefault(spec.label, []).append(values)
            print(f"Fold{fold} {spec.label}: NDCG@10 {result.metrics['NDCG@10']:.4f}, "
                  f"{result.model.trees_used} tree{'' if result.model.trees_used == 1 else 's'}", file=sys.stderr)
    return results


def summary_table(by_config: dict, metric_names) -> str:
    rows = []
    for label, folds in by_config.items():
        row = {"configuration": label}
        for name in metric_names:
            values = np.array([f[name] for f in folds])
            row[name] = f"{values.mean():.4f} ± {values.std(ddof=1):.4f}" if values.size > 1 else f"{values[0]:.4f}"
        row["trees (mean)"] = f"{np.mean([f['trees'] for f in folds]):.0f}"
        row["s/fold"] = f"{np.mean([f['seconds'] for f in folds]):.2f}"
        row["ms/tree"] = f"{np.mean([f['ms/tree'] for f in folds]):.2f}"
        rows.append(row)
    return format_table(rows, list(rows[0]))


def main(argv=None) -> int:
    default = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "MQ2008"
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("study", choices=sorted(STUDIES))
    parser.add_argument("data", nargs="?", type=Path, default=default)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=None,
                        help="at most this many trees in place of the study's (a quick check, not the study)")
    args = parser.parse_args(argv)
    if args.rounds is not None and args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    folds = [args.data / f"Fold{fold}" for fold in range(1, args.folds + 1)]
    missing = [str(fold) for fold in folds if not fold.is_dir()]
    if missing:
        parser.error(f"no MQ2008 fold directory {', '.join(missing)} (DATA_DIR holds Fold1 ... Fold5)")
    study = STUDIES[args.study]

    if args.study == "plrank":
        print("## Compression ratio, K = 10, MQ2008 Fold1 train\n")
        print(compression_table(args.data))
    tree = study_tree(args.study, args.rounds)
    results = run_study(args.study, args.data, args.folds, tree)
    print(f"\nTree parameters: learning rate {tree['learning_rate']}, {tree['num_leaves']} leaves, at most "
          f"{tree['rounds']} trees, early stopping after {tree['early_stopping']} rounds on vali NDCG@10, "
          f"other LightGBM parameters {tree['engine_params'] or 'default'}"
          + ("" if args.rounds is None else f" (--rounds {args.rounds}: not the study's {study['tree']['rounds']})"))
    for policy, by_config in results.items():
        print(f"\n## Test metrics, {args.folds} folds, mean ± std; queries without relevant documents: {policy}\n")
        print(summary_table(by_config, study["metrics"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
