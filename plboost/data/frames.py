"""A pandas DataFrame of documents (one row each: a query id column, a label column, feature columns) into the
flat layout of :class:`~plboost.data.RankingData`: :func:`frame_arrays`, which
:meth:`RankingData.from_pandas <plboost.data.RankingData.from_pandas>` and :func:`plboost.data.load_table` call.

pandas is imported by the functions that take a frame, not with this module.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import InputTypeError
from .._queries import DEFAULT_MAX_LABEL, InvalidLabelError, NonContiguousQueryError, check_labels, offsets_from_qids

#: the columns a table names by default: query ids and relevance labels
DEFAULT_QUERY, DEFAULT_LABEL = "qid", "label"


class FrameArrays(NamedTuple):
    """The fields of a :class:`~plboost.data.RankingData` read from a frame."""

    X: np.ndarray
    labels: np.ndarray
    qids: np.ndarray
    offsets: np.ndarray
    feature_names: tuple[str, ...]


class NonContiguousRowsError(NonContiguousQueryError):
    """Rows of a query that reappear after rows of another query in a frame: ``row`` is the position of the first
    row of the reappearance, ``index_label`` its label in the frame's index, ``qid`` the query id."""

    def __init__(self, row: int, qid, index_label, column, where: str = ""):
        self.row, self.qid, self.index_label = row, qid, index_label
        ValueError.__init__(
            self, f"{where}query column {column!r}: query id {qid!r} reappears at row {row} (index label "
                  f"{index_label!r}) after rows of another query; the rows of a query must be contiguous: sort "
                  "them by query first (sort=True; --sort-queries on the command line)")


def feature_columns(columns, query=DEFAULT_QUERY, label=DEFAULT_LABEL, features=None, *, where: str = "") -> list:
    """The feature columns among ``columns`` (a frame's, or a file's header): every column but ``query`` and
    ``label``, in order, when ``features`` is None, else ``features``. Refuses, naming them, a query or label
    column missing, a feature column missing or given twice, a column name that appears twice among those used,
    and no feature column at all."""
    columns = list(columns)
    shown = ", ".join(map(repr, columns[:12])) + (f", ... ({len(columns)} in all)" if len(columns) > 12 else "")
    if query == label:
        raise ValueError(f"{where}the query and label columns are both {query!r}")
    for role, name in (("query", query), ("label", label)):
        if name not in columns:
            raise ValueError(f"{where}no {role} column {name!r} ({role}=... or --{role}-column names another); the "
                             f"columns are {shown or 'none'}")
    if features is None:
        chosen = [name for name in columns if name not in (query, label)]
        unnamed = [name for name in chosen if isinstance(name, str) and name.startswith("Unnamed: ")]
        if unnamed:
            raise ValueError(f"{where}column {unnamed[0]!r} has no name in the header (an index written by "
                             "DataFrame.to_csv?): write the file with index=False, or choose the feature columns "
                             "with features=[...]")
    else:
        if isinstance(features, (str, bytes)) or not hasattr(features, "__iter__"):
            raise InputTypeError(f"{where}features must be a list of column names or None, got {features!r}")
        chosen = list(features)
        missing = [name for name in chosen if name not in columns]
        if missing:
            raise ValueError(f"{where}no feature column {missing[0]!r}"
                             + (f" (nor {', '.join(map(repr, missing[1:4]))}{', ...' if len(missing) > 4 else ''})"
                                if len(missing) > 1 else "") + f"; the columns are {shown}")
        for name in chosen:
            if name in (query, label):
                raise ValueError(f"{where}{name!r} is the {'query' if name == query else 'label'} column; it cannot "
                                 "be a feature too")
            if chosen.count(name) > 1:
                raise ValueError(f"{where}feature column {name!r} is given twice in features")
    if not chosen:
        raise ValueError(f"{where}no feature columns: the columns are {shown}")
    for name in [query, label, *chosen]:
        if columns.count(name) > 1:
            raise ValueError(f"{where}column {name!r} appears {columns.count(name)} times; rename the copies")
    return chosen


def frame_arrays(frame, query=DEFAULT_QUERY, label=DEFAULT_LABEL, features=None, sort: bool = False, *,
                 dtype=np.float32, max_label: int | None = DEFAULT_MAX_LABEL, where: str = "") -> FrameArrays:
    """The arrays of a :class:`~plboost.data.RankingData` from the DataFrame ``frame`` (see
    :meth:`RankingData.from_pandas <plboost.data.RankingData.from_pandas>` for the arguments and what is refused);
    ``where`` (e.g. a file name and ": ") starts every error message."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        raise InputTypeError(f"{where}expected a pandas DataFrame, got {type(frame).__name__}")
    dtype = np.dtype(dtype)
    if dtype not in (np.float32, np.float64):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    chosen = feature_columns(frame.columns, query, label, features, where=where)
    if len(frame) == 0:
        raise ValueError(f"{where}no rows: ranking data hold at least one query")
    for name in [label, *chosen]:
        column_dtype = frame[name].dtype
        if not (pd.api.types.is_bool_dtype(column_dtype)
                or (pd.api.types.is_numeric_dtype(column_dtype) and not pd.api.types.is_complex_dtype(column_dtype))):
            what = "label" if name == label else "feature"
            hint = "" if name == label else ", or leave it out with features=[...]"
            raise ValueError(f"{where}{what} column {name!r} is not numeric (dtype {column_dtype}); convert it first "
                             f"(e.g. pandas.to_numeric){hint}")

    try:
        codes, uniques = pd.factorize(frame[query], sort=sort)
    except TypeError as error:  # ids of types that do not compare (sort=True)
        raise ValueError(f"{where}query column {query!r}: the query ids cannot be sorted ({error})") from None
    if (codes < 0).any():
        row = int(np.flatnonzero(codes < 0)[0])
        raise ValueError(f"{where}query column {query!r}: missing query id at row {row} (index label "
                         f"{_plain(frame.index[row])!r}); every row needs one")
    uniques = np.asarray(uniques.to_numpy() if hasattr(uniques, "to_numpy") else uniques)
    order = np.argsort(codes, kind="stable") if sort else None
    if order is not None:
        codes = codes[order]
    try:
        offsets, run_codes = offsets_from_qids(codes, name=f"query column {query!r}")
    except NonContiguousQueryError as error:
        raise NonContiguousRowsError(error.row, _plain(uniques[error.qid]), _plain(frame.index[error.row]), query,
                                     where) from None

    labels = frame[label].to_numpy(dtype=np.float64, na_value=np.nan)
    try:
        labels = check_labels(labels, max_label=max_label, name=f"{where}label column {label!r}")
    except InvalidLabelError as error:
        raise InvalidLabelError(error.position, error.value, f"(index label {_plain(frame.index[error.position])!r}) "
                                f"{error.reason}", name=f"{where}label column {label!r}") from None
    with np.errstate(over="ignore"):
        X = np.ascontiguousarray(frame[chosen].to_numpy(dtype=dtype, na_value=np.nan))
    infinite = np.isinf(X)
    if infinite.any():
        row, column = (int(i) for i in np.argwhere(infinite)[0])
        original = _plain(frame[chosen[column]].iloc[row])
        at = f"at row {row} (index label {_plain(frame.index[row])!r})"
        if not np.isinf(original):
            raise ValueError(f"{where}feature column {chosen[column]!r}: {original!r} {at} is too large for {dtype}: "
                             "give dtype=np.float64")
        raise ValueError(f"{where}feature column {chosen[column]!r}: infinite value {at}; missing values are NaN, "
                         "infinite ones are refused")
    if order is not None:
        X, labels = X[order], labels[order]
    return FrameArrays(X, labels, uniques[run_codes], offsets, tuple(str(name) for name in chosen))


def _plain(value):
    """A NumPy scalar as the Python value it holds, for messages."""
    return value.item() if isinstance(value, np.generic) else value
