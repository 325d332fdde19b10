"""PL-Rank-3: a sampled gradient of the expected DCG@K of the Plackett-Luce ranking policy of the scores.

Oosterhuis, "Computationally Efficient Optimization of Plackett-Luce Ranking Models for Relevance and
Fairness", SIGIR 2021 (PL-Rank-1 and -2); Oosterhuis, "Learning-to-Rank at the Speed of Sampling: Plackett-Luce
Gradient Estimation with Minimal Computational Complexity", SIGIR 2022 (PL-Rank-3: PL-Rank-2's estimate in
O(N (K + n)) time, rankings drawn with the Gumbel-max trick). Not to be confused with :class:`PLRank`, the
ListMLE loss of Xia et al. that plboost registers as ``plrank``.

The policy. The scores ``s`` of a query of n documents define the Plackett-Luce distribution over rankings
``y``: position k takes document d of the documents not yet placed with probability

.. math::

    \\pi(d \\mid y_{1:k-1}) = \\frac{e^{s_d}}{Z_k}, \\qquad Z_k = \\sum_{d' \\notin y_{1:k-1}} e^{s_{d'}}.

Its expected DCG@K is :math:`R = E_y[\\sum_{k=1}^{K} \\theta_k \\rho_{y_k}]` with discounts
:math:`\\theta_k = 1/\\log_2(k+1)` and gains :math:`\\rho_d = 2^{y_d} - 1` (``gain="exp"``) or the label
(``gain="linear"``).

The estimator (PL-Rank-2's, computed as PL-Rank-3 does, with one more expectation taken). From N rankings
:math:`y^{(1..N)}` of the top ``k = min(K, n)`` positions, drawn from the policy, with the reward from position
j on, :math:`G_j = \\sum_{x=j}^{k} \\theta_x \\rho_{y_x}` (:math:`G_{k+1} = 0`), :math:`\\pi_j(d) =
\\pi(d \\mid y_{1:j-1})`, :math:`\\bar\\rho_j = \\sum_{d'} \\pi_j(d') \\rho_{d'}` the expected gain of
position j given the positions before it, and :math:`r_d` the position of d in y (for a document outside the
top k: :math:`r_d = k` and no :math:`G_{r_d+1}` term):

.. math::

    \\widehat{\\frac{\\partial R}{\\partial s_d}} = \\frac{1}{N} \\sum_{i=1}^{N} \\Big[
        G^{(i)}_{r_d + 1} + \\sum_{j=1}^{r_d} \\pi_j(d)
        \\big(\\theta_j \\rho_d - c^{(i)}_j\\big) \\Big], \\qquad
        c_j = \\theta_j \\bar\\rho_j + G_{j+1}.

PL-Rank-2 (the paper's Eq. for PL-Rank-2, and PL-Rank-3, which computes it) has :math:`G_j = \\theta_j
\\rho_{y_j} + G_{j+1}` where this has :math:`c_j`. Both are unbiased: the log-derivative trick gives
:math:`\\sum_{j \\le r_d} ([y_j = d] - \\pi_j(d)) G_j`; PL-Rank-2 replaces the placed document's own term
:math:`\\theta_{r_d} \\rho_d` by its expectation :math:`\\sum_{j \\le r_d} \\pi_j(d) \\theta_j
\\rho_d`, and ``c`` does the same for the gain placed at each position j before d's: given
:math:`y_{1:j-1}`, :math:`\\rho_{y_j}` has mean :math:`\\bar\\rho_j` and :math:`\\pi_j(d)` is fixed, so
:math:`\\pi_j(d) \\theta_j (\\bar\\rho_j - \\rho_{y_j})` has mean 0 (whether j comes before
:math:`r_d` is decided by :math:`y_{1:j-1}` too). That term is there for what it does to each sample, not for
the variance (an independent review found the variance 10-13% larger with it on some MQ2008 queries): every
sample's estimates sum to exactly 0 over the query (the positions' terms telescope: :math:`\\sum_{d}
\\pi_j(d)(\\theta_j \\rho_d - c_j) = -G_{j+1}`), as the gradient of R does (R does not change when a
constant is added to a query's scores), where PL-Rank-2's sum to :math:`\\sum_j \\theta_j (\\bar\\rho_j -
\\rho_{y_j})`, the luck of the sample; and with K = 1 the estimate is the exact gradient. Sources: the paper,
and the author's released code (github.com/HarrieO/2022-SIGIR-plackett-luce, ``algorithms/PLRank.py``,
``PL_rank_3``): the first term is
``cumsum_labels[:, 1:]`` added at ``sampled_rankings[:, :-1]``, the second ``exp_scores * (labels *
cumsum(rank_weights / denom) - cumsum(cumsum_labels / denom))``, where ``cumsum_labels / denom`` becomes
:math:`c_j / Z_j` here. The tests compare the mean of many estimates with the exact gradient of R, obtained
by enumerating every ranking.

Per sample the kernel needs only prefix sums along the k positions, so a call costs O(n + N k log n) per
query, plus one sort of the query's scores (see Draws; a ranking whose terms cannot be pooled, see the kernel,
adds O(n)): with :math:`a_r = Z_r \\sum_{j \\le r} \\theta_j / Z_j` and :math:`b_r = Z_r \\sum_{j \\le r}
c_j / Z_j` (recursions whose factors :math:`Z_r / Z_{r-1} \\le 1`; :math:`\\bar\\rho_j = W_j / Z_j` with
:math:`W_j` summed as :math:`Z_j` is), document d's term is :math:`G_{r+1} + x (\\rho_d a_r - b_r)` with
:math:`x = e^{s_d} / Z_r \\le 1`.

Sign and scale. Engines minimise, so the gradient handed to them is the negated estimate, divided by the
query's ideal DCG@K with ``normalize=True`` (the default: the gradient of the expected NDCG@K, as
LambdaMART normalises; the author's run script optimises DCG, NDCG being one line away). Queries whose
gains are all equal (a single document, all labels equal, no relevant document) have an expected DCG that
does not depend on the scores: their gradients are exactly 0, not a noisy estimate of 0.

Hessian (``curvature="expected"``, the default). Kang, de Rijke and Oosterhuis, "Estimating the Hessian Matrix
of Ranking Objectives for Stochastic Learning to Rank with Gradient Boosted Trees", SIGIR 2024: the estimate
:math:`\\hat g_d(y; s)` above has mean :math:`\\partial R / \\partial s_d` at every s, so differentiating
that mean gives an estimate of the diagonal of R's second derivatives from the same rankings,

.. math::

    \\widehat{\\frac{\\partial^2 R}{\\partial s_d^2}} = \\frac{1}{N} \\sum_{i=1}^{N} \\Big[
        \\hat g^{(i)}_d S^{(i)}_d + \\frac{\\partial \\hat g^{(i)}_d}{\\partial s_d} \\Big], \\qquad
    S_d = [d \\in y_{1:k}] - \\sum_{j \\le r_d} \\pi_j(d),

:math:`S_d` the derivative of the log-probability of the sampled top k (the score function) and the second
term the derivative with the ranking held fixed: :math:`\\pi_j(d)` moves by :math:`\\pi_j(d)(1 - \\pi_j(d))`
and :math:`\\bar\\rho_j` by :math:`\\pi_j(d)(\\rho_d - \\bar\\rho_j)`, so it is
:math:`\\sum_{j \\le r_d} [\\pi_j(1 - \\pi_j)(\\theta_j \\rho_d - c_j) - \\pi_j^2 \\theta_j
(\\rho_d - \\bar\\rho_j)]`. The paper differentiates PL-Rank-2's estimate (:math:`G_j` for :math:`c_j`,
hence no :math:`\\bar\\rho_j` term); the authors' code (github.com/jkang98/2024-SIGIR-XGBoost-PL-Rank,
``PL_rank_3_hess``) computes it with the squared prefix sums :math:`Z_r^2 \\sum_{j \\le r} (\\cdot) / Z_j^2`,
as the kernel does here (and :math:`Z_r \\sum_{j \\le r} 1 / Z_j` for :math:`S_d`), at no greater cost.
The tests compare the mean of many estimates with central second differences of R computed by enumeration.

The sign. R is not concave in s: where raising a document's score speeds the gain up (R convex in s_d along a
sigmoid's tail, e.g. for a relevant document far down the ranking), the loss's second derivative is negative
and a Newton step -g/h would climb the loss. The engines get the absolute value of the estimate (``h =
|estimate|``, at least ``hessian_floor``): the step keeps the gradient's direction and takes the curvature's
magnitude for its length, the saddle-free Newton step of Dauphin et al. (NeurIPS 2014).
Clipping the negative values to the floor instead trained to a lower NDCG
(``docs/quality.md``). The authors' code hands the signed value to XGBoost as it is. What the engines get is
therefore not an unbiased estimate of anything: the absolute value of the mean of N terms is biased upwards
when N is small.

``curvature="lambda"``: LambdaMART's curvature for each context's advantage,
:math:`h_d = \\frac{1}{N} \\sum_i \\sum_{j \\le r_d} \\theta_j \\pi_j(d)(1 - \\pi_j(d))
|\\rho_d - \\bar\\rho_j|`, always >= 0, computed with one pair of prefix sums per distinct gain of the query
(O(N (n + k G)) for G grades). Its Newton steps are of lambdarank's scale too; it trained slightly worse than
the default in ``docs/quality.md``.

Neither curvature is R's own hessian's, so exact Newton leaves (``leaf_values="exact"``, PLRank's) are
refused.

Draws. Ranking i of a query is drawn position by position, as the policy is defined: position j takes the
document at :math:`u_j Z_j` of the running sum of the weights :math:`e^{s_d - s_{max}}` of the documents not yet
placed, found in a sum tree over the documents by score (descending, ties in input order: :func:`stream_order`)
from which each placed document is removed (O(log n) a position, so O(k log n) a ranking where the Gumbel-max
trick's keys for every document cost O(n); the paper draws with the latter). Queries whose scores span more than
``_LINEAR_SPAN`` keep the tree's sums as logarithms. The uniforms come from a counter-based stream
(:mod:`plboost._random`): :math:`u_j` of ranking i is number :math:`i n + j` of the stream, and the stream's
key is a hash of the seed, n, and, in that order, each document's label and the bits of
:math:`s_d - s_{max}` (a fixed marker for a document ``WIDEST_SCORE_GAP`` or more below the top). So:

- the scores change at every boosting round, so each round draws fresh rankings, while a call is a pure
  function of (scores, labels, offsets, parameters): results do not depend on threads, on copies of the
  objective, or on how many times it was called before (a second ``xgb.train`` with the same objective
  trains the same model; a call counter would have made it continue the first's stream). A query whose
  scores a round leaves bit for bit unchanged draws the same rankings again;
- the draws follow the documents, not their input order: shuffling a query's documents (of distinct scores)
  shuffles the outputs with them;
- narrowing the gaps wider than ``WIDEST_SCORE_GAP`` (what the objectives do to scores beyond
  ``RAW_SCORE_LIMIT``) changes neither the order nor the relative scores of the documents within that gap of
  the top (a narrowed document ends at least that far below), so it changes no draw; nor does adding a
  constant to a query whose scores are all equal.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._constraints import SEED, Boolean, Integer, Options
from .._jit import helper, kernel, over_queries, widest_query
from .._numerics import logaddexp, score_range, stable_argsort
from .._queries import exp_gains_within_float32, relative_exp_gains
from .._random import score_stream_key, stream_order, uniform
from ._base import (DEFAULT_HESSIAN_FLOOR, WIDEST_SCORE_GAP, QueryData, RankingObjective, refuse_overflow,
                    zero_query)

#: gains ``gain`` can name: ``2^y - 1`` and ``y`` (as :class:`plboost.metrics` names them), and relevance
#: estimates (labels that are any finite numbers, from a click log)
GAINS = ("exp", "linear", "estimate")
#: queries whose scores span at most this are sampled and summed in linear space (e^{-600} is a normal float)
_LINEAR_SPAN = 600.0
#: a ranking's terms for the documents outside its top k are pooled over rankings when Z_{k-1} is at least this
#: (module docstring of the kernel): its coefficients are then at most k / floor, so pooling loses little
_POOLED_FLOOR = 1e-3
#: curvatures ``curvature`` can name (see the module docstring), in the order of the kernel's codes
CURVATURES = ("expected", "lambda")
_EXPECTED = 0
_LAMBDA = 1


# --------------------------------------------------------------------------------------------------
# Drawing the top k of a ranking

@helper
def _leaves_for(n):
    """The leaves of a sum tree over n documents: the least power of 2 >= n."""
    leaves = 1
    while leaves < n:
        leaves *= 2
    return leaves


@helper
def _add(a, b, linear):
    """a + b of two sums kept as they are (linear) or as their logarithms (log space)."""
    return a + b if linear else logaddexp(a, b)


@helper
def _set_leaf(mass, gain_mass, node, value, gain_value, linear):
    """Leaf ``node`` of both trees to these values, and its ancestors recomputed from their children."""
    mass[node] = value
    gain_mass[node] = gain_value
    node //= 2
    while node >= 1:
        mass[node] = _add(mass[2 * node], mass[2 * node + 1], linear)
        gain_mass[node] = _add(gain_mass[2 * node], gain_mass[2 * node + 1], linear)
        node //= 2


@helper
def _leaf_values(d, weight, gains, lo, linear):
    """Document d's leaves: e^{s_d - s_max} and that times its gain (linear), or s_d and s_d + log(gain)."""
    if linear:
        return weight[d], weight[d] * gains[lo + d]
    rho = gains[lo + d]
    return weight[d], weight[d] + np.log(rho) if rho > 0.0 else -np.inf


@helper
def _build_sum_trees(n, order, weight, gains, lo, leaves, linear, mass, gain_mass):
    """Two sum trees over the query's documents in stream order (document ``order[t]`` at leaf ``leaves + t``,
    ``leaves`` a power of 2 >= n), of ``_leaf_values``: ``mass`` of the weights, ``gain_mass`` of the weights
    times the gains (in log space: their logarithms, -inf for an empty sum). Node v holds the sum of its children
    2v and 2v + 1, added in that order, so a node recomputed from the same children has the same bits; the root
    (node 1) is the total."""
    empty = 0.0 if linear else -np.inf
    for t in range(leaves):
        node = leaves + t
        if t < n:
            mass[node], gain_mass[node] = _leaf_values(order[t], weight, gains, lo, linear)
        else:
            mass[node] = empty
            gain_mass[node] = empty
    for node in range(leaves - 1, 0, -1):
        mass[node] = _add(mass[2 * node], mass[2 * node + 1], linear)
        gain_mass[node] = _add(gain_mass[2 * node], gain_mass[2 * node + 1], linear)


@helper
def _top_k_sampled(key, ranking, n, k, order, weight, gains, lo, leaves, linear, mass, gain_mass, top, top_leaf):
    """The top k of ranking number ``ranking``, drawn position by position as the policy defines it: position j
    takes the document not yet placed at u_j Z_j of the running sum of their weights (u_j uniform number j of the
    ranking's stream, Z_j their sum: the tree's root), found by descending the tree in O(log n), then removed
    from both trees. Returns Z_k and W_k (their logarithms in log space): the sums of the weights and of the
    weights times the gains of the documents after the top k, the trees' roots then (sums of what is left, with
    no subtraction); and puts the trees back (``top_leaf``: scratch of k, the leaves taken).

    A step goes to a child only where its sum is positive, so no placed document (an empty leaf) is drawn again
    and rounding cannot land past the last one. O(k log n) a ranking, where keys for every document (the
    Gumbel-max trick) cost O(n)."""
    empty = 0.0 if linear else -np.inf
    for j in range(k):
        u = uniform(key, ranking * n + j)
        target = u * mass[1] if linear else (np.log(u) + mass[1] if u > 0.0 else -np.inf)
        node = 1
        while node < leaves:
            left = 2 * node
            if mass[left] > target or mass[left + 1] == empty:
                node = left
            else:
                if linear:
                    target -= mass[left]
                else:  # log(e^target - e^left), left <= target
                    target += np.log1p(-np.exp(mass[left] - target))
                node = left + 1
        top[j] = order[node - leaves]
        top_leaf[j] = node
        _set_leaf(mass, gain_mass, node, empty, empty, linear)
    rest = mass[1]
    rest_gain = gain_mass[1]
    for j in range(k):
        value, gain_value = _leaf_values(top[j], weight, gains, lo, linear)
        _set_leaf(mass, gain_mass, top_leaf[j], value, gain_value, linear)
    return rest, rest_gain


@helper
def _query_stream(seed, scores, labels, lo, hi, relative, linear_span, widest_gap):
    """What every ranking of query ``lo:hi`` is drawn from: its top score, stream order and key (module docstring,
    Draws), and whether its sums are kept in linear space (its scores span at most ``linear_span``)."""
    top_score, bottom_score = score_range(scores, lo, hi)
    order = stream_order(scores[lo:hi])
    key = score_stream_key(seed, scores, labels, lo, hi, order, relative, top_score, widest_gap)
    return top_score, order, key, top_score - bottom_score <= linear_span


# --------------------------------------------------------------------------------------------------
# The estimate

@helper
def _grade_index(gains, lo, hi, grade_of, grades):
    """The query's distinct gains, ascending, into ``grades[:G]``, and each document's index among them into
    ``grade_of[:n]``; returns G."""
    n = hi - lo
    order = stable_argsort(gains[lo:hi])
    count = 0
    for t in range(n):
        i = order[t]
        if count == 0 or gains[lo + i] != grades[count - 1]:
            grades[count] = gains[lo + i]
            count += 1
        grade_of[i] = count - 1
    return count


@kernel
def _pl_rank3_kernel(first, end, scores, labels, gains, scale, offsets, discounts, top_k, n_samples,
                     seed, curvature, most_grades, linear_span, pooled_floor, widest_gap, grad, hess):
    """Negated PL-Rank-3 gradients and the curvature ``curvature`` (CURVATURES' index) of the module's docstring
    (raw: signed for "expected", no floor), times ``scale[q]`` (1 / ideal DCG, or 1; 0 for queries left out), for
    queries ``first <= q < end``; ``most_grades`` bounds a query's distinct gains.

    A document outside a ranking's top k takes terms of one form, x (rho a1 - b1) and the like with x = e^{s_d} /
    Z_{k-1}: in linear space, a ranking whose Z_{k-1} is at least ``pooled_floor`` adds its coefficients (a1 /
    Z_{k-1}, ...) to totals over rankings, and each document takes the totals less the rankings it was in the top
    of, once per query: O(k) per ranking instead of O(n). (The floor bounds the coefficients, so the difference
    loses little to rounding; other rankings go document by document.)"""
    widest = widest_query(offsets, first, end)
    k_max = min(widest, top_k)
    n_grades = most_grades if curvature == _LAMBDA else 0
    weight = np.empty(widest)  # e^{s - s_max} (linear) or s (log space)
    leaves = _leaves_for(widest)
    mass = np.empty(2 * leaves)  # the sum trees of _top_k_sampled
    gain_mass = np.empty(2 * leaves)
    top_leaf = np.empty(k_max, dtype=np.int64)
    relative = np.empty(widest)
    position = np.empty(widest, dtype=np.int64)
    g_sum = np.empty(widest)  # sum over samples of the estimate
    h_sum = np.empty(widest)  # sum over samples of the curvature's term (expected: of -(g S + dg/ds))
    grade_of = np.empty(widest, dtype=np.int64)
    grades = np.empty(n_grades)
    top = np.empty(k_max, dtype=np.int64)
    z = np.empty(k_max + 1)  # Z_j (linear) or log Z_j; z[k] is the documents after the top k
    w = np.empty(k_max + 1)  # sum of e^s rho over the same documents (linear) or its log
    reward = np.empty(k_max + 1)  # G_j, reward[k] = 0
    mean_gain = np.empty(k_max)  # rho-bar_j
    a0 = np.empty(k_max)  # Z_r sum_{j<=r} 1 / Z_j
    a1 = np.empty(k_max)  # Z_r sum_{j<=r} theta_j / Z_j
    b1 = np.empty(k_max)  # Z_r sum_{j<=r} c_j / Z_j
    a2 = np.empty(k_max)  # Z_r^2 sum_{j<=r} theta_j / Z_j^2
    b2 = np.empty(k_max)  # Z_r^2 sum_{j<=r} (c_j + theta_j rho-bar_j) / Z_j^2
    l1 = np.empty((n_grades, k_max))  # lambda: Z_r sum_{j<=r} theta_j |rho_g - rho-bar_j| / Z_j, per grade g
    l2 = np.empty((n_grades, k_max))  # and the same over Z_j^2, times Z_r^2
    # pooled rankings: the coefficients of the terms of documents outside the top k, summed over the rankings
    # (total) and, per document, over the rankings it was in the top k of (inside)
    pooled_total = np.empty(4)  # g: a1 / Z, b1 / Z; expected: (a0 a1 + 2 a2) / Z^2, (a0 b1 + b2) / Z^2
    coefficient = np.empty(4)  # the same, of one ranking
    pooled_grade = np.empty((2, n_grades))  # lambda: l1 / Z, l2 / Z^2 per grade
    pooled_inside = np.empty((4, widest))
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        if scale[q] == 0.0:
            zero_query(grad, hess, lo, hi)
            continue
        k = min(n, top_k)
        top_score, order, key, linear = _query_stream(seed, scores, labels, lo, hi, relative, linear_span, widest_gap)
        n_query_grades = _grade_index(gains, lo, hi, grade_of, grades) if curvature == _LAMBDA else 0
        for i in range(n):
            weight[i] = np.exp(scores[lo + i] - top_score) if linear else scores[lo + i]
            position[i] = k  # k: after the top k
            g_sum[i] = 0.0
            h_sum[i] = 0.0
            for c in range(4):
                pooled_inside[c, i] = 0.0
        pooled_total[:] = 0.0
        pooled_grade[:, :n_query_grades] = 0.0
        query_leaves = _leaves_for(n)
        _build_sum_trees(n, order, weight, gains, lo, query_leaves, linear, mass, gain_mass)
        for p in range(n_samples):
            z[k], w[k] = _top_k_sampled(key, p, n, k, order, weight, gains, lo, query_leaves, linear, mass,
                                        gain_mass, top, top_leaf)
            for j in range(k):
                position[top[j]] = j
            # the normalisers Z_j and the gain sums W_j, from the documents after the top k up
            for j in range(k - 1, -1, -1):
                value, gain_value = _leaf_values(top[j], weight, gains, lo, linear)
                z[j] = _add(z[j + 1], value, linear)
                w[j] = _add(w[j + 1], gain_value, linear)
            reward[k] = 0.0
            for j in range(k - 1, -1, -1):
                reward[j] = reward[j + 1] + discounts[j] * gains[lo + top[j]]
            for j in range(k):
                # c_j = theta_j E_j[rho] + G_{j+1}: G_j with the placed document's gain at its expectation
                mean_gain[j] = w[j] / z[j] if linear else np.exp(w[j] - z[j])
                c = discounts[j] * mean_gain[j] + reward[j + 1]
                a0[j] = 1.0
                a1[j] = discounts[j]
                b1[j] = c
                a2[j] = discounts[j]
                b2[j] = c + discounts[j] * mean_gain[j]
                for g in range(n_query_grades):
                    gap = discounts[j] * abs(grades[g] - mean_gain[j])
                    l1[g, j] = gap
                    l2[g, j] = gap
                if j > 0:
                    ratio = z[j] / z[j - 1] if linear else np.exp(z[j] - z[j - 1])
                    square = ratio * ratio
                    a0[j] += a0[j - 1] * ratio
                    a1[j] += a1[j - 1] * ratio
                    b1[j] += b1[j - 1] * ratio
                    a2[j] += a2[j - 1] * square
                    b2[j] += b2[j - 1] * square
                    for g in range(n_query_grades):
                        l1[g, j] += l1[g, j - 1] * ratio
                        l2[g, j] += l2[g, j - 1] * square
            pooled = linear and z[k - 1] >= pooled_floor
            if pooled:
                last = k - 1
                inverse = 1.0 / z[last]
                square = inverse * inverse
                coefficient[0] = a1[last] * inverse
                coefficient[1] = b1[last] * inverse
                coefficient[2] = (a0[last] * a1[last] + 2.0 * a2[last]) * square
                coefficient[3] = (a0[last] * b1[last] + b2[last]) * square
                for c in range(4):
                    pooled_total[c] += coefficient[c]
                for g in range(n_query_grades):
                    pooled_grade[0, g] += l1[g, last] * inverse
                    pooled_grade[1, g] += l2[g, last] * square
                for j in range(k):
                    i = top[j]
                    pooled_inside[0, i] += coefficient[0]
                    pooled_inside[1, i] += coefficient[1]
                    if curvature == _EXPECTED:
                        pooled_inside[2, i] += coefficient[2]
                        pooled_inside[3, i] += coefficient[3]
                    else:
                        pooled_inside[2, i] += l1[grade_of[i], last] * inverse
                        pooled_inside[3, i] += l2[grade_of[i], last] * square
            for t in range(k if pooled else n):
                i = top[t] if pooled else t
                r = position[i]
                follow = 0.0
                placed = 0.0
                if r == k:
                    r = k - 1  # outside the top k: in every context
                else:
                    follow = reward[r + 1]
                    placed = 1.0
                x = weight[i] / z[r] if linear else np.exp(weight[i] - z[r])
                rho = gains[lo + i]
                direct = x * (rho * a1[r] - b1[r])
                estimate = follow + direct
                g_sum[i] += estimate
                if curvature == _EXPECTED:
                    # d estimate / d s_d with the ranking held fixed (pi_j(d) and rho-bar_j move with s_d)
                    moved = direct - x * x * (2.0 * rho * a2[r] - b2[r])
                    score = placed - x * a0[r]  # d log P(ranking) / d s_d
                    h_sum[i] -= estimate * score + moved
                else:
                    g = grade_of[i]
                    h_sum[i] += x * l1[g, r] - x * x * l2[g, r]
            for j in range(k):
                position[top[j]] = k
        if linear:  # the pooled rankings in which each document was outside the top k
            for i in range(n):
                w_i = weight[i]
                rho = gains[lo + i]
                outside = w_i * (rho * (pooled_total[0] - pooled_inside[0, i])
                                 - (pooled_total[1] - pooled_inside[1, i]))
                g_sum[i] += outside
                if curvature == _EXPECTED:
                    h_sum[i] += w_i * w_i * (rho * (pooled_total[2] - pooled_inside[2, i])
                                             - (pooled_total[3] - pooled_inside[3, i])) - outside
                else:
                    g = grade_of[i]
                    h_sum[i] += (w_i * (pooled_grade[0, g] - pooled_inside[2, i])
                                 - w_i * w_i * (pooled_grade[1, g] - pooled_inside[3, i]))
        factor = scale[q] / n_samples
        for i in range(n):
            grad[lo + i] = -factor * g_sum[i]
            hess[lo + i] = factor * h_sum[i]


@kernel
def exposure_kernel(first, end, scores, labels, gains, offsets, discounts, top_k, n_samples, seed, linear_span,
                     widest_gap, exposure):
    """Each document's expected exposure :math:`E_d = \\sum_{j \\le k} \\theta_j P(y_j = d)` under the policy of
    the scores, estimated from ``n_samples`` rankings drawn as the gradient's are (with the key of ``seed``), for
    queries ``first <= q < end``: Rao-Blackwellised, each ranking adds :math:`\\sum_{j \\le r_d} \\theta_j
    \\pi_j(d)`, the probability that each position up to d's took d given the positions above it (r_d: d's
    position, or k for a document after the top k), whose mean is :math:`\\sum_j \\theta_j P(y_j = d)`. With
    :math:`A_r = \\sum_{j \\le r} \\theta_j / Z_j` that is :math:`e^{s_d - s_{max}} A_{r_d}`; documents after the
    top k share :math:`A_k` (summed over rankings, less the rankings a document was in the top of, in linear
    space). ``gains`` only fills the trees' second sums, which this does not read."""
    widest = widest_query(offsets, first, end)
    k_max = min(widest, top_k)
    weight = np.empty(widest)
    leaves = _leaves_for(widest)
    mass = np.empty(2 * leaves)
    gain_mass = np.empty(2 * leaves)
    top_leaf = np.empty(k_max, dtype=np.int64)
    relative = np.empty(widest)
    top = np.empty(k_max, dtype=np.int64)
    z = np.empty(k_max + 1)
    prefix = np.empty(k_max)  # A_r (linear) or log A_r
    inside = np.empty(widest)  # linear: A_k of the rankings d was in the top k of
    position = np.empty(widest, dtype=np.int64)  # log space: d's position, k - 1 after the top k (A_k = A_{k-1})
    for q in range(first, end):
        lo, hi = offsets[q], offsets[q + 1]
        n = hi - lo
        if n == 0:
            continue
        k = min(n, top_k)
        top_score, order, key, linear = _query_stream(seed, scores, labels, lo, hi, relative, linear_span, widest_gap)
        for i in range(n):
            weight[i] = np.exp(scores[lo + i] - top_score) if linear else scores[lo + i]
            exposure[lo + i] = 0.0
            inside[i] = 0.0
            position[i] = k - 1
        pooled_total = 0.0
        query_leaves = _leaves_for(n)
        _build_sum_trees(n, order, weight, gains, lo, query_leaves, linear, mass, gain_mass)
        for p in range(n_samples):
            z[k], _ = _top_k_sampled(key, p, n, k, order, weight, gains, lo, query_leaves, linear, mass, gain_mass,
                                     top, top_leaf)
            for j in range(k - 1, -1, -1):
                value, _ = _leaf_values(top[j], weight, gains, lo, linear)
                z[j] = _add(z[j + 1], value, linear)
            for j in range(k):
                term = discounts[j] / z[j] if linear else np.log(discounts[j]) - z[j]
                prefix[j] = term if j == 0 else _add(prefix[j - 1], term, linear)
            if linear:
                pooled_total += prefix[k - 1]
                for j in range(k):
                    d = top[j]
                    inside[d] += prefix[k - 1]
                    exposure[lo + d] += weight[d] * prefix[j]
            else:  # every document, each at its own position's A
                for j in range(k):
                    position[top[j]] = j
                for d in range(n):
                    exposure[lo + d] += np.exp(weight[d] + prefix[position[d]])
                for j in range(k):
                    position[top[j]] = k - 1
        for d in range(n):
            if linear:
                exposure[lo + d] += weight[d] * (pooled_total - inside[d])
            exposure[lo + d] /= n_samples


# --------------------------------------------------------------------------------------------------
# The objective

class PLRank3State(NamedTuple):
    """Per-dataset constants of :class:`PLRank3`: each document's gain, each query's scale (1 / ideal DCG@K
    with ``normalize``, else 1; 0 for a query whose gains are all equal), the discounts of positions 1..K and the
    number of distinct gains."""

    gains: np.ndarray
    scale: np.ndarray
    discounts: np.ndarray
    #: the dataset's distinct gains, which bound each query's (the lambda curvature's prefix sums per grade)
    n_grades: int


class PLRank3(RankingObjective):
    """PL-Rank-3 (Oosterhuis 2022): the sampled gradient of the expected (N)DCG@K of the Plackett-Luce policy.

    Oosterhuis, SIGIR 2021 and SIGIR 2022; the hessian of Kang, de Rijke and Oosterhuis, SIGIR 2024 (see the
    module docstring for the estimator, the curvature handed to the engines as the hessian, and how the
    rankings are drawn).

    Parameters
    ----------
    top_k : int or None, default 10
        The cutoff K of DCG@K (the author's experiments used 5). None: the whole ranking.
    n_samples : int, default 30
        Rankings N drawn per query and call (the paper compares 10, 100 and 1000). 30 reached the validation
        NDCG@10 of 100 and 300 on MQ2008, the MSLR-WEB10K slice and LightGBM's example at a third of the cost
        (``docs/quality.md``, section 7); the estimate's noise falls as 1/N (``scripts/pl_rank3_rankings.py``).
    seed : int, default 0
        Seed of the draws; with it, the query's labels and its current scores determine them.
    gain : {"exp", "linear", "estimate"}, default "exp"
        A document's gain: ``2^y - 1`` or ``y`` of a graded label y; or, with "estimate", the label itself, a
        relevance estimate from a click log (:mod:`plboost.clicks.estimators`: any finite number, negative ones
        included), the gradient of whose expected DCG@K is unbiased where the estimates are. A query's estimates
        are taken relative to its smallest, which changes no expected gradient (every ranking fills the same
        positions, so a constant added to a query's gains adds a constant to its expected DCG) and keeps the
        gains the kernel sums in log space non-negative; the draws' key hashes these relative gains, so estimates
        shifted by a constant per query draw the same rankings and give the same outputs (up to the shift's
        rounding). It needs ``normalize=False``: an ideal DCG of estimates
        would be a biased normaliser (and can be 0 or negative), and ``curvature="expected"``.
    normalize : bool, default True
        Divide each query's gradient and hessian by its ideal DCG@K (the gradient of the expected NDCG@K);
        False: of the expected DCG@K.
    curvature : {"expected", "lambda"}, default "expected"
        The hessian handed to the engines: "expected", the absolute value of the estimated diagonal of the
        second derivatives of the expected (N)DCG@K (Kang, de Rijke, Oosterhuis, SIGIR 2024; saddle-free
        Newton steps where it is negative); "lambda", LambdaMART's curvature of each position's advantage,
        ``sum_j theta_j pi_j (1 - pi_j) |rho_d - E_j[rho]|``.
    hessian_floor : float, default 1e-6
        Lower bound of every hessian handed to the engines.

    Examples
    --------
    >>> import numpy as np
    >>> grad, hess = PLRank3(top_k=2).gradients(np.array([0.5, 0.0, -0.5]), np.array([2, 1, 0]), np.array([0, 3]))
    >>> bool(grad[0] < 0 < grad[2]), bool((hess > 0).all())
    (True, True)
    """

    name = "pl_rank3"
    demo_runs = ("pl_rank3",)
    #: a call costs about 6-11 ns per document and ranking (scripts/bench.py, kernels): n_samples is searched up
    #: to 300 (about 2-3 ms per 1,000 documents and round), not the paper's 1000
    search_space = {"top_k": {"choices": (5, 10, 20, None), "default": 10},
                    "n_samples": {"low": 10, "high": 300, "log": True, "default": 30}}
    _no_loss_reason = ("its gradient is a sampled estimate of the gradient of the expected (N)DCG@K of the "
                       "Plackett-Luce policy, not the derivative of a loss it computes")
    _non_default_examples = {"gain": "linear", "curvature": "lambda"}
    parameter_constraints = {"top_k": (Integer(low=1), None), "n_samples": Integer(low=1), "seed": SEED,
                             "gain": Options(*GAINS), "normalize": Boolean(), "curvature": Options(*CURVATURES)}
    #: queries whose scores span more are computed in log space (an attribute so that tests can force that path)
    _linear_span = _LINEAR_SPAN
    #: rankings whose Z_{k-1} (scores relative to the query's top one) is below it go document by document
    #: (an attribute so that tests can compare the two paths)
    _pooled_floor = _POOLED_FLOOR

    def __init__(self, *, top_k: int | None = 10, n_samples: int = 30, seed: int = 0, gain: str = "exp",
                 normalize: bool = True, curvature: str = "expected", hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        super().__init__(hessian_floor=hessian_floor)
        self._store(top_k=top_k, n_samples=n_samples, seed=seed, gain=gain, normalize=normalize, curvature=curvature)
        if self.gain == "estimate" and (self.normalize or self.curvature != "expected"):
            raise ValueError("PLRank3: gain='estimate' (relevance estimates from clicks) takes normalize=False (an "
                             "ideal DCG of estimates is a biased normaliser) and curvature='expected' (the lambda "
                             "curvature sums per distinct gain)")

    @property
    def takes_estimates(self) -> bool:
        return self.gain == "estimate"

    def _prepare(self, data: QueryData) -> PLRank3State:
        labels, offsets = data.labels, data.offsets
        sizes = np.diff(offsets)
        if self.gain == "linear":
            gains = labels.copy()
        elif self.gain == "estimate":
            gains = labels - np.repeat(np.minimum.reduceat(labels, offsets[:-1]), sizes) if labels.size else labels
        elif self.normalize:  # the gains of each query over 2^(its largest label): scale gives the same gradients
            gains = relative_exp_gains(labels, offsets)
        else:
            gains = exp_gains_within_float32(labels, "PLRank3(normalize=False) labels", "or normalize=True")
        widest = int(sizes.max()) if sizes.size else 0
        k = widest if self.top_k is None else min(self.top_k, widest)
        discounts = 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))
        scale = np.zeros(sizes.size)
        if gains.size:
            starts = offsets[:-1][sizes > 0]
            varies = np.zeros(sizes.size, dtype=bool)
            varies[sizes > 0] = np.maximum.reduceat(gains, starts) > np.minimum.reduceat(gains, starts)
            query = np.repeat(np.arange(sizes.size), sizes)
            order = np.lexsort((-gains, query))  # by query, each query's gains descending
            rank = np.arange(gains.size) - offsets[query]
            kept = rank < k
            ideal = np.bincount(query[kept], weights=gains[order][kept] * discounts[rank[kept]], minlength=sizes.size)
            scale[varies] = 1.0 / ideal[varies] if self.normalize else 1.0
        return PLRank3State(gains, scale, discounts, int(np.unique(labels).size))

    def _estimates(self, scores, data: QueryData, state: PLRank3State, grad, hess) -> None:
        """The kernel's outputs: negated gradient estimates and, for ``curvature="expected"``, the estimate of
        the diagonal of the loss's hessian with its sign (the tests compare its mean with the exact one)."""
        top_k = state.discounts.size if self.top_k is None else self.top_k
        hashed = state.gains if self.gain == "estimate" else data.labels  # what the draws' key hashes
        over_queries(_pl_rank3_kernel, data.offsets, np.ascontiguousarray(scores), hashed, state.gains,
                     state.scale, data.offsets, state.discounts, top_k, self.n_samples, np.uint64(self.seed),
                     np.int64(CURVATURES.index(self.curvature)), np.int64(state.n_grades),
                     float(self._linear_span), float(self._pooled_floor), WIDEST_SCORE_GAP,
                     grad, hess)

    def _gradients(self, scores, data: QueryData, state: PLRank3State, grad, hess) -> None:
        self._estimates(scores, data, state, grad, hess)
        if not self.normalize:
            refuse_overflow(grad, hess, data, "PLRank3(normalize=False)",
                            "normalize=True divides each query's gradients by its ideal DCG")
        if self.curvature == "expected":
            np.abs(hess, out=hess)  # the saddle-free Newton step (see the module docstring)
        return None
