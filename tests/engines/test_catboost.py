"""CatBoost as a comparator engine (plboost.engines.catboost): its own ranking losses, trained, saved, compared and
tuned as the other engines' are; plboost's objectives refused; a missing library one line."""

import os
import sys

import numpy as np
import pytest

from plboost import metrics
from plboost.data import make_synthetic
from plboost.engines import load_model, resolve_objective, train
from plboost.objectives import PLRank

catboost = pytest.importorskip("catboost")

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def small():
    """Training and validation data small enough for a few rounds in well under a second."""
    return (make_synthetic(n_queries=60, n_features=5, docs_per_query=(5, 20), seed=0),
            make_synthetic(n_queries=30, n_features=5, docs_per_query=(5, 20), seed=1))


@pytest.fixture(autouse=True)
def _in_tmp_path(tmp_path, monkeypatch):
    """Every test runs in an empty directory, which must stay without CatBoost's catboost_info."""
    monkeypatch.chdir(tmp_path)
    yield
    assert not (tmp_path / "catboost_info").exists()


@pytest.mark.parametrize("loss", ["YetiRank", "LambdaMart"])
def test_a_catboost_loss_trains_and_predicts_as_catboost_does(small, loss):
    train_data, valid_data = small
    model = train("catboost", loss, train_data, valid_data, rounds=8)
    assert (model.engine, model.objective, model.rounds, model.best_iteration) == ("catboost", loss, 8, None)
    assert len(model.valid_history) == 8 and model.trees_used == 8
    # the recorded parameters are CatBoost's resolved ones, the validation metric plboost's NDCG@10
    assert model.engine_params["loss_function"] == loss
    assert model.engine_params["eval_metric"] == "NDCG:top=10;type=Exp"
    own = model.booster.predict(valid_data.X, prediction_type="RawFormulaVal")
    np.testing.assert_array_equal(model.predict(valid_data.X), own)
    ndcg = metrics.ndcg(own, valid_data.labels, offsets=valid_data.offsets, k=10)
    # the same NDCG@10 (exponential gains) but for the order of tied scores, which few symmetric trees leave many of
    assert ndcg == pytest.approx(model.valid_history[-1], abs=5e-3)


def test_early_stopping_keeps_the_best_iteration(small):
    train_data, valid_data = small
    model = train("catboost", "YetiRank", train_data, valid_data, rounds=60, early_stopping=3, learning_rate=0.3)
    best = int(np.argmax(model.valid_history)) + 1
    assert model.best_iteration == best == model.trees_used < model.rounds <= 60
    assert model.rounds == len(model.valid_history) == best + 3
    assert model.booster.tree_count_ == best


def test_on_round_sees_every_round_and_an_exception_it_raises_ends_training(small):
    train_data, valid_data = small
    seen = []
    train("catboost", "QueryRMSE", train_data, valid_data, rounds=4, on_round=lambda r, score: seen.append(r))
    assert seen == [1, 2, 3, 4]

    class Pruned(Exception):
        pass

    def prune(round_, score):
        if round_ == 2:
            raise Pruned("below the median")

    with pytest.raises(Pruned, match="below the median"):
        train("catboost", "QueryRMSE", train_data, valid_data, rounds=10, on_round=prune)


def test_lossguide_trees_take_num_leaves_and_other_shapes_refuse_it(small):
    train_data, valid_data = small
    model = train("catboost", "YetiRank", train_data, valid_data, rounds=3, num_leaves=8,
                  engine_params={"grow_policy": "Lossguide"})
    assert model.engine_params["grow_policy"] == "Lossguide" and model.engine_params["max_leaves"] == 8
    depthwise = train("catboost", "YetiRank", train_data, rounds=2, engine_params={"grow_policy": "Depthwise",
                                                                                   "depth": 3})
    assert depthwise.engine_params["depth"] == 3
    with pytest.raises(ValueError, match=r"^num_leaves=63 shapes CatBoost's trees with grow_policy=Lossguide only"):
        train("catboost", "YetiRank", train_data, rounds=2, num_leaves=63)
    with pytest.raises(ValueError, match=r"grow_policy='Leafwise': CatBoost's are SymmetricTree, Depthwise, Lossguide"):
        train("catboost", "YetiRank", train_data, rounds=2, engine_params={"grow_policy": "Leafwise"})


def test_a_loss_takes_its_parameters_and_catboost_refuses_a_wrong_one_in_one_line(small):
    train_data, _ = small
    model = train("catboost", "LambdaMart", train_data, rounds=2, engine_params={"type": "Exp", "top": 30})
    assert model.engine_params["loss_function"] == "LambdaMart:top=30;type=Exp"
    with pytest.raises(ValueError, match=r"^CatBoost refuses the parameter mode='NDCG': PairLogit metric shouldn't "
                                         r"have mode parameter"):
        train("catboost", "PairLogit", train_data, rounds=2, engine_params={"mode": "NDCG"})
    with pytest.raises(ValueError, match=r"^CatBoost refuses the parameter depth=40: Maximum tree depth is 16$"):
        train("catboost", "YetiRank", train_data, rounds=2, engine_params={"depth": 40})
    with pytest.raises(ValueError, match=r"engine parameter iterations=5 sets the number of rounds; use --rounds"):
        train("catboost", "YetiRank", train_data, rounds=2, engine_params={"iterations": 5})


def test_plboost_objectives_and_unknown_losses_are_refused(small):
    train_data, _ = small
    with pytest.raises(ValueError, match=r"^CatBoost cannot do plboost's objectives \(plrank\) in plboost; "
                                         "LightGBM and XGBoost can$"):
        train("catboost", PLRank(), train_data)
    with pytest.raises(ValueError, match=r"^CatBoost cannot do plboost's objectives \(plrank\) in plboost; "
                                         r"LightGBM and XGBoost can; CatBoost's own: YetiRank, YetiRankPairwise, .*, "
                                         r"LambdaMart$"):
        resolve_objective("plrank", "catboost")
    with pytest.raises(ValueError, match=r"unknown objective 'yetirankpairwise' for catboost \(did you mean "
                                         r"YetiRankPairwise\?\); choose one of YetiRank, YetiRankPairwise, .*, "
                                         r"LambdaMart$"):
        resolve_objective("yetirankpairwise", "catboost")
    with pytest.raises(ValueError, match=r"^CatBoost cannot do plboost's objectives \(yetirank\) in plboost; "
                                         r"LightGBM and XGBoost can; CatBoost's own is YetiRank$"):
        resolve_objective("yetirank", "catboost")
    with pytest.raises(ValueError, match="unknown objective 'lambdarank' for catboost"):
        train("catboost", "lambdarank", train_data, rounds=2)


def test_a_saved_model_loads_back_by_its_content(small, tmp_path):
    train_data, valid_data = small
    model = train("catboost", "YetiRank", train_data, valid_data, rounds=10, early_stopping=2, learning_rate=0.3)
    path = tmp_path / "model.bin"  # the format is told by the content, not the name
    model.save(path)
    assert path.read_bytes()[:4] == b"CBM1"
    loaded = load_model(path)
    assert (loaded.engine, loaded.n_features) == ("catboost", 5)
    np.testing.assert_array_equal(loaded.predict(valid_data.X), model.predict(valid_data.X))
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(ValueError, match=r"model.bin: CatBoost cannot load it: .*verification failed"):
        load_model(path)


def test_without_catboost_every_use_is_one_line_saying_how_to_install_it(small, monkeypatch):
    from plboost._engine_registry import CATBOOST
    from plboost._extras import MissingExtra
    from plboost.experiment import RunSpec

    monkeypatch.setitem(sys.modules, "catboost", None)  # import catboost raises ImportError
    message = r"^CatBoost is not installed: pip install 'plboost\[catboost\]'$"
    with pytest.raises(MissingExtra, match=message):
        train("catboost", "YetiRank", small[0], rounds=2)
    with pytest.raises(MissingExtra, match=message):
        CATBOOST.error_type  # noqa: B018
    spec = RunSpec(objective="YetiRank", engine="catboost")  # checked without CatBoost: it trains nothing yet
    assert spec.label == "YetiRank [catboost]"
    # the other engines do not need it
    assert train("lightgbm", "lambdarank", small[0], rounds=2).rounds == 2


def test_the_command_line_says_in_one_line_that_catboost_is_missing(shared_data, monkeypatch, capsys):
    from plboost.cli import main

    monkeypatch.setitem(sys.modules, "catboost", None)
    fold = shared_data / "MQ2008" / "Fold1"
    for args in (["train", "--train", str(fold / "train.txt.gz"), "--objective", "YetiRank", "--engine", "catboost"],
                 ["compare", str(fold), "--run", "YetiRank@catboost", "--run", "lambdarank"]):
        assert main([*args, "--rounds", "2", "--quiet"]) == 2
        assert capsys.readouterr().err.strip().endswith("error: CatBoost is not installed: pip install "
                                                        "'plboost[catboost]'")


def test_importing_plboost_does_not_import_catboost():
    import subprocess

    code = ("import sys, plboost, plboost.engines, plboost.experiment, plboost.tuning, plboost.cli; "
            "assert 'catboost' not in sys.modules")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_the_search_space_follows_the_tree_shape_and_the_loss():
    from plboost.experiment import RunSpec
    from plboost.tuning import search_space

    def names(spec):
        return {d.name: d.default for d in search_space(spec).dimensions}

    assert names(RunSpec(objective="YetiRank", engine="catboost")) == {
        "learning_rate": 0.1, "depth": 6, "num_leaves": 31, "bagging_temperature": 1.0, "l2_leaf_reg": 1e-3,
        "random_strength": 1.0}
    assert names(RunSpec(objective="PairLogitPairwise", engine="catboost"))["l2_leaf_reg"] == 5.0
    described = search_space(RunSpec(objective="YetiRank", engine="catboost")).describe()
    assert "depth: integer 4-10 (when grow_policy is SymmetricTree or Depthwise)" in described
    assert "num_leaves: log-uniform integer 15-64 (when grow_policy is Lossguide)" in described

    class Trial:  # draws each dimension's default
        def __init__(self, space):
            self.defaults = {d.name: d.default for d in space.dimensions}

        def suggest_int(self, name, *args, **kwargs):
            return self.defaults[name]

        suggest_float = suggest_int

    # grow_policy as a parameter of the loss (compare --run YetiRank@catboost,grow_policy=...) or of the engine
    for objective_params, engine_params, searched, left_out in (
            ({}, {}, "depth", "num_leaves"), ({"grow_policy": "Lossguide"}, {}, "num_leaves", "depth"),
            ({}, {"grow_policy": "Depthwise", "bootstrap_type": "Bayesian"}, "bagging_temperature", "num_leaves")):
        spec = RunSpec(objective="YetiRank", engine="catboost", objective_params=objective_params,
                       engine_params=engine_params)
        space = search_space(spec)
        drawn = space.sample(Trial(space), spec)
        assert searched in drawn and left_out not in drawn
        assert ("bagging_temperature" in drawn) == ("bootstrap_type" in engine_params)


def test_compare_sets_catboost_losses_beside_lightgbm_and_records_them(shared_data, tmp_path, capsys):
    import json

    from plboost.cli import main

    fold = shared_data / "MQ2008" / "Fold1"
    out = tmp_path / "out"
    args = ["compare", str(fold), "--run", "YetiRank@catboost", "--run", "lambdarank", "--rounds", "3", "--quiet",
            "--out", str(out)]
    assert main(args) == 0
    table = capsys.readouterr().out
    assert "| YetiRank [catboost]" in table and "| lambdarank [lightgbm]" in table
    assert "Differences from lambdarank [lightgbm]" in table
    results = json.loads((out / "results.json").read_text())
    assert results["versions"]["catboost"] == catboost.__version__
    records = [json.loads(path.read_text()) for path in (out / "runs").rglob("*.json")]
    catboost_record = next(r for r in records if r["engine_params"].get("loss_function") == "YetiRank")
    assert catboost_record["provenance"]["versions"]["catboost"] == catboost.__version__
    lightgbm_record = next(r for r in records if r is not catboost_record)
    assert "catboost" not in lightgbm_record["provenance"]["versions"]  # installing CatBoost stales no record
    assert main(args) == 0  # a second time: both runs reused from their records
    assert "2 run(s): 2 reused from records, 0 redone, 0 new" in capsys.readouterr().err


def test_a_tuned_catboost_run_searches_catboosts_space(shared_data, tmp_path, capsys):
    import csv
    import json

    from plboost.cli import main

    pytest.importorskip("optuna")
    fold = shared_data / "MQ2008" / "Fold1"
    assert main(["compare", str(fold), "--run", "LambdaMart@catboost,grow_policy=Lossguide", "--rounds", "3",
                 "--tune", "2", "--quiet", "--out", str(tmp_path)]) == 0
    assert "LambdaMart(grow_policy=Lossguide) [catboost]" in capsys.readouterr().out
    trials = list(csv.DictReader((tmp_path / "tuning.csv").read_text().splitlines()))
    assert len(trials) == 2 and all(t["state"] == "complete" for t in trials)
    params = [json.loads(t["params"]) for t in trials]
    assert set(params[0]) == {"learning_rate", "num_leaves", "l2_leaf_reg", "random_strength"}
    assert params[0]["num_leaves"] == 31 and params[0]["l2_leaf_reg"] == 1e-3
    assert params[1] != params[0]


def test_the_command_line_refuses_a_plboost_objective_on_catboost(shared_data, capsys):
    from plboost.cli import main

    fold = shared_data / "MQ2008" / "Fold1"
    assert main(["train", "--train", str(fold / "train.txt.gz"), "--objective", "plrank", "--engine", "catboost",
                 "--rounds", "2", "--quiet"]) == 2
    assert "CatBoost cannot do plboost's objectives (plrank) in plboost; LightGBM and XGBoost can" in \
        capsys.readouterr().err
    assert main(["compare", str(fold), "--run", "YetiRank@catboost", "--run", "lambdarank", "--num-leaves", "63",
                 "--rounds", "2", "--quiet"]) == 2
    assert "num_leaves=63 shapes CatBoost's trees with grow_policy=Lossguide only" in capsys.readouterr().err
