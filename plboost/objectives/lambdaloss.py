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
"""

from __future__ import annotations

import numpy as np

from .._constraints import SQUARE_ROOT_OF_FLOAT64_MAX, Boolean, Integer, Options, Real, Reals
from .._jit import over_queries
from ._base import QueryData, RankingObjective
from ._lambdamart import inverse_max_dcgs, label_gains, lambda_kernel, lambdarank_hessian_floor, position_discounts

LOSSES = ("ndcg_loss2++", "ndcg_loss2")

#: "lightgbm": LightGBM's lambdarank around the loss; "loss": the loss as written, whose exact gradient it is
_PRESETS = {
    "lightgbm": dict(sigmoid=1.0, lambdarank_truncation_level=30, lambdarank_norm=True),
    "loss": dict(sigmoid=1.0, lambdarank_truncation_level=None, lambdarank_norm=False),
}



def distance_weights(longest: int) -> np.ndarray:
    """δ(d) = 1 / log2(1 + d) - 1 / log2(2 + d) for rank distances d = 0 .. longest - 1 (δ(0) is never used)."""
    d = np.arange(1, max(longest, 1), dtype=np.float64)
    return np.r_[0.0, 1.0 / np.log2(1.0 + d) - 1.0 / np.log2(2.0 + d)]


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

    Examples
    --------
    >>> import numpy as np
    >>> scores, labels, offsets = np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3])
    >>> print(LambdaLoss(mu=0.0).gradients(scores, labels, offsets)[0].round(4))  # LightGBM's lambdarank
    [-0.297   0.1411  0.1558]
    >>> print(LambdaLoss().gradients(scores, labels, offsets)[0].round(4))  # NDCG-Loss2++, mu=1
    [-0.4299  0.1945  0.2353]
    """

    name = "lambdaloss"
    demo_runs = ("lambdaloss",)
    search_space = {"mu": {"low": 0.0, "high": 5.0, "default": 1.0},
                    "sigmoid": {"low": 0.5, "high": 4.0, "log": True, "default": 1.0}}
    #: the score-distance norm divides by raw score gaps, and lightgbm_arithmetic must see LightGBM's scores
    _softmax_of_scores = False
    _no_loss_reason = ("with lambdarank_norm or lightgbm_arithmetic its lambdas are rescaled per pair and per query "
                       "(or rounded), which is no loss's gradient; LambdaLoss(preset='loss') has a loss")
    _non_default_examples = {"loss": "ndcg_loss2", "mu": 2.0, "preset": "loss", "lambdarank_truncation_level": 12,
                             "label_gain": tuple(float(y) for y in range(31))}
    parameter_constraints = {"loss": Options(*LOSSES), "mu": Real(low=0),
                             "sigmoid": (Real(low=0, low_open=True, high=SQUARE_ROOT_OF_FLOAT64_MAX), None),
                             "lambdarank_truncation_level": (Integer(low=1), None, Options("preset")),
                             "lambdarank_norm": (Boolean(), None), "label_gain": (Reals(), None),
                             "lightgbm_arithmetic": Boolean(), "preset": Options(*_PRESETS),
                             "hessian_floor": (Real(low=0), None)}

    _presets = _PRESETS
    _unset = {"lambdarank_truncation_level": "preset"}
    _derived = {"hessian_floor": lambdarank_hessian_floor}

    def __init__(self, *, loss: str = "ndcg_loss2++", mu: float = 1.0, sigmoid: float | None = None,
                 lambdarank_truncation_level: int | None | str = "preset", lambdarank_norm: bool | None = None,
                 label_gain=None, lightgbm_arithmetic: bool = False, preset: str = "lightgbm",
                 hessian_floor: float | None = None):
        super().__init__(hessian_floor=hessian_floor)
        self._store(loss=loss, mu=mu, sigmoid=sigmoid, lambdarank_truncation_level=lambdarank_truncation_level,
                    lambdarank_norm=lambdarank_norm, label_gain=label_gain, lightgbm_arithmetic=lightgbm_arithmetic,
                    preset=preset)
        self._derive()
        self._apply_preset()

    @classmethod
    def search_fixed_by(cls, params: dict) -> frozenset[str]:
        """μ is searched for NDCG-Loss2++ only (it merely scales NDCG-Loss2)."""
        return frozenset() if params.get("loss", "ndcg_loss2++") == "ndcg_loss2++" else frozenset({"mu"})

    @property
    def _has_loss(self) -> bool:
        return not (self.lambdarank_norm or self.lightgbm_arithmetic)

    def _prepare(self, data: QueryData):
        longest = int(np.diff(data.offsets).max())
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
        norm = self.lambdarank_norm
        over_queries(lambda_kernel, data.offsets, scores, data.labels, data.offsets, inverse_max_dcg, gains, discounts,
                     distances, self.sigmoid, truncation, rank_weight, self.mu, norm, norm, self.lightgbm_arithmetic,
                     self._has_loss, grad, hess, losses)
        return losses if self._has_loss else None
