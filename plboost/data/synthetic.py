"""Synthetic LETOR-like ranking data, for tests, examples and the demo.

The generator imitates what makes real web-search data hard for a ranker, not any particular dataset:

* query sizes vary a lot (log-normal, clipped to a range);
* most documents are irrelevant: labels 0..4 in roughly MSLR-WEB10K's shares (about half 0, a third 1,
  an eighth 2, a few 3 and 4), and some small queries have no relevant document at all;
* relevance is a non-linear function of a few latent document qualities (an interaction, a threshold, a
  square, an absolute value, a saturation) plus a per-query offset and noise, so a tree model learns much
  but not all of it;
* each feature is a noisy view of one latent quality, in one of the forms real features take: bounded
  scores in (0, 1), scores min-max normalised within the query (as in LETOR 4.0), heavy-tailed counts,
  mostly-zero scores, a query-level feature (the same for every document of a query), and pure noise.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np

from .._constraints import Integer, check
from .ranking_data import RankingData

#: default shares of the labels 0..4 (roughly those of MSLR-WEB10K)
MSLR_LABEL_SHARES = (0.52, 0.31, 0.13, 0.03, 0.01)

_N_LATENT = 6
# Column kinds repeat this cycle (then are shuffled): roughly the mix of real feature sets, with every kind
# among the first six, so that any dataset of six or more features has all of them.
_KIND_CYCLE = ("bounded", "normalized", "counts", "sparse", "noise", "query", "bounded", "normalized", "bounded",
               "counts", "sparse", "bounded", "normalized", "noise", "bounded", "counts", "sparse", "bounded",
               "normalized", "bounded")


def make_synthetic(*, n_queries: int = 200, n_features: int = 46, docs_per_query: tuple[int, int] = (5, 150),
                   label_shares=MSLR_LABEL_SHARES, noise: float = 1.0, seed: int = 0) -> RankingData:
    """A random LETOR-like ranking dataset (see the module docstring for what it imitates).

    Parameters
    ----------
    n_queries : int, default=200
        Number of queries; their ids are 1, 2, ..., in order.
    n_features : int, default=46
        Number of feature columns (float32, dense).
    docs_per_query : (int, int), default=(5, 150)
        Smallest and largest query size. Sizes are log-normal around the geometric mean of the two, with
        about 95% of the queries inside the range before clipping.
    label_shares : sequence of float, default=MSLR_LABEL_SHARES
        Share of each label 0, 1, ...; labels are cut from the relevance scores at these quantiles, so
        the shares hold over the whole dataset (not within each query).
    noise : float, default=1.0
        Standard deviation of the unexplainable part of relevance (the latent qualities and the query
        offset have standard deviation 1 and 0.7). Larger is harder.
    seed : int, default=0
        Seed of ``numpy.random.default_rng``; the same arguments give the same data.

    Returns
    -------
    RankingData
        With ``source=None``.
    """
    lo, hi = docs_per_query
    if not 1 <= lo <= hi:
        raise ValueError(f"docs_per_query must be (lo, hi) with 1 <= lo <= hi, got {docs_per_query}")
    n_queries = check(n_queries, Integer(low=1), "n_queries", "make_synthetic")
    n_features = check(n_features, Integer(low=1), "n_features", "make_synthetic")
    shares = np.asarray(label_shares, dtype=np.float64)
    if shares.ndim != 1 or shares.size < 2 or np.any(shares < 0) or not np.isclose(shares.sum(), 1.0):
        raise ValueError(f"label_shares must be two or more non-negative shares summing to 1, got {label_shares}")
    rng = np.random.default_rng(seed)

    sigma = np.log(hi / lo) / 4
    sizes = np.clip(np.rint(rng.lognormal(np.log(np.sqrt(lo * hi)), sigma, n_queries)), lo, hi).astype(np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    query_of_row = np.repeat(np.arange(n_queries), sizes)
    n_docs = int(offsets[-1])

    latent = rng.standard_normal((n_docs, _N_LATENT))
    query_offset = 0.7 * rng.standard_normal(n_queries)
    u0, u1, u2, u3, u4, u5 = latent.T
    relevance = (u0 + 0.8 * u1 * (u2 > 0) + 0.5 * np.maximum(u3, 0) ** 2 - 0.5 * np.abs(u4)
                 + 0.5 * np.tanh(2 * u5) + query_offset[query_of_row] + noise * rng.standard_normal(n_docs))
    cuts = np.quantile(relevance, np.cumsum(shares)[:-1])
    labels = np.searchsorted(cuts, relevance).astype(np.float64)

    X = _features(rng, latent, query_offset, offsets, query_of_row, n_features)
    return RankingData(X, labels, np.arange(1, n_queries + 1, dtype=np.int64), offsets)


def _features(rng, latent, query_offset, offsets, query_of_row, n_features) -> np.ndarray:
    """Feature matrix: column ``j`` is a noisy view of latent quality ``factor[j]`` in the form ``kind[j]``."""
    n_docs = latent.shape[0]
    kind = rng.permutation(np.resize(np.array(_KIND_CYCLE), n_features))
    factor = rng.permutation(np.resize(np.arange(_N_LATENT), n_features))
    noise_scale = rng.uniform(0.3, 1.5, size=n_features)
    view = latent[:, factor] + noise_scale * rng.standard_normal((n_docs, n_features))

    X = np.empty((n_docs, n_features))
    columns = {name: np.flatnonzero(kind == name) for name in _KIND_CYCLE}
    X[:, columns["bounded"]] = 1 / (1 + np.exp(-view[:, columns["bounded"]]))
    normalized = view[:, columns["normalized"]]
    low = np.minimum.reduceat(normalized, offsets[:-1], axis=0)[query_of_row]
    span = np.maximum.reduceat(normalized, offsets[:-1], axis=0)[query_of_row] - low
    X[:, columns["normalized"]] = np.divide(normalized - low, span, out=np.zeros_like(normalized), where=span > 0)
    X[:, columns["counts"]] = np.floor(np.exp(1 + 1.5 * view[:, columns["counts"]]))
    X[:, columns["sparse"]] = np.maximum(view[:, columns["sparse"]] - 0.5, 0)
    query_level = query_offset[:, None] + 0.5 * rng.standard_normal((query_offset.size, columns["query"].size))
    X[:, columns["query"]] = query_level[query_of_row]
    X[:, columns["noise"]] = rng.random((n_docs, columns["noise"].size))
    return X.astype(np.float32)


def write_synthetic_splits(directory, *, n_queries: tuple[int, int, int] = (300, 100, 100), seed: int = 0,
                           compress: bool = False, **kwargs) -> dict[str, Path]:
    """Write synthetic ``train``, ``vali`` and ``test`` files in LETOR layout (as MQ2008's folds are).

    The three splits are consecutive queries of one :func:`make_synthetic` dataset, so they share its
    feature definitions; query ids run on across splits.

    Parameters
    ----------
    directory : str or Path
        Where to write ``train.txt``, ``vali.txt`` and ``test.txt`` (created if needed).
    n_queries : (int, int, int), default=(300, 100, 100)
        Queries in the train, validation and test files.
    seed : int, default=0
        Seed of the generator.
    compress : bool, default=False
        Write gzip-compressed ``.txt.gz`` files.
    **kwargs
        Further arguments of :func:`make_synthetic` (``n_features``, ``docs_per_query``, ...).

    Returns
    -------
    dict
        ``{"train": path, "vali": path, "test": path}``.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data = make_synthetic(n_queries=sum(n_queries), seed=seed, **kwargs)
    bounds = np.cumsum([0, *n_queries])
    suffix = ".txt.gz" if compress else ".txt"
    return {name: data.subset(np.arange(start, stop)).save_svmlight(directory / f"{name}{suffix}")
            for name, (start, stop) in zip(("train", "vali", "test"), itertools.pairwise(bounds), strict=True)}
