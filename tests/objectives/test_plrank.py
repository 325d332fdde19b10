"""PLRank against a slow, plainly written reference: the loss, its finite differences, its permutations."""

import itertools

import mpmath
import numpy as np
import pytest
from scipy import stats

from plboost.objectives import PLRank

#: working precision of the references: set per call (mpmath.workdps), not globally at import, so that it
#: does not depend on which test module was imported last
DIGITS = 40
STEP = "1e-12"  # central-difference step of the finite differences below, read at that precision


@mpmath.workdps(DIGITS)
def reference_loss(scores, top_lists):
    """Mean over permutations of the truncated PL negative log-likelihood, in high precision.

    ``top_lists[p]`` is the top-k of permutation p; the context at each step is every document not
    chosen before it (the order of the documents after the top k does not matter).
    """
    total = mpmath.mpf(0)
    for top in top_lists:
        remaining = list(range(len(scores)))
        for doc in top:
            total += mpmath.log(mpmath.fsum(mpmath.exp(scores[d]) for d in remaining)) - scores[doc]
            remaining.remove(doc)
    return total / len(top_lists)


def random_query(rng, n, scale):
    labels = rng.integers(0, 3 if n < 8 else 5, size=n).astype(float)  # small label range: many ties
    scores = rng.normal(scale=scale, size=n)
    return scores, labels


def tops_of(state, query, n_permutations):
    return [state.permutation_top(query, p).tolist() for p in range(n_permutations)]


CASES = [  # (documents, top_k, permutations, score scale)
    (1, 10, 1, 1.0), (2, 1, 2, 1.0), (3, None, 3, 1.0), (5, 3, 2, 10.0), (7, 10, 3, 1.0),
    (12, 5, 3, 1e4), (20, 10, 1, 3.0), (33, None, 2, 1.0), (45, 10, 3, 1e4), (60, 10, 2, 1.0),
    (60, 60, 1, 30.0),
]


@pytest.mark.interpreted_once
@pytest.mark.parametrize("compress", [True, False])
@pytest.mark.parametrize("n, top_k, n_perm, scale", CASES)
def test_gradient_and_hessian_match_finite_differences(n, top_k, n_perm, scale, compress, central_differences):
    rng = np.random.default_rng([n, n_perm, int(scale)])
    scores, labels = random_query(rng, n, scale)
    labels[0] = labels.max() + 1  # at least two distinct labels, so the query is not skipped
    obj = PLRank(top_k=top_k, n_permutations=n_perm, seed=7, compress_contexts=compress)
    offsets = np.array([0, n])
    grad, hess = obj.gradients(scores, labels, offsets)
    tops = tops_of(obj.state(labels, offsets), 0, n_perm)
    fd_grad, fd_hess, _ = central_differences(lambda s: reference_loss(s, tops), scores, STEP, DIGITS)

    assert grad.dtype == np.float32 and hess.dtype == np.float32
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, obj.hessian_floor), rtol=1e-5, atol=1e-6)
    assert abs(float(grad.astype(np.float64).sum())) < 1e-5
    loss = obj.losses(scores, labels, offsets)[0]
    assert loss == pytest.approx(float(reference_loss([mpmath.mpf(float(s)) for s in scores], tops)),
                                 rel=1e-12, abs=1e-9)


@pytest.mark.parametrize("n, top_k, n_perm, scale", [(2, 1, 2, 1.0), (5, 3, 2, 10.0), (7, 10, 3, 1.0),
                                                      (12, 5, 3, 1e4), (20, 10, 1, 3.0), (33, None, 2, 1.0)])
def test_stopping_at_the_lowest_grade_matches_finite_differences_and_orders_no_lowest_document(
        n, top_k, n_perm, scale, central_differences):
    rng = np.random.default_rng([n, n_perm, int(scale), 1])
    scores, labels = random_query(rng, n, scale)
    labels[0] = labels.max() + 1
    labels[-1] = labels.min()  # a lowest grade with a document, whatever else was drawn
    obj = PLRank(top_k=top_k, n_permutations=n_perm, seed=7, stop_at_lowest_grade=True)
    offsets = np.array([0, n])
    grad, hess = obj.gradients(scores, labels, offsets)
    tops = tops_of(obj.state(labels, offsets), 0, n_perm)
    above = int(np.sum(labels > labels.min()))
    assert all(len(top) == min(top_k or n, above) for top in tops)
    assert all(labels[doc] > labels.min() for top in tops for doc in top)
    fd_grad, fd_hess, _ = central_differences(lambda s: reference_loss(s, tops), scores, STEP, DIGITS)
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, obj.hessian_floor), rtol=1e-5, atol=1e-6)


def test_stopping_at_the_lowest_grade_is_plrank_with_each_querys_own_k():
    """The same permutations (keyed by the seed and the query's labels), cut at k_q = min(K, documents above
    the lowest grade): each query's gradients are bit for bit those of PLRank(top_k=k_q) on that query."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(1, 40, size=60)
    offsets = np.concatenate(([0], np.cumsum(sizes)))
    labels = (rng.random(offsets[-1]) < 0.15) * rng.integers(1, 4, size=offsets[-1]).astype(float)
    scores = rng.normal(size=offsets[-1])
    grad, hess = PLRank(top_k=10, n_permutations=3, stop_at_lowest_grade=True).gradients(scores, labels, offsets)
    for q in range(sizes.size):
        lo, hi = offsets[q], offsets[q + 1]
        above = int(np.sum(labels[lo:hi] > labels[lo:hi].min()))
        if above == 0:
            assert np.all(grad[lo:hi] == 0)
            continue
        own_grad, own_hess = PLRank(top_k=min(10, above), n_permutations=3).gradients(
            scores[lo:hi], labels[lo:hi], np.array([0, hi - lo]))
        np.testing.assert_array_equal(grad[lo:hi], own_grad)
        np.testing.assert_array_equal(hess[lo:hi], own_hess)


@mpmath.workdps(DIGITS)
def leaf_curvature_by_finite_differences(scores, top_lists, members, step=STEP):
    """Second central difference of the reference loss along the indicator of ``members``."""
    step = mpmath.mpf(step)
    base = [mpmath.mpf(float(s)) for s in scores]
    moved = [lambda t, d=d, s=s: s + t if d in members else s for d, s in enumerate(base)]
    up = reference_loss([shift(step) for shift in moved], top_lists)
    down = reference_loss([shift(-step) for shift in moved], top_lists)
    return float((up - 2 * reference_loss(base, top_lists) + down) / step ** 2)


@pytest.mark.parametrize("n_leaves", [1, 3, 8])
@pytest.mark.parametrize("compress", [True, False])
def test_leaf_curvature_matches_finite_differences_along_each_leaf(n_leaves, compress):
    """The exact curvature of the Newton leaf step (the paper's Eqn. 9), on several queries at once: tiny
    ones, ties, score ranges up to 1e4 (where most of a context's mass sits on one document)."""
    rng = np.random.default_rng([n_leaves, compress])
    queries = [random_query(rng, n, scale) for n, scale in [(1, 1.0), (2, 1.0), (6, 3.0), (9, 1e4), (15, 1.0),
                                                             (4, 1.0)]]
    queries[-1][1][:] = 2.0  # all labels equal: skipped, contributes nothing
    scores = np.concatenate([q[0] for q in queries])
    labels = np.concatenate([q[1] for q in queries])
    offsets = np.r_[0, np.cumsum([q[0].size for q in queries])]
    leaf = rng.integers(0, n_leaves, size=scores.size)
    obj = PLRank(top_k=4, n_permutations=3, seed=1, compress_contexts=compress)
    curvature = obj.leaf_curvature(scores, labels, offsets, leaf, n_leaves)
    state = obj.state(labels, offsets)

    expected = np.zeros(n_leaves)
    for q in range(offsets.size - 1):
        if state.top_k_of[q] == 0:
            continue
        lo, hi = offsets[q], offsets[q + 1]
        for index in range(n_leaves):
            members = set(np.flatnonzero(leaf[lo:hi] == index).tolist())
            if members:
                expected[index] += leaf_curvature_by_finite_differences(scores[lo:hi], tops_of(state, q, 3), members)
    np.testing.assert_allclose(curvature, expected, rtol=1e-7, atol=1e-9)
    # the engines' sum of diagonal hessians is larger by the cross terms, unless a leaf holds one document
    # per context
    _, hess = obj.gradients(scores, labels, offsets)
    diagonal = np.bincount(leaf, weights=np.where(np.repeat(state.top_k_of > 0, np.diff(offsets)), hess, 0.0),
                           minlength=n_leaves)
    assert np.all(curvature <= diagonal * (1 + 1e-6) + 1e-9)


@pytest.mark.parametrize("compress", [True, False])
def test_leaf_curvature_of_contexts_whose_normalisers_span_more_than_e300(compress):
    """Contexts summed one by one (Z_0 / Z_j beyond e^300 overflows the prefix sums of its square), with the
    documents below the top k carrying the deepest contexts' mass, beside a query of ordinary scores."""
    scores = np.array([800.0, 400.0, 0.5, 0.2, 0.1, 0.3, -0.2, 0.0, 1.0, 0.4, -0.3, 0.8, 0.1])
    labels = np.array([4.0, 3, 2, 1, 0, 0, 0, 0, 2, 1, 1, 0, 0])
    offsets = np.array([0, 8, 13])
    leaf = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 0, 2])
    obj = PLRank(top_k=4, n_permutations=3, seed=2, compress_contexts=compress)
    curvature = obj.leaf_curvature(scores, labels, offsets, leaf, 3)
    state = obj.state(labels, offsets)
    expected = np.zeros(3)
    for q in range(2):
        lo, hi = offsets[q], offsets[q + 1]
        for index in range(3):
            members = set(np.flatnonzero(leaf[lo:hi] == index).tolist())
            expected[index] += leaf_curvature_by_finite_differences(scores[lo:hi], tops_of(state, q, 3), members)
    assert expected.min() > 0.05  # every leaf's curvature is far from 0 (the rest's mass counts)
    np.testing.assert_allclose(curvature, expected, rtol=1e-7, atol=1e-9)


def test_leaf_curvature_sees_labels_changed_in_place_between_calls():
    """The labels' validation is kept from call to call while the same array holds the same values (exact leaf
    values pass the training data's arrays at every tree): labels changed in place are validated and used again."""
    rng = np.random.default_rng(5)
    scores = rng.normal(size=12)
    labels = np.array([2.0, 1, 0, 0, 1, 0, 3, 0, 0, 1, 0, 0])
    offsets = np.array([0, 6, 12])
    leaf = rng.integers(0, 3, size=12)
    obj = PLRank(top_k=3, n_permutations=2, seed=3)
    first = obj.leaf_curvature(scores, labels, offsets, leaf, 3)
    np.testing.assert_array_equal(obj.leaf_curvature(scores, labels, offsets, leaf, 3), first)
    labels[[0, 2]] = labels[[2, 0]]  # the relevant document moves, in place
    fresh = PLRank(top_k=3, n_permutations=2, seed=3).leaf_curvature(scores, labels.copy(), offsets, leaf, 3)
    changed = obj.leaf_curvature(scores, labels, offsets, leaf, 3)
    np.testing.assert_array_equal(changed, fresh)
    assert not np.array_equal(changed, first)
    labels[4] = np.nan
    with pytest.raises(ValueError, match="label"):
        obj.leaf_curvature(scores, labels, offsets, leaf, 3)


def test_leaf_curvature_refuses_leaves_out_of_range():
    obj = PLRank()
    with pytest.raises(ValueError, match=r"leaf must hold one index in \[0, 2\)"):
        obj.leaf_curvature(np.zeros(3), np.array([1.0, 0, 0]), np.array([0, 3]), np.array([0, 1, 2]), 2)


# --------------------------------------------------------------------------------------------------
# curvature="bound": a quarter per context, at least the loss's curvature along any leaf at any point


def contexts_holding(top_lists, n):
    """Per document, the mean over permutations of the number of contexts of two or more documents that hold
    it, counted from the permutations' tops: context j of a permutation is every document not among its
    first j."""
    count = np.zeros(n)
    for top in top_lists:
        for j in range(len(top)):
            if n - j >= 2:
                for d in set(range(n)) - set(top[:j]):
                    count[d] += 1
    return count / len(top_lists)


BOUND_CASES = [(2, 1, 1, 1.0), (3, None, 2, 1.0), (6, 4, 3, 30.0), (11, 10, 2, 1e3), (25, None, 1, 1.0),
               (40, 7, 4, 2.0)]


@pytest.mark.parametrize("n, top_k, n_perm, scale", BOUND_CASES)
def test_bounded_curvature_is_a_quarter_per_context_and_bounds_every_leaf_along_its_whole_path(
        n, top_k, n_perm, scale):
    """The hessians of curvature="bound" are 1/4 times the contexts that hold each document (counted plainly
    from the sampled permutations), and summed over any set of a query's documents (a leaf) they are at least
    the reference loss's second derivative along that set, measured by finite differences at the scores and
    after moving the set by -5, 3 and 40 (so at any point a leaf's step can reach); the gradients are the
    exact ones."""
    rng = np.random.default_rng([n, n_perm, int(scale), 62])
    scores, labels = random_query(rng, n, scale)
    labels[0] = labels.max() + 1
    offsets = np.array([0, n])
    exact = PLRank(top_k=top_k, n_permutations=n_perm, seed=3)
    bound = PLRank(top_k=top_k, n_permutations=n_perm, seed=3, curvature="bound")
    grad, hess = bound.gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad, exact.gradients(scores, labels, offsets)[0])
    tops = tops_of(bound.state(labels, offsets), 0, n_perm)
    np.testing.assert_allclose(hess, np.maximum(0.25 * contexts_holding(tops, n), bound.hessian_floor), rtol=1e-6)
    for _ in range(4):
        members = set(np.flatnonzero(rng.random(n) < rng.uniform(0.1, 0.9)).tolist()) or {0}
        for shift in (0.0, -5.0, 3.0, 40.0):
            moved = scores + shift * np.isin(np.arange(n), list(members))
            along = leaf_curvature_by_finite_differences(moved, tops, members, step="1e-10")
            assert along <= float(hess[list(members)].astype(np.float64).sum()) * (1 + 1e-6) + 1e-12


@pytest.mark.parametrize("n", [3, 17, 250, 4000])
def test_the_top_documents_newton_step_grows_with_the_list_unless_the_curvature_is_bounded(n):
    """The cause of PL objectives' early peak: at equal scores the exact curvature of the document chosen
    first is (1 - 1/n)/n, so its Newton step -g/h is n; LightGBM then moves it by n times the learning rate in
    one tree. The bound's step is 4 (1 - 1/n) whatever the length: lambdarank's order (2 per pair)."""
    labels = np.zeros(n)
    labels[n // 2] = 1.0
    offsets = np.array([0, n])
    top = n // 2
    grad, hess = PLRank(top_k=10, hessian_floor=0.0).gradients(np.zeros(n), labels, offsets)
    assert -grad[top] / hess[top] == pytest.approx(n, rel=1e-4)
    grad, hess = PLRank(top_k=10, curvature="bound").gradients(np.zeros(n), labels, offsets)
    assert -grad[top] / hess[top] == pytest.approx(4 * (1 - 1 / n), rel=1e-5)
    assert np.all(np.abs(grad / hess) <= 4)


def test_exact_newton_leaves_refuse_the_bounded_curvature():
    import lightgbm as lgb

    from plboost.engines.exact_leaves import ExactLeafValues

    data = lgb.Dataset(np.arange(8.0).reshape(-1, 1), np.array([1.0, 0, 0, 2, 0, 1, 0, 0]), group=[4, 4])
    with pytest.raises(ValueError, match="PLRank\\(curvature='exact'\\), not curvature='bound'"):
        ExactLeafValues(PLRank(curvature="bound"), data)


def test_permutations_are_label_sorted_top_k_with_random_ties():
    rng = np.random.default_rng(0)
    sizes = rng.integers(1, 40, size=50)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 4, size=offsets[-1]).astype(float)
    obj = PLRank(top_k=8, n_permutations=4, seed=3, skip_uniform_queries=False)
    state = obj.state(labels, offsets)
    for q in range(len(sizes)):
        query_labels = labels[offsets[q]:offsets[q + 1]]
        k = min(8, sizes[q])
        for p in range(4):
            top = state.permutation_top(q, p)
            assert len(top) == k and len(set(top.tolist())) == k
            chosen = query_labels[top]
            assert np.all(np.diff(chosen) <= 0)  # labels descending
            np.testing.assert_array_equal(chosen, np.sort(query_labels)[::-1][:k])  # the k best labels


def test_same_seed_same_permutations_and_other_seed_differs():
    rng = np.random.default_rng(1)
    offsets = np.array([0, 30, 70, 100])
    labels = rng.integers(0, 2, size=100).astype(float)
    tops = {}
    for seed in (5, 5, 6):
        state = PLRank(top_k=10, n_permutations=3, seed=seed).state(labels, offsets)
        tops.setdefault(seed, []).append(state.top_docs.copy())
    np.testing.assert_array_equal(tops[5][0], tops[5][1])
    assert not np.array_equal(tops[5][0], tops[6][0])


def test_a_query_gets_the_same_permutations_wherever_it_sits():
    """Draws are keyed to the query's content, not its position: reordering queries changes nothing."""
    rng = np.random.default_rng(2)
    sizes = np.array([12, 25, 7, 40])
    labels = rng.integers(0, 3, size=sizes.sum()).astype(float)
    offsets = np.r_[0, np.cumsum(sizes)]
    order = [2, 0, 3, 1]
    moved_labels = np.concatenate([labels[offsets[q]:offsets[q + 1]] for q in order])
    moved_offsets = np.r_[0, np.cumsum(sizes[order])]
    obj = PLRank(top_k=5, n_permutations=2, seed=11)
    state, moved = obj.state(labels, offsets), obj.state(moved_labels, moved_offsets)
    for new_position, q in enumerate(order):
        for p in range(2):
            np.testing.assert_array_equal(state.permutation_top(q, p), moved.permutation_top(new_position, p))


def test_ties_are_broken_uniformly():
    """Orders of a group of four tied documents, over many sampled permutations: a chi-square test."""
    labels = np.array([1.0, 1.0, 1.0, 1.0, 2.0, 0.0])
    n_perm = 4800
    # (compression is beside the point here, and costs O(M^2) per position for M = 4800 permutations)
    plrank = PLRank(top_k=None, n_permutations=n_perm, seed=2024, compress_contexts=False)
    state = plrank.state(labels, np.array([0, 6]))
    orders = list(itertools.permutations([0, 1, 2, 3]))
    counts = dict.fromkeys(orders, 0)
    for p in range(n_perm):
        top = state.permutation_top(0, p)
        assert top[0] == 4 and top[-1] == 5
        counts[tuple(top[1:5].tolist())] += 1
    observed = np.array(list(counts.values()))
    assert observed.sum() == n_perm
    p_value = stats.chisquare(observed).pvalue
    assert p_value > 1e-3, (p_value, observed)
    # and the first tied position alone is uniform over the four documents
    first = np.bincount([state.permutation_top(0, p)[1] for p in range(n_perm)], minlength=4)[:4]
    assert stats.chisquare(first).pvalue > 1e-3


def test_gradients_sum_to_zero_per_query_and_are_finite_for_extreme_scores(interpreted):
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 80, size=20 if interpreted else 200)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 5, size=offsets[-1]).astype(float)
    for scale in (1e-3, 1.0, 1e2, 1e4):
        scores = rng.normal(scale=scale, size=offsets[-1])
        scores[::7] = scale * 3  # ties in the scores too
        for top_k, n_perm in ((10, 3), (None, 1), (1, 2)):
            grad, hess = PLRank(top_k=top_k, n_permutations=n_perm).gradients(scores, labels, offsets)
            assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess))
            assert np.all(hess >= 1e-6)
            sums = np.add.reduceat(grad.astype(np.float64), offsets[:-1])
            assert np.max(np.abs(sums)) < 1e-5 * np.maximum(1, sizes).max()


def test_compressed_equals_uncompressed(interpreted):
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 60, size=30 if interpreted else 300)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 3, size=offsets[-1]).astype(float)
    scores = rng.normal(scale=5, size=offsets[-1])
    kwargs = dict(top_k=10, n_permutations=6, seed=9)
    compressed, plain = PLRank(**kwargs), PLRank(compress_contexts=False, **kwargs)
    state = compressed.state(labels, offsets)
    assert state.compression_ratio < 0.9  # with 6 permutations and many ties, contexts are shared
    assert plain.state(labels, offsets).compression_ratio == 1.0
    for a, b in zip(compressed.gradients(scores, labels, offsets), plain.gradients(scores, labels, offsets),
                    strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(compressed.losses(scores, labels, offsets), plain.losses(scores, labels, offsets),
                               rtol=1e-12, atol=1e-10)


def test_compression_ratio_counts_distinct_context_sets():
    """The ratio equals the number of distinct (position, set of documents chosen before) pairs."""
    rng = np.random.default_rng(5)
    sizes = rng.integers(2, 30, size=40)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels = rng.integers(0, 3, size=offsets[-1]).astype(float)
    n_perm, top_k = 3, 6
    state = PLRank(top_k=top_k, n_permutations=n_perm, seed=1).state(labels, offsets)
    distinct = total = 0
    for q in range(len(sizes)):
        if state.top_k_of[q] == 0:
            continue
        tops = tops_of(state, q, n_perm)
        k = len(tops[0])
        distinct += sum(len({frozenset(top[:j]) for top in tops}) for j in range(k))
        total += n_perm * k
    assert state.n_distinct_contexts == distinct
    assert state.compression_ratio == pytest.approx(distinct / total)
    assert PLRank(top_k=top_k, n_permutations=1).state(labels, offsets).compression_ratio == 1.0


def test_uniform_queries_are_skipped_unless_asked():
    labels = np.array([1.0, 1.0, 1.0, 0.0, 2.0, 1.0])
    offsets = np.array([0, 3, 6])
    scores = np.array([0.3, -1.0, 2.0, 0.1, 0.2, 0.3])
    grad, hess = PLRank(top_k=2).gradients(scores, labels, offsets)
    assert np.all(grad[:3] == 0) and np.all(hess[:3] == np.float32(1e-6))
    assert np.any(grad[3:] != 0)
    grad, _ = PLRank(top_k=2, skip_uniform_queries=False).gradients(scores, labels, offsets)
    assert np.any(grad[:3] != 0)
    assert abs(float(grad[:3].sum())) < 1e-6


def test_single_document_queries_give_zero_gradient():
    grad, hess = PLRank(skip_uniform_queries=False).gradients(np.array([3.0, -2.0]), np.array([1.0, 0.0]),
                                                              np.array([0, 1, 2]))
    np.testing.assert_array_equal(grad, [0.0, 0.0])
    np.testing.assert_array_equal(hess, np.float32([1e-6, 1e-6]))


def test_loss_falls_along_the_negative_gradient():
    rng = np.random.default_rng(6)
    offsets = np.array([0, 50, 90])
    labels = rng.integers(0, 5, size=90).astype(float)
    scores = rng.normal(size=90)
    obj = PLRank(top_k=10, n_permutations=3)
    grad, _ = obj.gradients(scores, labels, offsets)
    before = obj.losses(scores, labels, offsets).sum()
    after = obj.losses(scores - 1e-3 * grad, labels, offsets).sum()
    assert after < before


@pytest.mark.parametrize("kwargs, message", [
    ({"top_k": 0}, "top_k"), ({"top_k": 2.5}, "top_k"), ({"n_permutations": 0}, "n_permutations"),
    ({"seed": -1}, "seed"), ({"hessian_floor": -1e-6}, "hessian_floor"),
    ({"hessian_floor": float("nan")}, "hessian_floor"),
])
def test_bad_parameters_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        PLRank(**kwargs)


def test_bad_arrays_are_refused():
    obj = PLRank()
    with pytest.raises(ValueError, match="expected 3 scores"):
        obj.gradients(np.zeros(4), np.zeros(3), np.array([0, 3]))
    with pytest.raises(ValueError, match="end at 2 but there are 3"):
        obj.gradients(np.zeros(3), np.zeros(3), np.array([0, 2]))
    with pytest.raises(ValueError, match="not a whole number"):
        obj.gradients(np.zeros(3), np.array([0, 0.5, 1]), np.array([0, 3]))
    with pytest.raises(ValueError, match="negative"):
        obj.gradients(np.zeros(3), np.array([0, -1, 1]), np.array([0, 3]))
