"""LightGBM's Dask ranker, as quiet as ``verbosity`` asks, on the workers and here.

Each worker sets up LightGBM's network ("Trying to bind port ...", "Listening...", "Connected to rank 1")
before the ranker's parameters reach LightGBM's C++ library, and partly in threads of its own: its log level
is per thread and starts at Info, so those lines reach the worker's standard output whatever ``verbosity``
says. The workers here train :class:`QuietRanker`, which with ``verbosity`` below 0 points the worker
process's standard output (file descriptor 1) at the null device while it trains; errors still reach
standard error. In this process, :func:`quiet_client` hides LightGBM's Dask lines ("Finding random open
ports for workers") and its warning about ``n_jobs``, which its scikit-learn parameters always hold.
Imported by :mod:`plboost.engines.dask` when LightGBM trains; the workers import it to unpickle the ranker.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings

import lightgbm as lgb
import lightgbm.basic

_lock = threading.Lock()
_muted = {"depth": 0, "saved": None}


def is_quiet(params: dict) -> bool:
    """Whether LightGBM's ``verbosity`` in ``params`` (canonical names: the adapter resolves them) is below 0."""
    value = params.get("verbosity")
    value = 1 if value is None else value
    try:
        return int(value) < 0
    except (TypeError, ValueError):
        return False


@contextlib.contextmanager
def _stdout_muted():
    """File descriptor 1 of this process goes to the null device inside the block (nested blocks share it)."""
    with _lock:
        if _muted["depth"] == 0:
            sys.stdout.flush()
            saved = os.dup(1)
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.close(null)
            _muted["saved"] = saved
        _muted["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _muted["depth"] -= 1
            if _muted["depth"] == 0:
                sys.stdout.flush()
                os.dup2(_muted["saved"], 1)
                os.close(_muted["saved"])


class QuietRanker(lgb.LGBMRanker):
    """``lightgbm.LGBMRanker`` whose training prints nothing on standard output when ``verbosity`` < 0."""

    def fit(self, *args, **kwargs):
        with _stdout_muted() if is_quiet(self.get_params()) else contextlib.nullcontext():
            return super().fit(*args, **kwargs)


class DaskRanker(lgb.DaskLGBMRanker):
    """``lightgbm.DaskLGBMRanker`` whose workers train :class:`QuietRanker` (training data and groups only)."""

    def fit(self, X, y, *, group=None, **kwargs):
        if not hasattr(self, "_lgb_dask_fit"):  # pragma: no cover - a LightGBM without it: its own workers' ranker
            return super().fit(X, y, group=group, **kwargs)
        self._lgb_dask_fit(model_factory=QuietRanker, X=X, y=y, group=group, **kwargs)
        return self


class _WarningsOnly:
    """A LightGBM logger passing warnings on to ``logger`` and dropping information lines."""

    def __init__(self, logger, warning_method: str):
        self.logger, self.warning_method = logger, warning_method

    def info(self, message: str) -> None:
        pass

    def warning(self, message: str) -> None:
        getattr(self.logger, self.warning_method)(message)


@contextlib.contextmanager
def quiet_client(params: dict):
    """Inside the block, with ``verbosity`` < 0, LightGBM's information lines in this process are dropped
    (its logger of ``lightgbm.register_logger`` is put back afterwards), and its ``n_jobs`` warning."""
    basic = lightgbm.basic
    previous = (getattr(basic, "_LOGGER", None), getattr(basic, "_INFO_METHOD_NAME", "info"),
                getattr(basic, "_WARNING_METHOD_NAME", "warning"))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Parameter n_jobs will be ignored", category=UserWarning)
        if not is_quiet(params) or previous[0] is None:
            yield
            return
        lgb.register_logger(_WarningsOnly(previous[0], previous[2]), "info", "warning")
        try:
            yield
        finally:
            lgb.register_logger(*previous)
