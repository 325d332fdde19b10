"""Training a LightGBM ranker with a plboost or built-in objective."""

from __future__ import annotations

import time

import lightgbm as lgb

from ..objectives import RankingObjective
from . import TrainedModel, describe_objective
from ._progress import RoundProgress
from .exact_leaves import ExactLeafValues


def train_lightgbm(objective, train_data, valid_data=None, *, rounds: int = 100, learning_rate: float = 0.1,
                   num_leaves: int = 31, early_stopping: int | None = None, eval_at: int = 10,
                   engine_params: dict | None = None, seed: int = 0, progress: bool = False,
                   leaf_values: str = "diagonal", on_round=None) -> TrainedModel:
    """Train ``lgb.train`` on :class:`~plboost.data.RankingData` and return a :class:`TrainedModel`.

    Parameters
    ----------
    objective : RankingObjective or str
        A plboost objective, or a LightGBM objective name ("lambdarank", "rank_xendcg", "regression").
    train_data, valid_data : RankingData
        Training data, and optionally validation data watched with LightGBM's ``ndcg@eval_at``.
    rounds, learning_rate, num_leaves : tree parameters, as LightGBM names them.
    early_stopping : int, optional
        Stop when validation NDCG@eval_at has not improved for this many rounds (needs ``valid_data``).
    engine_params : dict, optional
        Further LightGBM parameters; they override the ones above.
    seed : int
        LightGBM's ``seed``.
    progress : bool
        Show a progress bar over the rounds.
    leaf_values : "diagonal" or "exact"
        "diagonal": LightGBM's leaf values from the summed per-document hessians. "exact" (PLRank only):
        the paper's exact Newton step per leaf, written into each tree after it is grown
        (:mod:`plboost.engines.exact_leaves`); validation NDCG is then computed by plboost from the
        rewritten trees.
    on_round : callable, optional
        Called as ``on_round(round, score)`` after every round (1-based) with the validation NDCG@eval_at;
        an exception it raises (e.g. ``optuna.TrialPruned``) ends training and propagates.
    """
    if leaf_values not in ("diagonal", "exact"):
        raise ValueError(f"leaf_values must be 'diagonal' or 'exact', got {leaf_values!r}")
    name, objective_params = describe_objective(objective)
    params = {"objective": objective, "learning_rate": learning_rate, "num_leaves": num_leaves, "seed": seed,
              "metric": "ndcg", "eval_at": [eval_at], "verbosity": -1}
    params.update(engine_params or {})
    if early_stopping and valid_data is None:
        raise ValueError("early_stopping needs validation data")
    # Dataset-level parameters (max_bin, min_data_in_leaf, ...) must be known when the bins are built.
    dataset_params = {k: v for k, v in params.items() if k != "objective"}
    train_set = train_data.to_lightgbm(params=dataset_params).construct()
    if all(train_set.feature_num_bin(i) == 0 for i in range(train_set.num_feature())):
        raise ValueError(
            f"LightGBM kept none of the {train_set.num_feature()} features of the training data: each is constant "
            "or too rare to split with these parameters (min_data_in_leaf, min_data_in_bin, "
            "feature_pre_filter); LightGBM itself would stop with 'Check failed: num_features() > 0'")
    refit = None
    if leaf_values == "exact":
        # plboost scores the validation data itself: LightGBM's cached scores would miss the rewritten leaves
        refit = ExactLeafValues(objective, train_data, valid_data, params, eval_at=eval_at)
        params["objective"] = refit.objective
        params["metric"] = "None"
        valid_sets = []
    else:
        valid_sets = ([valid_data.to_lightgbm(reference=train_set, params=dataset_params).construct()]
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
        booster = lgb.train(params, train_set, num_boost_round=rounds, valid_sets=valid_sets,
                            valid_names=["valid"] * len(valid_sets), callbacks=callbacks)
    finally:
        bar.close()
    seconds = time.perf_counter() - start
    logged = {k: v for k, v in params.items() if k != "objective"}
    if refit is not None:
        logged["leaf_values"] = "exact"
        logged["metric"] = "ndcg (plboost, from the rewritten trees)"
    return TrainedModel("lightgbm", booster, name, objective_params, logged, seconds,
                        rounds=len(trained),
                        best_iteration=booster.best_iteration if early_stopping else None,
                        valid_history=history,
                        leaf_refit_seconds=sum(refit.refit_seconds) if refit is not None else None)
