"""Groups for fairness of exposure: a file beside the data, one per line, and a feature split at a threshold."""

import numpy as np
import pytest
import scipy.sparse as sp

from plboost.data import DataFormatError, groups_from_feature, read_groups


def test_a_groups_file_gives_one_group_per_line_in_order(tmp_path):
    path = tmp_path / "train.txt.groups"
    path.write_text("b\na\n7\nb")  # no last newline: still four
    np.testing.assert_array_equal(read_groups(path, 4), ["b", "a", "7", "b"])


@pytest.mark.parametrize("text, n_docs, message", [
    ("a\n\nb\n", 3, r"line 2: is empty"),
    ("a\nb c\n", 2, r"line 2: holds 2 values \('b c'\)"),
    ("a\nb\n", 3, r"2 groups for 3 documents"),
    ("a\nb\nc\n", 2, r"3 groups for 2 documents"),
    ("", 1, r"0 groups for 1 documents"),
])
def test_bad_groups_files_are_refused_naming_the_file_and_line(tmp_path, text, n_docs, message):
    path = tmp_path / "groups.txt"
    path.write_text(text)
    with pytest.raises(DataFormatError, match=message) as refused:
        read_groups(path, n_docs)
    assert str(refused.value).startswith(str(path))


def test_a_missing_or_binary_groups_file_is_refused(tmp_path):
    with pytest.raises(DataFormatError, match="no such groups file"):
        read_groups(tmp_path / "none", 1)
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(DataFormatError, match="not a text file of groups"):
        read_groups(binary, 1)


@pytest.mark.parametrize("sparse", [False, True])
def test_a_feature_above_its_threshold_is_group_one(sparse):
    X = np.array([[0.0, 3.0], [1.0, 0.5], [0.0, 2.0], [2.0, 1.0]])
    matrix = sp.csr_matrix(X) if sparse else X
    np.testing.assert_array_equal(groups_from_feature(matrix, 2, 1.0), [1, 0, 1, 0])
    np.testing.assert_array_equal(groups_from_feature(matrix, 1, 0.0), [0, 1, 0, 1])


@pytest.mark.parametrize("feature, threshold, message", [
    (0, 0.5, r"feature must be a feature number from 1 to 2 \(or a column's name\), got 0"),
    (3, 0.5, "got 3"),
    ("bm25", 0.5, "no feature column 'bm25'; the data has no names"),
    (True, 0.5, "got True"),
    (1, float("nan"), "threshold must be a finite number"),
])
def test_bad_features_and_thresholds_are_refused(feature, threshold, message):
    with pytest.raises(ValueError, match=message):
        groups_from_feature(np.zeros((2, 2)), feature, threshold)


def test_a_missing_feature_value_is_refused_naming_the_row():
    with pytest.raises(ValueError, match="feature 1 is missing \\(NaN\\) at row 1"):
        groups_from_feature(np.array([[0.0], [np.nan]]), 1, 0.0)


def test_a_tables_feature_is_named_by_its_column(tmp_path):
    import pandas as pd

    from plboost.data import load_table

    path = tmp_path / "train.csv"
    pd.DataFrame({"qid": [1, 1, 2], "label": [0, 1, 2], "bm25": [0.5, 3.0, 1.5], "pagerank": [0.9, 0.1, 0.6]}).to_csv(
        path, index=False)
    data = load_table(path)
    np.testing.assert_array_equal(groups_from_feature(data, "pagerank", 0.5), [1, 0, 1])
    np.testing.assert_array_equal(groups_from_feature(data, 1, 1.0), [0, 1, 1])
    with pytest.raises(ValueError, match="no feature column 'PageRank'; the feature columns are 'bm25', 'pagerank'"):
        groups_from_feature(data, "PageRank", 0.5)
