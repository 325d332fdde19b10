"""plboost.sklearn.Ranker: scikit-learn's estimator checks, GridSearchCV with GroupKFold, pickles, and the same
models as the engines' own training calls."""

import io
import pickle
import subprocess
import sys
import warnings

import joblib
import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import xgboost as xgb
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from plboost import metrics
from plboost.clicks import ClickData, simulate_clicks
from plboost.engines import train
from plboost.data import make_synthetic
from plboost.engines.xgboost import booster_params
from plboost.errors import InvalidParameterError, RankerSetupError
from plboost.objectives import LambdaLoss, PLRank, PLRank3, PositionAwareListMLE, UMart, YetiRank
from plboost.sklearn import Ranker

pytestmark = pytest.mark.engine
ENGINES = ("lightgbm", "xgboost")
SMALL = {"n_estimators": 5}


@pytest.fixture(scope="module")
def small():
    return make_synthetic(n_queries=40, docs_per_query=(5, 20), n_features=6, seed=3)


def _frame(data) -> pd.DataFrame:
    """``data`` as a DataFrame: a qid column (one id per row) and the features f1, f2, ..."""
    frame = pd.DataFrame(data.X, columns=[f"f{i + 1}" for i in range(data.n_features)])
    frame.insert(0, "qid", np.repeat(data.qids, data.group_sizes))
    return frame


class OneQueryRanker(Ranker):
    """The ranker as scikit-learn's estimator checks can call it: they fit and score without queries, so all rows
    are taken as one query when none are given. Everything else is Ranker's own."""

    def fit(self, X, y, **kwargs):
        if kwargs.get("group") is None and kwargs.get("qid") is None and y is not None:
            kwargs["group"] = [len(y)]
        return super().fit(X, y, **kwargs)

    def score(self, X, y, **kwargs):
        if kwargs.get("group") is None and kwargs.get("qid") is None:
            kwargs["group"] = [len(y)]
        return super().score(X, y, **kwargs)


@pytest.mark.parametrize("engine", ENGINES)
def test_scikit_learns_estimator_checks(engine):
    """Every estimator check of scikit-learn passes (array-API input is skipped by scikit-learn itself unless
    SCIPY_ARRAY_API is set); a failure names the check."""
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(OneQueryRanker(engine=engine, n_estimators=3, min_data_in_leaf=1,
                                                 **({"min_data_in_bin": 1} if engine == "lightgbm" else {})),
                                  on_fail=None)
    failed = {r["check_name"]: str(r["exception"])[:200] for r in results if r["status"] == "failed"}
    assert not failed
    assert sum(r["status"] == "passed" for r in results) >= 35


@pytest.mark.parametrize("engine", ENGINES)
def test_grid_search_over_learning_rates_with_group_kfold(mq2008, engine):
    """GridSearchCV, GroupKFold over query ids, MQ2008 Fold1, a DataFrame whose qid column gives the queries to
    fit and to score (GridSearchCV hands score nothing else): the best score is the mean NDCG@10 of its folds,
    recomputed here by hand for the chosen learning rate."""
    train = mq2008[0]
    frame = _frame(train)
    ranker = Ranker(PLRank(), engine, n_estimators=8)
    search = GridSearchCV(ranker, {"learning_rate": [0.05, 0.3]}, cv=GroupKFold(n_splits=3))
    search.fit(frame, train.labels, groups=frame["qid"])
    assert set(search.cv_results_["param_learning_rate"]) == {0.05, 0.3}
    assert search.best_estimator_.learning_rate == search.best_params_["learning_rate"]
    fold_scores = []
    for train_rows, test_rows in GroupKFold(n_splits=3).split(frame, train.labels, frame["qid"]):
        fitted = clone(search.best_estimator_).fit(frame.iloc[train_rows], train.labels[train_rows])
        test = frame.iloc[test_rows]
        scores = fitted.predict(test)
        _, offsets = np.unique(test["qid"].to_numpy(), return_index=True)
        offsets = np.append(np.sort(offsets), len(test_rows))
        fold_scores.append(metrics.ndcg(scores, train.labels[test_rows], offsets=offsets, k=10))
    assert search.best_score_ == pytest.approx(np.mean(fold_scores), abs=1e-12)
    assert 0.3 < search.best_score_ < 1.0


def test_grid_search_with_metadata_routing(small):
    """With scikit-learn's metadata routing, a qid array is routed to fit and to score."""
    import sklearn

    qid = np.repeat(small.qids, small.group_sizes)
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = Ranker(PLRank(), **SMALL).set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(ranker, {"objective__top_k": [3, 10]}, cv=GroupKFold(n_splits=2))
        search.fit(small.X, small.labels, groups=qid, qid=qid)
    assert search.best_params_["objective__top_k"] in (3, 10)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


@pytest.mark.parametrize("objective", [PLRank(n_permutations=2, seed=4), UMart(window=2),
                                       PLRank3(n_samples=10, seed=4)], ids=["plrank", "umart", "pl_rank3"])
def test_the_xgboost_ranker_trains_the_model_xgb_train_trains(small, objective):
    """Ranker(engine="xgboost") and xgb.train(obj=...) with the same tree parameters give the same model."""
    ranker = Ranker(objective, "xgboost", n_estimators=6, learning_rate=0.2, num_leaves=7, random_state=1)
    ranker.fit(small.X, small.labels, group=small.group_sizes)
    params = booster_params(objective, num_leaves=7, learning_rate=0.2, seed=1)
    dtrain = xgb.DMatrix(small.X, small.labels, group=small.group_sizes)
    booster = xgb.train(params, dtrain, num_boost_round=6, obj=clone(objective))
    np.testing.assert_array_equal(ranker.predict(small.X),
                                  booster.predict(xgb.DMatrix(small.X), output_margin=True))


def test_the_lightgbm_ranker_trains_the_model_lgb_train_trains(small):
    objective = PLRank(n_permutations=2, seed=4)
    ranker = Ranker(objective, "lightgbm", n_estimators=6, learning_rate=0.2, num_leaves=7, min_data_in_leaf=5)
    ranker.fit(small.X, small.labels, group=small.group_sizes)
    params = {"objective": clone(objective), "learning_rate": 0.2, "num_leaves": 7, "min_data_in_leaf": 5,
              "seed": 0, "verbosity": -1}
    booster = lgb.train(params, lgb.Dataset(small.X, small.labels, group=small.group_sizes), num_boost_round=6)
    np.testing.assert_array_equal(ranker.predict(small.X), booster.predict(small.X, raw_score=True))


@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_a_ranker_fits_a_click_log_as_the_engines_helper_trains_it(small, engine):
    """Ranker.fit(ClickData) trains the model plboost.engines.train trains from the same log, and scores arrays."""
    log = simulate_clicks(small, small.X[:, 0], n_impressions=800, top_k=5, temperature=1.0, seed=6)
    clicks = ClickData(log, "policy_aware")
    objective = PLRank3(gain="estimate", normalize=False, n_samples=10)
    ranker = Ranker(objective, engine, n_estimators=5, num_leaves=7).fit(clicks)
    trained = train(engine, clone(objective), clicks, rounds=5, num_leaves=7, progress=False)
    np.testing.assert_array_equal(ranker.predict(small.X), trained.predict(small.X))
    assert ranker.n_features_in_ == small.n_features
    with pytest.raises(ValueError, match="a ClickData holds its queries and relevance estimates; give no y, group"):
        Ranker(objective, engine).fit(clicks, small.labels, group=small.group_sizes)
    with pytest.raises(ValueError, match="from a click log., which '(lambdarank|rank:ndcg)' cannot"):
        Ranker("lambdarank" if engine == "lightgbm" else "rank:ndcg", engine).fit(clicks)


@pytest.mark.parametrize("objective", [PLRank(n_permutations=2), PLRank3(n_samples=10), YetiRank(permutations=3),
                                       LambdaLoss(mu=2.0)], ids=["plrank", "pl_rank3", "yetirank", "lambdaloss"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_fitted_ranker_pickles_clones_and_fits_in_a_pipeline(small, engine, objective):
    ranker = Ranker(objective, engine, **SMALL)
    ranker.fit(small.X, small.labels, group=small.group_sizes)
    expected = ranker.predict(small.X)
    buffer = io.BytesIO()
    joblib.dump(ranker, buffer)
    buffer.seek(0)
    for restored in (pickle.loads(pickle.dumps(ranker)), joblib.load(buffer)):
        np.testing.assert_array_equal(restored.predict(small.X), expected)
    unfitted = clone(ranker)
    assert not hasattr(unfitted, "booster_") and unfitted.get_params() == ranker.get_params()
    assert unfitted.objective == ranker.objective and unfitted.objective is not ranker.objective
    pipeline = make_pipeline(StandardScaler(), Ranker(clone(objective), engine, **SMALL))
    pipeline.fit(small.X, small.labels, ranker__group=small.group_sizes)
    assert pipeline.predict(small.X).shape == (small.n_docs,)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_ranker_with_explicit_position_weights_pickles_clones_and_changes_them(small, engine):
    """PositionAwareListMLE's weights are tied to top_k: a Ranker carries them through pickles and clones,
    set_params changes both at once, and a grid over the weightings trains each."""
    ranker = Ranker(PositionAwareListMLE(top_k=3, position_weights=[1.0, 0.5, 0.25]), engine, **SMALL)
    ranker.fit(small.X, small.labels, group=small.group_sizes)
    expected = ranker.predict(small.X)
    restored = pickle.loads(pickle.dumps(ranker))
    assert restored.objective_.position_weights == (1.0, 0.5, 0.25)
    np.testing.assert_array_equal(restored.predict(small.X), expected)
    unfitted = clone(ranker)
    assert unfitted.objective == ranker.objective and unfitted.objective is not ranker.objective
    unfitted.set_params(objective__top_k=2, objective__position_weights=(1.0, 0.0))
    assert unfitted.objective == PositionAwareListMLE(top_k=2, position_weights=(1.0, 0.0))
    with pytest.raises(ValueError, match="position_weights must hold top_k = 5 weights, got 2"):
        unfitted.set_params(objective__top_k=5)
    changed = unfitted.fit(small.X, small.labels, group=small.group_sizes).predict(small.X)
    assert not np.allclose(changed, expected)
    search = GridSearchCV(Ranker(PositionAwareListMLE(), engine, **SMALL),
                          {"objective__position_weights": ["exponential", "dcg"]}, cv=GroupKFold(n_splits=2))
    frame = _frame(small)  # the qid column gives the queries of each fold to fit and to score
    search.fit(frame, small.labels, groups=frame["qid"])
    assert search.best_params_["objective__position_weights"] in ("exponential", "dcg")
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_the_objective_given_is_not_changed_and_engine_params_are_parameters(small):
    objective = PLRank(n_permutations=2)
    ranker = Ranker(objective, n_estimators=3, min_data_in_leaf=5).fit(small.X, small.labels, group=small.group_sizes)
    assert ranker.objective is objective and not objective._states
    assert ranker.objective_ == objective and ranker.objective_ is not objective
    assert ranker.get_params()["min_data_in_leaf"] == 5 and ranker.get_params()["objective__n_permutations"] == 2
    ranker.set_params(min_data_in_leaf=7, max_bin=15, objective__top_k=3)
    assert ranker.get_params()["max_bin"] == 15 and objective.top_k == 3
    assert "max_bin=15" in repr(ranker)


@pytest.mark.parametrize("engine, builtin", [("lightgbm", "lambdarank"), ("xgboost", "rank:ndcg")])
def test_the_engines_own_objectives_by_name(small, engine, builtin):
    ranker = Ranker(builtin, engine, **SMALL).fit(small.X, small.labels, group=small.group_sizes)
    assert ranker.objective_ == builtin
    assert ranker.score(small.X, small.labels, group=small.group_sizes) > 0.5
    with pytest.raises(ValueError, match="unknown objective"):
        Ranker("rank:ndcg" if engine == "lightgbm" else "lambdarank", engine).fit(small.X, small.labels,
                                                                                  group=small.group_sizes)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_ranker_fitted_on_a_dataframe_keeps_its_column_names_in_the_booster(small, engine, tmp_path):
    """The booster of a Ranker fitted on a DataFrame keeps its columns (awkward names included), so the model file
    scores tables by name; the Ranker itself refuses columns in another order or missing, as scikit-learn does."""
    from plboost._engine_registry import get_engine
    from plboost.engines import load_model

    names = [f"signal {j}[{j % 3}]" for j in range(small.n_features)]
    frame = pd.DataFrame(small.X, columns=names).assign(qid=np.repeat(small.qids, small.group_sizes))
    ranker = Ranker(PLRank(n_permutations=2), engine, **SMALL).fit(frame, small.labels)
    path = tmp_path / ("model.txt" if engine == "lightgbm" else "model.json")
    get_engine(engine).save(ranker.booster_, path, ranker.n_iter_)
    saved = load_model(path)
    assert saved.feature_names == tuple(names)
    shuffled = frame[["qid", *names[::-2], *names[-2::-2]]]
    np.testing.assert_array_equal(saved.predict(shuffled.drop(columns="qid")), ranker.predict(frame))
    with pytest.raises(ValueError, match="Feature names must be in the same order as they were in fit"):
        ranker.predict(shuffled)
    with pytest.raises(ValueError, match=r"Feature names seen at fit time, yet now missing:\n- signal 1\[1\]"):
        ranker.predict(frame.drop(columns=names[1]))


@pytest.mark.parametrize("engine", ENGINES)
def test_early_stopping_keeps_the_best_round(mq2008, engine):
    train, valid, test = mq2008
    ranker = Ranker(PLRank(), engine, n_estimators=60, learning_rate=0.3)
    ranker.fit(train.X, train.labels, group=train.group_sizes, eval_set=[(valid.X, valid.labels)],
               eval_group=[valid.group_sizes], early_stopping_rounds=5)
    history = ranker.evals_result_["valid"]["ndcg@10"]
    assert ranker.best_iteration_ == ranker.n_iter_ == int(np.argmax(history)) + 1 < len(history) <= 60
    assert ranker.feature_importances_.shape == (train.n_features,) and ranker.feature_importances_.sum() > 0
    gains = clone(ranker).set_params(importance_type="gain")
    gains.fit(train.X, train.labels, qid=np.repeat(train.qids, train.group_sizes), eval_set=(valid.X, valid.labels),
              eval_qid=np.repeat(valid.qids, valid.group_sizes), early_stopping_rounds=5)
    assert np.all(gains.feature_importances_ >= 0) and gains.feature_importances_.sum() > 0
    assert gains.score(test.X, test.labels, group=test.group_sizes) == pytest.approx(
        ranker.score(test.X, test.labels, group=test.group_sizes))


def test_bad_queries_are_refused_clearly(small):
    X, y, sizes = small.X, small.labels, small.group_sizes
    qid = np.repeat(small.qids, sizes)
    with pytest.raises(RankerSetupError, match="needs the queries: group="):
        Ranker(**SMALL).fit(X, y)
    with pytest.raises(ValueError, match="not both"):
        Ranker(**SMALL).fit(X, y, group=sizes, qid=qid)
    shuffled = qid.copy()
    shuffled[[0, -1]] = shuffled[[-1, 0]]
    with pytest.raises(ValueError, match="row"):
        Ranker(**SMALL).fit(X, y, qid=shuffled)
    with pytest.raises(ValueError, match="given twice"):
        Ranker(**SMALL).fit(_frame(small), y, qid=qid)
    with pytest.raises(ValueError, match="one validation set"):
        Ranker(**SMALL).fit(X, y, group=sizes, eval_set=[(X, y), (X, y)], eval_group=[sizes, sizes])
    one_query = Ranker(**SMALL).fit(X, y, group=sizes, eval_set=(X[:sizes[0]], y[:sizes[0]]), eval_group=[sizes[0]])
    assert len(one_query.evals_result_["valid"]["ndcg@10"]) == SMALL["n_estimators"]
    with pytest.raises(ValueError, match="one evaluation set, got 2"):
        Ranker(**SMALL).fit(X, y, group=sizes, eval_set=[(X, y)], eval_group=[sizes, sizes])
    with pytest.raises(ValueError, match="needs an eval_set"):
        Ranker(**SMALL).fit(X, y, group=sizes, early_stopping_rounds=3)
    with pytest.raises(ValueError, match="^Ranker: n_estimators must be an integer >= 1, got 0$"):
        Ranker(n_estimators=0).fit(X, y, group=sizes)
    with pytest.raises(ValueError, match="labels"):
        Ranker(**SMALL).fit(X, y - 5, group=sizes)
    with pytest.raises(ValueError, match="importance_type"):
        _ = Ranker(importance_type="cover", **SMALL).fit(X, y, group=sizes).feature_importances_


class CountingRanker(Ranker):
    """A Ranker that counts its fits and scores (class-wide: a search fits clones)."""

    calls: list = []

    def fit(self, X, y, **params):
        CountingRanker.calls.append("fit")
        return super().fit(X, y, **params)

    def score(self, X, y, **params):
        CountingRanker.calls.append("score")
        return super().score(X, y, **params)


@pytest.mark.parametrize("search", ["grid", "cross_val_score"])
def test_a_search_without_queries_stops_at_its_first_fit_or_score_never_at_nan(small, search):
    """A NumPy X with groups= alone (which goes to the splitter) stops at the first fit, and with qid= as a fit
    parameter (which never reaches score without metadata routing) at the first score, each in one line: scikit-learn
    turns an ordinary error of fit or score into a NaN score, and the search had reported a best among NaNs."""
    from sklearn.model_selection import cross_val_score

    qid = np.repeat(small.qids, small.group_sizes)
    cv = GroupKFold(n_splits=4)

    def run(**fit_params):
        if search == "grid":
            return GridSearchCV(CountingRanker(n_estimators=2), {"num_leaves": [3, 6]}, cv=cv).fit(
                small.X, small.labels, groups=qid, **fit_params).best_score_
        return cross_val_score(CountingRanker(n_estimators=2), small.X, small.labels, groups=qid, cv=cv,
                               params=fit_params)

    for fit_params, stops_at in (({}, ["fit"]), ({"qid": qid}, ["fit", "score"])):
        CountingRanker.calls = []
        with pytest.raises(RankerSetupError, match=rf"^{stops_at[-1]}: a ranker needs the queries: group=") as raised:
            run(**fit_params)
        assert CountingRanker.calls == stops_at and "\n" not in str(raised.value)
    frame = _frame(small)
    assert 0 < GridSearchCV(Ranker(n_estimators=2), {"num_leaves": [3, 6]}, cv=cv).fit(
        frame, small.labels, groups=frame["qid"]).best_score_ <= 1  # the qid column: the route that works


def test_arguments_fit_and_score_do_not_take_are_refused_naming_them(small):
    """``fit(sample_weight=...)`` answered with Python's TypeError about an unexpected keyword."""
    X, y, sizes = small.X, small.labels, small.group_sizes
    with pytest.raises(InvalidParameterError, match=r"^Ranker.fit: sample_weight is not taken: plboost's training has "
                                                    r"no sample weights; lgb.LGBMRanker\(objective=PLRank\(\)\)"):
        Ranker(**SMALL).fit(X, y, group=sizes, sample_weight=np.full(len(y), 0.5))
    with pytest.raises(InvalidParameterError, match=r"^Ranker.fit: unknown argument 'eval_sets'; it takes group, qid, "
                                                    r"eval_set, eval_group, eval_qid, early_stopping_rounds, verbose$"):
        Ranker(**SMALL).fit(X, y, group=sizes, eval_sets=[(X, y)])
    fitted = Ranker(**SMALL).fit(X, y, group=sizes)
    with pytest.raises(InvalidParameterError, match=r"^Ranker.score: sample_weight is not taken"):
        fitted.score(X, y, group=sizes, sample_weight=np.ones(len(y)))
    with pytest.raises(InvalidParameterError, match=r"^Ranker.score: unknown argument 'k'; it takes group, qid$"):
        fitted.score(X, y, group=sizes, k=5)


def test_an_objective_parameter_given_beside_an_objective_name_is_refused():
    """Ranker("plrank", top_k=5) trained PLRank with top_k=10 and handed top_k=5 to LightGBM."""
    X, y = np.random.default_rng(0).normal(size=(20, 3)), np.tile([0, 1, 2, 0], 5)
    with pytest.raises(ValueError, match=r"^Ranker: top_k is a parameter of PLRank, not of the engine: pass "
                                         r"objective=PLRank\(top_k=...\) instead of objective='plrank'$"):
        Ranker("plrank", top_k=5).fit(X, y, group=[4] * 5)


@pytest.mark.engine
def test_cross_validation_that_cuts_queries_is_refused_not_inflated():
    """KFold over rows cut queries between training and scoring (0.919 against 0.742 with GroupKFold on MQ2008):
    score() refuses queries trained on with other documents, so GridSearchCV reports the fault, not a number, with
    error_score="raise" or its default, NaN; GroupKFold over qid and scoring the training set itself stay as they
    were."""
    from sklearn.model_selection import GridSearchCV, GroupKFold, KFold

    from plboost.data import make_synthetic
    from plboost.objectives import PLRank

    frame = make_synthetic(n_queries=30, n_features=5, docs_per_query=(5, 20), seed=0).to_pandas()
    X, y = frame.drop(columns="label"), frame["label"]
    search = GridSearchCV(Ranker(PLRank(), n_estimators=3, num_leaves=4), {"learning_rate": [0.1]},
                          cv=KFold(3, shuffle=True, random_state=0), error_score="raise")
    cut = (r"score: \d+ of the \d+ queries scored .* were trained on with other documents of theirs.*GroupKFold with "
           r"groups=qid, or plboost.query_folds")
    with pytest.raises(RankerSetupError, match=cut):
        search.fit(X, y)
    lenient = GridSearchCV(search.estimator, search.param_grid, cv=KFold(3, shuffle=True, random_state=0))
    with pytest.raises(RankerSetupError, match=cut):  # the default error_score=nan: no NaN scores either
        lenient.fit(X, y)
    grouped = GridSearchCV(search.estimator, search.param_grid, cv=GroupKFold(3)).fit(X, y, groups=frame["qid"])
    assert 0 < grouped.best_score_ <= 1
    ranker = Ranker(PLRank(), n_estimators=3, num_leaves=4).fit(X, y)
    assert 0 < ranker.score(X, y) <= 1  # the training queries whole: not a cut


def test_a_core_install_trains_and_the_scikit_learn_api_says_how_to_install_it():
    """Without scikit-learn (an extra, as a plain ``pip install plboost`` leaves it): both engines train a plboost
    objective, and ``plboost.Ranker`` is refused in one line that names the extra. The process starts without
    scikit-learn as every process the tests start does (tests/conftest.py)."""
    code = ("try:\n    import sklearn\nexcept ImportError:\n    print('no scikit-learn')\n"
            "import plboost\n"
            "data = plboost.make_synthetic(n_queries=20, docs_per_query=(3, 9), n_features=4, seed=1)\n"
            "for engine in ('lightgbm', 'xgboost'):\n"
            "    model = plboost.train(engine, plboost.PLRank(), data, rounds=2)\n"
            "    print(engine, model.predict(data.X).shape[0] == data.n_docs)\n"
            "plboost.Ranker\n")
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert completed.stdout.split("\n")[:3] == ["no scikit-learn", "lightgbm True", "xgboost True"], (
        completed.stdout + completed.stderr[-2000:])
    assert completed.returncode == 1
    assert completed.stderr.strip().splitlines()[-1] == (
        "plboost._extras.MissingExtra: plboost.sklearn.Ranker needs scikit-learn: pip install 'plboost[sklearn]'")


@pytest.mark.parametrize("engine", ENGINES)
def test_sample_rankings_are_the_policys_rankings_of_the_scores(small, engine):
    """Ranker.sample_rankings is PlackettLucePolicy(predict(X), the queries, temperature).sample(N, seed): the same
    array whatever form the queries come in, another for another seed, a permutation of ranks per query."""
    from plboost.policies import PlackettLucePolicy

    ranker = Ranker(engine=engine, **SMALL).fit(small.X, small.labels, group=small.group_sizes)
    scores = ranker.predict(small.X)
    ranks = ranker.sample_rankings(small.X, group=small.group_sizes, n_samples=6, temperature=0.7, seed=3)
    assert ranks.dtype == np.int32 and ranks.shape == (6, small.n_docs)
    np.testing.assert_array_equal(ranks, PlackettLucePolicy(scores, small.offsets, temperature=0.7).sample(6, seed=3))
    qid = np.repeat(small.qids, small.group_sizes)
    np.testing.assert_array_equal(ranker.sample_rankings(small.X, qid=qid, n_samples=6, temperature=0.7, seed=3),
                                  ranks)
    framed = Ranker(engine=engine, **SMALL).fit(_frame(small), small.labels)  # the queries of X's qid column
    np.testing.assert_array_equal(framed.sample_rankings(_frame(small), n_samples=6, temperature=0.7, seed=3),
                                  PlackettLucePolicy(framed.predict(_frame(small)), small.offsets,
                                                     temperature=0.7).sample(6, seed=3))
    assert not np.array_equal(ranker.sample_rankings(small.X, group=small.group_sizes, n_samples=6,
                                                     temperature=0.7, seed=4), ranks)
    for q in range(small.n_queries):
        lo, hi = small.offsets[q], small.offsets[q + 1]
        for row in ranks[:, lo:hi]:
            assert sorted(row) == list(range(1, hi - lo + 1)), q
    top = ranker.sample_rankings(small.X, group=small.group_sizes, n_samples=3, seed=5, top_k=4)
    np.testing.assert_array_equal(top, PlackettLucePolicy(scores, small.offsets, top_k=4).sample(3, seed=5))
    for q in range(small.n_queries):
        lo, hi = small.offsets[q], small.offsets[q + 1]
        for row in top[:, lo:hi]:
            assert sorted(row) == [0] * (hi - lo - 4) + [1, 2, 3, 4], q
    # temperature 0: the ranking by score (equal scores next to each other, in the order of the draws)
    zero = ranker.sample_rankings(small.X, group=small.group_sizes, n_samples=3, temperature=0.0, seed=1)
    for q in range(small.n_queries):
        lo, hi = small.offsets[q], small.offsets[q + 1]
        for row in zero[:, lo:hi]:
            assert (np.diff(scores[lo:hi][np.argsort(row)]) <= 0).all(), q


def test_sample_rankings_refuses_bad_arguments_naming_them(small):
    ranker = Ranker(**SMALL).fit(small.X, small.labels, group=small.group_sizes)
    with pytest.raises(RankerSetupError, match="^sample_rankings: a ranker needs the queries: group="):
        ranker.sample_rankings(small.X)
    with pytest.raises(ValueError, match="^sample_rankings: give the queries as group= .sizes. or qid="):
        ranker.sample_rankings(small.X, group=small.group_sizes, qid=np.repeat(small.qids, small.group_sizes))
    for argument, value, wanted in (("n_samples", 0, "an integer >= 1"), ("temperature", -1.0, "a finite number >= 0"),
                                    ("temperature", float("inf"), "a finite number >= 0"),
                                    ("seed", -1, r"an integer in \[0, 2\*\*63\)"),
                                    ("top_k", 0, "an integer >= 1 or None")):
        with pytest.raises(InvalidParameterError, match=f"^Ranker.sample_rankings: {argument} must be {wanted}, got"):
            ranker.sample_rankings(small.X, group=small.group_sizes, **{argument: value})
