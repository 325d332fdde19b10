"""Training an XGBoost ranker with a plboost or built-in objective."""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np
import xgboost as xgb

from .._engine_registry import XGBOOST as ENGINE
from ..data.out_of_core import OutOfCoreData
from ..data.splits import training_data
from ..objectives import RankingObjective
from ._base import TrainedModel, describe_objective, engine_message, engine_refusal
from ._progress import RoundProgress
from .parameters import check_engine_params, check_leaf_values
from .settings import DEFAULT_SETTINGS, TrainingSettings, training_settings


class _Watch(xgb.callback.TrainingCallback):
    def __init__(self, bar: RoundProgress, metric_name: str, history: list, on_round=None):
        super().__init__()
        self.bar, self.metric_name, self.history, self.on_round = bar, metric_name, history, on_round

    def after_iteration(self, model, epoch, evals_log) -> bool:
        scores = evals_log.get("valid", {}).get(self.metric_name)
        score = float(scores[-1]) if scores else None
        if score is not None:
            self.history.append(score)
        self.bar.update(self.metric_name, score)
        if self.on_round is not None and score is not None:
            self.on_round(epoch + 1, score)
        return False


def booster_params(objective, *, num_leaves: int = DEFAULT_SETTINGS.num_leaves,
                   learning_rate: float = DEFAULT_SETTINGS.learning_rate, seed: int = DEFAULT_SETTINGS.seed,
                   eval_at: int = DEFAULT_SETTINGS.eval_at,
                   engine_params: dict | None = None) -> dict:
    """XGBoost's parameters for plboost's tree parameters, on one machine and on Dask alike: leaf-wise growth
    (``grow_policy="lossguide"``) of at most ``num_leaves`` leaves and no depth limit, ``tree_method="hist"``,
    validation ``ndcg@eval_at``; ``engine_params`` override these, and a built-in ``objective`` (a name) is set
    last, so that the objective trained is the one named."""
    params = {"tree_method": "hist", "grow_policy": "lossguide", "max_leaves": num_leaves, "max_depth": 0,
              "learning_rate": learning_rate, "seed": seed, "eval_metric": f"ndcg@{eval_at}", **(engine_params or {})}
    if isinstance(objective, str):
        params["objective"] = objective
    return params


def _matrix(data, params: dict, ref=None, *, external_memory: bool = True):
    """XGBoost's matrix of ``data``: a ``DMatrix`` in memory, an ``ExtMemQuantileDMatrix`` (or, without
    ``external_memory``, a ``QuantileDMatrix``) out of core, with the booster's ``max_bin`` and the training
    matrix ``ref`` for validation data."""
    if not isinstance(data, OutOfCoreData):
        return data.to_xgboost()
    max_bin = params.get("max_bin")
    return data.to_xgboost(ref=ref, max_bin=None if max_bin is None else int(max_bin), external_memory=external_memory)


def train_xgboost(objective, train_data, valid_data=None, settings: TrainingSettings | None = None, *,
                  progress: bool = False, on_round=None, out_of_core: bool | None = None,
                  load_options: dict | None = None, external_memory: bool = True,
                  **setting_keywords) -> TrainedModel:
    """Train ``xgb.train`` on :class:`~plboost.data.RankingData` and return a :class:`TrainedModel`.

    A plboost objective goes in through ``obj=`` (XGBoost's rankers refuse callables). The tree
    parameters mean what they mean in LightGBM (:func:`booster_params`); ``engine_params`` override them.
    The other arguments are those of :func:`plboost.engines.lightgbm.train_lightgbm`.

    :class:`~plboost.data.OutOfCoreData` (features on disk, or a path read out of core: ``out_of_core``)
    trains from an ``xgboost.ExtMemQuantileDMatrix`` fed batch by batch of whole queries
    (:meth:`~plboost.data.OutOfCoreData.to_xgboost`, ``max_bin`` from the parameters); XGBoost keeps its
    quantised pages on disk, and out-of-core validation data take the training matrix's quantiles (they
    need out-of-core training data). In-memory validation data are an ordinary ``DMatrix`` either way. With
    ``external_memory=False`` the quantised matrix (one byte per feature and row) is kept in memory instead
    (``QuantileDMatrix`` from the same batches): faster iterations, more memory (``docs/out_of_core.md``).

    XGBoost's refusal of a parameter (``max_bin=-5``, ``tree_method="bogus"``) raises ValueError naming it,
    without XGBoost's stack trace.
    """
    s = training_settings(settings, setting_keywords)
    rounds, learning_rate, num_leaves, early_stopping = s.rounds, s.learning_rate, s.num_leaves, s.early_stopping
    eval_at, seed, leaf_values, engine_params = s.eval_at, s.seed, s.leaf_values, dict(s.engine_params)
    check_leaf_values(leaf_values, ENGINE.name, objective)
    train_data, valid_data = training_data(train_data, valid_data, out_of_core=out_of_core, **(load_options or {}))
    if isinstance(valid_data, OutOfCoreData) and not isinstance(train_data, OutOfCoreData):
        raise ValueError("out-of-core validation data take the quantiles of an out-of-core training matrix; read the "
                         "training data out of core too, or the validation data into memory")
    name, objective_params = describe_objective(objective)
    check_engine_params(ENGINE.name, engine_params, objective=name, eval_at=eval_at)
    metric_name = f"ndcg@{eval_at}"
    params = booster_params(objective, num_leaves=num_leaves, learning_rate=learning_rate, seed=seed,
                            eval_at=eval_at, engine_params=engine_params)
    if early_stopping and valid_data is None:
        raise ValueError("early_stopping needs validation data")
    dtrain = _matrix(train_data, params, external_memory=external_memory)
    evals = ([(_matrix(valid_data, params, ref=dtrain, external_memory=external_memory), "valid")]
             if valid_data is not None else [])
    history: list[float] = []
    bar = RoundProgress(rounds, f"XGBoost {name}", progress)
    if isinstance(objective, RankingObjective):
        objective.warm_up()  # compilation is not training time
    start = time.perf_counter()
    try:
        booster = xgb.train(params, dtrain, num_boost_round=rounds, evals=evals,
                            obj=None if isinstance(objective, str) else objective,
                            early_stopping_rounds=early_stopping or None, maximize=True if early_stopping else None,
                            verbose_eval=False, callbacks=[_Watch(bar, metric_name, history, on_round)])
    except xgb.core.XGBoostError as error:  # a ValueError whose text ends in a C++ stack trace
        raise engine_refusal(ENGINE.label, error, params, engine_params) from error
    finally:
        bar.close()
        del dtrain, evals  # an external-memory matrix's pages on disk are removed with it
    seconds = time.perf_counter() - start
    if isinstance(objective, RankingObjective):
        warn_if_no_split(booster, name, params, objective, train_data)
    best = booster.best_iteration + 1 if early_stopping else None
    return TrainedModel(ENGINE.name, booster, name, objective_params, params, seconds,
                        rounds=booster.num_boosted_rounds(), best_iteration=best, valid_history=history)


train = train_xgboost

#: XGBoost's default ``min_child_weight``
DEFAULT_MIN_CHILD_WEIGHT = 1.0


def warn_if_no_split(booster, name: str, params: dict, objective=None, train_data=None) -> None:
    """Warn in one line where a plboost objective's booster holds only trees of one leaf because of
    ``min_child_weight``, which XGBoost measures in hessians (default 1): the hessians of listwise objectives sum
    to about 1 per query (ListNet's softmax, PL-Rank-3's, PA-ListMLE's), so that data of one long query or a few
    queries leave no split with that much in both children, and XGBoost trains a constant model without a word.
    With ``objective`` and in-memory ``train_data``, the message gives the hessians' sum at the first round's
    scores (all equal)."""
    weight = float(params.get("min_child_weight", DEFAULT_MIN_CHILD_WEIGHT))
    if weight <= 0 or not booster.num_boosted_rounds() or "[" in booster[0:1].get_dump()[0]:
        return  # a split is written "0:[f1<0.5] ..."; the first tree's dump alone is a tenth of all 500's
    trees = booster.get_dump()
    if any("[" in tree for tree in trees):
        return
    total = ""
    if objective is not None and train_data is not None and not isinstance(train_data, OutOfCoreData):
        _, hess = objective.gradients(np.zeros(train_data.n_docs), train_data.labels, train_data.offsets)
        total = f" ({name}'s hessians sum to {float(np.sum(hess, dtype=np.float64)):.3g} over the training data)"
    warnings.warn(f"XGBoost grew no split in {len(trees)} trees with {name}: min_child_weight={weight:g} is the "
                  f"hessian sum each child needs{total}; lower it, e.g. engine_params={{'min_child_weight': 1e-3}} "
                  "(--engine-param min_child_weight=1e-3; LightGBM's min_sum_hessian_in_leaf)", UserWarning,
                  stacklevel=_first_caller_outside_plboost())


def _first_caller_outside_plboost() -> int:
    """The ``stacklevel`` of the first caller of the function calling this one that is not plboost's code."""
    package = str(Path(__file__).resolve().parents[1])
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def load_booster(path, kind: str, data: bytearray):
    """An XGBoost booster from a model file :func:`plboost.engines._model_files.read_model_file` read (JSON or
    UBJSON, told by the content whatever the file's name)."""
    from ._model_files import check_ubjson, check_xgboost_trees, decode_ubjson, parse_xgboost_json

    if kind == "ubj":
        if "learner" not in check_ubjson(path, data):
            raise ValueError(f"{path} is not an XGBoost model: no 'learner' key")
        model = decode_ubjson(data)
        if not isinstance(model.get("learner"), dict) or "gradient_booster" not in model["learner"]:
            raise ValueError(f"{path} is not a complete XGBoost model: its 'learner' has no 'gradient_booster'")
    else:
        if data[:1].isspace():
            data = data.lstrip()  # XGBoost tells JSON from UBJSON by the first two bytes
        model = parse_xgboost_json(path, data)
    check_xgboost_trees(path, model)  # before XGBoost reads them: it does not check them, and crashed on some
    booster = xgb.Booster()
    try:
        booster.load_model(data)  # from the bytes: the file name's extension does not matter
    except (xgb.core.XGBoostError, UnicodeDecodeError) as error:  # the latter: XGBoost's message is not UTF-8
        raise ValueError(f"{path}: XGBoost cannot load it: {engine_message(error)}") from None
    return booster


def fit_dask(client, objective, train, valid, settings: TrainingSettings):
    """Train through ``xgboost.dask.train`` with ``obj=`` and the rows' ``qid`` on ``client``'s cluster
    (:func:`plboost.engines.dask.train_dask`): ``(booster, parameters, validation history, best iteration)``."""
    import xgboost.dask  # noqa: F401 - registers xgb.dask

    from ._dask_xgboost import rank_lines_hidden

    engine_params, rounds, early_stopping, eval_at = (dict(settings.engine_params), settings.rounds,
                                                      settings.early_stopping, settings.eval_at)
    params = booster_params(objective, num_leaves=settings.num_leaves, learning_rate=settings.learning_rate,
                            seed=settings.seed, eval_at=eval_at, engine_params=engine_params)
    _check_on_two_rows(params, engine_params)
    matrix = xgb.dask.DaskDMatrix(client, train.X, train.labels, qid=train.qid)
    evals = [(xgb.dask.DaskDMatrix(client, valid.X, valid.labels, qid=valid.qid), "valid")] if valid else []
    try:
        with rank_lines_hidden(client):
            output = xgb.dask.train(client, params, matrix, num_boost_round=rounds, evals=evals,
                                    obj=None if isinstance(objective, str) else objective,
                                    early_stopping_rounds=early_stopping or None, verbose_eval=False)
    except xgb.core.XGBoostError as error:
        raise engine_refusal(ENGINE.label, error, params, engine_params) from error
    booster = output["booster"]
    if not isinstance(objective, str):
        warn_if_no_split(booster, describe_objective(objective)[0], params)
    history = [float(v) for v in output["history"].get("valid", {}).get(f"ndcg@{eval_at}", [])]
    return booster, params, history, booster.best_iteration + 1 if early_stopping else None


def _check_on_two_rows(params: dict, given: dict | None) -> None:
    """Raise ValueError for parameters XGBoost refuses, found on two rows here rather than by every Dask worker
    (each would log its error and traceback)."""
    X, labels = np.zeros((2, 1)), np.array([0.0, 1.0])
    try:
        xgb.train({**params, "verbosity": 0}, xgb.DMatrix(X, labels, group=[2]), num_boost_round=1)
    except xgb.core.XGBoostError as error:
        raise engine_refusal(ENGINE.label, error, params, given) from error
