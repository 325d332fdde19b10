"""Position-aware ListMLE: PLRank's loss with a weight per position of the ground-truth permutation.

Lan, Zhu, Guo, Niu and Cheng, "Position-Aware ListMLE: A Sequential Learning Process for Ranking", UAI 2014
(p-ListMLE). ListMLE's likelihood treats every step of the Plackett-Luce process alike, so an error at the
top of the list costs what one at the bottom does; the paper views ranking as a sequence of steps (choose
the best document, then the best of the rest, ...) and scalarises the steps' losses with weights that
decrease with the position. Its abstract says its theory shows p-ListMLE "better than ListMLE in statistical
consistency with respect to" NDCG; the theorem's exact conditions on the weights could not be consulted for
this implementation (only the abstract was at hand), so nothing here claims that any weighting below is
consistent with NDCG.

The ground-truth permutations are PLRank's (:mod:`plboost.objectives.plrank`): M per query, ties among equal
labels broken at random, truncated to the top K. With weights ``w_1 >= w_2 >= ... >= 0`` the loss of a
permutation ``pi`` of a query of n documents is

.. math::

    L_\\pi = \\sum_{j=1}^{\\min(K, n)} w_j \\Big[\\log \\sum_{t \\ge j} e^{s_{\\pi(t)}} - s_{\\pi(j)}\\Big],

the query's loss the mean of ``L_pi`` over its M permutations. With contexts ``C_j = {pi(j), ..., pi(n)}``
and ``p(d|C) = e^{s_d} / sum_{c in C} e^{s_c}``, the gradient and diagonal hessian of ``L_pi`` are

.. math::

    g_d = \\sum_{C_j \\ni d,\\ j \\le K} w_j\\, p(d|C_j) - w_{\\pi^{-1}(d)}\\,[d \\in \\pi(1..K)], \\qquad
    h_d = \\sum_{C_j \\ni d,\\ j \\le K} w_j\\, p(d|C_j)\\,(1 - p(d|C_j)).

The loss is convex (a sum of log-sum-exps with non-negative weights), the gradients of a query sum to 0,
and all weights 1 give PLRank exactly. PLRank's kernel computes it (the weighted prefix sums along a
permutation: ``a_j = w_j + a_{j-1} Z_j / Z_{j-1}``, likewise ``b_j`` with the ratio squared): a context
shared by several permutations (compressed contexts) sits at the same depth j in each, so it has one
weight and is still computed once.

The weights (``position_weights``):

``"exponential"`` (the default)
    ``w_j = (2^{n-j} - 1) / (2^{n-1} - 1)`` for a query of n documents (1 for a single document, whose one
    term is 0 anyway): the weights ``2^{n-j} - 1`` that TF-Ranking's ``create_p_list_mle_lambda_weight``
    (and sentence-transformers' ``PListMLELoss``) implement as the paper's, divided by their first. The
    paper's own text could not be consulted for this implementation: the exponential form is taken from
    those implementations, which cite the paper for it, and is named for what it is. ``"paper"``, its
    former name, is still accepted with a FutureWarning. They apply it to lists padded to one common size;
    here queries have different sizes, and the raw ``2^{n-1}`` would make a query of 60 documents weigh 2^50
    times one of 10 (and overflow float32 gradients beyond 128 documents), so each query's weights are
    scaled to give its first position the weight 1, as in PLRank. In practice ``w_j ~ 2^{1-j}``: each
    position weighs about half the one above it, and the last one (j = n) weighs 0.
``"dcg"``
    ``w_j = 1 / log2(1 + j)``, the discount of DCG at position j.
a sequence of ``top_k`` non-negative numbers
    ``w_1 .. w_K`` as given (``top_k`` must then be an integer).

Exact Newton leaves (``leaf_values="exact"``) are refused: :meth:`PLRank.leaf_curvature` computes PLRank's
unweighted curvature.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from .._constraints import Options, Reals
from ._base import CURVATURES, DEFAULT_HESSIAN_FLOOR
from .plrank import PLRank

#: the named weightings of ``position_weights``
POSITION_WEIGHTS = ("exponential", "dcg")
#: former names of the named weightings
_RENAMED_WEIGHTS = {"paper": "exponential"}


def _renamed_weights(position_weights):
    """A former name of a named weighting replaced by its name now, with a FutureWarning."""
    if isinstance(position_weights, str) and position_weights in _RENAMED_WEIGHTS:
        warnings.warn(f"position_weights={position_weights!r} is now named "
                      f"{_RENAMED_WEIGHTS[position_weights]!r} (TF-Ranking's reading of the paper's weights, "
                      "2^(n-j) - 1); the old name will be removed", FutureWarning, stacklevel=4)
        return _RENAMED_WEIGHTS[position_weights]
    return position_weights


def exponential_weights(n: np.ndarray, j: np.ndarray) -> np.ndarray:
    """``(2^{n-j} - 1) / (2^{n-1} - 1)`` for positions ``j`` (1-based) of queries of ``n`` documents, computed
    as ``(2^{1-j} - 2^{1-n}) / (1 - 2^{1-n})`` so that no size overflows; 1 where ``n == 1``."""
    n = np.asarray(n, dtype=np.float64)
    j = np.asarray(j, dtype=np.float64)
    tail = np.exp2(1.0 - np.maximum(n, 2.0))
    return np.where(n > 1, (np.exp2(1.0 - j) - tail) / (1.0 - tail), 1.0)


class PositionAwareListMLE(PLRank):
    """Position-aware ListMLE (Lan et al., UAI 2014): PLRank's loss with position j weighted by ``w_j``.

    Parameters
    ----------
    top_k : int or None, default 10
        Positions of each permutation that enter the loss. None: the whole list.
    n_permutations : int, default 1
        Ground-truth permutations sampled per query (ties among equal labels broken at random in each).
    seed : int, default 0
        Seed of the random tie-breaking; the same seed gives the same permutations.
    position_weights : "exponential", "dcg" or a sequence of top_k numbers, default "exponential"
        The weight of each position: "exponential", ``(2^{n-j} - 1) / (2^{n-1} - 1)`` for a query of n documents
        (see the module docstring for where it comes from and why it is scaled); "dcg", ``1 / log2(1 + j)``;
        or the ``top_k`` non-negative weights themselves (all 1: PLRank).
    skip_uniform_queries : bool, default True
        Give queries whose labels are all equal zero gradients (they carry no ranking information).
    stop_at_lowest_grade : bool, default False
        End each permutation's loss before the query's lowest grade (see :class:`PLRank`).
    compress_contexts : bool, default True
        Store contexts shared by several permutations once (same results, less work).
    curvature : {"exact", "bound"}, default "exact"
        The hessians: the loss's diagonal hessian, or each context's weight times a quarter, summed over the
        contexts that hold the document (:class:`PLRank`'s bound, with the positions' weights).
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    Exact Newton leaves (``leaf_values="exact"``) are PLRank's only.

    Examples
    --------
    One query of three documents, the whole list: the exponential weights are 1, 1/3 and 0.

    >>> import numpy as np
    >>> obj = PositionAwareListMLE(top_k=None)
    >>> grad, hess = obj.gradients(np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3]))
    >>> print(grad.round(4), hess.round(4))
    [-0.4935  0.1813  0.3122] [0.25   0.2912 0.2299]
    """

    name = "pa_listmle"
    exact_leaves = False  # PLRank's leaf curvature is the unweighted one
    parameter_constraints = {"position_weights": (Options(*POSITION_WEIGHTS), Reals(low=0))}
    demo_runs = ()
    #: PLRank's dimensions (no exact leaves) and the named weightings; explicit weights are not searched, and
    #: a configuration that gives them fixes top_k (:meth:`search_fixed_by`)
    search_space = {"top_k": {"choices": (5, 10, 20, None), "default": 10},
                    "n_permutations": {"low": 1, "high": 6, "default": 1},
                    "position_weights": {"choices": POSITION_WEIGHTS, "default": "exponential"},
                    "stop_at_lowest_grade": {"choices": (False, True), "default": False},
                    "curvature": {"choices": CURVATURES, "default": "exact"}}
    _non_default_examples = {"position_weights": "dcg", "curvature": "bound"}

    def __init__(self, *, top_k: int | None = 10, n_permutations: int = 1, seed: int = 0,
                 position_weights: str | Sequence[float] = "exponential", skip_uniform_queries: bool = True,
                 stop_at_lowest_grade: bool = False, compress_contexts: bool = True, curvature: str = "exact",
                 hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(top_k=top_k, n_permutations=n_permutations, seed=seed,
                         skip_uniform_queries=skip_uniform_queries, stop_at_lowest_grade=stop_at_lowest_grade,
                         compress_contexts=compress_contexts, curvature=curvature, hessian_floor=hessian_floor)
        self._store(position_weights=_renamed_weights(position_weights))
        weights = self.position_weights
        if isinstance(weights, tuple):
            if self.top_k is None:
                raise ValueError("PositionAwareListMLE: position_weights given as a sequence needs an integer top_k "
                                 "(one weight per position), got top_k=None")
            if len(weights) != self.top_k:
                raise ValueError(f"PositionAwareListMLE: position_weights must hold top_k = {self.top_k} weights, "
                                 f"got {len(weights)}")
            if not any(w > 0 for w in weights):
                raise ValueError("PositionAwareListMLE: position_weights must not be all 0")

    @classmethod
    def search_fixed_by(cls, params: dict) -> frozenset[str]:
        """Explicit weights (a sequence) fix ``top_k``: they hold one weight per position, so a search must not
        draw another ``top_k`` (every such trial would be refused)."""
        weights = params.get("position_weights")
        return frozenset({"top_k"}) if weights is not None and not isinstance(weights, str) else frozenset()

    def _position_weights(self, sizes: np.ndarray, top_k_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        widest = max(int(top_k_of.max(initial=0)), 1)
        if self.position_weights == "dcg":
            return 1.0 / np.log2(np.arange(2, widest + 2, dtype=np.float64)), np.zeros(sizes.size, dtype=np.int64)
        if not isinstance(self.position_weights, str):
            return np.array(self.position_weights, dtype=np.float64), np.zeros(sizes.size, dtype=np.int64)
        # "exponential": the weights depend on the query's size, so each query has a row of its own k weights
        weight_start = np.zeros(sizes.size, dtype=np.int64)
        np.cumsum(top_k_of[:-1], out=weight_start[1:])
        query_of = np.repeat(np.arange(sizes.size), top_k_of)
        position = np.arange(query_of.size) - weight_start[query_of] + 1
        return exponential_weights(sizes[query_of], position), weight_start

    def leaf_curvature(self, scores, labels, offsets, leaf, n_leaves: int) -> np.ndarray:
        """Not available: exact Newton leaves are PLRank's (its curvature is the unweighted one)."""
        raise NotImplementedError("exact leaf values are defined for PLRank (the paper's Eqn. 9), not pa_listmle: "
                                  "train PositionAwareListMLE with leaf_values='diagonal'")
