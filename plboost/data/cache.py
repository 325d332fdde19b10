"""On-disk cache of parsed ranking files, so that a large text file is parsed once.

An entry is keyed by the file's absolute path, size and modification time (nanoseconds) and by the loader
options that shape the result; editing or replacing the file therefore invalidates it. Entries live in
``$PLBOOST_CACHE_DIR/svmlight`` (default ``~/.cache/plboost/svmlight``), one directory per entry holding
uncompressed ``.npy`` files (read back with ``np.load``, no pickles) and a ``manifest.json`` listing them.
An entry is written in a temporary directory and renamed into place, so readers never see half of one;
an entry that cannot be read back (truncated or edited) is deleted and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Callable, Mapping, TypeVar

import numpy as np

from .. import __version__

#: environment variable naming the cache's root directory
CACHE_DIR_ENV = "PLBOOST_CACHE_DIR"

#: bump when the loader's output for the same file and options changes, to orphan older entries
_FORMAT_VERSION = 1
_SUBDIR = "svmlight"
_MANIFEST = "manifest.json"
_TMP_PREFIX = ".tmp-"
_KEY = re.compile(r"[0-9a-f]{32}")

T = TypeVar("T")


def cache_dir() -> Path:
    """Root of plboost's cache: ``$PLBOOST_CACHE_DIR`` if set, else ``~/.cache/plboost``."""
    root = os.environ.get(CACHE_DIR_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "plboost"


def file_identity(path) -> tuple[str, int, int]:
    """``(absolute path, size in bytes, mtime in ns)``: what the cache takes to identify a file's content."""
    path = Path(path).resolve()
    stat = path.stat()
    return str(path), stat.st_size, stat.st_mtime_ns


def entry_key(path, options: Mapping) -> str:
    """Key of the entry for ``path`` read with ``options`` (a JSON-serialisable mapping)."""
    payload = json.dumps({"plboost": __version__, "format": _FORMAT_VERSION, "file": file_identity(path),
                          "options": dict(options)}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def read_entry(key: str, decode: Callable[[dict[str, np.ndarray]], T]) -> T | None:
    """The entry ``key`` decoded by ``decode(arrays)``, or None if there is none.

    An entry that cannot be read, or that ``decode`` rejects with ``KeyError`` or ``ValueError``, is
    deleted (it is rebuilt on the next store) and None is returned.
    """
    entry = _entries_dir() / key
    if not entry.is_dir():
        return None
    try:
        names = json.loads((entry / _MANIFEST).read_text())
        return decode({name: np.load(entry / f"{name}.npy", allow_pickle=False) for name in names})
    except (OSError, EOFError, KeyError, TypeError, ValueError):
        shutil.rmtree(entry, ignore_errors=True)
        return None


def write_entry(key: str, arrays: Mapping[str, np.ndarray]) -> None:
    """Store ``arrays`` as the entry ``key``, atomically; a failure to write only warns."""
    root = _entries_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=_TMP_PREFIX, dir=root))
    except OSError as exc:
        warnings.warn(f"plboost: cannot create the cache directory {root} ({exc}); not caching", stacklevel=3)
        return
    try:
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", np.asarray(array), allow_pickle=False)
        (tmp / _MANIFEST).write_text(json.dumps(sorted(arrays)))
        try:
            tmp.rename(root / key)
        except OSError:
            if not (root / key).is_dir():  # else another process stored the same entry first
                raise
    except OSError as exc:
        warnings.warn(f"plboost: cannot write the cache entry in {root} ({exc}); not caching", stacklevel=3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def clear_cache() -> int:
    """Delete every cached entry (and leftover temporary directories); returns the number of entries.

    Only the entries plboost wrote are removed, never other files in the cache directory.
    """
    root = _entries_dir()
    if not root.is_dir():
        return 0
    removed = 0
    for child in root.iterdir():
        if not child.is_dir():
            continue
        if _KEY.fullmatch(child.name):
            shutil.rmtree(child, ignore_errors=True)
            removed += 1
        elif child.name.startswith(_TMP_PREFIX):
            shutil.rmtree(child, ignore_errors=True)
    return removed


def _entries_dir() -> Path:
    return cache_dir() / _SUBDIR
