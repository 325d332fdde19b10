"""Tables in: RankingData.from_pandas (plboost.data.frames) and load_table for Parquet and CSV files
(plboost.data.tabular), read beside SVMlight files by load_splits."""

import sys

import numpy as np
import pandas as pd
import pytest

from plboost._extras import MissingExtra
from plboost._queries import InvalidLabelError, NonContiguousQueryError
from plboost.data import RankingData, is_table, load_splits, load_svmlight, load_table, make_synthetic


def frame_of(data: RankingData) -> pd.DataFrame:
    """``data`` as a table: columns qid, label, f1..fN (what a practitioner would hold)."""
    frame = pd.DataFrame(data.X, columns=[f"f{j + 1}" for j in range(data.n_features)])
    frame.insert(0, "label", data.labels.astype(np.int64))
    frame.insert(0, "qid", np.repeat(data.qids, data.group_sizes))
    return frame


def assert_same(loaded: RankingData, expected: RankingData):
    for name in ("X", "labels", "qids", "offsets"):
        assert np.array_equal(getattr(loaded, name), getattr(expected, name), equal_nan=name == "X"), name
    assert loaded.X.dtype == expected.X.dtype


@pytest.fixture(scope="module")
def mq2008_train(shared_data):
    """MQ2008 Fold1's training file as read from SVMlight, and as a DataFrame."""
    data = load_svmlight(shared_data / "MQ2008" / "Fold1" / "train.txt.gz", cache=False)
    return data, frame_of(data)


def small_frame():
    return pd.DataFrame({"qid": [5, 5, 5, 2, 2, 9], "label": [0, 1, 2, 0, 3, 1],
                         "f1": [0.5, 1.5, np.nan, 2.0, 0.0, 1.0], "f2": [1, 2, 3, 4, 5, 6]})


# --------------------------------------------------------------------------------------------------
# the same arrays as the SVMlight file


def test_dataframe_parquet_and_csv_copies_load_as_the_svmlight_file(mq2008_train, tmp_path):
    data, frame = mq2008_train
    assert list(frame.columns[:3]) == ["qid", "label", "f1"] and frame.shape == (9630, 48)
    frame.to_parquet(tmp_path / "train.parquet")
    frame.to_csv(tmp_path / "train.csv", index=False)
    frame.to_csv(tmp_path / "train.csv.gz", index=False)
    from_frame = RankingData.from_pandas(frame)
    assert from_frame.feature_names == tuple(f"f{j}" for j in range(1, 47)) and from_frame.source is None
    assert_same(from_frame, data)
    for name in ("train.parquet", "train.csv", "train.csv.gz"):
        loaded = load_table(tmp_path / name)
        assert_same(loaded, data)
        assert loaded.source == tmp_path / name and loaded.feature_names == from_frame.feature_names
    assert load_table(tmp_path / "train.parquet", dtype=np.float64).X.dtype == np.float64


def test_to_pandas_writes_the_frame_from_pandas_reads(mq2008_train):
    """to_pandas is the frame the tests build by hand, and reads back to the same arrays (names f1.. for SVMlight)."""
    data, frame = mq2008_train
    written = data.to_pandas()
    pd.testing.assert_frame_equal(written, frame, check_dtype=False)
    assert_same(RankingData.from_pandas(written), data)
    renamed = data.to_pandas(query="query", label="grade")
    assert list(renamed.columns[:2]) == ["query", "grade"]
    with pytest.raises(ValueError, match="must differ"):
        data.to_pandas(label="f3")


def test_features_select_and_order_the_columns(tmp_path):
    frame = small_frame()[["f2", "qid", "f1", "label"]]
    data = RankingData.from_pandas(frame)
    assert data.feature_names == ("f2", "f1")
    chosen = RankingData.from_pandas(frame, features=["f1"])
    assert chosen.feature_names == ("f1",) and chosen.n_features == 1
    frame.to_parquet(tmp_path / "t.parquet")
    frame.to_csv(tmp_path / "t.csv", index=False)
    for path in (tmp_path / "t.parquet", tmp_path / "t.csv"):
        loaded = load_table(path, features=["f1", "f2"])
        assert loaded.feature_names == ("f1", "f2")
        assert np.array_equal(loaded.X, frame[["f1", "f2"]].to_numpy(np.float32), equal_nan=True)


def test_missing_values_stay_nan_and_query_ids_may_be_strings():
    frame = small_frame().assign(qid=["a", "a", "a", "b", "b", "c"], f3=pd.array([1, None, 3, 4, 5, 6], "Int64"))
    data = RankingData.from_pandas(frame)
    assert list(data.qids) == ["a", "b", "c"] and list(data.offsets) == [0, 3, 5, 6]
    assert np.isnan(data.X[2, 0]) and np.isnan(data.X[1, 2]) and np.isnan(data.X).sum() == 2


# --------------------------------------------------------------------------------------------------
# queries: contiguous, or sorted


def test_rows_of_a_query_must_be_contiguous_and_the_error_names_the_first_offending_row():
    frame = small_frame().iloc[[0, 1, 3, 2, 4, 5]]  # query 5's third row after query 2's first
    frame.index = [10, 11, 12, 13, 14, 15]
    with pytest.raises(NonContiguousQueryError) as raised:
        RankingData.from_pandas(frame)
    assert raised.value.row == 3 and raised.value.qid == 5 and raised.value.index_label == 13
    assert ("query column 'qid': query id 5 reappears at row 3 (index label 13) after rows of another query"
            in str(raised.value))
    assert "sort=True" in str(raised.value)


def test_sort_orders_the_queries_by_id_keeping_each_querys_rows_in_order():
    frame = small_frame().iloc[[0, 3, 1, 5, 4, 2]]
    data = RankingData.from_pandas(frame, sort=True)
    assert list(data.qids) == [2, 5, 9] and list(data.offsets) == [0, 2, 5, 6]
    expected = small_frame().iloc[[3, 4, 0, 1, 2, 5]]  # stable: query 5's rows keep the order 0, 1, 2
    assert np.array_equal(data.labels, expected["label"].to_numpy(float))
    assert np.array_equal(data.X, expected[["f1", "f2"]].to_numpy(np.float32), equal_nan=True)


def test_sort_fixes_the_shared_data_shuffled(mq2008_train):
    data, frame = mq2008_train
    shuffled = frame.sample(frac=1.0, random_state=0)
    with pytest.raises(NonContiguousQueryError):
        RankingData.from_pandas(shuffled)
    order = np.argsort(data.qids, kind="stable")
    assert_same(RankingData.from_pandas(frame, sort=True), data.subset(order))
    restored = RankingData.from_pandas(shuffled.sort_index(), sort=True)
    assert_same(restored, data.subset(order))


# --------------------------------------------------------------------------------------------------
# refused, with the column named


@pytest.mark.parametrize("arguments, message", [
    ({"query": "query_id"}, "no query column 'query_id' (query=... or --query-column names another); the columns "
                            "are 'qid', 'label', 'f1', 'f2'"),
    ({"label": "grade"}, "no label column 'grade'"),
    ({"features": ["f1", "f9"]}, "no feature column 'f9'"),
    ({"features": ["f1", "label"]}, "'label' is the label column; it cannot be a feature too"),
    ({"features": ["f1", "f1"]}, "feature column 'f1' is given twice"),
    ({"features": []}, "no feature columns"),
    ({"query": "label"}, "the query and label columns are both 'label'"),
])
def test_missing_or_misused_columns_are_named(arguments, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        RankingData.from_pandas(small_frame(), **arguments)


def test_non_numeric_feature_and_label_columns_are_named():
    with pytest.raises(ValueError, match=r"^feature column 'site' is not numeric \(dtype (object|str)\).*features=\["):
        RankingData.from_pandas(small_frame().assign(site=["a", "b", "c", "d", "e", "f"]))
    assert RankingData.from_pandas(small_frame().assign(site=list("abcdef")), features=["f1"]).n_features == 1
    with pytest.raises(ValueError, match="feature column 'day' is not numeric"):
        RankingData.from_pandas(small_frame().assign(day=pd.Timestamp("2024-01-01")))
    with pytest.raises(ValueError, match="label column 'label' is not numeric"):
        RankingData.from_pandas(small_frame().assign(label=list("abcdef")))


def test_empty_frame_and_frame_without_features_are_refused():
    with pytest.raises(ValueError, match="no rows"):
        RankingData.from_pandas(small_frame().iloc[:0])
    with pytest.raises(ValueError, match="no feature columns"):
        RankingData.from_pandas(small_frame()[["qid", "label"]])
    with pytest.raises(TypeError, match="expected a pandas DataFrame"):
        RankingData.from_pandas(small_frame().to_numpy())


@pytest.mark.parametrize("value, reason", [(np.nan, "is not finite"), (-1, "is negative"),
                                           (1.5, "is not a whole number"), (31, "exceeds max_label=30")])
def test_bad_labels_are_refused_as_elsewhere_naming_the_row(value, reason):
    frame = small_frame().astype({"label": float})
    frame.loc[4, "label"] = value
    frame.index = list("abcdef")
    with pytest.raises(InvalidLabelError, match=rf"^label column 'label': label .* at position 4 \(index label 'e'\) "
                                                rf"{reason}") as raised:
        RankingData.from_pandas(frame)
    assert raised.value.position == 4
    if value == 31:
        assert RankingData.from_pandas(frame, max_label=None).labels[4] == 31


def test_missing_query_ids_and_infinite_features_are_refused():
    with pytest.raises(ValueError, match=r"query column 'qid': missing query id at row 2 \(index label 2\)"):
        RankingData.from_pandas(small_frame().astype({"qid": float}).assign(qid=[5, 5, np.nan, 2, 2, 9]))
    with pytest.raises(ValueError, match=r"feature column 'f2': infinite value at row 1 \(index label 1\); missing"):
        RankingData.from_pandas(small_frame().assign(f2=[0.0, np.inf, 0, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"feature column 'f2': 1e\+300 at row 1 \(index label 1\) is too large for "
                                         r"float32: give dtype=np.float64"):
        RankingData.from_pandas(small_frame().assign(f2=[0.0, 1e300, 0, 0, 0, 0]))
    assert RankingData.from_pandas(small_frame().assign(f2=[0.0, 1e300, 0, 0, 0, 0]), dtype=np.float64).X[1, 1] == 1e300


def test_feature_names_survive_subsets_but_tables_are_not_widened():
    data = RankingData.from_pandas(small_frame())
    assert data.subset([2, 0]).feature_names == ("f1", "f2")
    assert data.widen(2) is data
    with pytest.raises(ValueError, match="named feature columns .* cannot be widened to 3"):
        data.widen(3)
    with pytest.raises(ValueError, match="2 feature names for 1 columns"):
        RankingData(data.X[:, :1], data.labels, data.qids, data.offsets, feature_names=("a", "b"))


# --------------------------------------------------------------------------------------------------
# files


def test_file_errors_name_the_file(tmp_path):
    frame = small_frame()
    frame.to_csv(tmp_path / "indexed.csv")  # with the index, as a column without a name
    with pytest.raises(ValueError, match=r"indexed.csv: column 'Unnamed: 0' has no name in the header"):
        load_table(tmp_path / "indexed.csv")
    assert load_table(tmp_path / "indexed.csv", features=["f1", "f2"]).n_features == 2
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(ValueError, match="empty.csv: empty file"):
        load_table(tmp_path / "empty.csv")
    (tmp_path / "header.csv").write_text("qid,label,f1\n")
    with pytest.raises(ValueError, match="header.csv: no rows"):
        load_table(tmp_path / "header.csv")
    (tmp_path / "twice.csv").write_text("qid,label,f1,f1\n1,0,2,3\n")
    with pytest.raises(ValueError, match="twice.csv: column 'f1' appears twice in the header"):
        load_table(tmp_path / "twice.csv")
    (tmp_path / "text.csv").write_text("qid,label,f1\n1,0,2\n1,1,high\n")
    with pytest.raises(ValueError, match=r"text.csv: feature column 'f1' is not numeric"):
        load_table(tmp_path / "text.csv")
    (tmp_path / "fake.parquet").write_text("qid,label,f1\n")
    with pytest.raises(ValueError, match="fake.parquet: cannot be read as Parquet"):
        load_table(tmp_path / "fake.parquet")
    frame.to_parquet(tmp_path / "t.parquet")
    with pytest.raises(ValueError, match="t.parquet: no feature column 'f7'"):
        load_table(tmp_path / "t.parquet", features=["f7"])
    with pytest.raises(FileNotFoundError, match="no such CSV file"):
        load_table(tmp_path / "absent.csv")
    with pytest.raises(ValueError, match="not a table"):
        load_table(tmp_path / "t.txt")
    assert is_table("a/B.PARQUET") and is_table("x.csv.gz") and is_table("x.pq") and not is_table("train.txt.gz")


def test_a_missing_pyarrow_is_named_with_the_extra_to_install(tmp_path, monkeypatch):
    (tmp_path / "t.parquet").write_bytes(b"PAR1")  # pyarrow is looked for before the file is read
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(MissingExtra) as raised:
        load_table(tmp_path / "t.parquet")
    assert isinstance(raised.value, ImportError)
    assert str(raised.value).startswith(f"reading {tmp_path / 't.parquet'} (Parquet) needs pyarrow: "
                                        "pip install 'plboost[parquet]'")


# --------------------------------------------------------------------------------------------------
# load_splits: tables beside SVMlight files


def test_load_splits_reads_tables_by_suffix_with_the_same_columns(tmp_path):
    train, test = make_synthetic(n_queries=12, seed=0), make_synthetic(n_queries=5, seed=1)
    frame_of(train).rename(columns={"qid": "q"}).to_parquet(tmp_path / "train.parquet")
    reordered = frame_of(test).rename(columns={"qid": "q"})
    reordered = reordered[["q", "label", *reversed(reordered.columns[2:])]]
    reordered.to_csv(tmp_path / "test.csv", index=False)
    svmlight = test.save_svmlight(tmp_path / "test.txt")
    loaded_train, loaded_test, again = load_splits(tmp_path / "train.parquet", tmp_path / "test.csv", svmlight,
                                                   query="q")
    assert_same(loaded_train, train)
    assert_same(loaded_test, test)  # the columns put back in the training file's order, by name
    assert loaded_test.feature_names == loaded_train.feature_names and again.feature_names is None
    reordered.drop(columns="f3").to_csv(tmp_path / "narrow.csv", index=False)
    with pytest.raises(ValueError, match=r"narrow.csv: the feature columns differ from those of .*train.parquet "
                                         r"\('f3' missing\)"):
        load_splits(tmp_path / "train.parquet", tmp_path / "narrow.csv", query="q")


def test_load_splits_refuses_options_that_no_file_given_takes(tmp_path):
    data = make_synthetic(n_queries=4, seed=0)
    frame_of(data).to_csv(tmp_path / "train.csv", index=False)
    svmlight = data.save_svmlight(tmp_path / "train.txt")
    with pytest.raises(ValueError, match=r"query='q' \(--query-column\), sort=True \(--sort-queries\): for tables "
                                         r".* but train.txt is an SVMlight file"):
        load_splits(svmlight, query="q", sort=True)
    with pytest.raises(ValueError, match=r"zero_based=True \(--zero-based\): for SVMlight files, but train.csv is "
                                         r"a table"):
        load_splits(tmp_path / "train.csv", zero_based=True)
    with pytest.raises(ValueError, match="train.csv: a table is read in memory; out-of-core reading"):
        load_splits(tmp_path / "train.csv", out_of_core=True)
    with pytest.raises(TypeError, match="unknown option 'zero_base'"):
        load_splits(tmp_path / "train.csv", zero_base=True)
    with pytest.raises(ValueError, match=r"train.csv: \d+ feature columns, but n_features=99"):
        load_splits(tmp_path / "train.csv", n_features=99)
    assert load_splits(svmlight, query="qid", sort=False)[0].n_docs == data.n_docs  # the defaults are no request
