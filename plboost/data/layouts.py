"""Benchmark datasets as they come: the file layouts of LETOR, MSLR-WEB and Yahoo! LTR, recognised from a
directory.

=======================  ================================================================================
layout                   files (each may also end in ``.gz``)
=======================  ================================================================================
``letor4`` (and MSLR)    ``Fold1/train.txt``, ``Fold1/vali.txt``, ``Fold1/test.txt``, ... up to Fold5
``letor3``               ``Fold1/trainingset.txt``, ``Fold1/validationset.txt``, ``Fold1/testset.txt``, ...
``yahoo``                ``set1.train.txt``, ``set1.valid.txt``, ``set1.test.txt`` (and set 2 likewise)
``single``               one file each whose name holds ``train``, ``vali``/``valid`` (optional) and ``test``:
                         ``*.txt[.gz]``, or ``name.train[.gz]`` as in LightGBM's examples (with ``.query``
                         files beside them)
=======================  ================================================================================

Each file may also be a table (:mod:`plboost.data.tabular`): ``Fold1/train.parquet`` (or ``.pq``, ``.csv``,
``.csv.gz``) in place of ``Fold1/train.txt``. A part found both as an SVMlight file and as a table (or as Parquet
and CSV) is refused: which one to read is not guessed.

Each fold (or Yahoo! set) is a :class:`Split`. A directory matching none of these gets an error that lists
what was expected and what was found. Another layout is one call: :func:`register_layout` (its name, a
function from a directory to its splits, and a line saying what it expects), and ``plboost compare`` and
:func:`find_layout` recognise it from then on.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

#: file names of each fold's parts in the fold layouts
_FOLD_FILES = {
    "letor4": ("train", "vali", "test"),
    "letor3": ("trainingset", "validationset", "testset"),
}
#: the suffixes of each format, in the order they are looked for (``.txt`` before ``.txt.gz``: the first found)
_FORMATS = {"SVMlight": (".txt", ".txt.gz"), "Parquet": (".parquet", ".pq"), "CSV": (".csv", ".csv.gz")}
_SUFFIXES = tuple(suffix for suffixes in _FORMATS.values() for suffix in suffixes)


@dataclass(frozen=True)
class Split:
    """One train/validation/test triple of a benchmark (a fold, or a Yahoo! set), and the click log its runs from
    clicks train on (its clicks table and documents table, and its logging ranker's model file where it has one),
    where a comparison was given one."""

    name: str
    train: Path
    valid: Path | None
    test: Path
    clicks: Path | None = None
    documents: Path | None = None
    logger: Path | None = None


@dataclass(frozen=True)
class Layout:
    """A recognised dataset directory: its layout name and splits, in order."""

    kind: str
    directory: Path
    splits: tuple[Split, ...]


def _find(directory: Path, stem: str) -> Path | None:
    found = {}
    for kind, suffixes in _FORMATS.items():
        for suffix in suffixes:
            path = directory / f"{stem}{suffix}"
            if path.is_file():
                found.setdefault(kind, path)
    if len(found) > 1:
        raise ValueError(f"{directory}: {' and '.join(path.name for path in found.values())} are the same part in "
                         f"{len(found)} formats; keep one of them (or move the others away)")
    return next(iter(found.values()), None)


def _fold_layout(directory: Path, kind: str) -> tuple[Split, ...]:
    names = _FOLD_FILES[kind]
    splits = []
    for fold in sorted((p for p in directory.iterdir() if re.fullmatch(r"Fold\d+", p.name) and p.is_dir()),
                       key=lambda p: int(p.name[4:])):
        train, valid, test = (_find(fold, name) for name in names)
        if train and valid and test:
            splits.append(Split(fold.name, train, valid, test))
    return tuple(splits)


def _yahoo_layout(directory: Path) -> tuple[Split, ...]:
    splits = []
    for number in (1, 2):
        train, valid, test = (_find(directory, f"set{number}.{part}") for part in ("train", "valid", "test"))
        if train and valid and test:
            splits.append(Split(f"set{number}", train, valid, test))
    return tuple(splits)


def _single_layout(directory: Path) -> tuple[Split, ...]:
    # ``*.txt[.gz]`` files, or LightGBM's example naming (``rank.train[.gz]`` beside ``rank.train.query``)
    files = [p for p in directory.iterdir() if p.is_file() and (
        p.name.endswith(_SUFFIXES) or re.search(r"\.(train|vali|valid|test)(\.gz)?$", p.name, re.IGNORECASE))]
    roles = {"train": r"train", "valid": r"vali", "test": r"test"}
    found = {role: [p for p in files if re.search(pattern, p.name, re.IGNORECASE)] for role, pattern in roles.items()}
    if len(found["train"]) == 1 and len(found["test"]) == 1 and len(found["valid"]) <= 1:
        valid = found["valid"][0] if found["valid"] else None
        return (Split(directory.name or "data", found["train"][0], valid, found["test"][0]),)
    return ()


@dataclass(frozen=True)
class LayoutKind:
    """A way benchmark files are laid out in a directory: ``find(directory)`` returns its splits (empty when the
    directory is not laid out so), ``expected`` says in a line or two what it looks for (for the error message)."""

    name: str
    find: Callable[[Path], tuple[Split, ...]]
    expected: str


_LAYOUTS: dict[str, LayoutKind] = {}


def register_layout(name: str, find: Callable[[Path], tuple[Split, ...]], expected: str) -> LayoutKind:
    """Recognise another layout in :func:`find_layout`, after those registered before it (the built-in ones
    first). ``find(directory)`` returns a tuple of :class:`Split` (empty: not this layout)."""
    if name in _LAYOUTS:
        raise ValueError(f"register_layout: a layout named {name!r} is registered already")
    if not callable(find):
        raise ValueError(f"register_layout: find must be callable, got {find!r}")
    kind = LayoutKind(name, find, expected)
    _LAYOUTS[name] = kind
    return kind


def unregister_layout(name: str) -> None:
    """Stop recognising the layout registered as ``name``."""
    if name not in _LAYOUTS:
        raise ValueError(f"unregister_layout: no layout {name!r} is registered; registered: {', '.join(_LAYOUTS)}")
    del _LAYOUTS[name]


def registered_layouts() -> tuple[LayoutKind, ...]:
    """The layouts :func:`find_layout` tries, in the order it tries them."""
    return tuple(_LAYOUTS.values())


register_layout("letor4", lambda directory: _fold_layout(directory, "letor4"),
                "LETOR 4.0 / MSLR-WEB folds: Fold1/train.txt, Fold1/vali.txt, Fold1/test.txt, ... (Fold1..Fold5)")
register_layout("letor3", lambda directory: _fold_layout(directory, "letor3"),
                "LETOR 3.0 folds: Fold1/trainingset.txt, Fold1/validationset.txt, Fold1/testset.txt, ...")
register_layout("yahoo", _yahoo_layout, "Yahoo! LTR: set1.train.txt, set1.valid.txt, set1.test.txt (set 2 likewise)")
register_layout("single", _single_layout,
                "one split: a file each with 'train', 'vali' or 'valid' (optional) and 'test' in its name, ending in\n"
                "    .txt, or named like LightGBM's examples (rank.train, rank.test)")


def find_layout(directory) -> Layout:
    """Recognise the layout of a benchmark directory: the first of :func:`registered_layouts` that finds splits
    there (see the module docstring).

    Raises ``FileNotFoundError`` for a missing directory and ``ValueError``, listing the layouts
    expected and the files found, when nothing matches.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"dataset directory {directory} does not exist")
    for kind in _LAYOUTS.values():
        splits = tuple(kind.find(directory))
        if splits:
            return Layout(kind.name, directory, splits)
    found = sorted(str(p.relative_to(directory)) for p in directory.rglob("*") if p.is_file())[:20]
    expected = "".join(f"  {kind.expected}\n" for kind in _LAYOUTS.values())
    raise ValueError(
        f"{directory}: no known dataset layout. Expected one of:\n{expected}"
        "(any of them may end in .gz, and be a table: .parquet, .pq, .csv or .csv.gz in place of .txt). Found: "
        + (", ".join(found) if found else "no files"))
