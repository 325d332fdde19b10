"""Rankers learned from simulated click logs, scored by test NDCG@10 on the true labels, against the click budget.

    python scripts/click_study.py run --out docs/results/clicks.jsonl [--data mq2008] [--folds 1 2 3 4 5]
        [--seeds 0 1 2] [--budgets 100 1000 10000 100000] [--click-models pbm cascade] [--loggers det stoch]
    python scripts/click_study.py report docs/results/clicks.jsonl [--plots docs/figures]

The semi-synthetic protocol of the unbiased learning-to-rank papers (Oosterhuis and de Rijke, SIGIR 2020): per
fold and simulation seed, a logging ranker (LightGBM lambdarank, 100 rounds) is trained on the labels of 1% of the
training queries (at least one); it shows the top 10 of every training query, by its scores ("det") or sampled
from its Plackett-Luce policy at temperature 1 ("stoch"); clicks come from the position-based model (eta 1,
click noise 0.1, 1.0, graded relevance) or the cascade model (one click at most, the same noise). Each budget is a
log of that many impressions (queries drawn uniformly), simulated with the unit's seed.

From each log: PL-Rank-3 (``gain="estimate"``, ``normalize=False``) on LightGBM from the naive, IPS and
policy-aware estimates (the examination the simulator's position-based model gives; with a stochastic logger,
also the examination EM estimates from the log with a relevance per document, and with either logger the one
regression EM estimates with the relevance a LightGBM model of the features) and the doubly robust ones (its regression
cross-fitted, LightGBM's L2 regression of the affine estimates), LambdaLoss at mu 0 (LambdaRank's pair weights)
with ``gain="estimate"`` on LightGBM and PL-Rank-3 on XGBoost from the policy-aware estimates, XGBoost's
``rank:ndcg`` with ``lambdarank_unbiased=True`` and LightGBM's lambdarank with ``position=`` on the displayed rows
(clicks as labels); beside them the logger and LightGBM's lambdarank and PL-Rank-3 (its defaults) trained on the
true training labels (the supervised ceilings). Every model: learning rate 0.05, 31 leaves, at most 500 rounds,
early-stopped after 50 on the validation file's true labels (NDCG@10); the test file is read only to score.

``run`` appends one JSON line per (unit, budget, method) to ``--out`` and skips those already there (saying how
many); ``report`` prints, per setting and budget, the mean test NDCG@10 with a 95% t interval over the folds x
seeds, and each estimator's paired difference to XGBoost's unbiased LambdaMART and to LightGBM's position debiasing
with Holm-adjusted p-values (paired t over the same units), and draws two plots per setting: the means with their
intervals, and each estimator's paired differences to the engines with theirs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = {
    "mq2008": lambda fold: [ROOT.parent / f"shared/data/MQ2008/Fold{fold}/{name}.txt.gz"
                            for name in ("train", "vali", "test")],
    # one fold, no validation file: a fifth of the training queries (by the fold number as seed) validates
    "mslr": lambda fold: [ROOT.parent / "shared/data/MSLR-WEB10K-5k/msn1.fold1.train.5k.txt.gz", None,
                          ROOT.parent / "shared/data/MSLR-WEB10K-5k/msn1.fold1.test.5k.txt.gz"],
}
TREE = dict(learning_rate=0.05, num_leaves=31, rounds=500, early_stopping=50, eval_at=10, progress=False)
METHODS = ("logger", "supervised", "supervised_pl_rank3", "naive", "ips", "policy_aware", "policy_aware_em",
           "policy_aware_em_features", "doubly_robust", "policy_aware_lambdarank", "policy_aware_xgboost",
           "xgboost_unbiased", "lightgbm_position")


def _splits(dataset: str, fold: int):
    from plboost.data import load_splits

    train, valid, test = load_splits(*DATA[dataset](fold))
    if valid is None:
        order = np.random.default_rng(fold).permutation(train.n_queries)
        cut = max(1, train.n_queries // 5)
        train, valid = train.subset(np.sort(order[cut:])), train.subset(np.sort(order[:cut]))
    return train, valid, test


def _click_model(name: str):
    from plboost.clicks import CascadeModel, PositionBasedModel

    noise = dict(positive_noise=1.0, negative_noise=0.1)
    return CascadeModel(eta=1.0, **noise) if name == "cascade" else PositionBasedModel(eta=1.0, **noise)


def _unit_models(train, valid, test, seed):
    """The logger (trained on 1% of the training queries) and the supervised ceilings (lambdarank and PL-Rank-3 on
    the true labels)."""
    from plboost.engines import train as fit
    from plboost.objectives import PLRank3

    rng = np.random.default_rng([seed, 2])
    share = np.sort(rng.choice(train.n_queries, size=max(1, round(0.01 * train.n_queries)), replace=False))
    logger = fit("lightgbm", "lambdarank", train.subset(share), rounds=100, seed=seed, progress=False)
    supervised = fit("lightgbm", "lambdarank", train, valid, seed=seed, **TREE)
    supervised_pl_rank3 = fit("lightgbm", PLRank3(), train, valid, seed=seed, **TREE)
    return logger, supervised, supervised_pl_rank3


def _methods(log, valid, seed, wanted):
    """The trained model of each method of ``wanted`` from ``log`` (a generator of (name, model))."""
    import functools

    from plboost.clicks import ClickData, PositionBasedModel, estimate_examination
    from plboost.clicks.training import cross_fitted_regression
    from plboost.engines import train as fit
    from plboost.engines.lightgbm import regression_model
    from plboost.objectives import LambdaLoss, PLRank3

    objective = PLRank3(gain="estimate", normalize=False)
    assumed = {"click_model": PositionBasedModel(eta=1.0, positive_noise=1.0, negative_noise=0.1)}

    def estimates(name, options):
        return lambda: fit("lightgbm", objective, ClickData(log, name, options), valid, seed=seed, **TREE)

    def doubly_robust():
        regressor = functools.partial(regression_model, seed=seed)
        prior = functools.partial(cross_fitted_regression, log, regressor, seed=seed)  # of the affine estimates
        return estimates("doubly_robust", {**assumed, "regression": lambda affine: prior(targets=affine)})()

    rows = log.displayed_rows if "xgboost_unbiased" in wanted or "lightgbm_position" in wanted else None
    makers = {
        "naive": estimates("naive", {}),
        "ips": estimates("ips", assumed),
        "policy_aware": estimates("policy_aware", assumed),
        "policy_aware_em": lambda: estimates("policy_aware",
                                             {**assumed, "examination": estimate_examination(log).relative})(),
        "policy_aware_em_features": lambda: estimates("policy_aware", {**assumed, "examination": estimate_examination(
            log, relevance="features", seed=seed).relative})(),
        "doubly_robust": doubly_robust,
        "policy_aware_lambdarank": lambda: fit("lightgbm", LambdaLoss(mu=0.0, gain="estimate"),
                                               ClickData(log, "policy_aware", assumed), valid, seed=seed, **TREE),
        "policy_aware_xgboost": lambda: fit("xgboost", objective, ClickData(log, "policy_aware", assumed), valid,
                                            seed=seed, **TREE),
        "xgboost_unbiased": lambda: fit("xgboost", "rank:ndcg", rows(), valid, seed=seed,
                                        engine_params={"lambdarank_unbiased": True}, **TREE),
        "lightgbm_position": lambda: fit("lightgbm", "lambdarank", rows(), valid, seed=seed, **TREE),
    }
    for name, make in makers.items():
        if name in wanted:
            yield name, make()


def _done(path: Path) -> set:
    if not path.exists():
        return set()
    with path.open() as lines:
        return {tuple(json.loads(line)["key"]) for line in lines if line.strip()}


def _resume(out: Path) -> tuple[str | None, set]:
    """The commit the results will record and the keys ``out`` holds already (said in one line, and kept)."""
    import subprocess

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or None
    done = _done(out)
    if done:
        print(f"{out}: {len(done)} results there already are kept and not trained again")
    out.parent.mkdir(parents=True, exist_ok=True)
    return commit, done


def run(args) -> int:
    from plboost.clicks import simulate_clicks
    from plboost.metrics import ndcg

    commit, done = _resume(args.out)
    splits = {}
    for seed in args.seeds:  # seeds outer: a partial run covers every fold
        for fold in args.folds:
            if fold not in splits:
                splits[fold] = _splits(args.data, fold)
            train, valid, test = splits[fold]
            models = None
            for click_model_name in args.click_models:
                for logger_kind in args.loggers:
                    for budget in args.budgets:
                        unit = [args.data, fold, seed, click_model_name, logger_kind, budget]
                        wanted = [m for m in METHODS if tuple(unit + [m]) not in done
                                  and not (m == "policy_aware_em" and logger_kind == "det")]
                        if not wanted:
                            continue
                        if models is None:
                            models = _unit_models(train, valid, test, seed)
                        logger, supervised, supervised_pl_rank3 = models
                        started = time.perf_counter()
                        log = simulate_clicks(train, logger.predict(train.X), n_impressions=budget, top_k=10,
                                              temperature=1.0 if logger_kind == "stoch" else 0.0,
                                              click_model=_click_model(click_model_name), seed=seed)
                        trained = [("logger", logger), ("supervised", supervised),
                                   ("supervised_pl_rank3", supervised_pl_rank3)]
                        results = []
                        for name, model in (*trained, *_methods(log, valid, seed, set(wanted))):
                            if name not in wanted:
                                continue
                            score = ndcg(model.predict(test.X), test.labels, offsets=test.offsets, k=10)
                            results.append({"key": unit + [name], "ndcg10": float(score),
                                            "rounds": getattr(model, "best_iteration", None),
                                            "clicks": int(log.click.sum()), "commit": commit})
                        with args.out.open("a") as out:
                            for result in results:
                                out.write(json.dumps(result) + "\n")
                        summary = ", ".join(f"{r['key'][-1]} {r['ndcg10']:.4f}" for r in results)
                        print(f"{unit}: {time.perf_counter() - started:.0f} s; {summary}", flush=True)
    return 0


def _load(path: Path):
    import pandas as pd

    with path.open() as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    frame = pd.DataFrame([r["key"] for r in rows],
                         columns=["data", "fold", "seed", "click_model", "logger", "budget", "method"])
    frame["ndcg10"] = [r["ndcg10"] for r in rows]
    return frame


#: the engines' own debiasing, against which plboost's estimators are tested
ENGINE_METHODS = ("xgboost_unbiased", "lightgbm_position")
#: the references: not estimators, not tested
REFERENCES = ("logger", "supervised", "supervised_pl_rank3")


def report(args) -> int:
    frame = _load(args.results)
    for key, part in frame.groupby(["data", "click_model", "logger"]):
        print(f"\n## {' / '.join(map(str, key))}\n")
        methods = [m for m in METHODS if m in set(part.method)]
        budgets = sorted(part.budget.unique())
        cells = _means(part, methods, budgets)
        print("Test NDCG@10, mean ± half-width of the 95% t interval over the (fold, seed) units (their number):\n")
        print("| method | " + " | ".join(f"{b:,} impressions" for b in budgets) + " |")
        print("|---|" + "---|" * len(budgets))
        for method in methods:
            row = [f"{cells[method, b][0]:.4f} ± {cells[method, b][1]:.4f} ({cells[method, b][2]})"
                   if (method, b) in cells else "" for b in budgets]
            print(f"| {method} | " + " | ".join(row) + " |")
        estimators = [m for m in methods if m not in REFERENCES and m not in ENGINE_METHODS]
        for baseline in ENGINE_METHODS:
            tests = _paired_tests(part, estimators, baseline, budgets)
            print(f"\nplboost's estimators against {baseline}: mean paired difference over the units both have "
                  "(Holm-adjusted p of paired t-tests, the family: the estimators at one budget):\n")
            print("| method | " + " | ".join(f"{b:,}" for b in budgets) + " |")
            print("|---|" + "---|" * len(budgets))
            for method in estimators:
                row = [f"{tests[method, b][0]:+.4f} (p {tests[method, b][1]:.3g})" if (method, b) in tests else ""
                       for b in budgets]
                print(f"| {method} | " + " | ".join(row) + " |")
        _print_goal(part, cells, estimators, budgets)
        if args.plots:
            _plot(args.plots, key, methods, budgets, cells)
            _plot_differences(args.plots, key, part, estimators, budgets)
    return 0


def _print_goal(part, cells, estimators, budgets) -> None:
    """Per budget: plboost's best estimator by mean among those with results on every unit there, against each
    engine's debiasing (the p-value Holm-adjusted over all the estimators, so that picking the best is paid for),
    and its mean paired difference to the better supervised ceiling over the units both have."""
    print("\nThe best plboost estimator at each budget (by mean, of those with every unit), against the engines "
          "(Holm-adjusted over all the estimators) and the better ceiling:\n")
    print("| impressions | units | best estimator | vs xgboost_unbiased | vs lightgbm_position | vs the ceiling |")
    print("|---|---|---|---|---|---|")
    against = {baseline: _paired_tests(part, estimators, baseline, budgets) for baseline in ENGINE_METHODS}
    for budget in budgets:
        counts = {m: cells[m, budget][2] for m in estimators if (m, budget) in cells}
        if not counts:
            continue
        units = max(counts.values())
        best = max((cells[m, budget][0], m) for m, n in counts.items() if n == units)[1]
        shown = [f"{tests[best, budget][0]:+.4f} (p {tests[best, budget][1]:.3g})" if (best, budget) in tests
                 else "" for tests in against.values()]
        at = part[part.budget == budget].pivot_table(index=["fold", "seed"], columns="method", values="ndcg10")
        below = [float((pairs[best] - pairs[ceiling]).mean()) for ceiling in ("supervised", "supervised_pl_rank3")
                 if ceiling in at for pairs in [at[[best, ceiling]].dropna()] if len(pairs)]
        gap = f"{min(below):+.4f}" if below else ""
        print(f"| {budget:,} | {units} | {best} | {shown[0]} | {shown[1]} | {gap} |")


def _means(part, methods, budgets) -> dict:
    """(method, budget) -> (mean, half-width of the 95% t interval, units) where the method has results."""
    from scipy import stats

    cells = {}
    for method in methods:
        for budget in budgets:
            values = part[(part.method == method) & (part.budget == budget)].ndcg10.to_numpy()
            if values.size:
                half = stats.t.ppf(0.975, values.size - 1) * values.std(ddof=1) / np.sqrt(values.size) \
                    if values.size > 1 else float("nan")
                cells[method, budget] = (values.mean(), half, values.size)
    return cells


def _paired_tests(part, estimators, baseline, budgets) -> dict:
    """(method, budget) -> (mean paired difference to ``baseline``, Holm-adjusted p) over the units both have."""
    from scipy import stats

    tests = {}
    for budget in budgets:
        at = part[part.budget == budget].pivot_table(index=["fold", "seed"], columns="method", values="ndcg10")
        if baseline not in at:
            continue
        found, p_values = [], []
        for method in estimators:
            if method not in at:
                continue
            pairs = at[[method, baseline]].dropna()
            if len(pairs) < 2:
                continue
            found.append((method, float((pairs[method] - pairs[baseline]).mean())))
            p_values.append(stats.ttest_rel(pairs[method], pairs[baseline]).pvalue)
        adjusted = _holm(np.nan_to_num(np.array(p_values), nan=1.0)) if p_values else []
        for (method, difference), p in zip(found, adjusted, strict=True):
            tests[method, budget] = (difference, float(p))
    return tests


def _plot(directory: Path, key, methods, budgets, cells) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    figure, axes = plt.subplots(figsize=(9, 4.5))
    colours = plt.get_cmap("tab20").colors
    for number, method in enumerate(methods):
        shown = [b for b in budgets if (method, b) in cells]
        means = np.array([cells[method, b][0] for b in shown])
        halves = np.nan_to_num(np.array([cells[method, b][1] for b in shown]))
        style = "--" if method in ("logger", "supervised", "supervised_pl_rank3") else "-"
        colour = colours[(2 * number) % 20 + (2 * number) // 20]
        axes.plot(shown, means, style, marker="o", label=method, color=colour)
        axes.fill_between(shown, means - halves, means + halves, alpha=0.08, color=colour)
    axes.set_xscale("log")
    axes.set_xlabel("impressions in the click log")
    axes.set_ylabel("test NDCG@10 (true labels)")
    axes.set_title(" / ".join(map(str, key)) + " (95% intervals over folds x seeds)")
    axes.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    figure.tight_layout()
    path = directory / f"clicks_{'_'.join(map(str, key))}.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"\n{path}")


def _plot_differences(directory: Path, key, part, estimators, budgets) -> None:
    """Each estimator's mean paired difference to each engine's debiasing against the budget, with its 95% t
    interval over the units both have: the between-unit spread that widens the first plot's intervals cancels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from scipy import stats

    figure, panels = plt.subplots(1, len(ENGINE_METHODS), figsize=(12, 4.5), sharey=True)
    colours = plt.get_cmap("tab20").colors
    for axes, baseline in zip(panels, ENGINE_METHODS, strict=True):
        for number, method in enumerate(estimators):
            shown, means, halves = [], [], []
            for budget in budgets:
                at = part[part.budget == budget].pivot_table(index=["fold", "seed"], columns="method", values="ndcg10")
                if method not in at or baseline not in at:
                    continue
                gaps = (at[method] - at[baseline]).dropna().to_numpy()
                if gaps.size < 2:
                    continue
                shown.append(budget)
                means.append(gaps.mean())
                halves.append(stats.t.ppf(0.975, gaps.size - 1) * gaps.std(ddof=1) / np.sqrt(gaps.size))
            if shown:
                colour = colours[(2 * number) % 20 + (2 * number) // 20]
                axes.errorbar(shown, means, yerr=halves, marker="o", capsize=3, label=method, color=colour)
        axes.axhline(0.0, color="black", linewidth=0.8)
        axes.set_xscale("log")
        axes.set_xlabel("impressions in the click log")
        axes.set_title(f"minus {baseline}")
    panels[0].set_ylabel("paired difference in test NDCG@10")
    panels[-1].legend(fontsize=8, loc="center left", bbox_to_anchor=(1.0, 0.5))
    figure.suptitle(" / ".join(map(str, key)) + " (95% intervals of the paired differences over folds x seeds)")
    figure.tight_layout()
    path = directory / f"clicks_{'_'.join(map(str, key))}_differences.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    print(f"\n{path}")


def _holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of ``p_values``."""
    order = np.argsort(p_values)
    adjusted = np.empty_like(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (p_values.size - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    runner = commands.add_parser("run")
    runner.add_argument("--out", type=Path, required=True)
    runner.add_argument("--data", choices=sorted(DATA), default="mq2008")
    runner.add_argument("--folds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    runner.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    runner.add_argument("--budgets", type=int, nargs="+", default=[100, 1000, 10_000, 100_000])
    runner.add_argument("--click-models", nargs="+", choices=("pbm", "cascade"), default=["pbm", "cascade"])
    runner.add_argument("--loggers", nargs="+", choices=("det", "stoch"), default=["det", "stoch"])
    reporter = commands.add_parser("report")
    reporter.add_argument("results", type=Path)
    reporter.add_argument("--plots", type=Path)
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    sys.exit(main())
