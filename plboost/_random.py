"""Counter-based random numbers for kernels: reproducible, parallel, and local to each query.

A query's random stream is derived from the seed and the query's own content (its size and labels),
never from its position in the dataset, so the same query gets the same draws whatever dataset, file
order, fold or Dask partition it sits in, and whatever the thread count. The generator is SplitMix64
(Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014) applied to a
counter, the construction SplitMix64 itself uses for its sequence.
"""

import numpy as np

from ._jit import helper, kernel
from ._numerics import stable_argsort

_GOLDEN_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@helper
def splitmix64(x):
    """The SplitMix64 output function of state ``x`` (a uint64)."""
    z = x + _GOLDEN_GAMMA
    z = (z ^ (z >> np.uint64(30))) * _MIX_1
    z = (z ^ (z >> np.uint64(27))) * _MIX_2
    return z ^ (z >> np.uint64(31))


@helper
def query_stream_key(seed, labels, lo, hi):
    """The key of the random stream of query ``labels[lo:hi]``: a hash of the seed, size and labels."""
    key = splitmix64(np.uint64(seed))
    key = splitmix64(key ^ np.uint64(hi - lo))
    for i in range(lo, hi):
        key = splitmix64(key ^ np.uint64(np.int64(labels[i])))
    return key


@helper
def uniform(key, counter):
    """The ``counter``-th uniform double in [0, 1) of the stream ``key``."""
    z = splitmix64(key + np.uint64(counter) * _GOLDEN_GAMMA)
    return np.float64(z >> np.uint64(11)) * _UNIT


#: hashed in place of the relative score of a document more than the widest gap below its query's top
_FAR = np.uint64(0x7FF8_0000_0000_0001)


@kernel
def stream_order(scores):
    """The documents of a query by score, descending, ties in input order: document ``stream_order[t]`` draws
    uniform number t of each ranking's stream (see ``score_stream_key``)."""
    return stable_argsort(-scores)


@helper
def score_stream_key(seed, scores, labels, lo, hi, order, relative, top_score, widest_gap):
    """The key of the draws of query ``lo:hi`` at these scores: a hash of the seed, the size, and, document by
    document in ``order`` (``stream_order``), the label and the bits of ``s - s_max`` (a marker for documents
    more than ``widest_gap`` below the top, whose relative scores narrowing may change). ``relative`` is scratch.

    So the draws are a pure function of the query's content and scores: each boosting round draws anew, a
    query whose scores a round leaves unchanged draws the same again, and shuffling the documents of a query
    (of distinct scores) shuffles the draws with them."""
    n = hi - lo
    for t in range(n):
        relative[t] = scores[lo + order[t]] - top_score
    bits = relative[:n].view(np.uint64)
    key = splitmix64(splitmix64(np.uint64(seed)) ^ np.uint64(n))
    for t in range(n):
        key = splitmix64(key ^ np.uint64(np.int64(labels[lo + order[t]])))
        key = splitmix64(key ^ (bits[t] if relative[t] > -widest_gap else _FAR))
    return key
