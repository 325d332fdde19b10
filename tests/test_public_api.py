"""The package's public face: every name of ``plboost.__all__`` is the object its module defines, loaded when
first used, and ``import plboost`` alone loads neither Numba nor an engine."""

import importlib
import subprocess
import sys

import pytest

import plboost


def test_every_public_name_is_its_modules_object():
    for name in plboost.__all__:
        if name == "__version__":
            continue
        module = importlib.import_module(plboost._PUBLIC[name])
        assert getattr(plboost, name) is getattr(module, name), name
    assert {"PLRank", "PLRank3", "load_svmlight", "evaluate", "Ranker", "train", "query_folds"} <= set(plboost.__all__)
    assert set(plboost.__all__) <= set(dir(plboost))
    assert sorted(plboost.__all__) == sorted([*plboost._PUBLIC, "__version__"])


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'plboost' has no attribute 'PLRank4'"):
        plboost.PLRank4  # noqa: B018


def test_importing_plboost_loads_no_numba_nor_engine():
    code = ("import sys, plboost; print(' '.join(m for m in ('numba', 'lightgbm', 'xgboost', 'sklearn', 'pandas', "
            "'dask', 'scipy', 'plboost.objectives') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []
