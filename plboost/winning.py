"""Comparing ranking methods across datasets and metrics: winning numbers.

Tax, Bockting and Hiemstra, "A cross-benchmark comparison of 87 learning to rank methods", Information
Processing & Management 51(6), 2015. For a metric and methods M_1 .. M_n evaluated on datasets
j = 1 .. m, where ``M_i(j)`` is method i's score on dataset j (the mean over the dataset's folds) and may
be missing:

.. math::

    WN_i = \\sum_{j} \\sum_{k \\ne i} 1[M_i(j) \\text{ and } M_k(j) \\text{ defined}] \\, 1[M_i(j) > M_k(j)],
    \\qquad IWN_i = \\sum_{j} \\sum_{k \\ne i} 1[M_i(j) \\text{ and } M_k(j) \\text{ defined}],

and ``NWN_i = WN_i / IWN_i``: the share of the comparisons method i could have won that it did win. A
tie is a comparison not won (by either method). IWN says how much evidence stands behind NWN, so a
method is *Pareto-optimal* when no other method has NWN and IWN both at least as large, one of them
larger. Across metrics, the cross-metric summary sums WN and IWN over the metrics and divides again.

Significant wins only. Given a table of pairwise significance (:func:`plboost.significance.pairwise_significance`
on per-query results: paired tests over the queries of a dataset, Holm-adjusted over the pairs of methods of a
dataset and metric), a win also needs ``S_{ik}(j)``, method i significantly better than method k on dataset j:

.. math::

    WN^{sig}_i = \\sum_{j} \\sum_{k \\ne i} 1[M_i(j) \\text{ and } M_k(j) \\text{ defined}] \\, 1[M_i(j) > M_k(j)]
    \\, 1[S_{ik}(j)],

while IWN is unchanged, so NWN is the share of the possible wins that are significant wins. ``M_i(j)`` is
the mean over splits of per-split metrics and ``S_{ik}`` rests on the mean over pooled queries; with splits
of unequal size the two could disagree in sign, and then neither method wins.

:func:`load_results` reads the files ``plboost compare`` writes (``results.json``, ``results.csv``,
``summary.csv``) and plain CSV tables (a row per method and dataset with a column per metric, or long
rows of method, dataset, metric, value), possibly from different runs and machines;
:func:`cell_means` averages the folds; :func:`winning_numbers` computes the tables; :func:`summarize`
does both and formats them; :func:`load_per_query` (from :mod:`plboost.significance`) reads the
``per_query.csv`` files that significance is computed from.
"""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from ._writing import write_text
from .metrics import PAPER_METRICS
from .significance import load_per_query  # noqa: F401  (re-exported: the input of significant winning numbers)
from .significance import pairwise_significance

#: the metrics summarised by default: those of the PLRank paper's table
DEFAULT_METRICS = PAPER_METRICS
CROSS_METRIC = "all metrics"

_METHOD_COLUMNS = ("configuration", "method", "label")
#: the columns of plboost's own tables (compare's results.csv and summary.csv) that are not metrics; every other
#: column of a wide table is one, whatever its name (a metric registered with plboost.register_metric included)
_NOT_METRICS = {"dataset", "split", "splits", "repeat", "repeats", "seconds", "trees", "train_seconds", "trees_used",
                "source"}
_WIDE_COLUMNS = "every column but the method, dataset and split is a metric"


def load_results(paths) -> pd.DataFrame:
    """Results of several files as one long table: method, dataset, split, metric, value, source.

    Each path is a ``results.json`` of ``plboost compare``, a directory (every ``results.json`` under it),
    or a CSV file: ``results.csv``/``summary.csv`` of ``plboost compare`` or any table with a method
    column (``configuration``, ``method`` or ``label``), a ``dataset`` column (else the name of the
    file's directory is the dataset), an optional ``split`` column, and one column per metric (every other
    column, whatever its name, but compare's own bookkeeping columns: :data:`_NOT_METRICS`, ``... std``); or a long
    table with columns ``method, dataset, metric, value`` (and optionally ``split``). Rows without a
    split are means over the dataset's folds (split ``"*"``). A (method, dataset, split, metric) given
    twice, or a method and dataset given both per split and as a mean, is an error naming the files.
    """
    frames = []
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(path.rglob("results.json"))
            if not found:
                raise ValueError(f"{path}: no results.json under this directory")
            frames += [_read_json(p) for p in found]
        elif not path.is_file():
            raise ValueError(f"{path}: no such file or directory")
        elif path.suffix == ".json":
            frames.append(_read_json(path))
        elif path.suffix == ".csv":
            frames.append(_read_csv(path))
        else:
            raise ValueError(f"{path}: expected a results.json or a .csv file of results")
    if not frames:
        raise ValueError("no result files given")
    table = pd.concat(frames, ignore_index=True)
    if table.empty:  # each file's values were left out (empty or NaN), as its warning said
        raise ValueError(f"{', '.join(map(str, paths))}: no metric value to summarize (every one is empty or NaN)")
    _check_unique(table)
    return table


def cell_means(results: pd.DataFrame) -> pd.DataFrame:
    """Mean over splits per (method, dataset, metric): columns method, dataset, metric, value, splits (the
    number of splits averaged; 0 where the file gave the mean itself)."""
    per_split = results.assign(counted=(results["split"] != "*").astype(int))
    grouped = per_split.groupby(["method", "dataset", "metric"], sort=False)
    cells = grouped.agg(value=("value", "mean"), splits=("counted", "sum")).reset_index()
    return cells


def winning_numbers(cells: pd.DataFrame, metrics=None, significant: pd.DataFrame | None = None, *,
                    untested: str = "error") -> pd.DataFrame:
    """WN, IWN and NWN per metric and method, and the cross-metric sums, with Pareto-optimal flags.

    Parameters
    ----------
    cells : DataFrame
        One value per (method, dataset, metric), as from :func:`cell_means`; missing cells are allowed.
    metrics : list of str, optional
        The metrics to summarise (default: those of :data:`DEFAULT_METRICS` present in ``cells``).
    significant : DataFrame, optional
        Pairwise significance, as from :func:`plboost.significance.pairwise_significance` (columns dataset,
        metric, configuration, other and the boolean ``better``; configurations are matched to methods by
        name): a win then counts only where ``better`` says the winner is significantly better (see the
        module docstring); IWN is unchanged. Default: every win counts.
    untested : {"error", "count"}
        A comparison of two defined cells without a row in ``significant`` (a method whose per-query results are
        not there, such as a table of results obtained elsewhere): ValueError naming it, or ``"count"``: for that
        pair every win counts, as without ``significant``; the other pairs still need significance.

    Returns a DataFrame with columns metric, method, WN, IWN, NWN (NaN when IWN is 0), pareto; the rows
    of metric :data:`CROSS_METRIC` sum WN and IWN over the chosen metrics.
    """
    available = list(dict.fromkeys(cells["metric"]))
    if metrics is None:
        metrics = [m for m in DEFAULT_METRICS if m in available]
        if not metrics:
            metrics = available
    missing = [m for m in metrics if m not in available]
    if missing:
        raise ValueError(f"no results for metric(s) {missing}; the results have {available}")
    methods = list(dict.fromkeys(cells["method"]))
    rows = []
    totals = {method: [0, 0] for method in methods}
    for metric in metrics:
        grid = (cells[cells["metric"] == metric].pivot_table(index="method", columns="dataset", values="value",
                                                             aggfunc="first")
                .reindex(methods))
        values = grid.to_numpy(dtype=float)
        beats = (None if significant is None else
                 _significant_wins(significant, metric, methods, list(grid.columns), values, untested))
        wins, ideal = _wins(values, beats)
        for method, won, could in zip(methods, wins, ideal, strict=True):
            rows.append({"metric": metric, "method": method, "WN": int(won), "IWN": int(could)})
            totals[method][0] += int(won)
            totals[method][1] += int(could)
    rows += [{"metric": CROSS_METRIC, "method": method, "WN": won, "IWN": could}
             for method, (won, could) in totals.items()]
    table = pd.DataFrame(rows)
    table["NWN"] = np.where(table["IWN"] > 0, table["WN"] / table["IWN"].where(table["IWN"] > 0, 1), np.nan)
    table["pareto"] = False
    for _, group in table.groupby("metric", sort=False):
        table.loc[group.index, "pareto"] = pareto_optimal(group["NWN"].to_numpy(), group["IWN"].to_numpy())
    return table


def _wins(values: np.ndarray, beats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per row (method) of a methods x datasets grid with NaN for missing cells: wins and possible wins.

    ``beats``, optional, methods x methods x datasets booleans: a win of method i over k on dataset j also
    needs ``beats[i, k, j]`` (significantly better); possible wins do not depend on it."""
    defined = ~np.isnan(values)
    wins = np.zeros(values.shape[0], dtype=np.int64)
    ideal = np.zeros(values.shape[0], dtype=np.int64)
    for dataset, (column, present) in enumerate(zip(values.T, defined.T, strict=True)):
        scores = column[present]
        # for each present method, the other present methods it beats (ties win nothing)
        won = scores[:, None] > scores[None, :]
        if beats is not None:
            won &= beats[np.ix_(present, present)][:, :, dataset]
        wins[present] += won.sum(axis=1)
        ideal[present] += scores.size - 1
    return wins, ideal


def _significant_wins(significant: pd.DataFrame, metric: str, methods: list, datasets: list,
                      values: np.ndarray, untested: str = "error") -> np.ndarray:
    """methods x methods x datasets: ``beats[i, k, j]`` when the pairwise table says method i is significantly
    better than method k on dataset j for ``metric``. A comparison of two defined cells (in ``values``,
    methods x datasets) without a row in the table is an error, or with ``untested="count"`` True (every win of
    that pair counts)."""
    needed_columns = ["dataset", "metric", "configuration", "other", "better"]
    lacking = [c for c in needed_columns if c not in significant.columns]
    if lacking:
        raise ValueError(f"the significance table lacks column(s) {', '.join(lacking)}; expected the output of "
                         "plboost.significance.pairwise_significance")
    rows = significant[significant["metric"] == metric]
    method_number = {method: number for number, method in enumerate(methods)}
    dataset_number = {dataset: number for number, dataset in enumerate(datasets)}
    first = rows["configuration"].map(method_number)
    second = rows["other"].map(method_number)
    where = rows["dataset"].map(dataset_number)
    known = first.notna() & second.notna() & where.notna()
    index = (first[known].astype(int), second[known].astype(int), where[known].astype(int))
    beats = np.zeros((len(methods), len(methods), len(datasets)), dtype=bool)
    tested = np.zeros_like(beats)
    beats[index] = rows.loc[known, "better"].astype(bool).to_numpy()
    tested[index] = True
    defined = ~np.isnan(values)
    needed = defined[:, None, :] & defined[None, :, :] & ~np.eye(len(methods), dtype=bool)[:, :, None]
    missing = needed & ~tested
    if untested == "count":
        return beats | missing
    if missing.any():
        i, k, j = np.argwhere(missing)[0]
        raise ValueError(f"no significance result for {methods[i]} vs {methods[k]} on {datasets[j]} ({metric}), "
                         f"nor for {int(missing.sum()) - 1} other comparison(s); counting significant wins only "
                         "needs per-query results of every method on every dataset it is compared on")
    return beats


def pareto_optimal(nwn: np.ndarray, iwn: np.ndarray) -> np.ndarray:
    """True where no other method has NWN and IWN both at least as large, one strictly (methods without
    any comparison, NWN NaN, are never optimal)."""
    nwn = np.asarray(nwn, dtype=float)
    iwn = np.asarray(iwn, dtype=float)
    optimal = ~np.isnan(nwn)
    for i in np.flatnonzero(optimal):
        others = ~np.isnan(nwn)
        others[i] = False
        dominated = others & (nwn >= nwn[i]) & (iwn >= iwn[i]) & ((nwn > nwn[i]) | (iwn > iwn[i]))
        optimal[i] = not dominated.any()
    return optimal


def summarize(results: pd.DataFrame, metrics=None, significant: pd.DataFrame | None = None, *,
              every_win_because: str | None = None,
              untested_because: str | None = None) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Fold means, winning-number table and its Markdown (:func:`cell_means`, :func:`winning_numbers`,
    :func:`format_summary`) of a long results table. With ``significant`` (a table of
    :func:`plboost.significance.pairwise_significance`) only significant wins count, and with
    ``untested_because`` too, every win counts for the pairs it has no test of (the reason, for the text); the
    Markdown starts with a sentence saying which wins count (and, when every win does, ``every_win_because``)."""
    cells = cell_means(results)
    table = winning_numbers(cells, metrics, significant, untested="error" if untested_because is None else "count")
    text = format_summary(table, cells)
    if significant is not None:
        note = significance_note(significant)
        if untested_because is not None:
            note += (f" For a pair of methods without per-query results for both ({untested_because}), every win "
                     "counts, significant or not.")
    else:
        note = ("Every win counts, significant or not" + (f" ({every_win_because})" if every_win_because else "")
                + ": a method wins a comparison by a higher mean, however small the difference.")
    if cells["dataset"].nunique() == 1:
        note += (" One dataset: winning numbers compare methods across datasets; on one, a method's WN counts the "
                 "methods it beats there, which says no more than that comparison's table.")
    return cells, table, note + "\n\n" + text


def summarize_comparisons(comparisons, metrics=None, alpha: float = 0.05) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """:func:`summarize` of the results of several :class:`plboost.experiment.Comparison` (a dataset each),
    counting significant wins only (:func:`plboost.significance.pairwise_significance` of their per-query
    values)."""
    per_query = pd.concat([c.per_query() for c in comparisons], ignore_index=True)
    significant = pairwise_significance(per_query, metrics=metrics, alpha=alpha)
    return summarize(pd.concat([c.long_results() for c in comparisons], ignore_index=True), metrics, significant)


def save_summary(directory, table: pd.DataFrame, text: str) -> list[Path]:
    """Write the Markdown of :func:`summarize` to ``winning.md`` and its table to ``winning.csv`` in
    ``directory``; returns both paths."""
    markdown, table_csv = Path(directory) / "winning.md", Path(directory) / "winning.csv"
    write_text(markdown, text + "\n")
    write_text(table_csv, table.to_csv(index=False))
    return [markdown, table_csv]


def significance_note(significant: pd.DataFrame) -> str:
    """The sentence that says winning numbers count significant wins only, and by which test."""
    tests = " / ".join(map(str, dict.fromkeys(significant["test"]))) if "test" in significant else "paired test"
    alphas = " / ".join(f"{a:g}" for a in dict.fromkeys(significant["alpha"])) if "alpha" in significant else "alpha"
    return (f"Only significant wins count: a win needs a two-sided paired {tests} over the dataset's queries (pooled "
            f"across splits) with Holm-adjusted p < {alphas} over the pairs of methods of the dataset and metric; "
            "IWN counts every comparison.")


def format_summary(table: pd.DataFrame, cells: pd.DataFrame | None = None) -> str:
    """Markdown: a table per metric (methods by NWN, then IWN), the cross-metric table, and the coverage
    (which method has results on which dataset)."""
    from .experiment import format_table

    parts = []
    for metric, group in table.groupby("metric", sort=False):
        ordered = group.sort_values(["NWN", "IWN", "method"], ascending=[False, False, True], na_position="last")
        # every method at one point of (NWN, IWN): each is Pareto-optimal, and the flag singles none out
        tied = len(group) > 1 and group["NWN"].nunique(dropna=False) == 1 and group["IWN"].nunique() == 1
        rows = [{"method": r.method, "WN": r.WN, "IWN": r.IWN, "NWN": "n/a" if np.isnan(r.NWN) else f"{r.NWN:.4f}",
                 "Pareto-optimal": "tie" if tied and r.pareto else "yes" if r.pareto else ""}
                for r in ordered.itertuples()]
        title = ("Cross-metric (WN and IWN summed over " + ", ".join(m for m in dict.fromkeys(table["metric"])
                                                                   if m != CROSS_METRIC) + ")"
                 if metric == CROSS_METRIC else metric)
        parts.append(f"### {title}\n\n" + format_table(rows, ["method", "WN", "IWN", "NWN", "Pareto-optimal"]))
        if tied:
            parts[-1] += (f"\n\nEvery method ties at NWN {rows[0]['NWN']} and IWN {rows[0]['IWN']}: none dominates "
                          "another, so none is singled out as Pareto-optimal (tie).")
    if cells is not None:
        datasets = list(dict.fromkeys(cells["dataset"]))
        coverage = []
        for method in dict.fromkeys(table["method"]):
            row = {"method": method}
            for dataset in datasets:
                have = cells[(cells["method"] == method) & (cells["dataset"] == dataset)]
                splits = int(have["splits"].max()) if len(have) else 0
                row[dataset] = ("-" if not len(have) else
                                f"{len(have)} metric(s), " + (f"{splits} split(s)" if splits else "means"))
            coverage.append(row)
        parts.append("### Coverage\n\n" + format_table(coverage, ["method", *datasets]))
    return "\n\n".join(parts)


# --------------------------------------------------------------------------------------------------
# reading result files

def _read_json(path: Path) -> pd.DataFrame:
    try:
        document = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from None
    if not isinstance(document, dict) or "results" not in document or "dataset" not in document:
        raise ValueError(f"{path}: not a results.json of plboost compare (expected keys 'dataset' and 'results')")
    dataset = Path(str(document["dataset"])).name or str(document["dataset"])
    if not isinstance(document["results"], list):
        raise ValueError(f"{path}: 'results' is {type(document['results']).__name__}, not a list of results")
    rows, empty = [], []
    for number, result in enumerate(document["results"], 1):
        try:
            method, split, values = result["label"], result["split"], result["metrics"]
        except (KeyError, TypeError):
            raise ValueError(f"{path}: result #{number} lacks 'label', 'split' or 'metrics'") from None
        if not isinstance(values, dict):
            raise ValueError(f"{path}: result #{number}'s 'metrics' is {type(values).__name__}, not a mapping of "
                             "metric names to values")
        for metric, value in values.items():
            where = f"result #{number} {metric}"
            if _is_empty(value):
                empty.append(where)
            else:
                rows.append({"method": method, "dataset": dataset, "split": str(split), "metric": metric,
                             "value": _number(value, path, where)})
    _say_left_out(path, empty)
    return pd.DataFrame(rows, columns=["method", "dataset", "split", "metric", "value", "source"]).assign(
        source=str(path))


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return _read_csv_text(path)
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text (byte {error.object[error.start]:#04x} at offset {error.start}); "
                         "save it as UTF-8") from None


def _read_csv_text(path: Path) -> pd.DataFrame:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        records = []
        for record in reader:
            extra = record.pop(None, None) or []  # csv's places for fields beyond the header and missing ones
            missing = sum(value is None for value in record.values())
            if extra or missing:
                raise ValueError(f"{path}, line {reader.line_num}: {len(header) - missing + len(extra)} field(s), "
                                 f"but the header has {len(header)}")
            records.append(record)
    if not header:
        raise ValueError(f"{path}: empty CSV file")
    lowered = {name.strip().lower(): name for name in header}
    rows, empty = [], []
    if {"method", "dataset", "metric", "value"} <= set(lowered):
        for line, record in enumerate(records, 2):
            if _is_empty(record[lowered["value"]]):
                empty.append(f"line {line}")
                continue
            rows.append({"method": record[lowered["method"]].strip(), "dataset": record[lowered["dataset"]].strip(),
                         "split": (record[lowered["split"]].strip() if "split" in lowered else "") or "*",
                         "metric": record[lowered["metric"]].strip(),
                         "value": _number(record[lowered["value"]], path, f"line {line}")})
    else:
        method_column = next((lowered[c] for c in _METHOD_COLUMNS if c in lowered), None)
        if method_column is None:
            raise ValueError(f"{path}: no method column; expected one of {', '.join(_METHOD_COLUMNS)} (or the "
                             "long form method, dataset, metric, value)")
        metric_columns = [name for name in header if name != method_column and name.strip().lower() not in
                          _NOT_METRICS and not name.endswith(" std")]
        if not metric_columns:
            raise ValueError(f"{path}: no metric columns (such as NDCG@10, ERR@10, MAP) in {header}")
        for line, record in enumerate(records, 2):
            dataset = record[lowered["dataset"]].strip() if "dataset" in lowered else path.resolve().parent.name
            split = (record[lowered["split"]].strip() if "split" in lowered else "") or "*"
            for metric in metric_columns:
                if _is_empty(record[metric]):
                    empty.append(f"line {line} {metric.strip()}")
                    continue
                where = f"line {line}, column {metric.strip()!r} ({_WIDE_COLUMNS})"
                rows.append({"method": record[method_column].strip(), "dataset": dataset, "split": split,
                             "metric": metric.strip(), "value": _number(record[metric], path, where)})
    _say_left_out(path, empty)
    table = pd.DataFrame(rows, columns=["method", "dataset", "split", "metric", "value", "source"])
    if "repeat" in lowered:  # results.csv of ``compare --repeats``: a row per repeat, averaged here
        table = table.groupby(["method", "dataset", "split", "metric"], sort=False, as_index=False)["value"].mean()
    return table.assign(source=str(path))


def _is_empty(value) -> bool:
    """A value that is not there: JSON ``null`` or an empty CSV cell, as plboost writes a metric with no query
    counted (``--no-relevant exclude`` on a file without relevant documents), or the ``nan`` of older files."""
    if value is None:
        return True
    if isinstance(value, float):
        return bool(np.isnan(value))
    return isinstance(value, str) and value.strip().lower() in ("", "nan")


def _say_left_out(path, empty: list) -> None:
    if empty:
        shown = ", ".join(empty[:3]) + (f" and {len(empty) - 3} more" if len(empty) > 3 else "")
        warnings.warn(f"{path}: {len(empty)} metric value(s) left out, empty or NaN ({shown}); compare writes so a "
                      "metric that no query counted in (--no-relevant exclude on a file without relevant documents)",
                      UserWarning, stacklevel=3)


def _number(value, path, where) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{path}: {where}: {value!r} is not a number") from None
    if not np.isfinite(number):
        raise ValueError(f"{path}: {where}: {value!r} is not finite")
    return number


def _check_unique(table: pd.DataFrame) -> None:
    key = ["method", "dataset", "split", "metric"]
    repeated = table[table.duplicated(key, keep=False)]
    if len(repeated):
        first = repeated.iloc[0]
        sources = sorted(set(repeated[(repeated[key] == first[key]).all(axis=1)]["source"]))
        raise ValueError(f"{first['method']} on {first['dataset']} ({first['metric']}, split {first['split']}) is "
                         f"given more than once, in {', '.join(sources)}; give each result once")
    levels = table.groupby(["method", "dataset"])["split"].agg(lambda s: ("*" in set(s), len(set(s) - {"*"}) > 0))
    mixed = [pair for pair, (mean, per_split) in levels.items() if mean and per_split]
    if mixed:
        method, dataset = mixed[0]
        sources = sorted(set(table[(table["method"] == method) & (table["dataset"] == dataset)]["source"]))
        raise ValueError(f"{method} on {dataset} is given both per split and as a mean over splits, in "
                         f"{', '.join(sources)}; give one or the other")
