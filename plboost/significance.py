"""Significance of differences between ranking configurations, from per-query metric values.

Input: a long per-query table (what ``plboost compare --out DIR`` writes as ``DIR/per_query.csv``) with
columns ``dataset, split, configuration, repeat, qid, metric, value``: one row per dataset, split,
configuration, repeat (an int from 0), query id and metric; ``value`` is a float, NaN for a query the
metric leaves out. A query is identified by ``(split, qid)`` within its dataset: the test queries of all
splits are pooled (in 5-fold LETOR every query is a test query of exactly one fold), and keying by the
split as well keeps two splits' queries with the same id apart.

Paired comparisons. For a dataset and a metric, let :math:`x_q` be a configuration's and :math:`y_q` the
baseline's value on query :math:`q`, each the mean over the configuration's repeats (:func:`query_means`),
and keep the :math:`n` queries where both are defined. With the differences :math:`d_q = x_q - y_q`, their
mean :math:`\\bar d` (``mean_difference``) and standard deviation :math:`s_d`:

- *Student's paired t-test* (``"t-test"``, :func:`scipy.stats.ttest_rel`): :math:`t = \\bar d / (s_d /
  \\sqrt n)` has Student's t distribution with :math:`n - 1` degrees of freedom when the :math:`d_q` are
  i.i.d. normal with mean 0; two-sided :math:`p = P(|T_{n-1}| \\ge |t|)`. Student, "The probable error of
  a mean", Biometrika 6(1), 1908.
- *Paired randomization (permutation) test* (``"randomization"``, :func:`randomization_p_value`): under the
  null hypothesis that the two configurations are exchangeable on every query, the labels "configuration"
  and "baseline" of each pair may be swapped, i.e. every :math:`d_q` may flip its sign. With :math:`B`
  random sign vectors :math:`\\varepsilon^{(b)}`, the statistic :math:`\\bar d^{(b)} = \\frac1n \\sum_q
  \\varepsilon^{(b)}_q d_q` and the two-sided :math:`p = \\min(1, 2 \\min(p_{\\ge}, p_{\\le}))` with
  :math:`p_{\\ge} = (1 + \\#\\{b: \\bar d^{(b)} \\ge \\bar d\\}) / (B + 1)` (all :math:`2^n` sign vectors are
  enumerated, without the +1, when :math:`2^n \\le B`). No normality assumption. Smucker, Allan and
  Carterette, "A comparison of statistical significance tests for information retrieval evaluation", CIKM
  2007, who find it agrees closely with the t-test on IR metrics. It is the test of
  :func:`scipy.stats.permutation_test` with ``permutation_type="samples"``, which took 7-15 times as long
  on 50-5,000 queries (and 43% of a short ``plboost compare``; ``docs/benchmarks.md``).

Identical configurations (every :math:`d_q = 0`) get :math:`p = 1` from both tests by definition (the
t statistic is 0/0 there, and :func:`scipy.stats.ttest_rel` returns NaN). Fewer than two pairs give
:math:`p` NaN (no test is possible) with a :class:`UserWarning` naming the comparison; NaN p-values stay
NaN after adjustment and are never significant.

Multiple comparisons. A table compares several configurations with the baseline; the family-wise error
is controlled by *Holm's step-down procedure* (:func:`holm`) over the configurations of one table, i.e.
within each (dataset, metric, test), or with ``holm_over="table"`` over every configuration and metric of
the table together (:data:`HOLM_FAMILIES`); :func:`legend` names the family. Holm, "A simple sequentially
rejective multiple test procedure", Scandinavian Journal of Statistics 6(2), 1979.

Intervals. Each difference from the baseline also gets a percentile bootstrap interval
(:func:`bootstrap_interval`) that resamples the queries and, with repeats, each configuration's seeds, so
that it widens when seeds disagree; the t-test, on query means over repeats, does not see that variation.

:func:`paired_tests` compares every configuration with a baseline (for tables, :func:`marker` and
:func:`legend`); :func:`pairwise_significance` compares every pair of configurations (for winning numbers
that count significant wins only, :func:`plboost.winning.winning_numbers`); :func:`load_per_query` reads
``per_query.csv`` files.
"""

from __future__ import annotations

import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from ._constraints import Integer, Options, Real, Reals, check

#: a significance level or a confidence level: strictly between 0 and 1
_PROBABILITY = Real(low=0, high=1, low_open=True, high_open=True)

__all__ = ["PER_QUERY_COLUMNS", "TESTS", "BETTER", "WORSE", "load_per_query", "query_means", "paired_tests",
           "pairwise_significance", "holm", "marker", "legend", "bootstrap_interval", "interval_legend",
           "randomization_p_value", "HOLM_FAMILIES"]

#: the columns of a per-query table
PER_QUERY_COLUMNS = ("dataset", "split", "configuration", "repeat", "qid", "metric", "value")
#: the paired tests available
TESTS = ("t-test", "randomization")
#: markers of a significant difference from the baseline
BETTER, WORSE = "▲", "▼"

_QUERY = ["split", "qid"]
_TEST_DESCRIPTIONS = {"t-test": "two-sided paired t-test",
                      "randomization": "two-sided paired randomization test ({n_resamples} random sign flips)"}
#: the randomization test draws its resamples in batches of at most this many query values (memory)
_RESAMPLING_BATCH_VALUES = 10_000_000
_INTERVAL_BATCH_VALUES = 2_000_000
#: resamples of a bootstrap interval: percentile intervals want 1,000 or more (Efron and Tibshirani 1993, 19.3)
INTERVAL_RESAMPLES = 2000
#: the families Holm's adjustment can run over, by the columns that tell one family from another
HOLM_FAMILIES = {"metric": ["dataset", "metric", "test"], "table": ["dataset", "test"]}


# --------------------------------------------------------------------------------------------------
# reading and averaging

def load_per_query(paths) -> pd.DataFrame:
    """The per-query tables of one or more paths, concatenated (columns :data:`PER_QUERY_COLUMNS`).

    Each path is a ``per_query.csv`` file (any CSV with those columns), or a directory: its
    ``per_query.csv`` if it has one, else the ``per_query.csv`` files of its subdirectories one level down
    (``plboost compare --out DIR`` over several datasets). ``dataset``, ``split``, ``configuration``,
    ``qid`` and ``metric`` are read as strings, ``repeat`` as int, ``value`` as float (empty or NaN for a
    query the metric leaves out). A path without such files, a file lacking columns, and a row given twice
    (same dataset, split, configuration, repeat, qid and metric, in one file or two) are errors naming the
    files.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    files = []
    for path in map(Path, paths):
        if path.is_dir():
            found = [path / "per_query.csv"] if (path / "per_query.csv").is_file() else sorted(
                path.glob("*/per_query.csv"))
            if not found:
                raise ValueError(f"{path}: no per_query.csv in this directory or its subdirectories (plboost compare "
                                 "--out DIR writes DIR/per_query.csv)")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"{path}: no such file or directory")
    if not files:
        raise ValueError("no per-query files given")
    frames = [_read_per_query(path) for path in files]
    table = pd.concat(frames, ignore_index=True)
    key = [c for c in PER_QUERY_COLUMNS if c != "value"]
    repeated = table.duplicated(key, keep=False)
    if repeated.any():
        first = table[repeated].iloc[0]
        sources = sorted(set(table[repeated & (table[key] == first[key]).all(axis=1)]["source"]))
        raise ValueError(f"{_describe_row(first)} is given more than once, in {', '.join(sources)}")
    return table.drop(columns="source")


def _read_per_query(path: Path) -> pd.DataFrame:
    strings = {name: str for name in ("dataset", "split", "configuration", "qid", "metric")}
    try:
        table = pd.read_csv(path, dtype=strings, keep_default_na=False, na_values={"value": ["", "nan", "NaN", "NA"]})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not a readable CSV file ({error})") from None
    missing = [c for c in PER_QUERY_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"{path}: lacks column(s) {', '.join(missing)}; a per-query table has "
                         f"{', '.join(PER_QUERY_COLUMNS)}")
    try:
        table["repeat"] = table["repeat"].astype(int)
        table["value"] = table["value"].astype(float)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path}: 'repeat' must be integers and 'value' numbers ({error})") from None
    return table[list(PER_QUERY_COLUMNS)].assign(source=str(path))


def query_means(per_query: pd.DataFrame) -> pd.DataFrame:
    """Mean ``value`` over the repeats of each (dataset, configuration, metric, split, qid).

    Returns a DataFrame with columns ``dataset, configuration, metric, split, qid, value`` (rows in order of
    first appearance). NaN values are left out of the mean; a query NaN in every repeat stays NaN. A row
    given twice (same dataset, split, configuration, repeat, qid and metric) is an error.
    """
    _check_per_query(per_query)
    key = ["dataset", "configuration", "metric", *_QUERY]
    return per_query.groupby(key, sort=False)["value"].mean().reset_index()


def _check_per_query(per_query: pd.DataFrame) -> None:
    missing = [c for c in PER_QUERY_COLUMNS if c not in per_query.columns]
    if missing:
        raise ValueError(f"the per-query table lacks column(s) {', '.join(missing)}; it needs "
                         f"{', '.join(PER_QUERY_COLUMNS)}")
    key = [c for c in PER_QUERY_COLUMNS if c != "value"]
    repeated = per_query.duplicated(key)
    if repeated.any():
        raise ValueError(f"{_describe_row(per_query[repeated].iloc[0])} is given more than once")


def _describe_row(row) -> str:
    return (f"{row['configuration']} on {row['dataset']} ({row['metric']}, split {row['split']}, query {row['qid']}, "
            f"repeat {row['repeat']})")


# --------------------------------------------------------------------------------------------------
# tests

def paired_tests(per_query: pd.DataFrame, baseline: str, *, metrics=None, tests=TESTS, n_resamples: int = 10000,
                 seed: int = 0, alpha: float = 0.05, holm_over: str = "metric", level: float = 0.95,
                 interval_resamples: int = INTERVAL_RESAMPLES) -> pd.DataFrame:
    """Every configuration against ``baseline``, per dataset and metric: paired tests over queries, Holm-adjusted.

    Parameters
    ----------
    per_query : DataFrame
        Columns :data:`PER_QUERY_COLUMNS`; values are first averaged over repeats (:func:`query_means`).
    baseline : str
        The configuration every other one is compared with; it must be present in every dataset.
    metrics : list of str, optional
        The metrics to test (default: all, in order of appearance); a dataset without values of a metric has
        no rows for it.
    tests : sequence of {"t-test", "randomization"}
        The paired tests to run (see the module docstring).
    n_resamples : int
        Random sign vectors of the randomization test (all :math:`2^n` are enumerated when fewer).
    seed : int
        Seeds the randomization test; every comparison starts from the same seed, so a comparison's p-value
        does not depend on which other configurations are in the table.
    alpha : float
        Only validated here (``0 < alpha < 1``); :func:`marker` applies it.
    holm_over : {"metric", "table"}
        The family Holm adjusts over (:data:`HOLM_FAMILIES`): the configurations of each (dataset, metric,
        test), or all configurations and metrics of each (dataset, test) together.
    level, interval_resamples : float, int
        Coverage and resamples of the bootstrap interval of each mean difference (:func:`bootstrap_interval`).

    Returns
    -------
    DataFrame with columns ``dataset, configuration, baseline, metric, n_queries, mean_difference,
    interval_low, interval_high, p_value, p_adjusted, test``, one row per dataset, configuration other than the
    baseline, metric and test. ``n_queries`` counts the queries where both values are defined (NaN pairs are
    dropped); ``mean_difference`` is configuration minus baseline over those; ``interval_low`` and
    ``interval_high`` bound its ``level`` bootstrap interval over queries and repeats; ``p_adjusted`` is
    Holm's adjustment (:func:`holm`) of ``p_value`` over the family ``holm_over``.

    Raises
    ------
    ValueError
        The baseline is missing from a dataset (the message names the dataset and its configurations); a
        configuration and the baseline do not have the same (split, qid) queries for a metric (every run sees
        the same test files, so this means mismatched or truncated per-query files, and is not papered over);
        an unknown metric or test.
    """
    tests = _check_tests(tests)
    _check_alpha(alpha)
    check(holm_over, Options(*HOLM_FAMILIES), "holm_over")
    check(level, _PROBABILITY, "level")
    means = query_means(per_query)
    metrics = _check_metrics(means, metrics)

    def against_baseline(dataset, configurations):
        if baseline not in configurations:
            raise ValueError(f"baseline {baseline!r} has no results on dataset {dataset!r}; its configurations are "
                             f"{', '.join(map(repr, configurations))}")
        return [(c, baseline) for c in configurations if c != baseline]

    rows = []
    for dataset, metric, configuration, _, n_queries, result in _compared(means, metrics, against_baseline, tests,
                                                                          n_resamples, seed):
        rows += [{"dataset": dataset, "configuration": configuration, "baseline": baseline, "metric": metric,
                  "n_queries": n_queries, "mean_difference": result["mean_difference"], "p_value": result[test],
                  "test": test} for test in tests]
    columns = ["dataset", "configuration", "baseline", "metric", "n_queries", "mean_difference", "interval_low",
               "interval_high", "p_value", "p_adjusted", "test"]
    table = pd.DataFrame(rows, columns=columns)
    table["p_adjusted"] = _holm_by_group(table, HOLM_FAMILIES[holm_over])
    intervals = _baseline_intervals(per_query, baseline, metrics, interval_resamples, seed, level)
    for column, number in (("interval_low", 0), ("interval_high", 1)):
        table[column] = [intervals.get((row.dataset, row.configuration, row.metric), (np.nan, np.nan))[number]
                         for row in table.itertuples()]
    return table[columns]


def _baseline_intervals(per_query: pd.DataFrame, baseline: str, metrics, n_resamples: int, seed: int,
                        level: float) -> dict:
    """{(dataset, configuration, metric): (low, high)}: :func:`bootstrap_interval` of every configuration's mean
    difference from ``baseline``, over the queries where both are defined, from the values of every repeat."""
    intervals = {}
    for (dataset, metric), rows in per_query[per_query["metric"].isin(metrics)].groupby(["dataset", "metric"],
                                                                                        sort=False):
        grid = rows.pivot(index=_QUERY, columns=["configuration", "repeat"], values="value")
        if baseline not in grid.columns.get_level_values(0):
            continue
        theirs = grid[baseline].dropna(axis=1, how="all").to_numpy(float)  # its repeats only
        for configuration in dict.fromkeys(grid.columns.get_level_values(0)):
            if configuration == baseline:
                continue
            ours = grid[configuration].dropna(axis=1, how="all").to_numpy(float)
            defined = ~np.isnan(ours).any(axis=1) & ~np.isnan(theirs).any(axis=1)
            if defined.sum() >= 2:
                intervals[dataset, configuration, metric] = bootstrap_interval(
                    ours[defined], theirs[defined], n_resamples=n_resamples, seed=seed, level=level)
    return intervals


def _repeat_means(values: np.ndarray, size: int, rng) -> np.ndarray:
    """Each query's mean over repeats drawn with replacement, ``size`` times: (size, queries)."""
    repeats = values.shape[1]
    counts = np.zeros((size, repeats))
    np.add.at(counts, (np.arange(size)[:, None], rng.integers(0, repeats, size=(size, repeats))), 1.0)
    return counts @ values.T / repeats


def bootstrap_interval(ours, theirs, *, n_resamples: int = INTERVAL_RESAMPLES, seed: int = 0,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean difference of two configurations over queries and repeats.

    ``ours`` (queries x its repeats) and ``theirs`` (queries x the other's repeats) hold each query's value in
    each repeat (a repeat is a training seed). The statistic is :math:`\\frac1n \\sum_q (\\bar x_q - \\bar y_q)`
    with :math:`\\bar x_q, \\bar y_q` the means over repeats. Each resample draws the :math:`n` queries with
    replacement and, independently, each side's repeats with replacement (a whole run at a time), so the
    interval widens both when queries disagree and when seeds do (Efron and Tibshirani, *An Introduction to
    the Bootstrap*, 1993, ch. 13; resampling at both levels of a two-level design, Davison and Hinkley,
    *Bootstrap Methods and their Application*, 1997, section 3.8). With one repeat per side it is the plain
    bootstrap over queries. Returns the ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles.
    """
    ours, theirs = np.atleast_2d(np.asarray(ours, float)), np.atleast_2d(np.asarray(theirs, float))
    n = ours.shape[0]
    rng = np.random.default_rng(seed)
    statistics = np.empty(n_resamples)
    batch = max(1, _INTERVAL_BATCH_VALUES // n)
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        queries = rng.integers(0, n, size=(size, n))
        if ours.shape[1] == theirs.shape[1] == 1:  # nothing to draw over seeds
            statistics[start:start + size] = (ours[:, 0] - theirs[:, 0])[queries].mean(axis=1)
            continue
        per_query = _repeat_means(ours, size, rng) - _repeat_means(theirs, size, rng)  # resamples x queries
        statistics[start:start + size] = np.take_along_axis(per_query, queries, axis=1).mean(axis=1)
    tail = (1 - level) / 2
    low, high = np.quantile(statistics, [tail, 1 - tail])
    return float(low), float(high)


def pairwise_significance(per_query: pd.DataFrame, *, metrics=None, test: str = "t-test", alpha: float = 0.05,
                          n_resamples: int = 10000, seed: int = 0) -> pd.DataFrame:
    """For each dataset, metric and ordered pair of configurations (a, b): is a significantly better than b?

    Every unordered pair of configurations of a dataset is tested once, as in :func:`paired_tests` (values
    averaged over repeats, queries pooled over splits, NaN pairs dropped, two-sided ``test``), and the
    p-values are Holm-adjusted (:func:`holm`) over all the pairs of one (dataset, metric): with :math:`c`
    configurations, :math:`c (c - 1) / 2` hypotheses. a is significantly better than b when the mean of
    a - b over queries is positive and the adjusted p-value is below ``alpha``; the family-wise error rate
    of all the "better" claims of a (dataset, metric) is then at most ``alpha``.

    Returns a DataFrame with columns ``dataset, metric, configuration, other, n_queries, mean_difference,
    p_value, p_adjusted, test, alpha, better``: two rows per pair, (a, b) and (b, a), with opposite
    ``mean_difference`` (configuration minus other) and the same p-values; ``better`` is the boolean
    above. This is the ``significant`` argument of :func:`plboost.winning.winning_numbers`. The errors
    are those of :func:`paired_tests` (queries that differ between two configurations; unknown metric or
    test).
    """
    (test,) = _check_tests([test])
    _check_alpha(alpha)
    means = query_means(per_query)
    metrics = _check_metrics(means, metrics)
    rows = [{"dataset": dataset, "metric": metric, "configuration": first, "other": second, "n_queries": n_queries,
             "mean_difference": result["mean_difference"], "p_value": result[test]}
            for dataset, metric, first, second, n_queries, result in _compared(
                means, metrics, lambda dataset, configurations: list(combinations(configurations, 2)), [test],
                n_resamples, seed)]
    columns = ["dataset", "metric", "configuration", "other", "n_queries", "mean_difference", "p_value",
               "p_adjusted", "test", "alpha", "better"]
    table = pd.DataFrame(rows, columns=columns[:7])
    table["p_adjusted"] = _holm_by_group(table, ["dataset", "metric"])
    mirrored = table.rename(columns={"configuration": "other", "other": "configuration"}).assign(
        mean_difference=-table["mean_difference"])
    table = pd.concat([table, mirrored], ignore_index=True).assign(test=test, alpha=alpha)
    table["better"] = (table["mean_difference"] > 0) & (table["p_adjusted"] < alpha)
    # rows in order of first appearance of dataset, metric, configuration, then other
    appearance = {"dataset": means["dataset"], "metric": pd.Series(metrics), "configuration": means["configuration"],
                  "other": means["configuration"]}
    table = table.sort_values(list(appearance), kind="stable", key=lambda column: column.map(
        {name: number for number, name in enumerate(dict.fromkeys(appearance[column.name]))}))
    return table[columns].reset_index(drop=True)


def _check_tests(tests) -> list[str]:
    tests = [tests] if isinstance(tests, str) else list(tests)
    unknown = [t for t in tests if t not in TESTS]
    if unknown or not tests:
        raise ValueError(f"unknown test(s) {unknown}; choose from {', '.join(TESTS)}")
    return tests


def _check_alpha(alpha: float) -> None:
    check(alpha, _PROBABILITY, "alpha")


def _check_metrics(means: pd.DataFrame, metrics) -> list[str]:
    available = list(dict.fromkeys(means["metric"]))
    if metrics is None:
        return available
    metrics = [metrics] if isinstance(metrics, str) else list(metrics)
    missing = [m for m in metrics if m not in available]
    if missing:
        raise ValueError(f"no per-query values for metric(s) {missing}; the table has {available}")
    return metrics


def _compared(means: pd.DataFrame, metrics, pairs_of, tests, n_resamples: int, seed: int):
    """For each dataset, metric and pair ``pairs_of(dataset, configurations)`` gives: (dataset, metric, first,
    second, number of query pairs, the result of :func:`_test_pairs`)."""
    for dataset, of_dataset in means.groupby("dataset", sort=False):
        configurations = list(dict.fromkeys(of_dataset["configuration"]))
        pairs = pairs_of(dataset, configurations)
        measured = set(of_dataset["metric"])
        for metric in [m for m in metrics if m in measured]:
            values, present = _metric_grid(of_dataset, metric, configurations)
            for first, second in pairs:
                where = f"{first} vs {second} on {dataset} ({metric})"
                ours, theirs = _pairs(values, present, first, second, where)
                yield dataset, metric, first, second, ours.size, _test_pairs(ours, theirs, tests, n_resamples, seed,
                                                                             where)


def _metric_grid(of_dataset: pd.DataFrame, metric: str, configurations: list) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Queries x configurations: the query means (NaN where undefined or absent) and whether a row exists."""
    rows = of_dataset[of_dataset["metric"] == metric]
    values = rows.pivot(index=_QUERY, columns="configuration", values="value").reindex(columns=configurations)
    present = (rows.assign(present=True).pivot(index=_QUERY, columns="configuration", values="present")
               .reindex(index=values.index, columns=configurations).notna())
    return values, present


def _pairs(values: pd.DataFrame, present: pd.DataFrame, first: str, second: str, where: str):
    """The paired values of two configurations over the queries where both are defined (NaN pairs dropped);
    a query that one of them has and the other lacks is an error."""
    only_first = present[first] & ~present[second]
    only_second = present[second] & ~present[first]
    if only_first.any() or only_second.any():
        def listed(mask):
            queries = list(values.index[mask])
            shown = ", ".join(f"(split {s}, qid {q})" for s, q in queries[:3])
            return f"{len(queries)}" + (f" (e.g. {shown})" if queries else "")
        raise ValueError(f"{where}: the two configurations do not have the same queries: {listed(only_first)} only "
                         f"in {first}, {listed(only_second)} only in {second}; per-query results of one dataset "
                         "must cover the same test queries")
    both = present[first] & present[second]
    ours, theirs = values.loc[both, first].to_numpy(float), values.loc[both, second].to_numpy(float)
    defined = ~np.isnan(ours) & ~np.isnan(theirs)
    return ours[defined], theirs[defined]


def randomization_p_value(differences, n_resamples: int, seed: int = 0) -> float:
    """Two-sided p-value of the paired randomization test of the mean of ``differences`` (the module's
    docstring has the formula): the mean of each of ``n_resamples`` random sign vectors (all :math:`2^n` of
    them, without the +1, when :math:`2^n \\le` ``n_resamples``) against the observed mean, ties counted
    within a relative tolerance of 100 ulp as :func:`scipy.stats.permutation_test` does."""
    differences = np.asarray(check(differences, Reals(), "differences"))
    n_resamples = check(n_resamples, Integer(low=1), "n_resamples")
    n = differences.size
    observed = differences.mean()
    tolerance = abs(observed) * np.finfo(float).eps * 100
    total = differences.sum()

    def counts(flipped):  # flipped: resamples x queries, True where the sign flips; Σ ε d = Σ d − 2 Σ_flipped d
        null = (total - 2 * (flipped @ differences)) / n
        return int(np.sum(null >= observed - tolerance)), int(np.sum(null <= observed + tolerance))

    if n < 63 and 2 ** n <= n_resamples:
        greater, less = counts(((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1).astype(float))
        resamples, adjustment = 2 ** n, 0
    else:
        rng, greater, less = np.random.default_rng(seed), 0, 0
        batch = max(1, _RESAMPLING_BATCH_VALUES // n)
        for start in range(0, n_resamples, batch):
            more_greater, more_less = counts(rng.random((min(batch, n_resamples - start), n)) < 0.5)
            greater, less = greater + more_greater, less + more_less
        resamples, adjustment = n_resamples, 1
    return min(1.0, 2 * min(greater + adjustment, less + adjustment) / (resamples + adjustment))


def _test_pairs(ours: np.ndarray, theirs: np.ndarray, tests, n_resamples: int, seed: int, where: str) -> dict:
    """The mean difference and each test's two-sided p-value (1 if all differences are 0, NaN under 2 pairs)."""
    result = {"mean_difference": float(np.mean(ours - theirs)) if ours.size else np.nan}
    if ours.size < 2:
        warnings.warn(f"{where}: {ours.size} query pair(s) with both values defined; no test possible, p-value NaN",
                      stacklevel=3)
        return result | {test: np.nan for test in tests}
    if np.all(ours == theirs):
        return result | {test: 1.0 for test in tests}
    for test in tests:
        if test == "t-test":
            result[test] = float(stats.ttest_rel(ours, theirs).pvalue)
        else:
            result[test] = randomization_p_value(ours - theirs, n_resamples, seed)
    return result


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjustment of p-values (Holm, Scand. J. Statist. 6(2), 1979).

    With the :math:`m` defined p-values sorted, :math:`p_{(1)} \\le \\dots \\le p_{(m)}`, the adjusted values
    are

    .. math::

        \\tilde p_{(i)} = \\max_{j \\le i} \\min\\bigl(1, (m - j + 1) \\, p_{(j)}\\bigr),

    so rejecting the hypotheses with :math:`\\tilde p < \\alpha` controls the family-wise error rate at
    :math:`\\alpha` under any dependence. The adjusted values keep the order of the raw ones (monotone) and
    are capped at 1. NaN entries are not hypotheses: they do not count in :math:`m` and stay NaN. Returns an
    array of the input's shape.
    """
    p_values = np.asarray(p_values, dtype=float)
    adjusted = np.full(p_values.shape, np.nan)
    defined = np.flatnonzero(~np.isnan(p_values))
    if defined.size:
        order = defined[np.argsort(p_values[defined], kind="stable")]
        factors = defined.size - np.arange(defined.size)
        adjusted[order] = np.minimum(1.0, np.maximum.accumulate(factors * p_values[order]))
    return adjusted


def _holm_by_group(table: pd.DataFrame, by: list[str]) -> pd.Series:
    adjusted = pd.Series(np.nan, index=table.index, dtype=float)
    if len(table):
        for _, group in table.groupby(by, sort=False):
            adjusted[group.index] = holm(group["p_value"].to_numpy())
    return adjusted


# --------------------------------------------------------------------------------------------------
# presenting

def marker(mean_difference, p_adjusted=None, alpha: float = 0.05) -> str:
    """:data:`BETTER` ("▲") when significantly better than the baseline (``mean_difference > 0`` and
    ``p_adjusted < alpha``), :data:`WORSE` ("▼") when significantly worse, "" otherwise (NaN p included).

    ``mean_difference`` may instead be a row of :func:`paired_tests` (anything with ``mean_difference`` and
    ``p_adjusted`` items or attributes), with ``p_adjusted`` left out.
    """
    if p_adjusted is None:
        row = mean_difference
        get = row.get if hasattr(row, "get") else lambda name: getattr(row, name)
        mean_difference, p_adjusted = get("mean_difference"), get("p_adjusted")
    mean_difference, p_adjusted = float(mean_difference), float(p_adjusted)
    if not p_adjusted < alpha:  # NaN too
        return ""
    if mean_difference > 0:
        return BETTER
    if mean_difference < 0:
        return WORSE
    return ""


def legend(baseline: str, test: str = "t-test", alpha: float = 0.05, *, n_resamples: int = 10000,
           holm_over: str = "metric", family_size: int | None = None) -> str:
    """The sentence explaining :func:`marker` under a table compared with ``baseline``, naming the family Holm
    adjusts over (``family_size`` hypotheses, when given), e.g.

    "▲/▼: significantly better/worse than lambdarank (two-sided paired t-test over queries pooled across
    splits; Holm-adjusted p < 0.05, the family: the configurations compared with lambdarank, for each metric
    separately)".
    """
    (test,) = _check_tests([test])
    _check_alpha(alpha)
    check(holm_over, Options(*HOLM_FAMILIES), "holm_over")
    description = _TEST_DESCRIPTIONS[test].format(n_resamples=n_resamples)
    family = {"metric": f"the configurations compared with {baseline}, for each metric separately",
              "table": "every configuration and metric of the table together"}[holm_over]
    size = f" ({family_size} tests)" if family_size else ""
    return (f"{BETTER}/{WORSE}: significantly better/worse than {baseline} ({description} over queries pooled across "
            f"splits; Holm-adjusted p < {alpha:g}, the family: {family}{size})")


def interval_legend(baseline: str, repeats: int, level: float = 0.95, *,
                    n_resamples: int = INTERVAL_RESAMPLES) -> str:
    """The sentence explaining the intervals of :func:`paired_tests` (see :func:`bootstrap_interval`)."""
    over = "queries and repeats (each side's seeds drawn anew)" if repeats > 1 else "queries"
    return (f"[low, high]: {level:.0%} percentile bootstrap interval of the mean difference from {baseline}, "
            f"resampling {over}, {n_resamples} resamples; each interval alone, not adjusted like the markers")
