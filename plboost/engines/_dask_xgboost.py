"""XGBoost's Dask training without its start-up lines on the workers' standard error.

Each worker's communicator prints "Task [xgboost.dask-0]:tcp://... got rank 0" when it joins the group,
whatever ``verbosity`` says: XGBoost logs it at console level, from the worker's task thread, where its
Python log callback (registered per thread) is not installed, so the line goes straight to file descriptor 2.
:func:`rank_lines_hidden` points each worker's descriptor 2 at a pipe while training and copies every other
line on, so warnings and errors still reach the worker's standard error. LightGBM's counterpart is
:mod:`plboost.engines._dask_lightgbm`.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading

_RANK_LINE = re.compile(rb"(\[[\d:]+\] )?Task \S+ got rank \d+\s*")
_installed: dict = {}


def _copy_lines(read_end: int, destination: int) -> None:
    with os.fdopen(read_end, "rb", buffering=0) as pipe:
        pending = b""
        while chunk := pipe.read(65536):
            pending += chunk
            *lines, pending = pending.split(b"\n")
            _write([line + b"\n" for line in lines], destination)
        _write([pending] if pending else [], destination)


def _write(lines: list[bytes], destination: int) -> None:
    kept = b"".join(line for line in lines if not _RANK_LINE.fullmatch(line))
    if kept:
        os.write(destination, kept)


def install() -> None:
    """On a worker: file descriptor 2 goes through the filter until :func:`remove`."""
    if _installed:
        return
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)
    os.close(write_end)
    thread = threading.Thread(target=_copy_lines, args=(read_end, saved), daemon=True, name="plboost-stderr")
    thread.start()
    _installed.update(saved=saved, thread=thread)


def remove() -> None:
    """On a worker: file descriptor 2 is the worker's standard error again, every line copied."""
    if not _installed:
        return
    os.dup2(_installed["saved"], 2)  # closes the pipe's last write end: the copier reads to the end
    _installed["thread"].join(timeout=5)
    os.close(_installed.pop("saved"))
    _installed.clear()


@contextlib.contextmanager
def rank_lines_hidden(client):
    """Inside the block, the workers of ``client`` drop XGBoost's "got rank" lines from standard error."""
    client.run(install)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            client.run(remove)
