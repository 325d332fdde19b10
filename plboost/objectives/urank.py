"""The uRank loss: one softmax per document over all lower-rated ones.

Zhu and Klabjan, "Listwise Learning to Rank by Exploring Unique Ratings", WSDM 2020.

**uRank loss.** With the query's unique ratings ``r_1 > ... > r_K``, every document rated above the lowest
rating must be chosen, in its own softmax, over all documents rated below it, weighted by its gain
``w_d = 2^{y_d} - 1``:

.. math::

    L = \\frac{1}{K - 1} \\sum_{d:\\, y_d > \\min y} w_d
        \\Big[\\log\\big(e^{s_d} + Z(y_d)\\big) - s_d\\Big], \\qquad Z(r) = \\sum_{k:\\, y_k < r} e^{s_k}.

With :math:`\\pi_d = e^{s_d} / (e^{s_d} + Z(y_d))`, :math:`A_j = \\sum_{d: y_d > y_j} w_d / (e^{s_d} + Z(y_d))`
and :math:`B_j` the same with the denominator squared, the gradient and diagonal hessian are

.. math::

    g_j = \\tfrac{1}{K-1}\\big[-w_j (1 - \\pi_j) [y_j > \\min y] + e^{s_j} A_j\\big], \\qquad
    h_j = \\tfrac{1}{K-1}\\big[w_j \\pi_j (1 - \\pi_j) [y_j > \\min y] + e^{s_j} A_j - e^{2 s_j} B_j\\big].

The loss is convex; a query with one unique rating has zero loss and gradient. The kernel groups each
query by label (``label_groups``, O(n) for grades) and works with log-sum-exps of label groups, so every
exponent is <= 0.

uMart, from the same paper, is in :mod:`plboost.objectives.umart`.
"""

from __future__ import annotations

import numpy as np

from .._jit import kernel, over_queries, widest_query
from .._numerics import logaddexp
from .._queries import InvalidLabelError
from ._base import QueryData, RankingObjective, zero_query
from ._groups import label_groups

#: URank's largest label: its weights 2^y - 1 summed over a query of up to 2^27 documents stay below
#: float32's largest number (2^128), the type the engines take gradients in
MAX_LABEL = 100


@kernel
def _urank_kernel(first, end, scores, labels, offsets, grad, hess, losses):
    """uRank loss of queries ``first <= q < end``, written to ``losses``, and their gradients and raw
    hessians.

    ``label_groups`` lists the groups from the highest label down: group m holds
    ``order[starts[m]:starts[m + 1]]``, and the lowest label is group M - 1.
    """
    widest = widest_query(offsets, first, end)
    order = np.empty(widest, dtype=np.int64)
    grade_of = np.empty(widest, dtype=np.int64)
    starts = np.empty(widest + 1, dtype=np.int64)
    own_grad = np.empty(widest)
    own_hess = np.empty(widest)
    log_z = np.empty(widest)
    group_a = np.empty(widest)  # log of the group's sum of w_d / (e^{s_d} + Z)
    group_b = np.empty(widest)  # log of the group's sum of w_d / (e^{s_d} + Z)^2
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        n_groups = label_groups(labels, lo, hi, order, starts, grade_of)
        losses[q] = 0.0
        if n_groups < 2:
            zero_query(grad, hess, lo, hi)
            continue

        # log Z of each group: the log-sum-exp of every document in the groups below it
        running = -np.inf
        for m in range(n_groups - 1, -1, -1):
            log_z[m] = running
            for t in range(starts[m], starts[m + 1]):
                running = logaddexp(running, scores[lo + order[t]])

        # each document d above the lowest group: its own softmax term, and its share of A and B
        own_grad[:hi - lo] = 0.0
        own_hess[:hi - lo] = 0.0
        group_a[:n_groups] = -np.inf
        group_b[:n_groups] = -np.inf
        loss = 0.0
        for m in range(n_groups - 2, -1, -1):
            w = np.expm1(labels[lo + order[starts[m]]] * np.log(2.0))  # 2^y - 1
            log_w = np.log(w)
            for t in range(starts[m], starts[m + 1]):
                s = scores[lo + order[t]]
                log_denominator = logaddexp(s, log_z[m])
                group_a[m] = logaddexp(group_a[m], log_w - log_denominator)
                group_b[m] = logaddexp(group_b[m], log_w - 2.0 * log_denominator)
                loss += w * (log_denominator - s)
                pi = np.exp(s - log_denominator)
                one_minus_pi = np.exp(log_z[m] - log_denominator)
                own_grad[t] = -w * one_minus_pi
                own_hess[t] = w * pi * one_minus_pi

        # every document collects A and B from the groups above its own: e^{s_j} A_j = exp(s_j + log A_j)
        scale = 1.0 / (n_groups - 1)
        log_a = -np.inf
        log_b = -np.inf
        for m in range(n_groups):
            if m > 0:
                log_a = logaddexp(log_a, group_a[m - 1])
                log_b = logaddexp(log_b, group_b[m - 1])
            for t in range(starts[m], starts[m + 1]):
                d = lo + order[t]
                ea = np.exp(scores[d] + log_a)
                eb = np.exp(2.0 * scores[d] + log_b)
                grad[d] = scale * (own_grad[t] + ea)
                hess[d] = scale * (own_hess[t] + ea - eb)
        losses[q] = scale * loss


class URank(RankingObjective):
    """The uRank loss (Zhu & Klabjan, WSDM 2020): one softmax per document over all lower-rated ones.

    Labels above ``MAX_LABEL`` (100) are refused: a document weighs 2^y - 1, and beyond 2^100 the
    gradients can overflow float32, the engines' gradient type (LightGBM then silently builds a constant
    model).

    Parameters
    ----------
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    See the module docstring for the loss, its gradient and hessian.

    Examples
    --------
    At equal scores the document of label 2 weighs 2^2 - 1 = 3 times the one of label 1:

    >>> import numpy as np
    >>> labels, offsets = np.array([2, 1, 0]), np.array([0, 3])
    >>> print(URank().losses(np.zeros(3), labels, offsets).round(6))  # (3 log 3 + log 2) / 2
    [1.994492]
    >>> print(URank().gradients(np.zeros(3), labels, offsets)[0].round(4))
    [-1.    0.25  0.75]
    """

    name = "urank"
    demo_runs = ("urank",)

    def _prepare(self, data: QueryData):
        """Refuse labels above ``MAX_LABEL`` (once per dataset; there is no other state)."""
        too_high = np.flatnonzero(data.labels > MAX_LABEL)
        if too_high.size:
            i = int(too_high[0])
            raise InvalidLabelError(
                i, data.labels[i], f"is above {MAX_LABEL}: beyond it URank's weights 2^y - 1 overflow float32 "
                "gradients. Map the labels to fewer grades, or use PLRank, PLPartition or PLLowerBound (they use "
                "only the labels' order)", name="URank labels")
        return ()

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> np.ndarray:
        losses = np.empty(data.offsets.size - 1)
        over_queries(_urank_kernel, data.offsets, scores, data.labels, data.offsets, grad, hess, losses)
        return losses
