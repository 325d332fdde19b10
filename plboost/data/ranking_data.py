"""The ranking dataset in memory: :class:`RankingData`, documents in rows and queries as contiguous row ranges.

It checks its arrays when made, gives the engines' datasets (:meth:`RankingData.to_lightgbm`,
:meth:`RankingData.to_xgboost`), takes subsets of queries, widens ``X``, and writes itself as an SVMlight/LETOR
file (:meth:`RankingData.save_svmlight`). The loaders make it: :func:`plboost.data.load_svmlight` from a file,
:meth:`RankingData.from_pandas` from a DataFrame (:mod:`plboost.data.frames`), :func:`plboost.data.load_table`
from a Parquet or CSV file, :func:`plboost.data.make_synthetic` from a seed.
"""

from __future__ import annotations

import contextlib
import gzip
import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._engine_registry import stored_names
from ..errors import InputTypeError
from .._queries import DEFAULT_MAX_LABEL, check_estimates, check_labels, offsets_from_boundaries, offsets_from_sizes
from .._writing import write_atomic
from .frames import DEFAULT_LABEL, DEFAULT_QUERY, frame_arrays


@dataclass(eq=False, repr=False)
class RankingData:
    """A ranking dataset in plboost's flat layout: documents in rows, queries as contiguous row ranges.

    Query ``q`` holds rows ``offsets[q]:offsets[q + 1]`` and has the id ``qids[q]``. Missing feature
    values are NaN, which LightGBM and XGBoost both treat as missing; a feature absent from an SVMlight
    line is 0.

    Attributes
    ----------
    X : ndarray of shape (n_docs, n_features) or scipy.sparse.csr_matrix
        Features (float32 by default).
    labels : ndarray of shape (n_docs,), float64
        Relevance labels, non-negative whole numbers.
    qids : ndarray of shape (n_queries,)
        One id per query, in row order (for files without a ``qid:`` column, 0, 1, 2, ...).
    offsets : ndarray of shape (n_queries + 1,), int64
        Query boundaries: 0, then the cumulative query sizes.
    source : Path or None
        The file the documents were read from.
    feature_names : tuple of str or None
        The name of each column of ``X``, for data read from a table (:meth:`from_pandas`,
        :func:`plboost.data.load_table`); None for SVMlight files, whose features are numbered.
    relevance_estimates : bool, default False
        The labels are estimates of relevance (from a click log: :meth:`plboost.clicks.ClickLog.training_data`),
        any finite real numbers, negative ones included, not graded labels. Only objectives that take such
        estimates train on them (``PLRank3(gain="estimate")``); they cannot be written as SVMlight.
    positions : ndarray of shape (n_docs,) or None
        The rank each row was displayed at (1 at the top), for rows of a click log's impressions
        (:meth:`plboost.clicks.ClickLog.displayed_rows`): LightGBM's ``position`` (0-based) for its position-bias
        debiasing; XGBoost's ``lambdarank_unbiased`` reads positions from the rows' order, which these rows keep.
    """

    X: np.ndarray | sp.csr_matrix
    labels: np.ndarray
    qids: np.ndarray
    offsets: np.ndarray
    source: Path | None = None
    feature_names: tuple[str, ...] | None = None
    relevance_estimates: bool = False
    positions: np.ndarray | None = None

    def __post_init__(self):
        if not sp.issparse(self.X):
            self.X = np.asarray(self.X)
        if self.X.ndim != 2:
            raise ValueError(f"X must be 2-d, got shape {self.X.shape}")
        self.labels = (check_estimates(self.labels) if self.relevance_estimates
                       else check_labels(self.labels, max_label=None))
        if self.labels.shape[0] != self.X.shape[0]:
            raise ValueError(f"{self.labels.shape[0]} labels for {self.X.shape[0]} rows of X")
        self.offsets = offsets_from_boundaries(self.offsets, self.X.shape[0], name="offsets")
        self.qids = np.asarray(self.qids)
        if self.qids.shape != (self.offsets.size - 1,):
            raise ValueError(f"qids must hold one id per query ({self.offsets.size - 1}), got shape "
                             f"{self.qids.shape}")
        if self.positions is not None:
            self.positions = np.asarray(self.positions)
            if (self.positions.shape != (self.X.shape[0],) or not np.issubdtype(self.positions.dtype, np.integer)
                    or (self.positions.size and self.positions.min() < 1)):
                raise ValueError(f"positions must hold one whole number >= 1 per row ({self.X.shape[0]}), got "
                                 f"{self.positions.dtype} of shape {self.positions.shape}")
        if self.source is not None:
            self.source = Path(self.source)
        if self.feature_names is not None:
            if isinstance(self.feature_names, str):
                raise InputTypeError("feature_names must be a sequence of names, not a string")
            self.feature_names = tuple(str(name) for name in self.feature_names)
            if len(self.feature_names) != self.X.shape[1]:
                raise ValueError(f"{len(self.feature_names)} feature names for {self.X.shape[1]} columns of X")

    @classmethod
    def from_pandas(cls, df, query=DEFAULT_QUERY, label=DEFAULT_LABEL, features=None, sort: bool = False, *,
                    dtype=np.float32, max_label: int | None = DEFAULT_MAX_LABEL) -> RankingData:
        """Ranking data from a pandas DataFrame with a row per document (:mod:`plboost.data.frames`).

        Parameters
        ----------
        df : pandas.DataFrame
            The documents: a query id column, a relevance label column, feature columns.
        query, label : column names, default "qid" and "label"
            The query ids (any values pandas can tell apart: numbers, strings) and the labels.
        features : list of column names, optional
            The feature columns, in the order of ``X``'s columns; by default every column but ``query`` and
            ``label``, in the frame's order. Their names are kept in :attr:`feature_names`.
        sort : bool, default=False
            The rows of a query must be contiguous (a query id that reappears after another query's rows is
            refused, naming the row); with ``sort=True`` the rows are sorted by query id first (a stable sort:
            the documents of a query keep their order; the queries come in the order of their ids).
        dtype : float32 or float64, default=float32
            Type of the features. Missing values (NaN, ``pd.NA``) stay NaN; infinite values are refused.
        max_label : int or None, default=30
            Largest label accepted, as for :func:`plboost.data.load_svmlight`; labels must be non-negative
            whole numbers (:func:`plboost._queries.check_labels`).

        Raises ``ValueError`` (naming the column, and the row by position and index label) for a missing
        column, a non-numeric feature or label column, an empty frame, a missing query id, rows of a query that
        are not contiguous, a label that is missing, negative, fractional or above ``max_label``, and an
        infinite feature value.

        >>> import pandas as pd
        >>> df = pd.DataFrame({"qid": [7, 7, 3], "label": [1, 0, 2], "bm25": [2.5, 0.5, None],
        ...                    "length": [120, 80, 95]})
        >>> data = RankingData.from_pandas(df)
        >>> data.qids, data.offsets, data.feature_names
        (array([7, 3]), array([0, 2, 3]), ('bm25', 'length'))
        >>> data.X
        array([[  2.5, 120. ],
               [  0.5,  80. ],
               [  nan,  95. ]], dtype=float32)
        >>> RankingData.from_pandas(df, sort=True).qids
        array([3, 7])
        """
        arrays = frame_arrays(df, query, label, features, sort, dtype=dtype, max_label=max_label)
        return cls(arrays.X, arrays.labels, arrays.qids, arrays.offsets, feature_names=arrays.feature_names)

    def to_pandas(self, query=DEFAULT_QUERY, label=DEFAULT_LABEL):
        """The documents as a pandas DataFrame: the query id column, the label column, then the features (named
        :attr:`feature_names`, else ``f1``, ``f2``, ... as SVMlight numbers them); :meth:`from_pandas` reads it
        back to equal arrays (with ``dtype=np.float64`` for float64 data). A sparse ``X`` becomes dense columns.
        A table tells its queries apart by id: queries that share one (a :meth:`subset` that takes a query twice)
        would read back as one, and are refused (ValueError).

        >>> data = RankingData(np.array([[0.5], [1.5], [2.5]]), [1, 0, 2], qids=[7, 3], offsets=[0, 2, 3])
        >>> data.to_pandas()
           qid  label   f1
        0    7    1.0  0.5
        1    7    0.0  1.5
        2    3    2.0  2.5
        """
        import pandas as pd

        check_distinct_queries(self.qids, "to_pandas", "a table")
        names = list(self.feature_names or [f"f{i + 1}" for i in range(self.n_features)])
        if query in names or label in names or query == label:
            raise ValueError(f"the query column {query!r} and the label column {label!r} must differ from each other "
                             "and from the feature names")
        X = self.X.toarray() if sp.issparse(self.X) else self.X
        frame = pd.DataFrame(X, columns=names)
        frame.insert(0, label, self.labels)
        frame.insert(0, query, np.repeat(self.qids, self.group_sizes))
        return frame

    @property
    def group_sizes(self) -> np.ndarray:
        """Number of documents of each query (LightGBM's ``group``), int64."""
        return np.diff(self.offsets)

    @property
    def n_docs(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_queries(self) -> int:
        return int(self.offsets.size - 1)

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    def __repr__(self) -> str:
        layout = "sparse" if sp.issparse(self.X) else "dense"
        return (f"RankingData(n_docs={self.n_docs}, n_queries={self.n_queries}, n_features={self.n_features}, "
                f"X={layout} {self.X.dtype}, source={str(self.source) if self.source else None!r})")

    def to_lightgbm(self, reference=None, **kwargs):
        """A ``lightgbm.Dataset`` with labels and query sizes (``group``) set, and the :attr:`feature_names` of a
        table as its ``feature_name`` (:func:`plboost._engine_registry.stored_names`), which the model keeps.

        Pass the training Dataset as ``reference`` for validation data, so both share bin boundaries;
        ``kwargs`` go to ``lightgbm.Dataset`` (``params``, ``free_raw_data``, ...).
        """
        import lightgbm as lgb

        if self.feature_names is not None:
            kwargs.setdefault("feature_name", stored_names(self.feature_names))
        if self.positions is not None:
            kwargs.setdefault("position", self.positions - 1)
        return lgb.Dataset(self.X, label=self.labels, group=self.group_sizes, reference=reference, **kwargs)

    def to_xgboost(self, **kwargs):
        """An ``xgboost.DMatrix`` with labels and query sizes set (``group_ptr`` equals ``offsets``).

        Query sizes are given rather than XGBoost's ``qid=``, which requires sorted query ids. The
        :attr:`feature_names` of a table are its ``feature_names`` (:func:`plboost._engine_registry.stored_names`),
        which the model keeps. ``kwargs`` go to ``xgboost.DMatrix`` (``missing`` defaults to NaN there, as here).
        """
        import xgboost as xgb

        if self.feature_names is not None:
            kwargs.setdefault("feature_names", stored_names(self.feature_names))
        return xgb.DMatrix(self.X, label=self.labels, group=self.group_sizes, **kwargs)

    def widen(self, n_features: int) -> RankingData:
        """The same data with zero columns appended up to ``n_features`` (absent features are 0). Data with
        :attr:`feature_names` (a table's columns) are not widened: a column without a name would be invented."""
        if n_features < self.n_features:
            raise ValueError(f"cannot narrow {self.n_features} features to {n_features}")
        if n_features == self.n_features:
            return self
        if self.feature_names is not None:
            raise ValueError(f"{self.source or 'the data'}: {self.n_features} named feature columns (a table) cannot "
                             f"be widened to {n_features} features; the files used together need the same columns")
        if sp.issparse(self.X):
            X = sp.csr_matrix((self.X.data, self.X.indices, self.X.indptr), shape=(self.n_docs, n_features))
        else:
            X = np.zeros((self.n_docs, n_features), dtype=self.X.dtype)
            X[:, :self.n_features] = self.X
        return RankingData(X, self.labels, self.qids, self.offsets, self.source,
                           relevance_estimates=self.relevance_estimates, positions=self.positions)

    def subset(self, query_indices) -> RankingData:
        """The queries ``query_indices`` (integer positions, in the given order, or a boolean mask that selects
        at least one: :class:`RankingData` holds one query or more).

        >>> from plboost.data import make_synthetic
        >>> make_synthetic(n_queries=3, seed=0).subset([2, 0]).qids
        array([3, 1])
        >>> make_synthetic(n_queries=3, seed=0).subset([])
        Traceback (most recent call last):
        ValueError: subset: no query selected; RankingData holds at least one query
        """
        indices = np.asarray(query_indices)
        if indices.size == 0 or (indices.dtype.kind == "b" and not indices.any()):
            raise ValueError("subset: no query selected; RankingData holds at least one query")
        if indices.dtype.kind not in "iub" or indices.ndim != 1:
            raise ValueError(f"subset: expected query positions (integers) or a boolean mask, got {indices.dtype} "
                             f"of shape {indices.shape}")
        if indices.dtype.kind == "b" and indices.size != self.n_queries:
            raise ValueError(f"subset: a boolean mask of {indices.size} values for {self.n_queries} queries")
        if indices.dtype.kind != "b" and not -self.n_queries <= indices.min() <= indices.max() < self.n_queries:
            raise ValueError(f"subset: query positions must lie in [0, {self.n_queries}), got "
                             f"{indices.min() if indices.min() < 0 else indices.max()}")
        positions = np.arange(self.n_queries)[indices]
        sizes = self.group_sizes[positions]
        offsets = offsets_from_sizes(sizes, name="subset")
        rows = np.repeat(self.offsets[positions] - offsets[:-1], sizes) + np.arange(offsets[-1])
        return RankingData(self.X[rows], self.labels[rows], self.qids[positions], offsets, self.source,
                           self.feature_names, self.relevance_estimates,
                           None if self.positions is None else self.positions[rows])

    def save_svmlight(self, path, *, zero_based: bool = False) -> Path:
        """Write the data as an SVMlight/LETOR file with ``qid:``, gzip-compressed if ``path`` ends in ``.gz``.

        Only non-zero features are written (NaN is written as ``nan``), with 9 significant digits for
        float32 and 17 otherwise, so that :func:`load_svmlight` (with ``dtype=np.float64`` for float64 data, and
        ``max_label=None`` for labels above 30) gives back the same arrays bit for bit; where the last column
        is zero in every row, the first line gives it as ``n:0``, so that the file reads back as wide as the data.
        Feature ``j`` is written as index ``j + 1`` unless ``zero_based``; :attr:`feature_names` are not written
        (the format numbers its features: a table keeps them, :meth:`to_pandas`). Returns the path.

        An SVMlight file tells its queries apart by their ``qid:``, an integer of at most 18 digits: data whose
        query ids are not such integers (strings, fractions), or whose queries share an id (a :meth:`subset`
        that takes a query twice), would not read back as they are, and are refused (ValueError) before anything
        is written. Give such queries numbers first, ``dataclasses.replace(data, qids=np.arange(data.n_queries))``,
        or write a table.
        """
        path = Path(path)
        if self.relevance_estimates:
            raise ValueError(f"{path}: these labels are relevance estimates (real numbers), which SVMlight's integer "
                             "labels cannot hold; write a table (to_pandas) instead")
        value_format = "%d:%.9g" if self.X.dtype == np.float32 else "%d:%.17g"
        labels = self.labels.astype(np.int64).tolist()
        row_qids = np.repeat(_svmlight_qids(self.qids), self.group_sizes).tolist()
        rows_per_block = max(1, (1 << 20) // max(1, self.n_features))
        last = self.X[:, -1] if self.n_features else None
        width_mark = (f" {self.n_features - zero_based}:0" if last is not None and
                      (last.count_nonzero() if sp.issparse(last) else np.count_nonzero(last)) == 0 else "")

        def write(handle):
            with (gzip.GzipFile(str(path), "wb", compresslevel=6, mtime=0, fileobj=handle)
                  if path.name.endswith(".gz") else contextlib.nullcontext(handle)) as f:
                for start in range(0, self.n_docs, rows_per_block):
                    block = sp.csr_matrix(self.X[start:start + rows_per_block])  # keeps NaN, drops zeros
                    columns = (block.indices.astype(np.int64) + (not zero_based)).tolist()
                    values = block.data.tolist()
                    lines = []
                    for i, (lo, hi) in enumerate(itertools.pairwise(block.indptr.tolist()), start):
                        pairs = zip(columns[lo:hi], values[lo:hi], strict=True)
                        lines.append(f"{labels[i]} qid:{row_qids[i]} {' '.join(map(value_format.__mod__, pairs))}"
                                     .rstrip() + (width_mark if i == 0 else "") + "\n")
                    f.write("".join(lines).encode("ascii"))
        return write_atomic(path, write)


#: the longest query id SVMlight's ``qid:`` holds, in digits (the parser's limit)
QID_DIGITS = 18


def check_distinct_queries(qids, where: str, kind: str) -> None:
    """Refuse query ids held by two queries (ValueError naming them): a file of kind ``kind`` tells its queries
    apart by id, so they would read back as one query, or be refused where other queries come between."""
    seen: dict = {}
    for position, qid in enumerate(np.asarray(qids).tolist()):
        if qid in seen:
            raise ValueError(f"{where}: queries {seen[qid]} and {position} have the same id {qid!r} (a subset that "
                             f"takes a query twice?); {kind} tells queries apart by id, so they would read back as "
                             "one: give each query its own id first, "
                             "dataclasses.replace(data, qids=numpy.arange(data.n_queries))")
        seen[qid] = position


def _svmlight_qids(qids) -> list[int]:
    """The query ids as ``qid:`` writes them (whole numbers as integers); ValueError for an id that is not an
    integer of at most :data:`QID_DIGITS` digits, or that two queries share."""
    written = []
    for position, qid in enumerate(np.asarray(qids).tolist()):
        whole = (isinstance(qid, int) or (isinstance(qid, float) and qid.is_integer())) and not isinstance(qid, bool)
        if not whole or abs(qid) >= 10 ** QID_DIGITS:
            raise ValueError(f"save_svmlight: query {position} has the id {qid!r}, which SVMlight's qid: cannot hold "
                             f"(an integer of at most {QID_DIGITS} digits): number the queries first, "
                             "dataclasses.replace(data, qids=numpy.arange(data.n_queries)), or write a table "
                             "(data.to_pandas().to_csv(path, index=False))")
        written.append(int(qid))
    check_distinct_queries(written, "save_svmlight", "an SVMlight file")
    return written
