"""What one training run is, apart from the objective and the data: one frozen object, each default written once.

The engines' entry points (:func:`plboost.engines.train`, ``train_lightgbm``, ``train_xgboost``,
:func:`plboost.engines.dask.train_dask`), the experiment layer's :class:`~plboost.experiment.RunSpec`, the
command line and the scikit-learn :class:`~plboost.sklearn.Ranker` take their defaults from
:data:`DEFAULT_SETTINGS`. The entry points take a :class:`TrainingSettings` (``settings=``) or, as before, its
fields as keywords (``rounds=200``), which replace the settings' values.

>>> TrainingSettings(rounds=200).learning_rate
0.1
>>> training_settings(None, {"num_leaves": 63}).num_leaves
63
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from collections.abc import Mapping

from .._engine_registry import LEAF_VALUES
from ..errors import InputTypeError


def _positive_int(name: str, value) -> int:
    if isinstance(value, (bool, str)) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class TrainingSettings:
    """The tree and training parameters of one run, in LightGBM's terms (the XGBoost adapter translates them).

    Parameters
    ----------
    rounds : int, default 100
        Boosting rounds (at most: early stopping may stop sooner).
    learning_rate : float, default 0.1
        Shrinkage of every tree.
    num_leaves : int, default 31
        Leaves per tree (XGBoost: ``max_leaves`` with loss-guided growth).
    early_stopping : int or None, default None
        Stop when validation NDCG@eval_at has not improved for this many rounds (needs validation data).
    eval_at : int, default 10
        The cut-off of the validation NDCG that early stopping and the history watch.
    seed : int, default 0
        The engine's seed.
    leaf_values : {"diagonal", "exact"}, default "diagonal"
        The engine's leaf values from summed hessians, or PLRank's exact Newton step (LightGBM only).
    engine_params : mapping, default empty
        Further parameters of the engine, under its own names; they override the ones above.
    """

    rounds: int = 100
    learning_rate: float = 0.1
    num_leaves: int = 31
    early_stopping: int | None = None
    eval_at: int = 10
    seed: int = 0
    leaf_values: str = "diagonal"
    engine_params: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):
        set_field = object.__setattr__  # frozen: the checked values replace the given ones once, here
        for name in ("rounds", "num_leaves", "eval_at"):
            set_field(self, name, _positive_int(name, getattr(self, name)))
        if self.early_stopping is not None:
            set_field(self, "early_stopping", _positive_int("early_stopping", self.early_stopping))
        rate = self.learning_rate
        if isinstance(rate, (bool, str)) or not isinstance(rate, numbers.Real) or not (math.isfinite(rate)
                                                                                         and rate > 0):
            raise ValueError(f"learning_rate must be a finite positive number, got {rate!r}")
        set_field(self, "learning_rate", float(rate))
        if isinstance(self.seed, bool) or not isinstance(self.seed, numbers.Integral):
            raise ValueError(f"seed must be an integer, got {self.seed!r}")
        set_field(self, "seed", int(self.seed))
        if self.leaf_values not in LEAF_VALUES:
            raise ValueError(f"leaf_values must be 'diagonal' or 'exact', got {self.leaf_values!r}")
        if not isinstance(self.engine_params, Mapping):
            raise ValueError(f"engine_params must be a dict of the engine's parameters, got {self.engine_params!r}")
        set_field(self, "engine_params", MappingProxyType(dict(self.engine_params)))

    def replace(self, **changes) -> TrainingSettings:
        """A copy with ``changes`` (checked as the constructor checks them)."""
        return replace(self, **changes)


#: the defaults of every entry point that trains
DEFAULT_SETTINGS = TrainingSettings()
#: the names of :class:`TrainingSettings`' fields, which the entry points also take as keywords
SETTING_NAMES = tuple(f.name for f in fields(TrainingSettings))


def training_settings(settings: TrainingSettings | None, keywords: dict) -> TrainingSettings:
    """``settings`` (default :data:`DEFAULT_SETTINGS`) with ``keywords`` (fields given by name) replaced; an unknown
    keyword raises TypeError naming it, as a function does."""
    unknown = sorted(set(keywords) - set(SETTING_NAMES))
    if unknown:
        raise InputTypeError(f"unexpected keyword argument {unknown[0]!r}; the training settings are "
                        f"{', '.join(SETTING_NAMES)}")
    base = DEFAULT_SETTINGS if settings is None else settings
    if not isinstance(base, TrainingSettings):
        raise InputTypeError(f"settings must be a TrainingSettings, got {type(base).__name__}")
    given = {name: value for name, value in keywords.items() if name != "engine_params" or value is not None}
    return base.replace(**given) if given else base
