"""Paired significance tests over per-query values (plboost.significance), Holm's adjustment, the markers and
legend, and winning numbers that count significant wins only. Synthetic numpy/pandas tables; no engines."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from plboost.significance import (BETTER, WORSE, holm, legend, load_per_query, marker, paired_tests,
                                  pairwise_significance, query_means, randomization_p_value)
from plboost.winning import CROSS_METRIC, cell_means, summarize, winning_numbers

COLUMNS = ["dataset", "split", "configuration", "repeat", "qid", "metric", "value"]


def per_query_table(values: dict, *, dataset="d1", metric="NDCG@10", splits=("Fold1", "Fold2")) -> pd.DataFrame:
    """A per-query table from {configuration: array (repeats x queries)}; the queries are dealt over the
    splits in turn, and the qids restart at 0 in every split (so (split, qid) is the key, qid alone is not)."""
    rows = []
    for configuration, by_repeat in values.items():
        by_repeat = np.atleast_2d(np.asarray(by_repeat, dtype=float))
        for repeat, row in enumerate(by_repeat):
            for query, value in enumerate(row):
                rows.append({"dataset": dataset, "split": splits[query % len(splits)], "configuration": configuration,
                             "repeat": repeat, "qid": query // len(splits), "metric": metric, "value": value})
    return pd.DataFrame(rows, columns=COLUMNS)


def centred_noise(rng, scale, size):
    """Normal noise with mean exactly 0, so that a shift of the mean is exactly the shift given."""
    noise = rng.normal(0, scale, size)
    return noise - noise.mean()


@pytest.fixture
def rng():
    return np.random.default_rng(14)


def test_t_test_p_values_are_scipys_on_query_means_pooled_over_splits(rng):
    """p equals ttest_rel on the per-query means over repeats, with the queries of both splits as one sample."""
    n_queries = 40
    baseline = rng.uniform(0.2, 0.8, size=(3, n_queries))  # 3 repeats
    candidate = baseline + rng.normal(0.03, 0.1, size=n_queries) + rng.normal(0, 0.05, size=(3, n_queries))
    table = per_query_table({"base": baseline, "cand": candidate})
    tested = paired_tests(table, "base", tests=["t-test"])
    assert list(tested.columns) == ["dataset", "configuration", "baseline", "metric", "n_queries", "mean_difference",
                                    "interval_low", "interval_high", "p_value", "p_adjusted", "test"]
    row = tested.iloc[0]
    expected = stats.ttest_rel(candidate.mean(axis=0), baseline.mean(axis=0))
    assert (row.configuration, row.baseline, row.n_queries, row.test) == ("cand", "base", n_queries, "t-test")
    assert row.p_value == pytest.approx(expected.pvalue, abs=1e-9, rel=1e-9)
    assert row.p_adjusted == row.p_value  # one configuration: nothing to adjust
    assert row.mean_difference == pytest.approx((candidate - baseline).mean(), abs=1e-12)
    # not the same as testing one split or one repeat alone
    first_split = slice(0, None, 2)
    assert row.p_value != pytest.approx(stats.ttest_rel(candidate.mean(0)[first_split],
                                                        baseline.mean(0)[first_split]).pvalue, rel=1e-3)
    assert row.p_value != pytest.approx(stats.ttest_rel(candidate[0], baseline[0]).pvalue, rel=1e-3)
    means = query_means(table)
    assert list(means.columns) == ["dataset", "configuration", "metric", "split", "qid", "value"]
    assert len(means) == 2 * n_queries
    # qid 0 of Fold1 and qid 0 of Fold2 are different queries
    cand_means = means[means.configuration == "cand"].set_index(["split", "qid"]).value
    assert cand_means[("Fold1", 0)] == pytest.approx(candidate[:, 0].mean())
    assert cand_means[("Fold2", 0)] == pytest.approx(candidate[:, 1].mean())


def test_identical_configurations_have_p_one_and_no_marker(rng):
    values = rng.uniform(size=(2, 30))
    table = per_query_table({"base": values, "copy": values})
    tested = paired_tests(table, "base", n_resamples=999)
    assert set(tested.test) == {"t-test", "randomization"}
    assert (tested.p_value == 1).all() and (tested.p_adjusted == 1).all()
    assert (tested.mean_difference == 0).all()
    assert all(marker(row) == "" for _, row in tested.iterrows())


def test_clearly_better_and_worse_configurations_are_marked(rng):
    n_queries = 200
    baseline = rng.uniform(0.2, 0.8, size=n_queries)
    table = per_query_table({"base": baseline, "better": baseline + 0.1 + rng.normal(0, 0.05, n_queries),
                             "worse": baseline - 0.1 + rng.normal(0, 0.05, n_queries),
                             "same": baseline + centred_noise(rng, 0.05, n_queries)})
    tested = paired_tests(table, "base", tests="t-test")
    marks = {row.configuration: marker(row.mean_difference, row.p_adjusted) for row in tested.itertuples()}
    assert marks == {"better": BETTER, "worse": WORSE, "same": ""}
    assert {row.configuration: marker(row) for _, row in tested.iterrows()} == marks  # a row works as well
    assert tested.set_index("configuration").loc["better", "p_adjusted"] < 1e-10
    assert marker(0.1, 0.049) == BETTER and marker(-0.1, 0.049) == WORSE
    assert marker(0.1, 0.05) == "" and marker(0.1, float("nan")) == "" and marker(0.1, 0.02, alpha=0.01) == ""


def test_holm_against_a_hand_computation():
    # sorted: 0.01 (x4 = 0.04), 0.02 (x3 = 0.06), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> running max 0.06)
    p_values = [0.03, 0.01, float("nan"), 0.04, 0.02]
    np.testing.assert_allclose(holm(p_values), [0.06, 0.04, np.nan, 0.06, 0.06], rtol=1e-12)
    # capped at 1, monotone in the raw p-values
    np.testing.assert_allclose(holm([0.5, 0.2, 0.9]), [1.0, 0.6, 1.0])
    np.testing.assert_allclose(holm([0.001, 0.3, 0.2]), [0.003, 0.4, 0.4])
    assert holm([]).shape == (0,)
    assert np.isnan(holm([np.nan])).all()


def test_holm_is_applied_over_the_configurations_of_a_table(rng):
    n_queries = 50
    baseline = rng.uniform(size=n_queries)
    table = per_query_table({"base": baseline, **{f"c{i}": baseline + rng.normal(0.02, 0.1, n_queries)
                                                  for i in range(4)}})
    tested = paired_tests(table, "base", tests=["t-test"])
    np.testing.assert_allclose(tested.p_adjusted, holm(tested.p_value))


def test_holm_over_the_whole_table_adjusts_every_metric_together(rng):
    n_queries = 50
    baseline = rng.uniform(size=n_queries)
    values = {"base": baseline, **{f"c{i}": baseline + rng.normal(0.02, 0.1, n_queries) for i in range(3)}}
    table = pd.concat([per_query_table(values, metric=metric) for metric in ("NDCG@10", "ERR@10")])
    table.loc[table.metric == "ERR@10", "value"] += rng.normal(0, 0.05, (table.metric == "ERR@10").sum())
    by_metric = paired_tests(table, "base", tests=["t-test"])
    whole = paired_tests(table, "base", tests=["t-test"], holm_over="table")
    np.testing.assert_array_equal(whole.p_value, by_metric.p_value)
    np.testing.assert_allclose(whole.p_adjusted, holm(whole.p_value))  # one family of 6 tests
    for _, rows in by_metric.groupby("metric"):
        np.testing.assert_allclose(rows.p_adjusted, holm(rows.p_value))  # two families of 3
    assert (whole.p_adjusted >= by_metric.p_adjusted).all() and (whole.p_adjusted > by_metric.p_adjusted).any()
    with pytest.raises(ValueError, match="holm_over must be one of 'metric', 'table', got 'split'"):
        paired_tests(table, "base", holm_over="split")


def _interval_width(table) -> float:
    (row,) = paired_tests(table, "base", tests=["t-test"], n_resamples=4000).itertuples()
    assert row.interval_low < row.mean_difference < row.interval_high
    return row.interval_high - row.interval_low


def test_the_interval_widens_when_seeds_disagree(rng):
    """The same query means (so the same mean difference and t-test), repeats that agree or disagree: the
    bootstrap over queries and repeats gives the disagreeing seeds a wider interval."""
    n_queries = 120
    baseline = rng.uniform(0.3, 0.7, n_queries)
    candidate = baseline + 0.02 + centred_noise(rng, 0.05, n_queries)
    seed_offsets = np.array([-1.0, 0.0, 1.0])[:, None]
    agree = per_query_table({"base": baseline, "cand": candidate + 0.001 * seed_offsets})
    disagree = per_query_table({"base": baseline, "cand": candidate + 0.03 * seed_offsets})
    tested = [paired_tests(t, "base", tests=["t-test"]) for t in (agree, disagree)]
    assert tested[0].p_value.iloc[0] == pytest.approx(tested[1].p_value.iloc[0], rel=1e-9)
    narrow, wide = _interval_width(agree), _interval_width(disagree)
    assert wide > 1.3 * narrow
    # one repeat: the plain bootstrap over queries, about the normal interval of the mean difference
    differences = candidate - baseline
    normal_width = 2 * 1.96 * differences.std(ddof=1) / np.sqrt(n_queries)
    assert _interval_width(per_query_table({"base": baseline, "cand": candidate})) == pytest.approx(normal_width,
                                                                                                   rel=0.1)


def test_randomization_agrees_with_the_t_test_on_normal_data_and_is_seeded(rng):
    n_queries = 100
    baseline = rng.normal(0.5, 0.1, n_queries)
    table = per_query_table({"base": baseline, "cand": baseline + rng.normal(0.02, 0.1, n_queries)})
    tested = paired_tests(table, "base", n_resamples=5000, seed=3).set_index("test")
    t_p, randomized_p = tested.loc["t-test", "p_value"], tested.loc["randomization", "p_value"]
    assert 0.001 < t_p < 0.5  # a p-value worth comparing
    assert randomized_p == pytest.approx(t_p, abs=0.03)
    again = paired_tests(table, "base", n_resamples=5000, seed=3).set_index("test")
    assert again.loc["randomization", "p_value"] == randomized_p
    other_seeds = {paired_tests(table, "base", tests=["randomization"], n_resamples=5000, seed=seed).p_value.item()
                   for seed in (4, 5, 6)}
    assert len(other_seeds | {randomized_p}) > 1
    # a handful of queries: all 2^n sign flips are enumerated, the exact p
    small = per_query_table({"base": [0.1, 0.2, 0.3, 0.4], "cand": [0.2, 0.3, 0.4, 0.5]})
    exact = paired_tests(small, "base", tests=["randomization"]).p_value.item()
    assert exact == pytest.approx(2 / 16)  # only all + or all - reach |mean difference| 0.1


def _scipy_paired_randomization(differences, n_resamples, seed):
    """The reference: SciPy's permutation test of paired samples (each pair's labels swapped at random)."""
    return stats.permutation_test((differences, np.zeros_like(differences)), lambda x, y, axis: np.mean(x - y, axis),
                                  permutation_type="samples", vectorized=True, n_resamples=n_resamples,
                                  alternative="two-sided", rng=np.random.default_rng(seed)).pvalue


@pytest.mark.parametrize("differences", [[0.1, -0.2, 0.3, 0.3, 0.0, 0.05, -0.05, 0.25],  # ties and a zero
                                         [0.5, 0.5, 0.5], [-1e-9, 2e-9, 3e-9, 1e-9, 4e-9], [0.2, -0.2, 0.1, -0.1]])
def test_randomization_p_value_is_scipys_exact_test_on_a_few_queries(differences):
    differences = np.array(differences)
    assert 2 ** differences.size <= 10000  # every sign vector enumerated, by both
    assert randomization_p_value(differences, 10000) == pytest.approx(
        _scipy_paired_randomization(differences, 10000, 0), abs=1e-12)


def test_randomization_p_value_agrees_with_scipys_within_resampling_noise(rng):
    for n_queries, shift in ((40, 0.0), (300, 0.015), (2000, 0.004)):
        differences = rng.normal(shift, 0.1, n_queries) * (rng.uniform(size=n_queries) < 0.7)  # zeros, as for ties
        ours = randomization_p_value(differences, 20000, seed=1)
        theirs = _scipy_paired_randomization(differences, 20000, 2)
        # two independent estimates of the same p: each has standard error at most sqrt(p(1-p)/20000) <= 0.0036
        assert ours == pytest.approx(theirs, abs=0.015), (n_queries, ours, theirs)


@pytest.mark.parametrize("differences, n_resamples, message", [
    ([], 100, "differences must be a non-empty sequence of finite numbers, got \\[\\]"),
    ([[0.1, 0.2]], 100, "differences must be a non-empty sequence of finite numbers"),
    ([0.1, np.nan], 100, "differences must be a non-empty sequence of finite numbers, got \\[0.1, nan\\]"),
    ([0.1, 0.2], 0, "n_resamples must be an integer >= 1, got 0")])
def test_randomization_p_value_refuses_what_it_cannot_test(differences, n_resamples, message):
    with pytest.raises(ValueError, match=message):
        randomization_p_value(differences, n_resamples)


def test_nan_values_are_dropped_from_the_pairs(rng):
    n_queries = 30
    baseline = rng.uniform(size=n_queries)
    candidate = baseline + rng.normal(0.05, 0.1, n_queries)
    baseline[[0, 5]] = np.nan  # e.g. ERR leaves a query out; for one configuration only, to test the pairing
    candidate[[5, 7, 9]] = np.nan
    table = per_query_table({"base": baseline, "cand": candidate})
    row = paired_tests(table, "base", tests=["t-test"]).iloc[0]
    keep = ~np.isnan(baseline) & ~np.isnan(candidate)
    assert row.n_queries == keep.sum() == n_queries - 4
    assert row.p_value == pytest.approx(stats.ttest_rel(candidate[keep], baseline[keep]).pvalue, abs=1e-12)
    assert row.mean_difference == pytest.approx((candidate[keep] - baseline[keep]).mean())
    # a NaN in one repeat only: the mean of the other repeats stands for the query
    repeated = per_query_table({"base": [[0.5, 0.5, 0.5], [0.5, 0.5, 0.5]], "cand": [[np.nan, 0.8, 0.6],
                                                                                    [0.7, 0.6, 0.9]]})
    assert paired_tests(repeated, "base", tests=["t-test"]).n_queries.item() == 3


def test_too_few_pairs_give_nan_with_a_warning():
    table = per_query_table({"base": [0.5, np.nan, 0.2], "cand": [0.6, 0.7, np.nan]})
    with pytest.warns(UserWarning, match=r"cand vs base on d1 \(NDCG@10\): 1 query pair\(s\)"):
        tested = paired_tests(table, "base")
    assert (tested.n_queries == 1).all() and tested.p_value.isna().all() and tested.p_adjusted.isna().all()
    np.testing.assert_allclose(tested.mean_difference, 0.1)


def test_bad_tables_raise_clear_errors(rng):
    table = pd.concat([per_query_table({"base": [0.1, 0.2], "cand": [0.2, 0.4]}),
                       per_query_table({"cand": [0.2, 0.3], "other": [0.3, 0.1]}, dataset="d2")])
    with pytest.raises(ValueError, match=r"baseline 'base' has no results on dataset 'd2'; its configurations are "
                                         r"'cand', 'other'"):
        paired_tests(table, "base")
    uneven = per_query_table({"base": [0.1, 0.2, 0.3], "cand": [0.2, 0.3, 0.4]})
    uneven = uneven.drop(uneven.index[-1])  # cand lacks a query
    with pytest.raises(ValueError, match=r"cand vs base on d1 \(NDCG@10\): the two configurations do not have "
                                         r"the same queries: 0 only in cand, 1 \(e.g. \(split Fold1, qid 1\)\) only "
                                         r"in base"):
        paired_tests(uneven, "base")
    with pytest.raises(ValueError, match="unknown test"):
        paired_tests(table, "base", tests=["wilcoxon"])
    with pytest.raises(ValueError, match=r"no per-query values for metric\(s\) \['MAP'\]"):
        paired_tests(table, "base", metrics=["MAP"])
    with pytest.raises(ValueError, match="lacks column"):
        paired_tests(table.drop(columns="repeat"), "base")
    twice = pd.concat([table, table.iloc[:1]])
    with pytest.raises(ValueError, match=r"base on d1 \(NDCG@10, split Fold1, query 0, repeat 0\) is given more"):
        paired_tests(twice, "base")


def test_metrics_and_datasets_are_tested_separately(rng):
    ndcg = per_query_table({"base": rng.uniform(size=20), "cand": rng.uniform(size=20)})
    err = per_query_table({"base": rng.uniform(size=20), "cand": rng.uniform(size=20)}, metric="ERR@10")
    other = per_query_table({"base": rng.uniform(size=10), "cand": rng.uniform(size=10)}, dataset="d2")
    tested = paired_tests(pd.concat([ndcg, err, other]), "base", tests=["t-test"])
    assert list(zip(tested.dataset, tested.metric, strict=True)) == [("d1", "NDCG@10"), ("d1", "ERR@10"),
                                                                      ("d2", "NDCG@10")]
    assert tested.n_queries.tolist() == [20, 20, 10]
    only = paired_tests(pd.concat([ndcg, err, other]), "base", tests=["t-test"], metrics=["ERR@10"])
    assert only.metric.tolist() == ["ERR@10"]  # d2 has no ERR@10 values: no row


def test_legend_names_baseline_test_and_alpha():
    assert legend("lambdarank") == (
        "▲/▼: significantly better/worse than lambdarank (two-sided paired t-test over queries pooled across splits; "
        "Holm-adjusted p < 0.05, the family: the configurations compared with lambdarank, for each metric "
        "separately)")
    assert legend("base", holm_over="table", family_size=12).endswith(
        "the family: every configuration and metric of the table together (12 tests))")
    text = legend("base", "randomization", 0.01, n_resamples=999)
    assert "randomization test (999 random sign flips)" in text and "p < 0.01" in text
    with pytest.raises(ValueError, match="unknown test"):
        legend("base", "sign")


def test_pairwise_significance(rng):
    n_queries = 100
    base = rng.uniform(0.2, 0.8, n_queries)
    table = per_query_table({"A": base + 0.1 + rng.normal(0, 0.05, n_queries), "B": base,
                             "C": base + centred_noise(rng, 0.05, n_queries)})
    pairs = pairwise_significance(table)
    assert list(pairs.columns) == ["dataset", "metric", "configuration", "other", "n_queries", "mean_difference",
                                   "p_value", "p_adjusted", "test", "alpha", "better"]
    assert len(pairs) == 6  # ordered pairs of 3
    assert list(zip(pairs.configuration, pairs.other, strict=True)) == [("A", "B"), ("A", "C"), ("B", "A"),
                                                                         ("B", "C"), ("C", "A"), ("C", "B")]
    better = {(r.configuration, r.other) for r in pairs.itertuples() if r.better}
    assert better == {("A", "B"), ("A", "C")}
    indexed = pairs.set_index(["configuration", "other"])
    assert indexed.loc[("A", "B"), "p_value"] == indexed.loc[("B", "A"), "p_value"]
    assert indexed.loc[("A", "B"), "mean_difference"] == -indexed.loc[("B", "A"), "mean_difference"]
    # Holm over the 3 unordered pairs of the (dataset, metric)
    unordered = pairs.drop_duplicates("p_value")
    np.testing.assert_allclose(unordered.p_adjusted, holm(unordered.p_value))
    means = table.groupby(["configuration", "split", "qid"]).value.mean()
    assert indexed.loc[("B", "C"), "p_value"] == pytest.approx(stats.ttest_rel(means["B"], means["C"]).pvalue,
                                                               abs=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# winning numbers with significant wins only

def test_winning_numbers_count_only_significant_wins(rng):
    """On d1, A beats B and C by a wide margin and C beats B by a tiny, noisy one; on d2 C beats A by a wide margin.
    WN by hand, every win counted: A 2 (d1), B 0, C 1 (d1, over B) + 1 (d2); significant wins only: C loses its
    win over B. IWN: A 2 + 1, B 2, C 2 + 1."""
    n_queries = 100
    base = rng.uniform(0.2, 0.8, n_queries)
    d1 = per_query_table({"A": base + 0.1 + rng.normal(0, 0.02, n_queries), "B": base,
                          "C": base + 0.001 + centred_noise(rng, 0.05, n_queries)})
    d2 = per_query_table({"A": base, "C": base + 0.2 + rng.normal(0, 0.02, n_queries)}, dataset="d2")
    per_query = pd.concat([d1, d2], ignore_index=True)
    # the fold-mean cells, as plboost compare's results (method, dataset, split, metric, value) would give them
    split_means = per_query.groupby(["configuration", "dataset", "split", "metric"]).value.mean().reset_index()
    results = split_means.rename(columns={"configuration": "method"}).assign(source="synthetic")
    significant = pairwise_significance(per_query)
    c_over_b = significant.set_index(["dataset", "configuration", "other"]).loc[("d1", "C", "B")]
    assert not c_over_b.better and c_over_b.p_adjusted > 0.05

    _, plain, _ = summarize(results, ["NDCG@10"])
    _, strict, text = summarize(results, ["NDCG@10"], significant=significant)
    plain = plain[plain.metric == "NDCG@10"].set_index("method")
    strict = strict[strict.metric == "NDCG@10"].set_index("method")
    c_beats_b = bool(results.query("dataset == 'd1' and method == 'C'").value.mean()
                     > results.query("dataset == 'd1' and method == 'B'").value.mean())
    assert c_beats_b  # a win in the plain count...
    assert plain.loc["C", "WN"] == 1 + 1 and strict.loc["C", "WN"] == 1  # ...not in the significant one
    # d1: A beats B and C significantly; d2: C beats A significantly
    assert (strict.loc["A", "WN"], strict.loc["B", "WN"]) == (2, 0)
    assert strict.IWN.to_dict() == plain.IWN.to_dict() == {"A": 3, "B": 2, "C": 3}  # IWN unchanged
    assert strict.loc["C", "NWN"] == pytest.approx(1 / 3)
    assert text.startswith("Only significant wins count: a win needs a two-sided paired t-test")
    # the default is unchanged: every win counts
    assert winning_numbers(cell_means(results)).equals(winning_numbers(cell_means(results), None, None))


def test_significant_wins_need_a_row_for_every_comparison(rng):
    per_query = per_query_table({"A": rng.uniform(size=10), "B": rng.uniform(size=10)})
    significant = pairwise_significance(per_query)
    results = pd.DataFrame({"method": ["A", "B", "C"], "dataset": "d1", "split": "*", "metric": "NDCG@10",
                            "value": [0.5, 0.4, 0.3], "source": "x"})
    with pytest.raises(ValueError, match=r"no significance result for A vs C on d1 \(NDCG@10\), nor for 3 other"):
        winning_numbers(cell_means(results), ["NDCG@10"], significant)
    with pytest.raises(ValueError, match="lacks column"):
        winning_numbers(cell_means(results), ["NDCG@10"], significant.drop(columns="better"))
    summary = winning_numbers(cell_means(results[results.method != "C"]), ["NDCG@10"], significant)
    assert set(summary.metric) == {"NDCG@10", CROSS_METRIC}


def test_load_per_query_reads_files_and_directories(tmp_path, rng):
    d1 = per_query_table({"A": rng.uniform(size=6), "B": rng.uniform(size=6)})
    d2 = per_query_table({"A": rng.uniform(size=4), "B": [np.nan, 0.1, 0.2, 0.3]}, dataset="d2")
    for name, table in (("d1", d1), ("d2", d2)):
        (tmp_path / "out" / name).mkdir(parents=True)
        table.to_csv(tmp_path / "out" / name / "per_query.csv", index=False)
    loaded = load_per_query(tmp_path / "out")  # one level down
    assert list(loaded.columns) == COLUMNS and len(loaded) == len(d1) + len(d2)
    assert loaded.value.isna().sum() == 1 and loaded.repeat.dtype.kind == "i"
    assert loaded.qid.tolist()[:2] == ["0", "0"]  # ids as text, the same in every file
    single = load_per_query([tmp_path / "out" / "d1" / "per_query.csv"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(paired_tests(single, "A")) == 2
    with pytest.raises(ValueError, match=r"empty: no per_query.csv in this directory or its subdirectories"):
        (tmp_path / "empty").mkdir()
        load_per_query(tmp_path / "empty")
    with pytest.raises(ValueError, match=r"missing.csv: no such file or directory"):
        load_per_query(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match=r"given more than once, in .*d1/per_query.csv"):
        load_per_query([tmp_path / "out" / "d1", tmp_path / "out" / "d1" / "per_query.csv"])
    bad = tmp_path / "bad.csv"
    bad.write_text("dataset,configuration,metric,value\nd1,A,NDCG@10,0.5\n")
    with pytest.raises(ValueError, match=r"bad.csv: lacks column\(s\) split, repeat, qid"):
        load_per_query(bad)


def test_levels_are_checked_by_the_one_validator():
    from plboost.significance import _check_alpha

    for bad in (0, 1, 1.5, float("nan"), "0.05"):
        with pytest.raises(ValueError, match=r"^alpha must be a finite number in \(0, 1\), got"):
            _check_alpha(bad)
    _check_alpha(0.05)
