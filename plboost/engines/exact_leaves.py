"""PLRank's exact Newton leaf values for LightGBM (Xia, Zhai and Wang 2019, Eqn. 9).

A custom objective hands LightGBM one gradient and one hessian per document, and LightGBM sets each
leaf to ``-sum_d g_d / (sum_d h_d + lambda_l2)`` times the learning rate. For PLRank the sum of diagonal
hessians, ``sum_C (P_C - sum_d p(d|C)^2)``, exceeds the loss's true curvature along the leaf,
``sum_C P_C (1 - P_C)``, by the cross terms ``sum_C sum_{d != e in leaf} p(d|C) p(e|C)``: LightGBM's
step is a damped Newton step. :class:`ExactLeafValues` restores the paper's step: after each tree it
finds the leaf of every training document, computes

.. math::

    v_\\ell = -\\eta \\; \\frac{T_{\\lambda_1}\\big(\\sum_{d \\in \\ell} g_d\\big)}
               {\\sum_C P_C(\\ell)\\,(1 - P_C(\\ell)) + \\lambda_2},
    \\qquad T_{\\lambda_1}(G) = \\mathrm{sign}(G) \\max(|G| - \\lambda_1, 0),

clipped to ``max_delta_step`` before the learning rate ``eta`` as LightGBM does, and writes it with
``Booster.set_leaf_output``. LightGBM's cached training scores still hold the old leaf values, so the
objective is handed LightGBM's scores plus the accumulated differences (new - old) of every document's
leaves: the scores the objective sees are always the model's own predictions on the training data.
Validation scores are kept the same way, and NDCG on them is reported to LightGBM's callbacks (its own
metrics would read the stale cache and are switched off).

Finding each training document's leaf costs O(n), without walking the tree over the raw features:
LightGBM adds each new tree to its cached training scores leaf by leaf, ``score[d] += output(leaf)``
in double precision, with the output already shrunk by the learning rate (``GBDT::TrainOneIter`` calls
``Tree::Shrinkage`` and then ``UpdateScore``; the serial learner's ``AddPredictionToScore`` adds
``Tree::LeafOutput``, the value ``Booster.get_leaf_output`` returns). The cached scores are public: the
objective is handed them, and ``Booster.eval_train(feval)`` hands them to ``feval`` (copied out of
LightGBM by ``LGBM_BoosterGetPredict``; with no training metric, which ``lgb.train`` sets up only when
the training data is among ``valid_sets``, it computes nothing else). So the change of a document's
cached score between the objective's call and the callback after the tree is the old output of its
leaf, up to the rounding of ``(a + v) - a``, at most ``eps/2 (|a + v| + |change|)``
(:func:`match_leaves`). Each document is matched to the leaf of the nearest output: unambiguous when no
two outputs are within twice that bound. Documents whose nearest outputs cannot be told apart (two leaves
with one value, e.g. several set to 0 by ``lambda_l1`` or clipped alike by ``max_delta_step``) are
looked up with ``predict(pred_leaf=True)`` on their rows only, and all of the tree's documents are if
any change matches no output or the per-leaf counts differ from the tree's ``leaf_count`` (neither should
happen); both are counted (:attr:`ExactLeafValues.fallbacks`). Every leaf holds a training document (LightGBM
checks that each side of a split is non-empty; bagging, which would leave documents out, is refused), so
every leaf is refitted. The validation data is registered with the Booster at the first tree (when
LightGBM computes no metric of its own), so that LightGBM keeps its scores too, and its documents' leaves
are found the same way (:meth:`ExactLeafValues._validation_leaves`).

Trees are still grown with the diagonal hessians; only the leaf values change. Bagging, GOSS, DART,
path smoothing, linear trees, monotone constraints and sample weights change how LightGBM computes leaf
values and are refused.
"""

from __future__ import annotations

import re
import time

import numpy as np

from .. import metrics
from .._constraints import Options, check
from .._engine_registry import ENGINES
from .._jit import kernel
from ..objectives import PLRank
from .parameters import canonical_engine_params, check_leaf_values

try:  # LightGBM >= 4.6 names the fields of an evaluation result
    from lightgbm.basic import EvalResult as _EvalResult
except ImportError:  # pragma: no cover - older LightGBM: plain tuples
    def _EvalResult(*fields):
        return tuple(fields)

#: LightGBM's defaults of the parameters read here
_DEFAULTS = {"learning_rate": 0.1, "lambda_l1": 0.0, "lambda_l2": 0.0, "max_delta_step": 0.0, "boosting": "gbdt",
             "data_sample_strategy": "bagging", "bagging_fraction": 1.0, "bagging_freq": 0,
             "pos_bagging_fraction": 1.0, "neg_bagging_fraction": 1.0, "path_smooth": 0.0, "linear_tree": False,
             "monotone_constraints": None, "num_class": 1}


def lightgbm_param(params: dict, name: str):
    """The value of LightGBM parameter ``name`` in ``params`` (canonical names: :class:`ExactLeafValues` resolves
    the aliases once), else LightGBM's default."""
    return params.get(name, _DEFAULTS[name])


def leaf_values(gradient_sums, curvatures, *, learning_rate, lambda_l1=0.0, lambda_l2=0.0, max_delta_step=0.0):
    """Leaf outputs from per-leaf gradient sums and curvatures, regularised and shrunk as LightGBM does
    (``FeatureHistogram::CalculateSplittedLeafOutput`` then ``Tree::Shrinkage``).

    A leaf whose regularised curvature is not positive gets 0 (LightGBM guarantees a positive hessian
    sum by its floors; the exact curvature can vanish when one document carries a whole context).
    """
    gradient_sums = np.asarray(gradient_sums, dtype=np.float64)
    thresholded = np.sign(gradient_sums) * np.maximum(np.abs(gradient_sums) - lambda_l1, 0.0)
    denominator = np.asarray(curvatures, dtype=np.float64) + lambda_l2
    raw = np.divide(-thresholded, denominator, out=np.zeros_like(thresholded), where=denominator > 0)
    if max_delta_step > 0:
        raw = np.clip(raw, -max_delta_step, max_delta_step)
    return raw * learning_rate


def match_leaves(change, values, magnitude: float):
    """The leaf of every document from the change of its score when a tree was added.

    Parameters
    ----------
    change : float64 array
        Per document, LightGBM's cached score after the tree minus before it: ``fl(fl(a + v) - a)`` for
        the output ``v`` of the document's leaf.
    values : float64 array
        The outputs of the tree's leaves, as LightGBM added them (before any rewrite).
    magnitude : float
        An upper bound of ``|a + v|`` over the documents (the largest cached score after the tree).

    Returns
    -------
    leaf : int64 array or None
        The leaf of every document, or None when some change is farther than the rounding bound from
        every leaf value (the scores did not move by leaf outputs: the caller must look leaves up).
    unresolved : bool array
        Documents whose nearest leaf value lies within twice the bound of another leaf's: their ``leaf``
        is one of those leaves, not necessarily the right one.

    Why it is exact: rounding ``a + v`` errs by at most ``u |a + v|`` and the subtraction by at most
    ``u |change|`` (``u = eps / 2``), so ``|change - v| <= tol`` with ``tol = 2 eps (magnitude +
    max |change|)``, four times that bound (a margin for second-order terms). The nearest value ``w``
    then satisfies ``|w - v| <= 2 tol``; if no other value lies within ``2 tol`` of ``w``, ``w`` is ``v``.
    """
    change = np.ascontiguousarray(change, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    largest = float(np.max(np.abs(change), initial=0.0))
    tol = 2.0 * np.finfo(np.float64).eps * (abs(float(magnitude)) + largest)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    close = ~(np.diff(ordered) > 2.0 * tol)  # NaN or inf values count as close
    ambiguous = np.zeros(ordered.size, dtype=np.bool_)
    ambiguous[:-1] |= close
    ambiguous[1:] |= close
    leaf = np.empty(change.size, dtype=np.int64)
    unresolved = np.empty(change.size, dtype=np.bool_)
    unmatched = _match_kernel(change, ordered, (ordered[1:] + ordered[:-1]) * 0.5, tol, order.astype(np.int64),
                              ambiguous, leaf, unresolved)
    if unmatched:
        return None, np.zeros(change.size, dtype=np.bool_)
    return leaf, unresolved


@kernel
def _match_kernel(change, ordered, midpoints, tol, leaf_at, ambiguous_at, leaf, unresolved):
    """For every document, the position of the nearest value in ``ordered`` (how many ``midpoints`` lie
    below its change: a short loop the compiler vectorises, several times faster than a binary search
    here), its leaf and whether that position is ambiguous. Returns 0, or 1 + the first document whose
    change is farther than ``tol`` from the nearest value (NaN included)."""
    for d in range(change.size):
        c = change[d]
        position = 0
        for k in range(midpoints.size):
            position += midpoints[k] < c
        if not abs(c - ordered[position]) <= tol:
            return d + 1
        leaf[d] = leaf_at[position]
        unresolved[d] = ambiguous_at[position]
    return 0


class ExactLeafValues:
    """Training-time companion of a :class:`~plboost.objectives.PLRank` objective under ``lgb.train``
    that rewrites every new tree's leaves with the exact Newton step (see the module docstring).

    Use :attr:`objective` as LightGBM's ``objective`` and :attr:`callback` among the callbacks;
    :func:`plboost.engines.lightgbm.train_lightgbm` with ``leaf_values="exact"`` does both.

    Parameters
    ----------
    objective : PLRank
    train_data, valid_data : RankingData
        The training data (features are needed to find each document's leaf) and optional validation
        data, scored with the rewritten trees and reported as ``("valid", "ndcg@<eval_at>")``.
    params : dict
        The LightGBM parameters of the run (learning rate, ``lambda_l1``, ``lambda_l2``,
        ``max_delta_step`` under any alias: resolved here, once).
    curvature : "exact" or "diagonal"
        "diagonal" sums the objective's hessians instead, as LightGBM does: it reproduces LightGBM's own
        leaf values and serves as a check of the regularisation arithmetic.
    """

    #: how the leaf of every training document is found: "scores" from the change of LightGBM's cached
    #: training scores (see the module docstring), "predict" with ``Booster.predict(pred_leaf=True)`` on
    #: the raw features (the former way, kept as a reference)
    leaf_finder = "scores"

    def __init__(self, objective: PLRank, train_data, valid_data=None, params: dict | None = None, *,
                 eval_at: int = 10, no_relevant: str = "one", curvature: str = "exact"):
        if not getattr(objective, "exact_leaves", False):  # the capability: a leaf_curvature method
            raise ValueError(f"exact leaf values are defined for PLRank (the paper's Eqn. 9), not {objective!r}")
        check_leaf_values("exact", ENGINES["lightgbm"].name, objective)  # the objective's own settings
        curvature = check(curvature, Options("exact", "diagonal"), "curvature", "ExactLeafValues")
        params = canonical_engine_params(ENGINES["lightgbm"].name, params)
        _refuse_unsupported(params)
        self._objective = objective
        self.curvature = curvature
        self.learning_rate = float(lightgbm_param(params, "learning_rate"))
        self.lambda_l1 = float(lightgbm_param(params, "lambda_l1"))
        self.lambda_l2 = float(lightgbm_param(params, "lambda_l2"))
        self.max_delta_step = float(lightgbm_param(params, "max_delta_step"))
        self.train_data = train_data
        self.valid_data = valid_data
        self.eval_at = int(eval_at)
        self.no_relevant = no_relevant
        #: model prediction minus LightGBM's cached score, per training document
        self.correction = np.zeros(train_data.n_docs)
        #: the model's raw predictions on the validation data
        self.valid_scores = np.zeros(valid_data.n_docs) if valid_data is not None else None
        #: seconds spent finding leaves and rewriting them, per tree
        self.refit_seconds: list[float] = []
        #: seconds spent finding the leaves of the training and validation documents, per tree
        self.leaf_seconds: list[float] = []
        #: trees for which some training documents' leaves had to be looked up with ``predict``, and how
        #: many documents that was in all (see the module docstring)
        self.fallbacks = 0
        self.fallback_documents = 0
        self._trees = 0
        self._scores = self._grad = self._hess = None
        self._cached = None  # LightGBM's cached training scores at the last objective call
        #: validation documents whose leaves had to be looked up with ``predict`` (after the first tree)
        self.valid_fallback_documents = 0
        self._valid_set = None  # the validation data as registered with the Booster, whose scores it keeps
        self._valid_cached = None  # LightGBM's cached validation scores after the last tree
        self._valid_by_predict = False
        if self.leaf_finder == "scores":
            match_leaves(np.zeros(1), np.zeros(1), 0.0)  # compiles (or loads) the kernel before training

    def __deepcopy__(self, memo):
        # lgb.train deep-copies its parameters, this object's bound objective among them: the copy
        # must be this very object, whose corrections the callback keeps
        return self

    def objective(self, preds, dataset):
        """LightGBM's custom objective: PLRank's gradients at the model's true training scores."""
        if len(preds) != self.correction.size:
            raise ValueError(f"exact leaf values were set up for {self.correction.size} training documents, "
                             f"LightGBM passed {len(preds)}")
        if dataset.get_weight() is not None:
            raise ValueError("exact leaf values do not support sample weights")
        # a copy: `preds` is the Booster's own buffer, refilled in place whenever the cached scores are read
        self._cached = np.array(preds, dtype=np.float64)
        self._scores = self._cached + self.correction
        self._grad, self._hess = self._objective(self._scores, dataset)
        return self._grad, self._hess

    @property
    def callback(self) -> _RewriteLeaves:
        """The callback to hand ``lgb.train``: it runs :meth:`after_iteration` before every other callback
        (so that they see the validation score)."""
        return _RewriteLeaves(self)

    def after_iteration(self, env) -> None:
        """Rewrite the new tree's leaves, update the scores, report validation NDCG (see :attr:`callback`)."""
        start = time.perf_counter()
        booster = env.model
        tree = booster.num_trees() - 1
        if tree >= self._trees:
            self._trees = tree + 1
            if self.leaf_finder == "predict":
                leaf = _predicted_leaves(booster, self.train_data.X, env.iteration)
                valid_leaf = (_predicted_leaves(booster, self.valid_data.X, env.iteration)
                              if self.valid_data is not None else leaf[:0])
                n_leaves = int(max(leaf.max(), valid_leaf.max(initial=0))) + 1
                old = np.array([booster.get_leaf_output(tree, index) for index in range(n_leaves)])
            else:
                n_leaves, counts = _tree_leaf_counts(booster, env.iteration)
                old = np.array([booster.get_leaf_output(tree, index) for index in range(n_leaves)])
                leaf = self._training_leaves(booster, env.iteration, old, counts)
                valid_leaf = (self._validation_leaves(booster, env.iteration, old)
                              if self.valid_data is not None else leaf[:0])
            self.leaf_seconds.append(time.perf_counter() - start)
            new = self.new_leaf_values(leaf, n_leaves)
            unseen = np.bincount(leaf, minlength=n_leaves) == 0  # no training document: nothing to refit
            new[unseen] = old[unseen]
            for index in np.flatnonzero(~unseen):
                booster.set_leaf_output(tree, int(index), float(new[index]))
            self.correction += (new - old)[leaf]
            if self.valid_scores is not None:
                self.valid_scores += new[valid_leaf]
        self.refit_seconds.append(time.perf_counter() - start)
        if self.valid_data is not None:
            value = metrics.ndcg(self.valid_scores, self.valid_data.labels, offsets=self.valid_data.offsets,
                                 k=self.eval_at, no_relevant=self.no_relevant)
            env.evaluation_result_list.append(_EvalResult("valid", f"ndcg@{self.eval_at}", float(value), True))

    def new_leaf_values(self, leaf, n_leaves: int) -> np.ndarray:
        """The leaf outputs (learning rate applied) of the tree whose training-document leaves are ``leaf``,
        from the gradients of the last objective call."""
        gradient_sums = np.bincount(leaf, weights=self._grad.astype(np.float64), minlength=n_leaves)
        if self.curvature == "exact":
            curvatures = self._objective.leaf_curvature(self._scores, self.train_data.labels,
                                                        self.train_data.offsets, leaf, n_leaves)
        else:
            curvatures = np.bincount(leaf, weights=self._hess.astype(np.float64), minlength=n_leaves)
        return leaf_values(gradient_sums, curvatures, learning_rate=self.learning_rate, lambda_l1=self.lambda_l1,
                           lambda_l2=self.lambda_l2, max_delta_step=self.max_delta_step)

    def _training_leaves(self, booster, iteration: int, values, counts) -> np.ndarray:
        """The leaf of every training document in the tree of ``iteration`` whose outputs are ``values``,
        read off the change of LightGBM's cached training scores since the objective's call; looked up
        with ``predict`` where that cannot tell (see the module docstring)."""
        change, magnitude = _cached_score_change(booster, self._cached)  # also refreshes self._cached
        leaf, unresolved = match_leaves(change, values, magnitude) if change is not None else (None, None)
        looked_up = 0
        if leaf is not None and unresolved.any():
            rows = np.flatnonzero(unresolved)
            leaf[rows] = _predicted_leaves(booster, self.train_data.X[rows], iteration)
            looked_up = rows.size
        if leaf is not None and counts is not None and not np.array_equal(
                np.bincount(leaf, minlength=len(values)), counts):
            leaf = None
        if leaf is None:
            leaf = _predicted_leaves(booster, self.train_data.X, iteration)
            looked_up = leaf.size
        if looked_up:
            self.fallbacks += 1
            self.fallback_documents += looked_up
        return leaf

    def _validation_leaves(self, booster, iteration: int, values) -> np.ndarray:
        """The leaf of every validation document in the tree of ``iteration`` whose outputs are ``values``.

        At the first tree the validation data is registered with the Booster (``Booster.add_valid``, as a
        Dataset binned like the training data): from then on LightGBM adds every new
        tree to its cached validation scores too, as to the training scores but by walking the tree over
        the binned data, several times faster than ``predict`` over the raw features, and the leaves are
        read off the change of those scores. Only when LightGBM computes no metric of its own: it would
        report them, on scores that miss the rewrites, to ``lgb.train``'s callbacks. Looked up with
        ``predict`` at the first tree (the cached scores then hold the earlier trees too), where two leaves
        share a value, when no change matches, and throughout when the data cannot be registered.
        """
        X = self.valid_data.X
        if self._valid_set is None and not self._valid_by_predict:
            self._valid_set = _registered_validation(booster, X)
            self._valid_by_predict = self._valid_set is None
            if self._valid_set is not None:
                self._valid_cached = np.zeros(self.valid_data.n_docs)
                _cached_score_change(booster, self._valid_cached, self._valid_set)
                return _predicted_leaves(booster, X, iteration)
        if self._valid_set is None:
            return _predicted_leaves(booster, X, iteration)
        change, magnitude = _cached_score_change(booster, self._valid_cached, self._valid_set)
        leaf, unresolved = match_leaves(change, values, magnitude) if change is not None else (None, None)
        if leaf is None:
            self.valid_fallback_documents += self.valid_data.n_docs
            return _predicted_leaves(booster, X, iteration)
        if unresolved.any():
            rows = np.flatnonzero(unresolved)
            leaf[rows] = _predicted_leaves(booster, X[rows], iteration)
            self.valid_fallback_documents += rows.size
        return leaf


def _predicted_leaves(booster, X, iteration: int) -> np.ndarray:
    """The leaf of every row of ``X`` in the tree of ``iteration``, by walking it over the features."""
    return booster.predict(X, start_iteration=iteration, num_iteration=1, pred_leaf=True).reshape(-1)


def _cached_score_change(booster, before, dataset=None):
    """LightGBM's cached scores of ``dataset`` (registered with ``booster``; the training data if None) now
    minus ``before``, and the largest ``|score|`` now; ``before`` is then overwritten with the scores now.

    ``Booster.eval_train(feval)`` and ``Booster.eval(dataset, name, feval)`` hand ``feval`` the cached
    scores (an array of the Booster's own, refilled by ``LGBM_BoosterGetPredict`` and handed to the
    objective too): they are used at once. (None, None) when they do not come (another LightGBM).
    """
    if before is None:
        return None, None
    found = []

    def grab(preds, _):
        preds = np.asarray(preds, dtype=np.float64).reshape(-1)
        if preds.shape == before.shape:
            found.append((preds - before, float(np.max(np.abs(preds), initial=0.0))))
            before[...] = preds
        return "plboost_cached_scores", 0.0, True

    if dataset is None:
        booster.eval_train(feval=grab)
    else:
        booster.eval(dataset, "plboost_validation", feval=grab)
    return found[0] if found else (None, None)


_NO_METRIC = {"", "none", "null", "na", "custom"}


def _registered_validation(booster, X):
    """``X`` as a Dataset binned like the training data and registered with ``booster`` (which then keeps
    its scores), or None when LightGBM has metrics to compute (it would compute them on it) or refuses."""
    import lightgbm as lgb

    names = canonical_engine_params(ENGINES["lightgbm"].name, booster.params).get("metric")
    names = [names] if names is None or isinstance(names, str) else list(names)
    if any(str(part).strip().lower() not in _NO_METRIC
           for name in names if name is not None for part in str(name).split(",")):
        return None
    try:
        dataset = lgb.Dataset(X, free_raw_data=True).set_reference(booster.train_set)
        booster.add_valid(dataset, "plboost_validation")
    except (lgb.basic.LightGBMError, ValueError, TypeError, AttributeError):
        return None
    return dataset


_NUM_LEAVES = re.compile(r"^num_leaves=(\d+)\s*$", re.MULTILINE)
_LEAF_COUNT = re.compile(r"^leaf_count=([-\d ]*)\s*$", re.MULTILINE)


def _tree_leaf_counts(booster, iteration: int):
    """The number of leaves of the tree of ``iteration`` and its training documents per leaf (None if not
    given), from the model text of that tree alone (``Booster.model_to_string``; the JSON dump, 4 times
    slower, if the text's form is not the expected one)."""
    text = booster.model_to_string(start_iteration=iteration, num_iteration=1)
    tree = text.find("\nTree=")
    leaves = _NUM_LEAVES.search(text, tree) if tree >= 0 else None
    if leaves is not None:
        n_leaves = int(leaves.group(1))
        counts = _LEAF_COUNT.search(text, leaves.end())
        counts = np.array(counts.group(1).split(), dtype=np.int64) if counts is not None else None
    else:  # pragma: no cover - another text format
        info = booster.dump_model(start_iteration=iteration, num_iteration=1)["tree_info"][0]
        n_leaves, counts = int(info["num_leaves"]), None
    if counts is not None and counts.size != n_leaves:
        counts = None
    return n_leaves, counts


class _RewriteLeaves:
    """``lgb.train`` callback of one :class:`ExactLeafValues`. An object of its own because LightGBM orders
    callbacks by an ``order`` attribute that it sets on each callback when missing: on a bound method that
    lands on the class's function and is shared by every instance."""

    order = -1000  # first: LightGBM's own callbacks have orders 10 to 30, plain functions get -len(callbacks)..-1
    before_iteration = False

    def __init__(self, refit: ExactLeafValues):
        self.refit = refit

    def __call__(self, env) -> None:
        self.refit.after_iteration(env)


def _refuse_unsupported(params: dict) -> None:
    """Refuse the LightGBM settings under which a leaf value is not the Newton step over all documents."""
    checks = [
        (lightgbm_param(params, "boosting") not in ("gbdt", "gbrt"), "boosting other than gbdt"),
        (lightgbm_param(params, "data_sample_strategy") == "goss", "GOSS sampling"),
        (float(lightgbm_param(params, "bagging_fraction")) < 1 and int(lightgbm_param(params, "bagging_freq")) > 0,
         "bagging"),
        (min(float(lightgbm_param(params, "pos_bagging_fraction")),
             float(lightgbm_param(params, "neg_bagging_fraction"))) < 1
         and int(lightgbm_param(params, "bagging_freq")) > 0, "bagging"),
        (float(lightgbm_param(params, "path_smooth")) > 0, "path_smooth"),
        (bool(lightgbm_param(params, "linear_tree")), "linear trees"),
        (lightgbm_param(params, "monotone_constraints") not in (None, [], ""), "monotone constraints"),
        (int(lightgbm_param(params, "num_class")) != 1, "several classes"),
    ]
    for refused, what in checks:
        if refused:
            raise ValueError(f"exact leaf values do not support {what}: LightGBM then computes leaf values "
                             "from other documents or with other terms; use leaf_values='diagonal'")
