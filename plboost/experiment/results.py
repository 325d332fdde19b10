"""The results of a comparison as plain data: :class:`FoldResult` (one run), :class:`Comparison` (all of them,
with their summaries, per-query values and significance) and the baseline they are tested against. Rendering
lives in :mod:`plboost.experiment.reports`."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import pandas as pd

from .. import engines
from ..metrics import table_metrics
from ..significance import paired_tests
from . import reports


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
        rows = [{"method": entry["label"], "dataset": self.dataset_name, "split": entry["split"], "metric": name,
                 "value": value, "source": self.dataset}
                for entry in self.split_means() for name, value in entry["metrics"].items()]
        return pd.DataFrame(rows, columns=["method", "dataset", "split", "metric", "value", "source"])

    def per_query(self):
        """Every test query's metrics, long form: dataset, split, configuration, repeat, qid, metric, value."""
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
        return choose_baseline(self.specs, baseline)

    def significance(self, baseline: str | None = None, *, metrics=None, n_resamples: int = 10000,
                     seed: int = 0, holm_over: str = "metric"):
        """Paired tests of every configuration against ``baseline`` over the test queries pooled across
        splits (mean over repeats per query), Holm-adjusted over ``holm_over``, with a 95% bootstrap interval
        of each difference over queries and repeats: see :func:`plboost.significance.paired_tests`. None when
        there is no baseline."""
        baseline = self.default_baseline(baseline)
        if baseline is None or len(self.labels) < 2:
            return None
        chosen = table_metrics(self.metric_names) if metrics is None else [m for m in metrics
                                                                             if m in self.metric_names]
        return paired_tests(self.per_query(), baseline, metrics=chosen, n_resamples=n_resamples, seed=seed,
                            holm_over=holm_over)

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

    def table(self, metric_names=None, significance=None, alpha: float = 0.05) -> str:
        """See :func:`plboost.experiment.reports.table`."""
        return reports.table(self, metric_names, significance, alpha)

    def header(self) -> str:
        """See :func:`plboost.experiment.reports.header`."""
        return reports.header(self)

    def runs_line(self) -> str:
        """See :func:`plboost.experiment.reports.runs_line`."""
        return reports.runs_line(self)

    def save(self, directory, significance=None) -> dict:
        """See :func:`plboost.experiment.reports.save`."""
        return reports.save(self, directory, significance)

    def plot(self, path, metric: str = "NDCG@10") -> Path:
        """See :func:`plboost.experiment.reports.plot`."""
        return reports.plot(self, path, metric)

    def interval_table(self, significance, metric_names=None) -> str:
        """See :func:`plboost.experiment.reports.interval_table`."""
        return reports.interval_table(self, significance, metric_names)


#: the configuration the others are tested against, when present: the default engine's first built-in objective
#: as the engine ships it (LightGBM's lambdarank)
_BASELINE = (engines.BUILTIN_OBJECTIVES[engines.DEFAULT_ENGINE][0], engines.DEFAULT_ENGINE)
DEFAULT_BASELINE = "{} [{}]".format(*_BASELINE)


def choose_baseline(specs, baseline: str | None = None) -> str | None:
    """The label of the configuration of ``specs`` (RunSpecs) to test the others against: ``baseline`` (a label,
    or an objective name that exactly one configuration trains), else LightGBM's lambdarank with no objective
    parameters of its own (:data:`DEFAULT_BASELINE`) when present, else None. Engine parameters given to every
    configuration (``--engine-param`` with ``--baselines``) keep it the baseline; where several such lambdaranks
    differ in engine parameters, the one without any, else the first; one trained on labels before one trained
    from a click log.

    >>> from plboost.experiment.spec import RunSpec
    >>> choose_baseline([RunSpec(), RunSpec(objective="rank:ndcg", engine="xgboost")], "rank:ndcg")
    'rank:ndcg [xgboost]'
    """
    specs = list(specs)
    if baseline is None:
        default = [spec for spec in specs if (spec.objective, spec.engine) == _BASELINE
                   and not spec.objective_params and spec.leaf_values == "diagonal"]
        on_labels = [spec for spec in default if spec.clicks is None] or default  # its label is DEFAULT_BASELINE
        plain = [spec for spec in on_labels if not spec.engine_params]
        return (plain or on_labels)[0].label if default else None
    labels = [spec.label for spec in specs]
    if baseline in labels:
        return baseline
    matches = [spec.label for spec in specs if spec.objective == baseline]
    if len(matches) == 1:
        return matches[0]
    raise ValueError(f"--baseline {baseline!r} names {'several' if matches else 'no'} configuration(s); give one "
                     f"of: {'; '.join(matches or labels)}")
