"""Tuning every configuration with the same budget: Optuna's TPE over search spaces declared here.

A comparison at one fixed setting favours whichever objective that setting suits, so ``plboost compare
--tune N`` gives every configuration the same search, on every split:

1. ``N`` trials of Optuna's tree-structured Parzen estimator (Bergstra, Bardenet, Bengio and Kégl, NIPS
   2011), seeded, so that a rerun proposes the same trials. Trial 0 is the untuned configuration itself,
   so a tuned configuration is never worse on validation than the untuned one.
2. Each trial trains on the training file with early stopping on the validation file and is scored by
   validation NDCG at the largest cut-off of ``eval_at``, at its best iteration. Optuna's median pruner
   stops a trial whose validation curve falls below the median of the earlier trials at the same round.
3. The best trial is trained again (the same model: training is deterministic for a seed) and evaluated
   on the test file, which the search never reads: the test file of a split is loaded only after the
   searches of every configuration on that split have ended.

Search spaces (:data:`ENGINE_SPACES`, :data:`OBJECTIVE_SPACES`) cover the engine's tree parameters and
each objective's own; a parameter that a configuration fixes (``plrank,n_permutations=3``, or
``--engine-param lambda_l2=1``) is left out of its search. A TOML file can change or drop any dimension
(see :func:`spaces_from_toml`). With an output directory, studies live in ``tuning.db`` (SQLite) there, so
an interrupted search continues where it stopped; a study whose provenance (data, configuration, search
space, versions) has changed is started again.
"""

from __future__ import annotations

import json
import logging
import math
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ._constraints import SEED, Integer, check_params
from ._engine_registry import ENGINES, get_engine
from .objectives import OBJECTIVES

#: the RunSpec fields a search may set; every other engine dimension goes into ``engine_params``
_SPEC_FIELDS = ("learning_rate", "num_leaves", "leaf_values")


@dataclass(frozen=True)
class Dimension:
    """One searched parameter: integers or floats from ``low`` to ``high`` (log-uniform with ``log``), or
    one of ``choices``. ``default`` is the value of the untuned configuration (trial 0)."""

    name: str
    low: float | None = None
    high: float | None = None
    log: bool = False
    choices: tuple | None = None
    default: object = None
    #: engines whose runs search this dimension (None: every engine)
    engines: tuple | None = None
    #: (name, value or tuple of values): searched only when that other parameter (a field of the configuration, one of
    #: its engine or objective parameters, or a dimension drawn before) has that value, None for one not set (e.g.
    #: no bagging with exact leaves; CatBoost's depth for its symmetric and depth-wise trees)
    only_if: tuple | None = None

    def __post_init__(self):
        if self.choices is not None:
            if not self.choices:
                raise ValueError(f"search space: {self.name}: choices must not be empty")
            return
        if self.low is None or self.high is None or not self.low < self.high:
            raise ValueError(f"search space: {self.name}: needs low < high (or choices), got {self.low}, {self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"search space: {self.name}: a log-uniform range needs low > 0, got {self.low}")

    @property
    def integer(self) -> bool:
        return isinstance(self.low, int) and isinstance(self.high, int) and not isinstance(self.low, bool)

    def suggest(self, trial):
        """This dimension's value for an Optuna ``trial``."""
        if self.choices is not None:
            return trial.suggest_categorical(self.name, list(self.choices))
        if self.integer:
            return trial.suggest_int(self.name, self.low, self.high, log=self.log)
        return trial.suggest_float(self.name, float(self.low), float(self.high), log=self.log)

    def applies(self, drawn: dict, spec) -> bool:
        """Whether the dimension is searched for ``spec``, given the values ``drawn`` so far (:attr:`only_if`)."""
        if self.only_if is None:
            return True
        name, values = self.only_if
        given = {**spec.objective_params, **spec.engine_params, **drawn}
        value = given[name] if name in given else getattr(spec, name, None)
        return value in values if isinstance(values, tuple) else value == values

    def contains(self, value) -> bool:
        if self.choices is not None:
            return value in self.choices
        return isinstance(value, (int, float)) and self.low <= value <= self.high

    def describe(self) -> str:
        """E.g. ``learning_rate: log-uniform 0.01-0.3``, ``top_k: one of 5, 10, 20, None``."""
        if self.choices is not None:
            return f"{self.name}: one of {', '.join(map(str, self.choices))}"
        kind = ("integer" if self.integer else "uniform") if not self.log else (
            "log-uniform integer" if self.integer else "log-uniform")
        condition = ""
        if self.only_if:
            name, values = self.only_if
            shown = [str(v) for v in (values if isinstance(values, tuple) else (values,)) if v is not None]
            condition = f" (when {name} is {' or '.join(shown)})"
        return f"{self.name}: {kind} {self.low:g}-{self.high:g}{condition}"


#: the engines' tree parameters, as each engine declares them (:attr:`plboost._engine_registry.Engine.search_space`)
ENGINE_SPACES = {name: tuple(Dimension(dimension, **fields) for dimension, fields in engine.search_space.items())
                 for name, engine in ENGINES.items()}

#: each objective's own parameters: plboost's, declared by each objective class (``search_space``), and the
#: engines' ranking objectives'
OBJECTIVE_SPACES = {
    **{name: tuple(Dimension(dimension, **fields) for dimension, fields in cls.search_space.items())
       for name, cls in OBJECTIVES.items()},
    **{objective: tuple(Dimension(dimension, **fields)
                        for dimension, fields in engine.builtin_search_spaces.get(objective, {}).items())
       for engine in ENGINES.values() for objective in engine.builtin_objectives},
}


@dataclass(frozen=True)
class SearchSpace:
    """The dimensions searched for one configuration: the engine's and the objective's."""

    engine: tuple
    objective: tuple

    @property
    def dimensions(self) -> tuple:
        return self.engine + self.objective

    def describe(self) -> list[str]:
        return [d.describe() for d in self.dimensions]

    def sample(self, trial, spec) -> dict:
        """A trial's parameters: the objective's dimensions first, then the engine's, each conditional one
        only when its condition holds (given the values drawn so far, else the spec's)."""
        params = {}
        for dimension in self.objective + self.engine:
            if dimension.applies(params, spec):
                params[dimension.name] = dimension.suggest(trial)
        return params

    def defaults(self, spec) -> dict:
        """Trial 0: the untuned configuration's value of every dimension (the spec's own where it has one)."""
        values = {}
        for dimension in self.dimensions:
            value = getattr(spec, dimension.name) if dimension.name in _SPEC_FIELDS else dimension.default
            for candidate in (value, dimension.default):
                if dimension.contains(candidate):
                    values[dimension.name] = candidate
                    break  # a dimension without a default inside its range is drawn by the sampler
        return values


def search_space(spec, overrides: dict | None = None) -> SearchSpace:
    """The search space of ``spec``: its engine's dimensions and its objective's, less those the
    configuration fixes, with ``overrides`` (``{table: {name: Dimension or None}}``, tables named after
    engines and objectives; None drops the dimension) applied."""
    overrides = overrides or {}
    fixed = set(spec.objective_params) | set(spec.engine_params)
    canonical = get_engine(spec.engine).canonical_names()  # a dimension given under an alias is fixed too
    fixed |= {canonical.get(name, name) for name in fixed}
    if spec.objective in OBJECTIVES:  # e.g. PositionAwareListMLE's explicit position weights fix top_k
        fixed |= OBJECTIVES[spec.objective].search_fixed_by(spec.objective_params)
    if spec.leaf_values != "diagonal":
        fixed.add("leaf_values")

    def resolve(table: str, declared) -> tuple:
        dimensions = {d.name: d for d in declared if d.engines is None or spec.engine in d.engines}
        for name, dimension in overrides.get(table, {}).items():
            if dimension is None:
                dimensions.pop(name, None)
            else:
                dimensions[name] = dimension
        return tuple(d for name, d in dimensions.items() if name not in fixed)

    if spec.objective not in OBJECTIVE_SPACES:
        raise ValueError(f"no search space is declared for objective {spec.objective!r} (plboost's objectives "
                         "declare theirs in their class's search_space, the engines' in "
                         "plboost.tuning.OBJECTIVE_SPACES); give one in the TOML config's [tune.<objective>]")
    return SearchSpace(resolve(spec.engine, ENGINE_SPACES[spec.engine]),
                       resolve(spec.objective, OBJECTIVE_SPACES[spec.objective]))


def apply_params(spec, space: SearchSpace, params: dict):
    """``spec`` with a trial's ``params``: learning_rate, num_leaves and leaf_values as its fields, the other
    engine dimensions in ``engine_params``, the objective's in ``objective_params``."""
    engine_names = {d.name for d in space.engine}
    fields, engine_params, objective_params = {}, dict(spec.engine_params), dict(spec.objective_params)
    for name, value in params.items():
        if name in _SPEC_FIELDS:
            fields[name] = value
        elif name in engine_names:
            engine_params[name] = value
        else:
            objective_params[name] = value
    engine_params = get_engine(spec.engine).completed_params(engine_params)
    return replace(spec, engine_params=engine_params, objective_params=objective_params, **fields)


#: fewer trials than this per configuration are too few to compare tuned configurations by: TPE draws up to this
#: many first trials at random (``n_startup_trials``, Optuna's default; :func:`_sampler` takes
#: ``min(FEW_TRIALS, max(2, n_trials // 3))``), so a smaller budget is mostly a random search, whose luck the
#: significance tests over queries do not see
FEW_TRIALS = 10


def few_trials(n_trials: int) -> str | None:
    """The warning a table tuned with fewer than :data:`FEW_TRIALS` trials per configuration carries, or None."""
    if n_trials >= FEW_TRIALS:
        return None
    return (f"{n_trials} trial(s) per configuration is too few a budget to compare tuned configurations by: a "
            "difference, marked or not, may be the search's luck (the tests see the queries, not the search); "
            f"give --tune {FEW_TRIALS} or more")


_TUNING_CONSTRAINTS = {"n_trials": Integer(low=1), "seed": SEED, "early_stopping": Integer(low=1),
                       "pruner_startup_trials": Integer(low=0), "pruner_warmup_rounds": Integer(low=0)}


@dataclass(frozen=True)
class Tuning:
    """How :func:`plboost.experiment.compare` tunes: ``n_trials`` per configuration and split, the TPE
    ``seed`` (repeat r searches with ``seed + r``), the early stopping of every trial where the
    configuration has none, and ``overrides`` of the search spaces (see :func:`search_space`)."""

    n_trials: int
    seed: int = 0
    early_stopping: int = 30
    overrides: dict = field(default_factory=dict)
    #: Optuna's median pruner: trials before it prunes, and rounds of each trial before it may prune
    pruner_startup_trials: int = 5
    pruner_warmup_rounds: int = 10

    def __post_init__(self):
        given = {name: getattr(self, name) for name in _TUNING_CONSTRAINTS}
        for name, value in check_params(_TUNING_CONSTRAINTS, given, owner="Tuning").items():
            object.__setattr__(self, name, value)  # frozen: the checked values replace the given ones, once

    def describe(self, metric: str) -> str:
        text = (f"tuned: {self.n_trials} trial(s) of TPE (seed {self.seed}) per configuration and split, trial 0 the "
                f"untuned configuration, by validation {metric}; test metrics of the best trial")
        few = few_trials(self.n_trials)
        return f"{text}\n{few}" if few else text

    def settings(self) -> dict:
        """The budget and seeds every configuration is tuned with (part of a comparison's protocol)."""
        return {"n_trials": int(self.n_trials), "seed": int(self.seed), "early_stopping": int(self.early_stopping),
                "pruner": [self.pruner_startup_trials, self.pruner_warmup_rounds]}

    def provenance(self, space: SearchSpace) -> dict:
        return {**self.settings(), "space": space.describe()}


def import_optuna():
    """Optuna, or a ValueError saying how to install it."""
    try:
        import optuna
    except ImportError:
        raise ValueError("tuning needs Optuna: pip install 'plboost[tune]' (or pip install optuna)") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trial_logger = logging.getLogger("optuna.study._optimize")  # where Optuna logs a trial that failed
    if not any(isinstance(f, _InterruptedTrialFilter) for f in trial_logger.filters):
        trial_logger.addFilter(_InterruptedTrialFilter())
    return optuna


class _InterruptedTrialFilter(logging.Filter):
    """Keep Optuna's report of a trial ended by Ctrl-C (its traceback, 40 lines, and "failed with value None") off
    the terminal: the command says in one line that it was interrupted and how to resume."""

    def __init__(self):
        super().__init__()
        self.interrupted = False

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
            self.interrupted = True
            return False
        if self.interrupted and "failed with value" in record.getMessage():
            self.interrupted = False
            return False
        return True


def storage_url(out_dir) -> str:
    """The SQLite database of a comparison's studies: ``<out_dir>/tuning.db``."""
    path = Path(out_dir).resolve() / "tuning.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def study_name(dataset: str, split: str, configuration: str, repeat: int) -> str:
    """The study of a configuration (named by its objective, engine and key) on a split, one per repeat."""
    return f"{dataset} | {split} | {configuration} | repeat {repeat}"


def search(spec, train_trial, *, tuning: Tuning, space: SearchSpace, name: str, storage=None,
           provenance: dict | None = None, progress: bool = False, log=None):
    """Run (or continue) the study ``name`` for ``spec`` until it has ``tuning.n_trials`` trials of its own;
    return the study.

    ``spec`` is the configuration with its early stopping set. ``train_trial(trial_spec, on_round)`` trains a
    trial's configuration on the training data with early stopping on the validation data, calling
    ``on_round(round, validation score)`` after every round, and returns (validation NDCG@max(eval_at), trees
    used). The search's trials are those that ended by themselves (:func:`search_trials`: complete, pruned, or
    refused by an engine); a trial that an interruption ended (Ctrl-C, or a process killed, which leaves it
    running) is not one of them and runs again. Trial ``k`` is drawn by a sampler seeded from (seed, k) alone
    (:func:`trial_seed`), so that what it proposes depends only on the trials before it: a search interrupted
    anywhere and resumed proposes the trials an uninterrupted one does. A study in ``storage`` whose
    ``provenance`` differs is deleted and started again.
    """
    optuna = import_optuna()
    # the number of trials is not part of a study's identity: a larger --tune continues the same search
    if provenance is not None and "tuning" in provenance:
        provenance = {**provenance, "tuning": {k: v for k, v in provenance["tuning"].items() if k != "n_trials"}}
    study = _open_study(optuna, name, storage, provenance, tuning, log)
    for trial in study.trials:  # left running by a killed process; as running, TPE would still take it in
        if trial.state == optuna.trial.TrialState.RUNNING:
            study.tell(trial.number, state=optuna.trial.TrialState.FAIL)
    done = len(search_trials(study))
    if not done and not any(t.state == optuna.trial.TrialState.WAITING for t in study.trials):
        study.enqueue_trial(space.defaults(spec))  # trial 0, again where an interruption ended it
    remaining = tuning.n_trials - done
    if done and log:
        started = [t for t in study.trials if t.state != optuna.trial.TrialState.WAITING]
        interrupted = not _is_search_trial(started[-1])
        log(f"{name}: resumed with {done} of {tuning.n_trials} trials already finished"
            + (f"; {remaining} to run" if remaining > 0 else "; nothing to run")
            + (f" (trial {done}, interrupted, runs again)" if interrupted and remaining > 0 else ""))
    if remaining <= 0:
        return study
    counted = [done]

    def reseed(study, trial):
        counted[0] += _is_search_trial(trial)  # an interruption ends the process before this call
        study.sampler = _sampler(optuna, tuning, counted[0])

    study.sampler = _sampler(optuna, tuning, done)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        # a trial whose parameters an engine refuses fails alone; the search goes on
        study.optimize(_objective(optuna, spec, space, train_trial), n_trials=remaining,
                       show_progress_bar=progress, catch=_trial_errors(), callbacks=[reseed])
    return study


def trial_seed(seed: int, trial: int) -> int:
    """The seed of the sampler that draws trial ``trial`` of a search seeded ``seed``: a hash of the two
    (:class:`numpy.random.SeedSequence`), so that no trial of one seed shares its draws with a trial of another
    (``seed + trial`` would give repeat r's trial k + 1 the draws of repeat r + 1's trial k)."""
    return int(np.random.SeedSequence([int(seed), int(trial)]).generate_state(1)[0])


def _sampler(optuna, tuning: Tuning, trial: int):
    return optuna.samplers.TPESampler(seed=trial_seed(tuning.seed, trial),
                                      n_startup_trials=min(FEW_TRIALS, max(2, tuning.n_trials // 3)))


def _objective(optuna, spec, space: SearchSpace, train_trial):
    """The function Optuna calls for each trial; a trial an engine refuses is marked ``refused`` (a result of its
    parameters), which tells it from one an interruption ended."""
    metric = f"NDCG@{max(spec.eval_at)}"

    def objective(trial):
        def report(round_, value):
            trial.report(value, round_)
            if trial.should_prune():
                raise optuna.TrialPruned(f"validation {metric} {value:.4f} below the median at round {round_}")

        try:
            value, trees_used = train_trial(apply_params(spec, space, space.sample(trial, spec)), report)
        except _trial_errors() as error:
            trial.set_user_attr("refused", str(error))
            raise
        trial.set_user_attr("best_iteration", trees_used)
        return value

    return objective


def _is_search_trial(trial) -> bool:
    """Whether ``trial`` ended by itself (complete, pruned, or refused by an engine), not by an interruption."""
    state = trial.state.name
    return state in ("COMPLETE", "PRUNED") or (state == "FAIL" and "refused" in trial.user_attrs)


def search_trials(study) -> list:
    """The trials of the search, in order (trial k of the search is the list's k-th): those that ended by
    themselves; a trial that an interruption ended (Ctrl-C, or left running by a killed process) is not one."""
    return [trial for trial in study.trials if _is_search_trial(trial)]


def _trial_errors() -> tuple:
    """What a trial may raise without ending the search: a parameter an engine refuses."""
    return (ValueError, *(engine.error_type for engine in ENGINES.values() if engine.installed))


def _open_study(optuna, name, storage, provenance, tuning: Tuning, log):
    pruner = optuna.pruners.MedianPruner(n_startup_trials=tuning.pruner_startup_trials,
                                         n_warmup_steps=tuning.pruner_warmup_rounds)
    wanted = json.dumps(provenance, sort_keys=True) if provenance is not None else None
    study = optuna.create_study(storage=storage, study_name=name, direction="maximize", pruner=pruner,
                                load_if_exists=True)
    recorded = study.user_attrs.get("provenance")
    if storage is not None and study.trials and recorded != wanted:
        if log:
            log(f"{name}: the search recorded for other data, settings or versions is started again")
        optuna.delete_study(study_name=name, storage=storage)
        study = optuna.create_study(storage=storage, study_name=name, direction="maximize", pruner=pruner)
    if wanted is not None:
        study.set_user_attr("provenance", wanted)
    return study


def best_trial(study, n_trials: int) -> tuple[int, object]:
    """The best complete trial among the search's first ``n_trials`` (a study may hold more, from an earlier search
    with a larger budget), and its number in the search (:func:`search_trials`)."""
    trials = search_trials(study)[:n_trials]
    complete = [(number, t) for number, t in enumerate(trials) if t.state.name == "COMPLETE"]
    if not complete:
        raise ValueError(f"{study.study_name}: no trial completed (all {len(trials)} were pruned or failed)")
    return max(complete, key=lambda item: (item[1].value, -item[0]))


#: the columns of ``tuning.csv``
TUNING_COLUMNS = ("dataset", "split", "configuration", "repeat", "trial", "params", "validation metric",
                  "validation value", "best iteration", "seconds", "state")


def trial_rows(study, *, dataset: str, split: str, configuration: str, repeat: int, metric: str) -> list[dict]:
    """One row per trial of ``study`` (see :data:`TUNING_COLUMNS`), numbered as in the search
    (:func:`search_trials`); a trial that an interruption ended reads ``interrupted``, under the number of the
    trial that runs again in its place."""
    rows, number = [], 0
    for trial in study.trials:
        if trial.state.name == "WAITING":
            continue  # enqueued, not started
        state = trial.state.name.lower() if _is_search_trial(trial) else "interrupted"
        seconds = trial.duration.total_seconds() if trial.duration is not None else math.nan
        rows.append({"dataset": dataset, "split": split, "configuration": configuration, "repeat": repeat,
                     "trial": number, "params": json.dumps(trial.params, sort_keys=True),
                     "validation metric": metric, "validation value": trial.value,
                     "best iteration": trial.user_attrs.get("best_iteration"), "seconds": seconds, "state": state})
        number += state != "interrupted"
    return rows


def spaces_from_toml(table: dict, where: str) -> dict:
    """Search-space overrides from a TOML ``[tune]`` table: ``[tune.<engine or objective>]`` tables whose keys
    are parameter names and whose values are ``{low = .., high = .., log = true}``, ``{choices = [..]}``
    (the string "none" stands for None) or ``false`` to leave the parameter out of the search.

    >>> spaces_from_toml({"lightgbm": {"num_leaves": {"low": 15, "high": 63}, "lambda_l2": False},
    ...                   "plrank": {"top_k": {"choices": [10, "none"]}}}, "runs.toml")["plrank"]["top_k"].choices
    (10, None)
    """
    known = set(ENGINE_SPACES) | set(OBJECTIVE_SPACES)
    overrides = {}
    for name, entries in table.items():
        if name not in known:
            raise ValueError(f"{where} [tune.{name}]: not an engine or objective; known: {', '.join(sorted(known))}")
        if not isinstance(entries, dict):
            raise ValueError(f"{where} [tune.{name}]: expected a table of parameter = {{low, high}} entries")
        declared = {d.name: d for d in ENGINE_SPACES.get(name, ()) + OBJECTIVE_SPACES.get(name, ())}
        overrides[name] = {}
        for parameter, value in entries.items():
            context = f"{where} [tune.{name}] {parameter}"
            if value is False:
                overrides[name][parameter] = None
                continue
            if not isinstance(value, dict) or not (set(value) <= {"low", "high", "log", "choices", "default"}):
                raise ValueError(f"{context}: expected false, {{low = .., high = .., log = true}} or "
                                 "{choices = [..]}")
            base = declared.get(parameter)
            settings = dict(value)
            if "choices" in settings:
                settings["choices"] = tuple(None if c == "none" else c for c in settings["choices"])
            default = settings.pop("default", base.default if base else None)
            try:
                overrides[name][parameter] = Dimension(parameter, default=default,
                                                       engines=base.engines if base else None, **settings)
            except (TypeError, ValueError) as error:
                raise ValueError(f"{context}: {error}") from None
    return overrides


def load_overrides(path) -> dict:
    """The search-space overrides of a comparison's TOML config (its ``[tune]`` table; see
    :func:`spaces_from_toml`); {} when it has none."""
    from ._values import read_toml

    return spaces_from_toml(read_toml(path).get("tune", {}), str(path))
