"""What to train: :class:`RunSpec` (a configuration), its key, and configurations read from ``--run`` text and
TOML files."""

from __future__ import annotations

import difflib
import hashlib
import inspect
import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path


from .. import engines, metrics
from .._constraints import Integer, check
from .._values import assignments, boolean_word, parse_assignment, plain_value, read_toml, split_list
from ..engines.parameters import (canonical_engine_params, check_engine_params, check_leaf_values,
                                  check_one_spelling)
from ..clicks.training import LOGGER, check_click_training
from ..engines.settings import DEFAULT_SETTINGS, TrainingSettings
from ..objectives import OBJECTIVES


@dataclass
class RunSpec:
    """What to train: objective and its parameters, engine, tree parameters, evaluation conventions."""

    objective: str = "plrank"
    objective_params: dict = field(default_factory=dict)
    engine: str = engines.DEFAULT_ENGINE
    rounds: int = DEFAULT_SETTINGS.rounds
    learning_rate: float = DEFAULT_SETTINGS.learning_rate
    num_leaves: int = DEFAULT_SETTINGS.num_leaves
    early_stopping: int | None = DEFAULT_SETTINGS.early_stopping
    eval_at: tuple[int, ...] = (1, 3, 5, 10)
    engine_params: dict = field(default_factory=dict)
    seed: int = DEFAULT_SETTINGS.seed
    no_relevant: str = "one"
    #: ERR's maximum grade; None: the data's label scale (the largest label of the split's files, at least 1)
    g_max: int | None = None
    #: one of LEAF_VALUES: "diagonal" (the engines' leaf values) or "exact" (PLRank's exact Newton leaves,
    #: LightGBM only)
    leaf_values: str = DEFAULT_SETTINGS.leaf_values
    #: repeat index: the engine's seed and the objective's own seed (where it has one) are shifted by it
    repeat: int = 0
    #: what tables call the configuration instead of :attr:`label`'s objective, parameters and engine (TOML
    #: ``name = "..."``): for configurations told apart only by engine parameters or run settings. Display only:
    #: not part of :attr:`key` or of a record's provenance
    name: str | None = None
    #: train from a click log instead of the labelled training file: an estimator's relevance estimates (``naive``,
    #: ``ips``, ``policy_aware``, ``affine``, ``doubly_robust``: an objective that takes estimates) or the log's
    #: displayed rows (``displayed``: the engines' own debiasing), or ``logger``: nothing trained, the log's own
    #: logging ranker scored (the objective and engine are its own); None trains on the labels (see
    #: :mod:`plboost.clicks.training`)
    clicks: str | None = None
    #: the estimators' examination: the click model the log records (``recorded``) or EM's, each document's
    #: relevance its own (``em``) or a function of its features (``em_features``, regression EM)
    examination: str = "recorded"

    def __post_init__(self):
        self.eval_at = tuple(check(k, Integer(low=1), "eval_at") for k in self.eval_at)
        if not self.eval_at:
            raise ValueError("eval_at must hold at least one cut-off, got none")
        settings = self.training_settings()  # checks the training settings, as every entry point does
        metrics.Conventions(no_relevant=self.no_relevant, g_max=1 if self.g_max is None else self.g_max)  # validates
        self.repeat = check(self.repeat, Integer(low=0), "repeat")
        if self.name is not None and (not isinstance(self.name, str) or not self.name.strip()):
            raise ValueError(f"name must be a non-empty text, got {self.name!r}")
        self.objective_params, checked = _checked_objective(self.objective, self.engine, self.objective_params)
        check_engine_params(self.engine, self.engine_params, objective=self.objective, eval_at=max(self.eval_at),
                            run_settings=True)
        engines.get_engine(self.engine).check_tree_settings(self.num_leaves, {**self.objective_params,
                                                                             **self.engine_params})
        if self.objective in engines.BUILTIN_OBJECTIVES.get(self.engine, ()):
            check_engine_params(self.engine, self.objective_params, objective=self.objective,
                                eval_at=max(self.eval_at), run_settings=True, what="parameter of " + self.objective)
            # both go to the engine as one set of parameters, where one of the two values would be dropped
            check_one_spelling(self.engine, {"parameter of " + self.objective: self.objective_params,
                                             "engine parameter": self.engine_params})
        self._resolve(checked, settings)
        self._check_clicks()

    def _check_clicks(self) -> None:
        """Refuse a click-log setting the run cannot train with: an examination without ``clicks``, an estimator's
        estimates for an objective of graded labels."""
        if self.clicks is None:
            if self.examination != "recorded":
                raise ValueError(f"examination={self.examination!r} is for a run trained from a click log; give "
                                 "clicks= too")
            return
        self.clicks, self.examination = check_click_training(self.clicks, self.examination)
        if self.clicks == LOGGER:
            if self.objective_params or self.engine_params:
                raise ValueError("clicks='logger' scores the click log's logging ranker as it was saved: give only "
                                 "its objective and engine, not parameters (it trains nothing)")
            return
        if self.clicks != "displayed" and not getattr(self._objective, "takes_estimates", False):
            if self.objective == "pl_rank3":
                raise ValueError(f"clicks={self.clicks!r} trains on relevance estimates, which pl_rank3 takes with "
                                 "gain=estimate and normalize=false: give both (--param gain=estimate --param "
                                 "normalize=false, or pl_rank3,gain=estimate,normalize=false in --run)")
            raise ValueError(f"clicks={self.clicks!r} trains on relevance estimates, which {self.objective} cannot "
                             "take (it needs graded labels): use pl_rank3 with gain=estimate and normalize=false, "
                             "listnet with target=estimate or lambdaloss with gain=estimate (non-negative estimates), "
                             "or clicks=displayed (the "
                             "displayed rows, clicks as labels, positions for the engines' debiasing)")

    def _resolve(self, checked, settings: TrainingSettings) -> None:
        """Resolve, once, what the run trains with: the objective (``checked``, the plboost objective the checks
        made, with its seed shifted by :attr:`repeat`; a built-in objective's name) on an engine that can train it,
        and the engine's settings (``settings``, with a built-in objective's parameters among the engine's)."""
        seeded = self.seeded_objective_params
        built = checked if checked is None or seeded == self.objective_params else type(checked)(**seeded)
        objective, builtin_params = engines.resolve_objective(self.objective, self.engine, seeded, built=built)
        check_leaf_values(self.leaf_values, self.engine, objective)
        self._checked_objective = checked
        self._objective = objective
        self._settings = self.training_settings({**builtin_params, **self.engine_params}) if builtin_params \
            else settings

    @property
    def trained_objective(self):
        """What the engine trains: the plboost objective (its seed shifted by :attr:`repeat`), or the name of the
        engine's own objective, resolved when the specification was made."""
        return self._objective

    @property
    def settings(self) -> TrainingSettings:
        """The engine's settings for the run (:meth:`training_settings` with a built-in objective's parameters among
        the engine's), resolved when the specification was made."""
        return self._settings

    def training_settings(self, engine_params: dict | None = None) -> TrainingSettings:
        """What the engine trains with: this spec's tree parameters, validation NDCG at its largest cut-off, the
        engine's seed shifted by :attr:`repeat`, and ``engine_params`` (default: the spec's own)."""
        return TrainingSettings(rounds=self.rounds, learning_rate=self.learning_rate, num_leaves=self.num_leaves,
                                early_stopping=self.early_stopping, eval_at=max(self.eval_at),
                                seed=self.seed + self.repeat, leaf_values=self.leaf_values,
                                engine_params=self.engine_params if engine_params is None else engine_params)

    @property
    def seeded_objective_params(self) -> dict:
        """The objective's parameters with its seed shifted by :attr:`repeat` (objectives with a ``seed``)."""
        cls = OBJECTIVES.get(self.objective)
        if not self.repeat or cls is None:
            return dict(self.objective_params)
        default = inspect.signature(cls.__init__).parameters.get("seed")
        if default is None:
            return dict(self.objective_params)
        return {**self.objective_params, "seed": int(self.objective_params.get("seed", default.default)) + self.repeat}

    @property
    def label(self) -> str:
        """A short name for tables, e.g. ``plrank(n_permutations=3) [lightgbm]``: the objective's parameters
        as given, in the constructor's order (a built-in objective's by name), lists and tuples alike shown as
        lists. Display only: :attr:`key` is the configuration's identity.

        >>> RunSpec(objective_params={"n_permutations": 3, "top_k": 5}).label
        'plrank(top_k=5, n_permutations=3) [lightgbm]'

        A :attr:`name`, when given, is the label as it stands.
        """
        if self.name is not None:
            return self.name
        params = ", ".join(f"{name}={shown_value(value)}" for name, value in self._shown_params().items())
        engine = self.engine if self.leaf_values == "diagonal" else f"{self.engine}, {self.leaf_values} leaves"
        label = f"{self.objective}({params}) [{engine}]" if params else f"{self.objective} [{engine}]"
        if self.clicks is None:
            return label
        if self.clicks == LOGGER:
            return f"{label}: the click log's logger"
        shown = {"em": ", EM examination", "em_features": ", regression EM examination"}.get(self.examination, "")
        return f"{label} on clicks ({self.clicks}{shown})"

    def _shown_params(self) -> dict:
        cls = OBJECTIVES.get(self.objective)
        if cls is None:
            return dict(sorted(self.objective_params.items()))
        signature = inspect.signature(cls.__init__).parameters
        return {name: self.objective_params[name] for name in signature if name in self.objective_params}

    @property
    def key(self) -> str:
        """The configuration's identity, computed from what it trains: the objective and all of its parameters
        (defaults filled in, as the objective resolves them), the engine and its parameters under their canonical
        names, leaf values and every run setting but the repeat; lists and tuples of the same values are equal.
        Two specs with the same key train the same models.

        >>> RunSpec(objective_params={"top_k": 10}).key == RunSpec().key
        True
        """
        if self._checked_objective is not None:
            objective_params = self._checked_objective.get_params()
            engine_params = canonical_engine_params(self.engine, self.engine_params)
        else:  # a built-in objective's parameters are engine parameters; at the engine's default they change nothing
            objective_params = {}
            engine_params = engines.get_engine(self.engine).without_defaults(
                self.objective, canonical_engine_params(self.engine, {**self.objective_params, **self.engine_params}))
        identity = {"objective": self.objective, "objective_params": objective_params, "engine": self.engine,
                    "engine_params": engine_params, "leaf_values": self.leaf_values, "rounds": int(self.rounds),
                    "learning_rate": float(self.learning_rate), "num_leaves": int(self.num_leaves),
                    "early_stopping": self.early_stopping, "eval_at": list(self.eval_at), "seed": int(self.seed),
                    "no_relevant": self.no_relevant, "g_max": self.g_max}
        if self.clicks is not None:  # runs on labels keep the keys they had before click logs
            identity.update(clicks=self.clicks, examination=self.examination)
        text = json.dumps(plain_value(identity), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def shown_value(value) -> str:
    """A parameter's value as tables and messages show it: lists (and tuples) as JSON, the rest as ``str``."""
    plain = plain_value(value)
    if isinstance(plain, list) and len(plain) > _SHOWN_ENTRIES:  # the first entries and the last, with the count
        return f"{json.dumps(plain[:_SHOWN_ENTRIES - 1])[:-1]}, ..., {json.dumps(plain[-1])}] ({len(plain):,} values)"
    text = json.dumps(plain) if isinstance(plain, list) else str(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text):,} characters)"


#: entries of a long list a label shows
_SHOWN_ENTRIES = 6


def checked_objective_params(objective: str, engine: str, params: dict) -> dict:
    """The parameters of ``objective``, checked before anything trains.

    A plboost objective's: unknown names refused with the valid ones listed; text and 0/1 given for a boolean
    read as the command line reads them (true/false/yes/no/1/0); then every value checked by the objective's
    declared constraints (:mod:`plboost._constraints`), with its one message. A built-in objective's: only the
    engine's parameters of that objective (LightGBM's ``lambdarank_truncation_level``, ...); any other engine
    parameter is refused, since it would train the objective unchanged under a label that says otherwise.
    Returns them with booleans converted.

    >>> checked_objective_params("plrank", "lightgbm", {"skip_uniform_queries": "no", "top_k": 5})
    {'skip_uniform_queries': False, 'top_k': 5}
    """
    return _checked_objective(objective, engine, params)[0]


def _checked_objective(objective: str, engine: str, params: dict) -> tuple[dict, object]:
    """:func:`checked_objective_params`, and the plboost objective they make (None for a built-in objective)."""
    cls = OBJECTIVES.get(objective)
    if cls is None:
        for other, names in engines.BUILTIN_OBJECTIVES.items():
            if objective in names and other != engine:
                raise ValueError(f"{objective} is an objective of {other}, not {engine}: add --engine {other} "
                                 f"(or write it {objective}@{other} in compare --run)")
        _check_builtin_objective_params(objective, engine, params)
        return dict(params), None
    valid = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
    checked = {}
    for name, value in params.items():
        if name not in valid:
            close = difflib.get_close_matches(name, valid, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"unknown parameter {name!r} of {objective}{hint}; its parameters are {', '.join(valid)}")
        checked[name] = _boolean_word(objective, name, value, cls.parameter_constraints.get(name))
    # every value checked by the one validator, now rather than when it trains; the objective built here is the one
    # the run trains, so a renamed value warns here, once
    return checked, cls(**checked)


def _boolean_word(objective: str, name: str, value, constraint):
    """``value`` as a bool where ``constraint`` takes booleans and no numbers, and ``value`` is a word
    :func:`plboost._values.boolean_word` reads (or 0/1, which the command line reads as numbers); other text for
    such a parameter is refused with the words it takes; anything else is returned as it is."""
    parts = constraint if isinstance(constraint, tuple) else (constraint,)
    kinds = {type(part).__name__ for part in parts if part is not None}
    if "Boolean" in kinds and not {"Integer", "Real", "Options", "Text"} & kinds and isinstance(value, (str, int)) \
            and not isinstance(value, bool):
        word = boolean_word(value)
        if word is None:
            raise ValueError(f"{objective} parameter {name}={value!r}: expected true or false (also yes/no, 1/0)")
        return word
    return value


def _check_builtin_objective_params(objective: str, engine: str, params: dict) -> None:
    """Refuse parameters of a built-in objective that are not the engine's parameters of its objectives."""
    if not params:
        return  # nothing to check: the engine's parameter tables are not loaded
    record = engines.get_engine(engine)
    if objective not in record.builtin_objectives:
        engines.resolve_objective(objective, engine)  # refuses the unknown name before the engine itself loads
    canonical = record.canonical_names()
    for name in params:
        if canonical.get(name, name) not in record.objective_parameters:
            close = difflib.get_close_matches(name, record.objective_parameters, n=1)
            which = f"did you mean {close[0]}?" if close else f"those are {', '.join(record.objective_parameters)}"
            raise ValueError(f"{name!r} is not a parameter of {record.label}'s {objective} ({which}); give other "
                             f"{record.label} parameters as engine parameters (--engine-param, or engine_params=)")


#: the engines' own objectives that ``compare --baselines`` adds, by engine
BASELINES = engines.BUILTIN_OBJECTIVES


_SPEC_FIELDS = {f.name for f in fields(RunSpec)}


def parse_run(text: str, defaults: RunSpec) -> RunSpec:
    """A configuration from ``objective[@engine][,key=value...]``, on top of ``defaults``.

    >>> parse_run("umart@lightgbm,window=2", RunSpec()).label
    'umart(window=2) [lightgbm]'
    >>> parse_run("rank:ndcg@xgboost", RunSpec()).label
    'rank:ndcg [xgboost]'
    >>> parse_run("plrank,n_permutations=3,leaf_values=exact", RunSpec()).label
    'plrank(n_permutations=3) [lightgbm, exact leaves]'

    ``leaf_values``, ``clicks`` and ``examination`` are run options, not objective parameters. Values are read as
    on the command line (:func:`plboost._values.parse_value`); a comma inside brackets or quotes does not end one.
    """
    head, *parts = [part.strip() for part in split_list(text)]
    objective, _, engine = head.partition("@")
    if not objective:
        raise ValueError(f"--run {text!r}: expected objective[@engine][,key=value...]")
    if "@" in (parts[-1] if parts else "") and not engine:
        last, _, meant = parts[-1].rpartition("@")
        raise ValueError(f"--run {text!r}: the engine goes after the objective's name: "
                         f"{objective}@{meant},{','.join([*parts[:-1], last])}")
    try:
        params = assignments((parse_assignment(part) for part in parts), "parameter")
    except ValueError as error:
        raise ValueError(f"--run {text!r}: {error}") from None
    options = {key: params.pop(key) for key in ("leaf_values", "clicks", "examination") if key in params}
    return replace(defaults, objective=objective, engine=engine or defaults.engine, objective_params=params,
                   **options)


def check_click_configurations(specs, click_log, tune=None) -> None:
    """Refuse a click log that no configuration of ``specs`` trains from, configurations from clicks without one,
    and tuning them (not offered yet)."""
    from_clicks = [spec for spec in specs if spec.clicks is not None]
    if click_log is None:
        if from_clicks:
            raise ValueError(f"{from_clicks[0].label} trains from a click log (clicks={from_clicks[0].clicks}); give "
                             "one (compare --click-log DIR, click_log=)")
        return
    if not from_clicks:
        raise ValueError(f"a click log is given ({click_log}), but no configuration trains from it: give one with "
                         "clicks=, e.g. --run pl_rank3,gain=estimate,normalize=false,clicks=policy_aware")
    if tune is not None:
        raise ValueError("tuning configurations that train from a click log is not offered yet; leave out --tune")


def with_baselines(specs, defaults: RunSpec) -> list[RunSpec]:
    """``specs`` and, after them, the engines' own objectives (:data:`BASELINES`) of ``defaults.engine`` and of
    every engine in ``specs``, trained with the settings of ``defaults`` and the engines' leaf values; a baseline
    already in ``specs`` is not added again."""
    specs = list(specs)
    labels, keys = {spec.label for spec in specs}, {spec.key for spec in specs}
    baselines = [replace(defaults, objective=name, engine=engine, objective_params={}, leaf_values="diagonal")
                 for engine in sorted({spec.engine for spec in specs} | {defaults.engine})
                 for name in BASELINES[engine]]
    return specs + [spec for spec in baselines if spec.label not in labels and spec.key not in keys]


def load_config(path, defaults: RunSpec) -> list[RunSpec]:
    """Configurations from a TOML file: a ``[defaults]`` table of RunSpec fields, then ``[[run]]`` tables
    with ``objective``, optional ``engine``, ``params`` (objective parameters) and any RunSpec field.

    Example::

        [defaults]
        rounds = 1000
        early_stopping = 50

        [[run]]
        objective = "plrank"
        params = { top_k = 10, n_permutations = 3 }

        [[run]]
        objective = "rank:ndcg"
        engine = "xgboost"
    """
    path = Path(path)
    document = read_toml(path)
    unknown = set(document) - {"defaults", "run", "tune"}
    if unknown:
        raise ValueError(f"{path}: unknown tables {sorted(unknown)}; expected [defaults], [[run]] and [tune.*] "
                         "(search spaces, see plboost.tuning.spaces_from_toml)")
    base = _configured(defaults, document.get("defaults", {}), f"{path} [defaults]")
    runs = document.get("run", [])
    if not runs:
        raise ValueError(f"{path}: no [[run]] tables")
    specs = []
    for number, table in enumerate(runs, 1):
        table = dict(table)
        where = f"{path} [[run]] #{number}"
        if "objective" not in table:
            raise ValueError(f"{where}: missing 'objective'")
        params = table.pop("params", {})
        specs.append(_configured(base, {**table, "objective_params": dict(params)}, where))
    return specs


def _configured(spec: RunSpec, table: dict, where: str) -> RunSpec:
    """``spec`` with the fields of a TOML table; a refused value names the table."""
    fields_ = _spec_fields(table, where)
    try:
        return replace(spec, **fields_)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from None


def _spec_fields(table: dict, where: str) -> dict:
    unknown = set(table) - _SPEC_FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(_SPEC_FIELDS)}")
    return table
