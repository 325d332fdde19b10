"""Training a CatBoost ranker with one of CatBoost's own ranking losses: CatBoost as a comparator engine.

CatBoost trains no plboost objective (its :class:`~plboost._engine_registry.CatBoost` record declares
``custom_objectives=False``); it is here so that ``plboost compare`` can set YetiRank, LambdaMart and its other
ranking losses, with its own trees, beside LightGBM's and XGBoost's under the same data, metrics, records and
tuning budget. CatBoost is an optional dependency (``pip install 'plboost[catboost]'``): this module imports it
when it is first used, and a missing library is one line saying how to install it.

plboost's settings map to CatBoost's parameters as follows: ``rounds`` -> ``iterations``, ``learning_rate``,
``seed`` -> ``random_seed``, ``early_stopping`` -> ``early_stopping_rounds`` with ``use_best_model``, and the
validation metric is plboost's NDCG@eval_at (``NDCG:top=<eval_at>;type=Exp``: CatBoost's NDCG has linear gains
unless told). Trees keep CatBoost's own shape (``grow_policy``: SymmetricTree of depth 6 by default; ``depth`` as
an engine parameter); ``num_leaves`` is CatBoost's ``max_leaves`` of ``grow_policy=Lossguide`` trees, and any
other value than the default is refused for the other policies, whose trees it would not shape. CatBoost writes
no ``catboost_info`` directory (``allow_writing_files=False``): plboost writes only the files it is asked to.
"""

from __future__ import annotations

import time

import numpy as np

from .._engine_registry import CATBOOST as ENGINE
from ..data.splits import training_data
from ._base import TrainedModel, describe_objective, engine_message, engine_refusal
from ._progress import RoundProgress
from .parameters import check_engine_params, check_leaf_values
from .settings import TrainingSettings, training_settings


class _Watch:
    """CatBoost's ``after_iteration`` callback: the validation history, the progress bar and ``on_round``. An
    exception ``on_round`` raises (e.g. ``optuna.TrialPruned``) stops training and is kept to be raised again
    after ``fit`` (CatBoost would wrap it in its own error, traceback and all)."""

    def __init__(self, bar: RoundProgress, metric_name: str, on_round=None):
        self.bar, self.metric_name, self.on_round = bar, metric_name, on_round
        self.history: list[float] = []
        self.rounds = 0
        self.raised: BaseException | None = None

    def after_iteration(self, info) -> bool:
        self.rounds = int(info.iteration)
        scores = info.metrics.get("validation", {}).get(self.metric_name)
        score = float(scores[-1]) if scores else None
        if score is not None:
            self.history.append(score)
        self.bar.update(self.metric_name, score)
        if self.on_round is not None and score is not None:
            try:
                self.on_round(self.rounds, score)
            except Exception as error:  # noqa: BLE001 - kept and raised again after fit
                self.raised = error
                return False
        return True


def booster_params(objective: str, settings: TrainingSettings, *, validation: bool) -> dict:
    """CatBoost's parameters for ``settings``: the loss ``objective`` with its parameters from the engine
    parameters (``YetiRank:mode=NDCG``), the other engine parameters as given, plboost's NDCG@eval_at watched
    (with ``validation``) and no files written."""
    engine_params = dict(settings.engine_params)
    loss = {name: engine_params.pop(name) for name in ENGINE.LOSS_PARAMETERS if name in engine_params}
    loss_function = objective + (":" + ";".join(f"{name}={_text(value)}" for name, value in loss.items())
                                 if loss else "")
    params = {"loss_function": loss_function, "iterations": settings.rounds, "learning_rate": settings.learning_rate,
              "random_seed": settings.seed, "thread_count": -1, "allow_writing_files": False, "verbose": False,
              **engine_params}
    ENGINE.check_tree_settings(settings.num_leaves, params)
    if str(params.get("grow_policy", "SymmetricTree")) == "Lossguide":
        params.setdefault("max_leaves", settings.num_leaves)  # engine parameters override plboost's, as elsewhere
    if validation:
        params["eval_metric"] = ENGINE.ndcg_metric(settings.eval_at)
    return params


def _text(value) -> str:
    """A loss parameter's value as CatBoost reads it (``true``/``false`` for booleans)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _pool(library, data):
    """A ``catboost.Pool`` of :class:`~plboost.data.RankingData`: its rows, labels and contiguous queries."""
    group_id = np.repeat(np.arange(len(data.offsets) - 1), np.diff(data.offsets))
    names = getattr(data, "feature_names", None)  # a table's columns, which the model keeps
    return library.Pool(data.X, label=data.labels, group_id=group_id,
                        feature_names=None if names is None else list(names))


def train_catboost(objective, train_data, valid_data=None, settings: TrainingSettings | None = None, *,
                   progress: bool = False, on_round=None, out_of_core: bool | None = None,
                   load_options: dict | None = None, **setting_keywords) -> TrainedModel:
    """Train ``catboost.CatBoost`` with its ranking loss ``objective`` (a name of
    :attr:`~plboost._engine_registry.CatBoost.builtin_objectives`) on :class:`~plboost.data.RankingData` and
    return a :class:`TrainedModel`. The arguments are those of :func:`plboost.engines.lightgbm.train_lightgbm`
    (data in memory only); the recorded parameters are CatBoost's whole resolved set (``get_all_params``), which
    shows the leaf method and L2 regularisation each loss takes by default. CatBoost's refusal of a parameter
    raises ValueError naming it."""
    library = ENGINE.library()
    s = training_settings(settings, setting_keywords)
    check_leaf_values(s.leaf_values, ENGINE.name, objective)
    name, objective_params = describe_objective(objective)
    if name not in ENGINE.builtin_objectives:
        raise ValueError(f"unknown objective {name!r} for catboost; choose one of "
                         f"{', '.join(ENGINE.builtin_objectives)}")
    train_data, valid_data = training_data(train_data, valid_data, out_of_core=out_of_core, **(load_options or {}))
    check_engine_params(ENGINE.name, dict(s.engine_params), objective=name, eval_at=s.eval_at)
    if s.early_stopping and valid_data is None:
        raise ValueError("early_stopping needs validation data")
    params = booster_params(name, s, validation=valid_data is not None)
    booster = library.CatBoost(params)
    watch = _Watch(RoundProgress(s.rounds, f"CatBoost {name}", progress), params.get("eval_metric"), on_round)
    start = time.perf_counter()
    try:
        booster.fit(_pool(library, train_data), eval_set=_pool(library, valid_data) if valid_data else None,
                    early_stopping_rounds=s.early_stopping or None, use_best_model=bool(s.early_stopping),
                    callbacks=[watch])
    except library.CatBoostError as error:
        raise engine_refusal(ENGINE.label, error, params, dict(s.engine_params)) from error
    finally:
        watch.bar.close()
    if watch.raised is not None:
        raise watch.raised
    seconds = time.perf_counter() - start
    best = booster.get_best_iteration() + 1 if s.early_stopping else None
    return TrainedModel(ENGINE.name, booster, name, objective_params, booster.get_all_params(), seconds,
                        rounds=watch.rounds or booster.tree_count_, best_iteration=best, valid_history=watch.history)


train = train_catboost


def load_booster(path, kind: str, data: bytes):
    """A CatBoost model from a ``.cbm`` file :func:`plboost.engines._model_files.read_model_file` read (CatBoost
    checks the file's structure itself, and refuses a truncated one)."""
    library = ENGINE.library()
    booster = library.CatBoost()
    try:
        booster.load_model(blob=bytes(data))
    except library.CatBoostError as error:
        raise ValueError(f"{path}: CatBoost cannot load it: {engine_message(error)}") from None
    return booster


def fit_dask(client, objective, train, valid, settings):
    """CatBoost does not train on Dask in plboost (:func:`plboost.engines.dask.train_dask` refuses it first)."""
    raise ValueError("CatBoost cannot do training on Dask in plboost")
