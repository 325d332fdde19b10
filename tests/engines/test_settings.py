"""TrainingSettings: what a training run is, each default written once and read by every entry point; the old
keyword calls go through it."""

import dataclasses
import inspect

import pytest

from plboost import Ranker
from plboost.cli import build_parser
from plboost.data import make_synthetic
from plboost.engines import DEFAULT_SETTINGS, TrainingSettings, train
from plboost.engines.dask import train_dask
from plboost.engines.lightgbm import train_lightgbm
from plboost.engines.settings import SETTING_NAMES, training_settings
from plboost.engines.xgboost import train_xgboost
from plboost.errors import InputTypeError
from plboost.experiment import RunSpec
from plboost.objectives import PLRank


def test_every_entry_point_takes_its_defaults_from_the_settings():
    spec = RunSpec()
    assert (spec.rounds, spec.learning_rate, spec.num_leaves, spec.early_stopping, spec.seed, spec.leaf_values) == (
        DEFAULT_SETTINGS.rounds, DEFAULT_SETTINGS.learning_rate, DEFAULT_SETTINGS.num_leaves,
        DEFAULT_SETTINGS.early_stopping, DEFAULT_SETTINGS.seed, DEFAULT_SETTINGS.leaf_values)
    args = build_parser().parse_args(["train", "--train", "x.txt"])
    assert (args.rounds, args.learning_rate, args.num_leaves) == (100, 0.1, 31) == (
        DEFAULT_SETTINGS.rounds, DEFAULT_SETTINGS.learning_rate, DEFAULT_SETTINGS.num_leaves)
    ranker = Ranker().get_params()
    assert (ranker["n_estimators"], ranker["learning_rate"], ranker["num_leaves"], ranker["eval_at"]) == (
        DEFAULT_SETTINGS.rounds, DEFAULT_SETTINGS.learning_rate, DEFAULT_SETTINGS.num_leaves, DEFAULT_SETTINGS.eval_at)
    for function in (train, train_lightgbm, train_xgboost, train_dask):
        assert not set(SETTING_NAMES) & set(inspect.signature(function).parameters), function.__name__


@pytest.mark.parametrize("changes, message", [
    ({"rounds": 0}, "rounds must be an integer >= 1, got 0"), ({"num_leaves": 2.5}, "num_leaves must be"),
    ({"eval_at": True}, "eval_at must be"), ({"early_stopping": -1}, "early_stopping must be"),
    ({"learning_rate": 0.0}, "learning_rate must be a finite number > 0, got 0.0"),
    ({"learning_rate": float("nan")}, "learning_rate must be"), ({"learning_rate": "0.1"}, "learning_rate must be"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"leaf_values": "newton"}, "leaf_values must be one of 'diagonal', 'exact', got 'newton'"),
    ({"engine_params": [("max_bin", 63)]}, "engine_params must be a dict"),
])
def test_bad_settings_are_refused_naming_the_field(changes, message):
    with pytest.raises(ValueError, match=message):
        TrainingSettings(**changes)
    with pytest.raises(ValueError, match=message):
        DEFAULT_SETTINGS.replace(**changes)


def test_settings_are_frozen_and_keywords_replace_their_fields():
    settings = TrainingSettings(rounds=7, engine_params={"max_bin": 63})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.rounds = 8
    with pytest.raises(TypeError):
        settings.engine_params["max_bin"] = 15
    assert training_settings(settings, {"learning_rate": 0.3}) == TrainingSettings(
        rounds=7, learning_rate=0.3, engine_params={"max_bin": 63})
    assert training_settings(None, {}) is DEFAULT_SETTINGS
    assert training_settings(settings, {"engine_params": None}) is settings  # None: as the old default
    with pytest.raises(InputTypeError, match="unexpected keyword argument 'round'; the training settings are rounds"):
        training_settings(None, {"round": 5})
    with pytest.raises(InputTypeError, match="settings must be a TrainingSettings, got dict"):
        training_settings({"rounds": 5}, {})


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_the_old_keyword_call_trains_what_the_settings_train(engine):
    data = make_synthetic(n_queries=40, n_features=5, seed=3)
    by_keywords = train(engine, PLRank(), data, rounds=4, learning_rate=0.2, num_leaves=7, seed=2)
    by_settings = train(engine, PLRank(), data, None, TrainingSettings(rounds=4, learning_rate=0.2, num_leaves=7,
                                                                       seed=2))
    assert (by_keywords.predict(data.X) == by_settings.predict(data.X)).all()
    assert by_keywords.trees_used == by_settings.trees_used == 4
