"""How far the first tree moves the scores, and where held-out NDCG@10 peaks, per objective configuration.

    python scripts/early_rounds.py [--rounds 300] [--data lgbex,mslr,mq2008] CONFIG [CONFIG ...]

A CONFIG is a ``plboost compare --run`` string (``plrank``, ``listnet,curvature=bound``, ``lambdarank``). Each is
trained on LightGBM at learning rate 0.1, 31 leaves, one thread, for --rounds rounds, on LightGBM's ranking
example (rank.train; the curve on rank.test, the only other file), the MSLR-WEB10K slice (its train file; the
curve on its test file) and MQ2008's five folds (the curve on vali, and test NDCG@10 at vali's best iteration).
Printed per dataset and configuration: the range of the training scores after one tree (max - min), the best
iteration of the held-out curve, its peak, and its values after 1, 5, 20, 50 rounds and the last.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import lightgbm as lgb
import numpy as np

from plboost import metrics
from plboost.data import load_svmlight
from plboost.experiment import RunSpec, parse_run

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def splits(which: list[str]):
    """(name, train, curve, test or None) of each dataset asked for."""
    if "lgbex" in which:
        example = SHARED / "lightgbm_lambdarank"
        yield "LightGBM example", example / "rank.train.gz", example / "rank.test.gz", None
    if "mslr" in which:
        mslr = SHARED / "MSLR-WEB10K-5k"
        yield "MSLR slice", mslr / "msn1.fold1.train.5k.txt.gz", mslr / "msn1.fold1.test.5k.txt.gz", None
    if "mq2008" in which:
        for fold in range(1, 6):
            folder = SHARED / "MQ2008" / f"Fold{fold}"
            yield f"MQ2008 Fold{fold}", folder / "train.txt.gz", folder / "vali.txt.gz", folder / "test.txt.gz"


def objective_of(config: str):
    spec = parse_run(config, RunSpec())
    if spec.objective in ("lambdarank", "rank_xendcg"):
        return spec.objective
    from plboost.objectives import get_objective

    return get_objective(spec.objective, **spec.objective_params)


def curve(config: str, train, held_out, rounds: int):
    params = {"objective": objective_of(config), "learning_rate": 0.1, "num_leaves": 31, "verbosity": -1,
              "metric": "ndcg", "eval_at": [10], "seed": 0, "force_col_wise": True, "deterministic": True,
              "num_threads": 1}
    train_set = lgb.Dataset(train.X, train.labels, group=np.diff(train.offsets), free_raw_data=False)
    held_set = lgb.Dataset(held_out.X, held_out.labels, group=np.diff(held_out.offsets), reference=train_set)
    record = {}
    booster = lgb.train(params, train_set, rounds, valid_sets=[held_set], valid_names=["held"],
                        callbacks=[lgb.record_evaluation(record)])
    first = booster.predict(train.X, num_iteration=1)
    return booster, np.array(record["held"]["ndcg@10"]), float(first.max() - first.min())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--data", default="lgbex,mslr,mq2008")
    args = parser.parse_args(argv)
    for config in args.configs:  # every configuration checked before anything trains
        try:
            objective_of(config)
        except ValueError as error:
            parser.error(f"{config}: {error}")
    unknown = set(args.data.split(",")) - {"lgbex", "mslr", "mq2008"}
    if unknown:
        parser.error(f"--data: unknown dataset(s) {', '.join(sorted(unknown))}; choose from lgbex, mslr, mq2008")
    marks = [r for r in (1, 5, 20, 50) if r < args.rounds]
    print("| data | configuration | first tree's score range | best iteration | peak | "
          + " | ".join(f"@{r}" for r in marks) + f" | @{args.rounds} | test at best |")
    print("|" + "---|" * (7 + len(marks)))
    for name, train_path, held_path, test_path in splits(args.data.split(",")):
        train, held = load_svmlight(train_path), load_svmlight(held_path)
        test = load_svmlight(test_path) if test_path else None
        for config in args.configs:
            booster, values, spread = curve(config, train, held, args.rounds)
            best = int(values.argmax()) + 1
            at_best = ""
            if test is not None:
                scores = booster.predict(test.X, num_iteration=best)
                at_best = f"{metrics.ndcg(scores, test.labels, offsets=test.offsets, k=10):.4f}"
            shown = " | ".join(f"{values[r - 1]:.4f}" for r in marks)
            print(f"| {name} | {config} | {spread:.3f} | {best} | {values.max():.4f} | {shown} | {values[-1]:.4f} | "
                  f"{at_best} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
