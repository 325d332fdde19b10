"""Benchmarks of plboost's SVMlight parser, as rows for scripts/bench.py (see :func:`parser_rows`).

    python scripts/_bench_parser.py [N_LINES]     # prints the rows as a Markdown table (default 2,000 lines)
"""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from plboost.data import load_svmlight, make_synthetic

# VmHWM is the peak RSS of this process image (ru_maxrss would include the parent's, inherited through exec)
_MEMORY_SCRIPT = """
import sys
import numpy as np
from plboost.data import load_svmlight

def status(key):
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith(key + ":")) / 1024

load_svmlight(sys.argv[2], cache=False)  # the kernels loaded, the code warm
before = status("VmRSS")
data = load_svmlight(sys.argv[1], cache=False)
print(data.X.shape[0], data.X.shape[1], before, status("VmHWM"))
"""

_COMPILE_SCRIPT = """
import sys, time
start, cpu = time.perf_counter(), time.process_time()
from plboost.data import load_svmlight
imported, imported_cpu = time.perf_counter(), time.process_time()
load_svmlight(sys.argv[1], cache=False)
print(time.perf_counter() - imported, time.process_time() - imported_cpu)
"""


def parser_rows(n_lines: int, directory) -> list[dict]:
    """Parsing an MSLR-format file (136 features, qid; about ``n_lines`` documents) with plboost, against
    XGBoost's own libsvm reader (``xgb.DMatrix("file?format=libsvm")``, its threads) and scikit-learn's
    ``load_svmlight_file`` (which plboost's parser used to run); the cached reload; the peak memory of a parse
    in a fresh process; and the time the first load of a fresh install spends compiling the kernels."""
    import xgboost as xgb
    from sklearn.datasets import load_svmlight_file

    directory = Path(directory)
    path = directory / "mslr_like.txt"
    data = make_synthetic(n_queries=max(1, n_lines // 120), n_features=136, docs_per_query=(60, 240), seed=3)
    data.save_svmlight(path)
    dense_mib = data.X.astype(np.float32).nbytes / 2**20
    del data
    size_mb = path.stat().st_size / 1e6
    tiny = directory / "tiny.txt"
    tiny.write_text("1 qid:1 1:0.5 2:1\n0 qid:1 1:0.25\n")
    repeats = 3

    def plboost():
        return load_svmlight(path, cache=False)

    def xgboost():
        with warnings.catch_warnings():  # XGBoost 3.1+ warns that text input is deprecated
            warnings.simplefilter("ignore")
            return xgb.DMatrix(f"{path}?format=libsvm")

    ours, theirs = _alternate(plboost, xgboost, repeats)
    parsed = plboost()
    common = {"documents": parsed.n_docs, "queries": parsed.n_queries}
    del parsed
    rows = [{"kernel": f"parse {size_mb:.0f} MB MSLR-format file (dense float32)", **common, "ms": 1e3 * ours,
             "baseline": "XGBoost's libsvm reader", "baseline ms": 1e3 * theirs, "ratio": ours / theirs,
             "note": f"plboost {size_mb / ours:.0f} MB/s, XGBoost {size_mb / theirs:.0f} MB/s ({os.cpu_count()} "
                     f"cores); medians of {repeats} alternated runs, the file in the page cache"}]

    start = time.perf_counter()
    load_svmlight_file(str(path), query_id=True, dtype=np.float32)
    sklearn = time.perf_counter() - start
    rows.append({"kernel": "the same parse", **common, "ms": 1e3 * ours, "baseline": "sklearn load_svmlight_file",
                 "baseline ms": 1e3 * sklearn, "ratio": ours / sklearn,
                 "note": f"scikit-learn {size_mb / sklearn:.0f} MB/s, timed once; plboost's parser ran it on "
                         "16 MiB chunks before, at about its speed"})

    with _cache_dir(directory / "cache"):
        load_svmlight(path)  # parse and store
        cached = min(_seconds(lambda: load_svmlight(path)) for _ in range(repeats))
    rows.append({"kernel": "cached reload of the same file", **common, "ms": 1e3 * cached, "baseline": "plboost parse",
                 "baseline ms": 1e3 * ours, "ratio": cached / ours, "note": f"{ours / cached:.0f}x faster"})
    rows += checksum_rows(path, directory / "cache", common, repeats)
    mq2008 = Path(__file__).resolve().parents[2] / "shared" / "data" / "MQ2008" / "Fold1" / "train.txt.gz"
    if mq2008.is_file():
        rows += checksum_rows(mq2008, directory / "cache", None, repeats)

    out = subprocess.run([sys.executable, "-c", _MEMORY_SCRIPT, str(path), str(tiny)], capture_output=True,
                         text=True, check=True).stdout.split()
    before, peak = float(out[2]), float(out[3])
    budget = dense_mib + 64
    rows.append({"kernel": "peak memory of the parse, fresh process", **common, "ms": f"{peak - before:.0f} MiB",
                 "baseline": "dense float32 X + 64 MiB", "baseline ms": f"{budget:.0f} MiB",
                 "ratio": (peak - before) / budget,
                 "note": f"VmHWM {peak:.0f} MiB after the parse, VmRSS {before:.0f} MiB before it (Python, "
                         f"NumPy, Numba, the kernels); X is {dense_mib:.0f} MiB; 1.5 X + 64 MiB = "
                         f"{1.5 * dense_mib + 64:.0f} MiB"})

    compile_times = []
    for _cache in ("empty", "filled"):  # the same Numba cache directory: empty at first, then filled
        env = dict(os.environ, NUMBA_CACHE_DIR=str(directory / "numba-cache"))
        out = subprocess.run([sys.executable, "-c", _COMPILE_SCRIPT, str(tiny)], capture_output=True, text=True,
                             check=True, env=env).stdout.split()
        compile_times.append((float(out[0]), float(out[1])))
    (fresh, fresh_cpu), (warm, _) = compile_times
    rows.append({"kernel": "first load in a fresh process, empty Numba cache (compiling the kernels)",
                 "documents": 2, "queries": 1, "ms": 1e3 * fresh, "baseline": "same with the cache filled",
                 "baseline ms": 1e3 * warm, "ratio": fresh / warm,
                 "note": f"{fresh_cpu:.1f} s of CPU; a fresh install pays it once (the cache is kept)"})
    return rows


def checksum_rows(path: Path, cache_directory: Path, common: dict | None, repeats: int) -> list[dict]:
    """What checking the cache entry's CRC-32 checksums (issue 24) costs in a cached reload of ``path``: the
    checksums of the loaded arrays alone, against the whole cached reload (which computes them too)."""
    from plboost.data.cache import array_checksum

    with _cache_dir(cache_directory):
        data = load_svmlight(path)
        reload = statistics.median(_seconds(lambda: load_svmlight(path)) for _ in range(max(repeats, 7)))
    arrays = [data.X, data.labels, data.qids, data.offsets]
    checksums = statistics.median(_seconds(lambda: [array_checksum(a) for a in arrays]) for _ in range(max(repeats, 7)))
    common = common or {"documents": data.n_docs, "queries": data.n_queries}
    return [{"kernel": f"checksums of the cached arrays of {path.name} ({sum(a.nbytes for a in arrays) / 1e6:.0f} MB)",
             **common, "ms": 1e3 * checksums, "baseline": "cached reload (checksums included)",
             "baseline ms": 1e3 * reload, "ratio": checksums / reload,
             "note": f"CRC-32 at {sum(a.nbytes for a in arrays) / checksums / 1e9:.1f} GB/s; medians of "
                     f"{max(repeats, 7)}"}]


def _alternate(a, b, repeats: int) -> tuple[float, float]:
    """Median seconds of ``a()`` and ``b()`` over ``repeats`` alternated runs (after one warm-up each)."""
    a(), b()
    times_a, times_b = [], []
    for _ in range(repeats):
        times_a.append(_seconds(a))
        times_b.append(_seconds(b))
    return statistics.median(times_a), statistics.median(times_b)


def _seconds(function) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


@contextlib.contextmanager
def _cache_dir(path: Path):
    """plboost's parse cache in ``path`` for the duration."""
    previous = os.environ.get("PLBOOST_CACHE_DIR")
    os.environ["PLBOOST_CACHE_DIR"] = str(path)
    try:
        yield
    finally:
        if previous is None:
            del os.environ["PLBOOST_CACHE_DIR"]
        else:
            os.environ["PLBOOST_CACHE_DIR"] = previous


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="plboost-bench-") as scratch:
        table = parser_rows(int(sys.argv[1]) if len(sys.argv) > 1 else 2_000, scratch)
    print("| " + " | ".join(table[0]) + " |")
    print("|" + "|".join("---" for _ in table[0]) + "|")
    for row in table:
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()) + " |")
