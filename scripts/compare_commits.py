"""One objective's gradient call as LightGBM makes it, timed at several commits in the same run.

    python scripts/compare_commits.py 3a49383 HEAD WORKTREE          # issue 6's commit, the last commit, the tree
    python scripts/compare_commits.py HEAD WORKTREE --objective urank --rounds 5

Each commit is checked out in a temporary git worktree (WORKTREE is the working tree as it is) and measured in
fresh processes, one per commit per round, the commits alternated so that drifts of the machine hit all alike,
each with a Numba cache of its own kept across rounds (the first call of each process is not timed). One
process times ``obj(scores, lgb.Dataset)`` (median of ``--calls``) and ``np.exp`` over the same scores, and
counts the page faults per call. The data: ``make_synthetic`` labels of ``--queries`` queries of 20-500
documents, standard-normal scores (made once by this tree's plboost and saved, so all commits see the same).
Prints a Markdown table of the medians over rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]

PROBE = """
import json, resource, statistics, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np, lightgbm as lgb
from plboost.objectives import get_objective
data = np.load(sys.argv[2])
labels, sizes, scores = data["labels"], data["sizes"], data["scores"]
dataset = lgb.Dataset(np.zeros((labels.size, 1), dtype=np.float32), labels, group=sizes,
                      params={"verbosity": -1}).construct()
objective = get_objective(sys.argv[3])
objective(scores, dataset)
objective(scores, dataset)
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
calls, exps = [], []
for _ in range(int(sys.argv[4])):
    start = time.perf_counter(); objective(scores, dataset); calls.append(time.perf_counter() - start)
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / len(calls)
for _ in range(int(sys.argv[4])):
    start = time.perf_counter(); np.exp(scores); exps.append(time.perf_counter() - start)
print(json.dumps({"ms": 1e3 * statistics.median(calls), "exp_ms": 1e3 * statistics.median(exps), "faults": faults}))
"""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("commits", nargs="+", help="commits (anything git rev-parse takes), or WORKTREE")
    parser.add_argument("--objective", default="plrank", help="a registered objective's name (its defaults)")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per commit")
    parser.add_argument("--calls", type=int, default=21, help="timed calls per process")
    args = parser.parse_args(argv)

    import numpy as np

    from plboost.data import make_synthetic

    with tempfile.TemporaryDirectory(prefix="plboost-commits-") as scratch:
        scratch = Path(scratch)
        data = make_synthetic(n_queries=args.queries, n_features=1, docs_per_query=(20, 500), seed=0)
        arrays = scratch / "data.npz"
        np.savez(arrays, labels=data.labels, sizes=data.group_sizes,
                 scores=np.random.default_rng(0).normal(size=data.n_docs))
        trees = {}
        for commit in args.commits:
            if commit == "WORKTREE":
                trees[commit] = REPOSITORY
                continue
            tree = scratch / f"tree-{len(trees)}"
            subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "add", "--detach", "-q", str(tree), commit],
                           check=True)
            trees[commit] = tree
        try:
            results = {commit: [] for commit in trees}
            for _ in range(args.rounds):
                for commit, tree in trees.items():
                    env_cache = scratch / f"numba-{list(trees).index(commit)}"
                    done = subprocess.run([sys.executable, "-c", PROBE, str(tree), str(arrays), args.objective,
                                           str(args.calls)], check=True, capture_output=True, text=True, cwd=scratch,
                                          env={**os.environ, "NUMBA_CACHE_DIR": str(env_cache)})
                    results[commit].append(json.loads(done.stdout.strip().splitlines()[-1]))
        finally:
            for tree in trees.values():
                if tree != REPOSITORY:
                    subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "remove", "--force", str(tree)],
                                   check=False)
    print(f"{args.objective}, {data.n_docs:,} documents, {args.queries:,} queries; medians over {args.rounds} fresh "
          f"processes of medians of {args.calls} calls\n")
    print("| commit | obj(scores, lgb.Dataset) ms | np.exp ms | ratio | page faults per call |")
    print("|---|---|---|---|---|")
    for commit, runs in results.items():
        ms = statistics.median(run["ms"] for run in runs)
        exp_ms = statistics.median(run["exp_ms"] for run in runs)
        faults = statistics.median(run["faults"] for run in runs)
        print(f"| {commit} | {ms:.2f} | {exp_ms:.2f} | {ms / exp_ms:.1f} | {faults:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
