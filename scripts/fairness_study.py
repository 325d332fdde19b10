"""Fair Plackett-Luce policies against post-hoc randomisation of lambdarank: expected NDCG@10 against exposure
disparity, on the test queries.

    python scripts/fairness_study.py run --out docs/results/fairness_mq2008.jsonl [--data mq2008]
        [--folds 1 2 3 4 5] [--seeds 0 1 2]
    python scripts/fairness_study.py report docs/results/fairness_mq2008.jsonl [--plots docs/results/figures]

Groups, as the fairness-of-exposure papers define them from a document feature: MQ2008's feature 41 (PageRank
in LETOR 4.0's feature list) and the MSLR slice's feature 130 (PageRank in Microsoft's list), each split at the
median of its training documents: documents above it form group 1, the rest group 0.

Per (fold, seed) unit: LightGBM's lambdarank, early-stopped on the validation queries' NDCG@10 (learning rate
0.05, 31 leaves, at most 500 rounds, patience 50: a deterministic ranker's own protocol); each policy of its test
scores at the temperatures ``TEMPERATURES`` (0: the deterministic ranking) is the post-hoc randomisation
baseline. PL-Rank-3 (``FairPLRank3`` at weight 0, which is PL-Rank-3 bit for bit) and ``FairPLRank3`` at each
fairness weight of ``WEIGHTS`` for each disparity: the same trees for 500 rounds, cut at the checkpoint of
``CHECKPOINTS`` whose policy has the highest validation value of the objective (expected NDCG@10 less the weight
times the disparity; the validation NDCG@10 of the deterministic ranking would stop a policy early for being
random); PL-Rank-3's scores are randomised at the same temperatures too, the fair models evaluated as their own
policy (temperature 1). Every policy is scored by :func:`plboost.fairness.evaluate_policy` on the test queries
(exposure under DCG's discount over the top 10; exact for queries of at most 12 documents, else 2,000 sampled
rankings): expected NDCG@10 and each disparity.

``report``: per data set and disparity, the means over the units with 95% t intervals, and the Pareto comparison
with lambdarank's randomisation, and the same with PL-Rank-3's. Per unit: the Pareto front of the baseline's
temperatures (the points no other beats in both); for each fair point, the lowest disparity that front reaches at
the same expected NDCG@10 or above, and the highest expected NDCG@10 it reaches at the same disparity or below
(linear between the front's points; not counted where the front does not reach). These are paired differences
over the units, with Holm-adjusted p-values of one-sample t-tests of the differences (the family: the weights of
one disparity and direction).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from click_study import DATA, TREE, _holm, _resume, _splits  # noqa: E402  (the click study's data, trees, records)

#: the feature (1-based, as the files number them) whose training median splits the documents into two groups
GROUP_FEATURE = {"mq2008": 41, "mslr": 130}
TEMPERATURES = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
DISPARITIES = ("demographic_parity", "disparate_treatment", "expected_exposure")
WEIGHTS = {"demographic_parity": (1.0, 2.0, 3.0, 5.0, 10.0, 30.0), "disparate_treatment": (0.03, 0.1, 0.3, 1.0, 3.0),
           "expected_exposure": (0.1, 0.3, 0.5, 1.0, 2.0, 3.0)}
METRICS = ("expected_NDCG@10", "demographic_parity", "disparate_treatment", "expected_exposure", "individual")
EVALUATION_SAMPLES = 2000
#: the rounds at which a policy model's validation value is read (PL-Rank-3's and the fair ones')
CHECKPOINTS = (25, 50, 100, 200, 300, 400, 500)


def _groups(dataset, train):
    """Group 1: the documents whose ``GROUP_FEATURE`` is above the training documents' median; group 0 the rest."""
    column = GROUP_FEATURE[dataset] - 1
    threshold = float(np.median(np.asarray(train.X[:, column], dtype=np.float64)))
    return lambda data: (np.asarray(data.X[:, column], dtype=np.float64) > threshold).astype(np.int64)


def _evaluate(scores, test, groups, temperature, seed):
    from plboost.fairness import evaluate_policy

    result = evaluate_policy(scores, test.labels, test.offsets, groups=groups, temperature=temperature, k=10,
                             n_samples=EVALUATION_SAMPLES, seed=seed)
    return {name: result[name] for name in METRICS}


def _policy_model(objective, train, valid, valid_groups, seed):
    """``objective`` trained for ``max(CHECKPOINTS)`` rounds, cut at the checkpoint whose policy (temperature 1) has
    the highest validation expected NDCG@10 less the objective's weight times its disparity there (the objective's
    own value; a disparity the validation queries do not define counts 0), and that checkpoint."""
    import dataclasses

    from plboost.engines import train as fit

    model = fit("lightgbm", objective, train, seed=seed, learning_rate=TREE["learning_rate"],
                num_leaves=TREE["num_leaves"], rounds=max(CHECKPOINTS), progress=False)
    best = None
    for rounds in CHECKPOINTS:
        cut = dataclasses.replace(model, best_iteration=rounds)
        values = _evaluate(cut.predict(valid.X), valid, valid_groups, 1.0, seed)
        value = values["expected_NDCG@10"]
        if objective.fairness_weight:
            value -= objective.fairness_weight * np.nan_to_num(values[objective.disparity])
        if best is None or value > best[0]:
            best = (value, cut, rounds)
    return best[1], best[2]


def run(args) -> int:
    from plboost.engines import train as fit
    from plboost.objectives import FairPLRank3

    commit, done = _resume(args.out)
    for seed in args.seeds:
        for fold in args.folds:
            unit = [args.data, fold, seed]
            keys = [(m, t) for m in ("lambdarank", "pl_rank3") for t in TEMPERATURES]
            keys += [(f"fair_{name}", w) for name in DISPARITIES for w in WEIGHTS[name]]
            wanted = [k for k in keys if tuple(unit + list(k)) not in done]
            if not wanted:
                continue
            started = time.perf_counter()
            train, valid, test = _splits(args.data, fold)
            group_of = _groups(args.data, train)
            train_groups, test_groups = group_of(train), group_of(test)
            valid_groups = group_of(valid)
            lambdarank = fit("lightgbm", "lambdarank", train, valid, seed=seed, **TREE)
            pl_rank3, pl_rank3_rounds = _policy_model(FairPLRank3(seed=seed), train, valid, valid_groups, seed)
            results = []
            for method, parameter in wanted:
                if method in ("lambdarank", "pl_rank3"):
                    model, temperature = (lambdarank, parameter) if method == "lambdarank" else (pl_rank3, parameter)
                    rounds = lambdarank.best_iteration if method == "lambdarank" else pl_rank3_rounds
                else:
                    disparity = method.removeprefix("fair_")
                    objective = FairPLRank3(disparity=disparity, fairness_weight=parameter, groups=train_groups,
                                            seed=seed)
                    model, rounds = _policy_model(objective, train, valid, valid_groups, seed)
                    temperature = 1.0
                metrics = _evaluate(model.predict(test.X), test, test_groups, temperature, seed)
                results.append({"key": unit + [method, parameter], **metrics, "temperature": temperature,
                                "rounds": rounds, "commit": commit})
            with args.out.open("a") as out:
                for result in results:
                    out.write(json.dumps(result) + "\n")
            print(f"{unit}: {time.perf_counter() - started:.0f} s, {len(results)} policies", flush=True)
    return 0


def _load(path: Path):
    import pandas as pd

    with path.open() as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    frame = pd.DataFrame([r["key"] for r in rows], columns=["data", "fold", "seed", "method", "parameter"])
    for name in METRICS:
        frame[name] = [r[name] for r in rows]
    return frame


def _interval(values: np.ndarray) -> tuple[float, float]:
    from scipy import stats

    values = values[~np.isnan(values)]
    if values.size < 2:
        return float(values.mean()) if values.size else float("nan"), float("nan")
    return float(values.mean()), float(stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size))


def _frontier(curve, ndcg, disparity):
    """The Pareto front of a baseline's points (one unit's temperatures): those that no other point beats in both
    expected NDCG@10 (higher) and disparity (lower), sorted by NDCG@10, so that along it both rise."""
    points = sorted(zip(curve[ndcg], curve[disparity], strict=True), key=lambda p: (-p[0], p[1]))
    front = []
    for x, y in points:  # from the highest NDCG@10 down, each kept point lowers the disparity
        if not front or y < front[-1][1]:
            front.append((x, y))
    return np.array(front[::-1])


def _disparity_at(front, x):
    """The lowest disparity the baseline reaches at expected NDCG@10 >= x (linear between its front's points; the
    front's lowest disparity below its range); NaN above its highest NDCG@10."""
    if x > front[-1, 0]:
        return float("nan")
    return float(np.interp(x, front[:, 0], front[:, 1]))


def _ndcg_at(front, y):
    """The highest expected NDCG@10 the baseline reaches at disparity <= y; NaN below its lowest disparity."""
    if y < front[0, 1]:
        return float("nan")
    return float(np.interp(y, front[:, 1], front[:, 0]))


def report(args) -> int:
    from scipy import stats

    frame = _load(args.results)
    ndcg = "expected_NDCG@10"
    for dataset, part in frame.groupby("data"):
        units = part.groupby(["fold", "seed"]).ngroups
        print(f"\n## {dataset} ({units} units)\n")
        for disparity in DISPARITIES:
            print(f"\n### {disparity}\n")
            print(f"Expected NDCG@10 and {disparity} of each policy on the test queries, mean ± half-width of the "
                  "95% t interval over the units:\n")
            print(f"| policy | expected NDCG@10 | {disparity} |")
            print("|---|---|---|")
            rows = [(m, t) for m in ("lambdarank", "pl_rank3") for t in TEMPERATURES]
            rows += [(f"fair_{disparity}", w) for w in WEIGHTS[disparity]]
            for method, parameter in rows:
                cell = part[(part.method == method) & (part.parameter == parameter)]
                if cell.empty:
                    continue
                label = f"{method} at T={parameter:g}" if method in ("lambdarank", "pl_rank3") \
                    else f"{method}, weight {parameter:g}"
                n_mean, n_half = _interval(cell[ndcg].to_numpy())
                d_mean, d_half = _interval(cell[disparity].to_numpy())
                print(f"| {label} | {n_mean:.4f} ± {n_half:.4f} | {d_mean:.5f} ± {d_half:.5f} |")
            for baseline in ("lambdarank", "pl_rank3"):
                _pareto(part, disparity, ndcg, stats, baseline)
            if args.plots:
                _plot(args.plots, dataset, disparity, part, ndcg)
    return 0


def _pareto(part, disparity, ndcg, stats, baseline) -> None:
    print(f"\nAgainst {baseline}'s randomisation (the front of its temperatures), per unit at the fair point's "
          f"expected NDCG@10 ({disparity} difference: fair - {baseline}, below 0 is better) and at its disparity "
          "(NDCG@10 difference, above 0 is better); mean over the units the front reaches, Holm-adjusted p of "
          "t-tests of the differences:\n")
    print("| weight | units | disparity at equal NDCG@10 | NDCG@10 at equal disparity |")
    print("|---|---|---|---|")
    method = f"fair_{disparity}"
    rows, p_equal_ndcg, p_equal_disparity = [], [], []
    for weight in WEIGHTS[disparity]:
        d_diff, n_diff = [], []
        for _, unit in part.groupby(["fold", "seed"]):
            fair = unit[(unit.method == method) & (unit.parameter == weight)]
            curve = unit[unit.method == baseline]
            if fair.empty or curve.empty:
                continue
            x, y = float(fair[ndcg].iloc[0]), float(fair[disparity].iloc[0])
            front = _frontier(curve.dropna(subset=[ndcg, disparity]), ndcg, disparity)
            d_diff.append(y - _disparity_at(front, x))
            n_diff.append(x - _ndcg_at(front, y))
        d_diff, n_diff = np.array(d_diff), np.array(n_diff)
        rows.append((weight, d_diff, n_diff))
        p_equal_ndcg.append(_p(d_diff, stats))
        p_equal_disparity.append(_p(n_diff, stats))
    adjusted_d, adjusted_n = _holm(np.array(p_equal_ndcg)), _holm(np.array(p_equal_disparity))
    for (weight, d_diff, n_diff), p_d, p_n in zip(rows, adjusted_d, adjusted_n, strict=True):
        shown_d = f"{np.nanmean(d_diff):+.5f} ({np.sum(~np.isnan(d_diff))} units, p {p_d:.3g})" \
            if np.any(~np.isnan(d_diff)) else "outside the curve"
        shown_n = f"{np.nanmean(n_diff):+.4f} ({np.sum(~np.isnan(n_diff))} units, p {p_n:.3g})" \
            if np.any(~np.isnan(n_diff)) else "outside the curve"
        print(f"| {weight:g} | {len(d_diff)} | {shown_d} | {shown_n} |")


def _p(differences: np.ndarray, stats) -> float:
    kept = differences[~np.isnan(differences)]
    if kept.size < 2 or np.all(kept == kept[0]):
        return 1.0
    return float(stats.ttest_1samp(kept, 0.0).pvalue)


def _plot(directory: Path, dataset, disparity, part, ndcg) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(figsize=(6, 4.2))
    curves = [("lambdarank", TEMPERATURES, "lambdarank, temperatures 0-8"),
              ("pl_rank3", TEMPERATURES, "PL-Rank-3, temperatures 0-8"),
              (f"fair_{disparity}", WEIGHTS[disparity], "fair PL-Rank-3, weights")]
    for method, parameters, label in curves:
        points = []
        for parameter in parameters:
            cell = part[(part.method == method) & (part.parameter == parameter)]
            if not cell.empty:
                points.append((*_interval(cell[ndcg].to_numpy()), *_interval(cell[disparity].to_numpy())))
        if points:
            x, x_half, y, y_half = np.array(points).T
            axes.errorbar(x, y, xerr=x_half, yerr=y_half, marker="o", capsize=2, label=label)
    axes.set_xlabel("expected NDCG@10 (test)")
    axes.set_ylabel(disparity.replace("_", " "))
    axes.set_title(f"{dataset}: {disparity.replace('_', ' ')} against expected NDCG@10")
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(directory / f"fairness_{dataset}_{disparity}.png", dpi=120)
    plt.close(figure)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="train and evaluate the policies, appending to --out")
    run_parser.add_argument("--out", type=Path, required=True)
    run_parser.add_argument("--data", choices=sorted(DATA), default="mq2008")
    run_parser.add_argument("--folds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    run_parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    report_parser = commands.add_parser("report", help="tables (and plots) of a results file")
    report_parser.add_argument("results", type=Path)
    report_parser.add_argument("--plots", type=Path)
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
