"""Running one configuration: train it (on this machine, or on a Dask cluster) and evaluate it
(:func:`run`, :func:`run_dask`), with its kernels warmed first (:func:`warm_up`)."""

from __future__ import annotations

import contextlib
import functools
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

from .. import engines, metrics
from .._writing import json_text, write_text
from ..engines.lightgbm import regression_model
from ..engines.settings import TrainingSettings
from ..clicks import CLICK_TRAINING, ClickLog, click_training_data
from ..clicks.log import LOGGING_MODEL
from ..clicks.training import LOGGER
from ..data import load_svmlight, make_synthetic
from ..data.splits import column_order, predict_scores
from .._extras import import_extra
from ..engines.parameters import check_leaf_values
from ..engines import TrainedModel
from ..records import environment_versions
from .spec import RunSpec


@dataclass
class RunResult:
    """A finished run: the spec, the trained model, and the metrics on the evaluation split."""

    spec: RunSpec
    model: TrainedModel
    evaluated_on: str
    metrics: dict
    conventions: str

    def to_dict(self) -> dict:
        return {
            "objective": self.spec.objective,
            "objective_params": self.model.objective_params,
            "engine": self.spec.engine,
            "spec": asdict(self.spec),
            "engine_params": jsonable_params(self.model.engine_params),
            "evaluated_on": self.evaluated_on,
            "metrics": self.metrics,
            "conventions": self.conventions,
            "train_seconds": self.model.train_seconds,
            "rounds": self.model.rounds,
            "best_iteration": self.model.best_iteration,
            "trees_used": self.model.trees_used,
            "versions": environment_versions([self.spec.engine]),
        }

    def save_json(self, path) -> None:
        write_text(path, json_text(self.to_dict()))


def evaluation_spec(spec: RunSpec, *datasets) -> RunSpec:
    """``spec`` with ERR's ``g_max`` resolved: as given, else the largest label of ``datasets`` (those not None;
    at least 1), so that ERR follows the data's label scale (MQ2008's 0-2, MSLR's 0-4)."""
    g_max = evaluation_g_max(spec, *datasets)
    return spec if g_max == spec.g_max else replace(spec, g_max=g_max)


def evaluation_g_max(spec: RunSpec, *datasets) -> int:
    """ERR's ``g_max`` for ``spec`` on ``datasets``: :func:`evaluation_spec`'s, without a new specification."""
    if spec.g_max is not None:
        return spec.g_max
    largest = max((float(np.max(d.labels)) for d in datasets if d is not None and len(d.labels)), default=1.0)
    return max(1, int(largest))


def evaluate_scores(scores, data, spec: RunSpec, *, per_query: bool = False,
                    g_max: int | None = None) -> tuple[dict, str]:
    """Metrics of ``scores`` on ``data`` (NDCG@k and ERR@k for every k of ``spec.eval_at``, ERR, MAP); with
    ``per_query``, an array of every query's values per metric (NaN where the conventions leave it out).
    ERR's scale is ``g_max``, else ``spec.g_max``, else ``data``'s largest label (see :func:`evaluation_spec`)."""
    result = metrics.evaluate(scores, data.labels, offsets=data.offsets, ndcg_at=spec.eval_at,
                              err_at=spec.eval_at, no_relevant=spec.no_relevant,
                              g_max=evaluation_g_max(spec, data) if g_max is None else g_max, per_query=per_query)
    conventions = str(result.pop("conventions"))
    if per_query:
        return {name: np.asarray(values, dtype=np.float64) for name, values in result.items()}, conventions
    return {name: float(value) for name, value in result.items()}, conventions


def run(spec: RunSpec, train, valid=None, test=None, *, progress: bool = False, on_round=None,
        g_max: int | None = None) -> RunResult:
    """Train ``spec`` on ``train`` (early stopping on ``valid``) and evaluate on ``test``.

    The data are :class:`~plboost.data.RankingData` or, read out of core, :class:`~plboost.data.OutOfCoreData`
    (trained and scored batch by batch; see :func:`plboost.data.load_splits`).

    Without ``test`` the metrics are those of ``valid``, and without either, of ``train``;
    :attr:`RunResult.evaluated_on` says which. ``on_round(round, validation NDCG)`` is called after every
    boosting round (see :func:`plboost.engines.lightgbm.train_lightgbm`). ``g_max``: ERR's scale (default
    :func:`evaluation_g_max` of the data: a table of several splits takes one for all).
    """
    labelled = train
    if spec.clicks == LOGGER:
        model, labelled = _logging_model(spec, train, valid, test), None
    else:
        if spec.clicks is not None or isinstance(train, ClickLog):
            train, labelled = _click_training(spec, train, valid, test), None
        objective, settings = _training_arguments(spec)
        model = engines.train(spec.engine, objective, train, valid, settings, progress=progress, on_round=on_round)
    split, data = next((name, d) for name, d in (("test", test), ("valid", valid), ("train", labelled))
                       if d is not None)
    if g_max is None:  # ERR's scale from labels: never from a click log's estimates
        g_max = evaluation_g_max(spec, labelled, valid, test)
    values, conventions = evaluate_scores(predict_scores(model, data), data, spec, g_max=g_max)
    return RunResult(spec, model, split, values, conventions)


def _click_training(spec: RunSpec, log, valid, test):
    """The training data of a run from a click log (``spec.clicks``), checked against the labelled data it is
    validated and tested on."""
    if spec.clicks is None:
        raise ValueError("train is a click log, but the configuration does not say how to train from it: give "
                         f"clicks= (one of {', '.join(CLICK_TRAINING)})")
    if not isinstance(log, ClickLog):
        raise ValueError(f"{spec.label} trains from a click log (clicks={spec.clicks}); train must be a "
                         f"plboost.clicks.ClickLog, got {type(log).__name__}")
    if valid is None and test is None:
        raise ValueError(f"{spec.label}: a run from a click log is evaluated on labelled data; give valid or test")
    for name, data in (("valid", valid), ("test", test)):
        if data is not None and data.n_features != log.X.shape[1]:
            raise ValueError(f"the click log's documents have {log.X.shape[1]} features, the {name} data "
                             f"{data.n_features}: they must be the same features")
    reference = valid if valid is not None else test
    wanted = getattr(reference, "feature_names", None)
    if wanted is None:  # SVMlight data: the features by position, as the log's columns stand
        log = replace(log, feature_names=None)
    elif log.feature_names is not None:
        order = column_order(log.feature_names, wanted, data="the click log's documents",
                             reference=str(reference.source), hint="the log's features must be the labelled data's")
        if order is not None:
            log = replace(log, X=log.X[:, order], feature_names=tuple(wanted))
    seed = spec.settings.seed  # the engine's seed, shifted by the repeat
    return click_training_data(log, spec.clicks, examination=spec.examination, seed=seed,
                               regressor=functools.partial(regression_model, seed=seed))


def _logging_model(spec: RunSpec, log, valid, test) -> TrainedModel:
    """The click log's logging ranker, loaded from its model file, for a run with ``clicks="logger"``: refused where
    the log has none, or where the log's metadata name another objective or engine than ``spec``'s."""
    if not isinstance(log, ClickLog):
        raise ValueError("clicks='logger' scores a click log's logging ranker; train must be a "
                         f"plboost.clicks.ClickLog, got {type(log).__name__}")
    if valid is None and test is None:
        raise ValueError("clicks='logger': the logging ranker is scored on labelled data; give valid or test")
    if log.logging_model is None:
        raise ValueError(f"clicks='logger': the click log has no logging ranker's model ({LOGGING_MODEL} beside its "
                         "clicks table, which plboost simulate-clicks writes)")
    recorded = log.metadata.get("logger", {})
    for name, wanted in (("objective", spec.objective), ("engine", spec.engine)):
        if recorded.get(name, wanted) != wanted:
            raise ValueError(f"clicks='logger': the click log's logger is {recorded[name]!r} ({name}), not {wanted!r}; "
                             f"give {recorded.get('objective')}@{recorded.get('engine')},clicks=logger")
    saved = engines.load_model(log.logging_model)
    if saved.engine != spec.engine:
        raise ValueError(f"clicks='logger': {log.logging_model} is a {saved.engine} model, not {spec.engine}'s")
    rounds = engines.get_engine(saved.engine).trained_rounds(saved.booster)
    return TrainedModel(saved.engine, saved.booster, spec.objective, {}, {}, 0.0, rounds, None)


def _training_arguments(spec: RunSpec) -> tuple[object, TrainingSettings]:
    """The objective of ``spec`` and the engine's settings for it, the same on one machine and on Dask, as the
    specification resolved them (the seeds shifted by the repeat, a built-in objective's parameters among the
    engine's)."""
    return spec.trained_objective, spec.settings


#: (objective, engine, leaf values) that :func:`warm_up` has run in this process
_WARMED: set = set()


def warm_up(spec: RunSpec) -> float:
    """Train ``spec`` for two rounds on a tiny synthetic dataset, its own validation set, so that compiling (or
    loading from Numba's cache) the kernels it runs (objective, exact leaves, metrics) is not counted in the
    training time of its first real run. Returns the seconds it took: 0 when this process has run the same
    objective, engine and leaf values before."""
    kind = (spec.objective, spec.engine, spec.leaf_values)
    if kind in _WARMED:
        return 0.0
    tiny = make_synthetic(n_queries=30, n_features=4, docs_per_query=(5, 20), seed=0)
    start = time.perf_counter()
    # the synthetic labels run to 4: the user's g_max (ERR's scale, for data of fewer grades) would refuse them
    run(replace(spec, rounds=2, early_stopping=1 if spec.early_stopping else None, engine_params={}, g_max=None,
                clicks=None, examination="recorded"), tiny, valid=tiny, test=tiny)
    _WARMED.add(kind)
    return time.perf_counter() - start


def run_dask(spec: RunSpec, client, train_sources, valid=None, test=None, *, n_partitions: int | None = None,
             load_options: dict | None = None) -> RunResult:
    """Train ``spec`` on a Dask cluster and evaluate here.

    ``train_sources`` are SVMlight files (one partition each) or one file split by query into
    ``n_partitions`` (default: the cluster's workers); ``valid`` (a path) serves XGBoost's early stopping;
    ``test`` (a path) is read here and scored with the trained model.
    """
    from ..engines.dask import ranking_collections, train_dask  # needs the optional dask

    check_leaf_values(spec.leaf_values, spec.engine, spec.objective, dask=True)
    if spec.clicks is not None:
        raise ValueError(f"{spec.label}: training from a click log on Dask is not offered yet; train on one machine")
    if test is None and valid is None:  # before the cluster trains for minutes
        raise ValueError("a Dask run is evaluated on --test or --valid; give one")
    options = dict(load_options or {})
    objective, settings = _training_arguments(spec)
    workers = len(client.scheduler_info()["workers"])
    train = ranking_collections(train_sources, n_partitions=n_partitions or (None if len(train_sources) > 1
                                                                              else max(workers, 1)),
                                client=client, load_options=options)
    valid_data = (ranking_collections([valid], n_partitions=1, n_features=train.n_features, load_options=options)
                  if valid is not None else None)
    model = train_dask(spec.engine, client, objective, train, settings, valid=valid_data)
    evaluated_on, path = next((name, p) for name, p in (("test", test), ("valid", valid)) if p is not None)
    data = load_svmlight(path, n_features=train.n_features, **options)
    values, conventions = evaluate_scores(model.predict(data.X), data, spec)
    return RunResult(spec, model, evaluated_on, values, conventions)


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, n_workers: int | None = None):
    """A Dask client, current inside the block, of the scheduler at address ``scheduler`` or else of a local
    cluster of ``n_workers`` single-threaded processes; both are closed on leaving."""
    distributed = import_extra("distributed", "training on Dask", "'plboost[dask]'")
    cluster = None
    if scheduler:
        client = distributed.Client(scheduler)
    else:
        cluster = distributed.LocalCluster(n_workers=n_workers, threads_per_worker=1, dashboard_address=None)
        client = distributed.Client(cluster)
    try:
        with client.as_current():  # any other client of this process must not receive the work
            yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def jsonable_params(params: dict) -> dict:
    """``params`` with every value JSON cannot hold as it is replaced by its repr, for result records."""
    return {k: v if isinstance(v, (str, int, float, bool, list, type(None))) else repr(v)
            for k, v in params.items()}
