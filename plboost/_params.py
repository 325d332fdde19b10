"""Rules shared by the command line, the experiment driver and the engines, each in one place: how
``KEY=VALUE`` text becomes a value, which ``leaf_values`` settings can train, the metrics that tables and
summaries show, and how a missing optional dependency is reported."""

from __future__ import annotations

import ast
import importlib
import tomllib

import numpy as np

from ._engine_registry import ENGINES, get_engine

#: how a tree's leaf values are computed: by the engine from summed hessians ("diagonal"), or by
#: PLRank's exact Newton step ("exact", LightGBM only; :mod:`plboost.engines.exact_leaves`)
LEAF_VALUES = ("diagonal", "exact")
#: the engines whose trees can take exact leaf values
EXACT_LEAF_ENGINES = tuple(name for name, engine in ENGINES.items() if engine.exact_leaves)
#: the metrics of the PLRank paper's Table 1: what winning numbers summarise by default
PAPER_METRICS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10")
#: the metrics of a comparison table and its significance tests: the paper's, and ERR of the whole list
TABLE_METRICS = PAPER_METRICS + ("ERR",)

_WORDS = {"true": True, "false": False, "none": None, "null": None}


def plain_value(value):
    """``value`` with tuples and arrays as lists and NumPy scalars as Python ones, for comparing and hashing
    parameters: ``(0, 1, 3)``, ``[0, 1, 3]`` and ``np.array([0, 1, 3])`` are one value.

    >>> plain_value({"label_gain": (0, 1, np.float64(3.0))})
    {'label_gain': [0, 1, 3.0]}
    """
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [plain_value(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def parse_value(text: str):
    """The value of ``KEY=VALUE`` text: ``true``/``false``/``none``/``null`` in any case, a Python literal
    (``10``, ``1.5``, ``[1, 3, 7]``, ``'a b'``), a number Python reads (``inf``, ``010``), else the text.

    >>> [parse_value(t) for t in ("10", "1.5", "[1,3,7]", "False", "null", "inf", "dart")]
    [10, 1.5, [1, 3, 7], False, None, inf, 'dart']
    """
    text = text.strip()
    if text.lower() in _WORDS:
        return _WORDS[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


def parse_assignment(text: str) -> tuple[str, object]:
    """``"top_k=10"`` -> ``("top_k", 10)``, the value read by :func:`parse_value`; ValueError without a key."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), parse_value(value)


def split_list(text: str) -> list[str]:
    """``text`` cut at the commas outside brackets and quotes.

    >>> split_list("plrank,label_gain=[1,3,7],name='a,b'")
    ['plrank', 'label_gain=[1,3,7]', "name='a,b'"]
    """
    parts, depth, quote, start = [], 0, None, 0
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def check_leaf_values(leaf_values: str, engine: str, objective=None, *, dask: bool = False) -> None:
    """Refuse a ``leaf_values`` setting that cannot train with ``engine`` and ``objective`` (a name or a
    plboost objective), or on Dask: every entry point calls this, so all give the same message."""
    if leaf_values not in LEAF_VALUES:
        raise ValueError(f"leaf_values must be 'diagonal' or 'exact', got {leaf_values!r}")
    if leaf_values == "diagonal":
        return
    if engine not in EXACT_LEAF_ENGINES:
        only = " and ".join(get_engine(name).label for name in EXACT_LEAF_ENGINES)
        raise ValueError(f"leaf_values={leaf_values!r} is for {only} only (it rewrites leaves with "
                         f"Booster.set_leaf_output); {get_engine(engine).label} trains with the diagonal hessians")
    name = objective if isinstance(objective, str) or objective is None else getattr(objective, "name", objective)
    if objective is not None and name != "plrank":
        raise ValueError(f"exact leaf values are defined for PLRank (the paper's Eqn. 9), not {name}")
    if dask:
        raise ValueError("exact leaf values are not available on Dask (the leaves would be rewritten on one "
                         "machine while the workers keep their own scores)")


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says how to install it."""


def import_extra(module: str, purpose: str, install: str):
    """``module`` imported, or :class:`MissingExtra`: ``"<purpose> needs <package>: pip install <install>"``."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtra(f"{purpose} needs {module.split('.')[0]}: pip install {install}") from error


def read_toml(path) -> dict:
    """A TOML file as a dict; a syntax error names the file."""
    with open(path, "rb") as handle:
        try:
            return tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: {error}") from None
