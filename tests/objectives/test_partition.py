"""PL-Partition against exact likelihoods, a plain reference quadrature, and their derivatives."""

import importlib.util
import itertools
from pathlib import Path

import mpmath
import numba
import numpy as np
import pytest

from plboost.objectives import PLLowerBound, PLPartition, partition
from plboost.objectives._base import QueryData


def _load_accuracy_script():
    """scripts/partition_accuracy.py, whose dense long-double ``reference_step`` (the moments G_i, D_i,
    E[h_i^2] and Var(Σh) by a trapezoid of 12,001 nodes in z, then the formulas of partition.py's docstring,
    themselves checked against finite differences below) the extreme-step tests compare with."""
    path = Path(__file__).resolve().parents[2] / "scripts" / "partition_accuracy.py"
    spec = importlib.util.spec_from_file_location("partition_accuracy", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference_step = _load_accuracy_script().reference_step

#: working precision of the references: set per call (mpmath.workdps), not globally at import, so that it
#: does not depend on which test module was imported last
DIGITS = 40


# --------------------------------------------------------------------------------------------------
# References, written plainly

@mpmath.workdps(DIGITS)
def brute_force_loss(scores, labels):
    """-log of the probability, summed over all permutations, that higher labels come first (n <= 7)."""
    n = len(scores)
    total = mpmath.mpf(0)
    for order in itertools.permutations(range(n)):
        if any(labels[order[i]] < labels[order[i + 1]] for i in range(n - 1)):
            continue
        probability = mpmath.mpf(1)
        remaining = list(range(n))
        for d in order:
            probability *= mpmath.exp(scores[d]) / mpmath.fsum(mpmath.exp(scores[k]) for k in remaining)
            remaining.remove(d)
        total += probability
    return -mpmath.log(total)


def steps(scores, labels):
    """(S, R) score lists of each step: partitions by label, descending."""
    levels = sorted(set(labels), reverse=True)
    for level in levels[:-1]:
        yield ([s for s, y in zip(scores, labels, strict=True) if y == level],
               [s for s, y in zip(scores, labels, strict=True) if y < level])


def inclusion_exclusion_loss(scores, labels):
    """-Σ log P(S ≻ R), P = Σ_{T ⊆ S} (-1)^|T| / (1 + Σ_{i∈T} a_i), a_i = e^{s_i} / Σ_R e^{s_j}.

    The alternating sum cancels down to P, which can be e^{-300}: it is computed with 250 digits.
    """
    with mpmath.workdps(250):
        return +_inclusion_exclusion(scores, labels)


def _inclusion_exclusion(scores, labels):
    total = mpmath.mpf(0)
    for upper, lower in steps(scores, labels):
        z_r = mpmath.fsum(mpmath.exp(s) for s in lower)
        a = [mpmath.exp(s) / z_r for s in upper]
        probability = mpmath.fsum((-1) ** len(subset) / (1 + mpmath.fsum(a[i] for i in subset))
                                  for size in range(len(a) + 1)
                                  for subset in itertools.combinations(range(len(a)), size))
        total -= mpmath.log(probability)
    return total


def quadrature_reference_loss(scores, labels, nodes=12_001):
    """-Σ log P(S ≻ R) by a dense uniform trapezoid in z = log t over [-60, log(n+1) + 6], in long double.

    P = ∫ exp(z - e^z + Σ_i log(1 - exp(-a_i e^z))) dz; 12,001 nodes (spacing 0.0055, against peaks at
    least 1/sqrt(n+1) wide), no mode search, no change of variable. 6,001 nodes give the same losses within
    1e-14 (relative) and 1.3e-12 (absolute) on the large-partition cases and ``worst_error``'s.
    """
    scores = np.asarray(scores, dtype=np.longdouble)
    labels = np.asarray(labels)
    total = np.longdouble(0)
    for level in sorted(set(labels.tolist()), reverse=True)[:-1]:
        upper, lower = scores[labels == level], scores[labels < level]
        w_r = lower.max() + np.log(np.exp(lower - lower.max()).sum())
        z = np.linspace(-60, np.log(len(upper) + 1.0) + 6, nodes, dtype=np.longdouble)
        x = np.exp((upper - w_r)[:, None] + z[None, :])
        small = x < np.log(2)
        log_one_minus = np.empty_like(x)
        log_one_minus[small] = np.log(-np.expm1(-x[small]))
        log_one_minus[~small] = np.log1p(-np.exp(-x[~small]))
        psi = z - np.exp(z) + log_one_minus.sum(axis=0)
        total -= psi.max() + np.log(np.exp(psi - psi.max()).sum() * (z[1] - z[0]))
    return total


# --------------------------------------------------------------------------------------------------
# Exact values on small queries

@pytest.mark.parametrize("seed", range(6))
def test_log_likelihood_matches_brute_force_over_permutations(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    scores = rng.normal(scale=3.0, size=n)
    labels = rng.integers(0, 3, size=n).astype(float)
    loss = PLPartition().losses(scores, labels, np.array([0, n]))[0]
    exact = float(brute_force_loss(scores.tolist(), labels.tolist()))
    assert loss == pytest.approx(exact, rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("size, spread, shift", [
    (2, 1.0, 0.0), (5, 3.0, 0.0), (8, 10.0, 0.0), (12, 20.0, 0.0), (12, 3.0, 15.0), (12, 3.0, -15.0),
    (10, 1.0, -8.0),
])
def test_log_likelihood_matches_inclusion_exclusion(size, spread, shift):
    """Partitions of up to 12 documents (the exact formula's 2^12 subsets in 40 digits), logits over ±spread,
    the upper partition shifted far above or below the lower one."""
    rng = np.random.default_rng([size, int(spread), int(shift) + 50])
    upper = rng.uniform(-spread, spread, size=size) + shift
    lower = rng.uniform(-spread, spread, size=size + 3)
    middle = rng.uniform(-spread, spread, size=3)
    scores = np.concatenate([upper, middle, lower])
    labels = np.concatenate([np.full(size, 2.0), np.full(3, 1.0), np.zeros(size + 3)])
    loss = PLPartition().losses(scores, labels, np.array([0, len(scores)]))[0]
    exact = float(inclusion_exclusion_loss(scores.tolist(), labels.tolist()))
    assert loss == pytest.approx(exact, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_gradients_and_hessians_match_finite_differences_of_the_exact_likelihood(seed, central_differences):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(2, 10))
    scores = rng.normal(scale=2.0 + 3 * seed, size=n)
    labels = rng.integers(0, 4, size=n).astype(float)
    labels[0], labels[-1] = 3.0, 0.0
    grad, hess = PLPartition().gradients(scores, labels, np.array([0, n]))
    fd_grad, fd_hess, _ = central_differences(lambda s: inclusion_exclusion_loss(s, labels), scores, digits=DIGITS)
    np.testing.assert_allclose(grad, fd_grad, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, 1e-6), rtol=2e-6, atol=1e-7)
    assert abs(float(grad.astype(np.float64).sum())) < 1e-5


def test_a_partition_of_one_document_is_a_softplus():
    """In closed form, not by quadrature: equal to rounding (the log-sum-exp of R is summed in another
    order here)."""
    rng = np.random.default_rng(7)
    lower = rng.normal(scale=4.0, size=30)
    for s in (-30.0, -2.0, 0.0, 3.5, 40.0):
        scores = np.r_[s, lower]
        labels = np.r_[1.0, np.zeros(30)]
        w_r = np.logaddexp.reduce(lower)
        expected = np.logaddexp(0.0, w_r - s)
        assert PLPartition().losses(scores, labels, np.array([0, 31]))[0] == pytest.approx(expected, rel=1e-15)
        grad, hess = PLPartition().gradients(scores, labels, np.array([0, 31]))
        p, not_p = 1.0 / (1.0 + np.exp(w_r - s)), 1.0 / (1.0 + np.exp(s - w_r))
        assert grad[0] == pytest.approx(-not_p, rel=1e-7, abs=1e-30)
        assert hess[0] == pytest.approx(max(p * not_p, 1e-6), rel=1e-7)


def test_the_loss_falls_when_a_higher_partition_rises():
    """Raising every document at or above a label moves the upper partitions away from the lower ones
    without changing anything among them: every step's probability grows or stays."""
    rng = np.random.default_rng(8)
    scores = rng.normal(size=40)
    labels = rng.integers(0, 4, size=40).astype(float)
    offsets = np.array([0, 40])
    obj = PLPartition()
    before = obj.losses(scores, labels, offsets)[0]
    for level in (3.0, 2.0, 1.0):
        raised = scores + 0.5 * (labels >= level)
        assert obj.losses(raised, labels, offsets)[0] < before
    assert obj.losses(scores + 0.5 * (labels == 0.0), labels, offsets)[0] > before


# --------------------------------------------------------------------------------------------------
# The integrand's terms per document, without a transcendental function

@numba.njit
def integrand_terms(x):
    """h(x_i) and x_i h(x_i) as ``_evaluate`` stores them, at z = 0 (t = 1, so a_i = x_i)."""
    terms_h = np.empty(x.size)
    terms_xh = np.empty(x.size)
    partition._evaluate(0.0, 1.0, x, np.log(x), x.size, terms_h, terms_xh)
    return terms_h, terms_xh


@mpmath.workdps(DIGITS)
def test_the_polynomial_is_the_chebyshev_interpolant_of_its_function():
    """_P0 ... _P8 are the interpolant of p(y) = (1 - e^{-y}) / y at the 9 Chebyshev points of [0, 0.3125],
    solved again here at 40 digits and rounded."""
    end = mpmath.mpf(partition._SERIES_END)
    points = [end / 2 * (1 + mpmath.cos(mpmath.pi * (2 * k + 1) / 18)) for k in range(9)]
    vandermonde = mpmath.matrix([[y ** j for j in range(9)] for y in points])
    coefficients = mpmath.lu_solve(vandermonde, mpmath.matrix([-mpmath.expm1(-y) / y for y in points]))
    ours = [getattr(partition, f"_P{j}") for j in range(9)]
    assert ours == pytest.approx([float(c) for c in coefficients], rel=1e-15, abs=0.0)


@mpmath.workdps(DIGITS)
def test_the_terms_of_each_document_match_their_functions():
    """h(x) = x / (e^x - 1) and x h(x) from 1e-8 to the cap: a few ulp from the polynomial (x <= 0.3125),
    within 5e-14 (relative) from its seven squarings (e^{-x} within 2e-14; h = x e^{-x} / (1 - e^{-x}) loses
    up to e^{-x} / (1 - e^{-x}) < 2.7 times that more); 0 at the cap."""
    x = np.concatenate([np.geomspace(1e-8, 39.9, 4001), np.nextafter(0.3125, [0.0, 1.0]), [40.0]])
    terms_h, terms_xh = integrand_terms(x)
    reference = np.array([float(mpmath.mpf(v) / mpmath.expm1(mpmath.mpf(v))) for v in x[:-1]])
    error_h = np.abs(terms_h[:-1] / reference - 1.0)
    error_xh = np.abs(terms_xh[:-1] / (x[:-1] * reference) - 1.0)
    polynomial = x[:-1] <= partition._SERIES_END
    assert np.max(error_h[polynomial]) < 1e-15 and np.max(error_xh[polynomial]) < 1e-15
    assert np.max(error_h[~polynomial]) < 5e-14 and np.max(error_xh[~polynomial]) < 5e-14
    assert terms_h[-1] == 0.0 and terms_xh[-1] == 0.0


# --------------------------------------------------------------------------------------------------
# Large partitions against a plain reference quadrature

LARGE_CASES = {
    "200 vs 1000, logits ±20": (lambda rng: (rng.uniform(-20, 20, 200), rng.uniform(-20, 20, 1000))),
    "S far above R": (lambda rng: (rng.uniform(15, 20, 60), rng.uniform(-20, -15, 1000))),
    "S far below R": (lambda rng: (rng.uniform(-20, -15, 60), rng.uniform(15, 20, 1000))),
    "one document above 1000": (lambda rng: (rng.uniform(-3, 3, 1), rng.uniform(-3, 3, 1000))),
    "150 tied scores vs 400": (lambda rng: (np.full(150, 0.7), rng.normal(size=400))),
}


@pytest.mark.parametrize("case", ["one document above 1000", "S far below R"])
def test_the_reference_at_6001_nodes_gives_its_loss_at_12001(case):
    """What lets the large-partition test below use half the reference's nodes (tried on every case: at most
    8.5e-15 relative)."""
    rng = np.random.default_rng(len(case))
    upper, lower = LARGE_CASES[case](rng)
    scores = np.concatenate([upper, rng.uniform(-5, 5, 25), lower])
    labels = np.concatenate([np.full(upper.size, 2.0), np.ones(25), np.zeros(lower.size)])
    fine, coarse = (quadrature_reference_loss(scores, labels, nodes) for nodes in (12_001, 6_001))
    assert abs(fine - coarse) < 1e-14 * abs(fine)


@pytest.mark.interpreted_once
@pytest.mark.slow  # dense long-double references of partitions of hundreds of documents
@pytest.mark.parametrize("case", sorted(LARGE_CASES))
def test_large_partitions_match_the_reference_quadrature(case):
    """Loss within 1e-8, gradients and hessians within 1e-5 and 1e-4 of central differences of the reference,
    at 6,001 nodes: the reference's difference from 12,001 nodes is below 1e-14 of the loss here."""
    rng = np.random.default_rng(len(case))
    upper, lower = LARGE_CASES[case](rng)
    middle = rng.uniform(-5, 5, 25)
    scores = np.concatenate([upper, middle, lower])
    labels = np.concatenate([np.full(upper.size, 2.0), np.ones(25), np.zeros(lower.size)])
    offsets = np.array([0, scores.size])
    obj = PLPartition()
    loss = obj.losses(scores, labels, offsets)[0]
    center = quadrature_reference_loss(scores, labels, nodes=6_001)
    assert loss == pytest.approx(float(center), rel=1e-8, abs=1e-8)

    grad, hess = obj.gradients(scores, labels, offsets)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    assert abs(float(grad.astype(np.float64).sum())) < 1e-4
    picks = np.unique(np.r_[0, upper.size - 1, upper.size, upper.size + 24, upper.size + 25, scores.size - 1,
                            rng.integers(0, scores.size, 4), np.argmax(scores), np.argmin(scores)])
    delta = np.longdouble(1e-4)
    for i in picks:
        up, down = scores.astype(np.longdouble), scores.astype(np.longdouble)
        up[i] += delta
        down[i] -= delta
        loss_up = quadrature_reference_loss(up, labels, nodes=6_001)
        loss_down = quadrature_reference_loss(down, labels, nodes=6_001)
        fd_grad = float((loss_up - loss_down) / (2 * delta))
        fd_hess = float((loss_up - 2 * center + loss_down) / delta ** 2)
        assert grad[i] == pytest.approx(fd_grad, rel=1e-5, abs=1e-7), (i, "gradient")
        assert hess[i] == pytest.approx(max(fd_hess, 1e-6), rel=1e-4, abs=1e-6), (i, "hessian")


def worst_error(**params):
    """Largest absolute error of log P against the reference quadrature, partitions of 2-50 documents,
    |R| up to 200, logits over ±10, the partition level with, far above or far below R."""
    worst = 0.0
    for seed in range(12):
        rng = np.random.default_rng(seed)
        size, rest = int(rng.integers(2, 51)), int(rng.integers(1, 201))
        scores = np.concatenate([rng.uniform(-10, 10, size) + rng.choice([-10, 0, 10]), rng.uniform(-10, 10, rest)])
        labels = np.concatenate([np.ones(size), np.zeros(rest)])
        loss = PLPartition(**params).losses(scores, labels, np.array([0, size + rest]))[0]
        worst = max(worst, abs(loss - float(quadrature_reference_loss(scores, labels))))
    return worst


@pytest.mark.parametrize("step, tolerance", [(0.5, 1e-7), (0.4, 1e-9), (0.3, 1e-11)])
def test_the_quadrature_step_sets_the_accuracy(step, tolerance):
    """The former accuracy knob, on the partitions of ``worst_error``."""
    assert worst_error(quadrature_step=step) < tolerance


@pytest.mark.parametrize("tolerance", [1e-8, 1e-10, 1e-12])
def test_the_tolerance_sets_the_accuracy(tolerance):
    """Absolute errors of log P against the reference stay within a few times the tolerance, on the
    partitions of ``worst_error``; a smaller tolerance costs more nodes."""
    assert worst_error(tolerance=tolerance) < 5 * tolerance + 1e-13


@pytest.mark.slow  # dense long-double references of partitions of hundreds of documents
def test_finer_tolerances_evaluate_more_terms():
    rng = np.random.default_rng(3)
    scores = rng.normal(size=300)
    labels = rng.integers(0, 4, size=300).astype(float)
    data = QueryData.from_arrays(labels, np.array([0, 300]))
    counts = []
    for tolerance in (1e-6, 1e-10, 1e-14):
        grad, hess = np.empty(300), np.empty(300)
        counts.append(PLPartition(tolerance=tolerance)._run_counting(scores, data, grad, hess)[1][0])
    assert counts[0] < counts[1] < counts[2]


def test_the_quadrature_step_is_read_as_a_tolerance():
    """The former knob: the step h at the widest peaks, whose trapezoid error is about e^{2.3 - π²/h}."""
    assert PLPartition(quadrature_step=0.4).tolerance == pytest.approx(np.exp(2.3 - np.pi ** 2 / 0.4))
    assert PLPartition(quadrature_step=0.05).tolerance == 1e-16
    assert PLPartition().tolerance == 1e-10
    obj = PLPartition(quadrature_step=0.3)
    assert type(obj)(**obj.get_params()).tolerance == obj.tolerance
    with pytest.raises(ValueError, match="not both"):
        PLPartition(tolerance=1e-9, quadrature_step=0.4)


@pytest.mark.parametrize("tolerance", [0.0, 0.5, -1e-10, float("nan"), 1e-20])
def test_bad_tolerances_are_refused(tolerance):
    with pytest.raises(ValueError, match="tolerance"):
        PLPartition(tolerance=tolerance)


# --------------------------------------------------------------------------------------------------
# Extremes: ties far above R (a cliff the quadrature must refine), partitions of 1, 2 and 1000, score
# spreads of ±50, all scores equal

EXTREME_STEPS = {
    "20 tied documents 10 above 1": (lambda rng: (np.full(20, 10.0), np.zeros(1))),
    "300 tied documents 10 above 300 tied": (lambda rng: (np.full(300, 10.0), np.zeros(300))),
    "1000 tied documents level with 1000 tied": (lambda rng: (np.zeros(1000), np.zeros(1000))),
    "2 documents 50 above 1000": (lambda rng: (rng.uniform(45, 55, 2), rng.uniform(-5, 5, 1000))),
    "2 documents 50 below 3": (lambda rng: (rng.uniform(-55, -45, 2), rng.uniform(-5, 5, 3))),
    "1 document 45 below 1000": (lambda rng: (np.full(1, -45.0), rng.normal(size=1000))),
    "200 over ±50 above 200 over ±50": (lambda rng: (rng.uniform(-50, 50, 200), rng.uniform(-50, 50, 200))),
    "1000 over ±10, 50 below 2": (lambda rng: (rng.uniform(-60, -40, 1000), rng.uniform(-10, 10, 2))),
    "30 tied documents 20 above 30 tied": (lambda rng: (np.full(30, 20.0), np.zeros(30))),
}


@pytest.mark.slow  # dense long-double references of partitions of hundreds of documents
@pytest.mark.parametrize("case", sorted(EXTREME_STEPS))
def test_extreme_steps_match_the_reference(case):
    """Loss, gradients and hessians of one step within 1e-8 of the reference (relative where above 1)."""
    upper, lower = EXTREME_STEPS[case](np.random.default_rng(len(case)))
    scores = np.concatenate([upper, lower])
    labels = np.concatenate([np.ones(upper.size), np.zeros(lower.size)])
    data = QueryData.from_arrays(labels, np.array([0, scores.size]))
    grad, hess = np.empty(scores.size), np.empty(scores.size)
    loss = PLPartition(hessian_floor=0.0)._run_counting(scores, data, grad, hess)[0][0]
    expected = [np.asarray(v, dtype=np.float64) for v in reference_step(upper, lower)]
    for got, want, what in zip((loss, grad, hess), expected, ("loss", "gradient", "hessian"), strict=True):
        error = np.abs(got - want) / np.maximum(1.0, np.abs(want))
        assert error.max() < 1e-8, (what, error.max())


# --------------------------------------------------------------------------------------------------
# Labels

def test_labels_beyond_the_grades_give_the_same_partitions():
    """Grades (whole numbers below 32) are counted, other labels taken one distinct value at a time:
    any labels in the same order give the same loss and gradients, exactly."""
    rng = np.random.default_rng(11)
    scores = rng.normal(size=80)
    grades = rng.integers(0, 5, size=80).astype(float)
    offsets = np.array([0, 50, 80])
    for obj in (PLPartition(), PLLowerBound()):  # the partitions are shared (objectives/_groups.py)
        expected = obj.losses(scores, grades, offsets), obj.gradients(scores, grades, offsets)
        for labels in (grades * 1000, grades + 29, 7 * grades ** 2):
            np.testing.assert_array_equal(obj.losses(scores, labels, offsets), expected[0])
            for got, want in zip(obj.gradients(scores, labels, offsets), expected[1], strict=True):
                np.testing.assert_array_equal(got, want)
    many = rng.permutation(np.repeat(np.arange(40.0), 2)) * 3 + 5  # 40 distinct labels, one query
    by_steps = sum(PLPartition().losses(np.r_[scores[many == level], scores[many < level]],
                                        np.r_[np.ones(2), np.zeros(np.count_nonzero(many < level))],
                                        np.array([0, 2 + np.count_nonzero(many < level)]))[0]
                   for level in np.unique(many)[1:])
    assert PLPartition().losses(scores, many, np.array([0, 80]))[0] == pytest.approx(by_steps, rel=1e-12)


def test_extreme_scores_stay_finite():
    rng = np.random.default_rng(10)
    sizes = rng.integers(1, 60, size=40)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 5, size=offsets[-1]).astype(float)
    for scale in (1e2, 1e4):
        scores = rng.normal(scale=scale, size=offsets[-1])
        for obj in (PLPartition(), PLLowerBound()):
            grad, hess = obj.gradients(scores, labels, offsets)
            assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess >= 1e-6)
            assert np.all(np.isfinite(obj.losses(scores, labels, offsets)))


def test_queries_with_one_label_have_no_loss():
    grad, hess = PLPartition().gradients(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0]), np.array([0, 3]))
    np.testing.assert_array_equal(grad, 0.0)
    np.testing.assert_array_equal(hess, np.float32(1e-6))


@pytest.mark.parametrize("step", [0.0, 1.5, float("nan")])
def test_bad_quadrature_steps_are_refused(step):
    with pytest.raises(ValueError, match="quadrature_step"):
        PLPartition(quadrature_step=step)
