"""One place for the Numba options every kernel uses.

Kernels are compiled with ``cache=True`` (compiled code is kept beside the sources, so a new process does
not recompile) and ``nogil=True``. Parallel kernels use ``prange`` over queries; each query writes only its
own slice of the outputs, so no synchronisation is needed.
"""

import numba

_OPTIONS = dict(cache=True, nogil=True, fastmath=False, error_model="numpy")


def kernel(func=None, *, parallel=False):
    """Decorate ``func`` as a compiled kernel (``@kernel`` or ``@kernel(parallel=True)``)."""
    decorate = numba.njit(parallel=parallel, **_OPTIONS)
    return decorate if func is None else decorate(func)
