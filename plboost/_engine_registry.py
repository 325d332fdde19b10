"""The engines plboost trains with, one object each: the one module that knows them.

An :class:`Engine` holds what the rest of plboost would otherwise decide by the engine's name: its name and
label, its built-in ranking objectives, how to tell its dataset (``lgb.Dataset``, ``xgb.DMatrix``) and read
labels, query boundaries and weights from it, how to predict with and save a booster, the parameter names
that mean what plboost sets itself, and the module that trains with it (:attr:`Engine.adapter`, a module of
:mod:`plboost.engines` with ``train``, ``fit_dask`` and ``load_booster``). :data:`ENGINES` registers them by
name, as :data:`plboost.objectives.OBJECTIVES` registers the objectives; a third engine is one more
:class:`Engine` subclass and adapter module, and its entry in the ``registry(...)`` line below.

This module imports nothing of plboost but :mod:`plboost._queries`, :mod:`plboost._writing`,
:mod:`plboost._extras` and :mod:`plboost.errors`, and an engine's library only when a method needs it (CatBoost,
an optional one, is then one line saying how to install it), so that the objectives (which recognise the engine
calling them) and the engines' modules (which import the objectives) can both import it.

>>> from plboost._engine_registry import ENGINES, get_engine
>>> sorted(ENGINES)
['catboost', 'lightgbm', 'xgboost']
>>> get_engine("LightGBM")
Traceback (most recent call last):
ValueError: unknown engine 'LightGBM'; choose one of lightgbm, xgboost, catboost
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import importlib.util
import json
import re
import sys
import urllib.parse
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from ._extras import MissingExtra
from .errors import InputTypeError
from ._queries import offsets_from_boundaries, offsets_from_sizes
from ._writing import write_atomic, write_text

#: the number of leaves plboost's settings default to (:class:`plboost.engines.TrainingSettings`), which CatBoost's
#: symmetric and depth-wise trees leave aside
DEFAULT_NUM_LEAVES = 31


class Engine:
    """One gradient-boosting library plboost trains with (subclass it, and register an instance)."""

    #: the name ``--engine``, result files and :data:`ENGINES` use; also the library's import name
    name: ClassVar[str]
    #: the name messages use
    label: ClassVar[str]
    #: the engine's own ranking objectives that plboost can train and compare against
    builtin_objectives: ClassVar[tuple[str, ...]]
    #: the module of :mod:`plboost.engines` that trains with it: ``train(objective, train_data, valid_data,
    #: **options)``, ``fit_dask(...)`` and ``load_booster(path, kind, data)``
    adapter: ClassVar[str]
    #: the class of the library whose instances the engine hands a custom objective
    dataset_class: ClassVar[str]
    #: that class as messages name it
    dataset_label: ClassVar[str]
    #: how to give a dataset of the engine its queries (for messages)
    group_hint: ClassVar[str]
    #: the model file formats it loads (as :func:`plboost.engines._model_files.read_model_file` names them)
    model_formats: ClassVar[tuple[str, ...]]
    # capabilities: what the engine can do with plboost. Each engine declares every one in its own class body
    # (tests/engines/test_registry.py checks), and code asks them, never the engine's name.
    #: whether it trains with plboost's objectives (custom gradients and hessians); without, it is a comparator only
    custom_objectives: ClassVar[bool]
    #: whether trees can have their leaves rewritten (``leaf_values="exact"``)
    exact_leaves: ClassVar[bool]
    #: whether it trains on a Dask cluster (its adapter's ``fit_dask``)
    dask: ClassVar[bool]
    #: whether it trains on :class:`~plboost.data.OutOfCoreData` (features on disk, read in batches)
    out_of_core: ClassVar[bool]
    #: the extra of plboost that installs an optional engine (``pip install 'plboost[<extra>]'``); None: a dependency
    extra: ClassVar[str | None] = None
    #: whether parameters the library does not know are refused (it would only warn)
    refuses_unknown_params: ClassVar[bool] = False
    #: what plboost sets itself, by the engine's canonical parameter name -> what it is
    #: ("objective", "metric", "eval_at", "rounds", "early_stopping")
    set_by_plboost: ClassVar[Mapping[str, str]]
    #: parameters whose other values train no trees, which plboost's models are (predictions, leaves, model files),
    #: by name -> the values plboost takes
    tree_values: ClassVar[Mapping[str, tuple[str, ...]]] = MappingProxyType({})
    #: the settings plboost gives the engine so that a run does not depend on timing (a user's own value of one
    #: replaces it); part of a run record's provenance, so a record trained without them is not reused
    reproducible_settings: ClassVar[Mapping[str, object]] = MappingProxyType({})
    #: the run settings a configuration records, by the engine's parameter name -> what it is
    #: ("learning_rate", "leaves", "seed")
    run_settings: ClassVar[Mapping[str, str]]
    #: the parameters of its built-in objectives (plboost's adapters never set them): given at the engine's
    #: default, one changes nothing, and a configuration's key leaves it out (:meth:`without_defaults`)
    objective_parameters: ClassVar[tuple[str, ...]] = ()
    #: the parameters the engine reads only where another setting turns on what they tune (LightGBM's Parameters
    #: page: "used only in dart", ...), by canonical name -> (the engine's default, why it is ignored otherwise, a
    #: test of the run's parameters under canonical names that says it is read): given at another value and not
    #: read, one would change nothing while the run says it was trained with it
    read_only_if: ClassVar[Mapping[str, tuple]] = MappingProxyType({})
    #: the parameters that only the engine's built-in objectives read (no tree, no metric): a plboost objective
    #: trains unchanged with them
    objective_only_parameters: ClassVar[tuple[str, ...]] = ()
    #: the tree parameters ``compare --tune`` searches, as :class:`plboost.tuning.Dimension` fields by name
    search_space: ClassVar[Mapping[str, dict]] = MappingProxyType({})
    #: the searched parameters of its built-in objectives, by objective (none: nothing to search)
    builtin_search_spaces: ClassVar[Mapping[str, Mapping[str, dict]]] = MappingProxyType({})

    def __repr__(self) -> str:
        return f"<engine {self.name}>"

    def library(self):
        """The engine's library, imported."""
        return importlib.import_module(self.name)

    @property
    def version(self) -> str | None:
        return self.library().__version__

    @property
    def installed(self) -> bool:
        """Whether the engine's library can be imported (found without importing it)."""
        return importlib.util.find_spec(self.name) is not None

    @property
    def error_type(self) -> type[Exception]:
        """The exception class the library raises for its own errors."""
        raise NotImplementedError

    # datasets -----------------------------------------------------------------------------------------
    def owns(self, data) -> bool:
        """Whether ``data`` is a dataset of this engine (without importing the library if it is not loaded)."""
        library = sys.modules.get(self.name)
        return library is not None and isinstance(data, getattr(library, self.dataset_class))

    def query_fields(self, dataset) -> tuple[np.ndarray, Any, Any]:
        """Labels, query boundaries (offsets from 0; empty or None without queries) and weights (empty or None
        without) of a dataset of the engine, as the engine holds them."""
        raise NotImplementedError

    def document_weights(self, weights, offsets) -> np.ndarray:
        """One weight per document from the weights :meth:`query_fields` read."""
        return weights

    def subset_of(self, dataset):
        """``(used_indices, the reference's query boundaries)`` of a dataset that is a subset of rows of another
        one, else None."""
        return None

    def query_offsets(self, data) -> np.ndarray:
        """Query offsets (``n_queries + 1`` entries from 0) of a dataset of the engine; ValueError without."""
        raise NotImplementedError

    # boosters -----------------------------------------------------------------------------------------
    def predict(self, booster, X, trees: int | None = None) -> np.ndarray:
        """Raw scores of the first ``trees`` rounds (all with None)."""
        raise NotImplementedError

    def save(self, booster, path, trees: int) -> None:
        """Save the first ``trees`` rounds in the engine's own format."""
        raise NotImplementedError

    def n_features(self, booster) -> int:
        raise NotImplementedError

    def feature_names(self, booster) -> tuple[str, ...] | None:
        """The table columns the booster was trained on, in the order of its features (:func:`column_names` of
        the names it stores); None for a booster whose features are numbered (trained on SVMlight data or an
        array), which holds the engine's default names."""
        raise NotImplementedError

    def trained_rounds(self, booster) -> int:
        raise NotImplementedError

    def feature_importances(self, booster, kind: str, trees: int | None = None) -> np.ndarray:
        """One value per feature over the first ``trees`` rounds (all with None): ``kind="split"``, the number
        of splits on it; ``"gain"``, the total gain of those splits. Unnormalised, as LightGBM reports them."""
        raise NotImplementedError

    # parameters ---------------------------------------------------------------------------------------
    def canonical_names(self) -> dict:
        """Every parameter name the engine knows -> its canonical name (empty: no alias table)."""
        return {}

    def without_defaults(self, objective: str, params: dict) -> dict:
        """``params`` (canonical names) less the :attr:`objective_parameters` given at the value the engine's
        built-in ``objective`` has by default (read from the engine itself, once per process)."""
        if objective not in self.builtin_objectives:
            return dict(params)
        defaults = _objective_defaults(self.name, objective)
        return {name: value for name, value in params.items()
                if not (name in defaults and _is_engine_text(value, defaults[name]))}

    def _parameter_texts(self, objective: str) -> dict[str, str]:
        """Every parameter of a fresh booster with the built-in ``objective``, as the engine writes it."""
        raise NotImplementedError

    def completed_params(self, params: dict) -> dict:
        """``params`` with what the engine needs besides them to do what they say (a copy)."""
        return dict(params)

    def ignored_params(self, params: dict, *, plboost_objective: str | None) -> dict[str, str]:
        """Those of ``params`` (the user's names; all of a run's engine parameters) that the engine would ignore as
        given, by name -> why: one of :attr:`read_only_if` at another value than the engine's default, where the
        setting it needs is off, and, where the run trains the plboost objective named ``plboost_objective``, one
        of :attr:`objective_only_parameters`."""
        canonical = self.canonical_names()
        run = {canonical.get(name, name): value for name, value in params.items()}
        ignored = {}
        for name, value in params.items():
            base = canonical.get(name, name)
            if base in self.read_only_if:
                default, reason, is_read = self.read_only_if[base]
                if not _is_engine_text(value, str(default)) and not is_read(run):
                    ignored[name] = reason
            elif plboost_objective is not None and base in self.objective_only_parameters:
                ignored[name] = (f"only {self.label}'s own objectives read it, not plboost's {plboost_objective} "
                                 "(set the objective's own parameters with --param)")
        return ignored

    def is_plboost_ndcg(self, values: list, eval_at: int | None) -> bool:
        """Whether the metric parameter's ``values`` name the NDCG plboost sets anyway."""
        return False

    def check_tree_settings(self, num_leaves: int, params: dict) -> None:
        """Refuse a ``num_leaves`` the engine's trees would not take with ``params`` (the engine's parameters,
        the user's names) instead of ignoring it without a word (the leaf-wise engines take any)."""

    def metric_gain_parameters(self, params: dict) -> dict:
        """Those of ``params`` (the user's names) that give the engine's validation NDCG other gains than
        plboost's 2^y - 1 (``{}``: none). The watched NDCG is then plboost's own (or the parameter is refused
        where the engine has no way to watch another metric: see ``set_by_plboost``'s "metric_gain")."""
        return {}


def _text(params: dict, name: str, default: str) -> str:
    return str(params.get(name, default)).strip().lower()


def _below_one(params: dict, name: str) -> bool:
    """Whether LightGBM's fraction ``name`` is below 1 in ``params`` (canonical names); a value LightGBM will refuse
    counts as below, so that LightGBM's own message is the one shown."""
    try:
        return float(params.get(name, 1.0)) < 1.0
    except (TypeError, ValueError):
        return True


def _lightgbm_goss(params: dict) -> bool:
    return _text(params, "data_sample_strategy", "bagging") == "goss" or _text(params, "boosting", "gbdt") == "goss"


def _lightgbm_bagging_freq(params: dict) -> bool:
    try:
        return float(params.get("bagging_freq", 0)) > 0
    except (TypeError, ValueError):
        return True


def _lightgbm_bags(params: dict) -> bool:
    """Whether LightGBM bags: ``bagging_freq > 0`` and ``bagging_fraction < 1`` (its ``BaggingSampleStrategy``; the
    positive and negative fractions are its binary objective's, and with GOSS LightGBM refuses bagging itself)."""
    return _lightgbm_bagging_freq(params) and _below_one(params, "bagging_fraction")


def _lightgbm_true(name: str):
    return lambda params: _text(params, name, "false") in ("true", "+", "1")


_DART = "LightGBM reads it with boosting=dart only"
_GOSS = "LightGBM reads it with data_sample_strategy=goss only"


class LightGBM(Engine):
    name = "lightgbm"
    label = "LightGBM"
    builtin_objectives = ("lambdarank", "rank_xendcg", "regression")
    adapter = "plboost.engines.lightgbm"
    dataset_class = "Dataset"
    dataset_label = "lgb.Dataset"
    group_hint = "build the lgb.Dataset with group=<query sizes>"
    model_formats = ("text",)
    custom_objectives = True
    exact_leaves = True
    dask = True
    out_of_core = True
    refuses_unknown_params = True
    set_by_plboost = MappingProxyType({"objective": "objective", "metric": "metric", "eval_at": "eval_at",
                                       "num_iterations": "rounds", "early_stopping_round": "early_stopping"})
    run_settings = MappingProxyType({"learning_rate": "learning_rate", "num_leaves": "leaves", "seed": "seed"})
    # with force_col_wise and force_row_wise both false LightGBM builds histograms both ways, times them and keeps the
    # faster (Dataset::TestMultiThreadingMethod), and the two sum gradients in different orders; without
    # deterministic it sums each leaf's gradients and hessians in OpenMP reductions, added in the order the threads
    # finish
    reproducible_settings = MappingProxyType({"force_col_wise": True, "deterministic": True})
    objective_parameters = ("lambdarank_truncation_level", "lambdarank_norm", "label_gain",
                            "lambdarank_position_bias_regularization", "objective_seed")
    objective_only_parameters = ("lambdarank_truncation_level", "lambdarank_norm",
                                 "lambdarank_position_bias_regularization", "objective_seed", "sigmoid")
    # from LightGBM's Parameters page ("used only in dart", ...) and its sample strategies (src/boosting/bagging.hpp)
    read_only_if = MappingProxyType({
        "bagging_fraction": (1.0, "LightGBM bags only with bagging_freq > 0 (bagging_freq=1 bags every round)",
                             _lightgbm_bagging_freq),
        "bagging_freq": (0, "LightGBM bags only with bagging_fraction < 1", _lightgbm_bags),
        "bagging_seed": (3, "it seeds bagging (bagging_fraction < 1 with bagging_freq > 0) and GOSS, both off",
                         lambda params: _lightgbm_bags(params) or _lightgbm_goss(params)),
        "pos_bagging_fraction": (1.0, "LightGBM reads it for its binary objective only", lambda params: False),
        "neg_bagging_fraction": (1.0, "LightGBM reads it for its binary objective only", lambda params: False),
        "top_rate": (0.2, _GOSS, _lightgbm_goss), "other_rate": (0.1, _GOSS, _lightgbm_goss),
        "drop_rate": (0.1, _DART, lambda params: _text(params, "boosting", "gbdt") == "dart"),
        "max_drop": (50, _DART, lambda params: _text(params, "boosting", "gbdt") == "dart"),
        "skip_drop": (0.5, _DART, lambda params: _text(params, "boosting", "gbdt") == "dart"),
        "xgboost_dart_mode": (False, _DART, lambda params: _text(params, "boosting", "gbdt") == "dart"),
        "uniform_drop": (False, _DART, lambda params: _text(params, "boosting", "gbdt") == "dart"),
        "drop_seed": (4, _DART, lambda params: _text(params, "boosting", "gbdt") == "dart"),
        "extra_seed": (6, "it seeds extra_trees, which is off", _lightgbm_true("extra_trees")),
        "linear_lambda": (0.0, "LightGBM reads it with linear_tree=true only", _lightgbm_true("linear_tree")),
        "feature_fraction_seed": (2, "it seeds feature_fraction < 1 (or feature_fraction_bynode < 1), which is off",
                                  lambda params: _below_one(params, "feature_fraction")
                                  or _below_one(params, "feature_fraction_bynode"))})
    search_space = MappingProxyType({
        "learning_rate": {"low": 0.01, "high": 0.3, "log": True, "default": 0.1},
        "num_leaves": {"low": 7, "high": 255, "log": True, "default": 31},
        "min_data_in_leaf": {"low": 1, "high": 200, "log": True, "default": 20},
        "feature_fraction": {"low": 0.4, "high": 1.0, "default": 1.0},
        # exact leaves (plboost.engines.exact_leaves) refuse bagging: a leaf's Newton step is over all documents
        "bagging_fraction": {"low": 0.4, "high": 1.0, "default": 1.0, "only_if": ("leaf_values", "diagonal")},
        # its default 0 is 1e-8 in the search
        "lambda_l2": {"low": 1e-8, "high": 10.0, "log": True, "default": 1e-8},
        # random split thresholds: on LightGBM's example they carried over most of CatBoost's lead (docs/quality.md, 6)
        "extra_trees": {"choices": (False, True), "default": False}})
    builtin_search_spaces = MappingProxyType({
        "lambdarank": {"lambdarank_truncation_level": {"low": 5, "high": 60, "default": 30}}})

    def completed_params(self, params):
        params = dict(params)
        if _below_one(params, "bagging_fraction"):
            params.setdefault("bagging_freq", 1)  # LightGBM bags only with bagging_freq > 0
        return params
    #: metric names that are LightGBM's NDCG (a metric= engine parameter naming it changes nothing)
    NDCG_NAMES = frozenset({"ndcg", "lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart", "xendcg_mart"})

    @property
    def error_type(self):
        return self.library().basic.LightGBMError

    def query_fields(self, dataset):
        return dataset.get_label(), dataset.get_field("group"), dataset.get_weight()

    def subset_of(self, dataset):
        used = getattr(dataset, "used_indices", None)
        reference = getattr(dataset, "reference", None)
        if used is None or reference is None:
            return None
        return used, reference.get_field("group")

    def query_offsets(self, data):
        try:
            sizes = data.get_group()
        except Exception as error:  # LightGBM raises a bare Exception for fields of an unconstructed Dataset
            raise ValueError("data: this lgb.Dataset has no group= and is not constructed; build it with group=<query "
                             "sizes>, or call .construct() first if its groups come from a file") from error
        if sizes is None or len(sizes) == 0:
            raise ValueError("data: this lgb.Dataset has no query groups; build it with group=<query sizes>")
        constructed = getattr(data, "_handle", None) is not None
        return offsets_from_sizes(np.asarray(sizes), data.num_data() if constructed else None, name="group")

    def predict(self, booster, X, trees=None):
        return booster.predict(X, num_iteration=trees, raw_score=True)

    def save(self, booster, path, trees):
        # the text written from Python: an error (a full disk) is an OSError naming the file, where LightGBM's own
        # writer echoes "[LightGBM] [Fatal]" and raises its own error
        write_text(path, booster.model_to_string(num_iteration=trees))

    def n_features(self, booster):
        return booster.num_feature()

    def feature_names(self, booster):
        names = booster.feature_name()
        return None if names == [f"Column_{i}" for i in range(len(names))] else column_names(names)

    def trained_rounds(self, booster):
        return booster.current_iteration()

    def feature_importances(self, booster, kind, trees=None):
        return booster.feature_importance(importance_type=kind, iteration=trees).astype(np.float64)

    def canonical_names(self):
        return _lightgbm_aliases()

    def _parameter_texts(self, objective):
        lgb = self.library()
        tiny = lgb.Dataset(np.arange(8.0).reshape(4, 2), label=[0, 1, 0, 1], group=[2, 2], params={"verbosity": -1})
        text = lgb.Booster({"objective": objective, "verbosity": -1}, train_set=tiny).model_to_string()
        lines = text[text.index("\nparameters:\n"):].splitlines()
        return dict(line[1:-1].split(": ", 1) for line in lines if line.startswith("[") and ": " in line)

    def is_plboost_ndcg(self, values, eval_at):
        return len(values) == 1 and str(values[0]).strip().lower() in self.NDCG_NAMES

    def metric_gain_parameters(self, params):
        canonical = self.canonical_names()
        found = {}
        for name, value in params.items():
            if canonical.get(name, name) != "label_gain":
                continue
            gains = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) \
                else [value]
            try:  # a finite entry is never 2^y - 1 from y = 1024 on, where 2.0 ** y raises OverflowError
                plboost_gains = all(i < 1024 and float(gain) == 2.0 ** i - 1 for i, gain in enumerate(gains))
            except (TypeError, ValueError):
                plboost_gains = False  # LightGBM refuses it anyway
            if not plboost_gains:
                found[name] = value
        return found


@functools.cache
def _lightgbm_aliases() -> dict:
    try:
        from lightgbm.basic import _ConfigAliases

        aliases = _ConfigAliases._get_all_param_aliases()
    except Exception:  # a LightGBM without the list: leave the parameters to LightGBM
        return {}
    names = {name: name for name in aliases}
    for name, others in aliases.items():
        names.update({alias: name for alias in others if alias not in aliases})
    return names


class XGBoost(Engine):
    name = "xgboost"
    label = "XGBoost"
    builtin_objectives = ("rank:ndcg", "rank:pairwise")
    adapter = "plboost.engines.xgboost"
    dataset_class = "DMatrix"
    dataset_label = "xgb.DMatrix"
    group_hint = "build the xgb.DMatrix with qid=... or call set_group(<query sizes>)"
    model_formats = ("json", "ubj")
    custom_objectives = True
    exact_leaves = False
    dask = True
    out_of_core = True
    set_by_plboost = MappingProxyType({"objective": "objective", "eval_metric": "metric", "num_boost_round": "rounds",
                                       "n_estimators": "rounds", "early_stopping_rounds": "early_stopping",
                                       "ndcg_exp_gain": "metric_gain"})
    tree_values = MappingProxyType({"booster": ("gbtree", "dart")})
    run_settings = MappingProxyType({"learning_rate": "learning_rate", "eta": "learning_rate", "max_leaves": "leaves",
                                     "seed": "seed", "random_state": "seed"})
    objective_parameters = ("lambdarank_pair_method", "lambdarank_num_pair_per_sample", "lambdarank_unbiased",
                            "lambdarank_bias_norm", "lambdarank_normalization", "lambdarank_score_normalization",
                            "ndcg_exp_gain")
    objective_only_parameters = objective_parameters[:-1]  # ndcg_exp_gain: its metric's too
    #: XGBoost's aliases, alias -> name (its ``DMLC_DECLARE_ALIAS`` lines: src/tree/param.h, include/xgboost/context.h;
    #: tests/engines/test_parameters.py checks each against XGBoost's configuration)
    ALIASES = MappingProxyType({"eta": "learning_rate", "lambda": "reg_lambda", "alpha": "reg_alpha",
                                "gamma": "min_split_loss", "random_state": "seed", "n_jobs": "nthread"})
    # trees grow leaf-wise here, as LightGBM's do (see plboost.engines.xgboost), so num_leaves is searched too
    search_space = MappingProxyType({
        "learning_rate": {"low": 0.01, "high": 0.3, "log": True, "default": 0.1},
        "num_leaves": {"low": 7, "high": 255, "log": True, "default": 31},
        "min_child_weight": {"low": 1e-3, "high": 10.0, "log": True, "default": 1.0},
        "colsample_bytree": {"low": 0.4, "high": 1.0, "default": 1.0},
        "subsample": {"low": 0.4, "high": 1.0, "default": 1.0},
        "reg_lambda": {"low": 1e-8, "high": 10.0, "log": True, "default": 1.0}})

    @property
    def error_type(self):  # a ValueError whose text ends in a C++ stack trace
        return self.library().core.XGBoostError

    def query_fields(self, dataset):
        return dataset.get_label(), dataset.get_uint_info("group_ptr"), dataset.get_weight()

    def canonical_names(self):
        return {**{name: name for name in self.ALIASES.values()}, **self.ALIASES}

    def document_weights(self, weights, offsets):  # one weight per query
        weights = np.asarray(weights, dtype=np.float32)
        if weights.shape != (offsets.size - 1,):
            per = " (one per document)" if weights.size == offsets[-1] else ""
            raise ValueError(f"xgb.DMatrix: XGBoost's ranking weights are one per query (group), but it holds "
                             f"{weights.size} weights{per} for {offsets.size - 1} queries of {offsets[-1]} documents; "
                             "set_weight(<one weight per query>)")
        return np.repeat(weights, np.diff(offsets))

    def query_offsets(self, data):
        boundaries = data.get_uint_info("group_ptr")
        if len(boundaries) == 0:
            raise ValueError("data: this xgb.DMatrix has no query groups; build it with qid=... or call "
                             "set_group(<query sizes>)")
        return offsets_from_boundaries(boundaries, data.num_row(), name="group_ptr")

    def predict(self, booster, X, trees=None):
        xgb = self.library()
        if isinstance(X, np.ndarray):
            # from the array itself: a DMatrix would copy it (8 bytes per cell); the same scores, bit for bit
            return booster.inplace_predict(X, iteration_range=(0, trees or 0), predict_type="margin",
                                           missing=np.nan)
        if isinstance(X, xgb.DMatrix):
            return booster.predict(X, output_margin=True, iteration_range=(0, trees or 0))
        # a sparse X has no names to check against the booster's: plboost matches a table's columns by name first
        return booster.predict(xgb.DMatrix(X), output_margin=True, iteration_range=(0, trees or 0),
                               validate_features=False)

    def save(self, booster, path, trees):
        # the bytes XGBoost's save_model writes (JSON for a .json name, any case; UBJSON otherwise), written whole
        raw_format = "json" if str(path).lower().endswith(".json") else "ubj"
        write_atomic(path, lambda handle: handle.write(booster[:trees].save_raw(raw_format)))

    def n_features(self, booster):
        return booster.num_features()

    def feature_names(self, booster):
        return None if booster.feature_names is None else column_names(booster.feature_names)

    def trained_rounds(self, booster):
        return booster.num_boosted_rounds()

    def feature_importances(self, booster, kind, trees=None):
        if trees is not None and trees < booster.num_boosted_rounds():
            booster = booster[:trees]
        scores = booster.get_score(importance_type={"split": "weight", "gain": "total_gain"}[kind])
        names = booster.feature_names or [f"f{i}" for i in range(booster.num_features())]
        return np.array([float(scores.get(name, 0.0)) for name in names])

    def _parameter_texts(self, objective):
        xgb = self.library()
        tiny = xgb.DMatrix(np.arange(8.0).reshape(4, 2), label=[0, 1, 0, 1], qid=[0, 0, 1, 1])
        return _leaf_texts(json.loads(xgb.Booster({"objective": objective}, cache=[tiny]).save_config()))

    def is_plboost_ndcg(self, values, eval_at):
        return eval_at is not None and len(values) == 1 and str(values[0]).strip() == f"ndcg@{eval_at}"

    def metric_gain_parameters(self, params):
        # ndcg_exp_gain=false: linear gains in XGBoost's ndcg metric (and rank:ndcg)
        return {name: value for name, value in params.items()
                if name == "ndcg_exp_gain" and str(value).strip().lower() in ("false", "0", "no")}


class CatBoost(Engine):
    """CatBoost, a comparator: it trains its own ranking losses (YetiRank, LambdaMart, ...), not plboost's objectives.

    An optional dependency (``pip install 'plboost[catboost]'``): nothing here imports it until a run trains or
    predicts with it, and then a missing library is one line saying how to install it."""

    name = "catboost"
    label = "CatBoost"
    builtin_objectives = ("YetiRank", "YetiRankPairwise", "QuerySoftMax", "PairLogit", "PairLogitPairwise",
                          "QueryRMSE", "LambdaMart")
    adapter = "plboost.engines.catboost"
    dataset_class = "Pool"
    dataset_label = "catboost.Pool"
    group_hint = "build the catboost.Pool with group_id=<query of each row>"
    model_formats = ("cbm",)
    custom_objectives = False
    exact_leaves = False
    dask = False
    out_of_core = False
    extra = "catboost"
    set_by_plboost = MappingProxyType({
        "loss_function": "objective", "objective": "objective", "eval_metric": "metric",
        "iterations": "rounds", "num_boost_round": "rounds", "n_estimators": "rounds", "num_trees": "rounds",
        "early_stopping_rounds": "early_stopping", "od_wait": "early_stopping", "od_type": "early_stopping",
        "use_best_model": "early_stopping"})
    run_settings = MappingProxyType({"learning_rate": "learning_rate", "eta": "learning_rate", "max_leaves": "leaves",
                                     "num_leaves": "leaves", "random_seed": "seed", "random_state": "seed"})
    #: the parameters of CatBoost's ranking losses, written ``YetiRank:mode=NDCG;top=10`` by CatBoost and given here
    #: as parameters of the objective (``YetiRank@catboost,mode=NDCG``); CatBoost refuses one its loss does not take
    LOSS_PARAMETERS = ("mode", "permutations", "decay", "top", "dcg_type", "dcg_denominator", "noise", "noise_power",
                       "num_neighbors", "sampling_type", "metric", "sigma", "norm", "type", "denominator", "max_pairs",
                       "beta", "lambda", "use_weights")
    #: besides those, the tree parameters whose default each loss sets (l2_leaf_reg is 3 for PairLogit, 5 for
    #: PairLogitPairwise, 0 for YetiRank and LambdaMart; random_strength 0 for the pairwise losses), and the shape
    #: of the trees, CatBoost's own choice to compare (``YetiRank@catboost,grow_policy=Lossguide``)
    objective_parameters = (*LOSS_PARAMETERS, "grow_policy", "l2_leaf_reg", "random_strength")
    #: the tree shapes of ``grow_policy``; num_leaves (CatBoost's max_leaves) shapes Lossguide trees only
    GROW_POLICIES = ("SymmetricTree", "Depthwise", "Lossguide")
    search_space = MappingProxyType({
        "learning_rate": {"low": 0.01, "high": 0.3, "log": True, "default": 0.1},
        # SymmetricTree (the default: None) and Depthwise trees are `depth` deep; Lossguide ones have num_leaves
        "depth": {"low": 4, "high": 10, "default": 6, "only_if": ("grow_policy", (None, "SymmetricTree", "Depthwise"))},
        "num_leaves": {"low": 15, "high": 64, "log": True, "default": 31, "only_if": ("grow_policy", "Lossguide")},
        # searched only with the Bayesian bootstrap it is for: given alone, it makes CatBoost switch to that one
        "bagging_temperature": {"low": 0.0, "high": 1.0, "default": 1.0, "only_if": ("bootstrap_type", "Bayesian")}})
    # each loss's default is trial 0's; a default of 0 is 1e-3 in the search
    builtin_search_spaces = MappingProxyType({loss: {
        "l2_leaf_reg": {"low": 1e-3, "high": 30.0, "log": True,
                        "default": {"PairLogit": 3.0, "PairLogitPairwise": 5.0, "QuerySoftMax": 3.0,
                                    "QueryRMSE": 3.0}.get(loss, 1e-3)},
        "random_strength": {"low": 0.0, "high": 10.0, "default": 0.0 if loss.endswith("Pairwise") else 1.0}}
        for loss in builtin_objectives})

    def library(self):
        try:
            return importlib.import_module(self.name)
        except ImportError as error:
            raise MissingExtra(f"{self.label} is not installed: pip install 'plboost[{self.extra}]'") from error

    @property
    def version(self) -> str | None:
        """The installed version, read without importing CatBoost (a second's import); None if not installed."""
        try:
            return importlib.metadata.version(self.name)
        except importlib.metadata.PackageNotFoundError:
            return None

    @property
    def error_type(self):
        return self.library().CatBoostError

    def query_fields(self, dataset):
        raise ValueError(f"plboost reads no {self.dataset_label}: {self.label} trains its own losses only")

    def query_offsets(self, data):
        raise ValueError(f"plboost reads no {self.dataset_label}: {self.label} trains its own losses only")

    def predict(self, booster, X, trees=None):
        return booster.predict(X, prediction_type="RawFormulaVal", ntree_end=trees or 0)

    def save(self, booster, path, trees):
        # CatBoost writes its .cbm format to a file name only: written here to a temporary directory, then whole
        import tempfile
        from pathlib import Path

        if trees and trees < booster.tree_count_:
            booster = booster.copy()
            booster.shrink(ntree_end=trees)
        with tempfile.TemporaryDirectory(prefix="plboost-catboost-") as folder:
            written = Path(folder) / "model.cbm"
            booster.save_model(str(written), format="cbm")
            write_atomic(path, lambda handle: handle.write(written.read_bytes()))

    def n_features(self, booster):
        return len(booster.feature_names_)

    def feature_names(self, booster):  # CatBoost keeps any name as it is
        names = list(booster.feature_names_)
        return None if names == [str(i) for i in range(len(names))] else tuple(names)

    def trained_rounds(self, booster):
        return booster.tree_count_

    def feature_importances(self, booster, kind, trees=None):
        if kind != "gain":
            raise ValueError(f"{self.label} counts no splits per feature; use importance_type='gain' (its "
                             "PredictionValuesChange)")
        if trees is not None and trees < booster.tree_count_:
            booster = booster.copy()
            booster.shrink(ntree_end=trees)
        return np.asarray(booster.get_feature_importance(type="PredictionValuesChange"), dtype=np.float64)

    def _parameter_texts(self, objective):
        library = self.library()
        tiny = library.Pool(np.arange(8.0).reshape(4, 2), label=[0, 1, 0, 1], group_id=[0, 0, 1, 1])
        model = library.CatBoost({"loss_function": objective, "iterations": 1, "allow_writing_files": False,
                                  "verbose": False, "thread_count": 1})
        model.fit(tiny)
        return {name: str(value) for name, value in model.get_all_params().items() if not isinstance(value, dict)}

    def is_plboost_ndcg(self, values, eval_at):
        return eval_at is not None and len(values) == 1 and str(values[0]).strip() == self.ndcg_metric(eval_at)

    def check_tree_settings(self, num_leaves, params):
        policy = str(params.get("grow_policy", "SymmetricTree"))
        if policy not in self.GROW_POLICIES:
            raise ValueError(f"parameter grow_policy={policy!r}: CatBoost's are {', '.join(self.GROW_POLICIES)}")
        if policy != "Lossguide" and num_leaves != DEFAULT_NUM_LEAVES:
            raise ValueError(f"num_leaves={num_leaves} shapes CatBoost's trees with grow_policy=Lossguide only (its "
                             f"max_leaves); its {policy} trees are depth={params.get('depth', 6)} deep: give "
                             f"grow_policy=Lossguide, or leave num_leaves at {DEFAULT_NUM_LEAVES} (set depth instead)")

    @staticmethod
    def ndcg_metric(eval_at: int) -> str:
        """CatBoost's name of plboost's NDCG@eval_at: exponential gains (CatBoost's default is linear)."""
        return f"NDCG:top={eval_at};type=Exp"


#: what a feature name stored in a LightGBM or XGBoost model cannot hold as it is: white space (LightGBM's model
#: file separates the names by spaces, and its Dataset turns a space into "_"), LightGBM's "special JSON characters"
#: and XGBoost's "[", "]" and "<" (both refuse them), other control characters, and a "%" that would read as the
#: start of an escape
_UNSTORABLE = re.compile(r'[\x00-\x20\x7f",:\[\]{}<]|%(?=[0-9A-Fa-f]{2})')


def stored_names(names) -> list[str]:
    """Table columns as LightGBM and XGBoost can store them as feature names: each character they cannot hold
    (:data:`_UNSTORABLE`) written ``%XX``, its code in hexadecimal (RFC 3986's percent-encoding), so that
    :func:`column_names` gives the columns back exactly; other names are stored as they are. An empty name,
    which LightGBM's model file cannot hold, is refused.

    >>> stored_names(["bm25", "tf idf", "x[1]", "ctr%"])
    ['bm25', 'tf%20idf', 'x%5B1%5D', 'ctr%']
    >>> column_names(stored_names(["tf idf", "a%20b"]))
    ('tf idf', 'a%20b')
    """
    names = [str(name) for name in names]
    if "" in names:
        raise ValueError(f"feature column {names.index('')} has an empty name, which a model file cannot hold; "
                         "name it")
    return [_UNSTORABLE.sub(lambda match: f"%{ord(match.group()):02X}", name) for name in names]


def column_names(stored) -> tuple[str, ...]:
    """The table columns of feature names :func:`stored_names` wrote (``%XX`` read back as the character)."""
    return tuple(urllib.parse.unquote(str(name)) for name in stored)


def _leaf_texts(node: dict, found: dict | None = None) -> dict[str, str]:
    """The ``name: text`` leaves of XGBoost's nested JSON configuration (the first of each name)."""
    found = {} if found is None else found
    for name, value in node.items():
        if isinstance(value, dict):
            _leaf_texts(value, found)
        elif isinstance(value, str):
            found.setdefault(name, value)
    return found


@functools.cache
def _objective_defaults(engine: str, objective: str) -> Mapping[str, str]:
    every = ENGINES[engine]._parameter_texts(objective)
    return MappingProxyType({name: every[name] for name in ENGINES[engine].objective_parameters if name in every})


def _is_engine_text(value, text: str) -> bool:
    """Whether ``value`` is what the engine writes as ``text`` (``1`` for True, ``0,1,3`` for a list, numbers
    compared as numbers)."""
    if isinstance(value, (list, tuple)):
        parts = text.split(",") if text else []
        return len(parts) == len(value) and all(_is_engine_text(v, part) for v, part in zip(value, parts, strict=True))
    if isinstance(value, (bool, np.bool_)):
        value = int(value)
    try:
        return float(value) == float(text)
    except (TypeError, ValueError):
        return str(value).lower() == text.lower()


#: the capabilities every engine declares (see :class:`Engine`)
CAPABILITIES = ("custom_objectives", "exact_leaves", "dask", "out_of_core")


def registry(*engines: Engine) -> Mapping[str, Engine]:
    """Engines by their ``name`` (read-only), refusing a name given twice."""
    by_name: dict[str, Engine] = {}
    for engine in engines:
        undeclared = [name for name in CAPABILITIES if not isinstance(getattr(engine, name, None), bool)]
        if undeclared:
            raise TypeError(f"engine {engine.name!r} does not declare {', '.join(undeclared)} (True or False)")
        if engine.name in by_name:
            raise ValueError(f"two engines are named {engine.name!r}")
        by_name[engine.name] = engine
    return MappingProxyType(by_name)


LIGHTGBM, XGBOOST, CATBOOST = LightGBM(), XGBoost(), CatBoost()
#: the engines by name: ``name in ENGINES`` and iterating give the names, ``ENGINES[name]`` the engine
ENGINES = registry(LIGHTGBM, XGBOOST, CATBOOST)
#: the engine a run trains with unless told otherwise
DEFAULT_ENGINE = LIGHTGBM.name


def get_engine(engine: str | Engine) -> Engine:
    """The engine of that name (an :class:`Engine` is returned as it is); ValueError naming the choices."""
    if isinstance(engine, Engine):
        return engine
    try:
        return ENGINES[engine]
    except (KeyError, TypeError):
        raise ValueError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}") from None


def engine_of(data, default: Any = ...) -> Engine:
    """The engine whose dataset ``data`` is (an ``lgb.Dataset``, an ``xgb.DMatrix``, ...); TypeError naming
    the dataset classes if none, or ``default`` when one is given."""
    for engine in _dataset_engines():
        if engine.owns(data):
            return engine
    if default is not ...:
        return default
    raise InputTypeError(f"expected a dataset of an engine ({dataset_labels(' or ')}), got a {type(data).__name__}")


def dataset_labels(separator: str = ", ") -> str:
    """The engines' dataset classes as messages name them: ``"lgb.Dataset, xgb.DMatrix"``."""
    return separator.join(engine.dataset_label for engine in _dataset_engines())


def _dataset_engines() -> list[Engine]:
    """The engines whose datasets plboost reads: those that call its objectives with them (a comparator's, such as
    a ``catboost.Pool``, holds nothing plboost needs)."""
    return [engine for engine in ENGINES.values() if engine.custom_objectives]


def engine_of_model_format(kind: str) -> Engine:
    """The engine that loads model files of the format ``kind``."""
    return next(engine for engine in ENGINES.values() if kind in engine.model_formats)


__all__ = ["CATBOOST", "DEFAULT_ENGINE", "ENGINES", "LIGHTGBM", "XGBOOST", "CatBoost", "Engine", "LightGBM", "XGBoost",
           "dataset_labels", "engine_of", "engine_of_model_format", "get_engine", "registry"]


#: how a tree's leaf values are computed: by the engine from summed hessians ("diagonal"), or by the objective's
#: exact Newton step ("exact", PLRank's, on the engines below; :mod:`plboost.engines.exact_leaves`)
LEAF_VALUES = ("diagonal", "exact")
#: the engines whose trees can take exact leaf values
EXACT_LEAF_ENGINES = tuple(name for name, engine in ENGINES.items() if engine.exact_leaves)
