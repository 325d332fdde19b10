"""The label-group scan that the objectives of tied grades share (PL-Partition, PL-LB, uRank).

A query's documents grouped by label in O(n), by counting: the partitions S_1 (highest label), ..., S_M of
PL-Partition and PL-LB, and, read from the last group back, uRank's ascending unique ratings.
"""

from __future__ import annotations

import numpy as np

from .._jit import helper

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
