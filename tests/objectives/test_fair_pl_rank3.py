"""FairPLRank3 (PL-Rank-3 for relevance and fairness of exposure, Oosterhuis SIGIR 2021) against the exact gradient
of expected NDCG@K minus a weighted disparity, both by enumerating every ranking of small queries (mpmath) and
central differences; its exposure estimate against enumeration; weight 0 against PLRank3; both engines."""

import itertools
import math

import lightgbm as lgb
import mpmath
import numpy as np
import pytest
import xgboost as xgb

from plboost import fairness
from plboost.data import make_synthetic
from plboost.objectives import PLRank3
from plboost.objectives.fair_pl_rank3 import FairPLRank3
from plboost.policies import PlackettLucePolicy

#: thousands of calls on enumerated queries: minutes with the kernels interpreted, so the NUMBA_DISABLE_JIT pass
#: leaves them to the compiled pass (the tests below them run the same lines)
compiled_only = pytest.mark.compiled_only("N_SEEDS calls: the compiled pass runs them; the same lines run below")


def raw_estimates(objective, scores, labels, offsets):
    """The kernel's outputs before the engines' hessian is made of them: the signed curvature estimate."""
    data = objective._checked_queries(np.asarray(labels, dtype=float), offsets)
    grad = np.empty(data.n_docs, dtype=np.float32)
    hess = np.empty(data.n_docs, dtype=np.float32)
    objective._estimates(objective._checked_scores(scores, data), data, objective._state_for(data), grad, hess)
    return grad.astype(float), hess.astype(float)

# --------------------------------------------------------------------------------------------------
# The reference: exposure and the disparities by enumeration, in mpmath, nothing of plboost's


def _rankings(scores, k):
    weights = [mpmath.exp(s) for s in scores]
    n = len(scores)
    for top in itertools.permutations(range(n), min(k, n)):
        probability = mpmath.mpf(1)
        for j, d in enumerate(top):
            probability *= weights[d] / mpmath.fsum(weights[e] for e in range(n) if e not in top[:j])
        yield top, probability


def _exposure(scores, k):
    exposure = [mpmath.mpf(0)] * len(scores)
    for top, probability in _rankings(scores, k):
        for j, d in enumerate(top):
            exposure[d] += probability / mpmath.log(j + 2, 2)
    return exposure


def _ndcg(scores, labels, k):
    gains = [2 ** mpmath.mpf(y) - 1 for y in labels]
    ideal = mpmath.fsum(g / mpmath.log(j + 2, 2) for j, g in enumerate(sorted(gains, reverse=True)[:k]))
    if ideal == 0:
        return mpmath.mpf(0)
    return mpmath.fsum(g * e for g, e in zip(gains, _exposure(scores, k), strict=True)) / ideal


def _disparity(name, exposure, labels, groups, k):
    merit = [2 ** mpmath.mpf(y) - 1 for y in labels]
    n = len(exposure)
    if name == "individual":
        if n < 2:
            return mpmath.mpf(0)
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
        return 2 * mpmath.fsum((exposure[i] * merit[j] - exposure[j] * merit[i]) ** 2 for i, j in pairs) / (n * (n - 1))
    if name == "expected_exposure":
        target = [mpmath.mpf(0)] * n
        ideal = [r for r in itertools.permutations(range(n))
                 if all(labels[r[j]] >= labels[r[j + 1]] for j in range(n - 1))]
        for ranking in ideal:
            for j, d in enumerate(ranking[:k]):
                target[d] += 1 / mpmath.log(j + 2, 2) / len(ideal)
        return mpmath.fsum((e - t) ** 2 for e, t in zip(exposure, target, strict=True))
    values = []
    for g in sorted(set(groups)):
        members = [d for d in range(n) if groups[d] == g]
        value = mpmath.fsum(exposure[d] for d in members) / len(members)
        if name == "disparate_treatment":
            group_merit = mpmath.fsum(merit[d] for d in members) / len(members)
            if group_merit == 0:
                return mpmath.mpf(0)
            value /= group_merit
        values.append(value)
    pairs = [(a, b) for a in range(len(values)) for b in range(a + 1, len(values))]
    return mpmath.fsum((values[a] - values[b]) ** 2 for a, b in pairs) / len(pairs) if pairs else mpmath.mpf(0)


def exact_gradient(central_differences, scores, labels, groups, k, name, weight):
    """-d [NDCG - weight D] / ds, by central differences of the enumerated expectation (the engines' sign)."""
    def loss(s):
        return -_ndcg(s, labels, k) + weight * _disparity(name, _exposure(s, k), labels, groups, k)
    grad, _, _ = central_differences(loss, scores, digits=40)
    return grad


#: 2 to 5 documents: tied labels and scores, one group only (query 3), all labels equal (query 4: no relevance
#: gradient, a fairness one), a score range of 1,200 (the log-space path)
QUERIES = [
    ([0.7, -0.4], [1, 0], [0, 1]),
    ([3.0, -2.0, 0.5, -4.0], [2, 2, 0, 1], [0, 1, 1, 0]),
    ([0.0, 0.0, 1.5, -1.0, 0.3], [0, 1, 0, 2, 1], [1, 1, 0, 0, 1]),
    ([1.0, -1.0, 0.2], [1, 0, 1], [2, 2, 2]),
    ([0.5, -0.5, 2.0, 0.0], [0, 0, 0, 0], [0, 0, 1, 1]),
    ([0.0, -600.0, -601.0, 600.0], [2, 0, 1, 0], [0, 1, 0, 1]),
]
N_SEEDS = 1500


def _flat(queries):
    scores = np.concatenate([np.array(s, dtype=float) for s, _, _ in queries])
    labels = np.concatenate([np.array(y, dtype=float) for _, y, _ in queries])
    groups = np.concatenate([np.array(g) for _, _, g in queries])
    offsets = np.r_[0, np.cumsum([len(y) for _, y, _ in queries])]
    return scores, labels, groups, offsets


@compiled_only
@pytest.mark.parametrize("name, weight, k", [("demographic_parity", 2.0, 3), ("disparate_treatment", 0.3, 2),
                                             ("individual", 0.05, 10), ("expected_exposure", 1.5, 2)])
def test_the_mean_of_estimates_is_the_exact_gradient_of_ndcg_less_the_weighted_disparity(central_differences,
                                                                                        name, weight, k):
    """The mean of N_SEEDS estimates (30 rankings for the gradient, 30 for the exposure, each) is the exact
    gradient of expected NDCG@K - weight x D within 3.5 standard errors per document (the exposure's draws are
    independent of the gradient's and D's gradient is affine in E, so it is unbiased); the exact gradient of
    plain NDCG is rejected by the same criterion, so the fairness term is seen."""
    scores, labels, groups, offsets = _flat(QUERIES)
    grads = np.array([FairPLRank3(seed=seed, top_k=k, disparity=name, fairness_weight=weight,
                                  groups=groups).gradients(scores, labels, offsets)[0]
                      for seed in range(N_SEEDS)], dtype=float)
    exact = np.concatenate([exact_gradient(central_differences, s, y, g, k, name, weight) for s, y, g in QUERIES])
    plain = np.concatenate([exact_gradient(central_differences, s, y, g, k, name, 0.0) for s, y, g in QUERIES])
    mean, error = grads.mean(axis=0), grads.std(axis=0, ddof=1) / math.sqrt(N_SEEDS)
    slack = 1e-6 * np.abs(exact) + 1e-7
    assert np.all(np.abs(mean - exact) <= 3.5 * error + slack), ((mean - exact) / (error + slack)).round(1)
    assert np.any(np.abs(mean - plain) > 5 * error + slack), "plain NDCG's gradient passes too"


@compiled_only
def test_the_mean_signed_curvature_is_the_second_derivative_of_the_expected_dcg_of_the_combined_gains(
        central_differences):
    """The hessian is PL-Rank-3's estimated diagonal of the second derivatives of the expected DCG of the gains
    g = rho / IDCG - weight dD/dE held fixed (the module docstring says what it leaves out): its signed mean
    matches central second differences of that expectation, with g computed from the exact exposures."""
    queries = QUERIES[1:3]
    scores, labels, groups, offsets = _flat(queries)
    k, weight = 3, 2.0
    second = np.array([raw_estimates(FairPLRank3(seed=seed, top_k=k, disparity="demographic_parity",
                                                 fairness_weight=weight, groups=groups), scores, labels, offsets)[1]
                       for seed in range(N_SEEDS)])
    exposure = PlackettLucePolicy(scores, offsets, top_k=k).exposure().values
    pull = fairness.disparity_gradient("demographic_parity", exposure, offsets, groups=groups)
    expected = []
    for q, (s, y, _) in enumerate(queries):
        lo, hi = offsets[q], offsets[q + 1]
        ideal = sum(g / math.log2(j + 2) for j, g in enumerate(sorted(2.0 ** np.array(y) - 1, reverse=True)[:k]))
        gains = [mpmath.mpf((2.0 ** y[d] - 1) / ideal - weight * pull[lo + d]) for d in range(hi - lo)]

        def loss(v, gains=gains):
            return -mpmath.fsum(gains[d] * e for d, e in enumerate(_exposure(v, k)))
        _, h, _ = central_differences(loss, s, step="1e-10", digits=50)
        expected.append(h)
    expected = np.concatenate(expected)
    mean, error = second.mean(axis=0), second.std(axis=0, ddof=1) / math.sqrt(N_SEEDS)
    # the rankings' query keys hash the labels: the same ones every query's gains are shifted against
    assert np.all(np.abs(mean - expected) <= 3.5 * error + 1e-6 * np.abs(expected) + 1e-7)


def test_the_exposure_estimate_is_the_policys_exposure():
    """The Rao-Blackwellised exposure of the objective's draws: its mean over seeds is the enumerated exposure
    (within 4 standard errors per document), in linear and log space alike."""
    scores, labels, groups, offsets = _flat(QUERIES)
    exact = PlackettLucePolicy(scores, offsets, top_k=3).exposure().values
    for span in (600.0, -1.0):
        estimates = []
        for seed in range(300):
            objective = FairPLRank3(seed=seed, top_k=3, n_exposure_samples=20)
            objective._linear_span = span
            estimates.append(objective.exposure(scores, labels, offsets).copy())
        estimates = np.array(estimates)
        mean, error = estimates.mean(axis=0), estimates.std(axis=0, ddof=1) / math.sqrt(len(estimates))
        assert np.all(np.abs(mean - exact) <= 4 * error + 1e-12), ((mean - exact) / (error + 1e-12)).round(1)
        np.testing.assert_allclose(estimates.reshape(300, -1)[:, :2].sum(axis=1), 1.0 + 1.0 / math.log2(3))


@pytest.mark.parametrize("name", fairness.DISPARITIES)
def test_weight_zero_is_pl_rank3_bit_for_bit(name):
    scores, labels, groups, offsets = _flat(QUERIES)
    fair = FairPLRank3(disparity=name, fairness_weight=0.0, groups=groups, top_k=3, n_samples=7, seed=4)
    plain = PLRank3(top_k=3, n_samples=7, seed=4)
    fair_outputs, plain_outputs = fair.gradients(scores, labels, offsets), plain.gradients(scores, labels, offsets)
    for mine, theirs in zip(fair_outputs, plain_outputs, strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_a_fairness_weight_moves_exposure_between_groups():
    """On one query whose group 1 is ranked low, a step along the fair gradient narrows the exposure gap that
    a step along plain NDCG's gradient widens."""
    scores = np.array([3.0, 2.5, 2.0, 0.0, -0.5, -1.0])
    labels = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0])
    groups = np.array([0, 0, 0, 1, 1, 1])
    offsets = np.array([0, 6])

    def gap(s):
        exposure = PlackettLucePolicy(s, offsets, top_k=4).exposure().values
        return exposure[:3].mean() - exposure[3:].mean()
    fair = FairPLRank3(disparity="demographic_parity", fairness_weight=20.0, groups=groups, top_k=4, n_samples=200)
    grad, _ = fair.gradients(scores, labels, offsets)
    assert gap(scores - 0.5 * grad) < gap(scores)


def test_group_disparities_need_groups_of_the_datas_length():
    with pytest.raises(ValueError, match="pass groups="):
        FairPLRank3(disparity="demographic_parity", fairness_weight=1.0)
    fair = FairPLRank3(disparity="demographic_parity", fairness_weight=1.0, groups=[0, 1, 0])
    with pytest.raises(ValueError, match=r"FairPLRank3 groups: one group per document is needed \(4\)"):
        fair.gradients(np.zeros(4), np.array([1.0, 0.0, 0.0, 1.0]), np.array([0, 4]))
    with pytest.raises(ValueError, match="fairness_weight"):
        FairPLRank3(fairness_weight=-1.0)


@pytest.mark.engine
def test_plboost_train_warms_it_up_and_trains_with_groups_of_the_training_data(synthetic):
    """plboost.train warms an objective up on a query of its own (a warm-up with the training data's groups would
    be refused as of the wrong length) and then trains on the groups given."""
    from plboost.engines import train
    groups = (synthetic.X[:, 1] > np.median(synthetic.X[:, 1])).astype(int)
    objective = FairPLRank3(disparity="disparate_treatment", fairness_weight=1.0, groups=groups)
    model = train("lightgbm", objective, synthetic, rounds=3, progress=False)
    assert model.predict(synthetic.X).std() > 0
    with pytest.raises(ValueError, match="one group per document is needed"):
        train("lightgbm", FairPLRank3(disparity="demographic_parity", fairness_weight=1.0, groups=groups[:-1]),
              synthetic, rounds=3, progress=False)


@pytest.fixture(scope="module")
def synthetic():
    return make_synthetic(n_queries=60, docs_per_query=(10, 20), n_features=8, seed=3)


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_the_engines_train_with_it_and_the_weight_lowers_the_disparity(synthetic, engine):
    """Both engines take it as a custom objective; on synthetic data with a group from a feature, a large weight
    gives a policy of lower demographic parity disparity than weight 0 on the training queries."""
    X, y, offsets = synthetic.X, synthetic.labels, synthetic.offsets
    groups = (X[:, 1] > np.median(X[:, 1])).astype(int)  # a feature that varies within queries, tied to the labels
    disparities = []
    for weight in (0.0, 50.0):
        objective = FairPLRank3(disparity="demographic_parity", fairness_weight=weight, groups=groups, top_k=5)
        if engine == "lightgbm":
            train = lgb.Dataset(X, y, group=np.diff(offsets))
            booster = lgb.train({"objective": objective, "verbosity": -1, "num_leaves": 7, "learning_rate": 0.2},
                                train, num_boost_round=20)
            scores = booster.predict(X)
        else:
            train = xgb.DMatrix(X, y)
            train.set_group(np.diff(offsets))
            booster = xgb.train({"max_depth": 3, "eta": 0.2, "min_child_weight": 0.0}, train, 20, obj=objective)
            scores = booster.predict(train, output_margin=True)
        result = fairness.evaluate_policy(scores, y, offsets, groups=groups, k=5, n_samples=2000)
        disparities.append(result["demographic_parity"])
    assert disparities[1] < 0.5 * disparities[0]
