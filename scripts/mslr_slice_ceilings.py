"""The click study's supervised ceilings on the MSLR slice, and what early stopping on its validation queries does
to them: lambdarank and PL-Rank-3 (its default and three variants) on the true labels of each of the 5 splits of
``scripts/click_study.py`` (34 training queries, 9 validating, 43 testing), with the study's tree settings, printing
each model's validation and test NDCG@10 and the round early stopping chose, then the means.

    python scripts/mslr_slice_ceilings.py
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from click_study import TREE, _splits  # noqa: E402  (the click study's splits and settings)


def main() -> int:
    from plboost.engines import train as fit
    from plboost.metrics import ndcg
    from plboost.objectives import PLRank3

    configurations = {"lambdarank": "lambdarank", "pl_rank3": PLRank3(),
                      "pl_rank3 n_samples=100": PLRank3(n_samples=100), "pl_rank3 top_k=None": PLRank3(top_k=None),
                      "pl_rank3 curvature=lambda": PLRank3(curvature="lambda")}
    results = {name: [] for name in configurations}
    print("| split | objective | validation NDCG@10 | test NDCG@10 | best round |")
    print("|---|---|---|---|---|")
    for split in (1, 2, 3, 4, 5):
        train, valid, test = _splits("mslr", split)
        for name, objective in configurations.items():
            model = fit("lightgbm", objective, train, valid, seed=0, **TREE)
            scores = [ndcg(model.predict(part.X), part.labels, offsets=part.offsets, k=10) for part in (valid, test)]
            results[name].append((*scores, model.best_iteration))
            print(f"| {split} | {name} | {scores[0]:.4f} | {scores[1]:.4f} | {model.best_iteration} |", flush=True)
    print("\n| objective | validation NDCG@10 | test NDCG@10 | mean best round |")
    print("|---|---|---|---|")
    for name, rows in results.items():
        values = np.array(rows, dtype=float)
        print(f"| {name} | {values[:, 0].mean():.4f} | {values[:, 1].mean():.4f} | {values[:, 2].mean():.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
