"""The PLRank paper's experiment on a full benchmark: shared by run_mslr.py and run_yahoo.py.

Settings (Xia, Zhai and Wang): learning rate 0.1, 30 leaves, 1000 trees, K = 10. Configurations: PLRank
with 1, 3 and 6 permutations, uMart (window 2), PL-Partition, and the engines' own objectives with the
same tree parameters: LightGBM lambdarank, rank_xendcg and regression (MART); XGBoost rank:ndcg and
rank:pairwise. Each finished run is recorded under OUT/runs/, so an interrupted run resumes where it
stopped. Before starting, a pilot of a few rounds per configuration on the first split estimates the
total time.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from plboost.data import load_splits
from plboost.experiment import RunSpec, compare, parse_run, plan_runs, run
from plboost.significance import legend

RUNS = ("plrank,top_k=10,n_permutations=1", "plrank,top_k=10,n_permutations=3",
        "plrank,top_k=10,n_permutations=6", "umart,window=2", "pl_partition", "lambdarank", "rank_xendcg",
        "regression", "rank:ndcg@xgboost", "rank:pairwise@xgboost")
PILOT_ROUNDS = 5


def parser(description: str) -> argparse.ArgumentParser:
    arguments = argparse.ArgumentParser(description=description)
    arguments.add_argument("data", type=Path, help="the benchmark's directory")
    arguments.add_argument("--out", type=Path, help="results directory (default: results/<data name>)")
    arguments.add_argument("--rounds", type=int, default=1000, help="trees per model (default 1000, the paper's)")
    arguments.add_argument("--early-stopping", type=int, metavar="N",
                           help="stop after N rounds without gain in validation NDCG@10 (default: off)")
    arguments.add_argument("--runs", metavar="SPECS",
                           help="configurations separated by ';', each objective[@engine][,key=value...] "
                                "(default: all of the paper's)")
    arguments.add_argument("--no-relevant", choices=("one", "zero", "exclude"), default="one",
                           help="NDCG of queries without relevant documents (default one, as LightGBM)")
    arguments.add_argument("--repeats", type=int, default=1, metavar="N",
                           help="train each configuration on each split N times with shifted seeds (default 1)")
    arguments.add_argument("--tune", type=int, metavar="N",
                           help="tune every configuration on every split with N trials first (plboost.tuning; "
                                "validation NDCG@10, the test file unseen by the search); needs optuna")
    arguments.add_argument("--tune-seed", type=int, default=0, help="seed of the search (default 0)")
    arguments.add_argument("--estimate-only", action="store_true", help="print the time estimate and stop")
    memory = arguments.add_mutually_exclusive_group()
    memory.add_argument("--out-of-core", dest="out_of_core", action="store_const", const=True, default=None,
                        help="read the files chunk by chunk to disk and train from them in batches "
                             "(docs/out_of_core.md); default: when they would not fit the memory available")
    memory.add_argument("--in-memory", dest="out_of_core", action="store_const", const=False,
                        help="read the files into memory whatever their size")
    arguments.add_argument("--quiet", action="store_true")
    return arguments


def specs_for(args) -> list[RunSpec]:
    defaults = RunSpec(rounds=args.rounds, learning_rate=0.1, num_leaves=30, early_stopping=args.early_stopping,
                       no_relevant=args.no_relevant)
    return [parse_run(text, defaults) for text in (args.runs.split(";") if args.runs else RUNS)]


def estimate_seconds(specs, layout, out: Path, repeats: int = 1, tune=None, load_options=None) -> tuple[float, int]:
    """Seconds for the runs that will really be done (those without a reusable record: see
    plboost.experiment.plan_runs), from a pilot of a few rounds of each on the first split; with tuning,
    every trial is counted as a run of full length (pruning and early stopping make it shorter)."""
    spaces = None
    if tune is not None:
        from plboost.tuning import search_space

        spaces = {spec.label: search_space(spec, tune.overrides) for spec in specs}
    pending = [item for item in plan_runs(specs, layout.splits, out, repeats=repeats, tune=tune, spaces=spaces)
               if item.action != "reuse"]
    if not pending:
        return 0.0, 0
    first = layout.splits[0]
    start = time.perf_counter()
    train, valid, test = load_splits(first.train, first.valid, first.test, **(load_options or {}))
    loading = time.perf_counter() - start
    per_round = {}
    for spec in {item.spec.label: item.spec for item in pending}.values():
        pilot = run(replace(spec, rounds=PILOT_ROUNDS, early_stopping=None, repeat=0), train, valid, test)
        per_round[spec.label] = pilot.model.train_seconds / PILOT_ROUNDS
    splits_to_load = len({item.split.name for item in pending})
    trials = 1 + (tune.n_trials if tune is not None else 0)
    seconds = (sum(per_round[item.spec.label] * item.spec.rounds for item in pending) * trials
               + loading * splits_to_load)
    return seconds, len(pending)


def duration(seconds: float) -> str:
    """``"42 s"``, ``"17 min"`` or ``"3.2 h"``: a duration a person reads at a glance."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def run_benchmark(args, layout, out: Path, name: str) -> int:
    specs = specs_for(args)
    tune = None
    if args.tune:
        from plboost.tuning import Tuning

        tune = Tuning(args.tune, seed=args.tune_seed)
    load_options = {"out_of_core": getattr(args, "out_of_core", None)}
    seconds, pending = estimate_seconds(specs, layout, out, args.repeats, tune, load_options)
    repeats = f" x {args.repeats} repeats" if args.repeats > 1 else ""
    repeats += f", tuned with {args.tune} trials each (estimate: a full-length training per trial)" if tune else ""
    print(f"{name}: {layout.kind} layout, {len(layout.splits)} split(s) x {len(specs)} configurations{repeats}, "
          f"{pending} run(s) to do; estimated {duration(seconds)} on this machine (a pilot of "
          f"{PILOT_ROUNDS} rounds of each on {layout.splits[0].name}, scaled to {args.rounds} rounds)", flush=True)
    if args.estimate_only:
        return 0
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    result = compare(specs, layout, repeats=args.repeats, out_dir=out, resume=True, progress=not args.quiet, log=log,
                     tune=tune, load_options=load_options)
    significance = result.significance()
    print(result.header())
    print(result.table(significance=significance))
    if significance is not None:
        print(legend(result.default_baseline()))
    print(result.runs_line(), file=sys.stderr)
    result.save(out, significance)
    result.plot(out / "validation_ndcg.png")
    return 0


def guarded(main) -> int:
    """Run a script's ``main``: a user's error (a missing directory, a bad option value) is one line and exit
    status 2, Ctrl-C is one line and 130, as for the plboost command."""
    from plboost.cli import failure_message

    name = Path(sys.argv[0]).name
    try:
        return main()
    except KeyboardInterrupt:
        print(f"{name}: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        message = failure_message(error)
        if message is None:
            raise
        print(f"{name}: error: {message}", file=sys.stderr)
        return 2
