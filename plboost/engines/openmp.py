"""How long the engines' OpenMP threads spin before they sleep, set before an engine loads OpenMP.

LightGBM and XGBoost run every parallel region on OpenMP (GNU libgomp in their Linux wheels). A libgomp thread
that waits at a barrier, or for the next region, spins up to 300,000 iterations before it sleeps (its default;
``GOMP_SPINCOUNT``). On a quiet machine that is what makes many short regions fast. When the cores are shared
with any other busy process, a spinning thread burns the time slices its team mates need: on 2 cores with one
competing process, 20 rounds of LightGBM's lambdarank on 96K documents took 1.7-2.0 s against 0.55 s quiet, and
once 11.8 s (docs/benchmarks.md). ``OMP_WAIT_POLICY=PASSIVE`` (never spin) avoids that, but makes a quiet machine
22-31% slower on that data and 5-6 times slower on 5K documents, where each region is short and waking a sleeping
thread costs more than the region. A spin count of 1,000 keeps the quiet speed and brought the busy runs to
2.1-2.35 times their quiet time on that data; on docs/cli.md's first ``compare`` it changes nothing measurable.

libgomp reads these variables once, when it is loaded (when ``lightgbm`` or ``xgboost`` is imported), so they
can only be set before. The ``plboost`` command does it (:func:`limit_spinning`) unless the user set either
variable. Library users can do the same in the shell (``export GOMP_SPINCOUNT=1000``) or at the top of a script,
before importing an engine.
"""

from __future__ import annotations

import os
import sys

from .._engine_registry import ENGINES

#: libgomp's spin count that plboost's commands use (libgomp's own default is 300,000)
SPIN_COUNT = 1000
#: the variables that say how OpenMP threads wait; plboost sets none of them where the user set one
WAIT_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity where the system reports one, else every core."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def spin_environment(environ) -> dict[str, str]:
    """The variables :func:`limit_spinning` adds to ``environ``: none where the user set one of
    ``WAIT_VARIABLES``, else ``GOMP_SPINCOUNT``."""
    if any(name in environ for name in WAIT_VARIABLES):
        return {}
    return {"GOMP_SPINCOUNT": str(SPIN_COUNT)}


def limit_spinning(environ=None) -> bool:
    """Add :func:`spin_environment` to ``environ`` (``os.environ``), so that the engines' OpenMP threads, and
    those of the processes this one starts, spin at most ``SPIN_COUNT`` iterations before they sleep. Returns
    whether it takes effect in this process: False where the user chose a wait policy, or where an engine, and
    with it OpenMP, is already loaded."""
    environ = os.environ if environ is None else environ
    added = spin_environment(environ)
    environ.update(added)
    return bool(added) and not any(name in sys.modules for name in ENGINES)  # an engine's name is its module's
