"""Engine parameters a user may give, and those plboost must refuse because they would change what is reported.

plboost passes a user's raw engine parameters (``--engine-param``, ``engine_params=``) through to LightGBM
or XGBoost. Some of them would silently train or watch something other than what the run says it does:
``objective=regression`` (or LightGBM's aliases ``app``, ``loss``, ...) trains another objective while the
run is labelled with the plboost one; a ``metric`` other than NDCG changes what early stopping and the
validation history watch; ``num_iterations`` or ``early_stopping_round`` change the rounds trained behind
``rounds`` and ``early_stopping``. :func:`check_engine_params` refuses those, naming the parameter and the
option that sets what it would change, and (LightGBM) parameters the engine does not know, which it would
only warn about. LightGBM's aliases come from LightGBM itself (``lightgbm.basic._ConfigAliases``), so a new
alias of a refused parameter is refused too.
"""

from __future__ import annotations

import difflib
import functools

from . import check_engine

_OBJECTIVE = ("would train another objective under the name of {objective}",
              "choose the objective with --objective (compare: --run NAME)")
_METRIC = ("would replace the validation NDCG@{eval_at} that early stopping and the validation history watch",
           "plboost computes the reported metrics itself (--eval-at sets the cut-offs)")
_ROUNDS = ("sets the number of rounds", "use --rounds (rounds=)")
_STOPPING = ("sets early stopping", "use --early-stopping (early_stopping=)")
_LEARNING_RATE = ("sets the learning rate, which the run records", "use --learning-rate (learning_rate=)")
_LEAVES = ("sets the number of leaves, which the run records", "use --num-leaves (num_leaves=)")
_SEED = ("sets the seed, which the run records", "use --seed (seed=)")

#: what plboost sets itself, by engine: the engine's canonical parameter name -> (what it would change, advice)
_SET_BY_PLBOOST = {
    "lightgbm": {"objective": _OBJECTIVE, "metric": _METRIC,
                 "eval_at": ("sets the NDCG cut-off that early stopping watches", "use --eval-at (eval_at=)"),
                 "num_iterations": _ROUNDS, "early_stopping_round": _STOPPING},
    "xgboost": {"objective": _OBJECTIVE, "eval_metric": _METRIC, "num_boost_round": _ROUNDS, "n_estimators": _ROUNDS,
                "early_stopping_rounds": _STOPPING},
}

#: the run settings a configuration records (learning rate, leaves, seed): given as engine parameters of a
#: configuration, they would train with other values than the recorded ones
_RUN_SETTINGS = {
    "lightgbm": {"learning_rate": _LEARNING_RATE, "num_leaves": _LEAVES, "seed": _SEED},
    "xgboost": {"learning_rate": _LEARNING_RATE, "eta": _LEARNING_RATE, "max_leaves": _LEAVES, "seed": _SEED,
                "random_state": _SEED},
}

#: LightGBM metric names that are its NDCG (a metric= engine parameter naming it changes nothing)
_LIGHTGBM_NDCG = {"ndcg", "lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"}


def check_engine_params(engine: str, params: dict | None, *, objective: str, eval_at: int | None = None,
                        run_settings: bool = False, what: str = "engine parameter") -> None:
    """Refuse engine parameters that would change what a run of ``objective`` trains or reports.

    ``params`` are the user's raw parameters for ``engine``. Refused, with one line naming the parameter:
    any alias of the objective, of the validation metric (unless it names the NDCG that plboost watches
    anyway: ``metric="ndcg"``, or XGBoost's ``eval_metric="ndcg@<eval_at>"``), of the NDCG cut-off, of the
    number of rounds and of early stopping; with ``run_settings``, also the learning rate, number of leaves
    and seed, which a configuration records as its own fields; and LightGBM parameters LightGBM does not
    know (it would ignore them with a warning), naming the closest known one.

    >>> check_engine_params("lightgbm", {"app": "regression"}, objective="plrank")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: engine parameter app='regression' (LightGBM's objective) would train another objective under ...
    """
    check_engine(engine)
    if not params:
        return
    canonical = _canonical_names(engine)
    reserved = dict(_SET_BY_PLBOOST[engine])
    if run_settings:
        reserved.update(_RUN_SETTINGS[engine])
    for name, value in params.items():
        base = canonical.get(name, name)
        if engine == "lightgbm" and canonical and name not in canonical:
            close = difflib.get_close_matches(name, sorted(canonical), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise ValueError(f"unknown LightGBM {what} {name!r}{hint} (see LightGBM's Parameters page)")
        if base not in reserved or _same_as_plboost(engine, base, value, eval_at):
            continue
        alias = f" (LightGBM's {base})" if base != name else ""
        effect, advice = reserved[base]
        effect = effect.format(objective=objective, eval_at=eval_at if eval_at is not None else "k")
        raise ValueError(f"{what} {name}={value!r}{alias} {effect}; {advice}")


def canonical_engine_params(engine: str, params: dict | None) -> dict:
    """``params`` under the engine's canonical names (LightGBM's alias table: ``min_child_samples`` ->
    ``min_data_in_leaf``; XGBoost's names as given), sorted by name: the same parameters given under two
    aliases compare equal.

    >>> canonical_engine_params("lightgbm", {"min_child_samples": 5, "lambda_l2": 1.0})
    {'lambda_l2': 1.0, 'min_data_in_leaf': 5}
    """
    names = _canonical_names(engine)
    return dict(sorted((names.get(name, name), value) for name, value in (params or {}).items()))


def _same_as_plboost(engine: str, base: str, value, eval_at: int | None) -> bool:
    """Whether ``value`` of the metric parameter ``base`` is the NDCG plboost sets anyway."""
    values = value if isinstance(value, (list, tuple)) else [value]
    if engine == "lightgbm" and base == "metric":
        return len(values) == 1 and str(values[0]).strip().lower() in _LIGHTGBM_NDCG
    if engine == "xgboost" and base == "eval_metric":
        return eval_at is not None and len(values) == 1 and str(values[0]).strip() == f"ndcg@{eval_at}"
    return False


def _canonical_names(engine: str) -> dict:
    """Every parameter name the engine knows -> its canonical name (LightGBM; empty for XGBoost, which has
    no alias table, and for a LightGBM without one)."""
    return _lightgbm_aliases() if engine == "lightgbm" else {}


@functools.cache
def _lightgbm_aliases() -> dict:
    try:
        from lightgbm.basic import _ConfigAliases

        aliases = _ConfigAliases._get_all_param_aliases()
    except Exception:  # a LightGBM without the list: leave the parameters to LightGBM
        return {}
    names = {name: name for name in aliases}
    for name, others in aliases.items():
        names.update({alias: name for alias in others if alias not in aliases})
    return names
