"""The package's public face: every name of ``plboost.__all__`` is the object its module defines, loaded when
first used, and ``import plboost`` alone loads neither Numba nor an engine."""

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import plboost


def test_every_public_name_is_its_modules_object():
    modules = {**plboost._PUBLIC, **plboost._objective_classes()}
    for name in plboost.__all__:
        if name == "__version__":
            continue
        module = importlib.import_module(modules[name])
        assert getattr(plboost, name) is getattr(module, name), name
    assert {"PLRank", "PLRank3", "load_svmlight", "evaluate", "Ranker", "train", "query_folds"} <= set(plboost.__all__)
    assert set(plboost.__all__) <= set(dir(plboost))
    assert sorted(plboost.__all__) == sorted([*modules, "__version__"])


def test_everything_registered_is_on_the_face():
    """Every registered objective's class, every engine and the metric registry's functions are names of the package,
    in ``__all__``, what static tools see (the ``TYPE_CHECKING`` imports) and what ``from plboost import *`` gives."""
    from plboost import metrics
    from plboost._engine_registry import ENGINES
    from plboost.objectives import OBJECTIVES

    star: dict = {}
    exec("from plboost import *", star)  # noqa: S102
    seen_by_static_tools = _type_checking_names()
    for cls in OBJECTIVES.values():
        assert getattr(plboost, cls.__name__) is cls and star[cls.__name__] is cls, cls.__name__
        assert cls.__name__ in plboost.__all__ and cls.__name__ in seen_by_static_tools, cls.__name__
    assert dict(plboost.ENGINES) == dict(ENGINES) and star["ENGINES"] is ENGINES
    built_in = {"NDCG": metrics.ndcg, "ERR": metrics.err, "MAP": metrics.mean_average_precision}
    assert set(built_in) == set(metrics._BUILT_IN)
    for function in (*built_in.values(), metrics.register_metric, metrics.unregister_metric,
                     metrics.registered_metrics):
        assert getattr(plboost, function.__name__) is function and function.__name__ in seen_by_static_tools


def test_an_objective_registered_later_is_a_name_of_the_package(monkeypatch):
    """The face reads the registry: a class registered there is found without an edit of ``plboost/__init__.py``
    (``__all__``, written out for static tools, is what the test above holds to the registry)."""
    from plboost.objectives import OBJECTIVES, PLRank

    class ShallowPLRank(PLRank):
        name = "shallow-plrank"

    monkeypatch.setitem(OBJECTIVES, ShallowPLRank.name, ShallowPLRank)
    monkeypatch.setattr(importlib.import_module("plboost.objectives"), "ShallowPLRank", ShallowPLRank, raising=False)
    try:
        assert plboost.ShallowPLRank is ShallowPLRank
    finally:  # the face keeps what it found
        vars(plboost).pop("ShallowPLRank", None)
    with pytest.raises(AttributeError, match="no attribute '__wrapped__'"):
        plboost.__wrapped__  # noqa: B018


def _type_checking_names() -> set[str]:
    """The names the ``if TYPE_CHECKING:`` block of ``plboost/__init__.py`` imports."""
    tree = ast.parse(Path(plboost.__file__).read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test))
    return {alias.name for node in ast.walk(block) if isinstance(node, ast.ImportFrom) for alias in node.names}


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'plboost' has no attribute 'PLRank4'"):
        plboost.PLRank4  # noqa: B018


def test_importing_plboost_loads_no_numba_nor_engine():
    code = ("import sys, plboost; print(' '.join(m for m in ('numba', 'lightgbm', 'xgboost', 'sklearn', 'pandas', "
            "'dask', 'scipy', 'plboost.objectives') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == []
