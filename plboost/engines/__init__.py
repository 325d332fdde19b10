"""Training helpers for the two engines: one call trains a ranker with a plboost or built-in objective.

Both helpers take the same tree parameters (``learning_rate``, ``num_leaves``) and translate them to the
engine's own names, watch NDCG@k on a validation set for early stopping, show a progress bar over the
boosting rounds, and return a :class:`TrainedModel`. Objectives are either a plboost
:class:`~plboost.objectives.RankingObjective` or the name of one of the engine's built-in ranking
objectives (``BUILTIN_OBJECTIVES``).
"""

from __future__ import annotations

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
    """Load a model saved by :meth:`TrainedModel.save` (XGBoost when the name ends .json or .ubj)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {path} does not exist")
    if path.suffix in (".json", ".ubj"):
        import xgboost as xgb

        booster = xgb.Booster(model_file=str(path))
        return SavedModel("xgboost", booster, booster.num_features())
    import lightgbm as lgb

    try:
        booster = lgb.Booster(model_file=str(path))
    except lgb.basic.LightGBMError as error:
        raise ValueError(f"{path} is not a LightGBM model file (XGBoost models need a .json or .ubj name): "
                         f"{error}") from None
    return SavedModel("lightgbm", booster, booster.num_feature())


def resolve_objective(name: str, engine: str, params: dict | None = None):
    """A plboost objective instance, or the name of a built-in objective of ``engine``.

    Parameters of a built-in objective are returned for the engine's parameter dict.
    """
    params = dict(params or {})
    if engine not in BUILTIN_OBJECTIVES:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if name in OBJECTIVES:
        return get_objective(name, **params), {}
    if name in BUILTIN_OBJECTIVES[engine]:
        return name, params
    known = sorted(OBJECTIVES) + list(BUILTIN_OBJECTIVES[engine])
    raise ValueError(f"unknown objective {name!r} for {engine}; choose one of {', '.join(known)}")


def train(engine: str, objective, train_data, valid_data=None, **kwargs) -> TrainedModel:
    """Train with ``engine`` ("lightgbm" or "xgboost"); see the engine modules for the arguments."""
    if engine == "lightgbm":
        from .lightgbm import train_lightgbm as trainer
    elif engine == "xgboost":
        from .xgboost import train_xgboost as trainer
    else:
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    return trainer(objective, train_data, valid_data, **kwargs)


def describe_objective(objective) -> tuple[str, dict]:
    """Name and parameters of an objective given as an instance or a built-in name."""
    if isinstance(objective, RankingObjective):
        return objective.name, objective._params()
    return str(objective), {}


__all__ = ["BUILTIN_OBJECTIVES", "ENGINES", "SavedModel", "TrainedModel", "describe_objective", "load_model",
           "resolve_objective", "train"]
