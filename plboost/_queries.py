"""The one flat layout every part of plboost shares: per-document arrays plus int64 query offsets.

A dataset of ``Q`` queries and ``N`` documents is held as flat per-document arrays (scores, labels, ...)
whose query ``q`` occupies rows ``offsets[q]:offsets[q + 1]``; ``offsets`` has ``Q + 1`` entries, starts at
0 and ends at ``N``. This module converts the other spellings of the same information (group sizes as
LightGBM's ``group``/``.query`` files give them, per-document query ids as SVMlight's ``qid:`` gives them)
and validates labels, with errors that say which argument is wrong and why.
"""

from __future__ import annotations

import numpy as np

#: LightGBM's default ``label_gain`` table covers labels 0..30; larger labels are refused by default.
DEFAULT_MAX_LABEL = 30


def offsets_from_sizes(sizes, n_docs: int | None = None, *, name: str = "group") -> np.ndarray:
    """Query offsets (int64, starting at 0) from query sizes.

    ``n_docs``, when given, must equal the sum of the sizes.
    """
    sizes = np.asarray(sizes)
    if sizes.ndim != 1:
        raise ValueError(f"{name}: query sizes must be a 1-d array, got shape {sizes.shape}")
    if (sizes.size and not np.issubdtype(sizes.dtype, np.integer)
            and (not np.all(np.isfinite(sizes)) or np.any(sizes != np.round(sizes)))):
        raise ValueError(f"{name}: query sizes must be whole numbers")
    sizes = sizes.astype(np.int64)
    if np.any(sizes <= 0):
        bad = int(np.flatnonzero(sizes <= 0)[0])
        raise ValueError(f"{name}: query {bad} has size {sizes[bad]}; every query needs at least one document")
    offsets = np.zeros(sizes.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if n_docs is not None and offsets[-1] != n_docs:
        raise ValueError(f"{name}: query sizes sum to {offsets[-1]} but there are {n_docs} documents")
    return offsets


def offsets_from_boundaries(boundaries, n_docs: int | None = None, *, name: str = "group") -> np.ndarray:
    """Validate cumulative query boundaries (LightGBM ``get_field('group')``, XGBoost ``group_ptr``)."""
    offsets = np.asarray(boundaries).astype(np.int64, copy=False)
    if offsets.ndim != 1 or offsets.size < 2 or offsets[0] != 0:
        raise ValueError(f"{name}: query boundaries must be a 1-d array starting at 0 with at least 2 entries")
    if np.any(np.diff(offsets) <= 0):
        raise ValueError(f"{name}: query boundaries must be strictly increasing (every query non-empty)")
    if n_docs is not None and offsets[-1] != n_docs:
        raise ValueError(f"{name}: query boundaries end at {offsets[-1]} but there are {n_docs} documents")
    return offsets


def offsets_from_qids(qids, *, name: str = "qid") -> tuple[np.ndarray, np.ndarray]:
    """Offsets and the distinct query ids, in order of appearance, from per-document query ids.

    Documents of a query must be contiguous; the ids need not be sorted. A query id that reappears after
    another query raises ``ValueError`` naming the first row where it reappears.
    """
    qids = np.asarray(qids)
    if qids.ndim != 1:
        raise ValueError(f"{name}: query ids must be a 1-d array")
    if qids.size == 0:
        return np.zeros(1, dtype=np.int64), qids[:0]
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]])
    run_ids = qids[starts]
    distinct, first = np.unique(run_ids, return_index=True)
    if distinct.size != run_ids.size:
        seen = np.zeros(run_ids.size, dtype=bool)
        seen[first] = True
        run = int(np.flatnonzero(~seen)[0])
        raise NonContiguousQueryError(row=int(starts[run]), qid=run_ids[run], name=name)
    offsets = np.append(starts, qids.size).astype(np.int64)
    return offsets, run_ids


class NonContiguousQueryError(ValueError):
    """A query id appears again after rows of another query; ``row`` is the first row of the reappearance."""

    def __init__(self, row: int, qid, name: str = "qid"):
        self.row, self.qid = row, qid
        super().__init__(
            f"{name}: query id {qid} reappears at row {row} after rows of another query; "
            "the documents of a query must be contiguous")


def check_labels(labels, *, max_label: int | None = DEFAULT_MAX_LABEL, name: str = "labels") -> np.ndarray:
    """Validate relevance labels: finite, non-negative whole numbers, at most ``max_label``.

    Returns the labels as a writable float64 array (float64 is the engines' own label type; see :func:`writable`).
    Raises ``InvalidLabelError`` (a ``ValueError``) naming the first offending position.
    """
    labels = np.asarray(labels, dtype=np.float64)
    if labels.ndim != 1:
        raise ValueError(f"{name}: labels must be a 1-d array, got shape {labels.shape}")
    problems = (
        (~np.isfinite(labels), "is not finite"),
        (labels < 0, "is negative"),
        (labels != np.floor(labels), "is not a whole number"),
    )
    with np.errstate(invalid="ignore"):
        for mask, what in problems:
            if mask.any():
                i = int(np.flatnonzero(mask)[0])
                raise InvalidLabelError(i, labels[i], f"{what}; relevance labels must be non-negative integers",
                                        name=name)
    if max_label is not None and labels.size and labels.max() > max_label:
        i = int(np.argmax(labels))
        raise InvalidLabelError(i, labels[i], f"exceeds max_label={max_label} (LightGBM's default label_gain "
                                              "covers 0..30); raise max_label to accept it", name=name)
    return writable(labels)


def check_estimates(labels, *, name: str = "labels") -> np.ndarray:
    """Validate relevance estimates (labels that estimate relevance, from clicks): any finite real numbers, as a
    writable float64 array; ``InvalidLabelError`` names the first that is not finite."""
    labels = np.asarray(labels, dtype=np.float64)
    if labels.ndim != 1:
        raise ValueError(f"{name}: labels must be a 1-d array, got shape {labels.shape}")
    if not np.isfinite(labels).all():
        i = int(np.flatnonzero(~np.isfinite(labels))[0])
        raise InvalidLabelError(i, labels[i], "is not finite; relevance estimates must be finite numbers", name=name)
    return writable(labels)


#: the largest label whose gain 2^y - 1 is finite in float32, the type of the gradients and hessians the engines get
#: (2^128 is beyond float32's 3.4e38)
LARGEST_FLOAT32_GAIN_LABEL = 127


def relative_exp_gains(labels: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Each document's gain :math:`2^y - 1` divided by :math:`2^m`, ``m`` the largest label of its query, formed as
    :math:`2^{y - m} - 2^{-m}`: in [0, 1) for any label, where :math:`2^y` itself is infinite in float64 from
    y = 1024 on. For a quantity that a query's gains enter only as ratios (NDCG, a gradient divided by the ideal
    DCG) it is the same number; a power of two scales exactly, so with gains that are finite it is the same bit
    for bit. ``offsets`` are checked query offsets (every query non-empty)."""
    top = np.repeat(np.maximum.reduceat(labels, offsets[:-1]), np.diff(offsets)) if labels.size else labels
    return np.exp2(labels - top) - np.exp2(-top)


def exp_gains_within_float32(labels: np.ndarray, owner: str, remedy: str) -> np.ndarray:
    """The gains :math:`2^y - 1` of ``labels`` for an objective whose gradients have the gains' own scale (no
    normalisation by the ideal DCG); ``InvalidLabelError`` names the first label above
    :data:`LARGEST_FLOAT32_GAIN_LABEL`, whose gain would reach the engine as an infinite gradient."""
    if labels.size and labels.max() > LARGEST_FLOAT32_GAIN_LABEL:
        i = int(np.argmax(labels))
        raise InvalidLabelError(i, labels[i], f"has a gain 2^y - 1 beyond float32's range, the gradients' type; "
                                              f"labels up to {LARGEST_FLOAT32_GAIN_LABEL} are allowed ({remedy})",
                                name=owner)
    return np.exp2(labels) - 1.0


def writable(array: np.ndarray) -> np.ndarray:
    """``array``, or a copy of it where it is read-only (pandas 3's ``to_numpy()``, a memory map): Numba types
    read-only arrays apart and would compile every kernel a second time for them (9 more specialisations for
    PLRank's first call), which costs far more than the copy."""
    return array if array.flags.writeable else array.copy()


class InvalidLabelError(ValueError):
    """A label ``check_labels`` refuses; ``position`` is its index, ``reason`` says what is wrong with it."""

    def __init__(self, position: int, value: float, reason: str, name: str = "labels"):
        self.position, self.value, self.reason = position, float(value), reason
        super().__init__(f"{name}: label {self.value:g} at position {position} {reason}")


def check_scores(scores, n_docs: int, *, name: str = "scores", finite: bool = True) -> np.ndarray:
    """Scores as a writable 1-d float64 array of length ``n_docs`` (a column vector is flattened; see
    :func:`writable`); with ``finite``, NaN and infinite scores are refused."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim != 1 or scores.shape[0] != n_docs:
        raise ValueError(f"{name}: expected {n_docs} scores (one per document), got shape {scores.shape}")
    if finite and not np.isfinite(scores).all():
        i = int(np.flatnonzero(~np.isfinite(scores))[0])
        raise ValueError(f"{name}: score {scores[i]} at position {i} is not finite (the model's predictions "
                         "have diverged, or an init_score is infinite)")
    return writable(scores)


def cut_queries(offsets, rows) -> tuple[np.ndarray, np.ndarray]:
    """The queries that sorted row indices ``rows`` cut: those with some but not all of their rows in ``rows``.

    Returns the indices of the cut queries (into ``offsets``) and how many rows of each ``rows`` keeps.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    query_of_row = np.searchsorted(offsets, rows, side="right") - 1
    kept = np.bincount(query_of_row, minlength=offsets.size - 1)[:offsets.size - 1]
    cut = np.flatnonzero((kept > 0) & (kept < np.diff(offsets)))
    return cut, kept[cut]


class CutQueryError(ValueError):
    """A LightGBM Dataset that is a subset of another (``Dataset.subset``, as ``lgb.cv`` makes its folds) and
    keeps only part of some of its queries.

    ``query`` is the first cut query (its index in the Dataset the subset was taken from), ``kept`` and
    ``size`` its rows in the subset and in all, ``n_cut`` the number of cut queries. A subset made by hand
    must keep whole queries; ``lgb.cv`` needs ``folds=plboost.query_folds(...)``.
    """

    def __init__(self, owner: str, query: int, kept: int, size: int, n_cut: int):
        self.owner, self.query, self.kept, self.size, self.n_cut = owner, query, kept, size, n_cut
        others = f" (and {n_cut - 1} other queries are cut)" if n_cut > 1 else ""
        super().__init__(
            f"{owner}: this lgb.Dataset is a subset that keeps {kept} of the {size} rows of query {query}{others}: "
            "its folds cut queries (lgb.cv splits rows, not queries, for a custom objective, with nfold= or with "
            "folds of rows such as KFold's); pass folds=plboost.query_folds(train_set, nfold=...) to lgb.cv, or "
            "scikit-learn's GroupKFold over the query ids")

    def __reduce__(self):  # picklable, for process pools
        return type(self), (self.owner, self.query, self.kept, self.size, self.n_cut)
