import contextlib
import sys

import mpmath
import numpy as np
import pytest


@contextlib.contextmanager
def untraced():
    """Runs its block with no trace function (coverage's, under pytest --cov), then puts it back.

    The tests' slow references (mpmath losses, enumerations) are the tests' own code, outside what coverage
    measures (plboost), yet its tracer still sees each of their millions of Python calls: it doubled the time of
    the tests that use them. Kernel calls stay outside such blocks, so what coverage measures is unchanged.
    """
    tracer = sys.gettrace()
    sys.settrace(None)
    try:
        yield
    finally:
        sys.settrace(tracer)


def _central_differences(loss, scores, step="1e-12", digits=40):
    """Gradient and diagonal hessian of ``loss`` (a function of a list of mpmath numbers) at ``scores``, by
    central first and second differences one coordinate at a time, and the loss at ``scores`` (an mpf).

    At ``digits`` decimal digits, set for the call (mpmath.workdps) rather than globally at import, so that
    the precision does not depend on which test module was imported last; ``step`` is read at it.
    """
    with untraced(), mpmath.workdps(digits):
        step = mpmath.mpf(step)
        base = [mpmath.mpf(float(s)) for s in scores]
        center = loss(base)
        grad, hess = [], []
        for i in range(len(base)):
            up, down = list(base), list(base)
            up[i] += step
            down[i] -= step
            loss_up, loss_down = loss(up), loss(down)
            grad.append(float((loss_up - loss_down) / (2 * step)))
            hess.append(float((loss_up - 2 * center + loss_down) / step ** 2))
        return np.array(grad), np.array(hess), center


@pytest.fixture(scope="session")
def central_differences():
    """``central_differences(loss, scores, step="1e-12", digits=40)``: high-precision central differences of
    a reference loss, as (gradient, diagonal hessian, loss)."""
    return _central_differences
