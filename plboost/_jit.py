"""One place for how kernels are compiled and run in parallel.

Kernels are compiled with ``cache=True`` (compiled code is kept beside the sources, or in Numba's user-wide
cache when the package directory is read-only, so a new process does not recompile) and ``nogil=True``. Where
Numba finds neither writable (a read-only installation and an unwritable home directory, or
``$NUMBA_CACHE_DIR`` unwritable), the cache goes to a private directory of this user under the system's
temporary directory, and where there is none either, kernels are compiled without a cache; one warning
(:class:`CacheWarning`) says which. Numba takes a cache entry as fresh while its kernel's own source file is
unchanged; here an edit of any module with kernels in the same package makes the package's entries stale
(:func:`_package_sources_stamp`), since a kernel's compiled code holds the helpers it calls from other files.

Kernels are serial. Work is spread over threads by :func:`over_queries`, which hands each thread a
contiguous range of queries: each query writes only its own slice of the outputs, so no synchronisation is
needed, and since the kernels release the GIL the threads run at once. Numba's own ``parallel=True``
(``prange``) would do the same inside the kernel, but compiling a parallel loop takes seconds, paid on the
first call of a fresh install for every kernel (docs/benchmarks.md). The number of threads is Numba's
(``NUMBA_NUM_THREADS``, ``numba.set_num_threads``), read without starting Numba's threading layer
(:func:`kernel_threads`).

Numba is imported when a kernel is first used, not when plboost is: importing Numba takes a noticeable part
of a second, which ``plboost --help`` or ``import plboost.objectives`` need not pay. ``@kernel`` gives a
:class:`LazyKernel`; the first call of any kernel (or :func:`activate`) imports Numba, chooses the cache, makes
every kernel defined so far a Numba dispatcher and puts the dispatchers in place of the lazy kernels in the
namespaces of plboost's modules, where kernels find each other when they compile. Kernels defined after that
are dispatchers at once.

What a fresh install's first call compiles: ``@kernel`` for functions called from Python (they get
Numba's Python wrapper), ``@helper`` for functions only kernels call (no wrapper; Numba links their code into each
caller). Variants of an objective that a setting chooses are separate kernels, so that only the one in use is
compiled; an argument that is a constant at a call site is passed as ``np.int64(...)``, not a literal, where
callers differ in it, or Numba compiles the callee once per constant.
"""

from __future__ import annotations

import itertools
import os
import pickle
import re
import stat
import tempfile
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np


class CacheWarning(UserWarning):
    """Numba's cache of compiled kernels is not where Numba would keep it (or there is none)."""


def _numba_can_cache(directories) -> bool:
    """Whether Numba finds a writable cache location for kernels defined in each of ``directories`` (its own
    locators, tried as it tries them; True where Numba's internals are not as expected, leaving it to Numba)."""
    try:
        from numba.core import caching

        implementation = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # its name before Numba 0.61
        locators = implementation._locator_classes
        probe = _numba_can_cache.__code__
    except AttributeError:  # pragma: no cover - another Numba
        return True

    def located(directory: Path) -> bool:
        function = type(_numba_can_cache)(probe.replace(co_filename=str(directory / "__init__.py")), {})
        return any(locator.from_function(function, str(directory / "__init__.py")) is not None
                   for locator in locators)
    return all(located(directory) for directory in directories)


def _private_cache_directory() -> Path | None:
    """``<temporary directory>/plboost-numba-<uid>``, created for this user alone; None if it cannot be made
    or is not this user's alone (another user could have placed compiled code there for Numba to load)."""
    directory = Path(tempfile.gettempdir()) / f"plboost-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        status = os.lstat(directory)
        if (not stat.S_ISDIR(status.st_mode) or (hasattr(os, "getuid") and status.st_uid != os.getuid())
                or status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return None
    return directory


def _choose_cache(numba) -> bool:
    """Whether kernels are compiled with a cache; where Numba has no writable place for it, point Numba at
    :func:`_private_cache_directory` (or compile without a cache), with one :class:`CacheWarning`."""
    package = Path(__file__).resolve().parent
    kernel_directories = [package, package / "objectives", package / "data", package / "engines"]
    if numba.config.DISABLE_JIT or _numba_can_cache(kernel_directories):
        return True
    where = (f"NUMBA_CACHE_DIR={numba.config.CACHE_DIR} is not writable" if numba.config.CACHE_DIR
             else f"neither {package} nor the home directory's cache can be written")
    private = _private_cache_directory()
    if private is not None:
        numba.config.CACHE_DIR = str(private)
        if _numba_can_cache(kernel_directories):
            warnings.warn(f"no writable place for Numba's cache ({where}); compiled kernels are cached in {private} "
                          "(set NUMBA_CACHE_DIR to choose)", CacheWarning, stacklevel=2)
            return True
    warnings.warn(f"no writable place for Numba's cache ({where}, nor a private temporary directory); kernels are "
                  "compiled anew in every process (set NUMBA_CACHE_DIR to a writable directory)", CacheWarning,
                  stacklevel=2)
    return False


#: whether kernels are cached (see the module's docstring); None until :func:`activate`
CACHE: bool | None = None
_OPTIONS = dict(nogil=True, fastmath=False, error_model="numpy")

#: below this many documents per thread, a call runs on the calling thread alone
MIN_DOCS_PER_THREAD = 10_000
#: ranges per thread, so that a thread that drew short queries takes another range
_RANGES_PER_THREAD = 4


class LazyKernel:
    """A kernel before Numba is loaded: the Python function and its options. Calling it (or reading an attribute
    of Numba's dispatcher, such as ``py_func`` or ``signatures``) activates Numba (:func:`activate`) and goes to
    the dispatcher."""

    def __init__(self, func, options: dict):
        self.py_func, self.options, self.dispatcher = func, options, None
        self.__name__, self.__qualname__ = func.__name__, func.__qualname__
        self.__module__, self.__doc__, self.__wrapped__ = func.__module__, func.__doc__, func

    def __call__(self, *args, **kwargs):
        return activate(self)(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(activate(self), name)

    def __repr__(self) -> str:
        return f"<lazy kernel {self.__module__}.{self.__qualname__}>"


_lazy_kernels: list[LazyKernel] = []
_numba = None
_activation_lock = threading.RLock()


def check_thread_variable() -> None:
    """Refuse a ``NUMBA_NUM_THREADS`` that Numba cannot use: it takes ``int(value)`` threads, at least 1. Numba
    itself fails on 0 with a message that names no variable, and for a value that is no integer it warns with its
    traceback and uses every core."""
    value = os.environ.get("NUMBA_NUM_THREADS")
    if value is None:
        return
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"the environment variable NUMBA_NUM_THREADS (the threads of plboost's kernels) must be an "
                         f"integer >= 1, got {value!r}; set it so, or unset it for one thread per core")


def activate(lazy: LazyKernel | None = None):
    """Import Numba and make every kernel a Numba dispatcher (once per process; see the module's docstring).
    Returns the dispatcher of ``lazy``, or Numba."""
    global _numba, CACHE
    if _numba is None:
        with _activation_lock:
            if _numba is None:
                import sys

                check_thread_variable()
                import numba

                CACHE = _choose_cache(numba)
                _watch_compiles(numba)
                for pending in _lazy_kernels:
                    pending.dispatcher = _compiled(numba, pending.py_func, pending.options)
                replacements = {id(pending): pending.dispatcher for pending in _lazy_kernels}
                for name, module in list(sys.modules.items()):
                    if name == "plboost" or name.startswith("plboost."):
                        namespace = vars(module)
                        for key, value in list(namespace.items()):
                            if type(value) is LazyKernel:
                                namespace[key] = replacements[id(value)]
                _lazy_kernels.clear()
                _numba = numba
    return _numba if lazy is None else lazy.dispatcher


#: Numba's compiles in this process (not loads from its cache): seconds spent, and who hears of the first one
_compiles = {"seconds": 0.0, "depth": 0, "start": 0.0, "notice": None, "noticed": False}


def compile_seconds() -> float:
    """Seconds this process has spent compiling kernels (0 where every kernel came from Numba's cache)."""
    return _compiles["seconds"]


def on_first_compile(notice) -> None:
    """Call ``notice()`` once, when this process starts compiling a kernel for the first time (a fresh install or
    a new Numba: later runs load the compiled code from the cache). None removes it."""
    _compiles["notice"] = notice


def _watch_compiles(numba) -> None:
    """Time Numba's compiles: its "numba:compile" event fires only where a kernel is compiled, not loaded from the
    cache; nested compiles (a kernel's helpers) count once, under the outermost."""
    import time

    from numba.core import event

    class CompileTimer(event.Listener):
        def on_start(self, _event):
            if _compiles["depth"] == 0:
                _compiles["start"] = time.perf_counter()
                notice = _compiles["notice"]
                if notice is not None and not _compiles["noticed"]:
                    _compiles["noticed"] = True
                    notice()
            _compiles["depth"] += 1

        def on_end(self, _event):
            _compiles["depth"] -= 1
            if _compiles["depth"] == 0:
                _compiles["seconds"] += time.perf_counter() - _compiles["start"]

    event.register("numba:compile", CompileTimer())


def _compiled(numba, func, options: dict):
    options = {**_OPTIONS, "cache": CACHE, **options}
    if options.pop("python_entry", True) or numba.config.DISABLE_JIT:
        dispatcher = numba.njit(**options)(func)
    else:
        cache = options.pop("cache")
        dispatcher = _helper_dispatcher_class(numba)(
            py_func=func, locals={}, targetoptions={"nopython": True, "no_cpython_wrapper": True,
                                                    "no_cfunc_wrapper": True, **options})
        if cache:
            dispatcher.enable_caching()
    _stamp_with_package_sources(dispatcher)
    _tolerate_damaged_cache(dispatcher)
    return dispatcher


_KERNEL_DEFINITION = re.compile(r"^@(?:[\w.]+\.)?(?:kernel|helper)\b", re.MULTILINE)  # also @_jit.kernel
_package_stamps: dict[Path, tuple] = {}


def _package_root(source: Path) -> Path | None:
    """The directory of the top-level package that ``source`` belongs to; None outside packages."""
    root = source.parent
    if not (root / "__init__.py").is_file():
        return None
    while (root.parent / "__init__.py").is_file():
        root = root.parent
    return root


def _package_sources_stamp(source_file) -> tuple:
    """(path, mtime, size) of every module of ``source_file``'s top-level package that defines kernels or helpers
    (a line starting ``@kernel`` or ``@helper``, or ``@_jit.kernel`` and the like), read once per package and
    process; () outside packages.

    Numba takes a cached kernel as fresh while the stamp of its own source file is unchanged, but a kernel's
    compiled code also holds the helpers it calls, and the module constants they read, from other files: after an
    edit of ``_numerics.py`` (a ``git pull``), every kernel calling its sort kept running the former sort. Each
    kernel's cache entry is stamped with its package's kernel modules as well (:func:`_compiled`), so that an
    edit of any of them, or of this module (the compile options), compiles the package's kernels again, each when
    it is next used. A value that kernels read at compile time belongs in a module with kernels, where this stamp
    sees it."""
    root = _package_root(Path(source_file).resolve())
    if root is None:
        return ()
    if root not in _package_stamps:
        options = Path(__file__).stat()  # this module: the options every kernel is compiled with
        stamp = [("plboost._jit", options.st_mtime_ns, options.st_size)]
        for path in sorted(root.rglob("*.py")):
            try:
                if _KERNEL_DEFINITION.search(path.read_text(encoding="utf-8", errors="replace")):
                    status = path.stat()
                    stamp.append((path.relative_to(root).as_posix(), status.st_mtime_ns, status.st_size))
            except OSError:  # pragma: no cover - a file removed or unreadable while scanned
                continue
        _package_stamps[root] = tuple(stamp)
    return _package_stamps[root]


def _stamp_with_package_sources(dispatcher) -> None:
    """Make ``dispatcher``'s cache entries stale when any kernel module of its package changes, not only its own
    source file (:func:`_package_sources_stamp`)."""
    cache_file = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_source_stamp"):
        return
    source = dispatcher.py_func.__code__.co_filename
    cache_file._source_stamp = (cache_file._source_stamp, _package_sources_stamp(source))


def _tolerate_damaged_cache(dispatcher) -> None:
    """Make ``dispatcher``'s cache treat a damaged entry (a ``.nbi`` index or ``.nbc`` data file cut short or
    garbled) as missing: the kernel is compiled again and the entry rewritten, with one :class:`CacheWarning` per
    process, where Numba would raise an UnpicklingError at every call of every command."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None:
        return
    cache_file.__class__ = _tolerant_cache_file_class(type(cache_file))


_TOLERANT_CLASSES: dict[type, type] = {}
_DAMAGE = (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError, IndexError)
_warned_damage = False


def _tolerant_cache_file_class(base: type) -> type:
    if base not in _TOLERANT_CLASSES:
        class TolerantCacheFile(base):
            def _load_index(self):
                try:
                    return super()._load_index()
                except _DAMAGE as error:
                    _warn_damaged(self._index_path, error)
                    return {}

            def _load_data(self, name):
                try:
                    return super()._load_data(name)
                except _DAMAGE as error:
                    _warn_damaged(self._data_path(name), error)
                    raise OSError(f"damaged cache entry {name}") from error  # Numba's load() takes it as missing
        _TOLERANT_CLASSES[base] = TolerantCacheFile
    return _TOLERANT_CLASSES[base]


def _warn_damaged(path, error) -> None:
    global _warned_damage
    if not _warned_damage:
        _warned_damage = True
        warnings.warn(f"a damaged entry of Numba's cache ({path}: {type(error).__name__}) is compiled again and "
                      "rewritten", CacheWarning, stacklevel=2)


_helper_dispatcher = None


def _helper_dispatcher_class(numba):
    """Numba's CPU dispatcher, for functions compiled without a Python entry point: called from Python it raises
    (Numba's own dispatcher would jump to the entry point it did not build)."""
    global _helper_dispatcher
    if _helper_dispatcher is None:
        from numba.core.registry import CPUDispatcher

        class HelperDispatcher(CPUDispatcher):
            def __call__(self, *args, **kwargs):
                raise TypeError(f"{self.py_func.__module__}.{self.py_func.__qualname__} is a plboost helper, compiled "
                                "into the kernels that call it, and cannot be called from Python")
        _helper_dispatcher = HelperDispatcher
    return _helper_dispatcher


def kernel(func=None, *, parallel=False, **options):
    """Decorate ``func`` as a compiled, cached kernel that releases the GIL (``@kernel``).

    ``@kernel(parallel=True)`` compiles ``prange`` loops as Numba's parallel loops (slow to compile: prefer
    serial kernels run by :func:`over_queries`); other ``options`` (``fastmath``, ``inline``) go to
    ``numba.njit``. Before Numba is loaded the kernel is a :class:`LazyKernel`."""
    options = {"parallel": parallel, **options}

    def decorate(function):
        if _numba is not None:
            return _compiled(_numba, function, options)
        lazy = LazyKernel(function, options)
        with _activation_lock:
            if _numba is None:
                _lazy_kernels.append(lazy)
                return lazy
        return _compiled(_numba, function, options)
    return decorate if func is None else decorate(func)


def helper(func=None, **options):
    """Decorate ``func`` as a kernel that only other kernels call (``@helper``): Numba builds no Python entry
    point for it. A fresh install's first call compiles each function's Python wrapper once per signature, and
    a helper never needs one (what the wrappers cost: docs/benchmarks.md).
    Calling a helper from Python raises :class:`TypeError` (under ``NUMBA_DISABLE_JIT`` it is the plain
    function). ``options`` as for :func:`kernel`."""
    return kernel(func, python_entry=False, **options)


def query_ranges(offsets: np.ndarray, n_ranges: int) -> list[tuple[int, int]]:
    """Split the queries of ``offsets`` into at most ``n_ranges`` contiguous ranges ``(first, end)`` of
    about equal numbers of documents (a query is never split; empty ranges are dropped)."""
    n_queries = offsets.size - 1
    targets = np.linspace(offsets[0], offsets[-1], n_ranges + 1)[1:-1]
    cuts = np.unique(np.concatenate(([0], np.searchsorted(offsets, targets), [n_queries])))
    return [(int(a), int(b)) for a, b in itertools.pairwise(cuts)]


def kernel_threads() -> int:
    """The threads plboost's kernels may use: Numba's thread count (``NUMBA_NUM_THREADS``, or what
    ``numba.set_num_threads`` set for this thread).

    Read without starting Numba's threading layer, which plboost's own threads do not need: started, the layer
    sets its OpenMP runtime's thread count to ``NUMBA_NUM_THREADS``, and on Linux that runtime (the system's
    libgomp) is LightGBM's too, which then ignored ``OMP_NUM_THREADS``. With the other core busy, a test tuning
    LightGBM takes 7.3-8.4 s on two threads and 3.9-4.6 s on the one that ``OMP_NUM_THREADS=1`` asks for.
    """
    numba = activate()
    from numba.np.ufunc import parallel

    started = getattr(parallel, "_is_initialized", True)  # True (ask Numba) should a later Numba rename it
    count = numba.get_num_threads() if started else numba.config.NUMBA_NUM_THREADS
    return max(1, count)


def thread_count(n_docs: int) -> int:
    """Threads worth using for ``n_docs`` documents: :func:`kernel_threads`, fewer for small data."""
    return max(1, min(kernel_threads(), n_docs // MIN_DOCS_PER_THREAD))


def over_queries(body, offsets: np.ndarray, *args) -> None:
    """Call ``body(first, end, *args)`` on ranges of queries ``first <= q < end`` that together cover
    every query of ``offsets`` once, in parallel threads.

    ``body`` is a kernel (it releases the GIL) whose calls on disjoint ranges write disjoint outputs.
    """
    n_threads = thread_count(int(offsets[-1] - offsets[0]))
    if n_threads == 1:
        body(0, offsets.size - 1, *args)
        return
    ranges = query_ranges(offsets, n_threads * _RANGES_PER_THREAD)
    run_in_threads([(body, (first, end, *args)) for first, end in ranges], n_threads)


def run_in_threads(calls, n_threads: int) -> list:
    """Results of ``function(*args)`` for each ``(function, args)`` of ``calls``, run on ``n_threads`` threads."""
    if n_threads <= 1:
        return [function(*args) for function, args in calls]
    pool = _pool(n_threads)
    futures = [pool.submit(function, *args) for function, args in calls]
    return [future.result() for future in futures]


_pools: dict[tuple[int, int], ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(n_threads: int) -> ThreadPoolExecutor:
    # keyed by process id too: a forked child (multiprocessing, Dask) inherits the dict but not the threads
    key = (os.getpid(), n_threads)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None:
            pool = _pools[key] = ThreadPoolExecutor(n_threads, thread_name_prefix="plboost")
        return pool


@helper
def widest_query(offsets, first, end):
    """The most documents of one of queries ``first <= q < end`` (at least 1): the size of a kernel's per-query
    scratch arrays."""
    widest = 1
    for q in range(first, end):
        widest = max(widest, offsets[q + 1] - offsets[q])
    return widest
