"""What every plboost objective shares: the engine adapters, per-dataset state, the hessian floor, the
parameters and the registry.

An objective is written once, as pure kernels over the flat layout (scores, labels, int64 query offsets;
see :mod:`plboost._queries`). :class:`RankingObjective` turns it into a custom objective for

* LightGBM: ``lgb.train({"objective": obj}, train_set)`` and ``lgb.cv`` call ``obj(preds, dataset)`` (``lgb.cv``
  needs ``folds=plboost.query_folds(train_set)``: without it, it cuts queries between folds, which is refused);
  ``lgb.LGBMRanker(objective=obj)`` calls ``obj(y_true, y_pred, weight, group)``: LightGBM's scikit-learn API
  counts the callable's parameters and hands ``group`` (the query sizes) only to one of four, which
  :meth:`RankingObjective.__call__` has (``obj.sklearn()``, a callable of those four alone, does the same);
* XGBoost: ``xgb.train(params, dtrain, obj=obj)`` calls ``obj(predt, dtrain)``.

``lgb.train`` deep-copies its ``params``, so the objective that trains is a copy of the user's, and one
objective can be handed several datasets (``lgb.cv`` folds, train and validation). State derived from a
dataset (PLRank's sampled permutations, for instance) is therefore keyed by a fingerprint of the data it
belongs to (labels and query boundaries), never by object identity or by the order of calls.
"""

from __future__ import annotations

import inspect
import json
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .._constraints import FLOAT32_MAX, Real, check_params
from ..errors import InputTypeError
from .._engine_registry import ENGINES, engine_of
from .._jit import helper, kernel, over_queries, run_in_threads, thread_count
from .._numerics import stable_argsort
from .._values import plain_value
from .._queries import (CutQueryError, check_estimates, check_labels, check_scores, cut_queries,
                        offsets_from_boundaries, offsets_from_sizes)
from .._random import splitmix64

#: Hessians below this are raised to it before they reach an engine (see ``RankingObjective``).
DEFAULT_HESSIAN_FLOOR = 1e-6
#: the hessians a softmax (Plackett-Luce) objective's ``curvature`` can name: the loss's diagonal hessian, or
#: the bound 1/4 per softmax term that holds the document (PLRank's module docstring)
CURVATURES = ("exact", "bound")


@dataclass(frozen=True)
class QueryData:
    """Labels and query offsets of one dataset, validated, with a content fingerprint."""

    labels: np.ndarray
    offsets: np.ndarray
    fingerprint: str

    @classmethod
    def from_arrays(cls, labels, offsets, *, estimates: bool = False) -> QueryData:
        """Checked labels (graded; with ``estimates``, any finite relevance estimates) and offsets."""
        labels = check_estimates(labels) if estimates else check_labels(labels, max_label=None)
        offsets = offsets_from_boundaries(offsets, labels.shape[0], name="query offsets")
        keys = labels.view(np.int64) if estimates else labels.astype(np.int64)  # an estimate's bits
        return cls(labels, offsets, f"{_fingerprint(keys, offsets, 1):016x}{_fingerprint(keys, offsets, 2):016x}")

    @property
    def n_docs(self) -> int:
        return int(self.labels.shape[0])


_POSITION = np.uint64(0xD1B54A32D192ED03)  # odd multipliers that spread position and value over 64 bits
_VALUE = np.uint64(0xAEF17502108EF2D9)


@kernel
def _fingerprint(labels, offsets, seed):
    """A 64-bit hash of labels (as int64 keys) and query offsets: a sum of SplitMix64 of (seed, position, value).

    The terms are independent, so the loop vectorises; the position in each term makes it order-sensitive.
    """
    key = splitmix64(np.uint64(seed))
    total = np.uint64(0)
    for i in range(offsets.shape[0]):
        total += splitmix64(key + np.uint64(i) * _POSITION + np.uint64(offsets[i]) * _VALUE)
    key = splitmix64(key)
    for i in range(labels.shape[0]):
        total += splitmix64(key + np.uint64(i) * _POSITION + np.uint64(labels[i]) * _VALUE)
    return splitmix64(total)


# SORTING. Kernels sort with plboost._numerics.stable_argsort, never with Numba's np.sort or np.argsort:
# Numba builds those from one template under symbol names numbered per process, so two kernels cached by
# different processes can each carry a different function under one name, and the process that loads
# both calls the wrong one (a PLRank kernel's quicksort argsort cached beside uMart's np.sort crashed so
# with a segfault). Its merge sort also compiles in a fraction of the time of Numba's (docs/benchmarks.md).

#: Score gaps wider than this, between consecutive scores of a query, are narrowed to it (see
#: ``_relative_scores``): e^{-1000} underflows to 0 in float64, as e^{-gap} does for any wider gap.
WIDEST_SCORE_GAP = 1000.0
#: Scores within ±500 reach the kernels as they are: no query spans more than ``WIDEST_SCORE_GAP``, and
#: float64 holds them to 1e-13, so nothing is lost, nothing is copied, and results are what they were.
RAW_SCORE_LIMIT = WIDEST_SCORE_GAP / 2


def _relative_scores(scores, offsets) -> np.ndarray:
    """Each query's scores minus the query's largest, wide gaps narrowed (see ``_relative_scores_kernel``)."""
    result = np.empty_like(scores)
    over_queries(_relative_scores_kernel, offsets, scores, offsets, result)
    return result


@kernel
def _relative_scores_kernel(first, end, scores, offsets, result):
    """Each query's scores minus the query's largest, with gaps wider than ``WIDEST_SCORE_GAP`` between
    consecutive scores (in sorted order) narrowed to it.

    For objectives whose gradients depend on the scores only through softmaxes of them, so neither
    change alters them. Subtracting the top first keeps large scores exact: in float64
    1e30 + log 2 is 1e30, so the log-sum-exp of two scores of 1e30 came out as 1e30, each got probability
    1 instead of 1/2, and a query's gradients summed to 10-21 instead of 0. Narrowing the wide gaps keeps
    every difference finite (±1e308 differ by inf: NaN hessians followed) and keeps a group of tied
    scores far below the top as exact as the top is. A document 1000 below another weighs e^{-1000} = 0
    against it in a softmax, as at any wider gap, so the narrowing changes no gradient.
    A query that spans at most ``WIDEST_SCORE_GAP`` costs O(n); a wider one is sorted. Queries
    ``first <= q < end`` are written to ``result``.
    """
    for q in range(first, end):
        lo = offsets[q]
        hi = offsets[q + 1]
        top = scores[lo]
        bottom = scores[lo]
        for i in range(lo + 1, hi):
            top = max(top, scores[i])
            bottom = min(bottom, scores[i])
        if top - bottom <= WIDEST_SCORE_GAP:
            for i in range(lo, hi):
                result[i] = scores[i] - top
            continue
        order = stable_argsort(scores[lo:hi])[::-1]
        anchor = top  # the first score of the current run of scores without a wide gap
        start = 0.0  # its value in the result
        previous = top
        for t in range(hi - lo):
            i = lo + order[t]
            if previous - scores[i] > WIDEST_SCORE_GAP:  # inf for ±1e308
                start = result[lo + order[t - 1]] - WIDEST_SCORE_GAP
                anchor = scores[i]
            result[i] = start + (scores[i] - anchor)
            previous = scores[i]


def _floor(hess: np.ndarray, floor: np.float32) -> None:
    """``hess = max(hess, floor)`` in place, split over the kernels' threads (NumPy releases the GIL): one
    pass over every document, 0.4 ms for 1.3M float32 hessians on one thread."""
    def floor_part(part):
        np.maximum(part, floor, out=part)

    n_threads = thread_count(hess.size)
    run_in_threads([(floor_part, (part,)) for part in np.array_split(hess, n_threads)], n_threads)


@helper(inline="always")
def zero_query(grad, hess, lo, hi):
    """Gradients and raw hessians 0 for query ``lo:hi``, which no term of a loss reaches (one document, one grade,
    no gain): every kernel's opening for a query it skips. Inlined into each kernel, so that it costs no call."""
    for i in range(lo, hi):
        grad[i] = 0.0
        hess[i] = 0.0


def refuse_overflow(grad: np.ndarray, hess: np.ndarray, data: QueryData, owner: str, remedy: str) -> None:
    """ValueError naming the first query whose gradients or hessians are not finite, for an objective whose outputs
    have the scale of its gains or labels (not normalised by the ideal DCG), so that labels too large for float32
    reach no engine as infinite or NaN gradients, on which LightGBM stops after one tree. Costs one pass over
    both arrays."""
    if np.isfinite(grad).all() and np.isfinite(hess).all():
        return
    i = int(np.flatnonzero(~(np.isfinite(grad) & np.isfinite(hess)))[0])
    q = int(np.searchsorted(data.offsets, i, side="right")) - 1
    top = data.labels[data.offsets[q]:data.offsets[q + 1]].max()
    raise ValueError(f"{owner}: the gradients of query {q} (largest label {top:g}) are beyond float32's range, the "
                     f"engines' gradient type; {remedy}")


class _ObjectiveClass(type):
    """The type of plboost's objective classes: a class handed where an instance belongs gets a message that says
    so. LightGBM calls ``params["objective"]`` and XGBoost ``obj`` with (scores, data), and LightGBM's
    scikit-learn API with (labels, scores, group): with the class, those reached the constructor, whose arguments
    are keywords only, and gave a TypeError about positional arguments."""

    def __call__(cls, *args, **kwargs):
        if args:
            name = cls.__name__
            if isinstance(args[0], np.ndarray):
                raise TypeError(f"{name} is a class, and the engine called it to train: pass an instance, "
                                f"{name}() (lgb.train({{'objective': {name}()}}, ...), xgb.train(..., obj={name}()), "
                                f"LGBMRanker(objective={name}()))")
            raise TypeError(f"{name} takes its parameters by name, e.g. {name}(hessian_floor=1e-6); "
                            f"got {len(args)} positional argument(s)")
        return super().__call__(**kwargs)


def class_given_message(objective) -> str | None:
    """What to say where ``objective`` is a plboost objective class rather than an instance; None otherwise."""
    if isinstance(objective, type) and issubclass(objective, RankingObjective):
        return f"{objective.__name__} is a class: pass an instance, {objective.__name__}()"
    return None


class RankingObjective(metaclass=_ObjectiveClass):
    """Base class of plboost's ranking objectives.

    A subclass implements :meth:`_prepare` (per-dataset state, computed once and cached by the data's
    fingerprint) and :meth:`_gradients` (a kernel call filling float32 gradient and raw hessian arrays and
    returning the per-query losses), and stores every argument of its ``__init__`` as an attribute of the
    same name: :meth:`get_params` reads them off the signature, and copies, pickles and ``repr`` are built
    from it.

    Neither engine checks hessians, and a zero hessian silently stops learning (a leaf's value is
    ``-sum(g) / (sum(h) + lambda)``), so every hessian handed to an engine is at least ``hessian_floor``
    (default 1e-6). The kernels write raw hessians; the floor is applied here, once, after any weights.
    Documents with no gradient (queries without ranking information, documents whose probabilities
    underflow) get exactly ``hessian_floor``. ``hessian_floor=0`` leaves them at 0 (and raises negative
    rounding to 0), for comparisons with an engine's own objective that leaves such documents at hessian 0.

    Scores of any finite magnitude give finite gradients that sum to 0 per query: objectives whose
    gradients depend on the scores only through softmaxes get scores beyond ±500 relative to each
    query's top, with gaps wider than ``WIDEST_SCORE_GAP`` narrowed to it (``_relative_scores`` says why).

    Sample weights, where the dataset has them, multiply each document's gradient and hessian, as
    LightGBM's ``lambdarank`` does; XGBoost's ranking weights are per query and are spread over the
    query's documents first.
    """

    #: name under which the CLI and :func:`plboost.objectives.get_objective` know the objective
    name: str = ""
    #: what ``plboost demo`` trains of this objective: configurations in ``--run`` syntax (``name,key=value``)
    demo_runs: tuple[str, ...] = ()
    #: the objective's own dimensions of ``plboost compare --tune`` (:mod:`plboost.tuning`): parameter name ->
    #: ``Dimension`` fields, e.g. ``{"window": {"low": 1, "high": 10, "default": 2}}``; empty: only the engine's
    search_space: dict[str, dict] = {}
    _max_cached_datasets = 8
    #: whether trees can take the objective's exact Newton leaf values (``leaf_values="exact"``: a
    #: ``leaf_curvature`` method; :mod:`plboost.engines.exact_leaves`)
    exact_leaves: bool = False
    #: gradients depend on the scores only through softmaxes of them, so the kernels get them relative to
    #: each query's top, with wide gaps narrowed (see ``_relative_scores``)
    _softmax_of_scores = True
    #: constructor arguments that are former names of others: accepted, never reported by :meth:`get_params`
    _aliases: tuple[str, ...] = ()
    #: for a class with a ``preset`` argument: each preset's values of the arguments left unset (see
    #: :meth:`_updated_params`), and the value that leaves an argument unset where it is not None
    _presets: dict[str, dict] = {}

    @property
    def takes_estimates(self) -> bool:
        """Whether the objective trains on relevance estimates (any finite labels, from a click log) rather than
        graded labels (non-negative whole numbers)."""
        return False

    def _checked_queries(self, labels, offsets) -> QueryData:
        return QueryData.from_arrays(labels, offsets, estimates=self.takes_estimates)
    _unset: dict[str, object] = {}
    #: arguments whose default follows the other arguments (None in the signature: derive it), by name -> a function
    #: of the arguments giving it; :meth:`set_params` derives one left at its derived value anew
    _derived: dict[str, Callable[[dict], object]] = {}
    #: why the objective has no loss, for one whose :meth:`_gradients` returns None (see :meth:`losses`)
    _no_loss_reason: str = ""
    #: valid values other than the defaults, for arguments from whose default and annotation the tests
    #: cannot make one (``tests/objectives/test_base.py`` gives every argument a value other than its default)
    _non_default_examples: dict[str, object] = {}
    #: arguments whose example excludes other arguments' (a mode that refuses them): the tests set them one at a
    #: time, and leave them at their defaults where every other argument is set
    _examples_alone: tuple[str, ...] = ()
    #: what each constructor argument may be (:mod:`plboost._constraints`): a subclass declares its own, and
    #: ``__init_subclass__`` merges them with its bases'; :meth:`_store` checks every argument against them
    parameter_constraints: dict[str, object] = {"hessian_floor": Real(low=0, high=FLOAT32_MAX)}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        merged = {}
        for base in reversed(cls.__mro__):
            merged.update(base.__dict__.get("parameter_constraints", {}))
        cls.parameter_constraints = merged

    def __init__(self, *, hessian_floor: float = DEFAULT_HESSIAN_FLOOR):
        self._store(hessian_floor=hessian_floor)
        self._states: OrderedDict[str, object] = OrderedDict()
        self._memo: dict[int, tuple[weakref.ref, np.ndarray, QueryData]] = {}
        self._scratch = threading.local()

    # ----------------------------------------------------------------------------------------------
    # what a subclass provides
    def _prepare(self, data: QueryData):
        """Per-dataset state (e.g. sampled permutations) for :meth:`_gradients`."""
        return None

    def _gradients(self, scores: np.ndarray, data: QueryData, state, grad: np.ndarray,
                   hess: np.ndarray) -> np.ndarray | None:
        """Fill ``grad`` and ``hess`` (raw: no floor) and return the per-query losses (float64, one per
        query), or None for an objective without a loss (with ``_no_loss_reason``)."""
        raise NotImplementedError

    @classmethod
    def search_fixed_by(cls, params: dict) -> frozenset[str]:
        """Dimensions of :attr:`search_space` that a configuration's ``params`` fix besides their own names
        (``plboost compare --tune`` leaves both out): for a value that fits only one value of another
        parameter. None by default (an empty set)."""
        return frozenset()

    # ----------------------------------------------------------------------------------------------
    # parameters
    @classmethod
    def _param_names(cls) -> list[str]:
        """The arguments of ``__init__`` but for ``_aliases``, in the signature's order.

        As scikit-learn's ``BaseEstimator.get_params``: the signature is the one list of parameters, so a
        new argument is reported, copied and pickled without another edit, as long as ``__init__`` stores
        it under its own name. ``*args`` and ``**kwargs`` are refused: they hide what is passed.
        """
        names = []
        for parameter in inspect.signature(cls.__init__).parameters.values():
            if parameter.name == "self" or parameter.name in cls._aliases:
                continue
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(f"{cls.__name__}.__init__ takes {parameter}: objectives name every parameter")
            names.append(parameter.name)
        return names

    def _store(self, **values) -> None:
        """Check constructor arguments against :attr:`parameter_constraints` and store them, converted, under
        their own names (one message for every objective's bad argument: see :mod:`plboost._constraints`)."""
        for name, value in check_params(self.parameter_constraints, values, type(self).__name__).items():
            setattr(self, name, value)

    def _apply_preset(self) -> None:
        """Set each argument left unset (None, or its :attr:`_unset` value) to its value in :attr:`_presets` for the
        objective's ``preset`` (a subclass with presets calls it once its arguments are stored)."""
        for name, value in self._presets[self.preset].items():
            unset = self._unset.get(name)
            current = getattr(self, name)
            if current is None if unset is None else current == unset:
                setattr(self, name, value)

    def _derive(self) -> None:
        """Set the :attr:`_derived` arguments given as None (a subclass calls it once its arguments are stored)."""
        for name, derive in self._derived.items():
            if getattr(self, name) is None:
                setattr(self, name, derive(self.__dict__))

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments, by name: ``type(obj)(**obj.get_params())`` is an equal objective.

        Used by ``repr``, copies (``lgb.train`` deep-copies its params), pickles, result files, the engines and
        scikit-learn (``clone``, ``GridSearchCV`` over ``objective__top_k``). ``deep`` is scikit-learn's: an
        objective holds no estimators, so it changes nothing. Arguments whose default depends on others (uMart's
        preset) are reported as resolved.
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor arguments by name and return the objective, as scikit-learn's ``set_params``.

        The new values are checked as the constructor checks them (an invalid one raises and leaves the objective
        unchanged; an unknown name raises ValueError listing the valid ones), and per-dataset state is dropped.
        """
        if not params:
            return self
        valid = self._param_names()
        unknown = [name for name in params if name not in valid]
        if unknown:
            raise ValueError(f"{type(self).__name__}.set_params: unknown parameter {unknown[0]!r}; its parameters "
                             f"are {', '.join(valid)}")
        fresh = type(self)(**self._updated_params(params))
        self.__dict__.clear()
        self.__dict__.update(fresh.__dict__)
        return self

    def _updated_params(self, params: dict) -> dict:
        """The constructor arguments after :meth:`set_params` (``params``): the current ones updated. With a new
        ``preset`` (for a class with :attr:`_presets`), the parameters still at the current preset's value follow
        the new one, as they would in a new object of that preset; those set to another value, or given, stay."""
        current = self.get_params()
        for name, derive in self._derived.items():
            if name not in params and current[name] == derive(current):
                current[name] = None  # derived from the new arguments, as a new object's would be
        new_preset = params.get("preset")
        if self._presets and new_preset != getattr(self, "preset", None) and new_preset in self._presets:
            for name, value in self._presets[self.preset].items():
                if name not in params and current[name] == value:
                    current[name] = self._unset.get(name)
        return {**current, **params}

    def __sklearn_clone__(self):
        # scikit-learn's clone: an unfitted objective of the same parameters (its own check, that the constructor
        # stores every argument unchanged, does not hold here: arguments are validated and converted)
        return type(self)(**self.get_params())

    def __eq__(self, other) -> bool:
        """Objectives are equal when they are of one class with equal parameters (a list equals a tuple)."""
        if type(other) is not type(self):
            return NotImplemented
        return plain_value(self.get_params()) == plain_value(other.get_params())

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, json.dumps(plain_value(self.get_params()), sort_keys=True)))

    # ----------------------------------------------------------------------------------------------
    # the pure interface
    def gradients(self, scores, labels, offsets) -> tuple[np.ndarray, np.ndarray]:
        """Gradient and hessian of the loss for flat ``scores`` and ``labels`` with query ``offsets``.

        Returns two float32 arrays of the length of ``scores``; hessians are at least ``hessian_floor``.
        """
        data = self._checked_queries(labels, offsets)
        return self._compute(scores, data)

    def warm_up(self) -> None:
        """Compile (or load from Numba's cache) this objective's kernels on a tiny query, so that the
        first boosting round, and a timer around training, do not include compilation."""
        self.gradients(np.array([0.5, 0.0, -0.5]), np.array([2.0, 1.0, 0.0]), np.array([0, 3]))

    def state(self, labels, offsets):
        """The per-dataset state this objective uses for these labels and query offsets."""
        return self._state_for(self._checked_queries(labels, offsets))

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

    def _workspace(self, name: str, size: int, dtype=np.float64) -> np.ndarray:
        """A scratch array of ``size`` elements (contents undefined), kept from call to call for the calling thread.

        Never in the per-dataset state, which threads share. Kept because a scratch array of every document
        allocated anew at each call makes glibc map fresh pages each time once the kernels run on several
        threads (page faults per call measured in docs/benchmarks.md); with the array kept there are none. An
        array grows to the largest size asked and is freed with the objective.
        """
        buffers = getattr(self._scratch, "buffers", None)
        if buffers is None:
            buffers = self._scratch.buffers = {}
        buffer = buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = buffers[name] = np.empty(size, dtype=dtype)
        return buffer[:size]

    def _checked_scores(self, scores, data: QueryData) -> np.ndarray:
        """Scores as the kernels take them: validated and, for objectives that depend on them only through
        softmaxes, relative to each query's top (``_relative_scores``) unless all are within
        ±``RAW_SCORE_LIMIT``. The smallest and largest score serve both tests (finite, and within the limit):
        two reads, 0.3 ms for 1M scores, and no array of flags; a copy would cost more (PLRank on 1M
        documents: 2.3 ms more per call, +20%, mostly page faults of the new array)."""
        name = f"{type(self).__name__} scores"
        scores = check_scores(scores, data.n_docs, name=name, finite=False)
        if scores.size == 0:
            return scores
        lowest, highest = scores.min(), scores.max()  # NaN if any is: then check_scores names the first
        if not (np.isfinite(lowest) and np.isfinite(highest)):
            check_scores(scores, data.n_docs, name=name)
        if not self._softmax_of_scores or lowest >= -RAW_SCORE_LIMIT and highest <= RAW_SCORE_LIMIT:
            return scores
        return _relative_scores(scores, data.offsets)

    def losses(self, scores, labels, offsets) -> np.ndarray:
        """The loss of each query (float64, one per query) for flat ``scores`` and ``labels`` with query
        ``offsets``: the function whose gradient and diagonal hessian :meth:`gradients` returns.

        The scores are taken as they are (validated, never narrowed: narrowing wide gaps changes no
        gradient, but it does change the loss). Raises NotImplementedError for an objective whose gradients
        are not those of any loss (uMart).
        """
        data = self._checked_queries(labels, offsets)
        scores = check_scores(scores, data.n_docs, name=f"{type(self).__name__} scores")
        state = self._state_for(data)
        grad = np.empty(data.n_docs, dtype=np.float32)
        hess = np.empty(data.n_docs, dtype=np.float32)
        self._scratch.loss_asked = True
        try:
            losses = self._gradients(scores, data, state, grad, hess)
        finally:
            self._scratch.loss_asked = False
        if losses is None:
            raise NotImplementedError(f"{type(self).__name__} has no loss: "
                                      f"{self._no_loss_reason or 'its _gradients returns None'}")
        return losses

    @property
    def _loss_asked(self) -> bool:
        """Whether this thread's :meth:`_gradients` call is for :meth:`losses` (a kernel whose loss costs extra work
        may leave it out otherwise: the engines' calls read only the gradients)."""
        return getattr(self._scratch, "loss_asked", False)

    def _compute(self, scores, data: QueryData, weights=None) -> tuple[np.ndarray, np.ndarray]:
        scores = self._checked_scores(scores, data)
        state = self._state_for(data)
        grad = np.empty(data.n_docs, dtype=np.float32)
        hess = np.empty(data.n_docs, dtype=np.float32)
        self._gradients(scores, data, state, grad, hess)
        if weights is not None:
            grad *= weights
            hess *= weights
        _floor(hess, np.float32(self.hessian_floor))  # the one place of the floor
        return grad, hess

    # ----------------------------------------------------------------------------------------------
    # engine adapters
    def __call__(self, preds, data, weight=None, group=None):
        """Gradients and hessians, as each engine calls a custom objective:

        * ``obj(preds, dataset)``: ``lgb.train``/``lgb.cv`` (``params["objective"]``) and ``xgb.train(obj=...)``,
          with the engine's dataset, which holds the labels, queries and weights;
        * ``obj(y_true, y_pred, weight, group)``: ``lgb.LGBMRanker(objective=obj)``, whose scikit-learn API hands
          ``group`` (query sizes) only to a callable of four parameters, and so counts these.
        """
        if isinstance(data, np.ndarray):  # LightGBM's scikit-learn API: (y_true, y_pred, weight, group)
            return self._call_with_arrays(preds, data, weight, group)
        if weight is not None or group is not None:
            raise InputTypeError(f"{type(self).__name__}(preds, dataset) takes the weights and queries from the "
                                 "dataset: weight= and group= go with (y_true, y_pred, weight, group) only")
        query_data, weights = self._query_data_of(data)
        return self._compute(preds, query_data, weights)

    def _call_with_arrays(self, y_true, y_pred, weight, group) -> tuple[np.ndarray, np.ndarray]:
        """The call of LightGBM's scikit-learn API: labels, scores, per-document weights (or None), query sizes."""
        if group is None:
            raise ValueError(f"{type(self).__name__} needs query groups: call LGBMRanker.fit(X, y, group=...)")
        offsets = offsets_from_sizes(group, len(y_true), name="group")
        data = self._memoized(y_true, y_true, offsets, lambda: self._checked_queries(y_true, offsets))
        return self._compute(y_pred, data, _as_weights(weight, data.n_docs))

    def sklearn(self) -> SklearnObjective:
        """A callable of ``(y_true, y_pred, weight, group)`` alone, as ``lgb.LGBMRanker(objective=...)`` calls it: the
        objective itself is called so too, so this is for code written for a plain function of those four. It pickles
        (a fitted ``LGBMRanker`` survives ``pickle`` and ``joblib``). For XGBoost, whose ``XGBRanker`` refuses
        callables, use :class:`plboost.sklearn.Ranker`.
        """
        return SklearnObjective(self)

    def _engine_of(self, dataset):
        engine = engine_of(dataset, default=None)
        if engine is None:
            labels = " or ".join(engine.label for engine in ENGINES.values() if engine.custom_objectives)
            raise InputTypeError(f"{type(self).__name__} is called by {labels} with (preds, dataset), or by "
                                 "lgb.LGBMRanker with (y_true, y_pred, weight, group) arrays; got a "
                                 f"{type(dataset).__name__} for the second. For arrays of your own use "
                                 ".gradients(scores, labels, offsets)")
        return engine

    def _query_data_of(self, dataset) -> tuple[QueryData, np.ndarray | None]:
        """Labels, query offsets and per-document weights of a dataset of an engine (``lgb.Dataset``,
        ``xgb.DMatrix``)."""
        engine = self._engine_of(dataset)
        labels, boundaries, weights = engine.query_fields(dataset)
        if boundaries is None or len(boundaries) == 0:
            raise ValueError(f"{type(self).__name__} needs query groups, but the training data has none: "
                             f"{engine.group_hint}")
        n_docs = len(labels)

        def build() -> QueryData:
            self._check_whole_queries(dataset, engine)
            return self._checked_queries(labels, boundaries)

        query_data = self._memoized(dataset, labels, boundaries, build)
        if weights is not None and len(weights) != 0:
            weights = _as_weights(engine.document_weights(weights, query_data.offsets), n_docs)
        else:
            weights = None
        return query_data, weights

    def _check_whole_queries(self, dataset, engine) -> None:
        """Refuse a dataset that is a subset of another keeping part of a query (LightGBM's ``Dataset.subset``).

        ``lgb.cv`` splits rows, not queries, when the objective is a callable, unless given ``folds=``;
        ``Dataset.subset`` then counts the kept rows of each query of its reference as the subset's query
        sizes, so the objective would see truncated queries and the validation folds hold their other rows.
        """
        subset = engine.subset_of(dataset)
        if subset is None:
            return
        used, offsets = subset
        if offsets is None or len(offsets) == 0:
            return
        cut, kept = cut_queries(offsets, used)
        if cut.size:
            query = int(cut[0])
            raise CutQueryError(type(self).__name__, query, int(kept[0]), int(offsets[query + 1] - offsets[query]),
                                int(cut.size))

    def _memoized(self, owner, labels, boundaries, build) -> QueryData:
        """The QueryData of ``owner`` (a dataset, or LightGBM's label array) while its labels and query
        boundaries are those it was built from, else ``build()``.

        The engines pass the same object at every iteration, but its labels can change between calls
        (``Dataset.set_label``, ``DMatrix.set_label``), so the labels the engine holds now are compared
        with a copy of those the memo was built from. A full comparison, not the array's identity or a
        sample: XGBoost returns a new copy at every call, a freed array's address can be reused, and a
        sample misses a changed label. It is cheap next to a boosting round (1M float32 labels: 0.1 ms,
        against 9-36 ms for a call of PLRank or URank on two threads), unlike validating and fingerprinting
        the labels again.
        """
        known = self._memo.get(id(owner))
        if known is not None:
            ref, known_labels, query_data = known
            if (ref() is owner and np.array_equal(query_data.offsets, boundaries)
                    and np.array_equal(known_labels, labels)):
                return query_data
        query_data = build()
        self._memo = {key: v for key, v in self._memo.items() if v[0]() is not None}
        self._memo[id(owner)] = (weakref.ref(owner), np.array(labels, copy=True), query_data)
        return query_data

    def _query_data_of_arrays(self, labels, offsets) -> QueryData:
        """The QueryData of flat ``labels`` and query ``offsets``, validated once while ``labels`` is the same array
        holding the same values (:meth:`_memoized`, the labels array as owner): exact leaf values pass the training
        data's arrays at every tree, and validating and fingerprinting them again cost 0.4 ms of a 5 ms curvature
        call on 113K documents."""
        if not isinstance(labels, np.ndarray):
            return self._checked_queries(labels, offsets)
        return self._memoized(labels, labels, offsets, lambda: self._checked_queries(labels, offsets))

    def __deepcopy__(self, memo):
        # lgb.train deep-copies params; the copy starts with fresh caches (states are rebuilt on demand).
        clone = type(self)(**self.get_params())
        memo[id(self)] = clone
        return clone

    def __getstate__(self):
        return {"params": self.get_params()}

    def __setstate__(self, state):
        self.__init__(**state["params"])

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


class SklearnObjective:
    """A plboost objective as a callable of ``(y_true, y_pred, weight, group)`` alone, as LightGBM's scikit-learn API
    calls it (the objective itself takes that call too, beside ``(preds, dataset)``).

    LightGBM's ``LGBMRanker`` passes the query sizes only to a callable with exactly these four parameters. A
    class at module level rather than a closure, so that a fitted ranker pickles; it pickles (and copies) as the
    objective's parameters, without per-dataset state. Made by :meth:`RankingObjective.sklearn`.
    """

    def __init__(self, objective: RankingObjective):
        self.objective = objective

    def __call__(self, y_true, y_pred, weight, group):
        return self.objective._call_with_arrays(y_true, y_pred, weight, group)

    def __eq__(self, other) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.objective == other.objective

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self.objective))

    def __repr__(self) -> str:
        return f"{self.objective!r}.sklearn()"


def registry(*classes: type[RankingObjective]) -> dict[str, type[RankingObjective]]:
    """Objective classes by their ``name``, refusing an unnamed class or a name given twice."""
    by_name: dict[str, type[RankingObjective]] = {}
    for cls in classes:
        if not cls.name or cls.name in by_name:
            raise ValueError(f"{cls.__name__}: objective name {cls.name!r} is empty or already registered")
        by_name[cls.name] = cls
    return by_name


def _as_weights(weight, n_docs: int) -> np.ndarray | None:
    if weight is None:
        return None
    weight = np.asarray(weight, dtype=np.float32)
    if weight.shape != (n_docs,):
        raise ValueError(f"weights: expected {n_docs} per-document weights, got shape {weight.shape}")
    if not np.all(np.isfinite(weight)) or np.any(weight < 0):
        raise ValueError("weights must be finite and non-negative")
    return weight
