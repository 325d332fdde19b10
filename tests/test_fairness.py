"""Fairness of exposure (plboost.fairness) against references written plainly: every ranking of small queries
enumerated with its Plackett-Luce probability, and each disparity summed pair by pair as its paper defines it."""

import itertools
import math

import numpy as np
import pytest

from plboost import fairness
from plboost.policies import PlackettLucePolicy


def rankings_with_probabilities(scores, temperature=1.0):
    """Every ranking (document indices, top first) of one query and its Plackett-Luce probability."""
    n = len(scores)
    for ranking in itertools.permutations(range(n)):
        p = 1.0
        left = list(range(n))
        for d in ranking:
            weights = [math.exp(scores[e] / temperature) for e in left]
            p *= math.exp(scores[d] / temperature) / sum(weights)
            left.remove(d)
        yield ranking, p


def enumerated_exposure(scores, theta, temperature=1.0):
    exposure = [0.0] * len(scores)
    for ranking, p in rankings_with_probabilities(scores, temperature):
        for j, d in enumerate(ranking):
            if j < len(theta):
                exposure[d] += p * theta[j]
    return np.array(exposure)


def plain_group_disparity(exposure, groups, merit=None):
    names = sorted(set(groups))
    values = []
    for g in names:
        members = [d for d in range(len(groups)) if groups[d] == g]
        mean_exposure = sum(exposure[d] for d in members) / len(members)
        if merit is not None:
            mean_merit = sum(merit[d] for d in members) / len(members)
            if mean_merit == 0:
                return math.nan
            mean_exposure /= mean_merit
        values.append(mean_exposure)
    pairs = [(a, b) for a in range(len(values)) for b in range(a + 1, len(values))]
    if not pairs:
        return math.nan
    return sum((values[a] - values[b]) ** 2 for a, b in pairs) / len(pairs)


def plain_individual(exposure, merit):
    n = len(exposure)
    if n < 2:
        return math.nan
    total = sum((exposure[i] * merit[j] - exposure[j] * merit[i]) ** 2 for i in range(n) for j in range(i + 1, n))
    return 2.0 * total / (n * (n - 1))


def plain_target(labels, theta):
    """E* by enumeration: the mean of theta at each document's rank over the rankings sorted by label."""
    n = len(labels)
    sorted_rankings = [r for r in itertools.permutations(range(n))
                       if all(labels[r[j]] >= labels[r[j + 1]] for j in range(n - 1))]
    target = [0.0] * n
    for ranking in sorted_rankings:
        for j, d in enumerate(ranking):
            target[d] += (theta[j] if j < len(theta) else 0.0) / len(sorted_rankings)
    return np.array(target)


def plain_ndcg(ranking, labels, k):
    gains = [2.0 ** labels[d] - 1.0 for d in ranking]
    dcg = sum(g / math.log2(j + 2) for j, g in enumerate(gains[:k]))
    ideal = sum(g / math.log2(j + 2) for j, g in enumerate(sorted(gains, reverse=True)[:k]))
    return dcg / ideal if ideal > 0 else 1.0


def random_queries(rng, n_queries=6, largest=6, spread=3.0):
    sizes = rng.integers(1, largest + 1, n_queries)
    sizes[0] = largest
    offsets = np.r_[0, np.cumsum(sizes)]
    scores = rng.normal(0.0, spread, offsets[-1]).round(1)  # ties among the scores
    labels = rng.integers(0, 3, offsets[-1]).astype(float)
    groups = rng.integers(0, 3, offsets[-1])
    return scores, labels, groups, offsets


@pytest.mark.parametrize("seed", [3, 17])
@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_disparities_of_a_policy_match_enumeration(seed, temperature):
    rng = np.random.default_rng(seed)
    scores, labels, groups, offsets = random_queries(rng)
    k = 4
    theta = 1.0 / np.log2(np.arange(2, k + 2))
    exposure = PlackettLucePolicy(scores, offsets, temperature=temperature, top_k=k).exposure(theta).values
    merit = 2.0 ** labels - 1.0
    for q in range(offsets.size - 1):
        lo, hi = offsets[q], offsets[q + 1]
        expected = enumerated_exposure(scores[lo:hi], theta, temperature)
        np.testing.assert_allclose(exposure[lo:hi], expected, rtol=1e-10, atol=1e-12)
    references = {
        "demographic_parity": [plain_group_disparity(exposure[lo:hi], list(groups[lo:hi]))
                               for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)],
        "disparate_treatment": [plain_group_disparity(exposure[lo:hi], list(groups[lo:hi]), merit[lo:hi])
                                for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)],
        "individual": [plain_individual(exposure[lo:hi], merit[lo:hi])
                       for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)],
        "expected_exposure": [float(((exposure[lo:hi] - plain_target(labels[lo:hi], theta)) ** 2).sum())
                              for lo, hi in zip(offsets[:-1], offsets[1:], strict=True)],
    }
    for name, reference in references.items():
        values = fairness.disparity(name, exposure, offsets, groups=groups, merit=merit, labels=labels,
                                    examination=theta)
        np.testing.assert_allclose(values, reference, rtol=1e-9, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("name", fairness.DISPARITIES)
def test_disparity_gradients_are_the_derivatives_of_the_disparities(name):
    rng = np.random.default_rng(5)
    scores, labels, groups, offsets = random_queries(rng, n_queries=8, largest=7)
    exposure = rng.uniform(0.0, 1.0, scores.size)
    merit = 2.0 ** labels - 1.0
    kwargs = dict(groups=groups, merit=merit, labels=labels)
    gradient = fairness.disparity_gradient(name, exposure, offsets, **kwargs)
    step = 1e-6
    query = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    for d in range(scores.size):
        up, down = exposure.copy(), exposure.copy()
        up[d] += step
        down[d] -= step
        q = query[d]
        difference = (fairness.disparity(name, up, offsets, **kwargs)[q]
                      - fairness.disparity(name, down, offsets, **kwargs)[q]) / (2 * step)
        if np.isnan(difference):
            assert gradient[d] == 0.0
        else:
            assert gradient[d] == pytest.approx(difference, rel=1e-6, abs=1e-8), (name, d)


def test_undefined_queries_are_nan_and_left_out():
    offsets = np.array([0, 1, 3, 6])
    exposure = np.array([1.0, 0.6, 0.4, 0.5, 0.3, 0.2])
    groups = np.array(["a", "a", "a", "a", "b", "b"])
    labels = np.array([1.0, 0.0, 2.0, 0.0, 0.0, 1.0])
    merit = 2.0 ** labels - 1.0
    parity = fairness.disparity("demographic_parity", exposure, offsets, groups=groups)
    assert np.isnan(parity[:2]).all() and parity[2] == pytest.approx((0.5 - 0.25) ** 2)
    treatment = fairness.disparity("disparate_treatment", exposure, offsets, groups=groups, merit=merit)
    assert np.isnan(treatment).all()  # query 2's group a has no merit
    assert np.isnan(fairness.disparity("individual", exposure, offsets, merit=merit)[0])


def test_expected_ndcg_matches_enumeration_and_the_deterministic_limit():
    rng = np.random.default_rng(11)
    scores, labels, _, offsets = random_queries(rng, n_queries=5, largest=5)
    k = 3
    policy = PlackettLucePolicy(scores, offsets, temperature=1.5, top_k=k)
    values = fairness.expected_ndcg(policy, labels, k=k)
    for q in range(offsets.size - 1):
        lo, hi = offsets[q], offsets[q + 1]
        reference = sum(p * plain_ndcg(r, labels[lo:hi], k) for r, p in rankings_with_probabilities(scores[lo:hi], 1.5))
        assert values[q] == pytest.approx(reference, rel=1e-10)
    distinct = rng.permutation(offsets[-1]).astype(float)  # no ties: T = 0 is the ranking by score
    from plboost.metrics import ndcg
    deterministic = fairness.expected_ndcg(PlackettLucePolicy(distinct, offsets, temperature=0.0), labels, k=k)
    np.testing.assert_allclose(deterministic, ndcg(distinct, labels, offsets=offsets, k=k, per_query=True))


def test_evaluate_policy_reports_the_means_of_the_defined_queries():
    rng = np.random.default_rng(2)
    scores, labels, groups, offsets = random_queries(rng, n_queries=10, largest=6)
    result = fairness.evaluate_policy(scores, labels, offsets, groups=groups, temperature=1.0, k=5)
    exposure = PlackettLucePolicy(scores, offsets, top_k=5).exposure(1.0 / np.log2(np.arange(2, 7))).values
    parity = fairness.disparity("demographic_parity", exposure, offsets, groups=groups)
    assert result["demographic_parity"] == pytest.approx(np.nanmean(parity))
    assert result["demographic_parity_queries"] == int((~np.isnan(parity)).sum())
    assert set(fairness.DISPARITIES) <= set(result)
    assert "demographic_parity" not in fairness.evaluate_policy(scores, labels, offsets, k=5)


@pytest.mark.parametrize("groups, message", [
    (np.arange(5), "one group per document is needed"),
    (np.array([0.0, 1.0, np.nan, 0.0, 1.0, 1.0]), "document 2 has no group"),
    (np.array(["a", None, "b", "a", "a", "b"], dtype=object), "document 1 has no group"),
])
def test_bad_groups_are_refused_naming_the_document(groups, message):
    with pytest.raises(ValueError, match=message):
        fairness.disparity("demographic_parity", np.ones(6), np.array([0, 3, 6]), groups=groups)


def test_group_disparities_need_groups_and_merit():
    with pytest.raises(ValueError, match="pass groups="):
        fairness.disparity("demographic_parity", np.ones(3), np.array([0, 3]))
    with pytest.raises(ValueError, match="needs merit="):
        fairness.disparity("individual", np.ones(3), np.array([0, 3]))
    with pytest.raises(ValueError, match="merit must hold one finite number >= 0"):
        fairness.disparity("individual", np.ones(3), np.array([0, 3]), merit=np.array([1.0, -1.0, 0.0]))


def test_expected_metrics_are_the_enumerated_expectations_within_their_standard_errors():
    """ERR@3 and MAP under a policy: the mean over sampled rankings is within 4 standard errors of the expectation
    over every ranking, and NDCG@3's agrees with expected_ndcg."""
    from plboost.metrics import evaluate

    rng = np.random.default_rng(8)
    scores, labels, _, offsets = random_queries(rng, n_queries=4, largest=5)
    policy = PlackettLucePolicy(scores, offsets, temperature=1.0)
    sampled = fairness.expected_metrics(policy, labels, n_samples=400, seed=3, ndcg_at=(3,), err_at=(3,), g_max=2)
    exact = {}
    for q in range(offsets.size - 1):
        lo, hi = offsets[q], offsets[q + 1]
        for ranking, p in rankings_with_probabilities(scores[lo:hi]):
            order_scores = np.empty(hi - lo)
            order_scores[list(ranking)] = -np.arange(hi - lo, dtype=float)
            values = evaluate(order_scores, labels[lo:hi], group=[hi - lo], ndcg_at=(3,), err_at=(3,), g_max=2)
            for name, value in values.items():
                if name != "conventions":
                    exact[name] = exact.get(name, 0.0) + p * value / (offsets.size - 1)
    for name in ("NDCG@3", "ERR@3", "MAP"):
        value, error = sampled[name]
        assert abs(value - exact[name]) <= 4 * error + 1e-12, (name, value, exact[name], error)
    assert exact["NDCG@3"] == pytest.approx(float(np.mean(fairness.expected_ndcg(policy, labels, k=3))))
