"""plboost._numerics (tests/objectives/test_numerics.py holds the objectives at the edges of floating point): the
vectorisable exponential against NumPy's, and the shared sort's paths against NumPy's stable argsort."""

import numpy as np
import pytest

from plboost._jit import kernel
from plboost._numerics import (_EXP_HIGH, _EXP_LOW, _MOVES_PER_KEY, _insertion_sort, _place_in_buckets,
                               exp_vectorizable, stable_argsort)


@kernel
def _exp_of_each(x, out):
    for i in range(x.size):
        out[i] = exp_vectorizable(x[i])


def _exp(x):
    out = np.empty_like(x)
    _exp_of_each(x, out)
    return out


def test_exp_vectorizable_is_within_3_ulp_of_numpys_exp_where_both_are_normal():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-708.0, 0.0, 200_000), rng.uniform(-1.0, 0.0, 100_000),
                        rng.uniform(0.0, 709.0, 100_000), -np.abs(rng.normal(scale=1e-8, size=1000)),
                        np.arange(-708, 710, dtype=float), np.arange(-708, 710) * np.log(2.0) / 1.0,
                        [0.0, -0.0, np.log(2.0) / 2, -np.log(2.0) / 2, 5e-324, -5e-324]])
    x = x[(x >= _EXP_LOW) & (x <= _EXP_HIGH)]
    ours, numpys = _exp(x), np.exp(x)
    ulps = np.abs(ours - numpys) / np.spacing(numpys)
    assert ulps.max() <= 3.0, f"{ulps.max()} ulp at x = {x[ulps.argmax()]!r}"
    assert np.mean(ours == numpys) > 0.5  # mostly correctly rounded, not merely close


def test_exp_vectorizable_underflows_to_zero_overflows_to_inf_and_keeps_nan():
    low = np.array([-708.0001, -710.0, -745.2, -746.0, -1e308, -np.inf])
    np.testing.assert_array_equal(_exp(low), 0.0)
    assert np.all(np.exp(low) < np.exp(_EXP_LOW)) and np.exp(_EXP_LOW) < 3.4e-308  # the difference is below
    np.testing.assert_array_equal(_exp(np.array([709.0001, 710.0, 1e308, np.inf])), np.inf)
    assert np.isnan(_exp(np.array([np.nan]))[0])


@kernel
def _bucketing(keys):
    """Whether the keys took the bucket path of ``stable_argsort`` to its end (placed, then sorted within the
    insertion sort's move budget), and the order ``_place_in_buckets`` left."""
    n = keys.shape[0]
    order = np.empty(n, dtype=np.int64)
    placed = np.empty(n, dtype=keys.dtype)
    if not _place_in_buckets(keys, order, placed):
        return False, False, order
    before = order.copy()
    return True, _insertion_sort(order, placed, 0, n, _MOVES_PER_KEY * n), before


def _keys_of_every_kind(rng, n):
    """Keys each path of the sort meets: spread evenly, of one sign over many octaves (YetiRank's linear keys),
    few distinct values, signed zeros, infinities, a spread too narrow to divide by, a few far from the rest."""
    wide = np.exp(rng.normal(size=n)) * rng.logistic(size=n) ** 2
    yield "normal", rng.normal(size=n)
    yield "negative, wide", -wide
    yield "positive, wide", wide
    yield "labels", -rng.integers(0, 5, size=n).astype(float)
    yield "signed zeros", np.where(rng.random(n) < 0.5, -0.0, 0.0) + rng.integers(-1, 2, size=n)
    yield "one value", np.full(n, 3.5)
    yield "infinite", np.where(rng.random(n) < 0.1, np.inf, rng.normal(size=n))
    yield "subnormal spread", rng.choice([5e-324, 1e-323, 0.0], size=n)
    yield "far apart", np.r_[rng.normal(size=n - 2), 1e300, -1e300]
    yield "octaves", rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, size=n)
    yield "large integers", rng.integers(-2 ** 62, 2 ** 62, size=n)
    yield "small integers", rng.integers(0, 4, size=n)


@pytest.mark.parametrize("n", [17, 18, 100, 500, 3000])
def test_stable_argsort_is_numpys_on_keys_of_every_kind(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        for kind, keys in _keys_of_every_kind(rng, n):
            np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"), err_msg=kind)


def test_buckets_keep_equal_keys_in_input_order():
    rng = np.random.default_rng(1)
    for _ in range(50):
        for kind, keys in _keys_of_every_kind(rng, 300):
            took, _, order = _bucketing(keys)
            if not took:
                assert kind in ("infinite", "subnormal spread"), kind
                continue
            assert sorted(order) == list(range(keys.size)), kind
            # the placement keeps equal keys in input order (what makes any stable sort of it finish the stable
            # order of the input) if and only if sorting it stably gives NumPy's stable order of the input
            again = order[np.argsort(keys[order], kind="stable")]
            np.testing.assert_array_equal(again, np.argsort(keys, kind="stable"), err_msg=kind)


def test_the_keys_plboost_sorts_most_take_the_bucket_path_and_keys_far_apart_leave_it():
    """The speed (issue 39) comes from the bucket path; keys it spreads badly go to the merge sort."""
    rng = np.random.default_rng(2)
    for kind, keys in _keys_of_every_kind(rng, 300):
        took, within_budget, _ = _bucketing(keys)
        if kind in ("normal", "negative, wide", "positive, wide", "labels", "signed zeros", "one value",
                    "small integers"):
            assert took and within_budget, kind
        if kind == "far apart":
            assert took and not within_budget
