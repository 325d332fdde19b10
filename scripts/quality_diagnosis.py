"""Why PLRank trails lambdarank on MQ2008: where its loss and gradients go, query by query (issue 28).

    python scripts/quality_diagnosis.py ../shared/data/MQ2008            # 5 folds, about a minute
    python scripts/quality_diagnosis.py ../shared/data/MQ2008 --folds Fold1 --rounds 100

For every fold, LightGBM trains lambdarank and PLRank(top_k=10) with the same trees (learning rate 0.1, 31
leaves, early stopping on the validation file's NDCG@10, at most ``--rounds`` rounds). Then three tables,
each over the folds' queries pooled, by the number of relevant documents of a query:

1. Test NDCG@10 of both models (queries without a relevant document score 1 for both and are left out).
2. At the lambdarank model's training scores, PLRank's loss split by what its sampled permutation puts at
   each of the K positions: a relevant document, or one of the irrelevant (label 0) documents, all tied,
   whose order the permutation draws at random. The second part is a loss on an order that no metric
   rewards: its share of the loss, and the norm of its gradient (which moves only irrelevant documents)
   against the whole gradient's, say how much PLRank spends on it.
3. The gradients of both objectives at the same scores (lambdarank's are LightGBM's own arithmetic,
   ``UMart(window=1, lightgbm_arithmetic=True)``): per query, the cosine between them, with and without
   the irrelevant positions' part of PLRank's, and the ratio of their norms.

The irrelevant part is computed plainly here from the permutations PLRank draws (``PLRankState``), not
from its kernel: the losses of the two parts must add up to the kernel's loss (checked, printed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np

from plboost import metrics
from plboost.data.layouts import find_layout
from plboost.data.splits import load_splits
from plboost.objectives import PLRank, UMart

GROUPS = ((1, 1), (2, 2), (3, 5), (6, 10**9))


def group_name(low: int, high: int) -> str:
    return str(low) if low == high else (f"{low}+" if high >= 10**9 else f"{low}-{high}")


def train(objective, train_data, valid_data, rounds: int):
    params = {"objective": objective, "learning_rate": 0.1, "num_leaves": 31, "verbosity": -1, "metric": "ndcg",
              "eval_at": [10], "seed": 0, "deterministic": True, "num_threads": 2}
    train_set = train_data.to_lightgbm(params={"verbosity": -1})
    valid_set = valid_data.to_lightgbm(reference=train_set, params={"verbosity": -1})
    return lgb.train(params, train_set, rounds, valid_sets=[valid_set],
                     callbacks=[lgb.early_stopping(50, verbose=False)])


def split_loss(scores, labels, offsets, state, query: int):
    """PLRank's loss of one query (mean over permutations) split into the terms of positions that its
    permutation fills with a relevant document and those it fills with an irrelevant one, and the gradient of
    the second part (it moves irrelevant documents only, and sums to 0 over them)."""
    lo, hi = offsets[query], offsets[query + 1]
    s, y = scores[lo:hi], labels[lo:hi]
    relevant_part = irrelevant_part = 0.0
    tie_gradient = np.zeros(hi - lo)
    for p in range(state.n_permutations):
        top = state.permutation_top(query, p)
        remaining = np.ones(hi - lo, dtype=bool)
        for doc in top:
            m = s[remaining].max()
            log_z = m + np.log(np.exp(s[remaining] - m).sum())
            term = log_z - s[doc]
            if y[doc] > 0:
                relevant_part += term
            else:
                irrelevant_part += term
                tie_gradient[remaining] += np.exp(s[remaining] - log_z)
                tie_gradient[doc] -= 1.0
            remaining[doc] = False
    n = state.n_permutations
    return relevant_part / n, irrelevant_part / n, tie_gradient / n


def cosine(a, b) -> float:
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / norm) if norm > 0 else np.nan


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="a benchmark directory with validation files (plboost compare's "
                                                "layouts: LETOR folds, or one train/vali/test triple)")
    parser.add_argument("--folds", nargs="+", help="the splits to use (default: all)")
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args(argv)
    try:
        layout = find_layout(args.root)
    except (FileNotFoundError, ValueError) as error:
        parser.error(str(error))
    splits = [split for split in layout.splits if not args.folds or split.name in args.folds]
    if not splits or any(split.valid is None for split in splits):
        parser.error(f"{args.root}: no split{' named ' + ', '.join(args.folds) if args.folds else ''} with a "
                     "validation file (scripts/hold_out_validation.py makes one)")

    plrank = PLRank(top_k=10)
    lambda_gradients = UMart(window=1, lightgbm_arithmetic=True)
    rows = {group: {"ndcg_lr": [], "ndcg_pl": [], "loss_rel": [], "loss_irr": [], "tie_norm": [], "cos": [],
                    "cos_without_ties": [], "norm_ratio": [], "k_irr": []} for group in GROUPS}
    largest_gap = 0.0
    for split in splits:
        fold = split.name
        train_data, valid_data, test_data = load_splits(split.train, split.valid, split.test)
        models = {name: train(objective, train_data, valid_data, args.rounds)
                  for name, objective in (("lambdarank", "lambdarank"), ("plrank", PLRank(top_k=10)))}
        test_ndcg = {name: metrics.ndcg(model.predict(test_data.X, num_iteration=model.best_iteration),
                                        test_data.labels, offsets=test_data.offsets, k=10, per_query=True)
                     for name, model in models.items()}
        print(f"{fold}: best iterations lambdarank {models['lambdarank'].best_iteration}, "
              f"plrank {models['plrank'].best_iteration}", file=sys.stderr)
        n_relevant_test = np.add.reduceat(test_data.labels > 0, test_data.offsets[:-1])
        scores = models["lambdarank"].predict(train_data.X, num_iteration=models["lambdarank"].best_iteration)
        labels, offsets = train_data.labels, train_data.offsets
        state = plrank.state(labels, offsets)
        grad_pl, _ = plrank.gradients(scores, labels, offsets)
        grad_lr, _ = lambda_gradients.gradients(scores, labels, offsets)
        kernel_losses = plrank.losses(scores, labels, offsets)
        n_relevant = np.add.reduceat(labels > 0, offsets[:-1])
        for group in GROUPS:
            low, high = group
            row = rows[group]
            chosen = (n_relevant_test >= low) & (n_relevant_test <= high)
            row["ndcg_lr"].extend(test_ndcg["lambdarank"][chosen])
            row["ndcg_pl"].extend(test_ndcg["plrank"][chosen])
            for q in np.flatnonzero((n_relevant >= low) & (n_relevant <= high)):
                lo, hi = offsets[q], offsets[q + 1]
                relevant_part, irrelevant_part, tie_gradient = split_loss(scores, labels, offsets, state, q)
                largest_gap = max(largest_gap, abs(relevant_part + irrelevant_part - kernel_losses[q]))
                row["loss_rel"].append(relevant_part)
                row["loss_irr"].append(irrelevant_part)
                row["k_irr"].append(int(np.sum(labels[lo + state.permutation_top(q, 0)] == 0)))
                g_pl, g_lr = grad_pl[lo:hi].astype(float), grad_lr[lo:hi].astype(float)
                row["tie_norm"].append(np.linalg.norm(tie_gradient) / max(np.linalg.norm(g_pl), 1e-300))
                row["cos"].append(cosine(g_pl, g_lr))
                row["cos_without_ties"].append(cosine(g_pl - tie_gradient, g_lr))
                row["norm_ratio"].append(np.linalg.norm(g_pl) / max(np.linalg.norm(g_lr), 1e-300))

    print(f"# PLRank(top_k=10) against lambdarank, {args.root.name}, {', '.join(s.name for s in splits)}\n")
    print(f"Loss split check: the two parts add up to the kernel's loss within {largest_gap:.1e}.\n")
    print("| relevant documents | test queries | lambdarank NDCG@10 | PLRank NDCG@10 | difference |")
    print("|---|---|---|---|---|")
    for group, row in rows.items():
        lr, pl = np.array(row["ndcg_lr"]), np.array(row["ndcg_pl"])
        if lr.size == 0:
            print(f"| {group_name(*group)} | 0 | | | |")
            continue
        print(f"| {group_name(*group)} | {lr.size} | {lr.mean():.4f} | {pl.mean():.4f} "
              f"| {pl.mean() - lr.mean():+.4f} |")
    print("\nAt the lambdarank model's training scores, medians over training queries:\n")
    print("| relevant documents | training queries | irrelevant of the K=10 positions | PLRank loss on them "
          "| norm of their gradient / PLRank's | cosine(PLRank, lambdarank) | the same without them "
          "| norm PLRank / lambdarank |")
    print("|---|---|---|---|---|---|---|---|")
    for group, row in rows.items():
        loss_rel, loss_irr = np.array(row["loss_rel"]), np.array(row["loss_irr"])
        if loss_rel.size == 0:
            print(f"| {group_name(*group)} | 0 | | | | | | |")
            continue
        share = loss_irr.sum() / (loss_rel.sum() + loss_irr.sum())
        print(f"| {group_name(*group)} | {loss_rel.size} | {np.median(row['k_irr']):.0f} | {share:.0%} "
              f"| {np.median(row['tie_norm']):.2f} | {np.nanmedian(row['cos']):.2f} "
              f"| {np.nanmedian(row['cos_without_ties']):.2f} | {np.median(row['norm_ratio']):.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
