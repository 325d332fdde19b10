"""How ``KEY=VALUE`` text becomes a value, one rule for the command line, TOML files, run specs and scripts, and
the plain form of a parameter's value for comparing and hashing."""

from __future__ import annotations

import ast
import tomllib

import numpy as np

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


BOOLEAN_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def boolean_word(value) -> bool | None:
    """``value`` read as a boolean the way the command line writes one (true/false/yes/no/1/0, any case, or the
    numbers 0 and 1); None where it is no such word.

    >>> [boolean_word(v) for v in ("No", 1, "TRUE", "maybe", 2)]
    [False, True, True, None, None]
    """
    return BOOLEAN_WORDS.get(str(value).strip().lower()) if isinstance(value, (str, int)) else None


def parse_assignment(text: str) -> tuple[str, object]:
    """``"top_k=10"`` -> ``("top_k", 10)``, the value read by :func:`parse_value`; ValueError without a key."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), parse_value(value)


def assignments(pairs, what: str) -> dict:
    """``(key, value)`` pairs (as :func:`parse_assignment` gives them) as a dict; a key given twice is refused,
    naming both values, where a dict would keep the last without a word.

    >>> assignments([("top_k", 5), ("top_k", 6)], "--param")
    Traceback (most recent call last):
    ValueError: --param top_k is given twice (top_k=5, then top_k=6); give it once
    """
    found: dict = {}
    for key, value in pairs:
        if key in found:
            raise ValueError(f"{what} {key} is given twice ({key}={found[key]!r}, then {key}={value!r}); give it once")
        found[key] = value
    return found


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


def read_toml(path) -> dict:
    """A TOML file as a dict; a syntax error names the file."""
    with open(path, "rb") as handle:
        try:
            return tomllib.load(handle)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: {error}") from None
