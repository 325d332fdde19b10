import json
import os
import shutil
import subprocess
import time
from unittest import mock

import numpy as np
import pytest

from plboost.data import clear_cache, load_svmlight, make_synthetic
from plboost.data import cache


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
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "here"  # plboost's own variable wins over XDG_CACHE_HOME
    monkeypatch.delenv("PLBOOST_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "plboost"


@pytest.mark.parametrize("xdg", ["", "relative/cache"])
def test_an_empty_or_relative_xdg_cache_home_is_ignored(xdg, tmp_path, monkeypatch):
    """The XDG Base Directory specification: such a value is invalid, and the default ~/.cache is used."""
    monkeypatch.delenv("PLBOOST_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "plboost"


def test_parsed_files_are_cached_under_xdg_cache_home(data_file, parser_calls, tmp_path, monkeypatch):
    monkeypatch.delenv("PLBOOST_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    _, path = data_file
    load_svmlight(path)
    load_svmlight(path)
    assert len(parser_calls) == 1
    assert cache.cache_dir() == tmp_path / "xdg" / "plboost"
    assert len(list((tmp_path / "xdg" / "plboost" / "svmlight").iterdir())) == 1
    assert not (tmp_path / "home").exists()


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


def edit_in_place_keeping_size_and_mtime(path, how):
    """Change the first label of ``path`` in place (same size, same inode), then set the mtime back."""
    before = path.stat()
    text = bytearray(path.read_bytes())
    text[0] = ord("1") if text[0] != ord("1") else ord("2")
    with open(path, "r+b") as f:
        f.write(text)
    if how == "os.utime":
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    else:
        seconds, ns = divmod(before.st_mtime_ns, 10**9)
        subprocess.run(["touch", "-m", "-d", f"@{seconds}.{ns:09d}", str(path)], check=True)
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    return before, int(text[:1])


@pytest.mark.parametrize("how", ["os.utime", "touch -d"])
def test_same_size_edit_with_the_mtime_set_back_is_parsed_again(data_file, parser_calls, monkeypatch, how):
    """Setting the mtime back cannot set the ctime back: the entry key changes."""
    if how == "touch -d" and shutil.which("touch") is None:
        pytest.skip("no touch command")
    monkeypatch.setattr(cache, "_RACY_NS", 0)  # no digests: the ctime alone must tell
    data, path = data_file
    assert load_svmlight(path).labels[0] == data.labels[0]
    before, label = edit_in_place_keeping_size_and_mtime(path, how)
    deadline = time.monotonic() + 5
    while path.stat().st_ctime_ns == before.st_ctime_ns:  # edited within the tick of the clock stamping files
        if time.monotonic() > deadline:
            pytest.skip("the ctime of this file system does not change")
        time.sleep(0.005)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    reloaded = load_svmlight(path)
    assert len(parser_calls) == 2
    assert reloaded.labels[0] == label != data.labels[0]
    np.testing.assert_array_equal(reloaded.labels[1:], data.labels[1:])


def test_edit_within_the_same_ctime_tick_is_parsed_again(data_file, parser_calls, monkeypatch):
    """A file changed twice within one tick of the clock that stamps files keeps its ctime: an entry of a
    recently changed file holds its digest, which tells."""
    real = cache.file_identity
    monkeypatch.setattr(cache, "file_identity", lambda path: real(path)[:5] + (0,))  # a ctime that never changes
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    manifest = json.loads((cache.cache_dir() / "svmlight" / entry / "manifest.json").read_text())
    assert list(manifest["digests"]) == [str(path.resolve())]
    _, label = edit_in_place_keeping_size_and_mtime(path, "os.utime")
    reloaded = load_svmlight(path)
    assert len(parser_calls) == 2
    assert reloaded.labels[0] == label != data.labels[0]
    assert entries() == [entry]  # rebuilt under the same key


def test_digests_are_dropped_once_the_file_is_older(data_file, parser_calls, monkeypatch):
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    manifest = cache.cache_dir() / "svmlight" / entry / "manifest.json"
    assert json.loads(manifest.read_text())["digests"]
    monkeypatch.setattr(cache, "_RACY_NS", 0)  # as if 2 s had passed
    monkeypatch.setattr(cache, "file_digests", counting := mock.Mock(wraps=cache.file_digests))
    assert_same(load_svmlight(path), data)
    assert json.loads(manifest.read_text())["digests"] == {} and counting.call_count == 1
    assert_same(load_svmlight(path), data)
    assert counting.call_count == 1 and len(parser_calls) == 1  # no more hashing
    assert sorted(p.name for p in manifest.parent.iterdir())[-1] == "qids.npy"  # no temporary file left


def test_old_files_are_not_hashed(data_file, parser_calls, monkeypatch):
    _, path = data_file
    monkeypatch.setattr(cache, "_RACY_NS", 0)
    monkeypatch.setattr(cache, "file_digests", counting := mock.Mock(wraps=cache.file_digests))
    load_svmlight(path)
    load_svmlight(path)
    assert len(parser_calls) == 1
    assert all(call.args == ([],) for call in counting.call_args_list)


def rewrite_header(npy, shape):
    """Put ``shape`` in the header of a version 1.0 ``.npy`` file, keeping the header's length."""
    raw = npy.read_bytes()
    length = int.from_bytes(raw[8:10], "little")
    header = raw[10:10 + length].decode("latin-1")
    header = header[:header.index("'shape': ")] + f"'shape': {shape!r}, }}"
    assert len(header) < length
    npy.write_bytes(raw[:10] + header.ljust(length - 1).encode("latin-1") + b"\n" + raw[10 + length:])


@pytest.mark.parametrize("damage", ["a shape of 10^13 rows", "a shape too small", "a negative shape",
                                    "an object dtype", "a file where the entry should be", "a link to elsewhere"])
def test_entry_with_an_impossible_header_is_dropped_and_rebuilt(data_file, parser_calls, tmp_path, damage):
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    folder = cache.cache_dir() / "svmlight" / entry
    x = folder / "X.npy"
    if damage == "a shape of 10^13 rows":
        rewrite_header(x, (10**13, data.n_features))
    elif damage == "a shape too small":
        rewrite_header(x, (3, data.n_features))
    elif damage == "a negative shape":
        rewrite_header(x, (-1, data.n_features))
    elif damage == "an object dtype":
        x.write_bytes(x.read_bytes().replace(b"'<f4'", b"'|O' "))
    else:
        shutil.rmtree(folder)
        if damage == "a file where the entry should be":
            folder.write_bytes(b"PK\x03\x04 an entry of an older format")
        else:
            (tmp_path / "elsewhere").mkdir()
            (tmp_path / "elsewhere" / "keep.txt").write_text("keep")
            folder.symlink_to(tmp_path / "elsewhere")
    for _ in range(2):  # the entry is dropped, then rebuilt and used
        assert_same(load_svmlight(path), data)
        assert len(parser_calls) == 2
    assert folder.is_dir() and not folder.is_symlink()
    assert (tmp_path / "elsewhere" / "keep.txt").exists() or damage != "a link to elsewhere"


def test_clear_cache_removes_entries_of_any_shape(data_file, tmp_path):
    _, path = data_file
    load_svmlight(path)
    root = cache.cache_dir() / "svmlight"
    key = "0123456789abcdef" * 2
    (root / key.replace("0", "f")).write_bytes(b"an entry that is a file")
    (root / f"{key}.npz").write_bytes(b"PK an entry of an older format")
    (root / f"{key}.old").mkdir()
    (root / f"{key}.old" / "X.npy").write_bytes(b"")
    (root / ".tmp-abcd").mkdir()
    (root / ".tmp-abcd" / "X.npy").write_bytes(b"half written")
    (root / ".tmp-file").write_bytes(b"")
    (tmp_path / "elsewhere").mkdir()
    (root / key.replace("1", "e")).symlink_to(tmp_path / "elsewhere")
    (root / "notes.txt").write_text("mine")
    (root / "my-folder").mkdir()
    assert clear_cache() == 5
    assert entries() == ["my-folder", "notes.txt"]
    assert (tmp_path / "elsewhere").is_dir()
    assert clear_cache() == 0


def _overwrite_last_value(path):
    """Overwrite the last 8 bytes of an .npy file in place: the same size, header and inode."""
    size = path.stat().st_size
    with open(path, "r+b") as f:
        f.seek(size - 8)
        f.write(np.array([123456.0], dtype=np.float64).tobytes())
    assert path.stat().st_size == size


@pytest.mark.parametrize("name", ["X", "labels", "offsets"])
def test_an_array_edited_in_place_is_caught_by_its_checksum_and_rebuilt(data_file, parser_calls, name):
    """Issue 24, item 5: the edited array was served as if parsed from the file."""
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    manifest = json.loads((cache.cache_dir() / "svmlight" / entry / "manifest.json").read_text())
    assert set(manifest["checksums"]) == set(manifest["arrays"])
    _overwrite_last_value(cache.cache_dir() / "svmlight" / entry / f"{name}.npy")
    assert_same(load_svmlight(path), data)
    assert len(parser_calls) == 2
    assert_same(load_svmlight(path), data)  # the rebuilt entry is used
    assert len(parser_calls) == 2


@pytest.mark.parametrize("label, max_label", [(40.0, 30), (7.0, 5), (2.5, 30), (-1.0, 30)])
def test_labels_outside_the_loaders_limits_are_never_served(data_file, parser_calls, label, max_label):
    """Even from an entry whose checksum matches (rewritten whole): the loader's own limits hold."""
    data, path = data_file
    data = load_svmlight(path, max_label=max_label) if data.labels.max() <= max_label else None
    if data is None:
        pytest.skip("the synthetic labels exceed this max_label")
    (entry,) = entries()
    folder = cache.cache_dir() / "svmlight" / entry
    labels = np.load(folder / "labels.npy")
    labels[-1] = label
    np.save(folder / "labels.npy", labels)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["checksums"]["labels"] = cache.array_checksum(labels)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    loaded = load_svmlight(path, max_label=max_label)
    assert len(parser_calls) == 2 and loaded.labels.max() <= max_label
    assert_same(loaded, data)


def test_an_entry_without_checksums_is_rebuilt(data_file, parser_calls):
    """Entries of plboost versions that wrote no checksums are parsed again once."""
    data, path = data_file
    load_svmlight(path)
    (entry,) = entries()
    manifest_path = cache.cache_dir() / "svmlight" / entry / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    del manifest["checksums"]
    manifest_path.write_text(json.dumps(manifest))
    assert_same(load_svmlight(path), data)
    assert len(parser_calls) == 2


def test_a_chunk_of_an_out_of_core_entry_edited_in_place_is_caught(data_file, parser_calls):
    from plboost.data import load_out_of_core

    data, path = data_file
    load_out_of_core(path, memory_budget_bytes=4096)
    (entry,) = entries()
    chunks = sorted((cache.cache_dir() / "svmlight" / entry).glob("X_*.npy"))
    assert chunks
    _overwrite_last_value(chunks[-1])
    calls = len(parser_calls)
    again = load_out_of_core(path, memory_budget_bytes=4096)
    assert len(parser_calls) > calls  # parsed anew
    np.testing.assert_array_equal(np.concatenate([batch.X for batch in again.batches()]), data.X)
