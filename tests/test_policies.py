"""Plackett-Luce policies against rankings enumerated one by one: rank probabilities, sampling and exposure."""

import itertools
import math

import numpy as np
import pytest

from plboost.policies import EXACT_LIMIT, PlackettLucePolicy, dcg_examination


def enumerated_rank_probabilities(scores, temperature, top_k):
    """P(document d at rank j), j < top_k, summed over every ordering of the query's documents, written plainly
    (at temperature 0: every ordering of the documents sorted by score, ties in each possible order, equally
    likely)."""
    n = len(scores)
    result = np.zeros((n, min(top_k, n)))
    if temperature == 0:
        best = [order for order in itertools.permutations(range(n))
                if all(scores[order[t]] >= scores[order[t + 1]] for t in range(n - 1))]
        for order in best:
            for j in range(result.shape[1]):
                result[order[j], j] += 1 / len(best)
        return result
    top = max(scores)
    for order in itertools.permutations(range(n)):
        probability = 1.0
        left = list(range(n))
        for d in order:
            probability *= math.exp((scores[d] - top) / temperature) / sum(
                math.exp((scores[e] - top) / temperature) for e in left)
            left.remove(d)
        for j in range(result.shape[1]):
            result[order[j], j] += probability
    return result


def random_queries(rng, sizes, spread=2.0, tie_share=0.3):
    scores = rng.normal(scale=spread, size=sum(sizes))
    tied = rng.random(scores.size) < tie_share
    scores[tied] = np.round(scores[tied])  # some scores repeat
    return scores, np.r_[0, np.cumsum(sizes)]


@pytest.mark.parametrize("temperature", [0.0, 0.3, 1.0, 4.0])
@pytest.mark.parametrize("seed", range(3))
def test_exact_rank_probabilities_match_enumeration(temperature, seed):
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 5, 6, 3]
    scores, offsets = random_queries(rng, sizes)
    top_k = int(rng.integers(1, 7))
    got = PlackettLucePolicy(scores, offsets, temperature=temperature, top_k=top_k).rank_probabilities()
    for q in range(len(sizes)):
        lo, hi = offsets[q], offsets[q + 1]
        want = enumerated_rank_probabilities(list(scores[lo:hi]), temperature, top_k)
        np.testing.assert_allclose(got.values[lo:hi, :want.shape[1]], want, rtol=1e-12, atol=1e-15)
        np.testing.assert_array_equal(got.values[lo:hi, want.shape[1]:], 0.0)
    np.testing.assert_array_equal(got.standard_errors, 0.0)


def test_wide_scores_and_tiny_temperatures_stay_exact_and_finite():
    """Scores 1e3 apart at temperature 1, and a temperature of 1e-300, are the deterministic ranking's limit."""
    scores, offsets = np.array([1000.0, -1000.0, 0.0, 5.0, 5.0, -3.0]), np.array([0, 3, 6])
    limit = PlackettLucePolicy(scores, offsets, temperature=0.0).rank_probabilities().values
    for temperature in (1.0, 1e-300):
        policy = PlackettLucePolicy(scores, offsets, temperature=temperature)
        values = policy.rank_probabilities().values
        assert np.isfinite(values).all()
        np.testing.assert_allclose(values[:3], limit[:3], atol=1e-300)
        ranks = policy.sample(400, seed=3)
        assert (ranks[:, 0] == 1).all() and (ranks[:, 1] == 3).all()
    tiny = PlackettLucePolicy(scores, offsets, temperature=1e-300)
    np.testing.assert_allclose(tiny.rank_probabilities().values, limit, atol=1e-12)  # the tie 5.0 = 5.0 is shared
    tied = tiny.sample(4000, seed=4)[:, 3]
    assert 0.45 < (tied == 1).mean() < 0.55


@pytest.mark.parametrize("temperature", [0.0, 0.5, 2.0])
def test_sampled_rankings_have_the_enumerated_rank_frequencies(temperature):
    rng = np.random.default_rng(7)
    scores, offsets = random_queries(rng, [4, 6, 2])
    policy = PlackettLucePolicy(scores, offsets, temperature=temperature, top_k=4)
    sampled = policy.rank_probabilities(method="sampled", n_samples=20_000, seed=11)
    exact = policy.rank_probabilities(method="exact").values
    inside = (exact > 0) & (exact < 1)
    z = (sampled.values - exact)[inside] / np.sqrt(exact * (1 - exact) / 20_000)[inside]
    assert np.abs(z).max() < 4.5
    np.testing.assert_array_equal(sampled.values[exact == 0], 0.0)  # never drawn where impossible
    np.testing.assert_allclose(sampled.standard_errors, np.sqrt(sampled.values * (1 - sampled.values) / 20_000))


def test_each_sampled_ranking_is_a_ranking_of_its_query():
    rng = np.random.default_rng(8)
    scores, offsets = random_queries(rng, [30, 1, 7, 12])
    ranks = PlackettLucePolicy(scores, offsets, temperature=1.0, top_k=5).sample(50, seed=2)
    for q in range(4):
        block = ranks[:, offsets[q]:offsets[q + 1]]
        k = min(5, block.shape[1])
        for row in block:
            assert sorted(row[row > 0]) == list(range(1, k + 1))


def test_draws_are_a_pure_function_of_each_query():
    """Same call, same rankings; a query's rankings do not depend on the other queries of the call or the seed's
    other uses; another seed draws others."""
    rng = np.random.default_rng(9)
    scores, offsets = random_queries(rng, [8, 20, 5])
    policy = PlackettLucePolicy(scores, offsets, temperature=1.0)
    first = policy.sample(30, seed=5)
    np.testing.assert_array_equal(first, policy.sample(30, seed=5))
    alone = PlackettLucePolicy(scores[8:28], [0, 20], temperature=1.0).sample(30, seed=5)
    np.testing.assert_array_equal(first[:, 8:28], alone)
    assert not np.array_equal(first, policy.sample(30, seed=6))
    np.testing.assert_array_equal(policy.sample(10, seed=5), first[:10])  # more samples extend, not redraw


def test_auto_samples_only_the_queries_too_long_to_enumerate():
    rng = np.random.default_rng(10)
    scores, offsets = random_queries(rng, [EXACT_LIMIT, EXACT_LIMIT + 3])
    got = PlackettLucePolicy(scores, offsets, top_k=3).rank_probabilities(n_samples=2000)
    assert (got.standard_errors[:EXACT_LIMIT] == 0).all() and (got.standard_errors[EXACT_LIMIT:] > 0).any()
    np.testing.assert_allclose(got.values.sum(axis=0), 2.0, atol=1e-12)  # each rank is held once per query


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_exposure_is_the_examination_of_the_rank_probabilities(temperature):
    scores = np.array([1.0, 2.0, 2.0, -0.5, 0.3, 4.0, 4.0, 4.0, 0.0, 1.5, 0.0, 0.0, -2.0, 1.5])  # ties at the top
    offsets = np.array([0, 5, 8, 14])
    theta = np.array([1.0, 0.6, 0.3])
    policy = PlackettLucePolicy(scores, offsets, temperature=temperature, top_k=4)
    exact = policy.exposure(theta)
    want = np.concatenate([enumerated_rank_probabilities(list(scores[lo:hi]), temperature, 3) @ theta
                           for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)])
    np.testing.assert_allclose(exact.values, want, rtol=1e-12)
    sampled = policy.exposure(theta, method="sampled", n_samples=20_000, seed=1)
    varied = sampled.standard_errors > 0  # a document that every ranking puts at one rank has no error
    np.testing.assert_allclose(sampled.values[~varied], want[~varied], rtol=1e-12)
    z = (sampled.values - want)[varied] / sampled.standard_errors[varied]
    assert varied.sum() >= 3 and np.abs(z).max() < 4.5
    default = policy.exposure().values
    np.testing.assert_allclose(default, policy.rank_probabilities().values @ dcg_examination(4), rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: PlackettLucePolicy([0.0, np.nan], [0, 2]), r"scores: score nan at position 1 is not finite"),
    (lambda: PlackettLucePolicy([0.0, 1.0], [0, 3]),
     r"scores: expected 3 scores \(one per document\), got shape \(2,\)"),
    (lambda: PlackettLucePolicy([0.0, 1.0], [0, 2], temperature=-1.0), r"temperature must be a finite number >= 0"),
    (lambda: PlackettLucePolicy([0.0, 1.0], [0, 2], top_k=0), r"top_k must be an integer >= 1"),
    (lambda: PlackettLucePolicy([0.0, 1.0], [0, 2]).sample(0), r"n_samples must be an integer >= 1"),
    (lambda: PlackettLucePolicy(np.zeros(13), [0, 13], temperature=1.0).rank_probabilities(method="exact"),
     r"exact rank probabilities take queries of at most 12 documents .* query 0 has 13"),
    (lambda: PlackettLucePolicy([0.0, 1.0], [0, 2]).exposure([1.0, -0.5]), r"examination must be a 1-d array"),
    (lambda: PlackettLucePolicy([0.0, 1.0], [0, 2]).exposure(method="fast"), r"method must be one of"),
])
def test_bad_input_is_refused_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_partial_selection_of_a_rankings_top_is_the_sorts_first_k():
    """The top k of a sampled ranking, selected by insertion, is the first k of the stable sort of the keys, ties
    (rounded keys) by index, for every k up to the list's length."""
    from plboost.policies import _top_by_key

    select = getattr(_top_by_key, "py_func", _top_by_key)
    rng = np.random.default_rng(5)
    for _ in range(500):
        n = int(rng.integers(1, 40))
        keys = np.round(rng.normal(size=n), 1)
        for k in {1, int(rng.integers(1, n + 1)), n}:
            got = select(keys, n, k, np.empty(n, dtype=np.int64))[:k]
            np.testing.assert_array_equal(got, np.argsort(-keys, kind="mergesort")[:k])
