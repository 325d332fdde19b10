"""PL-Partition: the exact Plackett-Luce likelihood of tied grades, and its lower bound PL-LB.

Ma, Yi, Tang, Zhao, Hong, Chi and Mei, "Learning-to-Rank with Partitioned Preference: Fast Estimation for
the Plackett-Luce Model", AISTATS 2021. PL-LB: Hino, Fujimoto and Murata's lower bound, the baseline of
the same paper.

A query's labels partition its documents: S_1 holds those with the highest label, ..., S_M the lowest;
R_m = S_m ∪ ... ∪ S_M. Under a Plackett-Luce model with utilities e^s, the probability that every document
of a higher partition comes before every document of a lower one factorises over the steps, and

.. math::

    L = -\\sum_{m=1}^{M-1} \\log P(S_m \\succ R_{m+1}), \\qquad
    P(S \\succ R) = \\int_0^\\infty e^{-t} \\prod_{i \\in S} (1 - e^{-a_i t})\\, dt, \\quad
    a_i = e^{s_i - w_R},\\ w_R = \\log \\sum_{j \\in R} e^{s_j}.

With t = e^z the integrand is e^{ψ(z)}, ψ(z) = z - e^z + Σ_i log(1 - exp(-a_i e^z)), strictly concave.
The kernel finds its mode z* (in [0, log(n + 1)]) by safeguarded Newton, takes σ = (-ψ''(z*))^{-1/2}
(at most 1), bounds the tails by the tangents at z* ± 5σ so that what is left out is below e^{-36} of the
peak, and sums a uniform trapezoid in ξ over the map z(ξ) = z* + ξ - 6 (1 - σ) tanh(ξ / 6), which is
fine (steps of σ h) at the mode and plain (steps of h) in the tails. With x_i = a_i t, h(x) = x/(e^x - 1)
and E the mean under the density e^ψ / P over z: G_i = E[h(x_i)], D_i = E[x_i h(x_i)], H = Σ_i G_i,
Φ = Var(Σ_i h(x_i)) + Σ_i (G_i - D_i - E[h(x_i)^2]), and the step's gradient and diagonal hessian are

    i ∈ S:  -G_i,        G_i^2 - G_i + D_i
    j ∈ R:  p_j H,       H p_j (1 - p_j) - Φ p_j^2,        p_j = e^{s_j - w_R}.

Every moment of a step comes from the same nodes, in O(T n_S) for T nodes (about 30-110 at the default
step h = 0.4); the R documents' terms are closed forms collected over steps by prefix sums, so a query
costs O(T Σ_m n_m + n). A partition of one document is exactly softplus(w_R - s_i) and is computed in
closed form. The loss is convex; a query with one label has no steps (zero loss and gradient).

PL-LB replaces each step by the lower bound P(S ≻ R) >= n_S! Π_{i∈S} e^{s_i} / (Σ_{j ∈ S∪R} e^{s_j})^{n_S}
(each of the n_S choices' denominators is at most the full sum): a softmax cross-entropy per step.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._jit import kernel
from .._numerics import logaddexp
from .._queries import check_scores
from ._base import DEFAULT_HESSIAN_FLOOR, QueryData, RankingObjective

#: tails left out of the quadrature are below e^{-TAIL} of the integrand's peak
_TAIL = 36.0
#: the tails are bounded by the tangents of ψ at z* ± _TANGENT σ (ψ is concave, so they lie above it)
_TANGENT = 5.0


# --------------------------------------------------------------------------------------------------
# One step of PL-Partition: log P(S > R) and the moments of its integrand

#: the integrand's product Π(1 - e^{-x_i}) is multiplied out in runs of this many factors (each at least
#: 2e-9, so a run stays above 1e-260) and the log taken once per run
_RUN = 30


@kernel
def _evaluate(z, log_a, a, n, terms_h, terms_xh):
    """ψ(z), ψ'(z), ψ''(z) and Σ_i h(x_i) for the step with weights a_i = e^{log_a_i}; stores h(x_i) and
    x_i h(x_i).

    Per document one expm1 (none in the tails): x_i = a_i e^z is a product, and the logs of
    1 - e^{-x_i} are summed as the log of their product, a run of factors at a time. Beyond x = 54 the
    three terms are below 1e-20 and taken as 0; below x = 2e-9 their series are used.
    """
    t = np.exp(z)
    log_sum = 0.0
    run = 1.0
    in_run = 0
    sum_h = 0.0
    sum_curvature = 0.0
    for i in range(n):
        log_x = log_a[i] + z
        if log_x > 4.0:
            h = 0.0
            xh = 0.0
        elif log_x < -20.0:
            x = a[i] * t
            log_sum += log_x - 0.5 * x
            h = 1.0 - 0.5 * x
            xh = x * h
        else:
            x = a[i] * t
            one_minus = -np.expm1(-x)  # 1 - e^{-x}
            run *= one_minus
            in_run += 1
            if in_run == _RUN:
                log_sum += np.log(run)
                run = 1.0
                in_run = 0
            h = x * (1.0 - one_minus) / one_minus
            xh = x * h
        terms_h[i] = h
        terms_xh[i] = xh
        sum_h += h
        sum_curvature += h - xh - h * h  # x h'(x) = h (1 - x - h)
    return z - t + log_sum + np.log(run), 1.0 - t + sum_h, sum_curvature - t, sum_h


@kernel
def _mode(log_a, a, n, terms_h, terms_xh):
    """The maximiser of ψ, with ψ and ψ'' there: Newton steps, kept in the bracket [0, log(n + 1)]
    where ψ' changes sign (bisection when a step would leave it)."""
    low = 0.0
    high = np.log(n + 1.0)
    z = 0.5 * (low + high)
    for _ in range(100):
        value, slope, curvature, _ = _evaluate(z, log_a, a, n, terms_h, terms_xh)
        if slope > 0.0:
            low = z
        else:
            high = z
        step = slope / curvature
        if abs(step) < 1e-12:
            break
        z = z - step
        if not low <= z <= high:
            z = 0.5 * (low + high)
    return z, value, curvature


@kernel
def _partition_step(log_a, n, step, g, d, e2, a, terms_h, terms_xh):
    """Quadrature of one step with log-weights ``log_a[:n]`` (n >= 2).

    Writes G_i, D_i and E[h(x_i)^2] to ``g``, ``d``, ``e2`` and returns (log P, Var(Σ_i h(x_i))).
    ``a``, ``terms_h`` and ``terms_xh`` are scratch of length n.
    """
    for i in range(n):
        a[i] = np.exp(log_a[i])
    z_mode, peak, curvature = _mode(log_a, a, n, terms_h, terms_xh)
    sigma = min(1.0, 1.0 / np.sqrt(-curvature))
    # tails: beyond the tangents at z* -/+ 5 sigma, the neglected mass is below e^{-TAIL} of the peak
    z_left = z_mode - _TANGENT * sigma
    value, slope, _, _ = _evaluate(z_left, log_a, a, n, terms_h, terms_xh)
    z_low = z_left - max(0.0, (value - peak + _TAIL - np.log(slope)) / slope)
    z_right = z_mode + _TANGENT * sigma
    value, slope, _, _ = _evaluate(z_right, log_a, a, n, terms_h, terms_xh)
    z_high = z_right + max(0.0, (value - peak + _TAIL - np.log(-slope)) / -slope)

    squeeze = 6.0 * (1.0 - sigma)
    for i in range(n):
        g[i] = 0.0
        d[i] = 0.0
        e2[i] = 0.0
    total = 0.0
    first = 0.0
    second = 0.0
    center = 0.0
    # nodes xi = k * step, k = 0, 1, ... until z passes z_high, then k = -1, -2, ... until below z_low
    for direction in (1, -1):
        k = 0 if direction == 1 else -1
        while True:
            xi = k * step
            tanh = np.tanh(xi / 6.0)
            z = z_mode + xi - squeeze * tanh
            jacobian = 1.0 - (1.0 - sigma) * (1.0 - tanh * tanh)
            psi, _, _, sum_h = _evaluate(z, log_a, a, n, terms_h, terms_xh)
            weight = jacobian * np.exp(psi - peak)
            if k == 0:
                center = sum_h  # centring the variance's sums keeps them free of cancellation
            total += weight
            first += weight * (sum_h - center)
            second += weight * (sum_h - center) ** 2
            for i in range(n):
                g[i] += weight * terms_h[i]
                d[i] += weight * terms_xh[i]
                e2[i] += weight * terms_h[i] * terms_h[i]
            if (direction == 1 and z >= z_high) or (direction == -1 and z <= z_low):
                break
            k += direction
    for i in range(n):
        g[i] /= total
        d[i] /= total
        e2[i] /= total
    mean = first / total
    return peak + np.log(step * total), max(second / total - mean * mean, 0.0)


# --------------------------------------------------------------------------------------------------
# Whole queries

@kernel
def _partitions(labels, lo, hi):
    """Documents of query lo:hi by label, descending: ``order`` and the partitions' starts (M + 1)."""
    n = hi - lo
    negated = np.empty(n)
    for i in range(n):
        negated[i] = -labels[lo + i]
    order = np.argsort(negated, kind="mergesort")
    starts = np.empty(n + 1, dtype=np.int64)
    m = 0
    for t in range(n):
        if t == 0 or labels[lo + order[t]] != labels[lo + order[t - 1]]:
            starts[m] = t
            m += 1
    starts[m] = n
    return order, starts[:m + 1]


@kernel
def _suffix_log_sums(scores, lo, order, starts):
    """below[m] = log-sum-exp of the scores of partitions m, m + 1, ..., M - 1 (below[M] = -inf)."""
    n_parts = starts.shape[0] - 1
    below = np.empty(n_parts + 1)
    below[n_parts] = -np.inf
    for m in range(n_parts - 1, -1, -1):
        biggest = -np.inf
        for t in range(starts[m], starts[m + 1]):
            biggest = max(biggest, scores[lo + order[t]])
        total = 0.0
        for t in range(starts[m], starts[m + 1]):
            total += np.exp(scores[lo + order[t]] - biggest)
        below[m] = logaddexp(below[m + 1], biggest + np.log(total))
    return below


@kernel
def _collect_lower_terms(scores, lo, order, starts, log_norm, coef_a, coef_b, first_partition_shift,
                         grad64, hess64):
    """Add the closed-form terms of documents in the lower side of each step.

    Step m contributes coef_a[m] y + ... with y = e^{s_j - log_norm[m]}: gradient coef_a[m] y, hessian
    coef_a[m] y - coef_b[m] y^2, to every document j of partitions m + first_partition_shift, ... . Prefix
    sums are rescaled to the deepest step a document belongs to, so every exponent is <= 0.
    """
    n_steps = coef_a.shape[0]
    n_parts = starts.shape[0] - 1
    chain_a = 0.0
    chain_b = 0.0
    for m in range(n_steps):
        if m > 0:
            ratio = np.exp(log_norm[m] - log_norm[m - 1])
            chain_a *= ratio
            chain_b *= ratio * ratio
        chain_a += coef_a[m]
        chain_b += coef_b[m]
        # documents whose deepest step is m
        last_part = m + first_partition_shift if m < n_steps - 1 else n_parts - 1
        for p in range(m + first_partition_shift, last_part + 1):
            for t in range(starts[p], starts[p + 1]):
                y = np.exp(scores[lo + order[t]] - log_norm[m])
                grad64[t] += chain_a * y
                hess64[t] += chain_a * y - chain_b * y * y


@kernel
def _pl_partition_query(scores, labels, lo, hi, step, hessian_floor, grad, hess):
    """PL-Partition loss of query lo:hi; writes its gradient and floored hessian."""
    order, starts = _partitions(labels, lo, hi)
    n = hi - lo
    n_parts = starts.shape[0] - 1
    if n_parts < 2:
        for i in range(lo, hi):
            grad[i] = 0.0
            hess[i] = hessian_floor
        return 0.0
    below = _suffix_log_sums(scores, lo, order, starts)
    grad64 = np.zeros(n)  # by rank in `order`
    hess64 = np.zeros(n)
    n_steps = n_parts - 1
    coef_h = np.empty(n_steps)
    coef_h_plus_phi = np.empty(n_steps)
    log_norm = np.empty(n_steps)
    widest = 0
    for m in range(n_steps):
        widest = max(widest, starts[m + 1] - starts[m])
    log_a = np.empty(widest)
    weights = np.empty(widest)
    g = np.empty(widest)
    d = np.empty(widest)
    e2 = np.empty(widest)
    scratch_h = np.empty(widest)
    scratch_xh = np.empty(widest)
    loss = 0.0
    for m in range(n_steps):
        w_r = below[m + 1]
        log_norm[m] = w_r
        size = starts[m + 1] - starts[m]
        for i in range(size):
            log_a[i] = scores[lo + order[starts[m] + i]] - w_r
        if size == 1:  # closed form: P = sigmoid(u), -log P = softplus(-u)
            u = log_a[0]
            if u > 0:
                loss += np.log1p(np.exp(-u))
            else:
                loss += -u + np.log1p(np.exp(u))
            p_s = 1.0 / (1.0 + np.exp(-u))
            p_not = 1.0 / (1.0 + np.exp(u))
            grad64[starts[m]] -= p_not
            hess64[starts[m]] += p_s * p_not
            coef_h[m] = p_not
            coef_h_plus_phi[m] = p_not * p_not  # H + Φ = H^2 for a single document
            continue
        log_p, variance = _partition_step(log_a, size, step, g, d, e2, weights, scratch_h, scratch_xh)
        loss -= log_p
        total_h = 0.0
        phi = variance
        for i in range(size):
            grad64[starts[m] + i] -= g[i]
            hess64[starts[m] + i] += g[i] * g[i] - g[i] + d[i]
            total_h += g[i]
            phi += g[i] - d[i] - e2[i]
        coef_h[m] = total_h
        coef_h_plus_phi[m] = total_h + phi
    _collect_lower_terms(scores, lo, order, starts, log_norm, coef_h, coef_h_plus_phi, 1, grad64, hess64)
    for t in range(n):
        grad[lo + order[t]] = grad64[t]
        hess[lo + order[t]] = max(hess64[t], hessian_floor)
    return loss


@kernel
def _pl_lower_bound_query(scores, labels, lo, hi, hessian_floor, grad, hess):
    """PL-LB loss of query lo:hi: -Σ_m [log n_m! + Σ_{S_m} s - n_m log Σ_{S_m ∪ R_{m+1}} e^s]."""
    order, starts = _partitions(labels, lo, hi)
    n = hi - lo
    n_parts = starts.shape[0] - 1
    if n_parts < 2:
        for i in range(lo, hi):
            grad[i] = 0.0
            hess[i] = hessian_floor
        return 0.0
    below = _suffix_log_sums(scores, lo, order, starts)
    grad64 = np.zeros(n)
    hess64 = np.zeros(n)
    n_steps = n_parts - 1
    sizes = np.empty(n_steps)
    loss = 0.0
    for m in range(n_steps):
        size = starts[m + 1] - starts[m]
        sizes[m] = size
        loss += size * below[m] - math.lgamma(size + 1.0)
        for t in range(starts[m], starts[m + 1]):
            loss -= scores[lo + order[t]]
            grad64[t] -= 1.0
    # softmax terms n_m q_j over S_m ∪ R_{m+1}: the same prefix sums, normalised by below[m]
    _collect_lower_terms(scores, lo, order, starts, below[:n_steps], sizes, sizes, 0, grad64, hess64)
    for t in range(n):
        grad[lo + order[t]] = grad64[t]
        hess[lo + order[t]] = max(hess64[t], hessian_floor)
    return loss


@kernel(parallel=True)
def _pl_partition_kernel(scores, labels, offsets, step, hessian_floor, grad, hess):
    n_queries = offsets.shape[0] - 1
    losses = np.empty(n_queries)
    for q in prange(n_queries):
        losses[q] = _pl_partition_query(scores, labels, offsets[q], offsets[q + 1], step, hessian_floor,
                                        grad, hess)
    return losses


@kernel(parallel=True)
def _pl_lower_bound_kernel(scores, labels, offsets, hessian_floor, grad, hess):
    n_queries = offsets.shape[0] - 1
    losses = np.empty(n_queries)
    for q in prange(n_queries):
        losses[q] = _pl_lower_bound_query(scores, labels, offsets[q], offsets[q + 1], hessian_floor, grad, hess)
    return losses


# --------------------------------------------------------------------------------------------------
# The objectives

class _PartitionObjective(RankingObjective):
    def _run(self, scores, data: QueryData, grad, hess) -> np.ndarray:
        raise NotImplementedError

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> None:
        self._run(scores, data, grad, hess)

    def losses(self, scores, labels, offsets) -> np.ndarray:
        """Per-query loss: -Σ_m log P(S_m ≻ R_{m+1}) (PL-Partition) or its bound (PL-LB)."""
        data = QueryData.from_arrays(labels, offsets)
        scores = check_scores(scores, data.n_docs, name=f"{type(self).__name__} scores")
        grad = np.empty(data.n_docs, dtype=np.float32)
        hess = np.empty(data.n_docs, dtype=np.float32)
        return self._run(scores, data, grad, hess)


class PLPartition(_PartitionObjective):
    """The exact Plackett-Luce likelihood of tied grades (partitioned preference), by quadrature.

    Parameters
    ----------
    quadrature_step : float, default 0.4
        Step h of the trapezoid in the mapped variable. Largest absolute errors measured by
        ``scripts/partition_accuracy.py`` (partitions of 2-50 documents, |R| up to 200, logits over ±10,
        the partition level with, far above or far below R) on log P / gradients / hessians: h = 0.5:
        2.4e-8 / 3.0e-8 / 3.4e-8; h = 0.4: 3.8e-10 / 2.2e-10 / 2.7e-10; h = 0.3: 6.8e-13 / 3.7e-14 /
        5.2e-14. The cost grows as 1/h. Between 0.05 and 1.
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    The math is in the module docstring (Ma et al., AISTATS 2021).
    """

    name = "pl_partition"

    def __init__(self, *, quadrature_step: float = 0.4, hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(hessian_floor=hessian_floor)
        quadrature_step = float(quadrature_step)
        if not 0.05 <= quadrature_step <= 1.0:
            raise ValueError(f"quadrature_step must be between 0.05 and 1, got {quadrature_step!r}")
        self.quadrature_step = quadrature_step

    def _params(self) -> dict:
        return {"quadrature_step": self.quadrature_step, "hessian_floor": self.hessian_floor}

    def _run(self, scores, data, grad, hess):
        return _pl_partition_kernel(scores, data.labels, data.offsets, self.quadrature_step, self.hessian_floor,
                                    grad, hess)


class PLLowerBound(_PartitionObjective):
    """PL-LB: each partition step replaced by its lower bound n_S! Π e^{s_i} / (Σ_{S∪R} e^{s_j})^{n_S}.

    The baseline of Ma et al. (AISTATS 2021), after Hino et al. A softmax cross-entropy per step,
    O(n) per query.

    Parameters
    ----------
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.
    """

    name = "pl_lb"

    def _run(self, scores, data, grad, hess):
        return _pl_lower_bound_kernel(scores, data.labels, data.offsets, self.hessian_floor, grad, hess)
