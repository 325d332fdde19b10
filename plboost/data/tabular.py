"""The loader of tables: :func:`load_table` reads a Parquet or CSV file with a row per document (a query id column,
a label column, feature columns) into a :class:`RankingData`, through :meth:`RankingData.from_pandas` (the frame's
checks are in :mod:`plboost.data.frames`).

==========================  ===================================================================
suffix                      read by
==========================  ===================================================================
``.parquet``, ``.pq``       ``pandas.read_parquet`` with pyarrow (``pip install 'plboost[parquet]'``)
``.csv``, ``.csv.gz``       ``pandas.read_csv`` (a header line names the columns)
==========================  ===================================================================

:func:`is_table` tells a table's path from an SVMlight file's, for :func:`plboost.data.load_splits` and the
command line, which read either. pandas is imported when a file is read, not with this module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._extras import MissingExtra
from .._queries import DEFAULT_MAX_LABEL
from .frames import DEFAULT_LABEL, DEFAULT_QUERY, feature_columns, frame_arrays
from .ranking_data import RankingData
from .svmlight_parser import check_is_file

#: the suffixes of tables, by format (compared without regard to case)
PARQUET_SUFFIXES, CSV_SUFFIXES = (".parquet", ".pq"), (".csv", ".csv.gz")
TABLE_SUFFIXES = PARQUET_SUFFIXES + CSV_SUFFIXES

#: the options of :func:`load_table` that SVMlight files do not have, with their defaults
TABLE_OPTIONS = {"query": DEFAULT_QUERY, "label": DEFAULT_LABEL, "features": None, "sort": False}


def is_table(path) -> bool:
    """Whether ``path`` names a table (:data:`TABLE_SUFFIXES`) rather than an SVMlight file."""
    return Path(path).name.lower().endswith(TABLE_SUFFIXES)


def table_format(path) -> str:
    """``"parquet"`` or ``"csv"`` by the suffix of ``path``; ValueError for any other."""
    name = Path(path).name.lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    raise ValueError(f"{path}: not a table; expected a name ending in {', '.join(TABLE_SUFFIXES)}")


def load_table(path, query=DEFAULT_QUERY, label=DEFAULT_LABEL, features=None, sort: bool = False, *,
               dtype=np.float32, max_label: int | None = DEFAULT_MAX_LABEL) -> RankingData:
    """Read a Parquet (``.parquet``, ``.pq``) or CSV (``.csv``, ``.csv.gz``) file with a row per document.

    The arguments and the checks are those of :meth:`RankingData.from_pandas`: ``query`` and ``label`` name the
    query id and label columns, ``features`` the feature columns (default: all the others, in the file's order;
    given, only those are read), ``sort=True`` sorts the rows by query id instead of refusing a query whose rows
    are not contiguous. Every error names the file. Parquet needs pyarrow (``pip install 'plboost[parquet]'``);
    a Parquet dataset directory (as Spark writes it) is read too. The result's :attr:`~RankingData.source` is
    ``path`` and its :attr:`~RankingData.feature_names` the feature columns.

    >>> import pathlib, tempfile
    >>> import pandas as pd
    >>> scratch = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(scratch.name) / "train.csv"
    >>> pd.DataFrame({"qid": [1, 1, 2], "label": [0, 2, 1], "bm25": [0.5, 3.0, 1.5]}).to_csv(path, index=False)
    >>> data = load_table(path)
    >>> data.n_queries, data.labels, data.feature_names
    (2, array([0., 2., 1.]), ('bm25',))
    >>> load_table(path, label="grade")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: .../train.csv: no label column 'grade' (...); the columns are 'qid', 'label', 'bm25'
    >>> scratch.cleanup()
    """
    path = Path(path)
    kind = table_format(path)
    where = f"{path}: "
    if kind == "parquet":
        frame = _read_parquet(path, query, label, features, where)
    else:
        frame = _read_csv(path, query, label, features, where)
    arrays = frame_arrays(frame, query, label, features, sort, dtype=dtype, max_label=max_label, where=where)
    return RankingData(arrays.X, arrays.labels, arrays.qids, arrays.offsets, path, arrays.feature_names)


def read_frame(path):
    """Every column of the Parquet or CSV table at ``path`` as a pandas DataFrame, with the loaders' refusals (the
    file named: not a file, empty, a header naming a column twice, not Parquet or CSV)."""
    path = Path(path)
    where = f"{path}: "
    if table_format(path) == "parquet":
        frame = _read_parquet(path, None, None, None, where)
    else:
        frame = _read_csv(path, None, None, None, where)
    if frame.empty:
        raise ValueError(f"{where}no rows")
    return frame


def label_column(path, label=DEFAULT_LABEL) -> np.ndarray | None:
    """The column ``label`` of the table at ``path``, read alone (no features), as float64; None where it cannot
    be read so (no such column, labels that are not numbers, no pyarrow, not a regular file), which
    :func:`load_table` then reports with its message."""
    import pandas as pd

    path = Path(path)
    parquet = table_format(path) == "parquet"
    if not (path.is_file() or (parquet and path.is_dir())):
        return None
    try:
        if parquet:
            import_pyarrow(path)
            frame = pd.read_parquet(path, engine="pyarrow", columns=[label])
        else:
            frame = pd.read_csv(path, usecols=[label])
        return frame[label].to_numpy(dtype=np.float64)
    except (ImportError, OSError, ValueError, KeyError, TypeError, EOFError):
        return None


def import_pyarrow(path=None):
    """pyarrow's Parquet module, or :class:`plboost._extras.MissingExtra` saying how to install it."""
    try:
        import pyarrow.parquet as pq
    except ImportError as error:
        what = f"reading {path} (Parquet)" if path is not None else "reading Parquet files"
        raise MissingExtra(f"{what} needs pyarrow: pip install 'plboost[parquet]' (or pip install pyarrow)") from error
    return pq


def _read_parquet(path: Path, query, label, features, where: str):
    import pandas as pd

    if not path.is_dir():
        check_is_file(path, "Parquet file")
    pq = import_pyarrow(path)
    columns = None
    try:
        if features is not None and path.is_file():  # read only the columns used, once they are known to exist
            feature_columns(pq.read_schema(path).names, query, label, features, where=where)
            columns = [query, label, *features]
        return pd.read_parquet(path, engine="pyarrow", columns=columns)
    except (OSError, ValueError) as error:
        if isinstance(error, FileNotFoundError) or str(error).startswith(where):
            raise
        raise ValueError(f"{where}cannot be read as Parquet ({type(error).__name__}: {error})") from None


def _read_csv(path: Path, query, label, features, where: str):
    import pandas as pd

    check_is_file(path, "CSV file")
    try:
        _check_csv_header(path, where)
        columns = None
        if features is not None:  # read only the columns used, once they are known to exist
            feature_columns(pd.read_csv(path, nrows=0).columns, query, label, features, where=where)
            columns = [query, label, *features]
        return pd.read_csv(path, usecols=columns)
    except pd.errors.EmptyDataError:
        raise ValueError(f"{where}empty file: expected a header line naming the columns, then a row per "
                         "document") from None
    except (pd.errors.ParserError, UnicodeDecodeError, EOFError) as error:
        raise ValueError(f"{where}cannot be read as CSV ({type(error).__name__}: {error})") from None
    except OSError as error:  # a damaged .gz
        if isinstance(error, FileNotFoundError):
            raise
        raise ValueError(f"{where}cannot be read as CSV ({type(error).__name__}: {error})") from None


def _check_csv_header(path: Path, where: str) -> None:
    """Refuse a header that names a column twice (pandas would read the second as ``name.1``, a column the file
    does not name)."""
    import csv
    import gzip

    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rt", newline="", encoding="utf-8", errors="replace") as handle:
        try:
            header = next(csv.reader(handle), [])
        except csv.Error as error:
            raise ValueError(f"{where}cannot be read as CSV ({error})") from None
    seen = set()
    for name in header:
        if name in seen:
            raise ValueError(f"{where}column {name!r} appears twice in the header; rename the copies")
        seen.add(name)
