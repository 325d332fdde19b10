"""Fixtures of the experiment layer's tests: small synthetic splits, and two synthetic LETOR-style datasets."""

import pytest

from plboost.data import make_synthetic, write_synthetic_splits


def write_folds(directory, seed, n_folds=2):
    for fold in range(1, n_folds + 1):
        write_synthetic_splits(directory / f"Fold{fold}", n_queries=(30, 10, 10), seed=seed * 10 + fold)
    return directory


@pytest.fixture(scope="module")
def splits():
    return [make_synthetic(n_queries=n, seed=seed) for n, seed in ((80, 1), (30, 2), (30, 3))]


@pytest.fixture(scope="module")
def two_datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("datasets")
    return write_folds(root / "alpha", 1), write_folds(root / "beta", 2)
