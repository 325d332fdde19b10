"""ListNet against finite differences of a plain reference loss (the generic tests cover it as every
registered objective: engines, copies, threads, extremes)."""

import mpmath
import numpy as np
import pytest

from plboost.objectives import ListNet

DIGITS = 40


@mpmath.workdps(DIGITS)
def listnet_reference_loss(scores, labels, offsets, target="softmax", skip_uniform=True):
    """Sum over queries of -sum_j t_j log(e^{s_j} / sum_k e^{s_k}), t the labels' top-one distribution;
    with ``skip_uniform``, queries whose labels are all equal count 0."""
    total = mpmath.mpf(0)
    for lo, hi in zip(offsets[:-1], offsets[1:], strict=True):
        s = scores[lo:hi]
        if skip_uniform and len(set(labels[lo:hi])) == 1:
            continue
        if target == "softmax":
            weights = [mpmath.exp(mpmath.mpf(float(y))) for y in labels[lo:hi]]
        elif target == "gain":
            weights = [mpmath.mpf(2) ** int(y) - 1 for y in labels[lo:hi]]
        else:  # relevance estimates, the weights themselves
            weights = [mpmath.mpf(float(y)) for y in labels[lo:hi]]
        if sum(weights) == 0:
            continue
        norm = 1 if target == "estimate" else mpmath.fsum(weights)
        log_z = mpmath.log(mpmath.fsum(mpmath.exp(x) for x in s))
        total -= mpmath.fsum(w / norm * (x - log_z) for w, x in zip(weights, s, strict=True))
    return total


def random_queries(seed, sizes, scale, max_label):
    rng = np.random.default_rng(seed)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, max_label + 1, size=offsets[-1]).astype(float)
    scores = rng.normal(scale=scale, size=offsets[-1])
    scores[::4] = scores[0]  # tied scores
    return scores, labels, offsets


@pytest.mark.interpreted_once
@pytest.mark.parametrize("skip_uniform", [True, False])
@pytest.mark.parametrize("target", ["softmax", "gain"])
@pytest.mark.parametrize("sizes, scale, max_label", [
    ([1], 1.0, 2), ([2], 1.0, 1), ([1, 2, 3], 2.0, 2), ([7, 30], 1.0, 4), ([25], 1e3, 4), ([40, 5], 30.0, 1),
    ([12], 1.0, 0),
])
def test_listnet_matches_finite_differences(sizes, scale, max_label, target, skip_uniform, central_differences):
    scores, labels, offsets = random_queries([len(sizes), sum(sizes), int(scale), max_label], sizes, scale, max_label)
    obj = ListNet(target=target, skip_uniform_queries=skip_uniform, hessian_floor=0)
    grad, hess = obj.gradients(scores, labels, offsets)
    fd_grad, fd_hess, loss = central_differences(
        lambda s: listnet_reference_loss(s, labels, offsets, target, skip_uniform), scores, digits=DIGITS)
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, fd_hess, rtol=1e-5, atol=1e-6)
    assert obj.losses(scores, labels, offsets).sum() == pytest.approx(float(loss), rel=1e-12, abs=1e-12)


@pytest.mark.interpreted_once
@pytest.mark.parametrize("curvature", ["exact", "bound"])
@pytest.mark.parametrize("sizes, scale, largest", [
    ([1], 1.0, 2.0), ([2], 1.0, 0.3), ([1, 2, 3], 2.0, 5.0), ([7, 30], 1.0, 12.0), ([25], 1e3, 3.0),
    ([40, 5], 30.0, 1.0), ([12], 1.0, 0.0),
])
def test_the_estimate_target_matches_finite_differences_of_the_weighted_cross_entropy(sizes, scale, largest,
                                                                                       curvature,
                                                                                       central_differences):
    """Real, non-negative estimates (zeros, ties and IPS-sized ones among them) as unnormalised weights."""
    scores, _, offsets = random_queries([len(sizes), sum(sizes), int(scale), 7], sizes, scale, 1)
    rng = np.random.default_rng([sum(sizes), 5])
    estimates = np.where(rng.random(offsets[-1]) < 0.3, 0.0, rng.uniform(0.0, largest, offsets[-1]))
    estimates[1::5] = estimates[0]
    obj = ListNet(target="estimate", curvature=curvature, hessian_floor=0)
    assert obj.takes_estimates and not ListNet().takes_estimates
    grad, hess = obj.gradients(scores, estimates, offsets)
    fd_grad, fd_hess, loss = central_differences(
        lambda s: listnet_reference_loss(s, estimates, offsets, "estimate"), scores, digits=DIGITS)
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-5, atol=1e-6)
    if curvature == "exact":
        np.testing.assert_allclose(hess, fd_hess, rtol=1e-5, atol=1e-6)
    else:  # W / 4 per document of a query of two or more that is not left out, a bound of the exact curvature
        weights = np.add.reduceat(estimates, offsets[:-1])
        uniform = np.array([len(set(estimates[lo:hi])) == 1 for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)])
        bound = np.repeat(np.where(uniform | (np.diff(offsets) < 2), 0.0, weights / 4), np.diff(offsets))
        np.testing.assert_allclose(hess, bound, rtol=1e-6)
        assert np.all(hess >= fd_hess.astype(np.float64) - 1e-6)
    assert obj.losses(scores, estimates, offsets).sum() == pytest.approx(float(loss), rel=1e-12, abs=1e-12)


def test_the_estimate_target_refuses_negative_estimates_and_is_scale_equivariant():
    scores, offsets = np.array([0.2, -0.4, 1.0, 0.0]), np.array([0, 4])
    with pytest.raises(ValueError, match=r"takes non-negative relevance estimates, got -0.5 .* PLRank3"):
        ListNet(target="estimate").gradients(scores, np.array([1.0, -0.5, 0.0, 2.0]), offsets)
    estimates = np.array([1.0, 0.0, 0.25, 2.0])
    grad, hess = ListNet(target="estimate").gradients(scores, estimates, offsets)
    grad3, hess3 = ListNet(target="estimate").gradients(scores, 3 * estimates, offsets)
    np.testing.assert_allclose(grad3, 3 * grad, rtol=1e-6)
    np.testing.assert_allclose(hess3, 3 * hess, rtol=1e-6)


def test_gradient_is_the_softmax_minus_the_labels_distribution():
    scores, labels = np.array([0.5, -1.0, 2.0, 0.0]), np.array([3.0, 0.0, 1.0, 1.0])
    p = np.exp(scores) / np.exp(scores).sum()
    t_softmax = np.exp(labels) / np.exp(labels).sum()
    t_gain = (2 ** labels - 1) / (2 ** labels - 1).sum()
    for target, t in (("softmax", t_softmax), ("gain", t_gain)):
        grad, hess = ListNet(target=target).gradients(scores, labels, np.array([0, 4]))
        np.testing.assert_allclose(grad, p - t, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(hess, p * (1 - p), rtol=1e-6)


def test_gain_target_leaves_queries_without_relevant_documents_alone():
    scores, labels, offsets = np.array([1.0, 2.0, 0.0, 3.0]), np.array([0.0, 0.0, 1.0, 0.0]), np.array([0, 2, 4])
    grad, hess = ListNet(target="gain").gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad[:2], 0.0)
    np.testing.assert_array_equal(hess[:2], np.float32(1e-6))  # the floor
    assert ListNet(target="gain").losses(scores, labels, offsets)[0] == 0.0
    assert np.all(grad[2:] != 0.0)


def test_uniform_queries_are_left_out_unless_asked():
    scores, labels = np.array([1.0, 2.0, 0.0, 3.0, -1.0]), np.array([2.0, 2.0, 2.0, 1.0, 0.0])
    offsets = np.array([0, 3, 5])
    grad, _ = ListNet().gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad[:3], 0.0)
    literal, _ = ListNet(skip_uniform_queries=False).gradients(scores, labels, offsets)
    p = np.exp(scores[:3]) / np.exp(scores[:3]).sum()
    np.testing.assert_allclose(literal[:3], p - 1 / 3, rtol=1e-6)  # the uniform target pulls the scores together
    np.testing.assert_array_equal(literal[3:], grad[3:])


def test_huge_labels_and_scores_stay_finite():
    scores = np.array([1e6, -1e6, 0.0, 1e6])
    labels = np.array([1000.0, 0.0, 999.0, 1000.0])
    p = np.array([0.5, 0.0, 0.0, 0.5])  # the two tied top scores share the softmax
    t_softmax = np.array([1.0, 0.0, np.exp(-1.0), 1.0]) / (2 + np.exp(-1.0))  # e^{y - 1000}, normalised
    t_gain = np.array([0.4, 0.0, 0.2, 0.4])  # 2^1000, 0, 2^999, 2^1000 over their sum
    for target, t in (("softmax", t_softmax), ("gain", t_gain)):
        grad, hess = ListNet(target=target).gradients(scores, labels, np.array([0, 4]))
        np.testing.assert_allclose(grad, p - t, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(hess, np.maximum(p * (1 - p), 1e-6), rtol=1e-6)


def test_unknown_target_is_refused():
    with pytest.raises(ValueError, match="ListNet: target must be one of 'softmax', 'gain', 'estimate', got 'ndcg'"):
        ListNet(target="ndcg")


@pytest.mark.parametrize("target", ["softmax", "gain"])
def test_bounded_curvature_is_a_quarter_and_bounds_the_loss_along_any_leaf_at_any_point(target):
    """curvature="bound": hessians 1/4 in every trained query of two or more documents, the exact gradients,
    and a leaf's sum of them at least the reference loss's second derivative along the leaf (finite
    differences), at the scores and after the leaf moved by -6, 2 and 30."""
    scores, labels, offsets = random_queries(62, [1, 2, 5, 9, 14], 3.0, 3)
    labels[offsets[1]:offsets[2]] = [2.0, 0.0]
    grad, hess = ListNet(target=target, curvature="bound").gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad, ListNet(target=target).gradients(scores, labels, offsets)[0])
    exact_hess = ListNet(target=target, hessian_floor=0.0).gradients(scores, labels, offsets)[1]
    trained = exact_hess > 0
    assert trained.sum() > 20
    np.testing.assert_array_equal(hess[trained], 0.25)
    rng = np.random.default_rng(3)
    step = mpmath.mpf("1e-10")
    for _ in range(6):
        leaf = rng.random(scores.size) < 0.4
        for shift in (0.0, -6.0, 2.0, 30.0):
            moved = scores + shift * leaf

            def along(t, moved=moved, leaf=leaf):
                return listnet_reference_loss([mpmath.mpf(float(x)) + t * bool(m) for x, m in zip(moved, leaf,
                                                                                                  strict=True)],
                                              labels, offsets, target)

            with mpmath.workdps(DIGITS):
                curvature = float((along(step) - 2 * along(0) + along(-step)) / step ** 2)
            assert curvature <= float(hess[leaf & trained].astype(np.float64).sum()) * (1 + 1e-6) + 1e-12
