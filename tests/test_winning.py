"""Winning numbers (Tax, Bockting and Hiemstra 2015) on a hand-made table, the result-file readers, and
the summarize / multi-dataset compare commands."""

import json

import numpy as np
import pandas as pd
import pytest

from plboost.cli import main
from plboost.data import write_synthetic_splits
from plboost.winning import (CROSS_METRIC, cell_means, load_results, pareto_optimal, save_summary, summarize,
                             winning_numbers)

# Four methods on three datasets (and E alone on a fourth), two metrics; blank = not run.
#
#   NDCG@10   d1    d2    d3    d4        ERR@10   d1    d2
#   A         .5    .7    -     -         A        .2    .1
#   B         .4    .7    .3    -         B        .1    -
#   C         .6    -     .1    -         C        -     .3
#   D         -     .2    .9    -         D        -     .2
#   E         -     -     -     .99
LONG_CSV = """method,dataset,metric,value
A,d1,NDCG@10,0.5
B,d1,NDCG@10,0.4
C,d1,NDCG@10,0.6
A,d2,NDCG@10,0.7
B,d2,NDCG@10,0.7
D,d2,NDCG@10,0.2
B,d3,NDCG@10,0.3
C,d3,NDCG@10,0.1
D,d3,NDCG@10,0.9
E,d4,NDCG@10,0.99
A,d1,ERR@10,0.2
B,d1,ERR@10,0.1
A,d2,ERR@10,0.1
C,d2,ERR@10,0.3
D,d2,ERR@10,0.2
"""

# By hand. NDCG@10: d1 (A, B, C): A beats B; C beats A and B. d2 (A, B, D): A and B tie (no win), both
# beat D. d3 (B, C, D): B beats C; D beats B and C. Every present method has 2 possible wins per dataset.
#   A: WN 1 + 1 = 2, IWN 4;  B: 0 + 1 + 1 = 2, IWN 6;  C: 2 + 0 = 2, IWN 4;  D: 0 + 2 = 2, IWN 4;  E: 0, 0.
# ERR@10. d1 (A, B): A beats B. d2 (A, C, D): C beats A and D; D beats A.
#   A: 1 + 0 = 1, IWN 1 + 2 = 3;  B: 0, IWN 1;  C: 2, IWN 2;  D: 1, IWN 2;  E: 0, 0.
# Cross-metric: A 3/7, B 2/7, C 4/6, D 3/6, E n/a.
EXPECTED = {
    "NDCG@10": {"A": (2, 4), "B": (2, 6), "C": (2, 4), "D": (2, 4), "E": (0, 0)},
    "ERR@10": {"A": (1, 3), "B": (0, 1), "C": (2, 2), "D": (1, 2), "E": (0, 0)},
    CROSS_METRIC: {"A": (3, 7), "B": (2, 7), "C": (4, 6), "D": (3, 6), "E": (0, 0)},
}
# Pareto-optimal in (NWN, IWN), by hand. NDCG@10: A, C, D at (0.5, 4) do not dominate one another and B has
# the most comparisons (6): all four. ERR@10: A has the most comparisons (3), C the best NWN (1.0); B is
# dominated by A, D by C. Cross-metric: A (3/7, 7) dominates B (2/7, 7); C (4/6, 6) dominates D (3/6, 6).
PARETO = {"NDCG@10": {"A", "B", "C", "D"}, "ERR@10": {"A", "C"}, CROSS_METRIC: {"A", "C"}}


@pytest.fixture
def hand_made(tmp_path):
    path = tmp_path / "published.csv"
    path.write_text(LONG_CSV)
    return path


def test_winning_numbers_of_a_hand_made_table(hand_made):
    cells = cell_means(load_results([hand_made]))
    table = winning_numbers(cells, ["NDCG@10", "ERR@10"])
    for metric, by_method in EXPECTED.items():
        for method, (won, could) in by_method.items():
            row = table[(table.metric == metric) & (table.method == method)].iloc[0]
            assert (row.WN, row.IWN) == (won, could), (metric, method)  # noqa: SIM300  (WN, IWN, NWN are the table's columns, not constants)
            if could:
                assert row.NWN == pytest.approx(won / could)  # noqa: SIM300  (WN, IWN, NWN are the table's columns, not constants)
            else:
                assert np.isnan(row.NWN)
        flagged = set(table[(table.metric == metric) & table.pareto].method)
        assert flagged == PARETO[metric], metric


def test_only_significant_wins_count_when_asked(hand_made):
    """The hand-made table with a pairwise significance table that calls every win significant except A's over B
    on d1 (NDCG@10) and D's over A on d2 (ERR@10): those two wins are lost, IWN and everything else unchanged."""
    cells = cell_means(load_results([hand_made]))
    rows = []
    for (dataset, metric), group in cells.groupby(["dataset", "metric"]):
        for first in group.itertuples():
            for second in group.itertuples():
                if first.method != second.method:
                    rows.append({"dataset": dataset, "metric": metric, "configuration": first.method,
                                 "other": second.method, "better": first.value > second.value})
    significant = pd.DataFrame(rows)
    not_significant = {("d1", "NDCG@10", "A", "B"), ("d2", "ERR@10", "D", "A")}
    key = list(zip(significant.dataset, significant.metric, significant.configuration, significant.other, strict=True))
    significant.loc[[k in not_significant for k in key], "better"] = False
    table = winning_numbers(cells, ["NDCG@10", "ERR@10"], significant=significant)
    lost = {("NDCG@10", "A"): 1, ("ERR@10", "D"): 1, (CROSS_METRIC, "A"): 1, (CROSS_METRIC, "D"): 1}
    for metric, by_method in EXPECTED.items():
        for method, (won, could) in by_method.items():
            row = table[(table.metric == metric) & (table.method == method)].iloc[0]
            assert (row.WN, row.IWN) == (won - lost.get((metric, method), 0), could), (metric, method)  # noqa: SIM300  (WN, IWN, NWN are the table's columns, not constants)
    # the default, and significant=None, count every win
    pd.testing.assert_frame_equal(winning_numbers(cells, ["NDCG@10", "ERR@10"]),
                                  winning_numbers(cells, ["NDCG@10", "ERR@10"], significant=None))
    _, _, text = summarize(load_results([hand_made]), ["NDCG@10"], significant=significant.assign(test="t-test",
                                                                                                  alpha=0.05))
    assert text.startswith("Only significant wins count: a win needs a two-sided paired t-test over the dataset's "
                           "queries (pooled across splits) with Holm-adjusted p < 0.05")


def test_wide_csv_with_splits_averages_the_folds_first(tmp_path):
    """Folds are averaged per dataset before methods are compared: A wins d1 on the mean (0.55 > 0.5) though
    it loses Fold2."""
    path = tmp_path / "results.csv"
    path.write_text("configuration,dataset,split,NDCG@10,NDCG@10 std,train_seconds\n"
                    "A,d1,Fold1,0.7,0,1\nA,d1,Fold2,0.4,0,1\nB,d1,Fold1,0.5,0,1\nB,d1,Fold2,0.5,0,1\n"
                    "A,d2,Fold1,0.1,0,1\nB,d2,Fold1,,0,1\n")
    with pytest.warns(UserWarning, match=r"results.csv: 1 metric value\(s\) left out, empty or NaN \(line 7 NDCG@10\)"):
        cells = cell_means(load_results([path]))
    assert set(cells.metric) == {"NDCG@10"}  # "NDCG@10 std" and the timing are not metrics
    assert cells.set_index("method").loc["A"].query("dataset == 'd1'").value.item() == pytest.approx(0.55)
    table = winning_numbers(cells).set_index("method")
    ndcg = table[table.metric == "NDCG@10"]
    assert (ndcg.loc["A", "WN"], ndcg.loc["A", "IWN"]) == (1, 1)  # d2: B's cell is blank, so no comparison
    assert (ndcg.loc["B", "WN"], ndcg.loc["B", "IWN"]) == (0, 1)


def test_save_summary_writes_the_markdown_and_the_table(hand_made, tmp_path):
    _, table, text = summarize(load_results([hand_made]))
    written = save_summary(tmp_path, table, text)
    assert [path.name for path in written] == ["winning.md", "winning.csv"]
    assert written[0].read_text() == text + "\n"
    pd.testing.assert_frame_equal(pd.read_csv(written[1]), table)


def test_pareto_ignores_methods_without_comparisons():
    assert pareto_optimal(np.array([0.5, np.nan, 0.4]), np.array([4, 0, 5])).tolist() == [True, False, True]
    assert pareto_optimal(np.array([0.5, 0.5]), np.array([4, 4])).tolist() == [True, True]


def test_bad_result_files_are_refused_with_their_names(tmp_path, hand_made):
    twice = tmp_path / "again.csv"
    twice.write_text(LONG_CSV.splitlines()[0] + "\nA,d1,NDCG@10,0.51\n")
    with pytest.raises(ValueError, match=r"A on d1 \(NDCG@10, split \*\) is given more than once, in .*again.csv"):
        load_results([hand_made, twice])
    per_split = tmp_path / "split.csv"
    per_split.write_text("method,dataset,split,metric,value\nA,d1,Fold1,NDCG@10,0.5\n")
    with pytest.raises(ValueError, match="given both per split and as a mean"):
        load_results([hand_made, per_split])
    bad = tmp_path / "bad.csv"
    bad.write_text("method,dataset,metric,value\nA,d1,NDCG@10,high\n")
    with pytest.raises(ValueError, match=r"bad.csv: line 2: 'high' is not a number"):
        load_results([bad])
    no_method = tmp_path / "nomethod.csv"
    no_method.write_text("name,NDCG@10\nA,0.5\n")
    with pytest.raises(ValueError, match="no method column"):
        load_results([no_method])
    not_compare = tmp_path / "run.json"
    not_compare.write_text(json.dumps({"objective": "plrank", "metrics": {}}))
    with pytest.raises(ValueError, match="not a results.json of plboost compare"):
        load_results([not_compare])
    with pytest.raises(ValueError, match=r"no results for metric\(s\) \['MAP'\]"):
        winning_numbers(cell_means(load_results([hand_made])), ["MAP"])


@pytest.fixture(scope="module")
def two_datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("winning")
    for name, seed in (("alpha", 1), ("beta", 2)):
        for fold in (1, 2):
            write_synthetic_splits(root / name / f"Fold{fold}", n_queries=(30, 10, 10), seed=10 * seed + fold)
    return root


@pytest.mark.engine
def test_compare_over_two_datasets_then_summarize_the_saved_files(two_datasets, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["compare", str(two_datasets / "alpha"), str(two_datasets / "beta"), "--run", "plrank",
            "--run", "umart,window=2", "--baselines", "--rounds", "5", "--num-leaves", "7", "--out", str(out),
            "--quiet"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "## Winning numbers over 2 datasets (alpha, beta)" in printed and "### Cross-metric" in printed
    saved = pd.read_csv(out / "winning.csv")
    assert (out / "winning.md").read_text() == printed.split("(alpha, beta)\n\n", 1)[1].rstrip("\n") + "\n"
    methods = {"plrank [lightgbm]", "umart(window=2) [lightgbm]", "lambdarank [lightgbm]", "rank_xendcg [lightgbm]",
               "regression [lightgbm]"}
    assert set(saved.method) == methods
    # 5 methods on 2 datasets, every cell present: IWN = 2 datasets x 4 others per metric
    assert (saved[saved.metric == "NDCG@10"].IWN == 8).all()
    assert (saved[saved.metric == CROSS_METRIC].IWN == 8 * 5).all()
    assert saved.groupby("metric").WN.sum().le(saved.groupby("metric").IWN.sum() / 2).all()  # a win is a loss

    # summarize: the JSON of one dataset, the CSV of the other -> the same table
    assert main(["summarize", str(out / "alpha" / "results.json"), str(out / "beta" / "results.csv"),
                 "--out", str(tmp_path / "again.csv")]) == 0
    assert "2 datasets (alpha, beta)" in capsys.readouterr().out
    again = pd.read_csv(tmp_path / "again.csv")
    pd.testing.assert_frame_equal(again.sort_values(["metric", "method"]).reset_index(drop=True),
                                  saved.sort_values(["metric", "method"]).reset_index(drop=True))
    # a directory stands for the results.json files under it; summary.csv files are means over splits
    assert main(["summarize", str(out), "--metrics", "NDCG@10"]) == 0
    assert "### NDCG@10" in capsys.readouterr().out
    assert main(["summarize", str(out / "alpha" / "summary.csv"), str(out / "beta" / "summary.csv"),
                 "--metrics", "NDCG@10,ERR@10"]) == 0
    capsys.readouterr()
    # only significant wins, the default where per-query values exist, as in compare's own table: fewer (or as
    # many) wins than counting every win, the same comparisons
    assert printed.split("(alpha, beta)\n\n", 1)[1].startswith("Only significant wins count")
    assert main(["summarize", str(out), "--significant", "--out", str(tmp_path / "significant.csv")]) == 0
    assert capsys.readouterr().out.split("\n\n")[1].startswith("Only significant wins count")
    significant = pd.read_csv(tmp_path / "significant.csv").set_index(["metric", "method"]).sort_index()
    pd.testing.assert_frame_equal(significant, saved.set_index(["metric", "method"]).sort_index())
    assert main(["summarize", str(out), "--wins", "all", "--out", str(tmp_path / "every.csv")]) == 0
    assert capsys.readouterr().out.split("\n\n")[1].startswith("Every win counts, significant or not: ")
    every = pd.read_csv(tmp_path / "every.csv").set_index(["metric", "method"]).sort_index()
    assert (significant.WN <= every.WN).all() and (significant.IWN == every.IWN).all()
    assert (significant.WN < every.WN).any()  # 5 rounds on 30 queries: most differences are noise
    # a result file without its per-query values: its pairs count every win, the others only significant wins,
    # and the text says which (issue 40 item 4: one such file switched every pair to "every win counts")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "results.json").write_bytes((out / "alpha" / "results.json").read_bytes())
    assert main(["summarize", str(alone / "results.json")]) == 0
    assert capsys.readouterr().out.split("\n\n")[1].startswith(
        f"Every win counts, significant or not (no per_query.csv for {alone / 'results.json'}): ")
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("method,dataset,NDCG@10,ERR@10\nmy-ranker,alpha,0.01,0.001\n")
    assert main(["summarize", str(out), str(elsewhere), "--metrics", "NDCG@10",
                 "--out", str(tmp_path / "mixed.csv")]) == 0
    note = capsys.readouterr().out.split("\n\n")[1]
    assert note.startswith("Only significant wins count") and \
        f"For a pair of methods without per-query results for both (no per_query.csv for {elsewhere})" in note
    mixed = pd.read_csv(tmp_path / "mixed.csv").set_index(["metric", "method"]).sort_index()
    for method in methods:  # each beats my-ranker on alpha, counted untested, and keeps its significant wins
        assert mixed.loc[("NDCG@10", method), "WN"] == significant.loc[("NDCG@10", method), "WN"] + 1, method
    assert mixed.loc[("NDCG@10", "my-ranker"), "WN"] == 0 and mixed.loc[("NDCG@10", "my-ranker"), "IWN"] == 5


@pytest.mark.engine
def test_results_csv_with_repeats_is_averaged_over_repeats(two_datasets, tmp_path):
    out = tmp_path / "out"
    assert main(["compare", str(two_datasets / "alpha"), "--run", "plrank", "--run", "lambdarank", "--repeats", "2",
                 "--rounds", "3", "--num-leaves", "7", "--out", str(out), "--quiet",
                 "--engine-param", "bagging_fraction=0.7", "--engine-param", "bagging_freq=1"]) == 0
    from_csv = load_results([out / "results.csv"]).set_index(["method", "split", "metric"])["value"].sort_index()
    from_json = load_results([out / "results.json"]).set_index(["method", "split", "metric"])["value"].sort_index()
    pd.testing.assert_series_equal(from_csv, from_json)
    runs = pd.read_csv(out / "results.csv")
    plrank = runs[(runs.configuration == "plrank [lightgbm]") & (runs.split == "Fold1")]["NDCG@10"]
    assert len(plrank) == 2 and from_csv["plrank [lightgbm]", "Fold1", "NDCG@10"] == pytest.approx(plrank.mean())


def test_summarize_errors_exit_with_status_2(tmp_path, capsys):
    assert main(["summarize", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: no such file or directory" in capsys.readouterr().err


def test_a_csv_with_a_byte_order_mark_is_read_as_without(tmp_path):
    text = "method,dataset,ERR@5\nP,d7,0.31\nQ,d7,0.29\nP,d8,0.2\nQ,d8,0.4\n"
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    (tmp_path / "plain.csv").write_text(text)
    with_mark, plain = load_results([tmp_path / "bom.csv"]), load_results([tmp_path / "plain.csv"])
    assert list(with_mark.columns) == list(plain.columns)
    assert with_mark.drop(columns="source").equals(plain.drop(columns="source"))


@pytest.mark.parametrize("values, tied", [((0.4, 0.4, 0.4), True), ((0.4, 0.5, 0.3), False)])
def test_methods_that_all_tie_are_not_all_called_pareto_optimal(values, tied):
    results = pd.DataFrame({"method": ["U", "V", "W"], "dataset": ["only"] * 3, "metric": ["MAP"] * 3,
                            "value": list(values), "split": [None] * 3, "source": ["x"] * 3})
    _, table, text = summarize(results, ["MAP"])
    assert "One dataset: winning numbers compare methods across datasets" in text
    assert ("Every method ties at NWN 0.0000 and IWN 2: none dominates another" in text) is tied
    assert ("| yes " in text) is not tied and ("| tie " in text) is tied
    assert table["pareto"].sum() == (3 if tied else 1) * 2  # the table keeps the definition (MAP and cross-metric)


@pytest.mark.parametrize("empty, shown", [("null", "result #2 MAP"), ('NaN', "result #2 MAP")])
def test_results_json_with_a_metric_without_a_value_is_read_with_that_value_left_out(tmp_path, empty, shown):
    """``null`` (what compare writes) and the bare ``NaN`` of older files are a value that is not there."""
    path = tmp_path / "results.json"
    path.write_text('{"dataset": "d", "results": [{"label": "A", "split": "F1", "metrics": {"MAP": 0.25}},'
                    f' {{"label": "B", "split": "F1", "metrics": {{"MAP": {empty}, "ERR": 0.5}}}}]}}')
    with pytest.warns(UserWarning, match=rf"1 metric value\(s\) left out, empty or NaN \({shown}\)"):
        table = load_results([path])
    assert sorted(zip(table.method, table.metric, table.value, strict=True)) == [("A", "MAP", 0.25), ("B", "ERR", 0.5)]


def test_long_csv_lists_a_few_empty_values_by_line_and_counts_the_rest(tmp_path):
    path = tmp_path / "long.csv"
    rows = "".join(f"m{i},d,MAP,{'' if i % 2 else 0.5}\n" for i in range(10))
    path.write_text("method,dataset,metric,value\n" + rows)
    with pytest.warns(UserWarning, match=r"5 metric value\(s\) left out, empty or NaN \(line 3, line 5, line 7 and "
                                         r"2 more\)"):
        table = load_results([path])
    assert len(table) == 5 and set(table.value) == {0.5}


@pytest.mark.parametrize("name, text", [
    ("results.json", '{"dataset": "d", "results": [{"label": "A", "split": "F2", "metrics": {"ERR@3": null}},'
                     ' {"label": "B", "split": "F2", "metrics": {"ERR@3": NaN, "MAP": null}}]}'),
    ("wide.csv", "method,dataset,NDCG@5\nA,e,\nB,e,nan\n"),
])
def test_results_whose_every_value_is_left_out_are_refused_by_file_not_a_crash(tmp_path, capsys, name, text):
    """A compare whose test queries none counted (--no-relevant exclude, all labels 0) writes no value at all:
    summarize said so and then failed inside pandas (KeyError 'IWN'); it now refuses naming the file."""
    path = tmp_path / name
    path.write_text(text)
    refusal = rf"{name}: no metric value to summarize \(every one is empty or NaN\)"
    with pytest.warns(UserWarning, match="left out, empty or NaN"), pytest.raises(ValueError, match=refusal):
        load_results([path])
    assert main(["summarize", str(path)]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last == f"plboost summarize: error: {path}: no metric value to summarize (every one is empty or NaN)"


def test_every_column_of_a_wide_table_but_method_dataset_and_split_is_a_metric(tmp_path, capsys):
    """summarize matched metric names with a pattern of known metrics and dropped the others without a word (a
    metric registered with plboost.register_metric, say HitRate@5): every other column is a metric now, and a
    column that is not one is refused by file, line and column."""
    path = tmp_path / "wide.csv"
    path.write_text("method,dataset,split,HitRate@5,coverage_k,repeat\nA,e,F1,0.7,0.2,0\nB,e,F1,0.8,0.1,0\n"
                    "A,e,F2,0.6,0.3,0\nB,e,F2,0.9,0.2,0\n")
    table = load_results([path])
    assert sorted(set(table.metric)) == ["HitRate@5", "coverage_k"]
    cells = cell_means(table)
    assert cells.set_index(["method", "metric"]).loc[("B", "HitRate@5"), "value"] == pytest.approx(0.85)
    assert main(["summarize", str(path), "--metrics", "HitRate@5,coverage_k"]) == 0
    assert "HitRate@5" in capsys.readouterr().out
    path.write_text("method,dataset,NDCG@10,notes\nA,e,0.5,fine\n")
    with pytest.raises(ValueError, match=r"wide.csv: line 2, column 'notes' \(every column but the method, dataset "
                                         r"and split is a metric\): 'fine' is not a number"):
        load_results([path])
