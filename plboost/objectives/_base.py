"""What every plboost objective shares: the engine adapters, per-dataset state and the hessian floor.

An objective is written once, as pure kernels over the flat layout (scores, labels, int64 query offsets;
see :mod:`plboost._queries`). :class:`RankingObjective` turns it into a custom objective for

* LightGBM: ``lgb.train({"objective": obj}, train_set)`` and ``lgb.cv`` call ``obj(preds, dataset)`` (``lgb.cv``
  needs ``folds=plboost.query_folds(train_set)``: without it, it cuts queries between folds, which is refused);
  ``lgb.LGBMRanker(objective=obj.sklearn())`` calls a four-argument function ``(y_true, y_pred, weight,
  group)`` (LightGBM hands ``group`` only to a callable with exactly four parameters);
* XGBoost: ``xgb.train(params, dtrain, obj=obj)`` calls ``obj(predt, dtrain)``.

``lgb.train`` deep-copies its ``params``, so the objective that trains is a copy of the user's, and one
objective can be handed several datasets (``lgb.cv`` folds, train and validation). State derived from a
dataset (PLRank's sampled permutations, for instance) is therefore keyed by a fingerprint of the data it
belongs to (labels and query boundaries), never by object identity or by the order of calls.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass

import numba
import numpy as np

from .._jit import kernel
from .._queries import (CutQueryError, check_labels, check_scores, cut_queries, offsets_from_boundaries,
                        offsets_from_sizes)
from .._random import splitmix64

#: Hessians below this are raised to it before they reach an engine (see ``RankingObjective``).
DEFAULT_HESSIAN_FLOOR = 1e-6


@dataclass(frozen=True)
class QueryData:
    """Labels and query offsets of one dataset, validated, with a content fingerprint."""

    labels: np.ndarray
    offsets: np.ndarray
    fingerprint: str

    @classmethod
    def from_arrays(cls, labels, offsets) -> "QueryData":
        labels = check_labels(labels, max_label=None)
        offsets = offsets_from_boundaries(offsets, labels.shape[0], name="query offsets")
        return cls(labels, offsets, f"{_fingerprint(labels, offsets, 1):016x}{_fingerprint(labels, offsets, 2):016x}")

    @property
    def n_docs(self) -> int:
        return int(self.labels.shape[0])


_POSITION = np.uint64(0xD1B54A32D192ED03)  # odd multipliers that spread position and value over 64 bits
_VALUE = np.uint64(0xAEF17502108EF2D9)


@kernel
def _fingerprint(labels, offsets, seed):
    """A 64-bit hash of labels and query offsets: a sum of SplitMix64 of (seed, position, value).

    The terms are independent, so the loop vectorises; the position in each term makes it order-sensitive.
    """
    key = splitmix64(np.uint64(seed))
    total = np.uint64(0)
    for i in range(offsets.shape[0]):
        total += splitmix64(key + np.uint64(i) * _POSITION + np.uint64(offsets[i]) * _VALUE)
    key = splitmix64(key)
    for i in range(labels.shape[0]):
        total += splitmix64(key + np.uint64(i) * _POSITION + np.uint64(np.int64(labels[i])) * _VALUE)
    return splitmix64(total)


class RankingObjective:
    """Base class of plboost's ranking objectives.

    Subclasses implement :meth:`_prepare` (per-dataset state, computed once and cached by the data's
    fingerprint) and :meth:`_gradients` (a kernel call filling float32 gradient and hessian arrays).

    Neither engine checks hessians, and a zero hessian silently stops learning (a leaf's value is
    ``-sum(g) / (sum(h) + lambda)``), so every hessian handed to an engine is at least ``hessian_floor``
    (default 1e-6). Documents with no gradient (queries without ranking information, documents whose
    probabilities underflow) get exactly ``hessian_floor``. ``hessian_floor=0`` turns the floor off, for
    comparisons with an engine's own objective that leaves such documents at hessian 0.

    Sample weights, where the dataset has them, multiply each document's gradient and hessian, as
    LightGBM's ``lambdarank`` does; XGBoost's ranking weights are per query and are spread over the
    query's documents first.
    """

    #: name under which the CLI and :func:`plboost.objectives.get_objective` know the objective
    name: str = ""
    _max_cached_datasets = 8

    def __init__(self, *, hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        hessian_floor = float(hessian_floor)
        if not (np.isfinite(hessian_floor) and hessian_floor >= 0):
            raise ValueError(f"hessian_floor must be a finite number >= 0, got {hessian_floor!r}")
        self.hessian_floor = hessian_floor
        self._states: OrderedDict[str, object] = OrderedDict()
        self._memo: dict[int, tuple[weakref.ref, QueryData]] = {}

    # ----------------------------------------------------------------------------------------------
    # what a subclass provides
    def _prepare(self, data: QueryData):
        """Per-dataset state (e.g. sampled permutations) for :meth:`_gradients`."""
        return None

    def _gradients(self, scores: np.ndarray, data: QueryData, state, grad: np.ndarray,
                   hess: np.ndarray) -> None:
        raise NotImplementedError

    def _params(self) -> dict:
        """The constructor arguments, for ``repr`` and result files."""
        return {"hessian_floor": self.hessian_floor}

    # ----------------------------------------------------------------------------------------------
    # the pure interface
    def gradients(self, scores, labels, offsets) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and hessian of the loss for flat ``scores`` and ``labels`` with query ``offsets``.

        Returns two float32 arrays of the length of ``scores``; hessians are at least ``hessian_floor``.
        """
        data = QueryData.from_arrays(labels, offsets)
        return self._compute(scores, data)

    def warm_up(self) -> None:
        """Compile (or load from Numba's cache) this objective's kernels on a tiny query, so that the
        first boosting round, and a timer around training, do not include compilation."""
        self.gradients(np.array([0.5, 0.0, -0.5]), np.array([2.0, 1.0, 0.0]), np.array([0, 3]))

    def state(self, labels, offsets):
        """The per-dataset state this objective uses for these labels and query offsets."""
        return self._state_for(QueryData.from_arrays(labels, offsets))

    def _state_for(self, data: QueryData):
        state = self._states.get(data.fingerprint)
        if state is None:
            state = self._prepare(data)
            self._states[data.fingerprint] = state
            while len(self._states) > self._max_cached_datasets:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(data.fingerprint)
        return state

    def _compute(self, scores, data: QueryData, weights=None) -> tuple[np.ndarray, np.ndarray]:
        scores = check_scores(scores, data.n_docs, name=f"{type(self).__name__} scores")
        state = self._state_for(data)
        grad = np.empty(data.n_docs, dtype=np.float32)
        hess = np.empty(data.n_docs, dtype=np.float32)
        self._gradients(scores, data, state, grad, hess)
        if weights is not None:
            grad *= weights
            hess *= weights
            np.maximum(hess, np.float32(self.hessian_floor), out=hess)
        return grad, hess

    # ----------------------------------------------------------------------------------------------
    # engine adapters
    def __call__(self, preds, data):
        """Custom-objective entry point for ``lgb.train``/``lgb.cv`` and ``xgb.train(obj=...)``.

        Under XGBoost the kernels run on one thread: XGBoost ships its own OpenMP runtime, whose idle
        threads keep spinning while Numba's threads (on the system's OpenMP, which LightGBM shares) work,
        and the two pools then fight over the cores. Measured on 2 cores (MQ2008 Fold1, 100 rounds): 1.76 s
        with two Numba threads, 0.68 s with one, 0.63 s for XGBoost's own rank:ndcg.
        """
        query_data, weights = self._query_data_of(data)
        if type(data).__module__.startswith("xgboost"):
            with _numba_threads(1):
                return self._compute(preds, query_data, weights)
        return self._compute(preds, query_data, weights)

    def sklearn(self):
        """A function for ``lgb.LGBMRanker(objective=...)``: ``(y_true, y_pred, weight, group)``.

        LightGBM's scikit-learn API passes query sizes only to a callable with exactly these four
        parameters.
        """
        objective = self

        def plboost_objective(y_true, y_pred, weight, group):
            if group is None:
                raise ValueError(f"{objective!r} needs query groups: call LGBMRanker.fit(X, y, group=...)")
            offsets = offsets_from_sizes(group, len(y_true), name="group")
            data = objective._memoized(y_true, offsets, lambda: QueryData.from_arrays(y_true, offsets))
            return objective._compute(y_pred, data, _as_weights(weight, data.n_docs))

        plboost_objective.__qualname__ = f"{type(self).__name__}.sklearn"
        return plboost_objective

    def _query_data_of(self, dataset) -> tuple[QueryData, np.ndarray | None]:
        """Labels, query offsets and per-document weights of an ``lgb.Dataset`` or ``xgb.DMatrix``."""
        kind = type(dataset).__module__.split(".")[0]
        if kind == "lightgbm":
            boundaries = dataset.get_field("group")
            labels = dataset.get_label()
            weights = dataset.get_weight()
            hint = "build the lgb.Dataset with group=<query sizes>"
        elif kind == "xgboost":
            boundaries = dataset.get_uint_info("group_ptr")
            labels = dataset.get_label()
            weights = dataset.get_weight()
            hint = "build the xgb.DMatrix with qid=... or call set_group(<query sizes>)"
        else:
            raise TypeError(f"{type(self).__name__} is called by LightGBM or XGBoost with (preds, dataset); got a "
                            f"{type(dataset).__name__}. For lgb.LGBMRanker pass objective={type(self).__name__}(...)"
                            ".sklearn(); for arrays use .gradients(scores, labels, offsets)")
        if boundaries is None or len(boundaries) == 0:
            raise ValueError(f"{type(self).__name__} needs query groups, but the training data has none: {hint}")
        n_docs = len(labels)

        def build() -> QueryData:
            if kind == "lightgbm":
                self._check_whole_queries(dataset)
            return QueryData.from_arrays(labels, boundaries)

        query_data = self._memoized(dataset, boundaries, build)
        if weights is not None and len(weights) != 0:
            if kind == "xgboost":  # one weight per query
                weights = np.repeat(np.asarray(weights, dtype=np.float32), np.diff(query_data.offsets))
            weights = _as_weights(weights, n_docs)
        else:
            weights = None
        return query_data, weights

    def _check_whole_queries(self, dataset) -> None:
        """Refuse an ``lgb.Dataset`` that is a subset (``Dataset.subset``) keeping part of a query.

        ``lgb.cv`` splits rows, not queries, when the objective is a callable, unless given ``folds=``;
        ``Dataset.subset`` then counts the kept rows of each query of its reference as the subset's query
        sizes, so the objective would see truncated queries and the validation folds hold their other rows.
        """
        used = getattr(dataset, "used_indices", None)
        reference = getattr(dataset, "reference", None)
        if used is None or reference is None:
            return
        offsets = reference.get_field("group")
        if offsets is None or len(offsets) == 0:
            return
        cut, kept = cut_queries(offsets, used)
        if cut.size:
            query = int(cut[0])
            raise CutQueryError(type(self).__name__, query, int(kept[0]), int(offsets[query + 1] - offsets[query]),
                                int(cut.size))

    def _memoized(self, owner, boundaries, build) -> QueryData:
        """The QueryData of ``owner`` (a dataset, or LightGBM's label array) when its query boundaries are
        unchanged, else ``build()``. The engines pass the same object at every iteration, and checking
        the boundaries is much cheaper than validating and fingerprinting the labels again."""
        known = self._memo.get(id(owner))
        if known is not None:
            ref, query_data = known
            if ref() is owner and np.array_equal(query_data.offsets, boundaries):
                return query_data
        query_data = build()
        self._memo = {key: v for key, v in self._memo.items() if v[0]() is not None}
        self._memo[id(owner)] = (weakref.ref(owner), query_data)
        return query_data

    def __deepcopy__(self, memo):
        # lgb.train deep-copies params; the copy starts with fresh caches (states are rebuilt on demand).
        clone = type(self)(**self._params())
        memo[id(self)] = clone
        return clone

    def __getstate__(self):
        return {"params": self._params()}

    def __setstate__(self, state):
        self.__init__(**state["params"])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"


@contextmanager
def _numba_threads(n: int):
    """Run the enclosed kernels on at most ``n`` Numba threads."""
    previous = numba.get_num_threads()
    numba.set_num_threads(min(n, previous))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _as_weights(weight, n_docs: int) -> np.ndarray | None:
    if weight is None:
        return None
    weight = np.asarray(weight, dtype=np.float32)
    if weight.shape != (n_docs,):
        raise ValueError(f"weights: expected {n_docs} per-document weights, got shape {weight.shape}")
    if not np.all(np.isfinite(weight)) or np.any(weight < 0):
        raise ValueError("weights must be finite and non-negative")
    return weight
