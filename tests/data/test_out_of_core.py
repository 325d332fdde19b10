"""Out-of-core loading (plboost.data.out_of_core): the same arrays and errors as the in-memory loader, batches of
whole queries within the memory budget, chunk files in the cache, the automatic choice."""

import gc
import gzip
import tracemalloc

import numpy as np
import pytest

from plboost.data import (DataFormatError, OutOfCoreData, RankingData, load_out_of_core, load_splits, load_svmlight,
                          make_synthetic)
from plboost.data import cache, out_of_core, svmlight_parser


def write(path, text, *, compress=False):
    data = text.encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def assert_same(loaded, expected):
    """``loaded`` (out of core) holds exactly the arrays of ``expected`` (in memory)."""
    assert isinstance(loaded, OutOfCoreData)
    in_memory = loaded.to_ranking_data()
    assert in_memory.X.dtype == expected.X.dtype and in_memory.X.shape == expected.X.shape
    np.testing.assert_array_equal(in_memory.X, expected.X)  # NaN equal to NaN, bit for bit otherwise
    assert in_memory.X.tobytes() == expected.X.tobytes()
    for field in ("labels", "qids", "offsets"):
        np.testing.assert_array_equal(getattr(loaded, field), getattr(expected, field))
        assert getattr(loaded, field).dtype == getattr(expected, field).dtype
    assert (loaded.n_docs, loaded.n_queries, loaded.n_features) == (expected.n_docs, expected.n_queries,
                                                                    expected.n_features)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 4 KiB of text: a file of a few hundred KiB makes dozens of chunk files."""
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 4096)


def widening_file(tmp_path):
    """A file whose later queries use larger feature indices (so earlier chunk files are narrower), with NaN,
    zeros written explicitly, -0.0 and a comment."""
    data = make_synthetic(n_queries=60, n_features=12, seed=4)
    X = data.X.copy()
    X[: data.n_docs // 2, 6:] = 0  # the first half uses 6 features, the second 12
    X[3, 2] = np.nan
    X[5, 1] = -0.0
    data = RankingData(X, data.labels, data.qids, data.offsets)
    path = data.save_svmlight(tmp_path / "wide.txt")
    with open(path, "ab") as f:
        f.write(b"# a comment\n2 qid:999 1:0 3:-0.0 12:7.5 # trailing\n")
    return path


@pytest.mark.parametrize("options", [{}, {"n_features": 15}, {"dtype": np.float64}, {"zero_based": True}],
                         ids=["default", "n_features", "float64", "zero_based"])
def test_same_arrays_as_in_memory(tmp_path, small_chunks, options):
    path = widening_file(tmp_path)
    loaded = load_out_of_core(path, cache=False, memory_budget_bytes=1000, **options)
    assert loaded.n_chunks > 10
    widths = {chunk.width for chunk in loaded._chunks}
    assert len(widths) > 1 or "n_features" in options  # chunks written before the wider index are narrower
    assert_same(loaded, load_svmlight(path, cache=False, **options))


def test_gzip_crlf_and_query_file(tmp_path, small_chunks):
    lines = [f"{i % 3} 1:{i} 3:{i / 7:.5f}" for i in range(400)]
    path = write(tmp_path / "rank.train.gz", "\ufeff" + "\r\n".join(lines) + "\r\n", compress=True)
    write(tmp_path / "rank.train.query", "\n".join(["10"] * 40) + "\n")
    assert_same(load_out_of_core(path, cache=False), load_svmlight(path, cache=False))


def test_real_file(shared_data, monkeypatch):
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 1 << 18)
    path = shared_data / "MSLR-WEB10K-5k" / "msn1.fold1.train.5k.txt.gz"
    assert_same(load_out_of_core(path, memory_budget_bytes=1 << 16), load_svmlight(path, cache=False))


def test_batches_hold_whole_queries_within_the_budget(tmp_path, small_chunks):
    path = widening_file(tmp_path)
    expected = load_svmlight(path, cache=False)
    budget = 40 * expected.n_features * 4  # 40 rows
    loaded = load_out_of_core(path, memory_budget_bytes=budget)
    assert loaded.batch_rows == 40
    batches = list(loaded.batches())
    assert len(batches) > 5
    for batch in batches:  # within the budget, unless one query alone is larger
        assert batch.X.nbytes <= budget or batch.n_queries == 1
    assert [q for b in batches for q in b.qids] == list(expected.qids)  # every query once, whole, in order
    np.testing.assert_array_equal(np.concatenate([b.X for b in batches]), expected.X)
    np.testing.assert_array_equal(np.concatenate([b.labels for b in batches]), expected.labels)
    assert [b.n_docs for b in batches] == [int(expected.offsets[e] - expected.offsets[f])
                                           for f, e in loaded.query_batches()]
    sizes = np.concatenate([b.group_sizes for b in batches])
    np.testing.assert_array_equal(sizes, expected.group_sizes)
    large = loaded.query_batches(max_bytes=1)  # smaller than any query: one query per batch
    assert large == [(q, q + 1) for q in range(expected.n_queries)]


def test_rows_across_chunks_and_widths(tmp_path, small_chunks):
    path = widening_file(tmp_path)
    expected = load_svmlight(path, cache=False)
    loaded = load_out_of_core(path, cache=False)
    n = expected.n_docs
    for start, stop in [(0, 1), (0, n), (5, 400), (n - 1, n), (n, n), (137, 139)]:
        np.testing.assert_array_equal(loaded.rows(start, stop), expected.X[start:stop])
    wider = loaded.widen(20)
    np.testing.assert_array_equal(wider.rows(0, n), expected.widen(20).X)
    narrower = loaded.with_width(4)
    np.testing.assert_array_equal(narrower.rows(0, n), expected.X[:, :4])
    with pytest.raises(ValueError, match="cannot narrow"):
        loaded.widen(3)
    with pytest.raises(IndexError):
        loaded.rows(0, n + 1)
    with pytest.raises(AttributeError, match="no X in memory"):
        loaded.X  # noqa: B018


def test_load_splits_aligns_widths(tmp_path):
    data = make_synthetic(n_queries=30, n_features=9, seed=2)
    train = data.subset(np.arange(20)).save_svmlight(tmp_path / "train.txt")
    narrow = RankingData(data.X[:, :5], data.labels, data.qids, data.offsets).subset(np.arange(20, 30))
    valid = narrow.save_svmlight(tmp_path / "valid.txt")
    loaded = load_splits(train, valid, None, out_of_core=True)
    expected = load_splits(train, valid, None)
    assert loaded[2] is None
    for got, want in zip(loaded[:2], expected[:2], strict=True):
        assert_same(got, want)


# --- errors: those of the in-memory loader ------------------------------------------------------------------

GOOD = "".join(f"{q % 3} qid:{q // 4} 1:{q} 2:0.5\n" for q in range(40))
MALFORMED = {
    "feature value": GOOD + "0 qid:10 1:0.1 3:abc\n",
    "missing label": GOOD + "qid:10 1:0.5\n",
    "indices not increasing": GOOD + "0 qid:10 3:1 2:1\n",
    "negative label": GOOD + "-1 qid:10 1:0.5\n",
    "label above max_label": GOOD + "31 qid:10 1:0.5\n",
    "infinite feature": GOOD + "0 qid:10 1:0.5 4:-inf\n",
    "feature index 0": GOOD + "0 qid:10 0:0.5\n",
    "qid missing": GOOD + "0 1:0.5\n",
    "qid reappears": GOOD + "0 qid:11 1:1\n1 qid:3 1:0.5\n",
    "two errors": GOOD + "0 qid:10 1:abc\n" + GOOD[:20] + "-1 qid:12 1:1\n",
    "no data lines": "# only a comment\n\n",
    "no qid and no query file": "1 1:1\n0 1:2\n",
    "utf-16": "\ufeff1 qid:1 1:1\n",
}


@pytest.mark.parametrize("chunk_bytes", [16 << 20, 30], ids=["one chunk", "tiny chunks"])
@pytest.mark.parametrize("case", MALFORMED)
def test_errors_are_those_of_the_in_memory_loader(tmp_path, monkeypatch, case, chunk_bytes):
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", chunk_bytes)
    path = tmp_path / "bad.txt"
    path.write_bytes(MALFORMED[case].encode("utf-16" if case == "utf-16" else "utf-8"))
    with pytest.raises(DataFormatError) as expected:
        load_svmlight(path, cache=False)
    with pytest.raises(DataFormatError) as got:
        load_out_of_core(path)
    assert str(got.value) == str(expected.value)
    assert (got.value.path, got.value.line) == (expected.value.path, expected.value.line)
    assert not any((cache.cache_dir() / "svmlight").glob("*"))  # nothing stored
    assert not any((cache.cache_dir() / "scratch").glob("*"))  # nothing left behind


def test_other_refusals(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent.txt"):
        load_out_of_core(tmp_path / "absent.txt")
    path = write(tmp_path / "f.txt", GOOD)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        load_out_of_core(path, dtype=np.int32)
    with pytest.raises(ValueError, match="memory_budget_bytes must be an integer >= 1"):
        load_out_of_core(path, memory_budget_bytes=0)
    with pytest.raises(ValueError, match="dense=False"):
        load_splits(path, out_of_core=True, dense=False)
    with pytest.raises(DataFormatError, match=r"f\.txt, line 41: feature index 3 is beyond n_features=2"):
        load_out_of_core(write(tmp_path / "f.txt", GOOD + "0 qid:10 3:1\n"), n_features=2)


def test_stray_large_index_is_refused_before_filling_the_disk(tmp_path):
    text = "".join(f"0 qid:{i} 1:1\n" for i in range(300)) + "1 qid:300 1000000:1\n"
    with pytest.raises(DataFormatError, match=r"line 301: feature index 1000000 makes X 1,000,000 columns wide: read "
                                              r"it in memory with dense=False"):
        load_out_of_core(write(tmp_path / "f.txt", text))
    assert not any((cache.cache_dir() / "scratch").glob("*"))


# --- the cache ----------------------------------------------------------------------------------------------


def test_second_load_parses_nothing(tmp_path, small_chunks, parser_calls):
    path = widening_file(tmp_path)
    first = load_out_of_core(path)
    parsed = len(parser_calls)
    assert parsed > 10
    (entry,) = (cache.cache_dir() / "svmlight").iterdir()
    assert first.directory == entry
    names = sorted(p.name for p in entry.iterdir())
    assert names[:first.n_chunks] == [f"X_{k:06d}.npy" for k in range(first.n_chunks)]
    assert names[first.n_chunks:] == ["labels.npy", "manifest.json", "offsets.npy", "qids.npy", "shape.npy"]
    second = load_out_of_core(path, memory_budget_bytes=123)
    assert len(parser_calls) == parsed  # nothing parsed again
    assert second.memory_budget_bytes == 123
    assert_same(second, load_svmlight(path, cache=False))
    assert load_svmlight(path) is not None  # the in-memory entry is another one
    assert len(list((cache.cache_dir() / "svmlight").iterdir())) == 2


def test_cache_false_leaves_nothing_once_the_data_are_gone(tmp_path, small_chunks):
    path = widening_file(tmp_path)
    loaded = load_out_of_core(path, cache=False)
    directory = loaded.directory
    assert directory.parent == cache.cache_dir() / "scratch" and directory.is_dir()
    wider = loaded.widen(30)  # shares the files
    del loaded
    gc.collect()
    assert directory.is_dir()
    assert wider.rows(0, 3).shape == (3, 30)
    del wider
    gc.collect()
    assert not directory.exists()
    assert not (cache.cache_dir() / "svmlight").exists()


@pytest.mark.parametrize("damage", ["truncated chunk", "missing chunk", "bad shape"])
def test_damaged_entry_is_parsed_again(tmp_path, small_chunks, parser_calls, damage):
    path = widening_file(tmp_path)
    expected = load_svmlight(path, cache=False)
    parsed = len(parser_calls)
    first = load_out_of_core(path)
    entry = first.directory
    del first
    if damage == "truncated chunk":
        with open(entry / "X_000003.npy", "r+b") as f:
            f.truncate(200)
    elif damage == "missing chunk":
        (entry / "X_000002.npy").unlink()
    else:
        np.save(entry / "shape.npy", np.array([5, 5]))
    assert_same(load_out_of_core(path), expected)
    assert len(parser_calls) == 3 * parsed  # parsed again


def test_a_dead_process_scratch_directory_is_removed(tmp_path):
    root = cache.cache_dir() / "scratch"
    root.mkdir(parents=True)
    (root / "999999999-chunks-left").mkdir()  # no such process
    (root / "notes").mkdir()  # not ours: kept
    load_out_of_core(write(tmp_path / "f.txt", GOOD), cache=False)
    assert sorted(p.name for p in root.iterdir()) == ["notes"]


# --- memory ---------------------------------------------------------------------------------------------------


def test_loading_and_reading_stay_below_the_dense_matrix(tmp_path, monkeypatch):
    """Peak traced memory (numpy's allocations included) of an out-of-core load and a pass over its batches:
    a fraction of the dense X, which the in-memory loader holds whole."""
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 1 << 16)
    data = make_synthetic(n_queries=150, n_features=60, seed=5)
    path = data.save_svmlight(tmp_path / "f.txt")
    dense = data.X.nbytes
    del data
    load_out_of_core(path, cache=False)  # compiles and warms up outside the measurement
    gc.collect()
    tracemalloc.start()
    try:
        loaded = load_out_of_core(path, cache=False, memory_budget_bytes=dense // 20)
        _, parsing = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        total = sum(float(batch.X.sum(dtype=np.float64)) for batch in loaded.batches())
        _, reading = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert np.isfinite(total) and loaded.n_chunks > 5
    assert parsing < dense / 2, (parsing, dense)
    assert reading < dense / 4, (reading, dense)


# --- the automatic choice ----------------------------------------------------------------------------------------


def test_estimate_of_the_dense_size(tmp_path, monkeypatch):
    data = make_synthetic(n_queries=200, n_features=30, seed=6)
    path = data.save_svmlight(tmp_path / "f.txt")
    exact = out_of_core.estimate_dense(path)
    assert exact.exact and (exact.n_docs, exact.n_features, exact.nbytes) == (data.n_docs, 30, data.X.nbytes)
    assert out_of_core.estimate_dense(path, n_features=40, dtype=np.float64).nbytes == data.n_docs * 40 * 8
    monkeypatch.setattr(svmlight_parser, "CHUNK_BYTES", 1 << 16)  # the first chunk: a part of the file
    for name in ("f.txt", "f.txt.gz"):
        if name.endswith(".gz"):
            path = data.save_svmlight(tmp_path / name)
        estimate = out_of_core.estimate_dense(path)
        assert not estimate.exact and estimate.n_features == 30
        assert abs(estimate.n_docs / data.n_docs - 1) < 0.2, (name, estimate.n_docs, data.n_docs)


def test_choice_follows_the_memory_available(tmp_path):
    data = make_synthetic(n_queries=40, n_features=10, seed=7)
    train = data.save_svmlight(tmp_path / "train.txt")
    lines = []
    dense = data.X.nbytes
    assert not out_of_core.choose_out_of_core([train, None], available=10 * dense, log=lines.append)
    assert lines == []
    assert out_of_core.choose_out_of_core([train, None], available=dense, log=lines.append)
    (line,) = lines
    assert "train.txt" in line and "reading out of core" in line and "--in-memory" in line
    assert not out_of_core.choose_out_of_core([train], available=None)  # unknown: in memory


def test_load_splits_chooses_by_itself(tmp_path, monkeypatch, capsys):
    data = make_synthetic(n_queries=40, n_features=10, seed=7)
    train = data.save_svmlight(tmp_path / "train.txt")
    monkeypatch.setattr(out_of_core, "available_memory_bytes", lambda: 100 * data.X.nbytes)
    (loaded,) = load_splits(train, out_of_core=None)
    assert isinstance(loaded, RankingData) and capsys.readouterr().err == ""
    monkeypatch.setattr(out_of_core, "available_memory_bytes", lambda: data.X.nbytes)
    (loaded,) = load_splits(train, out_of_core=None)
    assert isinstance(loaded, OutOfCoreData)
    assert "reading out of core" in capsys.readouterr().err
    assert out_of_core.available_memory_bytes.__module__  # patched; the real one:
    monkeypatch.undo()
    assert out_of_core.available_memory_bytes() > 0


def test_a_fifo_is_refused_before_anything_reads_it(tmp_path):
    """A FIFO as training data hung: the size estimate read it before any check. Run in a process with a timeout,
    so that a regression fails instead of hanging the suite."""
    import os
    import subprocess
    import sys

    fifo = tmp_path / "f.txt"
    os.mkfifo(fifo)
    code = ("import sys\nfrom plboost.data import load_splits\nfrom plboost.cli import main\n"
            f"rc = main(['train', '--train', {str(fifo)!r}, '--quiet'])\n"
            "try:\n"
            f"    load_splits({str(fifo)!r}, out_of_core=None)\n"
            "except ValueError as error:\n"
            "    print('load_splits:', error)\n"
            "sys.exit(rc)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert f"{fifo}: not a regular file (a pipe, a device or a socket)" in done.stderr
    assert f"load_splits: {fifo}: not a regular file" in done.stdout
