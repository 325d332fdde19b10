"""The PLRank paper's experiment on MSLR-WEB10K or MSLR-WEB30K (5 folds): see paper_runs.py.

    python scripts/run_mslr.py ~/data/MSLR-WEB30K [--out results/mslr30k] [--estimate-only] [--out-of-core]

The directory holds Fold1..Fold5 with train.txt, vali.txt and test.txt (.gz accepted). Results: a table
(mean ± std over folds) on stdout, and results.csv, summary.csv, results.json, validation_ndcg.png and
per-run records in --out (default results/<directory name>); rerunning skips the finished runs.
Files whose dense matrix would not fit the memory available are read out of core (chunks on disk, one line
says so); --out-of-core or --in-memory forces either (docs/out_of_core.md).
"""

import sys
from pathlib import Path

from paper_runs import guarded, parser, run_benchmark

from plboost.data.layouts import find_layout


def main(argv=None) -> int:
    args = parser(__doc__.split("\n")[0]).parse_args(argv)
    layout = find_layout(args.data)
    out = args.out or Path("results") / args.data.resolve().name
    return run_benchmark(args, layout, out, args.data.resolve().name)


if __name__ == "__main__":
    sys.exit(guarded(main))
