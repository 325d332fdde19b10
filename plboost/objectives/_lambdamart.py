"""What LambdaMART's family shares: LightGBM's ``lambdarank`` pair machinery, used by uMart
(:mod:`plboost.objectives.umart`) and LambdaLoss (:mod:`plboost.objectives.lambdaloss`).

For one query, documents are sorted by score (stable, descending; positions i = 0, 1, ...), with gains
G(y) (``label_gain``, default 2^y - 1) and discounts D(i) = 1 / log2(2 + i). Pairs are positions i < j with
i below the truncation level and different labels; for the pair's higher-rated h and lower-rated l,

.. math::

    F_{hl} = \\frac{G(y_h) - G(y_l)}{\\mathrm{maxDCG}}
             \\bigl(a\\,|D(i_h) - D(i_l)| + \\mu\\,\\delta_{|i_h - i_l|}\\bigr), \\quad
    p_l = \\frac{1}{1 + e^{\\sigma (s_h - s_l)}},

    \\lambda_l \\mathrel{+}= \\sigma p_l F_{hl}, \\quad \\lambda_h \\mathrel{-}= \\sigma p_l F_{hl}, \\quad
    \\nu_h, \\nu_l \\mathrel{+}= \\sigma^2 p_l (1 - p_l) F_{hl}.

With a = 1 and μ = 0 this is LightGBM's ``lambdarank`` (maxDCG at the truncation level); LambdaLoss adds
the distance weights δ. ``lambdarank_norm`` divides F by 0.01 + |s_h - s_l| when the query's scores are not
all equal, and scales the query's lambdas and hessians by log2(1 + Λ) / Λ, Λ = Σ 2 σ p_l F.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._jit import helper, kernel
from .._numerics import stable_argsort
from ._base import DEFAULT_HESSIAN_FLOOR, zero_query

#: LightGBM's default label_gain covers labels 0..30
DEFAULT_GAIN_LABELS = 31
#: LightGBM's sigmoid table: 2^20 bins over [-25 / sigma, 25 / sigma]
_SIGMOID_BINS = 1024 * 1024
#: LightGBM adds the float constant 0.01f (0.0099999998) to |s_h - s_l|
DISTANCE_EPSILON = float(np.float32(0.01))


def lambdarank_hessian_floor(params: dict) -> float:
    """The hessian floor of an objective with ``lightgbm_arithmetic`` when none is given: 0 with LightGBM's
    arithmetic, whose lambdarank leaves a document outside every pair at hessian 0 (a floor would add to every
    leaf's hessian sum, and so change the leaf values of a model meant to be LightGBM's bit for bit), else
    :data:`~plboost.objectives._base.DEFAULT_HESSIAN_FLOOR`."""
    return 0.0 if params["lightgbm_arithmetic"] else DEFAULT_HESSIAN_FLOOR


def label_gains(labels: np.ndarray, label_gain) -> np.ndarray:
    """The gain of each label 0..max: ``label_gain``, or LightGBM's default table 2^y - 1 (labels 0..30).

    A table of the user's is scaled by the power of two that brings its largest entry into [0.5, 1): every pair's
    F divides a difference of gains by the ideal DCG, so F is the same bit for bit, and the ideal DCG stays
    finite for entries of any size (two entries near 1e308 summed to infinity, and F to 0)."""
    top = int(labels.max()) if labels.size else 0
    if label_gain is None:
        if top >= DEFAULT_GAIN_LABELS:
            raise ValueError(f"label {top} is beyond the default label_gain (labels 0..30, as LightGBM's); "
                             "pass label_gain=[...] to cover it")
        return np.exp2(np.arange(DEFAULT_GAIN_LABELS, dtype=np.float64)) - 1.0
    if top >= len(label_gain):
        raise ValueError(f"label {top} has no entry in label_gain (it covers labels 0..{len(label_gain) - 1})")
    table = np.asarray(label_gain, dtype=np.float64)
    largest = float(np.abs(table).max())
    return np.ldexp(table, -np.frexp(largest)[1]) if largest > 0.0 else table


#: a query longer than this, with every pair in it, is warned about: its pairs grow with the square of its length
ALL_PAIRS_WARNING_LENGTH = 10_000


def warn_of_all_pairs(name: str, truncation: int | None, longest: int) -> None:
    """Warn in one line where ``lambdarank_truncation_level=None`` pairs every document of a query longer than
    :data:`ALL_PAIRS_WARNING_LENGTH` with every other: n(n - 1)/2 pairs a round, where a truncation level keeps
    them linear in n."""
    if truncation is None and longest > ALL_PAIRS_WARNING_LENGTH:
        warnings.warn(f"{name} with lambdarank_truncation_level=None pairs every document with every other: the "
                      f"longest query has {longest:,} documents, {longest * (longest - 1) / 2:.3g} pairs a round; "
                      "set lambdarank_truncation_level (30 in the lightgbm preset) for a cost linear in its length",
                      UserWarning, stacklevel=4)


def position_discounts(longest: int) -> np.ndarray:
    """D(i) = 1 / log2(2 + i) for positions i = 0 .. longest - 1."""
    return 1.0 / np.log2(2.0 + np.arange(longest))


@kernel
def inverse_max_dcgs(first, end, labels, offsets, gains, at, result):
    """1 / (DCG at ``at`` of the ideal ordering of each query ``first <= q < end``), or 0 when that DCG is 0,
    written to ``result``. The ideal ordering is read off a count of each label (labels index ``gains``)."""
    count = np.empty(gains.shape[0], dtype=np.int64)
    for q in range(first, end):
        for label in range(gains.shape[0]):
            count[label] = 0
        for i in range(offsets[q], offsets[q + 1]):
            count[np.int64(labels[i])] += 1
        total = 0.0
        position = 0
        for label in range(gains.shape[0] - 1, -1, -1):
            for _ in range(count[label]):
                if position == at:
                    break
                total += gains[label] / np.log2(2.0 + position)
                position += 1
        result[q] = 1.0 / total if total > 0.0 else 0.0


@helper
def lightgbm_sigmoid(delta, sigma):
    """LightGBM's table lookup for 1 / (1 + exp(sigma * delta)), computed without storing the table."""
    low = -50.0 / sigma / 2.0
    factor = _SIGMOID_BINS / (-2.0 * low)
    if delta <= low:
        index = 0
    elif delta >= -low:
        index = _SIGMOID_BINS - 1
    else:
        index = np.int64((delta - low) * factor)
    return 1.0 / (1.0 + np.exp((index / factor + low) * sigma))


@helper
def log_one_plus_exp(x):
    """log(1 + e^x), without overflow for large x."""
    if x > 0.0:
        return x + np.log1p(np.exp(-x))
    return np.log1p(np.exp(x))


#: below this e^{σ (s - max)}, a pair's exact sigmoid comes from an exponential of its own (both terms may be 0)
TINY_EXPO = 1e-280


@helper
def lambda_pairs(score, level, gain, expo, discounts, distance_weights, limit, inverse_max_dcg, sigma, rank_weight, mu,
                 divide, lightgbm_arithmetic, with_loss, lam, nu):
    """The pair terms of one sorted query (module docstring, F with a = ``rank_weight``).

    Returns (Λ, loss): with ``with_loss``, the loss Σ F log(1 + e^{-σ (s_h - s_l)}) of the pairs as weighted
    (meaningful without ``divide``), else 0. The exact sigmoid comes from ``expo`` (e^{σ (s - max)} by position)
    without an exponential per pair: each position's pairs with every later position in one loop that LLVM
    vectorises (:func:`_pairs_after`), where pairs of one label weigh 0. Without the vectorised loop (the loss
    asked for, or e^{σ (s_i - max)} below ``TINY_EXPO``) pair by pair. With ``lightgbm_arithmetic`` the terms are
    LightGBM's bit for bit at μ = 0: its sigmoid table, its order of operations, float32 sums (each document's sum
    sees its terms in LightGBM's order).
    """
    n = score.shape[0]
    total = 0.0
    loss = 0.0
    if lightgbm_arithmetic:
        for i in range(limit):
            for j in range(i + 1, n):
                if level[i] == level[j]:
                    continue
                ih, il = (i, j) if level[i] > level[j] else (j, i)
                gap = score[ih] - score[il]
                weight = rank_weight * abs(discounts[ih] - discounts[il])
                if mu > 0.0:
                    weight += mu * distance_weights[j - i]
                f = (gain[ih] - gain[il]) * weight * inverse_max_dcg
                if divide:
                    f /= DISTANCE_EPSILON + abs(gap)
                p_l = lightgbm_sigmoid(gap, sigma)
                step = p_l * (sigma * f)
                curvature = np.float32((p_l * (1.0 - p_l)) * (sigma * sigma * f))
                lam[il] = np.float32(lam[il]) + np.float32(step)
                lam[ih] = np.float32(lam[ih]) - np.float32(step)
                nu[il] = np.float32(nu[il]) + curvature
                nu[ih] = np.float32(nu[ih]) + curvature
                total += 2.0 * step
        return total, loss
    for i in range(limit):
        if not with_loss and expo[i] > TINY_EXPO:
            lam_i, nu_i, total_i = _pairs_after(i, score, level, gain, expo, discounts, distance_weights,
                                                inverse_max_dcg, sigma, rank_weight, mu, divide, lam, nu)
            lam[i] += lam_i
            nu[i] += nu_i
            total += total_i
            continue
        for j in range(i + 1, n):
            if level[i] == level[j]:
                continue
            sign = 1.0 if level[i] > level[j] else -1.0  # +1: i is the higher-rated
            gap = sign * (score[i] - score[j])  # s_h - s_l
            weight = rank_weight * abs(discounts[i] - discounts[j]) + mu * distance_weights[j - i]
            f = sign * (gain[i] - gain[j]) * weight * inverse_max_dcg
            if divide:
                f /= DISTANCE_EPSILON + abs(gap)
            denominator = expo[i] + expo[j]
            if denominator > TINY_EXPO:
                p_l = (expo[j] if sign > 0.0 else expo[i]) / denominator
            else:
                p_l = 1.0 / (1.0 + np.exp(sigma * gap))
            step = p_l * (sigma * f)
            curvature = (p_l * (1.0 - p_l)) * (sigma * sigma * f)
            lam[i] -= sign * step  # lambda_h -= step, lambda_l += step
            lam[j] += sign * step
            nu[i] += curvature
            nu[j] += curvature
            if with_loss:
                loss += f * log_one_plus_exp(-sigma * gap)
            total += 2.0 * step
    return total, loss


@helper(fastmath={"reassoc"})
def _pairs_after(i, score, level, gain, expo, discounts, distance_weights, inverse_max_dcg, sigma, rank_weight, mu,
                 divide, lam, nu):
    """Position i's pair terms with every position j > i, added to ``lam[j]`` and ``nu[j]``; returns i's own sums
    (λ_i, ν_i) and the pairs' Σ 2 σ p_l F. A loop without a branch, over arrays read in order, that LLVM vectorises:
    pairs of one label (42% of the (i, j) on MSLR-like queries) have G_h - G_l = 0 and add exactly 0, which costs
    less than a test of labels in the loop; μ δ is added at μ = 0 too (+0). Only the sums over j are
    reassociated. Needs e^{σ (s_i - max)} > ``TINY_EXPO`` (no exponential per pair)."""
    level_i, score_i, gain_i, expo_i, discount_i = level[i], score[i], gain[i], expo[i], discounts[i]
    lam_i = 0.0
    nu_i = 0.0
    total = 0.0
    for position in range(i + 1, score.shape[0]):
        j = np.uint64(position)  # unsigned: no negative-index wraparound in the vectorised loop
        sign = 1.0 if level_i > level[j] else -1.0  # +1: i is the higher-rated
        gap = sign * (score_i - score[j])  # s_h - s_l
        weight = rank_weight * abs(discount_i - discounts[j]) + mu * distance_weights[np.uint64(position - i)]
        f = sign * (gain_i - gain[j]) * weight * inverse_max_dcg
        f = f / (DISTANCE_EPSILON + abs(gap)) if divide else f
        p_l = (expo[j] if sign > 0.0 else expo_i) / (expo_i + expo[j])
        step = p_l * (sigma * f)
        curvature = (p_l * (1.0 - p_l)) * (sigma * sigma * f)
        lam_i -= sign * step  # lambda_h -= step, lambda_l += step
        lam[j] += sign * step
        nu_i += curvature
        nu[j] += curvature
        total += 2.0 * step
    return lam_i, nu_i, total


@helper
def sorted_query(scores, labels, lo, hi, gains, sigma):
    """Query ``lo:hi`` ordered by score, descending, ties in input order (LightGBM's order): the order,
    and by position the score, gain, e^{sigma (s - max)} and label level (0 the lowest label present),
    and the number of levels."""
    n = hi - lo
    negated = np.empty(n)
    for i in range(n):
        negated[i] = -scores[lo + i]
    by_score = stable_argsort(negated)
    score = np.empty(n)
    gain = np.empty(n)
    expo = np.empty(n)
    label = np.empty(n, dtype=np.int64)
    top = scores[lo + by_score[0]]
    for i in range(n):
        score[i] = scores[lo + by_score[i]]
        label[i] = np.int64(labels[lo + by_score[i]])
        gain[i] = gains[label[i]]
        expo[i] = np.exp(sigma * (score[i] - top))
    # levels from a table over the possible labels
    level_of = np.zeros(gains.shape[0], dtype=np.int64)
    for i in range(n):
        level_of[label[i]] = 1
    n_levels = 0
    for value in range(gains.shape[0]):
        if level_of[value]:
            level_of[value] = n_levels
            n_levels += 1
    level = label  # reused: a label is read before its level is written
    for i in range(n):
        level[i] = level_of[label[i]]
    return by_score, score, gain, expo, level, n_levels


@helper
def write_query(lo, by_score, lam_p, nu_p, total_lambda, log_norm, grad, hess):
    """Gradients and raw hessians of a query from its pair sums by position (LambdaMART's log norm
    rescales them by log2(1 + Λ) / Λ)."""
    factor = 1.0
    if log_norm and total_lambda > 0.0:
        factor = np.log2(1.0 + total_lambda) / total_lambda
    for i in range(by_score.shape[0]):
        grad[lo + by_score[i]] = lam_p[i] * factor
        hess[lo + by_score[i]] = nu_p[i] * factor


@kernel
def lambda_kernel(first, end, scores, labels, offsets, inverse_max_dcgs, gains, discounts, distance_weights, sigma,
                  truncation, rank_weight, mu, score_distance_norm, log_norm, lightgbm_arithmetic, with_loss, grad,
                  hess, losses):
    """Gradients and raw hessians of queries ``first <= q < end`` by ``lambda_pairs``, and with ``with_loss`` each
    query's loss (see there) in ``losses``. Queries of one document or no gain get zeros."""
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        losses[q] = 0.0
        if n < 2 or inverse_max_dcgs[q] == 0.0:
            zero_query(grad, hess, lo, hi)
            continue
        by_score, score, gain, expo, level, _ = sorted_query(scores, labels, lo, hi, gains, sigma)
        lam_p = np.zeros(n)
        nu_p = np.zeros(n)
        total_lambda, losses[q] = lambda_pairs(score, level, gain, expo, discounts, distance_weights,
                                               min(n - 1, truncation), inverse_max_dcgs[q], sigma, rank_weight, mu,
                                               score_distance_norm and score[0] != score[n - 1],
                                               lightgbm_arithmetic, with_loss, lam_p, nu_p)
        write_query(lo, by_score, lam_p, nu_p, total_lambda, log_norm, grad, hess)
