"""LambdaLoss: metric-driven pairwise losses, of which LambdaRank's is one member.

Wang, Li, Golbandi, Bendersky, Najork, "The LambdaLoss Framework for Ranking Metric Optimization", CIKM 2018.

The documents' positions are hidden variables, set to the ranking by the current scores (stable, descending;
1-based ranks r), and held fixed within a boosting round, as LambdaMART holds its weights. With gains
G_i = (2^{y_i} - 1) / maxDCG, discounts D(r) = log2(1 + r) and the pairs y_i > y_j,

.. math::

    \\ell_{ij} = \\log\\bigl(1 + e^{-\\sigma (s_i - s_j)}\\bigr), \\quad
    \\rho_{ij} = \\Bigl|\\frac{1}{D(r_i)} - \\frac{1}{D(r_j)}\\Bigr|, \\quad
    \\delta_{ij} = \\frac{1}{D(|r_i - r_j|)} - \\frac{1}{D(|r_i - r_j| + 1)},

    \\text{NDCG-Loss2} = \\sum_{y_i > y_j} \\delta_{ij} |G_i - G_j| \\ell_{ij}, \\quad
    \\text{NDCG-Loss2++} = \\sum_{y_i > y_j} (\\rho_{ij} + \\mu \\delta_{ij}) |G_i - G_j| \\ell_{ij}.

ρ|G_i - G_j| is LambdaRank's |ΔNDCG|, so NDCG-Loss2++ at μ = 0 is LambdaRank's loss; δ depends only on how
far apart the two documents are. The paper writes log base 2 in ℓ; the natural log here scales gradients and
hessians alike by ln 2, which a Newton leaf value does not see.

The pairs, gains, maxDCG, sigmoid and normalisation are LightGBM's ``lambdarank``'s (see
:mod:`plboost.objectives._lambdamart`), with its parameter names, so that the default preset at μ = 0 with
``lightgbm_arithmetic=True`` trains LightGBM's ``lambdarank`` bit for bit.

With ``gain="estimate"`` the labels are relevance estimates R̂ from a click log (:mod:`plboost.clicks`), and each
document weighs its own side of every pair: over the unordered pairs {i, j} (the higher-ranked of them above the
truncation level),

.. math::

    L = \\sum_{\\{i, j\\}} w_{ij} \\bigl(\\hat R_i\\, \\ell_{ij} + \\hat R_j\\, \\ell_{ji}\\bigr), \\quad
    w_{ij} = \\rho_{ij} + \\mu \\delta_{ij},

linear in the estimates, so unbiased estimates give an unbiased loss and gradient of the same loss on the true
relevance R (the pairwise form of the counterfactual rankers of Joachims, Swaminathan and Schnabel, WSDM 2017, and
Agarwal et al., SIGIR 2019, with LambdaLoss's weights). For R_i > R_j the pair's term is LambdaRank's,
(R_i - R_j) w ℓ_ij, plus R_j w (ℓ_ij + ℓ_ji), which draws two relevant documents together rather than
ordering them; ``|G_i - G_j|`` itself is not linear in the estimates, so the labelled loss cannot be estimated
as it stands. There is no maxDCG (a normaliser built from estimates is a biased ratio) and no
``lambdarank_norm`` (it rescales by the lambdas' sum, which is not linear either). Negative estimates (the affine
and doubly robust estimators give them) are refused: with R̂_i < 0 the term falls without bound as s_i falls, and
shifting the estimates adds a pull between every pair's scores, which is not zero in expectation.
"""

from __future__ import annotations

import numpy as np

from .._constraints import SQUARE_ROOT_OF_FLOAT64_MAX, Boolean, Integer, Options, Real, Reals
from .._jit import helper, kernel, over_queries
from .._numerics import stable_argsort
from ._base import QueryData, RankingObjective, zero_query
from ._lambdamart import (TINY_EXPO, inverse_max_dcgs, label_gains, lambda_kernel, lambdarank_hessian_floor,
                          log_one_plus_exp, position_discounts, warn_of_all_pairs)

LOSSES = ("ndcg_loss2++", "ndcg_loss2")
#: what a document's gain is: its label's (``label_gain``), or the label itself as a relevance estimate
GAINS = ("label", "estimate")

#: "lightgbm": LightGBM's lambdarank around the loss; "loss": the loss as written, whose exact gradient it is
_PRESETS = {
    "lightgbm": dict(sigmoid=1.0, lambdarank_truncation_level=30, lambdarank_norm=True),
    "loss": dict(sigmoid=1.0, lambdarank_truncation_level=None, lambdarank_norm=False),
}



def distance_weights(longest: int) -> np.ndarray:
    """δ(d) = 1 / log2(1 + d) - 1 / log2(2 + d) for rank distances d = 0 .. longest - 1 (δ(0) is never used)."""
    d = np.arange(1, max(longest, 1), dtype=np.float64)
    return np.r_[0.0, 1.0 / np.log2(1.0 + d) - 1.0 / np.log2(2.0 + d)]


@kernel
def estimate_pairs_kernel(first, end, scores, estimates, offsets, discounts, distance_weights, sigma, truncation,
                          rank_weight, mu, with_loss, grad, hess, losses):
    """Gradient, diagonal hessian (ranks held fixed) and, with ``with_loss``, loss of ``gain="estimate"`` (module
    docstring) for queries ``first <= q < end``. With x = s_i - s_j and q = 1 / (1 + e^{σ x}): ∂L/∂s_i =
    σ w (R̂_j (1 - q) - R̂_i q) = -∂L/∂s_j, and ∂²L/∂s_i² = ∂²L/∂s_j² = σ² w q (1 - q) (R̂_i + R̂_j), summed over the
    pairs. q comes from e^{σ (s - max)} by position (no exponential per pair), as in LambdaRank's kernel."""
    for query in range(first, end):
        lo, hi = offsets[query], offsets[query + 1]
        n = hi - lo
        losses[query] = 0.0
        if n < 2:
            zero_query(grad, hess, lo, hi)
            continue
        negated = np.empty(n)
        for i in range(n):
            negated[i] = -scores[lo + i]
        order = stable_argsort(negated)  # descending, ties in input order
        score = np.empty(n)
        estimate = np.empty(n)
        expo = np.empty(n)
        for a in range(n):
            score[a] = scores[lo + order[a]]
            estimate[a] = estimates[lo + order[a]]
            expo[a] = np.exp(sigma * (score[a] - score[0]))
        lam = np.zeros(n)
        nu = np.zeros(n)
        loss = 0.0
        for a in range(min(n - 1, truncation)):
            r_a, expo_a, discount_a = estimate[a], expo[a], discounts[a]
            if not with_loss and expo_a > TINY_EXPO:
                lam_a, nu_a = _estimate_pairs_after(a, estimate, expo, discounts, distance_weights, sigma,
                                                    rank_weight, mu, lam, nu)
                lam[a] += lam_a
                nu[a] += nu_a
                continue
            lam_a = 0.0
            nu_a = 0.0
            for b in range(a + 1, n):
                r_b = estimate[b]
                w = rank_weight * abs(discount_a - discounts[b]) + mu * distance_weights[b - a]
                denominator = expo_a + expo[b]
                if denominator > TINY_EXPO:
                    q = expo[b] / denominator
                else:
                    q = 1.0 / (1.0 + np.exp(sigma * (score[a] - score[b])))
                step, curvature = _estimate_pair(r_a, r_b, w, q, sigma)
                lam_a += step
                lam[b] -= step
                nu_a += curvature
                nu[b] += curvature
                if with_loss:
                    x = sigma * (score[a] - score[b])  # >= 0: a is ranked above b
                    below = log_one_plus_exp(-x)
                    loss += w * (r_a * below + r_b * (x + below))
            lam[a] += lam_a
            nu[a] += nu_a
        losses[query] = loss
        for a in range(n):
            grad[lo + order[a]] = lam[a]
            hess[lo + order[a]] = nu[a]


@helper(inline="always")
def _estimate_pair(r_a, r_b, w, q, sigma):
    """One pair's gradient step (added to the higher-ranked a's, taken from b's) and curvature (added to both), from
    its weight w and q = 1 / (1 + e^{σ (s_a - s_b)})."""
    return sigma * w * (r_b * (1.0 - q) - r_a * q), sigma * sigma * w * q * (1.0 - q) * (r_a + r_b)


@helper(fastmath={"reassoc"})
def _estimate_pairs_after(a, estimate, expo, discounts, distance_weights, sigma, rank_weight, mu, lam, nu):
    """Position a's pair terms of :func:`estimate_pairs_kernel` with every later position, added to ``lam[b]`` and
    ``nu[b]``; returns a's own sums. A loop without a branch that LLVM vectorises (only the sums over b are
    reassociated); needs e^{σ (s_a - max)} > ``TINY_EXPO``, so that no pair needs an exponential of its own."""
    r_a, expo_a, discount_a = estimate[a], expo[a], discounts[a]
    lam_a = 0.0
    nu_a = 0.0
    for position in range(a + 1, estimate.shape[0]):
        b = np.uint64(position)  # unsigned: no negative-index wraparound in the vectorised loop
        r_b = estimate[b]
        w = rank_weight * abs(discount_a - discounts[b]) + mu * distance_weights[np.uint64(position - a)]
        q = expo[b] / (expo_a + expo[b])
        step, curvature = _estimate_pair(r_a, r_b, w, q, sigma)
        lam_a += step
        lam[b] -= step
        nu_a += curvature
        nu[b] += curvature
    return lam_a, nu_a


class LambdaLoss(RankingObjective):
    """LambdaLoss (Wang et al., CIKM 2018): NDCG-Loss2++ and NDCG-Loss2 (module docstring).

    Parameters
    ----------
    loss : {"ndcg_loss2++", "ndcg_loss2"}, default "ndcg_loss2++"
        The member of the family.
    mu : float, default 1.0
        μ, the weight of the δ term: NDCG-Loss2++'s μ (0 is LambdaRank's loss), or with ``loss="ndcg_loss2"`` a
        factor of the whole loss (1 is the paper's NDCG-Loss2). The default was
        chosen on validation files (MQ2008's five, the MSLR slice's and LightGBM example's held-out queries:
        ``docs/quality.md``): μ from 0.3 to 1 did about as well as lambdarank, 3 and more worse; allRank's 10 was
        significantly below lambdarank on MQ2008's test folds. The paper's own value we could not read.
    sigmoid : float, default 1.0
        σ, LightGBM's ``sigmoid``.
    lambdarank_truncation_level : int or None
        Only pairs whose higher-scored document is at a position below this level (maxDCG at it too);
        None: all pairs. Default: the preset's (30, or None with ``preset="loss"``).
    lambdarank_norm : bool, optional
        LightGBM's normalisation: the pair weight divided by 0.01 + |s_i - s_j| (when the query's scores are
        not all equal), and the query's lambdas and hessians scaled by log2(1 + Λ) / Λ. Not part of any loss.
        Default: the preset's (True, or False with ``preset="loss"``).
    label_gain : sequence of float, optional
        Gain of each label; default 2^y - 1 for labels 0..30 (LightGBM's table).
    lightgbm_arithmetic : bool, default False
        Compute as LightGBM's lambdarank does (its sigmoid table, order of operations, float32 sums): with
        μ = 0 and the default preset, LightGBM's lambdarank bit for bit.
    preset : {"lightgbm", "loss"}, default "lightgbm"
        Defaults for the parameters left unset. "lightgbm" wraps the loss in LightGBM's lambdarank (pairs
        below position 30, maxDCG@30, its normalisation); "loss" is the loss as written (all pairs, the
        whole list's maxDCG, no normalisation): its gradient and diagonal hessian, ranks held fixed, are what
        :meth:`gradients` returns, and :meth:`losses` gives it.
    hessian_floor : float, optional
        Lower bound of every hessian handed to the engines; default 1e-6, and 0 with ``lightgbm_arithmetic=True``:
        LightGBM's lambdarank leaves a document outside every pair at hessian 0, and a floor adds to the hessian
        sum, so to the value, of every leaf (the model is then not LightGBM's).
    gain : {"label", "estimate"}, default "label"
        "label": the label's gain (``label_gain``); "estimate": the labels are a click log's non-negative
        relevance estimates, each weighing its own side of every pair (module docstring), with neither maxDCG nor
        ``lambdarank_norm`` (left unset, it is False; True is refused), ``label_gain`` or LightGBM's arithmetic.

    Examples
    --------
    >>> import numpy as np
    >>> scores, labels, offsets = np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3])
    >>> print(LambdaLoss(mu=0.0).gradients(scores, labels, offsets)[0].round(4))  # LightGBM's lambdarank
    [-0.297   0.1411  0.1558]
    >>> print(LambdaLoss().gradients(scores, labels, offsets)[0].round(4))  # NDCG-Loss2++, mu=1
    [-0.4299  0.1945  0.2353]
    >>> estimates = np.array([1.5, 0.0, 0.2])  # a click log's, e.g. inverse-propensity-weighted clicks
    >>> print(LambdaLoss(mu=0.0, gain="estimate").gradients(scores, estimates, offsets)[0].round(4))
    [-0.3376  0.2253  0.1123]
    """

    name = "lambdaloss"
    demo_runs = ("lambdaloss",)
    search_space = {"mu": {"low": 0.0, "high": 5.0, "default": 1.0},
                    "sigmoid": {"low": 0.5, "high": 4.0, "log": True, "default": 1.0}}
    #: the score-distance norm divides by raw score gaps, and lightgbm_arithmetic must see LightGBM's scores
    _softmax_of_scores = False
    _no_loss_reason = ("with lambdarank_norm or lightgbm_arithmetic its lambdas are rescaled per pair and per query "
                       "(or rounded), which is no loss's gradient; LambdaLoss(preset='loss') has a loss")
    _non_default_examples = {"loss": "ndcg_loss2", "gain": "estimate", "mu": 2.0, "preset": "loss",
                             "lambdarank_truncation_level": 12, "label_gain": tuple(float(y) for y in range(31))}
    _examples_alone = ("gain",)
    parameter_constraints = {"loss": Options(*LOSSES), "mu": Real(low=0),
                             "sigmoid": (Real(low=0, low_open=True, high=SQUARE_ROOT_OF_FLOAT64_MAX), None),
                             "lambdarank_truncation_level": (Integer(low=1), None, Options("preset")),
                             "lambdarank_norm": (Boolean(), None), "label_gain": (Reals(), None),
                             "lightgbm_arithmetic": Boolean(), "preset": Options(*_PRESETS),
                             "hessian_floor": (Real(low=0), None), "gain": Options(*GAINS)}

    _presets = _PRESETS
    _unset = {"lambdarank_truncation_level": "preset"}
    _derived = {"hessian_floor": lambdarank_hessian_floor}

    def __init__(self, *, loss: str = "ndcg_loss2++", mu: float = 1.0, sigmoid: float | None = None,
                 lambdarank_truncation_level: int | None | str = "preset", lambdarank_norm: bool | None = None,
                 label_gain=None, lightgbm_arithmetic: bool = False, preset: str = "lightgbm",
                 hessian_floor: float | None = None, gain: str = "label"):
        super().__init__(hessian_floor=hessian_floor)
        self._store(loss=loss, mu=mu, sigmoid=sigmoid, lambdarank_truncation_level=lambdarank_truncation_level,
                    lambdarank_norm=lambdarank_norm, label_gain=label_gain, lightgbm_arithmetic=lightgbm_arithmetic,
                    preset=preset, gain=gain)
        if gain == "estimate":
            self._check_estimate_settings()
        self._derive()
        self._apply_preset()

    def _check_estimate_settings(self) -> None:
        """Refuse what ``gain="estimate"`` cannot take (each is not linear in the estimates, or needs graded labels);
        an unset ``lambdarank_norm`` becomes False."""
        refused = [(self.lambdarank_norm is True, "lambdarank_norm=True (it rescales by the sum of the lambdas)"),
                   (self.label_gain is not None, "label_gain (the estimates are the gains)"),
                   (self.lightgbm_arithmetic, "lightgbm_arithmetic=True (LightGBM's lambdarank takes graded labels)")]
        for is_set, what in refused:
            if is_set:
                raise ValueError(f"LambdaLoss(gain='estimate') does not take {what}: its loss must stay linear in "
                                 "the estimates to be unbiased")
        self.lambdarank_norm = False

    @property
    def takes_estimates(self) -> bool:
        return self.gain == "estimate"

    def _updated_params(self, params: dict) -> dict:
        """As the base's; where ``gain`` changes, a ``lambdarank_norm`` not given and at the value the old gain left
        it (the preset's for labels, False for estimates) is unset, to be what a new object of the new gain has."""
        updated = super()._updated_params(params)
        if updated["gain"] != self.gain and "lambdarank_norm" not in params:
            left = False if self.gain == "estimate" else self._presets[self.preset]["lambdarank_norm"]
            if self.lambdarank_norm == left:
                updated["lambdarank_norm"] = None
        return updated

    @classmethod
    def search_fixed_by(cls, params: dict) -> frozenset[str]:
        """μ is searched for NDCG-Loss2++ only (it merely scales NDCG-Loss2)."""
        return frozenset() if params.get("loss", "ndcg_loss2++") == "ndcg_loss2++" else frozenset({"mu"})

    @property
    def _has_loss(self) -> bool:
        return not (self.lambdarank_norm or self.lightgbm_arithmetic)

    def _prepare(self, data: QueryData):
        longest = int(np.diff(data.offsets).max())
        warn_of_all_pairs(self.name, self.lambdarank_truncation_level, longest)
        if self.gain == "estimate":
            if data.labels.size and data.labels.min() < 0:
                raise ValueError(f"LambdaLoss(gain='estimate') takes non-negative relevance estimates, got "
                                 f"{data.labels.min():g} (the affine and doubly robust estimators give negative ones, "
                                 "whose loss is unbounded below): use the naive, ips or policy_aware estimator, or "
                                 "train PLRank3(gain='estimate', normalize=False), which takes any")
            return None, position_discounts(longest), distance_weights(longest), None
        n_queries = data.offsets.size - 1
        gains = label_gains(data.labels, self.label_gain)
        inverse_max_dcg = np.empty(n_queries)
        at = self.lambdarank_truncation_level or longest
        over_queries(inverse_max_dcgs, data.offsets, data.labels, data.offsets, gains, int(at), inverse_max_dcg)
        return gains, position_discounts(longest), distance_weights(longest), inverse_max_dcg

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> np.ndarray | None:
        gains, discounts, distances, inverse_max_dcg = state
        truncation = self.lambdarank_truncation_level or int(np.iinfo(np.int64).max)
        rank_weight = 1.0 if self.loss == "ndcg_loss2++" else 0.0
        losses = np.empty(data.offsets.size - 1)
        if self.gain == "estimate":
            over_queries(estimate_pairs_kernel, data.offsets, scores, data.labels, data.offsets, discounts, distances,
                         self.sigmoid, truncation, rank_weight, self.mu, self._loss_asked, grad, hess, losses)
            return losses
        norm = self.lambdarank_norm
        over_queries(lambda_kernel, data.offsets, scores, data.labels, data.offsets, inverse_max_dcg, gains, discounts,
                     distances, self.sigmoid, truncation, rank_weight, self.mu, norm, norm, self.lightgbm_arithmetic,
                     self._has_loss and self._loss_asked, grad, hess, losses)
        return losses if self._has_loss else None
