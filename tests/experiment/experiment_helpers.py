"""Helpers shared by the experiment layer's tests (imported by name: pytest puts this directory on sys.path)."""

import csv

from plboost.cli import main
from plboost.experiment import RunSpec, parse_run


def cli_spec(text):
    """The configuration that compare_cli trains for ``--run text``."""
    return parse_run(text, RunSpec(rounds=3, num_leaves=7))


def compare_cli(*args):
    return main(["compare", *map(str, args), "--rounds", "3", "--num-leaves", "7", "--quiet"])


def read_csv(path):
    return list(csv.DictReader(open(path)))
