import mpmath
import numpy as np
import pytest


def _central_differences(loss, scores, step="1e-12", digits=40):
    """Gradient and diagonal hessian of ``loss`` (a function of a list of mpmath numbers) at ``scores``, by
    central first and second differences one coordinate at a time, and the loss at ``scores`` (an mpf).

    At ``digits`` decimal digits, set for the call (mpmath.workdps) rather than globally at import, so that
    the precision does not depend on which test module was imported last; ``step`` is read at it.
    """
    with mpmath.workdps(digits):
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
