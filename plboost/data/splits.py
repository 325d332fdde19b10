"""A split's files (training, validation, test) loaded together with the same width of ``X``, in memory or out
of core (:func:`load_splits`, :func:`training_data` for the engines' helpers), and a model's scores on either kind
of data (:func:`predict_scores`). Above both loaders: it chooses between them."""

from __future__ import annotations

import os

import numpy as np

from . import svmlight
from .out_of_core import OutOfCoreData, choose_out_of_core, load_out_of_core
from .ranking_data import RankingData


def load_splits(*paths, out_of_core: bool | None = False, memory_budget_bytes: int | None = None, log=None,
                **options) -> list[RankingData | OutOfCoreData | None]:
    """Load files used together (train, validation, test) with the same width of ``X``.

    Each path (None is passed through) is read by :func:`plboost.data.load_svmlight` with ``options``; files
    whose largest feature index is smaller are widened with zero columns to the widest, as absent SVMlight
    features are 0.

    With ``out_of_core=True`` every file is read by :func:`load_out_of_core` instead (dense chunks on disk,
    batches of at most ``memory_budget_bytes``), giving :class:`OutOfCoreData`; with None,
    :func:`choose_out_of_core` decides for all of them from their estimated dense size and the memory available
    (saying so through ``log``, by default standard error, when it reads them out of core).
    """
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
        loaded = [None if path is None else svmlight.load_svmlight(path, **options) for path in paths]
    width = max(data.n_features for data in loaded if data is not None)
    return [None if data is None else data.widen(width) for data in loaded]


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
        return train, valid  # as they are: in-memory data keep their widths
    loaded = load_splits(*paths, out_of_core=out_of_core, memory_budget_bytes=memory_budget_bytes, log=log, **options)
    items = [loaded[i] if paths[i] is not None else item for i, item in enumerate(items)]
    _check_kind([item for item, path in zip(items, paths, strict=True) if path is None], out_of_core)
    present = [item for item in items if item is not None]
    width = max(item.n_features for item in present)
    return tuple(None if item is None else item.widen(width) for item in items)


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


def predict_scores(model, data) -> np.ndarray:
    """Scores of ``model`` (a :class:`plboost.engines.TrainedModel` or anything with ``predict(X)``) for every
    document of ``data``: in one call for :class:`~plboost.data.RankingData`, batch by batch of whole queries
    for :class:`OutOfCoreData`."""
    if not isinstance(data, OutOfCoreData):
        return model.predict(data.X)
    parts = [np.asarray(model.predict(batch.X), dtype=np.float64).reshape(-1) for batch in data.batches()]
    return np.concatenate(parts) if parts else np.empty(0)
