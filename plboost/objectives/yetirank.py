"""YetiRank and YetiLoss: pairwise logistic gradients on neighbouring pairs of rankings drawn from noisy scores.

YetiRank: Gulin, Kuralenok, Pavlov, "Winning the transfer learning track of Yahoo!'s learning to rank challenge
with YetiRank", JMLR W&CP 14 (2011); CatBoost's default ranking loss. YetiLoss: Lyzhin, Ustimenko, Gulin,
Prokhorenkova, "Which Tricks Are Important for Learning to Rank?", ICML 2023 (CatBoost's YetiRank ``mode``).

For one query with scores s and labels y, each of P rankings is drawn by sorting the perturbed scores
z_d = s_d + τ ε_d (descending, ties in input order). Walking a ranking, position t (0-based) pairs with the
documents at t + 1 .. t + K (K = ``neighbors``); a pair of different labels, h the higher-rated and l the other,
gets a weight c, and W_hl = (1/P) Σ c over the rankings. The gradient and diagonal hessian are those of

.. math::

    \\sum_{h, l} W_{hl} \\log\\bigl(1 + e^{-(s_h - s_l)}\\bigr), \\quad
    g_h \\mathrel{-}= W_{hl} p, \\; g_l \\mathrel{+}= W_{hl} p, \\;
    h_h, h_l \\mathrel{+}= W_{hl} p (1 - p), \\quad p = \\frac{1}{1 + e^{s_h - s_l}},

at the unperturbed scores, the weights held fixed (``hessian="pair_weight"`` takes W_hl itself as the
curvature, CatBoost's GPU choice). The weight c of a pair at positions t < u:

- ``loss="classic"`` (YetiRank): c = ``weight_scale`` · ``decay``^t · |y_h - y_l|, neighbours only (CatBoost's
  0.15 and 0.85);
- ``"dcg"`` / ``"ndcg"`` (YetiLoss): |ΔDCG@k| of swapping the two, |G_h - G_l| · |D(t) - D(u)| with
  D(t) = 1 / log2(2 + t) for t < k and 0 beyond, divided by the ideal DCG@k for NDCG; G(y) = y (``gain="linear"``,
  CatBoost's) or 2^y - 1; only t < k;
- ``"mrr"`` (YetiLoss): |ΔRR| of the swap, the relevant documents being those of label > 0.

A ranking is walked only as far as a pair can weigh: for the classic weights, down to the pairs whose decay^t is
2^-52 of the first's (222 positions at decay 0.85: the pairs below change a sum by less than its last digit, and
documents no ranking puts above get 0); for YetiLoss on (N)DCG, to ``top`` + K. Where those positions are at most
half of the query, a heap selects them instead of a sort of the whole query, in the same order: linear in the
query's length for a long one.

The noise ε: ``"logistic"`` log(u / (1 - u)), CatBoost's (which CatBoost's option calls "Gumbel": it
multiplies e^s by u / (1.000001 - u)); ``"gumbel"`` -log(-log u), with which each ranking is a Plackett-Luce
draw of softmax(s / τ); ``"none"``, the ranking by the scores themselves. Differences of two logistic
variables are not logistic, so logistic noise is not Plackett-Luce sampling.

Draws: the uniforms u come from the counter-based stream of PL-Rank-3 (:func:`plboost._random.score_stream_key`):
document d's uniform of ranking p is number p n + t_d, t_d its place by score. A call is a pure function of
(scores, labels, offsets, parameters): each round draws anew; threads, copies and earlier calls change nothing.
CatBoost's draws depend on the query's place in the data instead, so the two agree in distribution, not bit for
bit.
"""

from __future__ import annotations

import numpy as np

from .._constraints import FLOAT32_MAX, SEED, Integer, Options, Real
from .._jit import helper, kernel, over_queries, widest_query
from .._numerics import largest_k, score_range, stable_argsort
from .._queries import exp_gains_within_float32, relative_exp_gains
from .._random import score_stream_key, stream_order, uniform
from ._base import (DEFAULT_HESSIAN_FLOOR, WIDEST_SCORE_GAP, QueryData, RankingObjective, refuse_overflow,
                    zero_query)

NOISES = ("logistic", "gumbel", "none")
LOSSES = ("classic", "dcg", "ndcg", "mrr")
GAINS = ("linear", "exp")
HESSIANS = ("logistic", "pair_weight")
_LOGISTIC, _GUMBEL, _NONE = 0, 1, 2
_CLASSIC, _DCG, _NDCG, _MRR = 0, 1, 2, 3
#: the classic weights of pairs further down a ranking than decay^t = this are left out: they are below the last
#: digit of the first pair's weight (222 positions at CatBoost's decay of 0.85), and walking them is what made
#: long queries slow (docs/benchmarks.md)
_NEGLIGIBLE_DECAY = 2.0 ** -52
#: a uniform of 0 is drawn as this, so that every noise is finite
_SMALLEST_UNIFORM = 2.0 ** -60
#: queries whose scores span at most this many noise scales draw their rankings in linear space (e^{-600} is a
#: normal float, and e^{s / τ} times the largest e^ε, 2^60, stays finite)
_LINEAR_SPAN = 600.0

#: "catboost": CatBoost's YetiRank defaults (1.2.x); "plackett_luce": YetiLoss on NDCG with rankings drawn from
#: the Plackett-Luce model of the current scores, plboost's NDCG gains
_PRESETS = {
    "catboost": dict(noise="logistic", noise_scale=1.0, permutations=10, decay=0.85, weight_scale=0.15,
                     loss="classic", gain="linear", neighbors=1, hessian="logistic"),
    "plackett_luce": dict(noise="gumbel", noise_scale=1.0, permutations=10, decay=0.85, weight_scale=0.15,
                          loss="ndcg", gain="exp", neighbors=1, hessian="logistic"),
}


@helper
def _document_weights(scores, lo, n, top_score, noise_scale, linear, weight):
    """Each document's part of its ranking key: e^{(s - s_max) / τ} in linear space, (s - s_max) / τ in log space."""
    for d in range(n):
        relative = (scores[lo + d] - top_score) / noise_scale
        weight[d] = np.exp(relative) if linear else relative


@helper
def _ranking_keys(n, stream_place, key, ranking, noise, linear, weight, sign, keys):
    """The perturbed score of each document in ranking number ``ranking`` times ``sign`` (-1: an ascending sort
    ranks them), up to a monotone map: e^{z / τ} = e^{s / τ} e^{ε} in linear space (a division and no logarithm
    for logistic noise, e^ε = u / (1 - u); one logarithm for Gumbel's, e^ε = 1 / (-log u)), z / τ in log space.
    Document d draws uniform number ``stream_place[d]`` (its place by score) of the ranking's stream."""
    for d in range(n):
        u = max(uniform(key, ranking * n + stream_place[d]), _SMALLEST_UNIFORM)
        if linear:
            keys[d] = sign * (weight[d] * (u / (1.0 - u) if noise == _LOGISTIC else 1.0 / -np.log(u)))
        else:
            keys[d] = sign * (weight[d] + (np.log(u) - np.log1p(-u) if noise == _LOGISTIC else -np.log(-np.log(u))))


@helper
def _swap_weight(ranked, t, u, labels, gains, lo, mode, discounts, first_relevant, second_relevant):
    """c of the documents at positions t < u of a sampled ranking (module docstring), before the query's
    normaliser, for the losses but "classic" (``_add_ranking_pairs`` has its own loop); 0 for a pair of equal
    labels."""
    a = ranked[t]
    b = ranked[u]
    if labels[lo + a] == labels[lo + b]:
        return 0.0
    if mode == _MRR:
        if (labels[lo + a] > 0.0) == (labels[lo + b] > 0.0) or t > first_relevant:
            return 0.0
        if t < first_relevant:  # the relevant one, at u >= first_relevant, moves up to t
            return 1.0 / (t + 1.0) - 1.0 / (first_relevant + 1.0)
        return 1.0 / (t + 1.0) - 1.0 / (min(u, second_relevant) + 1.0)  # the first relevant moves down to u
    return abs(gains[lo + a] - gains[lo + b]) * abs(discounts[t] - discounts[u])


@helper
def _draw_ranking(n, order, stream_place, key, ranking, noise, noise_scale, linear, weight, walked, keys, heap_key,
                  heap_index, top):
    """The first ``walked`` documents of the query in sampled ranking number ``ranking``, best first (an array of
    at least that many). Where they are at most half of the query, a heap selects them (``largest_k``, O(n) for
    a few) instead of a sort of all: the same documents in the same order, ties in input order either way."""
    if noise == _NONE or noise_scale == 0.0:
        return order
    if 2 * walked <= n:
        _ranking_keys(n, stream_place, key, ranking, noise, linear, weight, 1.0, keys)
        largest_k(keys, n, walked, heap_key, heap_index, top)
        return top
    _ranking_keys(n, stream_place, key, ranking, noise, linear, weight, -1.0, keys)
    return stable_argsort(keys[:n])


@helper
def _walked_positions(mode, decays, top, neighbors, widest):
    """How many positions of a ranking can carry a pair's weight: for the classic weights, those of the pairs
    whose decay^t is at least ``_NEGLIGIBLE_DECAY`` (and their neighbours); for DCG and NDCG those of the pairs
    above ``top``; for MRR the whole ranking."""
    if mode == _MRR:
        return widest
    if mode == _CLASSIC:
        reach = 0
        while reach < widest and decays[reach] >= decays[0] * _NEGLIGIBLE_DECAY:
            reach += 1
        return reach + neighbors
    return min(top, widest) + neighbors


@kernel
def _yetirank_kernel(first, end, scores, labels, offsets, gains, factors, seed, permutations, noise, noise_scale,
                     mode, decay, weight_scale, top, neighbors, pair_weight_hessian, grad, hess):
    """YetiRank gradients and raw hessians of queries ``first <= q < end``; ``factors[q]``: the query's
    normaliser (0: no pair can count)."""
    widest = widest_query(offsets, first, end)
    relative = np.empty(widest)
    weight = np.empty(widest)
    keys = np.empty(widest)
    expo = np.empty(widest)
    g_sum = np.empty(widest)
    h_sum = np.empty(widest)
    decays = np.empty(widest)
    discounts = np.empty(widest)  # 1 / log2(2 + t) at positions t < top, else 0
    stream_place = np.empty(widest, dtype=np.int64)
    heap_key = np.empty(widest)
    heap_index = np.empty(widest, dtype=np.int64)
    top_ranked = np.empty(widest, dtype=np.int64)
    for t in range(widest):
        decays[t] = weight_scale * decay ** t
        discounts[t] = 1.0 / np.log2(2.0 + t) if t < top else 0.0
    reach = _walked_positions(mode, decays, top, neighbors, widest)
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        if factors[q] == 0.0:
            zero_query(grad, hess, lo, hi)
            continue
        top_score, bottom_score = score_range(scores, lo, hi)
        linear = noise_scale > 0.0 and (top_score - bottom_score) / noise_scale <= _LINEAR_SPAN
        order = stream_order(scores[lo:hi])
        for t in range(n):
            stream_place[order[t]] = t
        walked = min(n, reach)
        key = score_stream_key(seed, scores, labels, lo, hi, order, relative, top_score, WIDEST_SCORE_GAP)
        if noise_scale > 0.0:
            _document_weights(scores, lo, n, top_score, noise_scale, linear, weight)
        for i in range(n):
            expo[i] = np.exp(scores[lo + i] - top_score)
            g_sum[i] = 0.0
            h_sum[i] = 0.0
        scale = factors[q] / permutations
        for p in range(permutations):
            ranked = _draw_ranking(n, order, stream_place, key, p, noise, noise_scale, linear, weight, walked, keys,
                                   heap_key, heap_index, top_ranked)
            _add_ranking_pairs(scores, labels, gains, lo, walked, ranked, expo, decays, discounts, mode, top,
                               neighbors, scale, pair_weight_hessian, g_sum, h_sum)
        for i in range(n):
            grad[lo + i] = g_sum[i]
            hess[lo + i] = h_sum[i]


@helper
def _add_ranking_pairs(scores, labels, gains, lo, n, ranked, expo, decays, discounts, mode, top, neighbors, scale,
                       pair_weight_hessian, g_sum, h_sum):
    """Add the pairs among the first ``n`` positions of one sampled ranking, each weighted ``scale`` times its c, to
    the sums of g and h."""
    if mode == _CLASSIC and neighbors == 1:
        _add_neighbour_pairs(scores, labels, lo, n, ranked, expo, decays, scale, pair_weight_hessian, g_sum, h_sum)
        return
    if mode == _CLASSIC:  # in a loop of its own: a fifth of the call faster than the general one
        for t in range(n - 1):
            for u in range(t + 1, min(n, t + 1 + neighbors)):
                a = ranked[t]
                b = ranked[u]
                difference = labels[lo + a] - labels[lo + b]
                # no branch on the labels, which a sampled ranking orders at random: a pair of equal labels adds
                # c = 0 (faster than skipping such pairs: docs/benchmarks.md)
                higher_first = difference > 0.0
                h = a if higher_first else b
                l = b if higher_first else a
                c = decays[t] * abs(difference) * scale
                _add_pair(scores, lo, h, l, c, expo, pair_weight_hessian, g_sum, h_sum)
        return
    first_relevant = n
    second_relevant = n
    if mode == _MRR:
        for t in range(n):
            if labels[lo + ranked[t]] > 0.0:
                if first_relevant == n:
                    first_relevant = t
                else:
                    second_relevant = t
                    break
    for t in range(min(n - 1, top)):
        for u in range(t + 1, min(n, t + 1 + neighbors)):
            c = _swap_weight(ranked, t, u, labels, gains, lo, mode, discounts, first_relevant, second_relevant)
            if c == 0.0:
                continue
            h, l = (ranked[t], ranked[u]) if labels[lo + ranked[t]] > labels[lo + ranked[u]] \
                else (ranked[u], ranked[t])
            _add_pair(scores, lo, h, l, c * scale, expo, pair_weight_hessian, g_sum, h_sum)


@helper
def _add_neighbour_pairs(scores, labels, lo, n, ranked, expo, decays, scale, pair_weight_hessian, g_sum, h_sum):
    """``_add_ranking_pairs`` for the classic weights and one neighbour (CatBoost's default): the same sums, added
    in the same order, in less time (docs/benchmarks.md). The pair at positions (t, t + 1) passes its part of the sums
    of the document at t + 1 on in registers (``carry_*``), to be stored with that document's pair with t + 2, so
    no iteration reads a sum the one before wrote. Which of the two is the higher-rated document (at random in a
    sampled ranking) enters as a sign and a selected value, not as a branch."""
    carry_g = 0.0
    carry_h = 0.0
    for t in range(n - 1):
        a = ranked[t]
        b = ranked[t + 1]
        difference = labels[lo + a] - labels[lo + b]
        sign = np.float64(difference > 0.0) * 2.0 - 1.0  # +1: a is the higher; -1: b (or equal labels, c = 0)
        denominator = expo[a] + expo[b]
        lower = expo[b] if difference > 0.0 else expo[a]
        if denominator > 1e-280:
            prob = lower / denominator
        else:
            prob = 1.0 / (1.0 + np.exp(sign * (scores[lo + a] - scores[lo + b])))
        c = decays[t] * abs(difference) * scale
        step = c * prob  # as _add_pair: g_h -= step, g_l += step
        curvature = c if pair_weight_hessian else step * (1.0 - prob)
        g_sum[a] = (g_sum[a] + carry_g) - sign * step  # a's pair with t - 1 first, then this one
        h_sum[a] = (h_sum[a] + carry_h) + curvature
        carry_g = sign * step
        carry_h = curvature
    last = ranked[n - 1]
    g_sum[last] += carry_g
    h_sum[last] += carry_h


@helper(inline="always")
def _add_pair(scores, lo, h, l, c, expo, pair_weight_hessian, g_sum, h_sum):
    """Add the pair of the higher-labelled document h and the lower l, of weight c, to the sums of g and h."""
    denominator = expo[h] + expo[l]
    prob = expo[l] / denominator if denominator > 1e-280 else 1.0 / (1.0 + np.exp(scores[lo + h] - scores[lo + l]))
    g_sum[h] -= c * prob
    g_sum[l] += c * prob
    curvature = c if pair_weight_hessian else c * prob * (1.0 - prob)
    h_sum[h] += curvature
    h_sum[l] += curvature


@kernel
def sampled_rankings(scores, labels, seed, permutations, noise, noise_scale, walked):
    """The first ``walked`` documents of the P rankings that YetiRank draws for one query at these scores (row p:
    the documents by perturbed score, descending), with the kernel's own draws: for tests and for looking at what
    it samples."""
    n = scores.shape[0]
    lo = np.int64(0)  # not a literal 0: the kernel's helpers are then called as the kernel calls them (cached)
    order = stream_order(scores)
    stream_place = np.empty(n, dtype=np.int64)
    for t in range(n):
        stream_place[order[t]] = t
    top_score = scores.max()
    key = score_stream_key(np.uint64(seed), scores, labels, lo, n, order, np.empty(n), top_score, WIDEST_SCORE_GAP)
    linear = noise_scale > 0.0 and (top_score - scores.min()) / noise_scale <= _LINEAR_SPAN
    weight = np.empty(n)
    if noise_scale > 0.0:
        _document_weights(scores, lo, n, top_score, noise_scale, linear, weight)
    keys, heap_key = np.empty(n), np.empty(n)
    heap_index, top = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    rankings = np.empty((permutations, walked), dtype=np.int64)
    for p in range(permutations):
        ranked = _draw_ranking(n, order, stream_place, key, p, noise, noise_scale, linear, weight, walked, keys,
                               heap_key, heap_index, top)
        for t in range(walked):  # not rankings[p] = ranked, whose shape check compiles Numba's string formatting
            rankings[p, t] = ranked[t]
    return rankings


@kernel
def _query_factors(first, end, labels, gains, offsets, mode, top, result):
    """Each query's normaliser: 1 / ideal DCG@top for NDCG, else 1; 0 where no pair can count (fewer than two
    labels; no relevant and irrelevant document for MRR; an ideal DCG of 0)."""
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        varied = False
        relevant = 0
        for i in range(lo, hi):
            varied = varied or labels[i] != labels[lo]
            if labels[i] > 0.0:
                relevant += 1
        result[q] = 1.0 if varied else 0.0
        if mode == _MRR and (relevant == 0 or relevant == hi - lo):
            result[q] = 0.0
        if mode == _NDCG and varied:
            ideal = stable_argsort(-gains[lo:hi])
            total = 0.0
            for t in range(min(hi - lo, top)):
                total += gains[lo + ideal[t]] / np.log2(2.0 + t)
            result[q] = 1.0 / total if total > 0.0 else 0.0


class YetiRank(RankingObjective):
    """YetiRank (Gulin et al. 2011) and YetiLoss (Lyzhin et al. 2023): module docstring.

    Parameters left unset take the preset's value.

    Parameters
    ----------
    noise : {"logistic", "gumbel", "none"}
        The noise added to the scores before each ranking is drawn: CatBoost's logistic; Gumbel (Plackett-Luce
        rankings of the current scores); none.
    noise_scale : float
        τ, the noise's scale.
    permutations : int
        P, rankings drawn per query and round (CatBoost's ``permutations``).
    decay : float
        ``loss="classic"``: the weight's factor per position down the ranking (CatBoost's ``decay``).
    weight_scale : float
        ``loss="classic"``: the weight of a pair at the top, per label step (CatBoost's hard-wired 0.15).
    loss : {"classic", "dcg", "ndcg", "mrr"}
        YetiRank's weights, or YetiLoss's for a metric (CatBoost's ``mode``).
    top : int or None, default None
        YetiLoss: the metric's cut-off k (CatBoost's ``top``); None, the whole list.
    gain : {"linear", "exp"}
        YetiLoss on (N)DCG: G(y) = y (CatBoost's ``dcg_type=Base``) or 2^y - 1 (plboost's NDCG).
    neighbors : int
        K, the later positions each position pairs with (CatBoost's ``num_neighbors``, which CatBoost reads for its
        YetiLoss modes only: its classic mode pairs each position with the next one whatever the value). With
        ``loss="classic"`` and K > 1, the pairs t, t + 2 .. t + K are plboost's, weighted decay^t |y_h - y_l| as the
        neighbouring one; CatBoost's YetiRank is K = 1.
    hessian : {"logistic", "pair_weight"}
        The curvature: the logistic loss's, as CatBoost on CPU, or the pair weight, as on GPU.
    seed : int, default 0
        Key of the draws, with the query's content and scores.
    preset : {"catboost", "plackett_luce"}, default "catboost"
        "catboost": CatBoost's YetiRank (logistic noise, 10 permutations, decay 0.85, weight 0.15, classic
        weights, linear gain, 1 neighbour, logistic hessian). "plackett_luce": Gumbel noise, YetiLoss on NDCG
        with gains 2^y - 1, the rest as CatBoost's.
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    YetiRank has no :meth:`losses`: its pair weights are drawn anew from the scores at each call, so no one
    function of the scores has its gradients.

    Examples
    --------
    >>> import numpy as np
    >>> grad, _ = YetiRank().gradients(np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3]))
    >>> print(grad.round(4))
    [-0.0901  0.0099  0.0802]
    """

    name = "yetirank"
    demo_runs = ("yetirank",)
    search_space = {"noise_scale": {"low": 0.25, "high": 4.0, "log": True, "default": 1.0},
                    "decay": {"low": 0.5, "high": 0.99, "default": 0.85}}
    _no_loss_reason = "its pair weights are drawn anew from the scores at each call"
    _non_default_examples = {"noise": "gumbel", "noise_scale": 0.5, "permutations": 4, "decay": 0.9,
                             "weight_scale": 0.3, "loss": "ndcg", "top": 10, "gain": "exp", "neighbors": 3,
                             "hessian": "pair_weight", "preset": "plackett_luce"}
    parameter_constraints = {"noise": (Options(*NOISES), None), "noise_scale": (Real(low=0), None),
                             "permutations": (Integer(low=1), None), "decay": (Real(low=0, high=1), None),
                             "weight_scale": (Real(low=0, low_open=True, high=FLOAT32_MAX), None),
                             "loss": (Options(*LOSSES), None),
                             "top": (Integer(low=1), None), "gain": (Options(*GAINS), None),
                             "neighbors": (Integer(low=1), None), "hessian": (Options(*HESSIANS), None),
                             "seed": SEED, "preset": Options(*_PRESETS)}

    _presets = _PRESETS

    def __init__(self, *, noise: str | None = None, noise_scale: float | None = None, permutations: int | None = None,
                 decay: float | None = None, weight_scale: float | None = None, loss: str | None = None,
                 top: int | None = None, gain: str | None = None, neighbors: int | None = None,
                 hessian: str | None = None, seed: int = 0, preset: str = "catboost",
                 hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(hessian_floor=hessian_floor)
        self._store(noise=noise, noise_scale=noise_scale, permutations=permutations, decay=decay,
                    weight_scale=weight_scale, loss=loss, top=top, gain=gain, neighbors=neighbors, hessian=hessian,
                    seed=seed, preset=preset)
        self._apply_preset()

    @classmethod
    def search_fixed_by(cls, params: dict) -> frozenset[str]:
        """``decay`` weighs only the classic weights; ``noise_scale`` means nothing without noise."""
        fixed = set()
        if params.get("loss", "classic") != "classic" or params.get("preset") == "plackett_luce":
            fixed.add("decay")
        if params.get("noise") == "none":
            fixed.add("noise_scale")
        return frozenset(fixed)

    @property
    def _mode(self) -> int:
        return LOSSES.index(self.loss)

    def _prepare(self, data: QueryData):
        if self.gain == "linear":
            gains = data.labels.astype(np.float64)
        elif self.loss == "dcg":
            gains = exp_gains_within_float32(data.labels, "YetiRank(loss='dcg', gain='exp') labels", "or loss='ndcg'")
        else:  # NDCG's weights are ratios of a query's gains (MRR and classic weights use none): scaled exactly
            gains = relative_exp_gains(data.labels, data.offsets)
        factors = np.empty(data.offsets.size - 1)
        top = self.top or int(np.iinfo(np.int64).max)
        over_queries(_query_factors, data.offsets, data.labels, gains, data.offsets, self._mode, top, factors)
        return gains, factors

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> None:
        gains, factors = state
        top = self.top or int(np.iinfo(np.int64).max)
        noise = NOISES.index(self.noise)
        draws = 1 if self.noise == "none" else self.permutations  # without noise every ranking is the same
        over_queries(_yetirank_kernel, data.offsets, scores, data.labels, data.offsets, gains, factors,
                     np.uint64(self.seed), draws, noise, self.noise_scale, self._mode, self.decay, self.weight_scale,
                     top, self.neighbors, self.hessian == "pair_weight", grad, hess)
        if self.loss in ("classic", "dcg"):  # weights of the labels' or the gains' own scale
            remedy = ("loss='ndcg' divides each query's weights by its ideal DCG" if self.loss == "dcg" else
                      "the weights are weight_scale times label differences: make them smaller")
            refuse_overflow(grad, hess, data, f"YetiRank(loss={self.loss!r})", remedy)
        return None  # no loss: see the class docstring
