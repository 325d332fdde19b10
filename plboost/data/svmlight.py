"""The in-memory loader of SVMlight/LETOR files: :func:`load_svmlight` reads a file into a :class:`RankingData`.

The file is read by the parser of :mod:`plboost.data.svmlight_parser` (the format, its checks and errors are
described there), with a dense ``X`` grown chunk by chunk or a sparse one; the arrays are kept in the on-disk
cache of parsed files (:mod:`plboost.data.cache`) and read from it on the next load. Files too large for memory
are read by :func:`plboost.data.load_out_of_core` instead.

:class:`RankingData`, :class:`DataFormatError` and :func:`query_file_candidates` are importable from here as
before; they live in :mod:`plboost.data.ranking_data` and :mod:`plboost.data.svmlight_parser`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._constraints import Options, Real, check
from .._queries import DEFAULT_MAX_LABEL, check_labels
from . import cache as _cache
from . import svmlight_parser
from .ranking_data import RankingData
from .svmlight_parser import DataFormatError, query_file_candidates

__all__ = ["DataFormatError", "RankingData", "load_svmlight", "query_file_candidates"]


def load_svmlight(path, *, n_features: int | None = None, dense: bool = True, dtype=np.float32,
                  zero_based: bool = False, max_label: int | None = DEFAULT_MAX_LABEL, query_file="auto",
                  cache: bool = True, progress: bool = False, max_dense_gib="auto") -> RankingData:
    """Read a ranking file in SVMlight/LETOR format (plain or gzip-compressed).

    Parameters
    ----------
    path : str or Path
        The file: lines ``label qid:Q i:v ... # comment``.
    n_features : int, optional
        Width of ``X``, to align files that are used together (train, validation, test); a feature index
        beyond it is an error. By default, the largest feature index in the file.
    dense : bool, default=True
        A dense ``ndarray`` (default) or a ``scipy.sparse.csr_matrix``.
    dtype : float32 or float64, default=float32
        Type of the features. Labels are always float64.
    zero_based : bool, default=False
        Feature index ``j`` goes to column ``j - 1`` (the LETOR convention, where indices start at 1);
        with ``zero_based=True`` to column ``j``.
    max_label : int or None, default=30
        Largest relevance label accepted (LightGBM's default ``label_gain`` covers 0..30); None for no limit.
    query_file : "auto", path or None, default="auto"
        Where the query sizes of a file without a ``qid:`` column are: "auto" looks beside the file for
        ``<name>.query`` and, for ``<stem>.gz``, ``<stem>.query``; a path names the file; None forbids
        query files. When the file has a ``qid:`` column, a query file found or named must agree with it.
    cache : bool, default=True
        Reuse the arrays parsed before from the same file with the same options (see
        :mod:`plboost.data.cache`), and store them after parsing.
    progress : bool, default=False
        Show a progress bar over the bytes read (compressed bytes for a ``.gz`` file).
    max_dense_gib : float, "auto" or None, default="auto"
        Largest dense ``X`` accepted, in GiB (2**30 bytes); a larger one is refused before it is allocated,
        suggesting ``dense=False``. "auto": the machine's physical memory, and 1 GiB for a matrix of which
        less than 1% of the cells are given in the file (typically a stray large feature index); None: no
        limit. Sparse input (``dense=False``) has no limit.

    Returns
    -------
    RankingData

    Raises
    ------
    FileNotFoundError
        The file, or a query file named by ``query_file``, does not exist.
    IsADirectoryError
        The file, or a query file named by ``query_file``, is a directory.
    DataFormatError
        The file is malformed; the message and the ``path`` and ``line`` attributes say where. Refused:
        tokens that are not ``index:value`` numbers, a missing or non-numeric label, labels that are
        negative, fractional, not finite or above ``max_label``, infinite feature values (NaN is accepted
        and means missing), a ``qid:`` on some lines but not others, a query id that reappears after
        another query (ids need not be sorted, but each query's lines must be contiguous), a feature index
        beyond ``n_features`` (or 0 in a 1-based file), no data lines at all, no ``qid:`` column and no
        query file, query files whose sizes are not positive integers summing to the number of rows, text in
        UTF-16 or UTF-32, a path that is not a regular file (a pipe, a device), and a dense ``X`` above
        ``max_dense_gib``.
    """
    path, dtype = svmlight_parser.checked_load_arguments(path, n_features, dtype)
    check(max_dense_gib, (Real(low=0, low_open=True), Options("auto"), None), "max_dense_gib")
    query_path = svmlight_parser.find_query_file(path, query_file)

    def current_key() -> str:
        options = dict(n_features=n_features, dense=dense, dtype=dtype.str, zero_based=zero_based,
                       max_label=max_label,
                       query_file=None if query_path is None else _cache.file_identity(query_path))
        return _cache.entry_key(path, options)

    key = current_key() if cache else None
    if key is not None:
        data = _cache.read_entry(key, lambda arrays: _from_arrays(arrays, path, dense=dense, dtype=dtype,
                                                                  max_label=max_label))
        if data is not None:
            return data
        digests = _cache.racy_digests([path] if query_path is None else [path, query_path])

    parser = svmlight_parser.Parser(path, n_features=n_features, dense=dense, dtype=dtype, zero_based=zero_based,
                                    max_label=max_label, max_dense_gib=max_dense_gib)
    data = parser.parse(query_path, progress=progress)
    if key is not None and key == current_key():  # unchanged while it was parsed
        _cache.write_entry(key, _to_arrays(data), digests)
    return data


def _to_arrays(data: RankingData) -> dict[str, np.ndarray]:
    arrays = dict(labels=data.labels, qids=data.qids, offsets=data.offsets)
    if sp.issparse(data.X):
        arrays.update(X_data=data.X.data, X_indices=data.X.indices, X_indptr=data.X.indptr,
                      X_shape=np.array(data.X.shape))
    else:
        arrays.update(X=data.X)
    return arrays


def _from_arrays(arrays: dict[str, np.ndarray], source: Path, *, dense: bool = True, dtype=np.float32,
                 max_label: int | None = DEFAULT_MAX_LABEL) -> RankingData:
    """The data of a cache entry; ValueError if it is not what the options ask for (a damaged entry), labels
    beyond the loader's limits included."""
    if dense:
        X = arrays["X"]
    else:
        X = sp.csr_matrix((arrays["X_data"], arrays["X_indices"], arrays["X_indptr"]),
                          shape=tuple(arrays["X_shape"]))
    if X.dtype != dtype:
        raise ValueError(f"cached X is {X.dtype}, not {np.dtype(dtype)}")
    return RankingData(X, check_labels(arrays["labels"], max_label=max_label), arrays["qids"], arrays["offsets"],
                       source)
