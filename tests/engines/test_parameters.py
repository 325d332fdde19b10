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
    ("xgboost", {"eta": 0.3}, "eta=0.3 (XGBoost's learning_rate) sets the learning rate"),
    ("xgboost", {"max_leaves": 7}, "max_leaves=7 sets the number of leaves"),
])
def test_parameters_that_change_what_the_run_claims_are_refused(engine, params, refused):
    with pytest.raises(ValueError, match="^engine parameter " + refused.replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        RunSpec(engine=engine, engine_params=params)


@pytest.mark.parametrize("engine, params", [
    ("lightgbm", {"metric": "ndcg"}), ("lightgbm", {"min_data_in_leaf": 5, "lambda_l2": 0.5}),
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


# --- two names of one parameter, and parameters the engine would ignore as given

#: canonical LightGBM parameters, each doubled under its first alias in LightGBM's own table
DOUBLED = ["lambda_l1", "feature_fraction", "min_sum_hessian_in_leaf", "bagging_fraction", "max_bin"]


@pytest.mark.parametrize("canonical", DOUBLED)
def test_two_lightgbm_names_of_one_parameter_are_refused_in_either_order(canonical):
    alias = sorted(_ConfigAliases.get(canonical) - {canonical})[0]
    pairs = [{alias: 0.4, canonical: 0.6}, {canonical: 0.6, alias: 0.4}]
    for params in pairs:
        first, second = params
        message = (rf"^engine parameters {first}={params[first]} and {second}={params[second]} are both LightGBM's "
                   rf"{canonical}; give it once$")
        with pytest.raises(ValueError, match=message):
            RunSpec(engine_params={**params, "bagging_freq": 1})
        with pytest.raises(ValueError, match=message):
            train("lightgbm", PLRank(), make_synthetic(n_queries=4, seed=0), engine_params=params)


def test_xgboosts_alias_table_is_xgboosts_and_two_names_are_refused():
    """Each alias of the table sets its parameter in XGBoost's own configuration; both names given are refused."""
    import json

    import numpy as np
    import xgboost as xgb

    from plboost._engine_registry import XGBOOST

    matrix = xgb.DMatrix(np.arange(8.0).reshape(4, 2), label=[0, 1, 0, 1], qid=[0, 0, 1, 1])
    for alias, name in XGBOOST.ALIASES.items():
        value = 3 if name in ("seed", "nthread") else 0.25
        config = json.loads(xgb.Booster({alias: value}, cache=[matrix]).save_config())
        texts = {}
        stack = [config]
        while stack:
            node = stack.pop()
            for key, item in node.items():
                stack.append(item) if isinstance(item, dict) else texts.setdefault(key, item)
        assert float(texts[name]) == value, (alias, name)
        with pytest.raises(ValueError, match=rf"are both XGBoost's {name}; give it once"):
            check_engine_params("xgboost", {name: value, alias: value * 2}, objective="plrank")


def test_a_builtin_objectives_parameter_given_also_as_an_engine_parameter_is_refused():
    with pytest.raises(ValueError, match=r"^parameter of lambdarank lambdarank_truncation_level=8 and engine parameter "
                                         r"lambdarank_truncation_level=9 are both LightGBM's"):
        RunSpec(objective="lambdarank", objective_params={"lambdarank_truncation_level": 8},
                engine_params={"lambdarank_truncation_level": 9})


#: (parameters LightGBM ignores as given, the reason's start; the same with what turns them on)
IGNORED = [
    ({"subsample": 0.8}, "LightGBM bags only with bagging_freq > 0", {"subsample": 0.8, "bagging_freq": 2}),
    ({"bagging_freq": 4}, "LightGBM bags only with bagging_fraction < 1", {"bagging_freq": 4, "bagging_fraction": 0.6}),
    ({"bagging_seed": 9}, "it seeds bagging .* and GOSS, both off", {"bagging_seed": 9, "bagging_fraction": 0.6,
                                                                      "bagging_freq": 1}),
    ({"pos_bagging_fraction": 0.5, "bagging_freq": 1}, "LightGBM reads it for its binary objective only", None),
    ({"top_rate": 0.3}, "LightGBM reads it with data_sample_strategy=goss only",
     {"top_rate": 0.3, "data_sample_strategy": "goss"}),
    ({"skip_drop": 0.2}, "LightGBM reads it with boosting=dart only", {"skip_drop": 0.2, "boosting": "dart"}),
    ({"extra_seed": 11}, "it seeds extra_trees, which is off", {"extra_seed": 11, "extra_trees": True}),
    ({"feature_fraction_seed": 5}, "it seeds feature_fraction < 1", {"feature_fraction_seed": 5,
                                                                     "feature_fraction": 0.5}),
    ({"lambdarank_norm": False}, "only LightGBM's own objectives read it, not plboost's plrank", None),
]


@pytest.mark.engine
@pytest.mark.parametrize("ignored, reason, read", IGNORED, ids=[next(iter(case[0])) for case in IGNORED])
def test_a_lightgbm_parameter_that_would_change_nothing_is_refused(ignored, reason, read):
    """Refused with one line, before anything trains; and LightGBM itself trains the same trees with it as without
    it (the refusal is LightGBM's fact), while with the setting that turns it on the parameter is taken."""
    import lightgbm as lgb
    import numpy as np

    name = next(iter(ignored))
    with pytest.raises(ValueError, match=rf"^engine parameter {name}=.* changes nothing: {reason}"):
        RunSpec(engine_params=ignored)
    data = make_synthetic(n_queries=40, seed=3)
    # a learning rate of 0.5: GOSS samples from round 1 / learning_rate on
    base = {"objective": PLRank(top_k=5), "num_leaves": 7, "verbosity": -1, "num_threads": 1, "seed": 1,
            "deterministic": True, "force_col_wise": True, "learning_rate": 0.5}

    def predictions(params):
        dataset = data.to_lightgbm(params={"verbosity": -1, **params})
        return lgb.train({**base, **params}, dataset, num_boost_round=6).predict(data.X, raw_score=True)

    others = {k: v for k, v in ignored.items() if k != name}
    assert np.array_equal(predictions(ignored), predictions(others))
    if read is not None:
        assert RunSpec(engine_params=read).engine_params == read
        enabling = {k: v for k, v in read.items() if k != name}
        assert not np.array_equal(predictions(read), predictions(enabling))


def test_an_engine_objectives_parameter_is_taken_by_that_objective_and_refused_for_plboosts():
    RunSpec(objective="lambdarank", engine_params={"lambdarank_norm": False})
    with pytest.raises(ValueError, match=r"^engine parameter lambdarank_num_pair_per_sample=4 changes nothing: only "
                                         r"XGBoost's own objectives read it, not plboost's umart"):
        RunSpec(objective="umart", engine="xgboost", engine_params={"lambdarank_num_pair_per_sample": 4})


def test_the_search_leaves_out_a_dimension_given_under_an_alias_and_bags_only_below_one():
    from plboost._engine_registry import LIGHTGBM
    from plboost.tuning import search_space

    names = {d.name for d in search_space(RunSpec(engine_params={"min_child_samples": 40})).engine}
    assert "min_data_in_leaf" not in names and "feature_fraction" in names
    assert LIGHTGBM.completed_params({"bagging_fraction": 1.0}) == {"bagging_fraction": 1.0}
    assert LIGHTGBM.completed_params({"bagging_fraction": 0.7}) == {"bagging_fraction": 0.7, "bagging_freq": 1}


@pytest.mark.parametrize("argv, refused", [
    (["--param", "top_k=3", "--param", "top_k=4"], "--param top_k is given twice (top_k=3, then top_k=4)"),
    (["--engine-param", "lambda_l2=1", "--engine-param", "lambda_l2=2"],
     "--engine-param lambda_l2 is given twice (lambda_l2=1, then lambda_l2=2)"),
    (["--engine-param", "min_sum_hessian_in_leaf=0.5", "--engine-param", "min_child_weight=2"],
     "engine parameters min_sum_hessian_in_leaf=0.5 and min_child_weight=2 are both LightGBM's "
     "min_sum_hessian_in_leaf"),
    (["--engine-param", "bagging_fraction=0.75"], "engine parameter bagging_fraction=0.75 changes nothing"),
])
def test_the_command_refuses_a_parameter_given_twice_or_ignored(files, tmp_path, capsys, argv, refused):
    out = tmp_path / "result.json"
    status = main(["train", "--train", str(files["train"]), "--rounds", "2", "--out", str(out), "--quiet", *argv])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == 2 and len(err) == 1 and err[0].startswith(f"plboost train: error: {refused}"), err
    assert not out.exists()


def test_a_run_with_a_parameter_given_twice_is_refused():
    from plboost.experiment.spec import parse_run

    with pytest.raises(ValueError, match=r"^--run 'plrank,n_permutations=2,n_permutations=3': parameter "
                                         r"n_permutations is given twice \(n_permutations=2, then n_permutations=3\)"):
        parse_run("plrank,n_permutations=2,n_permutations=3", RunSpec())
