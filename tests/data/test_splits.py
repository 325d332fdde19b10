"""Scoring out-of-core data within the memory budget (plboost.data.splits.predict_scores, issue 27), and the
budget's handling where files are read in memory (load_splits)."""

import weakref

import numpy as np
import pytest

from plboost.data import OutOfCoreData, load_out_of_core, load_splits, make_synthetic, out_of_core, splits
from plboost.data.ranking_data import RankingData


@pytest.fixture(scope="module")
def data_files(tmp_path_factory):
    """A training and a test file of 20 features; the test file has a query of 400 documents, larger than the
    budgets used below, besides small ones."""
    directory = tmp_path_factory.mktemp("splits")
    train = make_synthetic(n_queries=120, n_features=20, docs_per_query=(5, 60), seed=11)
    test = make_synthetic(n_queries=40, n_features=20, docs_per_query=(5, 60), seed=12)
    big = make_synthetic(n_queries=1, n_features=20, docs_per_query=(400, 400), seed=13)
    test = RankingData(np.vstack([test.X, big.X]), np.concatenate([test.labels, big.labels]),
                       np.concatenate([test.qids, big.qids + 1000]),
                       np.concatenate([test.offsets, test.offsets[-1] + big.offsets[1:]]))
    return {"train": train.save_svmlight(directory / "train.txt"), "test": test.save_svmlight(directory / "test.txt")}


class Recorder:
    """A model whose score of a row is the sum of its features; it records each batch's shape and dtype, and
    checks that the batch before it was freed (no reference left) before the next was read."""

    def __init__(self, data: OutOfCoreData, monkeypatch):
        self.batches, self.alive = [], []
        self.previous = None
        rows = data.rows

        def reading(start, stop):
            self.alive.append(self.previous is not None and self.previous() is not None)
            X = rows(start, stop)
            self.previous = weakref.ref(X)
            return X

        monkeypatch.setattr(data, "rows", reading)

    def predict(self, X):
        self.batches.append((X.shape, X.dtype))
        return X.sum(axis=1, dtype=np.float64)


def test_scores_batch_by_batch_within_the_budget(data_files, monkeypatch):
    row_bytes = 20 * 4 + 8  # a row of float32 features and its float64 score
    data = load_out_of_core(data_files["test"], cache=False, memory_budget_bytes=50 * row_bytes + 7)
    model = Recorder(data, monkeypatch)
    scores = splits.predict_scores(model, data)
    expected = data.to_ranking_data().X.sum(axis=1, dtype=np.float64)
    assert scores.dtype == np.float64 and scores.shape == (data.n_docs,)
    np.testing.assert_array_equal(scores, expected)
    sizes = [shape[0] for shape, _ in model.batches]
    assert len(sizes) == -(-data.n_docs // 50) and set(sizes[:-1]) == {50} and sum(sizes) == data.n_docs
    assert all(dtype == np.float32 for _, dtype in model.batches)  # as stored: no float64 copy
    assert not any(model.alive)  # each batch freed before the next was read
    assert max(data.group_sizes) == 400 > 50  # rows, not whole queries: a large query is read in parts

    model.batches.clear()  # a budget given to the call replaces the data's
    splits.predict_scores(model, data, memory_budget_bytes=200 * row_bytes)
    assert [shape[0] for shape, _ in model.batches][:-1] == [200] * (len(model.batches) - 1)


def test_streamed_batches_stop_at_their_cap_whatever_the_budget(data_files, monkeypatch):
    monkeypatch.setattr(out_of_core, "STREAM_BATCH_BYTES", 30 * (20 * 4 + 8))
    data = load_out_of_core(data_files["test"], cache=False)  # the default budget, 256 MiB
    model = Recorder(data, monkeypatch)
    splits.predict_scores(model, data)
    assert max(shape[0] for shape, _ in model.batches) == 30
    assert data.stream_batch_rows() == out_of_core.STREAM_BATCH_BYTES // 80  # LightGBM's binning: X alone
    assert data.stream_batch_rows(1) == 1 and data.batch_rows == (256 << 20) // 80  # XGBoost's pages: the budget


def test_lightgbm_bins_rows_in_streamed_batches(data_files):
    pytest.importorskip("lightgbm")
    data = load_out_of_core(data_files["train"], cache=False, memory_budget_bytes=4000)
    assert data.to_lightgbm().data.batch_size == data.stream_batch_rows() == 4000 // 80


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_out_of_core_scores_equal_in_memory_scores_bit_for_bit(data_files, engine):
    from plboost.engines import train
    from plboost.objectives import PLRank

    train_data, test = load_splits(data_files["train"], data_files["test"], n_features=20)
    model = train(engine, PLRank(), train_data, rounds=8)
    expected = np.asarray(model.predict(test.X))
    if engine == "xgboost":  # from the array in place (no DMatrix copy): the scores of a DMatrix, bit for bit
        import xgboost as xgb

        from_matrix = model.booster.predict(xgb.DMatrix(test.X), output_margin=True,
                                            iteration_range=(0, model.trees_used))
        assert from_matrix.tobytes() == expected.tobytes()
    chunks = load_out_of_core(data_files["test"], cache=False, memory_budget_bytes=1000, n_features=20)
    assert len(chunks.row_ranges(extra_bytes_per_row=8)) > 50
    got = splits.predict_scores(model, chunks)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, expected.astype(np.float64))
    assert got.tobytes() == expected.astype(np.float64).tobytes()


def test_a_memory_budget_with_files_read_in_memory(data_files, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"memory_budget_bytes, --memory-budget.*out_of_core=False \(--in-memory\)"):
        load_splits(data_files["train"], out_of_core=False, memory_budget_bytes=1 << 20)
    with pytest.raises(ValueError, match="memory_budget_bytes must be an integer >= 1"):
        load_splits(data_files["train"], out_of_core=None, memory_budget_bytes=0)
    lines = []
    monkeypatch.setattr(out_of_core, "available_memory_bytes", lambda: 1 << 40)  # they fit: read in memory
    train, test = load_splits(data_files["train"], data_files["test"], out_of_core=None, memory_budget_bytes=1 << 20,
                              log=lines.append)
    assert isinstance(train, RankingData) and isinstance(test, RankingData)
    assert lines == ["plboost: train.txt, test.txt: read in memory (they fit the memory available; --out-of-core "
                     "or out_of_core=True reads them out of core); the memory budget (--memory-budget, "
                     "memory_budget_bytes) applies only to out-of-core reading"]
    lines.clear()
    load_splits(data_files["train"], out_of_core=None, log=lines.append)
    assert lines == []  # no budget given: nothing to say
    (chunks,) = load_splits(data_files["train"], out_of_core=True, memory_budget_bytes=1 << 20, log=lines.append)
    assert isinstance(chunks, OutOfCoreData) and chunks.memory_budget_bytes == 1 << 20 and lines == []
    pytest.importorskip("pandas")
    table = tmp_path / "train.csv"
    train.to_pandas().to_csv(table, index=False)
    load_splits(table, out_of_core=None, memory_budget_bytes=1 << 20, log=lines.append)
    assert len(lines) == 1 and "train.csv: read in memory (tables are read in memory)" in lines[0]


def test_largest_label_scans_labels_without_parsing_features(tmp_path):
    import gzip

    from plboost.data import DataFormatError
    from plboost.data.splits import largest_label

    plain = tmp_path / "a.txt"
    plain.write_bytes(b"# a comment line\r\n1 qid:1 1:0.5\r\n  3 qid:1 1:0.2 # 7 in a comment\r\n\r\n0 qid:2 2:9\n")
    packed = tmp_path / "b.txt.gz"
    packed.write_bytes(gzip.compress(b"4 qid:1 1:0.5\n2 qid:1 1:1\n"))
    assert largest_label([plain, None]) == 3 and largest_label([plain, packed]) == 4
    zeros = tmp_path / "zeros.txt"
    zeros.write_text("0 qid:1 1:1\n0 qid:1 1:2\n")
    assert largest_label([zeros]) == 1  # ERR's g_max is at least 1
    bad = tmp_path / "bad.txt"
    bad.write_text("1 qid:1 1:1\nhigh qid:1 1:2\n")
    with pytest.raises(DataFormatError, match="bad.txt, line 2"):  # the loader's message, with its line
        largest_label([bad], cache=False)


def test_largest_label_of_a_table_reads_its_label_column_alone(tmp_path):
    """A table's features are not read for g_max (review finding: it loaded the whole table); a label column that
    is not numbers is reported by the loader, naming the file."""
    pd = pytest.importorskip("pandas")
    from plboost.data.splits import largest_label

    table = tmp_path / "t.csv"
    # a feature the loader would refuse (text): only the label column is read
    pd.DataFrame({"qid": [1, 1, 2], "grade": [0, 3, 1], "f": ["x", "y", "z"]}).to_csv(table, index=False)
    assert largest_label([table], label="grade") == 3
    words = tmp_path / "words.csv"
    pd.DataFrame({"qid": [1, 1], "label": ["high", "low"], "f": [1.0, 2.0]}).to_csv(words, index=False)
    with pytest.raises(ValueError, match="words.csv"):
        largest_label([words])
