"""Tests for plboost.metrics: parity with LightGBM and gdeval on MQ2008, hand-derived values, invariances."""

import dataclasses
import functools
import gzip
import itertools
import json
import os
import pkgutil
import re
import subprocess
import sys
from fractions import Fraction
from functools import cache
from pathlib import Path
from types import SimpleNamespace

import lightgbm as lgb
import numpy as np
import pytest

from plboost._queries import offsets_from_qids
from plboost import metrics
from plboost.metrics import Conventions, average_precision, err, evaluate, mean_average_precision, ndcg

REPO = Path(__file__).resolve().parents[1]
MQ2008 = REPO.parent / "shared" / "data" / "MQ2008"
needs_mq2008 = pytest.mark.skipif(not MQ2008.is_dir(), reason="MQ2008 not found in ../shared/data")
KS = (1, 3, 5, 10)


@cache
def _read_mq2008(*names):
    """Labels, query offsets and query ids of MQ2008 files (features are not needed here)."""
    labels, qids = [], []
    for name in names:
        with gzip.open(MQ2008 / name, "rt") as f:
            for line in f:
                label, qid = line.split(maxsplit=2)[:2]
                labels.append(int(label))
                qids.append(int(qid.removeprefix("qid:")))
    offsets, query_ids = offsets_from_qids(np.array(qids))
    return np.array(labels, dtype=np.float64), offsets, query_ids


def _mq2008_scores(labels, seed, ties):
    scores = np.random.default_rng(seed).uniform(size=labels.size)
    return np.round(scores, 1) if ties else scores


def _random_queries(rng, n_queries=200, max_size=40):
    """Group sizes and labels 0..4 of random queries; about one in 40 has no relevant document."""
    group = rng.integers(1, max_size, n_queries)
    labels = rng.integers(0, 5, group.sum()).astype(np.float64)
    return group, labels


def _reverse_within_queries(offsets):
    """Row permutation that reverses each query, so tied scores meet in the opposite order."""
    sizes = np.diff(offsets)
    starts, ends = np.repeat(offsets[:-1], sizes), np.repeat(offsets[1:], sizes)
    return starts + ends - 1 - np.arange(offsets[-1])


def _has_query_without_relevant(labels, offsets):
    return bool((np.maximum.reduceat(labels, offsets[:-1]) == 0).any())


# --- LightGBM's built-in metrics -------------------------------------------------------------------------------

def _lightgbm_metrics(scores, labels, offsets, eval_at):
    """LightGBM's own ``ndcg@k`` and ``map@k`` of ``scores``.

    One boosting round with zero gradients and unit hessians adds a tree whose leaves are 0, so the
    validation set's scores stay its ``init_score``: LightGBM evaluates exactly ``scores``.
    """
    def zero_gradients(preds, dataset):
        return np.zeros_like(preds), np.ones_like(preds)

    features = np.random.default_rng(0).normal(size=(labels.size, 1))
    group = np.diff(offsets)
    train = lgb.Dataset(features, label=labels, group=group)
    valid = lgb.Dataset(features, label=labels, group=group, init_score=scores, reference=train)
    history = {}
    booster = lgb.train({"objective": zero_gradients, "metric": ["ndcg", "map"], "eval_at": list(eval_at),
                         "verbose": -1}, train, num_boost_round=1, valid_sets=[valid], valid_names=["valid"],
                        callbacks=[lgb.record_evaluation(history)])
    assert np.all(booster.predict(features) == 0.0)
    return {name: values[-1] for name, values in history["valid"].items()}


@pytest.mark.engine
@needs_mq2008
@pytest.mark.parametrize("ties", [False, True], ids=["random", "tied"])
@pytest.mark.parametrize("split", ["test", "vali"])
def test_ndcg_and_map_match_lightgbm(split, ties):
    labels, offsets, _ = _read_mq2008(f"Fold1/{split}.txt.gz")
    assert _has_query_without_relevant(labels, offsets)  # so the "one" policy is exercised
    scores = _mq2008_scores(labels, seed=1, ties=ties)
    whole = int(np.diff(offsets).max())  # LightGBM's map@k divides by min(#relevant, k): AP when k >= n
    expected = _lightgbm_metrics(scores, labels, offsets, (*KS, whole))

    ours = evaluate(scores, labels, offsets=offsets, ndcg_at=(*KS, whole), err_at=(), whole_err=False,
                    no_relevant="one")
    for k in (*KS, whole):
        assert ours[f"NDCG@{k}"] == pytest.approx(expected[f"ndcg@{k}"], rel=0, abs=1e-9), k
    assert ours["MAP"] == pytest.approx(expected[f"map@{whole}"], rel=0, abs=1e-9)
    assert ndcg(scores, labels, offsets=offsets, k=10, no_relevant="zero") < expected["ndcg@10"] - 1e-3


@pytest.mark.engine
@needs_mq2008
def test_lightgbm_breaks_ties_by_input_order():
    labels, offsets, _ = _read_mq2008("Fold1/test.txt.gz")
    scores = _mq2008_scores(labels, seed=2, ties=True)
    expected = _lightgbm_metrics(scores, labels, offsets, KS)
    reverse = _reverse_within_queries(offsets)
    for k in KS:
        input_order = ndcg(scores, labels, offsets=offsets, k=k)
        reversed_order = ndcg(scores[reverse], labels[reverse], offsets=offsets, k=k)
        assert input_order == pytest.approx(expected[f"ndcg@{k}"], rel=0, abs=1e-9)
        assert abs(reversed_order - expected[f"ndcg@{k}"]) > 1e-4


# --- gdeval (TREC Web track script) through ir-measures ----------------------------------------------------------

def _gdeval(scores, labels, offsets, query_ids, ks):
    """gdeval's per-query ``nDCG(dcg="exp-log2")@k`` and ``ERR@k``, keyed by (query id, measure name).

    gdeval breaks tied scores by docno, descending; docnos ``N - i`` (zero-padded) make that the input order.
    Through ir-measures, queries without relevant documents (which gdeval omits) come back as 0.
    """
    import ir_measures
    from ir_measures import ERR, nDCG

    n_docs = labels.size
    query_of_doc = np.repeat(query_ids, np.diff(offsets)).astype(str)
    qrels, run = {}, {}
    for i, (qid, label, score) in enumerate(zip(query_of_doc, labels, scores, strict=True)):
        docno = f"{n_docs - i:08d}"
        qrels.setdefault(qid, {})[docno] = int(label)
        run.setdefault(qid, {})[docno] = float(score)
    measures = [measure for k in ks for measure in (nDCG(dcg="exp-log2") @ k, ERR @ k)]
    evaluator = ir_measures.gdeval.evaluator(measures, qrels)
    return {(metric.query_id, str(metric.measure)): metric.value for metric in evaluator.iter_calc(run)}


def _full_precision_gdeval(monkeypatch):
    """Make gdeval print 16 significant digits instead of 5; its logic is unchanged."""
    from ir_measures.providers import gdeval_provider

    def get_data(package, resource):
        script = pkgutil.get_data(package, resource)
        assert script.count(b"%.5f") == 2
        return script.replace(b"%.5f", b"%.15e")

    monkeypatch.setattr(gdeval_provider, "pkgutil", SimpleNamespace(get_data=get_data))


def _compare_with_gdeval(scores, labels, offsets, query_ids, atol):
    oracle = _gdeval(scores, labels, offsets, query_ids, KS)
    ours = evaluate(scores, labels, offsets=offsets, ndcg_at=KS, err_at=KS, whole_err=False, map=False,
                    no_relevant="zero", g_max=4, per_query=True)
    qids = query_ids.astype(str)
    for k in KS:
        for ours_name, gdeval_name in ((f"NDCG@{k}", f"nDCG(dcg='exp-log2')@{k}"), (f"ERR@{k}", f"ERR@{k}")):
            expected = [oracle[qid, gdeval_name] for qid in qids]
            np.testing.assert_allclose(ours[ours_name], expected, rtol=0, atol=atol, err_msg=ours_name)
    return oracle


MQ2008_TEST_FOLDS = tuple(f"Fold{i}/test.txt.gz" for i in range(1, 6))


@needs_mq2008
def test_matches_stock_gdeval():
    labels, offsets, query_ids = _read_mq2008(*MQ2008_TEST_FOLDS)
    assert query_ids.size == 784 and _has_query_without_relevant(labels, offsets)
    scores = _mq2008_scores(labels, seed=3, ties=False)
    _compare_with_gdeval(scores, labels, offsets, query_ids, atol=6e-6)  # gdeval prints %.5f


@needs_mq2008
@pytest.mark.parametrize("ties", [False, True], ids=["random", "tied"])
def test_matches_full_precision_gdeval(ties, monkeypatch):
    _full_precision_gdeval(monkeypatch)
    labels, offsets, query_ids = _read_mq2008(*MQ2008_TEST_FOLDS)
    scores = _mq2008_scores(labels, seed=4, ties=ties)
    oracle = _compare_with_gdeval(scores, labels, offsets, query_ids, atol=1e-9)
    if ties:  # the tied case does test tie-breaking: the opposite order disagrees with gdeval
        reverse = _reverse_within_queries(offsets)
        reversed_order = ndcg(scores[reverse], labels[reverse], offsets=offsets, k=10, no_relevant="zero",
                              per_query=True)
        expected = np.array([oracle[qid, "nDCG(dcg='exp-log2')@10"] for qid in query_ids.astype(str)])
        assert np.abs(reversed_order - expected).max() > 1e-3


# --- hand-derived values ---------------------------------------------------------------------------------------

def test_ndcg_hand_computed():
    # Ranked labels 2, 0, 1.  Exp gain: DCG@3 = 3/log2(2) + 0 + 1/log2(4) = 3.5, IDCG@3 = 3 + 1/log2(3).
    # Linear gain: DCG@3 = 2 + 0 + 1/2 = 2.5, IDCG@3 = 2 + 1/log2(3).  At k = 1 both orderings start with the 2.
    scores, labels = [0.9, 0.5, 0.1], [2, 0, 1]
    assert ndcg(scores, labels, group=[3], k=1) == 1.0
    assert ndcg(scores, labels, group=[3], k=3) == pytest.approx(3.5 / (3 + 1 / np.log2(3)), rel=1e-15)
    assert ndcg(scores, labels, group=[3], k=3, gain="linear") == pytest.approx(2.5 / (2 + 1 / np.log2(3)),
                                                                               rel=1e-15)


def test_err_hand_computed():
    # g_max = 2, ranked labels 2, 1, 0, 2: stop probabilities R = 3/4, 1/4, 0, 3/4.
    # ERR = 1 * 3/4 + (1/2)(1/4)(1/4) + (1/3)(3/16)(0) + (1/4)(3/16)(3/4)
    #     = 192/256 + 8/256 + 0 + 9/256 = 209/256;  ERR@2 = 3/4 + 1/32 = 25/32.
    scores, labels = [4.0, 3.0, 2.0, 1.0], [2, 1, 0, 2]
    assert err(scores, labels, group=[4], g_max=2) == pytest.approx(209 / 256, rel=1e-15)
    assert err(scores, labels, group=[4], k=2, g_max=2) == pytest.approx(25 / 32, rel=1e-15)
    # With g_max = 4 the label-2 document stops a user with probability 3/16 only.
    assert err(scores, labels, group=[4], k=1, g_max=4) == pytest.approx(3 / 16, rel=1e-15)


def test_map_hand_computed():
    # Query 1, ranked labels 1, 0, 1, 0, 2: relevant (label >= 1) at ranks 1, 3, 5 with precisions
    # 1/1, 2/3, 3/5, so AP = (1 + 2/3 + 3/5) / 3 = 34/45.  Query 2, ranked labels 0, 0, 1: AP = (1/3) / 1.
    # MAP = (34/45 + 15/45) / 2 = 49/90.  With relevant_min = 2 query 1 has one relevant document, at rank 5
    # (AP = 1/5), and query 2 none, so it scores 1 under the default policy.
    scores = [5.0, 4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0]
    labels = [1, 0, 1, 0, 2, 0, 0, 1]
    np.testing.assert_allclose(average_precision(scores, labels, group=[5, 3]), [34 / 45, 1 / 3], rtol=1e-15)
    assert mean_average_precision(scores, labels, group=[5, 3]) == pytest.approx(49 / 90, rel=1e-15)
    np.testing.assert_allclose(average_precision(scores, labels, group=[5, 3], relevant_min=2), [1 / 5, 1.0],
                               rtol=1e-15)


def test_no_relevant_policies():
    # Query 0 has no relevant document; query 1 ranks its relevant document first, query 2 second.
    # NDCG: q1 = 1, q2 = (1/log2 3) / 1.  ERR (g_max 4, R = 1/16): q1 = 1/16, q2 = (1/2)(1/16).  AP: 1 and 1/2.
    scores = [2.0, 1.0, 2.0, 1.0, 2.0, 1.0]
    labels = [0, 0, 1, 0, 0, 1]
    group = [2, 2, 2]
    q2 = 1 / np.log2(3)
    for policy, first, first_err in (("one", 1.0, 0.0), ("zero", 0.0, 0.0), ("exclude", np.nan, np.nan)):
        result = evaluate(scores, labels, group=group, ndcg_at=(10,), err_at=(), no_relevant=policy, per_query=True,
                          g_max=4)
        np.testing.assert_allclose(result["NDCG@10"], [first, 1.0, q2], rtol=1e-15)
        np.testing.assert_allclose(result["ERR"], [first_err, 1 / 16, 1 / 32], rtol=1e-15)
        np.testing.assert_allclose(result["MAP"], [first, 1.0, 0.5], rtol=1e-15)
    assert ndcg(scores, labels, group=group, no_relevant="one") == pytest.approx((1 + 1 + q2) / 3, rel=1e-15)
    assert ndcg(scores, labels, group=group, no_relevant="zero") == pytest.approx((0 + 1 + q2) / 3, rel=1e-15)
    assert ndcg(scores, labels, group=group, no_relevant="exclude") == pytest.approx((1 + q2) / 2, rel=1e-15)
    err_of = functools.partial(err, scores, labels, group=group, g_max=4)
    assert err_of(no_relevant="one") == pytest.approx((1 / 16 + 1 / 32) / 3, rel=1e-15)
    assert err_of(no_relevant="exclude") == pytest.approx((1 / 16 + 1 / 32) / 2, rel=1e-15)
    assert np.isnan(ndcg([1.0], [0], group=[1], no_relevant="exclude"))


def test_ties_keep_input_order():
    assert ndcg([1.0, 1.0], [0, 1], group=[2], k=1) == 0.0
    assert ndcg([1.0, 1.0], [1, 0], group=[2], k=1) == 1.0
    assert err([0.5, 0.5, 0.5], [0, 0, 4], group=[3], k=2) == 0.0


# --- invariances and properties ----------------------------------------------------------------------------------

def test_ideal_ordering_is_best():
    rng = np.random.default_rng(5)
    group, labels = _random_queries(rng)
    scores = rng.normal(size=labels.size)
    for k in (1, 3, 10, 1000):
        ideal = ndcg(labels, labels, group=group, k=k, no_relevant="exclude", per_query=True)
        defined = ~np.isnan(ideal)
        assert defined.sum() > 150
        np.testing.assert_allclose(ideal[defined], 1.0, rtol=1e-14)
        ranked = ndcg(scores, labels, group=group, k=k, no_relevant="exclude", per_query=True)
        assert np.all(ranked[defined] <= 1.0 + 1e-14) and np.any(ranked[defined] < 0.99)
        # ERR is largest when documents are sorted by decreasing stop probability, i.e. by label.
        k_err = None if k == 1000 else k
        assert np.all(err(scores, labels, group=group, k=k_err, per_query=True)
                      <= err(labels, labels, group=group, k=k_err, per_query=True) + 1e-15)
    np.testing.assert_allclose(average_precision(labels, labels, group=group), 1.0, rtol=1e-15)


@pytest.mark.parametrize("gain", ["exp", "linear"])
def test_values_lie_in_unit_interval(gain):
    rng = np.random.default_rng(6)
    group, labels = _random_queries(rng)
    scores = np.round(rng.normal(size=labels.size), 1)
    result = evaluate(scores, labels, group=group, gain=gain, per_query=True)
    for name, values in result.items():
        if name != "conventions":
            assert np.all((values >= 0.0) & (values <= 1.0)), name
    assert np.any(result["ERR"] > 0.5) and np.any(result["NDCG@10"] < 0.5)


def _exact_ndcg_and_err(scores, labels, k, g_max):
    """NDCG@k and ERR@k of one query in exact rational arithmetic: gains 2^y - 1 as Python integers, however large
    y is, and each discount the float 1 / log2(1 + r) taken exactly."""
    ranked = [int(y) for _, y in sorted(zip(-np.asarray(scores), labels, strict=True), key=lambda pair: pair[0])]
    discounts = [Fraction(1.0 / np.log2(r + 2.0)) for r in range(len(ranked))]
    dcg = sum((2 ** y - 1) * d for y, d in zip(ranked[:k], discounts, strict=False))
    ideal = sum((2 ** y - 1) * d for y, d in zip(sorted(ranked, reverse=True)[:k], discounts, strict=False))
    total, reach = Fraction(0), Fraction(1)
    for r, y in enumerate(ranked[:k]):
        stop = Fraction(2 ** y - 1, 2 ** g_max)
        total, reach = total + reach * stop / (r + 1), reach * (1 - stop)
    return float(dcg / ideal), float(total)


@pytest.mark.parametrize("labels", [[1031, 0, 1, 0, 1031], [0, 4000, 3999, 7], [1500, 2, 0, 1200, 1023]])
def test_gains_beyond_float64s_range_give_the_exact_ndcg_and_err(labels):
    """2^y is infinite in float64 from y = 1024 on; NDCG and ERR are still the ratios they are, not 1 and 0."""
    scores = np.array([0.3, 0.8, -0.1, 0.5, 0.05][:len(labels)])
    g_max = max(labels)
    for k in (2, 10):
        expected_ndcg, expected_err = _exact_ndcg_and_err(scores, labels, k, g_max)
        assert ndcg(scores, labels, group=[len(labels)], k=k) == pytest.approx(expected_ndcg, rel=1e-12)
        assert err(scores, labels, group=[len(labels)], k=k) == pytest.approx(expected_err, rel=1e-12)
        result = evaluate(scores, labels, group=[len(labels)], ndcg_at=(k,), err_at=(k,))
        assert result[f"NDCG@{k}"] == pytest.approx(expected_ndcg, rel=1e-12)
        assert result[f"ERR@{k}"] == pytest.approx(expected_err, rel=1e-12)
    assert 0.0 < ndcg(scores, labels, group=[len(labels)], k=10, gain="linear") < 1.0


def test_shifting_and_scaling_scores_changes_nothing():
    rng = np.random.default_rng(7)
    group, labels = _random_queries(rng)
    scores = rng.integers(0, 20, labels.size).astype(np.float64)  # integers: shifts are exact, ties stay ties
    before = evaluate(scores, labels, group=group, per_query=True)
    for transformed in (scores + 1000.0, 3.0 * scores - 7.0):
        after = evaluate(transformed, labels, group=group, per_query=True)
        for name in before:
            np.testing.assert_array_equal(after[name], before[name], err_msg=name)


def test_shuffling_within_queries_changes_nothing_without_ties():
    rng = np.random.default_rng(8)
    group, labels = _random_queries(rng)
    scores = rng.permutation(labels.size).astype(np.float64)
    offsets = np.concatenate([[0], np.cumsum(group)])
    shuffle = np.concatenate([rng.permutation(np.arange(a, b)) for a, b in itertools.pairwise(offsets)])
    assert np.any(shuffle != np.arange(labels.size))
    before = evaluate(scores, labels, offsets=offsets, per_query=True)
    after = evaluate(scores[shuffle], labels[shuffle], offsets=offsets, per_query=True)
    for name in before:
        if name != "conventions":
            np.testing.assert_allclose(after[name], before[name], rtol=1e-14, err_msg=name)


def test_k_beyond_query_length_uses_whole_query():
    rng = np.random.default_rng(9)
    group, labels = _random_queries(rng, max_size=10)
    scores = rng.normal(size=labels.size)
    longest = int(group.max())
    assert ndcg(scores, labels, group=group, k=10**6) == ndcg(scores, labels, group=group, k=longest)
    assert err(scores, labels, group=group, k=10**6) == err(scores, labels, group=group, k=None)
    assert ndcg(scores, labels, group=group, k=longest) != ndcg(scores, labels, group=group, k=1)


def test_offsets_and_group_give_the_same_result():
    rng = np.random.default_rng(10)
    group, labels = _random_queries(rng)
    scores = rng.normal(size=labels.size)
    offsets = np.concatenate([[0], np.cumsum(group)])
    assert ndcg(scores, labels, offsets=offsets) == ndcg(scores, labels, group=group)
    assert err(scores, labels, offsets=offsets, k=5) == err(scores, labels, group=group, k=5)


def test_per_query_shapes():
    rng = np.random.default_rng(11)
    group, labels = _random_queries(rng, n_queries=37)
    scores = rng.normal(size=labels.size)
    outputs = [ndcg(scores, labels, group=group, per_query=True),
               err(scores, labels, group=group, per_query=True),
               mean_average_precision(scores, labels, group=group, per_query=True),
               average_precision(scores, labels, group=group)]
    result = evaluate(scores, labels, group=group, per_query=True)
    outputs += [v for name, v in result.items() if name != "conventions"]
    for values in outputs:
        assert isinstance(values, np.ndarray) and values.shape == (37,) and values.dtype == np.float64
    assert isinstance(ndcg(scores, labels, group=group), float)


def test_evaluate_matches_the_individual_metrics():
    rng = np.random.default_rng(12)
    group, labels = _random_queries(rng)
    scores = np.round(rng.normal(size=labels.size), 1)
    conventions = dict(no_relevant="exclude", gain="linear")
    result = evaluate(scores, labels, group=group, ndcg_at=(2, 7), err_at=(3,), relevant_min=2, g_max=5,
                      **conventions)
    assert list(result) == ["NDCG@2", "NDCG@7", "ERR@3", "ERR", "MAP", "conventions"]
    assert result["NDCG@7"] == ndcg(scores, labels, group=group, k=7, **conventions)
    assert result["ERR@3"] == err(scores, labels, group=group, k=3, g_max=5, no_relevant="exclude")
    assert result["ERR"] == err(scores, labels, group=group, g_max=5, no_relevant="exclude")
    assert result["MAP"] == mean_average_precision(scores, labels, group=group, relevant_min=2,
                                                   no_relevant="exclude")
    assert result["conventions"] == Conventions(gain="linear", no_relevant="exclude", g_max=5, relevant_min=2)
    assert list(evaluate(scores, labels, group=group, ndcg_at=(), err_at=(), whole_err=False, map=False)) == [
        "conventions"]


def test_err_follows_the_labels_scale_unless_g_max_is_given():
    """One rule at every entry point (issue 40 item 1): metrics.evaluate defaulted to g_max=4 where the command
    used the data's largest label (MQ2008: 2), so one model on one file had ERR@10 0.0951 and 0.2954."""
    scores, labels, group = [2.0, 1.0, 3.0, 0.5], [1, 2, 0, 1], [2, 2]
    result = evaluate(scores, labels, group=group, ndcg_at=(), err_at=(10,))
    assert result["conventions"].g_max == 2 and "g_max=2" in str(result["conventions"])
    assert result["ERR@10"] == pytest.approx(evaluate(scores, labels, group=group, g_max=2)["ERR@10"], rel=1e-15)
    assert err(scores, labels, group=group) == pytest.approx(err(scores, labels, group=group, g_max=2), rel=1e-15)
    # ERR(q0) = 1/4 + (1/2)(3/4)(3/4); ERR(q1) = (1/2)(1/4), with R = (2^y - 1) / 2^2
    assert err(scores, labels, group=group) == pytest.approx((0.53125 + 0.125) / 2, rel=1e-15)
    assert err(scores, labels, group=group, g_max=4) < err(scores, labels, group=group)  # a wider scale
    assert evaluate([1.0, 2.0], [0, 0], group=[2])["conventions"].g_max == 1  # at least 1


def test_conventions_describe_themselves():
    default = str(Conventions())
    for part in ("gain 2^y-1", "discount 1/log2(1+rank)", "count as 1", "LightGBM", "g_max the data's largest label",
                 "label >= 1", "stable sort by score, descending, input order decides"):
        assert part in default
    assert "gain y," in str(Conventions(gain="linear"))
    assert "count as 0 (trec_eval)" in str(Conventions(no_relevant="zero"))
    assert "left out of the means" in Conventions(no_relevant="exclude").describe()
    assert "g_max=5" in str(Conventions(g_max=5))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Conventions().gain = "linear"


# --- validation --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("call, error, message", [
    (lambda: ndcg([1.0, 2.0], [0, 1, 1], group=[3]), ValueError, "expected 3 scores"),
    (lambda: ndcg([1.0, 2.0], [0, 1], group=[3]), ValueError, "sum to 3 but there are 2 documents"),
    (lambda: ndcg([1.0, 2.0], [0, 1], offsets=[0, 1]), ValueError, "end at 1 but there are 2 documents"),
    (lambda: ndcg([1.0, 2.0], [0, 1], offsets=[0, 2], group=[2]), ValueError, "exactly one of offsets="),
    (lambda: ndcg([1.0, 2.0], [0, 1]), ValueError, "exactly one of offsets="),
    (lambda: ndcg([1.0, 2.0], [0, 1], group=[2], k=0), ValueError, "k must be an integer >= 1"),
    (lambda: ndcg([1.0, 2.0], [0, 1], group=[2], k=2.5), TypeError, "k must be an integer"),
    (lambda: ndcg([1.0, 2.0], [0, 1], group=[2], k=True), TypeError, "k must be an integer"),
    (lambda: err([1.0, 2.0], [0, 1], group=[2], k=-1), ValueError, "k must be an integer >= 1"),
    (lambda: evaluate([1.0, 2.0], [0, 1], group=[2], ndcg_at=(5, 0)), ValueError,
     "ndcg_at must be an integer >= 1, got 0"),
    (lambda: ndcg([1.0, 2.0], [0, 1], group=[2], no_relevant="skip"), ValueError,
     "no_relevant must be one of 'one', 'zero', 'exclude', got 'skip'"),
    (lambda: ndcg([1.0, 2.0], [0, 1], group=[2], gain="log"), ValueError, "gain must be one of 'exp', 'linear'"),
    (lambda: err([1.0, 2.0], [0, 5], group=[2], g_max=4), ValueError, "label 5 at position 1 exceeds g_max=4"),
    (lambda: err([1.0, 2.0], [0, 1], group=[2], g_max=0), ValueError, "g_max must be an integer >= 1 or None, got 0"),
    (lambda: mean_average_precision([1.0, 2.0], [0, 1], group=[2], relevant_min=0), ValueError,
     "relevant_min must be an integer >= 1, got 0"),
    (lambda: ndcg([1.0, np.nan], [0, 1], group=[2]), ValueError, "NaN at position 1"),
    (lambda: ndcg([1.0, 2.0], [0, -1], group=[2]), ValueError, "is negative"),
    (lambda: ndcg([1.0, 2.0], [0, 0.5], group=[2]), ValueError, "not a whole number"),
    (lambda: Conventions(ties="random"), ValueError, "ties must be 'input-order', got 'random'"),
])
def test_invalid_inputs_are_refused(call, error, message):
    with pytest.raises(error, match=re.escape(message)):
        call()


# --- kernels: uncompiled, fast, documented ------------------------------------------------------------------------

_SCRIPT = """
import json, numpy as np
from plboost import metrics
assert type(metrics._rank_labels).__name__ == "function", "Numba JIT is not disabled"
rng = np.random.default_rng(13)
group = rng.integers(1, 30, 60)
scores, labels = np.round(rng.normal(size=group.sum()), 1), rng.integers(0, 5, group.sum())
result = metrics.evaluate(scores, labels, group=group, no_relevant="exclude", per_query=True)
print(json.dumps({name: values.tolist() for name, values in result.items() if name != "conventions"}))
"""


def test_kernels_agree_with_numba_jit_disabled():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    completed = subprocess.run([sys.executable, "-c", _SCRIPT], env=env, cwd=REPO, capture_output=True,
                               text=True, check=True)
    interpreted = json.loads(completed.stdout)
    rng = np.random.default_rng(13)
    group = rng.integers(1, 30, 60)
    scores, labels = np.round(rng.normal(size=group.sum()), 1), rng.integers(0, 5, group.sum())
    compiled = evaluate(scores, labels, group=group, no_relevant="exclude", per_query=True)
    assert set(interpreted) == set(compiled) - {"conventions"}
    for name, values in interpreted.items():
        np.testing.assert_allclose(compiled[name], values, rtol=1e-14, err_msg=name)


# --------------------------------------------------------------------------------------------------
# metrics of the user's own (register_metric)

def _precision(ranked_labels, offsets, k):
    """Precision@k written plainly: the share of relevant labels among each query's top k."""
    return np.array([np.mean(ranked_labels[a:b][:k] >= 1) for a, b in itertools.pairwise(offsets)])


def _first_label(ranked_labels, offsets, k):
    """The label ranked first, NaN for a query without a relevant document."""
    return np.array([ranked_labels[a] if ranked_labels[a:b].max() >= 1 else np.nan
                     for a, b in itertools.pairwise(offsets)])


@pytest.fixture
def registered_metrics():
    from plboost.metrics import register_metric, unregister_metric

    yield register_metric
    for metric in metrics.registered_metrics():
        unregister_metric(metric.name)


def test_a_registered_metric_is_reported_by_evaluate_at_every_cutoff(registered_metrics):
    scores, labels, group = [0.9, 0.5, 0.1, 0.3, 0.2], [0, 2, 1, 0, 0], [3, 2]
    registered_metrics("P", _precision, at_cutoffs=True)
    registered_metrics("top_label", _first_label)
    result = evaluate(scores, labels, group=group, ndcg_at=(1, 2), no_relevant="zero")
    assert list(result)[-4:] == ["P@1", "P@2", "top_label", "conventions"]
    assert result["P@1"] == 0.0 and result["P@2"] == 0.25  # query 1: 0/1 and 1/2; query 2: 0 and 0
    assert result["top_label"] == 0.0  # query 1's first label is 0; query 2 has no relevant label: 0 ("zero")
    per_query = evaluate(scores, labels, group=group, ndcg_at=(2,), no_relevant="exclude", per_query=True)
    np.testing.assert_array_equal(per_query["top_label"], [0.0, np.nan])
    assert "P@2" not in evaluate(scores, labels, group=group, registered=False)
    assert metrics.table_metrics(["MAP", "P@2", "NDCG@10", "top_label"]) == ["NDCG@10", "P@2", "top_label"]


def test_registering_refuses_what_would_be_ambiguous_or_wrong(registered_metrics):
    from plboost.metrics import unregister_metric

    registered_metrics("P", _precision, at_cutoffs=True)
    for name, message in (("P", "registered already"), ("NDCG", "built-in"), ("ERR@3", "a name of letters"),
                          ("MAP", "built-in"), ("my metric", "a name of letters"), (3, "a name of letters")):
        with pytest.raises(ValueError, match=message):
            registered_metrics(name, _precision)
    with pytest.raises(ValueError, match="function must be callable"):
        registered_metrics("Q", "precision")
    with pytest.raises(ValueError, match="no metric 'Q' is registered; registered: P"):
        unregister_metric("Q")
    with pytest.raises(ValueError, match=r"metric bad: its function returned shape \(1,\), not one value per query"):
        registered_metrics("bad", lambda ranked, offsets, k: np.zeros(1))
    assert [metric.name for metric in metrics.registered_metrics()] == ["P"]


@pytest.mark.parametrize("function, at_cutoffs, raised", [
    (lambda labels, offsets: labels, False, r"TypeError: .*takes 2 positional arguments but 3 were given"),
    (lambda ranked, offsets, k, extra: ranked, True, r"TypeError: .*missing 1 required positional argument"),
    (lambda ranked, offsets, k: ranked[:, 0], False, r"IndexError: too many indices"),
])
def test_a_metric_that_cannot_be_called_is_refused_when_registered_and_stays_out(registered_metrics, function,
                                                                                  at_cutoffs, raised):
    with pytest.raises(ValueError, match=rf"^metric Wrong: its function\(ranked_labels, offsets, k=(1|None)\) raised "
                                         rf"{raised}.*; not registered$"):
        registered_metrics("Wrong", function, at_cutoffs=at_cutoffs)
    assert metrics.registered_metrics() == ()
    assert "Wrong" not in evaluate([0.3, 0.1, 0.2], [1, 0, 2], group=[3])  # later evaluates are not broken


def test_a_registered_metric_failing_on_some_data_names_itself_and_the_way_out(registered_metrics):
    registered_metrics("Short", lambda ranked, offsets, k: [1.0 / (offsets.size - 4)] * (offsets.size - 1))
    with pytest.raises(ValueError, match=r"^metric Short: its function\(ranked_labels, offsets, k=None\) raised "
                                         r"ZeroDivisionError: .*; fix it, or unregister_metric\('Short'\)$"):
        evaluate([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1], group=[1, 1, 2])


@pytest.mark.compiled_only("counts compiled specialisations")
def test_read_only_inputs_give_the_same_values_and_compile_nothing_more():
    """pandas 3's ``Series.to_numpy()`` is read-only; Numba would compile every metric kernel again for such arrays."""
    rng = np.random.default_rng(21)
    scores, labels, group = rng.normal(size=30), rng.integers(0, 4, size=30).astype(float), [10, 12, 8]
    expected = evaluate(scores, labels, group=group)
    kernels = (metrics._rank_labels_kernel, metrics._ndcg_range, metrics._err_range, metrics._ap_range)
    compiled = [len(kernel.signatures) for kernel in kernels]
    frozen_scores, frozen_labels = scores.copy(), labels.copy()
    frozen_scores.flags.writeable = frozen_labels.flags.writeable = False
    assert evaluate(frozen_scores, frozen_labels, group=group) == expected
    assert [len(kernel.signatures) for kernel in kernels] == compiled
