"""plboost: Plackett-Luce-family listwise ranking objectives for LightGBM and XGBoost.

Everything a user needs is a name on the package::

    import lightgbm as lgb
    import plboost

    train = plboost.load_svmlight("train.txt")
    test = plboost.load_svmlight("test.txt", n_features=train.n_features)
    booster = lgb.train({"objective": plboost.PLRank(top_k=10)}, train.to_lightgbm(), 100)
    print(plboost.evaluate(booster.predict(test.X), test.labels, offsets=test.offsets))

The names are loaded when first used (a module-level ``__getattr__``, PEP 562), so ``import plboost`` loads
neither Numba nor an engine; ``__all__`` lists them. Every registered objective's class is a name of the package
(read off the registry). Where each one lives (the house's floors, and where a new objective,
metric, layout or engine goes) is in ``docs/architecture.md``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__

#: the module of the objectives: besides the names below, the class of every objective in its registry
#: (``plboost.objectives.OBJECTIVES``) is a name of the package, read from the registry when first asked for
_OBJECTIVES = "plboost.objectives"

#: public name -> the module that defines it (the objective classes aside: ``_objective_classes``)
_PUBLIC = {
    # objectives (plboost.objectives)
    **dict.fromkeys(("RankingObjective", "OBJECTIVES", "get_objective"), _OBJECTIVES),
    # data (plboost.data)
    **dict.fromkeys(("RankingData", "OutOfCoreData", "DataFormatError", "load_svmlight", "load_splits", "load_table",
                     "load_out_of_core", "make_synthetic", "write_synthetic_splits", "clear_cache"), "plboost.data"),
    # metrics (plboost.metrics)
    **dict.fromkeys(("evaluate", "ndcg", "err", "mean_average_precision", "average_precision", "register_metric",
                     "unregister_metric", "registered_metrics"), "plboost.metrics"),
    # training (plboost.engines)
    **dict.fromkeys(("train", "load_model", "ENGINES", "TrainedModel", "SavedModel", "TrainingSettings"),
                    "plboost.engines"),
    "train_dask": "plboost.engines.dask",
    "ranking_collections": "plboost.engines.dask",
    # scikit-learn and cross-validation
    "Ranker": "plboost.sklearn",
    "query_folds": "plboost.cv",
    "CutQueryError": "plboost._queries",
    # ranking policies
    "PlackettLucePolicy": "plboost.policies",
}


def _objective_classes() -> dict[str, str]:
    """The registered objectives' class names, each to its module: read off the registry, so that a registered
    objective is a name of the package without an entry here (importing the registry loads Numba: it is read only
    for a name that ``_PUBLIC`` does not hold)."""
    registered = importlib.import_module(_OBJECTIVES).OBJECTIVES.values()
    return {cls.__name__: _OBJECTIVES for cls in registered}


#: every public name, written out for static tools (``from plboost import *``, linters, IDEs);
#: ``tests/test_public_api.py`` checks that it holds every name above and every registered objective's class
__all__ = [
    "CutQueryError", "DataFormatError", "ENGINES", "FairPLRank3", "LambdaLoss", "ListNet", "OBJECTIVES",
    "OutOfCoreData",
    "PLLowerBound", "PLPartition", "PLRank", "PLRank3", "PlackettLucePolicy", "PositionAwareListMLE", "Ranker",
    "RankingData",
    "RankingObjective", "SavedModel", "TrainedModel", "TrainingSettings", "UMart", "URank", "YetiRank", "__version__",
    "average_precision", "clear_cache", "err", "evaluate", "get_objective", "load_model", "load_out_of_core",
    "load_splits", "load_svmlight", "load_table", "make_synthetic", "mean_average_precision", "ndcg", "query_folds",
    "ranking_collections", "register_metric", "registered_metrics", "train", "train_dask", "unregister_metric",
    "write_synthetic_splits",
]


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None and not name.startswith("__"):  # Python's own probes (__path__, __wrapped__) load nothing
        module = _objective_classes().get(name)
    if module is None:
        raise AttributeError(f"module 'plboost' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access does not come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what static tools and IDEs see
    from ._queries import CutQueryError
    from .cv import query_folds
    from .data import (DataFormatError, OutOfCoreData, RankingData, clear_cache, load_out_of_core, load_splits,
                       load_svmlight, load_table, make_synthetic, write_synthetic_splits)
    from .engines import ENGINES, SavedModel, TrainedModel, TrainingSettings, load_model, train
    from .engines.dask import ranking_collections, train_dask
    from .metrics import (average_precision, err, evaluate, mean_average_precision, ndcg, register_metric,
                          registered_metrics, unregister_metric)
    from .objectives import (OBJECTIVES, FairPLRank3, LambdaLoss, ListNet, PLLowerBound, PLPartition, PLRank, PLRank3,
                             PositionAwareListMLE, RankingObjective, UMart, URank, YetiRank, get_objective)
    from .policies import PlackettLucePolicy
    from .sklearn import Ranker
