"""Every bad input a user can give, and the exact error they see: one test per row of docs/errors.md.

The table in docs/errors.md is rendered from the cases below with the messages they really raise, and a
test checks that it is current. To rewrite it after changing a message:

    .venv/bin/python tests/test_errors.py --write
"""

from __future__ import annotations

import contextlib
import gzip
import io
import lzma
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dask.array as da
import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb
from sklearn.model_selection import GridSearchCV, GroupKFold

from plboost import metrics
from plboost.cli import main as cli
from plboost.data import RankingData, load_svmlight
from plboost.engines import train
from plboost.engines.dask import DaskRankingData, check_partitions
from plboost.errors import RankerSetupError
from plboost.objectives import PLPartition, PLRank, PLRank3, UMart, URank
from plboost.sklearn import Ranker

DOC = Path(__file__).resolve().parents[1] / "docs" / "errors.md"


@dataclass
class Case:
    section: str
    what: str
    run: Callable[[Path], None]
    expected: str  # a regular expression the message must match


def write(directory: Path, name: str, text: str, **extra) -> Path:
    path = directory / name
    path.write_bytes(text.encode())
    for suffix, content in extra.items():
        (directory / f"{name}.{suffix}").write_text(content)
    return path


def write_bytes(directory: Path, name: str, content: bytes) -> Path:
    (directory / name).write_bytes(content)
    return directory / name


def loads(text: str, name: str = "data.txt", **kwargs):
    return lambda d: load_svmlight(write(d, name, text), cache=False, **kwargs)


def cli_with_file(name: str, text: str, *argv):
    """:func:`cli_call` after writing ``text`` to ``name`` in the case's directory."""
    call = cli_call(*argv)

    def run(d: Path):
        write(d, name, text)
        return call(d)
    return run


def cli_on_dataset(*argv):
    """:func:`cli_call` after laying out a dataset (train.txt and test.txt) in the case's directory's ``dataset``."""
    call = cli_call(*argv)

    def run(d: Path):
        (d / "dataset").mkdir()
        for name in ("train.txt", "test.txt"):
            write(d / "dataset", name, GOOD)
        return call(d)
    return run


def cli_on_folds(*argv):
    """:func:`cli_call` after laying out two folds (Fold1, Fold2: train, vali and test.txt each) in ``dataset``."""
    call = cli_call(*argv)

    def run(d: Path):
        for fold in ("Fold1", "Fold2"):
            (d / "dataset" / fold).mkdir(parents=True)
            for name in ("train.txt", "vali.txt", "test.txt"):
                write(d / "dataset" / fold, name, GOOD)
        return call(d)
    return run


def numba_threads(value: str):
    """:func:`cli_call` of a training with ``NUMBA_NUM_THREADS=value``."""
    call = cli_call("train", "--train", "{dir}/train.txt", "--quiet")

    def run(d: Path):
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("NUMBA_NUM_THREADS", value)
            return call(d)
    return run


def cli_call(*argv):
    def run(d: Path):
        arguments = [a.format(dir=d) for a in argv]
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            try:
                status = cli(arguments)
            except SystemExit as exit_:
                status = exit_.code
        if status != 0:
            line = next(line for line in errors.getvalue().splitlines() if ": error: " in line)
            raise CliError(f"exit status {status}: {line}")
    return run


class CliError(Exception):
    """What the command printed on stderr, and its exit status."""


GOOD = "2 qid:1 1:0.1 2:0.5\n0 qid:1 1:0.3 2:0.2\n1 qid:2 1:0.4 2:0.9\n0 qid:2 1:0.8 2:0.1\n"
RNG = np.random.default_rng(0)
X = RNG.normal(size=(400, 3))
Y = RNG.integers(0, 3, 400).astype(float)
GROUP = [40] * 10


def small_ranking_data():
    from plboost.data import make_synthetic

    return make_synthetic(n_queries=30, n_features=4, seed=1)


def gz_corrupt(d: Path):
    path = d / "data.txt.gz"
    lines = "".join(f"{i % 3} qid:{i // 10} 1:{i / 7:.4f} 2:{i % 11}\n" for i in range(5000))
    path.write_bytes(gzip.compress(lines.encode())[:2000])
    load_svmlight(path, cache=False)


def utf16_file(d: Path):
    (d / "utf16.txt").write_bytes("0 qid:1 1:1\n".encode("utf-16"))
    load_svmlight(d / "utf16.txt", cache=False)


def per_document_weights():
    matrix = xgb.DMatrix(X, Y, weight=np.ones(len(Y)))
    matrix.set_group(GROUP)
    return matrix


def constant_features(d: Path):
    data = small_ranking_data()
    data.X[:] = 1.0
    train("lightgbm", PLRank(), data, rounds=2)


def write_model_and_data(d: Path):
    return write(d, "model.txt", "not a model\n")


def truncated_lightgbm_model(d: Path):
    train("lightgbm", PLRank(), small_ranking_data(), rounds=5).save(d / "model.txt")
    (d / "cut.txt").write_bytes((d / "model.txt").read_bytes()[:1000])
    cli_call("evaluate", "--model", "{dir}/cut.txt", "--data", "{dir}/train.txt", "--quiet")(d)


def results_file_as_model(d: Path):
    write(d, "result.json", '{\n  "metrics": {"NDCG@10": 0.5},\n  "data": {}\n}\n')
    cli_call("evaluate", "--model", "{dir}/result.json", "--data", "{dir}/train.txt", "--quiet")(d)


def table_of(data):
    """``data`` as a DataFrame: the columns qid, label, then a feature column per feature, named."""
    import pandas as pd

    frame = pd.DataFrame(data.X, columns=[f"signal_{j}" for j in range(data.n_features)])
    frame.insert(0, "label", data.labels)
    frame.insert(0, "qid", np.repeat(data.qids, data.group_sizes))
    return frame


def evaluate_edited_table(edit):
    """``plboost evaluate`` of a model trained on a table, on that table changed by ``edit`` (a DataFrame's)."""
    from plboost.data import RankingData

    def run(d: Path):
        frame = table_of(small_ranking_data())
        train("lightgbm", PLRank(), RankingData.from_pandas(frame), rounds=2).save(d / "model.txt")
        edit(frame).to_csv(d / "test.csv", index=False)
        cli_call("evaluate", "--model", "{dir}/model.txt", "--data", "{dir}/test.csv", "--quiet")(d)
    run.trains = True
    return run


def save_svmlight_of(make):
    """``make()``'s RankingData saved as an SVMlight file in the case's directory."""
    return lambda d: make().save_svmlight(d / "saved.txt")


def long_query_lambdarank(d: Path):
    from plboost.data import RankingData

    rows = 10_001 + 40
    data = RankingData(RNG.normal(size=(rows, 2)), np.arange(rows) % 3, np.array([0, 1]), np.array([0, 10_001, rows]))
    train("lightgbm", "lambdarank", data, rounds=1)


CASES = [
    # --- data files
    Case("data file", "a feature value that is not a number (`1:abc`)",
         loads("0 qid:1 1:0.5\n1 qid:1 1:abc\n"), r"data\.txt, line 2: .*1:abc"),
    Case("data file", "a token that is not `index:value` (`x:1`)",
         loads("# comment\n0 qid:1 x:1\n"), r"line 2: .*x:1"),
    Case("data file", "a line without a label", loads("0 qid:1 1:0.5\nqid:1 1:0.5\n"), r"line 2:"),
    Case("data file", "a label that is not a number", loads("high qid:1 1:0.5\n"), r"line 1:"),
    Case("data file", "`qid:` on some lines only", loads("0 qid:1 1:0.5\n1 1:0.2\n"),
         r"line 2: no qid: on this line, but earlier lines have one"),
    Case("data file", "no `qid:` column and no `.query` file", loads("0 1:0.5\n1 1:0.2\n"),
         r"no qid: column and no query file giving the query sizes \(looked for .*data.txt.query\): add qid:<id> to "
         r"every line, or write the query sizes there"),
    Case("data file", "a query whose lines are not contiguous",
         loads("0 qid:1 1:0.5\n1 qid:2 1:0.2\n1 qid:1 1:0.7\n"), r"line 3: qid 1 reappears"),
    Case("data file", "`save_svmlight` of query ids that are not integers (a DataFrame's `qid` column of names)",
         save_svmlight_of(lambda: RankingData.from_pandas(table_of(small_ranking_data()).assign(qid=lambda f: "q"
                                                                                              + f.qid.astype(str)))),
         r"save_svmlight: query 0 has the id 'q1', which SVMlight's qid: cannot hold \(an integer of at most 18 "
         r"digits\): number the queries first"),
    Case("data file", "`save_svmlight` of a subset that takes a query twice (`subset([4, 4])`)",
         save_svmlight_of(lambda: small_ranking_data().subset([4, 4])),
         r"save_svmlight: queries 0 and 1 have the same id 5 \(a subset that takes a query twice\?\); an SVMlight "
         r"file tells queries apart by id, so they would read back as one: give each query its own id first"),
    Case("data file", "a negative label", loads("0 qid:1 1:0.5\n-1 qid:1 1:0.2\n"), r"line 2: label -1 is negative"),
    Case("data file", "a fractional label", loads("0.5 qid:1 1:0.5\n"), r"line 1: label 0.5 is not a whole number"),
    Case("data file", "a NaN label", loads("0 qid:1 1:0.5\nnan qid:1 1:0.2\n"), r"line 2: label nan is not finite"),
    Case("data file", "a label above 30 (LightGBM's label_gain)", loads("31 qid:1 1:0.5\n"),
         r"line 1: label 31 exceeds max_label=30"),
    Case("data file", "an infinite feature value", loads("0 qid:1 1:0.5\n1 qid:1 2:inf\n"),
         r"line 2: feature 2 is inf"),
    Case("data file", "feature index 0 in a 1-based file", loads("0 qid:1 0:0.5\n"), r"line 1: feature index 0"),
    Case("data file", "a feature beyond `n_features`", loads("0 qid:1 9:0.5\n", n_features=4),
         r"line 1: feature index 9 is beyond n_features=4"),
    Case("data file", "`.query` sizes that do not add up to the lines",
         lambda d: load_svmlight(write(d, "rank.txt", "0 1:1\n1 1:2\n0 1:3\n", query="2\n2\n"), cache=False),
         r"rank\.txt\.query.*4.*3|3.*4"),
    Case("data file", "a `.query` size that is not a positive integer",
         lambda d: load_svmlight(write(d, "rank.txt", "0 1:1\n1 1:2\n", query="2\n0\n"), cache=False),
         r"rank\.txt\.query"),
    Case("data file", "an empty file", loads(""), r"no data lines"),
    Case("data file", "a file that does not exist", lambda d: load_svmlight(d / "missing.txt"),
         r"no such ranking data file"),
    Case("data file", "a truncated `.gz` file", gz_corrupt, r"cannot decompress"),
    Case("data file", "a directory given as the data file", lambda d: load_svmlight(d / "sub"),
         r"IsADirectoryError: .*is a directory, not a ranking data file: '<dir>/sub'"),
    Case("data file", "a device or a pipe given as the data file", lambda d: load_svmlight("/dev/null"),
         r"/dev/null: not a regular file \(a pipe, a device or a socket\)"),
    Case("data file", "a UTF-16 file", utf16_file, r"utf16\.txt: the file is UTF-16"),
    Case("data file", "an xz-compressed file (plain and gzip text are read)",
         lambda d: load_svmlight(write_bytes(d, "data.txt.xz", lzma.compress(GOOD.encode())), cache=False),
         r"data\.txt\.xz: the file is xz-compressed, not SVMlight text; plboost reads plain or gzip-compressed files: "
         r"decompress it \(unxz\) or recompress it with gzip"),
    Case("data file", "a CSV table named `.txt`", loads("qid,label,f1\n1,0,0.5\n"),
         r"data\.txt, line 1: label 'qid,label,f1' is not a number: the line is comma-separated, as a CSV table's are"),
    Case("data file", "a token of 2 MB (shown cut)", loads("0 qid:1 1:" + "9" * 2_000_000 + "x\n"),
         r"line 1: feature value '9{57}\.\.\.' \(2,000,001 bytes\) in"),
    Case("data file", "feature index 10^9 with dense `X` (the default)", loads("1 qid:1 1:1 1000000000:1\n"),
         r"line 1: feature index 1000000000 makes X 1,000,000,000 columns wide: pass dense=False for a sparse X; "
         r"dense float32, the 1 document\(s\) read so far need 3\.73 GiB"),
    Case("data file", "a feature value beyond float32's range (`1:1e39`)", loads("1 qid:1 1:1e39\n"),
         r"data.txt, line 1: feature 1 is 1e\+39, beyond float32's range \(±3.4e\+38\): rescale it, or read the "
         r"file with dtype=float64"),
    Case("data file", "no `qid:` and a directory where the query file would be",
         lambda d: (d / "noqid.txt.query").mkdir() or load_svmlight(write(d, "noqid.txt", "1 1:1\n"), cache=False),
         r"is a directory, not a query file: '.*noqid.txt.query'"),
    Case("data file", "lines with `qid:` and no feature", loads("1 qid:1\n0 qid:1\n"),
         r"data.txt: no features: its 2 line\(s\) hold a label and qid: only"),
    Case("data file", "`max_dense_gib=0`", loads(GOOD, max_dense_gib=0),
         r"max_dense_gib must be a finite number > 0, 'auto' or None, got 0"),
    # --- objective parameters
    Case("objective parameter", "`PLRank(top_k=0)`", lambda d: PLRank(top_k=0),
         r"PLRank: top_k must be an integer >= 1 or None, got 0"),
    Case("objective parameter", "`PLRank(n_permutations=1.5)`", lambda d: PLRank(n_permutations=1.5),
         r"PLRank: n_permutations must be an integer >= 1, got 1.5"),
    Case("objective parameter", "`PLRank(seed=-1)`", lambda d: PLRank(seed=-1),
         r"PLRank: seed must be an integer in \[0, 2\*\*63\), got -1"),
    Case("objective parameter", "`hessian_floor=-1e-6` (any objective)", lambda d: PLRank(hessian_floor=-1e-6),
         r"hessian_floor must be a finite number in \[0, 3.40282e\+38\]"),
    Case("objective parameter", "`hessian_floor=5e38` (beyond float32, the hessians' type)",
         lambda d: PLRank(hessian_floor=5e38),
         r"hessian_floor must be a finite number in \[0, 3.40282e\+38\], got 5e\+38"),
    Case("objective parameter", "an integer beyond 64 bits: `PLRank(top_k=2**64)`", lambda d: PLRank(top_k=2 ** 64),
         r"PLRank: top_k must be an integer >= 1 or None, got 18446744073709551616 \(beyond the 64-bit integers"),
    Case("objective parameter", "a label whose gain 2^y - 1 is beyond float32 (`PLRank3(normalize=False)`)",
         lambda d: PLRank3(normalize=False).gradients(np.zeros(2), np.array([0.0, 200.0]), np.array([0, 2])),
         r"label 200 at position 1 has a gain 2\^y - 1 beyond float32's range.*labels up to 127 are allowed"),
    Case("objective parameter", "`UMart(window=0)`", lambda d: UMart(window=0),
         r"UMart: window must be an integer >= 1, got 0"),
    Case("objective parameter", "`UMart(preset=\"authors\")`", lambda d: UMart(preset="authors"),
         r"UMart: preset must be one of 'lightgbm', 'paper', got 'authors' \(str\)"),
    Case("objective parameter", "`UMart(window=2, lightgbm_arithmetic=True)`",
         lambda d: UMart(window=2, lightgbm_arithmetic=True), r"needs window=1"),
    Case("objective parameter", "a label with no `label_gain` entry (UMart)",
         lambda d: UMart(label_gain=[0, 1]).gradients(np.zeros(2), np.array([2.0, 0.0]), np.array([0, 2])),
         r"label 2 has no entry in label_gain"),
    Case("objective parameter", "a label above 100 (URank)",
         lambda d: URank().gradients(np.zeros(2), np.array([0.0, 101.0]), np.array([0, 2])),
         r"URank labels: label 101 at position 1 is above 100.*PLRank, PLPartition or PLLowerBound"),
    Case("objective parameter", "`PLPartition(quadrature_step=2)`", lambda d: PLPartition(quadrature_step=2),
         r"PLPartition: quadrature_step must be a finite number in \[0.05, 1\], got 2"),
    Case("objective parameter", "`PLRank(stop_at_lowest_grade=\"false\")` (a string for a boolean)",
         lambda d: PLRank(stop_at_lowest_grade="false"),
         r"PLRank: stop_at_lowest_grade must be True or False \(a bool\), got 'false' \(str\)"),
    # --- arrays given to objectives and metrics
    Case("arrays", "scores and labels of different lengths",
         lambda d: PLRank().gradients(np.zeros(4), np.zeros(3), np.array([0, 3])), r"expected 3 scores"),
    Case("arrays", "query offsets that do not end at the number of documents",
         lambda d: PLRank().gradients(np.zeros(3), np.zeros(3), np.array([0, 2])), r"end at 2 but there are 3"),
    Case("arrays", "fractional labels given to an objective",
         lambda d: PLRank().gradients(np.zeros(2), np.array([0.5, 1.0]), np.array([0, 2])),
         r"label 0.5 at position 0 is not a whole number"),
    Case("arrays", "a NaN score",
         lambda d: PLRank().gradients(np.array([0.0, np.nan]), np.array([0.0, 1.0]), np.array([0, 2])),
         r"score nan at position 1 is not finite"),
    Case("arrays", "`RankingData.subset([])` (no query selected)",
         lambda d: load_svmlight(write(d, "s.txt", GOOD), cache=False).subset([]),
         r"^ValueError: subset: no query selected; RankingData holds at least one query$"),
    Case("arrays", "both `offsets=` and `group=` given to a metric",
         lambda d: metrics.ndcg([1.0, 2.0], [0, 1], offsets=[0, 2], group=[2]), r"exactly one of offsets="),
    Case("arrays", "ERR of labels above `g_max`",
         lambda d: metrics.err([1.0, 2.0], [0, 5], group=[2], g_max=4), r"label 5 at position 1 exceeds g_max=4"),
    Case("arrays", "a metric's cut-off beyond 64 bits: `ndcg(..., k=2**70)`",
         lambda d: metrics.ndcg([1.0, 2.0], [0, 1], group=[2], k=2 ** 70),
         r"k must be an integer >= 1, got 1180591620717411303424 \(beyond the 64-bit integers"),
    # --- misuse of the engines
    Case("engine", "an `lgb.Dataset` without `group` and a plboost objective",
         lambda d: lgb.train({"objective": PLRank(), "verbosity": -1}, lgb.Dataset(X, Y), 1),
         r"PLRank needs query groups.*group="),
    Case("engine", "an `xgb.DMatrix` without groups and a plboost objective",
         lambda d: xgb.train({}, xgb.DMatrix(X, Y), 1, obj=PLRank()), r"PLRank needs query groups.*set_group"),
    Case("engine", "the objective's class where an instance belongs: `lgb.train({\"objective\": PLRank}, ...)`",
         lambda d: lgb.train({"objective": PLRank, "verbosity": -1}, lgb.Dataset(X, Y, group=GROUP), 1),
         r"PLRank is a class, and the engine called it to train: pass an instance, PLRank\(\)"),
    Case("engine", "the objective's class given to `plboost.Ranker`",
         lambda d: Ranker(PLRank).fit(X, Y, group=GROUP), r"PLRank is a class: pass an instance, PLRank\(\)"),
    Case("engine", "`GridSearchCV(Ranker(), cv=GroupKFold(3)).fit(X, y, groups=qid)` with a NumPy `X`: no queries "
         "reach `fit` (the first fit stops the search)",
         lambda d: GridSearchCV(Ranker(n_estimators=2), {"num_leaves": [3]}, cv=GroupKFold(3)).fit(
             X, Y, groups=np.repeat(np.arange(len(GROUP)), GROUP)),
         r"^RankerSetupError: fit: a ranker needs the queries: group="),
    Case("engine", "`Ranker.score(X, y)` without queries (as a search scores unless `X` has a `qid` column)",
         lambda d: Ranker(n_estimators=2).fit(X, Y, group=GROUP).score(X, Y),
         r"^RankerSetupError: score: a ranker needs the queries"),
    Case("engine", "`Ranker.sample_rankings(X, group=g, temperature=-1)` (or `n_samples=0`, `seed=-1`, `top_k=0`)",
         lambda d: Ranker(n_estimators=2).fit(X, Y, group=GROUP).sample_rankings(X, group=GROUP, temperature=-1),
         r"Ranker.sample_rankings: temperature must be a finite number >= 0, got -1"),
    Case("engine", "`Ranker.fit(..., sample_weight=w)`",
         lambda d: Ranker(n_estimators=2).fit(X, Y, group=GROUP, sample_weight=np.ones(len(Y))),
         r"Ranker.fit: sample_weight is not taken: plboost's training has no sample weights"),
    Case("engine", "`Ranker.fit(..., groups=...)` (an argument fit does not take)",
         lambda d: Ranker(n_estimators=2).fit(X, Y, groups=GROUP),
         r"Ranker.fit: unknown argument 'groups'; it takes group, qid, "),
    Case("engine", "a plboost objective called with a second argument that is neither a dataset nor an array",
         lambda d: PLRank()(np.zeros(len(Y)), list(Y)),
         r"PLRank is called by LightGBM or XGBoost with \(preds, dataset\), or by lgb.LGBMRanker with \(y_true, "
         r"y_pred, weight, group\) arrays; got a list for the second"),
    Case("engine", "`weight=` or `group=` beside an engine's dataset: `obj(preds, dataset, weight)`",
         lambda d: PLRank()(np.zeros(len(Y)), lgb.Dataset(X, Y, group=GROUP).construct(), np.ones(len(Y))),
         r"PLRank\(preds, dataset\) takes the weights and queries from the dataset"),
    Case("engine", "`lgb.LGBMRanker(objective=PLRank())` called without queries",
         lambda d: PLRank()(Y, np.zeros(len(Y)), None, None), r"needs query groups: call LGBMRanker.fit\(X, y, group="),
    Case("engine", "`LGBMRanker.fit` without `group` (LightGBM's own check)",
         lambda d: lgb.LGBMRanker(objective=PLRank()).fit(X, Y), r"Should set group for ranking task"),
    Case("engine", "labels above 30 with LightGBM's `ndcg` metric (LightGBM's own check)",
         lambda d: lgb.train({"objective": PLRank(), "metric": "ndcg", "verbosity": -1},
                             lgb.Dataset(X, np.r_[31.0, Y[1:]], group=GROUP), 1),
         r"Label 31 is not less than the number of label mappings \(31\)"),
    Case("engine", "fractional labels in an `lgb.Dataset` with a plboost objective",
         lambda d: lgb.train({"objective": PLRank(), "verbosity": -1, "min_data_in_leaf": 5},
                             lgb.Dataset(X, np.r_[0.5, Y[1:]], group=GROUP), 1),
         r"label 0.5 at position 0 is not a whole number"),
    Case("engine", "`lgb.cv` with a plboost objective and no `folds=` (LightGBM splits rows, cutting queries)",
         lambda d: lgb.cv({"objective": PLRank(), "verbosity": -1}, lgb.Dataset(X, Y, group=GROUP), 1, nfold=3),
         r"CutQueryError: PLRank: this lgb\.Dataset is a subset that keeps \d+ of the 40 rows of query 0 .*"
         r"pass folds=plboost\.query_folds\(train_set, nfold=\.\.\.\) to lgb\.cv"),
    Case("engine", "`lgb.cv(..., folds=KFold(3))` with a plboost objective (folds of rows)",
         lambda d: lgb.cv({"objective": URank(), "verbosity": -1}, lgb.Dataset(X, Y, group=GROUP), 1,
                          folds=__import__("sklearn.model_selection").model_selection.KFold(3)),
         r"CutQueryError: URank: .*its folds cut queries \(lgb\.cv splits rows, not queries, for a custom objective, "
         r"with nfold= or with folds of rows such as KFold's\)"),
    Case("engine", "an XGBoost `DMatrix` with one weight per document (XGBoost's ranking weights are per query)",
         lambda d: PLRank()(np.zeros(400), per_document_weights()),
         r"xgb\.DMatrix: XGBoost's ranking weights are one per query \(group\), but it holds 400 weights \(one per "
         r"document\) for 10 queries of 400 documents"),
    Case("engine", "`train(\"lightgbm\", PLRank(), (X, y, group))` (arrays, not a dataset)",
         lambda d: train("lightgbm", PLRank(), (X, Y, GROUP)),
         r"InputTypeError: train: train_data must be a plboost\.RankingData, OutOfCoreData, a file's path or a "
         r"plboost\.clicks\.ClickData, got tuple"),
    Case("engine", "unsorted query ids in `xgb.DMatrix(qid=...)` (XGBoost's own check; "
         "`RankingData.to_xgboost()` sets the groups instead)",
         lambda d: xgb.DMatrix(X, Y, qid=np.repeat([3, 1, 2, 0, 4, 5, 6, 7, 8, 9], 40)),
         r"`qid` must be sorted in non-decreasing order"),
    Case("engine", "features that LightGBM filters out entirely (plboost's training helper)",
         constant_features, r"LightGBM kept none of the 4 features"),
    Case("engine", "a LightGBM parameter out of range (`engine_params={\"max_bin\": -5}`)",
         lambda d: train("lightgbm", PLRank(), small_ranking_data(), rounds=2, engine_params={"max_bin": -5}),
         r"^ValueError: LightGBM refuses the parameter max_bin=-5: Check failed: \(max_bin\) > \(1\)$"),
    Case("engine", "a LightGBM parameter of the wrong type (`num_leaves=\"abc\"`)",
         lambda d: train("lightgbm", PLRank(), small_ranking_data(), rounds=2, engine_params={"num_leaves": "abc"}),
         r"LightGBM refuses the parameter num_leaves='abc': Parameter num_leaves should be of type int"),
    Case("engine", "an XGBoost parameter out of range (`max_bin=-5`)",
         lambda d: train("xgboost", PLRank(), small_ranking_data(), rounds=2, engine_params={"max_bin": -5}),
         r"^ValueError: XGBoost refuses the parameter max_bin=-5: value -5 for Parameter max_bin should be greater"),
    Case("engine", "a query of more than 10,000 documents with LightGBM's `lambdarank` (plboost objectives train)",
         long_query_lambdarank, r"LightGBM's lambdarank objective takes queries of at most 10000 documents, and "
         r"query 0 of the training data has 10001"),
    # --- Dask collections
    Case("dask", "a query whose rows lie in two partitions (`DaskRankingData.from_arrays`)",
         lambda d: DaskRankingData.from_arrays(da.from_array(X, chunks=(30, -1)), da.from_array(Y, chunks=30),
                                               da.from_array(np.repeat(np.arange(10), 40), chunks=30)),
         r"QuerySplitError: query 0 is split between partitions 0 and 1"),
    Case("dask", "query ids that decrease within a partition",
         lambda d: check_partitions(da.from_array(np.array([0, 0, 2, 1, 3]), chunks=5)),
         r"query ids decrease within partition 0"),
    # --- the command line
    Case("command line", "`plboost train --train missing.txt`", cli_call("train", "--train", "missing.txt", "--quiet"),
         r"exit status 2: plboost train: error: .*missing\.txt"),
    Case("command line", "`--objective plrnak`",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "plrnak", "--quiet"),
         r"unknown objective 'plrnak'"),
    Case("command line", "`--engine xgboost --objective lambdarank`",
         cli_call("train", "--train", "{dir}/train.txt", "--engine", "xgboost", "--objective", "lambdarank", "--quiet"),
         r"lambdarank is an objective of lightgbm, not xgboost: add --engine lightgbm"),
    Case("command line", "`--param top_k=0`",
         cli_call("train", "--train", "{dir}/train.txt", "--param", "top_k=0", "--quiet"),
         r"PLRank: top_k must be an integer >= 1 or None, got 0"),
    Case("command line", "`--param` without `=`", cli_call("train", "--train", "x", "--param", "top_k"),
         r"exit status 2: .*expected KEY=VALUE"),
    Case("command line", "`--early-stopping` without `--valid`",
         cli_call("train", "--train", "{dir}/train.txt", "--early-stopping", "5", "--quiet"),
         r"--early-stopping needs --valid"),
    Case("command line", "`--eval-at 1,a`", cli_call("train", "--train", "x", "--eval-at", "1,a"),
         r"comma-separated integers"),
    Case("command line", "`--eval-at 5,3000000000` (beyond the engines' C int)",
         cli_call("evaluate", "--model", "x", "--data", "x", "--eval-at", "5,3000000000"),
         r"argument --eval-at: cut-offs must be at most 2\*\*31 - 1 \(2147483647\), got 3000000000"),
    Case("command line", "`plboost evaluate` with a file that is not a model",
         cli_call("evaluate", "--model", "{dir}/train.txt", "--data", "{dir}/train.txt", "--quiet"),
         r"is not a LightGBM model file"),
    Case("command line", "`plboost evaluate` with a truncated LightGBM model (its first 1000 bytes)",
         truncated_lightgbm_model, r"cut\.txt is a truncated LightGBM model: it ends inside tree 0 of 5"),
    Case("command line", "`plboost evaluate --model` given the results file of `train --out`", results_file_as_model,
         r"result\.json is not an XGBoost model: no 'learner' key; is it a results file\?"),
    Case("command line", "`plboost evaluate` on a table without a column the model was trained on",
         evaluate_edited_table(lambda frame: frame.drop(columns="signal_2")),
         r"test\.csv: the feature columns differ from those of the model .*model\.txt \('signal_2' missing\); a "
         r"model scores the columns it was trained on, found by name"),
    Case("command line", "`plboost evaluate` on a table with a column the model was not trained on",
         evaluate_edited_table(lambda frame: frame.assign(doc_id=7.0)),
         r"test\.csv: the feature columns differ from those of the model .*model\.txt \('doc_id' not in the model "),
    Case("command line", "several `--train` files without Dask",
         cli_call("train", "--train", "{dir}/train.txt", "{dir}/train.txt", "--quiet"),
         r"several --train files need Dask"),
    Case("command line", "`--param window=abc` (text for a number)",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "umart", "--param", "window=abc", "--quiet"),
         r"UMart: window must be an integer >= 1, got 'abc' \(str\)"),
    Case("command line", "`--param skip_uniform_queries=maybe` (not a boolean)",
         cli_call("train", "--train", "{dir}/train.txt", "--param", "skip_uniform_queries=maybe", "--quiet"),
         r"expected true or false \(also yes/no, 1/0\)"),
    Case("command line", "a misspelled `--param`",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "umart", "--param", "windw=2", "--quiet"),
         r"unknown parameter 'windw' of umart \(did you mean window\?\); its parameters are window, "),
    Case("command line", "an unknown `--engine-param` (LightGBM)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "max_bn=5", "--quiet"),
         r"unknown LightGBM engine parameter 'max_bn'; did you mean max_bin\?"),
    Case("command line", "`--engine-param objective=regression` (or `app`, `loss`, ... for a plboost objective)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "loss=regression", "--quiet"),
         r"engine parameter loss='regression' \(LightGBM's objective\) would train another objective under the name "
         r"of plrank; choose the objective with --objective"),
    Case("command line", "`--engine xgboost --engine-param objective=reg:squarederror`",
         cli_call("train", "--train", "{dir}/train.txt", "--engine", "xgboost", "--engine-param",
                  "objective=reg:squarederror", "--quiet"),
         r"engine parameter objective='reg:squarederror' would train another objective under the name of plrank"),
    Case("command line", "`--engine-param metric=map` (the validation metric that early stopping watches)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "metric=map", "--quiet"),
         r"engine parameter metric='map' would replace the validation NDCG@10"),
    Case("command line", "`--engine-param num_boost_round=500` (or `eta`, `max_leaves`, `early_stopping_rounds`)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "num_boost_round=500", "--quiet"),
         r"engine parameter num_boost_round=500 \(LightGBM's num_iterations\) sets the number of rounds; use --rounds"),
    Case("command line", "a misspelled `--param` of a built-in LightGBM objective",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "lambdarank", "--param",
                  "lambdarank_truncaton_level=5", "--quiet"),
         r"'lambdarank_truncaton_level' is not a parameter of LightGBM's lambdarank \(did you mean "
         r"lambdarank_truncation_level\?\)"),
    Case("command line", "`--objective rank:ndcg` without `--engine xgboost`",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "rank:ndcg", "--quiet"),
         r"rank:ndcg is an objective of xgboost, not lightgbm: add --engine xgboost"),
    Case("command line", "`--engine xgboost --engine-param booster=gblinear` (no trees)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine", "xgboost", "--engine-param", "booster=gblinear",
                  "--quiet"),
         r"engine parameter booster='gblinear' trains no trees; plboost trains and saves tree models \(XGBoost's "
         r"booster gbtree or dart\)"),
    Case("command line", "`--engine xgboost --engine-param base_score=nan`",
         cli_call("train", "--train", "{dir}/train.txt", "--engine", "xgboost", "--engine-param", "base_score=nan",
                  "--quiet"), r"engine parameter base_score=nan: XGBoost's parameters take finite numbers"),
    Case("command line", "`--engine-param boosting=rf` without bagging (refused by LightGBM's booster)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "boosting=rf", "--quiet"),
         r"^exit status 2: plboost train: error: LightGBM refuses to train: Check failed: \(config->bagging_freq"),
    Case("command line", "`--learning_rate 0.1` (LightGBM's spelling)",
         cli_call("train", "--train", "{dir}/train.txt", "--learning_rate", "0.1"),
         r"plboost train: error: unrecognized arguments: --learning_rate \(did you mean --learning-rate\?\)"),
    Case("command line", "`--num-trees 50`", cli_call("train", "--train", "{dir}/train.txt", "--num-trees", "50"),
         r"unrecognized arguments: --num-trees \(did you mean --rounds\?\)"),
    Case("command line", "`--objective PLRank` (the class name)",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "PLRank", "--quiet"),
         r"unknown objective 'PLRank' for lightgbm \(did you mean plrank\?\)"),
    Case("command line", "`--objective lambdamart`",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "lambdamart", "--quiet"),
         r"unknown objective 'lambdamart' for lightgbm \(did you mean lambdarank\?\)"),
    Case("command line", "`evaluate --model /dev/null`", cli_call("evaluate", "--model", "/dev/null", "--data",
                                                                   "{dir}/train.txt"),
         r"/dev/null is not a regular file \(a device, a pipe or a socket\), not a model file"),
    Case("command line", "`demo --queries 2`", cli_call("demo", "--queries", "2"),
         r"argument --queries: expected an integer of at least 3 \(a third as many go to validation and to test\), "
         r"got 2"),
    Case("command line", "`demo --seed -1` (or `compare --tune-seed -1`)", cli_call("demo", "--seed", "-1"),
         r"argument --seed: expected an integer in \[0, 2\*\*63\), got '-1'"),
    Case("command line", "`plboost predict --temperature 0.5` without `--sample` (or `--seed`, `--top-k`)",
         cli_call("predict", "--model", "{dir}/model.txt", "--data", "{dir}/train.txt", "--temperature", "0.5"),
         r"--temperature is for sampled rankings: give --sample N with it \(or leave out --temperature for the "
         r"scores\)"),
    Case("command line", "`plboost predict --sample 0` (or a number that is no integer)",
         cli_call("predict", "--model", "{dir}/model.txt", "--data", "{dir}/train.txt", "--sample", "0"),
         r"argument --sample: expected a positive integer, got 0"),
    Case("command line", "`plboost predict --sample 10 --temperature -1` (or `nan`, `inf`)",
         cli_call("predict", "--model", "{dir}/model.txt", "--data", "{dir}/train.txt", "--sample", "10",
                  "--temperature", "-1"),
         r"argument --temperature: expected a finite number >= 0, got '-1'"),
    Case("command line", "`NUMBA_NUM_THREADS=0` (or a value that is no integer)", numba_threads("0"),
         r"the environment variable NUMBA_NUM_THREADS \(the threads of plboost's kernels\) must be an integer >= 1, "
         r"got '0'"),
    Case("objective parameter", "`Ranker().set_params(learning_rate=\"abc\").fit(...)`",
         lambda d: Ranker().set_params(learning_rate="abc").fit(np.zeros((4, 1)), [0, 1, 0, 1], group=[2, 2]),
         r"Ranker: learning_rate must be a finite number > 0, got 'abc' \(str\)"),
    Case("objective parameter", "`PLRank(seed=None)`", lambda d: PLRank(seed=None),
         r"PLRank: seed must be an integer in \[0, 2\*\*63\), got None"),
    Case("objective parameter", "`UMart(label_gain=\"0,1,3\")` (text for a list)", lambda d: UMart(label_gain="0,1,3"),
         r"UMart: label_gain must be a non-empty sequence of finite numbers or None, got '0,1,3' \(str\)"),
    Case("objective parameter", "`UMart(label_gain=[nan] * 5000)` (a long value: shown cut, with its size)",
         lambda d: UMart(label_gain=[float("nan")] * 5000),
         r"UMart: label_gain must be a non-empty sequence of finite numbers or None, got \[nan, nan, nan, nan, nan, "
         r"nan, \.\.\.\] \(list, 5,000 entries\)$"),
    Case("objective parameter", "`register_metric(name, f)` with `f` not callable as `f(ranked_labels, offsets, k)`",
         lambda d: metrics.register_metric("RR", lambda labels, offsets: labels),
         r"metric RR: its function\(ranked_labels, offsets, k=None\) raised TypeError: .*; not registered$"),
    Case("objective parameter", "`Ranker(\"plrank\", top_k=5)` (an objective's parameter beside its name)",
         lambda d: Ranker("plrank", top_k=5).fit(np.zeros((4, 1)), [0, 1, 0, 1], group=[2, 2]),
         r"Ranker: top_k is a parameter of PLRank, not of the engine: pass objective=PLRank\(top_k=...\)"),
    Case("command line", "`--objective lambdarank --param top_k=5`",
         cli_call("train", "--train", "{dir}/train.txt", "--objective", "lambdarank", "--param", "top_k=5", "--quiet"),
         r"'top_k' is not a parameter of LightGBM's lambdarank \(those are lambdarank_truncation_level, .*\); give "
         r"other LightGBM parameters as engine parameters"),
    Case("command line", "`--learning-rate inf`",
         cli_call("train", "--train", "{dir}/train.txt", "--learning-rate", "inf", "--quiet"),
         r"learning_rate must be a finite number > 0, got inf"),
    Case("command line", "`--out` that is one of the inputs",
         cli_call("train", "--train", "{dir}/train.txt", "--out", "{dir}/train.txt", "--quiet"),
         r"--out .*train\.txt is the training file, which this command reads; it would be overwritten"),
    Case("command line", "`--out` (or `--save-model`) that is the `.query` file beside a data file, existing or not",
         cli_call("train", "--train", "{dir}/train.txt", "--out", "{dir}/train.txt.query", "--quiet"),
         r"--out .*train\.txt\.query is the query file read with .*train\.txt, which this command reads"),
    Case("command line", "`plboost summarize DIR --out DIR/results.csv` (a result file of a directory it reads)",
         cli_call("summarize", "{dir}/sub", "--out", "{dir}/sub/results.csv"),
         r"--out .*results\.csv would replace results\.csv of the comparison in .*sub, which this command reads; "
         r"give a new file name"),
    Case("command line", "`--out -` of a command that prints a table (`predict --out -` is standard output)",
         cli_call("evaluate", "--model", "{dir}/train.txt", "--data", "{dir}/train.txt", "--out", "-"),
         r"--out -: '-' stands for standard output, where this command prints its table; give a file name"),
    Case("command line", "`--save-model` that is a directory",
         cli_call("train", "--train", "{dir}/train.txt", "--save-model", "{dir}", "--quiet"),
         r"--save-model .* is a directory; give a file name"),
    Case("command line", "`--out` in a directory that cannot be written",
         cli_call("train", "--train", "{dir}/train.txt", "--out", "/proc/plboost.json", "--quiet"),
         r"--out /proc/plboost\.json cannot be written"),
    Case("command line", "`plboost compare --out` that is a file",
         cli_on_dataset("compare", "{dir}/dataset", "--run", "plrank", "--out", "{dir}/train.txt", "--quiet"),
         r"--out .*train\.txt is a file; give a directory"),
    Case("command line", "`compare --folds Fold2,Fold1,Fold2` (a split named twice)",
         cli_on_folds("compare", "{dir}/dataset", "--run", "plrank", "--folds", "Fold2,Fold1,Fold2", "--quiet"),
         r"splits \(--folds\) names Fold2 more than once: each split is trained once per repeat \(use --repeats for "
         r"more runs\); name each split once"),
    Case("command line", "`--engine-param bagging_fraction=0.5` (or `subsample=`) without `bagging_freq`",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "subsample=0.4", "--quiet"),
         r"engine parameter subsample=0.4 \(LightGBM's bagging_fraction\) changes nothing: LightGBM bags only with "
         r"bagging_freq > 0"),
    Case("command line", "`--engine-param bagging_freq=5` without `bagging_fraction` below 1",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "bagging_freq=3", "--quiet"),
         r"engine parameter bagging_freq=3 changes nothing: LightGBM bags only with bagging_fraction < 1"),
    Case("command line", "two spellings of one engine parameter (`min_child_samples=` and `min_data_in_leaf=`)",
         cli_call("train", "--train", "{dir}/train.txt", "--engine-param", "reg_alpha=2", "--engine-param",
                  "lambda_l1=1", "--quiet"),
         r"engine parameters reg_alpha=2 and lambda_l1=1 are both LightGBM's lambda_l1; give it once"),
    Case("command line", "`--param top_k=5 --param top_k=6` (an objective parameter given twice)",
         cli_call("train", "--train", "{dir}/train.txt", "--param", "n_permutations=2", "--param",
                  "n_permutations=4", "--quiet"),
         r"--param n_permutations is given twice \(n_permutations=2, then n_permutations=4\); give it once"),
    Case("command line", "`--dask-scheduler` and `--dask-local` together",
         cli_call("train", "--train", "{dir}/train.txt", "--dask-local", "2", "--dask-scheduler", "tcp://x:1",
                  "--test", "{dir}/train.txt", "--quiet"), r"not both"),
    Case("command line", "`plboost summarize` of a file that is not there",
         cli_call("summarize", "{dir}/missing.json"), r"no such file or directory"),
    Case("command line", "`plboost summarize` of a CSV file without a method column",
         cli_call("summarize", "{dir}/train.txt.csv"), r"no method column"),
    Case("command line", "`plboost summarize` of a CSV file with a short row",
         cli_with_file("short.csv", "method,dataset,metric,value\nA,d1,NDCG@10,0.5\nB,d1\n",
                       "summarize", "{dir}/short.csv"), r"short.csv, line 3: 2 field\(s\), but the header has 4"),
    Case("command line", "`plboost summarize` of a CSV file with a long row",
         cli_with_file("long.csv", "method,NDCG@10\nA,0.5,7\n", "summarize", "{dir}/long.csv"),
         r"long.csv, line 2: 3 field\(s\), but the header has 2"),
    Case("command line", "`plboost summarize` of a results.json whose `metrics` is a list",
         cli_with_file("results.json", '{"dataset": "x", "results": [{"label": "a", "split": "F1", "metrics": [1]}]}',
                       "summarize", "{dir}/results.json"),
         r"results.json: result #1's 'metrics' is list, not a mapping of metric names to values"),
    Case("command line", "`plboost summarize` of a results.json whose `results` is a number",
         cli_with_file("results.json", '{"dataset": "x", "results": 5}', "summarize", "{dir}/results.json"),
         r"results.json: 'results' is int, not a list of results"),
    Case("command line", "`plboost summarize` of a Latin-1 CSV file",
         lambda d: cli_call("summarize", "{dir}/latin.csv")(d) if (d / "latin.csv").write_bytes(
             b"method,dataset,NDCG@10\nA\xe9,d1,0.5\n") else None,
         r"latin.csv: not UTF-8 text \(byte 0xe9 at offset 24\); save it as UTF-8"),
    Case("command line", "`plboost summarize --alpha 2` (whether or not a test runs)",
         cli_call("summarize", "{dir}/results.csv", "--alpha", "2"),
         r"argument --alpha: expected a number between 0 and 1, got 2"),
    Case("command line", "`plboost summarize` of the same result twice",
         cli_call("summarize", "{dir}/results.csv", "{dir}/sub/results.csv"), r"is given more than once"),
    Case("command line", "`plboost compare` with no configuration", cli_call("compare", "{dir}", "--quiet"),
         r"nothing to compare"),
    Case("command line", "`plboost compare` on a directory of no known layout",
         cli_call("compare", "{dir}/sub", "--run", "plrank", "--quiet"), r"no known dataset layout"),
    Case("command line", "`plboost compare --plot` without `--out`",
         cli_call("compare", "{dir}", "--run", "plrank", "--plot", "--quiet"), r"--plot needs --out"),
    Case("command line", "`plboost train --click-log` without `--clicks`",
         cli_call("train", "--click-log", "{dir}", "--objective", "lambdarank", "--test", "{dir}/train.txt",
                  "--quiet"), r"--click-log needs --clicks, what to train on: naive, ips, policy_aware, affine, "
                              r"doubly_robust, displayed"),
    Case("command line", "`plboost train --click-log` of a directory without a click log",
         cli_call("train", "--click-log", "{dir}/sub", "--clicks", "displayed", "--objective", "lambdarank",
                  "--test", "{dir}/train.txt", "--quiet"), r"sub: no clicks.parquet or clicks.csv"),
    Case("command line", "a configuration from clicks whose objective takes graded labels (`lambdarank,clicks=ips`)",
         cli_call("compare", "{dir}", "--run", "lambdarank,clicks=ips", "--quiet"),
         r"clicks='ips' trains on relevance estimates, which lambdarank cannot take .it needs graded labels.: use "
         r"pl_rank3 with gain=estimate and normalize=false, listnet with target=estimate or lambdaloss with "
         r"gain=estimate .non-negative estimates., or clicks=displayed"),
    Case("command line", "the logging ranker's row with parameters (`lambdarank,label_gain=[0,1,3],clicks=logger`)",
         cli_call("compare", "{dir}", "--run", "lambdarank,label_gain=[0,1,3],clicks=logger", "--quiet"),
         r"clicks='logger' scores the click log's logging ranker as it was saved: give only its objective and "
         r"engine, not parameters"),
    Case("command line", "`plboost compare --click-log` with no configuration that trains from it",
         cli_call("compare", "{dir}", "--run", "lambdarank", "--click-log", "{dir}/sub", "--quiet"),
         r"a click log is given .<dir>/sub., but no configuration trains from it"),
]


def observe(case: Case) -> str:
    """The message ``case`` raises (type and text), with its temporary directory shown as <dir>."""
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        write(directory, "train.txt", GOOD)
        (directory / "sub").mkdir()
        write(directory / "sub", "notes.txt", "hello\n")
        write(directory, "train.txt.csv", "name,NDCG@10\nA,0.5\n")
        for folder in (directory, directory / "sub"):
            write(folder, "results.csv", "configuration,dataset,NDCG@10\nA,d1,0.5\n")
        try:
            case.run(directory)
        except (Exception, RankerSetupError) as error:  # noqa: BLE001 - every error is the subject here
            text = str(error).strip()
            text = text.replace(str(directory), "<dir>")
            first = text.splitlines()[0] if text else ""
            # XGBoost stamps its messages with the time and the source line of its build
            first = re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", first)
            first = re.sub(r"\S+\.(cc|cpp|h|hpp):\d+: ", "", first)
            kind = "" if isinstance(error, CliError) else f"{type(error).__name__}: "
            return kind + first
    raise AssertionError(f"{case.what}: no error raised")


def trains(case: Case) -> bool:
    """Whether a case calls an engine's training: the engine section's, the command line's cut model, and the runs
    marked so."""
    return case.section == "engine" or case.run is truncated_lightgbm_model or getattr(case.run, "trains", False)


@pytest.mark.parametrize("case", [pytest.param(c, marks=[pytest.mark.engine] if trains(c) else [],
                                               id=f"{c.section}: {c.what}") for c in CASES])
def test_bad_input_gets_its_error(case):
    message = observe(case)
    assert re.search(case.expected, message), message


def render() -> str:
    lines = ["# Errors a user sees", "",
             "Every bad input plboost knows of, and the message it gets (rendered by `tests/test_errors.py`, which",
             "raises each one; `<dir>` stands for the directory of the file). Rows marked as the engines' own",
             "checks are LightGBM's or XGBoost's messages, shown so that users know what they mean.", ""]
    section = None
    for case in CASES:
        if case.section != section:
            section = case.section
            lines += [f"## {section[0].upper()}{section[1:]}", "", "| input | error |", "|---|---|"]
        message = observe(case).replace("|", "\\|")
        if len(message) > 260:
            message = message[:257] + "..."
        code = f"`` {message} ``" if "`" in message else f"`{message}`"
        lines.append(f"| {case.what} | {code} |")
        if case is CASES[-1] or CASES[CASES.index(case) + 1].section != section:
            lines.append("")
    return "\n".join(lines)


@pytest.mark.engine
def test_the_table_in_the_docs_is_current():
    assert DOC.read_text() == render(), "docs/errors.md is stale: run .venv/bin/python tests/test_errors.py --write"


if __name__ == "__main__" and "--write" in sys.argv:
    DOC.write_text(render())
    print(f"wrote {DOC}")
