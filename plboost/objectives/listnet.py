"""ListNet: the cross entropy between the top-one distributions of the labels and of the scores.

Cao, Qin, Liu, Tsai and Li, "Learning to Rank: From Pairwise Approach to Listwise Approach", ICML 2007.
Tax, Bockting and Hiemstra ("A cross-benchmark comparison of 87 learning to rank methods", IPM 2015) found
it Pareto-optimal in NDCG@10 against training cost across the benchmarks they compared.

For a query with scores ``s`` and labels ``y``, the top-one probability of document ``j`` under the scores
is the softmax ``p_j = e^{s_j} / sum_k e^{s_k}``, and under the labels a target distribution ``t``:

.. math::

    L = -\\sum_j t_j \\log p_j, \\qquad
    t_j = \\frac{e^{y_j}}{\\sum_k e^{y_k}} \\;(\\text{target="softmax"}) \\quad\\text{or}\\quad
    t_j = \\frac{2^{y_j} - 1}{\\sum_k (2^{y_k} - 1)} \\;(\\text{target="gain"}).

Since ``sum_j t_j = 1``, the gradient is ``g_j = p_j - t_j`` and the diagonal of the hessian
``h_j = p_j (1 - p_j)`` (the full hessian is ``diag(p) - p p^T``, positive semi-definite: the loss is convex).
With ``target="gain"``, a query without relevant documents has no target distribution: its loss and
gradients are 0. A query whose labels are all equal has a uniform ``t``, which carries no ranking and would
pull its scores together; such queries are left out (loss and gradients 0, as every plboost objective and
LightGBM's lambdarank leave them) unless ``skip_uniform_queries=False``, the paper's literal loss.

With ``curvature="bound"`` the hessians are ``1/4`` instead (for a query of two or more documents): the
largest curvature the query's log-sum-exp can have along any leaf, ``P (1 - P) <= 1/4`` for the share ``P``
of the leaf's documents, so a leaf's step never overshoots the minimum along it (a majorize-minimize step;
Böhning, "Multinomial logistic regression algorithm", Ann. Inst. Statist. Math. 44, 1992, bounds the whole
hessian by ``(I - 11^T/n)/2``). At equal scores the exact ``p_j (1 - p_j) ~ 1/n`` makes the Newton step
``(t_j - 1/n) n`` grow with the list's length; the bound's, ``4 (t_j - 1/n)``, does not (see PLRank's
``curvature``).

With ``target="estimate"`` the labels are relevance estimates from a click log (:mod:`plboost.clicks`), taken as
the weights of the cross entropy without normalising them,

.. math::

    L = -\\sum_j \\hat R_j \\log p_j, \\qquad g_j = W p_j - \\hat R_j, \\qquad h_j = W p_j (1 - p_j),
    \\qquad W = \\sum_k \\hat R_k,

which is linear in the estimates, so unbiased estimates give an unbiased loss and gradient of the same loss on the
true relevance (the softmax cross entropy of Ai et al., SIGIR 2018, and Bruch et al., ICTIR 2019, with relevance
weights; normalising by :math:`W` would make it a ratio of estimates, biased). Its curvature bound is :math:`W / 4`.
Negative estimates (the affine and doubly robust estimators give them) are refused: with a negative weight the loss
is unbounded below (:math:`-\\hat R_j \\log p_j \\to -\\infty` as :math:`p_j \\to 0`), and a shift by a constant
would add a pull towards uniform scores, not leave the gradient unbiased (PL-Rank-3's expected DCG, whose
exposure sums to a constant, takes any real estimates).

Exponents are taken relative to each query's largest score and largest label, so none overflows.
"""

from __future__ import annotations

import numpy as np

from .._constraints import Boolean, Options
from .._jit import helper, kernel, over_queries
from ._base import CURVATURES, DEFAULT_HESSIAN_FLOOR, QueryData, RankingObjective, zero_query

#: the top-one distributions of the labels ``target`` can name (and that a search tries)
TARGETS = ("softmax", "gain")
#: how the kernel weighs a label: by its softmax, its gain, or as a relevance estimate (unnormalised)
_SOFTMAX, _GAIN, _ESTIMATE = 0, 1, 2


@kernel
def _listnet_kernel(first, end, scores, labels, offsets, target, skip_uniform, bounded, grad, hess, losses):
    """ListNet loss of queries ``first <= q < end`` (written to ``losses``), gradients and raw hessians; ``target``
    one of _SOFTMAX, _GAIN, _ESTIMATE."""
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        top_score = scores[lo]
        top_label = labels[lo]
        bottom_label = labels[lo]
        for i in range(lo + 1, hi):
            top_score = max(top_score, scores[i])
            top_label = max(top_label, labels[i])
            bottom_label = min(bottom_label, labels[i])
        score_sum = 0.0
        target_sum = 0.0
        for i in range(lo, hi):
            score_sum += np.exp(scores[i] - top_score)
            target_sum += _target_weight(labels[i], top_label, target)
        if target_sum == 0.0 or (skip_uniform and top_label == bottom_label):  # no target, or a uniform one
            zero_query(grad, hess, lo, hi)
            losses[q] = 0.0
            continue
        log_normaliser = top_score + np.log(score_sum)
        mass = target_sum if target == _ESTIMATE else 1.0  # the weights' sum, 1 for a distribution
        loss = 0.0
        for i in range(lo, hi):
            p = np.exp(scores[i] - log_normaliser)
            t = _target_weight(labels[i], top_label, target) / (1.0 if target == _ESTIMATE else target_sum)
            loss += t * (log_normaliser - scores[i])
            grad[i] = mass * p - t
            hess[i] = mass * ((0.25 if hi - lo > 1 else 0.0) if bounded else p * (1.0 - p))
        losses[q] = loss


@helper
def _target_weight(label, top_label, target):
    """``e^{y - y_max}``, or ``(2^y - 1) / 2^{y_max}`` (_GAIN): the target's weights scaled by a per-query
    constant that cancels in ``t``; or the estimate itself (_ESTIMATE)."""
    if target == _ESTIMATE:
        return label
    if target == _GAIN:
        return np.exp2(label - top_label) - np.exp2(-top_label)
    return np.exp(label - top_label)


class ListNet(RankingObjective):
    """ListNet (Cao et al., ICML 2007): cross entropy of the top-one distributions of labels and scores.

    Parameters
    ----------
    target : {"softmax", "gain", "estimate"}, default "softmax"
        The labels' top-one distribution: the softmax of the labels (the paper's), or the documents' gains
        ``2^y - 1`` normalised to sum to 1 (a query without relevant documents then has no loss); or, for a
        click log's relevance estimates (non-negative), the estimates as unnormalised weights (module docstring).
    skip_uniform_queries : bool, default True
        Leave out queries whose labels are all equal (their target is uniform: no ranking to learn); False
        keeps them, as the paper's loss does.
    curvature : {"exact", "bound"}, default "exact"
        The hessians: the loss's diagonal hessian ``p (1 - p)``, or its bound ``1/4`` (module docstring).
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    See the module docstring for the loss, its gradient and hessian.

    >>> import numpy as np
    >>> grad, hess = ListNet().gradients(np.zeros(3), np.array([2.0, 1.0, 0.0]), np.array([0, 3]))
    >>> grad.round(4)
    array([-0.3319,  0.0886,  0.2433], dtype=float32)
    >>> hess.round(4)
    array([0.2222, 0.2222, 0.2222], dtype=float32)
    """

    name = "listnet"
    demo_runs = ("listnet",)
    search_space = {"target": {"choices": TARGETS, "default": "softmax"},
                    "curvature": {"choices": CURVATURES, "default": "exact"}}
    parameter_constraints = {"target": Options(*TARGETS, "estimate"), "skip_uniform_queries": Boolean(),
                             "curvature": Options(*CURVATURES)}

    #: a valid value other than the default, for the tests that set every argument
    _non_default_examples = {"target": "gain", "curvature": "bound"}

    def __init__(self, *, target: str = "softmax", skip_uniform_queries: bool = True, curvature: str = "exact",
                 hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(hessian_floor=hessian_floor)
        self._store(target=target, skip_uniform_queries=skip_uniform_queries, curvature=curvature)

    @property
    def takes_estimates(self) -> bool:
        return self.target == "estimate"

    def _prepare(self, data: QueryData):
        if self.target == "estimate" and data.labels.size and data.labels.min() < 0:
            raise ValueError(f"ListNet(target='estimate') takes non-negative relevance estimates, got "
                             f"{data.labels.min():g} (the affine and doubly robust estimators give negative ones, "
                             "whose weighted cross entropy is unbounded below): use the naive, ips or policy_aware "
                             "estimator, or train PLRank3(gain='estimate', normalize=False), which takes any")
        return None

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> np.ndarray:
        losses = np.empty(data.offsets.size - 1)
        target = {"softmax": _SOFTMAX, "gain": _GAIN, "estimate": _ESTIMATE}[self.target]
        over_queries(_listnet_kernel, data.offsets, scores, data.labels, data.offsets, target,
                     self.skip_uniform_queries, self.curvature == "bound", grad, hess, losses)
        return losses
