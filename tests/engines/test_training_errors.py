"""Training with what the engines refuse: queries over 10,000 documents, and bad engine parameters (issue 16)."""

import numpy as np
import pytest
from lightgbm.basic import _ConfigAliases

from plboost import metrics
from plboost.data import RankingData
from plboost.engines import engine_message, train
from plboost.engines.exact_leaves import ExactLeafValues
from plboost.engines.lightgbm import LIGHTGBM_MAX_QUERY
from plboost.objectives import PLRank


def with_long_query(n_docs: int, seed: int = 0) -> RankingData:
    """Query 7 of ``n_docs`` documents, then two short ones; 3 features."""
    rng = np.random.default_rng(seed)
    sizes = [n_docs, 40, 25]
    X = rng.normal(size=(sum(sizes), 3)).astype(np.float32)
    labels = np.minimum(rng.poisson(0.4 + np.maximum(X[:, 0], 0)), 4).astype(np.float64)
    return RankingData(X, labels, np.array([7, 8, 9]), np.r_[0, np.cumsum(sizes)])


@pytest.mark.engine
@pytest.mark.parametrize("n_docs", [LIGHTGBM_MAX_QUERY + 1, 200_000])
@pytest.mark.parametrize("objective", [PLRank(), "rank_xendcg"], ids=repr)
def test_lightgbm_trains_and_stops_early_on_long_queries(n_docs, objective):
    """LightGBM's ndcg metric refuses queries over 10,000 documents: plboost's scores the validation data."""
    train_data, valid_data = with_long_query(n_docs), with_long_query(n_docs, seed=1)
    model = train("lightgbm", objective, train_data, valid_data, rounds=4, early_stopping=2,
                  engine_params={"min_data_in_leaf": 5})
    assert 1 <= model.trees_used <= model.rounds <= 4 and len(model.valid_history) == model.rounds
    assert model.best_iteration == int(np.argmax(model.valid_history)) + 1
    scores = model.predict(valid_data.X)
    assert model.valid_history[model.best_iteration - 1] == pytest.approx(
        metrics.ndcg(scores, valid_data.labels, offsets=valid_data.offsets, k=10), abs=1e-9)
    assert model.engine_params["metric"] == "ndcg (plboost: a query has over 10000 documents)"


@pytest.mark.engine
def test_lightgbm_keeps_its_own_metric_on_short_queries():
    data = with_long_query(LIGHTGBM_MAX_QUERY)
    model = train("lightgbm", PLRank(), data, data, rounds=2, engine_params={"min_data_in_leaf": 5})
    assert model.engine_params["metric"] == "ndcg" and len(model.valid_history) == 2


@pytest.mark.engine
def test_lightgbm_lambdarank_refuses_long_queries_by_name():
    with pytest.raises(ValueError, match=r"^LightGBM's lambdarank objective takes queries of at most 10000 documents, "
                                         r"and query 7 of the training data has 10001; train with a plboost "
                                         r"objective or rank_xendcg$"):
        train("lightgbm", "lambdarank", with_long_query(LIGHTGBM_MAX_QUERY + 1), rounds=2)


@pytest.mark.engine
def test_lightgbm_ndcg_metric_asked_for_names_the_long_query():
    data = with_long_query(LIGHTGBM_MAX_QUERY + 1)
    with pytest.raises(ValueError, match=r"^LightGBM's ndcg metric takes queries of at most 10000 documents, and "
                                         r"query 7 of the training data has 10001; leave the metric to plboost"):
        train("lightgbm", PLRank(), data, data, rounds=2, engine_params={"metric": "ndcg"})


@pytest.mark.engine
@pytest.mark.parametrize("objective", [PLRank(), "rank:ndcg"], ids=repr)
def test_xgboost_has_no_query_size_limit(objective):
    train_data, valid_data = with_long_query(LIGHTGBM_MAX_QUERY + 1), with_long_query(LIGHTGBM_MAX_QUERY + 1, seed=1)
    model = train("xgboost", objective, train_data, valid_data, rounds=2, early_stopping=2)
    assert model.rounds == 2 and len(model.valid_history) == 2


@pytest.mark.engine
@pytest.mark.parametrize("engine, params, message", [
    ("lightgbm", {"max_bin": -5}, r"^LightGBM refuses the parameter max_bin=-5: Check failed: \(max_bin\) > \(1\)$"),
    ("lightgbm", {"num_leaves": "abc"},
     r"^LightGBM refuses the parameter num_leaves='abc': Parameter num_leaves should be of type int, got \"abc\"$"),
    ("lightgbm", {"learning_rate": "fast"},
     r"^LightGBM refuses the parameter learning_rate='fast': Unknown token fast"),
    ("lightgbm", {"min_child_samples": -1},
     r"^LightGBM refuses the parameter min_child_samples=-1 \(LightGBM's min_data_in_leaf\): Check failed: "
     r"\(min_data_in_leaf\) >= \(0\)$"),
    ("lightgbm", {"max_bins": 1},
     r"^LightGBM refuses the parameter max_bins=1 \(LightGBM's max_bin\): Check failed: \(max_bin\) > \(1\)$"),
    ("xgboost", {"max_bin": -5},
     r"^XGBoost refuses the parameter max_bin=-5: value -5 for Parameter max_bin should be greater equal to 2$"),
    ("xgboost", {"tree_method": "bogus"},
     r"^XGBoost refuses the parameter tree_method='bogus': Invalid Input: 'bogus'"),
    ("xgboost", {"subsample": 2.0},
     r"^XGBoost refuses the parameter subsample=2.0: value 2 for Parameter subsample exceed bound \[0,1\]$"),
])
@pytest.mark.parametrize("objective", ["plrank", "builtin"])
def test_bad_engine_parameters_raise_one_line_naming_them(engine, params, message, objective, capfd):
    data = with_long_query(30)
    chosen = PLRank() if objective == "plrank" else {"lightgbm": "lambdarank", "xgboost": "rank:ndcg"}[engine]
    with pytest.raises(ValueError, match=message) as raised:
        train(engine, chosen, data, data, rounds=2, engine_params=params)
    assert "\n" not in str(raised.value)
    if engine == "lightgbm" and "Check failed" in message:
        assert "[LightGBM] [Fatal]" not in capfd.readouterr().err  # LightGBM's own echo of the error is dropped


def test_engine_message_keeps_the_first_line_without_source_positions():
    assert engine_message(ValueError("[10:47:50] /__w/xgboost/src/metric/metric.cc:49: Unknown metric function x\n"
                                     "Stack trace:\n  [bt] (0) libxgboost.so")) == "Unknown metric function x"
    assert engine_message(ValueError("Check failed: (max_bin) > (1) at /__w/LightGBM/src/io/config_auto.cpp, "
                                     "line 527 .\n")) == "Check failed: (max_bin) > (1)"


@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
@pytest.mark.parametrize("which, given", [("train_data", "tuple"), ("train_data", "list"), ("valid_data", "ndarray")])
def test_data_that_is_not_a_ranking_dataset_is_refused_by_type(engine, which, given):
    from plboost.data import make_synthetic
    from plboost.errors import InputTypeError

    good = make_synthetic(n_queries=6, n_features=3, seed=4)
    arrays = {"tuple": (good.X, good.labels, good.group_sizes), "list": [good.X, good.labels],
              "ndarray": good.X}[given]
    data = {"train_data": arrays, "valid_data": good} if which == "train_data" else {"train_data": good,
                                                                                     "valid_data": arrays}
    kinds = r"OutOfCoreData, a file.s path or a plboost\.clicks\.ClickData" if which == "train_data" \
        else r"OutOfCoreData or a file.s path"  # a click log trains; validation takes labels
    with pytest.raises(InputTypeError, match=rf"^train: {which} must be a plboost\.RankingData, {kinds}, "
                                             rf"got {given}; from arrays X, y and query sizes g: RankingData\(X, y, "):
        train(engine, PLRank(), data["train_data"], data["valid_data"], rounds=1)


@pytest.mark.engine
@pytest.mark.parametrize("name", sorted(_ConfigAliases.get("metric")))
def test_a_metric_under_any_of_lightgbms_names_is_left_to_lightgbm(name):
    """plboost scores a long query itself unless the user names a metric, under whichever of LightGBM's names."""
    data = with_long_query(LIGHTGBM_MAX_QUERY + 1)
    with pytest.raises(ValueError, match=r"^LightGBM's ndcg metric takes queries of at most 10000 documents"):
        train("lightgbm", PLRank(), data, data, rounds=1, engine_params={name: "ndcg"})


@pytest.mark.parametrize("canonical", ["learning_rate", "lambda_l1", "lambda_l2", "max_delta_step"])
def test_exact_leaves_read_the_regularisation_under_every_lightgbm_name(canonical):
    data = with_long_query(30)
    names = sorted(_ConfigAliases.get(canonical))
    assert len(names) >= 2, names  # the table is LightGBM's: every name of the parameter it knows
    for name in names:
        refit = ExactLeafValues(PLRank(), data, params={name: 0.37})
        assert getattr(refit, canonical) == 0.37, name


@pytest.mark.parametrize("canonical, value", [("boosting", "dart"), ("bagging_fraction", 0.5), ("path_smooth", 1.0)])
def test_exact_leaves_refuse_a_setting_under_every_lightgbm_name(canonical, value):
    data = with_long_query(30)
    for name in sorted(_ConfigAliases.get(canonical)):
        for freq in sorted(_ConfigAliases.get("bagging_freq"))[:2]:
            with pytest.raises(ValueError, match=r"^exact leaf values do not support"):
                ExactLeafValues(PLRank(), data, params={name: value, freq: 1})
