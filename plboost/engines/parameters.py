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
import math

from .._constraints import Options, check
from .._engine_registry import EXACT_LEAF_ENGINES, LEAF_VALUES, get_engine
from ..objectives import OBJECTIVES

#: what a parameter plboost sets itself would change, and the option that sets it, by what it is
#: (:attr:`plboost._engine_registry.Engine.set_by_plboost` and ``run_settings`` name each engine's parameters)
_EFFECTS = {
    "objective": ("would train another objective under the name of {objective}",
                  "choose the objective with --objective (compare: --run NAME)"),
    "metric": ("would replace the validation NDCG@{eval_at} that early stopping and the validation history watch",
               "plboost computes the reported metrics itself (--eval-at sets the cut-offs)"),
    "eval_at": ("sets the NDCG cut-off that early stopping watches", "use --eval-at (eval_at=)"),
    "metric_gain": ("would change the gains of the validation NDCG@{eval_at} that early stopping and the validation "
                    "history watch (plboost's are 2^y - 1)", "leave it at the engine's default"),
    "rounds": ("sets the number of rounds", "use --rounds (rounds=)"),
    "early_stopping": ("sets early stopping", "use --early-stopping (early_stopping=)"),
    # the run settings a configuration records: given as engine parameters of a configuration, they would
    # train with other values than the recorded ones
    "learning_rate": ("sets the learning rate, which the run records", "use --learning-rate (learning_rate=)"),
    "leaves": ("sets the number of leaves, which the run records", "use --num-leaves (num_leaves=)"),
    "seed": ("sets the seed, which the run records", "use --seed (seed=)"),
}


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
    engine = get_engine(engine)
    if not params:
        return
    canonical = engine.canonical_names()
    check_one_spelling(engine, {what: params})
    reserved = dict(engine.set_by_plboost)
    if run_settings:
        reserved.update(engine.run_settings)
    for name, value in params.items():
        base = canonical.get(name, name)
        if engine.refuses_unknown_params and canonical and name not in canonical:
            close = difflib.get_close_matches(name, sorted(canonical), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise ValueError(f"unknown {engine.label} {what} {name!r}{hint} (see {engine.label}'s Parameters page)")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{what} {name}={value!r}: {engine.label}'s parameters take finite numbers")
        if base in engine.tree_values and str(value).strip().lower() not in engine.tree_values[base]:
            raise ValueError(f"{what} {name}={value!r} trains no trees; plboost trains and saves tree models "
                             f"({engine.label}'s {base} {' or '.join(engine.tree_values[base])})")
        if base not in reserved or _same_as_plboost(engine, reserved[base], name, value, eval_at):
            continue
        alias = f" ({engine.label}'s {base})" if base != name else ""
        effect, advice = _EFFECTS[reserved[base]]
        effect = effect.format(objective=objective, eval_at=eval_at if eval_at is not None else "k")
        raise ValueError(f"{what} {name}={value!r}{alias} {effect}; {advice}")
    ignored = engine.ignored_params(params, plboost_objective=objective if objective in OBJECTIVES else None)
    for name, reason in ignored.items():
        base = canonical.get(name, name)
        alias = f" ({engine.label}'s {base})" if base != name else ""
        raise ValueError(f"{what} {name}={params[name]!r}{alias} changes nothing: {reason}")


def check_one_spelling(engine, groups: dict[str, dict]) -> None:
    """Refuse two names of one parameter of ``engine`` among ``groups`` (what they are -> parameters: the engine
    parameters, a built-in objective's parameters), after the engine's own alias table: the engine would keep one
    value and drop the other without a word (LightGBM keeps the canonical name's, whatever the order).

    >>> check_one_spelling("lightgbm", {"engine parameter": {"min_child_samples": 50, "min_data_in_leaf": 5}})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: engine parameters min_child_samples=50 and min_data_in_leaf=5 are both LightGBM's ...; give it once
    """
    engine = get_engine(engine)
    canonical = engine.canonical_names()
    seen: dict[str, tuple[str, str, object]] = {}
    for what, params in groups.items():
        for name, value in (params or {}).items():
            base = canonical.get(name, name)
            if base in seen:
                first_what, first, first_value = seen[base]
                both = (what.replace("parameter", "parameters", 1) if first_what == what
                        else f"{first_what} {first}={first_value!r} and {what}")
                pair = f"{first}={first_value!r} and {name}={value!r}" if first_what == what else f"{name}={value!r}"
                raise ValueError(f"{both} {pair} are both {engine.label}'s {base}; give it once")
            seen[base] = (what, name, value)


def canonical_engine_params(engine: str, params: dict | None) -> dict:
    """``params`` under the engine's canonical names (LightGBM's alias table: ``min_child_samples`` ->
    ``min_data_in_leaf``; XGBoost's names as given), sorted by name: the same parameters given under two
    aliases compare equal.

    >>> canonical_engine_params("lightgbm", {"min_child_samples": 5, "lambda_l2": 1.0})
    {'lambda_l2': 1.0, 'min_data_in_leaf': 5}
    """
    names = get_engine(engine).canonical_names()
    return dict(sorted((names.get(name, name), value) for name, value in (params or {}).items()))


def _same_as_plboost(engine, role: str, name: str, value, eval_at: int | None) -> bool:
    """Whether ``value`` of a parameter that is ``role`` is what plboost sets anyway (the NDCG it watches, its
    gains)."""
    values = value if isinstance(value, (list, tuple)) else [value]
    if role == "metric_gain":
        return not engine.metric_gain_parameters({name: value})
    return role == "metric" and engine.is_plboost_ndcg(values, eval_at)


def check_leaf_values(leaf_values: str, engine: str, objective=None, *, dask: bool = False) -> None:
    """Refuse a ``leaf_values`` setting that cannot train with ``engine`` and ``objective`` (a name or a
    plboost objective), or on Dask: every entry point calls this, so all give the same message."""
    check(leaf_values, Options(*LEAF_VALUES), "leaf_values")
    if leaf_values == "diagonal":
        return
    if engine not in EXACT_LEAF_ENGINES:
        only = " and ".join(get_engine(name).label for name in EXACT_LEAF_ENGINES)
        raise ValueError(f"leaf_values={leaf_values!r} is for {only} only (it rewrites leaves with "
                         f"Booster.set_leaf_output); {get_engine(engine).label} trains with the diagonal hessians")
    if objective is not None:
        cls = OBJECTIVES.get(objective) if isinstance(objective, str) else type(objective)
        if not getattr(cls, "exact_leaves", False):
            name = objective if isinstance(objective, str) else getattr(objective, "name", objective)
            raise ValueError(f"exact leaf values are defined for PLRank (the paper's Eqn. 9), not {name}")
        if getattr(objective, "curvature", "exact") != "exact":  # an instance; a name leaves it at the default
            raise ValueError(f"exact leaf values replace the leaves' curvature with the loss's own, so they train "
                             f"PLRank(curvature='exact'), not curvature={objective.curvature!r}")
    if dask:
        raise ValueError("exact leaf values are not available on Dask (the leaves would be rewritten on one "
                         "machine while the workers keep their own scores)")
