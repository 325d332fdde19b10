"""Give a train/test benchmark a validation file: a seeded share of the training queries, held out (issue 28).

    python scripts/hold_out_validation.py ../shared/data/MSLR-WEB10K-5k /tmp/mslr5k-vali
    python scripts/hold_out_validation.py ../shared/data/lightgbm_lambdarank /tmp/lgb-example-vali --fraction 0.25

Tuning (``plboost compare --tune``) and early stopping need a validation file, which the MSLR-WEB10K slice
and LightGBM's lambdarank example do not have. This reads the directory's one training and one test file
(plboost's ``single`` layout: LightGBM's ``.query`` files are found beside them), draws ``--fraction`` of the
training queries at random (``--seed``) as validation queries, and writes ``train.txt``, ``vali.txt`` and
``test.txt`` to the output directory, which ``plboost compare`` then reads as one split. The test file is
written unchanged in content (same documents, labels, features and query ids). The output directory must
not exist: nothing is overwritten.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from plboost.data import load_svmlight
from plboost.data.layouts import find_layout


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("source", type=Path, help="a directory with one training and one test file")
    parser.add_argument("out", type=Path, help="a new directory for train.txt, vali.txt and test.txt")
    parser.add_argument("--fraction", type=float, default=0.25, help="share of training queries held out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if not 0 < args.fraction < 1:
        parser.error(f"--fraction must be between 0 and 1, got {args.fraction}")
    if args.out.exists():
        parser.error(f"{args.out} exists: give a new directory (nothing is overwritten)")
    try:
        splits = find_layout(args.source).splits
    except (FileNotFoundError, ValueError) as error:
        parser.error(str(error))
    if len(splits) != 1 or splits[0].valid is not None:
        parser.error(f"{args.source}: expected one training and one test file and no validation file, "
                     f"found {len(splits)} split(s)" + (" with validation" if splits and splits[0].valid else ""))
    split = splits[0]
    train, test = load_svmlight(split.train), load_svmlight(split.test)
    n_valid = max(1, round(args.fraction * train.n_queries))
    held_out = np.zeros(train.n_queries, dtype=bool)
    held_out[np.random.default_rng(args.seed).choice(train.n_queries, n_valid, replace=False)] = True
    args.out.mkdir(parents=True)
    train.subset(np.flatnonzero(~held_out)).save_svmlight(args.out / "train.txt")
    train.subset(np.flatnonzero(held_out)).save_svmlight(args.out / "vali.txt")
    test.save_svmlight(args.out / "test.txt")
    print(f"{args.out}: train.txt {train.n_queries - n_valid} queries, vali.txt {n_valid} queries (held out of "
          f"{split.train.name}, seed {args.seed}), test.txt {test.n_queries} queries ({split.test.name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
