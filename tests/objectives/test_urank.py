"""uRank against finite differences of a plain reference loss (uMart is in test_umart.py)."""

import mpmath
import numpy as np
import pytest

from plboost.objectives import URank

#: working precision of the references: set per call (mpmath.workdps), not globally at import, so that it
#: does not depend on which test module was imported last
DIGITS = 40


@mpmath.workdps(DIGITS)
def urank_reference_loss(scores, labels):
    """1/(K-1) * sum over documents above the lowest label of w_d [log(e^{s_d} + Z(y_d)) - s_d]."""
    unique = sorted(set(labels))
    if len(unique) < 2:
        return mpmath.mpf(0)
    total = mpmath.mpf(0)
    for s_d, y_d in zip(scores, labels, strict=True):
        if y_d == unique[0]:
            continue
        below = mpmath.fsum(mpmath.exp(s) for s, y in zip(scores, labels, strict=True) if y < y_d)
        total += (2 ** int(y_d) - 1) * (mpmath.log(mpmath.exp(s_d) + below) - s_d)
    return total / (len(unique) - 1)


@pytest.mark.interpreted_once
@pytest.mark.parametrize("n, scale, max_label", [
    (1, 1.0, 2), (2, 1.0, 1), (3, 1.0, 2), (6, 10.0, 3), (12, 1.0, 4), (25, 1e4, 4), (40, 3.0, 2),
    (60, 1.0, 4), (60, 1e4, 1),
])
def test_urank_matches_finite_differences(n, scale, max_label, central_differences):
    rng = np.random.default_rng([n, int(scale), max_label])
    labels = rng.integers(0, max_label + 1, size=n).astype(float)
    scores = rng.normal(scale=scale, size=n)
    scores[::5] = scores[0]  # tied scores too
    grad, hess = URank().gradients(scores, labels, np.array([0, n]))
    fd_grad, fd_hess, loss = central_differences(lambda s: urank_reference_loss(s, labels), scores, digits=DIGITS)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, 1e-6), rtol=1e-5, atol=1e-6)
    assert abs(float(grad.astype(np.float64).sum())) < 1e-5 * max(1.0, np.abs(grad).sum())
    assert URank().losses(scores, labels, np.array([0, n]))[0] == pytest.approx(float(loss), rel=1e-12, abs=1e-12)


def test_urank_queries_with_one_label_have_no_loss_and_no_gradient():
    grad, hess = URank().gradients(np.array([1.0, -3.0, 0.5, 2.0]), np.array([2.0, 2.0, 2.0, 1.0]),
                                   np.array([0, 3, 4]))
    np.testing.assert_array_equal(grad, 0.0)
    np.testing.assert_array_equal(hess, np.float32(1e-6))
