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

from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from collections.abc import Mapping

from .._constraints import POSITIVE_C_INT, Integer, Options, Real, check_params
from .._engine_registry import DEFAULT_NUM_LEAVES, LEAF_VALUES
from ..errors import InputTypeError

#: what each field of :class:`TrainingSettings` may be (``engine_params``: any mapping)
SETTINGS_CONSTRAINTS = {"rounds": Integer(low=1), "learning_rate": Real(low=0, low_open=True),
                        "num_leaves": POSITIVE_C_INT, "early_stopping": (Integer(low=1), None),
                        "eval_at": POSITIVE_C_INT, "seed": Integer(), "leaf_values": Options(*LEAF_VALUES)}


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
    num_leaves: int = DEFAULT_NUM_LEAVES
    early_stopping: int | None = None
    eval_at: int = 10
    seed: int = 0
    leaf_values: str = "diagonal"
    engine_params: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self):
        set_field = object.__setattr__  # frozen: the checked values replace the given ones once, here
        given = {name: getattr(self, name) for name in SETTINGS_CONSTRAINTS}
        for name, value in check_params(SETTINGS_CONSTRAINTS, given).items():
            set_field(self, name, value)
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
