"""Plackett-Luce ranking policies of scores: sampled rankings, rank probabilities and expected exposure.

The policy. The scores ``s`` of a query and a temperature ``T > 0`` define the Plackett-Luce distribution over
its rankings (Plackett 1975; Luce 1959): each position, from the top, takes document d of those not yet placed
with probability

.. math::

    \\pi(d \\mid y_{1:k-1}) = \\frac{e^{s_d / T}}{\\sum_{d' \\notin y_{1:k-1}} e^{s_{d'} / T}}.

The policy is what a Plackett-Luce model is: a stochastic ranker (Oosterhuis, SIGIR 2021 and 2022; Singh and
Joachims, NeurIPS 2019). ``T = 0`` is its limit, the deterministic ranking by score, in which documents of equal
scores are ordered uniformly at random (the limit of PL of equal scores): every ranker is a policy, so the
estimators of :mod:`plboost.clicks` need no special case for a deterministic logger.

What a policy gives:

- :meth:`PlackettLucePolicy.sample`: rankings drawn with the Gumbel-max trick (the top ``k`` of
  :math:`s_d / T + G_d`, :math:`G_d = -\\log(-\\log u_d)`), from keyed draws: ranking i of a query reads numbers
  :math:`i n + t` of a counter-based stream (:mod:`plboost._random`) whose key hashes the seed and the query's
  scores, so a call is a pure function of its inputs (scores, offsets, temperature, seed), whatever the thread
  count;
- :meth:`PlackettLucePolicy.rank_probabilities`: each document's probability of each rank ``<= k``, exact for
  queries of at most :data:`EXACT_LIMIT` documents (a sum over the sets of documents placed above, O(2^n n^2)),
  otherwise the frequencies of sampled rankings, with their standard errors :math:`\\sqrt{p(1 - p) / N}`;
- :meth:`PlackettLucePolicy.exposure`: each document's expected exposure
  :math:`\\sum_{j \\le k} P(\\mathrm{rank}_d = j)\\, \\theta_j` under a position-examination model
  :math:`\\theta` (default :math:`1 / \\log_2(1 + j)`, DCG's discount): the policy-aware propensity of
  Oosterhuis and de Rijke (SIGIR 2020), and the exposure of Singh and Joachims (KDD 2018) and Diaz et al.
  (CIKM 2020).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ._constraints import SEED, Integer, Options, Real, check
from ._jit import helper, kernel, over_queries, widest_query
from ._queries import check_scores, offsets_from_boundaries
from ._random import score_stream_key, stream_order, uniform

#: rank probabilities are exact (every set of documents placed above) for queries of at most this many documents
EXACT_LIMIT = 12

#: how a rank-probability or exposure call computes: "auto" is exact up to ``EXACT_LIMIT`` documents, else sampled
METHODS = ("auto", "exact", "sampled")


class Estimate(NamedTuple):
    """Per-document values and their standard errors (0 where computed exactly)."""

    values: np.ndarray
    standard_errors: np.ndarray


def dcg_examination(k: int) -> np.ndarray:
    """:math:`\\theta_j = 1 / \\log_2(1 + j)` for ranks j = 1..k: DCG's discount, the default examination."""
    return 1.0 / np.log2(2.0 + np.arange(k))


class PlackettLucePolicy:
    """The Plackett-Luce ranking policy of ``scores`` (one per document, queries given by ``offsets``) at
    ``temperature`` (0: the deterministic ranking by score, ties in random order), over the top ``top_k`` ranks
    (None: every rank).

    >>> policy = PlackettLucePolicy([2.0, 1.0, 0.0], [0, 3], temperature=1.0)
    >>> policy.sample(2, seed=1)  # each document's rank, one row per ranking
    array([[1, 3, 2],
           [1, 2, 3]], dtype=int32)
    >>> policy.rank_probabilities().values.round(3)  # row: document, column: rank
    array([[0.665, 0.281, 0.053],
           [0.245, 0.511, 0.245],
           [0.09 , 0.208, 0.702]])

    Memory: :meth:`sample` returns n_samples x documents int32; :meth:`rank_probabilities`, documents x top_k
    float64 (twice, with the standard errors); :meth:`exposure`, two floats per document.
    """

    def __init__(self, scores, offsets, *, temperature: float = 1.0, top_k: int | None = None):
        self.offsets = offsets_from_boundaries(offsets, name="offsets")
        self.scores = check_scores(scores, int(self.offsets[-1]), name="scores")
        self.temperature = check(temperature, Real(low=0.0), "temperature", "PlackettLucePolicy")
        widest = int(np.diff(self.offsets).max())
        top_k = widest if top_k is None else check(top_k, Integer(low=1), "top_k", "PlackettLucePolicy")
        self.top_k = min(top_k, widest)

    def __repr__(self) -> str:
        return (f"PlackettLucePolicy({self.offsets.size - 1} queries, {self.scores.size} documents, "
                f"temperature={self.temperature:g}, top_k={self.top_k})")

    def sample(self, n_samples: int, *, seed: int = 0) -> np.ndarray:
        """``n_samples`` rankings of every query: an int32 array (n_samples, documents) of each document's rank
        in each ranking, 1 at the top, 0 below the top ``top_k``."""
        n_samples = check(n_samples, Integer(low=1), "n_samples", "PlackettLucePolicy.sample")
        seed = check(seed, SEED, "seed", "PlackettLucePolicy.sample")
        ranks = np.zeros((n_samples, self.scores.size), dtype=np.int32)
        over_queries(_sample_kernel, self.offsets, self.scores, self.offsets, self.temperature, self.top_k,
                     np.uint64(seed), ranks)
        return ranks

    def top_documents(self, counts, *, seed: int = 0) -> np.ndarray:
        """The top ``top_k`` documents of ``counts[q]`` rankings of each query q: an int64 array (sum of counts,
        top_k) of document indices (into ``scores``; -1 below a query's end), query by query, ranking j of query q
        at row ``sum(counts[:q]) + j``: the rankings :meth:`sample` gives as its rows, without the
        n_samples x documents array (what a simulated log of many impressions needs)."""
        counts = np.asarray(counts)
        if counts.shape != (self.offsets.size - 1,) or (counts.size and (counts.min() < 0)):
            raise ValueError(f"PlackettLucePolicy.top_documents: counts must hold a number >= 0 per query "
                             f"({self.offsets.size - 1}), got shape {counts.shape}")
        seed = check(seed, SEED, "seed", "PlackettLucePolicy.top_documents")
        starts = np.r_[0, np.cumsum(counts)].astype(np.int64)
        top = np.full((int(starts[-1]), self.top_k), -1, dtype=np.int64)
        over_queries(_top_kernel, self.offsets, self.scores, self.offsets, self.temperature, self.top_k,
                     np.uint64(seed), starts, top)
        return top

    def rank_probabilities(self, *, method: str = "auto", n_samples: int = 10_000, seed: int = 0) -> Estimate:
        """Each document's probability of each rank 1..``top_k``: a (documents, top_k) array, with standard
        errors. ``method``: "exact" (queries of at most ``EXACT_LIMIT`` documents; at temperature 0 any size),
        "sampled" (the frequencies of ``n_samples`` rankings), "auto" (exact where it can be)."""
        exact = self._exact_queries(method)
        probabilities = np.zeros((self.scores.size, self.top_k))
        errors = np.zeros_like(probabilities)
        self._exact(exact, probabilities)
        if not exact.all():
            n_samples, seed = self._sampling(n_samples, seed)
            counts = np.zeros_like(probabilities)
            self._tally(~exact, n_samples, seed, np.zeros(self.top_k), counts, np.zeros(0), np.zeros(0))
            sampled = np.repeat(~exact, np.diff(self.offsets))
            probabilities[sampled] = counts[sampled] / n_samples
            errors[sampled] = np.sqrt(probabilities[sampled] * (1.0 - probabilities[sampled]) / n_samples)
        return Estimate(probabilities, errors)

    def exposure(self, examination=None, *, method: str = "auto", n_samples: int = 10_000, seed: int = 0) -> Estimate:
        """Each document's expected exposure :math:`\\sum_{j \\le k} P(\\mathrm{rank} = j)\\, \\theta_j`, with
        standard errors. ``examination``: :math:`\\theta_1 .. \\theta_k` (default :func:`dcg_examination`); a
        shorter one examines nothing below its end."""
        theta = self._examination(examination)
        exact = self._exact_queries(method)
        values = np.zeros(self.scores.size)
        errors = np.zeros_like(values)
        if exact.any():
            probabilities = np.zeros((self.scores.size, self.top_k))
            self._exact(exact, probabilities)
            documents = np.repeat(exact, np.diff(self.offsets))
            values[documents] = probabilities[documents] @ theta
        if not exact.all():
            n_samples, seed = self._sampling(n_samples, seed)
            total, squares = np.zeros_like(values), np.zeros_like(values)
            self._tally(~exact, n_samples, seed, theta, np.zeros((0, 0)), total, squares)
            documents = np.repeat(~exact, np.diff(self.offsets))
            mean = total[documents] / n_samples
            variance = np.maximum(squares[documents] / n_samples - mean ** 2, 0.0) * n_samples / max(n_samples - 1, 1)
            values[documents] = mean
            errors[documents] = np.sqrt(variance / n_samples) if n_samples > 1 else np.inf
        return Estimate(values, errors)

    def _exact(self, exact: np.ndarray, probabilities: np.ndarray) -> None:
        if exact.any():
            over_queries(_exact_kernel, self.offsets, self.scores, self.offsets, exact, self.temperature,
                         self.top_k, probabilities)

    def _tally(self, queries, n_samples, seed, theta, counts, total, squares) -> None:
        over_queries(_tally_kernel, self.offsets, self.scores, self.offsets, queries, self.temperature, self.top_k,
                     np.uint64(seed), n_samples, theta, counts, total, squares)

    @staticmethod
    def _sampling(n_samples, seed) -> tuple[int, int]:
        return (check(n_samples, Integer(low=1), "n_samples", "PlackettLucePolicy"),
                check(seed, SEED, "seed", "PlackettLucePolicy"))

    def _exact_queries(self, method: str) -> np.ndarray:
        method = check(method, Options(*METHODS), "method", "PlackettLucePolicy")
        sizes = np.diff(self.offsets)
        small = (sizes <= EXACT_LIMIT) | (self.temperature == 0.0)
        if method == "exact" and not small.all():
            q = int(np.flatnonzero(~small)[0])
            raise ValueError(f"PlackettLucePolicy: exact rank probabilities take queries of at most {EXACT_LIMIT} "
                             f"documents at a temperature above 0, and query {q} has {sizes[q]}; use "
                             "method='sampled' (or 'auto')")
        return small if method != "sampled" else np.zeros_like(small)

    def _examination(self, examination) -> np.ndarray:
        if examination is None:
            return dcg_examination(self.top_k)
        theta = np.asarray(examination, dtype=np.float64)
        if theta.ndim != 1 or theta.size == 0 or not np.all(np.isfinite(theta)) or np.any(theta < 0):
            raise ValueError("PlackettLucePolicy: examination must be a 1-d array of finite numbers >= 0 (one per "
                             f"rank from the top), got {examination!r}")
        return np.r_[theta, np.zeros(max(0, self.top_k - theta.size))][:self.top_k]


#: the longest top k that :func:`_ranking` selects by insertion rather than by sorting the whole list (an insertion
#: shifts up to k kept documents)
_PARTIAL_SELECTION = 32


@helper
def _top_by_key(keys, n, k, top):
    """``argsort(-keys[:n], kind="mergesort")[:k]`` into ``top[:k]`` (largest key first, equal keys by index) by
    insertion into the k kept so far: O(n) comparisons and about k log(n / k) insertions for keys in random order,
    where the sort takes O(n log n) and allocates."""
    count = 0
    for d in range(n):
        value = keys[d]
        if count == k:
            if value <= keys[top[k - 1]]:  # an equal key comes after: its index is larger
                continue
            j = k - 1
        else:
            j = count
            count += 1
        while j > 0 and keys[top[j - 1]] < value:
            top[j] = top[j - 1]
            j -= 1
        top[j] = d
    return top


@helper
def _ranking(scores, lo, hi, order, key, i, temperature, keys, by_score, k, chosen):
    """Ranking i of query ``lo:hi`` (the documents' indices within the query, top first), at least its first ``k``
    (only they are meant: with distinct keys and k up to ``_PARTIAL_SELECTION`` only they are computed, into the
    scratch ``chosen``): the order of the
    Gumbel-perturbed ``(s - s_max) / T``, documents whose key is equal (T = 0, or keys of -inf at a tiny T) in
    the order of their scores and then of their draws (the limit T -> 0). ``order``: the query's stream order,
    ``by_score``: the documents by score, descending (stable); ``keys`` is scratch."""
    n = hi - lo
    top = scores[lo + by_score[0]]
    tied = temperature == 0.0
    for t in range(n):
        u = uniform(key, np.uint64(i * n + t))
        d = order[t]
        if temperature == 0.0:
            keys[d] = u
        else:
            keys[d] = (scores[lo + d] - top) / temperature - np.log(-np.log(u)) if u > 0.0 else -np.inf
            tied = tied or keys[d] == -np.inf
    if not tied:
        if k <= _PARTIAL_SELECTION:
            return _top_by_key(keys, n, k, chosen)
        return np.argsort(-keys[:n], kind="mergesort")
    if temperature > 0.0:  # keys of -inf, in the order of their scores
        return by_score[np.argsort(-keys[:n][by_score], kind="mergesort")]
    by_draw = np.argsort(-keys[:n], kind="mergesort")
    return by_draw[np.argsort(-scores[lo:hi][by_draw], kind="mergesort")]


@helper
def _query_stream(seed, scores, lo, hi, relative, zeros):
    """What every ranking of query ``lo:hi`` starts from: its stream order and key (a hash of the seed and the
    query's scores: PL-Rank-3's key, with every label 0 and no score narrowed), and its documents by score,
    descending (stable)."""
    n = hi - lo
    order = stream_order(scores[lo:hi])
    top = scores[lo + order[0]]
    key = score_stream_key(seed, scores[lo:hi], zeros, 0, n, order, relative, top, np.inf)
    return order, key, np.argsort(-scores[lo:hi], kind="mergesort")


@kernel
def _sample_kernel(first, end, scores, offsets, temperature, top_k, seed, ranks):
    """Rankings of queries ``first <= q < end``: ``ranks[i, d]`` is d's rank (1-based; 0 below ``top_k``) in
    ranking i."""
    widest = widest_query(offsets, first, end)
    relative, zeros, keys, chosen = np.empty(widest), np.zeros(widest), np.empty(widest), np.empty(widest, np.int64)
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        order, key, by_score = _query_stream(seed, scores, lo, hi, relative, zeros)
        for i in range(ranks.shape[0]):
            ranked = _ranking(scores, lo, hi, order, key, i, temperature, keys, by_score, min(hi - lo, top_k), chosen)
            for j in range(min(hi - lo, top_k)):
                ranks[i, lo + ranked[j]] = j + 1


@kernel
def _top_kernel(first, end, scores, offsets, temperature, top_k, seed, starts, top):
    """The top documents of rankings ``0 .. starts[q + 1] - starts[q] - 1`` of queries ``first <= q < end``."""
    widest = widest_query(offsets, first, end)
    relative, zeros, keys, chosen = np.empty(widest), np.zeros(widest), np.empty(widest), np.empty(widest, np.int64)
    for q in range(first, end):
        if starts[q + 1] == starts[q]:
            continue
        lo, hi = offsets[q], offsets[q + 1]
        order, key, by_score = _query_stream(seed, scores, lo, hi, relative, zeros)
        for i in range(starts[q + 1] - starts[q]):
            ranked = _ranking(scores, lo, hi, order, key, i, temperature, keys, by_score, min(hi - lo, top_k), chosen)
            for j in range(min(hi - lo, top_k)):
                top[starts[q] + i, j] = lo + ranked[j]


@kernel
def _tally_kernel(first, end, scores, offsets, queries, temperature, top_k, seed, n_samples, theta, counts, total,
                  squares):
    """Over ``n_samples`` rankings of each of the queries ``first <= q < end`` marked in ``queries``, without
    storing them: ``counts[d, j]`` (if it has rows) how often d held rank j + 1, ``total[d]`` and ``squares[d]``
    (if given) the sums of ``theta`` and its square at d's ranks."""
    widest = widest_query(offsets, first, end)
    relative, zeros, keys, chosen = np.empty(widest), np.zeros(widest), np.empty(widest), np.empty(widest, np.int64)
    for q in range(first, end):
        if not queries[q]:
            continue
        lo, hi = offsets[q], offsets[q + 1]
        order, key, by_score = _query_stream(seed, scores, lo, hi, relative, zeros)
        for i in range(n_samples):
            ranked = _ranking(scores, lo, hi, order, key, i, temperature, keys, by_score, min(hi - lo, top_k), chosen)
            for j in range(min(hi - lo, top_k)):
                d = lo + ranked[j]
                if counts.shape[0] > 0:
                    counts[d, j] += 1.0
                if total.size > 0:
                    total[d] += theta[j]
                    squares[d] += theta[j] * theta[j]


@kernel
def _exact_kernel(first, end, scores, offsets, exact, temperature, top_k, probabilities):
    """Rank probabilities of the queries ``first <= q < end`` marked ``exact``: at ``T > 0`` by the sum over
    every set of documents placed above (P of a set: the sum over its last member d of P(set - d) times d's
    choice probability, computed relative to the best score left, so that no weight underflows to 0 / 0), at
    ``T = 0`` uniform over the ranks of each block of tied scores."""
    for q in range(first, end):
        if not exact[q]:
            continue
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        k = min(n, top_k)
        if temperature == 0.0:
            _tied_blocks(scores, lo, hi, k, probabilities)
            continue
        weight = np.empty(n)
        placed = np.zeros(1 << n)  # probability that exactly this set of documents holds the first ranks
        placed[0] = 1.0
        for mask in range(1 << n):
            if placed[mask] == 0.0:
                continue
            above = 0
            best = -np.inf
            for d in range(n):
                if mask >> d & 1:
                    above += 1
                else:
                    best = max(best, scores[lo + d])
            if above >= k:
                continue
            rest = 0.0
            for d in range(n):
                weight[d] = 0.0 if mask >> d & 1 else np.exp((scores[lo + d] - best) / temperature)
                rest += weight[d]
            for d in range(n):
                if weight[d] > 0.0:
                    p = placed[mask] * weight[d] / rest
                    probabilities[lo + d, above] += p
                    placed[mask | 1 << d] += p


@helper
def _tied_blocks(scores, lo, hi, k, probabilities):
    """The deterministic ranking's rank probabilities: each block of equal scores, holding ranks a..b, gives each
    member 1 / (b - a + 1) at each of those ranks (within the top k)."""
    n = hi - lo
    order = np.argsort(-scores[lo:hi], kind="mergesort")
    start = 0
    while start < n:
        stop = start + 1
        while stop < n and scores[lo + order[stop]] == scores[lo + order[start]]:
            stop += 1
        share = 1.0 / (stop - start)
        for t in range(start, stop):
            for j in range(start, min(stop, k)):
                probabilities[lo + order[t], j] = share
        start = stop
