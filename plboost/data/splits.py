"""A split's files (training, validation, test) loaded together with the same columns of ``X``, in memory or out
of core (:func:`load_splits`, :func:`training_data` for the engines' helpers), and a model's scores on either kind
of data (:func:`predict_scores`). Above the loaders: it chooses between them, and reads tables
(:mod:`plboost.data.tabular`) beside SVMlight files by their suffix."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np

from ..errors import InputTypeError
from . import svmlight, svmlight_parser
from .out_of_core import OutOfCoreData, checked_memory_budget, choose_out_of_core, load_out_of_core
from .ranking_data import RankingData
from .tabular import TABLE_OPTIONS, TABLE_SUFFIXES, is_table, label_column, load_table

#: the options of :func:`plboost.data.load_svmlight` that tables do not have, with the value that leaves them unused
#: (``cache`` and ``progress`` concern only how a file is read, and are ignored for tables)
SVMLIGHT_OPTIONS = {"zero_based": False, "query_file": "auto", "dense": True, "max_dense_gib": "auto"}


def load_splits(*paths, out_of_core: bool | None = False, memory_budget_bytes: int | None = None, log=None,
                **options) -> list[RankingData | OutOfCoreData | None]:
    """Load files used together (train, validation, test) with the same width of ``X``.

    Each path (None is passed through) is read by :func:`plboost.data.load_svmlight` with ``options``; files
    whose largest feature index is smaller are widened with zero columns to the widest, as absent SVMlight
    features are 0.

    Tables (names ending in ``.parquet``, ``.pq``, ``.csv`` or ``.csv.gz``) are read by
    :func:`plboost.data.load_table`, in memory, with the options ``query``, ``label``, ``features`` and ``sort``
    (and ``dtype``, ``max_label``; ``n_features``, when given, must be their number of feature columns). Tables
    used together need the same feature columns: those of the first table, in its order (another order is
    put right by name); they are not widened. An option given at other than its default is refused when no file
    it applies to is given (``query`` and the others with SVMlight files only; ``zero_based``, ``query_file``,
    ``dense=False``, ``max_dense_gib`` with tables only), and so is ``out_of_core=True`` with a table.

    With ``out_of_core=True`` every file is read by :func:`load_out_of_core` instead (dense chunks on disk,
    batches of at most ``memory_budget_bytes``), giving :class:`OutOfCoreData`; with None,
    :func:`choose_out_of_core` decides for all of them from their estimated dense size and the memory available
    (saying so through ``log``, by default standard error, when it reads them out of core).
    ``memory_budget_bytes`` is for out-of-core reading: refused with ``out_of_core=False``, and said in one line
    through ``log`` to apply only out of core when the files are read in memory all the same (chosen so, or
    tables).
    """
    options, table_options = checked_options(paths, options)
    if memory_budget_bytes is not None:
        checked_memory_budget(memory_budget_bytes)
        if out_of_core is False:
            raise ValueError("a memory budget (memory_budget_bytes, --memory-budget) is the batch size of out-of-core "
                             "reading, but out_of_core=False (--in-memory) reads the files into memory whole: give "
                             "one or the other")
    tables = any(path is not None and is_table(path) for path in paths)
    if tables:
        if out_of_core:
            table = next(path for path in paths if path is not None and is_table(path))
            raise ValueError(f"{table}: a table is read in memory; out-of-core reading (--out-of-core) is for "
                             "SVMlight files")
        out_of_core = False
    if out_of_core is None:
        out_of_core = choose_out_of_core(paths, n_features=options.get("n_features"),
                                         dtype=options.get("dtype", np.float32),
                                         zero_based=options.get("zero_based", False), log=log)
    if out_of_core:
        if options.pop("dense", True) is not True:
            raise ValueError("out-of-core data are dense chunks on disk; dense=False (sparse X) is read in memory")
        options.pop("max_dense_gib", None)  # a limit on memory: the chunks are on disk
        loaded = [None if path is None else load_out_of_core(path, memory_budget_bytes=memory_budget_bytes, **options)
                  for path in paths]
    else:
        loaded = [None if path is None else _load_table(path, table_options, options) if is_table(path)
                  else svmlight.load_svmlight(path, **options) for path in paths]
        if memory_budget_bytes is not None:  # nothing silent: the budget given has nothing to apply to
            names = ", ".join(Path(path).name for path in paths if path is not None)
            why = ("tables are read in memory" if tables else
                   "they fit the memory available; --out-of-core or out_of_core=True reads them out of core")
            (log or _to_stderr)(f"plboost: {names}: read in memory ({why}); the memory budget (--memory-budget, "
                                "memory_budget_bytes) applies only to out-of-core reading")
    return _aligned(loaded)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def checked_options(paths, options: dict) -> tuple[dict, dict]:
    """``options`` of :func:`load_splits` for ``paths`` split into those of :func:`plboost.data.load_svmlight`
    and those of :func:`plboost.data.load_table` only; an option at other than its default with no file it
    applies to among ``paths`` is refused (ValueError)."""
    given = [Path(path) for path in paths if path is not None]
    tables = [path for path in given if is_table(path)]
    options = dict(options)
    table_options = {name: options.pop(name) for name in TABLE_OPTIONS if name in options}
    changed = [_spelled(name, value) for name, value in table_options.items()
               if not _is_default(value, TABLE_OPTIONS[name])]
    if given and not tables and changed:
        raise ValueError(f"{', '.join(changed)}: for tables ({', '.join(TABLE_SUFFIXES)}), but "
                         f"{', '.join(path.name for path in given)} "
                         f"{'is an SVMlight file' if len(given) == 1 else 'are SVMlight files'}")
    changed = [_spelled(name, options[name]) for name, default in SVMLIGHT_OPTIONS.items()
               if name in options and not _is_default(options[name], default)]
    if given and len(tables) == len(given) and changed:
        raise ValueError(f"{', '.join(changed)}: for SVMlight files, but {', '.join(path.name for path in given)} "
                         f"{'is a table' if len(given) == 1 else 'are tables'}")
    return options, table_options


#: the command line's flags for the options of :func:`load_splits`, for messages
_FLAGS = {"query": "--query-column", "label": "--label-column", "sort": "--sort-queries", "zero_based": "--zero-based"}


def _spelled(name: str, value) -> str:
    return f"{name}={value!r}" + (f" ({_FLAGS[name]})" if name in _FLAGS else "")


def _is_default(value, default) -> bool:
    return value is default or (type(value) is type(default) and value == default)


#: the options of :func:`load_svmlight` that tables take too (``cache`` and ``progress`` are ignored for them)
_SHARED_OPTIONS = ("dtype", "max_label", "n_features", "cache", "progress")


def _load_table(path, table_options: dict, options: dict) -> RankingData:
    unknown = sorted(set(options) - set(_SHARED_OPTIONS) - set(SVMLIGHT_OPTIONS))
    if unknown:
        raise InputTypeError(f"load_splits: unknown option {unknown[0]!r}")
    data = load_table(path, **table_options, **{name: options[name] for name in ("dtype", "max_label")
                                                 if name in options})
    n_features = options.get("n_features")
    if n_features is not None and data.n_features != n_features:
        raise ValueError(f"{path}: {data.n_features} feature columns, but n_features={n_features}")
    return data


def column_order(names, wanted, *, data: str, reference: str, hint: str) -> list[int] | None:
    """The positions in ``names`` (a table's feature columns) of the columns ``wanted`` (another table's, or those a
    model was trained on), matched by name; None where they are the same names in the same order. A name of
    ``wanted`` missing from ``names``, one of ``names`` not in ``wanted`` and a name given twice are refused in one
    line that starts with ``data``, names them and ends with ``hint``."""
    names, wanted = [str(name) for name in names], [str(name) for name in wanted]
    if names == wanted:
        return None
    twice = next((name for name in names if names.count(name) > 1), None)
    if twice is not None:
        raise ValueError(f"{data}: feature column {twice!r} appears {names.count(twice)} times; rename the copies")
    missing = [name for name in wanted if name not in names]
    extra = [name for name in names if name not in wanted]
    if missing or extra:
        listed = ", ".join(f"{', '.join(map(repr, found[:5]))}{', ...' if len(found) > 5 else ''} {what}"
                           for what, found in (("missing", missing), (f"not in {reference}", extra)) if found)
        raise ValueError(f"{data}: the feature columns differ from those of {reference} ({listed}); {hint}")
    return [names.index(name) for name in wanted]


def match_columns(data, reference):
    """``data`` with the feature columns of ``reference`` when both are tables (have ``feature_names``): the
    same names in another order are put in ``reference``'s order; other names are refused, naming them. Other
    data are returned as they are."""
    names, wanted = getattr(data, "feature_names", None), getattr(reference, "feature_names", None)
    if names is None or wanted is None:
        return data
    order = column_order(names, wanted, data=_name(data), reference=_name(reference),
                         hint="files used together need the same features (choose them with features=[...])")
    if order is None:
        return data
    return RankingData(data.X[:, order], data.labels, data.qids, data.offsets, data.source, wanted)


#: the end of the refusal of a table whose columns are not those a model was trained on
_MODEL_HINT = "a model scores the columns it was trained on, found by name"


def for_model(data: RankingData, feature_names, model: str = "the model") -> RankingData:
    """``data`` with the columns of a table in the order of ``feature_names``, the table columns a model was trained
    on, found by name (a column missing or extra refused by name: :func:`column_order`); as it is where either has
    no names (numbered features: taken by position)."""
    if data.feature_names is None or feature_names is None:
        return data
    order = column_order(data.feature_names, feature_names, data=_name(data), reference=model, hint=_MODEL_HINT)
    if order is None:
        return data
    return RankingData(data.X[:, order], data.labels, data.qids, data.offsets, data.source, feature_names)


def model_input(X, feature_names, model: str = "the model"):
    """What a model trained on the table columns ``feature_names`` (None: numbered features) predicts from, for
    ``X``: an array or sparse matrix as it is (its columns by position); a :class:`RankingData` its ``X``, a
    table's columns put in the model's order by :func:`for_model`; a pandas DataFrame its columns found by name in
    the same way, as a float64 array. A DataFrame for a model without names is taken by position, as the engines
    take it."""
    if isinstance(X, RankingData):
        return for_model(X, feature_names, model).X
    columns = getattr(X, "columns", None)
    if columns is None or feature_names is None or not hasattr(X, "iloc"):
        return X
    order = column_order(columns, feature_names, data="X", reference=model, hint=_MODEL_HINT)
    return (X if order is None else X.iloc[:, order]).to_numpy(dtype=np.float64, na_value=np.nan)


def _name(data) -> str:
    return str(data.source) if data.source is not None else "the data"


def _aligned(items: list) -> list:
    """Data used together with the columns of the first table among them and the width of the widest (zero
    columns appended to SVMlight data); a table narrower than the widest is refused."""
    present = [item for item in items if item is not None]
    reference = next((item for item in present if getattr(item, "feature_names", None) is not None), None)
    if reference is not None:
        items = [None if item is None else match_columns(item, reference) for item in items]
        present = [item for item in items if item is not None]
    width = max(item.n_features for item in present)
    widest = max(present, key=lambda item: item.n_features)
    for item in present:
        if getattr(item, "feature_names", None) is not None and item.n_features < width:
            raise ValueError(f"{_name(item)}: {item.n_features} feature columns, but {_name(widest)} has {width} "
                             "features; a table is not widened: files used together need the same features")
    return [None if item is None else item.widen(width) for item in items]


def training_data(train, valid=None, *, out_of_core: bool | None = None, memory_budget_bytes: int | None = None,
                  log=None, **options):
    """``(train, valid)`` for the engines' training helpers: paths (str or Path) are read together by
    :func:`plboost.data.load_splits` with ``out_of_core`` (None: chosen by the memory available; ``options``
    are the loader's), and data already loaded are used as they are (True with in-memory data, or False with
    :class:`OutOfCoreData`, is refused: the choice is made when a file is read). All are aligned to the widest."""
    items = [train, valid]
    paths = [item if isinstance(item, (str, os.PathLike)) else None for item in items]
    if all(p is None for p in paths):
        if options or memory_budget_bytes is not None:
            raise ValueError(f"loader options ({', '.join(sorted(options) or ['memory_budget_bytes'])}) apply to "
                             "files; the data given are already loaded")
        _check_kind(items, out_of_core)
        # as they are (in-memory data keep their widths), a table's columns in the training table's order
        return train, None if valid is None else match_columns(valid, train)
    loaded = load_splits(*paths, out_of_core=out_of_core, memory_budget_bytes=memory_budget_bytes, log=log, **options)
    items = [loaded[i] if paths[i] is not None else item for i, item in enumerate(items)]
    _check_kind([item for item, path in zip(items, paths, strict=True) if path is None], out_of_core)
    return tuple(_aligned(items))


def _check_kind(items, out_of_core) -> None:
    for item in items:
        if item is None:
            continue
        if out_of_core is True and not isinstance(item, OutOfCoreData):
            raise ValueError("out_of_core=True, but the data are already in memory: pass the file's path, or load it "
                             "with plboost.data.load_out_of_core")
        if out_of_core is False and isinstance(item, OutOfCoreData):
            raise ValueError("out_of_core=False, but the data are out of core: pass the file's path, or "
                             ".to_ranking_data() to read them into memory")


def predict_scores(model, data, *, memory_budget_bytes: int | None = None) -> np.ndarray:
    """Scores of ``model`` (a :class:`plboost.engines.TrainedModel` or anything with ``predict(X)``) for every
    document of ``data``: in one call for :class:`~plboost.data.RankingData`; for :class:`OutOfCoreData`, into
    one float64 array of ``n_docs`` made first, batch by batch of rows (:meth:`OutOfCoreData.row_ranges`: at
    most ``memory_budget_bytes``, by default the data's budget, and at most
    :data:`~plboost.data.out_of_core.STREAM_BATCH_BYTES`, for a batch's X and the engine's float64 scores of
    it). Each batch is read from disk as stored (float32, which both engines predict from without a copy) and
    freed before the next is read. The scores equal those of the data read into memory, bit for bit."""
    if not isinstance(data, OutOfCoreData):  # a table's columns found by name for a model that has names
        return model.predict(model_input(data, getattr(model, "feature_names", None)))
    scores = np.empty(data.n_docs, dtype=np.float64)
    for start, stop in data.row_ranges(memory_budget_bytes, extra_bytes_per_row=8):
        X = data.rows(start, stop)
        scores[start:stop] = np.ravel(model.predict(X))
        del X  # before the next batch is read: one batch at a time
    return scores


#: the first token of every line that holds one and is not a comment: an SVMlight line's label
_LABEL_TOKEN = re.compile(rb"^[ \t]*([^\s#]+)", re.MULTILINE)


def largest_label(paths, **options) -> int:
    """The largest relevance label of the files ``paths`` (None skipped; at least 1), read without their features:
    an SVMlight file's first token of every line (a scan at disk speed, no parse of the features), a table's label
    column alone. A label that does not read as a number is left to the loader to report, with its line: the file
    is then loaded as :func:`load_splits` with ``options`` would load it."""
    largest = 1.0
    for path in (Path(p) for p in paths if p is not None):
        if is_table(path):
            labels = label_column(path, options.get("label") or TABLE_OPTIONS["label"])
            if labels is None or not np.all(np.isfinite(labels)):
                (data,) = load_splits(path, **options)
                labels = data.labels
            largest = max(largest, float(np.max(labels, initial=0.0)))
            continue
        try:
            for chunk, _ in svmlight_parser.read_chunks(path):
                tokens = _LABEL_TOKEN.findall(chunk)
                if tokens:
                    largest = max(largest, float(np.array(tokens).astype(np.float64).max()))
        except ValueError:
            (data,) = load_splits(path, **options)
            largest = max(largest, float(np.max(data.labels, initial=0.0)))
    return int(largest)
