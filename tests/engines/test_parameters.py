"""Engine parameters that would train or report something other than the run says are refused (issue 24, item 1)."""

import pytest
from lightgbm.basic import _ConfigAliases

from plboost.cli import main
from plboost.data import make_synthetic
from plboost.engines import train
from plboost.engines.parameters import check_engine_params
from plboost.experiment import RunSpec, load_config
from plboost.objectives import PLRank

#: every name LightGBM itself knows for its objective parameter (read from LightGBM, not from plboost)
LIGHTGBM_OBJECTIVE_NAMES = sorted(_ConfigAliases.get("objective"))


@pytest.mark.parametrize("name", LIGHTGBM_OBJECTIVE_NAMES)
def test_every_lightgbm_alias_of_the_objective_is_refused_by_name(name):
    assert len(LIGHTGBM_OBJECTIVE_NAMES) >= 5  # objective, app, application, loss, objective_type
    with pytest.raises(ValueError, match=rf"^engine parameter {name}='regression'.* would train another objective "
                                         r"under the name of plrank; choose the objective with --objective"):
        RunSpec(objective="plrank", engine_params={name: "regression"})
    with pytest.raises(ValueError, match=rf"^'{name}' is not a parameter of LightGBM's lambdarank"):
        RunSpec(objective="lambdarank", objective_params={name: "regression"})


def test_xgboost_objective_is_refused():
    with pytest.raises(ValueError, match=r"^engine parameter objective='reg:squarederror' would train another "
                                         r"objective under the name of plrank"):
        RunSpec(objective="plrank", engine="xgboost", engine_params={"objective": "reg:squarederror"})
    with pytest.raises(ValueError, match=r"^'objective' is not a parameter of XGBoost's rank:ndcg"):
        RunSpec(objective="rank:ndcg", engine="xgboost", objective_params={"objective": "rank:pairwise"})


@pytest.mark.parametrize("engine, params, refused", [
    ("lightgbm", {"metric": "map"}, "metric='map' would replace the validation NDCG@10"),
    ("lightgbm", {"metrics": ["ndcg", "map"]}, "metrics=['ndcg', 'map'] (LightGBM's metric) would replace"),
    ("lightgbm", {"ndcg_eval_at": [3]}, "ndcg_eval_at=[3] (LightGBM's eval_at) sets the NDCG cut-off"),
    ("lightgbm", {"num_boost_round": 500}, "num_boost_round=500 (LightGBM's num_iterations) sets the number of rounds"),
    ("lightgbm", {"n_iter_no_change": 5}, "n_iter_no_change=5 (LightGBM's early_stopping_round) sets early stopping"),
    ("lightgbm", {"eta": 0.3}, "eta=0.3 (LightGBM's learning_rate) sets the learning rate, which the run records"),
    ("lightgbm", {"max_leaves": 7}, "max_leaves=7 (LightGBM's num_leaves) sets the number of leaves"),
    ("lightgbm", {"random_state": 3}, "random_state=3 (LightGBM's seed) sets the seed"),
    ("xgboost", {"eval_metric": "map"}, "eval_metric='map' would replace the validation NDCG@10"),
    ("xgboost", {"eval_metric": "ndcg@5"}, "eval_metric='ndcg@5' would replace the validation NDCG@10"),
    ("xgboost", {"n_estimators": 500}, "n_estimators=500 sets the number of rounds"),
    ("xgboost", {"eta": 0.3}, "eta=0.3 sets the learning rate"),
    ("xgboost", {"max_leaves": 7}, "max_leaves=7 sets the number of leaves"),
])
def test_parameters_that_change_what_the_run_claims_are_refused(engine, params, refused):
    with pytest.raises(ValueError, match="^engine parameter " + refused.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        RunSpec(engine=engine, engine_params=params)


@pytest.mark.parametrize("engine, params", [
    ("lightgbm", {"metric": "ndcg"}), ("lightgbm", {"min_data_in_leaf": 5, "lambdarank_truncation_level": 20}),
    ("xgboost", {"eval_metric": "ndcg@10"}), ("xgboost", {"min_child_weight": 0.5, "max_depth": 6}),
])
def test_parameters_that_change_nothing_reported_are_accepted(engine, params):
    assert RunSpec(engine=engine, engine_params=params).engine_params == params


def test_training_functions_refuse_the_objective_but_take_tree_parameters():
    """train() documents that tree parameters in engine_params override its arguments (the model's
    engine_params log what trained); the objective and the metric it refuses like a configuration."""
    with pytest.raises(ValueError, match=r"^engine parameter application='regression' \(LightGBM's objective\)"):
        train("lightgbm", PLRank(), make_synthetic(n_queries=4, seed=0), engine_params={"application": "regression"})
    with pytest.raises(ValueError, match=r"^engine parameter objective='reg:squarederror'"):
        train("xgboost", PLRank(), make_synthetic(n_queries=4, seed=0), engine_params={"objective": "reg:squarederror"})
    check_engine_params("lightgbm", {"learning_rate": 0.3, "num_leaves": 7}, objective="plrank")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("parameters")
    return {name: make_synthetic(n_queries=10, seed=seed).save_svmlight(directory / f"{name}.txt")
            for name, seed in (("train", 1), ("test", 2))}


@pytest.mark.parametrize("engine, param", [("lightgbm", "objective=regression"), ("lightgbm", "loss=regression"),
                                           ("xgboost", "objective=reg:squarederror"), ("lightgbm", "metric=map")])
def test_the_command_refuses_before_training_or_writing(files, tmp_path, capsys, engine, param):
    out = tmp_path / "result.json"
    status = main(["train", "--train", str(files["train"]), "--test", str(files["test"]), "--objective", "plrank",
                   "--engine", engine, "--engine-param", param, "--rounds", "2", "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    name = param.split("=")[0]
    assert status == 2 and len(err) == 1 and err[0].startswith(f"plboost train: error: engine parameter {name}=")
    assert not out.exists()


def test_a_toml_configuration_is_refused_naming_the_run(tmp_path):
    config = tmp_path / "runs.toml"
    config.write_text('[[run]]\nobjective = "plrank"\nengine_params = { objective = "regression" }\n')
    with pytest.raises(ValueError, match=r"runs.toml \[\[run\]\] #1: engine parameter objective='regression' would "
                                         r"train another objective"):
        load_config(config, RunSpec())
    config.write_text('[defaults]\nengine_params = { metric = "map" }\n[[run]]\nobjective = "plrank"\n')
    with pytest.raises(ValueError, match=r"runs.toml \[defaults\]: engine parameter metric='map'"):
        load_config(config, RunSpec())


@pytest.mark.engine
def test_gains_that_would_change_the_watched_ndcg_never_change_what_early_stopping_watches(tmp_path):
    """label_gain=0,0,0 made LightGBM's validation NDCG 1.0 every round: early stopping kept 1 tree. plboost now
    watches its own NDCG (gains 2^y - 1) whenever label_gain differs from them; XGBoost's ndcg_exp_gain=false is
    refused before training."""
    from plboost.data import make_synthetic
    from plboost.engines import train
    from plboost.objectives import PLRank

    train_data, valid_data = make_synthetic(n_queries=60, seed=1), make_synthetic(n_queries=30, seed=2)
    plain = train("lightgbm", PLRank(), train_data, valid_data, rounds=8, early_stopping=3, num_leaves=7)
    flat = train("lightgbm", PLRank(), train_data, valid_data, rounds=8, early_stopping=3, num_leaves=7,
                 engine_params={"label_gain": "0,0,0,0,0"})
    assert flat.valid_history == pytest.approx(plain.valid_history, abs=1e-9)
    assert len(set(flat.valid_history)) > 1 and flat.best_iteration == plain.best_iteration
    same = train("lightgbm", "lambdarank", train_data, valid_data, rounds=3, num_leaves=7,
                 engine_params={"label_gain": [0, 1, 3, 7, 15]})
    assert flat.engine_params["metric"] == "ndcg (plboost: label_gain is not 2^y - 1)"
    assert "plboost" not in same.engine_params["metric"]  # plboost's gains: LightGBM's own metric is kept
    for value in (False, "false", 0):
        with pytest.raises(ValueError, match=r"ndcg_exp_gain=.* would change the gains of the validation NDCG@10"):
            train("xgboost", PLRank(), train_data, valid_data, rounds=2, engine_params={"ndcg_exp_gain": value})
    train("xgboost", "rank:ndcg", train_data, valid_data, rounds=2, engine_params={"ndcg_exp_gain": True})
