"""Cross-validation folds that keep whole queries, for ``lgb.cv`` with a plboost objective.

LightGBM's ``lgb.cv`` splits by query only for its own ranking objectives (``lambdarank``, ``rank_xendcg``);
with a callable objective it splits rows, which cuts every query between training and validation folds
(plboost's objectives then refuse the training folds with :class:`plboost._queries.CutQueryError`).
:func:`query_folds` makes folds of whole queries to pass as ``lgb.cv(..., folds=...)``.
"""

from __future__ import annotations


import numpy as np

from ._constraints import Boolean, Integer, check
from ._engine_registry import dataset_labels, engine_of
from ._queries import offsets_from_boundaries, offsets_from_sizes


def query_folds(data, nfold: int = 5, *, seed=0, shuffle: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
    """``nfold`` (train rows, test rows) pairs in which every query lies wholly in one test fold.

    Parameters
    ----------
    data : RankingData, lightgbm.Dataset, xgboost.DMatrix or array of query sizes
        Where the query layout comes from: a :class:`plboost.data.RankingData` (its ``offsets``), an
        ``lgb.Dataset`` built with ``group=`` (or constructed), an ``xgb.DMatrix`` with groups
        (``group_ptr``), or the query sizes themselves.
    nfold : int
        The number of folds, from 2 to the number of queries.
    seed : int
        Seed of the random assignment of queries to folds (NumPy's ``default_rng``).
    shuffle : bool
        With ``False`` the folds are runs of consecutive queries, in the data's order (``seed`` is unused).

    Returns
    -------
    list of (ndarray, ndarray)
        For each fold, the sorted int64 row indices of its training part and of its test part. The test
        parts partition the rows; each training part is the complement of its test part.

    The queries are shuffled and then cut into ``nfold`` runs at the query boundaries nearest to multiples of
    ``n_docs / nfold``, so the folds are balanced in number of documents (each within about the size of the
    largest query of ``n_docs / nfold``), not in number of queries; every fold holds at least one query.
    Pass the result as ``lgb.cv(params, train_set, folds=query_folds(train_set, nfold=5))`` (``lgb.cv``'s
    own ``nfold``, ``shuffle`` and ``seed`` are then unused). ``xgb.cv`` needs none: it keeps the queries of
    a DMatrix with groups whole by itself (and refuses ``folds=`` for such a DMatrix, which it cannot slice).

    >>> sizes = [3, 1, 2, 4]  # 4 queries: rows 0-2, 3, 4-5 and 6-9
    >>> for train, test in query_folds(sizes, nfold=2, seed=0):
    ...     print(train, test)
    [3 6 7 8 9] [0 1 2 4 5]
    [0 1 2 4 5] [3 6 7 8 9]
    >>> [test.tolist() for _, test in query_folds(sizes, nfold=2, shuffle=False)]
    [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9]]
    """
    offsets = query_offsets(data)
    n_queries = offsets.size - 1
    nfold = check(nfold, Integer(low=2), "nfold", "query_folds")
    shuffle = check(shuffle, Boolean(), "shuffle", "query_folds")
    if nfold > n_queries:
        raise ValueError(f"nfold={nfold} exceeds the number of queries ({n_queries}); every fold needs a whole query")

    sizes = np.diff(offsets)
    order = np.random.default_rng(seed).permutation(n_queries) if shuffle else np.arange(n_queries)
    docs_before = np.r_[0, np.cumsum(sizes[order])]  # documents in the first c queries of ``order``
    targets = docs_before[-1] * np.arange(1, nfold) / nfold
    cuts = np.searchsorted(docs_before, targets)  # the first query count reaching each target ...
    nearer_below = targets - docs_before[cuts - 1] < docs_before[cuts] - targets
    cuts = np.r_[0, cuts - nearer_below, n_queries]  # ... or the one before it, if nearer
    for k in range(1, nfold):  # at least one query per fold
        cuts[k] = max(cuts[k], cuts[k - 1] + 1)
    for k in range(nfold - 1, 0, -1):
        cuts[k] = min(cuts[k], cuts[k + 1] - 1)

    fold_of_query = np.empty(n_queries, dtype=np.int64)
    for k in range(nfold):
        fold_of_query[order[cuts[k]:cuts[k + 1]]] = k
    fold_of_row = np.repeat(fold_of_query, sizes)
    return [(np.flatnonzero(fold_of_row != k), np.flatnonzero(fold_of_row == k)) for k in range(nfold)]


def query_offsets(data) -> np.ndarray:
    """Query offsets (``n_queries + 1`` entries from 0) of a RankingData, lgb.Dataset, xgb.DMatrix or sizes."""
    engine = engine_of(data, default=None)
    if engine is not None:
        return engine.query_offsets(data)
    if hasattr(data, "offsets") and hasattr(data, "labels"):  # plboost's RankingData
        return offsets_from_boundaries(data.offsets, name="offsets")
    sizes = np.asarray(data)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"data: expected a RankingData, {dataset_labels()} or a 1-d array of query sizes, "
                         f"got {type(data).__name__} of shape {sizes.shape}")
    return offsets_from_sizes(sizes, name="data")

