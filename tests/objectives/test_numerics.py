"""Scores and labels at the edges of floating point (issue 16): finite outputs, gradients that sum to 0 per
query, and a clear error where an objective cannot represent its own loss."""

import re
from pathlib import Path

import lightgbm as lgb
import numpy as np
import pytest

import plboost
from plboost._queries import InvalidLabelError
from plboost.objectives import PLRank, UMart, URank
from plboost.objectives._base import WIDEST_SCORE_GAP, _relative_scores

#: settings with code paths of their own, tested beside every registered objective at its defaults (the
#: ``objective`` fixture): several permutations, the whole list with uniform queries kept, uMart's B = 1
#: path, wider windows and the authors' preset
SETTINGS = [PLRank(top_k=3, n_permutations=3), PLRank(top_k=None, skip_uniform_queries=False), UMart(window=1),
            UMart(window=3), UMart(preset="paper")]
CONSTANTS = [1e30, -1e30, 2.0 ** 60, 1e308, -1e308]
LABELS = np.array([3.0, 1.0, 0.0, 2.0, 1.0, 0.0, 0.0, 4.0, 2.0, 1.0, 0.0, 3.0])
OFFSETS = np.array([0, 5, 12])


@pytest.mark.parametrize("constant", CONSTANTS)
def test_scores_of_one_large_constant_give_the_gradients_of_zeros(objective, constant):
    """Before: the log-sum-exp of n scores of 1e30 was 1e30 (not 1e30 + log n), so every document got
    probability 1 and a query's gradients summed to 10-21."""
    grad, hess = objective.gradients(np.full(LABELS.size, constant), LABELS, OFFSETS)
    expected_grad, expected_hess = objective.gradients(np.zeros(LABELS.size), LABELS, OFFSETS)
    np.testing.assert_array_equal(grad, expected_grad)
    np.testing.assert_array_equal(hess, expected_hess)


def test_scores_of_plus_and_minus_1e308_give_finite_zero_sum_gradients(objective):
    """Before: URank's hessians were NaN (2 s overflowed) and PL-Partition's everything."""
    scores = np.where(np.arange(LABELS.size) % 3 == 0, 1e308, -1e308)
    grad, hess = objective.gradients(scores, LABELS, OFFSETS)
    assert np.all(np.isfinite(grad)) and np.all(hess >= 1e-6)
    sums = np.add.reduceat(grad.astype(np.float64), OFFSETS[:-1])
    assert np.all(np.abs(sums) <= 1e-6 * np.maximum(1.0, np.add.reduceat(np.abs(grad), OFFSETS[:-1])))




def test_relative_scores_subtract_the_top_and_narrow_the_wide_gaps():
    scores = np.array([5.0, 3.0, 5.5, -2e3, -2e3 - 0.25, 1e308, -1e308, -1e308, 0.0, 7.0])
    offsets = np.array([0, 3, 8, 10])
    gap = WIDEST_SCORE_GAP
    expected = [-0.5, -2.5, 0.0,
                -gap, -gap - 0.25, 0.0, -2 * gap - 0.25, -2 * gap - 0.25,
                -7.0, 0.0]
    np.testing.assert_array_equal(_relative_scores(scores, offsets), expected)


def test_narrowing_wide_gaps_changes_no_gradient(objective):
    """Runs of close scores far apart: the kernels on the raw scores (small enough to be exact here) and
    on the narrowed ones agree, and agree with the same runs set much further apart (objectives that see
    the scores only through softmaxes; the others get the raw scores)."""
    if not objective._softmax_of_scores:
        pytest.skip(f"{type(objective).__name__} takes the raw scores")
    obj = objective
    rng = np.random.default_rng(3)
    runs = np.array([0.0, 0.0, -1500.0, -1500.0, -1500.0, -1500.0, -4200.0, -4200.0, 0.0, -1200.0, -1200.0, -5e3])
    within = np.round(rng.uniform(-2.0, 2.0, LABELS.size), 2)
    within[3] = within[4]  # a tie inside a far run
    narrowed_grad, narrowed_hess = obj.gradients(runs + within, LABELS, OFFSETS)
    raw = type(obj)(**obj.get_params())
    raw._softmax_of_scores = False
    raw_grad, raw_hess = raw.gradients(runs + within, LABELS, OFFSETS)
    np.testing.assert_allclose(narrowed_grad, raw_grad, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(narrowed_hess, raw_hess, rtol=1e-6, atol=1e-7)
    further_grad, further_hess = obj.gradients(runs * 40.0 + within, LABELS, OFFSETS)
    np.testing.assert_allclose(further_grad, narrowed_grad, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(further_hess, narrowed_hess, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("objective", SETTINGS, ids=repr)
def test_other_settings_at_the_edges_of_floating_point(objective):
    """The three tests above, for the settings with code paths of their own."""
    for constant in CONSTANTS:
        test_scores_of_one_large_constant_give_the_gradients_of_zeros(objective, constant)
    test_scores_of_plus_and_minus_1e308_give_finite_zero_sum_gradients(objective)
    if objective._softmax_of_scores:
        test_narrowing_wide_gaps_changes_no_gradient(objective)


def test_urank_takes_labels_up_to_100_and_refuses_larger_ones_clearly():
    """Before: labels above about 127 gave infinite float32 gradients (2^y - 1 weights), and LightGBM
    silently built a constant model."""
    labels = np.array([100.0, 57.0, 3.0, 0.0, 100.0, 0.0])
    scores = np.array([0.3, -1.0, 2.0, 0.0, 1e308, -1e308])
    grad, hess = URank().gradients(scores, labels, np.array([0, 4, 6]))
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess >= 1e-6)
    assert abs(float(grad[:4].astype(np.float64).sum())) <= 1e-6 * float(np.abs(grad[:4]).sum())
    with pytest.raises(InvalidLabelError, match=r"URank labels: label 101 at position 2 is above 100: .*PLRank"):
        URank().gradients(np.zeros(3), np.array([0.0, 1.0, 101.0]), np.array([0, 3]))
    with pytest.raises(InvalidLabelError, match="above 100"):
        URank().losses(np.zeros(3), np.array([0.0, 1.0, 101.0]), np.array([0, 3]))


@pytest.mark.engine
def test_lightgbm_with_urank_and_labels_above_100_stops_with_the_error():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    labels = rng.integers(0, 300, 40).astype(float)
    dataset = lgb.Dataset(X, labels, group=[10] * 4, params={"verbosity": -1})
    with pytest.raises(InvalidLabelError, match="above 100"):
        lgb.train({"objective": URank(), "verbosity": -1}, dataset, num_boost_round=2)


def test_kernels_never_use_a_quicksort_argsort():
    """Numba builds the quicksorts of np.sort and np.argsort from one template under the same symbol names
    (numbered per process); two cached kernels compiled by different processes can then link the one in
    place of the other, and the process that loads both crashes. It happened with PLRank and uMart."""
    package = Path(plboost.__file__).parent
    for path in sorted(package.rglob("*.py")):
        source = path.read_text()
        if "@kernel" not in source:
            continue
        for call in re.finditer(r"\bargsort\(", source):
            line = source[call.start():source.index("\n", call.start())]
            assert re.search(r"kind=\"(mergesort|stable)\"", line), f"{path.name}: {line}"
