"""plboost's ranking objectives, usable as LightGBM and XGBoost custom objectives.

An objective is a module of its own (kernels and a :class:`RankingObjective` subclass) and one entry in the
``registry(...)`` line below: the CLI, the engines and the generic tests take every objective from
``OBJECTIVES``.

>>> from plboost.objectives import PLRank, get_objective
>>> get_objective("plrank", top_k=5)  # doctest: +NORMALIZE_WHITESPACE
PLRank(top_k=5, n_permutations=1, seed=0, skip_uniform_queries=True, stop_at_lowest_grade=False,
       compress_contexts=True, curvature='exact', hessian_floor=1e-06)
"""

from ._base import RankingObjective, class_given_message, registry
from .fair_pl_rank3 import FairPLRank3
from .lambdaloss import LambdaLoss
from .listnet import ListNet
from .pa_listmle import PositionAwareListMLE
from .partition import PLPartition
from .pl_lb import PLLowerBound
from .pl_rank3 import PLRank3
from .plrank import PLRank, PLRankState
from .umart import UMart
from .urank import URank
from .yetirank import YetiRank

#: objective classes by the name the CLI and result files use
OBJECTIVES = registry(PLRank, URank, UMart, PLPartition, PLLowerBound, ListNet, PositionAwareListMLE, PLRank3,
                      LambdaLoss, YetiRank, FairPLRank3)


def get_objective(name: str, **params) -> RankingObjective:
    """An objective by its registered name (see ``OBJECTIVES``), constructed with ``params``."""
    try:
        cls = OBJECTIVES[name]
    except KeyError:
        raise ValueError(f"unknown plboost objective {name!r}; known: {', '.join(sorted(OBJECTIVES))}") from None
    return cls(**params)


__all__ = ["OBJECTIVES", "PLRankState", "RankingObjective", "class_given_message", "get_objective", "registry",
           *(cls.__name__ for cls in OBJECTIVES.values())]
