"""Training helpers for the engines: one call trains a ranker with a plboost or built-in objective.

The engines are those of the engine registry (:mod:`plboost._engine_registry`, re-exported here: ``ENGINES``,
``get_engine``, ``engine_of``); each trains through its adapter module (:mod:`plboost.engines.lightgbm`,
:mod:`plboost.engines.xgboost`). The training helpers take the same tree parameters (``learning_rate``,
``num_leaves``) and translate them to the engine's own names, watch NDCG@k on a validation set for early
stopping, show a progress bar over the boosting rounds, and return a :class:`TrainedModel`. Objectives are either
a plboost :class:`~plboost.objectives.RankingObjective` or the name of one of the engine's built-in ranking
objectives (``BUILTIN_OBJECTIVES``).
"""

from __future__ import annotations

import os

import difflib
import importlib
from pathlib import Path

from .._engine_registry import DEFAULT_ENGINE, ENGINES, Engine, engine_of, engine_of_model_format, get_engine
from ..clicks.estimators import ClickData
from ..data.out_of_core import OutOfCoreData
from ..data.ranking_data import RankingData
from ..errors import InputTypeError
from ..objectives import OBJECTIVES, RankingObjective, get_objective
from ._base import EngineAdapter, SavedModel, TrainedModel, describe_objective, engine_message, engine_refusal
from .settings import DEFAULT_SETTINGS, TrainingSettings

#: the engines' own objectives that plboost can train and compare against, by engine
BUILTIN_OBJECTIVES = {name: engine.builtin_objectives for name, engine in ENGINES.items()}


def adapter(engine: str | Engine) -> EngineAdapter:
    """The module that trains with ``engine``, checked against :class:`EngineAdapter`."""
    engine = get_engine(engine)
    module = importlib.import_module(engine.adapter)
    if not isinstance(module, EngineAdapter):
        missing = [name for name in ("train", "fit_dask", "load_booster") if not callable(getattr(module, name, None))]
        raise TypeError(f"{engine.adapter}, the adapter of engine {engine.name!r}, lacks {', '.join(missing)}")
    return module


def check_capability(engine: str | Engine, capability: str, what: str) -> None:
    """Refuse ``what`` (e.g. "training on Dask") where ``engine`` does not declare ``capability``."""
    engine = get_engine(engine)
    if not getattr(engine, capability):
        able = [e.label for e in ENGINES.values() if getattr(e, capability)]
        raise ValueError(f"{engine.label} cannot do {what} in plboost; {' and '.join(able) or 'no engine'} can")


def load_model(path) -> SavedModel:
    """Load a model saved by :meth:`TrainedModel.save` or by the engines themselves.

    The format is told by the content (LightGBM text, XGBoost JSON or UBJSON, CatBoost .cbm), whatever the file's
    name. The file is checked first (:mod:`plboost.engines._model_files`): a truncated or foreign file raises one
    ValueError naming the file and what is wrong, where the engines would crash or print a stack trace.
    """
    from ._model_files import read_model_file

    path = Path(path)
    kind, data = read_model_file(path)
    engine = engine_of_model_format(kind)
    booster = adapter(engine).load_booster(path, kind, data)
    return SavedModel(engine.name, booster, engine.n_features(booster))


def resolve_objective(name: str, engine: str, params: dict | None = None, *, built=None):
    """A plboost objective instance, or the name of a built-in objective of ``engine``.

    Parameters of a built-in objective are returned for the engine's parameter dict. ``built``: the plboost
    objective ``name`` with ``params``, made already (a run specification's), returned instead of a new one once
    ``engine`` is checked to train it.
    """
    params = dict(params or {})
    builtin = get_engine(engine).builtin_objectives
    if name in OBJECTIVES:
        own = [loss for loss in builtin if loss.lower() == name.lower()]  # yetirank on CatBoost: its YetiRank
        try:
            check_capability(engine, "custom_objectives", f"plboost's objectives ({name})")
        except ValueError as error:
            label = get_engine(engine).label
            raise ValueError(f"{error}; {label}'s own is {own[0]}" if own
                             else f"{error}; {label}'s own: {', '.join(builtin)}") from None
        return (get_objective(name, **params) if built is None else built), {}
    if name in builtin:
        return name, params
    known = (sorted(OBJECTIVES) if get_engine(engine).custom_objectives else []) + list(builtin)
    guess = _objective_meant(name, known)
    hint = f" (did you mean {guess}?)" if guess else ""
    raise ValueError(f"unknown objective {name!r} for {engine}{hint}; choose one of {', '.join(known)}")


#: names other libraries and papers give objectives that are here under another name
_OBJECTIVE_SYNONYMS = {"lambdamart": "lambdarank", "listmle": "plrank", "ndcg": "lambdarank", "xendcg": "rank_xendcg"}


def _objective_meant(name: str, known: list[str]) -> str | None:
    """The objective of ``known`` an unknown ``name`` most likely means: a class name (``PLRank``), another case, a
    synonym (``lambdamart``), or a near spelling."""
    lowered = str(name).strip().lower()
    by_class = {cls.__name__.lower(): registered for registered, cls in OBJECTIVES.items()}
    for table in ({k.lower(): k for k in known}, by_class, _OBJECTIVE_SYNONYMS):
        if lowered in table and table[lowered] in known:
            return table[lowered]
    close = difflib.get_close_matches(lowered, known, n=1, cutoff=0.75)
    return close[0] if close else None


def train(engine: str, objective, train_data, valid_data=None, settings: TrainingSettings | None = None,
          **kwargs) -> TrainedModel:
    """Train with ``engine`` (a name of :data:`ENGINES`) under ``settings`` (:class:`TrainingSettings`, or its
    fields as keywords); see the engine's adapter module for the other arguments. What ``engine`` does not declare
    it can do (a plboost objective, data on disk) is refused, naming the engines that can."""
    if isinstance(objective, RankingObjective):
        check_capability(engine, "custom_objectives", f"plboost's objectives ({objective.name})")
    if isinstance(train_data, ClickData):  # a click log: its documents labelled with the estimates
        train_data = train_data.to_ranking_data()
    for name, data in (("train_data", train_data), ("valid_data", valid_data)):
        if not (isinstance(data, (RankingData, OutOfCoreData, str, os.PathLike))
                or (data is None and name == "valid_data")):
            kinds = "OutOfCoreData, a file's path or a plboost.clicks.ClickData" if name == "train_data" \
                else "OutOfCoreData or a file's path"
            raise InputTypeError(f"train: {name} must be a plboost.RankingData, {kinds}, got "
                                 f"{type(data).__name__}; from arrays X, y and query sizes g: RankingData(X, y, "
                                 "qids=np.arange(len(g)), offsets=np.r_[0, np.cumsum(g)]), or plboost.Ranker().fit(X, "
                                 "y, group=g)")
    if any(isinstance(data, OutOfCoreData) for data in (train_data, valid_data)) or kwargs.get("out_of_core"):
        check_capability(engine, "out_of_core", "training on data read out of core")
    check_estimates_objective(objective, train_data)
    return adapter(engine).train(objective, train_data, valid_data, settings, **kwargs)


def check_estimates_objective(objective, train_data) -> None:
    """Refuse training data of relevance estimates (from a click log) for an objective that takes graded labels."""
    if getattr(train_data, "relevance_estimates", False) and not getattr(objective, "takes_estimates", False):
        name = objective.name if isinstance(objective, RankingObjective) else repr(objective)
        raise ValueError(f"the training labels are relevance estimates (from a click log), which {name} cannot take "
                         "(it needs graded labels); train PLRank3(gain='estimate', normalize=False), whose gradient "
                         "of expected DCG is unbiased for unbiased estimates, or ListNet(target='estimate') or "
                         "LambdaLoss(gain='estimate') for non-negative ones")


__all__ = ["BUILTIN_OBJECTIVES", "DEFAULT_ENGINE", "DEFAULT_SETTINGS", "ENGINES", "Engine", "EngineAdapter",
           "SavedModel", "TrainedModel", "TrainingSettings", "adapter", "check_capability", "check_estimates_objective",
           "describe_objective", "engine_message", "engine_of", "engine_refusal", "get_engine",
           "load_model", "resolve_objective", "train"]
