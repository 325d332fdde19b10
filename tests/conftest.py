import copy
import os
from pathlib import Path

import pytest

from plboost.engines.openmp import limit_spinning, usable_cores

# The suite runs in several processes on shared cores (pytest-xdist). The engines' OpenMP threads spin up to
# 300,000 iterations while they wait (libgomp's default), burning the time slices another worker's threads need:
# two tuning tests that take 3-4 s alone took 250-260 s each in a full run. libgomp reads the limit when an engine
# is first imported, so it is set here, before any test module imports one (as the plboost command does).
limit_spinning()

# Each worker's engines get its share of the cores (as scikit-learn's suite does): two workers whose LightGBM and
# XGBoost each ran a 2-thread OpenMP team on 2 cores waited on each other's time slices; a tuning test with the
# other core busy took 7.3-8.4 s with two threads and 3.9-4.6 s with one. Read by OpenMP when an engine is first
# imported; a value the user set is kept. plboost's kernel threads (Numba's count) are left as they are.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1 and "OMP_NUM_THREADS" not in os.environ:
    os.environ["OMP_NUM_THREADS"] = str(max(1, usable_cores() // _WORKERS))

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

#: holds the ``sitecustomize`` that hides scikit-learn from the processes a test starts (not a test module)
WITHOUT_SCIKIT_LEARN = Path(__file__).resolve().parent / "without_scikit_learn"
collect_ignore = [WITHOUT_SCIKIT_LEARN.name]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real ranking data in ../shared/data beside the repository (see its README); skips if absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def mq2008(shared_data):
    """MQ2008 Fold1 as [train, valid, test] ``RankingData`` of the same width, read once; tests must not change it."""
    from plboost.data import load_splits

    fold = shared_data / "MQ2008" / "Fold1"
    return load_splits(fold / "train.txt.gz", fold / "vali.txt.gz", fold / "test.txt.gz")


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path_factory, monkeypatch):
    """Every test caches parsed files in a fresh temporary directory, never in the user's home."""
    monkeypatch.setenv("PLBOOST_CACHE_DIR", str(tmp_path_factory.mktemp("plboost-cache")))


@pytest.fixture(autouse=True)
def _subprocesses_without_scikit_learn(request, monkeypatch):
    """The Python processes a test starts (commands, scripts) run as in a core install of plboost: scikit-learn,
    an extra, cannot be imported there (``tests/without_scikit_learn/sitecustomize.py``). That tests what a plain
    ``pip install plboost`` gives, which the tests' own processes (scikit-learn installed) do not, and saves about
    1.5 s of CPU per process: LightGBM and XGBoost import scikit-learn whenever it is installed. A test marked
    ``scikit_learn_in_subprocesses`` (Dask's workers, the scikit-learn API) starts its processes with it, as do
    fixtures wider than a test, which run before this one."""
    if request.node.get_closest_marker("scikit_learn_in_subprocesses") is None:
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(WITHOUT_SCIKIT_LEARN),
                                                                        os.environ.get("PYTHONPATH")])))


# --------------------------------------------------------------------------------------------------
# objectives: generic tests take them from plboost's registry, so that a new objective is tested as soon as
# it is registered, without editing a test file

def _registered_objectives():
    from plboost.objectives import OBJECTIVES

    return list(OBJECTIVES.values())


def objective_id(obj) -> str:
    """``name`` for an objective with its defaults, else ``name(key=value, ...)`` with the parameters that differ."""
    defaults = type(obj)().get_params()
    changed = ", ".join(f"{key}={value!r}" for key, value in obj.get_params().items() if value != defaults[key])
    return f"{obj.name}({changed})" if changed else obj.name


@pytest.fixture(params=_registered_objectives(), ids=lambda cls: cls.name)
def objective_class(request):
    """Every objective class in plboost's registry (``plboost.objectives.OBJECTIVES``)."""
    return request.param


@pytest.fixture
def objective(request):
    """Every registered objective, default-constructed, then the configurations the test names with
    ``@pytest.mark.extra_objectives(PLRank(top_k=None), ...)``: a fresh copy for each test. (Independent of
    ``objective_class``: a test takes one or the other. A test that parametrizes ``objective`` itself keeps
    its own values.)"""
    return copy.deepcopy(request.param)


def _parametrized_names(metafunc) -> set[str]:
    names = set()
    for marker in metafunc.definition.iter_markers("parametrize"):
        argnames = marker.args[0] if marker.args else marker.kwargs["argnames"]
        if isinstance(argnames, str):
            argnames = argnames.split(",")
        names.update(name.strip() for name in argnames)
    return names


def pytest_generate_tests(metafunc):
    if "objective" not in metafunc.fixturenames or "objective" in _parametrized_names(metafunc):
        return  # a test that parametrizes ``objective`` itself keeps its own values
    cases = {}
    for obj in [cls() for cls in _registered_objectives()] + [
            obj for marker in metafunc.definition.iter_markers("extra_objectives") for obj in marker.args]:
        cases.setdefault(objective_id(obj), obj)
    metafunc.parametrize("objective", list(cases.values()), ids=list(cases), indirect=True)


# --------------------------------------------------------------------------------------------------
# the pass with interpreted kernels (NUMBA_DISABLE_JIT=1, make test) is there so that coverage sees the kernels'
# lines; pure-Python kernels under coverage are slow, so a test marked ``interpreted_once`` runs its first case
# there (the compiled pass runs every case), one marked ``compiled_only(reason)`` is skipped there, and a test that
# asks for the fixture ``interpreted`` may take fewer queries there. docs/benchmarks.md ("The interpreted pass")
# has how the ``interpreted_once`` tests were chosen: their other cases cover no kernel line the rest of that pass
# does not.

INTERPRETED = os.environ.get("NUMBA_DISABLE_JIT") == "1"


@pytest.fixture(scope="session")
def interpreted() -> bool:
    """True in the pass with interpreted kernels: a test of many queries may take fewer there (the same kernel
    lines), while the compiled pass runs it in full."""
    return INTERPRETED


def pytest_collection_modifyitems(config, items):
    if not INTERPRETED:
        return
    seen = set()
    skip = pytest.mark.skip(reason="interpreted_once: the compiled pass runs every case, this pass the first")
    for item in items:
        if (marker := item.get_closest_marker("compiled_only")) is not None:
            item.add_marker(pytest.mark.skip(reason=marker.args[0]))
        if item.get_closest_marker("interpreted_once") is None:
            continue
        function = item.nodeid.split("[", 1)[0]
        if function in seen:
            item.add_marker(skip)
        seen.add(function)
