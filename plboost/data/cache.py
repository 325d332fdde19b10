"""On-disk cache of parsed ranking files, so that a large text file is parsed once.

An entry is keyed by the file's absolute path, device, inode, size, modification time and status-change time
(nanoseconds), and by the loader options that shape the result; editing or replacing the file therefore
invalidates it, even when the edit keeps the size and sets the modification time back (``touch -d``,
``os.utime``): the status-change time cannot be set back. A file changed less than 2 seconds before its
entry is written could be changed again within the same timestamp tick, leaving its identity as it was; such
an entry also holds the SHA-1 of the file, checked when it is read until the file is older. Entries live in
``$PLBOOST_CACHE_DIR/svmlight`` (default ``$XDG_CACHE_HOME/plboost/svmlight``, else
``~/.cache/plboost/svmlight``; :func:`cache_dir`), one directory per entry holding
uncompressed ``.npy`` files (read back with ``np.load``, no pickles) and a ``manifest.json`` listing them with
a CRC-32 of each array's data (and the digests of recently changed files). The checksums are checked every time
an entry is read, so an array edited in place (same size, same header) is caught and the entry rebuilt; at
about 7.6 GB/s they cost 16 ms of a 27.6 ms cached reload of 122 MB of arrays (docs/benchmarks.md).
An entry is written in a temporary directory and renamed into place, so readers never see half of one;
an entry that cannot be read back (truncated or edited, an array header that disagrees with its file, a
file where a directory should be) is deleted and rebuilt. Out-of-core entries
(:mod:`plboost.data.out_of_core`) hold one ``.npy`` file per chunk of the dense matrix; they are written file
by file in a private directory under ``scratch/`` beside the entries (:func:`scratch_directory`), renamed
into place by :func:`store_directory`, and read lazily (``read_entry(..., lazy=...)``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
import time
import warnings
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from .._version import __version__

#: environment variable naming the cache's root directory
CACHE_DIR_ENV = "PLBOOST_CACHE_DIR"

#: bump when the loader's output for the same file and options changes, to orphan older entries
_FORMAT_VERSION = 2
_SUBDIR = "svmlight"
#: private directories of running processes (see scratch_directory), beside the entries
_SCRATCH = "scratch"
_MANIFEST = "manifest.json"
_TMP_PREFIX = ".tmp-"
#: names plboost gives to entries, whatever their shape: the key, alone or with a suffix (older formats)
_ENTRY_NAME = re.compile(r"[0-9a-f]{32}(\..*)?", re.DOTALL)
_ARRAY_NAME = re.compile(r"[A-Za-z0-9_]+")
#: a file whose ctime is this recent may change again with the same ctime: Linux stamps files from a clock
#: that ticks every few milliseconds, and some file systems keep whole seconds (ext3) or two (FAT)
_RACY_NS = 2 * 10**9

T = TypeVar("T")


def cache_dir() -> Path:
    """Root of plboost's cache: ``$PLBOOST_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/plboost`` if
    ``XDG_CACHE_HOME`` is set to an absolute path, else ``~/.cache/plboost``.

    ``PLBOOST_CACHE_DIR`` takes precedence over ``XDG_CACHE_HOME``. As the XDG Base Directory specification
    says, an empty or relative ``XDG_CACHE_HOME`` is ignored (the default ``~/.cache`` is used).
    """
    root = os.environ.get(CACHE_DIR_ENV)
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "plboost"
    return Path.home() / ".cache" / "plboost"


def file_identity(path) -> tuple[str, int, int, int, int, int]:
    """``(absolute path, device, inode, size, mtime in ns, ctime in ns)``: what identifies a file's content.

    The status-change time (ctime) is what an ordinary edit cannot restore: ``touch -d`` and ``os.utime`` set
    the modification time back but stamp the ctime with the current time. A hash of the content was the
    other candidate, and was measured too slow: on a warm page cache, a cached load of the MQ2008 and
    MSLR-WEB10K-5k training files (1.1 MB gzip) takes 0.3 ms, hashing the file 0.5 ms with SHA-1 or SHA-256
    and 0.2 ms with CRC-32 (60-190% of the load); for the same files uncompressed (5.8 MB) 2.7-2.9 ms
    (930-1010%), and for a 99 MB text file 48 ms with SHA-1 against a 5.7 ms load (850%), where the budget
    was 10%. A ``stat`` costs 15-25 us.
    """
    path = Path(path).resolve()
    stat = path.stat()
    return str(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns


def entry_key(path, options: Mapping) -> str:
    """Key of the entry for ``path`` read with ``options`` (a JSON-serialisable mapping)."""
    payload = json.dumps({"plboost": __version__, "format": _FORMAT_VERSION, "file": file_identity(path),
                          "options": dict(options)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def racy_digests(paths) -> dict[str, str]:
    """SHA-1 of each of ``paths`` whose ctime is under 2 s old (only those are read): a change within the same
    timestamp tick would keep its :func:`file_identity`. Take them before reading the files, for :func:`write_entry`."""
    return file_digests(_racy(paths))


def _racy(paths) -> list[str]:
    now = time.time_ns()
    return [str(Path(p).resolve()) for p in paths if now - Path(p).stat().st_ctime_ns < _RACY_NS]


def file_digests(paths) -> dict[str, str]:
    """SHA-1 of the content of each of ``paths``, by path."""
    digests = {}
    for path in paths:
        sha = hashlib.sha1(usedforsecurity=False)
        with open(path, "rb") as f:
            while block := f.read(1 << 20):
                sha.update(block)
        digests[str(path)] = sha.hexdigest()
    return digests


def read_entry(key: str, decode: Callable[[dict[str, np.ndarray]], T], *,
               lazy: Callable[[str], bool] | None = None) -> T | None:
    """The entry ``key`` decoded by ``decode(arrays)``, or None if there is none.

    An entry that cannot be read (an array header that promises more or less data than its file holds
    included), that ``decode`` rejects with ``KeyError`` or ``ValueError``, or whose files' digests (see
    :func:`racy_digests`) no longer match is deleted (it is rebuilt on the next store) and None is returned;
    so is a file or link of the entry's name. Digests are dropped from the entry once the files are older.
    Arrays whose name ``lazy(name)`` holds are not read: ``decode`` gets their :class:`ArrayFile` (headers
    checked), to read from disk as it needs them (data larger than memory).
    """
    entry = _entries_dir() / key
    if entry.is_symlink() or (entry.exists() and not entry.is_dir()):
        _remove(entry)
        return None
    if not entry.is_dir():
        return None
    try:
        manifest = json.loads((entry / _MANIFEST).read_text())
        names, digests, checksums = manifest["arrays"], manifest["digests"], manifest["checksums"]
        if not (isinstance(names, list) and all(isinstance(n, str) and _ARRAY_NAME.fullmatch(n) for n in names)
                and isinstance(digests, dict) and isinstance(checksums, dict) and set(checksums) == set(names)):
            raise ValueError(f"bad manifest {manifest!r}")
        if digests:
            if file_digests(digests) != digests:
                raise ValueError("a file changed in the same timestamp tick")
            if not _racy(digests):
                with contextlib.suppress(OSError):  # a read-only cache keeps checking them
                    _write_manifest(entry, names, {}, checksums)
        arrays = {}
        for name in names:
            if lazy is not None and lazy(name):
                arrays[name] = array_file(entry / f"{name}.npy")
                found = _file_checksum(arrays[name])
            else:
                arrays[name] = _load_array(entry / f"{name}.npy")
                found = array_checksum(arrays[name])
            if found != checksums[name]:
                raise ValueError(f"{name}.npy was changed after it was cached")
        return decode(arrays)
    except (OSError, EOFError, KeyError, TypeError, ValueError, MemoryError):
        shutil.rmtree(entry, ignore_errors=True)
        return None


def _write_manifest(entry: Path, names, digests: Mapping[str, str], checksums: Mapping[str, str]) -> None:
    """Write (or replace, atomically) the manifest of an entry."""
    tmp = entry / f"{_TMP_PREFIX}{os.getpid()}-{_MANIFEST}"
    tmp.write_text(json.dumps({"arrays": sorted(names), "digests": dict(digests), "checksums": dict(checksums)}))
    os.replace(tmp, entry / _MANIFEST)


def array_checksum(array: np.ndarray) -> str:
    """``"crc32:<hex>"`` of the bytes of ``array`` in C order (what its ``.npy`` file holds after the header).

    CRC-32 (zlib's, about 7 GB/s here) rather than a cryptographic hash (SHA-1 2.3 GB/s, BLAKE2b 1.5 GB/s on
    the same 120 MB array): it guards against edits and damage, not against someone who can write the cache
    directory, who could as well rewrite the manifest."""
    return f"crc32:{zlib.crc32(memoryview(np.ascontiguousarray(array)).cast('B')):08x}"


def _file_checksum(array: ArrayFile, block: int = 1 << 24) -> str:
    """:func:`array_checksum` of an array left on disk, read in blocks."""
    crc, remaining = 0, math.prod(array.shape) * array.dtype.itemsize
    with open(array.path, "rb") as f:
        f.seek(array.offset)
        while remaining > 0:
            data = f.read(min(block, remaining))
            if not data:
                raise ValueError(f"{array.path}: shorter than its header says")
            crc, remaining = zlib.crc32(data, crc), remaining - len(data)
    return f"crc32:{crc:08x}"


def _load_array(path: Path) -> np.ndarray:
    """An ``.npy`` file, read only once its header is checked against the file's size (ValueError if not)."""
    with open(path, "rb") as f:
        _checked_header(f, path)
        f.seek(0)
        return np.lib.format.read_array(f, allow_pickle=False)


@dataclass(frozen=True)
class ArrayFile:
    """An ``.npy`` file of an entry whose header was checked, left on disk: a C-order array of ``shape`` and
    ``dtype`` whose data start ``offset`` bytes into ``path``."""

    path: Path
    shape: tuple
    dtype: np.dtype
    offset: int


def array_file(path) -> ArrayFile:
    """The :class:`ArrayFile` of an ``.npy`` file, its header checked against the file's size (ValueError if
    it disagrees, or if the array is in Fortran order)."""
    path = Path(path)
    with open(path, "rb") as f:
        shape, fortran, dtype = _checked_header(f, path)
        if fortran and len(shape) > 1:
            raise ValueError(f"{path}: a Fortran-order array where C order was written")
        return ArrayFile(path, tuple(shape), dtype, f.tell())


def _checked_header(f, path: Path) -> tuple:
    """``(shape, fortran_order, dtype)`` of the open ``.npy`` file ``f``, left at the start of its data;
    ValueError if the header is impossible or promises more or fewer bytes than the file holds."""
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise ValueError(f"{path}: unexpected .npy version {version}")
    if dtype.hasobject or any(n < 0 for n in shape):
        raise ValueError(f"{path}: impossible array header")
    expected = f.tell() + math.prod(shape) * dtype.itemsize
    if os.fstat(f.fileno()).st_size != expected:
        raise ValueError(f"{path}: the header promises {expected} bytes, the file holds another number")
    return shape, fortran, dtype


def write_entry(key: str, arrays: Mapping[str, np.ndarray], digests: Mapping[str, str] | None = None) -> None:
    """Store ``arrays`` as the entry ``key``, atomically; a failure to write only warns.

    ``digests`` (from :func:`racy_digests`, taken before the file was read) are checked when the entry is read;
    if the files no longer match them, nothing is stored.
    """
    try:
        if digests and file_digests(digests) != digests:
            return
    except OSError:  # the file went away meanwhile
        return
    root = _entries_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=root))
    except OSError as exc:
        warnings.warn(f"cannot create the cache directory {root} ({exc}); not caching", stacklevel=3)
        return
    try:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", np.asarray(array), allow_pickle=False)
        _write_manifest(tmp, arrays, digests or {}, {name: array_checksum(array) for name, array in arrays.items()})
        try:
            tmp.rename(root / key)
        except OSError:
            if not (root / key).is_dir():  # else another process stored the same entry first
                raise
    except OSError as exc:
        warnings.warn(f"cannot write the cache entry in {root} ({exc}); not caching", stacklevel=3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def scratch_directory(prefix: str = "") -> Path:
    """A new private directory under ``<cache dir>/scratch``, for files larger than memory that are not (or
    not yet) an entry: out-of-core chunks being parsed, XGBoost's external-memory pages. Its name starts with
    this process's id; directories left there by processes that no longer run are removed first. It lives
    beside the entries (on disk, not in a memory-backed ``/tmp``), so that :func:`store_directory` can rename
    it into place. OSError if it cannot be created."""
    root = cache_dir() / _SCRATCH
    root.mkdir(parents=True, exist_ok=True)
    for child in root.iterdir():
        pid = child.name.split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _running(int(pid)):
            _remove(child)
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-{prefix}", dir=root))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def store_directory(directory: Path, key: str, digests: Mapping[str, str] | None = None) -> Path | None:
    """Make ``directory`` (from :func:`scratch_directory`, holding ``.npy`` files) the entry ``key``: a manifest
    listing its arrays is written and the directory renamed into place, atomically. Returns the entry's path,
    or None where nothing is stored and ``directory`` stays as it was: the files changed meanwhile (their
    ``digests``, from :func:`racy_digests`, differ), another process stored the same entry first, or the
    cache cannot be written (a warning)."""
    try:
        if digests and file_digests(digests) != digests:
            return None
    except OSError:  # the file went away meanwhile
        return None
    root = _entries_dir()
    names = sorted(p.name[:-4] for p in directory.iterdir() if p.name.endswith(".npy"))
    try:
        checksums = {name: _file_checksum(array_file(directory / f"{name}.npy")) for name in names}
        root.mkdir(parents=True, exist_ok=True)
        _write_manifest(directory, names, digests or {}, checksums)
        directory.rename(root / key)
    except OSError as exc:
        with contextlib.suppress(OSError):
            (directory / _MANIFEST).unlink()
        if not (root / key).is_dir():  # else another process stored the same entry first
            warnings.warn(f"cannot write the cache entry in {root} ({exc}); not caching", stacklevel=3)
        return None
    return root / key


def clear_cache() -> int:
    """Delete every cached entry and leftover temporary files; returns the number of entries removed.

    Whatever plboost named is removed, whatever its shape: directories, files or links named by a key (with
    or without a suffix, as older formats may have left) and temporary directories or files. Other files in
    the cache directory are kept.
    """
    root = _entries_dir()
    if not root.is_dir():
        return 0
    removed = 0
    for child in root.iterdir():
        if _ENTRY_NAME.fullmatch(child.name):
            removed += _remove(child)
        elif child.name.startswith(_TMP_PREFIX):
            _remove(child)
    return removed


def _remove(path: Path) -> bool:
    """Delete a directory tree, a file or a link (never what a link points to); False if it stays."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        return False  # removed meanwhile by another process
    except OSError:
        shutil.rmtree(path, ignore_errors=True)
        return not os.path.lexists(path)
    return True


def _entries_dir() -> Path:
    return cache_dir() / _SUBDIR
