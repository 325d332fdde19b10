"""Small numerical building blocks shared by the kernels."""

import numpy as np

from ._jit import kernel


@kernel
def logaddexp(a, b):
    """log(e^a + e^b) without overflow; -inf is the identity (the log of an empty sum)."""
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    if a > b:
        return a + np.log1p(np.exp(b - a))
    return b + np.log1p(np.exp(a - b))
