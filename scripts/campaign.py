"""An adversarial campaign against the plboost command: bad input of every kind, tried as a hostile or careless
user would, each in its own process with a time limit (issue 38).

    python scripts/campaign.py [--out campaign.csv] [--jobs 2] [--only SUBSTRING] [--list]

Every case states what must happen: "refused" (exit status 2 and exactly one line on standard error, from the
command, naming what is wrong: ``expect`` is a piece of that line), "ok" (exit status 0), or "interrupted" (exit
status 130 and one line). Whatever the case, a traceback, an "internal error" line, a death by a signal or a run
past the time limit fails it. The data are MQ2008 Fold1's first 30/10/10 queries (from ../shared/data) written to
a scratch directory, and variants of them. Prints one line per failed case, the counts per category and in all,
and writes every case's outcome to --out.
"""

from __future__ import annotations

import argparse
import bz2
import csv
import gzip
import lzma
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "MQ2008" / "Fold1"
TIMEOUT = 180


@dataclass
class Case:
    category: str
    name: str
    argv: list[str]
    expect: str = "ok"  # "ok", "interrupted", or a piece of the one refusal line
    #: prepares the scratch directory for the case (files to damage, ...); gets the directory
    setup: object = None
    #: seconds after which SIGINT is sent (a Ctrl-C)
    interrupt_after: float | None = None
    #: lines the refusal may take (the message of a directory of no known layout lists the layouts it knows)
    max_lines: int = 1
    #: the largest file the command may write (RLIMIT_FSIZE), in bytes: a disk that fills up
    file_size_limit: int | None = None
    #: files of the scratch directory that must not exist afterwards (a truncated output left behind)
    absent: tuple = ()
    #: environment variables set for the command
    environment: dict = field(default_factory=dict)
    #: the command starts in a directory that is deleted before it runs
    deleted_cwd: bool = False
    outcome: dict = field(default_factory=dict)


def first_queries(path: Path, n: int) -> str:
    """The lines of the first ``n`` queries of a gzip SVMlight file."""
    lines, seen = [], []
    with gzip.open(path, "rt") as handle:
        for line in handle:
            qid = line.split()[1]
            if qid not in seen:
                if len(seen) == n:
                    break
                seen.append(qid)
            lines.append(line)
    return "".join(lines)


def write_base(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for name, n in (("train", 30), ("vali", 10), ("test", 10)):
        (directory / f"{name}.txt").write_text(first_queries(SHARED / f"{name}.txt.gz", n))


def writer(name: str, text, *, binary: bool = False):
    def setup(d: Path):
        path = d / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if binary:
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return setup


def train_on(name: str, *extra: str) -> list[str]:
    """A training command on the file ``name``; the data files here are a few documents, which LightGBM's default
    minimum of 20 per leaf (and 3 per bin) would not split at all."""
    return ["train", "--train", "{d}/" + name, "--rounds", "3", "--quiet", "--engine-param", "min_data_in_leaf=1",
            "--engine-param", "min_data_in_bin=1", *extra]


GOOD = "2 qid:1 1:0.5 2:0.1\n0 qid:1 1:0.2 2:0.3\n1 qid:2 1:0.9 2:0.4\n0 qid:2 1:0.1 2:0.2\n"

DATA_FILES = [  # (name, file text, what the refusal says; "ok" where the file is good)
    ("empty file", "", "no data lines"),
    ("only comments", "# nothing\n# here\n", "no data lines"),
    ("UTF-8 byte-order mark", "\ufeff" + GOOD, "ok"),
    ("CRLF line ends", GOOD.replace("\n", "\r\n"), "ok"),
    ("CR line ends", GOOD.replace("\n", "\r"), "ok"),
    ("tabs between tokens", GOOD.replace(" ", "\t"), "ok"),
    ("trailing spaces and comments", GOOD.replace("\n", "  # note\n"), "ok"),
    ("qid on some lines only", "1 qid:1 1:1\n0 1:2\n", "no qid: on this line"),
    ("qid reappears", "1 qid:1 1:1\n0 qid:2 1:2\n1 qid:1 1:3\n", "qid 1 reappears"),
    ("qids not sorted", "1 qid:5 1:1\n0 qid:5 1:2\n1 qid:2 1:3\n0 qid:2 1:1\n", "ok"),
    ("negative label", "-1 qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
    ("fractional label", "0.5 qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
    ("huge label", "1000000000 qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
    ("nan label", "nan qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
    ("inf label", "inf qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
    ("label that is a word", "high qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
    ("feature index 0", "1 qid:1 0:1\n0 qid:1 1:2\n", "feature index 0"),
    ("negative feature index", "1 qid:1 -3:1\n0 qid:1 1:2\n", "line 1"),
    ("feature index 10^9", "1 qid:1 1000000000:1\n0 qid:1 1:2\n", "columns wide"),
    ("feature value nan", "1 qid:1 1:nan\n0 qid:1 1:2\n", "ok"),
    ("feature value inf", "1 qid:1 1:inf\n0 qid:1 1:2\n", "infinite values are not accepted"),
    ("feature value 1e39", "1 qid:1 1:1e39\n0 qid:1 1:2\n", "beyond float32's range"),
    ("feature value a word", "1 qid:1 1:abc\n0 qid:1 1:2\n", "line 1"),
    ("feature index twice", "1 qid:1 1:1 1:2\n0 qid:1 1:2\n", "line 1"),
    ("feature indices decreasing", "1 qid:1 2:1 1:2\n0 qid:1 1:2\n", "line 1"),
    ("qid a word", "1 qid:abc 1:1\n0 qid:abc 1:2\n", "line 1"),
    ("qid negative", "1 qid:-1 1:1\n0 qid:-1 1:2\n", "ok"),
    ("qid 2^63-1", "1 qid:9223372036854775807 1:1\n0 qid:9223372036854775807 1:2\n", "ok"),
    ("qid beyond 64 bits", "1 qid:99999999999999999999 1:1\n0 qid:99999999999999999999 1:2\n", "line 1"),
    ("qid 1e30", "1 qid:1e30 1:1\n0 qid:1e30 1:2\n", "line 1"),
    ("queries of one document", "1 qid:1 1:1\n0 qid:2 1:2\n2 qid:3 1:3\n", "ok"),
    ("every label equal", "1 qid:1 1:1\n1 qid:1 1:2\n1 qid:2 1:3\n1 qid:2 1:1\n", "ok"),
    ("no features", "1 qid:1\n0 qid:1\n", "no features"),
    ("NUL bytes", "1 qid:1 1:1\x00\n0 qid:1 1:2\n", "line 1"),
    ("a line of 100,000 features", "1 qid:1 " + " ".join(f"{i}:1" for i in range(1, 100001)) + "\n0 qid:1 1:2\n",
     "ok"),
    ("no qid and no .query file", "1 1:1\n0 1:2\n", "no qid: column and no query file"),
    ("a .query file that disagrees", None, "query sizes"),
    ("colon without value", "1 qid:1 1:\n0 qid:1 1:2\n", "line 1"),
    ("value without index", "1 qid:1 :5\n0 qid:1 1:2\n", "line 1"),
    ("two labels", "1 2 qid:1 1:1\n0 qid:1 1:2\n", "line 1"),
]


def data_cases() -> list[Case]:
    cases = []
    for number, (name, text, expect) in enumerate(DATA_FILES):
        file = f"data{number}.txt"
        if text is None:  # a query file beside a file with qids that says otherwise
            setup = _with_query_file(file)
        else:
            setup = writer(file, text)
        cases.append(Case("data file", name, train_on(file), expect, setup))
    gz = gzip.compress(GOOD.encode())
    cases += [
        Case("data file", "gzip cut in half", train_on("cut.txt.gz"), "cut.txt.gz",
             writer("cut.txt.gz", gz[:len(gz) // 2], binary=True)),
        Case("data file", "gzip with a damaged byte", train_on("bad.txt.gz"), "bad.txt.gz",
             writer("bad.txt.gz", gz[:20] + bytes([gz[20] ^ 0xFF]) + gz[21:], binary=True)),
        Case("data file", "random bytes", train_on("noise.txt"), "noise.txt",
             writer("noise.txt", os.urandom(5000), binary=True)),
        Case("data file", "bzip2 under a .gz name", train_on("packed.txt.gz"), "is bzip2-compressed",
             writer("packed.txt.gz", bz2.compress(GOOD.encode()), binary=True)),
        Case("data file", "xz inside gzip", train_on("twice.gz"), "is xz-compressed inside its gzip compression",
             writer("twice.gz", gzip.compress(lzma.compress(GOOD.encode())), binary=True)),
        Case("data file", "a CSV table named .svm", train_on("table.svm"), "comma-separated, as a CSV table's are",
             writer("table.svm", "query,relevance,a\n3,1,0.5\n")),
        Case("data file", "a directory", train_on("adir"), "is a directory", lambda d: (d / "adir").mkdir()),
        Case("data file", "a file that is not there", train_on("missing.txt"), "missing.txt"),
        Case("data file", "a FIFO", train_on("fifo.txt"), "not a regular file", lambda d: os.mkfifo(d / "fifo.txt")),
        Case("data file", "a symbolic link loop", train_on("loop.txt"), "loop.txt",
             lambda d: (d / "loop.txt").symlink_to(d / "loop.txt")),
        Case("data file", "a Unicode path", train_on("données ñ 日本/train.txt"), "ok",
             writer("données ñ 日本/train.txt", GOOD)),
        Case("data file", "a path with spaces and quotes", train_on("a b'c/train.txt"), "ok",
             writer("a b'c/train.txt", GOOD)),
    ]
    return cases


def _with_query_file(file: str):
    def setup(d: Path):
        (d / file).write_text(GOOD)
        (d / f"{file}.query").write_text("3\n1\n")
    return setup


PARAMETERS = [  # (argv after the training file, piece of the refusal or "ok")
    (["--param", "top_k=0"], "top_k must be an integer >= 1"),
    (["--param", "top_k=2.5"], "top_k must be an integer"),
    (["--param", "top_k=none"], "ok"),
    (["--param", "top_k=abc"], "top_k must be"),
    (["--param", "n_permutations=-1"], "n_permutations must be"),
    (["--param", "seed=-1"], "seed must be"),
    (["--param", "seed=none"], "seed must be"),
    (["--param", "stop_at_lowest_grade=maybe"], "expected true or false"),
    (["--param", "stop_at_lowest_grade=yes"], "ok"),
    (["--param", "hessian_floor=nan"], "hessian_floor must be"),
    (["--param", "hessian_floor=-1"], "hessian_floor must be"),
    (["--param", "topk=3"], "did you mean top_k"),
    (["--param", "top_k"], "expected KEY=VALUE"),
    (["--objective", "umart", "--param", "window=0"], "window must be"),
    (["--objective", "umart", "--param", "label_gain=abc"], "label_gain must be"),
    (["--objective", "umart", "--param", "preset=authors"], "preset must be one of"),
    (["--objective", "umart", "--param", "sigmoid=-2"], "sigmoid must be"),
    (["--objective", "pl_partition", "--param", "tolerance=1"], "tolerance must be"),
    (["--objective", "pa_listmle", "--param", "position_weights=[1,2]"], "position_weights must hold top_k"),
    (["--objective", "pl_rank3", "--param", "curvature=second"], "curvature must be one of"),
    (["--objective", "listnet", "--param", "target=ndcg"], "target must be one of"),
    (["--objective", "lambdarank", "--param", "top_k=5"], "is not a parameter of LightGBM's lambdarank"),
    (["--objective", "PLRank"], "did you mean plrank"),
    (["--objective", "lambdamart"], "did you mean lambdarank"),
    (["--objective", "rank:ndcg"], "add --engine xgboost"),
    (["--engine", "catboost"], "CatBoost cannot do plboost's objectives (plrank)"),
    (["--rounds", "0"], "--rounds"),
    (["--rounds", "abc"], "--rounds"),
    (["--learning-rate", "-1"], "learning_rate must be"),
    (["--learning-rate", "inf"], "learning_rate must be"),
    (["--num-leaves", "0"], "--num-leaves"),
    (["--early-stopping", "5"], "--early-stopping needs --valid"),
    (["--eval-at", "0"], "cut-offs"),
    (["--eval-at", "1,5000000000"], "--eval-at: cut-offs must be at most 2**31 - 1"),
    (["--eval-at", "3,36893488147419103232"], "--eval-at: cut-offs must be at most 2**31 - 1"),
    (["--num-leaves", "4294967296"], "--num-leaves: expected a positive integer of at most 2**31 - 1"),
    (["--early-stopping", "18446744073709551616"], "--early-stopping: expected a positive integer of at most"),
    (["--seed", "-99999999999999999999"], "seed must be an integer, got -99999999999999999999 (beyond the 64-bit"),
    (["--memory-budget", "99999999999999999999G"], "--memory-budget: expected a size of at most"),
    (["--param", "top_k=12345678901234567890123"], "top_k must be an integer >= 1 or None, got 1234"),
    (["--param", "n_permutations=3e25"], "n_permutations must be an integer >= 1, got 3e+25 (beyond the 64-bit"),
    (["--param", "hessian_floor=4e38"], "hessian_floor must be a finite number in [0, 3.40282e+38], got 4e+38"),
    (["--objective", "umart", "--param", "sigmoid=1e200"], "sigmoid must be a finite number in (0, 1.34078e+154]"),
    (["--objective", "yetirank", "--param", "weight_scale=1e300"], "weight_scale must be a finite number in (0,"),
    (["--learning_rate", "0.1"], "did you mean --learning-rate"),
    (["--num_iterations", "5"], "did you mean --rounds"),
    (["--engine-param", "metric=map"], "would replace the validation NDCG"),
    (["--engine-param", "num_iterations=5"], "sets the number of rounds"),
    (["--engine-param", "objective=regression"], "would train another objective"),
    (["--engine-param", "max_bin=-5"], "max_bin"),
    (["--engine-param", "num_leaves=abc"], "num_leaves"),
    (["--engine-param", "min_data_in_leaf=5"], "ok"),
    (["--engine-param", "subsample=0.65"], "LightGBM bags only with bagging_freq > 0"),
    (["--engine-param", "bagging_freq=5"], "LightGBM bags only with bagging_fraction < 1"),
    (["--engine-param", "bagging_fraction=0.6", "--engine-param", "bagging_freq=2"], "ok"),
    (["--engine-param", "top_rate=0.3"], "data_sample_strategy=goss only"),
    (["--engine-param", "lambda_l1=1", "--engine-param", "reg_alpha=2"], "are both LightGBM's lambda_l1"),
    (["--engine-param", "feature_fraction=0.7", "--engine-param", "colsample_bytree=0.8"],
     "are both LightGBM's feature_fraction"),
    (["--engine", "xgboost", "--engine-param", "eta=0.2", "--engine-param", "learning_rate=0.3"],
     "are both XGBoost's learning_rate"),
    (["--param", "n_permutations=2", "--param", "n_permutations=4"], "n_permutations is given twice"),
    (["--engine-param", "force_row_wise=true"], "ok"),
    (["--engine-param", "no_such_parameter=1"], "unknown LightGBM engine parameter"),
    (["--engine-param", "boosting=rf"], "LightGBM refuses to train"),
    (["--engine-param", "label_gain=0,0,0"], "ok"),
    (["--engine", "xgboost", "--engine-param", "booster=gblinear"], "trains no trees"),
    (["--engine", "xgboost", "--engine-param", "base_score=nan"], "finite numbers"),
    (["--engine", "xgboost", "--engine-param", "ndcg_exp_gain=false"], "would change the gains"),
    (["--engine", "xgboost", "--engine-param", "tree_method=bogus"], "XGBoost"),
    (["--engine", "xgboost", "--engine-param", "eval_metric=map"], "would replace the validation NDCG"),
    (["--leaf-values", "exact", "--engine", "xgboost"], "leaf_values='exact' is for LightGBM only"),
    (["--leaf-values", "newton"], "--leaf-values"),
    (["--memory-budget", "0"], "--memory-budget"),
    (["--in-memory", "--memory-budget", "1M"], "memory budget"),
    (["--dask-local", "1", "--engine", "xgboost"], "evaluated on --test or --valid"),
    (["--dask-local", "2", "--dask-scheduler", "tcp://x:1", "--test", "{d}/base/test.txt"], "not both"),
]


def parameter_cases() -> list[Case]:
    return [Case("parameter", " ".join(extra), ["train", "--train", "{d}/base/train.txt", "--rounds", "3", "--quiet",
                                                *extra], expect) for extra, expect in PARAMETERS]


def output_cases() -> list[Case]:
    base = ["train", "--train", "{d}/base/train.txt", "--rounds", "3", "--quiet"]
    return [
        Case("output", "--out is the training file", [*base, "--out", "{d}/base/train.txt"], "the training file"),
        Case("output", "--save-model is the training file", [*base, "--save-model", "{d}/base/train.txt"],
             "the training file"),
        Case("output", "--out is a directory", [*base, "--out", "{d}/base"], "is a directory"),
        Case("output", "--out in a directory that is not there", [*base, "--out", "{d}/nowhere/x/results.json"],
             "cannot be written (No such file or directory)"),
        Case("output", "--out on a full disk (/dev/full)", [*base, "--out", "/dev/full"], "/dev/full"),
        Case("output", "--out past a file size limit", [*base, "--no-cache", "--out", "{d}/o.json"],
             "o.json: File too large", file_size_limit=300, absent=("o.json",)),
        Case("output", "--save-model past a file size limit", [*base, "--no-cache", "--save-model", "{d}/m.txt"],
             "m.txt: File too large", file_size_limit=2000, absent=("m.txt",)),
        Case("output", "compare --out past a file size limit",
             ["compare", "{d}/base", "--run", "plrank", "--rounds", "3", "--no-cache", "--out", "{d}/cmp2", "--quiet"],
             "cmp2/runs/", file_size_limit=3000, absent=("cmp2/results.json", "cmp2/results.csv")),
        Case("output", "--save-model on a full disk (/dev/full)", [*base, "--save-model", "/dev/full"], "/dev/full"),
        Case("output", "--out and --save-model the same file", [*base, "--out", "{d}/same", "--save-model",
                                                                "{d}/same"], "give two files"),
        Case("output", "--out replaces a comparison's results.json", [*base, "--out", "{d}/cmp/results.json"],
             "would replace results.json of the comparison", lambda d: (d / "cmp" / "runs").mkdir(parents=True)),
        Case("output", "demo --out over an earlier demo", ["demo", "--queries", "9", "--rounds", "2", "--out",
                                                           "{d}/demo", "--quiet"], "which the demo would replace",
             lambda d: (d / "demo" / "data").mkdir(parents=True) or (d / "demo" / "data" / "train.txt").write_text(
                 "mine\n")),
        Case("output", "predict --out - writes the scores to standard output",
             ["predict", "--model", "{d}/m-.txt", "--data", "{d}/base/vali.txt", "--out", "-", "--quiet"], "ok",
             _trained_model("m-.txt"), absent=("-",)),
        Case("output", "evaluate --out - (the table is on standard output)",
             ["evaluate", "--model", "{d}/m-.txt", "--data", "{d}/base/vali.txt", "--out", "-", "--quiet"],
             "'-' stands for standard output", _trained_model("m-.txt"), absent=("-",)),
        Case("output", "summarize --out -", ["summarize", "{d}/two.csv", "--out", "-"], "give a file name",
             writer("two.csv", "method,dataset,ERR@5\nP,d,0.3\nQ,d,0.2\n"), absent=("-",)),
        Case("output", "compare --out -", ["compare", "{d}/base", "--run", "umart", "--out", "-", "--quiet"],
             "give a directory name", absent=("-",)),
        Case("output", "compare --out is a file", ["compare", "{d}/base", "--run", "plrank", "--rounds", "2",
                                                   "--out", "{d}/base/train.txt", "--quiet"], "is a file"),
    ]


def _trained_model(name: str):
    def setup(d: Path):
        subprocess.run([sys.executable, "-m", "plboost", "train", "--train", str(d / "base" / "train.txt"),
                        "--rounds", "2", "--save-model", str(d / name), "--quiet"], check=True, capture_output=True)
    return setup


def environment_cases() -> list[Case]:
    base = ["train", "--train", "{d}/base/train.txt", "--rounds", "2", "--quiet"]
    return [
        Case("environment", f"NUMBA_NUM_THREADS={value}", base, "NUMBA_NUM_THREADS", environment={
            "NUMBA_NUM_THREADS": value}) for value in ("-1", "two", "0x2", "3.0")
    ] + [
        Case("environment", "NUMBA_NUM_THREADS=1", base, "ok", environment={"NUMBA_NUM_THREADS": "1"}),
        Case("environment", "a deleted working directory (train)", base, "the working directory no longer exists",
             deleted_cwd=True),
        Case("environment", "a deleted working directory (summarize)", ["summarize", "{d}/x.csv"],
             "the working directory no longer exists", deleted_cwd=True),
        Case("environment", "demo --seed -2", ["demo", "--seed", "-2"], "argument --seed"),
        Case("environment", "compare --tune-seed 2**63", ["compare", "{d}/base", "--run", "plrank", "--tune", "2",
                                                          "--tune-seed", str(2 ** 63)], "argument --tune-seed"),
    ]


def model_cases() -> list[Case]:
    def evaluate(name):
        return ["evaluate", "--model", "{d}/" + name, "--data", "{d}/base/test.txt", "--quiet"]

    return [
        Case("model", "empty model file", evaluate("empty.txt"), "is empty", writer("empty.txt", "")),
        Case("model", "a data file as the model", ["evaluate", "--model", "{d}/base/train.txt", "--data",
                                                   "{d}/base/test.txt", "--quiet"], "not a LightGBM model file"),
        Case("model", "/dev/null", ["evaluate", "--model", "/dev/null", "--data", "{d}/base/test.txt"],
             "not a regular file"),
        Case("model", "a directory", evaluate("base"), "is a directory"),
        Case("model", "a JSON results file", evaluate("r.json"), "not an XGBoost model",
             writer("r.json", '{"results": []}')),
        Case("model", "JSON cut short", evaluate("cut.json"), "truncated", writer("cut.json", '{"learner": {"a": [1,')),
        Case("model", "a model file that is not there", evaluate("nothere.txt"), "does not exist"),
        Case("model", "'tree' and nothing else", evaluate("tree.txt"), "truncated", writer("tree.txt", "tree\n")),
        Case("model", "UBJSON noise", evaluate("noise.ubj"), "not a valid XGBoost UBJSON model",
             writer("noise.ubj", b"{i\x05hello" + os.urandom(64), binary=True)),
    ] + [Case("model", f"LightGBM model: {what}", evaluate(f"lgb{n}.txt"), expect, _damaged_model(f"lgb{n}.txt", edit))
         for n, (what, edit, expect) in enumerate(MODEL_DAMAGE)] + [
        Case("model", f"table model on a table: {what}", ["evaluate", "--model", "{d}/tablemodel.txt", "--data",
                                                          "{d}/" + name, "--quiet"], expect, _table_model(name, edit))
        for what, name, edit, expect in TABLE_EDITS]


#: a model trained on a table, evaluated on that table changed: (what, file, change of the DataFrame, expected)
TABLE_EDITS = [
    ("columns in another order", "shuffled.parquet", lambda f: f[[*f.columns[:2], *f.columns[2:][::3],
                                                                   *f.columns[2:].drop(f.columns[2:][::3])]], "ok"),
    ("a feature column left out", "dropped.csv", lambda f: f.drop(columns=f.columns[9]), "('f8' missing)"),
    ("an extra column", "extra.csv.gz", lambda f: f.assign(url_length=3.0), "('url_length' not in the model"),
]


def _table_model(name: str, edit):
    def setup(d: Path):
        from plboost.data import load_svmlight

        train = d / "tabletrain.csv"
        if not train.exists():
            load_svmlight(d / "base" / "train.txt", cache=False).to_pandas().to_csv(train, index=False)
            subprocess.run([sys.executable, "-m", "plboost", "train", "--train", str(train), "--rounds", "3",
                            "--save-model", str(d / "tablemodel.txt"), "--quiet"], check=True, capture_output=True)
        frame = load_svmlight(d / "base" / "test.txt", cache=False, n_features=46).to_pandas()
        changed = edit(frame)
        if name.endswith(".parquet"):
            changed.to_parquet(d / name)
        else:
            changed.to_csv(d / name, index=False)
    return setup


#: same-length edits of a trained LightGBM model's first tree: (what, (field, replacement of its first value), refusal)
MODEL_DAMAGE = [
    ("num_leaves of 9s", ("num_leaves", lambda v: "9" * len(v)), "Tree 0"),
    ("threshold of x's", ("threshold", lambda v: "x" * len(v)), "Tree 0, threshold"),
    ("split_feature beyond max_feature_idx", ("split_feature", lambda v: "9" * max(len(v), 2)), "split_feature"),
    ("left_child outside the tree", ("left_child", lambda v: "9" * max(len(v), 3)), "is not a valid LightGBM model"),
    ("leaf_value a word", ("leaf_value", lambda v: "w" * len(v)), "leaf_value"),
    ("decision_type a word", ("decision_type", lambda v: "z" * len(v)), "decision_type"),
]


def _damaged_model(name: str, edit):
    field_name, change = edit

    def setup(d: Path):
        model = d / "trained.txt"
        if not model.exists():
            subprocess.run([sys.executable, "-m", "plboost", "train", "--train", str(d / "base" / "train.txt"),
                            "--rounds", "3", "--save-model", str(model), "--quiet"], check=True, capture_output=True)
        text = model.read_text()
        start = text.index(f"\n{field_name}=", text.index("Tree=0\n")) + len(field_name) + 2
        end = min(text.index(" ", start) if " " in text[start:start + 200] else len(text), text.index("\n", start))
        (d / name).write_text(text[:start] + change(text[start:end]) + text[end:])
    return setup


def _folds(*names: str):
    """A layout of folds ``names``, each a copy of the base split."""
    def setup(d: Path):
        for name in names:
            shutil.copytree(d / "base", d / "folds" / name)
    return setup


def _compared_on_zero_labels(d: Path) -> None:
    """A compare (strict JSON written) on a split whose test labels are all 0, so that no test query counts."""
    layout = d / "zero" / "Fold1"
    shutil.copytree(d / "base", layout)
    test = layout / "test.txt"
    test.write_text("".join("0" + line[line.index(" "):] for line in test.read_text().splitlines(keepends=True)))
    subprocess.run([sys.executable, "-m", "plboost", "compare", str(d / "zero"), "--run", "listnet", "--rounds", "2",
                    "--no-relevant", "exclude", "--out", str(d / "zero-out"), "--quiet"], check=True,
                   capture_output=True)


def compare_cases() -> list[Case]:
    base = ["compare", "{d}/base", "--rounds", "2", "--quiet"]
    return [
        Case("compare", "no configuration", base, "nothing to compare"),
        Case("compare", "an empty directory", ["compare", "{d}/emptydir", "--run", "plrank"], "no known dataset layout",
             lambda d: (d / "emptydir").mkdir(), max_lines=8),
        Case("compare", "a directory that is not there", ["compare", "{d}/nodir", "--run", "plrank"], "nodir"),
        Case("compare", "an unknown objective", [*base, "--run", "plrnk"], "did you mean plrank"),
        Case("compare", "one configuration twice", [*base, "--run", "plrank", "--run", "plrank,top_k=10"], "again"),
        Case("compare", "--repeats 0", [*base, "--run", "plrank", "--repeats", "0"], "--repeats"),
        Case("compare", "--tune 0", [*base, "--run", "plrank", "--tune", "0"], "--tune"),
        Case("compare", "--baseline that names nothing", [*base, "--run", "plrank", "--baseline", "ndcg"],
             "--baseline 'ndcg' names no configuration"),
        Case("compare", "a bad TOML file", [*base, "--config", "{d}/bad.toml"], "bad.toml",
             writer("bad.toml", "[[run\n")),
        Case("compare", "a TOML file without [[run]]", [*base, "--config", "{d}/norun.toml"], "norun.toml",
             writer("norun.toml", "[defaults]\nrounds = 3\n")),
        Case("compare", "TOML rounds = 2.7", [*base, "--config", "{d}/float.toml"], "rounds must be an integer",
             writer("float.toml", '[defaults]\nrounds = 2.7\n[[run]]\nobjective = "plrank"\n')),
        Case("compare", "TOML learning_rate as text", [*base, "--config", "{d}/text.toml"], "learning_rate must be",
             writer("text.toml", '[defaults]\nlearning_rate = "0.1"\n[[run]]\nobjective = "plrank"\n')),
        Case("compare", "a plain run", [*base, "--run", "plrank", "--run", "lambdarank"], "ok"),
        Case("compare", "a split named twice in --folds", ["compare", "{d}/folds", "--run", "pl_rank3", "--folds",
                                                           "Fold2,Fold3,Fold2", "--rounds", "2", "--quiet"],
             "names Fold2 more than once", _folds("Fold1", "Fold2", "Fold3")),
        Case("compare", "summarize a compare whose test labels are all 0 (--no-relevant exclude: no value)",
             ["summarize", "{d}/zero-out/results.json"], "no metric value to summarize (every one is empty or NaN)",
             _compared_on_zero_labels, max_lines=2),
        Case("compare", "concurrent writers to one --out", ["compare", "{d}/base", "--run", "plrank", "--rounds", "2",
                                                            "--out", "{d}/shared-out", "--quiet"], "ok"),
        Case("compare", "concurrent writers to one --out (second)", ["compare", "{d}/base", "--run", "plrank",
                                                                     "--rounds", "2", "--out", "{d}/shared-out",
                                                                     "--quiet"], "ok"),
    ]


def summarize_cases() -> list[Case]:
    return [
        Case("summarize", "a CSV with a short row", ["summarize", "{d}/short.csv"], "field(s), but the header has",
             writer("short.csv", "method,dataset,NDCG@10\nA,d1,0.5\nB,d1\n")),
        Case("summarize", "a Latin-1 CSV", ["summarize", "{d}/latin.csv"], "not UTF-8",
             writer("latin.csv", b"method,dataset,NDCG@10\nA\xe9,d1,0.5\n", binary=True)),
        Case("summarize", "results.json whose results is a number", ["summarize", "{d}/r5.json"], "not a list",
             writer("r5.json", '{"dataset": "x", "results": 5}')),
        Case("summarize", "--alpha 2", ["summarize", "{d}/ok.csv", "--alpha", "2"], "--alpha",
             writer("ok.csv", "method,dataset,NDCG@10\nA,d1,0.5\nB,d1,0.4\n")),
        Case("summarize", "a CSV with a UTF-8 byte-order mark", ["summarize", "{d}/bom.csv"], "ok",
             writer("bom.csv", b"\xef\xbb\xbfmethod,dataset,MAP\nR,e1,0.7\nS,e1,0.7\n", binary=True)),
        Case("summarize", "--out - (the table is on standard output)", ["summarize", "{d}/bom2.csv", "--out", "-"],
             "'-' stands for standard output",
             writer("bom2.csv", b"\xef\xbb\xbfmethod,dataset,MAP\nR,e1,0.7\n", binary=True), absent=("-",)),
        Case("summarize", "an empty CSV", ["summarize", "{d}/void.csv"], "void.csv", writer("void.csv", "")),
        Case("summarize", "a CSV without metrics", ["summarize", "{d}/nometric.csv"],
             "column 'colour' (every column but",
             writer("nometric.csv", "method,dataset,colour\nA,d1,red\n")),
    ]


def signal_cases() -> list[Case]:
    return [
        Case("signal", "Ctrl-C during training", ["train", "--train", "{d}/base/train.txt", "--rounds", "100000",
                                                  "--quiet"], "interrupted", interrupt_after=8.0),
        Case("signal", "Ctrl-C during start-up", ["train", "--train", "{d}/base/train.txt", "--quiet"], "interrupted",
             interrupt_after=0.3),
        Case("signal", "Ctrl-C during a compare", ["compare", "{d}/base", "--run", "plrank", "--rounds", "100000",
                                                   "--out", "{d}/ctrlc", "--quiet"], "interrupted",
             interrupt_after=8.0),
    ]


def all_cases() -> list[Case]:
    return [*data_cases(), *parameter_cases(), *output_cases(), *model_cases(), *compare_cases(), *summarize_cases(),
            *environment_cases(), *signal_cases()]


def run_case(case: Case, scratch: Path) -> Case:
    directory = scratch / f"case{id(case)}"
    shutil.copytree(scratch / "template", directory, symlinks=True)
    if case.setup is not None:
        case.setup(directory)
    argv = [part.replace("{d}", str(directory)) for part in case.argv]
    if "concurrent" in case.name:
        argv = [part.replace(str(directory), str(scratch)) for part in argv]
    cwd = directory / "deleted" if case.deleted_cwd else directory
    cwd.mkdir(exist_ok=True)
    start = time.perf_counter()
    # a hung case is stopped by SIGABRT first, on which faulthandler prints every thread's stack
    def limits():
        if case.deleted_cwd:  # the child is in it already: the directory goes, the child stays
            os.rmdir(cwd)
        # Ctrl-C as a terminal sends it: a campaign started in the background (``cmd &`` in a script) has SIGINT
        # ignored, which its children would inherit, and Python then never raises KeyboardInterrupt
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        if case.file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (case.file_size_limit, case.file_size_limit))

    process = subprocess.Popen([sys.executable, "-m", "plboost", *argv], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors="replace", preexec_fn=limits,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1", **case.environment})
    try:
        if case.interrupt_after is not None:
            try:
                process.wait(timeout=case.interrupt_after)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
        status = process.returncode
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        try:
            out, err = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
        status = "timeout"
    case.outcome = {"status": status, "stderr": err.strip(), "seconds": round(time.perf_counter() - start, 1),
                    "verdict": verdict(case, status, err)}
    left = [name for name in case.absent if (directory / name).exists()]
    if left and case.outcome["verdict"] == "held":
        case.outcome["verdict"] = f"left {', '.join(left)} behind"
    return case


def verdict(case: Case, status, err: str) -> str:
    """"held" or what went wrong."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    if status == "timeout":
        return "hung"
    if isinstance(status, int) and status < 0 and not (case.expect == "interrupted" and status == -signal.SIGINT):
        return f"killed by signal {-status}"
    if "Traceback" in err or "internal error" in err:
        return "traceback"
    if case.expect == "ok":
        return "held" if status == 0 else f"refused good input: {lines[-1] if lines else status}"
    if case.expect == "interrupted":
        # 130, or death by SIGINT itself (CPython re-raises it at exit after some interrupted imports): a shell
        # reports both as 130
        interrupted = status in (130, -signal.SIGINT)
        return "held" if interrupted and len(lines) == 1 and "interrupted" in lines[0] else f"status {status}"
    if status == 0:
        return "accepted bad input"
    if status != 2:
        return f"status {status}"
    errors = [line for line in lines if ": error: " in line]
    if len(errors) != 1 or len(lines) > case.max_lines:
        return f"{len(lines)} lines on standard error"
    return "held" if case.expect in errors[0] else f"unclear message: {errors[0]}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("campaign.csv"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="run the cases whose category or name holds this text")
    parser.add_argument("--list", action="store_true", help="list the cases and stop")
    args = parser.parse_args(argv)
    cases = [case for case in all_cases() if args.only in f"{case.category} {case.name}"]
    if args.list:
        for case in cases:
            print(f"{case.category}: {case.name}")
        print(f"{len(cases)} cases")
        return 0
    with tempfile.TemporaryDirectory(prefix="plboost-campaign-") as scratch:
        scratch = Path(scratch)
        write_base(scratch / "template" / "base")
        write_base(scratch / "base")
        with ThreadPoolExecutor(args.jobs) as pool:
            done = list(pool.map(lambda case: run_case(case, scratch), cases))
    with open(args.out, "w", newline="") as handle:
        table = csv.writer(handle)
        table.writerow(["category", "case", "expect", "status", "verdict", "seconds", "stderr"])
        for case in done:
            table.writerow([case.category, case.name, case.expect, case.outcome["status"], case.outcome["verdict"],
                            case.outcome["seconds"], case.outcome["stderr"][-500:]])
    failed = [case for case in done if case.outcome["verdict"] != "held"]
    for case in failed:
        print(f"FAILED {case.category}: {case.name}: {case.outcome['verdict']}")
    categories = dict.fromkeys(case.category for case in done)
    for category in categories:
        mine = [case for case in done if case.category == category]
        print(f"{category}: {sum(c.outcome['verdict'] == 'held' for c in mine)} of {len(mine)} held")
    print(f"{len(done) - len(failed)} of {len(done)} cases held; {len(failed)} failed (details in {args.out})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
