"""LambdaLoss against a plainly written loss (finite differences), against LambdaMART's lambdas written from
their definition, and, at mu = 0, against uMart(window=1) and LightGBM's own lambdarank bit for bit."""

import math

import lightgbm as lgb
import mpmath
import numpy as np
import pytest

from plboost.data import load_splits, make_synthetic
from plboost.engines import train
from plboost.objectives import LambdaLoss, UMart


# --------------------------------------------------------------------------------------------------
# Slow references written straight from the paper's definitions

def ranks_of(scores):
    """1-based rank of each document by score, descending, ties in input order."""
    order = sorted(range(len(scores)), key=lambda d: -scores[d])  # Python's sort is stable
    rank = [0] * len(scores)
    for position, d in enumerate(order):
        rank[d] = position + 1
    return rank


def pair_weights(labels, rank, *, loss="ndcg_loss2++", mu=1.0, truncation=None):
    """{(i, j): weight} over the pairs y_i > y_j with min(rank) <= truncation: (rho + mu delta) |G_i - G_j| for
    NDCG-Loss2++, mu delta |G_i - G_j| for NDCG-Loss2; G = (2^y - 1) / maxDCG, maxDCG at the truncation."""
    n = len(labels)
    cut = n if truncation is None else truncation
    ideal = sorted((2.0 ** y - 1 for y in labels), reverse=True)[:cut]
    max_dcg = sum(g / math.log2(1 + r) for r, g in enumerate(ideal, start=1))
    weights = {}
    if max_dcg == 0:
        return weights
    for i in range(n):
        for j in range(n):
            if labels[i] <= labels[j] or min(rank[i], rank[j]) > cut:
                continue
            gain_gap = (2.0 ** labels[i] - 2.0 ** labels[j]) / max_dcg
            rho = abs(1 / math.log2(1 + rank[i]) - 1 / math.log2(1 + rank[j]))
            distance = abs(rank[i] - rank[j])
            delta = 1 / math.log2(1 + distance) - 1 / math.log2(2 + distance)
            weights[i, j] = ((rho if loss == "ndcg_loss2++" else 0.0) + mu * delta) * gain_gap
    return weights


def lambdaloss_reference(scores, weights, sigma=1.0):
    """sum over pairs of weight * log(1 + exp(-sigma (s_i - s_j))), the weights (ranks) held fixed."""
    return sum(w * mpmath.log(1 + mpmath.exp(-sigma * (scores[i] - scores[j]))) for (i, j), w in weights.items())


def lambdamart_reference(scores, weights, sigma=1.0, norm=True):
    """LightGBM's lambdas for pair weights F: sigma p F per pair, F divided by 0.01 + |s_i - s_j| and the query
    scaled by log2(1 + L) / L with ``norm``."""
    n = len(scores)
    lam, nu = [0.0] * n, [0.0] * n
    spread = max(scores) != min(scores)
    total = 0.0
    for (i, j), f in weights.items():
        if norm and spread:
            f /= float(np.float32(0.01)) + abs(scores[i] - scores[j])
        x = sigma * (scores[i] - scores[j])
        p = math.exp(-x) / (1 + math.exp(-x)) if x > 0 else 1 / (1 + math.exp(x))  # no overflow at any gap
        lam[i] -= sigma * p * f
        lam[j] += sigma * p * f
        nu[i] += sigma ** 2 * p * (1 - p) * f
        nu[j] += sigma ** 2 * p * (1 - p) * f
        total += 2 * sigma * p * f
    factor = math.log2(1 + total) / total if norm and total > 0 else 1.0
    return np.array(lam) * factor, np.array(nu) * factor


def random_queries(seed, n_queries=20, max_size=25, scale=2.0):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size, size=n_queries)
    labels = rng.integers(0, 5, size=sizes.sum()).astype(float)
    scores = np.round(rng.normal(scale=scale, size=sizes.sum()), 1)  # rounded: many tied scores
    return scores, labels, np.r_[0, np.cumsum(sizes)]


# --------------------------------------------------------------------------------------------------
# The loss: gradients and hessians by finite differences, ranks held at the current scores' (ties included)

@pytest.mark.interpreted_once
@pytest.mark.parametrize("params, reference", [
    ({}, {}),
    ({"mu": 0.0}, {"mu": 0.0}),
    ({"mu": 12.5, "sigmoid": 2.0}, {"mu": 12.5, "sigma": 2.0}),
    ({"loss": "ndcg_loss2"}, {"loss": "ndcg_loss2", "mu": 1.0}),
    ({"lambdarank_truncation_level": 4}, {"truncation": 4}),
])
@pytest.mark.parametrize("scale", [2.0, 60.0])
def test_gradients_are_the_losss_by_finite_differences(central_differences, params, reference, scale):
    scores, labels, offsets = random_queries(seed=len(str(params)), scale=scale)
    obj = LambdaLoss(preset="loss", hessian_floor=0.0, **params)
    grad, hess = obj.gradients(scores, labels, offsets)
    losses = obj.losses(scores, labels, offsets)
    reference = dict(reference)  # one dict serves every scale
    sigma = reference.pop("sigma", 1.0)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        weights = pair_weights(labels[lo:hi].tolist(), ranks_of(scores[lo:hi].tolist()), **{"mu": 1.0, **reference})
        g, h, value = central_differences(lambda s, w=weights: lambdaloss_reference(s, w, sigma), scores[lo:hi])
        np.testing.assert_allclose(grad[lo:hi], g, rtol=1e-5, atol=1e-7, err_msg=f"query {q}")
        np.testing.assert_allclose(hess[lo:hi], h, rtol=1e-5, atol=1e-7, err_msg=f"query {q}")
        assert losses[q] == pytest.approx(float(value), rel=1e-10, abs=1e-12)
        assert abs(float(grad[lo:hi].astype(np.float64).sum())) < 1e-5


def test_tiny_and_uninformative_queries_have_no_gradient():
    """One document; all labels tied; no relevant document: no pair, so zero gradients and the floor."""
    scores = np.array([0.3, 0.1, -0.2, 0.5, 0.5, 1.0, 0.0])
    labels = np.array([2.0, 1.0, 1.0, 0.0, 0.0, 3.0, 0.0])
    offsets = np.array([0, 1, 3, 5, 7])  # [2] | [1, 1] | [0, 0] | [3, 0]
    for obj in (LambdaLoss(), LambdaLoss(preset="loss"), LambdaLoss(loss="ndcg_loss2")):
        grad, hess = obj.gradients(scores, labels, offsets)
        np.testing.assert_array_equal(grad[:5], 0.0)
        np.testing.assert_array_equal(hess[:5], np.float32(1e-6))
        assert grad[5] < 0 < grad[6] and np.all(hess[5:] > 1e-6)


def test_hessians_are_positive_and_finite_at_extreme_scores():
    scores, labels, offsets = random_queries(seed=7)
    for factor in (1.0, 1e3, 1e8):
        for obj in (LambdaLoss(), LambdaLoss(preset="loss", hessian_floor=0.0)):
            grad, hess = obj.gradients(scores * factor, labels, offsets)
            assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess >= 0)
    assert np.all(np.isfinite(LambdaLoss(preset="loss").losses(scores * 1e8, labels, offsets)))


# --------------------------------------------------------------------------------------------------
# The LightGBM preset: LambdaMART's lambdas with the distance term

@pytest.mark.parametrize("params, reference", [
    ({}, {"truncation": 30}),
    ({"mu": 1.5, "lambdarank_truncation_level": 3}, {"mu": 1.5, "truncation": 3}),
    ({"loss": "ndcg_loss2", "lambdarank_norm": False}, {"loss": "ndcg_loss2", "mu": 1.0, "truncation": 30}),
])
@pytest.mark.parametrize("scale", [2.0, 400.0])  # 400: e^{s - max} below 1e-280 in the top 30, pairs' own sigmoids
def test_the_lightgbm_preset_matches_lambdamart_with_the_distance_term(params, reference, scale):
    scores, labels, offsets = random_queries(seed=11, scale=scale)
    norm = params.get("lambdarank_norm", True)
    grad, hess = LambdaLoss(hessian_floor=0.0, **params).gradients(scores, labels, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        weights = pair_weights(labels[lo:hi].tolist(), ranks_of(scores[lo:hi].tolist()), **{"mu": 1.0, **reference})
        lam, nu = lambdamart_reference(scores[lo:hi].tolist(), weights, norm=norm)
        np.testing.assert_allclose(grad[lo:hi], lam, rtol=2e-6, atol=1e-7, err_msg=f"query {q}")
        np.testing.assert_allclose(hess[lo:hi], nu, rtol=2e-6, atol=1e-7, err_msg=f"query {q}")


def test_losses_are_refused_where_the_lambdas_are_no_gradient():
    scores, labels, offsets = random_queries(seed=2)
    for obj in (LambdaLoss(), LambdaLoss(preset="loss", lightgbm_arithmetic=True)):
        with pytest.raises(NotImplementedError, match="preset='loss'"):
            obj.losses(scores, labels, offsets)


def test_the_preset_sets_what_is_not_given():
    assert LambdaLoss().mu == 1.0 and LambdaLoss(mu=3.0).set_params(loss="ndcg_loss2").mu == 3.0
    moved = LambdaLoss().set_params(preset="loss")
    assert moved.lambdarank_truncation_level is None and moved.lambdarank_norm is False
    kept = LambdaLoss(lambdarank_truncation_level=8).set_params(preset="loss")
    assert kept.lambdarank_truncation_level == 8
    assert LambdaLoss.search_fixed_by({"loss": "ndcg_loss2"}) == {"mu"} and not LambdaLoss.search_fixed_by({})


@pytest.mark.parametrize("kwargs, message", [
    ({"mu": -1.0}, "mu"), ({"loss": "arp_loss1"}, "loss"), ({"sigmoid": 0.0}, "sigmoid"),
    ({"preset": "paper"}, "preset"), ({"lambdarank_truncation_level": 0}, "truncation"),
])
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LambdaLoss(**kwargs)


# --------------------------------------------------------------------------------------------------
# gain="estimate": relevance estimates from a click log, each document weighing its own side of every pair

def estimate_pair_weights(estimates, rank, *, mu=1.0, truncation=None):
    """{(i, j): weight} over every ordered pair i != j with min(rank) <= truncation: R_i (rho + mu delta), the
    weight of log(1 + exp(-sigma (s_i - s_j))), no normaliser."""
    n = len(estimates)
    cut = n if truncation is None else truncation
    weights = {}
    for i in range(n):
        for j in range(n):
            if i == j or min(rank[i], rank[j]) > cut:
                continue
            rho = abs(1 / math.log2(1 + rank[i]) - 1 / math.log2(1 + rank[j]))
            distance = abs(rank[i] - rank[j])
            delta = 1 / math.log2(1 + distance) - 1 / math.log2(2 + distance)
            weights[i, j] = estimates[i] * (rho + mu * delta)
    return weights


def random_estimates(seed, size, largest):
    """Non-negative estimates with zeros, ties and inverse-propensity-sized values among them."""
    rng = np.random.default_rng(seed)
    estimates = np.where(rng.random(size) < 0.4, 0.0, rng.uniform(0.0, largest, size))
    estimates[2::7] = estimates[1]
    return estimates


@pytest.mark.interpreted_once
@pytest.mark.parametrize("params, reference", [
    ({}, {"truncation": 30}),
    ({"mu": 0.0, "lambdarank_truncation_level": 3}, {"mu": 0.0, "truncation": 3}),
    ({"mu": 2.5, "sigmoid": 0.7, "preset": "loss"}, {"mu": 2.5, "sigma": 0.7}),
])
# 400: e^{s - max} below 1e-280 in the top 30, so pairs take their own sigmoids
@pytest.mark.parametrize("scale, largest", [(2.0, 1.0), (60.0, 40.0), (400.0, 3.0)])
def test_estimate_gradients_are_the_losss_by_finite_differences(central_differences, params, reference, scale,
                                                                largest):
    scores, _, offsets = random_queries(seed=len(str(params)) + 3, max_size=18, scale=scale)
    estimates = random_estimates(int(scale), offsets[-1], largest)
    obj = LambdaLoss(gain="estimate", hessian_floor=0.0, **params)
    assert obj.takes_estimates and not LambdaLoss().takes_estimates and obj.lambdarank_norm is False
    grad, hess = obj.gradients(scores, estimates, offsets)
    losses = obj.losses(scores, estimates, offsets)
    reference = dict(reference)
    sigma = reference.pop("sigma", 1.0)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        weights = estimate_pair_weights(estimates[lo:hi].tolist(), ranks_of(scores[lo:hi].tolist()), **reference)
        g, h, value = central_differences(lambda s, w=weights: lambdaloss_reference(s, w, sigma), scores[lo:hi])
        near = 1e-6 * max(1.0, np.abs(g).max())  # float32 gradients: a small one beside large ones rounds to them
        np.testing.assert_allclose(grad[lo:hi], g, rtol=1e-5, atol=near, err_msg=f"query {q}")
        np.testing.assert_allclose(hess[lo:hi], h, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(h).max()),
                                   err_msg=f"query {q}")
        assert losses[q] == pytest.approx(float(value), rel=1e-10, abs=1e-12)


def test_estimate_gradients_are_linear_in_the_estimates_and_zero_without_any():
    """Linear: the gradient of a sum of two estimate vectors (two logs' estimates) is the sum of their gradients,
    so the mean gradient over logs is the gradient of the mean estimate. A query of one document, or of zero
    estimates, has no gradient."""
    scores, _, offsets = random_queries(seed=21, max_size=30)
    first, second = random_estimates(1, offsets[-1], 3.0), random_estimates(2, offsets[-1], 5.0)
    obj = LambdaLoss(mu=0.5, gain="estimate", hessian_floor=0.0)
    together = obj.gradients(scores, first + second, offsets)
    apart = [a + b for a, b in zip(obj.gradients(scores, first, offsets), obj.gradients(scores, second, offsets),
                                   strict=True)]
    for got, want in zip(together, apart, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    grad, hess = LambdaLoss(gain="estimate").gradients(np.array([0.3, 0.1, -0.2, 4.0]), np.array([2.0, 0, 0, 1.5]),
                                                       np.array([0, 3, 4]))
    assert grad[0] < 0 < grad[1] and grad[2] > 0 and grad[3] == 0.0
    grad, hess = LambdaLoss(gain="estimate").gradients(np.array([0.3, 0.1]), np.zeros(2), np.array([0, 2]))
    np.testing.assert_array_equal(grad, 0.0)
    np.testing.assert_array_equal(hess, np.float32(1e-6))


def test_estimate_is_lambdarank_plus_a_pull_between_relevant_pairs():
    """For R_i > R_j a pair's estimate term is LambdaRank's (R_i - R_j) w l_ij plus R_j w (l_ij + l_ji): with the
    gains 2^y - 1 as the estimates, the estimate loss minus the labelled loss (preset 'loss', maxDCG undone) is
    that pull, computed here on its own."""
    scores, labels, offsets = random_queries(seed=4, max_size=15)
    gains = 2.0 ** labels - 1.0
    estimate = LambdaLoss(mu=0.7, gain="estimate", preset="loss").losses(scores, gains, offsets)
    labelled = LambdaLoss(mu=0.7, preset="loss").losses(scores, labels, offsets)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        rank = ranks_of(scores[lo:hi].tolist())
        ideal = sorted(gains[lo:hi], reverse=True)
        max_dcg = sum(g / math.log2(1 + r) for r, g in enumerate(ideal, start=1))
        pull = 0.0
        for (i, j), w in estimate_pair_weights([1.0] * (hi - lo), rank, mu=0.7).items():
            if i < j:
                x = scores[lo + i] - scores[lo + j]
                pull += min(gains[lo + i], gains[lo + j]) * w * (math.log1p(math.exp(-x)) + math.log1p(math.exp(x)))
        assert estimate[q] == pytest.approx(labelled[q] * max_dcg + pull, rel=1e-9, abs=1e-12), f"query {q}"


def test_estimate_refuses_negative_estimates_and_what_is_not_linear_in_them():
    scores, offsets = np.array([0.5, 0.0, -0.5, 1.0]), np.array([0, 4])
    with pytest.raises(ValueError, match=r"takes non-negative relevance estimates, got -0.25 .* PLRank3"):
        LambdaLoss(gain="estimate").gradients(scores, np.array([1.0, -0.25, 0.0, 2.0]), offsets)
    for kwargs in ({"lambdarank_norm": True}, {"label_gain": [0, 1, 3]}, {"lightgbm_arithmetic": True}):
        with pytest.raises(ValueError, match=f"does not take {next(iter(kwargs))}.*linear in the estimates"):
            LambdaLoss(gain="estimate", **kwargs)
    assert LambdaLoss().set_params(gain="estimate") == LambdaLoss(gain="estimate")
    assert LambdaLoss(gain="estimate").set_params(gain="label") == LambdaLoss()
    with pytest.raises(ValueError, match="gain must be one of 'label', 'estimate'"):
        LambdaLoss(gain="linear")


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_estimate_trains_from_a_click_log_on_both_engines(engine):
    """From a simulated log's policy-aware estimates, on each engine, better than the logger that logged it; the
    labelled objective refuses the estimates."""
    from plboost import metrics
    from plboost.clicks import ClickData, PositionBasedModel, simulate_clicks

    data = make_synthetic(n_queries=80, docs_per_query=(8, 14), seed=3)
    logger_scores = data.X[:, 0] * 0.3 + np.random.default_rng(0).normal(size=data.n_docs)
    log = simulate_clicks(data, logger_scores, n_impressions=20_000, top_k=6, temperature=1.0,
                          click_model=PositionBasedModel(eta=1.0), seed=4)
    model = train(engine, LambdaLoss(mu=0.0, gain="estimate"), ClickData(log, "policy_aware"), rounds=30, seed=0)
    ndcg = metrics.ndcg(model.predict(data.X), data.labels, offsets=data.offsets, k=5)
    assert ndcg > metrics.ndcg(logger_scores, data.labels, offsets=data.offsets, k=5) + 0.02
    with pytest.raises(ValueError, match="estimate"):
        train(engine, LambdaLoss(mu=0.0), ClickData(log, "policy_aware"), rounds=2)


# --------------------------------------------------------------------------------------------------
# mu = 0 is LambdaRank: uMart(window=1) and LightGBM's lambdarank, bit for bit

@pytest.mark.parametrize("params", [{}, {"lambdarank_norm": False}, {"lambdarank_truncation_level": 7}])
def test_mu_zero_is_umart_window_one_bit_for_bit(params):
    scores, labels, offsets = random_queries(seed=5, max_size=60)
    for arithmetic in (True, False):
        ours = LambdaLoss(mu=0.0, lightgbm_arithmetic=arithmetic, **params).gradients(scores, labels, offsets)
        theirs = UMart(window=1, lightgbm_arithmetic=arithmetic, **params).gradients(scores, labels, offsets)
        for a, b in zip(ours, theirs, strict=True):
            if arithmetic:
                np.testing.assert_array_equal(a, b)
            else:  # uMart's exact path sums in another order
                np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.engine
@pytest.mark.parametrize("params", [{}, {"lambdarank_norm": False}])
def test_mu_zero_trains_lightgbms_lambdarank_bit_for_bit(shared_data, params):
    fold = shared_data / "MQ2008" / "Fold1"
    train, test = load_splits(fold / "train.txt.gz", fold / "test.txt.gz")
    dataset = train.to_lightgbm(params={"verbosity": -1}).construct()
    tree = {"num_leaves": 31, "learning_rate": 0.1, "seed": 0, "verbosity": -1}
    builtin = lgb.train({"objective": "lambdarank", **tree, **params}, dataset, 30)
    ours = lgb.train({"objective": LambdaLoss(mu=0.0, lightgbm_arithmetic=True, hessian_floor=0.0, **params), **tree},
                     dataset, 30)
    np.testing.assert_array_equal(ours.predict(test.X, raw_score=True), builtin.predict(test.X, raw_score=True))
    with_distance = lgb.train({"objective": LambdaLoss(lightgbm_arithmetic=True, **params), **tree}, dataset, 30)
    assert not np.array_equal(with_distance.predict(test.X), builtin.predict(test.X))


@pytest.mark.engine
@pytest.mark.parametrize("make", [lambda **p: LambdaLoss(mu=0.0, lightgbm_arithmetic=True, **p),
                                  lambda **p: UMart(window=1, lightgbm_arithmetic=True, **p)],
                         ids=["lambdaloss", "umart"])
def test_lightgbm_arithmetic_trains_lambdarank_bit_for_bit_with_no_floor_given(make):
    """LightGBM's arithmetic takes LightGBM's hessian floor, 0, unless a floor is given: a floor adds to every leaf's
    hessian sum. set_params(lightgbm_arithmetic=False) gives back the default floor, as a new object would."""
    data = make_synthetic(n_queries=60, seed=12)
    params = {"lambdarank_truncation_level": 12, "sigmoid": 1.5}
    builtin = train("lightgbm", "lambdarank", data, rounds=6, engine_params=params).booster
    for floor, same in (({}, True), ({"hessian_floor": 1e-5}, False)):
        ours = train("lightgbm", make(**params, **floor), data, rounds=6).booster
        assert np.array_equal(ours.predict(data.X, raw_score=True), builtin.predict(data.X, raw_score=True)) is same
    assert make().hessian_floor == 0.0 and make(hessian_floor=1e-5).hessian_floor == 1e-5
    assert make().set_params(lightgbm_arithmetic=False).hessian_floor == 1e-6
    assert make(hessian_floor=1e-5).set_params(lightgbm_arithmetic=False).hessian_floor == 1e-5
