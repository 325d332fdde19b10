"""Configurations (plboost.experiment.spec): one rule each for KEY=VALUE text and leaf_values from every entry
point, and a configuration's identity computed from what it trains."""


import re

import numpy as np
import pytest
from experiment_helpers import compare_cli

from plboost.experiment import Comparison, FoldResult, RunSpec, parse_run

# --------------------------------------------------------------------------------------------------
# one rule each: KEY=VALUE text, leaf_values

@pytest.mark.parametrize("text, value", [
    ("label_gain=[1,3,7]", [1, 3, 7]), ("lambdarank_norm=false", False), ("lambdarank_norm=True", True),
    ("top_k=None", None), ("top_k=null", None), ("top_k=10", 10), ("sigmoid=1.5", 1.5), ("sigmoid=1e-3", 0.001),
    ("sigmoid=inf", float("inf")), ("preset=paper", "paper"), ("preset='paper'", "paper"), ("window=010", 10),
    ("skip_uniform_queries=no", "no"),
])
def test_command_line_and_run_specs_read_key_value_text_alike(text, value):
    from plboost.cli import build_parser, parse_assignment

    key, _ = text.split("=", 1)
    assert parse_assignment(text) == (key, value)
    args = build_parser().parse_args(["train", "--train", "x", "--param", text, "--engine-param", text])
    assert dict(args.param) == dict(args.engine_param) == {key: value}
    # a parameter of XGBoost's objective goes to XGBoost exactly as parsed (a non-finite number is refused)
    if value != float("inf"):
        spec = parse_run(f"rank:ndcg@xgboost,lambdarank_pair_method={text.split('=', 1)[1]}", RunSpec())
        assert spec.objective_params == {"lambdarank_pair_method": value}


@pytest.mark.parametrize("text, objective", [
    ("lambdarank,top_k=5", "LightGBM's lambdarank"), ("rank:ndcg@xgboost,n_permutations=2", "XGBoost's rank:ndcg"),
    ("lambdarank,learning_rate=0.2", "LightGBM's lambdarank"),
])
def test_a_parameter_that_is_not_the_built_in_objectives_is_refused_not_handed_on(text, objective):
    """--objective lambdarank --param top_k=5 trained plain lambdarank labelled lambdarank(top_k=5): top_k is
    LightGBM's voting-parallel setting, not lambdarank's."""
    with pytest.raises(ValueError, match=f"is not a parameter of {objective} .*give other"):
        parse_run(text, RunSpec())


def test_label_gain_lists_reach_the_objective_from_every_entry_point():
    from plboost.cli import build_parser

    spec = parse_run("umart,label_gain=[1,3,7],window=2", RunSpec())
    assert spec.objective_params == {"label_gain": [1, 3, 7], "window": 2}
    args = build_parser().parse_args(["train", "--train", "x", "--objective", "umart", "--param", "label_gain=[1,3,7]",
                                      "--param", "window=2"])
    assert dict(args.param) == spec.objective_params
    assert parse_run("lambdarank,label_gain=[0, 1, 3]", RunSpec()).objective_params == {"label_gain": [0, 1, 3]}


def _cli_error(argv, capsys) -> str:
    from plboost.cli import main

    assert main(argv) == 2
    return capsys.readouterr().err.strip().split(": error: ", 1)[1]


@pytest.mark.parametrize("engine, objective, expected", [
    ("xgboost", "plrank", "leaf_values='exact' is for LightGBM only"),
    ("lightgbm", "umart", "exact leaf values are defined for PLRank (the paper's Eqn. 9), not umart"),
])
def test_leaf_values_are_refused_with_one_message_everywhere(splits, tmp_path, capsys, engine, objective, expected):
    from plboost.engines.parameters import check_leaf_values
    from plboost.engines import resolve_objective, train

    with pytest.raises(ValueError) as raised:
        check_leaf_values("exact", engine, objective)
    message = str(raised.value)
    assert message.startswith(expected)
    with pytest.raises(ValueError) as raised:
        RunSpec(objective=objective, engine=engine, leaf_values="exact")
    assert str(raised.value) == message
    with pytest.raises(ValueError) as raised:
        parse_run(f"{objective}@{engine},leaf_values=exact", RunSpec())
    assert str(raised.value) == message
    instance, _ = resolve_objective(objective, engine)
    with pytest.raises(ValueError) as raised:
        train(engine, instance, splits[0], rounds=1, leaf_values="exact")
    assert str(raised.value) == message
    path = splits[0].save_svmlight(tmp_path / "train.txt")
    common = ["--engine", engine, "--leaf-values", "exact", "--quiet"]
    assert _cli_error(["train", "--train", str(path), "--objective", objective, *common], capsys) == message
    assert _cli_error(["compare", str(tmp_path), "--run", objective, *common], capsys) == message


def test_leaf_values_on_dask_and_bad_names_are_refused_alike(splits):
    from plboost.engines.parameters import check_leaf_values
    from plboost.engines import train
    from plboost.experiment import run_dask
    from plboost.objectives import PLRank

    with pytest.raises(ValueError, match="not available on Dask"):
        run_dask(RunSpec(leaf_values="exact"), client=None, train_sources=["unused.txt"])
    with pytest.raises(ValueError) as raised:
        check_leaf_values("newton", "lightgbm")
    for entry in (lambda: RunSpec(leaf_values="newton"),
                  lambda: train("lightgbm", PLRank(), splits[0], rounds=1, leaf_values="newton"),
                  lambda: train("xgboost", PLRank(), splits[0], rounds=1, leaf_values="newton")):
        with pytest.raises(ValueError) as again:
            entry()
        assert str(again.value) == str(raised.value) == ("leaf_values must be one of 'diagonal', 'exact', "
                                                         "got 'newton' (str)")


def test_baselines_keep_the_engines_leaf_values_and_are_added_once():
    from plboost.experiment import with_baselines

    defaults = RunSpec(leaf_values="exact", rounds=7)
    specs = with_baselines([parse_run("plrank", defaults), parse_run("rank:ndcg@xgboost", RunSpec())], defaults)
    assert [s.label for s in specs] == ["plrank [lightgbm, exact leaves]", "rank:ndcg [xgboost]",
                                        "lambdarank [lightgbm]", "rank_xendcg [lightgbm]", "regression [lightgbm]",
                                        "rank:pairwise [xgboost]"]
    assert all(s.rounds == 7 for s in specs[2:])


def test_datasets_get_one_output_directory_each(tmp_path):
    from types import SimpleNamespace

    from plboost.experiment import dataset_outputs

    layouts = [SimpleNamespace(directory=tmp_path / name) for name in ("a", "b")]
    assert dataset_outputs(layouts, tmp_path / "out") == [("a", tmp_path / "out" / "a"), ("b", tmp_path / "out" / "b")]
    assert dataset_outputs(layouts[:1], tmp_path / "out") == [("a", tmp_path / "out")]
    assert dataset_outputs(layouts) == [("a", None), ("b", None)]
    with pytest.raises(ValueError, match="same directory name"):
        dataset_outputs([layouts[0], SimpleNamespace(directory=tmp_path / "x" / "a")])


def test_optional_dependencies_name_how_to_install_them(monkeypatch):
    import sys

    from plboost._extras import MissingExtra
    from plboost.cli import failure_message
    from plboost.experiment import dask_client, plotting

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if it were not installed
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(MissingExtra) as raised, dask_client(n_workers=1):
        pass
    assert str(raised.value) == "training on Dask needs distributed: pip install 'plboost[dask]'"
    assert failure_message(raised.value) == str(raised.value)
    with pytest.raises(ImportError, match=r"plotting needs matplotlib: pip install 'plboost\[plot\]'"):
        plotting()


def test_validation_curves_hold_a_stopped_run_at_its_best_value():
    spec = RunSpec()
    runs = [FoldResult(spec.label, "Fold1", {}, 0.0, 2, [0.5, 0.6, 0.55]),
            FoldResult(spec.label, "Fold2", {}, 0.0, 5, [0.4, 0.5, 0.6, 0.7, 0.8])]
    mean, ends = Comparison("d", [spec], runs, "").validation_curves()[spec.label]
    # Fold1 stopped after round 3 and keeps its best model (0.6): no jump to Fold2's 0.8 once it is alone
    np.testing.assert_allclose(mean, [0.45, 0.55, 0.575, 0.65, 0.7])
    assert ends.tolist() == [3]


def test_plots_leave_matplotlib_global_state_alone(tmp_path):
    import subprocess
    import sys

    script = f"""
import sys, matplotlib
def refuse(*args, **kwargs):
    raise AssertionError("matplotlib.use called")
matplotlib.use = refuse
import plboost.cli, plboost.experiment, plboost.winning
assert not any(m.startswith(("matplotlib.pyplot", "dask", "distributed")) for m in sys.modules)
from plboost.experiment import Comparison, FoldResult, RunSpec
folds = [FoldResult("plrank [lightgbm]", "Fold1", {{}}, 0.0, 3, [0.1, 0.2, 0.3])]
Comparison("data", [RunSpec()], folds, "").plot({str(tmp_path / "curves.png")!r})
assert "matplotlib.pyplot" not in sys.modules
"""
    subprocess.run([sys.executable, "-c", script], check=True)
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


# --------------------------------------------------------------------------------------------------
# identity: a configuration is its key, computed from what it trains (issue 25)

def test_a_default_given_parameter_order_and_list_or_tuple_do_not_make_another_configuration():
    defaults = RunSpec()
    assert parse_run("plrank", defaults).key == parse_run("plrank,top_k=10", defaults).key  # 10 is the default
    assert (parse_run("plrank,top_k=5,n_permutations=3", defaults).key
            == parse_run("plrank,n_permutations=3,top_k=5", defaults).key)
    assert (parse_run("umart,label_gain=[0,1,3]", defaults).key
            == parse_run("umart,label_gain=(0,1,3)", defaults).key)
    assert (RunSpec(engine_params={"min_child_samples": 5}).key
            == RunSpec(engine_params={"min_data_in_leaf": 5}).key)  # LightGBM's alias table
    # and what does change the training changes the key
    assert len({RunSpec().key, RunSpec(rounds=99).key, RunSpec(seed=1).key, RunSpec(engine="xgboost").key,
                RunSpec(objective_params={"top_k": 5}).key, RunSpec(engine_params={"min_data_in_leaf": 5}).key,
                RunSpec(leaf_values="exact").key}) == 7
    assert RunSpec(repeat=2).key == RunSpec().key  # a repeat is a run of the configuration, not another one


def test_a_built_in_objectives_parameter_at_the_engines_default_does_not_make_another_configuration():
    defaults = RunSpec()
    lambdarank = parse_run("lambdarank", defaults).key
    # the defaults are read from the engines themselves: LightGBM's truncation level 30 and norm on, XGBoost's
    # top-k pairs and exponential gain
    assert parse_run("lambdarank,lambdarank_truncation_level=30,lambdarank_norm=true", defaults).key == lambdarank
    assert parse_run("lambdarank,lambdarank_truncation_level=20", defaults).key != lambdarank
    assert parse_run("lambdarank,lambdarank_norm=false", defaults).key != lambdarank
    assert (parse_run("rank:ndcg@xgboost,lambdarank_pair_method=topk,ndcg_exp_gain=true", defaults).key
            == parse_run("rank:ndcg@xgboost", defaults).key)
    assert parse_run("rank:ndcg@xgboost,lambdarank_pair_method=mean", defaults).key != parse_run(
        "rank:ndcg@xgboost", defaults).key


def test_labels_show_the_parameters_in_one_order_and_lists_alike():
    defaults = RunSpec()
    assert (parse_run("plrank,n_permutations=3,top_k=5", defaults).label
            == parse_run("plrank,top_k=5,n_permutations=3", defaults).label == "plrank(top_k=5, n_permutations=3) "
                                                                                "[lightgbm]")
    assert parse_run("umart,label_gain=(0,1,3)", defaults).label == "umart(label_gain=[0, 1, 3]) [lightgbm]"


def test_a_configuration_given_twice_is_refused_naming_the_first(two_datasets, capsys):
    alpha, _ = two_datasets
    assert compare_cli(alpha, "--run", "urank", "--run", "plrank", "--run", "plrank,top_k=10") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["plboost compare: error: configuration #3 (plrank(top_k=10) [lightgbm]) is configuration #2 "
                   "(plrank [lightgbm]) again: the same objective, parameters (defaults included) and settings; "
                   "give it once"]


@pytest.mark.engine
def test_the_same_configuration_written_another_way_reuses_every_record(two_datasets, tmp_path, capsys):
    alpha, _ = two_datasets
    out = tmp_path / "R"
    assert compare_cli(alpha, "--run", "plrank,top_k=5,n_permutations=2", "--out", out) == 0
    capsys.readouterr()
    assert compare_cli(alpha, "--run", "plrank,n_permutations=2,top_k=5.0", "--out", out) == 0
    captured = capsys.readouterr()
    assert "2 run(s): 2 reused from records, 0 redone, 0 new" in captured.err
    assert len(list((out / "runs").iterdir())) == 1  # one record folder


@pytest.mark.parametrize("gains, shown", [([i * 0.5 for i in range(2500)], "[0.0, 0.5, 1.0, 1.5, 2.0, ..., 1249.5] "
                                                                         "(2,500 values)"),
                                          (list(range(7)), "[0, 1, 2, 3, 4, ..., 6] (7 values)"),
                                          ([1, 2], "[1, 2]")])
def test_a_long_list_parameter_is_shown_cut_in_labels(gains, shown):
    assert RunSpec(objective="umart", objective_params={"label_gain": gains}).label == \
        f"umart(label_gain={shown}) [lightgbm]"


# --------------------------------------------------------------------------------------------------
# a run is resolved once, when its specification is made


@pytest.mark.parametrize("kwargs, message", [
    ({"objective": "listmle2"}, "unknown objective 'listmle2' for lightgbm"),
    ({"objective": "YetiRank", "engine": "xgboost"}, "YetiRank is an objective of catboost, not xgboost"),
    ({"objective": "plrank_v2", "engine": "xgboost"}, "unknown objective 'plrank_v2' for xgboost"),
    ({"objective": "urank", "engine": "catboost"}, "CatBoost cannot do plboost's objectives (urank)"),
    ({"objective": "rank:pairwise"}, "rank:pairwise is an objective of xgboost, not lightgbm"),
])
def test_a_specification_of_an_objective_the_engine_cannot_train_is_refused_when_made(kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        RunSpec(**kwargs)


def test_a_specification_holds_its_objective_and_settings_resolved_once():
    """The objective the engine trains (its seed shifted by the repeat) and the one TrainingSettings are made with
    the specification; every later reader gets those objects, not new ones."""
    spec = RunSpec(objective="pa_listmle", objective_params={"top_k": 4, "seed": 5}, repeat=2, learning_rate=0.07,
                   engine_params={"min_data_in_leaf": 3})
    assert spec.trained_objective is spec.trained_objective and spec.settings is spec.settings
    assert spec.trained_objective.get_params()["seed"] == 7 and spec.trained_objective.top_k == 4
    assert (spec.settings.learning_rate, spec.settings.seed, dict(spec.settings.engine_params)) == (
        0.07, spec.seed + 2, {"min_data_in_leaf": 3})
    builtin = RunSpec(objective="lambdarank", objective_params={"lambdarank_truncation_level": 7})
    assert builtin.trained_objective == "lambdarank"
    assert dict(builtin.settings.engine_params) == {"lambdarank_truncation_level": 7}


def test_plboost_train_builds_its_objective_and_settings_once(tmp_path, monkeypatch, capsys):
    """plboost train --objective urank --param ...: the objective was built six times before training (the
    specification's check, the command's, the runner's, an evaluation copy of the specification, and LightGBM's
    deep copies of its parameters) and the settings three times. plboost builds each once now; the copies
    LightGBM makes of its parameters (lgb.train deep-copies them) are LightGBM's."""
    import functools
    import traceback

    from plboost.cli import main
    from plboost.data import make_synthetic
    from plboost.engines import settings as settings_module
    from plboost.objectives import URank

    built = []
    for cls, attribute in ((URank, "URank"), (settings_module.TrainingSettings, "TrainingSettings")):
        original = cls.__init__

        @functools.wraps(original)
        def counted(self, *args, _original=original, _name=attribute, **kwargs):
            copying = any(frame.name == "__deepcopy__" for frame in traceback.extract_stack())
            built.append((_name, copying))
            _original(self, *args, **kwargs)

        monkeypatch.setattr(cls, "__init__", counted)
    path = tmp_path / "train.txt"
    make_synthetic(n_queries=12, n_features=3, seed=4).save_svmlight(path)
    assert main(["train", "--train", str(path), "--objective", "urank", "--param", "hessian_floor=1e-5",
                 "--rounds", "2", "--learning-rate", "0.2", "--quiet", "--engine-param", "min_data_in_leaf=1"]) == 0
    assert [name for name, copying in built if not copying] == ["TrainingSettings", "URank"]


def test_exact_leaves_with_a_bounded_curvature_are_refused_when_the_specification_is_made():
    """The refusal came from ExactLeafValues, once the data were loaded and training began; the specification
    knows its objective, so compare refuses before anything is read (check_leaf_values, the one place)."""
    with pytest.raises(ValueError, match=re.escape("so they train PLRank(curvature='exact'), not curvature='bound'")):
        RunSpec(objective="plrank", objective_params={"curvature": "bound", "n_permutations": 2}, leaf_values="exact")
    assert RunSpec(objective="plrank", objective_params={"curvature": "bound"}).trained_objective.curvature == "bound"
