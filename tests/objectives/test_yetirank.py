"""YetiRank / YetiLoss against a plainly written reference of the definition (the same sampled rankings, metric
changes computed by swapping and re-scoring, derivatives by finite differences), in expectation against the
Plackett-Luce model and independently drawn logistic noise, and its draws, edges and parameters. The generic tests
(tests/objectives/test_base.py, tests/test_properties.py, tests/test_cli.py) cover it as every objective."""

import itertools
import math

import mpmath
import numpy as np
import pytest

from plboost.objectives import YetiRank
from plboost.objectives.yetirank import LOSSES, NOISES, sampled_rankings


# --------------------------------------------------------------------------------------------------
# A slow reference written from the definition

def dcg(ranking, gains, top):
    return sum(gains[d] / math.log2(2 + t) for t, d in enumerate(ranking[:top]))


def reciprocal_rank(ranking, labels):
    return next((1 / (t + 1) for t, d in enumerate(ranking) if labels[d] > 0), 0.0)


def pair_weights(rankings, labels, *, loss="classic", decay=0.85, weight_scale=0.15, top=None, gain="linear",
                 neighbors=1):
    """{(h, l): W_hl}: the mean over the rankings of each neighbouring pair's weight; classic weights from the
    position and label gap, YetiLoss's as |metric(ranking) - metric(ranking with the two swapped)|."""
    n = len(labels)
    top = n if top is None else top
    gains = [y if gain == "linear" else 2.0 ** y - 1 for y in labels]
    ideal = dcg(sorted(range(n), key=lambda d: -gains[d]), gains, top)
    metric = {"dcg": lambda r: dcg(r, gains, top), "ndcg": lambda r: dcg(r, gains, top) / ideal,
              "mrr": lambda r: reciprocal_rank(r, labels)}.get(loss)
    weights = {}
    for ranking in rankings:
        ranking = list(ranking)
        for t in range(n - 1):
            for u in range(t + 1, min(n, t + 1 + neighbors)):
                a, b = ranking[t], ranking[u]
                if labels[a] == labels[b]:
                    continue
                if loss == "classic":
                    c = weight_scale * decay ** t * abs(labels[a] - labels[b])
                else:
                    if t >= top:
                        continue
                    swapped = list(ranking)
                    swapped[t], swapped[u] = b, a
                    c = abs(metric(ranking) - metric(swapped))
                pair = (a, b) if labels[a] > labels[b] else (b, a)
                weights[pair] = weights.get(pair, 0.0) + c / len(rankings)
    return weights


def pairwise_logistic(scores, weights):
    return sum(w * mpmath.log(1 + mpmath.exp(-(scores[h] - scores[l]))) for (h, l), w in weights.items())


def random_queries(seed, n_queries=12, max_size=15, scale=1.5):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size, size=n_queries)
    labels = rng.integers(0, 4, size=sizes.sum()).astype(float)
    scores = np.round(rng.normal(scale=scale, size=sizes.sum()), 1)  # rounded: many tied scores
    return scores, labels, np.r_[0, np.cumsum(sizes)]


CASES = [
    {},
    {"noise": "gumbel", "permutations": 3},
    {"decay": 0.5, "weight_scale": 1.0, "neighbors": 3},
    {"loss": "ndcg", "gain": "exp"},
    {"loss": "ndcg", "top": 3, "neighbors": 4, "noise_scale": 2.0},
    {"loss": "dcg", "neighbors": 2},
    {"loss": "mrr", "neighbors": 5},
    {"noise": "none", "loss": "ndcg"},
    {"noise_scale": 0.0, "loss": "mrr"},
    {"noise_scale": 0.1},  # at the larger score scale, queries spanning over 600 noise scales: drawn in log space
    {"noise_scale": 0.1, "noise": "gumbel", "loss": "dcg"},
]


@pytest.mark.parametrize("params", CASES, ids=str)
@pytest.mark.parametrize("scale", [1.5, 40.0])
def test_gradients_are_the_sampled_pairs_logistic_loss(central_differences, params, scale):
    """With the kernel's own rankings, the gradient and hessian are the finite differences of the pairwise
    logistic loss with the weights of the definition, held fixed."""
    obj = YetiRank(hessian_floor=0.0, seed=3, **params)
    scores, labels, offsets = random_queries(seed=len(str(params)), scale=scale)
    grad, hess = obj.gradients(scores, labels, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        rankings = sampled_rankings(scores[lo:hi], labels[lo:hi], 3, obj.permutations, NOISES.index(obj.noise),
                                    obj.noise_scale, hi - lo)
        weights = pair_weights(rankings, labels[lo:hi].tolist(), loss=obj.loss, decay=obj.decay,
                               weight_scale=obj.weight_scale, top=obj.top, gain=obj.gain, neighbors=obj.neighbors)
        g, h, _ = central_differences(lambda s, w=weights: pairwise_logistic(s, w), scores[lo:hi])
        np.testing.assert_allclose(grad[lo:hi], g, rtol=1e-5, atol=1e-7, err_msg=f"query {q}")
        np.testing.assert_allclose(hess[lo:hi], h, rtol=1e-5, atol=1e-7, err_msg=f"query {q}")
        assert abs(float(grad[lo:hi].astype(np.float64).sum())) < 1e-5


def test_pair_weight_hessians_are_the_pair_weights():
    scores, labels, offsets = random_queries(seed=4)
    _, logistic = YetiRank(hessian_floor=0.0).gradients(scores, labels, offsets)
    _, weight = YetiRank(hessian_floor=0.0, hessian="pair_weight").gradients(scores, labels, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        rankings = sampled_rankings(scores[lo:hi], labels[lo:hi], 0, 10, 0, 1.0, hi - lo)
        weights = pair_weights(rankings, labels[lo:hi].tolist())
        expected = np.zeros(hi - lo)
        for (h, l), w in weights.items():
            expected[h] += w
            expected[l] += w
        np.testing.assert_allclose(weight[lo:hi], expected, rtol=1e-6, atol=1e-8)
    assert np.all(weight >= logistic)


# --------------------------------------------------------------------------------------------------
# The draws: in distribution, and as a function of their inputs

#: thousands of calls: seconds compiled, minutes interpreted, so the pass with NUMBA_DISABLE_JIT (for coverage)
#: leaves them to the compiled pass; the same lines run in the tests above
compiled_only = pytest.mark.compiled_only("thousands of calls: the compiled pass runs them")


@compiled_only
def test_gumbel_noise_draws_plackett_luce_rankings():
    """The mean gradient over many seeds is the exact expectation over all 24 rankings of four documents, each
    weighted by its Plackett-Luce probability of softmax(s / tau)."""
    scores, labels, tau = np.array([0.8, -0.3, 0.4, 0.0]), np.array([2.0, 0.0, 1.0, 1.0]), 1.5
    offsets = np.array([0, 4])
    expected = np.zeros(4)
    for ranking in itertools.permutations(range(4)):
        probability, rest = 1.0, list(range(4))
        for d in ranking:
            probability *= math.exp(scores[d] / tau) / sum(math.exp(scores[e] / tau) for e in rest)
            rest.remove(d)
        for (h, l), w in pair_weights([ranking], labels.tolist(), loss="ndcg", gain="exp").items():
            p = 1 / (1 + math.exp(scores[h] - scores[l]))
            expected[h] -= probability * w * p
            expected[l] += probability * w * p
    draws = np.array([YetiRank(preset="plackett_luce", noise_scale=tau, permutations=1, seed=seed)
                      .gradients(scores, labels, offsets)[0] for seed in range(8000)])
    error = draws.std(axis=0) / math.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 4 * error + 1e-9)


@compiled_only
def test_logistic_noise_matches_independently_drawn_noise():
    """CatBoost's noise: the mean gradient over many seeds is that of NumPy's logistic draws (200,000 rankings)."""
    scores, labels, offsets = np.array([0.5, 0.0, -0.5, 0.2, 1.0]), np.array([2.0, 1.0, 0.0, 0.0, 1.0]), [0, 5]
    rng = np.random.default_rng(0)
    noisy = scores + rng.logistic(size=(200_000, 5))
    rankings = np.argsort(-noisy, axis=1, kind="stable")
    expected = np.zeros(5)
    for (h, l), w in pair_weights(rankings, labels.tolist()).items():
        p = 1 / (1 + math.exp(scores[h] - scores[l]))
        expected[h] -= w * p
        expected[l] += w * p
    draws = np.array([YetiRank(seed=seed).gradients(scores, labels, offsets)[0] for seed in range(1500)])
    error = draws.std(axis=0) / math.sqrt(len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - expected) < 4 * error + 2e-4)


def test_draws_are_a_function_of_seed_scores_and_documents():
    scores, labels, offsets = random_queries(seed=9)
    first = YetiRank(seed=1).gradients(scores, labels, offsets)
    np.testing.assert_array_equal(YetiRank(seed=1).gradients(scores, labels, offsets)[0], first[0])
    assert not np.array_equal(YetiRank(seed=2).gradients(scores, labels, offsets)[0], first[0])
    moved = scores.copy()
    moved[offsets[1]:] += 0.01  # the first query's scores unchanged: its draws are too
    second = YetiRank(seed=1).gradients(moved, labels, offsets)[0]
    np.testing.assert_array_equal(second[:offsets[1]], first[0][:offsets[1]])


# --------------------------------------------------------------------------------------------------
# Edges and parameters

@pytest.mark.parametrize("loss", LOSSES)
def test_queries_without_a_pair_that_counts_have_no_gradient(loss):
    """One document; tied labels; for MRR no relevant, or only relevant, documents: zeros and the floor."""
    scores = np.array([0.3, 0.1, -0.2, 0.5, 0.5, 0.4, 1.0, 0.0, 0.2])
    labels = np.array([2.0, 1.0, 1.0, 0.0, 0.0, 2.0, 1.0, 0.0, 1.0])
    offsets = np.array([0, 1, 3, 5, 7, 9])  # [2] | [1, 1] | [0, 0] | [2, 1] | [0, 1]
    grad, hess = YetiRank(loss=loss).gradients(scores, labels, offsets)
    silent = slice(0, 7) if loss == "mrr" else slice(0, 5)
    np.testing.assert_array_equal(grad[silent], 0.0)
    np.testing.assert_array_equal(hess[silent], np.float32(1e-6))
    assert grad[7] > 0 > grad[8] and np.all(hess[7:] > 1e-6)


def test_exp_gains_of_any_label_give_finite_ndcg_weights_and_dcg_refuses_what_float32_cannot_hold():
    """YetiLoss on NDCG weighs pairs by ratios of a query's gains, finite for labels whose 2^y is infinite in
    float64; on DCG the weights have the gains' scale, and a label beyond float32's range is refused by name."""
    scores, offsets = np.array([0.4, -0.3, 0.8, 0.1]), np.array([0, 4])
    far = YetiRank(preset="plackett_luce").gradients(scores, np.array([1300.0, 0.0, 1298.0, 1299.0]), offsets)
    assert all(np.all(np.isfinite(part)) for part in far) and np.abs(far[0]).max() > 1e-3
    with pytest.raises(ValueError, match=r"label 140 at position 1 .*labels up to 127 are allowed"):
        YetiRank(loss="dcg", gain="exp").gradients(scores, np.array([0.0, 140.0, 1.0, 2.0]), offsets)


def test_finite_at_extreme_scores():
    scores, labels, offsets = random_queries(seed=5)
    for factor in (1e3, 1e12):
        for loss in LOSSES:
            grad, hess = YetiRank(loss=loss).gradients(scores * factor, labels, offsets)
            assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess >= 1e-6)


def test_presets_set_what_is_not_given():
    catboost = YetiRank()
    assert (catboost.noise, catboost.permutations, catboost.decay, catboost.weight_scale, catboost.loss,
            catboost.gain, catboost.neighbors, catboost.hessian) == ("logistic", 10, 0.85, 0.15, "classic", "linear",
                                                                     1, "logistic")
    pl = YetiRank(preset="plackett_luce", permutations=4)
    assert (pl.noise, pl.loss, pl.gain, pl.permutations) == ("gumbel", "ndcg", "exp", 4)
    assert YetiRank().set_params(preset="plackett_luce") == YetiRank(preset="plackett_luce")
    assert YetiRank(gain="exp").set_params(preset="plackett_luce").gain == "exp"
    assert YetiRank.search_fixed_by({"loss": "ndcg"}) == {"decay"}
    assert YetiRank.search_fixed_by({"noise": "none"}) == {"noise_scale"}
    with pytest.raises(NotImplementedError, match="drawn anew"):
        YetiRank().losses(np.zeros(2), np.array([1.0, 0.0]), np.array([0, 2]))


@pytest.mark.parametrize("kwargs, message", [
    ({"noise": "gauss"}, "noise"), ({"permutations": 0}, "permutations"), ({"decay": 1.5}, "decay"),
    ({"loss": "err"}, "loss"), ({"top": 0}, "top"), ({"neighbors": 0}, "neighbors"), ({"preset": "cb"}, "preset"),
    ({"weight_scale": 0.0}, "weight_scale"), ({"noise_scale": -1.0}, "noise_scale"),
])
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        YetiRank(**kwargs)


@pytest.mark.parametrize("noise", ["logistic", "gumbel"])
@pytest.mark.parametrize("scale", [1.0, 30.0, 900.0])  # 900: keys in log space
def test_the_first_positions_selected_are_those_of_the_whole_sorted_ranking(noise, scale):
    """A long query's first positions, selected by a heap, are the sorted ranking's first, in its order; ties of
    score included (the draws then decide)."""
    rng = np.random.default_rng(int(scale))
    scores = np.round(rng.normal(scale=scale, size=3000), 1)
    labels = rng.integers(0, 5, size=3000).astype(float)
    whole = sampled_rankings(scores, labels, 5, 4, NOISES.index(noise), 1.0, 3000)
    for walked in (1, 223, 1500):
        np.testing.assert_array_equal(sampled_rankings(scores, labels, 5, 4, NOISES.index(noise), 1.0, walked),
                                      whole[:, :walked])


def test_a_long_querys_gradients_are_its_whole_rankings_pairs_within_the_smallest_weight():
    """YetiRank walks a ranking down to the pairs whose decay^t is 2^-52 of the first's: against all the pairs of
    the same whole rankings, the gradients differ by less than that share of the first pair's weight."""
    rng = np.random.default_rng(11)
    n = 4000
    scores, labels = rng.normal(scale=2.0, size=n), rng.integers(0, 5, size=n).astype(float)
    obj = YetiRank(hessian_floor=0.0, seed=2)
    grad, hess = obj.gradients(scores, labels, np.array([0, n]))
    rankings = sampled_rankings(scores, labels, 2, obj.permutations, NOISES.index(obj.noise), obj.noise_scale, n)
    ref_g, ref_h = np.zeros(n), np.zeros(n)
    for ranked in rankings:
        a, b = ranked[:-1], ranked[1:]
        higher_first = labels[a] > labels[b]
        high, low = np.where(higher_first, a, b), np.where(higher_first, b, a)
        c = obj.weight_scale * obj.decay ** np.arange(n - 1) * np.abs(labels[a] - labels[b]) / obj.permutations
        p = 1.0 / (1.0 + np.exp(scores[high] - scores[low]))
        np.add.at(ref_g, high, -c * p)
        np.add.at(ref_g, low, c * p)
        np.add.at(ref_h, high, c * p * (1 - p))
        np.add.at(ref_h, low, c * p * (1 - p))
    smallest = 2.0 ** -52 * obj.weight_scale * 4
    np.testing.assert_allclose(grad, ref_g, rtol=1e-6, atol=smallest)
    np.testing.assert_allclose(hess, ref_h, rtol=1e-6, atol=smallest)
    assert np.count_nonzero(grad) < n and np.count_nonzero(ref_g) == n  # the walk did stop early
