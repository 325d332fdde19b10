"""PL-LB: the partitioned-preference likelihood of tied grades with each step replaced by a lower bound.

Hino, Fujimoto and Murata's lower bound, the baseline of PL-Partition (:mod:`plboost.objectives.partition`) in
Ma, Yi, Tang, Zhao, Hong, Chi and Mei, "Learning-to-Rank with Partitioned Preference: Fast Estimation for the
Plackett-Luce Model", AISTATS 2021. A query's documents are partitioned by grade, S_1 (highest) ... S_M; step m
prefers S_m to the rest R_{m+1} = S_{m+1} ∪ ... ∪ S_M, and its probability is bounded below by

.. math::

    P(S \\succ R) \\ge n_S! \\prod_{i \\in S} e^{s_i} \\Big/ \\Big(\\sum_{j \\in S \\cup R} e^{s_j}\\Big)^{n_S}

(each of the n_S choices' denominators is at most the full sum), so the loss
``-Σ_m [log n_m! + Σ_{S_m} s - n_m log Σ_{S_m ∪ R_{m+1}} e^s]`` is a softmax cross-entropy per step, O(n) per
query, at least PL-Partition's. The partitions, the log-sum-exps and the closed-form terms of the documents below
each step are PL-Partition's own set-up (:mod:`plboost.objectives._groups`).
"""

from __future__ import annotations

import math

import numpy as np

from .._jit import kernel, over_queries
from ._base import QueryData, RankingObjective
from ._groups import collect_lower_terms, finish_query, query_scratch, start_query


@kernel
def _pl_lower_bound_kernel(first, end, scores, labels, offsets, grad, hess, losses):
    """PL-LB loss of queries ``first <= q < end``: -Σ_m [log n_m! + Σ_{S_m} s - n_m log Σ_{S_m ∪ R_{m+1}} e^s];
    gradients and raw hessians to ``grad`` and ``hess``."""
    widest, order, grade_of, starts, ordered, shifted, top, below, grad64, hess64 = query_scratch(first, end,
                                                                                                  offsets)
    sizes = np.empty(widest)
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        losses[q] = 0.0
        n_parts = start_query(scores, labels, lo, hi, order, grade_of, starts, ordered, shifted, top, below,
                               grad64, hess64, grad, hess)
        n_steps = n_parts - 1
        for m in range(n_steps):
            size = starts[m + 1] - starts[m]
            sizes[m] = size
            losses[q] += size * below[m] - math.lgamma(size + 1.0)
            for t in range(starts[m], starts[m + 1]):
                losses[q] -= ordered[t]
                grad64[t] -= 1.0
        if n_steps > 0:
            # softmax terms n_m q_j over S_m ∪ R_{m+1}: the same prefix sums, normalised by below[m]
            collect_lower_terms(shifted, top, starts, n_parts, below, sizes, sizes, n_steps, np.int64(0), grad64,
                                 hess64)
            finish_query(lo, hi, order, grad64, hess64, grad, hess)


class PLLowerBound(RankingObjective):
    """PL-LB: each partition step replaced by its lower bound n_S! Π e^{s_i} / (Σ_{S∪R} e^{s_j})^{n_S}.

    The baseline of Ma et al. (AISTATS 2021), after Hino et al. A softmax cross-entropy per step,
    O(n) per query; :meth:`losses` is the bound's own loss, -Σ_m log of the bound, which is at least
    PL-Partition's.

    Parameters
    ----------
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    Examples
    --------
    The bound's loss is at least PL-Partition's (the -log of a lower bound of its probability):

    >>> import numpy as np
    >>> from plboost.objectives import PLPartition
    >>> args = np.array([0.5, 0.0, -0.5]), np.array([1, 1, 0]), np.array([0, 3])
    >>> print(PLLowerBound().losses(*args).round(6), PLPartition().losses(*args).round(6))
    [1.167392] [0.616479]
    """

    name = "pl_lb"
    #: not in ``plboost demo``: PL-Partition's baseline, which the demo's PL-Partition run stands for
    demo_runs = ()

    def _gradients(self, scores, data: QueryData, state, grad, hess) -> np.ndarray:
        losses = np.empty(data.offsets.size - 1)
        over_queries(_pl_lower_bound_kernel, data.offsets, scores, data.labels, data.offsets, grad, hess, losses)
        return losses
