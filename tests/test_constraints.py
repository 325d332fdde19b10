"""The one validator (plboost._constraints): what each constraint accepts, what it converts to, the one message."""

import numpy as np
import pytest

from plboost._constraints import SEED, Boolean, Integer, Options, Real, Reals, check, check_params
from plboost.errors import InputTypeError, InvalidParameterError


@pytest.mark.parametrize("constraint, good, bad", [
    (Integer(low=1), [1, np.int64(7), 5.0, np.float32(2.0)], [0, -3, 2.5, True, np.bool_(True), "3", None, np.inf]),
    (Integer(low=0, high=3), [0, 3], [-1, 4]),
    (SEED, [0, 2 ** 63 - 1], [-1, 2 ** 63]),
    (Real(low=0), [0, 0.0, 1, np.float32(0.5)], [-1e-9, np.nan, np.inf, True, "0.5", None]),
    (Real(low=0, low_open=True), [1e-300], [0, 0.0]),
    (Real(low=0.05, high=1.0), [0.05, 1.0], [0.04, 1.01]),
    (Boolean(), [True, False, np.bool_(False)], ["false", "False", "no", "", 0, 1, None, np.array([True])]),
    (Options("exp", "linear"), ["exp", "linear"], ["EXP", "log", None, 1]),
    (Options(True, False), [True, False], [1, 0, np.int64(1)]),
    (Reals(low=0), [[1, 0.5], (0.0, 2.0), np.array([3.0]), [np.float64(1.0)]],
     [[], "ab", [1.0, -1.0], [1.0, np.nan], [True, 1.0], [[1.0]], {"a": 1.0}, 3.0, np.array([True])]),
])
def test_each_constraint_accepts_its_values_and_only_them(constraint, good, bad):
    for value in good:
        assert constraint.accepts(value), value
    for value in bad:
        assert not constraint.accepts(value), value


def test_values_are_converted_to_plain_python():
    assert check(np.int64(3), Integer(), "n") == 3 and type(check(np.int64(3), Integer(), "n")) is int
    assert type(check(5.0, Integer(), "n")) is int
    assert type(check(1, Real(), "x")) is float
    assert check(np.bool_(False), Boolean(), "b") is False
    assert type(check(np.str_("exp"), Options("exp", "linear"), "gain")) is str  # from a NumPy array of names
    assert check(np.array([1, 2]), Reals(), "gains") == (1.0, 2.0)
    assert check(None, (Integer(low=1), None), "top_k") is None
    assert check_params({"a": Integer(), "b": Boolean()}, {"a": 2.0, "b": True}) == {"a": 2, "b": True}


def test_one_message_form_names_the_owner_the_parameter_and_every_alternative():
    with pytest.raises(InvalidParameterError) as raised:
        check("x", (Integer(low=1), None, Options("preset")), "level", owner="UMart")
    assert str(raised.value) == "UMart: level must be an integer >= 1, None or 'preset', got 'x' (str)"
    with pytest.raises(InvalidParameterError, match=r"^seed must be an integer in \[0, 2\*\*63\), got -1$"):
        check(-1, SEED, "seed")
    with pytest.raises(InvalidParameterError, match=r"^flag must be True or False \(a bool\), got 1$"):
        check(1, Boolean(), "flag")


@pytest.mark.parametrize("constraint", [Integer(), Integer(low=1), (Integer(low=1), None), SEED])
@pytest.mark.parametrize("value", [2 ** 63, 3 * 10 ** 40, 1.5e19, -(2 ** 63) - 5])
def test_every_integer_stays_within_64_bits_and_the_message_says_so(constraint, value):
    """Kernels, NumPy and the engines hold integers in 64 bits: a bound of a parameter's own or none, a whole
    number beyond them is refused, naming the parameter and the range, not an OverflowError later."""
    with pytest.raises(InvalidParameterError, match=r"^PLRank: n must be .*, got .* \(beyond the 64-bit integers, "
                                                    r"-2\*\*63 to 2\*\*63 - 1\)$"):
        check(value, constraint, "n", owner="PLRank")
    assert check(2 ** 63 - 1, Integer(low=1), "n") == 2 ** 63 - 1


@pytest.mark.parametrize("name, value", [("eval_at", 2 ** 31), ("num_leaves", 5 * 10 ** 12)])
def test_the_engines_c_int_parameters_are_bounded_by_it(name, value):
    from plboost.engines.settings import TrainingSettings

    with pytest.raises(InvalidParameterError, match=rf"^{name} must be an integer in \[1, 2\*\*31\), got {value}$"):
        TrainingSettings(**{name: value})
    assert getattr(TrainingSettings(**{name: 2 ** 31 - 1}), name) == 2 ** 31 - 1


@pytest.mark.parametrize("make, name", [
    (lambda value: __import__("plboost").PLRank(hessian_floor=value), "hessian_floor"),
    (lambda value: __import__("plboost").objectives.YetiRank(weight_scale=value), "weight_scale"),
    (lambda value: __import__("plboost").objectives.UMart(sigmoid=value ** 4), "sigmoid"),
    (lambda value: __import__("plboost").objectives.LambdaLoss(sigmoid=value ** 4), "sigmoid"),
])
def test_reals_whose_finite_but_huge_values_overflow_are_refused(make, name):
    """A hessian floor or pair weight beyond float32 (the gradients' type), a sigmoid scale whose square is beyond
    float64: refused by the declared constraint, naming the parameter, instead of infinite or NaN hessians."""
    expected = rf"{name} must be a finite number in [(\[]0, [0-9.e+]+\](?: or None)?, got"
    with pytest.raises(InvalidParameterError, match=expected):
        make(7.5e38)


def test_the_error_is_both_a_value_error_and_a_type_error():
    with pytest.raises(InvalidParameterError) as raised:
        check("3", Integer(), "n")
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, TypeError)
    assert isinstance(raised.value, InputTypeError)  # the command shows it as one line, not as a bug


def test_an_undeclared_parameter_is_a_bug_not_a_user_error():
    with pytest.raises(KeyError):
        check_params({"a": Integer()}, {"b": 1})


@pytest.mark.parametrize("value, shown", [
    ([float("nan")] * 4000, r"\[nan, nan, nan, nan, nan, nan, \.\.\.\] \(list, 4,000 entries\)$"),
    (tuple(["a"] * 900), r"\('a', 'a', 'a', 'a', 'a', 'a', \.\.\.\) \(tuple, 900 entries\)$"),
    ("z" * 7000, r"'z+\.\.\.z+' \(str, 7,000 characters\)$"),
    (np.full(10_000, np.inf), r"array\(\[inf, .*\) \(ndarray, 10,000 entries\)$"),
])
def test_a_long_refused_value_is_shown_cut_with_its_size(value, shown):
    with pytest.raises(InvalidParameterError, match=rf"^Owner: gains must be a non-empty sequence of finite numbers, "
                                                    rf"got {shown}") as error:
        check(value, Reals(), "gains", "Owner")
    assert len(str(error.value)) < 250
