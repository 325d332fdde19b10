"""Properties every objective and metric keeps on random queries (hypothesis).

Queries of 1-200 documents, labels 0-30 with ties, scores from -1e4 to 1e4, queries whose labels are all
equal, queries of one document: outputs are finite, gradients sum to zero per query (every objective is
invariant to adding a constant to a query's scores), hessians are at least the floor, permuting the
documents of a query permutes the outputs (where no random tie-breaking or tied scores are involved),
and NDCG and ERR lie in [0, 1].
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plboost import metrics
from plboost.objectives import PLLowerBound, PLPartition, PLRank, UMart, URank

OBJECTIVES = {
    "plrank": lambda: PLRank(top_k=10, n_permutations=3, seed=1),
    "plrank_full": lambda: PLRank(top_k=None, n_permutations=2, skip_uniform_queries=False),
    "urank": URank,
    "umart_1": lambda: UMart(window=1),
    "umart_3": lambda: UMart(window=3, lambdarank_truncation_level=None),
    "umart_paper": lambda: UMart(preset="paper"),
    "pl_partition": PLPartition,
    "pl_lb": PLLowerBound,
}
FLOOR = 1e-6


@st.composite
def ranking_batches(draw, max_queries=4, max_size=200, max_label=30):
    """Flat (scores, labels, offsets) of a few queries with the awkward cases drawn often."""
    n_queries = draw(st.integers(1, max_queries))
    sizes, labels, scores = [], [], []
    for _ in range(n_queries):
        size = draw(st.one_of(st.just(1), st.integers(1, 12), st.integers(1, max_size)))
        top = draw(st.integers(0, max_label))
        kind = draw(st.sampled_from(["mixed", "uniform", "binary"]))
        rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
        if kind == "uniform":
            query_labels = np.full(size, float(top))
        elif kind == "binary":
            query_labels = rng.integers(0, 2, size).astype(float)
        else:
            query_labels = rng.integers(0, top + 1, size).astype(float)
        scale = draw(st.sampled_from([1e-3, 1.0, 30.0, 1e4]))
        query_scores = rng.uniform(-scale, scale, size)
        if draw(st.booleans()):
            query_scores = np.round(query_scores, 0 if scale >= 1 else 3)  # tied scores
        sizes.append(size)
        labels.append(query_labels)
        scores.append(query_scores)
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    return np.concatenate(scores), np.concatenate(labels), offsets


@pytest.mark.parametrize("name", sorted(OBJECTIVES))
@settings(max_examples=25, deadline=None)
@given(batch=ranking_batches())
def test_objectives_are_finite_zero_sum_and_floored(name, batch):
    scores, labels, offsets = batch
    grad, hess = OBJECTIVES[name]().gradients(scores, labels, offsets)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    assert np.all(hess >= np.float32(FLOOR))
    sums = np.add.reduceat(grad.astype(np.float64), offsets[:-1])
    scale = np.maximum(1.0, np.add.reduceat(np.abs(grad.astype(np.float64)), offsets[:-1]))
    np.testing.assert_array_less(np.abs(sums), 1e-5 * scale)


def _permute_within_queries(offsets, rng):
    order = np.arange(offsets[-1])
    for lo, hi in zip(offsets[:-1], offsets[1:]):
        order[lo:hi] = lo + rng.permutation(hi - lo)
    return order


@pytest.mark.parametrize("name", ["urank", "umart_1", "umart_3", "pl_partition", "pl_lb", "plrank"])
@settings(max_examples=20, deadline=None)
@given(batch=ranking_batches(max_size=60), seed=st.integers(0, 1000))
def test_objectives_follow_a_permutation_of_the_documents(name, batch, seed):
    """Outputs move with their documents. Scores are made distinct (uMart orders by score, ties by input
    order); for PLRank labels are made distinct too (its tie-breaking is drawn from the query's labels
    in input order, so permuting tied documents draws another tie-breaking)."""
    scores, labels, offsets = batch
    rng = np.random.default_rng(seed)
    scores = scores + rng.uniform(0, 1e-3, scores.size) * np.maximum(1.0, np.abs(scores))
    if name == "plrank":
        labels = np.concatenate([rng.permutation(hi - lo).astype(float) for lo, hi in zip(offsets[:-1], offsets[1:])])
    order = _permute_within_queries(offsets, rng)
    obj = OBJECTIVES[name]()
    grad, hess = obj.gradients(scores, labels, offsets)
    moved_grad, moved_hess = OBJECTIVES[name]().gradients(scores[order], labels[order], offsets)
    np.testing.assert_allclose(moved_grad, grad[order], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(moved_hess, hess[order], rtol=1e-5, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(batch=ranking_batches(max_queries=6))
def test_metrics_lie_in_the_unit_interval(batch):
    scores, labels, offsets = batch
    for policy in ("one", "zero", "exclude"):
        values = metrics.evaluate(scores, labels, offsets=offsets, ndcg_at=(1, 5, 10), err_at=(1, 10),
                                  g_max=30, no_relevant=policy, per_query=True)
        for name, column in values.items():
            if name == "conventions":
                continue
            finite = column[~np.isnan(column)]
            assert np.all((finite >= 0.0) & (finite <= 1.0 + 1e-12)), name
            if policy != "exclude":
                assert not np.isnan(column).any(), name


@settings(max_examples=40, deadline=None)
@given(batch=ranking_batches(max_queries=6), seed=st.integers(0, 1000))
def test_metrics_ignore_the_order_of_documents_with_distinct_scores(batch, seed):
    scores, labels, offsets = batch
    rng = np.random.default_rng(seed)
    scores = rng.permutation(scores.size).astype(float)  # distinct scores
    order = _permute_within_queries(offsets, rng)
    first = metrics.evaluate(scores, labels, offsets=offsets, g_max=30, per_query=True)
    second = metrics.evaluate(scores[order], labels[order], offsets=offsets, g_max=30, per_query=True)
    for name in first:
        if name != "conventions":
            np.testing.assert_allclose(first[name], second[name], rtol=1e-12, atol=1e-15, err_msg=name)
