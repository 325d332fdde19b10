"""uMart: LambdaMART with a softmax over windows of lower-rated documents.

Zhu and Klabjan, "Listwise Learning to Rank by Exploring Unique Ratings", WSDM 2020 (the uRank loss of the
same paper is in :mod:`plboost.objectives.urank`).

uMart generalises LambdaMART: LightGBM's pairwise sigmoid becomes a softmax over a window of B
lower-rated documents. Documents are sorted by score (stable, descending; positions i = 0, 1, ...). For a
document h, its lower-rated documents, in descending score order, are cut into consecutive windows of B
(the last may be shorter); for a pair (h, l) with l in window W:

.. math::

    p_l = \\frac{e^{\\sigma s_l}}{e^{\\sigma s_h} + \\sum_{k \\in W} e^{\\sigma s_k}}, \\quad
    p_h = \\frac{e^{\\sigma s_h}}{e^{\\sigma s_h} + \\sum_{k \\in W} e^{\\sigma s_k}}, \\quad
    F_{hl} = \\frac{(G(y_h) - G(y_l))\\,|D(i_h) - D(i_l)|}{\\mathrm{maxDCG}},

    \\lambda_l \\mathrel{+}= \\sigma p_l F_{hl}, \\quad \\lambda_h \\mathrel{-}= \\sigma p_l F_{hl}, \\quad
    \\nu_l \\mathrel{+}= \\sigma^2 p_l (1 - p_l) F_{hl}, \\quad \\nu_h \\mathrel{+}= \\sigma^2 p_l p_h F_{hl},

with gains ``G`` (``label_gain``, default 2^y - 1) and discounts D(i) = 1 / log2(2 + i). With B = 1,
``p_l = 1 / (1 + e^{sigma (s_h - s_l)})`` and this is LightGBM's ``lambdarank`` pair term; uMart takes
LightGBM's pair set and options so that ``UMart(window=1)`` reproduces it: pairs (i, j) of positions with
i < j, i < ``lambdarank_truncation_level`` and different labels; maxDCG at the truncation level;
``lambdarank_norm`` divides F by 0.01 + |s_h - s_l| when the query's scores are not all equal, and
multiplies the query's lambdas and hessians by log2(1 + Λ) / Λ, Λ = Σ 2 σ p_l F over its pairs.

uMart has no loss: as LambdaMART's, its lambdas are not the gradient of any function of the scores. The
weight F_hl changes with the positions, that is with the scores' order, and the pair term of one document
does not depend on another's score as that one's depends on it (the mixed partials are not symmetric), so
there is no ``losses()`` (it raises NotImplementedError).
"""

from __future__ import annotations

import numpy as np

from .._constraints import SQUARE_ROOT_OF_FLOAT64_MAX, Boolean, Integer, Options, Real, Reals
from .._jit import helper, kernel, over_queries
from ._base import QueryData, RankingObjective, zero_query
from ._lambdamart import (DEFAULT_GAIN_LABELS, DISTANCE_EPSILON, inverse_max_dcgs, label_gains, lambda_kernel,
                          lambdarank_hessian_floor, position_discounts, sorted_query, warn_of_all_pairs, write_query)


@helper
def _level_members(level, n_levels):
    """The positions of each label level, in order: ``members[start[r]:start[r + 1]]`` are level r's; and
    ``cursor``, a copy of ``start[:n_levels]`` for walking them."""
    n = level.shape[0]
    start = np.zeros(n_levels + 1, dtype=np.int64)
    for i in range(n):
        start[level[i] + 1] += 1
    for r in range(n_levels):
        start[r + 1] += start[r]
    members = np.empty(n, dtype=np.int64)
    cursor = start[:n_levels].copy()
    for i in range(n):
        members[cursor[level[i]]] = i
        cursor[level[i]] += 1
    for r in range(n_levels):
        cursor[r] = start[r]
    return start, members, cursor


@helper
def _window_pairs(score, level, n_levels, gain, expo, discounts, window_of, windows, several, limit,
                  inverse_max_dcg, sigma, sigma_hess, divide, lam, nu):
    """uMart's pair terms: pairs (i, j) of positions, i < j, i < limit, different levels. Returns Λ.

    The positions of each label level are listed in order, so that for a given i the partners j of one
    level are a contiguous run with a fixed high/low role (and, when j is the higher-rated, a fixed
    window of i): the inner loops carry no label tests.
    """
    start, members, cursor = _level_members(level, n_levels)  # cursor: the first member of each level after i
    total = 0.0
    for i in range(limit):
        level_i, score_i, gain_i, expo_i, discount_i = level[i], score[i], gain[i], expo[i], discounts[i]
        cursor[level_i] += 1
        lam_i = 0.0
        nu_i = 0.0
        for r in range(n_levels):
            if r == level_i:
                continue
            if r < level_i:  # i is the higher-rated: each j in its own window of i's lower-rated list
                for t in range(cursor[r], start[r + 1]):
                    j = members[t]
                    denominator = expo_i + (windows[level_i, window_of[level_i, j]] if several else expo[j])
                    if denominator > 1e-280:
                        p_l = expo[j] / denominator
                        p_h = expo_i / denominator
                    else:
                        p_l, p_h = _rescaled_pair(score, level, window_of, several, level_i, i, j, sigma)
                    f = (gain_i - gain[j]) * (discount_i - discounts[j]) * inverse_max_dcg
                    if divide:
                        f /= DISTANCE_EPSILON + (score_i - score[j])
                    step = sigma * p_l * f
                    lam_i -= step
                    nu_i += sigma_hess * p_l * p_h * f
                    lam[j] += step
                    nu[j] += sigma_hess * p_l * (1.0 - p_l) * f
                    total += 2.0 * step
            else:  # every j of level r is higher-rated, and i sits in the same window of each one's list
                window_sum = windows[r, window_of[r, i]] if several else 0.0
                for t in range(cursor[r], start[r + 1]):
                    j = members[t]
                    denominator = expo[j] + (window_sum if several else expo_i)
                    if denominator > 1e-280:
                        p_l = expo_i / denominator
                        p_h = expo[j] / denominator
                    else:
                        p_l, p_h = _rescaled_pair(score, level, window_of, several, r, j, i, sigma)
                    f = (gain[j] - gain_i) * (discount_i - discounts[j]) * inverse_max_dcg
                    if divide:
                        f /= DISTANCE_EPSILON + (score_i - score[j])
                    step = sigma * p_l * f
                    lam_i += step
                    nu_i += sigma_hess * p_l * (1.0 - p_l) * f
                    lam[j] -= step
                    nu[j] += sigma_hess * p_l * p_h * f
                    total += 2.0 * step
        lam[i] += lam_i
        nu[i] += nu_i
    return total


@helper
def _rescaled_pair(score, level, window_of, several, r, high, low, sigma):
    """p_l and p_h of a pair whose window sum of e^{sigma (s - max)} underflowed, normalised by the
    window's own maximum (the window of ``low`` among the documents rated below level ``r``)."""
    if not several:
        p_l = 1.0 / (1.0 + np.exp(sigma * (score[high] - score[low])))
        return p_l, 1.0 - p_l
    return _rescaled_window(score, level, window_of, r, window_of[r, low], high, low, sigma)


@helper
def _windows(level, expo, n_levels, window):
    """``window_of[r, i]``: the window of the document at position i among those rated below level r, and
    ``windows[r, w]``: the sum of ``expo`` over window w (both empty with windows of one document)."""
    n = level.shape[0]
    several = window > 1
    window_of = np.empty((n_levels if several else 0, n), dtype=np.int64)
    windows = np.zeros((n_levels if several else 0, (n + window - 1) // window))
    if several:
        for r in range(1, n_levels):
            count = 0
            for i in range(n):
                window_of[r, i] = count // window
                if level[i] < r:
                    windows[r, count // window] += expo[i]
                    count += 1
    return window_of, windows


@kernel
def _umart_kernel(first, end, scores, labels, offsets, inverse_max_dcgs, gains, discounts, window, sigma, truncation,
                  score_distance_norm, log_norm, hessian_power, grad, hess):
    """uMart gradients and raw hessians of queries ``first <= q < end``.

    Pairs are visited in LightGBM's order: positions i < j by score, i below the truncation level. For a
    pair (h, l), l's window among h's lower-rated documents is found from the number of such documents
    scored above l; the windows' sums of e^{sigma (s - max)} are precomputed per label level, so each
    pair costs O(1) and no exponential.
    """
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        if n < 2 or inverse_max_dcgs[q] == 0.0:
            zero_query(grad, hess, lo, hi)
            continue
        by_score, score, gain, expo, level, n_levels = sorted_query(scores, labels, lo, hi, gains, sigma)
        lam_p = np.zeros(n)
        nu_p = np.zeros(n)
        window_of, windows = _windows(level, expo, n_levels, window)
        total_lambda = _window_pairs(score, level, np.int64(n_levels), gain, expo, discounts, window_of, windows,
                                     window > 1, min(n - 1, truncation), inverse_max_dcgs[q], sigma,
                                     sigma ** hessian_power, score_distance_norm and score[0] != score[n - 1],
                                     lam_p, nu_p)
        write_query(lo, by_score, lam_p, nu_p, total_lambda, log_norm, grad, hess)


@helper
def _rescaled_window(score, level, window_of, r, w, ih, il, sigma):
    """p_l and p_h of a window whose sum of e^{sigma (s - max)} underflowed, normalised by its own max."""
    biggest = score[ih]
    for t in range(score.shape[0]):
        if level[t] < r and window_of[r, t] == w:
            biggest = max(biggest, score[t])
    denominator = np.exp(sigma * (score[ih] - biggest))
    for t in range(score.shape[0]):
        if level[t] < r and window_of[r, t] == w:
            denominator += np.exp(sigma * (score[t] - biggest))
    return np.exp(sigma * (score[il] - biggest)) / denominator, np.exp(sigma * (score[ih] - biggest)) / denominator


#: settings of the uMart authors' released code (built on LightGBM 2.2.3)
_PRESETS = {
    "lightgbm": dict(sigmoid=1.0, lambdarank_truncation_level=30, lambdarank_norm=True, max_dcg_at=None,
                     score_distance_norm=None, log_norm=None, hessian_sigma_power=2),
    "paper": dict(sigmoid=2.0, lambdarank_truncation_level=None, lambdarank_norm=True, max_dcg_at=20,
                  score_distance_norm=True, log_norm=False, hessian_sigma_power=3),
}


class UMart(RankingObjective):
    """uMart (Zhu & Klabjan, WSDM 2020): LambdaMART with a softmax over windows of lower-rated documents.

    Parameters carry LightGBM's names and defaults, so that ``UMart(window=1)`` is LightGBM's
    ``lambdarank`` (up to LightGBM's sigmoid lookup table and float32 accumulation).

    Parameters
    ----------
    window : int, default 2
        B, the number of lower-rated documents in each softmax; 1 is LambdaMART.
    sigmoid : float, default 1.0
        σ, LightGBM's ``sigmoid``.
    lambdarank_truncation_level : int or None, default 30
        Only pairs whose higher-scored document is at a position below this level; None: all pairs.
    lambdarank_norm : bool, default True
        LightGBM's normalisation: F divided by 0.01 + |s_h - s_l| (when the query's scores are not all
        equal), and the query's lambdas and hessians scaled by log2(1 + Λ) / Λ.
    label_gain : sequence of float, optional
        Gain of each label; default 2^y - 1 for labels 0..30 (LightGBM's default table).
    max_dcg_at : int, optional
        Cut-off of maxDCG; default the truncation level (LightGBM's choice), or all documents without one.
    score_distance_norm, log_norm : bool, optional
        The two halves of ``lambdarank_norm``, separately (None: follow ``lambdarank_norm``).
    hessian_sigma_power : int, default 2
        Hessians carry σ to this power (the authors' code: 3).
    lightgbm_arithmetic : bool, default False
        With ``window=1``, compute as LightGBM's lambdarank does, for bit-for-bit comparisons: pair
        probabilities from its sigmoid lookup table (2^20 bins over ±25/σ, so up to about 1e-5 off the
        exact sigmoid), its order of floating-point operations, float32 accumulators.
    preset : {"lightgbm", "paper"}, default "lightgbm"
        Defaults for the parameters left unset. "paper" reproduces the authors' released code: σ = 2,
        hessians times σ³, maxDCG at 20, no truncation, the score-distance division on, no log-norm. (Their
        code divides from the second iteration on even when a query's scores are all equal; here, as in
        LightGBM, a query whose scores are all equal is not divided.) The authors' tree settings: B = 2,
        learning rate 0.05, 64 leaves, max_bin 10000, bagging 0.9 every iteration, min_data_in_leaf 5,
        min_sum_hessian_in_leaf 5, 1000 trees.
    hessian_floor : float, optional
        Lower bound of every hessian handed to the engines; default 1e-6, and 0 with ``lightgbm_arithmetic=True``:
        LightGBM's lambdarank leaves a document outside every pair at hessian 0, and a floor adds to the hessian
        sum, so to the value, of every leaf (the model is then not LightGBM's).

    uMart has no :meth:`losses` (it raises NotImplementedError): as LambdaMART's, its lambdas are not the
    gradient of any loss (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> lambdas, _ = UMart(window=2).gradients(np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3]))
    >>> print(lambdas.round(4))
    [-0.2366  0.114   0.1226]
    """

    name = "umart"
    #: the demo's configuration (``plboost demo``): the authors' window on MSLR
    demo_runs = ("umart,window=2",)
    search_space = {"window": {"low": 1, "high": 10, "default": 2},
                    "sigmoid": {"low": 0.5, "high": 4.0, "log": True, "default": 1.0}}
    #: the score-distance norm divides by raw score gaps, and lightgbm_arithmetic must see LightGBM's scores
    _softmax_of_scores = False
    _no_loss_reason = ("LambdaMART-style lambdas are not the gradient of any loss: the pair weights change with "
                       "the documents' positions and the pair terms' mixed partial derivatives are not symmetric")
    #: lightgbm_arithmetic needs window=1 and hessian_sigma_power=2; the preset and truncation level are named
    _non_default_examples = {"window": 1, "hessian_sigma_power": 2, "lightgbm_arithmetic": True, "preset": "paper",
                             "lambdarank_truncation_level": 12,
                             "label_gain": tuple(float(y) for y in range(DEFAULT_GAIN_LABELS))}
    #: None (and "preset" for the truncation level) takes the preset's value
    parameter_constraints = {"window": Integer(low=1),
                             "sigmoid": (Real(low=0, low_open=True, high=SQUARE_ROOT_OF_FLOAT64_MAX), None),
                             "lambdarank_truncation_level": (Integer(low=1), None, Options("preset")),
                             "lambdarank_norm": (Boolean(), None), "label_gain": (Reals(), None),
                             "max_dcg_at": (Integer(low=1), None), "score_distance_norm": (Boolean(), None),
                             "log_norm": (Boolean(), None), "hessian_sigma_power": (Integer(low=1), None),
                             "preset": Options(*_PRESETS), "lightgbm_arithmetic": Boolean(),
                             "hessian_floor": (Real(low=0), None)}

    _presets = _PRESETS
    _unset = {"lambdarank_truncation_level": "preset"}
    _derived = {"hessian_floor": lambdarank_hessian_floor}

    def __init__(self, *, window: int = 2, sigmoid: float | None = None,
                 lambdarank_truncation_level: int | None | str = "preset", lambdarank_norm: bool | None = None,
                 label_gain=None, max_dcg_at: int | None = None, score_distance_norm: bool | None = None,
                 log_norm: bool | None = None, hessian_sigma_power: int | None = None, preset: str = "lightgbm",
                 lightgbm_arithmetic: bool = False, hessian_floor: float | None = None):
        super().__init__(hessian_floor=hessian_floor)
        self._store(window=window, sigmoid=sigmoid, lambdarank_truncation_level=lambdarank_truncation_level,
                    lambdarank_norm=lambdarank_norm, label_gain=label_gain, max_dcg_at=max_dcg_at,
                    score_distance_norm=score_distance_norm, log_norm=log_norm,
                    hessian_sigma_power=hessian_sigma_power, preset=preset, lightgbm_arithmetic=lightgbm_arithmetic)
        self._derive()
        self._apply_preset()
        if self.lightgbm_arithmetic and (self.window != 1 or self.hessian_sigma_power != 2):
            raise ValueError("lightgbm_arithmetic reproduces LightGBM's lambdarank: it needs window=1 and "
                             "hessian_sigma_power=2")

    @property
    def _switches(self) -> tuple[bool, bool]:
        distance = self.lambdarank_norm if self.score_distance_norm is None else self.score_distance_norm
        log = self.lambdarank_norm if self.log_norm is None else self.log_norm
        return distance, log

    def _prepare(self, data: QueryData):
        gains = label_gains(data.labels, self.label_gain)
        longest = int(np.diff(data.offsets).max())
        warn_of_all_pairs(self.name, self.lambdarank_truncation_level, longest)
        at = self.max_dcg_at or self.lambdarank_truncation_level or longest
        inverse_max_dcg = np.empty(data.offsets.size - 1)
        over_queries(inverse_max_dcgs, data.offsets, data.labels, data.offsets, gains, int(at), inverse_max_dcg)
        return gains, position_discounts(longest), inverse_max_dcg

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> None:
        gains, discounts, inverse_max_dcg = state
        truncation = self.lambdarank_truncation_level or int(np.iinfo(np.int64).max)
        distance, log = self._switches
        common = (data.offsets, scores, data.labels, data.offsets, inverse_max_dcg, gains, discounts)
        if self.lightgbm_arithmetic:
            over_queries(lambda_kernel, *common, np.empty(0), self.sigmoid, truncation, 1.0, 0.0, distance, log, True,
                         False, grad, hess, np.empty(data.offsets.size - 1))
        else:
            over_queries(_umart_kernel, *common, self.window, self.sigmoid, truncation, distance, log,
                         self.hessian_sigma_power, grad, hess)
        return None  # no loss: see the class docstring

