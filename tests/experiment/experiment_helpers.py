"""Helpers shared by the experiment layer's tests (imported by name: pytest puts this directory on sys.path)."""

import csv

from plboost.cli import main
from plboost.data import write_synthetic_splits
from plboost.experiment import RunSpec, parse_run


def write_folds(directory, seed, n_folds=2):
    for fold in range(1, n_folds + 1):
        write_synthetic_splits(directory / f"Fold{fold}", n_queries=(30, 10, 10), seed=seed * 10 + fold)
    return directory


def cli_spec(text):
    """The configuration that compare_cli trains for ``--run text``."""
    return parse_run(text, RunSpec(rounds=3, num_leaves=7))


def compare_cli(*args):
    return main(["compare", *map(str, args), "--rounds", "3", "--num-leaves", "7", "--quiet"])


def read_csv(path):
    return list(csv.DictReader(open(path)))
