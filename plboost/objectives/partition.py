"""PL-Partition: the exact Plackett-Luce likelihood of tied grades.

Ma, Yi, Tang, Zhao, Hong, Chi and Mei, "Learning-to-Rank with Partitioned Preference: Fast Estimation for
the Plackett-Luce Model", AISTATS 2021. Its baseline, PL-LB (Hino, Fujimoto and Murata's lower bound), is
:mod:`plboost.objectives.pl_lb`.

A query's labels partition its documents: S_1 holds those with the highest label, ..., S_M the lowest;
R_m = S_m ∪ ... ∪ S_M. Under a Plackett-Luce model with utilities e^s, the probability that every document
of a higher partition comes before every document of a lower one factorises over the steps, and

.. math::

    L = -\\sum_{m=1}^{M-1} \\log P(S_m \\succ R_{m+1}), \\qquad
    P(S \\succ R) = \\int_0^\\infty e^{-t} \\prod_{i \\in S} (1 - e^{-a_i t})\\, dt, \\quad
    a_i = e^{s_i - w_R},\\ w_R = \\log \\sum_{j \\in R} e^{s_j}.

With t = e^z the integrand is e^{ψ(z)}, ψ(z) = z - e^z + Σ_i log(1 - exp(-a_i e^z)), strictly concave.
With x_i = a_i t, h(x) = x/(e^x - 1) and E the mean under the density e^ψ / P over z: G_i = E[h(x_i)],
D_i = E[x_i h(x_i)], H = Σ_i G_i, Φ = Var(Σ_i h(x_i)) + E[Σ_i c(x_i)] with c(x) = x h'(x) = h - x h - h^2
(the same as Σ_i (G_i - D_i - E[h(x_i)^2])), and the step's gradient and diagonal hessian are

    i ∈ S:  -G_i,        G_i^2 - G_i + D_i
    j ∈ R:  p_j H,       H p_j (1 - p_j) - Φ p_j^2,        p_j = e^{s_j - w_R}.

Quadrature. Every moment of a step comes from one trapezoid rule in z, nodes z_c + k h (Trefethen and
Weideman, "The exponentially convergent trapezoidal rule", SIAM Review 56, 2014: for an integrand
analytic in a strip the error falls exponentially in 1/h). Its error is the integrand's Fourier transform
at the first alias frequency 2π/h. When S lies far below R the integrand is e^{kz - e^z} with k = n_S + 1,
whose transform is Γ(k + iω): the error is |Γ(k + 2πi/h)| / Γ(k), which is e^{-2π²σ²/h²} for large k
(a Gaussian of width σ = 1/√k) and about √(2πb) e^{-πb/2}, b = 2π/h, for k = 1 (a Gumbel density, the
shape when S lies far above R). The rule, for a target error e^{-T} (T = log(1/tolerance) + log(n_S)/2:
sums over the partition add up n_S errors):

* centre: Newton's method on ψ', safeguarded in [0, log(n_S + 1)] (where the mode lies), started at
  log((m + 1) / (1 + A/2)) with m the documents with a_i < 1 and A their Σ a_i (the mode when those have
  h(x) ≈ 1 - x/2 and the others count nothing); it stops once a step is below 0.3 σ, and the last point
  evaluated, z_c, is the centre and the first node (about 1.5 evaluations per step before the nodes).
* step: σ = min(1, (-ψ''(z_c))^{-1/2}) and γ = min(1, σ max(1, |ψ'''/ψ''|)) (the standardised third
  derivative; γ = σ for the log-gamma shape), h = σ g(γ) with
  g(γ) = G (1 + 3.538 γ) / (1 + 3.315 γ + q γ^2), G = π √(2/T) (the Gaussian limit), q set so that
  g(1) = π² / (T + 2.3) (the Gumbel one): within 1% of the h that makes |Γ(k + 2πi/h)| / Γ(k) = e^{-T},
  for every k >= 1 and 16 <= T <= 35 (a least-squares fit).
* window: each side stops at the first node z_k beyond which ψ falls (ψ'(z_k) points outwards) and
  e^{ψ(z_k) - ψ(z_c)} / min(1, |ψ'(z_k)| h) < e^{-T}; ψ is concave, so the nodes left out sum to less
  than their tangent's geometric series.
* clusters: documents tied far above R make Π(1 - e^{-a_i t}) ≈ exp(-v), v = Σ e^{-x_i}, rise in z as a
  Gumbel distribution function of width about 1/log m for m tied documents, away from the mode, where
  ψ''(z_c) does not see it. At a node weighing more than e^{-T} where λ = |ψ''/ψ'''| (the scale of such a
  feature: exactly so for e^{-e^{u/λ}}) is small for the step, π²λ/h < T + 2.3, ``_cluster_step``
  bounds the cluster's alias error by e^{-2πy/h} expm1(v e^{x (1 - cos y)}) (the integrand's growth at
  height y in the complex plane; x the documents' mean x weighted by e^{-x}), at its best y; beyond
  e^{3 - T}, h is halved until the bound is below e^{-T} and the step is summed again (ties far above R
  only: 1000 tied documents 10 above R take about 250 terms per document instead of 20).

On MSLR-like data (``scripts/_bench_partition.py``) this takes 21 terms (node, document) per document of
S, against 36 for the former rule (a trapezoid over a tanh map, mode to 1e-12, tangent tail bounds at
e^{-36}), with errors below 1e-9 where the former one reached 3e-8 (``scripts/partition_accuracy.py``).
Each term costs a polynomial of degree 8 and seven squarings in a vectorised loop (``_evaluate``), no
transcendental function; each node one exponential. Partitions of one and two documents are exact in
closed form (the latter took 39 terms per document by quadrature). Per query, one exponential per
document (``partition_scores``) serves the log-sum-exps, the R documents' closed-form terms, collected
over steps by prefix sums, and the a_i; a query costs O(T Σ_m n_m + n). Grades are partitioned by
counting, not sorting. The loss is convex; a query with one label has no steps (zero loss and gradient).

PL-LB, the paper's baseline, is :mod:`plboost.objectives.pl_lb`.
"""

from __future__ import annotations

import math

import numpy as np

from .._constraints import Real, check_params
from .._jit import helper, kernel, over_queries
from ._base import DEFAULT_HESSIAN_FLOOR, QueryData, RankingObjective
from ._groups import VECTOR_OPTIONS, collect_lower_terms, finish_query, query_scratch, start_query

#: default target error of each step's integral and moments
DEFAULT_TOLERANCE = 1e-10


# --------------------------------------------------------------------------------------------------
# One step of PL-Partition: log P(S > R) and the moments of its integrand

#: below this x, 1 - e^{-x} = x p(x) comes from the series p; above, e^{-x} = (e^{-x/128})^128
_SERIES_END = 0.3125
#: beyond this x, e^{-x} < 5e-18 is taken as 0 (1 - e^{-x} as 1, h(x) as 0); the cluster sums still count
#: such a document, at x = 40 (off the real axis its factor is not 1: ``_cluster_step``)
_X_CAP = 40.0
#: the logs of the integrand's factors are summed as the log of their product, this many at a time (each
#: factor is at least 1 - e^{-0.3125} = 0.27, so a product stays above 1e-73)
_RUN = 128
# p(y) = (1 - e^{-y}) / y on [0, 0.3125] by its interpolant of degree 8 at the 9 Chebyshev points of the
# interval (solved at 40 digits, rounded; tests/objectives/test_partition.py solves it again): within 1.2e-16
# of p as a polynomial, 3.5e-16 as summed in float64, where Taylor's series needs degree 11 for 1.4e-16
_P0, _P1, _P2 = 1.0, -0.49999999999997274, 0.1666666666643367
_P3, _P4, _P5 = -0.041666666589987064, 0.008333332067885404, -0.001388877139426615
_P6, _P7, _P8 = 0.00019834844772456697, -2.4595763295566002e-05, 2.3956550714539414e-06

#: the step-size fit g(γ) (module docstring) and the Gumbel alias error's extra log-factor
_STEP_A = 3.538
_STEP_B = 3.315
_GUMBEL_EXTRA = 2.3
#: Newton's method stops at a step below this many σ
_NEWTON_STOP = 0.3
#: no step is summed with more nodes than this, nor refined below this step (guards)
_MAX_NODES = 100_000
_FINEST_STEP = 1e-3

#: the quadrature's steps pad their documents to a multiple of this many (AVX2's doubles per vector): the
#: vectorised loop of ``_evaluate`` then has no scalar remainder, which cost as much as a vector iteration
#: per left-over document (on 3-15 documents, padded evaluations were up to 30% faster)
_LANES = 4



@helper(**VECTOR_OPTIONS)
def _evaluate(z, t, a, log_a, n, terms_h, terms_xh):
    """ψ(z), as ``log_part + log(product)``, and ψ'(z), ψ''(z), ψ'''(z), Σ_i h(x_i), Σ_i c(x_i), and
    v = Σ e^{-x_i} and Σ x_i e^{-x_i} over x_i > 0.3125 (the documents that make cliffs, see
    ``_cluster_step``), at t = e^z for the step with weights ``a`` = e^``log_a``; stores h(x_i) and x_i h(x_i)
    in ``terms_h`` and ``terms_xh``.

    No transcendental function per document: with x = a_i t and y = x (x <= 0.3125) or x / 128, the
    polynomial p(y) ≈ (1 - e^{-y}) / y (``_P0``...``_P8``) gives e^{-y} = 1 - y p(y), and e^{-x} follows by
    seven squarings (relative error below 2e-14); p is summed by Estrin's scheme (pairs of terms, combined
    with y^2 and y^4, and the last term with y^8), whose chain of dependent operations is a third of
    Horner's. Then log(1 - e^{-x}) = log x + log p(x) below 0.3125, with
    log x = log_a_i + z exact, and log(1 - e^{-x}) above, summed as the log of their product, one log per
    run of ``_RUN`` factors but the last, whose product is returned (one partition of up to ``_RUN``
    documents takes no log); h = e^{-x} / p(x) or x e^{-x} / (1 - e^{-x}); c = x h'(x) = h - x h - h^2 and
    x c'(x) = c (1 - x - 2 h) - x h give ψ'' and ψ'''.

    ``n`` may count padding past the step's documents (``_LANES``): an entry with a_i = 0 and
    log a_i = -inf adds nothing to any sum, and 0 to ``terms_h`` and ``terms_xh``.
    """
    log_part = z - t
    product = 1.0
    sum_h = 0.0
    sum_c = 0.0
    sum_c3 = 0.0
    cluster = 0.0
    cluster_x = 0.0
    for start in range(0, n, _RUN):
        if start > 0:
            log_part += np.log(product)
            product = 1.0
        stop = min(start + _RUN, n)
        for j in range(start, stop):
            i = np.uint64(j)  # unsigned: no negative-index wraparound in the vectorised loop
            x = min(a[i] * t, _X_CAP)
            large = x > _SERIES_END
            y = x * (1.0 / 128.0) if large else x
            y2 = y * y
            y4 = y2 * y2
            p = (((_P0 + _P1 * y) + (_P2 + _P3 * y) * y2) + ((_P4 + _P5 * y) + (_P6 + _P7 * y) * y2) * y4
                 + _P8 * (y4 * y4))
            small_exp = 1.0 - y * p  # e^{-y}
            e = small_exp * small_exp
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e
            e = e * e  # e^{-x} when x is large
            factor = 1.0 - e if large else p
            product *= factor
            log_x = log_a[i] + z  # loaded here and unconditionally, or LLVM does not vectorise the loop
            padding = log_x == -np.inf
            log_part += 0.0 if large or padding else log_x
            h = (x * e if large else small_exp) / factor
            h = 0.0 if x == _X_CAP or padding else h  # beyond the cap every term is below 1e-15: none at all
            xh = x * h
            c = h - xh - h * h
            sum_h += h
            sum_c += c
            sum_c3 += c * (1.0 - x - 2.0 * h) - xh
            cluster += e if large else 0.0
            cluster_x += x * e if large else 0.0
            terms_h[i] = h
            terms_xh[i] = xh
    return log_part, product, 1.0 - t + sum_h, sum_c - t, sum_c3 - t, sum_h, sum_c, cluster, cluster_x


#: a cluster's estimated error may exceed the target by this many e-folds before the step is refined
_CLUSTER_SLACK = 3.0


@helper
def _cluster_step(step, weight, mass, x, level):
    """The trapezoid step that a cluster of documents with large x = a_i t at a node allows: ``step`` if its
    estimated alias error is below e^{_CLUSTER_SLACK - level}, else a step for error e^{-level}.

    Documents tied far above R: log Π(1 - e^{-x_i}) ≈ -Σ e^{-x_i} = -v, which in z + iy becomes
    -v e^{x (1 - cos y)} e^{-i ...} for a cluster at x (v = m e^{-x} for m tied documents). The trapezoid's
    error is bounded by e^{-2πy/h} times the integrand's growth at height y, here
    expm1(v e^{x (1 - cos y)}) at a node of weight w, for any 0 < y <= π/2 (Trefethen and Weideman): it is
    minimised over y = (π/2) 0.8^j. For one document at x ~ 1 this is the trapezoid's error on the
    widest peaks; for m tied documents it grows as e^{m ...}: a cliff of width about 1/log m in z.
    """
    best = np.inf  # log of the error bound at ``step``, the best over y
    finest = 0.0  # the largest step for which some y gives e^{-level}
    y = 0.5 * np.pi
    for _ in range(13):
        growth = np.log(np.expm1(mass * np.exp(x * (1.0 - np.cos(y))))) + np.log(weight)
        if growth + level <= 0.0:  # at this height the cluster costs less than e^{-level} at any step
            return step
        best = min(best, growth - 2.0 * np.pi * y / step)
        finest = max(finest, 2.0 * np.pi * y / (growth + level))
        y *= 0.8
    return step if best <= _CLUSTER_SLACK - level else finest


@helper
def _partition_step(log_a, a, n, target, g, d, terms_h, terms_xh):
    """Quadrature of one step with weights ``a[:n]`` = e^``log_a[:n]`` (n >= 2), for error about e^{-target}.

    Writes G_i and D_i to ``g`` and ``d`` and returns (log P, Φ, evaluations of ψ). Every array has room for
    n rounded up to a multiple of ``_LANES``: ``a`` and ``log_a`` are padded there (0 and -inf, see
    ``_evaluate``), ``terms_h`` and ``terms_xh`` are scratch. One exponential per node (its weight), no log.
    Newton's iterations and the nodes share one call of ``_evaluate`` (each call site is compiled anew).
    """
    lanes = -(-n // _LANES) * _LANES
    log_a[n:lanes] = -np.inf
    a[n:lanes] = 0.0
    count_small = 0.0
    sum_small = 0.0
    for i in range(n):
        if a[i] < 1.0:
            count_small += 1.0
            sum_small += a[i]
    level = target + 0.5 * np.log(n)
    reach = np.exp(-level)  # nodes within the target's reach of the centre's weight; the window ends below
    closer_look = (level + _GUMBEL_EXTRA) / (np.pi * np.pi)  # λ / h below this: estimate the cluster's error
    # the centre: Newton's method, kept in [0, log(n + 1)] where ψ' changes sign
    low = 0.0
    high = np.log(n + 1.0)
    z = min(max(np.log((count_small + 1.0) / (1.0 + 0.5 * sum_small)), low), high)
    t = np.exp(z)
    newton = True
    evaluations = 0
    # the walk: nodes centre + k step, k = 0, 1, ... then -1, -2, ...
    centre = z
    t_centre = t
    peak = 0.0
    step = 1.0
    ratio = 1.0
    finer = 1.0
    direction = 1
    k = 0
    nodes = 0
    total = 0.0
    first = 0.0
    second = 0.0
    mean_c = 0.0
    center_h = 0.0
    while True:
        log_part, product, slope, curvature, third, sum_h, sum_c, cluster, cluster_x = _evaluate(
            z, t, a, log_a, lanes, terms_h, terms_xh)
        evaluations += 1
        if newton:
            if slope > 0.0:
                low = z
            else:
                high = z
            move = slope / curvature
            if move * move * -curvature >= _NEWTON_STOP * _NEWTON_STOP and evaluations < 100:
                z -= move
                if not low <= z <= high:
                    z = 0.5 * (low + high)
                t = np.exp(z)
                continue
            # z is the centre, and this evaluation its node
            newton = False
            centre = z
            t_centre = t
            peak = log_part + np.log(product)
            sigma = min(1.0, 1.0 / np.sqrt(-curvature))
            gamma = min(1.0, sigma * max(1.0, abs(third / curvature)))
            gauss = np.pi * np.sqrt(2.0 / level)
            gumbel = np.pi * np.pi / (level + _GUMBEL_EXTRA)
            quadratic = gauss * (1.0 + _STEP_A) / gumbel - 1.0 - _STEP_B
            step = sigma * gauss * (1.0 + _STEP_A * gamma) / (1.0 + _STEP_B * gamma + quadratic * gamma * gamma)
            ratio = np.exp(step)
            finer = step
            g[:lanes] = 0.0
            d[:lanes] = 0.0
        nodes += 1
        weight = np.exp(log_part - peak) * product
        if k == 0:
            center_h = sum_h  # centring the variance's sums keeps them free of cancellation
        total += weight
        first += weight * (sum_h - center_h)
        second += weight * (sum_h - center_h) ** 2
        mean_c += weight * sum_c
        for j in range(lanes):
            i = np.uint64(j)
            g[i] += weight * terms_h[i]
            d[i] += weight * terms_xh[i]
        if weight > reach and abs(curvature) < closer_look * step * abs(third) and cluster > 0.0:
            finer = min(finer, _cluster_step(step, weight, cluster, cluster_x / cluster, level))
        if finer < step and step >= _FINEST_STEP:  # a sharp feature: sum the step again, finer
            while step > finer and step >= _FINEST_STEP:
                step *= 0.5
            ratio = np.exp(step)
            finer = step
            direction = 1
            k = 0
            z = centre
            t = t_centre
            nodes = 0
            total = 0.0
            first = 0.0
            second = 0.0
            mean_c = 0.0
            g[:lanes] = 0.0
            d[:lanes] = 0.0
            continue
        side_done = slope * direction < 0.0 and weight < reach * min(1.0, abs(slope) * step)
        if side_done or not weight >= 0.0 or nodes >= _MAX_NODES:
            if direction == -1 or nodes >= _MAX_NODES:
                break
            direction = -1
            k = -1
            z = centre - step
            t = t_centre / ratio
            continue
        k += direction
        z = centre + k * step
        t = t * ratio if direction == 1 else t / ratio
    for i in range(n):
        g[i] /= total
        d[i] /= total
    mean = first / total
    variance = max(second / total - mean * mean, 0.0)
    return peak + np.log(step * total), variance + mean_c / total, evaluations


#: inlined by Numba into its one caller: compiled once, not once alone and again where LLVM inlines it
@helper(inline="always")
def _pair_step(log_a1, log_a2, g, d):
    """log P(S ≻ R) of a partition of two documents in closed form, with G_i and D_i to ``g[:2]`` and
    ``d[:2]``; returns (log P, Φ).

    P = ∫ e^{-t} (1 - e^{-a_1 t})(1 - e^{-a_2 t}) dt = 1 - 1/(1 + a_1) - 1/(1 + a_2) + 1/(1 + a_1 + a_2)
    = a_1 a_2 (2 + a_1 + a_2) / ((1 + a_1)(1 + a_2)(1 + a_1 + a_2)), a product of positive terms (no
    cancellation, unlike the alternating sum). With A = 2 + a_1 + a_2 and B = 1 + a_1 + a_2, derivatives in
    log a_i: G_1 = 1/(1 + a_1) - a_1/(A B), ∂²/∂(log a_1)^2 = (a_1/A)(2 + a_2)/A - (a_1/(1 + a_1))/(1 + a_1)
    - (a_1/B)(1 + a_2)/B, the cross one (a_1/B)(a_2/B) - (a_1/A)(a_2/A), every factor at most 1 (a_i is
    capped at e^700, beyond which nothing changes in float64).
    """
    log_a1 = min(log_a1, 700.0)
    log_a2 = min(log_a2, 700.0)
    a1 = np.exp(log_a1)
    a2 = np.exp(log_a2)
    big_a = 2.0 + a1 + a2
    big_b = 1.0 + a1 + a2
    log_p = log_a1 + log_a2 + np.log(big_a) - np.log1p(a1) - np.log1p(a2) - np.log(big_b)
    g1 = 1.0 / (1.0 + a1) - (a1 / big_a) / big_b
    g2 = 1.0 / (1.0 + a2) - (a2 / big_a) / big_b
    h11 = (a1 / big_a) * ((2.0 + a2) / big_a) - (a1 / (1.0 + a1)) / (1.0 + a1) - (a1 / big_b) * ((1.0 + a2) / big_b)
    h22 = (a2 / big_a) * ((2.0 + a1) / big_a) - (a2 / (1.0 + a2)) / (1.0 + a2) - (a2 / big_b) * ((1.0 + a1) / big_b)
    h12 = (a1 / big_b) * (a2 / big_b) - (a1 / big_a) * (a2 / big_a)
    g[0] = g1
    g[1] = g2
    d[0] = g1 - g1 * g1 - h11
    d[1] = g2 - g2 * g2 - h22
    return log_p, h11 + h22 + 2.0 * h12


@kernel
def _pl_partition_kernel(first, end, scores, labels, offsets, target, grad, hess, losses, evaluations):
    """PL-Partition loss of queries ``first <= q < end`` to ``losses``, their gradients and raw hessians to
    ``grad`` and ``hess``, and per query the terms of ψ evaluated (documents times evaluations, summed over
    steps) to ``evaluations``."""
    widest, order, grade_of, starts, ordered, shifted, top, below, grad64, hess64 = query_scratch(first, end,
                                                                                                  offsets)
    coef_h = np.empty(widest)
    coef_h_plus_phi = np.empty(widest)
    log_a = np.empty(widest + _LANES)
    a = np.empty(widest + _LANES)
    g = np.empty(widest + _LANES)
    d = np.empty(widest + _LANES)
    terms_h = np.empty(widest + _LANES)
    terms_xh = np.empty(widest + _LANES)
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        evaluations[q] = 0
        losses[q] = 0.0
        n_parts = start_query(scores, labels, lo, hi, order, grade_of, starts, ordered, shifted, top, below,
                               grad64, hess64, grad, hess)
        n_steps = n_parts - 1
        for m in range(n_steps):
            w_r = below[m + 1]
            size = starts[m + 1] - starts[m]
            first_doc = starts[m]
            if size == 1:  # closed form: P = sigmoid(u), -log P = softplus(-u)
                u = ordered[first_doc] - w_r
                e = np.exp(-abs(u))
                losses[q] += np.log1p(e) + max(-u, 0.0)
                p_s = 1.0 / (1.0 + e) if u > 0 else e / (1.0 + e)
                p_not = 1.0 - p_s if u < 0 else e / (1.0 + e)
                grad64[first_doc] -= p_not
                hess64[first_doc] += p_s * p_not
                coef_h[m] = p_not
                coef_h_plus_phi[m] = p_not * p_not  # H + Φ = H^2 for a single document
                continue
            # a_i = e^{s_i - w_R} from the shifted exponentials where they hold it; beyond e^700 a document
            # counts nothing at any node (a t > 40)
            scale = np.exp(min(top[m] - w_r, 700.0))
            for i in range(size):
                log_a[i] = ordered[first_doc + i] - w_r
                a[i] = (shifted[first_doc + i] * scale if shifted[first_doc + i] > 1e-300
                        else np.exp(min(log_a[i], 700.0)))
            if size == 2:
                log_p, phi = _pair_step(log_a[0], log_a[1], g, d)
            else:
                log_p, phi, count = _partition_step(log_a, a, size, target, g, d, terms_h, terms_xh)
                evaluations[q] += count * size
            losses[q] -= log_p
            total_h = 0.0
            for i in range(size):
                grad64[first_doc + i] -= g[i]
                hess64[first_doc + i] += g[i] * g[i] - g[i] + d[i]
                total_h += g[i]
            coef_h[m] = total_h
            coef_h_plus_phi[m] = total_h + phi
        if n_steps > 0:
            collect_lower_terms(shifted, top, starts, n_parts, below[1:], coef_h, coef_h_plus_phi, n_steps,
                                 np.int64(1), grad64, hess64)  # an int64, not a literal 1: one signature for both
            finish_query(lo, hi, order, grad64, hess64, grad, hess)


# --------------------------------------------------------------------------------------------------
# The objectives

#: quadrature_step h (the former accuracy knob) is read as the tolerance e^{2.3 - π²/h}: the trapezoid
#: error of a Gumbel-shaped integrand at step h, what h used to give on the widest peaks
def _tolerance_of_step(step: float) -> float:
    return max(math.exp(_GUMBEL_EXTRA - math.pi ** 2 / step), 1e-16)


#: constructor arguments under their former names (``_aliases``), with what they may be
_FORMER_PARAMETERS = {"quadrature_step": Real(low=0.05, high=1.0)}


class PLPartition(RankingObjective):
    """The exact Plackett-Luce likelihood of tied grades (partitioned preference), by quadrature.

    Parameters
    ----------
    tolerance : float, default 1e-10
        Target error of each step's integral (relative) and of the moments its gradients and hessians are
        made of; the trapezoid's step and window follow from it (module docstring). Largest absolute
        errors on log P / gradients / hessians measured by ``scripts/partition_accuracy.py`` against a
        dense long-double reference, at 1e-10: 1.1e-10 / 6.9e-11 / 8.7e-10 on random steps (partitions of
        2-50 over ±10), 7.7e-11 / 7.6e-11 / 3.2e-10 on MSLR-like ones, 2.5e-10 / 6.5e-10 / 4.4e-9 on
        extremes (partitions of 1-2500, ties, logits over ±50); at 1e-8 and 1e-12 about 100 times more and
        less. The terms evaluated grow about as sqrt(log(1/tolerance)) for large partitions and
        log(1/tolerance) for small ones (MSLR-like data: 17.7, 21.2 and 25.4 per document of S at 1e-8,
        1e-10 and 1e-12). Between 1e-16 and 1e-2.
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.
    quadrature_step : float, optional
        The former accuracy knob, still accepted (an alias: ``get_params`` reports the ``tolerance`` it
        sets): the trapezoid's step h at the widest peaks, read as ``tolerance = exp(2.3 - π²/h)``
        (0.5 → 3e-8, 0.4 → 2e-10, 0.3 → 5e-14). Between 0.05 and 1; refused with a ``tolerance`` other
        than the default.

    The math is in the module docstring (Ma et al., AISTATS 2021).

    Examples
    --------
    Two documents tied at the top grade above one below them:

    >>> import numpy as np
    >>> obj = PLPartition(tolerance=1e-12)
    >>> print(obj.gradients(np.array([0.5, 0.0, -0.5]), np.array([1, 1, 0]), np.array([0, 3]))[0].round(4))
    [-0.1894 -0.3293  0.5187]
    """

    name = "pl_partition"
    demo_runs = ("pl_partition",)
    _aliases = ("quadrature_step",)
    parameter_constraints = {"tolerance": Real(low=1e-16, high=1e-2)}

    def __init__(self, *, tolerance: float = DEFAULT_TOLERANCE, hessian_floor: float = DEFAULT_HESSIAN_FLOOR,
                 quadrature_step: float | None = None):
        super().__init__(hessian_floor=hessian_floor)
        if quadrature_step is not None:
            if tolerance != DEFAULT_TOLERANCE:
                raise ValueError("give tolerance or quadrature_step (its former name), not both")
            step = check_params(_FORMER_PARAMETERS, {"quadrature_step": quadrature_step}, type(self).__name__)
            tolerance = _tolerance_of_step(step["quadrature_step"])
        self._store(tolerance=tolerance)

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> np.ndarray:
        return self._run_counting(scores, data, grad, hess)[0]

    def _run_counting(self, scores, data, grad, hess):
        """Losses per query and the number of (node, document) terms of ψ each query evaluated; raw
        hessians (no floor) to ``hess``."""
        losses = np.empty(data.offsets.size - 1)
        evaluations = np.empty(data.offsets.size - 1, dtype=np.int64)
        over_queries(_pl_partition_kernel, data.offsets, scores, data.labels, data.offsets,
                     -math.log(self.tolerance), grad, hess, losses, evaluations)
        return losses, evaluations
