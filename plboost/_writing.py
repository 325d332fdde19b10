"""Every file plboost writes for a user, written whole or not at all.

A file is written to a temporary file beside it, flushed to disk and renamed over the path, so that a full disk,
a size limit or a killed process leaves the old file (or none), never a truncated one; readers see the old file or
the whole new one. The new file gets the old one's permissions, or those a plain ``open`` would give it. A
symbolic link is written through (its target is replaced); a path that exists and is no regular file (a device
such as ``/dev/stdout`` or ``/dev/full``, a FIFO) is written directly. An error is an ``OSError`` naming the path.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from pathlib import Path


def write_atomic(path, write, *, make_parents: bool = False) -> Path:
    """Call ``write(handle)`` on a binary file that becomes ``path`` once ``write`` returns; returns ``path``."""
    path = Path(path)
    try:
        if make_parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        target = Path(os.path.realpath(path)) if path.is_symlink() else path
        if target.exists() and not target.is_file():
            with open(target, "wb") as handle:
                write(handle)
            return path
        _replace(target, write)
    except OSError as error:  # named by the path asked for, not the temporary file's
        raise OSError(error.errno, error.strerror or str(error), str(path)) from None
    return path


def json_text(payload, *, indent: int = 2) -> str:
    """``payload`` as standard JSON (RFC 8259), with a newline: a float that is not finite (a metric with no
    query to average, NaN) is written as ``null``, which strict parsers read, where :func:`json.dumps` would
    write the bare ``NaN`` or ``Infinity`` they refuse.

    >>> json_text({"NDCG@10": float("nan"), "curve": [0.5, float("inf")]}, indent=None)
    '{"NDCG@10": null, "curve": [0.5, null]}\\n'
    """
    return json.dumps(_finite_or_null(payload), indent=indent, allow_nan=False) + "\n"


def _finite_or_null(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite_or_null(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_null(item) for item in value]
    return value


def write_text(path, text: str, *, make_parents: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` as :func:`write_atomic` does."""
    data = text.encode("utf-8")
    return write_atomic(path, lambda handle: handle.write(data), make_parents=make_parents)


def _replace(target: Path, write) -> None:
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o666 & ~_umask()
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
