"""What a command writes, checked against what it reads before anything is trained or written.

An output path of ``plboost train``, ``evaluate``, ``compare`` or ``summarize`` must not replace a file the
command reads: not the data files named on the command line, nor the files read without being named (the
``.query`` files that :func:`plboost.data.load_svmlight` looks for beside a data file, whether or not they
exist yet: one written there would be read with the data from then on; the ``results.json`` and
``per_query.csv`` files found inside a directory given to ``summarize``), nor a result file of a comparison
directory given as input (:data:`COMPARISON_FILES` and ``runs/``): a new file beside them is fine. Paths are
compared as files: through symbolic links, ``..`` and hard links (device and inode, where the file exists).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .data.svmlight_parser import query_file_candidates
from .data.tabular import is_table

#: the files ``plboost compare --out DIR`` writes in DIR (its run records go to ``DIR/runs/``)
COMPARISON_FILES = ("results.json", "results.csv", "summary.csv", "per_query.csv", "significance.csv", "tuning.csv",
                    "tuning.db", "validation_ndcg.png", "winning.md", "winning.csv")
#: the directory of a comparison's run records
RUNS = "runs"


@dataclass(frozen=True)
class Read:
    """A file a command reads (or, for a ``.query`` file beside data, would read once it exists), and what it is
    to the command, for the message."""

    path: Path
    what: str


def data_reads(path, role: str) -> list[Read]:
    """The data file ``path`` (the ``role`` file, e.g. "training") and the query files looked for beside it (not
    beside a table, which holds its query ids)."""
    path = Path(path)
    if is_table(path):
        return [Read(path, f"the {role} file")]
    return [Read(path, f"the {role} file"),
            *(Read(query, f"the query file read with {path}") for query in query_file_candidates(path))]


def split_reads(train, valid=None, test=None, *, split: str = "") -> list[Read]:
    """:func:`data_reads` of a training (one path or several), validation and test file; None is skipped, and
    ``split`` (e.g. "Fold1") names them in messages."""
    where = f"{split} " if split else ""
    trains = train if isinstance(train, (list, tuple)) else [train]
    return [read for paths, role in ((trains, "training"), ([valid], "validation"), ([test], "test"))
            for path in paths if path is not None for read in data_reads(path, where + role)]


def check_outputs(outputs: dict, reads, comparisons=()) -> None:
    """Refuse, with one line naming both, an output (``{option: path}``; None is skipped) that is one of
    ``reads`` (:class:`Read`), a result file of a directory of ``comparisons``, or another output."""
    given = [(option, Path(path)) for option, path in outputs.items() if path is not None]
    for number, (option, path) in enumerate(given):
        for read in reads:
            if same_file(path, read.path):
                raise ValueError(f"{option} {path} is {read.what}, which this command reads; it would be overwritten")
        for directory in comparisons:
            replaced = result_file_of(path, directory)
            if replaced is not None:
                raise ValueError(f"{option} {path} would replace {replaced} of the comparison in {directory}, which "
                                 "this command reads; give a new file name")
        directory = _resolved(path).parent
        if is_comparison_directory(directory) and result_file_of(path, directory) is not None:
            raise ValueError(f"{option} {path} would replace {result_file_of(path, directory)} of the comparison in "
                             f"{directory} (plboost compare wrote it; summarize reads it); give a new file name")
        for other_option, other in given[:number]:
            if same_file(path, other):
                raise ValueError(f"{option} {path} is the file of {other_option} too; give two files")


def is_comparison_directory(directory) -> bool:
    """Whether ``directory`` holds a comparison of ``plboost compare --out`` (its ``runs/`` records; a results.json
    alone may be ``plboost train --out``'s own, which it may replace)."""
    return (Path(directory) / RUNS).is_dir()


def result_file_of(path, directory) -> str | None:
    """Which result file of the comparison directory ``directory`` the output ``path`` is (its name, or
    ``runs/...``), or None."""
    directory = Path(directory)
    for name in COMPARISON_FILES:
        if same_file(path, directory / name):
            return name
    resolved, runs = _resolved(path), _resolved(directory / RUNS)
    if resolved == runs or runs in resolved.parents:
        return f"{RUNS}/{resolved.relative_to(runs)}" if resolved != runs else f"{RUNS}/"
    return None


def same_file(a, b) -> bool:
    """Whether paths ``a`` and ``b`` name one file: the same device and inode when both exist (symbolic and
    hard links), else the same path once symbolic links and ``..`` are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return _resolved(a) == _resolved(b)


def _resolved(path) -> Path:
    return Path(os.path.realpath(os.path.abspath(path)))
