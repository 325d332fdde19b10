"""Small numerical building blocks shared by the kernels."""

import numpy as np

from ._jit import helper, kernel

#: exp(x) = 2^n e^r with n = round(x log2(e)) and |r| <= ln(2)/2; ln(2) split so that n ln2_hi is exact
_LOG2_E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
#: 2^n for -1022 <= n <= 1023, looked up rather than built from bits (Numba has no scalar bit cast)
_POWERS_OF_TWO = np.ldexp(1.0, np.arange(-1022, 1024))
#: outside [_EXP_LOW, _EXP_HIGH] exp underflows to a subnormal or 0, or overflows
_EXP_LOW = -708.0
_EXP_HIGH = 709.0


@helper
def exp_vectorizable(x):
    r"""``exp(x)`` written so that a loop over it vectorises: no call, no branch, only selects.

    Numba compiles ``np.exp`` to a call of libm's scalar ``exp`` per element (Numba's vectorised SVML
    calls need an SVML-patched LLVM, which llvmlite's wheels are not). Here, Cody and Waite's reduction
    :math:`x = n \ln 2 + r` with :math:`n = \mathrm{round}(x / \ln 2)`, :math:`|r| \le \ln(2)/2`, then
    :math:`e^r` by its Taylor polynomial of degree 12 (truncation below :math:`0.347^{13}/13! < 2 \cdot
    10^{-16}`), times :math:`2^n` from a table. Within 3 ulp of ``np.exp`` for ``-708 <= x <= 709``;
    below, 0 (the absolute difference is under ``exp(-708)``, 3.3e-308);
    above, inf (``np.exp`` overflows above 709.78); NaN stays NaN. Meant for the exponents of softmaxes,
    ``x <= 0``.
    """
    c = x if x >= _EXP_LOW else _EXP_LOW  # NaN too: the table index stays in range
    c = c if c <= _EXP_HIGH else _EXP_HIGH
    n = np.floor(c * _LOG2_E + 0.5)
    r = (c - n * _LN2_HI) - n * _LN2_LO
    p = 1.0 + r * (1.0 + r * (1 / 2 + r * (1 / 6 + r * (1 / 24 + r * (1 / 120 + r * (1 / 720 + r * (
        1 / 5040 + r * (1 / 40320 + r * (1 / 362880 + r * (1 / 3628800 + r * (1 / 39916800 + r * (
            1 / 479001600))))))))))))
    e = p * _POWERS_OF_TWO[np.int64(n) + 1022]
    e = e if x <= _EXP_HIGH else np.inf
    return e if x >= _EXP_LOW else (0.0 if x < _EXP_LOW else x)


@helper
def logaddexp(a, b):
    """log(e^a + e^b) without overflow; -inf is the identity (the log of an empty sum)."""
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))


@helper
def score_range(scores, lo, hi):
    """The largest and the smallest of ``scores[lo:hi]`` (a query's top score and bottom score; ``lo < hi``)."""
    top = scores[lo]
    bottom = scores[lo]
    for i in range(lo + 1, hi):
        top = max(top, scores[i])
        bottom = min(bottom, scores[i])
    return top, bottom


#: runs this short are sorted by insertion before merging (and such keys by insertion alone)
_INSERTION_RUN = 16
#: the insertion sort after the buckets gives up, to the merge sort, once it has moved this many times as many
#: elements as there are keys (keys the buckets spread badly: a few far from the rest)
_MOVES_PER_KEY = 8
#: keys of one sign whose magnitudes span a wider ratio than this are bucketed by their logarithm
_WIDE_RATIO = 256.0
_SIGN_BIT = np.uint64(0x8000_0000_0000_0000)
_LOW_BITS = np.uint64(0x7FFF_FFFF_FFFF_FFFF)


@kernel
def stable_argsort(keys):
    """Indices that sort ``keys`` (no NaN) ascending, equal keys in their input order.

    The same as ``np.argsort(keys, kind="stable")``: a stable order is unique. The keys are first spread into
    as many buckets as there are keys by a non-decreasing map (``_place_in_buckets``), which keeps equal keys
    together and in input order, and an insertion sort then orders each bucket's few keys: time linear in the
    keys where the map spreads them evenly, faster than a merge sort at the sizes of queries (docs/benchmarks.md). Where
    it does not (the insertion sort moves more than ``_MOVES_PER_KEY`` elements per key), and for at most
    ``_INSERTION_RUN`` keys, a bottom-up merge sort of insertion-sorted runs finishes, carrying the keys with
    their indices. Written here because Numba's generic ``argsort(kind="mergesort")`` takes seconds to compile
    into every kernel that uses it (docs/benchmarks.md), and its quicksort must not be used (see SORTING in
    ``plboost/objectives/_base.py``).
    """
    n = keys.shape[0]
    order = np.empty(n, dtype=np.int64)  # np.arange would add a third to the compile time
    placed = np.empty(n, dtype=keys.dtype)  # the keys travel with their indices: no lookups through order
    if n > _INSERTION_RUN and _place_in_buckets(keys, order, placed):
        if _insertion_sort(order, placed, 0, n, _MOVES_PER_KEY * n):
            return order
    else:
        for i in range(n):
            order[i] = i
            placed[i] = keys[i]
    for start in range(0, n, _INSERTION_RUN):
        _insertion_sort(order, placed, start, min(start + _INSERTION_RUN, n), n * n)
    if n <= _INSERTION_RUN:
        return order
    source, source_keys = order, placed
    target, target_keys = np.empty(n, dtype=np.int64), np.empty(n, dtype=keys.dtype)
    width = _INSERTION_RUN
    while width < n:
        for left in range(0, n, 2 * width):
            middle = min(left + width, n)
            right = min(left + 2 * width, n)
            i, j, t = left, middle, left
            while i < middle and j < right:
                right_first = source_keys[j] < source_keys[i]  # strict: ties take the left run's first
                target[t] = source[j] if right_first else source[i]
                target_keys[t] = source_keys[j] if right_first else source_keys[i]
                j += 1 if right_first else 0
                i += 0 if right_first else 1
                t += 1
            while i < middle:
                target[t] = source[i]
                target_keys[t] = source_keys[i]
                i += 1
                t += 1
            while j < right:
                target[t] = source[j]
                target_keys[t] = source_keys[j]
                j += 1
                t += 1
        source, target = target, source
        source_keys, target_keys = target_keys, source_keys
        width *= 2
    return source


@helper
def _insertion_sort(order, placed, start, end, most_moves):
    """Sort ``placed[start:end]`` by insertion, moving ``order`` alike; False, leaving a permutation of both, as
    soon as more than ``most_moves`` elements have moved."""
    moves = 0
    for i in range(start + 1, end):
        item = order[i]
        key = placed[i]
        j = i - 1
        while j >= start and placed[j] > key:
            order[j + 1] = order[j]
            placed[j + 1] = placed[j]
            j -= 1
        order[j + 1] = item
        placed[j + 1] = key
        moves += i - 1 - j
        if moves > most_moves:
            return False
    return True


@helper
def _place_in_buckets(keys, order, placed):
    """Place the keys (and their indices, in ``order``) by bucket, bucket b being the keys that a non-decreasing
    map sends to b, in input order within a bucket; False (nothing placed) where the keys' range is not finite
    or too narrow to divide by.

    The map is linear in the key between the smallest and the largest, except for keys of one sign whose
    magnitudes span more than ``_WIDE_RATIO`` (YetiRank's e^{s + ε}): there it is the key's bits read as an
    integer in the keys' order, about linear in log |key|. Floating-point subtraction, multiplication and
    rounding never reverse an order, so equal keys share a bucket and greater keys never go to an earlier one."""
    n = keys.shape[0]
    low = np.float64(keys[0]) + 0.0
    high = low
    for i in range(1, n):
        low = min(low, np.float64(keys[i]))
        high = max(high, np.float64(keys[i]))
    spread = high - low
    if not np.isfinite(spread):
        return False
    buckets = np.empty(n, dtype=np.int64)
    smallest, largest = (low, high) if low > 0.0 else (-high, -low)
    if smallest > 0.0 and largest > _WIDE_RATIO * smallest:
        images = np.empty(n)
        bits = images.view(np.uint64)
        for i in range(n):
            images[i] = np.float64(keys[i]) + 0.0  # -0.0 as 0.0: equal keys, equal bits
        lowest = ~np.uint64(0)
        highest = np.uint64(0)
        for i in range(n):  # the bits in the keys' order: negative keys' all flipped, positive keys' sign bit
            bits[i] ^= _SIGN_BIT | (bits[i] >> np.uint64(63)) * _LOW_BITS
            lowest = min(lowest, bits[i])
            highest = max(highest, bits[i])
        shift = np.uint64(0)
        while (highest - lowest) >> shift >= np.uint64(n):
            shift += np.uint64(1)
        for i in range(n):
            buckets[i] = np.int64((bits[i] - lowest) >> shift)
    elif spread > 0.0 and np.isfinite((n - 1) / spread):
        scale = (n - 1) / spread
        for i in range(n):
            buckets[i] = min(np.int64((np.float64(keys[i]) - low) * scale), n - 1)
    elif spread == 0.0:
        buckets[:] = 0
    else:  # a spread so narrow that (n - 1) / spread overflows
        return False
    starts = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        starts[buckets[i] + 1] += 1
    for b in range(n):
        starts[b + 1] += starts[b]
    for i in range(n):
        at = starts[buckets[i]]
        starts[buckets[i]] = at + 1
        order[at] = i
        placed[at] = keys[i]
    return True


# --------------------------------------------------------------------------------------------------
# The top k of n keys, by a heap of k (YetiRank's rankings of long queries)

@helper
def worse(key_a, index_a, key_b, index_b):
    """Whether (key_a, index_a) ranks below (key_b, index_b): a lower key, or an equal key and a later index."""
    return key_a < key_b or (key_a == key_b and index_a > index_b)


@helper
def sift_down(heap_key, heap_index, size, i):
    """Restore the min-heap (worst at the root) below position i."""
    while True:
        child = 2 * i + 1
        if child >= size:
            return
        right = child + 1
        if right < size and worse(heap_key[right], heap_index[right], heap_key[child], heap_index[child]):
            child = right
        if not worse(heap_key[child], heap_index[child], heap_key[i], heap_index[i]):
            return
        heap_key[i], heap_key[child] = heap_key[child], heap_key[i]
        heap_index[i], heap_index[child] = heap_index[child], heap_index[i]
        i = child


@helper
def largest_k(keys, n, k, heap_key, heap_index, top):
    """The k largest of ``keys[:n]``, best first, into ``top[:k]`` (ties: the lower index first): a min-heap of
    the best k so far, O(n + k log k) when most keys are below the heap's root, O(n log k) at worst."""
    for i in range(k):
        heap_key[i] = keys[i]
        heap_index[i] = i
    for i in range(k // 2 - 1, -1, -1):
        sift_down(heap_key, heap_index, k, i)
    for i in range(k, n):
        if worse(heap_key[0], heap_index[0], keys[i], i):
            heap_key[0] = keys[i]
            heap_index[0] = i
            sift_down(heap_key, heap_index, k, np.int64(0))
    heap_to_top(heap_key, heap_index, k, top)


@helper
def heap_to_top(heap_key, heap_index, k, top):
    """Pop the heap of the best k, worst first, to the back of ``top[:k]``: best first."""
    for size in range(k, 0, -1):
        top[size - 1] = heap_index[0]
        heap_key[0] = heap_key[size - 1]
        heap_index[0] = heap_index[size - 1]
        sift_down(heap_key, heap_index, size - 1, np.int64(0))
