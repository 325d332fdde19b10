"""Parameters declared once: what each parameter of a public class or function may be, and the one validator.

A class or function states its parameters' constraints as data, beside its signature (scikit-learn's
``_parameter_constraints`` is the model), and :func:`check_params` checks the given values against them,
converts them (``numpy.int64(3)`` to ``3``, ``1`` to ``1.0`` for a real) and writes every message in one form::

    PLRank: top_k must be an integer >= 1 or None, got 0

A constraint is one of :class:`Integer`, :class:`Real`, :class:`Boolean`, :class:`Options`, :class:`Reals`,
:class:`PerDocument`, :class:`Text`, or ``None`` (the value None is valid), or a tuple of them (any one may accept
the value).

Booleans are bool or ``numpy.bool_`` only: Python's truth test makes the string ``"false"`` true, so a string,
number or None given for a boolean is refused rather than read as its opposite. The command line and TOML files
convert ``true``/``false`` text before it gets here (:func:`plboost._values.parse_value`).

>>> check_params({"top_k": (Integer(low=1), None)}, {"top_k": 10}, owner="PLRank")
{'top_k': 10}
>>> check_params({"normalize": Boolean()}, {"normalize": "no"}, owner="PLRank3")
Traceback (most recent call last):
    ...
plboost.errors.InvalidParameterError: PLRank3: normalize must be True or False (a bool), got 'no' (str)
"""

from __future__ import annotations

import math
import reprlib
import re
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .errors import InvalidParameterError


#: the integers every parameter stays within, bounds of its own or not: plboost's kernels, NumPy and the engines
#: hold integers in 64 bits, where 2**63 overflowed (an OverflowError after training, for a cut-off)
INT64_RANGE = (-2 ** 63, 2 ** 63 - 1)
#: the largest value of a C int, the type of the engines' integer parameters (LightGBM's num_leaves and eval_at,
#: XGBoost's max_leaves): LightGBM read eval_at=2**32 as a negative cut-off
C_INT_MAX = 2 ** 31 - 1
#: the largest finite float32, the type of the gradients and hessians the engines get
FLOAT32_MAX = float(np.finfo(np.float32).max)
#: the largest number whose square is finite in float64 (a sigmoid's scale sigma enters hessians as sigma^2)
SQUARE_ROOT_OF_FLOAT64_MAX = math.sqrt(float(np.finfo(np.float64).max))


@dataclass(frozen=True)
class Integer:
    """An integer in ``[low, high]`` (either bound may be None) and within :data:`INT64_RANGE`: a Python or NumPy
    integer, or a float that is a whole number (``5.0``, as a TOML file or ``top_k=5.0`` may write it), converted
    to int; not a bool."""

    low: int | None = None
    high: int | None = None
    #: the range in words, where the bounds' digits say it less well (``"an integer in [0, 2**63)"``)
    text: str | None = None

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)):
            return False
        whole = isinstance(value, numbers.Integral) or (
            isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer())
        low = INT64_RANGE[0] if self.low is None else max(self.low, INT64_RANGE[0])
        high = INT64_RANGE[1] if self.high is None else min(self.high, INT64_RANGE[1])
        return whole and low <= value <= high

    def convert(self, value) -> int:
        return int(value)

    def describe(self) -> str:
        if self.text:
            return self.text
        if self.low is not None and self.high is not None:
            return f"an integer in [{self.low}, {self.high}]"
        if self.low is not None:
            return f"an integer >= {self.low}"
        return "an integer" if self.high is None else f"an integer <= {self.high}"


@dataclass(frozen=True)
class Real:
    """A finite real number (not a bool) above ``low`` and below ``high`` (``low_open``, ``high_open``: strictly)."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    def accepts(self, value) -> bool:
        if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)) or not math.isfinite(value):
            return False
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        below = self.high is None or (value < self.high if self.high_open else value <= self.high)
        return above and below

    def convert(self, value) -> float:
        return float(value)

    def describe(self) -> str:
        low = "" if self.low is None else f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None:
            close = ")" if self.high_open else "]"
            return f"a finite number in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{close}" if low \
                else f"a finite number {'<' if self.high_open else '<='} {self.high:g}"
        return f"a finite number {low}" if low else "a finite number"


@dataclass(frozen=True)
class Boolean:
    """True or False: a bool or a ``numpy.bool_``, nothing that is merely truthy."""

    def accepts(self, value) -> bool:
        return isinstance(value, (bool, np.bool_))

    def convert(self, value) -> bool:
        return bool(value)

    def describe(self) -> str:
        return "True or False (a bool)"


@dataclass(frozen=True)
class Options:
    """One of a few named values (compared by type and value, so that ``1`` is not ``True``)."""

    values: tuple

    def __init__(self, *values):
        object.__setattr__(self, "values", values)

    def accepts(self, value) -> bool:
        return any(self._same(value, option) for option in self.values)

    def convert(self, value):
        return next(option for option in self.values if self._same(value, option))  # np.str_ to str

    @staticmethod
    def _same(value, option) -> bool:
        """Equal and of the option's type (a subclass, such as NumPy's str, counts; a bool is not a number)."""
        is_bool = isinstance(value, (bool, np.bool_))
        return (isinstance(value, type(option)) or (is_bool and isinstance(option, bool))) \
            and is_bool == isinstance(option, bool) and value == option

    def describe(self) -> str:
        return repr(self.values[0]) if len(self.values) == 1 else "one of " + ", ".join(map(repr, self.values))


@dataclass(frozen=True)
class Reals:
    """A non-empty one-dimensional sequence of finite numbers (list, tuple or array; not a string), stored as a
    tuple of floats; ``low`` bounds every entry from below."""

    low: float | None = None

    def accepts(self, value) -> bool:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__") or len(value) == 0:
            return False
        if not isinstance(value, np.ndarray) and any(isinstance(entry, (bool, np.bool_)) for entry in value):
            return False
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            return False
        return (array.ndim == 1 and array.dtype.kind in "iuf" and bool(np.all(np.isfinite(array)))
                and (self.low is None or bool(np.all(array >= self.low))))

    def convert(self, value) -> tuple:
        return tuple(float(entry) for entry in np.asarray(value, dtype=np.float64))

    def describe(self) -> str:
        bound = "" if self.low is None else f" >= {self.low:g}"
        return f"a non-empty sequence of finite numbers{bound}"


@dataclass(frozen=True)
class PerDocument:
    """One value per document: a non-empty one-dimensional sequence (list, tuple or array; not a string) of numbers
    or strings, stored as a NumPy array (its length is checked where the documents are known)."""

    def accepts(self, value) -> bool:
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__") or len(value) == 0:
            return False
        try:
            array = np.asarray(value)
        except (TypeError, ValueError):
            return False
        return array.ndim == 1 and array.dtype.kind in "biufUO"

    def convert(self, value) -> np.ndarray:
        array = np.array(value)
        array.flags.writeable = False
        return array

    def describe(self) -> str:
        return "a non-empty one-dimensional sequence of values, one per document"


#: a seed of plboost's counter-based random streams (:mod:`plboost._random`): 63 bits, non-negative
SEED = Integer(low=0, high=2 ** 63 - 1, text="an integer in [0, 2**63)")
#: a positive integer that an engine takes as a C int (``C_INT_MAX``)
POSITIVE_C_INT = Integer(low=1, high=C_INT_MAX, text="an integer in [1, 2**31)")


@dataclass(frozen=True)
class Text:
    """A string that matches ``pattern`` whole; ``text`` says what that is in words."""

    pattern: str
    text: str

    def accepts(self, value) -> bool:
        return isinstance(value, str) and re.fullmatch(self.pattern, value) is not None

    def convert(self, value) -> str:
        return value

    def describe(self) -> str:
        return self.text


#: how a refused value is shown: a long list or string cut (Python's reprlib), never echoed whole
_SHOWN = reprlib.Repr()  # keyword arguments from Python 3.12 only
_SHOWN.maxlist = _SHOWN.maxtuple = _SHOWN.maxarray = _SHOWN.maxset = 6
_SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlong = 60, 60, 40


def check(value, constraint, name: str, owner: str | None = None):
    """``value`` converted by the first part of ``constraint`` that accepts it; InvalidParameterError if none does."""
    parts = constraint if isinstance(constraint, tuple) else (constraint,)
    for part in parts:
        if part is None:
            if value is None:
                return None
        elif part.accepts(value):
            return part.convert(value)
    described = [part.describe() if part is not None else "None" for part in parts]
    wanted = described[0] if len(described) == 1 else ", ".join(described[:-1]) + " or " + described[-1]
    plain = value is None or (isinstance(value, numbers.Number) and not isinstance(value, (bool, np.bool_)))
    size = (f", {len(value):,} characters" if len(value) > _SHOWN.maxstring else "") if isinstance(value, str) \
        else f", {len(value):,} entries" if hasattr(value, "__len__") else ""
    got = _SHOWN.repr(value) if plain or isinstance(value, (bool, np.bool_)) \
        else f"{_SHOWN.repr(value)} ({type(value).__name__}{size})"
    if any(isinstance(part, Integer) for part in parts) and _beyond_int64(value):
        got += " (beyond the 64-bit integers, -2**63 to 2**63 - 1)"
    raise InvalidParameterError(f"{owner + ': ' if owner else ''}{name} must be {wanted}, got {got}")


def _beyond_int64(value) -> bool:
    """Whether ``value`` is a whole number outside :data:`INT64_RANGE` (which no part of a message says)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        return False
    if not isinstance(value, numbers.Integral) and not (math.isfinite(value) and float(value).is_integer()):
        return False
    return not INT64_RANGE[0] <= value <= INT64_RANGE[1]


def check_params(constraints: Mapping[str, object], values: Mapping[str, object], owner: str | None = None) -> dict:
    """Every entry of ``values`` checked and converted by its constraint in ``constraints`` (all of them must be
    declared: an undeclared one is plboost's bug, and raises KeyError)."""
    return {name: check(value, constraints[name], name, owner) for name, value in values.items()}
