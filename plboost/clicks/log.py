"""Click logs: what a ranker showed and what was clicked, as plboost reads, checks and writes them.

A click log is two tables (Parquet or CSV), or one where the documents' features stand in the clicks' rows:

**clicks**, one row per displayed document of one impression (a ranking shown once for a query):

==============  ========  =============================================================================
column          needed    what
==============  ========  =============================================================================
``qid``         yes       the query's id
``doc_id``      yes [1]_  the document's id within its query (the same document across impressions)
``position``    yes       the rank it was displayed at, 1 at the top
``click``       yes       1 if it was clicked, else 0
``impression``  no        the impression's id; without it, each run of consecutive rows of one query id
                          is one impression
``propensity``  no        the logging policy's probability that this displayed row was examined, where the
                          logger recorded it
==============  ========  =============================================================================

**documents** (``documents=``), one row per candidate document of each query, displayed or not: ``qid``,
``doc_id``, optionally ``logging_score`` (the logging ranker's score, from which the estimators compute the
policy's propensities), and the feature columns (every other column). Without a documents table, the clicks'
other columns are the features, and a query's candidates are the documents it displayed.

.. [1] Without ``doc_id``, a document is told by its query and its features (rows of equal features in one query
   are one document).

Impressions of the same (query, document) may repeat. Every refusal names the file, the row (1-based, the header
aside; for a CSV file also its line) and the column: a missing column, a position that is not a whole number >= 1,
a click that is not 0 or 1, a position that repeats within one impression, an impression whose rows name two
queries, a document id the documents table lacks, one (query, document) with two different feature rows, a
missing query id. Nothing is dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._values import plain_value
from ..data.tabular import import_pyarrow, read_frame, table_format

#: the clicks table's columns
QUERY, DOCUMENT, POSITION, CLICK, IMPRESSION, PROPENSITY = "qid", "doc_id", "position", "click", "impression", \
    "propensity"
#: the documents table's column of the logging ranker's scores
LOGGING_SCORE = "logging_score"
#: the key of the metadata plboost writes into a Parquet click log's schema (a CSV log gets a ``.json`` beside it)
METADATA_KEY = b"plboost.click_log"
#: the logging ranker's model file in a click log's directory (LightGBM text, as ``plboost simulate-clicks`` saves it)
LOGGING_MODEL = "logger.txt"


class ClickLogError(ValueError):
    """A click log plboost cannot read as it is: the message names the file, row and column."""


@dataclass(eq=False, repr=False)
class ClickLog:
    """A click log in memory: the candidate documents of each query and the displayed rows of every impression.

    Documents (rows of ``X``) are grouped by query: query q holds documents ``offsets[q]:offsets[q + 1]`` and has
    the id ``qids[q]``. Displayed rows are grouped by impression, in impression order: row r showed document
    ``document[r]`` at ``position[r]`` (1-based) in impression ``impression[r]`` (0, 1, ...), and ``click[r]`` says
    whether it was clicked. ``logging_scores`` (one per document) and ``temperature``/``top_k`` describe the
    logging policy where known (a Plackett-Luce policy, temperature 0 for a deterministic ranker); ``propensity``
    (one per row) is what a logger recorded itself. ``metadata``: how the log was made (a simulation's seed and
    settings). ``logging_model``: the logging ranker's model file, where the log's directory holds one
    (:data:`LOGGING_MODEL`, which ``plboost simulate-clicks`` writes).
    """

    X: np.ndarray
    qids: np.ndarray
    offsets: np.ndarray
    doc_ids: np.ndarray
    impression: np.ndarray
    document: np.ndarray
    position: np.ndarray
    click: np.ndarray
    feature_names: tuple[str, ...] | None = None
    logging_scores: np.ndarray | None = None
    propensity: np.ndarray | None = None
    metadata: dict = field(default_factory=dict)
    logging_model: Path | None = None

    def __post_init__(self):
        self.X = np.asarray(self.X)
        self.offsets = np.asarray(self.offsets, dtype=np.int64)
        n_docs = int(self.offsets[-1])
        rows = self.document.size
        if self.X.shape[0] != n_docs or self.doc_ids.size != n_docs or self.qids.size != self.offsets.size - 1:
            raise ValueError(f"ClickLog: {self.X.shape[0]} feature rows, {self.doc_ids.size} document ids and "
                             f"{self.qids.size} query ids for offsets of {self.offsets.size - 1} queries and "
                             f"{n_docs} documents")
        for name in ("impression", "position", "click"):
            if getattr(self, name).shape != (rows,):
                raise ValueError(f"ClickLog: {name} has shape {getattr(self, name).shape}, expected ({rows},)")
        if rows and (self.document.min() < 0 or self.document.max() >= n_docs):
            raise ValueError("ClickLog: a displayed row names a document outside the documents")
        if rows and np.any(np.diff(self.impression) < 0):
            raise ValueError("ClickLog: the displayed rows must be grouped by impression, in impression order")
        if self.logging_scores is not None and np.shape(self.logging_scores) != (n_docs,):
            raise ValueError(f"ClickLog: logging_scores must hold one score per document ({n_docs})")
        if self.propensity is not None and np.shape(self.propensity) != (rows,):
            raise ValueError(f"ClickLog: propensity must hold one value per displayed row ({rows})")

    # -- what the log holds -----------------------------------------------------------------------------
    @property
    def n_queries(self) -> int:
        return self.qids.size

    @property
    def n_documents(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_impressions(self) -> int:
        return int(self.impression[-1]) + 1 if self.impression.size else 0

    @property
    def query_of_document(self) -> np.ndarray:
        """The query (0-based index) of every document."""
        return np.repeat(np.arange(self.n_queries), np.diff(self.offsets))

    @property
    def impression_query(self) -> np.ndarray:
        """The query of every impression."""
        starts = np.flatnonzero(np.r_[True, np.diff(self.impression) != 0])
        return self.query_of_document[self.document[starts]]

    def displayed_rows(self):
        """The log as the engines' own click-debiasing reads it: a :class:`~plboost.data.RankingData` with a row per
        displayed document of each impression, its click as the label, the impression as the query (ids 0, 1,
        ...), rows in the order of their positions, and the positions (:attr:`RankingData.positions
        <plboost.data.RankingData.positions>`) for LightGBM's ``position``."""
        from ..data.ranking_data import RankingData

        order = np.lexsort((self.position, self.impression))
        sizes = np.bincount(self.impression, minlength=self.n_impressions)
        return RankingData(self.X[self.document[order]], self.click[order].astype(np.float64),
                           np.arange(self.n_impressions), np.r_[0, np.cumsum(sizes)], None, self.feature_names,
                           positions=self.position[order].astype(np.int64))

    def __repr__(self) -> str:
        return (f"ClickLog({self.n_impressions} impressions of {self.n_queries} queries, {self.n_documents} "
                f"documents, {self.document.size} displayed rows, {int(self.click.sum())} clicks)")

    # -- tables -----------------------------------------------------------------------------------------
    def to_frames(self):
        """The log as its two tables (pandas DataFrames): clicks and documents."""
        import pandas as pd

        query = self.query_of_document
        clicks = pd.DataFrame({QUERY: self.qids[query[self.document]], DOCUMENT: self.doc_ids[self.document],
                               IMPRESSION: self.impression, POSITION: self.position, CLICK: self.click})
        if self.propensity is not None:
            clicks[PROPENSITY] = self.propensity
        documents = {QUERY: self.qids[query], DOCUMENT: self.doc_ids}
        if self.logging_scores is not None:
            documents[LOGGING_SCORE] = self.logging_scores
        names = self.feature_names or tuple(f"f{j}" for j in range(self.X.shape[1]))
        features = pd.DataFrame(np.asarray(self.X), columns=list(names))
        return clicks, pd.concat([pd.DataFrame(documents), features], axis=1)

    def save(self, clicks_path, documents_path) -> None:
        """Write the log as its two tables (Parquet or CSV by each name's suffix), the metadata in the Parquet
        schema or, for CSV, in ``<clicks file>.json``."""
        clicks, documents = self.to_frames()
        for frame, path in ((clicks, Path(clicks_path)), (documents, Path(documents_path))):
            if table_format(path) == "parquet":
                _write_parquet(frame, path, self.metadata)
            else:
                frame.to_csv(path, index=False)
        if table_format(clicks_path) == "csv":
            Path(str(clicks_path) + ".json").write_text(json.dumps(self.metadata, indent=1, sort_keys=True))


def _write_parquet(frame, path: Path, metadata: dict) -> None:
    pq = import_pyarrow(path)  # says how to install pyarrow where it is missing
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    schema = table.schema.with_metadata({**(table.schema.metadata or {}), METADATA_KEY: json.dumps(metadata)})
    pq.write_table(table.cast(schema), path)


def read_metadata(clicks_path) -> dict:
    """The metadata plboost wrote with a click log (empty if none)."""
    path = Path(clicks_path)
    if table_format(path) == "parquet":
        stored = import_pyarrow(path).read_schema(path).metadata or {}
        return json.loads(stored[METADATA_KEY]) if METADATA_KEY in stored else {}
    side = Path(str(path) + ".json")
    return json.loads(side.read_text()) if side.is_file() else {}


def load_click_log(clicks, documents=None) -> ClickLog:
    """Read a click log (see the module for its tables): ``clicks`` and optionally ``documents``, paths of Parquet
    or CSV files. Refusals name the file, row and column; nothing is dropped."""
    clicks_path = Path(clicks)
    frame = read_frame(clicks_path)
    _require(frame, clicks_path, (QUERY, POSITION, CLICK))
    rows = _Rows(clicks_path)
    _check_no_missing(frame, clicks_path, rows, (QUERY, POSITION, CLICK))
    position = _whole_numbers(frame[POSITION], clicks_path, rows, POSITION, low=1)
    click = _whole_numbers(frame[CLICK], clicks_path, rows, CLICK, low=0, high=1).astype(np.int8)
    impression = _impressions(frame, clicks_path, rows)
    if documents is not None:
        docs_path = Path(documents)
        docs = read_frame(docs_path)
        _require(docs, docs_path, (QUERY, DOCUMENT))
        _require(frame, clicks_path, (DOCUMENT,))
        table = _documents_table(docs, docs_path, _Rows(docs_path))
        document = _join(frame, clicks_path, rows, table, docs_path)
    else:
        table, document = _inline_documents(frame, clicks_path, rows)
    _check_positions(impression, position, clicks_path, rows, frame)
    order = np.argsort(impression, kind="stable")
    propensity = None
    if PROPENSITY in frame.columns:
        propensity = _probabilities(frame[PROPENSITY], clicks_path, rows)[order]
    return ClickLog(table.X, table.qids, table.offsets, table.doc_ids, impression[order], document[order],
                    position[order].astype(np.int32), click[order], table.feature_names, table.logging_scores,
                    propensity, read_metadata(clicks_path), find_logging_model(clicks_path.parent))


def find_logging_model(directory) -> Path | None:
    """The logging ranker's model file in a click log's ``directory`` (:data:`LOGGING_MODEL`), None if none."""
    path = Path(directory) / LOGGING_MODEL
    return path if path.is_file() else None


def find_click_log(directory) -> tuple[Path, Path | None]:
    """The tables of the click log in ``directory``, as ``plboost simulate-clicks`` writes them: ``clicks.parquet``
    or ``clicks.csv``, and ``documents.parquet`` or ``documents.csv`` beside it if there is one."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ClickLogError(f"{directory}: not a directory; a click log is a directory holding clicks.parquet or "
                            "clicks.csv (and documents.parquet or .csv), as plboost simulate-clicks writes it")
    clicks, documents = _table(directory, "clicks"), _table(directory, "documents")
    if clicks is None:
        raise ClickLogError(f"{directory}: no clicks.parquet or clicks.csv (a click log's clicks table)")
    return clicks, documents


def holds_click_log(directory) -> bool:
    """Whether ``directory`` holds a click log's clicks table itself (:func:`find_click_log` reads it)."""
    return Path(directory).is_dir() and _table(Path(directory), "clicks") is not None


def _table(directory: Path, table: str) -> Path | None:
    """``<table>.parquet`` or ``<table>.csv`` in ``directory``, None if neither; both are refused."""
    paths = [path for path in (directory / f"{table}.parquet", directory / f"{table}.csv") if path.is_file()]
    if len(paths) > 1:
        raise ClickLogError(f"{directory}: {paths[0].name} and {paths[1].name} are the same table in two formats; "
                            "keep one")
    return paths[0] if paths else None


# -- reading, step by step ----------------------------------------------------------------------------------
def _shown(value) -> str:
    """A table's value as a message shows it: a NumPy scalar as the Python number it holds."""
    return repr(plain_value(value))


class _Rows:
    """How a table's rows are named in messages: "row 5" (1-based, the header aside), and for CSV "(line 6)"."""

    def __init__(self, path: Path):
        self.csv = table_format(path) == "csv"

    def __call__(self, index: int) -> str:
        return f"row {index + 1}" + (f" (line {index + 2})" if self.csv else "")


def _require(frame, path: Path, columns) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ClickLogError(f"{path}: no column {missing[0]!r}; a click log's columns are {QUERY}, {DOCUMENT}, "
                            f"{POSITION}, {CLICK} (and optionally {IMPRESSION}, {PROPENSITY}); this file has "
                            f"{', '.join(map(repr, frame.columns))}")


def _check_no_missing(frame, path: Path, rows: _Rows, columns) -> None:
    for column in columns:
        missing = frame[column].isna().to_numpy()
        if missing.any():
            raise ClickLogError(f"{path}: {rows(int(np.flatnonzero(missing)[0]))}, column {column!r}: no value")


def _whole_numbers(column, path: Path, rows: _Rows, name: str, *, low: int, high: int | None = None) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values) | (values != np.round(values)) | (values < low)
    if high is not None:
        bad |= values > high
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        want = "0 or 1" if high == 1 else f"a whole number >= {low}"
        raise ClickLogError(f"{path}: {rows(i)}, column {name!r}: {_shown(column.iloc[i])} is not {want}")
    return values.astype(np.int64)


def _probabilities(column, path: Path, rows: _Rows) -> np.ndarray:
    import pandas as pd

    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    bad = ~np.isfinite(values) | (values <= 0) | (values > 1)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ClickLogError(f"{path}: {rows(i)}, column {PROPENSITY!r}: {_shown(column.iloc[i])} is not a probability "
                            "in (0, 1]")
    return values


def _impressions(frame, path: Path, rows: _Rows) -> np.ndarray:
    """Impression numbers 0, 1, ... in order of first appearance (from the column, or the runs of query ids)."""
    import pandas as pd

    if IMPRESSION in frame.columns:
        _check_no_missing(frame, path, rows, (IMPRESSION,))
        codes = pd.factorize(frame[IMPRESSION])[0]
        queries = pd.factorize(frame[QUERY])[0]
        first_query = np.full(codes.max() + 1, -1)
        first_query[codes[::-1]] = queries[::-1]  # the query of each impression's first row
        other = np.flatnonzero(first_query[codes] != queries)
        if other.size:
            i = int(other[0])
            start = int(np.flatnonzero(codes == codes[i])[0])
            impression, first, other = (_shown(frame[IMPRESSION].iloc[i]), _shown(frame[QUERY].iloc[start]),
                                        _shown(frame[QUERY].iloc[i]))
            raise ClickLogError(f"{path}: {rows(i)}, column {QUERY!r}: impression {impression} holds rows of queries "
                                f"{first} and {other}; an impression shows one query's ranking")
        return codes.astype(np.int64)
    queries = pd.factorize(frame[QUERY])[0]
    return np.cumsum(np.r_[0, queries[1:] != queries[:-1]]).astype(np.int64)


def _check_positions(impression, position, path: Path, rows: _Rows, frame) -> None:
    order = np.lexsort((position, impression))
    same = (impression[order][1:] == impression[order][:-1]) & (position[order][1:] == position[order][:-1])
    if same.any():
        first, second = sorted((int(order[np.flatnonzero(same)[0]]), int(order[np.flatnonzero(same)[0] + 1])))
        where = (f"impression {_shown(frame[IMPRESSION].iloc[first])}" if IMPRESSION in frame.columns
                 else f"the impression of query {_shown(frame[QUERY].iloc[first])} starting before it")
        raise ClickLogError(f"{path}: {rows(second)}, column {POSITION!r}: position {int(position[second])} repeats "
                            f"{rows(first)} within {where}; each position shows one document")


@dataclass
class _Documents:
    X: np.ndarray
    qids: np.ndarray
    offsets: np.ndarray
    doc_ids: np.ndarray
    feature_names: tuple[str, ...]
    logging_scores: np.ndarray | None
    key: dict  # (qid, doc_id) -> document index


def _feature_frame(frame, path: Path, exclude) -> tuple:
    import pandas as pd

    names = [c for c in frame.columns if c not in exclude]
    for name in names:
        if not pd.api.types.is_numeric_dtype(frame[name]):
            raise ClickLogError(f"{path}: column {name!r} is not numeric; a click log's columns other than "
                                f"{', '.join(sorted(exclude))} are features")
    X = frame[names].to_numpy(dtype=np.float32) if names else np.zeros((len(frame), 0), dtype=np.float32)
    return X, tuple(names)


def _grouped(qid_codes: np.ndarray):
    """A stable order that groups rows by query (queries in order of first appearance) and the offsets."""
    order = np.argsort(qid_codes, kind="stable")
    sizes = np.bincount(qid_codes)
    return order, np.r_[0, np.cumsum(sizes)].astype(np.int64)


def _documents_table(docs, path: Path, rows: _Rows) -> _Documents:
    import pandas as pd

    _check_no_missing(docs, path, rows, (QUERY, DOCUMENT))
    keys = list(zip(docs[QUERY].tolist(), docs[DOCUMENT].tolist(), strict=True))
    seen: dict = {}
    for i, key in enumerate(keys):
        if key in seen:
            raise ClickLogError(f"{path}: {rows(i)}, column {DOCUMENT!r}: document {key[1]!r} of query {key[0]!r} "
                                f"is listed twice (first at {rows(seen[key])})")
        seen[key] = i
    X, names = _feature_frame(docs, path, {QUERY, DOCUMENT, LOGGING_SCORE})
    scores = None
    if LOGGING_SCORE in docs.columns:
        scores = pd.to_numeric(docs[LOGGING_SCORE], errors="coerce").to_numpy(dtype=np.float64)
        if not np.isfinite(scores).all():
            raise ClickLogError(f"{path}: {rows(int(np.flatnonzero(~np.isfinite(scores))[0]))}, column "
                                f"{LOGGING_SCORE!r}: not a finite number")
    codes, uniques = pd.factorize(docs[QUERY])
    order, offsets = _grouped(codes)
    doc_ids = docs[DOCUMENT].to_numpy()[order]
    key = {keys[i]: t for t, i in enumerate(order)}
    return _Documents(X[order], np.asarray(uniques), offsets, doc_ids, names,
                      None if scores is None else scores[order], key)


def _join(frame, path: Path, rows: _Rows, table: _Documents, docs_path: Path) -> np.ndarray:
    _check_no_missing(frame, path, rows, (DOCUMENT,))
    document = np.empty(len(frame), dtype=np.int64)
    for i, key in enumerate(zip(frame[QUERY].tolist(), frame[DOCUMENT].tolist(), strict=True)):
        found = table.key.get(key)
        if found is None:
            raise ClickLogError(f"{path}: {rows(i)}, column {DOCUMENT!r}: document {key[1]!r} of query {key[0]!r} "
                                f"is not in the documents table {docs_path}")
        document[i] = found
    return document


def _inline_documents(frame, path: Path, rows: _Rows) -> tuple[_Documents, np.ndarray]:
    """The documents of a clicks table that holds their features: one per (query, doc_id), or per (query,
    features) without doc ids; two rows of one document with different features are refused."""
    import pandas as pd

    X, names = _feature_frame(frame, path, {QUERY, DOCUMENT, POSITION, CLICK, IMPRESSION, PROPENSITY})
    if DOCUMENT in frame.columns:
        _check_no_missing(frame, path, rows, (DOCUMENT,))
        identity = list(zip(frame[QUERY].tolist(), frame[DOCUMENT].tolist(), strict=True))
    else:
        identity = [(q, x.tobytes()) for q, x in zip(frame[QUERY].tolist(), X, strict=True)]
    first: dict = {}
    document_row = np.empty(len(frame), dtype=np.int64)
    for i, key in enumerate(identity):
        j = first.setdefault(key, i)
        if j != i and not np.array_equal(X[i], X[j], equal_nan=True):
            raise ClickLogError(f"{path}: {rows(i)}: document {key[1]!r} of query {key[0]!r} has other features "
                                f"than at {rows(j)}")
        document_row[i] = j
    unique_rows = np.array(sorted(first.values()), dtype=np.int64)
    codes, uniques = pd.factorize(frame[QUERY].iloc[unique_rows])
    order, offsets = _grouped(codes)
    chosen = unique_rows[order]  # the table row of each document, grouped by query
    index_of_row = np.empty(len(frame), dtype=np.int64)
    index_of_row[chosen] = np.arange(chosen.size)
    doc_ids = (frame[DOCUMENT].to_numpy()[chosen] if DOCUMENT in frame.columns
               else np.concatenate([np.arange(n) for n in np.diff(offsets)]))
    table = _Documents(X[chosen], np.asarray(uniques), offsets, doc_ids, names, None, {})
    return table, index_of_row[document_row]
