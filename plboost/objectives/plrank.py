"""PLRank: the Plackett-Luce (ListMLE) loss on the top K of sampled ground-truth permutations.

Xia, Zhai and Wang, "Plackett-Luce model for learning-to-rank task", arXiv:1909.06722 (2019); the
listwise likelihood itself is ListMLE (Xia, Liu, Wang, Zhang and Li, ICML 2008).

For one query with scores ``s`` and integer labels ``y``, M ground-truth permutations are drawn once per
dataset: the documents are shuffled uniformly at random and then stable-sorted by label, descending, so
ties among equal labels are broken at random, independently per permutation. The loss of a permutation
``pi`` truncated to its top K positions is

.. math::

    L_\\pi = \\sum_{j=1}^{\\min(K, n)} \\Big[\\log \\sum_{t \\ge j} e^{s_{\\pi(t)}} - s_{\\pi(j)}\\Big],

and the query's loss is the MEAN of ``L_pi`` over its M permutations, so that the learning rate and the
regularisation keep their meaning when M changes. With contexts ``C_j = {pi(j), ..., pi(n)}`` and
``p(d|C) = e^{s_d} / sum_{c in C} e^{s_c}``, the gradient and diagonal hessian of ``L_pi`` are

.. math::

    g_d = \\sum_{C_j \\ni d,\\ j \\le K} p(d|C_j) - [d \\in \\pi(1..K)], \\qquad
    h_d = \\sum_{C_j \\ni d,\\ j \\le K} p(d|C_j)\\,(1 - p(d|C_j)).

How the kernel computes them in O(n + M K) per query:

* A document outside the top K of every permutation (most documents, when K is small) lies in every
  context, so its gradient is ``e^{s_d}`` times one number per query; only the at most ``M K`` documents
  that some permutation puts in its top K need per-permutation work.
* Everything is in log space: ``l_j = log Z_j`` (the log-normaliser of context j) is a suffix
  log-sum-exp, and prefix sums of ``1/Z_j`` and ``1/Z_j^2`` are carried rescaled by the deepest context a
  document reaches, so every exponent is <= 0 and scores of any magnitude give finite results.
* Compressed contexts: context j of a permutation is determined by the SET of its first j - 1
  documents, so permutations that agree on that set share the context (the document chosen in it may
  differ). Each distinct context is stored once with its multiplicity and its log-normaliser is computed
  once; :attr:`PLRankState.compression_ratio` reports (distinct contexts) / (M * min(K, n)) summed over
  the queries trained on. The result equals the uncompressed computation up to rounding.

Curvature (``curvature``). ``"exact"`` hands the engines ``h_d`` above. At equal scores a context of
``|C|`` documents gives each ``p(d|C) = 1/|C|``, so the document chosen at position j has
``g_d ~ -1`` and ``h_d ~ j/n``: its Newton step ``-g_d/h_d ~ n/j`` grows with the list's length, where
LambdaMART's pairwise logistic steps are about 2 whatever the length, and one tree moves the top
documents by several units at learning rate 0.1 (``docs/quality.md``). ``"bound"`` hands them instead the
largest curvature each context's term can have along any leaf: for the documents ``D`` of a leaf,
``d^2/dt^2 log sum_{c in C} e^{s_c + t [c in D]} = P (1 - P) <= 1/4`` with ``P`` the share of ``D`` in
``C``, so

.. math::

    h_d^{\\mathrm{bound}} = \\tfrac14 \\sum_{C_j \\ni d,\\ j \\le K,\\ |C_j| \\ge 2} 1

(the mean over permutations; a context of one document has no curvature). Summed over a leaf's
documents it is at least the loss's curvature along the leaf at every point, so a leaf's step
``-sum g / sum h`` never overshoots the minimum along the leaf (a majorize-minimize step, as Böhning's
bound ``(I - 11^T/|C|)/2`` gives for multinomial logistic regression, Böhning 1992, "Multinomial logistic
regression algorithm", Ann. Inst. Statist. Math. 44), and the step of the top document at equal scores is
``4 (1 - 1/n)`` whatever ``n``. It does not depend on the scores and is computed once per dataset.

Queries whose labels are all equal carry no ranking information; by default their gradients are 0 (as in
LightGBM's ``lambdarank``), with hessians at the floor.

Random tie-breaking draws from a stream keyed by the seed and the query's own labels (see
:mod:`plboost._random`), so a query gets the same permutations whatever dataset, fold or partition it is
in. Two queries with identical label vectors get identical tie-breaking; each is still uniform.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._constraints import SEED, Boolean, Integer, Options
from .._engine_registry import EXACT_LEAF_ENGINES, LEAF_VALUES
from .._jit import helper, kernel, over_queries, query_ranges, run_in_threads, thread_count
from .._numerics import exp_vectorizable, logaddexp, stable_argsort
from .._random import query_stream_key, uniform
from ._base import CURVATURES, DEFAULT_HESSIAN_FLOOR, QueryData, RankingObjective, zero_query


# --------------------------------------------------------------------------------------------------
# Sampling the permutations and their contexts (once per dataset)

@kernel
def _sample_top_contexts(first, end, labels, offsets, top_k_of, top_start, n_perm, seed, compress,
                         top_docs, ctx_owner, ctx_mult, top_union, union_size):
    """Draw each query's permutations, keep their top k, and find the distinct contexts.

    Per query the outputs use a block of ``n_perm * k`` entries starting at ``top_start[q]``, entry
    ``p * k + j`` standing for position j of permutation p: ``top_docs`` (the document chosen there, as an
    index within the query), ``ctx_owner`` (the entry that owns the context, the first permutation with
    the same set of j chosen documents), ``ctx_mult`` (at an owner, how many permutations share it; 0
    elsewhere). ``top_union`` receives, in order of first appearance, the documents that are in the top
    k of some permutation, and ``union_size[q]`` their number. Queries ``first <= q < end``.
    """
    for q in range(first, end):
        k = top_k_of[q]
        union_size[q] = 0
        if k == 0:
            continue
        lo = offsets[q]
        n = offsets[q + 1] - lo
        block = top_start[q]
        key = query_stream_key(seed, labels, lo, lo + n)
        position = np.empty((n_perm, n), dtype=np.int64)
        for p in range(n_perm):
            for i in range(n):
                position[p, i] = k  # k stands for "after the top k"
        draws = np.empty(n)
        neg_labels = np.empty(n)
        for p in range(n_perm):
            for i in range(n):
                draws[i] = uniform(key, p * n + i)
            shuffled = stable_argsort(draws)
            for i in range(n):
                neg_labels[i] = -labels[lo + shuffled[i]]
            by_label = stable_argsort(neg_labels)
            for j in range(k):
                doc = shuffled[by_label[j]]
                top_docs[block + p * k + j] = doc
                position[p, doc] = j

        in_union = np.zeros(n, dtype=np.bool_)
        m = 0
        for e in range(n_perm * k):
            doc = top_docs[block + e]
            if not in_union[doc]:
                in_union[doc] = True
                top_union[block + m] = doc
                m += 1
        union_size[q] = m

        for e in range(n_perm * k):
            ctx_owner[block + e] = e
            ctx_mult[block + e] = 1
        if not compress:
            continue
        # shared[a, b] = |{first j of permutation a} & {first j of permutation b}|; equal sets iff == j
        shared = np.zeros((n_perm, n_perm), dtype=np.int64)
        for j in range(k):
            for p in range(1, n_perm):
                for r in range(p):
                    if shared[r, p] == j:
                        owner = ctx_owner[block + r * k + j]
                        ctx_owner[block + p * k + j] = owner
                        ctx_mult[block + owner] += 1
                        ctx_mult[block + p * k + j] = 0
                        break
            for p in range(1, n_perm):
                a = top_docs[block + p * k + j]
                for r in range(p):
                    b = top_docs[block + r * k + j]
                    shared[r, p] += (np.int64(position[r, a] <= j) + np.int64(position[p, b] <= j)
                                     - np.int64(a == b))


@kernel
def _index_top_union(first_query, end_query, offsets, top_k_of, top_start, top_docs, n_perm, top_union, union_start,
                     union_docs, union_position, in_top):
    """Compact the per-query top-k unions and tabulate each member's position in every permutation.

    ``union_position[(union_start[q] + t) * n_perm + p]`` is the position of union member t in
    permutation p, or k when it is not in that permutation's top k. ``in_top`` flags those documents.
    Queries ``first_query <= q < end_query``.
    """
    for q in range(first_query, end_query):
        k = top_k_of[q]
        lo = offsets[q]
        n = offsets[q + 1] - lo
        for i in range(lo, lo + n):
            in_top[i] = False
        if k == 0:
            continue
        block = top_start[q]
        first = union_start[q]
        member_of = np.empty(n, dtype=np.int64)
        for i in range(n):
            member_of[i] = -1
        for t in range(union_start[q + 1] - first):
            doc = top_union[block + t]
            union_docs[first + t] = doc
            member_of[doc] = t
            in_top[lo + doc] = True
            for p in range(n_perm):
                union_position[(first + t) * n_perm + p] = k
        for p in range(n_perm):
            for j in range(k):
                t = member_of[top_docs[block + p * k + j]]
                union_position[(first + t) * n_perm + p] = j


# --------------------------------------------------------------------------------------------------
# Gradient, hessian and loss (every boosting iteration)

# The sums of the ``reassoc`` loops below run in loops of their own, over stored values. A loop that both
# writes an array and reads another gets a run-time test of whether the two lie too close in memory for vector
# code, and runs scalar code when they do: its sum's order of additions, and so its last bits, then depended on
# where the allocator had put the arrays (exact-leaf trainings of the same data and seed differed in the last
# bits of leaf values in the test suite). A loop that only reads has no such test.

@helper(fastmath={"reassoc"})
def _outside_exponentials(scores, in_top, lo, hi, outside):
    """``max_rest``, the largest score of the documents of ``lo:hi`` outside every top k (-inf when there are
    none), and ``log_z_rest``, their log-sum-exp; ``outside[i]`` receives ``exp(s_i - max_rest)`` for those
    documents and 0 for the others.

    Most documents of a query are outside every top k, so these two passes are most of PLRank's work per
    document. Both are written branch-free so that they vectorise: the exponential is
    :func:`exp_vectorizable`, and ``reassoc`` lets LLVM split the sum into vector lanes (a different order
    of additions than one by one: the sum changes in its last bits, the same way at every call).
    """
    max_rest = -np.inf
    for i in range(lo, hi):
        max_rest = max(max_rest, -np.inf if in_top[i] else scores[i])
    if max_rest == -np.inf:
        return max_rest, max_rest
    for i in range(lo, hi):
        e = exp_vectorizable(scores[i] - max_rest)  # computed for every document, kept for those outside
        outside[i] = 0.0 if in_top[i] else e
    total = 0.0
    for i in range(lo, hi):  # a loop of its own (see above _outside_exponentials)
        total += outside[i]
    return max_rest, max_rest + np.log(total)


@helper(inline="always")
def _query_view(state, q):
    """Where query q lies in ``state``: ``(lo, hi, k, block, first, size)``, its documents ``lo:hi``, its
    ``top_k_of``, the first entry of its block of contexts, and the first of its union members and their
    number (the per-query set-up every PLRank kernel starts with)."""
    first = state.union_start[q]
    return (state.offsets[q], state.offsets[q + 1], state.top_k_of[q], state.top_start[q], first,
            state.union_start[q + 1] - first)


@helper
def _context_log_normalizers(q, scores, state, log_z, outside):
    """Log-normaliser of every distinct context of query q, written to ``log_z`` at its owner entry.

    Documents outside every top k are summed once (:func:`_outside_exponentials`): their log-sum-exp
    ``log_z_rest`` is shared by all permutations' deepest contexts. Returns ``max_rest``.
    """
    lo, hi, k, block, first, size = _query_view(state, q)
    n_perm = state.n_permutations
    in_top, ctx_owner, union_position = state.in_top, state.ctx_owner, state.union_position

    max_rest, log_z_rest = _outside_exponentials(scores, in_top, lo, hi, outside)
    for j in range(k - 1, -1, -1):
        for p in range(n_perm):
            e = p * k + j
            if ctx_owner[block + e] != e:
                continue
            if j == k - 1:
                # the documents after this permutation's top k: the rest plus union members it skipped
                below = log_z_rest
                for t in range(size):
                    if union_position[(first + t) * n_perm + p] == k:
                        below = logaddexp(below, scores[lo + state.union_docs[first + t]])
            else:
                below = log_z[block + ctx_owner[block + e + 1]]
            log_z[block + e] = logaddexp(below, scores[lo + state.top_docs[block + e]])
    return max_rest


@kernel
def _plrank_gradients(first, end, scores, state, outside, log_z, chain_log_z, chain_a, chain_b, grad, hess, losses):
    """Fill ``grad``, ``hess`` (raw: the mean over permutations) and ``losses`` (the mean over permutations
    of the truncated PL negative log-likelihood, each position j weighted by ``state.position_weights``:
    all 1 for PLRank, see :class:`PositionAwareListMLE`) of queries ``first <= q < end``.

    ``outside`` (one per document) and ``log_z``, ``chain_log_z``, ``chain_a``, ``chain_b`` (one per
    entry of ``state.top_docs``) are scratch space; each query uses only its own slice.
    """
    n_perm = state.n_permutations
    top_docs, ctx_owner, ctx_mult = state.top_docs, state.ctx_owner, state.ctx_mult
    weights = state.position_weights
    for q in range(first, end):
        lo, hi, k, block, first_member, n_members = _query_view(state, q)
        if k == 0:
            zero_query(grad, hess, lo, hi)
            losses[q] = 0.0
            continue
        row = state.weight_start[q]  # position j weighs weights[row + j] (all 1 for PLRank)
        max_rest = _context_log_normalizers(q, scores, state, log_z, outside)
        total = 0.0
        for p in range(n_perm):
            for j in range(k):
                e = p * k + j
                w = weights[row + j]
                total += ctx_mult[block + e] * w * log_z[block + e] if ctx_mult[block + e] > 0 else 0.0
                total -= w * scores[lo + top_docs[block + e]]
        losses[q] = total / n_perm
        # Along each permutation: a_j = sum_{i<=j} w_i exp(l_j - l_i), b_j likewise with 2 (l_j - l_i), so
        # that e^{s_d} sum_{i<=j} w_i/Z_i = exp(s_d - l_j) a_j with every exponent <= 0. With w_i = 1 (PLRank)
        # every product by w_i is exact: the arithmetic is PLRank's unweighted one, bit for bit.
        for p in range(n_perm):
            a = 0.0
            b = 0.0
            previous = 0.0
            for j in range(k):
                e = block + p * k + j
                current = log_z[block + ctx_owner[e]]
                ratio = np.exp(current - previous) if j > 0 else 0.0
                w = weights[row + j]
                a = w + a * ratio
                b = w + b * ratio * ratio
                chain_log_z[e] = current
                chain_a[e] = a
                chain_b[e] = b
                previous = current

        if max_rest > -np.inf:
            # Documents outside every top k are in all contexts: g = x c1, h = x c1 - x^2 c2.
            deepest = np.inf
            for p in range(n_perm):
                deepest = min(deepest, chain_log_z[block + p * k + k - 1])
            c1 = 0.0
            c2 = 0.0
            for p in range(n_perm):
                e = block + p * k + k - 1
                r = np.exp(deepest - chain_log_z[e])
                c1 += r * chain_a[e]
                c2 += r * r * chain_b[e]
            c1 /= n_perm
            c2 /= n_perm
            scale = np.exp(max_rest - deepest)
            for i in range(lo, hi):  # every document (outside[i] = 0 in a top k), overwritten below if in one
                x = outside[i] * scale
                grad[i] = x * c1
                hess[i] = x * c1 - x * x * c2

        for t in range(n_members):
            i = lo + state.union_docs[first_member + t]
            g = 0.0
            h = 0.0
            chosen = 0.0  # the weights of the positions where it is chosen
            for p in range(n_perm):
                j = state.union_position[(first_member + t) * n_perm + p]
                if j < k:
                    chosen += weights[row + j]
                else:
                    j = k - 1
                e = block + p * k + j
                x = np.exp(scores[i] - chain_log_z[e])
                g += x * chain_a[e]
                h += x * chain_a[e] - x * x * chain_b[e]
            grad[i] = (g - chosen) / n_perm
            hess[i] = h / n_perm


#: Z_0 / Z_{k-1} above which a permutation's leaf curvatures are summed context by context, with log-masses:
#: the prefix sums of (Z_0 / Z_j)^2 would overflow, and masses relative to Z_0 lose the deepest contexts'
_WIDEST_PREFIX_SPREAD = np.exp(300.0)


@helper(fastmath={"reassoc"})
def _context_weights(q, scores, state, weight, inverse_z):
    """Query q's documents' e^{s_i} / Z_0 to ``weight`` and each distinct context's Z_0 / Z_e to ``inverse_z``
    at its owner entry e, with Z_0 the first context's normaliser (every permutation's: the whole query).

    The normalisers are sums from the deepest context up in the linear domain, relative to the largest
    score: one vectorised exponential per document, no logarithm. Returns False, and leaves the query to
    log-masses, where some permutation's Z_0 / Z_{k-1} exceeds ``_WIDEST_PREFIX_SPREAD``; below it, a
    document whose exponential underflows weighs under e^{-445} of any context's normaliser.
    """
    lo, hi, k, block, first, size = _query_view(state, q)
    n_perm = state.n_permutations
    in_top, ctx_owner, union_position = state.in_top, state.ctx_owner, state.union_position
    biggest = -np.inf
    for i in range(lo, hi):
        biggest = max(biggest, scores[i])
    for i in range(lo, hi):
        weight[i] = exp_vectorizable(scores[i] - biggest)
    rest = 0.0
    for i in range(lo, hi):  # a loop of its own (see above _outside_exponentials)
        rest += 0.0 if in_top[i] else weight[i]
    for j in range(k - 1, -1, -1):
        for p in range(n_perm):
            e = p * k + j
            if ctx_owner[block + e] != e:
                continue
            if j == k - 1:
                below = rest  # the documents after this permutation's top k: the rest and union members it skipped
                for t in range(size):
                    if union_position[(first + t) * n_perm + p] == k:
                        below += weight[lo + state.union_docs[first + t]]
            else:
                below = inverse_z[ctx_owner[block + e + 1]]
            inverse_z[e] = below + weight[lo + state.top_docs[block + e]]
    whole = inverse_z[0]
    for p in range(n_perm):
        if not inverse_z[ctx_owner[block + p * k + k - 1]] * _WIDEST_PREFIX_SPREAD >= whole:
            return False
    for i in range(lo, hi):
        weight[i] /= whole
    for e in range(n_perm * k):
        if ctx_owner[block + e] == e:
            inverse_z[e] = whole / inverse_z[e]
    return True


@helper
def _run_curvature(mass, prefix1, prefix2, a, b):
    """sum over contexts a..b of P_j (1 - P_j), P_j = mass Z_0 / Z_j, from prefix sums of Z_0 / Z_j
    (``prefix1``) and of its square (``prefix2``), for a leaf's ``mass`` relative to Z_0; 0 for an empty run
    or a massless leaf."""
    if a > b or mass == 0.0:
        return 0.0
    return max(mass * (prefix1[b + 1] - prefix1[a]) - mass * mass * (prefix2[b + 1] - prefix2[a]), 0.0)


@kernel
def _plrank_leaf_curvature(first_query, end_query, scores, state, leaf, outside, log_z, curvature):
    """Exact curvature of the loss along each leaf's direction: per leaf, the mean over permutations of
    ``sum_C P_C (1 - P_C)`` with ``P_C = sum_{d in leaf and C} p(d|C)``, summed over the queries.

    Per permutation the leaves' masses start from the documents below its top k and grow by one document
    per context, from the deepest context up. A leaf's mass changes only at the contexts that add one of
    its documents, and over a run of contexts a..b at constant mass m it adds sum_j P_j (1 - P_j) =
    m S1 - m^2 S2, with S1 and S2 the sums over the run of Z_0 / Z_j and its square, read off prefix sums;
    masses are relative to Z_0 (:func:`_context_weights`). Contexts are summed from the largest Z, so a run's
    difference of prefix sums loses at most k ulps. O(k + leaves) per permutation instead of O(k * leaves),
    with no logarithm or exponential per context. A query where some Z_0 / Z_{k-1} exceeds
    ``_WIDEST_PREFIX_SPREAD`` (scores hundreds apart) is summed context by context with log-masses, one
    ``logaddexp`` per context and one ``exp`` per context and leaf. Queries ``first_query <= q < end_query``
    are added to ``curvature`` (one per leaf); ``outside``, ``log_z`` are scratch space.
    """
    offsets, top_k_of, top_start, top_docs = state.offsets, state.top_k_of, state.top_start, state.top_docs
    ctx_owner, union_start, union_docs, union_position = (state.ctx_owner, state.union_start, state.union_docs,
                                                          state.union_position)
    n_perm = state.n_permutations
    n_leaves = curvature.shape[0]
    slot_of = np.empty(n_leaves, dtype=np.int64)
    for leaf_index in range(n_leaves):
        slot_of[leaf_index] = -1
    touched = np.empty(n_leaves, dtype=np.int64)
    summed = np.zeros(n_leaves)  # the sums over permutations, divided by their number at the end
    rest = np.empty(n_leaves)
    mass = np.empty(n_leaves)
    last = np.empty(n_leaves, dtype=np.int64)  # per leaf: the deepest context its current mass holds for
    widest = 0
    for q in range(first_query, end_query):
        widest = max(widest, top_k_of[q])
    prefix1 = np.empty(widest + 1)
    prefix2 = np.empty(widest + 1)
    inverse_z = np.empty(n_perm * widest)
    for q in range(first_query, end_query):
        k = top_k_of[q]
        if k == 0:
            continue
        lo = offsets[q]
        block = top_start[q]
        first = union_start[q]
        linear = _context_weights(q, scores, state, outside, inverse_z)
        if not linear:
            max_rest = _context_log_normalizers(q, scores, state, log_z, outside)
        n_touched = 0
        for i in range(lo, offsets[q + 1]):
            slot = slot_of[leaf[i]]
            if slot < 0:
                slot = n_touched
                slot_of[leaf[i]] = slot
                touched[slot] = leaf[i]
                rest[slot] = 0.0
                n_touched += 1
            if not state.in_top[i]:
                rest[slot] += outside[i]  # e^{s_i} / Z_0, or e^{s_i - max_rest} for log-masses
        if not linear:
            for slot in range(n_touched):
                rest[slot] = np.log(rest[slot]) + max_rest if rest[slot] > 0.0 else -np.inf
        for p in range(n_perm):
            for slot in range(n_touched):
                mass[slot] = rest[slot]
            if not linear:  # log-masses, context by context
                for t in range(union_start[q + 1] - first):
                    if union_position[(first + t) * n_perm + p] == k:
                        i = lo + union_docs[first + t]
                        slot = slot_of[leaf[i]]
                        mass[slot] = logaddexp(mass[slot], scores[i])
                for j in range(k - 1, -1, -1):
                    e = block + p * k + j
                    i = lo + top_docs[e]
                    slot = slot_of[leaf[i]]
                    mass[slot] = logaddexp(mass[slot], scores[i])
                    log_z_context = log_z[block + ctx_owner[e]]
                    for slot in range(n_touched):
                        share = min(np.exp(mass[slot] - log_z_context), 1.0)
                        summed[touched[slot]] += share * (1.0 - share)
                continue
            for t in range(union_start[q + 1] - first):
                if union_position[(first + t) * n_perm + p] == k:  # in the top k of another permutation only
                    i = lo + union_docs[first + t]
                    mass[slot_of[leaf[i]]] += outside[i]
            prefix1[0] = 0.0
            prefix2[0] = 0.0
            for j in range(k):
                x = inverse_z[ctx_owner[block + p * k + j]]
                prefix1[j + 1] = prefix1[j] + x
                prefix2[j + 1] = prefix2[j] + x * x
            for slot in range(n_touched):
                last[slot] = k - 1
            for j in range(k - 1, -1, -1):
                i = lo + top_docs[block + p * k + j]
                slot = slot_of[leaf[i]]
                # the leaf's mass so far held over contexts j + 1 .. last[slot]
                summed[touched[slot]] += _run_curvature(mass[slot], prefix1, prefix2, j + 1, last[slot])
                mass[slot] += outside[i]
                last[slot] = j
            for slot in range(n_touched):
                summed[touched[slot]] += _run_curvature(mass[slot], prefix1, prefix2, np.int64(0), last[slot])
        for slot in range(n_touched):
            slot_of[touched[slot]] = -1
    for leaf_index in range(n_leaves):
        curvature[leaf_index] += summed[leaf_index] / n_perm


@kernel
def _bounded_curvatures(first, end, state, bound):
    """Each document's bounded curvature (the module docstring's ``h^bound``, each context's term weighted
    as in the loss) to ``bound``, for queries ``first <= q < end``: a quarter of the weight of the contexts of
    two or more documents that hold it, the mean over permutations."""
    n_perm = state.n_permutations
    weights = state.position_weights
    for q in range(first, end):
        lo, hi, k, _, first_member, n_members = _query_view(state, q)
        row = state.weight_start[q]
        held = np.empty(max(k, 1))  # held[j]: weight of contexts 0..j that have two or more documents
        total = 0.0
        for j in range(k):
            if hi - lo - j >= 2:
                total += weights[row + j]
            held[j] = total
        for i in range(lo, hi):  # in every context of every permutation; overwritten below if in a top k
            bound[i] = 0.25 * total
        for t in range(n_members):
            h = 0.0
            for p in range(n_perm):
                j = state.union_position[(first_member + t) * n_perm + p]
                h += held[min(j, k - 1)]
            bound[lo + state.union_docs[first_member + t]] = 0.25 * h / n_perm


# --------------------------------------------------------------------------------------------------
# The objective

class PLRankState(NamedTuple):
    """Sampled top-k permutations of one dataset and their (compressed) contexts.

    Per query q with ``k = top_k_of[q]`` (0 for queries left out), entries ``top_start[q] + p * k + j``
    describe position j of permutation p. ``compression_ratio`` is (distinct contexts) / (contexts).
    Position j of query q weighs ``position_weights[weight_start[q] + j]`` in the loss (queries may share a
    row: PLRank's one row of ones, for instance).
    A named tuple of arrays: the kernels take it as one argument (Numba reads its fields by name).
    """

    offsets: np.ndarray
    n_permutations: int
    top_k_of: np.ndarray
    top_start: np.ndarray
    top_docs: np.ndarray
    ctx_owner: np.ndarray
    ctx_mult: np.ndarray
    union_start: np.ndarray
    union_docs: np.ndarray
    union_position: np.ndarray
    in_top: np.ndarray
    position_weights: np.ndarray
    weight_start: np.ndarray
    #: each document's bounded curvature (``curvature="bound"``; empty with the exact one)
    bounded_curvature: np.ndarray

    @property
    def n_contexts(self) -> int:
        """Contexts of all permutations: sum over queries of M * min(K, n)."""
        return int(self.top_start[-1])

    @property
    def n_distinct_contexts(self) -> int:
        return int(np.count_nonzero(self.ctx_mult))

    @property
    def compression_ratio(self) -> float:
        """Distinct contexts over all contexts (1.0 without compression or with one permutation)."""
        return self.n_distinct_contexts / self.n_contexts if self.n_contexts else 1.0

    def permutation_top(self, query: int, permutation: int) -> np.ndarray:
        """The top-k documents of one sampled permutation, as indices within the query."""
        k = int(self.top_k_of[query])
        start = int(self.top_start[query]) + permutation * k
        return self.top_docs[start:start + k].copy()


class PLRank(RankingObjective):
    """Plackett-Luce (ListMLE) loss on the top K of sampled ground-truth permutations.

    Parameters
    ----------
    top_k : int or None, default 10
        Positions of each permutation that enter the loss (the paper's K). None: the whole list.
    n_permutations : int, default 1
        Ground-truth permutations sampled per query (the paper's "obj"; it recommends 3).
    seed : int, default 0
        Seed of the random tie-breaking; the same seed gives the same permutations.
    skip_uniform_queries : bool, default True
        Give queries whose labels are all equal zero gradients (they carry no ranking information).
    stop_at_lowest_grade : bool, default False
        End each permutation's loss before the first document of the query's lowest grade, so at
        ``min(K, documents above the lowest grade)`` positions: the documents of the lowest grade (the
        irrelevant ones, usually) are then never ordered among themselves. With K = 10, a query of one
        relevant document among many irrelevant ones otherwise asks the model to reproduce nine positions
        of a random order of tied documents; on MQ2008 that is 93% of the loss of such queries and 95% of
        their gradient's norm (``docs/quality.md``). The likelihood that remains is that of the top of the
        ranking down to the last document above the lowest grade (Xia et al.'s top-k likelihood with a
        per-query k).
    compress_contexts : bool, default True
        Store contexts shared by several permutations once (same results, less work).
    curvature : {"exact", "bound"}, default "exact"
        The hessians handed to the engines: the loss's diagonal hessian, or a quarter per context that holds
        the document, the largest curvature a context can have along a leaf (see the module docstring), whose
        steps do not grow with the list's length. Exact Newton leaves (``leaf_values="exact"``) compute the
        leaves' own curvature, so they refuse ``"bound"``.
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    Examples
    --------
    One query of three documents, the loss on the top two positions:

    >>> import numpy as np
    >>> obj = PLRank(top_k=2)
    >>> grad, hess = obj.gradients(np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3]))
    >>> print(grad.round(4), hess.round(4))
    [-0.4935 -0.0703  0.5639] [0.25   0.4478 0.3866]
    """

    name = "plrank"
    exact_leaves = True
    #: the demo's configurations (``plboost demo``): one permutation and the paper's recommended three
    demo_runs = ("plrank,n_permutations=1", "plrank,n_permutations=3")
    search_space = {"top_k": {"choices": (5, 10, 20, None), "default": 10},
                    "n_permutations": {"low": 1, "high": 6, "default": 1},
                    "stop_at_lowest_grade": {"choices": (False, True), "default": False},
                    # exact Newton leaves (plboost.engines.exact_leaves) are PLRank's, on LightGBM only
                    "leaf_values": {"choices": LEAF_VALUES, "default": "diagonal", "engines": EXACT_LEAF_ENGINES},
                    # exact leaves compute their own curvature (ExactLeafValues refuses the bound)
                    "curvature": {"choices": CURVATURES, "default": "exact", "only_if": ("leaf_values", "diagonal")}}
    parameter_constraints = {"top_k": (Integer(low=1), None), "n_permutations": Integer(low=1), "seed": SEED,
                             "skip_uniform_queries": Boolean(), "stop_at_lowest_grade": Boolean(),
                             "compress_contexts": Boolean(), "curvature": Options(*CURVATURES)}
    _non_default_examples = {"curvature": "bound"}

    def __init__(self, *, top_k: int | None = 10, n_permutations: int = 1, seed: int = 0,
                 skip_uniform_queries: bool = True, stop_at_lowest_grade: bool = False,
                 compress_contexts: bool = True, curvature: str = "exact",
                 hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(hessian_floor=hessian_floor)
        self._store(top_k=top_k, n_permutations=n_permutations, seed=seed, skip_uniform_queries=skip_uniform_queries,
                    stop_at_lowest_grade=stop_at_lowest_grade, compress_contexts=compress_contexts,
                    curvature=curvature)

    def _prepare(self, data: QueryData) -> PLRankState:
        labels, offsets = data.labels, data.offsets
        sizes = np.diff(offsets)
        top_k_of = sizes if self.top_k is None else np.minimum(sizes, self.top_k)
        lowest = np.minimum.reduceat(labels, offsets[:-1])
        if self.skip_uniform_queries:
            uniform = np.maximum.reduceat(labels, offsets[:-1]) == lowest
            top_k_of = np.where(uniform, 0, top_k_of)
        if self.stop_at_lowest_grade:
            above_lowest = np.add.reduceat(labels > np.repeat(lowest, sizes), offsets[:-1])
            top_k_of = np.minimum(top_k_of, above_lowest)
        top_k_of = top_k_of.astype(np.int64)
        m = self.n_permutations
        top_start = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(m * top_k_of, out=top_start[1:])
        n_entries = int(top_start[-1])
        top_docs = np.empty(n_entries, dtype=np.int32)
        ctx_owner = np.empty(n_entries, dtype=np.int32)
        ctx_mult = np.empty(n_entries, dtype=np.int32)
        top_union = np.empty(n_entries, dtype=np.int32)
        union_size = np.empty(sizes.size, dtype=np.int64)
        over_queries(_sample_top_contexts, offsets, labels, offsets, top_k_of, top_start, m, np.uint64(self.seed),
                     self.compress_contexts, top_docs, ctx_owner, ctx_mult, top_union, union_size)
        union_start = np.zeros(sizes.size + 1, dtype=np.int64)
        np.cumsum(union_size, out=union_start[1:])
        union_docs = np.empty(int(union_start[-1]), dtype=np.int32)
        union_position = np.empty(int(union_start[-1]) * m, dtype=np.int32)
        in_top = np.empty(data.n_docs, dtype=np.bool_)
        over_queries(_index_top_union, offsets, offsets, top_k_of, top_start, top_docs, m, top_union, union_start,
                     union_docs, union_position, in_top)
        position_weights, weight_start = self._position_weights(sizes, top_k_of)
        state = PLRankState(offsets, m, top_k_of, top_start, top_docs, ctx_owner, ctx_mult, union_start,
                            union_docs, union_position, in_top, position_weights, weight_start, np.empty(0))
        if self.curvature == "bound":
            bound = np.empty(data.n_docs)
            over_queries(_bounded_curvatures, offsets, state, bound)
            state = state._replace(bounded_curvature=bound)
        return state

    def _position_weights(self, sizes: np.ndarray, top_k_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The weight of each position of each query's permutations, as (weights, row start per query):
        PLRank weighs every position 1, all queries reading one row."""
        return np.ones(max(int(top_k_of.max(initial=0)), 1)), np.zeros(sizes.size, dtype=np.int64)

    def _gradients(self, scores, data, state: PLRankState, grad, hess) -> np.ndarray:
        n_entries = state.n_contexts
        losses = np.empty(data.offsets.size - 1)
        over_queries(_plrank_gradients, state.offsets, scores, state, self._workspace("outside", data.n_docs),
                     *(self._workspace(name, n_entries) for name in ("log_z", "chain_log_z", "chain_a", "chain_b")),
                     grad, hess, losses)
        if self.curvature == "bound":
            hess[:] = state.bounded_curvature
        return losses

    def leaf_curvature(self, scores, labels, offsets, leaf, n_leaves: int) -> np.ndarray:
        """Second derivative of the loss along each leaf's direction (the denominator of the paper's Eqn. 9).

        For the indicator ``u`` of the documents with ``leaf == l``, ``d^2/dt^2 loss(scores + t u)`` at
        ``t = 0`` is, per permutation, ``sum_C P_C (1 - P_C)`` with ``P_C = sum_{d in leaf and C} p(d|C)``
        (the variance of ``u`` under the context's choice distribution); this returns it per leaf, as the
        mean over permutations summed over queries. The diagonal hessians an engine sums instead,
        ``sum_d h_d = sum_C (P_C - sum_{d} p(d|C)^2)``, exceed it by the cross terms ``sum_{d != e} p_d p_e``.
        Queries left out of training (see ``skip_uniform_queries``) contribute nothing, as to the gradient.

        Parameters
        ----------
        scores, labels, offsets : the flat arrays of :meth:`gradients`.
        leaf : int array
            The leaf (0 .. n_leaves - 1) of every document.
        """
        data = self._query_data_of_arrays(labels, offsets)
        state = self._state_for(data)
        scores = self._checked_scores(scores, data)
        leaf = np.ascontiguousarray(leaf, dtype=np.int64)
        if leaf.shape != (data.n_docs,) or (leaf.size and not 0 <= leaf.min() <= leaf.max() < n_leaves):
            raise ValueError(f"leaf must hold one index in [0, {n_leaves}) per document ({data.n_docs}), got "
                             f"shape {leaf.shape} and range [{leaf.min() if leaf.size else None}, "
                             f"{leaf.max() if leaf.size else None}]")
        n_threads = thread_count(data.n_docs)
        ranges = query_ranges(state.offsets, n_threads)
        outside, log_z = np.empty(data.n_docs), np.empty(state.n_contexts)
        per_range = np.zeros((len(ranges), int(n_leaves)))
        run_in_threads([(_plrank_leaf_curvature, (first, end, scores, state, leaf, outside, log_z, row))
                        for (first, end), row in zip(ranges, per_range, strict=True)], n_threads)
        return per_range.sum(axis=0)
