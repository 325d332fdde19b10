"""The parallel driver (``plboost._jit.over_queries``) and the shared sort: results do not depend on how
queries are spread over threads, and two threads may train on the same data at once."""

import threading

import numpy as np
import pytest

from plboost import _jit
from plboost._numerics import stable_argsort
from plboost.data import make_synthetic
from plboost.objectives import PLLowerBound, PLPartition, PLRank, UMart, URank


@pytest.mark.parametrize("n", [0, 1, 2, 15, 16, 17, 31, 33, 100, 1000, 4097])
def test_stable_argsort_is_numpys_stable_argsort(n):
    rng = np.random.default_rng(n)
    for keys in (rng.normal(size=n), rng.integers(0, 3, size=n).astype(float), np.zeros(n), -np.arange(n, dtype=float)):
        np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


@pytest.mark.parametrize("n_ranges", [1, 2, 3, 8, 1000])
def test_query_ranges_cover_every_query_once_and_balance_documents(n_ranges):
    sizes = np.random.default_rng(0).integers(1, 200, 97)
    offsets = np.r_[0, np.cumsum(sizes)]
    ranges = _jit.query_ranges(offsets, n_ranges)
    covered = [q for first, end in ranges for q in range(first, end)]
    assert covered == list(range(97))
    assert len(ranges) <= n_ranges and all(end > first for first, end in ranges)
    if n_ranges == 2:  # no range holds more than half the documents plus one query
        assert max(offsets[end] - offsets[first] for first, end in ranges) <= offsets[-1] / 2 + sizes.max()


def test_query_ranges_of_no_queries_are_empty():
    assert _jit.query_ranges(np.array([0]), 4) == []


OBJECTIVES = [PLRank(top_k=5, n_permutations=3), URank(), UMart(window=1), UMart(window=3)]  # TODO partition



@pytest.mark.parametrize("obj", OBJECTIVES, ids=repr)
def test_results_do_not_depend_on_the_number_of_threads(obj, monkeypatch):
    data = make_synthetic(n_queries=40, n_features=1, docs_per_query=(1, 60), seed=3)
    scores = np.random.default_rng(1).normal(scale=2, size=data.n_docs)
    serial = obj.gradients(scores, data.labels, data.offsets)
    monkeypatch.setattr(_jit, "MIN_DOCS_PER_THREAD", 1)
    monkeypatch.setattr(_jit, "thread_count", lambda n_docs: 3)
    calls = []
    real_run = _jit.run_in_threads
    monkeypatch.setattr(_jit, "run_in_threads", lambda calls_, n: calls.append(len(calls_)) or real_run(calls_, n))
    threaded = type(obj)(**obj._params()).gradients(scores, data.labels, data.offsets)
    assert calls, "the objective did not go through the threads"
    np.testing.assert_array_equal(threaded[0], serial[0])
    np.testing.assert_array_equal(threaded[1], serial[1])


def test_two_threads_training_on_the_same_data_get_the_results_of_one():
    """Scratch space used to live in PLRank's cached per-dataset state, shared by two threads on the same data."""
    data = make_synthetic(n_queries=300, n_features=1, docs_per_query=(20, 200), seed=4)
    obj = PLRank(top_k=10, n_permutations=3)
    score_sets = [np.random.default_rng(seed).normal(size=data.n_docs) for seed in range(2)]
    expected = [obj.gradients(scores, data.labels, data.offsets) for scores in score_sets]
    results = {}

    def work(k):
        for _ in range(20):
            results.setdefault(k, []).append(obj.gradients(score_sets[k], data.labels, data.offsets))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k in range(2):
        for grad, hess in results[k]:
            np.testing.assert_array_equal(grad, expected[k][0])
            np.testing.assert_array_equal(hess, expected[k][1])
