"""Training on a Dask cluster with plboost's objectives, without splitting a query across workers.

Both engines train on Dask collections whose partitions live on the workers; a custom objective is then
called on each worker with that worker's local rows only. That is exactly right for plboost's objectives,
whose gradients are computed query by query (PLRank's permutations, too, are drawn from each query's own
labels): the gradients of a partition equal the full data's gradients restricted to it, so results do
not depend on how queries are spread over partitions (``tests/engines/test_dask.py`` checks it). It is
wrong as soon as one query's rows sit in two partitions: each worker then sees a truncated query and
trains on it, silently. LightGBM's Dask ranker needs ``group`` chunks aligned with the data's chunks, and
XGBoost's Dask training takes ``qid`` per row and splits queries across workers unless the data are
partitioned on query boundaries.

:class:`DaskRankingData` holds the collections of one dataset with every partition a whole number of
queries; :func:`ranking_collections` builds it from SVMlight files (one partition per file, read on the
workers) or from one file or :class:`~plboost.data.RankingData` split by query; :func:`check_partitions`
finds a query split across partitions and :func:`repartition_on_queries` repairs one.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._extras import import_extra
from .._engine_registry import get_engine
from ..clicks import ClickData
from . import adapter, check_capability, check_estimates_objective
from ._base import TrainedModel, describe_objective
from .parameters import check_engine_params, check_leaf_values
from .settings import TrainingSettings, training_settings

dask = import_extra("dask", "training on Dask", "'plboost[dask]'")
da = import_extra("dask.array", "training on Dask", "'plboost[dask]'")


class QuerySplitError(ValueError):
    """A query whose rows lie in more than one partition."""


@dataclass
class DaskRankingData:
    """A ranking dataset as Dask collections, partitioned on query boundaries.

    ``X`` (rows x features), ``labels`` and ``qid`` (one query id per row, increasing) share their row
    chunks; ``group`` holds the query sizes, chunked so that its chunk k describes row chunk k.
    ``relevance_estimates``: the labels are a click log's relevance estimates (see
    :class:`~plboost.data.RankingData`), which only an objective that takes estimates trains on.
    """

    X: da.Array
    labels: da.Array
    qid: da.Array
    group: da.Array
    relevance_estimates: bool = False

    @classmethod
    def from_arrays(cls, X, labels, qid, *, repair: bool = False) -> DaskRankingData:
        """From row-aligned Dask arrays with a query id per row (ids increasing).

        A query split across partitions raises :class:`QuerySplitError`, or with ``repair=True`` the
        arrays are rechunked on query boundaries (:func:`repartition_on_queries`).
        """
        if not (len(X.chunks[0]) == len(labels.chunks[0]) == len(qid.chunks[0])
                and X.chunks[0] == labels.chunks[0] == qid.chunks[0]):
            raise ValueError("X, labels and qid must have the same row chunks")
        try:
            check_partitions(qid)
        except QuerySplitError:
            if not repair:
                raise
            X, labels, qid = repartition_on_queries(X, labels, qid)
        return cls(X, labels, qid, _group_sizes_per_chunk(qid))

    @property
    def n_partitions(self) -> int:
        return len(self.X.chunks[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])


def one_partition_per_worker(client, data: DaskRankingData) -> DaskRankingData:
    """``data`` computed on ``client``'s workers with partition k on worker k (in address order), where there are
    no more partitions than workers: left to Dask, two partitions of a small file could land on one worker and
    XGBoost's other workers would train on an empty DMatrix. With more partitions than workers, as given."""
    workers = sorted(client.scheduler_info()["workers"])
    if not workers or data.n_partitions > len(workers):
        return data
    persisted = [client.persist([array.blocks[k] for array in (data.X, data.labels, data.qid, data.group)],
                                workers=[worker], allow_other_workers=False)
                 for k, worker in enumerate(workers[:data.n_partitions])]
    return DaskRankingData(*(da.concatenate([blocks[i] for blocks in persisted]) for i in range(4)),
                           relevance_estimates=data.relevance_estimates)


def _parts_from_data(data, n_partitions: int):
    """Split a RankingData into at most ``n_partitions`` pieces of whole queries and similar row counts."""
    targets = np.linspace(0, data.n_docs, n_partitions + 1)[1:-1]
    query_cuts = np.unique(np.r_[0, np.searchsorted(data.offsets, targets), data.n_queries])
    return [data.subset(np.arange(a, b)) for a, b in itertools.pairwise(query_cuts)]


def ranking_collections(sources, *, n_partitions: int | None = None, n_features: int | None = None,
                        client=None, load_options: dict | None = None) -> DaskRankingData:
    """Dask collections of a ranking dataset, one partition per file or split by query.

    Parameters
    ----------
    sources : path, list of paths, RankingData or ClickData
        Several SVMlight files: one partition each, read on the workers (with ``client``, else by the
        local scheduler). One file, a :class:`~plboost.data.RankingData` or a click log's
        :class:`~plboost.clicks.ClickData` (its documents labelled with the estimates): read here and split into
        ``n_partitions`` partitions of whole queries.
    n_partitions : int, optional
        Partitions of a single source (default 2).
    n_features : int, optional
        Width of ``X``; by default the widest file's.
    load_options : dict, optional
        Options of :func:`plboost.data.load_svmlight`.

    Query ids are renumbered 0, 1, ... in the order of the partitions and their rows, so they increase
    as XGBoost needs; queries are never split across partitions.
    """
    from ..data import RankingData, load_svmlight

    options = dict(load_options or {})
    if isinstance(sources, (str, Path)):
        sources = [sources]
    if isinstance(sources, ClickData):
        sources = sources.to_ranking_data()
    if isinstance(sources, RankingData) or len(sources) == 1:
        data = sources if isinstance(sources, RankingData) else load_svmlight(sources[0], n_features=n_features,
                                                                           **options)
        parts = _parts_from_data(data, n_partitions or 2)
        return _collections([dask.delayed(part) for part in parts],
                            [(part.n_docs, part.n_queries, part.n_features) for part in parts], n_features,
                            data.relevance_estimates)
    if n_partitions is not None and n_partitions != len(sources):
        raise ValueError(f"{len(sources)} files make {len(sources)} partitions, not n_partitions={n_partitions}")
    loaded = [dask.delayed(load_svmlight)(str(path), n_features=n_features, **options) for path in sources]
    shape_of = [dask.delayed(lambda d: (d.n_docs, d.n_queries, d.n_features))(part) for part in loaded]
    shapes = (client.compute(shape_of, sync=True) if client is not None else dask.compute(*shape_of))
    if client is not None:
        loaded = client.persist(loaded)  # read once, on the workers
    return _collections(loaded, list(shapes), n_features)


def _collections(parts, shapes, n_features, relevance_estimates: bool = False) -> DaskRankingData:
    width = n_features or max(shape[2] for shape in shapes)
    widened = [dask.delayed(lambda d, w: d.widen(w))(part, width) for part in parts]
    query_start = np.cumsum([0] + [shape[1] for shape in shapes])
    X, labels, qid, group = [], [], [], []
    for part, (rows, queries, _), first in zip(widened, shapes, query_start[:-1], strict=True):
        X.append(da.from_delayed(dask.delayed(lambda d: d.X)(part), shape=(rows, width), dtype=np.float32))
        labels.append(da.from_delayed(dask.delayed(lambda d: d.labels)(part), shape=(rows,), dtype=np.float64))
        qid.append(da.from_delayed(dask.delayed(lambda d, f: np.repeat(f + np.arange(d.n_queries), d.group_sizes))(
            part, first), shape=(rows,), dtype=np.int64))
        group.append(da.from_delayed(dask.delayed(lambda d: d.group_sizes)(part), shape=(queries,), dtype=np.int64))
    return DaskRankingData(da.concatenate(X), da.concatenate(labels), da.concatenate(qid), da.concatenate(group),
                           relevance_estimates=relevance_estimates)


def check_partitions(qid) -> None:
    """Raise :class:`QuerySplitError` if a query id of the row-chunked Dask array ``qid`` appears in more
    than one chunk, or if the ids decrease within a chunk (XGBoost needs them sorted)."""
    firsts_lasts = dask.compute(*[dask.delayed(lambda b: (b[0], b[-1], bool(np.all(np.diff(b) >= 0))) if b.size
                                               else None)(block) for block in qid.to_delayed().ravel()])
    previous = None
    for k, bounds in enumerate(firsts_lasts):
        if bounds is None:
            continue
        first, last, ordered = bounds
        if not ordered:
            raise QuerySplitError(f"query ids decrease within partition {k}; sort the rows by query id")
        if previous is not None and first <= previous[1]:
            what = "is split between" if first == previous[1] else "goes back to an earlier query in"
            raise QuerySplitError(f"query {first} {what} partitions {previous[0]} and {k}; repartition on query "
                                  "boundaries (plboost.engines.dask.repartition_on_queries)")
        previous = (k, last)


def repartition_on_queries(X, labels, qid):
    """Rechunk row-aligned Dask arrays so that no query crosses a chunk boundary: every boundary inside a
    query moves to the query's first row. ``qid`` must increase; returns the rechunked (X, labels, qid)."""
    sizes = np.array(qid.chunks[0])
    boundaries = np.cumsum(sizes)[:-1]
    ids = qid.compute()
    if np.any(np.diff(ids) < 0):
        raise QuerySplitError("query ids decrease: sort the rows by query id first")
    moved = [int(np.searchsorted(ids, ids[b], side="left")) for b in boundaries]
    cuts = np.unique([0, *moved, ids.size])
    chunks = tuple(np.diff(cuts).tolist())
    return X.rechunk((chunks, X.chunks[1])), labels.rechunk((chunks,)), qid.rechunk((chunks,))


def _group_sizes_per_chunk(qid):
    """Query sizes chunked like the rows of ``qid`` (which must not split queries)."""
    blocks = [dask.delayed(lambda b: np.diff(np.flatnonzero(np.r_[True, b[1:] != b[:-1], True])))(block)
              for block in qid.to_delayed().ravel()]
    counts = dask.compute(*[dask.delayed(len)(b) for b in blocks])
    return da.concatenate([da.from_delayed(b, shape=(c,), dtype=np.int64) for b, c in zip(blocks, counts, strict=True)])


def train_dask(engine: str, client, objective, train: DaskRankingData, settings: TrainingSettings | None = None, *,
               valid: DaskRankingData | None = None, **setting_keywords) -> TrainedModel:
    """Train on the cluster of ``client``; returns a :class:`TrainedModel` holding a local booster.

    LightGBM trains through ``lightgbm.DaskLGBMRanker`` (a plboost objective through its ``.sklearn()``
    adapter; LightGBM's Dask interface has no early stopping); XGBoost through ``xgboost.dask.train``
    with ``obj=`` and the rows' ``qid``. The partitions are checked first (:func:`check_partitions`).
    All work goes to ``client``'s cluster, even when the process holds other clients. With ``verbosity`` below 0
    (the default), LightGBM's network set-up lines are hidden on the workers during training; an engine's
    refusal of a parameter raises ValueError.
    """
    s = training_settings(settings, setting_keywords)
    check_capability(engine, "dask", "training on Dask")
    check_estimates_objective(objective, train)
    if s.leaf_values != "diagonal":
        check_leaf_values(s.leaf_values, get_engine(engine).name, objective, dask=True)
    with client.as_current():
        return _train_dask(engine, client, objective, train, valid, s)


def _train_dask(engine, client, objective, train, valid, settings: TrainingSettings) -> TrainedModel:
    engine = get_engine(engine)
    check_partitions(train.qid)
    train = one_partition_per_worker(client, train)
    if valid is not None:
        check_partitions(valid.qid)
    name, objective_params = describe_objective(objective)
    check_engine_params(engine.name, dict(settings.engine_params), objective=name, eval_at=settings.eval_at)
    if not isinstance(objective, str):
        objective.warm_up()
    start = time.perf_counter()
    booster, params, history, best = adapter(engine).fit_dask(client, objective, train, valid, settings)
    seconds = time.perf_counter() - start
    return TrainedModel(engine.name, booster, name, objective_params, params, seconds,
                        rounds=engine.trained_rounds(booster), best_iteration=best, valid_history=history)
