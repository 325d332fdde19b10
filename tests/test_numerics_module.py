"""plboost._numerics (tests/objectives/test_numerics.py holds the objectives at the edges of floating point): the
vectorisable exponential against NumPy's."""

import numpy as np

from plboost._jit import kernel
from plboost._numerics import _EXP_HIGH, _EXP_LOW, exp_vectorizable


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
