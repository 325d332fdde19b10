"""Training helpers for the two engines: one call trains a ranker with a plboost or built-in objective.

Both helpers take the same tree parameters (``learning_rate``, ``num_leaves``) and translate them to the
engine's own names, watch NDCG@k on a validation set for early stopping, show a progress bar over the
boosting rounds, and return a :class:`TrainedModel`. Objectives are either a plboost
:class:`~plboost.objectives.RankingObjective` or the name of one of the engine's built-in ranking
objectives (``BUILTIN_OBJECTIVES``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..objectives import OBJECTIVES, RankingObjective, get_objective

#: the engines' own objectives that plboost can train and compare against, by engine
BUILTIN_OBJECTIVES = {
    "lightgbm": ("lambdarank", "rank_xendcg", "regression"),
    "xgboost": ("rank:ndcg", "rank:pairwise"),
}
ENGINES = tuple(BUILTIN_OBJECTIVES)


@dataclass
class TrainedModel:
    """A trained booster and how it was trained."""

    engine: str
    booster: Any
    objective: str
    objective_params: dict
    engine_params: dict
    train_seconds: float
    rounds: int
    #: number of rounds (1-based) with the best validation score, when early stopping was on
    best_iteration: int | None
    valid_history: list[float] = field(default_factory=list)
    #: seconds of training spent rewriting leaves (``leaf_values="exact"``), else None
    leaf_refit_seconds: float | None = None

    @property
    def trees_used(self) -> int:
        """Boosting rounds in the model used for prediction: the best one under early stopping."""
        return self.best_iteration if self.best_iteration else self.rounds

    def predict(self, X) -> np.ndarray:
        """Raw scores of the first :attr:`trees_used` rounds."""
        if self.engine == "lightgbm":
            return self.booster.predict(X, num_iteration=self.trees_used, raw_score=True)
        import xgboost as xgb

        matrix = X if isinstance(X, xgb.DMatrix) else xgb.DMatrix(X)
        return self.booster.predict(matrix, output_margin=True, iteration_range=(0, self.trees_used))

    def save(self, path) -> None:
        """Save in the engine's own format (LightGBM text; XGBoost JSON or UBJSON by the extension).

        Only the first :attr:`trees_used` rounds are kept. The file is an ordinary model of the engine:
        loading it and predicting needs no plboost.
        """
        if self.engine == "lightgbm":
            self.booster.save_model(str(path), num_iteration=self.trees_used)
        else:
            self.booster[: self.trees_used].save_model(str(path))


@dataclass
class SavedModel:
    """A model file loaded back with its engine alone (no plboost needed to predict)."""

    engine: str
    booster: Any
    n_features: int

    def predict(self, X) -> np.ndarray:
        """Raw scores."""
        if self.engine == "lightgbm":
            return self.booster.predict(X, raw_score=True)
        import xgboost as xgb

        return self.booster.predict(xgb.DMatrix(X), output_margin=True)


def load_model(path) -> SavedModel:
    """Load a model saved by :meth:`TrainedModel.save` or by the engines themselves.

    The format is told by the content (LightGBM text, XGBoost JSON or UBJSON), whatever the file's name. The
    file is checked first (:mod:`plboost.engines._model_files`): a truncated or foreign file raises one
    ValueError naming the file and what is wrong, where the engines would crash or print a stack trace.
    """
    from ._model_files import check_lightgbm_text, check_ubjson, diagnose_xgboost_json, read_model_file

    path = Path(path)
    kind, data = read_model_file(path)
    if kind == "lightgbm":
        check_lightgbm_text(path, data)
        import lightgbm as lgb

        try:
            booster = lgb.Booster(model_file=str(path))
        except lgb.basic.LightGBMError as error:
            raise ValueError(f"{path}: LightGBM cannot load it: {engine_message(error)}") from None
        return SavedModel("lightgbm", booster, booster.num_feature())
    if kind == "ubj":
        if "learner" not in check_ubjson(path, data):
            raise ValueError(f"{path} is not an XGBoost model: no 'learner' key")
        problem = None
    else:
        if data[:1].isspace():
            data = data.lstrip()  # XGBoost tells JSON from UBJSON by the first two bytes
        # XGBoost's JSON reader checks its bounds: parse here only to say why it refuses (saves ~50% of the load)
        problem = diagnose_xgboost_json(path, data) if b'"learner"' not in data else None
    if problem:
        raise ValueError(problem)
    import xgboost as xgb

    booster = xgb.Booster()
    try:
        booster.load_model(data)  # from the bytes: the file name's extension does not matter
    except (xgb.core.XGBoostError, UnicodeDecodeError) as error:  # the latter: XGBoost's message is not UTF-8
        problem = diagnose_xgboost_json(path, data) if kind == "json" else None
        raise ValueError(problem or f"{path}: XGBoost cannot load it: {engine_message(error)}") from None
    return SavedModel("xgboost", booster, booster.num_features())


def engine_message(error: BaseException) -> str:
    """The first line of an engine's error message, without its time stamp, source position and stack trace."""
    text = str(error).strip()
    first = text.splitlines()[0].strip() if text else type(error).__name__
    first = re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", first)
    first = re.sub(r"^\S+\.(?:cc|cpp|cu|h|hpp):\d+: ", "", first)
    return re.sub(r" at \S+\.(?:cc|cpp|cu|h|hpp), line \d+ ?\.?$", "", first)


def engine_refusal(engine: str, error: BaseException, params: dict, given: dict | None = None) -> ValueError:
    """A ValueError for an engine's error at training time, naming the parameter it is about when possible.

    The parameter is the first of ``given`` (the user's engine parameters), then of ``params`` (all of
    them), whose name the engine's message holds, else one of ``given`` whose text value it holds (LightGBM
    says "Unknown token x" for ``learning_rate="x"``).
    """
    message = engine_message(error)
    given = given or {}
    named = [key for key in [*given, *params] if re.search(rf"\b{re.escape(str(key))}\b", message)]
    if not named:
        named = [key for key, value in given.items()
                 if isinstance(value, str) and value and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", message)]
    if named:
        key = named[0]
        value = given[key] if key in given else params[key]
        return ValueError(f"{engine} refuses the parameter {key}={value!r}: {message}")
    return ValueError(f"{engine} refuses to train: {message}")


def resolve_objective(name: str, engine: str, params: dict | None = None):
    """A plboost objective instance, or the name of a built-in objective of ``engine``.

    Parameters of a built-in objective are returned for the engine's parameter dict.
    """
    params = dict(params or {})
    check_engine(engine)
    if name in OBJECTIVES:
        return get_objective(name, **params), {}
    if name in BUILTIN_OBJECTIVES[engine]:
        return name, params
    known = sorted(OBJECTIVES) + list(BUILTIN_OBJECTIVES[engine])
    raise ValueError(f"unknown objective {name!r} for {engine}; choose one of {', '.join(known)}")


def check_engine(engine: str) -> None:
    """Refuse an engine name that is not one of :data:`ENGINES`."""
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")


def train(engine: str, objective, train_data, valid_data=None, **kwargs) -> TrainedModel:
    """Train with ``engine`` ("lightgbm" or "xgboost"); see the engine modules for the arguments."""
    check_engine(engine)
    if engine == "lightgbm":
        from .lightgbm import train_lightgbm as trainer
    else:
        from .xgboost import train_xgboost as trainer
    return trainer(objective, train_data, valid_data, **kwargs)


def describe_objective(objective) -> tuple[str, dict]:
    """Name and parameters of an objective given as an instance or a built-in name."""
    if isinstance(objective, RankingObjective):
        return objective.name, objective.get_params()
    return str(objective), {}


__all__ = ["BUILTIN_OBJECTIVES", "ENGINES", "SavedModel", "TrainedModel", "check_engine", "describe_objective",
           "engine_message", "engine_refusal", "load_model", "resolve_objective", "train"]
