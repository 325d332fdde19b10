"""The parallel driver (``plboost._jit.over_queries``) and the shared sort: results do not depend on how
queries are spread over threads, and two threads may train on the same data at once."""

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from plboost import _jit, objectives
from plboost._numerics import stable_argsort
from plboost.data import make_synthetic
from plboost.objectives import PLRank, UMart


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 31, 33, 100, 1000, 4097])
def test_stable_argsort_is_numpys_stable_argsort(n):
    rng = np.random.default_rng(n)
    for keys in (rng.normal(size=n), rng.integers(0, 3, size=n).astype(float), np.zeros(n), -np.arange(n, dtype=float)):
        np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("n_ranges", [1, 2, 3, 8, 1000])
def test_query_ranges_cover_every_query_once_and_balance_documents(n_ranges):
    sizes = np.random.default_rng(0).integers(1, 200, 97)
    offsets = np.r_[0, np.cumsum(sizes)]
    ranges = _jit.query_ranges(offsets, n_ranges)
    covered = [q for first, end in ranges for q in range(first, end)]
    assert covered == list(range(97))
    assert len(ranges) <= n_ranges and all(end > first for first, end in ranges)
    if n_ranges == 2:  # no range holds more than half the documents plus one query
        assert max(offsets[end] - offsets[first] for first, end in ranges) <= offsets[-1] / 2 + sizes.max()


def test_query_ranges_of_no_queries_are_empty():
    assert _jit.query_ranges(np.array([0]), 4) == []


#: every registered objective at its defaults, and settings with kernel paths of their own
OBJECTIVES = [*(cls() for cls in objectives.OBJECTIVES.values()), PLRank(top_k=5, n_permutations=3),
              UMart(window=1), UMart(window=1, lightgbm_arithmetic=True)]


@pytest.mark.parametrize("obj", OBJECTIVES, ids=repr)
def test_results_do_not_depend_on_the_number_of_threads(obj, monkeypatch):
    data = make_synthetic(n_queries=40, n_features=1, docs_per_query=(1, 60), seed=3)
    scores = np.random.default_rng(1).normal(scale=2, size=data.n_docs)
    serial = obj.gradients(scores, data.labels, data.offsets)
    monkeypatch.setattr(_jit, "MIN_DOCS_PER_THREAD", 1)
    monkeypatch.setattr(_jit, "thread_count", lambda n_docs: 3)
    calls = []
    real_run = _jit.run_in_threads
    monkeypatch.setattr(_jit, "run_in_threads", lambda calls_, n: calls.append(len(calls_)) or real_run(calls_, n))
    threaded = type(obj)(**obj.get_params()).gradients(scores, data.labels, data.offsets)
    assert calls, "the objective did not go through the threads"
    np.testing.assert_array_equal(threaded[0], serial[0])
    np.testing.assert_array_equal(threaded[1], serial[1])


def test_two_threads_training_on_the_same_data_get_the_results_of_one():
    """Scratch space used to live in PLRank's cached per-dataset state, shared by two threads on the same data."""
    data = make_synthetic(n_queries=300, n_features=1, docs_per_query=(20, 200), seed=4)
    obj = PLRank(top_k=10, n_permutations=3)
    score_sets = [np.random.default_rng(seed).normal(size=data.n_docs) for seed in range(2)]
    expected = [obj.gradients(scores, data.labels, data.offsets) for scores in score_sets]
    results = {}

    def work(k):
        for _ in range(20):
            results.setdefault(k, []).append(obj.gradients(score_sets[k], data.labels, data.offsets))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(2):
        for grad, hess in results[k]:
            np.testing.assert_array_equal(grad, expected[k][0])
            np.testing.assert_array_equal(hess, expected[k][1])


#: a process whose OpenMP runtimes were told one thread: plboost's kernels run on two threads of their own, and
#: LightGBM's OpenMP (the system's libgomp, which Numba's "omp" threading layer shares) must still have one
_THREADS_SCRIPT = """
import json
import lightgbm
import numpy as np
from threadpoolctl import threadpool_info
from plboost import _jit
from plboost.data import make_synthetic
from plboost.objectives import PLRank

data = make_synthetic(n_queries=500, n_features=1, docs_per_query=(60, 60), seed=1)
calls = []
real_run = _jit.run_in_threads
_jit.run_in_threads = lambda calls_, n: calls.append(n) or real_run(calls_, n)
PLRank().gradients(np.zeros(data.n_docs), data.labels, data.offsets)
openmp = {info["filepath"]: info["num_threads"] for info in threadpool_info() if info["user_api"] == "openmp"}
direct_calls, calls[:] = calls[:], []
import xgboost
xgboost.train({"tree_method": "hist", "verbosity": 0}, data.to_xgboost(), 1, obj=PLRank())
import numba
numba.set_num_threads(1)
print(json.dumps({"threads": direct_calls, "xgboost_threads": calls, "openmp": openmp,
                  "set": _jit.kernel_threads()}))
"""


def test_kernels_on_threads_leave_the_openmp_thread_count_alone():
    """Numba's threading layer, started, set the OpenMP runtime that LightGBM shares to NUMBA_NUM_THREADS,
    overriding a user's OMP_NUM_THREADS; plboost reads the thread count without starting it. Calls from
    xgb.train use the same count."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "2"}
    done = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["threads"] and set(seen["threads"]) == {2}  # the kernels did run on two threads
    assert seen["openmp"] and set(seen["openmp"].values()) == {1}, seen["openmp"]
    assert seen["set"] == 1  # numba.set_num_threads still counts
    # under XGBoost too: a call from xgb.train used to be held to one thread (1.5x slower rounds at 1M documents)
    assert seen["xgboost_threads"] and set(seen["xgboost_threads"]) == {2}


CACHE_SCRIPT = """
import json, sys
import numpy as np
import plboost
from plboost.objectives import URank, urank
URank().gradients(np.array([0.5, 0.0, -0.5]), np.array([2.0, 1.0, 0.0]), np.array([0, 3]))
stats = urank._urank_kernel.stats
print(json.dumps({"file": plboost.__file__, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
"""


def _installed_copy(tmp_path):
    """The package alone in a directory on sys.path, as a non-editable install leaves it."""
    import shutil

    import plboost

    source = Path(plboost.__file__).parent
    target = tmp_path / "site-packages" / "plboost"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def _run_cached(site, home):
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(home), "HOME": str(home)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", CACHE_SCRIPT], env=env, capture_output=True, text=True, check=True,
                         cwd=site)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("read_only", [False, True], ids=["writable", "read-only"])
def test_compiled_kernels_are_cached_by_an_installed_package(tmp_path, read_only):
    """Numba keeps compiled kernels beside the sources, or, when it cannot write there (a read-only
    site-packages), in the user's cache directory: either way a second process compiles nothing."""
    package = _installed_copy(tmp_path)
    if read_only:
        # a file where __pycache__ would go: nothing can be written beside the sources (chmod would not stop root)
        for directory in [package, *(path for path in package.rglob("*") if path.is_dir())]:
            (directory / "__pycache__").write_text("not a directory")
    home = tmp_path / "home"
    home.mkdir()
    first = _run_cached(package.parent, home)
    assert Path(first["file"]).parent == package and first["misses"] > 0
    second = _run_cached(package.parent, home)
    assert second["misses"] == 0 and second["hits"] > 0
    user_cache = list((home / "numba").rglob("*.nbi")) if (home / "numba").exists() else []
    assert bool(user_cache) == read_only


#: a fresh process in which Numba finds no writable cache location: the in-tree and user-wide locators fail
#: as they do for a non-root user with a read-only installation and an unwritable home directory. It runs
#: `plboost --help` (which loads no Numba), then `plboost train` on a tiny file (whose metrics' kernels do)
_NO_CACHE_LOCATION = """
import sys
from numba.core import caching
def unwritable(self):
    raise PermissionError(13, "Permission denied", self.get_cache_path())
caching.InTreeCacheLocator.ensure_cache_path = unwritable
caching.UserWideCacheLocator.ensure_cache_path = unwritable
from plboost.__main__ import run
try:
    run(["--help"])
except SystemExit:
    pass
from plboost import _jit
print("kernels activated by --help", _jit.CACHE is not None, file=sys.stderr)
status = run(sys.argv[1:])
from plboost import _jit, metrics
import numpy as np
print("ndcg", metrics.ndcg(np.array([0.3, 0.1]), np.array([1.0, 0.0]), offsets=np.array([0, 2]), k=2))
print("cache", _jit.CACHE)
sys.exit(status)
"""


def _without_cache_location(tmp_path):
    data = tmp_path / "tiny.csv"  # not SVMlight: its parser's kernels would add 5 s of compiling to each test
    data.write_text("qid,label,f1,f2\n" + "".join(f"{q},{(q + d) % 3},{d},{q * d % 5}\n" for q in range(20)
                                                   for d in range(6)))
    environment = {**os.environ, "TMPDIR": str(tmp_path)}
    environment.pop("NUMBA_CACHE_DIR", None)
    argv = ["train", "--train", str(data), "--objective", "lambdarank", "--rounds", "1", "--quiet"]
    return subprocess.run([sys.executable, "-c", _NO_CACHE_LOCATION, *argv], capture_output=True, text=True,
                          env=environment, timeout=300)


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="the private directory is named by the user id")
def test_with_no_writable_cache_location_kernels_are_cached_in_a_private_temporary_directory(tmp_path):
    """Issue 24, item 4: every command died with Numba's 'no locator available' RuntimeError. The one-line
    warning comes when a command first uses a kernel; --help activates none (issue 27)."""
    done = _without_cache_location(tmp_path)
    assert done.returncode == 0, done.stderr
    private = tmp_path / f"plboost-numba-{os.getuid()}"
    assert done.stderr.splitlines() == [
        "kernels activated by --help False",
        f"plboost train: warning: no writable place for Numba's cache (neither {Path(_jit.__file__).parent} nor the "
        f"home directory's cache can be written); compiled kernels are cached in {private} (set NUMBA_CACHE_DIR to "
        "choose)"]
    assert "ndcg 1.0" in done.stdout and "cache True" in done.stdout
    assert oct(private.stat().st_mode & 0o777) == "0o700" and list(private.rglob("*.nbi"))  # Numba's cache index


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="the private directory is named by the user id")
def test_a_temporary_directory_others_can_write_is_not_used_and_kernels_compile_without_a_cache(tmp_path):
    shared = tmp_path / f"plboost-numba-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)  # another user could have put compiled code there for Numba to load
    done = _without_cache_location(tmp_path)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "warning" in line]
    assert len(warned) == 1 and "kernels are compiled anew in every process" in warned[0]
    assert "ndcg 1.0" in done.stdout and "cache False" in done.stdout and not list(shared.rglob("*.nbi"))


#: a fresh process calls every registered objective once, as its first call, and prints the plboost kernels and
#: helpers that hold more than one specialisation
_SPECIALISATIONS = """
import sys
import numpy as np
from numba.core.registry import CPUDispatcher
from plboost.data import make_synthetic
from plboost.objectives import OBJECTIVES, get_objective
from plboost.warm_up import warm_parser
data = make_synthetic(n_queries=20, n_features=1, seed=0)
scores = np.random.default_rng(0).normal(size=data.n_docs)
for name in OBJECTIVES:
    objective = get_objective(name)
    objective.gradients(scores, data.labels, data.offsets)
    if objective.exact_leaves:
        objective.leaf_curvature(scores, data.labels, data.offsets, np.arange(data.n_docs) % 3, 3)
warm_parser()
for module in [m for name, m in list(sys.modules.items()) if name.startswith("plboost")]:
    for name, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and len(value.signatures) > 1 and value.__module__ == module.__name__:
            print(module.__name__, name, value.signatures)
"""


def test_first_calls_compile_each_kernel_once():
    """Every specialisation is a compile that a fresh install's first call waits for: a helper called with a
    literal 0 in one place and an int64 in another, or a seed passed as int64 by one objective and uint64 by
    another, compiled twice (issue 39). The calls are each objective's gradients, its exact leaves' curvature, and
    the parser's (``plboost.warm_up.warm_parser``). With the cache filled (plboost warm-up) this takes about a
    second."""
    done = subprocess.run([sys.executable, "-c", _SPECIALISATIONS], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "", done.stdout


def test_importing_plboost_and_asking_for_help_load_no_numba():
    """Issue 27: Numba (0.3 s to import) is loaded when a kernel is first used, not by `plboost --help`,
    `import plboost.objectives` or `import plboost.metrics`; the first kernel call puts dispatchers in place of
    the lazy kernels in every module that names them."""
    script = """
import sys
from plboost.__main__ import run
try:
    run(["--help"])
except SystemExit:
    pass
import plboost.objectives, plboost.metrics, plboost.data, plboost.engines
assert "numba" not in sys.modules, "numba loaded before any kernel ran"
from plboost import _jit, _numerics
from plboost.objectives import _base, plrank
assert type(plrank.stable_argsort) is _jit.LazyKernel and plrank.stable_argsort is _numerics.stable_argsort
import numpy as np
plboost.objectives.PLRank().gradients(np.array([0.5, 0.0]), np.array([1.0, 0.0]), np.array([0, 2]))
assert "numba" in sys.modules and _jit.CACHE is not None
assert type(plrank.stable_argsort) is not _jit.LazyKernel and plrank.stable_argsort is _numerics.stable_argsort
assert type(_base._fingerprint) is type(plrank.stable_argsort)
print("ok")
"""
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_DISABLE_JIT"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr


def test_a_helper_runs_inside_kernels_and_refuses_a_call_from_python(tmp_path):
    """Issue 27: helpers are compiled without a Python entry point (their wrappers cost a fresh install's first
    call); a kernel calls them as before, and a call from Python raises instead of jumping to no entry."""
    script = """
import numpy as np
from plboost import _jit, _numerics

@_jit.helper
def twice(x):
    return 2.0 * x

@_jit.kernel
def twice_plus_log(x):
    return twice(x) + _numerics.logaddexp(0.0, 0.0)

assert twice_plus_log(1.5) == 3.0 + np.log(2.0)
for function in (twice, _numerics.logaddexp):
    try:
        function(1.0) if function is twice else function(0.0, 0.0)
    except TypeError as error:
        assert "cannot be called from Python" in str(error), error
    else:
        raise AssertionError(f"{function} ran from Python")
print("ok")
"""
    (tmp_path / "helper_script.py").write_text(script)  # a file: Numba caches functions defined in files only
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_DISABLE_JIT"}
    done = subprocess.run([sys.executable, str(tmp_path / "helper_script.py")], capture_output=True, text=True,
                          env={**environment, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr


_STALE_KERNEL = """
import sys
sys.path.insert(0, sys.argv[1])
from plboost import _jit
from tiny_package.kernels import compute
print(compute(), _jit.compile_seconds() > 0)
"""


@pytest.mark.compiled_only("no cache without compilation")
def test_an_edited_helper_in_another_module_compiles_its_callers_again(tmp_path):
    """Numba took a cached kernel as fresh while its own file was unchanged: after an edit of a helper it calls
    from another module (a ``git pull``), the kernel kept the former helper's code. Now an edit of any module
    with kernels compiles them again; other modules' edits, and unchanged files, load from the cache."""
    package = tmp_path / "tiny_package"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text("from plboost._jit import kernel\nfrom .helpers import value\n\n\n"
                                        "@kernel\ndef compute():\n    return value() + 0.5\n")
    helpers = package / "helpers.py"
    notes = package / "notes.py"  # no kernels: its edits change nothing compiled
    notes.write_text("NOTE = 1\n")
    environment = {key: value for key, value in os.environ.items() if key != "NUMBA_DISABLE_JIT"}
    environment["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")

    def edit(path, text):
        stamp = path.stat().st_mtime_ns + 10**9 if path.exists() else None
        path.write_text(text)
        if stamp is not None:
            os.utime(path, ns=(stamp, stamp))  # a later stamp even where the clock is coarse

    def run():
        done = subprocess.run([sys.executable, "-c", _STALE_KERNEL, str(tmp_path)], capture_output=True, text=True,
                              env=environment, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    edit(helpers, "from plboost._jit import helper\n\n\n@helper\ndef value():\n    return 1.0\n")
    assert run() == ["1.5", "True"]
    assert run() == ["1.5", "False"]  # from the cache
    edit(helpers, "from plboost._jit import helper\n\n\n@helper\ndef value():\n    return 2.0\n")
    assert run() == ["2.5", "True"]  # the kernel's own file did not change
    assert run() == ["2.5", "False"]
    edit(notes, "NOTE = 2\n")
    assert run() == ["2.5", "False"]


@pytest.mark.compiled_only("no cache without compilation")
def test_a_damaged_cache_entry_is_compiled_again_with_one_warning(tmp_path):
    """A .nbi or .nbc file cut in half raised UnpicklingError at every call of every command: now the kernel is
    compiled again, the entry rewritten, and one warning says so."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONWARNINGS": "default"}
    code = "from plboost import metrics\nprint(metrics.ndcg([0.3, 0.1, 0.2], [1, 0, 2], group=[3], k=3))\n"

    def run():
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout, done.stderr

    expected, _ = run()
    entries = sorted((tmp_path / "cache").rglob("*.nb[ic]"))
    assert entries
    for suffix in (".nbi", ".nbc"):
        for path in entries:
            if path.suffix == suffix:
                path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
        out, err = run()
        assert out == expected
        assert err.count("CacheWarning: a damaged entry of Numba's cache") == 1, err
        assert "is compiled again and rewritten" in err
        out, err = run()
        assert out == expected and "damaged" not in err


def test_compiles_are_timed_and_announced_once_and_the_command_says_so(capsys):
    """The first run after installing compiles for tens of seconds in silence (issue 40 item 13): the command says
    that it is compiling when the first compile starts, and how long compiling took; loads from the cache and
    --quiet say nothing."""
    import argparse

    from plboost.cli import _compile_notices

    numba = _jit.activate()
    if numba.config.DISABLE_JIT:
        pytest.skip("nothing compiles with NUMBA_DISABLE_JIT")

    def fresh_kernel():  # a new function, not cached: it compiles every time
        def add_one(x):
            return x + 1
        return _jit.kernel(add_one, cache=False)

    args = argparse.Namespace(command="train", quiet=False)
    with _compile_notices(args):
        assert fresh_kernel()(1) == 2 and fresh_kernel()(2.5) == 3.5
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "plboost train: compiling plboost's kernels" in err[0], err
    assert re.fullmatch(r"plboost train: compiled kernels in \d+\.\d s", err[1]), err
    with _compile_notices(args):
        pass  # nothing compiled: nothing said
    with _compile_notices(argparse.Namespace(command="train", quiet=True)):
        fresh_kernel()(1)
    assert capsys.readouterr().err == ""
    before = _jit.compile_seconds()
    fresh_kernel()(3)
    assert _jit.compile_seconds() > before
