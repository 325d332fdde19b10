import os

import numpy as np
import pytest

from plboost.data import clear_cache, load_svmlight, make_synthetic
from plboost.data import cache, svmlight


@pytest.fixture
def parser_calls(monkeypatch):
    """Counts the calls of scikit-learn's parser made by the loader."""
    calls = []
    parse = svmlight.load_svmlight_file

    def counting(*args, **kwargs):
        calls.append(1)
        return parse(*args, **kwargs)

    monkeypatch.setattr(svmlight, "load_svmlight_file", counting)
    return calls


@pytest.fixture
def data_file(tmp_path):
    data = make_synthetic(n_queries=30, n_features=8, seed=1)
    return data, data.save_svmlight(tmp_path / "train.txt")


def entries():
    root = cache.cache_dir() / "svmlight"
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def assert_same(a, b):
    np.testing.assert_array_equal(a.X.toarray() if hasattr(a.X, "toarray") else a.X,
                                  b.X.toarray() if hasattr(b.X, "toarray") else b.X)
    for field in ("labels", "qids", "offsets"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_cache_lives_where_the_environment_says(tmp_path, monkeypatch):
    monkeypatch.setenv("PLBOOST_CACHE_DIR", str(tmp_path / "here"))
    assert cache.cache_dir() == tmp_path / "here"
    monkeypatch.delenv("PLBOOST_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "plboost"


def test_second_load_skips_the_parser(data_file, parser_calls):
    data, path = data_file
    first = load_svmlight(path)
    assert len(parser_calls) == 1 and len(entries()) == 1
    second = load_svmlight(path)
    assert len(parser_calls) == 1
    assert_same(first, second)
    assert_same(second, data)
    assert second.source == path and second.X.dtype == np.float32


def test_sparse_entries_round_trip(data_file, parser_calls):
    _, path = data_file
    first = load_svmlight(path, dense=False)
    second = load_svmlight(path, dense=False)
    assert len(parser_calls) == 1
    assert second.X.format == "csr"
    assert_same(first, second)


def test_options_that_change_the_result_have_their_own_entries(data_file, parser_calls):
    _, path = data_file
    variants = [{}, {"dense": False}, {"dtype": np.float64}, {"n_features": 20}, {"zero_based": True},
                {"max_label": None}]
    for options in variants:
        load_svmlight(path, **options)
    assert len(parser_calls) == len(variants) and len(entries()) == len(variants)
    assert load_svmlight(path, n_features=20).X.shape[1] == 20
    assert load_svmlight(path, zero_based=True).X.shape[1] == 9
    assert len(parser_calls) == len(variants)


def test_a_changed_file_is_parsed_again(data_file, parser_calls):
    data, path = data_file
    load_svmlight(path)
    other = make_synthetic(n_queries=30, n_features=8, seed=2)
    other.save_svmlight(path)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # even if the clock is coarse
    reloaded = load_svmlight(path)
    assert len(parser_calls) == 2
    assert_same(reloaded, other)


def test_a_changed_query_file_is_read_again(tmp_path, parser_calls):
    path = tmp_path / "rank.train"
    path.write_text("1 1:1\n0 1:2\n2 1:3\n")
    (tmp_path / "rank.train.query").write_text("3\n")
    assert load_svmlight(path).n_queries == 1
    (tmp_path / "rank.train.query").write_text("1\n2\n")
    assert load_svmlight(path).n_queries == 2
    assert len(parser_calls) == 2


def test_cache_false_neither_reads_nor_writes(data_file, parser_calls):
    _, path = data_file
    load_svmlight(path, cache=False)
    load_svmlight(path, cache=False)
    assert len(parser_calls) == 2 and entries() == []


@pytest.mark.parametrize("damage", ["truncate an array", "delete the manifest", "garble the manifest",
                                    "drop an array"])
def test_damaged_entry_is_rebuilt(data_file, parser_calls, damage):
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    folder = cache.cache_dir() / "svmlight" / entry
    if damage == "truncate an array":
        x = folder / "X.npy"
        x.write_bytes(x.read_bytes()[:200])
    elif damage == "delete the manifest":
        (folder / "manifest.json").unlink()
    elif damage == "garble the manifest":
        (folder / "manifest.json").write_text("{not json")
    else:
        (folder / "offsets.npy").unlink()
    assert_same(load_svmlight(path), data)
    assert len(parser_calls) == 2
    assert_same(load_svmlight(path), data)  # the rebuilt entry is used
    assert len(parser_calls) == 2


def test_inconsistent_entry_is_rebuilt(data_file, parser_calls):
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    np.save(cache.cache_dir() / "svmlight" / entry / "offsets.npy", np.array([0, 5]))
    assert_same(load_svmlight(path), data)
    assert len(parser_calls) == 2


def test_unwritable_cache_only_warns(data_file, tmp_path, monkeypatch):
    data, path = data_file
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("PLBOOST_CACHE_DIR", str(blocker))
    with pytest.warns(UserWarning, match="not caching"):
        loaded = load_svmlight(path)
    assert_same(loaded, data)


def test_clear_cache_removes_only_entries(data_file):
    _, path = data_file
    load_svmlight(path)
    load_svmlight(path, dense=False)
    root = cache.cache_dir() / "svmlight"
    (root / "notes.txt").write_text("mine")
    (root / "my-folder").mkdir()
    assert clear_cache() == 2
    assert entries() == ["my-folder", "notes.txt"]
    assert clear_cache() == 0


def test_an_entry_written_meanwhile_by_another_process_is_kept(data_file, parser_calls):
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    before = sorted(p.name for p in (cache.cache_dir() / "svmlight" / entry).iterdir())
    cache.write_entry(entry, {"other": np.zeros(3)})  # loses the race to rename: the entry stays as it was
    assert sorted(p.name for p in (cache.cache_dir() / "svmlight" / entry).iterdir()) == before
    assert entries() == [entry]  # no temporary directory left behind
    assert_same(load_svmlight(path), data)
    assert len(parser_calls) == 1


def test_entry_is_plain_npy_files(tmp_path):
    data = make_synthetic(n_queries=20, n_features=5, seed=3)
    load_svmlight(data.save_svmlight(tmp_path / "t.txt"))
    (entry,) = entries()
    folder = cache.cache_dir() / "svmlight" / entry
    assert sorted(p.name for p in folder.iterdir()) == ["X.npy", "labels.npy", "manifest.json", "offsets.npy",
                                                        "qids.npy"]
    np.testing.assert_array_equal(np.load(folder / "X.npy"), data.X)
