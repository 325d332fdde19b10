"""LightGBM training time with and without one competing CPU-bound process, under plboost's thread settings.

    python scripts/contention.py                               # the issue-27 study (96K documents, 20 rounds)
    python scripts/contention.py --objectives lambdarank plrank --settings default passive --repeats 5

Each figure is one fresh process that loads the data (MSLR-like: ``make_synthetic(n_features=136,
docs_per_query=(20, 500))``, saved once), builds the LightGBM dataset, runs one warm-up round (so that kernels
are compiled and cached), and then times ``lgb.train`` for ``--rounds`` rounds with ``num_threads=2``. A
setting is the environment the process starts with (OpenMP's wait policy must be set before LightGBM loads
OpenMP) and plboost's kernel threads:

* default: nothing set (libgomp spins up to 300,000 iterations at a barrier before it sleeps);
* passive: ``OMP_WAIT_POLICY=PASSIVE`` (no spinning);
* spin-N: ``GOMP_SPINCOUNT=N`` (spin N iterations, then sleep);
* kernel-1: plboost's kernels on one thread (``NUMBA_NUM_THREADS=1``);
* plboost: what the ``plboost`` command sets (``plboost.engines.openmp.spin_environment``);
* several joined by ``+`` (``spin-1000+kernel-1``): all of them.

``busy`` runs one ``while True: pass`` process for the whole measurement (on 2 cores: one core taken). Settings,
objectives and conditions are alternated within each repeat so that drifts of the machine hit all alike. Prints a
Markdown table of medians, each with its ratio to the quiet default of the same objective.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROBE = """
import json, sys, time
import numpy as np
import lightgbm as lgb
from plboost.objectives import get_objective
data = np.load(sys.argv[1])
objective = sys.argv[2] if sys.argv[2] == "lambdarank" else get_objective(sys.argv[2])
dataset = lgb.Dataset(data["features"], data["labels"], group=data["sizes"], params={"verbosity": -1}).construct()
params = {"objective": objective, "verbosity": -1, "num_threads": 2, "num_leaves": 31, "learning_rate": 0.1}
lgb.train(params, dataset, 1)
start = time.perf_counter()
lgb.train(params, dataset, int(sys.argv[3]))
print(json.dumps({"seconds": time.perf_counter() - start}))
"""

#: setting name -> extra environment
SETTINGS = {"default": {}, "passive": {"OMP_WAIT_POLICY": "PASSIVE"}, "kernel-1": {"NUMBA_NUM_THREADS": "1"},
            **{f"spin-{n}": {"GOMP_SPINCOUNT": str(n)} for n in (0, 10, 100, 300, 1000, 3000, 10000, 100000)}}


def setting_environment(name: str) -> dict:
    """The environment of a setting, or of several joined by '+'."""
    environment = {}
    for part in name.split("+"):
        if part == "plboost":
            from plboost.engines.openmp import spin_environment

            environment.update(spin_environment({}))
        elif part in SETTINGS:
            environment.update(SETTINGS[part])
        else:
            raise SystemExit(f"contention.py: unknown setting {part!r} in --settings {name!r}; "
                             f"choose from {', '.join([*SETTINGS, 'plboost'])}, joined by '+'")
    return environment


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=744, help="queries (about 134 documents each)")
    parser.add_argument("--docs-per-query", type=int, nargs=2, default=(20, 500), metavar=("LO", "HI"))
    parser.add_argument("--features", type=int, default=136)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--objectives", nargs="+", default=["lambdarank", "plrank", "listnet"])
    parser.add_argument("--settings", nargs="+", default=["default", "passive", "plboost"],
                        help=f"from {', '.join([*SETTINGS, 'plboost'])}, or several joined by '+'")
    parser.add_argument("--conditions", nargs="+", default=["quiet", "busy"], choices=["quiet", "busy"])
    args = parser.parse_args(argv)
    for setting in args.settings:
        setting_environment(setting)  # refuses an unknown one before any work

    import numpy as np

    from plboost.data import make_synthetic

    data = make_synthetic(n_queries=args.queries, n_features=args.features,
                          docs_per_query=tuple(args.docs_per_query), seed=2)
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {data.n_docs:,} documents, {data.n_queries} queries, "
          f"{args.rounds} rounds, num_threads=2, {os.cpu_count()} CPUs", file=sys.stderr)
    seconds: dict[tuple, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="plboost-contention-") as directory:
        path = Path(directory) / "data.npz"
        np.savez(path, features=data.X, labels=data.labels, sizes=np.diff(data.offsets))
        for repeat in range(args.repeats):
            for condition in args.conditions:
                busy = (subprocess.Popen([sys.executable, "-c", "while True: pass"]) if condition == "busy"
                        else None)
                try:
                    time.sleep(0.5 if busy else 0.0)
                    for setting in args.settings:
                        for objective in args.objectives:
                            env = {**os.environ, **setting_environment(setting)}
                            out = subprocess.run([sys.executable, "-c", PROBE, str(path), objective, str(args.rounds)],
                                                 env=env, capture_output=True, text=True, check=True).stdout
                            value = json.loads(out.strip().splitlines()[-1])["seconds"]
                            seconds.setdefault((condition, setting, objective), []).append(value)
                            print(f"repeat {repeat} {condition} {setting} {objective}: {value:.3f} s",
                                  file=sys.stderr)
                finally:
                    if busy:
                        busy.kill()
                        busy.wait()
    print(f"| objective | setting | {' | '.join(args.conditions)} | busy / quiet | quiet / quiet default |")
    print(f"|---|---|{'---|' * len(args.conditions)}---|---|")
    for objective in args.objectives:
        base = statistics.median(seconds.get(("quiet", "default", objective), [float("nan")]))
        for setting in args.settings:
            cells = [statistics.median(seconds[(c, setting, objective)]) for c in args.conditions]
            quiet = statistics.median(seconds.get(("quiet", setting, objective), [float("nan")]))
            busy = statistics.median(seconds.get(("busy", setting, objective), [float("nan")]))
            print(f"| {objective} | {setting} | {' | '.join(f'{c:.2f} s' for c in cells)} | {busy / quiet:.2f} | "
                  f"{quiet / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
