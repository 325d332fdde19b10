"""Click logs read from tables: the two layouts, impressions told by runs of a query, and every refusal naming the
file, row and column."""

import numpy as np
import pandas as pd
import pytest

from plboost.clicks import ClickLogError, load_click_log


def write(tmp_path, name, frame):
    path = tmp_path / name
    if name.endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


CLICKS = pd.DataFrame({"qid": [7, 7, 7, 3, 3, 7, 7], "doc_id": ["a", "b", "c", "x", "y", "b", "a"],
                       "position": [1, 2, 3, 1, 2, 1, 2], "click": [0, 1, 0, 1, 0, 1, 1]})
DOCUMENTS = pd.DataFrame({"qid": [3, 3, 7, 7, 7, 7], "doc_id": ["x", "y", "a", "b", "c", "d"],
                          "logging_score": [0.5, 0.1, 2.0, 1.0, 0.0, -1.0], "bm25": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]})


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_log_with_a_documents_table(tmp_path, suffix):
    log = load_click_log(write(tmp_path, "clicks" + suffix, CLICKS), write(tmp_path, "docs" + suffix, DOCUMENTS))
    assert log.n_impressions == 3 and log.n_queries == 2 and log.n_documents == 6  # d: never shown, still there
    np.testing.assert_array_equal(log.qids, [3, 7])
    np.testing.assert_array_equal(log.impression, [0, 0, 0, 1, 1, 2, 2])  # runs of a query id
    np.testing.assert_array_equal(log.impression_query, [1, 0, 1])
    shown = [(log.qids[log.query_of_document[d]], log.doc_ids[d], float(log.X[d, 0])) for d in log.document]
    assert shown[:3] == [(7, "a", 3.0), (7, "b", 4.0), (7, "c", 5.0)] and shown[5] == (7, "b", 4.0)
    np.testing.assert_array_equal(log.logging_scores, [0.5, 0.1, 2.0, 1.0, 0.0, -1.0])
    assert log.feature_names == ("bm25",) and log.click.sum() == 4


def test_inline_features_with_and_without_document_ids(tmp_path):
    frame = pd.DataFrame({"qid": [1, 1, 1, 1], "impression": [10, 10, 11, 11], "position": [1, 2, 1, 2],
                          "click": [1, 0, 0, 1], "f": [0.5, 0.25, 0.25, 0.5], "g": [1.0, 2.0, 2.0, 1.0]})
    log = load_click_log(write(tmp_path, "inline.csv", frame))
    assert log.n_documents == 2 and log.n_impressions == 2
    np.testing.assert_array_equal(log.document, [0, 1, 1, 0])
    with_ids = load_click_log(write(tmp_path, "ids.csv", frame.assign(doc_id=["u", "v", "v", "u"])))
    np.testing.assert_array_equal(with_ids.doc_ids, ["u", "v"])
    np.testing.assert_array_equal(with_ids.document, [0, 1, 1, 0])


def test_impressions_by_id_may_interleave(tmp_path):
    frame = CLICKS.assign(impression=[5, 5, 6, 8, 8, 6, 6])
    frame = frame.assign(position=[1, 2, 1, 1, 2, 2, 3])
    log = load_click_log(write(tmp_path, "c.csv", frame), write(tmp_path, "d.csv", DOCUMENTS))
    np.testing.assert_array_equal(log.impression, [0, 0, 1, 1, 1, 2, 2])
    np.testing.assert_array_equal(log.position, [1, 2, 1, 2, 3, 1, 2])


def changed(frame, column, row, value):
    frame = frame.copy()
    frame[column] = frame[column].astype(object)
    frame.loc[row, column] = value
    return frame


@pytest.mark.parametrize("clicks, documents, message", [
    (CLICKS.drop(columns="click"), None, r"c\.csv: no column 'click'; a click log's columns are"),
    (changed(CLICKS, "position", 4, 0), None, r"c\.csv: row 5 \(line 6\), column 'position': 0 is not a whole "
                                              r"number >= 1"),
    (changed(CLICKS, "position", 2, 1.5), None, r"row 3 \(line 4\), column 'position': 1.5 is not a whole number"),
    (changed(CLICKS, "click", 1, 2), None, r"row 2 \(line 3\), column 'click': 2 is not 0 or 1"),
    (changed(CLICKS, "click", 6, "yes"), None, r"row 7 \(line 8\), column 'click': 'yes' is not 0 or 1"),
    (changed(CLICKS, "position", 2, 2), None, r"row 3 \(line 4\), column 'position': position 2 repeats row 2 "
                                              r"\(line 3\) within the impression of query 7"),
    (CLICKS.assign(impression=[1, 1, 1, 1, 1, 2, 2]), None, r"row 4 \(line 5\), column 'qid': impression 1 holds "
                                                             r"rows of queries 7 and 3"),
    (changed(CLICKS, "qid", 3, None), None, r"row 4 \(line 5\), column 'qid': no value"),
    (changed(CLICKS, "doc_id", 6, "zz"), DOCUMENTS, r"c\.csv: row 7 \(line 8\), column 'doc_id': document 'zz' of "
                                                    r"query 7 is not in the documents table .*d\.csv"),
    (CLICKS, pd.concat([DOCUMENTS, DOCUMENTS.iloc[[2]]]), r"d\.csv: row 7 \(line 8\), column 'doc_id': document 'a' "
                                                          r"of query 7 is listed twice \(first at row 3"),
    (CLICKS, DOCUMENTS.assign(logging_score=[0.5, np.nan, 1, 1, 1, 1]), r"d\.csv: row 2 \(line 3\), column "
                                                                        r"'logging_score': not a finite number"),
    (CLICKS.assign(f=[1.0, 2, 3, 4, 5, 6, 7]), None, r"c\.csv: row 6 \(line 7\): document 'b' of query 7 has other "
                                                     r"features than at row 2"),
    (CLICKS.assign(propensity=[0.5, 1, 0, 1, 1, 1, 1]), None, r"row 3 \(line 4\), column 'propensity': 0(\.0)? is "
                                                              r"not a probability in \(0, 1\]"),
    (CLICKS.iloc[:0], None, r"c\.csv: (no rows|empty file)"),
])
def test_a_bad_log_is_refused_naming_the_file_row_and_column(tmp_path, clicks, documents, message):
    clicks_path = write(tmp_path, "c.csv", clicks)
    documents_path = write(tmp_path, "d.csv", documents) if documents is not None else None
    with pytest.raises(ClickLogError if "no rows" not in message else ValueError, match=message):
        load_click_log(clicks_path, documents_path)


def test_parquet_rows_are_named_without_lines(tmp_path):
    with pytest.raises(ClickLogError, match=r"c\.parquet: row 5, column 'position': 0 is not"):
        load_click_log(write(tmp_path, "c.parquet", changed(CLICKS, "position", 4, 0).astype({"position": int})))
