"""The click study's supervised ceilings on the MSLR slice, and what the stopping rule does to them, on the true
labels of each of the 5 splits of ``scripts/click_study.py`` (34 training queries, 9 validating, 43 testing) with
the study's trees (learning rate 0.05, 31 leaves):

- ``early-stopping`` (the click study's rule): at most 500 rounds, stopped after 50 without a better validation
  NDCG@10; lambdarank and PL-Rank-3 (its default and three variants); seed 0.
- ``checkpoints``: 500 rounds, cut at the checkpoint of 25, 50, 100, ..., 500 rounds with the best validation value
  (lambdarank: NDCG@10 of its ranking; PL-Rank-3: the expected NDCG@10 of its policy, what it optimises, as
  ``scripts/fairness_study.py`` selects); lambdarank and PL-Rank-3; seeds 0, 1 and 2.

Each model's test NDCG@10 (of the deterministic ranking), then the means; for ``checkpoints`` also the paired
difference (one-sample t over the 15 units: they share the one test file of 43 queries, so the units are not
independent samples of queries, and the p-value says less than it seems).

    python scripts/mslr_slice_ceilings.py [--protocol early-stopping|checkpoints] [--data mslr|mq2008]
"""

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from click_study import TREE, _splits  # noqa: E402  (the click study's splits and settings)

CHECKPOINTS = (25, 50, 100, 200, 300, 400, 500)


def _checkpointed(objective, train, valid, seed):
    from plboost.engines import train as fit
    from plboost.fairness import evaluate_policy
    from plboost.metrics import ndcg

    model = fit("lightgbm", objective, train, seed=seed, learning_rate=TREE["learning_rate"],
                num_leaves=TREE["num_leaves"], rounds=max(CHECKPOINTS), progress=False)
    best = None
    for rounds in CHECKPOINTS:
        cut = dataclasses.replace(model, best_iteration=rounds)
        scores = cut.predict(valid.X)
        value = ndcg(scores, valid.labels, offsets=valid.offsets, k=10) if objective == "lambdarank" else \
            evaluate_policy(scores, valid.labels, valid.offsets, k=10, n_samples=2000, seed=seed)["expected_NDCG@10"]
        if best is None or value > best[0]:
            best = (value, cut)
    return best[1]


def main(argv=None) -> int:
    from scipy import stats

    from plboost.engines import train as fit
    from plboost.metrics import ndcg
    from plboost.objectives import PLRank3

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=("early-stopping", "checkpoints"), default="early-stopping")
    parser.add_argument("--data", choices=("mslr", "mq2008"), default="mslr",
                        help="the click study's data: the MSLR slice's 5 splits (default) or MQ2008's 5 folds")
    args = parser.parse_args(argv)
    protocol, dataset = args.protocol, args.data
    if protocol == "early-stopping":
        configurations = {"lambdarank": lambda seed: "lambdarank", "pl_rank3": lambda seed: PLRank3(),
                          "pl_rank3 n_samples=100": lambda seed: PLRank3(n_samples=100),
                          "pl_rank3 top_k=None": lambda seed: PLRank3(top_k=None),
                          "pl_rank3 curvature=lambda": lambda seed: PLRank3(curvature="lambda")}
        seeds = (0,)
    else:
        configurations = {"lambdarank": lambda seed: "lambdarank", "pl_rank3": lambda seed: PLRank3(seed=seed)}
        seeds = (0, 1, 2)
    results = {name: [] for name in configurations}
    print(f"data: {dataset}, protocol: {protocol}\n")
    print("| seed | split | objective | validation NDCG@10 | test NDCG@10 | rounds |")
    print("|---|---|---|---|---|---|")
    for seed in seeds:
        for split in (1, 2, 3, 4, 5):
            train, valid, test = _splits(dataset, split)
            for name, make in configurations.items():
                objective = make(seed)
                model = fit("lightgbm", objective, train, valid, seed=seed, **TREE) if protocol == "early-stopping" \
                    else _checkpointed(objective, train, valid, seed)
                scores = [ndcg(model.predict(part.X), part.labels, offsets=part.offsets, k=10)
                          for part in (valid, test)]
                results[name].append((*scores, model.best_iteration))
                print(f"| {seed} | {split} | {name} | {scores[0]:.4f} | {scores[1]:.4f} | {model.best_iteration} |",
                      flush=True)
    print("\n| objective | validation NDCG@10 | test NDCG@10 | mean rounds |")
    print("|---|---|---|---|")
    for name, rows in results.items():
        values = np.array(rows, dtype=float)
        print(f"| {name} | {values[:, 0].mean():.4f} | {values[:, 1].mean():.4f} | {values[:, 2].mean():.1f} |")
    if protocol == "checkpoints":
        difference = np.array(results["pl_rank3"])[:, 1] - np.array(results["lambdarank"])[:, 1]
        print(f"\nPL-Rank-3 - lambdarank, test NDCG@10: {difference.mean():+.4f} over {difference.size} units "
              f"(t-test p {stats.ttest_1samp(difference, 0.0).pvalue:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
