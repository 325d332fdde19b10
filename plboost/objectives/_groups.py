"""What the objectives of tied grades share (PL-Partition, PL-LB, uRank): the label-group scan, and the
per-query set-up of the partitioned objectives.

A query's documents grouped by label in O(n), by counting: the partitions S_1 (highest label), ..., S_M of
PL-Partition and PL-LB, and, read from the last group back, uRank's ascending unique ratings. PL-Partition and
PL-LB then take each query's scratch (:func:`query_scratch`), its partitions and their log-sum-exps
(:func:`start_query`, :func:`partition_scores`), add the closed-form terms of the documents below each step
(:func:`collect_lower_terms`) and write the sums by document (:func:`finish_query`).
"""

from __future__ import annotations

import numpy as np

from .._jit import helper, widest_query
from .._numerics import exp_vectorizable, logaddexp
from ._base import zero_query

#: a query whose labels are all whole numbers below this (grades) is partitioned by counting
GRADES = 32


@helper
def label_groups(labels, lo, hi, order, starts, grade_of):
    """Documents of query lo:hi grouped by label, the highest label first, each label's documents in their
    input order: writes ``order[:n]`` (indices within the query) and the groups' starts ``starts[:M + 1]``
    (group m holds ``order[starts[m]:starts[m + 1]]``) and returns M, the number of distinct labels.
    ``grade_of`` is scratch (int64, length n).

    Grades (labels that are whole numbers below ``GRADES``: those of every LETOR dataset) are counted,
    O(n); other queries take their distinct labels one at a time, highest first, O(n L) for L distinct
    labels (a sort would cost more to compile than such queries are worth).
    """
    n = hi - lo
    count = np.zeros(GRADES, dtype=np.int64)
    grades = True
    for i in range(n):
        label = labels[lo + i]
        if not (0.0 <= label < GRADES and label == int(label)):
            grades = False
            break
        grade_of[i] = int(label)
        count[int(label)] += 1
    if not grades:  # by selection: each distinct label, highest first, takes its documents
        m = 0
        t = 0
        previous = np.inf
        while t < n:
            level = -np.inf
            for i in range(n):
                label = labels[lo + i]
                if level < label < previous:
                    level = label
            starts[m] = t
            m += 1
            for i in range(n):
                if labels[lo + i] == level:
                    order[t] = i
                    t += 1
            previous = level
        starts[m] = n
        return m
    # partitions from the highest grade down; count[j] becomes grade j's next free place
    m = 0
    starts[0] = 0
    for j in range(GRADES - 1, -1, -1):
        if count[j] > 0:
            starts[m + 1] = starts[m] + count[j]
            count[j] = starts[m]
            m += 1
    for i in range(n):
        order[count[grade_of[i]]] = i
        count[grade_of[i]] += 1
    return m


#: for the loops over documents that LLVM should vectorise (``_evaluate``, ``partition_scores``): sums may be
#: reassociated and multiply-adds fused; nothing about NaN or infinities is assumed
VECTOR_OPTIONS = dict(fastmath={"reassoc", "contract"})


@helper(**VECTOR_OPTIONS)
def partition_scores(scores, lo, order, starts, n_parts, ordered, shifted, top, below):
    """A query's scores in partition order to ``ordered``; per partition m its largest score ``top[m]``,
    ``shifted[t] = e^{s_t - top[m]}`` for its documents, and ``below[m]`` = log Σ e^s over partitions
    m, m + 1, ..., M - 1 (``below[M]`` = -inf): the one exponential per document of the query, by
    ``exp_vectorizable`` in one loop over the whole query that LLVM vectorises (libm's ``exp`` is a call per
    document; a loop per partition left each partition's last few documents to a scalar remainder).
    Indices are unsigned: no negative-index wraparound, which kept these loops scalar."""
    for m in range(n_parts):
        biggest = -np.inf
        for j in range(starts[m], starts[m + 1]):
            t = np.uint64(j)
            ordered[t] = scores[np.uint64(lo + order[t])]
            biggest = max(biggest, ordered[t])
        top[m] = biggest
        for j in range(starts[m], starts[m + 1]):
            t = np.uint64(j)
            shifted[t] = ordered[t] - biggest
    for j in range(starts[n_parts]):
        t = np.uint64(j)
        shifted[t] = exp_vectorizable(shifted[t])
    below[n_parts] = -np.inf
    for m in range(n_parts - 1, -1, -1):
        total = 0.0
        for j in range(starts[m], starts[m + 1]):
            total += shifted[np.uint64(j)]
        below[m] = logaddexp(below[m + 1], top[m] + np.log(total))


@helper
def collect_lower_terms(shifted, top, starts, n_parts, log_norm, coef_a, coef_b, n_steps, first_partition_shift,
                         grad64, hess64):
    """Add the closed-form terms of documents in the lower side of each step.

    Step m contributes coef_a[m] y + ... with y = e^{s_j - log_norm[m]}: gradient coef_a[m] y, hessian
    coef_a[m] y - coef_b[m] y^2, to every document j of partitions m + first_partition_shift, ... . Prefix
    sums are rescaled to the deepest step a document belongs to, so every exponent is <= 0; y is the
    document's ``shifted`` value times e^{top[p] - log_norm[m]} for its partition p.
    """
    chain_a = 0.0
    chain_b = 0.0
    for m in range(n_steps):
        if m > 0:
            ratio = np.exp(log_norm[m] - log_norm[m - 1])
            chain_a *= ratio
            chain_b *= ratio * ratio
        chain_a += coef_a[m]
        chain_b += coef_b[m]
        # documents whose deepest step is m
        last_part = m + first_partition_shift if m < n_steps - 1 else n_parts - 1
        for p in range(m + first_partition_shift, last_part + 1):
            scale = np.exp(top[p] - log_norm[m])
            for t in range(starts[p], starts[p + 1]):
                y = shifted[t] * scale
                grad64[t] += chain_a * y
                hess64[t] += chain_a * y - chain_b * y * y


@helper
def query_scratch(first, end, offsets):
    """Scratch of queries ``first <= q < end``, by rank in a query's order (documents) or by partition:
    the widest query's size, order, grade_of, starts, ordered, shifted, top, below, grad64 and hess64."""
    widest = widest_query(offsets, first, end)
    return (widest, np.empty(widest, dtype=np.int64), np.empty(widest, dtype=np.int64),
            np.empty(widest + 1, dtype=np.int64), np.empty(widest), np.empty(widest), np.empty(widest + 1),
            np.empty(widest + 1), np.empty(widest), np.empty(widest))


@helper
def start_query(scores, labels, lo, hi, order, grade_of, starts, ordered, shifted, top, below, grad64, hess64,
                 grad, hess):
    """Partition query ``lo:hi`` and return its number of partitions M. With M < 2 (no step) its gradients
    and hessians are 0; otherwise its scores go through ``partition_scores`` and its float64 sums
    ``grad64`` and ``hess64`` (by rank) start at 0."""
    n_parts = label_groups(labels, lo, hi, order, starts, grade_of)
    if n_parts < 2:
        zero_query(grad, hess, lo, hi)
        return n_parts
    partition_scores(scores, lo, order, starts, n_parts, ordered, shifted, top, below)
    grad64[:hi - lo] = 0.0
    hess64[:hi - lo] = 0.0
    return n_parts


@helper
def finish_query(lo, hi, order, grad64, hess64, grad, hess):
    """Write the float64 sums by rank to the query's gradients and (raw) hessians by document."""
    for t in range(hi - lo):
        grad[lo + order[t]] = grad64[t]
        hess[lo + order[t]] = hess64[t]
