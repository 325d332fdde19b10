"""Click-through rate per position of plboost's position-based click simulation beside XGBoost's
(``xgboost.testing.data.simulate_one_fold``, the demo's PBM), on the same data and logging scores, where the two
models coincide: ULTRA's examination table (0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06, then 0.06),
click probabilities (0.1, 0.16, 0.28, 0.52, 1.0) by label (plboost's graded model with eps- = 0.1, eps+ = 1 over
labels up to 4), every document shown, a deterministic logger.

    python scripts/xgboost_clicks.py [--train ../shared/data/MQ2008/Fold1/train.txt.gz] [--impressions 200]

Prints, per position (1-based), the rate each simulation gives and what it should be: for the ranking actually
shown, theta_p times the mean click probability of the documents the logger ranks at p; for XGBoost's recorded
position (``argsort(scores)[::-1]`` stored per document: the index of the document at that rank, the inverse
permutation), theta_p times the mean click probability of the documents whose stored value is p; and XGBoost's
clicks drawn again from its own model with independent uniforms (its simulation reseeds its generator, 1994,
for every query, so every query draws the same uniforms).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ULTRA_EXAMINATION = (0.68, 0.61, 0.48, 0.34, 0.28, 0.20, 0.11, 0.10, 0.08, 0.06)
XGBOOST_CLICK = np.array([0.1, 0.16, 0.28, 0.52, 1.0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", default=str(ROOT.parent / "shared/data/MQ2008/Fold1/train.txt.gz"))
    parser.add_argument("--impressions", type=int, default=200, help="plboost's impressions per query")
    parser.add_argument("--positions", type=int, default=12)
    args = parser.parse_args(argv)
    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        parser.error("xgboost.testing.data, XGBoost's click simulation, imports scikit-learn: pip install scikit-learn")
    import scipy.sparse as sp
    from xgboost.testing.data import simulate_one_fold

    from plboost.clicks import PositionBasedModel, simulate_clicks
    from plboost.data import load_svmlight
    from plboost.engines import train

    data = load_svmlight(args.train)
    if data.labels.max() > 4:
        parser.error(f"--train: labels up to 4 (XGBoost's click table), got {data.labels.max():g}")
    rng = np.random.default_rng(0)
    share = rng.choice(data.n_queries, size=max(1, data.n_queries // 10), replace=False)
    logger = train("lightgbm", "lambdarank", data.subset(np.sort(share)), rounds=50, progress=False)
    scores = logger.predict(data.X).astype(np.float32)

    # XGBoost's simulation: one impression per query, its own PBM, its stored positions
    qid = np.repeat(np.arange(data.n_queries), data.group_sizes).astype(np.int32)
    fold = simulate_one_fold((sp.csr_matrix(data.X), data.labels.astype(np.int32), qid), scores)
    # plboost's: the same tables, every document shown, many impressions per query
    model = PositionBasedModel(examination_table=ULTRA_EXAMINATION, positive_noise=1.0, negative_noise=0.1)
    widest = int(data.group_sizes.max())
    log = simulate_clicks(data, scores.astype(np.float64), n_impressions=args.impressions * data.n_queries,
                          top_k=widest, click_model=model, seed=1, max_label=4)

    theta = np.r_[ULTRA_EXAMINATION, np.full(max(0, widest - 10), ULTRA_EXAMINATION[-1])]
    gamma = XGBOOST_CLICK[data.labels.astype(int)]
    rank = np.empty(data.n_docs, dtype=np.int64)  # each document's rank under the logger, 0-based
    for q in range(data.n_queries):
        lo, hi = data.offsets[q], data.offsets[q + 1]
        rank[lo + np.argsort(-scores[lo:hi], kind="stable")] = np.arange(hi - lo)
    print(f"{args.train}: {data.n_queries} queries, {data.n_docs} documents; plboost {log.n_impressions} "
          f"impressions, XGBoost one per query")
    # XGBoost's clicks drawn again with independent uniforms (its simulation draws the same ones for every query)
    stored_theta = theta[np.minimum(fold.pos, widest - 1)]
    redrawn = np.random.default_rng(2).random(data.n_docs) < stored_theta * gamma
    print("| position | plboost CTR | shown ranking's theta x mean gamma | XGBoost CTR at its stored position | "
          "the same, uniforms drawn independently | theta x mean gamma of the documents stored there | queries |")
    print("|---|---|---|---|---|---|---|")
    for p in range(args.positions):
        ours = log.click[log.position == p + 1].mean()
        shown = theta[p] * gamma[rank == p].mean()
        stored = fold.pos == p
        print(f"| {p + 1} | {ours:.4f} | {shown:.4f} | {fold.click[stored].mean():.4f} | "
              f"{redrawn[stored].mean():.4f} | {theta[p] * gamma[stored].mean():.4f} | {int((rank == p).sum())} |")
    agree = np.mean(fold.pos == rank)
    print(f"XGBoost's stored position equals the displayed rank for {agree:.1%} of the documents")
    return 0


if __name__ == "__main__":
    sys.exit(main())
