"""Experiments: one run = (data, objective, engine, parameters) -> model, metrics and timings; a
comparison = many runs over the folds of a benchmark -> a table.

The driver behind ``plboost train``, ``compare`` and ``demo``. Metrics are computed by
:mod:`plboost.metrics` on the model's raw scores, with the conventions recorded next to the numbers.
"""

from __future__ import annotations

import csv
import json
import platform
import re
import tomllib
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from . import __version__, engines, metrics
from .engines import TrainedModel


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
    g_max: int = 4
    #: "diagonal" (the engines' leaf values) or "exact" (PLRank's exact Newton leaves, LightGBM only)
    leaf_values: str = "diagonal"

    def __post_init__(self):
        self.eval_at = tuple(int(k) for k in self.eval_at)
        if not self.eval_at or min(self.eval_at) < 1:
            raise ValueError(f"eval_at must be positive cut-offs, got {self.eval_at}")
        for name in ("rounds", "num_leaves"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        metrics.Conventions(no_relevant=self.no_relevant, g_max=self.g_max)  # validates both
        if self.leaf_values not in ("diagonal", "exact"):
            raise ValueError(f"leaf_values must be 'diagonal' or 'exact', got {self.leaf_values!r}")

    @property
    def label(self) -> str:
        """A short name for tables, e.g. ``plrank(n_permutations=3) [lightgbm]``."""
        params = ", ".join(f"{k}={v}" for k, v in self.objective_params.items())
        engine = self.engine if self.leaf_values == "diagonal" else f"{self.engine}, {self.leaf_values} leaves"
        return f"{self.objective}({params}) [{engine}]" if params else f"{self.objective} [{engine}]"


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


def evaluate_scores(scores, data, spec: RunSpec) -> tuple[dict, str]:
    """Metrics of ``scores`` on ``data`` (NDCG@k and ERR@k for every k of ``spec.eval_at``, ERR, MAP)."""
    result = metrics.evaluate(scores, data.labels, offsets=data.offsets, ndcg_at=spec.eval_at,
                              err_at=spec.eval_at, no_relevant=spec.no_relevant, g_max=spec.g_max)
    conventions = str(result.pop("conventions"))
    return {name: float(value) for name, value in result.items()}, conventions


def run(spec: RunSpec, train, valid=None, test=None, *, progress: bool = False) -> RunResult:
    """Train ``spec`` on ``train`` (early stopping on ``valid``) and evaluate on ``test``.

    Without ``test`` the metrics are those of ``valid``, and without either, of ``train``;
    :attr:`RunResult.evaluated_on` says which.
    """
    objective, builtin_params = engines.resolve_objective(spec.objective, spec.engine, spec.objective_params)
    model = engines.train(spec.engine, objective, train, valid, rounds=spec.rounds,
                          learning_rate=spec.learning_rate, num_leaves=spec.num_leaves,
                          early_stopping=spec.early_stopping, eval_at=max(spec.eval_at),
                          engine_params={**builtin_params, **spec.engine_params}, seed=spec.seed,
                          progress=progress, leaf_values=spec.leaf_values)
    split, data = next((name, d) for name, d in (("test", test), ("valid", valid), ("train", train))
                       if d is not None)
    values, conventions = evaluate_scores(model.predict(data.X), data, spec)
    return RunResult(spec, model, split, values, conventions)


def run_dask(spec: RunSpec, client, train_sources, valid=None, test=None, *, n_partitions: int | None = None,
             load_options: dict | None = None) -> RunResult:
    """Train ``spec`` on a Dask cluster and evaluate here.

    ``train_sources`` are SVMlight files (one partition each) or one file split by query into
    ``n_partitions`` (default: the cluster's workers); ``valid`` (a path) serves XGBoost's early stopping;
    ``test`` (a path) is read here and scored with the trained model.
    """
    from .data import load_svmlight
    from .engines.dask import ranking_collections, train_dask

    if spec.leaf_values != "diagonal":
        raise ValueError("exact leaf values are not available on Dask (the leaves would be rewritten on one "
                         "machine while the workers keep their own scores)")
    options = dict(load_options or {})
    objective, builtin_params = engines.resolve_objective(spec.objective, spec.engine, spec.objective_params)
    workers = len(client.scheduler_info()["workers"])
    train = ranking_collections(train_sources, n_partitions=n_partitions or (None if len(train_sources) > 1
                                                                              else max(workers, 1)),
                                client=client, load_options=options)
    valid_data = (ranking_collections([valid], n_partitions=1, n_features=train.n_features, load_options=options)
                  if valid is not None else None)
    model = train_dask(spec.engine, client, objective, train, rounds=spec.rounds, learning_rate=spec.learning_rate,
                       num_leaves=spec.num_leaves, early_stopping=spec.early_stopping, valid=valid_data,
                       eval_at=max(spec.eval_at), engine_params={**builtin_params, **spec.engine_params},
                       seed=spec.seed)
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
#: the metrics of a comparison table, after the PLRank paper's Table 1
TABLE_METRICS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10", "ERR")
_SPEC_FIELDS = {f.name for f in fields(RunSpec)}


def parse_run(text: str, defaults: RunSpec) -> RunSpec:
    """A configuration from ``objective[@engine][,key=value...]``, on top of ``defaults``.

    >>> parse_run("umart@lightgbm,window=2", RunSpec()).label
    'umart(window=2) [lightgbm]'
    >>> parse_run("rank:ndcg@xgboost", RunSpec()).label
    'rank:ndcg [xgboost]'
    >>> parse_run("plrank,n_permutations=3,leaf_values=exact", RunSpec()).label
    'plrank(n_permutations=3) [lightgbm, exact leaves]'

    ``leaf_values`` is a training option, not an objective parameter.
    """
    head, *assignments = [part.strip() for part in text.split(",")]
    objective, _, engine = head.partition("@")
    if not objective:
        raise ValueError(f"--run {text!r}: expected objective[@engine][,key=value...]")
    params = {}
    for assignment in assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key:
            raise ValueError(f"--run {text!r}: {assignment!r} is not key=value")
        params[key.strip()] = _literal(value.strip())
    options = {key: params.pop(key) for key in ("leaf_values",) if key in params}
    return replace(defaults, objective=objective, engine=engine or defaults.engine, objective_params=params,
                   **options)


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
    with open(path, "rb") as handle:
        try:
            document = tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: {error}") from None
    unknown = set(document) - {"defaults", "run"}
    if unknown:
        raise ValueError(f"{path}: unknown tables {sorted(unknown)}; expected [defaults] and [[run]]")
    base = replace(defaults, **_spec_fields(document.get("defaults", {}), f"{path} [defaults]"))
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
        specs.append(replace(base, objective_params=dict(params), **_spec_fields(table, where)))
    return specs


def _spec_fields(table: dict, where: str) -> dict:
    unknown = set(table) - _SPEC_FIELDS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}; known: {sorted(_SPEC_FIELDS)}")
    return table


def _literal(text: str):
    lowered = {"true": True, "false": False, "none": None, "null": None}
    if text.lower() in lowered:
        return lowered[text.lower()]
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


@dataclass
class FoldResult:
    """One configuration trained and evaluated on one split."""

    label: str
    split: str
    metrics: dict
    train_seconds: float
    trees_used: int
    valid_history: list
    predictions: str | None = None

    @classmethod
    def from_dict(cls, record: dict) -> "FoldResult":
        return cls(**{f.name: record.get(f.name) for f in fields(cls)})


@dataclass
class Comparison:
    """The results of :func:`compare`: one :class:`FoldResult` per configuration and split."""

    dataset: str
    specs: list
    results: list
    conventions: str

    def summary(self) -> list[dict]:
        """Per configuration: mean and standard deviation (over splits) of every metric, time and trees."""
        rows = []
        for spec in self.specs:
            folds = [r for r in self.results if r.label == spec.label]
            row = {"configuration": spec.label, "splits": len(folds)}
            for name in folds[0].metrics:
                values = np.array([f.metrics[name] for f in folds])
                row[name] = float(values.mean())
                row[f"{name} std"] = float(values.std(ddof=1)) if values.size > 1 else 0.0
            row["seconds"] = float(np.mean([f.train_seconds for f in folds]))
            row["trees"] = float(np.mean([f.trees_used for f in folds]))
            rows.append(row)
        return rows

    def table(self, metric_names=TABLE_METRICS) -> str:
        """A Markdown table: mean ± std over splits per configuration, training seconds and trees used."""
        metric_names = [m for m in metric_names if m in self.results[0].metrics]
        rows = []
        for row in self.summary():
            cells = {"configuration": row["configuration"]}
            for name in metric_names:
                cells[name] = (f"{row[name]:.4f} ± {row[name + ' std']:.4f}" if row["splits"] > 1
                               else f"{row[name]:.4f}")
            cells["seconds"] = f"{row['seconds']:.2f}"
            cells["trees"] = f"{row['trees']:.0f}"
            rows.append(cells)
        return format_table(rows, ["configuration", *metric_names, "seconds", "trees"])

    def header(self) -> str:
        splits = sorted({r.split for r in self.results})
        return (f"{self.dataset}: {len(self.specs)} configuration(s) x {len(splits)} split(s) ({', '.join(splits)}); "
                f"test metrics, mean ± std over splits; {self.conventions}")

    @property
    def dataset_name(self) -> str:
        """The dataset's directory name (how result files from several machines are matched)."""
        return Path(self.dataset).name or self.dataset

    def long_results(self):
        """One row per configuration, split and metric: method, dataset, split, metric, value, source (the
        input of :func:`plboost.winning.cell_means`)."""
        import pandas as pd

        rows = [{"method": r.label, "dataset": self.dataset_name, "split": r.split, "metric": name, "value": value,
                 "source": self.dataset} for r in self.results for name, value in r.metrics.items()]
        return pd.DataFrame(rows, columns=["method", "dataset", "split", "metric", "value", "source"])

    def save(self, directory) -> dict:
        """Write ``results.csv`` (one row per configuration and split), ``summary.csv`` and ``results.json``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        metric_names = list(self.results[0].metrics)
        with open(directory / "results.csv", "w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["configuration", "dataset", "split", *metric_names, "train_seconds", "trees_used"])
            for r in self.results:
                writer.writerow([r.label, self.dataset_name, r.split, *(r.metrics[m] for m in metric_names),
                                 r.train_seconds, r.trees_used])
        summary = self.summary()
        with open(directory / "summary.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=["configuration", "dataset", *list(summary[0])[1:]])
            writer.writeheader()
            writer.writerows({**row, "dataset": self.dataset_name} for row in summary)
        payload = {"dataset": self.dataset, "conventions": self.conventions, "versions": versions(),
                   "configurations": [{"label": s.label, **asdict(s)} for s in self.specs],
                   "results": [asdict(r) for r in self.results], "summary": summary}
        (directory / "results.json").write_text(json.dumps(payload, indent=2) + "\n")
        return {name: directory / name for name in ("results.csv", "summary.csv", "results.json")}

    def plot(self, path, metric: str = "NDCG@10") -> Path:
        """Validation ``metric`` against boosting round, one line per configuration: the mean over splits,
        drawn while every split is still training (early stopping ends splits at different rounds)."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(8, 5))
        for spec in self.specs:
            histories = [r.valid_history for r in self.results if r.label == spec.label and r.valid_history]
            if not histories:
                continue
            common = min(len(h) for h in histories)
            mean = np.mean([h[:common] for h in histories], axis=0)
            axes.plot(np.arange(1, common + 1), mean, label=spec.label)
        splits = len({r.split for r in self.results})
        axes.set_xlabel("boosting round")
        axes.set_ylabel(f"validation {metric}, mean over {splits} split(s)")
        axes.set_title(Path(self.dataset).name)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
        figure.tight_layout()
        path = Path(path)
        figure.savefig(path, dpi=120)
        plt.close(figure)
        return path


def compare(specs, layout, *, splits=None, out_dir=None, resume=True, progress=False, log=None,
            load_options=None) -> Comparison:
    """Train every configuration of ``specs`` on every split of ``layout`` and evaluate on its test file.

    Parameters
    ----------
    specs : list of RunSpec
        The configurations; their evaluation conventions must agree.
    layout : plboost.data.layouts.Layout
        The benchmark (see :func:`plboost.data.layouts.find_layout`).
    splits : list of str, optional
        Names of the splits to use (e.g. ``["Fold1", "Fold2"]``); default all.
    out_dir : path, optional
        Where each run's record (``runs/<configuration>/<split>.json``) and test predictions (``.npy``)
        are kept. With ``resume``, a run whose record exists for the same configuration is not recomputed.
    log : callable, optional
        Called with a line of text after each run.
    load_options : dict, optional
        Options for :func:`plboost.data.load_splits` (e.g. ``cache``, ``progress``).
    """
    from .data import load_splits

    specs = list(specs)
    if not specs:
        raise ValueError("nothing to compare: give at least one configuration")
    if len({s.label for s in specs}) != len(specs):
        raise ValueError("two configurations have the same label; give them different parameters or engines")
    if len({(s.no_relevant, s.g_max, s.eval_at) for s in specs}) > 1:
        raise ValueError("all configurations of a comparison must use the same evaluation conventions")
    for spec in specs:  # unknown names and bad parameters fail now, not after hours of training
        engines.resolve_objective(spec.objective, spec.engine, spec.objective_params)
    chosen = list(layout.splits)
    if splits:
        known = {s.name: s for s in layout.splits}
        missing = [name for name in splits if name not in known]
        if missing:
            raise ValueError(f"unknown splits {missing}; {layout.directory} has {sorted(known)}")
        chosen = [known[name] for name in splits]
    results, conventions = [], ""
    for split in chosen:
        data = None
        for spec in specs:
            record_path = record_path_of(out_dir, spec.label, split.name) if out_dir is not None else None
            if resume and record_path is not None and record_path.is_file():
                record = json.loads(record_path.read_text())
                if record.get("spec") == json.loads(json.dumps(asdict(spec))):
                    results.append(FoldResult.from_dict(record))
                    conventions = record["conventions"]
                    if log:
                        log(f"{split.name} {spec.label}: done before ({record_path})")
                    continue
            if data is None:
                data = load_splits(split.train, split.valid, split.test, **(load_options or {}))
            train, valid, test = data
            result = run(spec, train, valid, test, progress=progress)
            conventions = result.conventions
            fold = FoldResult(spec.label, split.name, result.metrics, result.model.train_seconds,
                              result.model.trees_used, [float(v) for v in result.model.valid_history])
            if record_path is not None:
                record_path.parent.mkdir(parents=True, exist_ok=True)
                predictions = record_path.with_suffix(".npy")
                np.save(predictions, result.model.predict(test.X))
                fold.predictions = str(predictions)
                record = {**asdict(fold), "spec": asdict(spec), "conventions": conventions, "versions": versions()}
                record_path.write_text(json.dumps(record, indent=2) + "\n")
            results.append(fold)
            if log:
                log(f"{split.name} {spec.label}: NDCG@10 {fold.metrics.get('NDCG@10', float('nan')):.4f}, "
                    f"{fold.trees_used} trees, {fold.train_seconds:.1f} s")
    return Comparison(str(layout.directory), specs, results, conventions)


def record_path_of(out_dir, label: str, split: str) -> Path:
    """Where :func:`compare` keeps the record of configuration ``label`` on ``split``."""
    return Path(out_dir) / "runs" / re.sub(r"[^A-Za-z0-9_.=-]+", "_", label).strip("_") / f"{split}.json"


def format_table(rows: list[dict], columns: list[str], *, digits: int = 4) -> str:
    """A Markdown table of ``rows`` (dicts) restricted to ``columns``; floats get ``digits`` decimals."""
    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return f"{value:.{digits}f}"
        return "" if value is None else str(value)

    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(columns)]
    def line(cells):
        return "| " + " | ".join(text.ljust(w) for text, w in zip(cells, widths)) + " |"
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
