"""``plboost simulate-clicks``: a click log simulated from labelled data, by the semi-synthetic protocol of the
unbiased learning-to-rank papers (:mod:`plboost.clicks.simulation`): a logging ranker trained on the labels of a
small share of the queries (1% by default, as Oosterhuis and de Rijke, SIGIR 2020, do) ranks every query, shown
deterministically or sampled from its Plackett-Luce policy, and clicks are drawn from a click model.

The log is two tables in ``--out``: ``clicks.parquet`` and ``documents.parquet`` (or ``.csv``), read back with
:func:`plboost.clicks.load_click_log`, and the logging ranker's model, ``logger.txt`` (LightGBM's text format),
which a run with ``clicks=logger`` scores; the log's metadata record every setting, the seed, and the logger
(objective, rounds, the ids of the queries it was trained on). Existing files are never replaced.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from ._values import plain_value
from .clicks import CascadeModel, PositionBasedModel, simulate_clicks
from .clicks.log import LOGGING_MODEL
from .data import load_svmlight, load_table
from .data.tabular import is_table
from .engines import BUILTIN_OBJECTIVES, DEFAULT_ENGINE, train
from .objectives import OBJECTIVES, get_objective

#: the click models the command offers
CLICK_MODELS = ("pbm", "trust-bias", "cascade")


def number_option(low: float, high: float | None = None, *, low_open: bool = False):
    """An argparse type: a finite number of at least ``low`` (above it with ``low_open``) and at most ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        above = value > low if low_open else value >= low
        if not (math.isfinite(value) and above and (high is None or value <= high)):
            wanted = f"a number in {'(' if low_open else '['}{low:g}, {high:g}]" if high is not None \
                else f"a finite number {'>' if low_open else '>='} {low:g}"
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}")
        return value
    return parse


def add_command(commands, positive_int, seed_option, add_debug_option) -> None:
    """Register ``simulate-clicks`` among the command line's ``commands``."""
    simulate = commands.add_parser(
        "simulate-clicks", help="simulate a click log from labelled data (a logger trained on a share of them)",
        description=__doc__.split("\n\n")[0])
    simulate.add_argument("--train", required=True, type=Path, metavar="FILE",
                          help="labelled data whose queries are shown: SVMlight/LETOR or a table (qid, label)")
    simulate.add_argument("--out", required=True, type=Path, metavar="DIR",
                          help="directory of the log: clicks.<format> and documents.<format>")
    simulate.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                          help="the tables' format (default parquet)")
    simulate.add_argument("--impressions", type=positive_int, default=10_000, metavar="N",
                          help="impressions, each of a query drawn uniformly (default %(default)s)")
    simulate.add_argument("--top-k", type=positive_int, default=10, metavar="K",
                          help="documents shown per impression (default %(default)s)")
    simulate.add_argument("--temperature", type=number_option(0.0), default=0.0, metavar="T",
                          help="0 (default): the logger's own ranking, ties in random order; above 0: rankings "
                               "sampled from its Plackett-Luce policy at this temperature")
    simulate.add_argument("--click-model", choices=CLICK_MODELS, default="pbm",
                          help="pbm: position-based, examination (1/k)^eta; trust-bias: its noise varies by rank "
                               "(Vardasbi et al. 2020); cascade: scan from the top (default pbm)")
    simulate.add_argument("--eta", type=number_option(0.0), default=1.0, help="examination decay (default 1)")
    simulate.add_argument("--click-noise", type=number_option(0.0, 1.0), default=0.1, metavar="P",
                          help="pbm, cascade: P(click) of an examined irrelevant document (default 0.1)")
    simulate.add_argument("--click-relevant", type=number_option(0.0, 1.0), default=1.0, metavar="P",
                          help="pbm, cascade: P(click) of an examined relevant document (default 1)")
    simulate.add_argument("--continuation", type=number_option(0.0, 1.0), default=0.0, metavar="P",
                          help="cascade: after a click at rank k, go on with P (1/k)^eta (default 0: one click)")
    simulate.add_argument("--logger-share", type=number_option(0.0, 1.0, low_open=True), default=0.01, metavar="S",
                          help="share of the queries whose labels train the logger (default 0.01)")
    simulate.add_argument("--logger-objective", default="lambdarank",
                          help="the logger's objective (default lambdarank)")
    simulate.add_argument("--logger-rounds", type=positive_int, default=100,
                          help="the logger's boosting rounds (default %(default)s)")
    simulate.add_argument("--seed", type=seed_option, default=0,
                          help="seed of the logger's queries, the engine, the rankings and the clicks (default 0)")
    add_debug_option(simulate)


def _click_model(args):
    if args.click_model == "trust-bias":
        return PositionBasedModel.trust_bias(eta=args.eta, top_k=args.top_k)
    noise = {"positive_noise": args.click_relevant, "negative_noise": args.click_noise}
    if args.click_model == "cascade":
        return CascadeModel(continuation=args.continuation, eta=args.eta, **noise)
    return PositionBasedModel(eta=args.eta, **noise)


def run(args) -> int:
    """The command: train the logger, simulate, write the two tables; one line says what was written."""
    if args.out.exists() and not args.out.is_dir():
        raise ValueError(f"--out {args.out} is a file; give a directory (the log is two tables)")
    paths = [args.out / f"{name}.{args.format}" for name in ("clicks", "documents")]
    existing = [str(path) for path in (*paths, args.out / LOGGING_MODEL) if path.exists()]
    if existing:
        raise ValueError(f"--out {args.out}: {', '.join(existing)} {'exist' if len(existing) > 1 else 'exists'} "
                         "already; give another directory (a log is never replaced)")
    if args.continuation and args.click_model != "cascade":
        raise ValueError("--continuation is the cascade model's; give --click-model cascade")
    model = _click_model(args)  # refuses noise settings before anything trains
    data = load_table(args.train) if is_table(args.train) else load_svmlight(args.train)
    builtin = BUILTIN_OBJECTIVES[DEFAULT_ENGINE]
    if args.logger_objective not in builtin and args.logger_objective not in OBJECTIVES:
        raise ValueError(f"--logger-objective {args.logger_objective!r}: not an objective; known: "
                         f"{', '.join([*builtin, *sorted(OBJECTIVES)])}")
    objective = args.logger_objective if args.logger_objective in builtin else get_objective(args.logger_objective)
    rng = np.random.default_rng([args.seed, 2])
    share = np.sort(rng.choice(data.n_queries, size=max(1, round(args.logger_share * data.n_queries)), replace=False))
    logger = train(DEFAULT_ENGINE, objective, data.subset(share), rounds=args.logger_rounds, seed=args.seed,
                   progress=False)
    log = simulate_clicks(data, logger.predict(data.X), n_impressions=args.impressions, top_k=args.top_k,
                          temperature=args.temperature, click_model=model, seed=args.seed)
    log.metadata["logger"] = {"engine": DEFAULT_ENGINE, "objective": args.logger_objective,
                              "rounds": args.logger_rounds, "share": args.logger_share,
                              "queries": plain_value(data.qids[share]), "model": LOGGING_MODEL}
    log.metadata["labelled_data"] = str(args.train)
    args.out.mkdir(parents=True, exist_ok=True)
    log.save(*paths)
    logger.save(args.out / LOGGING_MODEL)
    print(f"plboost simulate-clicks: {log.n_impressions:,} impressions of {data.n_queries:,} queries (top "
          f"{args.top_k}, temperature {args.temperature:g}, {args.click_model}), {int(log.click.sum()):,} clicks -> "
          f"{paths[0]}, {paths[1]}; the logger: {args.logger_objective} on {share.size} of {data.n_queries} queries, "
          f"{args.logger_rounds} rounds -> {args.out / LOGGING_MODEL}")
    return 0
