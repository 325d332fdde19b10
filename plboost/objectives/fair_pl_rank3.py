"""Fair PL-Rank-3: the Plackett-Luce policy's expected NDCG@K less a weighted disparity of its exposure, with
PL-Rank-3's estimator.

Oosterhuis, "Computationally Efficient Optimization of Plackett-Luce Ranking Models for Relevance and
Fairness", SIGIR 2021, Sec. 5 (fairness of exposure with PL-Rank); the disparities are those of
:mod:`plboost.fairness` (Singh and Joachims, KDD 2018 and NeurIPS 2019; Diaz et al., CIKM 2020).

The objective. For a query, with :math:`R` the policy's expected NDCG@K and :math:`E_d = \\sum_{j \\le K}
\\theta_j P(y_j = d)` each document's exposure under the same discounts :math:`\\theta_j = 1 / \\log_2(j + 1)`,
the objective maximises

.. math::

    R - \\lambda\\, D(E),

:math:`D` one of the disparities (``disparity``) and :math:`\\lambda` the ``fairness_weight``. Its gradient,
by the chain rule, is :math:`\\nabla R - \\lambda \\sum_d \\frac{\\partial D}{\\partial E_d} \\nabla E_d`, and
:math:`\\sum_d w_d \\nabla E_d` with the weights :math:`w` held is the gradient of the expected DCG@K of gains
w: PL-Rank-3's estimate, which is linear in the gains. So one PL-Rank-3 call with each document's gain

.. math::

    g_d = \\frac{\\rho_d}{\\mathrm{IDCG@K}} - \\lambda \\frac{\\partial D}{\\partial E_d}(\\hat E)

gives the whole gradient (the paper's Eq. for the fairness gradient does the same with PL-Rank-2). The exposures
:math:`\\hat E` come from ``n_exposure_samples`` other rankings of the same policy (Rao-Blackwellised: each
ranking adds the probability of every position up to a document's of taking it; see ``exposure_kernel`` in
:mod:`plboost.objectives.pl_rank3`), drawn independently of the gradient's. Every disparity here is quadratic
in E, so :math:`\\partial D / \\partial E` is affine in E and the estimate of the whole gradient is unbiased (the
product of two independent unbiased estimates; the paper's code estimates the exposures from rankings that include
the gradient's own). A query's gains are then shifted to a smallest of 0, which changes no expected gradient
(PL-Rank-3's ``gain="estimate"`` does the same for relevance estimates). Queries whose relevance gradient is 0
(all labels equal) keep their fairness term: an all-irrelevant query can still share exposure unfairly.

With ``fairness_weight=0`` the gains are PL-Rank-3's and the outputs are PL-Rank-3's bit for bit (the same draws:
the gradient's key hashes the labels, not the combined gains).

Hessian. The absolute value of PL-Rank-3's estimated diagonal of the second derivatives of the expected DCG of
the gains g held fixed (its ``curvature="expected"``): the second derivatives of :math:`D` through the exposures
(a Gauss-Newton term :math:`\\lambda\\, \\nabla E^\\top \\nabla^2 D\\, \\nabla E`, >= 0 for these convex D) are
left out: they need every document's exposure gradient, O(n^2) a query. The tests check the mean of the signed
estimate against second differences of the expected DCG of g by enumeration.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._constraints import Integer, Options, PerDocument, Real
from .._jit import over_queries
from ..fairness import (DISPARITIES, GROUP_DISPARITIES, MERITS, check_groups, disparity_gradient, merit_of,
                        target_exposure)
from ._base import DEFAULT_HESSIAN_FLOOR, WIDEST_SCORE_GAP, QueryData
from .pl_rank3 import PLRank3, PLRank3State, exposure_kernel

#: XORed into the seed of the exposure's draws (the key hashes the seed), so that they are not the gradient's
#: rankings of a nearby seed
_EXPOSURE_STREAM = np.uint64(0x6578706F73757265)


class FairPLRank3State(NamedTuple):
    """PL-Rank-3's state, each document's group code (None for "individual" and "expected_exposure"), merit, and
    target exposure (for "expected_exposure", else None): constants of the labels."""

    relevance: PLRank3State
    groups: np.ndarray | None
    merit: np.ndarray
    target: np.ndarray | None


class FairPLRank3(PLRank3):
    """PL-Rank-3 for relevance and fairness of exposure: maximises expected NDCG@K minus ``fairness_weight``
    times a disparity of the Plackett-Luce policy's exposure (Oosterhuis, SIGIR 2021; see the module docstring).

    Parameters
    ----------
    fairness_weight : float, default 0.0
        :math:`\\lambda`, the weight of the disparity against the expected NDCG@K (0: PL-Rank-3 itself).
    disparity : {"individual", "demographic_parity", "disparate_treatment", "expected_exposure"}, default
        "individual"; defined in :mod:`plboost.fairness`. The group disparities need ``groups``.
    groups : array-like or None, default None
        One group per training document, in the training data's order (any values NumPy can order: integers,
        strings); checked against the data's length when training starts.
    merit : {"exp", "linear"}, default "exp"
        A document's merit for "disparate_treatment" and "individual": ``2^y - 1`` or ``y``.
    n_exposure_samples : int or None, default None
        Rankings drawn per query and call to estimate the exposures (None: ``n_samples``).
    top_k, n_samples, seed, gain, normalize, hessian_floor
        As :class:`PLRank3` (the exposure is over the same top K); ``gain`` is "exp" or "linear" (no estimates),
        and the curvature is PL-Rank-3's "expected" (its "lambda" sums per distinct gain, which combined gains
        do not have).

    Examples
    --------
    >>> import numpy as np
    >>> fair = FairPLRank3(fairness_weight=0.5, disparity="demographic_parity", groups=[0, 0, 1, 1], top_k=2)
    >>> grad, hess = fair.gradients(np.array([2.0, 1.0, 0.0, -1.0]), np.array([1, 0, 1, 0]), np.array([0, 4]))
    >>> bool(grad[2] < 0), bool((hess > 0).all())  # group 1's relevant document is pushed up
    (True, True)
    """

    name = "fair_pl_rank3"
    demo_runs = ()
    search_space = {}
    _non_default_examples = {"gain": "linear", "disparity": "expected_exposure", "merit": "linear",
                             "groups": (0, 1, 1, 0, 1, 0, 0)}
    parameter_constraints = {"fairness_weight": Real(low=0.0), "disparity": Options(*DISPARITIES),
                             "merit": Options(*MERITS), "n_exposure_samples": (Integer(low=1), None),
                             "gain": Options("exp", "linear"), "groups": (PerDocument(), None)}
    #: groups must have the length of the data trained on: the generic tests set them alone, on their own query
    _examples_alone = ("groups",)

    def __init__(self, *, fairness_weight: float = 0.0, disparity: str = "individual", groups=None,
                 merit: str = "exp", n_exposure_samples: int | None = None, top_k: int | None = 10,
                 n_samples: int = 30, seed: int = 0, gain: str = "exp", normalize: bool = True,
                 hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(top_k=top_k, n_samples=n_samples, seed=seed, gain=gain, normalize=normalize,
                         curvature="expected", hessian_floor=hessian_floor)
        self._store(fairness_weight=fairness_weight, disparity=disparity, groups=groups, merit=merit,
                    n_exposure_samples=n_exposure_samples)
        if self.disparity in GROUP_DISPARITIES and self.groups is None:
            raise ValueError(f"FairPLRank3: disparity={self.disparity!r} compares groups of documents; pass groups= "
                             "(one per training document, from Python: the plboost command cannot give them yet; "
                             "disparity='individual' and 'expected_exposure' need none)")

    def _prepare(self, data: QueryData) -> FairPLRank3State:
        relevance = super()._prepare(data)
        codes = None
        if self.disparity in GROUP_DISPARITIES:
            codes = check_groups(self.groups, data.n_docs, name="FairPLRank3 groups")
        target = None
        if self.disparity == "expected_exposure":
            target = target_exposure(data.labels, data.offsets, self._examination(relevance.discounts))
        return FairPLRank3State(relevance, codes, merit_of(data.labels, self.merit), target)

    def _examination(self, discounts: np.ndarray) -> np.ndarray:
        return discounts if self.top_k is None else discounts[:self.top_k]

    def warm_up(self) -> None:
        """Compile both kernels (the exposure's and PL-Rank-3's) on a tiny query of two groups: this objective's
        own groups belong to its training data, not to the warm-up's query."""
        params = {**self.get_params(), "fairness_weight": 1.0, "disparity": "demographic_parity", "groups": (0, 1, 0)}
        type(self)(**params).gradients(np.array([0.5, 0.0, -0.5]), np.array([2.0, 1.0, 0.0]), np.array([0, 3]))

    def exposure(self, scores, labels, offsets) -> np.ndarray:
        """The estimate of each document's exposure that a call at these scores uses (its own draws)."""
        data = self._checked_queries(labels, offsets)
        return self._exposure(self._checked_scores(scores, data), data, self._state_for(data))

    def _exposure(self, scores, data: QueryData, state: FairPLRank3State) -> np.ndarray:
        discounts = state.relevance.discounts
        top_k = discounts.size if self.top_k is None else self.top_k
        samples = self.n_samples if self.n_exposure_samples is None else self.n_exposure_samples
        exposure = self._workspace("exposure", data.n_docs)
        over_queries(exposure_kernel, data.offsets, np.ascontiguousarray(scores), data.labels,
                     state.relevance.gains, data.offsets, discounts, top_k, samples,
                     np.uint64(self.seed) ^ _EXPOSURE_STREAM, float(self._linear_span),
                     WIDEST_SCORE_GAP, exposure)
        return exposure

    def _estimates(self, scores, data: QueryData, state: FairPLRank3State, grad, hess) -> None:
        relevance = state.relevance
        if self.fairness_weight == 0.0:
            return super()._estimates(scores, data, relevance, grad, hess)
        exposure = self._exposure(scores, data, state)
        discounts = relevance.discounts
        pull = disparity_gradient(self.disparity, exposure, data.offsets, groups=state.groups, merit=state.merit,
                                  labels=data.labels, examination=self._examination(discounts), target=state.target)
        sizes = np.diff(data.offsets)
        scale = relevance.scale
        # the gains in the units the kernel scales by: rho / IDCG = gains * scale; queries without a relevance
        # gradient (scale 0) take scale 1 and the fairness term alone
        unit = np.where(scale > 0, scale, 1.0)
        gains = relevance.gains * np.repeat(scale > 0, sizes) - self.fairness_weight * pull / np.repeat(unit, sizes)
        varies = np.zeros(sizes.size, dtype=bool)
        if gains.size:
            starts = data.offsets[:-1][sizes > 0]
            lowest = np.minimum.reduceat(gains, starts)
            varies[sizes > 0] = np.maximum.reduceat(gains, starts) > lowest
            shift = np.zeros(sizes.size)
            shift[sizes > 0] = lowest
            gains = gains - np.repeat(shift, sizes)
        combined = PLRank3State(gains, np.where(varies, unit, 0.0), discounts, relevance.n_grades)
        # the draws' key hashes the labels, so the rankings are PL-Rank-3's at these scores
        super()._estimates(scores, data, combined, grad, hess)
