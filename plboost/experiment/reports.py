"""Reports of a comparison (:class:`plboost.experiment.results.Comparison`): its header and Markdown tables,
the CSV/JSON result files and the validation plot. Each function takes the comparison as its first argument."""

from __future__ import annotations

import csv
import io
import math
import textwrap
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from .._extras import import_extra

from ..metrics import table_metrics
from .._writing import json_text, write_atomic, write_text
from ..engines.parameters import canonical_engine_params
from ..records import environment_versions
from ..significance import marker
from ..tuning import TUNING_COLUMNS


def table(comparison, metric_names=None, significance=None, alpha: float = 0.05) -> str:
    """A Markdown table: mean ± std over splits per configuration (with repeats, ``/`` the std over
    seeds), a significance marker where ``significance`` (from :meth:`significance`) has one,
    training seconds and trees used."""
    metric_names = (table_metrics(comparison.metric_names) if metric_names is None
                    else [m for m in metric_names if m in comparison.metric_names])
    marks = {}
    if significance is not None and len(significance):
        chosen = significance[significance["test"] == significance["test"].iloc[0]]
        for item in chosen.itertuples():
            marks[(item.configuration, item.metric)] = marker(item.mean_difference, item.p_adjusted, alpha)
    rows = []
    without_value = False
    for row in comparison.summary():
        cells = {"configuration": row["configuration"]}
        for name in metric_names:
            if math.isnan(row[name]):  # a split where no query counted (no_relevant="exclude")
                cells[name] = "n/a"
                without_value = True
                continue
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
    text = format_table(rows, ["configuration", *metric_names, "seconds", "trees"])
    if without_value:
        text += ("\nn/a: no value, since a split had no test query that counts in the metric (--no-relevant exclude "
                 "leaves out queries without a relevant document)")
    return text


def header(comparison) -> str:
    splits = list(dict.fromkeys(r.split for r in comparison.results))
    repeats = comparison.repeats
    where = ("at the best validation iteration (early stopping)"
             if comparison.tuning or any(s.early_stopping for s in comparison.specs) else "after the last round")
    spread = "mean ± std over splits" + (f" / std over {repeats} seeds" if repeats > 1 else "")
    text = (f"{comparison.dataset}: {len(comparison.specs)} configuration(s) x {len(splits)} split(s) "
            f"({', '.join(splits)})"
            f"{f' x {repeats} repeats' if repeats > 1 else ''}; test metrics {where}, {spread}\n"
            + textwrap.fill(f"conventions: {comparison.conventions}", 120, subsequent_indent="  "))
    queries = comparison.test_queries()
    if queries is not None:
        count = {"one": "count as 1 in NDCG and MAP, 0 in ERR", "zero": "count as 0",
                 "exclude": "are left out of every mean"}[comparison.specs[0].no_relevant]
        text += (f"\n{queries[0]} test queries, {queries[1]} ({queries[1] / max(queries[0], 1):.0%}) of them "
                 f"without a relevant document (label >= 1), which {count} (--no-relevant)")
    if comparison.specs and comparison.specs[0].g_max is None:
        text += "; ERR's g_max is the data's largest label, over every split (--g-max sets it)"
    if comparison.tuning:
        text += f"\n{comparison.tuning}"
    if comparison.protocol:
        text += f"\nprotocol: {describe_protocol(comparison.protocol)}"
        own = own_settings(comparison.specs, comparison.protocol)
        if own:
            text += f"\nown settings: {own}"
    if comparison.warm_up_seconds:
        each = ", ".join(f"{label} {seconds:.1f} s" for label, seconds in comparison.warm_up_seconds.items()
                         if seconds >= 0.05) or "all from Numba's cache"
        text += (f"\nseconds: training time only; compiling or loading kernels before the first run took "
                 f"{sum(comparison.warm_up_seconds.values()):.1f} s ({each})")
    if comparison.earlier:
        text += (f"\n(also in the table: {len(comparison.earlier)} configuration(s) recorded earlier in the output "
                 f"directory for the same data under the same protocol: {', '.join(comparison.earlier)})")
    if comparison.left_out:
        text += (f"\n(left out: {len(comparison.left_out)} configuration(s) recorded earlier in the output directory "
                 f"for the same data: {'; '.join(comparison.left_out)})")
    return text


def runs_line(comparison) -> str:
    """How many runs were reused, redone (and why) and trained anew, in one line."""
    counts = {action: comparison.runs.get(action, 0) for action in ("reuse", "redo", "new")}
    same = comparison.runs.get("same", 0)
    text = (f"{comparison.dataset_name}: {sum(counts.values()) + same} run(s): {counts['reuse']} reused from records, "
            f"{counts['redo']} redone, {counts['new']} new")
    if same:
        text += (f", {same} not trained (repeats of configurations whose repeats 0 and 1 gave the same results: "
                 "they do not depend on the seed)")
    if comparison.redo_reasons:
        reasons = "; ".join(f"{reason} ({n})" for reason, n in comparison.redo_reasons.items())
        text += f" (redone because: {reasons})"
    return text


def save(comparison, directory, significance=None) -> dict:
    """Write ``results.csv`` (one row per configuration, split and repeat), ``summary.csv``,
    ``results.json``, ``per_query.csv`` and, when given, ``significance.csv``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    metric_names = comparison.metric_names
    rows = [["configuration", "dataset", "split", "repeat", *metric_names, "train_seconds", "trees_used"]]
    rows += [[r.label, comparison.dataset_name, r.split, r.repeat, *(r.metrics[m] for m in metric_names),
              r.train_seconds, r.trees_used] for r in comparison.results]
    summary = comparison.summary()
    summary_fields = ["configuration", "dataset", *list(summary[0])[1:]]
    summary_rows = [summary_fields] + [[comparison.dataset_name if name == "dataset" else row[name]
                                        for name in summary_fields] for row in summary]
    versions = environment_versions(sorted({spec.engine for spec in comparison.specs}))
    payload = {"dataset": comparison.dataset, "conventions": comparison.conventions, "versions": versions,
               "configurations": [{"label": s.label, **asdict(s)} for s in comparison.specs],
               "results": comparison.split_means(), "runs": [r.brief() for r in comparison.results], "summary": summary}
    texts = {"results.csv": _csv_text(rows), "summary.csv": _csv_text(summary_rows),
             "results.json": json_text(payload),
             "per_query.csv": comparison.per_query().to_csv(index=False)}
    if significance is not None:
        texts["significance.csv"] = significance.to_csv(index=False)
    if comparison.tuning_rows:
        trials = pd.DataFrame(comparison.tuning_rows, columns=list(TUNING_COLUMNS))
        # an integer column, blank for trials without one (pruned, interrupted), not floats beside NaN
        texts["tuning.csv"] = trials.astype({"best iteration": "Int64"}).to_csv(index=False)
    written = {}
    for name, text in texts.items():
        written[name] = write_text(directory / name, text)
    return written


def plot(comparison, path, metric: str = "NDCG@10") -> Path:
    """Validation ``metric`` against boosting round, one line per configuration: the mean over all its runs
    (splits and repeats), a run that stopped early held at its best value from then on (the model it keeps),
    so that every point averages the same runs; an ``x`` marks a round where a run stopped."""
    matplotlib = plotting()
    figure = matplotlib.figure.Figure(figsize=(10, 5.5))  # no pyplot: no global state, no backend switch
    axes = figure.subplots()
    colours = matplotlib.colormaps["tab20" if len(comparison.specs) > 10 else "tab10"]
    curves = comparison.validation_curves()
    for number, spec in enumerate(comparison.specs):
        if spec.label not in curves:
            continue
        colour = colours(number % colours.N)
        mean, ends = curves[spec.label]
        axes.plot(np.arange(1, mean.size + 1), mean, color=colour, label=spec.label)
        axes.plot(ends, mean[ends - 1], "x", color=colour, alpha=0.7)
    stopped_early = any(ends.size for _, ends in curves.values())
    runs = len({(r.split, r.repeat) for r in comparison.results})
    axes.set_xlabel("boosting round")
    axes.set_ylabel(f"validation {metric}, mean over {runs} run(s)")
    title = Path(comparison.dataset).name
    if stopped_early:
        title += "\nx: a run stopped early; from there on it counts at its best validation value"
    axes.set_title(title, fontsize=10)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    path = Path(path)
    write_atomic(path, lambda handle: figure.savefig(handle, dpi=120, format=Path(path).suffix[1:] or "png"))
    return path


def interval_table(comparison, significance, metric_names=None) -> str:
    """A Markdown table of every configuration's mean difference from the baseline with its interval
    (columns ``interval_low``/``interval_high`` of ``significance``), e.g. ``+0.0052 [-0.0011, +0.0117]``."""
    rows = significance[significance["test"] == significance["test"].iloc[0]]
    metric_names = [m for m in (table_metrics(rows["metric"]) if metric_names is None else metric_names)
                    if m in set(rows["metric"])]
    cells = {}
    for item in rows.itertuples():
        cells.setdefault(item.configuration, {"configuration": item.configuration})[item.metric] = (
            f"{item.mean_difference:+.4f} [{item.interval_low:+.4f}, {item.interval_high:+.4f}]")
    return format_table(list(cells.values()), ["configuration", *metric_names])


def plotting():
    """matplotlib with its :mod:`matplotlib.figure`, or :class:`plboost._extras.MissingExtra` saying how to
    install it (call before a long comparison whose plot is wanted)."""
    import_extra("matplotlib.figure", "plotting", "'plboost[plot]'")
    import matplotlib

    return matplotlib


def describe_protocol(protocol: dict) -> str:
    """``protocol`` in words, for a table's header."""
    stopping = protocol["early_stopping"]
    words = [counted(protocol["rounds"], "round"), f"learning rate {protocol['learning_rate']:g}",
             counted(protocol["num_leaves"], "leaf").replace("leafs", "leaves"),
             f"early stopping after {stopping} rounds" if stopping else "no early stopping",
             f"seed {protocol['seed']}", counted(protocol["repeats"], "repeat")]
    tuning = protocol.get("tuning")
    if tuning and not stopping:  # the tuned runs stop early all the same: every trial does, the best one tested
        words[3] = f"early stopping after {tuning['early_stopping']} rounds (every tuning trial's)"
    if tuning:
        words.append(f"tuned with {counted(tuning['n_trials'], 'trial')} (seed {tuning['seed']})")
    return ", ".join(words) + " (unless a configuration sets its own)"


#: the protocol's settings a configuration may set for itself, as the header names them
_OWN_SETTINGS = ("rounds", "early_stopping", "learning_rate", "num_leaves", "seed")


def own_settings(specs, protocol: dict) -> str:
    """What a table's labels do not show: each configuration's settings that differ from the ``protocol``, and
    its engine parameters where another configuration on its engine trains without them, e.g.
    ``umart(window=2) [lightgbm]: learning rate 0.05``; "" when there are none.

    >>> from plboost.experiment import RunSpec
    >>> own_settings([RunSpec(), RunSpec(objective="lambdarank", learning_rate=0.05)],
    ...              {"rounds": 100, "early_stopping": None, "learning_rate": 0.1, "num_leaves": 31, "seed": 0})
    'lambdarank [lightgbm]: learning rate 0.05'
    """
    trained = [(spec.engine, canonical_engine_params(spec.engine, spec.engine_params)) for spec in specs]
    clauses = []
    for spec, (engine, params) in zip(specs, trained, strict=True):
        words = [f"{name.replace('_', ' ')} {getattr(spec, name)}" for name in _OWN_SETTINGS
                 if name in protocol and getattr(spec, name) != protocol[name]]
        if any(other != params for other_engine, other in trained if other_engine == engine):
            words += [f"{name}={value}" for name, value in sorted(params.items())]
        if words:
            clauses.append(f"{spec.label}: {', '.join(words)}")
    return "; ".join(clauses)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless n is 1: "1 run", "3 runs"."""
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


def _csv_text(rows) -> str:
    buffer = io.StringIO()  # a number that is not finite (no query counted) as an empty cell, as pandas writes NaN
    csv.writer(buffer).writerows([["" if isinstance(cell, float) and not math.isfinite(cell) else cell
                                   for cell in row] for row in rows])
    return buffer.getvalue()
