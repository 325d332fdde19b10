"""The engine registry (plboost._engine_registry): the engines, looked up by name or recognised by their dataset."""

import lightgbm as lgb
import numpy as np
import pytest
import xgboost as xgb

import plboost.engines
from plboost._engine_registry import ENGINES, Engine, dataset_labels, engine_of, get_engine, registry
from plboost.data import RankingData


def test_the_registry_lists_the_engines_by_name():
    assert list(ENGINES) == ["lightgbm", "xgboost", "catboost"]
    assert all(isinstance(engine, Engine) and engine.name == name for name, engine in ENGINES.items())
    # the public names of plboost.engines are the registry's
    assert plboost.engines.ENGINES is ENGINES
    assert "xgboost" in plboost.engines.ENGINES and "LightGBM" not in plboost.engines.ENGINES
    assert plboost.engines.BUILTIN_OBJECTIVES == {"lightgbm": ("lambdarank", "rank_xendcg", "regression"),
                                                  "xgboost": ("rank:ndcg", "rank:pairwise"),
                                                  "catboost": ("YetiRank", "YetiRankPairwise", "QuerySoftMax",
                                                               "PairLogit", "PairLogitPairwise", "QueryRMSE",
                                                               "LambdaMart")}


def test_the_registry_is_read_only_and_refuses_a_name_given_twice():
    with pytest.raises(TypeError):
        ENGINES["other"] = ENGINES["lightgbm"]
    with pytest.raises(ValueError, match="two engines are named 'lightgbm'"):
        registry(ENGINES["lightgbm"], ENGINES["lightgbm"])


def test_an_engine_is_found_by_its_name():
    assert get_engine("lightgbm").label == "LightGBM"
    assert get_engine("xgboost").label == "XGBoost"
    assert get_engine("lightgbm").error_type is lgb.basic.LightGBMError
    assert get_engine("xgboost").error_type is xgb.core.XGBoostError
    assert get_engine("xgboost").version == xgb.__version__
    assert plboost.engines.DEFAULT_ENGINE == "lightgbm"
    assert get_engine(ENGINES["xgboost"]) is ENGINES["xgboost"]


@pytest.mark.parametrize("name", ["CatBoost", "LightGBM", "", None, ["lightgbm"]])
def test_an_unknown_engine_name_is_refused_naming_the_choices(name):
    with pytest.raises(ValueError, match=r"unknown engine .*; choose one of lightgbm, xgboost, catboost$"):
        get_engine(name)


def _data():
    return RankingData(np.arange(8, dtype=np.float32).reshape(4, 2), np.array([1.0, 0.0, 2.0, 0.0]),
                       np.array([0, 1]), np.array([0, 2, 4]))


def test_a_dataset_of_each_engine_is_recognised():
    data = _data()
    assert engine_of(data.to_lightgbm()) is ENGINES["lightgbm"]
    assert engine_of(data.to_xgboost()) is ENGINES["xgboost"]
    assert engine_of(xgb.QuantileDMatrix(data.X, data.labels, qid=np.array([0, 0, 1, 1]))) is ENGINES["xgboost"]

    class OwnDataset(lgb.Dataset):  # a subclass defined outside the library is recognised too
        pass

    assert engine_of(OwnDataset(data.X, data.labels, group=[2, 2])) is ENGINES["lightgbm"]


@pytest.mark.parametrize("data", [np.zeros((2, 2)), [1, 2], "train.txt", None], ids=type)
def test_something_that_is_no_engine_dataset_is_refused_clearly(data):
    with pytest.raises(TypeError, match=rf"expected a dataset of an engine \(lgb.Dataset or xgb.DMatrix\), got a "
                                        rf"{type(data).__name__}$"):
        engine_of(data)
    assert engine_of(data, default=None) is None
    assert dataset_labels() == "lgb.Dataset, xgb.DMatrix"


def test_each_engine_reads_labels_and_queries_of_its_dataset():
    data = _data()
    for dataset in (data.to_lightgbm().construct(), data.to_xgboost()):
        engine = engine_of(dataset)
        labels, boundaries, _ = engine.query_fields(dataset)
        np.testing.assert_array_equal(labels, data.labels)
        np.testing.assert_array_equal(np.asarray(boundaries), [0, 2, 4])
        np.testing.assert_array_equal(engine.query_offsets(dataset), [0, 2, 4])


def test_only_lightgbm_takes_exact_leaf_values():
    from plboost._engine_registry import EXACT_LEAF_ENGINES
    from plboost.engines.parameters import check_leaf_values

    assert EXACT_LEAF_ENGINES == ("lightgbm",)
    with pytest.raises(ValueError, match="is for LightGBM only .*; XGBoost trains with the diagonal hessians"):
        check_leaf_values("exact", "xgboost", "plrank")


def test_each_engine_trains_through_its_adapter_module():
    for name, engine in ENGINES.items():
        module = plboost.engines.adapter(name)
        assert module.__name__ == engine.adapter
        assert callable(module.train) and callable(module.fit_dask) and callable(module.load_booster)


def test_objective_parameters_at_the_engines_default_are_left_out_and_nothing_else():
    lightgbm, xgboost = get_engine("lightgbm"), get_engine("xgboost")
    given = {"lambdarank_truncation_level": 30, "label_gain": [0, 1, 3], "num_leaves": 31, "lambdarank_norm": 1}
    # num_leaves is no objective parameter (plboost's adapters set tree parameters): kept even at its default
    assert lightgbm.without_defaults("lambdarank", given) == {"label_gain": [0, 1, 3], "num_leaves": 31}
    assert lightgbm.without_defaults("lambdarank", {"lambdarank_truncation_level": 29.5}) == {
        "lambdarank_truncation_level": 29.5}
    assert xgboost.without_defaults("rank:ndcg", {"lambdarank_num_pair_per_sample": 4294967295,
                                                  "lambdarank_unbiased": False}) == {}
    assert lightgbm.without_defaults("plrank", {"lambdarank_norm": True}) == {"lambdarank_norm": True}


def test_every_engine_declares_every_capability_in_its_own_class_and_keeps_the_adapter_contract():
    from plboost._engine_registry import CAPABILITIES
    from plboost.engines import EngineAdapter, adapter

    for engine in ENGINES.values():
        assert set(CAPABILITIES) <= set(vars(type(engine))), f"{engine.name} inherits a capability"
        module = adapter(engine.name)
        assert isinstance(module, EngineAdapter)
        assert module.train is not None and module.fit_dask is not None and module.load_booster is not None

    class Undeclared(type(ENGINES["xgboost"])):
        name = "mute"
        dask = None  # neither True nor False

    with pytest.raises(TypeError, match="engine 'mute' does not declare dask"):
        registry(Undeclared())


@pytest.fixture
def comparator_engine(monkeypatch):
    """A third engine that can do nothing but its own objectives, registered for one test, its adapter a module
    without fit_dask."""
    import sys
    import types

    import plboost._engine_registry as engine_registry

    class Comparator(type(ENGINES["lightgbm"])):
        name, label = "comparator", "Comparator"
        adapter = "comparator_adapter_for_tests"
        custom_objectives = exact_leaves = dask = out_of_core = False

    module = types.ModuleType("comparator_adapter_for_tests")
    module.train = lambda *args, **kwargs: None
    module.load_booster = lambda *args: None
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(engine_registry, "ENGINES", registry(*ENGINES.values(), Comparator()))
    return module


def test_what_an_engine_does_not_declare_is_refused_naming_the_engines_that_can(comparator_engine, tmp_path):
    from plboost.data import make_synthetic
    from plboost.engines import adapter, resolve_objective, train
    from plboost.engines.dask import train_dask
    from plboost.objectives import PLRank

    data = make_synthetic(n_queries=5, n_features=3)
    with pytest.raises(ValueError, match=r"^Comparator cannot do plboost's objectives \(plrank\) in plboost; "
                                         "LightGBM and XGBoost can$"):
        train("comparator", PLRank(), data)
    with pytest.raises(ValueError, match=r"^Comparator cannot do plboost's objectives \(plrank\) in plboost; "
                                         "LightGBM and XGBoost can; Comparator's own: lambdarank, rank_xendcg, "
                                         "regression$"):
        resolve_objective("plrank", "comparator")  # and names the engine's own objectives
    with pytest.raises(ValueError, match="Comparator cannot do training on data read out of core in plboost"):
        train("comparator", "lambdarank", data, out_of_core=True)
    with pytest.raises(ValueError, match="Comparator cannot do training on Dask in plboost"):
        train_dask("comparator", None, "lambdarank", None)
    with pytest.raises(TypeError, match="comparator_adapter_for_tests, the adapter of engine 'comparator', lacks "
                                        "fit_dask"):
        adapter("comparator")


def test_stored_feature_names_give_the_columns_back_exactly():
    """Any column name, spaces, brackets, commas, "%" and escapes that look like ours included, is stored in a form
    both engines take and read back as it was; the stored forms of distinct names are distinct."""
    from plboost._engine_registry import column_names, stored_names

    alphabet = list('ab %25:,[]{}<>"\t\n\x7f_é日0')
    rng = np.random.default_rng(11)
    names = list(dict.fromkeys("".join(rng.choice(alphabet, size=rng.integers(1, 7))) for _ in range(400)))
    names += ["%41", "%%41", "%4", "ctr%", "x%2"]
    stored = stored_names(names)
    assert column_names(stored) == tuple(names)
    assert len(set(stored)) == len(names)
    assert not any(character in name for name in stored for character in ' \t\n",:[]{}<')
    assert stored_names(["bm25", "tf_idf", "ctr%"]) == ["bm25", "tf_idf", "ctr%"]  # nothing changed needlessly
    with pytest.raises(ValueError, match=r"feature column 1 has an empty name, which a model file cannot hold"):
        stored_names(["a", ""])
