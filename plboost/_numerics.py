"""Small numerical building blocks shared by the kernels."""

import numpy as np

from ._jit import helper, kernel


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
