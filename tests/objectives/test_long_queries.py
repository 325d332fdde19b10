"""Queries longer than LightGBM's lambdarank takes (10,000 documents): every objective trains them on both engines,
and their gradients agree with computations that do not walk the long list as the kernels do.

- The Plackett-Luce losses of a graded partial order (PLRank and PA-ListMLE with weights of the position alone,
  stopping at the lowest grade; uRank, PL-Partition, PL-LB; ListNet with gain targets, 0 for the lowest grade)
  see the documents of the lowest grade only through the sum of their e^s: the long query cut to its rated
  documents and one document of score log Σ e^s standing for the rest has the same gradients for the rated ones,
  and by the chain rule each of the rest gets w_d g_m and (h_m - g_m) w_d² + g_m w_d, w_d = e^{s_d} / Σ e^s, from
  that document's g_m and h_m. Short queries' gradients are checked against finite differences elsewhere.
- LambdaLoss at mu = 0 and uMart with window 1 against LightGBM's lambdarank written out in NumPy over the pairs
  of its truncation level, and against LightGBM itself, bit for bit, on a query at its limit.
- ListNet against the softmax difference, YetiRank without noise against its neighbouring pairs in NumPy.
"""

import lightgbm as lgb
import numpy as np
import pytest
from scipy.special import logsumexp

from plboost.data import RankingData
from plboost.engines import train
from plboost.metrics import ndcg
from plboost.objectives import (OBJECTIVES, LambdaLoss, ListNet, PLLowerBound, PLPartition, PLRank,
                                PositionAwareListMLE, UMart, URank, YetiRank)

LONG = 30_000


def long_query(seed, n=LONG, spread=1.0, rated=20, grades=3):
    """One query of ``n`` documents, ``rated`` of them with grades 1..``grades`` (the rest 0), scores normal times
    ``spread``."""
    rng = np.random.default_rng(seed)
    labels = np.zeros(n)
    labels[rng.choice(n, size=rated, replace=False)] = rng.integers(1, grades + 1, size=rated)
    return spread * rng.normal(size=n), labels


def cut_to_rated(scores, labels):
    """The rated documents of the query and one of score log Σ e^s for those of the lowest grade, with each of
    those's share w_d of that sum."""
    rest = labels == labels.min()
    merged = logsumexp(scores[rest])
    return (np.append(scores[~rest], merged), np.append(labels[~rest], labels.min()), rest,
            np.exp(scores[rest] - merged))


@pytest.mark.parametrize("objective", [
    PLRank(stop_at_lowest_grade=True, hessian_floor=0.0), URank(hessian_floor=0.0),
    PLPartition(hessian_floor=0.0), PLLowerBound(hessian_floor=0.0),
    PositionAwareListMLE(position_weights="dcg", stop_at_lowest_grade=True, hessian_floor=0.0),
    ListNet(target="gain", hessian_floor=0.0)], ids=lambda o: type(o).__name__)
@pytest.mark.parametrize("seed, spread", [(0, 1.0), (1, 4.0), (2, 25.0)])
def test_plackett_luce_losses_of_a_long_query_are_its_cut_to_the_rated_documents(objective, seed, spread):
    # distinct grades: no tie among the rated ones to break at random
    distinct = isinstance(objective, (PLRank, PositionAwareListMLE))
    scores, labels = long_query(seed, spread=spread, rated=8 if distinct else 20)
    if distinct:
        labels[labels > 0] = np.arange(1, 9)
    g, h = objective.gradients(scores, labels, np.array([0, LONG]))
    cut_scores, cut_labels, rest, share = cut_to_rated(scores, labels)
    cut_g, cut_h = objective.gradients(cut_scores, cut_labels, np.array([0, cut_scores.size]))
    g_m, h_m = cut_g[-1], cut_h[-1]
    # float32, as the engines take them: a few units in the last place
    np.testing.assert_allclose(g[~rest], cut_g[:-1], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(h[~rest], cut_h[:-1], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(g[rest], g_m * share, rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(h[rest], (h_m - g_m) * share ** 2 + g_m * share, rtol=1e-6, atol=1e-30)
    assert g_m > 0 and np.isfinite(g).all() and np.isfinite(h).all()


def lambdarank_reference(scores, labels, truncation=30, sigmoid=1.0):
    """LightGBM's lambdarank gradients and hessians of one query, as its documentation and paper state them: the
    pairs of a document among the first ``truncation`` by score with every document below it and another label,
    |ΔNDCG@truncation| of their swap divided by 0.01 + |s_i - s_j|, logistic in σ(s_i - s_j), and the query's
    sums scaled by log2(1 + S) / S, S the sum of |λ|."""
    n = scores.size
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], labels[order]
    gain = 2.0 ** y - 1.0
    discount = 1.0 / np.log2(2.0 + np.arange(n))
    ideal = np.sort(gain)[::-1][:truncation]
    inverse_max_dcg = 1.0 / np.sum(ideal * discount[:ideal.size])
    lambdas, hessians = np.zeros(n), np.zeros(n)
    total = 0.0
    for i in range(min(truncation, n - 1)):
        j = np.arange(i + 1, n)
        high_first = y[i] > y[j]
        keep = y[i] != y[j]
        high, low = np.where(high_first, i, j)[keep], np.where(high_first, j, i)[keep]
        delta = s[high] - s[low]
        weight = (gain[high] - gain[low]) * np.abs(discount[high] - discount[low]) * inverse_max_dcg
        weight /= 0.01 + np.abs(delta)
        p = 1.0 / (1.0 + np.exp(sigmoid * delta))
        lam = -sigmoid * weight * p
        hes = sigmoid ** 2 * weight * p * (1.0 - p)
        np.add.at(lambdas, high, lam)
        np.add.at(lambdas, low, -lam)
        np.add.at(hessians, high, hes)
        np.add.at(hessians, low, hes)
        total -= 2.0 * lam.sum()
    if total > 0:
        lambdas *= np.log2(1.0 + total) / total
        hessians *= np.log2(1.0 + total) / total
    grad, hess = np.empty(n), np.empty(n)
    grad[order], hess[order] = lambdas, hessians
    return grad, hess


@pytest.mark.parametrize("objective", [LambdaLoss(mu=0.0, hessian_floor=0.0), UMart(window=1, hessian_floor=0.0)],
                         ids=["LambdaLoss(mu=0)", "UMart(window=1)"])
@pytest.mark.parametrize("seed, spread, rated", [(3, 1.0, 3000), (4, 10.0, 40)])
def test_lambdarank_of_a_long_query_is_lightgbms_pairs_written_out(objective, seed, spread, rated):
    scores, labels = long_query(seed, spread=spread, rated=rated, grades=4)
    g, h = objective.gradients(scores, labels, np.array([0, LONG]))
    ref_g, ref_h = lambdarank_reference(scores, labels)
    # float32 sums: what is below a millionth of the largest is a rounding error of the engine's sums anyway
    np.testing.assert_allclose(g, ref_g, rtol=1e-5, atol=1e-9 * np.abs(ref_g).max())
    np.testing.assert_allclose(h, ref_h, rtol=1e-5, atol=1e-9 * np.abs(ref_h).max())
    assert np.count_nonzero(g) > 30  # the pairs reach below the truncation level


def test_listnet_of_a_long_query_is_the_softmax_difference():
    scores, labels = long_query(5, spread=3.0, rated=500, grades=4)
    g, h = ListNet(hessian_floor=0.0).gradients(scores, labels, np.array([0, LONG]))
    p = np.exp(scores - logsumexp(scores))
    target = np.exp(labels - logsumexp(labels))
    np.testing.assert_allclose(g, p - target, rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(h, p * (1 - p), rtol=1e-6, atol=1e-30)


@pytest.mark.parametrize("decay", [0.85, 0.97])
def test_yetirank_without_noise_on_a_long_query_is_its_neighbouring_pairs(decay):
    """Its neighbouring pairs in NumPy: all of those whose weight decay^t is at least 2^-52 of the first's, and
    within that of the first pair's weight of the sum over them all."""
    scores, labels = long_query(6, spread=2.0, rated=6000, grades=4)
    objective = YetiRank(noise="none", permutations=1, decay=decay, hessian_floor=0.0)
    g, h = objective.gradients(scores, labels, np.array([0, LONG]))
    order = np.argsort(-scores, kind="stable")
    a, b = order[:-1], order[1:]
    higher_first = labels[a] > labels[b]
    high, low = np.where(higher_first, a, b), np.where(higher_first, b, a)
    decays = decay ** np.arange(LONG - 1)
    c = objective.weight_scale * decays * np.abs(labels[a] - labels[b])
    p = 1.0 / (1.0 + np.exp(scores[high] - scores[low]))
    for pairs, tolerance in ((decays >= 2.0 ** -52, 1e-30), (slice(None), 2.0 ** -52 * objective.weight_scale * 4)):
        ref_g, ref_h = np.zeros(LONG), np.zeros(LONG)
        np.add.at(ref_g, high[pairs], -(c * p)[pairs])
        np.add.at(ref_g, low[pairs], (c * p)[pairs])
        np.add.at(ref_h, high[pairs], (c * p * (1 - p))[pairs])
        np.add.at(ref_h, low[pairs], (c * p * (1 - p))[pairs])
        np.testing.assert_allclose(g, ref_g, rtol=1e-6, atol=tolerance)
        np.testing.assert_allclose(h, ref_h, rtol=1e-6, atol=tolerance)
    walked = np.count_nonzero(decays >= 2.0 ** -52) + 1  # 222 + 1 at CatBoost's 0.85
    assert not g[order[walked:]].any() and g[order[:walked]].any()


def _one_query(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)).astype(np.float32)
    labels = np.clip(np.round(X[:, 0] + 0.7 * rng.normal(size=n) + 1), 0, 4)
    return RankingData(X=X, labels=labels, qids=np.zeros(1, dtype=np.int64), offsets=np.array([0, n]))


@pytest.mark.engine
def test_lambdaloss_at_mu_zero_trains_lightgbms_lambdarank_bit_for_bit_at_its_limit():
    data = _one_query(10_000, seed=7)
    dataset = data.to_lightgbm(params={"verbosity": -1}).construct()
    tree = {"num_leaves": 15, "learning_rate": 0.1, "seed": 0, "verbosity": -1}
    builtin = lgb.train({"objective": "lambdarank", **tree}, dataset, 4)
    ours = lgb.train({"objective": LambdaLoss(mu=0.0, lightgbm_arithmetic=True, hessian_floor=0.0), **tree},
                     dataset, 4)
    np.testing.assert_array_equal(ours.predict(data.X, raw_score=True), builtin.predict(data.X, raw_score=True))


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_every_objective_trains_a_query_longer_than_lambdaranks_limit(engine):
    """On XGBoost with min_child_weight lowered from its 1, a hessian sum that listwise objectives' hessians reach
    over about one query (tests/engines/test_training.py)."""
    data = _one_query(LONG, seed=8)
    if engine == "lightgbm":
        with pytest.raises(ValueError, match="takes queries of at most 10000 documents, and query 0 .* has 30000"):
            train("lightgbm", "lambdarank", data, rounds=1)
        with pytest.raises(lgb.basic.LightGBMError, match="exceeds upper limit of 10000"):
            lgb.train({"objective": "lambdarank", "verbosity": -1}, data.to_lightgbm(), 1)
    start = ndcg(np.zeros(data.n_docs), data.labels, offsets=data.offsets, k=10)
    params = {"min_child_weight": 1e-3} if engine == "xgboost" else {}
    for name, cls in OBJECTIVES.items():
        model = train(engine, cls(), data, rounds=3, num_leaves=7, learning_rate=0.3, engine_params=params)
        scores = model.predict(data.X)
        assert np.isfinite(scores).all(), name
        assert ndcg(scores, data.labels, offsets=data.offsets, k=10) > start, name


@pytest.mark.parametrize("make", [lambda **p: LambdaLoss(**p), lambda **p: LambdaLoss(preset="loss", **p),
                                  lambda **p: UMart(window=1, **p), lambda **p: UMart(preset="paper", **p)],
                         ids=["LambdaLoss", "LambdaLoss(loss)", "UMart", "UMart(paper)"])
def test_every_pair_of_a_long_query_is_warned_about_and_a_truncation_level_is_not(make, monkeypatch):
    """A query over 10,000 documents with every pair in it (truncation None: ``preset="loss"``, ``"paper"``)
    costs n²/2 pairs a round: a warning names the setting; any truncation level keeps it quiet. (At a length
    of 300 for the test's time: the pairs of 10,000 documents take seconds.)"""
    import warnings

    from plboost.objectives import _lambdamart

    assert _lambdamart.ALL_PAIRS_WARNING_LENGTH == 10_000
    monkeypatch.setattr(_lambdamart, "ALL_PAIRS_WARNING_LENGTH", 300)
    scores, labels = long_query(9, n=1_200, rated=30)
    offsets = np.array([0, 200, 1_200])
    with pytest.warns(UserWarning, match=r"lambdarank_truncation_level=None pairs every document .* 1,000 "
                                         r"documents, 5e\+05 pairs a round"):
        make(lambdarank_truncation_level=None).gradients(scores, labels, offsets)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # not the interpreted hashes' overflow
        make(lambdarank_truncation_level=50).gradients(scores, labels, offsets)
        make(lambdarank_truncation_level=None).gradients(scores[:300], labels[:300], np.array([0, 300]))
    if make().lambdarank_truncation_level is None:  # the preset's own
        with pytest.warns(UserWarning, match="lambdarank_truncation_level=None"):
            make().gradients(scores, labels, offsets)
