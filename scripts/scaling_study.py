"""How training time and peak memory grow with the number of documents: in memory, out of core, on Dask.

MSLR-like synthetic data (136 features, 20-500 documents per query, labels 0-4) are written as SVMlight at
multiples of a unit (default 250,000 documents), in blocks of half a unit with distinct query ids; the file
of size k concatenates the first 2k blocks, and Dask reads the blocks themselves (one partition each, read
on the workers). Every measurement runs in a fresh subprocess so that peak resident memory (VmHWM) does not
mix between measurements. LightGBM, PLRank and lambdarank. Prints Markdown (docs/scaling.md); progress goes
to standard error.

    python scripts/scaling_study.py                           # sizes 1,2,4,8, 10 rounds (about 30 minutes)
    python scripts/scaling_study.py --sizes 1,4 --rounds 5 --data-dir /tmp/plboost-scaling
    python scripts/scaling_study.py --from-json /tmp/plboost-scaling/results.json   # print again, no runs
    python scripts/scaling_study.py --quick                   # tiny sizes, for the tests
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

N_FEATURES = 136
DOCS_PER_QUERY = (20, 500)
DENSE_BYTES_PER_DOC = N_FEATURES * 4  # the dense float32 matrix
MODES = ("in-memory", "out-of-core", "dask")
OBJECTIVES = ("plrank", "lambdarank")
MAPREDUCE_SECONDS = (150, 200)  # job scheduling per iteration, Tax, Bockting and Hiemstra (IPM 2015)
GIB = 1 << 30
MIB = 1 << 20


def log(message: str) -> None:
    print(f"[{datetime.now(UTC):%H:%M:%S}] {message}", file=sys.stderr, flush=True)


def vmhwm_bytes(field: str = "VmHWM") -> int:
    """Peak resident memory of this process (VmHWM), or another field of /proc/self/status, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def vmrss_bytes() -> int:
    """Resident memory of this process now (VmRSS), in bytes."""
    return vmhwm_bytes("VmRSS")


# --------------------------------------------------------------------------------------------------
# Data

def block_path(data_dir: Path, unit: int, index: int) -> Path:
    return data_dir / f"u{unit}" / f"block-{index:03d}.txt"


def size_path(data_dir: Path, unit: int, size: int) -> Path:
    return data_dir / f"u{unit}" / f"train-{size}x.txt"


def write_block(path: Path, n_docs: int, index: int) -> None:
    """About ``n_docs`` documents of whole queries, query ids starting after the earlier blocks' (seed = index)."""
    from plboost.data import RankingData, make_synthetic

    mean_size = math.sqrt(DOCS_PER_QUERY[0] * DOCS_PER_QUERY[1])
    data = make_synthetic(n_queries=int(1.3 * n_docs / mean_size) + 5, n_features=N_FEATURES,
                          docs_per_query=DOCS_PER_QUERY, seed=1000 + index)
    keep = max(1, int(np.searchsorted(data.offsets, n_docs)))  # the queries up to about n_docs documents
    data = data.subset(np.arange(min(keep, data.n_queries)))
    qids = data.qids + index * 10_000_000  # distinct and increasing across blocks
    tmp = path.with_suffix(".part")
    RankingData(data.X, data.labels, qids, data.offsets).save_svmlight(tmp)
    tmp.rename(path)


def prepare_data(data_dir: Path, unit: int, sizes: list[int]) -> None:
    """Write the blocks and the concatenated files that are missing (cached across runs)."""
    block_docs = max(1, unit // 2)
    (data_dir / f"u{unit}").mkdir(parents=True, exist_ok=True)
    for index in range(2 * max(sizes)):
        path = block_path(data_dir, unit, index)
        if not path.exists():
            start = time.perf_counter()
            write_block(path, block_docs, index)
            log(f"wrote {path} ({path.stat().st_size / MIB:.0f} MiB, {time.perf_counter() - start:.0f} s)")
    for size in sizes:
        path = size_path(data_dir, unit, size)
        if not path.exists():
            tmp = path.with_suffix(".part")
            with open(tmp, "wb") as out:
                for index in range(2 * size):
                    with open(block_path(data_dir, unit, index), "rb") as f:
                        shutil.copyfileobj(f, out, 16 * MIB)
            tmp.rename(path)
            log(f"wrote {path} ({path.stat().st_size / MIB:.0f} MiB)")


# --------------------------------------------------------------------------------------------------
# One measurement (in a fresh subprocess)

def make_objective(name: str):
    if name == "lambdarank":
        return "lambdarank"
    from plboost.objectives import PLRank

    objective = PLRank()
    objective.warm_up()  # compilation is not training time
    return objective


def tiny_data():
    """A few queries of the study's shape, to warm up imports and compilation before anything is timed."""
    from plboost.data import make_synthetic

    return make_synthetic(n_queries=20, n_features=N_FEATURES, docs_per_query=DOCS_PER_QUERY, seed=1)


def measure_single(mode: str, objective_name: str, path: str, rounds: int, budget: int) -> dict:
    from plboost.data import load_out_of_core, load_svmlight
    from plboost.engines import train

    objective = make_objective(objective_name)
    train("lightgbm", objective, tiny_data(), rounds=1)  # the first call's one-time costs (about 2 s) are not timed
    baseline = vmhwm_bytes()
    start = time.perf_counter()
    if mode == "in-memory":
        data = load_svmlight(path, cache=False)
    else:
        data = load_out_of_core(path, cache=False, memory_budget_bytes=budget)
    load_seconds = time.perf_counter() - start
    after_load = vmhwm_bytes()
    start = time.perf_counter()
    model = train("lightgbm", objective, data, rounds=rounds, out_of_core=mode == "out-of-core")
    total = time.perf_counter() - start
    return {"n_docs": int(data.n_docs), "n_queries": int(data.n_queries), "load_s": load_seconds,
            "construct_s": total - model.train_seconds, "train_s": model.train_seconds, "rounds": model.rounds,
            "per_iter_s": model.train_seconds / model.rounds, "baseline_bytes": baseline,
            "after_load_bytes": after_load, "peak_bytes": vmhwm_bytes(), "rss_end_bytes": vmrss_bytes()}


def _worker_vmhwm() -> int:
    return vmhwm_bytes()


def measure_dask(objective_name: str, paths: list[str], rounds: int) -> dict:
    """Two fits on the same persisted partitions, of 1 and 1 + rounds rounds: their difference over ``rounds``
    is the time per iteration, without the set-up (moving data, building the Datasets, the network)."""
    import logging

    from distributed import Client, LocalCluster

    from plboost.engines.dask import ranking_collections, train_dask

    logging.getLogger("distributed").setLevel(logging.ERROR)
    objective = make_objective(objective_name)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      memory_limit=0, silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        baseline = vmhwm_bytes()
        start = time.perf_counter()
        collections = ranking_collections(paths, client=client, load_options={"cache": False})
        from distributed import wait

        wait([collections.X, collections.labels, collections.qid, collections.group])
        load_seconds = time.perf_counter() - start
        # the first fit's one-time costs on the workers (imports, compilation) are not timed
        train_dask("lightgbm", client, objective, ranking_collections(tiny_data(), n_partitions=2), rounds=1)
        fits = {}
        for n in (1, 1 + rounds):
            start = time.perf_counter()
            model = train_dask("lightgbm", client, objective, collections, rounds=n)
            fits[n] = (time.perf_counter() - start, model.rounds)
        workers = client.run(_worker_vmhwm)  # the nannies and the scheduler run in this (the client's) process
        client_peak = vmhwm_bytes()
        n_docs = int(collections.X.shape[0])
        n_queries = int(collections.group.shape[0])
    (t1, r1), (t2, r2) = fits[1], fits[1 + rounds]
    per_iter = (t2 - t1) / (r2 - r1)
    return {"n_docs": n_docs, "n_queries": n_queries, "load_s": load_seconds, "construct_s": t1 - per_iter,
            "train_s": t2, "rounds": r2, "per_iter_s": per_iter, "baseline_bytes": baseline,
            "client_bytes": client_peak, "worker_bytes": sorted(workers.values()),
            "peak_bytes": client_peak + sum(workers.values()), "partitions": len(paths)}


def run_measurement(args, mode: str, objective: str, size: int) -> dict:
    """Run one measurement in a fresh Python process and return its figures."""
    if mode == "dask":
        paths = [str(block_path(args.data_dir, args.unit, i)) for i in range(2 * size)]
    else:
        paths = [str(size_path(args.data_dir, args.unit, size))]
    rounds = args.dask_rounds if mode == "dask" else args.rounds
    command = [sys.executable, __file__, "--rounds", str(rounds), "--budget-mib", str(args.budget_mib),
               "--measure", mode, objective, *paths]
    # scratch chunk files under the data directory; OpenMP threads that sleep rather than spin while they wait:
    # on a shared machine, spinning LightGBM threads with 2 threads on 2 busy cores were 20 times slower
    env = {**os.environ, "PLBOOST_CACHE_DIR": str(args.data_dir / "plboost-cache"), "OMP_WAIT_POLICY": "PASSIVE"}
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=args.timeout)
    if completed.returncode != 0:
        raise RuntimeError(f"{mode} {objective} {size}x failed:\n{completed.stderr[-3000:]}")
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    result.update(mode=mode, objective=objective, size=size, wall_s=time.perf_counter() - start,
                  load_avg=[load_before, os.getloadavg()[0]])
    return result


# --------------------------------------------------------------------------------------------------
# Fits and the report

def loglog_exponent(x, y) -> float:
    """Least-squares slope of log y on log x (NaN unless every y is positive)."""
    if min(y) <= 0:
        return float("nan")
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def linear_fit(x, y) -> tuple[float, float]:
    """Least-squares ``y = intercept + slope * x``: (slope, intercept)."""
    slope, intercept = np.polyfit(np.asarray(x, float), np.asarray(y, float), 1)
    return float(slope), float(intercept)


def pick(results, mode, objective):
    return sorted((r for r in results if r["mode"] == mode and r["objective"] == objective), key=lambda r: r["n_docs"])


def report(results: list[dict], meta: dict) -> str:
    out = []
    write = out.append
    write("## Figures\n")
    single_rounds = sorted({r["rounds"] for r in results if r["mode"] != "dask"})
    dask_rounds = sorted({r["rounds"] for r in results if r["mode"] == "dask"})
    write(f"{' or '.join(map(str, single_rounds)) or meta['rounds']} rounds of LightGBM (31 leaves, learning rate 0.1) "
          f"after the Dataset is built (Dask: fits of 1 and {' or '.join(map(str, dask_rounds)) or '-'} rounds); "
          f"out-of-core memory budget {meta['budget_mib']} MiB; each row a fresh process. *load*: reading the "
          "SVMlight file (in memory: parsing into the dense matrix; out of core: parsing into chunk files on "
          "disk; Dask: each worker reading its blocks); *construction*: building LightGBM's Dataset (Dask: "
          "the first fit's time less one iteration: moving the partitions, the Datasets, the network); *peak*: "
          "VmHWM of the process (Dask: the client's process, which holds the scheduler and the nannies, + the 2 "
          "workers); *RSS after*: VmRSS when training has ended, the data and the model still held (the training "
          "phase's footprint, where the peak was reached earlier). One process uses LightGBM's default threads (2); "
          "each Dask worker 1 thread.\n")
    write("| size | documents | mode | objective | load s | construction s | s / iteration | peak MiB | "
          "RSS after MiB | load avg |")
    write("|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda r: (r["size"], MODES.index(r["mode"]), OBJECTIVES.index(r["objective"]))):
        write(f"| {r['size']}x | {r['n_docs']:,} | {r['mode']} | {r['objective']} | {r['load_s']:.1f} | "
              f"{r['construct_s']:.1f} | {r['per_iter_s']:.2f} | {r['peak_bytes'] / MIB:,.0f} | "
              f"{format(r['rss_end_bytes'] / MIB, ',.0f') if 'rss_end_bytes' in r else ''} | "
              f"{max(r['load_avg']):.1f} |")
    dask_rows = [r for r in results if r["mode"] == "dask"]
    if dask_rows:
        write("\nDask peaks (MiB): the client's process (client, scheduler, nannies) and the workers\n")
        write("| size | objective | client | workers |")
        write("|---|---|---|---|")
        for r in sorted(dask_rows, key=lambda r: (r["size"], OBJECTIVES.index(r["objective"]))):
            write(f"| {r['size']}x | {r['objective']} | {r['client_bytes'] / MIB:,.0f} | "
                  f"{' + '.join(f'{b / MIB:,.0f}' for b in r['worker_bytes'])} |")

    write("\n## Growth with the number of documents\n")
    write("Least squares over the sizes measured: the exponent of log-log fits (1 = linear growth) and a linear "
          "fit of peak memory against documents (bytes per document, and the intercept).\n")
    write("| mode | objective | sizes | time / iteration exponent | construction exponent | memory exponent | "
          "bytes / document | intercept MiB |")
    write("|---|---|---|---|---|---|---|---|")
    fits = {}
    for mode in MODES:
        for objective in OBJECTIVES:
            rows = pick(results, mode, objective)
            if len(rows) < 2:
                continue
            docs = [r["n_docs"] for r in rows]
            peaks = [r["peak_bytes"] for r in rows]
            slope, intercept = linear_fit(docs, peaks)
            fits[mode, objective] = (slope, intercept)
            construct = [max(r["construct_s"], 1e-3) for r in rows]
            write(f"| {mode} | {objective} | {len(rows)} | {loglog_exponent(docs, [r['per_iter_s'] for r in rows]):.2f}"
                  f" | {loglog_exponent(docs, construct):.2f} | {loglog_exponent(docs, peaks):.2f} | {slope:,.0f} | "
                  f"{intercept / MIB:,.0f} |")

    write(f"\n## Out-of-core memory against the dense matrix ({DENSE_BYTES_PER_DOC} bytes per document)\n")
    write("The issue asks that out-of-core peak memory grow at no more than half the rate of the dense float32 "
          "matrix, measured at two sizes 4x apart: (peak(4s) - peak(s)) / (documents(4s) - documents(s)), "
          f"divided by {DENSE_BYTES_PER_DOC}. Every pair of sizes is shown (the issue's pairs, 4x apart, first): "
          "where the peak is set by a phase whose memory does not grow with the documents (LightGBM's sample for "
          "its bins), a pair can understate the rate at which it grows later.\n")
    write("| objective | sizes | 4x apart | bytes / document | ratio to dense | at most 0.5 |")
    write("|---|---|---|---|---|---|")
    for objective in OBJECTIVES:
        rows = {r["size"]: r for r in pick(results, "out-of-core", objective)}
        pairs = sorted(((a, b) for a in rows for b in rows if a < b), key=lambda p: (p[1] != 4 * p[0], p))
        for small, large in pairs:
            a, b = rows[small], rows[large]
            rate = (b["peak_bytes"] - a["peak_bytes"]) / (b["n_docs"] - a["n_docs"])
            ratio = rate / DENSE_BYTES_PER_DOC
            write(f"| {objective} | {small}x, {large}x | {'yes' if large == 4 * small else ''} | {rate:,.0f} | "
                  f"{ratio:.3f} | {'yes' if ratio <= 0.5 else 'NO'} |")

    write("\n## Where in-memory training stops fitting a 24 GB machine\n")
    write("Documents at which the fitted peak (intercept + bytes per document x documents) reaches 24 GiB, "
          "extrapolated from the sizes measured (of this data: 136 features; the operating system and other "
          "processes need some of the 24 GiB too):\n")
    write("| mode | objective | documents at 24 GiB | at 22 GiB available |")
    write("|---|---|---|---|")
    for (mode, objective), (slope, intercept) in fits.items():
        if slope > 0:
            write(f"| {mode} | {objective} | {(24 * GIB - intercept) / slope / 1e6:,.1f}M | "
                  f"{(22 * GIB - intercept) / slope / 1e6:,.1f}M |")

    write("\n## Dask's overhead per iteration\n")
    write("Time per iteration on the 2-worker LocalCluster (the difference of two fits, of 1 and 1 + N rounds, over N) "
          "less one "
          "process training in memory, against the 150-200 s of MapReduce job scheduling per iteration reported "
          "by Tax, Bockting and Hiemstra (IPM 2015).\n")
    write("| size | objective | in memory s / iteration | Dask s / iteration | overhead s / iteration | "
          "Dask set-up s | share of 150 s |")
    write("|---|---|---|---|---|---|---|")
    single = {(r["size"], r["objective"]): r for r in results if r["mode"] == "in-memory"}
    for r in sorted(dask_rows, key=lambda r: (r["size"], OBJECTIVES.index(r["objective"]))):
        base = single.get((r["size"], r["objective"]))
        if base is None:
            continue
        overhead = r["per_iter_s"] - base["per_iter_s"]
        write(f"| {r['size']}x | {r['objective']} | {base['per_iter_s']:.2f} | {r['per_iter_s']:.2f} | "
              f"{overhead:+.2f} | {r['construct_s']:.1f} | {overhead / MAPREDUCE_SECONDS[0]:+.2%} |")
    loads = [x for r in results for x in r["load_avg"]]
    if loads:
        write(f"\nLoad average (1 minute) before and after the measurements: {min(loads):.1f} to {max(loads):.1f} on "
              f"{meta['cpus']} cores" + (" (above 2.5: the machine was shared, so the times are upper bounds; "
                                         "memory does not depend on load)." if max(loads) > 2.5 else "."))
    return "\n".join(out) + "\n"


def environment(args) -> dict:
    import dask
    import lightgbm
    import xgboost

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        commit = ""
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), platform.processor())
    with open("/proc/meminfo") as f:
        mem = int(f.readline().split()[1]) * 1024
    return {"date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC", "python": platform.python_version(),
            "numpy": np.__version__, "lightgbm": lightgbm.__version__, "xgboost": xgboost.__version__,
            "dask": dask.__version__, "commit": commit, "cpu": cpu, "cpus": os.cpu_count(),
            "memory_gib": mem / GIB, "rounds": args.rounds, "dask_rounds": args.dask_rounds,
            "budget_mib": args.budget_mib, "unit": args.unit,
            "command": " ".join(["python", "scripts/scaling_study.py", *sys.argv[1:]])}


def header(meta: dict) -> str:
    return (f"`{meta['command']}` on {meta['date']}, plboost {meta['commit']}, Python {meta['python']}, numpy "
            f"{meta['numpy']}, LightGBM {meta['lightgbm']}, XGBoost {meta['xgboost']}, Dask {meta['dask']}; "
            f"{meta['cpus']} cores ({meta['cpu']}), {meta['memory_gib']:.0f} GiB; unit (1x) = {meta['unit']:,} "
            "documents.\n\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2,4,8", help="multiples of the unit (default 1,2,4,8)")
    parser.add_argument("--unit", type=int, default=250_000, help="documents of size 1x (default 250,000)")
    parser.add_argument("--rounds", type=int, default=10, help="boosting rounds timed (default 10)")
    parser.add_argument("--dask-rounds", type=int, default=30,
                        help="rounds of Dask's second fit beyond its first (default 30): their time is a difference "
                             "of two fits whose set-up varies by seconds")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--objectives", default=",".join(OBJECTIVES))
    parser.add_argument("--budget-mib", type=int, default=64, help="out-of-core memory budget (default 64 MiB)")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/plboost-scaling"),
                        help="where the SVMlight files are cached, and results.json")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed to one measurement")
    parser.add_argument("--quick", action="store_true", help="tiny sizes (unit 4,000, sizes 1,4, 2 rounds, PLRank)")
    parser.add_argument("--from-json", type=Path, nargs="+",
                        help="print the report of results.json files, measuring nothing (a later file's measurement "
                             "of the same size, mode and objective replaces an earlier one's)")
    parser.add_argument("--out-json", type=Path, help="where the results go (default DATA_DIR/u<unit>/results.json)")
    parser.add_argument("--measure", nargs="+", help=argparse.SUPPRESS)  # MODE OBJECTIVE PATH...: one measurement
    args = parser.parse_args()

    if args.measure:
        mode, objective, *paths = args.measure
        if mode == "dask":
            result = measure_dask(objective, paths, args.rounds)
        else:
            result = measure_single(mode, objective, paths[0], args.rounds, args.budget_mib * MIB)
        print(json.dumps(result))
        return
    if args.from_json:
        saved = [json.loads(path.read_text()) for path in args.from_json]
        merged = {}
        for run in saved:
            for result in run["results"]:
                merged[result["size"], result["mode"], result["objective"]] = {**result, "run": run["meta"]["command"]}
        print("".join(header(run["meta"]) for run in saved) + report(list(merged.values()), saved[0]["meta"]), end="")
        return
    if args.quick:
        args.unit, args.sizes, args.rounds, args.dask_rounds, args.objectives = 4000, "1,4", 2, 2, "plrank"
    sizes = sorted(int(s) for s in args.sizes.split(","))
    modes = [m for m in args.modes.split(",") if m]
    objectives = [o for o in args.objectives.split(",") if o]
    if unknown := sorted(set(modes) - set(MODES)) + sorted(set(objectives) - set(OBJECTIVES)):
        parser.error(f"unknown mode or objective: {', '.join(unknown)}")

    meta = environment(args)
    load = os.getloadavg()
    log(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores"
        + (" (above 2.5: times will be upper bounds)" if load[0] > 2.5 else ""))
    prepare_data(args.data_dir, args.unit, sizes)
    results = []
    results_path = args.out_json or args.data_dir / f"u{args.unit}" / "results.json"
    for size in sizes:
        for mode in modes:
            for objective in objectives:
                log(f"{size}x {mode} {objective} ...")
                result = run_measurement(args, mode, objective, size)
                results.append(result)
                log(f"  {result['n_docs']:,} documents: load {result['load_s']:.1f} s, construction "
                    f"{result['construct_s']:.1f} s, {result['per_iter_s']:.2f} s / iteration, peak "
                    f"{result['peak_bytes'] / MIB:,.0f} MiB (load avg {result['load_avg'][1]:.1f})")
                results_path.write_text(json.dumps({"meta": meta, "results": results}, indent=1))
    print(header(meta) + report(results, meta), end="")


if __name__ == "__main__":
    main()
