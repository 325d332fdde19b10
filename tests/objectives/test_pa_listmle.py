"""Position-aware ListMLE against a slow, plainly written reference: the weighted loss, its finite differences,
the weights themselves, and its relation to PLRank (all weights 1)."""

import json
from fractions import Fraction

import lightgbm as lgb
import mpmath
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb

from plboost import metrics
from plboost.engines.parameters import check_leaf_values
from plboost.data import make_synthetic
from plboost.engines.exact_leaves import ExactLeafValues
from plboost.objectives import PLRank, PositionAwareListMLE, get_objective

DIGITS = 40
STEP = "1e-12"


def exponential_weight(n: int, j: int) -> mpmath.mpf:
    """Position j (1-based) of a query of n documents: (2^(n-j) - 1) / (2^(n-1) - 1) exactly (1 for n = 1)."""
    return mpmath.mpf(1) if n == 1 else mpmath.mpf(Fraction(2 ** (n - j) - 1, 2 ** (n - 1) - 1))


def dcg_weight(n: int, j: int) -> mpmath.mpf:
    return 1 / mpmath.log(1 + j, 2)


@mpmath.workdps(DIGITS)
def reference_loss(scores, top_lists, weight):
    """Mean over permutations of sum_j w_j [log sum_{t >= j} e^{s_pi(t)} - s_pi(j)], in high precision.

    ``top_lists[p]`` is the top k of permutation p, ``weight(j)`` the weight of position j (1-based); the context
    of step j is every document not chosen before it.
    """
    total = mpmath.mpf(0)
    for top in top_lists:
        remaining = list(range(len(scores)))
        for j, doc in enumerate(top, start=1):
            total += weight(j) * (mpmath.log(mpmath.fsum(mpmath.exp(scores[d]) for d in remaining)) - scores[doc])
            remaining.remove(doc)
    return total / len(top_lists)


def random_query(rng, n, scale):
    labels = rng.integers(0, 3 if n < 8 else 5, size=n).astype(float)  # few labels: many ties
    scores = rng.normal(scale=scale, size=n)
    scores[rng.random(n) < 0.2] = 0.25 * scale  # tied scores
    return scores, labels


def tops_of(state, query, n_permutations):
    return [state.permutation_top(query, p).tolist() for p in range(n_permutations)]


def weight_function(position_weights, n):
    if position_weights == "exponential":
        return lambda j: exponential_weight(n, j)
    if position_weights == "dcg":
        return lambda j: dcg_weight(n, j)
    return lambda j: mpmath.mpf(position_weights[j - 1])


CASES = [  # (documents, top_k, permutations, score scale)
    (1, 10, 1, 1.0), (2, 1, 2, 1.0), (2, None, 3, 50.0), (3, None, 3, 1.0), (5, 3, 2, 10.0), (7, 10, 3, 1.0),
    (12, 5, 3, 1e4), (20, 10, 3, 50.0), (25, None, 2, 1.0),
]
WEIGHTINGS = ["exponential", "dcg", "explicit"]


@pytest.mark.interpreted_once
@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("n, top_k, n_perm, scale", CASES)
def test_gradient_and_hessian_match_finite_differences(n, top_k, n_perm, scale, weighting, compress,
                                                       central_differences):
    rng = np.random.default_rng([n, n_perm, int(scale), WEIGHTINGS.index(weighting)])
    scores, labels = random_query(rng, n, scale)
    labels[0] = labels.max() + 1  # two distinct labels at least (a query of one document is not skipped below)
    if weighting == "explicit":
        top_k = top_k or n
        position_weights = tuple(float(w) for w in rng.uniform(0, 2, size=top_k).round(3))
        position_weights = (0.0,) + position_weights[1:] if top_k > 1 else position_weights  # a zero weight too
    else:
        position_weights = weighting
    obj = PositionAwareListMLE(top_k=top_k, n_permutations=n_perm, seed=7, position_weights=position_weights,
                               compress_contexts=compress, skip_uniform_queries=False)
    offsets = np.array([0, n])
    grad, hess = obj.gradients(scores, labels, offsets)
    tops = tops_of(obj.state(labels, offsets), 0, n_perm)
    weight = weight_function(position_weights, n)
    fd_grad, fd_hess, _ = central_differences(lambda s: reference_loss(s, tops, weight), scores, STEP, DIGITS)

    assert grad.dtype == np.float32 and hess.dtype == np.float32
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, obj.hessian_floor), rtol=1e-5, atol=1e-6)
    assert abs(float(grad.astype(np.float64).sum())) < 1e-5
    loss = obj.losses(scores, labels, offsets)[0]
    assert loss == pytest.approx(float(reference_loss([mpmath.mpf(float(s)) for s in scores], tops, weight)),
                                 rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("weighting", ["exponential", "dcg"])
def test_several_queries_of_different_sizes_each_get_their_own_weights(weighting, compress, central_differences):
    """The exponential weights depend on the query's size: one call over queries of 1 to 30 documents (a row of
    weights per query) against the reference query by query."""
    rng = np.random.default_rng([11, compress])
    queries = [random_query(rng, n, scale) for n, scale in [(1, 1.0), (2, 50.0), (9, 3.0), (4, 1e4), (30, 50.0),
                                                             (6, 1.0)]]
    scores = np.concatenate([q[0] for q in queries])
    labels = np.concatenate([q[1] for q in queries])
    offsets = np.r_[0, np.cumsum([q[0].size for q in queries])]
    obj = PositionAwareListMLE(top_k=5, n_permutations=3, seed=3, position_weights=weighting,
                               compress_contexts=compress)
    grad, hess = obj.gradients(scores, labels, offsets)
    losses = obj.losses(scores, labels, offsets)
    state = obj.state(labels, offsets)
    for q in range(offsets.size - 1):
        lo, hi = offsets[q], offsets[q + 1]
        if state.top_k_of[q] == 0:  # all labels equal (the one-document query, at least)
            np.testing.assert_array_equal(grad[lo:hi], 0.0)
            assert losses[q] == 0.0
            continue
        tops = tops_of(state, q, 3)
        weight = weight_function(weighting, hi - lo)
        fd_grad, fd_hess, center = central_differences(lambda s, tops=tops, weight=weight:
                                                       reference_loss(s, tops, weight), scores[lo:hi], STEP, DIGITS)
        np.testing.assert_allclose(grad[lo:hi], fd_grad, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(hess[lo:hi], np.maximum(fd_hess, obj.hessian_floor), rtol=1e-5, atol=1e-6)
        assert losses[q] == pytest.approx(float(center), rel=1e-12, abs=1e-9)


def _many_queries(seed, scale, interpreted=False):
    """150 queries of 1 to 59 documents, with tied scores; 30 in the pass with interpreted kernels."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 60, size=30 if interpreted else 150)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 4, size=offsets[-1]).astype(float)
    scores = rng.normal(scale=scale, size=offsets[-1])
    scores[::5] = scale  # tied scores
    return scores, labels, offsets


@pytest.mark.interpreted_once
@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("top_k, n_perm", [(10, 1), (10, 3), (1, 2), (25, 4)])
@pytest.mark.parametrize("scale", [1.0, 50.0, 1e4])
def test_weights_all_one_are_plrank_bit_for_bit(top_k, n_perm, scale, compress, interpreted):
    scores, labels, offsets = _many_queries(int(scale), scale, interpreted)
    kwargs = dict(top_k=top_k, n_permutations=n_perm, seed=5, compress_contexts=compress)
    ones = PositionAwareListMLE(position_weights=[1.0] * top_k, **kwargs)
    plrank = PLRank(**kwargs)
    for got, want in zip(ones.gradients(scores, labels, offsets), plrank.gradients(scores, labels, offsets),
                         strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(ones.losses(scores, labels, offsets), plrank.losses(scores, labels, offsets))
    # the same permutations and contexts as PLRank's
    state, plrank_state = ones.state(labels, offsets), plrank.state(labels, offsets)
    np.testing.assert_array_equal(state.top_docs, plrank_state.top_docs)
    np.testing.assert_array_equal(state.ctx_owner, plrank_state.ctx_owner)


@pytest.mark.parametrize("weighting", ["exponential", "dcg"])
def test_exponential_and_dcg_weights_differ_from_plrank(weighting, interpreted):
    scores, labels, offsets = _many_queries(1, 1.0, interpreted)
    plrank_grad, _ = PLRank(n_permutations=2).gradients(scores, labels, offsets)
    obj = PositionAwareListMLE(n_permutations=2, position_weights=weighting)
    grad, hess = obj.gradients(scores, labels, offsets)
    assert not np.allclose(grad, plrank_grad, rtol=1e-3, atol=1e-4)
    # the later positions weigh less: the loss is below PLRank's, query by query
    losses, plrank_losses = obj.losses(scores, labels, offsets), PLRank(n_permutations=2).losses(scores, labels,
                                                                                                 offsets)
    assert np.all(losses <= plrank_losses + 1e-12) and np.any(losses < plrank_losses - 1e-6)
    other = PositionAwareListMLE(n_permutations=2,
                                 position_weights="dcg" if weighting == "exponential" else "exponential")
    assert not np.allclose(grad, other.gradients(scores, labels, offsets)[0], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 60, 130, 1100, 1500])
def test_exponential_weights_are_the_exact_fractions_at_any_size(n):
    """(2^(n-j) - 1) / (2^(n-1) - 1) in float64 to the last bits or so, however large n (2^1499 overflows)."""
    labels = np.arange(n, dtype=float) % 3
    labels[0] = 3.0
    obj = PositionAwareListMLE(top_k=None, skip_uniform_queries=False)
    state = obj.state(labels, np.array([0, n]))
    weights = state.position_weights[state.weight_start[0]:state.weight_start[0] + n]
    expected = [1.0] if n == 1 else [float(Fraction(2 ** (n - j) - 1, 2 ** (n - 1) - 1)) for j in range(1, n + 1)]
    np.testing.assert_allclose(weights, expected, rtol=1e-14, atol=1e-300)
    assert weights[0] == 1.0 and (n == 1 or weights[-1] == 0.0)
    assert np.all(np.diff(weights) <= 0)


def test_the_former_name_paper_is_the_exponential_weights_with_a_warning_users_see(tmp_path, capsys):
    with pytest.warns(FutureWarning, match="'paper' is now named 'exponential'"):
        old = PositionAwareListMLE(position_weights="paper")
    assert old == PositionAwareListMLE() and old.get_params()["position_weights"] == "exponential"
    with pytest.warns(FutureWarning, match="'paper' is now named 'exponential'"):
        assert PositionAwareListMLE(position_weights="dcg").set_params(position_weights="paper") == old
    # a FutureWarning, which Python shows by default: the command line prints it as one line
    from plboost.cli import main
    from plboost.data import write_synthetic_splits

    write_synthetic_splits(tmp_path, n_queries=(20, 5, 5), seed=0)
    assert main(["train", "--train", str(tmp_path / "train.txt"), "--objective", "pa_listmle", "--param",
                 "position_weights=paper", "--rounds", "2", "--quiet"]) == 0
    assert "plboost train: warning: position_weights='paper' is now named 'exponential'" in capsys.readouterr().err
    # a comparison builds one objective per configuration and repeat: the warning is still one line
    layout = tmp_path / "layout"
    write_synthetic_splits(layout / "Fold1", n_queries=(20, 5, 5), seed=1)
    assert main(["compare", str(layout), "--run", "pa_listmle,position_weights=paper", "--rounds", "2", "--repeats",
                 "3", "--quiet"]) == 0
    assert capsys.readouterr().err.count("warning: position_weights='paper' is now named") == 1


def test_dcg_weights():
    state = PositionAwareListMLE(top_k=4, position_weights="dcg").state(np.array([2.0, 1, 0, 1, 0]),
                                                                        np.array([0, 5]))
    np.testing.assert_allclose(state.position_weights[:4], 1 / np.log2(np.arange(2, 6)), rtol=1e-15)
    np.testing.assert_array_equal(state.weight_start, [0])


def test_compressed_equals_uncompressed(interpreted):
    scores, labels, offsets = _many_queries(4, 5.0, interpreted)
    kwargs = dict(top_k=10, n_permutations=6, seed=9)
    compressed, plain = PositionAwareListMLE(**kwargs), PositionAwareListMLE(compress_contexts=False, **kwargs)
    assert compressed.state(labels, offsets).compression_ratio < 0.9
    assert plain.state(labels, offsets).compression_ratio == 1.0
    for a, b in zip(compressed.gradients(scores, labels, offsets), plain.gradients(scores, labels, offsets),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(compressed.losses(scores, labels, offsets), plain.losses(scores, labels, offsets),
                               rtol=1e-12, atol=1e-10)


@pytest.mark.interpreted_once
@pytest.mark.parametrize("scale", [1e-3, 1.0, 50.0, 1e4, 1e30])
def test_gradients_are_finite_and_sum_to_zero_per_query(scale, interpreted):
    scores, labels, offsets = _many_queries(3, scale, interpreted)
    for kwargs in ({}, {"top_k": None, "n_permutations": 3}, {"position_weights": "dcg", "top_k": 1}):
        grad, hess = PositionAwareListMLE(**kwargs).gradients(scores, labels, offsets)
        assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess >= 1e-6)
        sums = np.add.reduceat(grad.astype(np.float64), offsets[:-1])
        assert np.max(np.abs(sums)) < 1e-5 * 60


@pytest.mark.parametrize("kwargs, message", [
    ({"position_weights": "ndcg"}, "position_weights"), ({"position_weights": 3}, "position_weights"),
    ({"position_weights": None}, "position_weights"), ({"top_k": 2, "position_weights": [1.0]}, "position_weights"),
    ({"top_k": 2, "position_weights": [1.0, -0.5]}, "position_weights"),
    ({"top_k": 2, "position_weights": [1.0, float("nan")]}, "position_weights"),
    ({"top_k": 2, "position_weights": [1.0, float("inf")]}, "position_weights"),
    ({"top_k": 2, "position_weights": [0.0, 0.0]}, "position_weights"),
    ({"top_k": 2, "position_weights": ["a", 1.0]}, "position_weights"),
    ({"top_k": 2, "position_weights": [True, 1.0]}, "position_weights"),
    ({"top_k": None, "position_weights": [1.0, 0.5]}, "top_k"),
    ({"top_k": 0}, "top_k"), ({"n_permutations": 0}, "n_permutations"), ({"seed": -1}, "seed"),
    ({"hessian_floor": -1.0}, "hessian_floor"),
])
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PositionAwareListMLE(**kwargs)


def test_explicit_weights_are_stored_as_a_tuple_and_set_params_checks_them():
    obj = PositionAwareListMLE(top_k=3, position_weights=np.array([1.0, 0.5, 0.25]))
    assert obj.position_weights == (1.0, 0.5, 0.25)
    assert obj == PositionAwareListMLE(top_k=3, position_weights=[1, 0.5, 0.25])
    assert obj != PositionAwareListMLE(top_k=3, position_weights=[1, 0.5, 0.5])
    with pytest.raises(ValueError, match="position_weights must hold top_k = 5 weights"):
        obj.set_params(top_k=5)
    assert obj.top_k == 3
    assert obj.set_params(top_k=2, position_weights=(2.0, 1.0)).position_weights == (2.0, 1.0)
    assert get_objective("pa_listmle", position_weights="dcg") == PositionAwareListMLE(position_weights="dcg")


def test_exact_leaves_are_refused():
    obj = PositionAwareListMLE()
    with pytest.raises(ValueError, match="defined for PLRank.*not pa_listmle"):
        check_leaf_values("exact", "lightgbm", obj)
    with pytest.raises(ValueError, match="defined for PLRank"):
        ExactLeafValues(obj, None)
    with pytest.raises(NotImplementedError, match="leaf_values='diagonal'"):
        obj.leaf_curvature(np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 3]), np.zeros(3, dtype=int), 1)
    check_leaf_values("diagonal", "lightgbm", obj)


@pytest.fixture(scope="module")
def synthetic():
    data = make_synthetic(n_queries=60, n_features=8, docs_per_query=(5, 40), seed=3)
    return data, np.diff(data.offsets)


def _train_ndcg(data, scores):
    return metrics.ndcg(scores, data.labels, offsets=data.offsets, k=10)


@pytest.mark.engine
@pytest.mark.parametrize("weighting", ["exponential", "dcg"])
def test_trains_end_to_end_with_lightgbm_and_xgboost(synthetic, weighting):
    data, sizes = synthetic
    obj = PositionAwareListMLE(n_permutations=2, position_weights=weighting)
    booster = lgb.train({"objective": obj, "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5,
                         "verbosity": -1, "num_threads": 1, "seed": 1},
                        lgb.Dataset(data.X, data.labels, group=sizes), num_boost_round=20)
    lgb_ndcg = _train_ndcg(data, booster.predict(data.X))
    dtrain = xgb.DMatrix(data.X, data.labels)
    dtrain.set_group(sizes)
    model = xgb.train({"max_depth": 3, "eta": 0.1, "nthread": 1, "seed": 1}, dtrain, num_boost_round=20, obj=obj)
    xgb_ndcg = _train_ndcg(data, model.predict(dtrain, output_margin=True))
    untrained = _train_ndcg(data, np.zeros(data.labels.size))
    assert lgb_ndcg > untrained + 0.05 and xgb_ndcg > untrained + 0.05, (untrained, lgb_ndcg, xgb_ndcg)


@pytest.mark.engine
def test_the_command_line_trains_it_on_mq2008(shared_data, tmp_path, capsys):
    """plboost train and compare on MQ2008 Fold1, two rounds: the named weightings reach the objective (the
    exponential and DCG weights train different models) and the errors name the argument."""
    from plboost.cli import main

    fold = shared_data / "MQ2008" / "Fold1"
    out = tmp_path / "train.json"
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--test", str(fold / "test.txt.gz"),
                 "--objective", "pa_listmle", "--param", "top_k=3", "--param", "position_weights=[1, 0.5, 0.25]",
                 "--engine", "xgboost", "--rounds", "2", "--out", str(out), "--quiet"]) == 0
    result = json.loads(out.read_text())
    assert result["objective"] == "pa_listmle" and result["rounds"] == 2
    assert 0 < result["metrics"]["NDCG@10"] <= 1
    assert main(["compare", str(shared_data / "MQ2008"), "--folds", "Fold1", "--run", "pa_listmle",
                 "--run", "pa_listmle,position_weights=dcg", "--rounds", "2", "--out", str(tmp_path / "compare"),
                 "--quiet"]) == 0
    rows = pd.read_csv(tmp_path / "compare" / "results.csv").set_index("configuration")
    assert list(rows.index) == ["pa_listmle [lightgbm]", "pa_listmle(position_weights=dcg) [lightgbm]"]
    assert rows["NDCG@10"].between(0, 1).all() and rows["NDCG@10"].nunique() == 2
    capsys.readouterr()
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--objective", "pa_listmle", "--param",
                 "position_weights=[1, 0.5]", "--rounds", "2", "--quiet"]) == 2
    assert "position_weights must hold top_k = 10 weights, got 2" in capsys.readouterr().err


@pytest.mark.parametrize("weighting", WEIGHTINGS)
@pytest.mark.parametrize("n, top_k, n_perm", [(2, None, 2), (9, 4, 3), (30, 10, 2)])
def test_bounded_curvature_weighs_each_context_by_its_position(n, top_k, n_perm, weighting):
    """curvature="bound": 1/4 times the weights of the contexts of two or more documents that hold each
    document (weights and contexts read plainly from the permutations), the exact gradients unchanged."""
    rng = np.random.default_rng([n, n_perm, 62])
    scores, labels = random_query(rng, n, 3.0)
    labels[0] = labels.max() + 1
    k = top_k or n
    position_weights = list(rng.uniform(0.0, 2.0, size=k)) if weighting == "explicit" else weighting
    offsets = np.array([0, n])
    kwargs = {"top_k": k if weighting == "explicit" else top_k, "n_permutations": n_perm, "seed": 4,
              "position_weights": position_weights}
    grad, hess = PositionAwareListMLE(**kwargs, curvature="bound").gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad, PositionAwareListMLE(**kwargs).gradients(scores, labels, offsets)[0])
    obj = PositionAwareListMLE(**kwargs, curvature="bound")
    tops = tops_of(obj.state(labels, offsets), 0, n_perm)
    weight = weight_function(position_weights, n)
    expected = np.zeros(n)
    for top in tops:
        for j in range(len(top)):
            held = [d for d in range(n) if d not in top[:j]]
            if len(held) >= 2:
                expected[held] += 0.25 * float(weight(j + 1)) / n_perm
    np.testing.assert_allclose(hess, np.maximum(expected, obj.hessian_floor), rtol=1e-6)
