"""Peak resident memory of the whole ``plboost train --out-of-core`` command as the documents grow (issue 27).

Runs ``python -m plboost train --train FILE --out-of-core --rounds R --quiet --no-cache`` in a fresh process for
each size (the MSLR-like files of ``scripts/scaling_study.py``: 136 features, sizes in multiples of a unit of
250,000 documents, written under ``--data-dir`` when missing), reads the child's peak RSS (``ru_maxrss`` of
``os.wait4``: loading, training, then scoring the training data for the metrics table), and prints the growth
of the peak between sizes divided by the growth of the dense float32 matrix. ``--before DIR`` runs a second
checkout of plboost (e.g. ``git worktree add /tmp/before <commit>``) the same way, interleaved, for a
before/after in one run. Progress goes to standard error; the table to standard output (docs/out_of_core.md).

    python scripts/ooc_memory.py                                  # sizes 1,4 (250K, 1M documents), 5 rounds
    python scripts/ooc_memory.py --before /tmp/before --repeats 2 --memory-budget 64M
    python scripts/ooc_memory.py --quick                          # tiny sizes, for the tests
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from scaling_study import N_FEATURES, prepare_data, size_path

REPOSITORY = Path(__file__).resolve().parents[1]
MIB = 1 << 20


def log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def count_documents(path: Path) -> int:
    """Lines of an SVMlight file written by the scaling study (one document each), kept beside it."""
    saved = path.with_suffix(".docs.json")
    if saved.exists() and saved.stat().st_mtime >= path.stat().st_mtime:
        return int(json.loads(saved.read_text())["documents"])
    lines = 0
    with open(path, "rb") as f:
        while block := f.read(16 * MIB):
            lines += block.count(b"\n")
    saved.write_text(json.dumps({"documents": lines}))
    return lines


def warm_up_file(data_dir: Path) -> Path:
    """A small file of the same features, run once per checkout before the measurements."""
    path = data_dir / "warm-up.txt"
    if not path.exists():
        from plboost.data import make_synthetic

        make_synthetic(n_queries=30, n_features=N_FEATURES, docs_per_query=(5, 40), seed=7).save_svmlight(path)
    return path


def plboost_of(source: Path) -> str:
    """Where the plboost run from ``source`` is imported from (a check that the checkout is the one measured)."""
    completed = subprocess.run([sys.executable, "-c", "import plboost; print(plboost.__file__)"], cwd=source,
                               env=_environment(source, None), capture_output=True, text=True, check=True)
    return completed.stdout.strip()


def _environment(source: Path, cache: Path | None) -> dict:
    env = {**os.environ, "PYTHONPATH": str(source), "OMP_WAIT_POLICY": "PASSIVE"}
    if cache is not None:  # out-of-core chunk files go to a scratch directory under it (--no-cache)
        env["PLBOOST_CACHE_DIR"] = str(cache)
    return env


def measure(source: Path, path: Path, args) -> dict:
    """One ``plboost train --out-of-core`` in a fresh process: its peak RSS (bytes) and wall seconds."""
    command = [sys.executable, "-m", "plboost", "train", "--train", str(path), "--out-of-core", "--rounds",
               str(args.rounds), "--engine", args.engine, "--quiet", "--no-cache"]
    if args.memory_budget:
        command += ["--memory-budget", args.memory_budget]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=source, env=_environment(source, args.data_dir / "plboost-cache"),
                                   stdout=out, stderr=err, text=True)
        timer = threading.Timer(args.timeout, process.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)  # the child's own resource usage, its peak RSS among it
        finally:
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({process.returncode}):\n{stderr[-3000:]}")
    if "NDCG@10" not in stdout:
        raise RuntimeError(f"no metrics table in the output of {' '.join(command)}:\n{stdout[-2000:]}")
    return {"peak_bytes": usage.ru_maxrss * 1024, "wall_s": time.perf_counter() - start}


def report(results: list[dict], documents: dict[int, int], meta: dict) -> str:
    labels = list(dict.fromkeys(r["label"] for r in results))
    sizes = sorted(documents)
    lines = [f"`{meta['command']}` on {meta['date']}, plboost {meta['commit']}, {meta['engine']}, {meta['rounds']} "
             f"rounds, memory budget {meta['memory_budget'] or 'default'}; load average {meta['load_before']:.2f} "
             f"before, {meta['load_after']:.2f} after; peak RSS of the whole command (ru_maxrss of the child).",
             "", "| plboost | size | documents | dense float32 MiB | peak MiB (each run) | wall s |",
             "|---|---|---|---|---|---|"]
    peaks = {}
    for label in labels:
        for size in sizes:
            runs = [r for r in results if r["label"] == label and r["size"] == size]
            if not runs:
                continue
            peaks[label, size] = min(r["peak_bytes"] for r in runs)
            each = " / ".join(f"{r['peak_bytes'] / MIB:,.0f}" for r in runs)
            wall = " / ".join(f"{r['wall_s']:.1f}" for r in runs)
            dense = documents[size] * N_FEATURES * 4
            lines.append(f"| {label} | {size}x | {documents[size]:,} | {dense / MIB:,.0f} | {each} | {wall} |")
    lines += ["", "Growth of the peak (the lowest of the runs of each size) over the growth of the dense float32 "
              "matrix:", "", "| plboost | sizes | peak growth MiB | dense growth MiB | ratio |",
              "|---|---|---|---|---|"]
    for label in labels:
        for i, small in enumerate(sizes):
            for large in sizes[i + 1:]:
                if (label, small) not in peaks or (label, large) not in peaks:
                    continue
                grown = peaks[label, large] - peaks[label, small]
                dense = (documents[large] - documents[small]) * N_FEATURES * 4
                lines.append(f"| {label} | {small}x -> {large}x | {grown / MIB:,.0f} | {dense / MIB:,.0f} | "
                             f"{grown / dense:.2f} |")
    return "\n".join(lines)


def _commit(source: Path) -> str:
    completed = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=source, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=source,
                           capture_output=True, text=True).stdout.strip()
    return (completed.stdout.strip() or "?") + (" (with uncommitted changes)" if dirty else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4", help="multiples of the unit (default 1,4: 250K and 1M documents)")
    parser.add_argument("--unit", type=int, default=250_000, help="documents of size 1x (default 250,000)")
    parser.add_argument("--rounds", type=int, default=5, help="boosting rounds (default 5)")
    parser.add_argument("--engine", default="lightgbm", choices=("lightgbm", "xgboost"))
    parser.add_argument("--memory-budget", help="passed to plboost train as --memory-budget (default: none given)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each size and checkout (default 1)")
    parser.add_argument("--before", type=Path, help="another checkout of plboost, measured the same way")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/plboost-scaling"),
                        help="where the synthetic files are written and read (default /tmp/plboost-scaling)")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed to one run")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (unit 4,000, sizes 1,2, 2 rounds)")
    args = parser.parse_args()
    if args.quick:
        args.unit, args.sizes, args.rounds = 4_000, "1,2", 2
    sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    prepare_data(args.data_dir, args.unit, sizes)
    documents = {size: count_documents(size_path(args.data_dir, args.unit, size)) for size in sizes}
    sources = [("this", REPOSITORY)] + ([("before", args.before.resolve())] if args.before else [])
    warm = warm_up_file(args.data_dir)
    for label, source in sources:
        log(f"{label}: plboost from {plboost_of(source)} ({_commit(source)})")
        measure(source, warm, args)  # Numba's cache filled for this checkout: compilation is not measured
    load_before = os.getloadavg()[0]
    results = []
    for size in sizes:
        for repeat in range(args.repeats):
            for label, source in sources:  # interleaved, so that both see the same machine
                result = measure(source, size_path(args.data_dir, args.unit, size), args)
                result.update(label=label, size=size, repeat=repeat)
                results.append(result)
                log(f"{label} {size}x: peak {result['peak_bytes'] / MIB:,.0f} MiB, {result['wall_s']:.1f} s")
    meta = {"command": " ".join(["python scripts/ooc_memory.py", *sys.argv[1:]]), "engine": args.engine,
            "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC", "rounds": args.rounds,
            "memory_budget": args.memory_budget, "load_before": load_before, "load_after": os.getloadavg()[0],
            "commit": ", ".join(f"{label} {_commit(source)}" for label, source in sources)}
    print(report(results, documents, meta))


if __name__ == "__main__":
    main()
