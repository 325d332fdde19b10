"""PL-Rank-3's curvature against lambdarank's: the Newton step each implies, and what training reaches (issue 35).

    python scripts/pl_rank3_curvature.py                                   # MQ2008 Fold1 and demo-like data
    python scripts/pl_rank3_curvature.py --runs lambdarank pl_rank3,curvature=lambda --learning-rates 0.1 0.5

For each dataset (MQ2008 Fold1 from ``../shared/data``, and the demo's synthetic data: 600 training and 200
validation queries of ``make_synthetic``, seeds 0 and 1):

1. **Step scale.** LightGBM's lambdarank trains ``--warm-rounds`` rounds (learning rate 0.1, 31 leaves); at
   its training scores, every configuration's gradients and hessians (as the engines get them, floor
   included) give a Newton step ``|g| / h`` per document. The table gives the median over the documents whose
   gradient is not 0, and its ratio to lambdarank's (``UMart(window=1)``, LightGBM's lambdarank arithmetic)
   at the same scores. The hessian ``h`` a document would get alone in a leaf is what a leaf's sums average.
2. **Training.** Each configuration trains at each learning rate (31 leaves, at most ``--rounds`` rounds,
   early stopping after 30 on the validation file's NDCG@10): best iteration, training and validation
   NDCG@10, and test NDCG@10 where the dataset has a test file.

Configurations are ``--run`` syntax (``name,key=value``): ``lambdarank`` is LightGBM's own objective, any other
name a plboost objective.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import lightgbm as lgb
import numpy as np

from plboost import metrics
from plboost._values import parse_assignment, split_list
from plboost.data import make_synthetic
from plboost.data.splits import load_splits
from plboost.objectives import UMart, get_objective

DEFAULT_RUNS = ("lambdarank", "pl_rank3", "pl_rank3,curvature=lambda")
MQ2008 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "MQ2008" / "Fold1"


def objective_of(run: str):
    name, *assignments = [part.strip() for part in split_list(run)]
    if name == "lambdarank":
        return "lambdarank"
    return get_objective(name, **dict(parse_assignment(a) for a in assignments))


def datasets(names, fold):
    if "mq2008" in names:
        yield "MQ2008 Fold1", load_splits(fold / "train.txt.gz", fold / "vali.txt.gz", fold / "test.txt.gz")
    if "synthetic" in names:
        yield "synthetic (demo-like)", (make_synthetic(n_queries=600, seed=0), make_synthetic(n_queries=200, seed=1),
                                        None)


def train(objective, train_data, valid_data, learning_rate, rounds):
    params = {"objective": objective, "learning_rate": learning_rate, "num_leaves": 31, "verbosity": -1,
              "metric": "ndcg", "eval_at": [10], "seed": 0, "deterministic": True}
    train_set = train_data.to_lightgbm(params={"verbosity": -1})
    valid_set = valid_data.to_lightgbm(reference=train_set, params={"verbosity": -1})
    return lgb.train(params, train_set, rounds, valid_sets=[valid_set],
                     callbacks=[lgb.early_stopping(30, verbose=False)])


def ndcg10(model, data):
    scores = model.predict(data.X, num_iteration=model.best_iteration)
    return float(metrics.ndcg(scores, data.labels, offsets=data.offsets, k=10))


def median_step(objective, scores, data) -> float:
    grad, hess = objective.gradients(scores, data.labels, data.offsets)
    moving = grad != 0
    return float(np.median(np.abs(grad[moving]) / hess[moving]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", nargs="+", default=list(DEFAULT_RUNS))
    parser.add_argument("--datasets", nargs="+", choices=("mq2008", "synthetic"), default=["mq2008", "synthetic"])
    parser.add_argument("--learning-rates", nargs="+", type=float, default=[0.1])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--warm-rounds", type=int, default=20)
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--mq2008-fold", type=Path, default=MQ2008, help="default: %(default)s")
    args = parser.parse_args(argv)
    lambda_gradients = UMart(window=1, lightgbm_arithmetic=True)
    for name, (train_data, valid_data, test_data) in datasets(args.datasets, args.mq2008_fold):
        warm = train("lambdarank", train_data, valid_data, 0.1, args.warm_rounds)
        scores = warm.predict(train_data.X, num_iteration=args.warm_rounds)
        reference = median_step(lambda_gradients, scores, train_data)
        print(f"\n## {name}: median Newton step |g|/h at lambdarank's scores after {args.warm_rounds} rounds\n")
        print("| configuration | median step | / lambdarank's |\n|---|---|---|")
        print(f"| lambdarank | {reference:.3f} | 1.00 |")
        for run in args.runs:
            if run != "lambdarank":
                step = median_step(objective_of(run), scores, train_data)
                print(f"| {run} | {step:.3f} | {step / reference:.2f} |")
        if args.skip_training:
            continue
        print(f"\n## {name}: training (31 leaves, at most {args.rounds} rounds, early stopping 30)\n")
        print("| configuration | learning rate | best iteration | train NDCG@10 | validation NDCG@10 | test NDCG@10 "
              "| seconds |\n|---|---|---|---|---|---|---|")
        for run in args.runs:
            for learning_rate in args.learning_rates:
                start = time.perf_counter()
                model = train(objective_of(run), train_data, valid_data, learning_rate, args.rounds)
                seconds = time.perf_counter() - start
                test = f"{ndcg10(model, test_data):.4f}" if test_data is not None else "-"
                print(f"| {run} | {learning_rate:g} | {model.best_iteration} | {ndcg10(model, train_data):.4f} "
                      f"| {ndcg10(model, valid_data):.4f} | {test} | {seconds:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
