"""PLRank's exact Newton leaf values under LightGBM (plboost.engines.exact_leaves)."""

import lightgbm as lgb
import mpmath
import numpy as np
import pytest

from plboost import metrics
from plboost.data import make_synthetic
from plboost.engines import train
from plboost.engines.exact_leaves import ExactLeafValues, leaf_values
from plboost.objectives import PLRank, UMart

pytestmark = pytest.mark.engine

mpmath.mp.dps = 30


@pytest.fixture(scope="module")
def small():
    return make_synthetic(n_queries=25, n_features=8, docs_per_query=(2, 30), seed=3)


@pytest.fixture(scope="module")
def small_valid():
    return make_synthetic(n_queries=15, n_features=8, docs_per_query=(2, 30), seed=4)


def reference_loss(scores, data, state, n_permutations):
    """The PLRank loss written plainly: per query, the mean over its sampled permutations of
    sum_j [log sum_{t >= j} exp(s_pi(t)) - s_pi(j)] over the top k, in high precision."""
    total = mpmath.mpf(0)
    for q in range(data.n_queries):
        if state.top_k_of[q] == 0:
            continue
        lo, hi = data.offsets[q], data.offsets[q + 1]
        query_scores = [mpmath.mpf(float(s)) for s in scores[lo:hi]]
        for p in range(n_permutations):
            remaining = list(range(hi - lo))
            for doc in state.permutation_top(q, p):
                total += (mpmath.log(mpmath.fsum(mpmath.exp(query_scores[d]) for d in remaining))
                          - query_scores[doc]) / n_permutations
                remaining.remove(doc)
    return total


def newton_step_along(scores, direction, data, state, n_permutations, lambda_l2, step=mpmath.mpf("1e-8")):
    """-f'(0) / (f''(0) + lambda_l2) for f(t) = loss(scores + t * direction), by central differences."""
    def f(t):
        return reference_loss([mpmath.mpf(float(s)) + t * int(u) for s, u in zip(scores, direction)], data, state,
                              n_permutations)
    up, center, down = f(step), f(0), f(-step)
    first, second = (up - down) / (2 * step), (up - 2 * center + down) / step ** 2
    return float(-first / (second + lambda_l2))


@pytest.mark.parametrize("lambda_l2", [0.0, 2.0])
def test_a_rewritten_leaf_is_the_newton_step_on_the_exact_likelihood(small, lambda_l2):
    objective = PLRank(top_k=4, n_permutations=2, seed=5)
    learning_rate, rounds = 0.5, 3
    model = train("lightgbm", objective, small, rounds=rounds, learning_rate=learning_rate, num_leaves=4,
                  engine_params={"min_data_in_leaf": 20, "lambda_l2": lambda_l2}, leaf_values="exact")
    booster = model.booster
    state = objective.state(small.labels, small.offsets)
    tree = rounds - 1
    before = booster.predict(small.X, num_iteration=tree, raw_score=True)
    leaf = booster.predict(small.X, start_iteration=tree, num_iteration=1, pred_leaf=True).ravel()
    assert len(np.unique(leaf)) >= 3
    for index in np.unique(leaf):
        expected = newton_step_along(before, leaf == index, small, state, 2, lambda_l2)
        assert booster.get_leaf_output(tree, int(index)) / learning_rate == pytest.approx(expected, rel=1e-6)
    # the diagonal step is smaller (the cross terms damp it): the rewrite changed something
    diagonal = train("lightgbm", objective, small, rounds=1, learning_rate=learning_rate, num_leaves=4,
                     engine_params={"min_data_in_leaf": 20, "lambda_l2": lambda_l2}).booster
    exact = train("lightgbm", objective, small, rounds=1, learning_rate=learning_rate, num_leaves=4,
                  engine_params={"min_data_in_leaf": 20, "lambda_l2": lambda_l2}, leaf_values="exact").booster
    ratios = [abs(exact.get_leaf_output(0, i)) / abs(diagonal.get_leaf_output(0, i)) for i in range(4)]
    assert min(ratios) > 1.0 + 1e-3, ratios


@pytest.mark.parametrize("params", [
    {"learning_rate": 0.3},
    {"learning_rate": 0.1, "lambda_l2": 4.0, "lambda_l1": 0.05},
    {"eta": 1.0, "reg_lambda": 0.5, "max_delta_step": 0.2},
], ids=str)
def test_diagonal_curvature_reproduces_lightgbm_leaf_values(small, params):
    """The refit arithmetic (L1, L2, max_delta_step, learning rate) with the engine's own curvature gives
    back LightGBM's leaf values: regularisation is applied as LightGBM applies it."""
    objective = PLRank(n_permutations=2)
    full = {"objective": objective, "num_leaves": 6, "min_data_in_leaf": 10, "verbosity": -1, **params}
    booster = lgb.train(full, small.to_lightgbm(), num_boost_round=4)
    refit = ExactLeafValues(objective, small, params=full, curvature="diagonal")
    for tree in range(4):
        scores = booster.predict(small.X, num_iteration=tree, raw_score=True) if tree else np.zeros(small.n_docs)
        refit._grad, refit._hess = objective.gradients(scores, small.labels, small.offsets)
        leaf = booster.predict(small.X, start_iteration=tree, num_iteration=1, pred_leaf=True).ravel()
        n_leaves = int(leaf.max()) + 1
        ours = refit.new_leaf_values(leaf, n_leaves)
        theirs = [booster.get_leaf_output(tree, i) for i in range(n_leaves)]
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-12)


def test_the_objective_always_sees_the_models_own_training_scores(small, small_valid):
    """LightGBM's cached scores keep the old leaf values; the scores handed to PLRank at iteration i must
    be the predictions of the model's first i (rewritten) trees, and likewise for validation."""
    seen = []

    class Recording(PLRank):
        def _gradients(self, scores, data, state, grad, hess):
            seen.append(scores.copy())
            super()._gradients(scores, data, state, grad, hess)

    objective = Recording(n_permutations=3)
    params = {"num_leaves": 8, "min_data_in_leaf": 10, "learning_rate": 0.3, "verbosity": -1}
    refit = ExactLeafValues(objective, small, small_valid, params=params)
    booster = lgb.train({**params, "objective": refit.objective, "metric": "None"}, small.to_lightgbm(),
                        num_boost_round=6, callbacks=[refit.callback])
    assert len(seen) == 6
    for iteration, scores in enumerate(seen):
        model = (booster.predict(small.X, num_iteration=iteration, raw_score=True) if iteration
                 else np.zeros(small.n_docs))
        np.testing.assert_allclose(scores, model, rtol=0, atol=1e-9)
    np.testing.assert_allclose(refit.valid_scores, booster.predict(small_valid.X, raw_score=True), rtol=0, atol=1e-9)
    assert np.abs(refit.correction).max() > 1e-3  # the leaves did change, so the correction was needed


def test_early_stopping_watches_the_rewritten_model(small, small_valid):
    # another run first, with its callback alone and LightGBM's recorder: LightGBM sets a missing `order`
    # on each callback, which must not leak from one run into the next (it did, through a bound method)
    objective, record = PLRank(), {}
    params = {"num_leaves": 4, "min_data_in_leaf": 10, "verbosity": -1}
    other = ExactLeafValues(objective, small, small_valid, params=params)
    lgb.train({**params, "objective": other.objective, "metric": "None"}, small.to_lightgbm(), num_boost_round=3,
              callbacks=[lgb.record_evaluation(record), other.callback])
    assert len(record["valid"]["ndcg@10"]) == 3  # the recorder, ordered after the rewrite, saw every score

    model = train("lightgbm", PLRank(n_permutations=2), small, small_valid, rounds=60, early_stopping=5,
                  learning_rate=0.5, engine_params={"min_data_in_leaf": 10}, leaf_values="exact")
    assert model.best_iteration is not None and model.rounds <= 60
    assert len(model.valid_history) == model.rounds
    best = metrics.ndcg(model.booster.predict(small_valid.X, num_iteration=model.best_iteration), small_valid.labels,
                        offsets=small_valid.offsets, k=10)
    assert best == pytest.approx(max(model.valid_history), abs=1e-12)
    assert model.valid_history[model.best_iteration - 1] == max(model.valid_history)
    assert model.leaf_refit_seconds > 0 and model.engine_params["leaf_values"] == "exact"


def test_leaf_values_regularise_and_clip_like_lightgbm():
    values = leaf_values([2.0, -0.5, 0.01, 1.0], [1.0, 0.25, 1.0, 0.0], learning_rate=0.1, lambda_l1=0.1,
                         lambda_l2=1.0, max_delta_step=0.5)
    np.testing.assert_allclose(values, [-0.05, 0.032, 0.0, -0.05])
    assert leaf_values([1.0], [0.0], learning_rate=1.0)[0] == 0.0  # no curvature at all: no step


@pytest.mark.parametrize("params, what", [
    ({"bagging_fraction": 0.5, "bagging_freq": 1}, "bagging"),
    ({"boosting": "dart"}, "boosting other than gbdt"),
    ({"data_sample_strategy": "goss"}, "GOSS"),
    ({"path_smooth": 1.0}, "path_smooth"),
    ({"linear_tree": True}, "linear trees"),
])
def test_settings_that_change_leaf_values_are_refused(small, params, what):
    with pytest.raises(ValueError, match=f"do not support {what}"):
        train("lightgbm", PLRank(), small, rounds=1, engine_params=params, leaf_values="exact")


def test_other_objectives_and_engines_are_refused(small):
    with pytest.raises(ValueError, match="defined for PLRank"):
        train("lightgbm", UMart(), small, rounds=1, leaf_values="exact")
    with pytest.raises(ValueError, match="for LightGBM only"):
        train("xgboost", PLRank(), small, rounds=1, leaf_values="exact")
    with pytest.raises(ValueError, match="'diagonal' or 'exact'"):
        train("lightgbm", PLRank(), small, rounds=1, leaf_values="newton")
