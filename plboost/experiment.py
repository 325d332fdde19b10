"""Experiments: one run = (data, objective, engine, parameters) -> model, metrics and timings; a
comparison = many runs over the folds of a benchmark -> a table.

The driver behind ``plboost train``, ``compare`` and ``demo``. Metrics are computed by
:mod:`plboost.metrics` on the model's raw scores, with the conventions recorded next to the numbers.
"""

from __future__ import annotations

import contextlib
import csv
import difflib
import hashlib
import inspect
import json
import math
import platform
import re
import time
import tomllib
import warnings
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from . import __version__, engines, metrics
from ._params import TABLE_METRICS, check_leaf_values, import_extra, parse_assignment, split_list
from .engines import TrainedModel
from .engines.parameters import canonical_engine_params, check_engine_params
from .objectives import OBJECTIVES


@dataclass
class RunSpec:
    """What to train: objective and its parameters, engine, tree parameters, evaluation conventions."""

    objective: str = "plrank"
    objective_params: dict = field(default_factory=dict)
    engine: str = "lightgbm"
    rounds: int = 100
    learning_rate: float = 0.1
    num_leaves: int = 31
    early_stopping: int | None = None
    eval_at: tuple[int, ...] = (1, 3, 5, 10)
    engine_params: dict = field(default_factory=dict)
    seed: int = 0
    no_relevant: str = "one"
    #: ERR's maximum grade; None: the data's label scale (the largest label of the split's files, at least 1)
    g_max: int | None = None
    #: one of LEAF_VALUES: "diagonal" (the engines' leaf values) or "exact" (PLRank's exact Newton leaves,
    #: LightGBM only)
    leaf_values: str = "diagonal"
    #: repeat index: the engine's seed and the objective's own seed (where it has one) are shifted by it
    repeat: int = 0

    def __post_init__(self):
        self.eval_at = tuple(int(k) for k in self.eval_at)
        if not self.eval_at or min(self.eval_at) < 1:
            raise ValueError(f"eval_at must be positive cut-offs, got {self.eval_at}")
        for name in ("rounds", "num_leaves"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        metrics.Conventions(no_relevant=self.no_relevant, g_max=1 if self.g_max is None else self.g_max)  # validates
        check_leaf_values(self.leaf_values, self.engine, self.objective)
        if int(self.repeat) < 0:
            raise ValueError(f"repeat must be >= 0, got {self.repeat}")
        if not math.isfinite(float(self.learning_rate)):
            raise ValueError(f"learning_rate must be a finite positive number, got {self.learning_rate}")
        self.objective_params = checked_objective_params(self.objective, self.engine, self.objective_params)
        check_engine_params(self.engine, self.engine_params, objective=self.objective, eval_at=max(self.eval_at),
                            run_settings=True)
        if self.objective in engines.BUILTIN_OBJECTIVES.get(self.engine, ()):
            check_engine_params(self.engine, self.objective_params, objective=self.objective,
                                eval_at=max(self.eval_at), run_settings=True, what="parameter of " + self.objective)

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
        """
        params = ", ".join(f"{name}={_shown(value)}" for name, value in self._shown_params().items())
        engine = self.engine if self.leaf_values == "diagonal" else f"{self.engine}, {self.leaf_values} leaves"
        return f"{self.objective}({params}) [{engine}]" if params else f"{self.objective} [{engine}]"

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
        cls = OBJECTIVES.get(self.objective)
        if cls is not None:
            objective_params = cls(**self.objective_params).get_params()
            engine_params = canonical_engine_params(self.engine, self.engine_params)
        else:  # a built-in objective's parameters are engine parameters
            objective_params = {}
            engine_params = canonical_engine_params(self.engine, {**self.objective_params, **self.engine_params})
        identity = {"objective": self.objective, "objective_params": objective_params, "engine": self.engine,
                    "engine_params": engine_params, "leaf_values": self.leaf_values, "rounds": int(self.rounds),
                    "learning_rate": float(self.learning_rate), "num_leaves": int(self.num_leaves),
                    "early_stopping": self.early_stopping, "eval_at": list(self.eval_at), "seed": int(self.seed),
                    "no_relevant": self.no_relevant, "g_max": self.g_max}
        text = json.dumps(_plain(identity), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _plain(value):
    """``value`` with tuples and arrays as lists and NumPy scalars as Python ones, for comparing and hashing."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _shown(value) -> str:
    plain = _plain(value)
    return json.dumps(plain) if isinstance(plain, list) else str(value)


_BOOLEAN_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def checked_objective_params(objective: str, engine: str, params: dict) -> dict:
    """The parameters of a plboost objective, checked against its constructor before anything trains:
    unknown names are refused with the valid ones listed, booleans accept only true/false/yes/no/1/0, and
    text given for a number is refused naming the parameter. Returns them with booleans converted.

    >>> checked_objective_params("plrank", "lightgbm", {"skip_uniform_queries": "no", "top_k": 5})
    {'skip_uniform_queries': False, 'top_k': 5}
    """
    cls = OBJECTIVES.get(objective)
    if cls is None:
        for other, names in engines.BUILTIN_OBJECTIVES.items():
            if objective in names and other != engine:
                raise ValueError(f"{objective} is an objective of {other}, not {engine}: add --engine {other} "
                                 f"(or write it {objective}@{other} in compare --run)")
        return dict(params)
    signature = inspect.signature(cls.__init__).parameters
    valid = [name for name in signature if name != "self"]
    checked = {}
    for name, value in params.items():
        if name not in signature:
            close = difflib.get_close_matches(name, valid, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"unknown parameter {name!r} of {objective}{hint}; its parameters are {', '.join(valid)}")
        kinds = {part.strip() for part in str(signature[name].annotation).split("|")}
        checked[name] = _checked_value(objective, name, value, kinds)
    return checked


def _checked_value(objective: str, name: str, value, kinds: set):
    where = f"{objective} parameter {name}={value!r}"
    if value is None:
        return value
    if "bool" in kinds and not isinstance(value, bool):
        word = str(value).strip().lower()
        if word in _BOOLEAN_WORDS and not ({"int", "float"} & kinds and isinstance(value, (int, float))):
            return _BOOLEAN_WORDS[word]
        if not ({"int", "float", "str"} & kinds):
            raise ValueError(f"{where}: expected true or false (also yes/no, 1/0)")
    if isinstance(value, str) and "str" not in kinds and ({"int", "float", "bool"} & kinds):
        expected = "an integer" if "int" in kinds else "a number" if "float" in kinds else "true or false"
        raise ValueError(f"{where}: expected {expected}")
    return value


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
            "engine_params": _jsonable(self.model.engine_params),
            "evaluated_on": self.evaluated_on,
            "metrics": self.metrics,
            "conventions": self.conventions,
            "train_seconds": self.model.train_seconds,
            "rounds": self.model.rounds,
            "best_iteration": self.model.best_iteration,
            "trees_used": self.model.trees_used,
            "versions": versions(),
        }

    def save_json(self, path) -> None:
        with open(path, "w") as handle:
            json.dump(self.to_dict(), handle, indent=2)
            handle.write("\n")


def evaluation_spec(spec: RunSpec, *datasets) -> RunSpec:
    """``spec`` with ERR's ``g_max`` resolved: as given, else the largest label of ``datasets`` (those not None;
    at least 1), so that ERR follows the data's label scale (MQ2008's 0-2, MSLR's 0-4)."""
    if spec.g_max is not None:
        return spec
    largest = max((float(np.max(d.labels)) for d in datasets if d is not None and len(d.labels)), default=1.0)
    return replace(spec, g_max=max(1, int(largest)))


def evaluate_scores(scores, data, spec: RunSpec, *, per_query: bool = False) -> tuple[dict, str]:
    """Metrics of ``scores`` on ``data`` (NDCG@k and ERR@k for every k of ``spec.eval_at``, ERR, MAP); with
    ``per_query``, an array of every query's values per metric (NaN where the conventions leave it out).
    Without ``spec.g_max``, ERR's is ``data``'s largest label (see :func:`evaluation_spec`)."""
    spec = evaluation_spec(spec, data)
    result = metrics.evaluate(scores, data.labels, offsets=data.offsets, ndcg_at=spec.eval_at,
                              err_at=spec.eval_at, no_relevant=spec.no_relevant, g_max=spec.g_max,
                              per_query=per_query)
    conventions = str(result.pop("conventions"))
    if per_query:
        return {name: np.asarray(values, dtype=np.float64) for name, values in result.items()}, conventions
    return {name: float(value) for name, value in result.items()}, conventions


def run(spec: RunSpec, train, valid=None, test=None, *, progress: bool = False, on_round=None) -> RunResult:
    """Train ``spec`` on ``train`` (early stopping on ``valid``) and evaluate on ``test``.

    The data are :class:`~plboost.data.RankingData` or, read out of core, :class:`~plboost.data.OutOfCoreData`
    (trained and scored batch by batch; see :func:`plboost.data.load_splits`).

    Without ``test`` the metrics are those of ``valid``, and without either, of ``train``;
    :attr:`RunResult.evaluated_on` says which. ``on_round(round, validation NDCG)`` is called after every
    boosting round (see :func:`plboost.engines.lightgbm.train_lightgbm`).
    """
    from .data.out_of_core import predict_scores

    objective, arguments = _training_arguments(spec)
    model = engines.train(spec.engine, objective, train, valid, **arguments, progress=progress,
                          leaf_values=spec.leaf_values, on_round=on_round)
    split, data = next((name, d) for name, d in (("test", test), ("valid", valid), ("train", train))
                       if d is not None)
    evaluated = evaluation_spec(spec, train, valid, test)
    values, conventions = evaluate_scores(predict_scores(model, data), data, evaluated)
    return RunResult(spec, model, split, values, conventions)


def _training_arguments(spec: RunSpec) -> tuple[object, dict]:
    """The objective of ``spec`` and the engine's arguments for it, the same on one machine and on Dask (the
    seeds shifted by the repeat, a built-in objective's parameters among the engine's)."""
    objective, builtin_params = engines.resolve_objective(spec.objective, spec.engine, spec.seeded_objective_params)
    return objective, {"rounds": spec.rounds, "learning_rate": spec.learning_rate, "num_leaves": spec.num_leaves,
                       "early_stopping": spec.early_stopping, "eval_at": max(spec.eval_at),
                       "engine_params": {**builtin_params, **spec.engine_params}, "seed": spec.seed + spec.repeat}


#: (objective, engine, leaf values) that :func:`warm_up` has run in this process
_WARMED: set = set()


def warm_up(spec: RunSpec) -> float:
    """Train ``spec`` for two rounds on a tiny synthetic dataset, its own validation set, so that compiling (or
    loading from Numba's cache) the kernels it runs (objective, exact leaves, metrics) is not counted in the
    training time of its first real run. Returns the seconds it took: 0 when this process has run the same
    objective, engine and leaf values before."""
    from .data import make_synthetic

    kind = (spec.objective, spec.engine, spec.leaf_values)
    if kind in _WARMED:
        return 0.0
    tiny = make_synthetic(n_queries=30, n_features=4, docs_per_query=(5, 20), seed=0)
    start = time.perf_counter()
    run(replace(spec, rounds=2, early_stopping=1 if spec.early_stopping else None, engine_params={}), tiny,
        valid=tiny, test=tiny)
    _WARMED.add(kind)
    return time.perf_counter() - start


def run_dask(spec: RunSpec, client, train_sources, valid=None, test=None, *, n_partitions: int | None = None,
             load_options: dict | None = None) -> RunResult:
    """Train ``spec`` on a Dask cluster and evaluate here.

    ``train_sources`` are SVMlight files (one partition each) or one file split by query into
    ``n_partitions`` (default: the cluster's workers); ``valid`` (a path) serves XGBoost's early stopping;
    ``test`` (a path) is read here and scored with the trained model.
    """
    from .data import load_svmlight
    from .engines.dask import ranking_collections, train_dask

    check_leaf_values(spec.leaf_values, spec.engine, spec.objective, dask=True)
    options = dict(load_options or {})
    objective, arguments = _training_arguments(spec)
    workers = len(client.scheduler_info()["workers"])
    train = ranking_collections(train_sources, n_partitions=n_partitions or (None if len(train_sources) > 1
                                                                              else max(workers, 1)),
                                client=client, load_options=options)
    valid_data = (ranking_collections([valid], n_partitions=1, n_features=train.n_features, load_options=options)
                  if valid is not None else None)
    model = train_dask(spec.engine, client, objective, train, valid=valid_data, **arguments)
    evaluated_on, path = next(((name, p) for name, p in (("test", test), ("valid", valid)) if p is not None),
                              (None, None))
    if path is None:
        raise ValueError("a Dask run is evaluated on --test or --valid; give one")
    data = load_svmlight(path, n_features=train.n_features, **options)
    values, conventions = evaluate_scores(model.predict(data.X), data, spec)
    return RunResult(spec, model, evaluated_on, values, conventions)


# --------------------------------------------------------------------------------------------------
# Comparisons

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

    ``leaf_values`` is a training option, not an objective parameter. Values are read as on the command
    line (:func:`plboost._params.parse_value`); a comma inside brackets or quotes does not end one.
    """
    head, *assignments = [part.strip() for part in split_list(text)]
    objective, _, engine = head.partition("@")
    if not objective:
        raise ValueError(f"--run {text!r}: expected objective[@engine][,key=value...]")
    try:
        params = dict(parse_assignment(assignment) for assignment in assignments)
    except ValueError as error:
        raise ValueError(f"--run {text!r}: {error}") from None
    options = {key: params.pop(key) for key in ("leaf_values",) if key in params}
    return replace(defaults, objective=objective, engine=engine or defaults.engine, objective_params=params,
                   **options)


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


def read_toml(path) -> dict:
    """A TOML file as a dict; a syntax error names the file."""
    with open(path, "rb") as handle:
        try:
            return tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: {error}") from None


def _spec_fields(table: dict, where: str) -> dict:
    unknown = set(table) - _SPEC_FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(_SPEC_FIELDS)}")
    return table


@dataclass
class FoldResult:
    """One configuration trained and evaluated on one split (one repeat of it).

    ``per_query`` holds, per metric, the value of every test query (in the order of ``qids``; NaN where
    the conventions leave a query out), so that statistics over queries can be recomputed.
    """

    label: str
    split: str
    metrics: dict
    train_seconds: float
    trees_used: int
    valid_history: list
    predictions: str | None = None
    repeat: int = 0
    best_iteration: int | None = None
    qids: list | None = None
    per_query: dict | None = None

    @classmethod
    def from_dict(cls, record: dict) -> FoldResult:
        return cls(**{f.name: record.get(f.name, f.default) for f in fields(cls)})

    def brief(self) -> dict:
        """The record without the per-query values (for results.json)."""
        return {key: value for key, value in asdict(self).items() if key not in ("qids", "per_query")}


@dataclass
class PlannedRun:
    """What :func:`compare` does for one configuration, split and repeat: ``"new"`` (no record), ``"reuse"``
    (a record with the same provenance) or ``"redo"`` (a record that differs, for ``reasons``)."""

    spec: RunSpec
    split: object
    path: Path | None
    action: str
    reasons: list = field(default_factory=list)
    record: dict | None = None
    provenance: dict | None = None
    #: with tuning: the best trial's configuration, which is trained and tested, and what the search found
    trained_spec: RunSpec | None = None
    tuned: dict | None = None
    #: the protocol of the comparison that asked for the run (recorded with it; see :func:`table_protocol`)
    protocol: dict | None = None


@dataclass
class Comparison:
    """The results of :func:`compare`: one :class:`FoldResult` per configuration, split and repeat.

    ``specs`` are the configurations in table order: those of the command, then any recorded earlier in
    the same output directory for the same data. ``runs`` counts what :func:`compare` reused, redid and
    trained anew, and ``redo_reasons`` says why runs were redone.
    """

    dataset: str
    specs: list
    results: list
    conventions: str
    runs: dict = field(default_factory=dict)
    redo_reasons: dict = field(default_factory=dict)
    earlier: list = field(default_factory=list)
    #: the settings every run of the table shares unless its configuration sets its own (:func:`table_protocol`)
    protocol: dict = field(default_factory=dict)
    #: configurations recorded earlier in the output directory and left out of the table, each with why
    left_out: list = field(default_factory=list)
    #: seconds spent compiling or loading kernels before the timed runs (:func:`warm_up`), by configuration
    warm_up_seconds: dict = field(default_factory=dict)
    #: with tuning: a sentence saying how (for the header), and every trial (tuning.csv)
    tuning: str | None = None
    tuning_rows: list = field(default_factory=list)

    @property
    def labels(self) -> list[str]:
        return [spec.label for spec in self.specs]

    @property
    def metric_names(self) -> list[str]:
        return list(self.results[0].metrics) if self.results else []

    @property
    def repeats(self) -> int:
        """The largest number of repeats of a configuration on a split."""
        counts = {}
        for r in self.results:
            counts[(r.label, r.split)] = counts.get((r.label, r.split), 0) + 1
        return max(counts.values(), default=0)

    def _by_split(self, label: str) -> dict[str, list[FoldResult]]:
        runs = {}
        for r in self.results:
            if r.label == label:
                runs.setdefault(r.split, []).append(r)
        return runs

    def summary(self) -> list[dict]:
        """Per configuration: for every metric the mean over splits of the mean over repeats, its standard
        deviation over splits (``"<metric> std"``) and, with repeats, the mean over splits of the standard
        deviation over repeats (``"<metric> seed std"``); mean training seconds and trees used."""
        rows = []
        for label in self.labels:
            by_split = self._by_split(label)
            if not by_split:
                continue
            repeats = max(len(runs) for runs in by_split.values())
            row = {"configuration": label, "splits": len(by_split), "repeats": repeats}
            for name in self.metric_names:
                per_run = [np.array([r.metrics[name] for r in runs]) for runs in by_split.values()]
                split_means = np.array([values.mean() for values in per_run])
                row[name] = float(split_means.mean())
                row[f"{name} std"] = float(split_means.std(ddof=1)) if split_means.size > 1 else 0.0
                row[f"{name} seed std"] = (float(np.mean([v.std(ddof=1) for v in per_run if v.size > 1]))
                                           if repeats > 1 else None)
            every = [r for runs in by_split.values() for r in runs]
            row["seconds"] = float(np.mean([r.train_seconds for r in every]))
            row["trees"] = float(np.mean([r.trees_used for r in every]))
            rows.append(row)
        return rows

    def table(self, metric_names=TABLE_METRICS, significance=None, alpha: float = 0.05) -> str:
        """A Markdown table: mean ± std over splits per configuration (with repeats, ``/`` the std over
        seeds), a significance marker where ``significance`` (from :meth:`significance`) has one,
        training seconds and trees used."""
        from .significance import marker

        metric_names = [m for m in metric_names if m in self.metric_names]
        marks = {}
        if significance is not None and len(significance):
            chosen = significance[significance["test"] == significance["test"].iloc[0]]
            for item in chosen.itertuples():
                marks[(item.configuration, item.metric)] = marker(item.mean_difference, item.p_adjusted, alpha)
        rows = []
        for row in self.summary():
            cells = {"configuration": row["configuration"]}
            for name in metric_names:
                text = f"{row[name]:.4f}"
                if row["splits"] > 1:
                    text += f" ± {row[name + ' std']:.4f}"
                if row["repeats"] > 1:
                    text += f" / {row[name + ' seed std']:.4f}"
                mark = marks.get((row["configuration"], name), "")
                cells[name] = f"{text} {mark}" if mark else text
            cells["seconds"] = f"{row['seconds']:.2f}"
            cells["trees"] = f"{row['trees']:.0f}"
            rows.append(cells)
        return format_table(rows, ["configuration", *metric_names, "seconds", "trees"])

    def header(self) -> str:
        splits = list(dict.fromkeys(r.split for r in self.results))
        repeats = self.repeats
        where = ("at the best validation iteration (early stopping)"
                 if self.tuning or any(s.early_stopping for s in self.specs) else "after the last round")
        spread = "mean ± std over splits" + (f" / std over {repeats} seeds" if repeats > 1 else "")
        text = (f"{self.dataset}: {len(self.specs)} configuration(s) x {len(splits)} split(s) ({', '.join(splits)})"
                f"{f' x {repeats} repeats' if repeats > 1 else ''}; test metrics {where}, {spread}; "
                f"{self.conventions}")
        queries = self.test_queries()
        if queries is not None:
            count = {"one": "count as 1 in NDCG and MAP, 0 in ERR", "zero": "count as 0",
                     "exclude": "are left out of every mean"}[self.specs[0].no_relevant]
            text += (f"\n{queries[0]} test queries, {queries[1]} ({queries[1] / max(queries[0], 1):.0%}) of them "
                     f"without a relevant document (label >= 1), which {count} (--no-relevant)")
        if self.specs and self.specs[0].g_max is None:
            text += "; ERR's g_max is the data's largest label (--g-max sets it)"
        if self.tuning:
            text += f"\n{self.tuning}"
        if self.protocol:
            text += f"\nprotocol: {describe_protocol(self.protocol)}"
        if self.warm_up_seconds:
            each = ", ".join(f"{label} {seconds:.1f} s" for label, seconds in self.warm_up_seconds.items())
            text += (f"\nseconds: training time only; compiling or loading kernels before the first run took "
                     f"{sum(self.warm_up_seconds.values()):.1f} s ({each})")
        if self.earlier:
            text += (f"\n(also in the table: {len(self.earlier)} configuration(s) recorded earlier in the output "
                     f"directory for the same data under the same protocol: {', '.join(self.earlier)})")
        if self.left_out:
            text += (f"\n(left out: {len(self.left_out)} configuration(s) recorded earlier in the output directory "
                     f"for the same data: {'; '.join(self.left_out)})")
        return text

    def test_queries(self) -> tuple[int, int] | None:
        """(test queries over all splits, those without a relevant document), from the per-query values of the
        first configuration's runs (None without them). A query has no relevant document exactly when its
        whole-list ERR is 0 (or NaN, when the conventions exclude it): ERR is positive as soon as one label is
        at least 1."""
        first = {}
        for r in self.results:
            if r.per_query and "ERR" in r.per_query:
                first.setdefault(r.split, r)
        if not first:
            return None
        err = np.concatenate([np.asarray(r.per_query["ERR"], dtype=np.float64) for r in first.values()])
        return err.size, int(np.sum(~(err > 0)))

    def runs_line(self) -> str:
        """How many runs were reused, redone (and why) and trained anew, in one line."""
        counts = {action: self.runs.get(action, 0) for action in ("reuse", "redo", "new")}
        text = (f"{self.dataset_name}: {sum(counts.values())} run(s): {counts['reuse']} reused from records, "
                f"{counts['redo']} redone, {counts['new']} new")
        if self.redo_reasons:
            text += " (redone because: " + "; ".join(f"{reason} ({n})" for reason, n in self.redo_reasons.items()) + ")"
        return text

    @property
    def dataset_name(self) -> str:
        """The dataset's directory name (how result files from several machines are matched)."""
        return Path(self.dataset).name or self.dataset

    def split_means(self) -> list[dict]:
        """One entry per configuration and split: the metrics averaged over repeats (results.json)."""
        entries = []
        for label in self.labels:
            for split, runs in self._by_split(label).items():
                values = {name: float(np.mean([r.metrics[name] for r in runs])) for name in self.metric_names}
                entries.append({"label": label, "split": split, "repeats": len(runs), "metrics": values,
                                "train_seconds": float(np.mean([r.train_seconds for r in runs])),
                                "trees_used": float(np.mean([r.trees_used for r in runs]))})
        return entries

    def long_results(self):
        """One row per configuration, split and metric (mean over repeats): method, dataset, split, metric,
        value, source (the input of :func:`plboost.winning.cell_means`)."""
        import pandas as pd

        rows = [{"method": entry["label"], "dataset": self.dataset_name, "split": entry["split"], "metric": name,
                 "value": value, "source": self.dataset}
                for entry in self.split_means() for name, value in entry["metrics"].items()]
        return pd.DataFrame(rows, columns=["method", "dataset", "split", "metric", "value", "source"])

    def per_query(self):
        """Every test query's metrics, long form: dataset, split, configuration, repeat, qid, metric, value."""
        import pandas as pd

        frames = []
        for r in self.results:
            if not r.per_query:
                continue
            qids = np.asarray(r.qids)
            for name, values in r.per_query.items():
                frames.append(pd.DataFrame({"dataset": self.dataset_name, "split": r.split, "configuration": r.label,
                                            "repeat": r.repeat, "qid": qids, "metric": name,
                                            "value": np.asarray(values, dtype=np.float64)}))
        columns = ["dataset", "split", "configuration", "repeat", "qid", "metric", "value"]
        return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)

    def default_baseline(self, baseline: str | None = None) -> str | None:
        """The configuration the others are tested against: see :func:`choose_baseline`."""
        return choose_baseline(self.labels, baseline)

    def significance(self, baseline: str | None = None, *, metrics=TABLE_METRICS, n_resamples: int = 10000,
                     seed: int = 0, holm_over: str = "metric"):
        """Paired tests of every configuration against ``baseline`` over the test queries pooled across
        splits (mean over repeats per query), Holm-adjusted over ``holm_over``, with a 95% bootstrap interval
        of each difference over queries and repeats: see :func:`plboost.significance.paired_tests`. None when
        there is no baseline."""
        from .significance import paired_tests

        baseline = self.default_baseline(baseline)
        if baseline is None or len(self.labels) < 2:
            return None
        chosen = [m for m in metrics if m in self.metric_names]
        return paired_tests(self.per_query(), baseline, metrics=chosen, n_resamples=n_resamples, seed=seed,
                            holm_over=holm_over)

    def interval_table(self, significance, metric_names=TABLE_METRICS) -> str:
        """A Markdown table of every configuration's mean difference from the baseline with its interval
        (columns ``interval_low``/``interval_high`` of ``significance``), e.g. ``+0.0052 [-0.0011, +0.0117]``."""
        rows = significance[significance["test"] == significance["test"].iloc[0]]
        metric_names = [m for m in metric_names if m in set(rows["metric"])]
        cells = {}
        for item in rows.itertuples():
            cells.setdefault(item.configuration, {"configuration": item.configuration})[item.metric] = (
                f"{item.mean_difference:+.4f} [{item.interval_low:+.4f}, {item.interval_high:+.4f}]")
        return format_table(list(cells.values()), ["configuration", *metric_names])

    def save(self, directory, significance=None) -> dict:
        """Write ``results.csv`` (one row per configuration, split and repeat), ``summary.csv``,
        ``results.json``, ``per_query.csv`` and, when given, ``significance.csv``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        metric_names = self.metric_names
        with open(directory / "results.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["configuration", "dataset", "split", "repeat", *metric_names, "train_seconds",
                             "trees_used"])
            for r in self.results:
                writer.writerow([r.label, self.dataset_name, r.split, r.repeat, *(r.metrics[m] for m in metric_names),
                                 r.train_seconds, r.trees_used])
        summary = self.summary()
        with open(directory / "summary.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["configuration", "dataset", *list(summary[0])[1:]])
            writer.writeheader()
            writer.writerows({**row, "dataset": self.dataset_name} for row in summary)
        payload = {"dataset": self.dataset, "conventions": self.conventions, "versions": versions(),
                   "configurations": [{"label": s.label, **asdict(s)} for s in self.specs],
                   "results": self.split_means(), "runs": [r.brief() for r in self.results], "summary": summary}
        (directory / "results.json").write_text(json.dumps(payload, indent=2) + "\n")
        written = {name: directory / name for name in ("results.csv", "summary.csv", "results.json")}
        self.per_query().to_csv(directory / "per_query.csv", index=False)
        written["per_query.csv"] = directory / "per_query.csv"
        if significance is not None:
            significance.to_csv(directory / "significance.csv", index=False)
            written["significance.csv"] = directory / "significance.csv"
        if self.tuning_rows:
            import pandas as pd

            from .tuning import TUNING_COLUMNS

            pd.DataFrame(self.tuning_rows, columns=list(TUNING_COLUMNS)).to_csv(directory / "tuning.csv", index=False)
            written["tuning.csv"] = directory / "tuning.csv"
        return written

    def validation_curves(self) -> dict:
        """Per configuration with validation histories: (the mean validation score after each round over all its
        runs, a run that stopped early held at its best value from then on; the rounds where a run stopped)."""
        curves = {}
        for label in self.labels:
            histories = [r.valid_history for r in self.results if r.label == label and r.valid_history]
            if histories:
                longest = max(map(len, histories))
                held = [list(history) + [max(history)] * (longest - len(history)) for history in histories]
                ends = sorted({len(history) for history in histories if len(history) < longest})
                curves[label] = (np.mean(held, axis=0), np.array(ends, dtype=int))
        return curves

    def plot(self, path, metric: str = "NDCG@10") -> Path:
        """Validation ``metric`` against boosting round, one line per configuration: the mean over all its runs
        (splits and repeats), a run that stopped early held at its best value from then on (the model it keeps),
        so that every point averages the same runs; an ``x`` marks a round where a run stopped."""
        matplotlib = plotting()
        figure = matplotlib.figure.Figure(figsize=(10, 5.5))  # no pyplot: no global state, no backend switch
        axes = figure.subplots()
        colours = matplotlib.colormaps["tab20" if len(self.specs) > 10 else "tab10"]
        curves = self.validation_curves()
        for number, spec in enumerate(self.specs):
            if spec.label not in curves:
                continue
            colour = colours(number % colours.N)
            mean, ends = curves[spec.label]
            axes.plot(np.arange(1, mean.size + 1), mean, color=colour, label=spec.label)
            axes.plot(ends, mean[ends - 1], "x", color=colour, alpha=0.7)
        stopped_early = any(ends.size for _, ends in curves.values())
        runs = len({(r.split, r.repeat) for r in self.results})
        axes.set_xlabel("boosting round")
        axes.set_ylabel(f"validation {metric}, mean over {runs} run(s)")
        title = Path(self.dataset).name
        if stopped_early:
            title += "\nx: a run stopped early; from there on it counts at its best validation value"
        axes.set_title(title, fontsize=10)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        figure.tight_layout()
        path = Path(path)
        figure.savefig(path, dpi=120)
        return path


def plotting():
    """matplotlib with its :mod:`matplotlib.figure`, or :class:`plboost._params.MissingExtra` saying how to
    install it (call before a long comparison whose plot is wanted)."""
    import_extra("matplotlib.figure", "plotting", "'plboost[plot]'")
    import matplotlib

    return matplotlib


#: the configuration the others are tested against, when present
DEFAULT_BASELINE = "lambdarank [lightgbm]"


def choose_baseline(labels, baseline: str | None = None) -> str | None:
    """The configuration of ``labels`` to test the others against: ``baseline`` (a label, or an objective
    name that names exactly one configuration), else :data:`DEFAULT_BASELINE` when present, else None.

    >>> choose_baseline(["plrank [lightgbm]", "rank:ndcg [xgboost]"], "rank:ndcg")
    'rank:ndcg [xgboost]'
    """
    labels = list(labels)
    if baseline is None:
        return DEFAULT_BASELINE if DEFAULT_BASELINE in labels else None
    if baseline in labels:
        return baseline
    matches = [label for label in labels if label.split(" ")[0].split("(")[0] == baseline]
    if len(matches) == 1:
        return matches[0]
    raise ValueError(f"--baseline {baseline!r} names {'several' if matches else 'no'} configuration(s); give one "
                     f"of: {'; '.join(matches or labels)}")


def compare(specs, layout, *, splits=None, repeats: int = 1, out_dir=None, resume=True, progress=False, log=None,
            load_options=None, tune=None) -> Comparison:
    """Train every configuration of ``specs`` on every split of ``layout`` and evaluate on its test file.

    Parameters
    ----------
    specs : list of RunSpec
        The configurations; their evaluation conventions must agree.
    layout : plboost.data.layouts.Layout
        The benchmark (see :func:`plboost.data.layouts.find_layout`).
    splits : list of str, optional
        Names of the splits to use (e.g. ``["Fold1", "Fold2"]``); default all.
    repeats : int
        Train each configuration on each split this many times, repeat ``r`` with the engine's seed and the
        objective's seed (where it has one) shifted by ``r``.
    out_dir : path, optional
        Where each run's record (``runs/<objective>_<engine>_<key>/<split>.json``, see :func:`record_path_of`) and test
        predictions (``.npy``) are kept. With ``resume``, a run whose record has the same provenance (data
        contents, configuration, versions) is reused; any other record is replaced by a new run. Runs
        recorded there earlier for the same data and evaluation conventions, under configurations not in
        ``specs``, join the comparison when they were made under its protocol (:func:`table_protocol`: rounds,
        early stopping, learning rate and leaves unless a configuration sets its own, seed, repeats, tuning
        budget and seed, metric settings); the others are named in :attr:`Comparison.left_out` and the header.
    log : callable, optional
        Called with a line of text after each run.
    load_options : dict, optional
        Options for :func:`plboost.data.load_splits` (e.g. ``cache``, ``progress``; ``out_of_core`` True, False or
        None to read the files out of core, in memory, or as the memory available allows, and
        ``memory_budget_bytes``).
    tune : plboost.tuning.Tuning, optional
        Tune every configuration on every split with the same budget before testing it (see
        :mod:`plboost.tuning`); the test file of a split is read only after all its searches ended.
    """
    from .data import load_splits

    specs, chosen = _checked_comparison(specs, layout, splits, repeats)
    spaces = _check_tuning(tune, specs, chosen, layout)
    protocol = table_protocol(specs, repeats, tune)
    planned = plan_runs(specs, chosen, out_dir, repeats=repeats, resume=resume, tune=tune, spaces=spaces,
                        protocol=protocol)
    dataset_name = Path(layout.directory).name or str(layout.directory)
    results, conventions, tuning_rows, warm = [], "", [], {}
    for split in chosen:
        items = [p for p in planned if p.split is split]
        data = None
        if tune is not None:
            data = _search_split(items, split, tune, spaces, out_dir, dataset_name, tuning_rows,
                                 load_options=load_options, progress=progress, log=log)
        for item in items:
            where = f"{split.name} {item.spec.label}" + (f" repeat {item.spec.repeat}" if repeats > 1 else "")
            if item.action == "reuse":
                results.append(replace(FoldResult.from_dict(item.record), label=item.spec.label))
                conventions = item.record["conventions"]
                if log:
                    log(f"{where}: reused ({item.path})")
                continue
            if data is None:
                data = load_splits(split.train, split.valid, split.test, **(load_options or {}))
            warm[item.spec.label] = warm.get(item.spec.label, 0.0) + warm_up(item.trained_spec or item.spec)
            fold, conventions = _run_and_record(item, *data, progress=progress)
            results.append(fold)
            if log:
                redone = f" (redone: {', '.join(item.reasons)})" if item.action == "redo" else ""
                log(f"{where}: NDCG@10 {fold.metrics.get('NDCG@10', float('nan')):.4f}, "
                    f"{_count(fold.trees_used, 'tree')}, {fold.train_seconds:.1f} s{redone}")
    comparison = Comparison(str(layout.directory), specs, results, conventions, tuning_rows=tuning_rows,
                            tuning=None if tune is None else tune.describe(f"NDCG@{max(specs[0].eval_at)}"),
                            protocol=protocol, warm_up_seconds={k: v for k, v in warm.items() if v > 0})
    for item in planned:
        comparison.runs[item.action] = comparison.runs.get(item.action, 0) + 1
        for reason in item.reasons:
            key = reason.split(" (")[0] if "file" in reason else reason
            comparison.redo_reasons[key] = comparison.redo_reasons.get(key, 0) + 1
    if out_dir is not None:
        _add_earlier_runs(comparison, out_dir, chosen, planned, log)
    return comparison


def dataset_outputs(layouts, out_dir=None) -> list[tuple[str, Path | None]]:
    """For a comparison over several datasets: each one's name (its directory's, by which results are matched
    across datasets, so two alike are refused) and output directory (``out_dir``, or with several datasets its
    subdirectory of that name; None without ``out_dir``)."""
    names = [Path(layout.directory).name for layout in layouts]
    if len(set(names)) != len(names):
        raise ValueError(f"two datasets have the same directory name ({', '.join(names)}); results are matched "
                         "by it")
    if out_dir is None:
        return [(name, None) for name in names]
    return [(name, Path(out_dir) / name if len(names) > 1 else Path(out_dir)) for name in names]


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


def _check_tuning(tune, specs, splits, layout) -> dict | None:
    """The search space of every configuration, or None without tuning; refuses splits without validation."""
    if tune is None:
        return None
    from .tuning import import_optuna, search_space

    import_optuna()
    missing = [split.name for split in splits if split.valid is None]
    if missing:
        raise ValueError(f"tuning needs a validation file for every split; {layout.directory} has none for "
                         f"{', '.join(missing)} (the search must not see the test file)")
    return {spec.label: search_space(spec, tune.overrides) for spec in specs}


def _search_split(items, split, tune, spaces, out_dir, dataset_name, tuning_rows, *, load_options, progress, log):
    """Search every configuration of ``items`` on ``split`` (training and validation files only), set each
    item's ``trained_spec`` to its best trial, then load the test file: returns (train, valid, test)."""
    from .data import load_splits
    from .tuning import apply_params, best_trial, search, storage_url, study_name, trial_rows

    todo = [item for item in items if item.action != "reuse"]
    storage = storage_url(out_dir) if out_dir is not None else None
    train = valid = None
    for item in items:
        spec = _tuning_spec(item.spec, tune)
        name = study_name(dataset_name, split.name, f"{spec.objective} [{spec.engine}] #{spec.key}", spec.repeat)
        metric = f"NDCG@{max(spec.eval_at)}"
        if item in todo:
            if train is None:
                train, valid = load_splits(split.train, split.valid, **(load_options or {}))
            if log:
                log(f"{split.name} {spec.label}: searching, {tune.n_trials} trial(s)")
            seeded = replace(tune, seed=tune.seed + spec.repeat)
            study = search(spec, train, valid, tuning=seeded, space=spaces[spec.label], name=name, storage=storage,
                           provenance=item.provenance, progress=progress, log=log)
            best = best_trial(study, tune.n_trials)
            item.trained_spec = apply_params(spec, spaces[spec.label], best.params)
            item.tuned = {"params": best.params, "trial": best.number, "validation": best.value, "metric": metric}
        elif storage is not None:
            study = _load_study(name, storage)
            if study is None:
                continue
        tuning_rows += trial_rows(study, dataset=dataset_name, split=split.name, configuration=spec.label,
                                  repeat=spec.repeat, metric=f"validation {metric}")
    if train is None:
        return None
    (test,) = load_splits(split.test, **(load_options or {}))
    return train, valid, _with_width(test, train.n_features)


def _tuning_spec(spec: RunSpec, tune) -> RunSpec:
    return spec if spec.early_stopping else replace(spec, early_stopping=tune.early_stopping)


def _load_study(name, storage):
    from .tuning import import_optuna

    optuna = import_optuna()
    try:
        return optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        return None


def _with_width(data, width: int):
    """``data`` with exactly ``width`` feature columns: widened with zeros, or cut where it has features the
    training files lack (all-zero columns of the training data, which no tree splits on)."""
    if data.n_features <= width:
        return data.widen(width)
    from .data import OutOfCoreData, RankingData

    if isinstance(data, OutOfCoreData):
        return data.with_width(width)

    return RankingData(data.X[:, :width], data.labels, data.qids, data.offsets, data.source)


def _checked_comparison(specs, layout, splits, repeats):
    specs = list(specs)
    if not specs:
        raise ValueError("nothing to compare: give at least one configuration")
    first = {}
    for number, spec in enumerate(specs, 1):
        earlier = first.setdefault(spec.key, (number, spec.label))
        if earlier[0] != number:
            raise ValueError(f"configuration #{number} ({spec.label}) is configuration #{earlier[0]} ({earlier[1]}) "
                             "again: the same objective, parameters (defaults included) and settings; give it once")
    if len({s.label for s in specs}) != len(specs):
        raise ValueError("two configurations have the same label; give them different parameters or engines")
    if len({(s.no_relevant, s.g_max, s.eval_at) for s in specs}) > 1:
        raise ValueError("all configurations of a comparison must use the same evaluation conventions")
    if int(repeats) < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for spec in specs:  # unknown names and bad parameters fail now, not after hours of training
        engines.resolve_objective(spec.objective, spec.engine, spec.objective_params)
    chosen = list(layout.splits)
    if splits:
        known = {s.name: s for s in layout.splits}
        missing = [name for name in splits if name not in known]
        if missing:
            raise ValueError(f"unknown splits {missing}; {layout.directory} has {sorted(known)}")
        chosen = [known[name] for name in splits]
    return specs, chosen


def plan_runs(specs, splits, out_dir=None, *, repeats: int = 1, resume: bool = True, tune=None,
              spaces=None, protocol=None) -> list[PlannedRun]:
    """For every split, configuration and repeat, whether :func:`compare` will reuse its record in
    ``out_dir``, redo it (the record's provenance differs, it cannot be read, or ``resume`` is off) or run
    it anew. An unreadable record is named in a warning. With ``tune`` (and the ``spaces`` of the
    configurations), the tuning settings and search space are part of the provenance."""
    from .records import UnreadableRecord, data_provenance, read_record, stale_reasons

    planned = []
    for split in splits:
        data = data_provenance(split) if out_dir is not None else None
        for spec in specs:
            for repeat in range(int(repeats)):
                spec_r = replace(spec, repeat=repeat)
                if out_dir is None:
                    provenance = None if tune is None else {"tuning": tune.provenance(spaces[spec.label])}
                    planned.append(PlannedRun(spec_r, split, None, "new", provenance=provenance))
                    continue
                path = record_path_of(out_dir, spec, split.name, repeat)
                wanted = run_provenance(spec_r, data)
                if tune is not None:
                    wanted["tuning"] = tune.provenance(spaces[spec.label])
                item = PlannedRun(spec_r, split, path, "new", provenance=wanted, protocol=protocol)
                planned.append(item)
                if not path.exists():
                    continue
                try:
                    record = read_record(path)
                except UnreadableRecord as error:
                    warnings.warn(f"{error}; the run is recomputed", RecordWarning, stacklevel=2)
                    item.action, item.reasons = "redo", ["unreadable record"]
                    continue
                reasons = stale_reasons(record.get("provenance"), wanted)
                if not resume:
                    reasons = ["--no-resume"]
                item.action, item.reasons = ("redo", reasons) if reasons else ("reuse", [])
                item.record = None if reasons else record
    return planned


class RecordWarning(UserWarning):
    """A run record in a comparison's output directory cannot be used; the run is recomputed."""


def run_provenance(spec: RunSpec, data: dict) -> dict:
    """Everything that determines the result of ``spec`` on a split (see :mod:`plboost.records`)."""
    from .records import normalized, package_versions

    return {"data": data, "spec": normalized(asdict(spec)), "versions": package_versions()}


def _run_and_record(item: PlannedRun, train, valid, test, *, progress: bool) -> tuple[FoldResult, str]:
    from .data.out_of_core import predict_scores
    from .records import normalized, save_array_atomic, write_json_atomic

    result = run(item.trained_spec or item.spec, train, valid, test, progress=progress)
    scores = predict_scores(result.model, test)
    per_query, _ = evaluate_scores(scores, test, evaluation_spec(item.spec, train, valid, test), per_query=True)
    fold = FoldResult(item.spec.label, item.split.name, result.metrics, result.model.train_seconds,
                      result.model.trees_used, [float(v) for v in result.model.valid_history],
                      repeat=item.spec.repeat, best_iteration=result.model.best_iteration,
                      qids=test.qids.tolist(), per_query={name: values.tolist() for name, values in per_query.items()})
    if item.path is not None:
        fold.predictions = str(save_array_atomic(item.path.with_suffix(".npy"), scores))
        record = {"format": 2, **asdict(fold), "conventions": result.conventions, "provenance": item.provenance,
                  "engine_params": _jsonable(result.model.engine_params),
                  "objective_params": _jsonable(result.model.objective_params), "versions": versions()}
        if item.protocol is not None:
            record["protocol"] = item.protocol
        if item.tuned is not None:
            record["tuned"] = {**item.tuned, "spec": normalized(asdict(item.trained_spec))}
        write_json_atomic(item.path, record)
    return fold, result.conventions


#: the run settings a table's configurations share unless one sets its own; with the repeats and the tuning
#: settings, the table's protocol
PROTOCOL_SETTINGS = ("rounds", "early_stopping", "learning_rate", "num_leaves", "seed", "eval_at", "no_relevant",
                     "g_max")


def table_protocol(specs, repeats: int = 1, tune=None) -> dict:
    """The protocol of a table of ``specs``: each of :data:`PROTOCOL_SETTINGS` at the value most configurations
    share (the first one's on a tie; a configuration with another value sets its own), the number of repeats, and
    the tuning budget and seeds (None without tuning). Runs recorded under another protocol never join the table.

    >>> table_protocol([RunSpec(rounds=40), RunSpec(objective="lambdarank", rounds=40, learning_rate=0.05)])["rounds"]
    40
    """
    protocol = {}
    for name in PROTOCOL_SETTINGS:
        values = [_plain(getattr(spec, name)) for spec in specs]
        protocol[name] = max(values, key=values.count)  # the first of the most common
    protocol["repeats"] = int(repeats)
    protocol["tuning"] = None if tune is None else tune.settings()
    return protocol


def describe_protocol(protocol: dict) -> str:
    """``protocol`` in words, for a table's header."""
    stopping = protocol["early_stopping"]
    words = [_count(protocol["rounds"], "round"), f"learning rate {protocol['learning_rate']:g}",
             _count(protocol["num_leaves"], "leaf").replace("leafs", "leaves"),
             f"early stopping after {stopping} rounds" if stopping else "no early stopping",
             f"seed {protocol['seed']}", _count(protocol["repeats"], "repeat")]
    tuning = protocol.get("tuning")
    if tuning:
        words.append(f"tuned with {_count(tuning['n_trials'], 'trial')} (seed {tuning['seed']})")
    return ", ".join(words) + " (unless a configuration sets its own)"


def protocol_differences(record: dict, spec: RunSpec, protocol: dict) -> list[str]:
    """How the protocol a run was recorded under (its ``protocol``, else its configuration's settings) differs
    from ``protocol``, e.g. ``["rounds 3 (this table: 40)"]``. A setting in which the run's configuration
    differed from its own protocol was its own and is part of its identity, not of the protocol."""
    recorded = record.get("protocol") or {}
    differences = []
    for name in PROTOCOL_SETTINGS:
        value = _plain(getattr(spec, name))
        if name in recorded and recorded[name] != value:
            continue  # the configuration's own setting
        if value != protocol[name]:
            differences.append(f"{name.replace('_', ' ')} {_shown(value)} (this table: {_shown(protocol[name])})")
    tuning = (record.get("provenance") or {}).get("tuning")
    tuning = None if tuning is None else {name: v for name, v in tuning.items() if name != "space"}
    if _plain(tuning) != _plain(protocol.get("tuning")):
        differences.append(f"tuning {_shown_tuning(tuning)} (this table: {_shown_tuning(protocol.get('tuning'))})")
    return differences


def _shown_tuning(tuning: dict | None) -> str:
    if not tuning:
        return "none"
    return ", ".join(f"{name.replace('_', ' ')} {_shown(value)}" for name, value in tuning.items())


def _add_earlier_runs(comparison: Comparison, out_dir, splits, planned, log) -> None:
    """Add the runs recorded in ``out_dir`` for the same data files and conventions under configurations
    that this comparison did not run, when they were made under the comparison's protocol (its first
    ``repeats`` repeats); name those left out in :attr:`Comparison.left_out`."""
    from .records import UnreadableRecord, read_record

    current = {item.path for item in planned}
    data = {item.split.name: item.provenance["data"] for item in planned}
    contents = {name: {role: (d or {}).get("content") for role, d in files.items()} for name, files in data.items()}
    earlier, found, left_out = {}, {}, {}
    asked = {spec.key for spec in comparison.specs}
    repeats = int(comparison.protocol.get("repeats", 1)) if comparison.protocol else 1
    for path in sorted((Path(out_dir) / "runs").glob("*/*.json")):
        if path in current:
            continue
        try:
            record = read_record(path)
        except UnreadableRecord as error:
            warnings.warn(f"{error}; left out", RecordWarning, stacklevel=3)
            continue
        provenance = record.get("provenance") or {}
        recorded_data = provenance.get("data") or {}
        if record.get("split") not in contents:
            continue
        if {role: (d or {}).get("content") for role, d in recorded_data.items()} != contents[record["split"]]:
            continue
        if comparison.conventions and record.get("conventions") != comparison.conventions:
            if log:
                log(f"{path}: left out (other evaluation conventions)")
            continue
        try:
            spec = RunSpec(**{**provenance["spec"], "eval_at": tuple(provenance["spec"].get("eval_at") or ())})
        except (TypeError, ValueError) as error:
            warnings.warn(f"{path}: the recorded configuration cannot be used ({error}); left out", RecordWarning,
                          stacklevel=3)
            continue
        if comparison.metric_names and sorted(record["metrics"]) != sorted(comparison.metric_names):
            warnings.warn(f"{path}: recorded with other metrics ({', '.join(record['metrics'])}); left out",
                          RecordWarning, stacklevel=3)
            continue
        if spec.key in asked:
            continue  # the records of a configuration asked for again, perhaps written another way
        differences = protocol_differences(record, spec, comparison.protocol) if comparison.protocol else []
        if differences:
            left_out.setdefault(f"{spec.label}: another protocol ({', '.join(differences)})", path.parent)
            continue
        if spec.label in comparison.labels or (spec.label in earlier and earlier[spec.label].key != spec.key):
            left_out.setdefault(f"{spec.label}: recorded under other settings with the same label", path.parent)
            continue  # the table could not tell them apart
        if record.get("repeat", 0) >= repeats:
            continue  # the table's runs are repeats 0 to repeats - 1
        earlier.setdefault(spec.label, spec)
        found.setdefault(spec.label, []).append(replace(FoldResult.from_dict(record), label=spec.label))
    for label in list(earlier):
        runs = {(result.split, result.repeat) for result in found[label]}
        missing = sorted(set(contents) - {split for split, _ in runs})
        complete = [r for r in range(repeats) if all((split, r) in runs for split in contents)]
        if missing:  # the tests pair queries: every configuration of a table covers the same splits and repeats
            warnings.warn(f"{label}: recorded earlier in {out_dir} without a usable record on {', '.join(missing)}; "
                          "left out", RecordWarning, stacklevel=3)
        elif len(complete) < repeats:
            left_out[f"{label}: another protocol (repeats {len(complete)} (this table: {repeats}))"] = (
                record_path_of(out_dir, earlier[label], "").parent)
        else:
            comparison.results += found[label]
            continue
        del earlier[label]
    comparison.specs = list(comparison.specs) + list(earlier.values())
    comparison.earlier = list(earlier)
    comparison.left_out = list(left_out)
    if log:
        for reason, folder in left_out.items():
            log(f"{folder}: left out ({reason})")


def record_path_of(out_dir, spec: RunSpec, split: str, repeat: int = 0) -> Path:
    """Where :func:`compare` keeps the record of configuration ``spec`` on ``split`` (repeat ``repeat``):
    ``runs/<objective>_<engine>_<key>/``, by :attr:`RunSpec.key`, so that the same configuration written
    another way (parameters in another order, a default given, a tuple for a list) finds its records."""
    name = f"{split}.json" if repeat == 0 else f"{split}.repeat{repeat}.json"
    folder = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{spec.objective}_{spec.engine}").strip("_") + f"_{spec.key}"
    return Path(out_dir) / "runs" / folder / name


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def format_table(rows: list[dict], columns: list[str], *, digits: int = 4) -> str:
    """A Markdown table of ``rows`` (dicts) restricted to ``columns``; floats get ``digits`` decimals."""
    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return f"{value:.{digits}f}"
        return "" if value is None else str(value)

    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(columns)]
    def line(cells):
        return "| " + " | ".join(text.ljust(w) for text, w in zip(cells, widths, strict=True)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(columns), rule] + [line(r) for r in body])


def versions() -> dict:
    """Versions of Python, plboost and the engines, for result files."""
    import lightgbm
    import numba
    import xgboost

    return {"python": platform.python_version(), "plboost": __version__, "lightgbm": lightgbm.__version__,
            "xgboost": xgboost.__version__, "numpy": np.__version__, "numba": numba.__version__}


def _jsonable(params: dict) -> dict:
    return {k: v if isinstance(v, (str, int, float, bool, list, type(None))) else repr(v)
            for k, v in params.items()}
