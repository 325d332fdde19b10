"""Training a LightGBM ranker with a plboost or built-in objective."""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import time

import lightgbm as lgb
import numpy as np

from .. import metrics
from .._engine_registry import LIGHTGBM as ENGINE
from ..data.out_of_core import OutOfCoreData
from ..data.splits import training_data
from ..objectives import RankingObjective
from ._base import TrainedModel, describe_objective, engine_message, engine_refusal
from ._progress import RoundProgress
from .exact_leaves import ExactLeafValues
from .parameters import canonical_engine_params, check_engine_params, check_leaf_values
from .settings import TrainingSettings, training_settings

#: LightGBM's ndcg metric and lambdarank objective refuse queries of more documents (its ``kMaxPosition``)
LIGHTGBM_MAX_QUERY = 10000


@contextlib.contextmanager
def without_fatal_echo():
    """Inside the block, LightGBM's "[LightGBM] [Fatal] <message>" lines are kept off standard error: its C++
    library writes each error there itself before raising it, and the error raised says the same. The rest of
    what the block writes to file descriptor 2 is written there after the block."""
    sys.stderr.flush()
    try:
        capture = tempfile.TemporaryFile()  # noqa: SIM115  (closed by `with capture` below; made apart so that only its OSError is caught)
    except OSError:  # pragma: no cover - nowhere to capture: leave standard error as it is
        yield
        return
    with capture:
        saved = os.dup(2)
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            capture.seek(0)
            kept = re.sub(rb"\[LightGBM\] \[Fatal\][^\n]*\n\n?", b"", capture.read())
            if kept:
                os.write(2, kept)


def _largest_query(data) -> tuple[object, int, int]:
    """Id and size of the largest query of ``data``, and how many queries exceed LightGBM's limit."""
    sizes = data.group_sizes
    if sizes.size == 0:
        return None, 0, 0
    largest = int(np.argmax(sizes))
    return data.qids[largest], int(sizes[largest]), int(np.count_nonzero(sizes > LIGHTGBM_MAX_QUERY))


def _query_limit_message(what: str, data, name: str) -> str:
    qid, size, count = _largest_query(data)
    more = f" (and {count - 1} more of over {LIGHTGBM_MAX_QUERY})" if count > 1 else ""
    return (f"{what} takes queries of at most {LIGHTGBM_MAX_QUERY} documents, and query {qid} of the {name} data "
            f"has {size}{more}")


def _plboost_ndcg(valid_data, eval_at: int):
    """A LightGBM ``feval`` with plboost's NDCG@eval_at on ``valid_data`` (LightGBM's conventions)."""
    name = f"ndcg@{eval_at}"

    def feval(predictions, dataset):
        scores = np.asarray(predictions, dtype=np.float64).reshape(-1)
        return name, float(metrics.ndcg(scores, valid_data.labels, offsets=valid_data.offsets, k=eval_at)), True
    return feval


def train_lightgbm(objective, train_data, valid_data=None, settings: TrainingSettings | None = None, *,
                   progress: bool = False, on_round=None, out_of_core: bool | None = None,
                   load_options: dict | None = None, **setting_keywords) -> TrainedModel:
    """Train ``lgb.train`` on :class:`~plboost.data.RankingData` and return a :class:`TrainedModel`.

    Parameters
    ----------
    objective : RankingObjective or str
        A plboost objective, or a LightGBM objective name ("lambdarank", "rank_xendcg", "regression").
    train_data, valid_data : RankingData, OutOfCoreData or path
        Training data, and optionally validation data watched with LightGBM's ``ndcg@eval_at`` (with
        plboost's :func:`plboost.metrics.ndcg` when a query of either holds more than 10,000 documents, which
        LightGBM's metric refuses, or when ``label_gain`` would give LightGBM's metric other gains than 2^y - 1).
        :class:`~plboost.data.OutOfCoreData` (features on disk) is handed to
        LightGBM batch by batch (:meth:`~plboost.data.OutOfCoreData.to_lightgbm`): the model is the one
        trained in memory. An SVMlight file's path is read as ``out_of_core`` says.
    out_of_core : bool or None
        How files given by path are read: True, chunk by chunk to disk (:func:`plboost.data.load_out_of_core`);
        False, into memory; None (default), out of core when their dense matrix would not fit the memory
        available (:func:`plboost.data.out_of_core.choose_out_of_core`, which says so in one line). Data
        already loaded are used as they are (True with in-memory data, or False with out-of-core data, is
        refused).
    load_options : dict, optional
        Options of :func:`plboost.data.load_splits` for files given by path (``memory_budget_bytes``, ``cache``,
        ``max_label``, ...).
    settings : TrainingSettings, optional
        Rounds, learning rate, leaves, early stopping, eval_at, seed, leaf values and further LightGBM
        parameters (:class:`plboost.engines.settings.TrainingSettings`; default
        :data:`~plboost.engines.settings.DEFAULT_SETTINGS`).
        Its fields may also be given as keywords (``rounds=200, early_stopping=30``), which replace the
        settings' values. ``leaf_values="exact"`` (PLRank only) writes the paper's exact Newton step into each
        tree after it is grown (:mod:`plboost.engines.exact_leaves`); validation NDCG is then computed by
        plboost from the rewritten trees.
    progress : bool
        Show a progress bar over the rounds.
    on_round : callable, optional
        Called as ``on_round(round, score)`` after every round (1-based) with the validation NDCG@eval_at;
        an exception it raises (e.g. ``optuna.TrialPruned``) ends training and propagates.

    LightGBM's refusal of a parameter (``max_bin=-5``, ``num_leaves="abc"``) raises ValueError naming it.
    """
    s = training_settings(settings, setting_keywords)
    rounds, early_stopping, eval_at, leaf_values = s.rounds, s.early_stopping, s.eval_at, s.leaf_values
    check_leaf_values(leaf_values, ENGINE.name, objective)
    train_data, valid_data = training_data(train_data, valid_data, out_of_core=out_of_core, **(load_options or {}))
    if leaf_values == "exact" and any(isinstance(data, OutOfCoreData) for data in (train_data, valid_data)):
        raise ValueError("leaf_values='exact' predicts every training document's leaf each round from X in memory; "
                         "train out-of-core data with leaf_values='diagonal' (or read them into memory)")
    name, objective_params = describe_objective(objective)
    engine_params = resolved_engine_params(s.engine_params, objective=name, eval_at=eval_at)
    params = _booster_params(objective, s, engine_params)
    if early_stopping and valid_data is None:
        raise ValueError("early_stopping needs validation data")
    if isinstance(objective, str) and objective == "lambdarank" and _largest_query(train_data)[1] > LIGHTGBM_MAX_QUERY:
        raise ValueError(_query_limit_message("LightGBM's lambdarank objective", train_data, "training")
                         + "; train with a plboost objective or rank_xendcg")
    feval = None
    own_metric = _why_plboost_scores(train_data, valid_data, engine_params)
    if own_metric:
        params["metric"] = "None"
        feval = _plboost_ndcg(valid_data, eval_at) if valid_data is not None else None
    _check_on_two_rows(params, s.engine_params)
    # Dataset-level parameters (max_bin, min_data_in_leaf, ...) must be known when the bins are built.
    dataset_params = {k: v for k, v in params.items() if k != "objective"}
    train_set = _constructed_train_set(train_data, dataset_params, params, s.engine_params)
    refit = None
    if leaf_values == "exact":
        # plboost scores the validation data itself: LightGBM's cached scores would miss the rewritten leaves
        refit = ExactLeafValues(objective, train_data, valid_data, params, eval_at=eval_at)
        params["objective"] = refit.objective
        params["metric"] = "None"
        valid_sets, feval = [], None
    else:
        valid_sets = ([valid_data.to_lightgbm(reference=train_set, params=dataset_params)]
                      if valid_data is not None else [])
    metric_name = f"ndcg@{eval_at}"
    history: list[float] = []
    trained = []
    bar = RoundProgress(rounds, f"LightGBM {name}", progress)

    def watch(env) -> None:
        trained.append(env.iteration)
        score = next((r[2] for r in env.evaluation_result_list if r[1] == metric_name), None)
        if score is not None:
            history.append(score)
        bar.update(metric_name, score)
        if on_round is not None and score is not None:
            on_round(env.iteration + 1, score)

    callbacks = [watch] if refit is None else [refit.callback, watch]
    if early_stopping:
        callbacks.append(lgb.early_stopping(early_stopping, first_metric_only=True, verbose=False))
    if isinstance(objective, RankingObjective):
        objective.warm_up()  # compilation is not training time
    start = time.perf_counter()
    try:
        for valid_set in valid_sets:
            valid_set.construct()
        booster = lgb.train(params, train_set, num_boost_round=rounds, valid_sets=valid_sets,
                            valid_names=["valid"] * len(valid_sets), feval=feval, callbacks=callbacks)
    except lgb.basic.LightGBMError as error:
        if "exceeds upper limit" in str(error):  # the ndcg metric asked for in engine_params
            named = [(data, name) for data, name in ((train_data, "training"), (valid_data, "validation"))
                     if data is not None and _largest_query(data)[1] > LIGHTGBM_MAX_QUERY]
            if named:
                raise ValueError(_query_limit_message("LightGBM's ndcg metric", *named[0])
                                 + "; leave the metric to plboost (no metric= engine parameter)") from error
        raise _refusal(error, params, s.engine_params) from error
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    logged = _logged_params(params, exact_leaves=refit is not None, own_metric=own_metric)
    return TrainedModel(ENGINE.name, booster, name, objective_params, logged, seconds,
                        rounds=len(trained),
                        best_iteration=booster.best_iteration if early_stopping else None,
                        valid_history=history,
                        leaf_refit_seconds=sum(refit.refit_seconds) if refit is not None else None)


train = train_lightgbm


def _why_plboost_scores(train_data, valid_data, engine_params: dict) -> str | None:
    """Why plboost, not LightGBM's ndcg metric, scores the validation data (None: LightGBM does): the metric would
    refuse training labels that are relevance estimates, or a query of over ``LIGHTGBM_MAX_QUERY`` documents, or
    score with other gains than plboost's (``label_gain``). A metric the user names in ``engine_params`` is left to
    LightGBM, unless the training labels are estimates (LightGBM would refuse them)."""
    if getattr(train_data, "relevance_estimates", False):  # LightGBM's ndcg refuses labels that are not grades
        return "the training labels are relevance estimates"
    if "metric" in engine_params:
        return None
    if max(_largest_query(data)[1] for data in (train_data, valid_data) if data is not None) > LIGHTGBM_MAX_QUERY:
        return f"a query has over {LIGHTGBM_MAX_QUERY} documents"
    return "label_gain is not 2^y - 1" if ENGINE.metric_gain_parameters(engine_params) else None


#: the settings with which LightGBM computes a run the same way every time, where its defaults let timing choose
#: (the engine registry says why). Column-wise histograms are also what out-of-core data train with (LightGBM's
#: row-wise copy of the binned data was a one-off spike that made the out-of-core peak grow at 0.54-0.66 of the
#: dense matrix's rate above 1M documents: docs/scaling.md), so in-memory and out-of-core data give one model.
#: A user's ``force_row_wise``, ``force_col_wise`` or ``deterministic`` replaces plboost's choice of it.
REPRODUCIBLE = dict(ENGINE.reproducible_settings)


def resolved_engine_params(engine_params, *, objective: str, eval_at: int | None) -> dict:
    """The user's ``engine_params`` checked (:func:`~plboost.engines.parameters.check_engine_params`, whose errors
    name a parameter as the user spelled it) and then under LightGBM's canonical names, from LightGBM's own alias
    table (as ``lightgbm.train`` resolves them on entry): every step after this one reads one name per parameter.
    """
    check_engine_params(ENGINE.name, dict(engine_params), objective=objective, eval_at=eval_at)
    return canonical_engine_params(ENGINE.name, engine_params)


def reproducible_params(params: dict, engine_params: dict) -> dict:
    """``params`` (plboost's) without those the user's ``engine_params`` set, with :data:`REPRODUCIBLE` where the
    user chose neither histogram layout, then ``engine_params``: the user's value of a parameter replaces plboost's.
    Both under canonical names (:func:`resolved_engine_params`)."""
    given = set(engine_params)
    chosen = {} if given & {"force_col_wise", "force_row_wise"} else {"force_col_wise": True}
    if "deterministic" not in given:
        chosen["deterministic"] = True
    return {**{k: v for k, v in {**params, **chosen}.items() if k not in given}, **engine_params}


def _booster_params(objective, settings: TrainingSettings, engine_params: dict) -> dict:
    """LightGBM's parameters for ``settings`` (validation NDCG@eval_at, :data:`REPRODUCIBLE`); the (resolved)
    ``engine_params`` override them."""
    params = {"objective": objective, "learning_rate": settings.learning_rate, "num_leaves": settings.num_leaves,
              "seed": settings.seed, "metric": "ndcg", "eval_at": [settings.eval_at], "verbosity": -1}
    return reproducible_params(params, engine_params)


def _refusal(error, params: dict, given) -> ValueError:
    """:func:`~plboost.engines._base.engine_refusal` naming a parameter as the user spelled it (``given``: the
    user's engine parameters), with LightGBM's name of it beside an alias."""
    return engine_refusal(ENGINE.label, error, params, dict(given or {}), ENGINE.canonical_names())


def _constructed_train_set(train_data, dataset_params: dict, params: dict, given):
    """The training set's bins, built with the dataset-level parameters; LightGBM's refusal of a parameter, or
    a training set left without a feature to split, raises ValueError."""
    try:
        with without_fatal_echo():  # bad parameters show here: LightGBM reads them all to build the bins
            train_set = train_data.to_lightgbm(params=dataset_params).construct()
    except lgb.basic.LightGBMError as error:
        raise _refusal(error, params, given) from error
    if all(train_set.feature_num_bin(i) == 0 for i in range(train_set.num_feature())):
        raise ValueError(
            f"LightGBM kept none of the {train_set.num_feature()} features of the training data: each is constant "
            "or too rare to split with these parameters (min_data_in_leaf, min_data_in_bin, "
            "feature_pre_filter); LightGBM itself would stop with 'Check failed: num_features() > 0'")
    return train_set


def _logged_params(params: dict, *, exact_leaves: bool, own_metric: str | None) -> dict:
    """The parameters a result records: LightGBM's, less the objective, and who computed the metric (``own_metric``:
    why plboost did)."""
    logged = {k: v for k, v in params.items() if k != "objective"}
    if exact_leaves:
        logged["leaf_values"] = "exact"
        logged["metric"] = "ndcg (plboost, from the rewritten trees)"
    elif own_metric:
        logged["metric"] = f"ndcg (plboost: {own_metric})"
    return logged


def load_booster(path, kind: str, data: bytes):
    """A LightGBM booster from a model file :func:`plboost.engines._model_files.read_model_file` read."""
    from ._model_files import check_lightgbm_text, check_lightgbm_trees

    check_lightgbm_text(path, data)
    check_lightgbm_trees(path, data)
    try:
        return lgb.Booster(model_file=str(path))
    except lgb.basic.LightGBMError as error:
        raise ValueError(f"{path}: LightGBM cannot load it: {engine_message(error)}") from None


def regression_model(X, y, *, rounds: int = 100, learning_rate: float = 0.05, num_leaves: int = 31, seed: int = 0,
                     threads: int | None = None):
    """A pointwise regression of ``y`` on ``X`` (LightGBM's L2 ``regression``): its ``predict``. What the doubly
    robust estimator's regression model is fitted with (:func:`plboost.clicks.training.cross_fitted_regression`)."""
    params = {"objective": "regression", "learning_rate": learning_rate, "num_leaves": num_leaves, "seed": seed,
              "deterministic": True, "verbosity": -1, **({"num_threads": threads} if threads else {})}
    with without_fatal_echo():
        booster = lgb.train(params, lgb.Dataset(np.asarray(X), np.asarray(y, dtype=np.float64)),
                            num_boost_round=rounds)
    return booster.predict


def fit_dask(client, objective, train, valid, settings: TrainingSettings):
    """Train through ``lightgbm.DaskLGBMRanker`` on ``client``'s cluster (:func:`plboost.engines.dask.train_dask`):
    ``(local booster, parameters, validation history, best iteration)``. LightGBM's Dask interface has no
    early stopping, and no validation data here."""
    if settings.early_stopping:
        raise ValueError("LightGBM's Dask interface has no early stopping; train a fixed number of rounds")
    # no validation data here, so no metric: LightGBM's default one for rankers (ndcg) would refuse
    # queries of over 10,000 documents
    engine_params = canonical_engine_params(ENGINE.name, settings.engine_params)  # checked by train_dask
    params = reproducible_params({"n_estimators": settings.rounds, "learning_rate": settings.learning_rate,
                                  "num_leaves": settings.num_leaves, "random_state": settings.seed, "verbosity": -1,
                                  "metric": "None"}, engine_params)
    from ._dask_lightgbm import DaskRanker, quiet_client

    _check_on_two_rows(params, settings.engine_params)
    if isinstance(objective, str) and objective == "lambdarank":
        sizes = np.asarray(train.group.compute())
        if sizes.size and sizes.max() > LIGHTGBM_MAX_QUERY:
            raise ValueError(f"LightGBM's lambdarank objective takes queries of at most {LIGHTGBM_MAX_QUERY} "
                             f"documents, and query {int(np.argmax(sizes))} of the training data (counting from "
                             f"0 over the partitions) has {int(sizes.max())}; train with a plboost objective or "
                             "rank_xendcg")
    ranker = DaskRanker(objective=objective if isinstance(objective, str) else objective.sklearn(),
                        client=client, **params)
    try:
        with quiet_client(params):
            ranker.fit(train.X, train.labels, group=train.group)
    except lgb.basic.LightGBMError as error:
        raise _refusal(error, params, settings.engine_params) from error
    return ranker.to_local().booster_, params, [], None


#: rows of the probe booster for boosting="rf" (see _check_on_two_rows)
_PROBE_ROWS = 1000


def _check_on_two_rows(params: dict, given) -> None:
    """Raise ValueError for parameters LightGBM refuses, found on two rows here rather than by every Dask worker
    (each would log its error and traceback) or after the training set's bins are built. With random forests
    (``boosting="rf"``), whose bagging settings LightGBM checks only when it makes a booster, a booster is made too,
    on a thousand rows."""
    try:
        probe = {k: v for k, v in params.items() if k not in ("objective", "verbosity", "metric")}
        with without_fatal_echo():  # quiet: two rows make LightGBM warn of features it cannot split
            probe_set = lgb.Dataset(np.zeros((2, 1)), np.array([0.0, 1.0]), params={**probe, "verbosity": -1})
            probe_set.construct()
        if str(probe.get("boosting", "")).lower() in ("rf", "random_forest"):
            # refused only when a booster is made; on enough rows that any bagging fraction keeps one
            rows = np.arange(_PROBE_ROWS, dtype=np.float64).reshape(-1, 1)
            with without_fatal_echo():
                lgb.Booster({**probe, "verbosity": -1},
                            lgb.Dataset(rows, rows[:, 0] % 2, params={**probe, "verbosity": -1}).construct())
    except lgb.basic.LightGBMError as error:
        raise _refusal(error, params, given) from error
