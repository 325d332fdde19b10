"""The PLRank paper's experiment on Yahoo! LTR Set 1 (and Set 2 if present): see paper_runs.py.

    python scripts/run_yahoo.py ~/data/yahoo-ltr [--out results/yahoo] [--estimate-only] [--out-of-core]

The directory holds set1.train.txt, set1.valid.txt, set1.test.txt (and set 2 likewise; .gz accepted).
Each set is its own benchmark with its own table, written under --out/set1 and --out/set2 (default
results/<directory name>/set1, ...); rerunning skips the finished runs. Files whose dense matrix would not
fit the memory available are read out of core (one line says so); --out-of-core or --in-memory forces either.
"""

import sys
from dataclasses import replace
from pathlib import Path

from paper_runs import guarded, parser, run_benchmark

from plboost.data.layouts import find_layout


def main(argv=None) -> int:
    arguments = parser(__doc__.split("\n")[0])
    arguments.add_argument("--set", type=int, choices=(1, 2), help="only this set (default: all present)")
    args = arguments.parse_args(argv)
    layout = find_layout(args.data)
    if layout.kind != "yahoo":
        raise SystemExit(f"{args.data}: expected Yahoo! LTR files (set1.train.txt, set1.valid.txt, "
                         f"set1.test.txt), found a {layout.kind} layout")
    base = args.out or Path("results") / args.data.resolve().name
    status = 0
    for split in layout.splits:
        if args.set and split.name != f"set{args.set}":
            continue
        status |= run_benchmark(args, replace(layout, splits=(split,)), base / split.name, f"Yahoo! LTR {split.name}")
    return status


if __name__ == "__main__":
    sys.exit(guarded(main))
