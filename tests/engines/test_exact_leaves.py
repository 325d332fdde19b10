"""PLRank's exact Newton leaf values under LightGBM (plboost.engines.exact_leaves)."""

import lightgbm as lgb
import mpmath
import numpy as np
import pytest

from plboost import metrics
from plboost.data import make_synthetic
from plboost.engines import train
from plboost.engines import exact_leaves
from plboost.engines.exact_leaves import ExactLeafValues, leaf_values, match_leaves
from plboost.objectives import PLRank, UMart

pytestmark = pytest.mark.engine

#: working precision of the references: set per call (mpmath.workdps), not globally at import, so that it
#: does not depend on which test module was imported last
DIGITS = 30
NEWTON_STEP = "1e-8"  # central-difference step of newton_step_along, read at that precision


@pytest.fixture(scope="module")
def small():
    return make_synthetic(n_queries=25, n_features=8, docs_per_query=(2, 30), seed=3)


@pytest.fixture(scope="module")
def small_valid():
    return make_synthetic(n_queries=15, n_features=8, docs_per_query=(2, 30), seed=4)


@mpmath.workdps(DIGITS)
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


@mpmath.workdps(DIGITS)
def newton_step_along(scores, direction, data, state, n_permutations, lambda_l2, step=NEWTON_STEP):
    """-f'(0) / (f''(0) + lambda_l2) for f(t) = loss(scores + t * direction), by central differences."""
    step = mpmath.mpf(step)

    def f(t):
        return reference_loss([mpmath.mpf(float(s)) + t * int(u) for s, u in zip(scores, direction, strict=True)],
                              data, state, n_permutations)
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
    with pytest.raises(ValueError, match="leaf_values must be one of 'diagonal', 'exact'"):
        train("lightgbm", PLRank(), small, rounds=1, leaf_values="newton")


# --- finding each training document's leaf from LightGBM's cached scores ---------------------------------------

def train_refit(data, valid, params, rounds, finder, objective_seed=7):
    """An exact-leaf run under lgb.train whose leaves are found by ``finder`` ("scores" or "predict")."""
    objective = PLRank(top_k=5, n_permutations=2, seed=objective_seed)
    full = {"num_leaves": 12, "min_data_in_leaf": 5, "learning_rate": 0.3, "verbosity": -1, "seed": 1, **params}
    refit = ExactLeafValues(objective, data, valid, params=full)
    refit.leaf_finder = finder
    record = {}
    booster = lgb.train({**full, "objective": refit.objective, "metric": "None"}, data.to_lightgbm(),
                        num_boost_round=rounds, callbacks=[refit.callback, lgb.record_evaluation(record)])
    return booster, refit, record


def assert_same_model(a, b, X):
    """Same trees (splits, children) and leaf values equal to float rounding, so the same predictions."""
    trees_a, trees_b = a.dump_model()["tree_info"], b.dump_model()["tree_info"]
    assert len(trees_a) == len(trees_b) > 0

    def walk(x, y):
        assert x.keys() == y.keys()
        if "leaf_value" in x:
            assert x["leaf_index"] == y["leaf_index"] and x["leaf_count"] == y["leaf_count"]
            # bit for bit in one process (the sums of PLRank's kernels do not depend on where arrays lie: see
            # plboost/objectives/plrank.py); the tolerance allows rounding of the same operations in another order
            assert x["leaf_value"] == pytest.approx(y["leaf_value"], rel=1e-10, abs=1e-300)
            return
        for key in ("split_feature", "threshold", "decision_type", "default_left", "missing_type"):
            assert x[key] == y[key], key
        walk(x["left_child"], y["left_child"])
        walk(x["right_child"], y["right_child"])

    for x, y in zip(trees_a, trees_b, strict=True):
        assert x["num_leaves"] == y["num_leaves"]
        walk(x["tree_structure"], y["tree_structure"])
    np.testing.assert_allclose(a.predict(X, raw_score=True), b.predict(X, raw_score=True), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("params, shared", [
    ({}, False),
    ({"num_leaves": 31, "min_data_in_leaf": 2, "learning_rate": 1.0}, False),
    ({"lambda_l1": 0.5}, True),  # leaves whose |gradient sum| <= lambda_l1 all get 0
    ({"max_delta_step": 0.02, "lambda_l2": 1.0}, True),  # clipped leaves share +-0.02 * learning rate
], ids=str)
@pytest.mark.parametrize("seed", [3, 11])
def test_leaves_from_cached_scores_give_the_model_of_pred_leaf(params, shared, seed):
    data = make_synthetic(n_queries=40, n_features=8, docs_per_query=(2, 40), seed=seed)
    valid = make_synthetic(n_queries=20, n_features=8, docs_per_query=(2, 40), seed=seed + 100)
    new, refit, record = train_refit(data, valid, params, 12, "scores")
    old, reference, old_record = train_refit(data, valid, params, 12, "predict")
    assert_same_model(new, old, np.vstack([data.X, valid.X]))
    np.testing.assert_allclose(refit.correction, reference.correction, rtol=0, atol=1e-12)
    np.testing.assert_allclose(refit.valid_scores, reference.valid_scores, rtol=0, atol=1e-12)
    np.testing.assert_allclose(record["valid"]["ndcg@10"], old_record["valid"]["ndcg@10"], rtol=0, atol=1e-12)
    assert len(refit.leaf_seconds) == new.num_trees() == 12
    assert reference.fallbacks == 0  # counted for the cached-score finder only
    assert refit._valid_set is not None and reference._valid_set is None  # LightGBM kept validation scores
    if shared:  # two leaves of one value: their documents were looked up with predict
        assert refit.fallbacks > 0 and refit.fallback_documents > 0
        assert refit.valid_fallback_documents > 0
    else:
        assert refit.fallbacks == refit.fallback_documents == refit.valid_fallback_documents == 0


def test_leaves_from_cached_scores_under_train_with_early_stopping(monkeypatch):
    """Through plboost's own LightGBM training (validation scores, early stopping): the same model."""
    data = make_synthetic(n_queries=40, n_features=8, docs_per_query=(2, 40), seed=5)
    valid = make_synthetic(n_queries=20, n_features=8, docs_per_query=(2, 40), seed=6)

    def run(finder):
        monkeypatch.setattr(ExactLeafValues, "leaf_finder", finder)
        return train("lightgbm", PLRank(n_permutations=2, seed=2), data, valid, rounds=40, early_stopping=4,
                     learning_rate=0.5, num_leaves=8, engine_params={"min_data_in_leaf": 5}, leaf_values="exact")

    new, old = run("scores"), run("predict")
    assert new.rounds == old.rounds and new.best_iteration == old.best_iteration
    assert new.valid_history == pytest.approx(old.valid_history, abs=1e-12)
    assert_same_model(new.booster, old.booster, data.X)


def test_the_leaf_found_is_pred_leafs_on_every_tree(monkeypatch):
    """Random data, many trees, varied learning rates and leaf counts: every training and validation
    document's leaf found from the cached scores is the leaf ``predict(pred_leaf=True)`` gives, on every tree."""
    checked, checked_valid = [], []
    find, find_valid = ExactLeafValues._training_leaves, ExactLeafValues._validation_leaves

    def compared_valid(self, booster, iteration, values):
        leaf = find_valid(self, booster, iteration, values)
        expected = booster.predict(self.valid_data.X, start_iteration=iteration, num_iteration=1,
                                   pred_leaf=True).ravel()
        np.testing.assert_array_equal(leaf, expected)
        checked_valid.append(self.valid_fallback_documents)
        return leaf

    def compared(self, booster, iteration, values, counts):
        leaf = find(self, booster, iteration, values, counts)
        expected = booster.predict(self.train_data.X, start_iteration=iteration, num_iteration=1,
                                   pred_leaf=True).ravel()
        np.testing.assert_array_equal(leaf, expected)
        np.testing.assert_array_equal(np.bincount(expected, minlength=len(values)), counts)  # leaf_count is exact
        checked.append(self.fallbacks)
        return leaf

    monkeypatch.setattr(ExactLeafValues, "_training_leaves", compared)
    monkeypatch.setattr(ExactLeafValues, "_validation_leaves", compared_valid)
    rng = np.random.default_rng(0)
    for trial in range(6):
        sizes = dict(n_features=int(rng.integers(2, 20)), docs_per_query=(1, int(rng.integers(5, 60))),
                     noise=float(rng.uniform(0.2, 3)))
        data = make_synthetic(n_queries=int(rng.integers(20, 80)), seed=trial, **sizes)
        valid = make_synthetic(n_queries=int(rng.integers(5, 40)), seed=trial + 50, **sizes) if trial % 2 else None
        params = {"num_leaves": int(rng.integers(2, 40)), "min_data_in_leaf": int(rng.integers(1, 20)),
                  "learning_rate": float(rng.choice([0.05, 0.3, 1.0, 3.0])), "lambda_l2": float(rng.uniform(0, 2))}
        booster, refit, _ = train_refit(data, valid, params, 25, "scores", objective_seed=trial)
        assert booster.num_trees() == len(refit.leaf_seconds) > 0
    assert len(checked) >= 100 and len(checked_valid) >= 30


def test_a_tree_whose_score_changes_match_no_leaf_is_looked_up_whole(monkeypatch):
    """If the cached scores did not move by the tree's leaf outputs (another LightGBM), every document of
    that tree is looked up with predict, counted, and the model is still the reference's."""
    data = make_synthetic(n_queries=30, n_features=6, docs_per_query=(2, 30), seed=8)
    change = exact_leaves._cached_score_change
    calls = []

    def off_on_third_tree(booster, before, dataset=None):
        found, magnitude = change(booster, before, dataset)
        calls.append(None)
        return (found + 1e-3, magnitude) if len(calls) == 3 else (found, magnitude)

    monkeypatch.setattr(exact_leaves, "_cached_score_change", off_on_third_tree)
    new, refit, _ = train_refit(data, None, {}, 5, "scores")
    old, _, _ = train_refit(data, None, {}, 5, "predict")
    assert refit.fallbacks == 1 and refit.fallback_documents == data.n_docs
    assert_same_model(new, old, data.X)


def test_match_leaves_is_exact_to_rounding_and_flags_what_it_cannot_tell():
    rng = np.random.default_rng(1)
    values = np.array([0.1, -0.25, 3e-9, 0.1 + 1e-6, -0.25, 0.0, 7.0])  # leaves 1 and 4 share a value
    leaf = rng.integers(0, values.size, 20_000)
    before = rng.normal(size=leaf.size) * rng.choice([1e-3, 1.0, 30.0, 1e4], size=leaf.size)
    after = before + values[leaf]
    found, unresolved = match_leaves(after - before, values, np.abs(after).max())
    np.testing.assert_array_equal(unresolved, np.isin(leaf, [1, 4]))
    np.testing.assert_array_equal(found[~unresolved], leaf[~unresolved])
    assert np.all(np.isin(found[unresolved], [1, 4]))
    # a change farther than rounding from every value, or NaN: nothing is claimed
    for bad in (1e-9, np.nan):
        change = after - before
        change[17] += bad
        found, unresolved = match_leaves(change, values, np.abs(after).max())
        assert found is None and not unresolved.any()
    # one leaf: every document is in it
    found, unresolved = match_leaves(np.full(5, 0.5), np.array([0.5]), 2.0)
    np.testing.assert_array_equal(found, 0)
    assert not unresolved.any()
    # exact ties in the arithmetic are not ties in the answer: values a few ulps apart are told apart
    # only when the scores are small enough
    close = np.array([1.0, 1.0 + 8 * np.finfo(float).eps])
    found, unresolved = match_leaves(close[[0, 1, 1]], close, 0.0)
    np.testing.assert_array_equal(found, [0, 1, 1])
    assert not unresolved.any()
    found, unresolved = match_leaves(close[[0, 1, 1]], close, 100.0)
    assert unresolved.all()


@pytest.mark.parametrize("metric", [{"metric": "ndcg"}, {"metrics": ["None", "map"]}, {"metric_types": "ndcg,none"}],
                         ids=str)
def test_validation_data_is_not_handed_to_lightgbm_while_it_computes_metrics(small, small_valid, metric):
    """LightGBM would compute its metrics on the registered validation data (from scores that miss the
    rewritten leaves) and report them to the callbacks: its leaves are then looked up with predict."""
    objective = PLRank(n_permutations=2)
    params = {"num_leaves": 6, "min_data_in_leaf": 5, "verbosity": -1, **metric}
    refit = ExactLeafValues(objective, small, small_valid, params=params)
    reported = []
    booster = lgb.train({**params, "objective": refit.objective}, small.to_lightgbm(), num_boost_round=3, valid_sets=[],
                        callbacks=[refit.callback, lambda env: reported.extend(env.evaluation_result_list)])
    assert refit._valid_set is None and refit._valid_by_predict
    assert {r[0] for r in reported} == {"valid"}  # plboost's own NDCG only
    np.testing.assert_allclose(refit.valid_scores, booster.predict(small_valid.X, raw_score=True), rtol=0, atol=1e-9)
