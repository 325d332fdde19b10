"""Compile plboost's kernels ahead of the first real run: ``plboost warm-up``.

Numba compiles a kernel on its first call and keeps the machine code in its cache (``plboost._jit``), so every
later process loads it in milliseconds. Compiling is what a fresh install's first run waits for: 30-40 s of one
core for the ten objectives registered then on a 2-core machine (``docs/benchmarks.md``), most of it Numba's typing
and lowering in Python rather than LLVM's optimiser (``NUMBA_OPT=0`` saves a fifth), so it does not shrink by
asking less of LLVM. What does shrink it is doing it once, ahead of time, on every core: :func:`warm_up` trains
each objective two rounds on a tiny synthetic dataset on both engines (with exact leaves where the objective
has them, and the metrics of the evaluation), a run of objectives per worker process, filling the cache every
later process reads. Without names (or named ``svmlight-parser``) it also parses a tiny SVMlight file
(:func:`warm_parser`), so that the first command reading a ranking file does not compile the parser (about 6 s).
``make install`` runs it, so ``make demo`` and ``make test`` start with the cache filled.

It compiles the specialisations a default run uses; an objective's rarer variants (uMart's LightGBM
arithmetic, parameters that change an argument's type) still compile on first use, and commands say so when
they do (``plboost._jit.on_first_compile``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

#: the item of a warm-up that is not an objective: the SVMlight/LETOR parser's kernels (:func:`warm_parser`)
PARSER = "svmlight-parser"

#: seconds each objective's first call compiled on a loaded 2-core machine (docs/benchmarks.md), in an order that puts
#: objectives sharing kernels side by side (PL-Rank-3, fair PL-Rank-3, YetiRank: the draws; PLRank, PA-ListMLE: the
#: contexts; PL-Partition, PL-LB: the partitions; uMart, LambdaLoss: the lambda pairs), so that one worker compiles
#: them (fair PL-Rank-3's 10: its exposure kernel, an estimate, not measured)
_COMPILE_SECONDS = {"pl_rank3": 39, "fair_pl_rank3": 10, "yetirank": 22, "plrank": 27, "pa_listmle": 7,
                    "pl_partition": 37, "pl_lb": 9,
                    "umart": 23, "lambdaloss": 13, "urank": 13, "listnet": 9, PARSER: 12}


def warm_up_chunks(workers: int, objectives=None) -> list[list[str]]:
    """The registered ``objectives`` (default: all of them and the parser, ``PARSER``) in at most ``workers`` runs
    of ``_COMPILE_SECONDS``'s order (others last), cut where the running total of the estimated seconds passes
    each worker's share.

    >>> [len(chunk) for chunk in warm_up_chunks(2)], warm_up_chunks(2)[1][:2], warm_up_chunks(2)[1][-1]
    ([5, 7], ['pl_partition', 'pl_lb'], 'svmlight-parser')
    """
    from .objectives import OBJECTIVES, get_objective

    wanted = [*OBJECTIVES, PARSER] if objectives is None else list(objectives)
    for name in wanted:
        if name != PARSER:
            get_objective(name)  # an unknown name: its ValueError, which lists the known ones
    names = [name for name in _COMPILE_SECONDS if name in wanted]
    names += [name for name in wanted if name not in _COMPILE_SECONDS]
    weights = [_COMPILE_SECONDS.get(name, 10) for name in names]
    share = sum(weights) / workers
    chunks, filled = [[]], 0.0
    for name, weight in zip(names, weights, strict=True):
        if chunks[-1] and filled + weight / 2 > share * len(chunks) and len(chunks) < workers:
            chunks.append([])
        chunks[-1].append(name)
        filled += weight
    return chunks


def warm_objective(name: str) -> float:
    """Train objective ``name`` two rounds on a tiny synthetic dataset on LightGBM and XGBoost (and with exact
    leaves where it has them), evaluating each; returns the seconds it took (loading from the cache: well under
    one)."""
    from .engines import ENGINES
    from .experiment import RunSpec
    from .experiment.running import warm_up as warm_spec
    from .objectives import OBJECTIVES

    start = time.perf_counter()
    for engine, record in ENGINES.items():
        if not record.custom_objectives:  # a comparator engine (CatBoost) never runs plboost's kernels
            continue
        warm_spec(RunSpec(objective=name, engine=engine, rounds=2))
        if OBJECTIVES[name].exact_leaves and record.exact_leaves:
            warm_spec(RunSpec(objective=name, engine=engine, rounds=2, leaf_values="exact"))
    return time.perf_counter() - start


def warm_parser() -> float:
    """Parse a two-line SVMlight file (plain, dense float32: the kernels every file format and command share;
    gzip and sparse output use the same ones), not caching the result; returns the seconds it took."""
    from .data import load_svmlight

    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="plboost-warm-up-") as directory:
        path = os.path.join(directory, "two_lines.txt")
        with open(path, "w") as lines:
            lines.write("2 qid:1 1:0.5 3:-1.25e-3\n0 qid:1 2:1\n")
        load_svmlight(path, cache=False)
    return time.perf_counter() - start


def warm_up(objectives=None, *, workers: int | None = None, progress: bool = True) -> dict[str, float]:
    """Fill Numba's cache with the kernels of the registered ``objectives`` (default: all, and the parser's) in
    ``workers`` processes (default: the usable cores, at most one per item), each warming a run of
    :func:`warm_up_chunks` (``python -m plboost.warm_up NAME...``); returns each item's seconds in its process.
    ``progress`` shows a bar on standard error.
    Fresh interpreters rather than multiprocessing's workers: they start without this process's threads and
    never re-import the caller's main module."""
    from tqdm import tqdm

    if workers is None:
        from .engines.openmp import usable_cores

        workers = usable_cores()
    chunks = warm_up_chunks(max(1, int(workers)), objectives)
    seconds = {}
    lock = threading.Lock()
    with tqdm(total=sum(map(len, chunks)), desc="compiling plboost's kernels", unit="part",
              disable=not progress) as bar:

        def warm_chunk(names):
            with tempfile.TemporaryFile("w+") as errors:  # a file, not a pipe: no one waits on a full buffer
                worker = subprocess.Popen([sys.executable, "-m", __name__, *names], stdout=subprocess.PIPE,
                                          stderr=errors, text=True)
                for line in worker.stdout:  # "name seconds" as each objective is done
                    name, took = line.split()
                    with lock:
                        seconds[name] = float(took)
                        bar.set_postfix_str(f"{name} {float(took):.1f} s")
                        bar.update()
                if worker.wait() != 0:
                    errors.seek(0)
                    raise RuntimeError(f"warming {', '.join(names)} failed (exit status {worker.returncode}):\n"
                                       f"{errors.read().strip()}")

        with ThreadPoolExecutor(max_workers=len(chunks)) as pool:
            for future in [pool.submit(warm_chunk, names) for names in chunks]:
                future.result()
    return seconds


if __name__ == "__main__":  # a worker of warm_up: "name seconds" per item on standard output
    for item in sys.argv[1:]:
        print(item, warm_parser() if item == PARSER else warm_objective(item), flush=True)
