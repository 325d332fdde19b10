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


#: runs this short are sorted by insertion before merging
_INSERTION_RUN = 16


@kernel
def stable_argsort(keys):
    """Indices that sort ``keys`` (no NaN) ascending, equal keys in their input order.

    The same as ``np.argsort(keys, kind="stable")``: a stable order is unique. A bottom-up merge sort of
    insertion-sorted runs, written here because Numba's generic ``argsort(kind="mergesort")`` costs about
    2.5 s to compile into every kernel that uses it (issue 17), and its quicksort must not be used (see
    SORTING in ``plboost/objectives/_base.py``).
    """
    n = keys.shape[0]
    order = np.empty(n, dtype=np.int64)  # np.arange would add a third to the compile time
    for i in range(n):
        order[i] = i
    for start in range(0, n, _INSERTION_RUN):
        end = min(start + _INSERTION_RUN, n)
        for i in range(start + 1, end):
            item = order[i]
            key = keys[item]
            j = i - 1
            while j >= start and keys[order[j]] > key:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = item
    if n <= _INSERTION_RUN:
        return order
    source = order
    target = np.empty(n, dtype=np.int64)
    width = _INSERTION_RUN
    while width < n:
        for left in range(0, n, 2 * width):
            middle = min(left + width, n)
            right = min(left + 2 * width, n)
            i, j, t = left, middle, left
            while i < middle and j < right:
                if keys[source[j]] < keys[source[i]]:  # strict: ties take the left run's first
                    target[t] = source[j]
                    j += 1
                else:
                    target[t] = source[i]
                    i += 1
                t += 1
            while i < middle:
                target[t] = source[i]
                i += 1
                t += 1
            while j < right:
                target[t] = source[j]
                j += 1
                t += 1
        source, target = target, source
        width *= 2
    return source
