"""What every objective shares: its parameters (copies, pickles, lgb.train's deep copy), its losses and
their derivatives, the hessian floor, and the engine adapters (LightGBM, LGBMRanker, lgb.cv, XGBoost).

The generic tests take every registered objective from the ``objective_class`` and ``objective`` fixtures
(tests/conftest.py), so a new objective is tested by them as soon as it is in the registry.
"""

import copy
import inspect
import pickle
import typing

import lightgbm as lgb
import re

import numpy as np
import pytest
import xgboost as xgb

from plboost import metrics, query_folds
from plboost.errors import InvalidParameterError
from plboost._values import plain_value
from plboost.objectives import OBJECTIVES, ListNet, PLPartition, PLRank, UMart, URank, get_objective, registry


@pytest.fixture(scope="module")
def ranking_arrays(interpreted):
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 40, size=30 if interpreted else 120)
    n = int(sizes.sum())
    X = rng.normal(size=(n, 6))
    labels = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] * X[:, 2] + rng.normal(scale=0.7, size=n)), 0, 4)
    return X, labels, sizes, np.r_[0, np.cumsum(sizes)]


LGB_PARAMS = {"learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1, "seed": 1,
              "num_threads": 1}


# --------------------------------------------------------------------------------------------------
# Parameters

def _derived_value(parameter: inspect.Parameter):
    """A value other than the parameter's default, from the default and the annotation: a bool flipped,
    an int plus one, a float doubled (1.0 for 0), and for a None default the first of bool (True), int (2)
    or float (0.5) that the annotation allows."""
    default = parameter.default
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return 2.0 * default if default else 1.0
    if default is None:
        allowed = typing.get_args(parameter.annotation)
        for kind, value in ((bool, True), (int, 2), (float, 0.5)):
            if kind in allowed:
                return value
    pytest.fail(f"no value other than the default can be derived for {parameter}: name one in the class's "
                "_non_default_examples")


def non_default_arguments(cls) -> dict:
    """A valid value other than its default for EVERY argument of ``cls.__init__`` but its aliases and those the
    class tests alone (``_examples_alone``, left at their defaults): the class's ``_non_default_examples`` where it
    names one, else ``_derived_value``."""
    signature = inspect.signature(cls.__init__, eval_str=True)
    arguments = {}
    for name, parameter in signature.parameters.items():
        if name == "self" or name in cls._aliases:
            continue
        if name in cls._examples_alone:
            arguments[name] = parameter.default
            continue
        value = cls._non_default_examples[name] if name in cls._non_default_examples else _derived_value(parameter)
        assert value is not parameter.default and value != parameter.default, f"{cls.__name__}: {name} at its default"
        arguments[name] = value
    assert set(cls._non_default_examples) <= set(arguments), "examples of arguments that do not exist"
    return arguments


QUERY_LABELS, QUERY_OFFSETS = np.array([1.0, 0.0, 2.0, 2.0, 0.0, 1.0, 0.0]), np.array([0, 3, 7])
QUERY_SCORES = np.array([0.3, -0.2, 1.1, 0.4, 0.4, -1.0, 0.0])


def test_get_params_is_the_constructor_signature(objective_class):
    """Reported: every argument of __init__ but the aliases, in order; an objective rebuilt from them is
    the same objective."""
    names = [name for name in inspect.signature(objective_class.__init__).parameters
             if name != "self" and name not in objective_class._aliases]
    for obj in (objective_class(), objective_class(**non_default_arguments(objective_class))):
        assert list(obj.get_params()) == names
        rebuilt = objective_class(**obj.get_params())
        assert rebuilt.get_params() == obj.get_params() and repr(rebuilt) == repr(obj)


def test_arguments_set_alone_survive_copies_pickles_and_set_params(objective_class):
    """What the other tests check with every argument set, for each argument whose example excludes others
    (``_examples_alone``), set by itself."""
    for name in objective_class._examples_alone:
        arguments = {**objective_class().get_params(), name: objective_class._non_default_examples[name]}
        obj = objective_class(**{name: arguments[name]})
        assert obj != objective_class() and plain_value(obj.get_params()[name]) == plain_value(arguments[name])
        expected = obj.gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS)
        for clone in (copy.deepcopy(obj), pickle.loads(pickle.dumps(obj)), objective_class(**obj.get_params()),
                      objective_class().set_params(**{name: arguments[name]})):
            assert clone == obj and repr(clone) == repr(obj)
            for got, want in zip(clone.gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS), expected, strict=True):
                np.testing.assert_array_equal(got, want)


def test_every_parameter_is_declared_and_checked_by_its_constraint(objective_class):
    """Every constructor argument has a declared constraint (plboost._constraints), and a value of the wrong kind
    for it (a string where a number or bool goes, a number where a name goes, NaN where a float goes) is refused
    by the constructor and by set_params with one message naming the class and the argument, the objective left
    as it was. Strings for booleans are refused, not truth-tested: "false" would be True."""
    declared = objective_class.parameter_constraints
    names = [name for name in inspect.signature(objective_class.__init__).parameters if name != "self"]
    assert set(names) - set(objective_class._aliases) <= set(declared), "arguments without a constraint"
    obj = objective_class()
    before = obj.get_params()
    for name in set(names) - set(objective_class._aliases):
        parts = declared[name] if isinstance(declared[name], tuple) else (declared[name],)
        kinds = {type(part).__name__ for part in parts if part is not None}
        wrong = ["false", "no"] if kinds & {"Boolean", "Integer", "Real", "Reals"} else [7, True]
        wrong += [1] if "Boolean" in kinds else [float("nan")] if "Real" in kinds else []
        for value in wrong:
            message = f"^{objective_class.__name__}: {name} must be .*, got {value!r}"
            with pytest.raises(InvalidParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
                objective_class(**{name: value})
            with pytest.raises(ValueError, match=f"{name} must be"):
                obj.set_params(**{name: value})
            assert obj.get_params() == before


def test_every_parameter_survives_copies_and_pickles(objective_class):
    """Every constructor argument at a value other than its default comes back from copy.deepcopy (what
    lgb.train does to its params), pickle and a deep copy of a params dict; a cached state does not travel
    and does not matter."""
    arguments = non_default_arguments(objective_class)
    obj = objective_class(**arguments)
    assert obj.get_params() == arguments
    expected = obj.gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS)
    for clone in (copy.deepcopy(obj), pickle.loads(pickle.dumps(obj)), copy.deepcopy({"objective": obj})["objective"]):
        assert type(clone) is objective_class and clone is not obj and not clone._states
        assert clone.get_params() == arguments
        assert repr(clone) == repr(obj)
        for got, want in zip(clone.gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS), expected, strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.engine
def test_lgb_train_trains_with_every_parameter(objective_class, ranking_arrays):
    """lgb.train deep-copies its params: the objective that trains is a copy, and it must carry every
    argument (a parameter missing from the copy would train silently with its default)."""
    X, labels, sizes, _ = ranking_arrays
    arguments = non_default_arguments(objective_class)
    trained = []

    class Recording(objective_class):
        def __call__(self, preds, data):
            trained.append(self)
            return super().__call__(preds, data)

    obj = Recording(**arguments)
    lgb.train({"objective": obj, **LGB_PARAMS}, lgb.Dataset(X, labels, group=sizes), num_boost_round=1)
    assert trained and all(t is not obj for t in trained), "LightGBM trained the objective itself, not a copy"
    for t in trained:
        assert type(t) is Recording and t.get_params() == arguments


def test_scikit_learn_parameter_contract(objective_class):
    """get_params(deep=...), set_params validated like the constructor, equality and hash from the parameters,
    and sklearn.base.clone, for every registered objective."""
    from sklearn.base import clone

    arguments = non_default_arguments(objective_class)
    obj = objective_class(**arguments)
    assert obj.get_params(deep=False) == obj.get_params(deep=True) == arguments
    assert obj == objective_class(**arguments) and hash(obj) == hash(objective_class(**arguments))
    assert obj != objective_class() and obj != object()
    copied = clone(obj)
    assert copied is not obj and copied == obj and type(copied) is objective_class
    fresh = objective_class()
    assert fresh.set_params(**arguments) is fresh and fresh == obj
    fresh.gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS)
    fresh.set_params(**objective_class().get_params())
    assert fresh == objective_class() and not fresh._states
    with pytest.raises(ValueError, match="unknown parameter 'nonesuch'; its parameters are"):
        fresh.set_params(nonesuch=1)
    with pytest.raises((ValueError, TypeError)):
        fresh.set_params(hessian_floor=-1.0)
    assert fresh == objective_class(), "a refused value changed the objective"


def test_search_space_names_valid_values_of_real_parameters(objective_class):
    """Every dimension of the class's ``search_space`` (``compare --tune``) is a constructor argument or a
    run setting (leaf_values), each of its choices, bounds and default constructs the objective, its
    defaults together are the default objective (trial 0 trains the untuned configuration), and what
    ``search_fixed_by`` names is searched."""
    import dataclasses

    from plboost.experiment import RunSpec
    from plboost.tuning import Dimension

    arguments = set(inspect.signature(objective_class.__init__).parameters) - {"self"}
    run_settings = {field.name for field in dataclasses.fields(RunSpec)}
    defaults = {}
    for name, fields in objective_class.search_space.items():
        dimension = Dimension(name, **fields)
        assert name in arguments or name in run_settings, f"{name}: neither an argument nor a run setting"
        if name not in arguments:
            continue
        values = dimension.choices if dimension.choices is not None else (dimension.low, dimension.high)
        for value in (*values, dimension.default):
            objective_class(**{name: value})
        defaults[name] = dimension.default
    assert objective_class(**defaults) == objective_class()
    for params in ({}, non_default_arguments(objective_class)):
        assert objective_class.search_fixed_by(params) <= set(objective_class.search_space)


def test_equal_parameters_are_equal_objectives_whatever_their_container():
    assert PLRank(top_k=10) == PLRank() and hash(PLRank(top_k=10)) == hash(PLRank())
    assert UMart(label_gain=[0, 1, 3]) == UMart(label_gain=(0, 1, 3)) == UMart(label_gain=np.array([0.0, 1, 3]))
    assert len({PLRank(), PLRank(top_k=10), PLRank(top_k=5)}) == 2


def test_umart_set_params_preset_moves_the_parameters_left_at_the_preset():
    assert UMart().set_params(preset="paper") == UMart(preset="paper")
    assert UMart(preset="paper").set_params(preset="lightgbm") == UMart()
    assert UMart(sigmoid=3.0).set_params(preset="paper") == UMart(sigmoid=3.0, preset="paper")
    assert UMart().set_params(preset="paper", max_dcg_at=5) == UMart(preset="paper", max_dcg_at=5)


def test_the_lgbmranker_callable_pickles_and_compares():
    fitted = PLRank(n_permutations=2)
    fitted.gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS)
    for objective in (PLRank(n_permutations=2), fitted):
        adapter = objective.sklearn()
        restored = pickle.loads(pickle.dumps(adapter))
        assert restored == adapter and hash(restored) == hash(adapter) and repr(restored) == repr(adapter)
        assert not restored.objective._states
        expected = PLRank(n_permutations=2).gradients(QUERY_SCORES, QUERY_LABELS, QUERY_OFFSETS)
        for got, want in zip(restored(QUERY_LABELS, QUERY_SCORES, None, np.diff(QUERY_OFFSETS)), expected, strict=True):
            np.testing.assert_array_equal(got, want)


@pytest.mark.engine
def test_a_fitted_lgbmranker_survives_pickle_and_joblib(mq2008):
    """A fitted LGBMRanker with a plboost objective pickles and joblib-dumps, and predicts identically after
    loading; a clone of it is unfitted, with an equal objective."""
    import io

    import joblib
    from sklearn.base import clone

    train = mq2008[0]
    ranker = lgb.LGBMRanker(objective=PLRank(n_permutations=2).sklearn(), n_estimators=10, verbose=-1)
    ranker.fit(train.X, train.labels, group=train.group_sizes)
    expected = ranker.predict(train.X)
    buffer = io.BytesIO()
    joblib.dump(ranker, buffer)
    buffer.seek(0)
    for restored in (pickle.loads(pickle.dumps(ranker)), joblib.load(buffer)):
        np.testing.assert_array_equal(restored.predict(train.X), expected)
    unfitted = clone(ranker)
    assert unfitted.get_params()["objective"] == PLRank(n_permutations=2).sklearn()
    assert not hasattr(unfitted, "booster_") or not unfitted.__sklearn_is_fitted__()


def test_partition_quadrature_step_is_accepted_but_not_reported():
    obj = PLPartition(quadrature_step=0.3)
    assert obj.get_params() == {"tolerance": obj.tolerance, "hessian_floor": 1e-6}
    assert copy.deepcopy(obj).tolerance == obj.tolerance


def test_get_objective_and_the_registry():
    assert repr(get_objective("plrank", top_k=3)) == repr(PLRank(top_k=3))
    with pytest.raises(ValueError, match="unknown plboost objective 'nonesuch'"):
        get_objective("nonesuch")
    with pytest.raises(ValueError, match="'urank' is empty or already registered"):
        registry(PLRank, URank, URank)


# --------------------------------------------------------------------------------------------------
# Losses and the hessian floor

def _small_queries():
    """Queries of 1 to 9 documents with tied labels and tied scores (one query's labels all equal)."""
    rng = np.random.default_rng(12)
    sizes = np.array([1, 2, 4, 6, 9, 3])
    labels = rng.integers(0, 3, size=sizes.sum()).astype(float)
    offsets = np.r_[0, np.cumsum(sizes)]
    labels[offsets[-2]:] = 1.0
    scores = rng.normal(scale=1.5, size=sizes.sum())
    scores[8] = scores[9]
    return scores, labels, offsets


def test_gradients_are_the_derivatives_of_the_losses(objective):
    """Gradient and diagonal hessian against central differences of losses().sum(), every document; an
    objective without a loss (uMart: LambdaMART-style lambdas) refuses losses() with the reason."""
    scores, labels, offsets = _small_queries()
    if objective._no_loss_reason:
        with pytest.raises(NotImplementedError, match=f"{type(objective).__name__} has no loss: .+"):
            objective.losses(scores, labels, offsets)
        return
    losses = objective.losses(scores, labels, offsets)
    assert losses.dtype == np.float64 and losses.shape == (offsets.size - 1,)
    assert losses[-1] == 0.0  # labels all equal: no loss

    def total(i, delta):
        moved = scores.copy()
        moved[i] += delta
        return objective.losses(moved, labels, offsets).sum()

    grad, hess = objective.gradients(scores, labels, offsets)
    center = losses.sum()
    fd_grad = np.array([(total(i, 1e-4) - total(i, -1e-4)) / 2e-4 for i in range(scores.size)])
    fd_hess = np.array([(total(i, 1e-3) - 2 * center + total(i, -1e-3)) / 1e-6 for i in range(scores.size)])
    np.testing.assert_allclose(grad, fd_grad, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hess, np.maximum(fd_hess, objective.hessian_floor), rtol=1e-3, atol=1e-4)


def test_the_hessian_floor_comes_once_after_the_weights(objective_class, ranking_arrays):
    """Kernels write raw hessians; the floor is applied once, after the weights: hess = max(w h, floor),
    and documents without gradient (a query whose labels are all equal) get exactly the floor."""
    X, labels, sizes, offsets = ranking_arrays
    labels = labels.copy()
    labels[:offsets[1]] = 1.0
    rng = np.random.default_rng(13)
    scores = rng.normal(size=labels.size)
    weights = rng.uniform(0.0, 3.0, size=labels.size)
    weights[::7] = 0.0
    raw_grad, raw_hess = objective_class(hessian_floor=0.0).gradients(scores, labels, offsets)
    assert np.all(raw_grad[:offsets[1]] == 0.0) and np.all(raw_hess[:offsets[1]] == 0.0)
    floor = 1e-3
    unweighted = objective_class(hessian_floor=floor).gradients(scores, labels, offsets)
    np.testing.assert_array_equal(unweighted[0], raw_grad)
    np.testing.assert_array_equal(unweighted[1], np.maximum(raw_hess, np.float32(floor)))
    dataset = lgb.Dataset(X, labels, group=sizes, weight=weights).construct()
    grad, hess = objective_class(hessian_floor=floor)(scores, dataset)
    w = weights.astype(np.float32)
    np.testing.assert_array_equal(grad, raw_grad * w)
    np.testing.assert_array_equal(hess, np.maximum(raw_hess * w, np.float32(floor)))


# --------------------------------------------------------------------------------------------------
# The engine adapters


def test_lightgbm_calls_get_the_pure_gradients(ranking_arrays):
    X, labels, sizes, offsets = ranking_arrays
    obj = PLRank(n_permutations=2)
    dataset = lgb.Dataset(X, labels, group=sizes).construct()
    scores = np.random.default_rng(1).normal(size=len(labels))
    grad, hess = obj(scores, dataset)
    assert grad.dtype == np.float32 and hess.dtype == np.float32
    expected = PLRank(n_permutations=2).gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad, expected[0])
    np.testing.assert_array_equal(hess, expected[1])


def test_xgboost_calls_get_the_pure_gradients_and_group_weights(ranking_arrays):
    X, labels, sizes, offsets = ranking_arrays
    obj = PLRank(top_k=5)
    matrix = xgb.DMatrix(X, labels)
    matrix.set_group(sizes)
    scores = np.random.default_rng(2).normal(size=len(labels)).astype(np.float32)
    grad, hess = obj(scores, matrix)
    expected_grad, expected_hess = PLRank(top_k=5).gradients(scores, labels, offsets)
    np.testing.assert_array_equal(grad, expected_grad)
    np.testing.assert_array_equal(hess, expected_hess)
    query_weights = np.linspace(0.5, 2.0, len(sizes))
    matrix.set_weight(query_weights)  # XGBoost ranking weights are per query
    weighted_grad, _ = obj(scores, matrix)
    np.testing.assert_allclose(weighted_grad, expected_grad * np.repeat(query_weights, sizes), rtol=1e-6)


@pytest.mark.parametrize("extra", [0, 3])
def test_xgboost_weights_not_one_per_query_are_refused_by_count(ranking_arrays, extra):
    """One weight per document (LightGBM's layout, set before the groups, which XGBoost then does not check), or any
    other count: refused naming both counts, not a failed broadcast."""
    X, labels, sizes, offsets = ranking_arrays
    matrix = xgb.DMatrix(X, labels, weight=np.ones(len(labels) + extra))
    matrix.set_group(sizes)
    per = " (one per document)" if extra == 0 else ""
    with pytest.raises(ValueError, match=rf"^xgb\.DMatrix: XGBoost's ranking weights are one per query \(group\), but "
                                         rf"it holds {len(labels) + extra} weights{re.escape(per)} for {len(sizes)} "
                                         rf"queries of {len(labels)} documents; set_weight"):
        URank()(np.zeros(len(labels), dtype=np.float32), matrix)


def test_lightgbm_weights_multiply_per_document(ranking_arrays):
    X, labels, sizes, _ = ranking_arrays
    weights = np.random.default_rng(3).uniform(0.1, 3.0, size=len(labels))
    scores = np.zeros(len(labels))
    plain, _ = PLRank()(scores, lgb.Dataset(X, labels, group=sizes).construct())
    grad, hess = PLRank()(scores, lgb.Dataset(X, labels, group=sizes, weight=weights).construct())
    np.testing.assert_allclose(grad, plain * weights.astype(np.float32), rtol=1e-6)
    assert np.all(hess >= 1e-6)


@pytest.mark.engine
@pytest.mark.parametrize("obj", [PLRank(n_permutations=2), URank()], ids=lambda o: o.name)
def test_lightgbm_labels_and_weights_set_after_construction_are_followed(ranking_arrays, obj):
    """Issue 16: per-dataset state follows Dataset.set_label (and set_weight) on the same object."""
    X, labels, sizes, offsets = ranking_arrays
    dataset = lgb.Dataset(X, labels, group=sizes, params=LGB_PARAMS).construct()
    scores = np.random.default_rng(7).normal(size=len(labels))
    before = obj(scores, dataset)
    np.testing.assert_array_equal(before[0], type(obj)(**obj.get_params()).gradients(scores, labels, offsets)[0])
    new_labels = np.random.default_rng(8).permutation(labels)
    dataset.set_label(new_labels)
    expected_grad, expected_hess = type(obj)(**obj.get_params()).gradients(scores, new_labels, offsets)
    grad, hess = obj(scores, dataset)
    np.testing.assert_array_equal(grad, expected_grad)
    np.testing.assert_array_equal(hess, expected_hess)
    weights = np.random.default_rng(9).uniform(0.5, 2.0, size=len(labels))
    dataset.set_weight(weights)
    np.testing.assert_allclose(obj(scores, dataset)[0], expected_grad * weights.astype(np.float32), rtol=1e-6)
    booster = lgb.train({"objective": obj, **LGB_PARAMS}, dataset, num_boost_round=5)
    fresh = lgb.train({"objective": type(obj)(**obj.get_params()), **LGB_PARAMS},
                      lgb.Dataset(X, new_labels, group=sizes, weight=weights), num_boost_round=5)
    np.testing.assert_array_equal(booster.predict(X, raw_score=True), fresh.predict(X, raw_score=True))


@pytest.mark.engine
@pytest.mark.parametrize("obj", [PLRank(n_permutations=2), URank()], ids=lambda o: o.name)
def test_xgboost_labels_set_between_trainings_are_followed(ranking_arrays, obj):
    """Issue 16: xgb.train uses the objective itself (no copy); a second training after DMatrix.set_label
    must train on the new labels."""
    X, labels, sizes, offsets = ranking_arrays
    params = {"tree_method": "hist", "max_depth": 3, "nthread": 1}
    matrix = xgb.DMatrix(X, labels)
    matrix.set_group(sizes)
    first = xgb.train(params, matrix, num_boost_round=3, obj=obj)
    new_labels = np.random.default_rng(10).permutation(labels)
    matrix.set_label(new_labels)
    scores = np.random.default_rng(11).normal(size=len(labels))
    np.testing.assert_array_equal(obj(scores, matrix)[0],
                                  type(obj)(**obj.get_params()).gradients(scores, new_labels, offsets)[0])
    second = xgb.train(params, matrix, num_boost_round=3, obj=obj)
    fresh_matrix = xgb.DMatrix(X, new_labels)
    fresh_matrix.set_group(sizes)
    fresh = xgb.train(params, fresh_matrix, num_boost_round=3, obj=type(obj)(**obj.get_params()))
    np.testing.assert_array_equal(second.predict(matrix, output_margin=True),
                                  fresh.predict(matrix, output_margin=True))
    assert not np.array_equal(second.predict(matrix, output_margin=True), first.predict(matrix, output_margin=True))


@pytest.mark.engine
def test_data_without_groups_is_refused_clearly(ranking_arrays):
    X, labels, _, _ = ranking_arrays
    with pytest.raises(ValueError, match="PLRank needs query groups.*group="):
        lgb.train({"objective": PLRank(), "verbosity": -1}, lgb.Dataset(X, labels), num_boost_round=1)
    with pytest.raises(ValueError, match="PLRank needs query groups.*set_group"):
        xgb.train({}, xgb.DMatrix(X, labels), num_boost_round=1, obj=PLRank())
    for callable_objective in (PLRank().sklearn(), URank()):
        with pytest.raises(ValueError, match="needs query groups: call LGBMRanker.fit"):
            callable_objective(labels, np.zeros(len(labels)), None, None)


@pytest.mark.engine
def test_the_objective_called_with_what_no_engine_passes_is_refused_in_one_line():
    """Called with a second argument that is neither an engine's dataset nor an array, or with weights or queries
    beside a dataset (which holds its own), the objective names both calls it takes."""
    dataset = lgb.Dataset(np.zeros((4, 1)), QUERY_LABELS[:4], group=[4]).construct()
    with pytest.raises(TypeError, match=r"^ListNet is called by LightGBM or XGBoost with \(preds, dataset\), or by "
                                        r"lgb.LGBMRanker with \(y_true, y_pred, weight, group\) arrays; got a list"):
        ListNet()(np.zeros(3), [0.0, 1.0, 2.0])
    for extra in ({"weight": np.ones(4)}, {"group": [2, 2]}):
        with pytest.raises(TypeError, match=r"^UMart\(preds, dataset\) takes the weights and queries from the "
                                            r"dataset: weight= and group= go with \(y_true, y_pred, weight, group\)"):
            UMart()(np.zeros(4), dataset, **extra)


@pytest.mark.engine
def test_lgbmranker_takes_the_objective_itself_and_trains_what_lgb_train_does(ranking_arrays, objective):
    """``lgb.LGBMRanker(objective=obj)``, with no adapter, trains the model ``lgb.train`` does, and ``obj.sklearn()``
    the same, with and without per-document sample weights; the objective given is left as it was."""
    X, labels, sizes, _ = ranking_arrays
    weights = np.random.default_rng(3).uniform(0.25, 2.0, size=len(labels))
    given = copy.deepcopy(objective)
    for weight in (None, weights):
        booster = lgb.train({"objective": objective, **LGB_PARAMS}, lgb.Dataset(X, labels, group=sizes, weight=weight),
                            num_boost_round=6)
        for callable_objective in (objective, objective.sklearn()):
            ranker = lgb.LGBMRanker(objective=callable_objective, n_estimators=6, **LGB_PARAMS)
            ranker.fit(X, labels, group=sizes, sample_weight=weight)
            np.testing.assert_allclose(ranker.predict(X, raw_score=True), booster.predict(X, raw_score=True),
                                       rtol=1e-12)
    assert objective == given and objective.get_params() == given.get_params()


@pytest.mark.engine
def test_one_objective_serves_several_datasets_as_in_lgb_cv(ranking_arrays):
    """State is keyed by the data: alternating datasets gives what fresh objectives give."""
    X, labels, sizes, offsets = ranking_arrays
    half = len(sizes) // 2
    parts = [(labels[:offsets[half]], sizes[:half]), (labels[offsets[half]:], sizes[half:])]
    datasets = [lgb.Dataset(X[:len(y)] if i == 0 else X[offsets[half]:], y, group=g).construct()
                for i, (y, g) in enumerate(parts)]
    shared = PLRank(n_permutations=3, seed=5)
    rng = np.random.default_rng(6)
    for _ in range(2):
        for dataset, (y, _) in zip(datasets, parts, strict=True):
            scores = rng.normal(size=len(y))
            fresh = PLRank(n_permutations=3, seed=5)(scores, dataset)
            np.testing.assert_array_equal(shared(scores, dataset)[0], fresh[0])

    results = lgb.cv({"objective": shared, "metric": "ndcg", "eval_at": [5], **LGB_PARAMS},
                     lgb.Dataset(X, labels, group=sizes), num_boost_round=5, folds=query_folds(sizes, nfold=3))
    assert len(results["valid ndcg@5-mean"]) == 5
    assert 0.0 < results["valid ndcg@5-mean"][-1] <= 1.0


@pytest.mark.engine
def test_every_objective_trains_xgboost_and_improves_ndcg(ranking_arrays, objective):
    X, labels, sizes, offsets = ranking_arrays
    matrix = xgb.DMatrix(X, labels)
    matrix.set_group(sizes)
    booster = xgb.train({"tree_method": "hist", "max_depth": 3}, matrix, num_boost_round=10, obj=objective)
    scores = booster.predict(matrix, output_margin=True)
    assert metrics.ndcg(scores, labels, offsets=offsets) > metrics.ndcg(np.zeros(len(labels)), labels,
                                                                        offsets=offsets) + 0.1


@pytest.mark.parametrize("cls", list(OBJECTIVES.values()), ids=lambda cls: cls.__name__)
def test_a_class_where_an_instance_belongs_says_so(cls):
    """``lgb.train({"objective": PLRank}, ...)`` called the class with (scores, data) and answered with a constructor
    TypeError about positional arguments (issue 40 item 12)."""
    name = cls.__name__
    with pytest.raises(TypeError, match=rf"^{name} is a class, and the engine called it to train: pass an instance, "
                                        rf"{name}\(\)"):
        cls(np.zeros(4), object())  # as LightGBM and XGBoost call an objective: (scores, data)
    with pytest.raises(TypeError, match=rf"^{name} takes its parameters by name"):
        cls(5)
    assert cls() == cls(**{})  # instances as before


@pytest.mark.engine
def test_the_engines_and_the_ranker_say_pass_an_instance():
    from plboost import Ranker, make_synthetic
    from plboost.engines import train

    data = make_synthetic(n_queries=10, n_features=3, seed=0)
    with pytest.raises(TypeError, match=r"PLRank is a class, and the engine called it to train"):
        lgb.train({"objective": PLRank, "verbosity": -1}, data.to_lightgbm(), 1)
    with pytest.raises(TypeError, match=r"^PLRank is a class: pass an instance, PLRank\(\)$"):
        train("lightgbm", PLRank, data, rounds=1)
    with pytest.raises(TypeError, match=r"^PLRank is a class: pass an instance, PLRank\(\)$"):
        Ranker(PLRank, n_estimators=1).fit(data.X, data.labels, group=data.group_sizes)


@pytest.mark.compiled_only("counts compiled specialisations")
def test_read_only_scores_and_labels_give_the_same_gradients_and_compile_nothing_more():
    """pandas 3's ``Series.to_numpy()`` is read-only; Numba would compile an objective's kernels again for it."""
    import gc

    from numba.core.registry import CPUDispatcher

    rng = np.random.default_rng(8)
    scores, labels, offsets = rng.normal(size=60), rng.integers(0, 4, size=60).astype(float), np.array([0, 20, 45, 60])
    frozen_scores, frozen_labels = scores.copy(), labels.copy()
    frozen_scores.flags.writeable = frozen_labels.flags.writeable = False
    expected = {name: get_objective(name).gradients(scores, labels, offsets) for name in OBJECTIVES}
    # every kernel exists once each objective has run; one scan of the heap (a second per scan in a worker of the
    # full suite) finds their dispatchers
    dispatchers = [o for o in gc.get_objects() if isinstance(o, CPUDispatcher)]

    def specialisations():
        return sum(len(dispatcher.signatures) for dispatcher in dispatchers)

    for name in OBJECTIVES:
        compiled = specialisations()
        got = get_objective(name).gradients(frozen_scores, frozen_labels, offsets)
        assert specialisations() == compiled, name
        for a, b in zip(got, expected[name], strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", [cls for cls in OBJECTIVES.values() if cls._presets], ids=lambda cls: cls.name)
def test_a_preset_fills_exactly_the_arguments_left_unset(cls):
    """One rule for every objective with presets (LambdaLoss, uMart, YetiRank resolved them three ways): an
    argument left unset (None, or its ``_unset`` value) takes the preset's value, and one given, even at another
    preset's value, stays."""
    presets = cls._presets
    for preset, values in presets.items():
        made = cls(preset=preset)
        assert {name: getattr(made, name) for name in values} == values
        for other in presets.values():
            for name, value in other.items():
                if value != values[name] and value != cls._unset.get(name):
                    kept = cls(preset=preset, **{name: value})
                    assert getattr(kept, name) == value
                    assert all(getattr(kept, n) == v for n, v in values.items() if n != name)
