"""The ``plboost`` command: train, evaluate, compare, summarize and demo.

Examples::

    plboost train --train Fold1/train.txt --valid Fold1/vali.txt --test Fold1/test.txt \\
        --objective plrank --param top_k=10 --param n_permutations=3 --engine lightgbm --rounds 500 \\
        --early-stopping 50 --save-model model.txt --out results.json
    plboost train ... --objective lambdarank          # LightGBM's own, for comparison
    plboost evaluate --model model.txt --data Fold1/test.txt
    plboost compare MSLR-WEB10K/ --run plrank,n_permutations=3 --run umart,window=2 --baselines \\
        --rounds 1000 --early-stopping 50 --out results/ --plot
    plboost compare MQ2008/ MSLR-WEB10K/ --run plrank --baselines --out results/   # + winning numbers
    plboost summarize results/ other-machine/results.json published.csv
    plboost demo
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import os
import re
import sys
import tempfile
import textwrap
import traceback
import time
import warnings
from dataclasses import replace
from pathlib import Path

from . import _values, click_command, metrics
from ._constraints import SEED
from ._version import __version__
from ._constraints import C_INT_MAX, INT64_RANGE
from ._writing import json_text, write_text
from ._engine_registry import LEAF_VALUES
from ._extras import MissingExtra
from .clicks.training import CLICK_RUNS, EXAMINATIONS
from .metrics import PAPER_METRICS
from .engines import BUILTIN_OBJECTIVES, DEFAULT_ENGINE, DEFAULT_SETTINGS, ENGINES
from .engines.openmp import limit_spinning
from .errors import InputTypeError
from .warm_up import PARSER
from .data.splits import checked_options, for_model
from .data.tabular import TABLE_OPTIONS, is_table
from .objectives import OBJECTIVES
from .outputs import COMPARISON_FILES, Read, check_outputs, data_reads, result_file_of, split_reads


def parse_assignment(text: str) -> tuple[str, object]:
    """``"top_k=10"`` -> ``("top_k", 10)``, as :func:`plboost._values.parse_assignment` reads it (the same as
    in ``compare --run``), for argparse."""
    try:
        return _values.parse_assignment(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_cutoffs(text: str) -> tuple[int, ...]:
    try:
        cutoffs = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers like 1,3,5,10, got {text!r}") from None
    if not cutoffs or min(cutoffs) < 1:
        raise argparse.ArgumentTypeError(f"cut-offs must be positive integers, got {text!r}")
    if max(cutoffs) > C_INT_MAX:  # the engines' eval_at is a C int
        raise argparse.ArgumentTypeError(f"cut-offs must be at most 2**31 - 1 ({C_INT_MAX}), got {max(cutoffs)}")
    return cutoffs


def _metric_list(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"expected comma-separated metric names like NDCG@10,ERR@10, got {text!r}")
    return names


def _int_at_least(minimum: int, what: str, most: int = INT64_RANGE[1], most_text: str = "2**63 - 1"):
    """An argparse type: an integer from ``minimum`` to ``most`` (by default the largest 64-bit integer, which every
    integer plboost computes with fits)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        if value > most:
            raise argparse.ArgumentTypeError(f"expected {what} of at most {most_text} ({most}), got {text}")
        return value
    return parse


def _significance_level(text: str) -> float:
    """A significance level strictly between 0 and 1, checked whether or not a test will run."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text}")
    return value


_positive_int = _int_at_least(1, "a positive integer")
_non_negative_int = _int_at_least(0, "a non-negative integer")
_positive_c_int = _int_at_least(1, "a positive integer", C_INT_MAX, "2**31 - 1")  # the engines' C int


def _seed_option(text: str) -> int:
    """A seed of plboost's own random streams (the demo's synthetic data, the tuning's search), which take
    :data:`plboost._constraints.SEED`'s range, for argparse (whose message names the option)."""
    try:
        value = int(text)
    except ValueError:
        value = None
    if value is None or not SEED.accepts(value):
        raise argparse.ArgumentTypeError(f"expected {SEED.describe()}, got {text!r}")
    return value


#: units of --memory-budget (powers of 1024; KB/MB/GB and KiB/MiB/GiB mean the same)
_MEMORY_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_MEMORY_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:([kmgt])(?:i?b)?|(b))?\s*", re.IGNORECASE)


def parse_memory_size(text: str) -> int:
    """``"512M"`` -> 536870912: a number of bytes, or of KiB, MiB, GiB or TiB with the suffix K, M, G or T
    (``KB``/``KiB`` and so on alike; a fraction like ``1.5G`` is rounded down to whole bytes), for argparse
    (whose message names the option)."""
    match = _MEMORY_SIZE.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected a size like 512M, 2G or a number of bytes, got {text!r}")
    number, unit, byte = match.groups()
    value = int(float(number) * _MEMORY_UNITS[(unit or byte or "").lower()])
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive size (at least 1 byte), got {text!r}")
    if value > INT64_RANGE[1]:
        raise argparse.ArgumentTypeError(f"expected a size of at most 2**63 - 1 bytes (8E), got {text!r}")
    return value


class _OneLineParser(argparse.ArgumentParser):
    """argparse's parser, whose errors are one line, as the command's own are (argparse prints the whole usage
    first, 14 lines for ``train``, which buries the error)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="plboost", description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="The engines' OpenMP threads spin at most 1,000 iterations before they "
                                            "sleep (GOMP_SPINCOUNT=1000), unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is "
                                            "set: a busy machine slows training far less (docs/benchmarks.md).")
    parser.add_argument("--version", action="version", version=f"plboost {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for add_command in (_add_train_command, _add_evaluate_command, _add_predict_command, _add_compare_command,
                        _add_summarize_command,
                        _add_demo_command):
        add_command(commands)
    click_command.add_command(commands, _positive_int, _seed_option, _add_debug_option)
    return parser


def _add_train_command(commands) -> None:
    """``plboost train``: one configuration on one split."""
    objectives = sorted(OBJECTIVES) + [name for names in BUILTIN_OBJECTIVES.values() for name in names]
    train = commands.add_parser("train", help="train a ranker and report test metrics")
    train.add_argument("--train", type=Path, nargs="+", metavar="FILE",
                       help="training file: SVMlight/LETOR (.txt, .gz ok), or a table, Parquet (.parquet, .pq) "
                            "or CSV (.csv, .csv.gz) with a row per document (see --query-column); with Dask, "
                            "several SVMlight files make one partition each")
    train.add_argument("--click-log", type=Path, metavar="DIR",
                       help="train from a click log instead of --train: a directory of clicks.parquet or .csv "
                            "(and documents.*), as plboost simulate-clicks writes it; needs --clicks")
    train.add_argument("--clicks", choices=CLICK_RUNS,
                       help="with --click-log, what to train on: an estimator's relevance estimates (naive, ips, "
                            "policy_aware, affine, doubly_robust with a cross-fitted LightGBM regression; for "
                            "pl_rank3 with gain=estimate, normalize=false) or the "
                            "displayed rows, clicks as labels with their positions (the engines' debiasing: "
                            "lambdarank, rank:ndcg with lambdarank_unbiased=true); logger: train nothing, score the "
                            "log's logging ranker (its logger.txt, --objective its objective)")
    train.add_argument("--examination", choices=EXAMINATIONS, default="recorded",
                       help="the estimators' examination: the click model the log records (default) or EM's "
                            "from the log itself, each document's relevance its own (em: a stochastic logger) or "
                            "a function of its features (em_features: regression EM, a deterministic logger "
                            "too); for ips and policy_aware")
    train.add_argument("--valid", type=Path, help="validation file (early stopping), SVMlight or a table")
    train.add_argument("--test", type=Path, help="test file (metrics), SVMlight or a table; default: valid, else "
                                                 "train")
    train.add_argument("--objective", default="plrank",
                       help=f"objective name: {', '.join(objectives)} (default plrank)")
    train.add_argument("--param", action="append", type=parse_assignment, default=[], metavar="KEY=VALUE",
                       help="objective parameter, repeatable (e.g. top_k=10, n_permutations=3)")
    _add_training_options(train)
    train.add_argument("--dask-scheduler", metavar="ADDRESS",
                       help="train on the Dask cluster of this scheduler (e.g. tcp://10.0.0.5:8786)")
    train.add_argument("--dask-local", type=_positive_int, metavar="N",
                       help="train on a local Dask cluster of N worker processes")
    train.add_argument("--save-model", type=Path, metavar="PATH", help="save the model (engine's own format)")
    train.add_argument("--out", type=Path, metavar="PATH", help="write the results as JSON")
    _add_scoring_options(train)


def _add_evaluate_command(commands) -> None:
    """``plboost evaluate``: a saved model's metrics on a file."""
    evaluate = commands.add_parser("evaluate", help="metrics of a saved model on a file")
    _add_model_and_data_options(evaluate, out="write the metrics as JSON")
    _add_scoring_options(evaluate)


#: the options of ``predict`` that only sampled rankings take (refused without ``--sample``), as argparse's dests
_SAMPLING_OPTIONS = {"temperature": "--temperature", "seed": "--seed", "top_k": "--top-k"}
#: ``predict --sample``'s temperature when none is given: the Plackett-Luce policy of the scores as they are
DEFAULT_TEMPERATURE = 1.0


def _add_predict_command(commands) -> None:
    """``plboost predict``: a saved model's scores, one line per document (LightGBM's ``task=predict``), or rankings
    sampled from the Plackett-Luce policy of those scores (``--sample``), one line per document too."""
    predict = commands.add_parser(
        "predict", help="scores of a saved model on a file, one per line, or rankings sampled from them",
        description="Score every document of DATA with a saved model and write the raw scores (the model's margin, "
                    "as LightGBM's task=predict and XGBoost's output_margin give them), one per line in the file's "
                    "order, to --out or standard output. With --sample N, serve the model as a policy instead: "
                    "draw N rankings of every query from the Plackett-Luce policy of those scores at --temperature "
                    "(plboost.PlackettLucePolicy, whose expected metrics the Plackett-Luce objectives train for) and "
                    "write, for each document, "
                    "one line in the file's order of N space-separated integers: its rank in rankings 1..N of its "
                    "query (1 = top; 0 = below --top-k). Line d is document d of DATA, so the lines join back to "
                    "the input (paste), and column i is ranking i. The draws are a pure function of the scores, the "
                    "temperature and --seed: the same command writes the same file.")
    _add_model_and_data_options(predict, out="write the scores (or the sampled ranks) here (default, or -: standard "
                                             "output)")
    predict.add_argument("--sample", type=_positive_int, metavar="N",
                         help="write N rankings of every query sampled from the Plackett-Luce policy of the scores, "
                              "a line per document of its N ranks (see above), instead of the scores")
    predict.add_argument("--temperature", type=click_command.number_option(0.0), metavar="T",
                         help=f"with --sample: the policy's temperature, a finite number >= 0 (default "
                              f"{DEFAULT_TEMPERATURE:g}: the scores as they are; 0: the deterministic ranking by "
                              "score, documents of equal scores in random order)")
    predict.add_argument("--seed", type=_seed_option, metavar="S",
                         help="with --sample: seed of the draws, an integer in [0, 2**63) (default 0)")
    predict.add_argument("--top-k", type=_positive_int, metavar="K",
                         help="with --sample: rank the top K documents of each ranking only, the others 0 "
                              "(default: every rank)")
    _add_data_options(predict)
    _add_common_options(predict)


def _add_model_and_data_options(parser, *, out: str) -> None:
    """--model, --data and --out of the commands that score a saved model."""
    parser.add_argument("--model", required=True, type=Path,
                        help="model file: LightGBM text, XGBoost JSON or UBJSON, or CatBoost .cbm (told by the "
                             "content, any file name)")
    parser.add_argument("--data", required=True, type=Path,
                        help="SVMlight/LETOR file with qid or .query, or a table (.parquet, .pq, .csv, .csv.gz) "
                             "with the feature columns the model was trained on (found by name)")
    parser.add_argument("--out", type=Path, metavar="PATH", help=out)


def _add_compare_command(commands) -> None:
    """``plboost compare``: configurations x the splits of benchmarks."""
    compare = commands.add_parser(
        "compare", help="many configurations x the folds of a benchmark -> a table (mean ± std over folds)",
        description="Train every configuration on every split of DATA (LETOR 4.0/MSLR or LETOR 3.0 folds, "
                    "Yahoo! LTR sets, or one train/vali/test triple; .gz accepted, and tables in place of "
                    "SVMlight files: Fold1/train.parquet or .csv beside Fold1/vali.parquet ...) and report test "
                    "metrics.")
    compare.add_argument("data", type=Path, nargs="+", metavar="DATA",
                         help="dataset directory; with several, a table each and then the methods' winning "
                              "numbers across them (see plboost summarize)")
    compare.add_argument("--run", action="append", default=[], metavar="SPEC",
                         help="a configuration: objective[@engine][,key=value...], e.g. plrank,n_permutations=3 "
                              "or rank:ndcg@xgboost; repeatable")
    compare.add_argument("--config", type=Path, metavar="TOML", help="configurations from a TOML file "
                         "([defaults] and [[run]] tables; see plboost.experiment.load_config)")
    compare.add_argument("--baselines", action="store_true",
                         help="add the engines' own objectives: lambdarank, rank_xendcg, regression (LightGBM); "
                              "rank:ndcg, rank:pairwise (XGBoost, when an XGBoost run is present)")
    compare.add_argument("--folds", type=lambda text: [part.strip() for part in text.split(",") if part.strip()],
                         metavar="NAMES", help="splits to use, e.g. Fold1,Fold2 (default: all)")
    compare.add_argument("--out", type=Path, metavar="DIR",
                         help="write results.csv, summary.csv, results.json and per-run records there (with "
                              "several datasets: in a subdirectory each, and winning.md/winning.csv)")
    compare.add_argument("--metrics", type=_metric_list, metavar="NAMES",
                         help=f"with several datasets: metrics of the winning numbers (default "
                              f"{','.join(PAPER_METRICS)})")
    compare.add_argument("--plot", action="store_true", help="with --out: validation NDCG curves as a PNG")
    compare.add_argument("--no-resume", action="store_true", help="recompute runs already recorded in --out")
    compare.add_argument("--repeats", type=_positive_int, default=1, metavar="N",
                         help="train each configuration on each split N times, with the engine's and the "
                              "objective's seeds shifted by 0..N-1; tables show mean ± std over splits / std "
                              "over seeds, and the tests use each query's mean over repeats (default 1)")
    compare.add_argument("--tune", type=_positive_int, metavar="N",
                         help="tune every configuration on every split with N trials of Optuna's TPE over its "
                              "search space (plboost.tuning; change it in --config's [tune.*] tables), each "
                              "trial scored by validation NDCG@max(eval-at) with early stopping (--early-stopping, "
                              "default 30); the best is tested. Needs optuna (pip install 'plboost[tune]')")
    compare.add_argument("--tune-seed", type=_seed_option, default=0, metavar="S",
                         help="seed of the search (default 0)")
    compare.add_argument("--baseline", metavar="NAME",
                         help="the configuration the others are tested against (a label as printed, or an "
                              "objective name that names one configuration); default 'lambdarank [lightgbm]' "
                              "when present. Markers: two-sided paired t-test over the test queries of all "
                              "splits, Holm-adjusted over the configurations (see --holm-over); significance.csv "
                              "has the randomization test and 95%% bootstrap intervals too")
    compare.add_argument("--click-log", type=Path, metavar="DIR",
                         help="click logs that configurations with clicks=... (in --run or --config) train from in "
                              "place of each split's training file, validated and tested on its labelled files: "
                              "the log itself for one split, else DIR/<split>/ (Fold1, ...) with one per split")
    compare.add_argument("--holm-over", choices=("metric", "table"), default="metric",
                         help="the family Holm's adjustment runs over: the configurations of each metric "
                              "separately (default), or every configuration and metric of the table together")
    _add_training_options(compare)
    _add_scoring_options(compare)


def _add_summarize_command(commands) -> None:
    """``plboost summarize``: winning numbers from saved results."""
    summarize = commands.add_parser(
        "summarize", help="winning numbers of methods across datasets, from saved results",
        description="Winning numbers (Tax, Bockting and Hiemstra, IPM 2015) of the methods in RESULTS: per "
                    "metric, WN (comparisons won: datasets x other methods with a result on the same "
                    "dataset), IWN (such comparisons) and NWN = WN / IWN, a cross-metric table, and the "
                    "Pareto-optimal methods in (NWN, IWN). Missing results are allowed.")
    summarize.add_argument("results", type=Path, nargs="+", metavar="RESULTS",
                           help="results.json / results.csv / summary.csv of plboost compare, a directory "
                                "holding results.json files, or a CSV table (method, dataset, metric columns, "
                                "or long rows method,dataset,metric,value)")
    summarize.add_argument("--metrics", type=_metric_list, metavar="NAMES",
                           help=f"metrics to summarise (default {','.join(PAPER_METRICS)}, those present)")
    summarize.add_argument("--out", type=Path, metavar="PATH", help="also write the table as CSV here")
    summarize.add_argument("--wins", choices=("auto", "significant", "all"), default="auto",
                           help="which wins count: 'significant' (paired t-test over the queries of the dataset, "
                                "from the per_query.csv beside each result file as compare --out writes it, "
                                "Holm-adjusted over the pairs of methods, p < --alpha), 'all', or 'auto' (the "
                                "default): significant ones when every result has its per_query.csv, else all, "
                                "saying so")
    summarize.add_argument("--significant", action="store_const", const="significant", dest="wins",
                           help="the same as --wins significant")
    summarize.add_argument("--alpha", type=_significance_level, default=0.05,
                           help="significance level, between 0 and 1 (default 0.05)")
    _add_debug_option(summarize)


def _add_demo_command(commands) -> None:
    """``plboost demo``: the objectives against lambdarank on synthetic data."""
    demo = commands.add_parser("demo", help="synthetic data -> plboost objectives vs lambdarank -> table")
    demo.add_argument("--queries", default=600, help="training queries (default 600)",
                      type=_int_at_least(3, "an integer of at least 3 (a third as many go to validation and to test)"))
    demo.add_argument("--rounds", type=_positive_int, default=300,
                      help="most boosting rounds of each configuration, which stops after 30 rounds without "
                           "a better validation NDCG@10 (default %(default)s)")
    demo.add_argument("--seed", type=_seed_option, default=0,
                      help="seed of the synthetic data, the engines and the objectives' draws (default %(default)s)")
    demo.add_argument("--out", type=Path, metavar="DIR", help="keep the synthetic files and results here")
    _add_common_options(demo)

    warm = commands.add_parser(
        "warm-up", help="compile plboost's kernels now, on every core, so that later runs load them from the cache",
        description="Compile (fill Numba's cache with) the kernels of plboost's objectives, exact leaves and "
                    "metrics, objectives that share kernels in the same process, one process per usable core, and "
                    "those of the SVMlight parser: the first run after installing then starts at once. make install "
                    "runs it.")
    warm.add_argument("objectives", nargs="*", metavar="OBJECTIVE",
                      help=f"the objectives to warm, and {PARSER} for the SVMlight parser (default: all of them)")
    warm.add_argument("--workers", type=_positive_int, help="processes at once (default: the usable cores)")
    warm.add_argument("--quiet", action="store_true", help="no progress bar; the summary line and errors only")
    _add_debug_option(warm)


def _add_training_options(parser):
    parser.add_argument("--engine", choices=ENGINES, default=DEFAULT_ENGINE,
                        help="the library that grows the trees (default %(default)s)")
    parser.add_argument("--rounds", type=_positive_int, default=DEFAULT_SETTINGS.rounds,
                        help="boosting rounds (default %(default)s)")
    parser.add_argument("--learning-rate", type=float, default=DEFAULT_SETTINGS.learning_rate,
                        help="shrinkage of each tree's values (default %(default)s)")
    parser.add_argument("--num-leaves", type=_positive_c_int, default=DEFAULT_SETTINGS.num_leaves,
                        help="leaves per tree (default %(default)s)")
    parser.add_argument("--early-stopping", type=_positive_int, metavar="N",
                        help="stop after N rounds without improvement of validation NDCG@max(eval-at)")
    parser.add_argument("--engine-param", action="append", type=parse_assignment, default=[],
                        metavar="KEY=VALUE", help="raw engine parameter, repeatable (e.g. min_data_in_leaf=5)")
    parser.add_argument("--leaf-values", choices=LEAF_VALUES, default="diagonal",
                        help="PLRank with LightGBM: 'exact' rewrites each tree's leaves with the exact Newton "
                             "step (the paper's Eqn. 9) instead of the diagonal-hessian one (default diagonal)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the engine and of the objective's draws (default %(default)s)")
    memory = parser.add_mutually_exclusive_group()
    memory.add_argument("--out-of-core", dest="out_of_core", action="store_const", const=True, default=None,
                        help="read the data files chunk by chunk into dense chunk files on disk and train from them "
                             "in batches, never holding the dense matrix in memory (docs/out_of_core.md); default: "
                             "when it would not fit the memory available")
    memory.add_argument("--in-memory", dest="out_of_core", action="store_const", const=False,
                        help="read the data files into memory whatever their size")
    parser.add_argument("--memory-budget", type=parse_memory_size, metavar="SIZE",
                        help="out-of-core reading: the largest batch of dense rows held at once, e.g. 512M, 2G or "
                             "bytes (default 256M; docs/out_of_core.md); files read in memory are said to be, in "
                             "one line, and --in-memory with it is refused")


def _spec_from_args(args, **overrides):
    from .experiment import RunSpec

    values = dict(engine=args.engine, rounds=args.rounds, learning_rate=args.learning_rate,
                  num_leaves=args.num_leaves, early_stopping=args.early_stopping, eval_at=args.eval_at,
                  engine_params=_values.assignments(args.engine_param, "--engine-param"), seed=args.seed,
                  no_relevant=args.no_relevant,
                  g_max=args.g_max, leaf_values=args.leaf_values)
    values.update(overrides)
    return RunSpec(**values)


def _add_scoring_options(parser):
    """The options of every command that reads data files and scores models."""
    _add_evaluation_options(parser)
    _add_data_options(parser)
    _add_common_options(parser)


def _add_evaluation_options(parser):
    parser.add_argument("--eval-at", type=parse_cutoffs, default=(1, 3, 5, 10), metavar="K,K,...",
                        help="NDCG/ERR cut-offs (default 1,3,5,10)")
    parser.add_argument("--no-relevant", choices=metrics.NO_RELEVANT_POLICIES, default="one",
                        help="NDCG of queries without relevant documents: 1 (LightGBM), 0 (trec_eval), "
                             "or left out (default one)")
    parser.add_argument("--g-max", type=_positive_int, default=None,
                        help="ERR's maximum grade (default: the data's largest label, e.g. 2 for MQ2008, 4 for MSLR)")


def _add_common_options(parser):
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bars, progress lines or compile notices; results and errors only")
    parser.add_argument("--no-cache", action="store_true", help="do not use or write the parsed-file cache")
    _add_debug_option(parser)


def _add_debug_option(parser):
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")


def _add_data_options(parser):
    parser.add_argument("--max-label", type=_non_negative_int, default=30, metavar="N",
                        help="largest relevance label accepted in data files (default 30, LightGBM's label_gain)")
    parser.add_argument("--zero-based", action="store_true",
                        help="feature indices in SVMlight files start at 0 (default: at 1, the LETOR convention)")
    parser.add_argument("--query-column", default=TABLE_OPTIONS["query"], metavar="NAME",
                        help="tables (.parquet, .pq, .csv, .csv.gz): the column of query ids (default qid); every "
                             "column but this and --label-column is a feature, in the table's order")
    parser.add_argument("--label-column", default=TABLE_OPTIONS["label"], metavar="NAME",
                        help="tables: the column of relevance labels (default label)")
    parser.add_argument("--sort-queries", action="store_true",
                        help="tables: sort the rows by query id (stable) instead of refusing a query whose rows "
                             "are not contiguous")


def _load_options(args) -> dict:
    """Options of plboost.data.load_splits from the command line (those of tables are refused by it when no table
    is read, as --zero-based is when only tables are)."""
    return {"cache": not args.no_cache, "progress": not args.quiet, "max_label": args.max_label,
            "zero_based": args.zero_based, "query": args.query_column, "label": args.label_column,
            "sort": args.sort_queries}


#: what ``--out -`` names: standard output (predict writes its scores there; other outputs refuse it)
STANDARD_OUTPUT = Path("-")


def check_output_path(path: Path | None, option: str, *, directory: bool = False) -> None:
    """Refuse, before any training, an output path that cannot be written (what it must not replace is
    checked by :func:`plboost.outputs.check_outputs`)."""
    if path is None:
        return
    if path == STANDARD_OUTPUT:  # the convention of the command line: "-" is standard output, never a file's name
        raise ValueError(f"{option} -: '-' stands for standard output, where this command prints its table; give a "
                         f"{'directory' if directory else 'file'} name")
    try:
        if directory:
            if path.exists() and not path.is_dir():
                raise ValueError(f"{option} {path} is a file; give a directory")
            path.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=path).close()
        else:
            if path.is_dir():
                raise ValueError(f"{option} {path} is a directory; give a file name")
            existed = path.exists()
            with open(path, "a"):
                pass
            if not existed:
                path.unlink()
    except OSError as error:  # root passes os.access checks, so try for real
        raise ValueError(f"{option} {path} cannot be written ({error.strerror or error})") from None


#: other libraries' spellings of this command's options (LightGBM's and XGBoost's parameters, scikit-learn's), for
#: the suggestion an unknown option gets; an underscore for a hyphen is suggested without a table
_OPTION_SYNONYMS = {"--rounds": ("num_iterations", "num_iteration", "num_trees", "num_tree", "num_rounds", "num_round",
                                 "num_boost_round", "n_estimators", "n_iter"),
                    "--early-stopping": ("early_stopping_rounds", "early_stopping_round", "n_iter_no_change"),
                    "--learning-rate": ("eta", "shrinkage_rate"),
                    "--num-leaves": ("max_leaves", "num_leaf", "max_leaf")}


def _suggested_option(option: str, known: list[str]) -> str | None:
    """The option of ``known`` that an unknown ``option`` (``--name`` or ``--name=value``) most likely means."""
    name = option.split("=", 1)[0].lstrip("-")
    for flag, synonyms in _OPTION_SYNONYMS.items():
        if flag in known and name.replace("-", "_") in synonyms:
            return flag
    hyphenated = "--" + name.replace("_", "-")
    if hyphenated in known:
        return hyphenated
    close = difflib.get_close_matches(hyphenated, known, n=1, cutoff=0.75)
    return close[0] if close else None


def parse_command_line(argv=None) -> argparse.Namespace:
    """The command line parsed; an unknown option is refused by its command with the option it most likely means
    (LightGBM's ``--num_iterations``: ``--rounds``; ``--learning_rate``: ``--learning-rate``)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        command = commands.choices[args.command]
        known = [flag for action in command._actions for flag in action.option_strings if flag.startswith("--")]
        hints = [f"{option} (did you mean {_suggested_option(option, known)}?)" if _suggested_option(option, known)
                 else option for option in unknown if option.startswith("-")]
        command.error(f"unrecognized arguments: {' '.join(hints or unknown)}")
    return args


def main(argv=None) -> int:
    args = parse_command_line(argv)
    limit_spinning()  # before an engine loads OpenMP: see plboost.engines.openmp

    shown = set()

    def show_warning(message, category, filename, lineno, file=None, line=None):
        text = f"plboost {args.command}: warning: {message}"
        if text not in shown:  # the same warning from several runs of one command is said once
            shown.add(text)
            print(text, file=sys.stderr)

    try:
        _check_environment()
        with warnings.catch_warnings(), _compile_notices(args):
            warnings.showwarning = show_warning
            return {"train": _train, "evaluate": _evaluate, "predict": _predict, "compare": _compare,
                    "summarize": _summarize, "demo": _demo, "warm-up": _warm_up,
                    "simulate-clicks": click_command.run}[args.command](args)
    except KeyboardInterrupt:
        if args.debug:
            raise
        out = getattr(args, "out", None) if args.command == "compare" else None
        resume = f"; the same command resumes from the records in {out}" if out else ""
        print(f"plboost {args.command}: interrupted{resume}", file=sys.stderr)
        return 130
    except Exception as error:
        message = failure_message(error)
        if args.debug:
            raise
        if message is None:  # a bug of plboost's, not the user's: its traceback, and where to send it
            traceback.print_exc()
            print(f"plboost {args.command}: internal error ({type(error).__name__}): this is a bug in plboost, "
                  f"not in your input; please report it with the command line and the traceback above "
                  f"(plboost {__version__})", file=sys.stderr)
            return 3
        print(f"plboost {args.command}: error: {message}", file=sys.stderr)
        return 2


def _check_environment() -> None:
    """Refuse, before any work, a process environment that would fail later with a message naming no cause: a
    working directory that was deleted (Python cannot resolve relative paths, nor can Numba start) and a
    ``NUMBA_NUM_THREADS`` Numba cannot use."""
    try:
        os.getcwd()
    except FileNotFoundError:
        raise ValueError("the working directory no longer exists (it was deleted or moved away): cd to a directory "
                         "that exists and run the command again") from None
    from ._jit import check_thread_variable

    check_thread_variable()


@contextlib.contextmanager
def _compile_notices(args):
    """Say on standard error when the command starts compiling plboost's kernels (the first run after installing:
    later runs load them from Numba's cache), and how long compiling took; nothing with --quiet."""
    from . import _jit

    if getattr(args, "quiet", False):
        yield
        return
    _jit.on_first_compile(lambda: print(f"plboost {args.command}: compiling plboost's kernels (the first run after "
                                        "installing only; later runs load them from the cache) ...", file=sys.stderr,
                                        flush=True))
    before = _jit.compile_seconds()
    try:
        yield
    finally:
        _jit.on_first_compile(None)
        if _jit.compile_seconds() > before:
            print(f"plboost {args.command}: compiled kernels in {_jit.compile_seconds() - before:.1f} s",
                  file=sys.stderr)


def failure_message(error: BaseException) -> str | None:
    """One line for an error a user can cause (bad input, a path that cannot be read or written, a full
    disk, too little memory, an engine refusing a parameter); None for a bug, which keeps its traceback."""
    if isinstance(error, OSError) and not isinstance(error, FileNotFoundError) and error.filename is not None:
        return f"{error.filename}: {error.strerror or error}"
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return f"no space left on the device ({error})"
    if isinstance(error, MemoryError):
        return (f"out of memory ({str(error) or 'no detail'}): try smaller data, sparse input (dense=False in Python) "
                "or a machine with more memory")
    from .engines import engine_message

    for engine in ENGINES.values():  # before ValueError: XGBoost's errors are ValueErrors with a C++ stack trace
        # an engine not loaded (or, in a test, hidden) raised nothing
        if sys.modules.get(engine.name) is not None and isinstance(error, engine.error_type):
            return f"{engine.label}: {engine_message(error)}"
    if isinstance(error, (ValueError, FileNotFoundError, InputTypeError, OSError, MissingExtra)):
        return str(error)
    return None


def _print_result(result) -> None:
    from .experiment import format_table

    row = {"objective": result.spec.label, **result.metrics, "seconds": result.model.train_seconds,
           "trees": result.model.trees_used}
    if result.evaluated_on == "train":
        print("train metrics: on the data the model was fitted to (no --valid or --test given), not an estimate "
              "for new queries")
    else:
        print(f"{result.evaluated_on} metrics")
    print(textwrap.fill(f"conventions: {result.conventions}", 120, subsequent_indent="  "))
    print(format_table([row], ["objective", *result.metrics, "seconds", "trees"]))


def _train(args) -> int:
    spec = _spec_from_args(args, objective=args.objective,
                           objective_params=_values.assignments(args.param, "--param"))

    from .data import load_splits
    from .experiment import run

    if spec.early_stopping and args.valid is None:
        raise ValueError("--early-stopping needs --valid")
    if args.click_log is not None:
        return _train_from_clicks(args, spec)
    if not args.train:
        raise ValueError("give --train (labelled data) or --click-log (a click log, with --clicks)")
    if args.clicks is not None or args.examination != "recorded":
        raise ValueError(f"{'--clicks' if args.clicks is not None else '--examination'} is for training from a "
                         "click log; give --click-log DIR")
    check_outputs({"--save-model": args.save_model, "--out": args.out}, split_reads(args.train, args.valid, args.test))
    check_output_path(args.save_model, "--save-model")
    check_output_path(args.out, "--out")
    if args.dask_scheduler or args.dask_local:
        result = _train_on_dask(args, spec)
    else:
        if len(args.train) > 1:
            raise ValueError("several --train files need Dask (--dask-local N or --dask-scheduler ADDRESS)")
        train, valid, test = load_splits(args.train[0], args.valid, args.test, **_load_options(args),
                                         out_of_core=args.out_of_core, memory_budget_bytes=args.memory_budget)
        result = run(spec, train, valid, test, progress=not args.quiet)
    _write_training_outputs(args, result, {"train": [str(path) for path in args.train]})
    return 0


def _write_training_outputs(args, result, data: dict) -> None:
    """Print ``result``, save its model (``--save-model``) and write it as JSON with the ``data`` it read
    (``--out``)."""
    _print_result(result)
    if args.save_model:
        result.model.save(args.save_model)
    if args.out:
        payload = result.to_dict()
        payload["data"] = {**data, **{name: str(path) for name, path in (("valid", args.valid), ("test", args.test))
                                      if path}}
        write_text(args.out, json_text(payload))


def _train_from_clicks(args, spec) -> int:
    """``plboost train --click-log``: train from a click log's estimates or displayed rows, evaluated on labels."""
    from .clicks import find_click_log, load_click_log
    from .clicks.log import find_logging_model
    from .data import load_splits
    from .experiment import run

    if args.train:
        raise ValueError("give --train or --click-log, not both: a run trains on labels or on a click log")
    if args.clicks is None:
        raise ValueError(f"--click-log needs --clicks, what to train on: {', '.join(CLICK_RUNS)}")
    if args.dask_scheduler or args.dask_local:
        raise ValueError("training from a click log on Dask is not offered yet; leave out --dask-local and "
                         "--dask-scheduler")
    if args.valid is None and args.test is None:
        raise ValueError("a run from a click log is evaluated on labelled data: give --test or --valid")
    spec = replace(spec, clicks=args.clicks, examination=args.examination)
    tables = [path for path in find_click_log(args.click_log) if path is not None]
    logger = find_logging_model(args.click_log)
    reads = [*split_reads(None, args.valid, args.test),
             *(Read(path, f"the click log's {path.stem} table") for path in tables),
             *([Read(logger, "the click log's logging ranker")] if logger is not None else [])]
    check_outputs({"--save-model": args.save_model, "--out": args.out}, reads)
    check_output_path(args.save_model, "--save-model")
    check_output_path(args.out, "--out")
    valid, test = load_splits(args.valid, args.test, **_load_options(args), out_of_core=args.out_of_core,
                              memory_budget_bytes=args.memory_budget)
    log = load_click_log(*tables)
    result = run(spec, log, valid, test, progress=not args.quiet)
    _write_training_outputs(args, result, {"click_log": [str(path) for path in tables], "clicks": args.clicks})
    return 0


def _train_on_dask(args, spec):
    from .experiment import dask_client, run_dask

    if args.dask_scheduler and args.dask_local:
        raise ValueError("give --dask-scheduler or --dask-local, not both")
    if args.out_of_core is not None or args.memory_budget is not None:
        raise ValueError("--out-of-core, --in-memory and --memory-budget are for one machine; Dask workers read "
                         "their partitions")
    paths = [*args.train, args.valid, args.test]
    table = next((path for path in paths if path is not None and is_table(path)), None)
    if table is not None:
        raise ValueError(f"{table}: training on Dask reads SVMlight files; a table is read on one machine (leave "
                         "out --dask-local and --dask-scheduler)")
    load_options, _ = checked_options(paths, _load_options(args))  # a table's option given is refused
    load_options.pop("progress")
    if args.test is None and args.valid is None:  # before a cluster starts and trains
        raise ValueError("a Dask run is evaluated on --test or --valid; give one")
    with dask_client(args.dask_scheduler, args.dask_local) as client:
        return run_dask(spec, client, args.train, args.valid, args.test, load_options=load_options)


def _warn_of_absent_features(data, model, args) -> None:
    """Warn when no document of ``data`` has a feature in the upper half of the model's: SVMlight leaves out zero
    features, so such data read as the model's width all the same, and a model of 300 features would score
    46-feature data without a word."""
    import numpy as np

    X = data.X
    used = X.indices.max() + 1 if hasattr(X, "indices") and X.nnz else (
        int(np.flatnonzero(np.any(X != 0, axis=0)).max()) + 1 if X.size and np.any(X != 0) else 0)
    if model.n_features > 1 and used <= model.n_features // 2:
        warnings.warn(f"{args.data}: no document has a feature above {used}, but {args.model} was trained on "
                      f"{model.n_features} features, which read as 0 here: is this the data the model is for?",
                      UserWarning, stacklevel=2)


def _evaluate(args) -> int:
    from .experiment import RunSpec, evaluate_scores, format_table

    model, data = _model_and_data(args)
    spec = RunSpec(eval_at=args.eval_at, no_relevant=args.no_relevant, g_max=args.g_max)
    values, conventions = evaluate_scores(model.predict(data.X), data, spec)
    print(f"{args.data}: {data.n_queries} queries, {data.n_docs} documents")
    print(textwrap.fill(f"conventions: {conventions}", 120, subsequent_indent="  "))
    print(format_table([{"model": args.model.name, **values}], ["model", *values]))
    if args.out:
        write_text(args.out, json_text({"model": str(args.model), "data": str(args.data), "metrics": values,
                                         "conventions": conventions}))
    return 0


def _predict(args) -> int:
    if args.sample is None:
        given = [flag for name, flag in _SAMPLING_OPTIONS.items() if getattr(args, name) is not None]
        if given:
            raise ValueError(f"{given[0]} is for sampled rankings: give --sample N with it (or leave out "
                             f"{given[0]} for the scores)")
    if args.out == STANDARD_OUTPUT:
        args.out = None
    model, data = _model_and_data(args)
    scores = model.predict(data.X).astype(float)
    if args.sample is None:
        text = "".join(f"{score!r}\n" for score in scores.tolist())
        what = f"{data.n_docs} scores of {args.model} on {args.data}"
    else:
        text, what = _sampled_rankings(args, scores, data)
    if args.out:
        write_text(args.out, text)
    else:
        sys.stdout.write(text)
    # the scores to standard output say nothing; a sample says its seed and temperature, wherever it goes
    if not args.quiet and (args.out or args.sample is not None):
        where = args.out or "standard output"
        print(f"{where}: {what}", file=sys.stderr)
    return 0


def _sampled_rankings(args, scores, data) -> tuple[str, str]:
    """``predict --sample``'s text (a line per document: its rank in each of the N rankings, space-separated) and
    what it is, in words, with what reproduces it (the temperature and the seed)."""
    from .policies import PlackettLucePolicy

    temperature = DEFAULT_TEMPERATURE if args.temperature is None else args.temperature
    seed = 0 if args.seed is None else args.seed
    policy = PlackettLucePolicy(scores, data.offsets, temperature=temperature, top_k=args.top_k)
    ranks = policy.sample(args.sample, seed=seed)
    text = "".join(" ".join(map(str, row)) + "\n" for row in ranks.T.tolist())
    top = "" if args.top_k is None else f", top {args.top_k} ranks (0 below)"
    rankings = f"{args.sample} ranking{'s' if args.sample > 1 else ''}"
    what = (f"{rankings} of each of {data.n_queries} queries ({data.n_docs} lines, one per document) sampled from "
            f"the Plackett-Luce policy of the scores of {args.model} on {args.data}, temperature {temperature!r}, "
            f"seed {seed}{top}")
    return text, what


def _model_and_data(args):
    """The model of ``--model`` and the data of ``--data``, read for it (its number of features), once the output
    path is known to be writable and to replace no input."""
    from .data import DataFormatError, load_splits
    from .engines import load_model

    check_outputs({"--out": args.out}, [Read(args.model, "the model file"), *data_reads(args.data, "data")])
    check_output_path(args.out, "--out")
    model = load_model(args.model)
    if is_table(args.data):
        (data,) = load_splits(args.data, out_of_core=False, **_load_options(args))
        if model.feature_names is not None:  # found by name: a column missing or extra is refused by name
            return model, for_model(data, model.feature_names, f"the model {args.model}")
        if data.n_features != model.n_features:
            raise ValueError(f"{args.data}: {data.n_features} feature columns, but {args.model} was trained on "
                             f"{model.n_features} features")
        _warn_of_position(data.feature_names, model, args)
    else:
        try:
            (data,) = load_splits(args.data, n_features=model.n_features, out_of_core=False, **_load_options(args))
        except DataFormatError as error:
            if "beyond n_features" in error.message:
                raise DataFormatError(error.path, error.line, f"{error.message} (the number of features the model "
                                      f"{args.model} was trained on): is this the data the model is for?") from None
            raise
        _warn_of_absent_features(data, model, args)
        _warn_of_position(None, model, args)
    return model, data


def _warn_of_position(names, model, args) -> None:
    """Say in one line that the features of ``--data`` are matched to the model's by position, where one side has
    no names (numbered features) and the other's are not those numbers (``f1``, ``f2``, ...: a table written from
    SVMlight data by :meth:`RankingData.to_pandas <plboost.data.RankingData.to_pandas>`)."""
    numbered = tuple(f"f{i + 1}" for i in range(model.n_features))
    model_names = model.feature_names
    if (names is None) == (model_names is None) or (names or model_names) == numbered:
        return
    if names is not None:
        what = f"{args.model} records no feature names (trained on numbered features)"
    else:
        shown = ", ".join(map(repr, model_names[:3])) + (", ..." if len(model_names) > 3 else "")
        what = f"{args.model} was trained on the table columns {shown}, and {args.data} numbers its features"
    warnings.warn(f"{what}: the features of {args.data} are matched to the model's by position", UserWarning,
                  stacklevel=2)


def _compare(args) -> int:
    from .data.layouts import find_layout
    from .experiment import (check_click_configurations, choose_baseline, compare, dataset_outputs, load_config,
                             parse_run, plotting, with_baselines)

    defaults = _spec_from_args(args)
    specs = load_config(args.config, defaults) if args.config else []
    specs += [parse_run(text, defaults) for text in args.run]
    if args.baselines:
        specs = with_baselines(specs, defaults)
    if not specs:
        raise ValueError("nothing to compare: give --run, --config or --baselines")
    if args.plot and not args.out:
        raise ValueError("--plot needs --out (the PNG is written there)")
    if args.plot:
        plotting()  # a missing matplotlib fails now, not after the training
    choose_baseline(specs, args.baseline)  # a bad name fails before training
    check_click_configurations(specs, args.click_log, args.tune)
    layouts = [find_layout(path) for path in args.data]  # every directory is checked before training
    check_output_path(args.out, "--out", directory=True)  # a directory it creates holds nothing to overwrite
    outputs = dataset_outputs(layouts, args.out)
    _check_comparison_outputs(args, layouts, outputs)
    tune = None
    if args.tune:
        from .tuning import Tuning, load_overrides

        tune = Tuning(args.tune, seed=args.tune_seed, overrides=load_overrides(args.config) if args.config else {})
    log = None if args.quiet else (lambda line: print(line, file=sys.stderr))
    comparisons = []
    for layout, (_, out) in zip(layouts, outputs, strict=True):
        result = compare(specs, layout, splits=args.folds, repeats=args.repeats, out_dir=out,
                         resume=not args.no_resume, progress=not args.quiet, log=log, tune=tune,
                         click_log=args.click_log,
                         load_options={**_load_options(args), "out_of_core": args.out_of_core,
                                       "memory_budget_bytes": args.memory_budget})
        comparisons.append(result)
        significance = _print_comparison(result, args.baseline, args.holm_over)
        if out:
            print(result.runs_line(), file=sys.stderr)
            written = result.save(out, significance)
            if args.plot:
                written["plot"] = result.plot(out / "validation_ndcg.png")
            print("wrote " + ", ".join(str(path) for path in written.values()), file=sys.stderr)
    if len(comparisons) > 1:
        from .winning import save_summary, summarize_comparisons

        _, table, text = summarize_comparisons(comparisons, args.metrics)
        names = ", ".join(name for name, _ in outputs)
        print(f"## Winning numbers over {len(comparisons)} datasets ({names})\n\n{text}")
        if args.out:
            written = save_summary(args.out, table, text)
            print("wrote " + ", ".join(map(str, written)), file=sys.stderr)
    return 0


def _check_comparison_outputs(args, layouts, outputs) -> None:
    """Refuse a ``compare --out`` whose result files or run records would replace a file the comparison reads:
    a data file of a split (or a query file beside it) or the ``--config`` file."""
    if args.out is None:
        return
    reads = [Read(args.config, "the --config file")] if args.config else []
    reads += [read for layout in layouts for split in layout.splits
              for read in split_reads(split.train, split.valid, split.test, split=split.name)]
    for out in dict.fromkeys([args.out, *(out for _, out in outputs)]):
        for read in reads:
            if result_file_of(read.path, out) is not None:
                raise ValueError(f"--out {args.out} would write over {read.path} ({read.what}); give another "
                                 "directory")


def _print_comparison(result, baseline=None, holm_over="metric"):
    """Print a comparison's header, table (with significance markers against the baseline) and legend, then each
    difference from the baseline with its interval; return the significance table (None without a baseline)."""
    from .significance import interval_legend, legend

    significance = result.significance(baseline, holm_over=holm_over)
    print(result.header())
    print(result.table(significance=significance))
    if significance is not None:
        baseline = result.default_baseline(baseline)
        tests = significance[significance["test"] == significance["test"].iloc[0]]
        family = len(tests) if holm_over == "table" else tests["configuration"].nunique()
        print(legend(baseline, holm_over=holm_over, family_size=family))
        tuning = (result.protocol or {}).get("tuning")
        if tuning:
            from .tuning import few_trials

            few = few_trials(tuning["n_trials"])
            if few:
                print(few)
        print()
        print(f"Differences from {baseline}:")
        print(result.interval_table(significance))
        print(interval_legend(baseline, result.repeats))
    else:
        print("(no significance tests: no baseline; add lambdarank (--baselines) or give --baseline NAME)")
    print()
    return significance


def _summarize(args) -> int:
    from .winning import load_results, summarize

    lacking = [path for path in args.results if not _has_per_query(path)]
    tested = [path for path in args.results if path not in lacking]
    wins = args.wins
    if wins == "auto":  # decided per pair of results: significant where both have per-query values
        wins = "significant" if tested else "all"
    reads, comparisons = _summarized_files(args.results, significant=wins == "significant")
    check_outputs({"--out": args.out}, reads, comparisons)
    check_output_path(args.out, "--out")
    results = load_results(args.results)
    significant = None
    if wins == "significant":
        from .significance import load_per_query, pairwise_significance

        per_query = load_per_query([path if path.is_dir() else path.parent
                                    for path in (tested if args.wins == "auto" else args.results)])
        significant = pairwise_significance(per_query, metrics=args.metrics, alpha=args.alpha)
    why = f"no per_query.csv for {', '.join(map(str, lacking))}" if args.wins == "auto" and lacking else None
    cells, table, text = summarize(results, args.metrics, significant, every_win_because=why,
                                   untested_because=why if significant is not None else None)
    datasets = list(dict.fromkeys(cells["dataset"]))
    print(f"## Winning numbers: {cells['method'].nunique()} methods, {len(datasets)} datasets "
          f"({', '.join(datasets)}), {results['source'].nunique()} result file(s)\n")
    print(text)
    if args.out:
        table.to_csv(args.out, index=False)
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _has_per_query(path: Path) -> bool:
    """Whether the per-query values of a result given to summarize exist (see
    :func:`plboost.significance.load_per_query`)."""
    if path.is_dir():
        return (path / "per_query.csv").is_file() or any(path.glob("*/per_query.csv"))
    return (path.parent / "per_query.csv").is_file()


def _summarized_files(paths, *, significant: bool):
    """What ``summarize`` reads (the files given, the ``results.json`` found in directories, the ``per_query.csv``
    files of ``--significant``) and the comparison directories among them, whose result files an output must not
    replace."""
    reads, comparisons = [], []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob("results.json"))
            reads += [Read(result, f"a result file found in {path}") for result in found]
            comparisons += [path, *(result.parent for result in found)]
            if significant:
                reads += [Read(table, f"a per-query table found in {path}")
                          for table in [path / "per_query.csv", *path.glob("*/per_query.csv")]]
        else:
            reads.append(Read(path, "a result file given"))
            if path.name in COMPARISON_FILES:
                comparisons.append(path.parent)
    return reads, comparisons


def demo_runs() -> list[str]:
    """The demo's configurations: LightGBM's lambdarank, then each registered objective's ``demo_runs``."""
    return ["lambdarank"] + [run for cls in OBJECTIVES.values() for run in cls.demo_runs]


def _demo(args) -> int:
    from .data import write_synthetic_splits
    from .data.layouts import find_layout
    from .experiment import RunSpec, compare, parse_run

    if args.out:
        check_output_path(args.out, "--out", directory=True)
        for part in ("data", "results"):  # what the demo writes: never over files that are there already
            held = sorted(p.name for p in (args.out / part).iterdir()) if (args.out / part).is_dir() else []
            if held or (args.out / part).is_file():
                raise ValueError(f"--out {args.out}: {args.out / part} holds {', '.join(held[:3]) or 'a file'}"
                                 f"{', ...' if len(held) > 3 else ''}, which the demo would replace; give a new or "
                                 "empty directory")
    with tempfile.TemporaryDirectory(prefix="plboost-demo-") as scratch:
        directory = args.out or Path(scratch)
        write_synthetic_splits(directory / "data", n_queries=(args.queries, args.queries // 3, args.queries // 3),
                               seed=args.seed)
        defaults = RunSpec(rounds=args.rounds, early_stopping=30, seed=args.seed)
        specs = [parse_run(text, defaults) for text in demo_runs()]
        result = compare(specs, find_layout(directory / "data"), progress=not args.quiet,
                         out_dir=directory / "results" if args.out else None, resume=False,
                         load_options={"cache": False})
        # the data of a demo without --out lives in a temporary directory, deleted when the demo ends
        result.dataset = str(directory / "data") if args.out else "synthetic"
        kept = f", kept in {directory / 'data'}" if args.out else ""
        print(f"synthetic LETOR-like data ({args.queries} training queries, {args.queries // 3} validation and "
              f"{args.queries // 3} test queries, seed {args.seed}{kept}); LightGBM, {args.rounds} rounds at most, "
              "early stopping on validation NDCG@10")
        significance = _print_comparison(result)
        if args.out:
            result.save(directory / "results", significance)
    return 0


def _warm_up(args) -> int:
    from .warm_up import warm_up

    start = time.perf_counter()
    seconds = warm_up(args.objectives or None, workers=args.workers, progress=not args.quiet)
    slowest = max(seconds, key=seconds.get)
    objectives = len(seconds) - (PARSER in seconds)
    warmed = [f"{objectives} objective(s)"] if objectives else []
    warmed += ["the SVMlight parser"] if PARSER in seconds else []
    print(f"plboost warm-up: {' and '.join(warmed)} compiled or found in Numba's cache in "
          f"{time.perf_counter() - start:.1f} s (the slowest, {slowest}, {seconds[slowest]:.1f} s in its process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
