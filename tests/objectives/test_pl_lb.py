"""PL-LB, the lower bound of the likelihood of tied grades, against its formula written plainly, its derivatives,
and the likelihood it bounds (PL-Partition)."""

import mpmath
import numpy as np
import pytest

from plboost.objectives import PLLowerBound, PLPartition

DIGITS = 40


@mpmath.workdps(DIGITS)
def lower_bound_loss(scores, labels):
    """-Σ over the steps (each label S above all lower labels R) of log [n_S! Π_S e^{s_i} / (Σ_{S∪R} e^{s_j})^{n_S}].
    """
    total = mpmath.mpf(0)
    for level in sorted(set(labels), reverse=True)[:-1]:
        upper = [s for s, y in zip(scores, labels, strict=True) if y == level]
        below = [s for s, y in zip(scores, labels, strict=True) if y <= level]
        everything = mpmath.fsum(mpmath.exp(s) for s in below)
        total -= mpmath.log(mpmath.factorial(len(upper))) + mpmath.fsum(upper) - len(upper) * mpmath.log(everything)
    return total


@pytest.mark.parametrize("seed", range(4))
def test_lower_bound_matches_finite_differences_and_bounds_the_likelihood(seed, central_differences):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(2, 25))
    scores = rng.normal(scale=3.0, size=n)
    labels = rng.integers(0, 4, size=n).astype(float)
    labels[0], labels[-1] = 3.0, 0.0
    offsets = np.array([0, n])
    grad, hess = PLLowerBound().gradients(scores, labels, offsets)
    fd_grad, fd_hess, loss = central_differences(lambda s: lower_bound_loss(s, labels), scores, digits=DIGITS)
    np.testing.assert_allclose(grad, fd_grad, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, 1e-6), rtol=2e-6, atol=1e-7)
    bound = PLLowerBound().losses(scores, labels, offsets)[0]
    assert bound == pytest.approx(float(loss), rel=1e-12)
    assert bound >= PLPartition().losses(scores, labels, offsets)[0] - 1e-9  # -log of a lower bound


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_is_the_likelihood_where_every_upper_grade_has_one_document(seed):
    """With n_S = 1, P(S ≻ R) = e^{s} / Σ_{S∪R} e^{s_j} is the bound itself: the two losses agree, on several
    queries at once, of sizes 1 to 30 and scores up to ±50."""
    rng = np.random.default_rng(300 + seed)
    sizes = rng.integers(1, 31, size=6)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = np.concatenate([np.r_[np.arange(min(n - 1, 4), 0, -1.0), np.zeros(n - min(n - 1, 4))]
                             for n in sizes])
    scores = rng.uniform(-50, 50, size=offsets[-1])
    np.testing.assert_allclose(PLLowerBound().losses(scores, labels, offsets),
                               PLPartition().losses(scores, labels, offsets), rtol=1e-9, atol=1e-12)


def test_a_query_of_one_grade_or_one_document_has_no_loss_and_no_gradient():
    offsets = np.array([0, 1, 4])
    scores, labels = np.array([0.3, 1.0, -2.0, 5.0]), np.array([2.0, 1.0, 1.0, 1.0])
    grad, hess = PLLowerBound().gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad, 0.0)
    np.testing.assert_array_equal(PLLowerBound().losses(scores, labels, offsets), 0.0)
