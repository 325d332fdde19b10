"""What the engines' adapters share: the contract they keep (:class:`EngineAdapter`), the trained model, an
engine's refusal as a ValueError, an objective's name.

The adapters (:mod:`plboost.engines.lightgbm`, :mod:`plboost.engines.xgboost`, :mod:`plboost.engines.dask`)
import this module, not :mod:`plboost.engines`, which finds them through the engine registry
(:attr:`plboost._engine_registry.Engine.adapter`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._engine_registry import get_engine
from ..data.splits import model_input
from ..errors import InputTypeError
from ..objectives import RankingObjective, class_given_message


@runtime_checkable
class EngineAdapter(Protocol):
    """What the module an :class:`~plboost._engine_registry.Engine` names as its ``adapter`` provides.

    A new engine is a record in :mod:`plboost._engine_registry` (its facts and capabilities) and one module with
    these three functions; :func:`plboost.engines.adapter` checks a module against this protocol when it loads it.
    """

    def train(self, objective, train_data, valid_data=None, settings=None, *, progress: bool = False,
              on_round=None, out_of_core: bool | None = None, load_options: dict | None = None,
              **setting_keywords) -> TrainedModel:
        """Train ``objective`` (a plboost objective or a built-in objective's name) on ``train_data`` (early
        stopping on ``valid_data``) under ``settings`` (:class:`~plboost.engines.TrainingSettings`)."""

    def fit_dask(self, client, objective, train, valid, settings) -> tuple:
        """Train on the Dask cluster of ``client`` under ``settings`` (a :class:`~plboost.engines.TrainingSettings`;
        only where the engine declares ``dask``): ``(booster, parameters, validation history, best iteration)``."""

    def load_booster(self, path, kind: str, data: bytes):
        """The engine's booster from a model file's bytes ``data``, of format ``kind`` (one of the engine's
        ``model_formats``)."""


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

    @property
    def feature_names(self) -> tuple[str, ...] | None:
        """The table columns the model was trained on, in order; None where its features are numbered."""
        return get_engine(self.engine).feature_names(self.booster)

    def predict(self, X) -> np.ndarray:
        """Raw scores of the first :attr:`trees_used` rounds for the rows of ``X``: an array (its columns by
        position), or a pandas DataFrame or :class:`~plboost.data.RankingData` from a table, whose columns are
        found by name where the model has :attr:`feature_names` (:func:`plboost.data.splits.model_input`)."""
        return get_engine(self.engine).predict(self.booster, model_input(X, self.feature_names), self.trees_used)

    def save(self, path) -> None:
        """Save in the engine's own format (LightGBM text; XGBoost JSON or UBJSON by the extension).

        Only the first :attr:`trees_used` rounds are kept. The file is an ordinary model of the engine:
        loading it and predicting needs no plboost.
        """
        get_engine(self.engine).save(self.booster, path, self.trees_used)


@dataclass
class SavedModel:
    """A model file loaded back with its engine alone (no plboost needed to predict)."""

    engine: str
    booster: Any
    n_features: int

    @property
    def feature_names(self) -> tuple[str, ...] | None:
        """The table columns the model was trained on, in order; None where its features are numbered."""
        return get_engine(self.engine).feature_names(self.booster)

    def predict(self, X) -> np.ndarray:
        """Raw scores for the rows of ``X``, as :meth:`TrainedModel.predict` takes it."""
        return get_engine(self.engine).predict(self.booster, model_input(X, self.feature_names))


def engine_message(error: BaseException) -> str:
    """The first line of an engine's error message, without its time stamp, source position and stack trace."""
    text = str(error).strip()
    first = text.splitlines()[0].strip() if text else type(error).__name__
    first = re.sub(r"^\[\d\d:\d\d:\d\d\] ", "", first)
    first = re.sub(r"^\S+\.(?:cc|cpp|cu|h|hpp):\d+: ", "", first)
    return re.sub(r" at \S+\.(?:cc|cpp|cu|h|hpp), line \d+ ?\.?$", "", first)


def engine_refusal(engine: str, error: BaseException, params: dict, given: dict | None = None,
                   names: dict | None = None) -> ValueError:
    """A ValueError for an engine's error at training time, naming the parameter it is about when possible.

    The parameter is the first of ``given`` (the user's engine parameters, as spelled), then of ``params`` (all of
    them), whose name, or whose canonical name in ``names`` (the engine's alias table), the engine's message holds,
    else one of ``given`` whose text value it holds (LightGBM says "Unknown token x" for ``learning_rate="x"``).
    """
    message = engine_message(error)
    given, names = given or {}, names or {}

    def mentioned(key) -> bool:
        return any(re.search(rf"\b{re.escape(str(name))}\b", message) for name in {key, names.get(key, key)})

    named = [key for key in [*given, *params] if mentioned(key)]
    if not named:
        named = [key for key, value in given.items()
                 if isinstance(value, str) and value and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", message)]
    if named:
        key = named[0]
        value = given[key] if key in given else params[key]
        base = names.get(key, key)
        alias = f" ({engine}'s {base})" if base != key else ""
        return ValueError(f"{engine} refuses the parameter {key}={value!r}{alias}: {message}")
    return ValueError(f"{engine} refuses to train: {message}")


def describe_objective(objective) -> tuple[str, dict]:
    """Name and parameters of an objective given as an instance or a built-in name."""
    if isinstance(objective, RankingObjective):
        return objective.name, objective.get_params()
    message = class_given_message(objective)
    if message:
        raise InputTypeError(message)
    return str(objective), {}
