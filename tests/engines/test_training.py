"""Training on real data (MQ2008 Fold1): PLRank against the engines' own ranking objectives."""

import subprocess
import warnings
import sys

import numpy as np
import pytest

from plboost import metrics
from plboost.engines import load_model, resolve_objective, train
from plboost.objectives import PLRank

ROUNDS = 100
TREE_PARAMS = dict(rounds=ROUNDS, learning_rate=0.1, num_leaves=31)


def ndcg_at_10(model, data):
    return metrics.ndcg(model.predict(data.X), data.labels, offsets=data.offsets, k=10)


@pytest.mark.engine
@pytest.mark.parametrize("engine, baseline", [("lightgbm", "lambdarank"), ("xgboost", "rank:ndcg")])
def test_plrank_is_on_par_with_the_engines_lambdarank(mq2008, engine, baseline):
    train_data, _, test_data = mq2008
    plrank = train(engine, PLRank(top_k=10), train_data, **TREE_PARAMS)
    reference = train(engine, baseline, train_data, **TREE_PARAMS)
    untrained = metrics.ndcg(np.zeros(test_data.n_docs), test_data.labels, offsets=test_data.offsets, k=10)
    ours, theirs = ndcg_at_10(plrank, test_data), ndcg_at_10(reference, test_data)
    assert plrank.rounds == reference.rounds == ROUNDS
    assert abs(ours - theirs) < 0.02, (ours, theirs)
    assert ours > untrained + 0.05, (ours, untrained)


@pytest.mark.engine
@pytest.mark.parametrize("engine, suffix", [("lightgbm", ".txt"), ("xgboost", ".json"), ("xgboost", ".ubj")])
def test_saved_model_predicts_without_plboost(mq2008, tmp_path, engine, suffix):
    train_data, _, test_data = mq2008
    model = train(engine, PLRank(top_k=10, n_permutations=2), train_data, rounds=20)
    path = tmp_path / f"model{suffix}"
    model.save(path)
    np.save(tmp_path / "X.npy", test_data.X)
    if engine == "lightgbm":
        predict = "import lightgbm; p = lightgbm.Booster(model_file=path).predict(X, raw_score=True)"
    else:
        predict = ("import xgboost; b = xgboost.Booster(model_file=path); "
                   "p = b.predict(xgboost.DMatrix(X), output_margin=True)")
    script = (f"import sys, numpy as np; path = {str(path)!r}; X = np.load({str(tmp_path / 'X.npy')!r}); "
              f"{predict}; assert not any(m.startswith('plboost') for m in sys.modules); "
              f"np.save({str(tmp_path / 'p.npy')!r}, p)")
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path)
    elsewhere = np.load(tmp_path / "p.npy")
    np.testing.assert_allclose(elsewhere, model.predict(test_data.X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(load_model(path).predict(test_data.X), elsewhere, rtol=1e-6, atol=1e-6)


@pytest.mark.engine
@pytest.mark.parametrize("engine", ["lightgbm", "xgboost"])
def test_early_stopping_keeps_the_best_rounds(mq2008, engine):
    train_data, valid_data, _ = mq2008
    model = train(engine, PLRank(top_k=10), train_data, valid_data, rounds=300, learning_rate=0.3,
                  early_stopping=10)
    assert model.best_iteration is not None and model.trees_used == model.best_iteration
    assert model.rounds <= 300 and len(model.valid_history) == model.rounds
    best = int(np.argmax(model.valid_history)) + 1
    assert model.best_iteration == best
    valid_ndcg = metrics.ndcg(model.predict(valid_data.X), valid_data.labels, offsets=valid_data.offsets, k=10)
    assert valid_ndcg == pytest.approx(model.valid_history[best - 1], abs=1e-6)


def test_objective_names_resolve_per_engine():
    assert resolve_objective("lambdarank", "lightgbm", {"lambdarank_truncation_level": 20}) == \
        ("lambdarank", {"lambdarank_truncation_level": 20})
    assert isinstance(resolve_objective("plrank", "xgboost", {"top_k": 3})[0], PLRank)
    with pytest.raises(ValueError, match="unknown objective 'lambdarank' for xgboost"):
        resolve_objective("lambdarank", "xgboost")
    with pytest.raises(ValueError, match="unknown engine"):
        resolve_objective("plrank", "lightgbn")


#: table columns that neither engine can store as they are (spaces, LightGBM's JSON characters, XGBoost's [ ] <)
AWKWARD_COLUMNS = ["bm25 title", "tf[idf]", "clicks,7d", "ctr%", "len<100", "pagerank:log", "naïve"]


@pytest.mark.engine
@pytest.mark.parametrize("engine, objective, suffix", [("lightgbm", "plrank", ".txt"), ("xgboost", "plrank", ".ubj"),
                                                       ("catboost", "YetiRank", ".cbm")])
def test_a_model_of_a_table_keeps_its_columns_and_finds_them_by_name(tmp_path, engine, objective, suffix):
    """Trained on data from a DataFrame, a model (and the file it is saved to) keeps the columns' names; a frame or
    table of the same columns in another order scores the same, validation data included, and one with a column
    missing or extra is refused, naming it."""
    import pandas as pd

    from plboost.data import RankingData, make_synthetic

    if engine == "catboost":
        pytest.importorskip("catboost")
    data = make_synthetic(n_queries=40, n_features=len(AWKWARD_COLUMNS), seed=5)
    frame = pd.DataFrame(data.X, columns=AWKWARD_COLUMNS)
    frame.insert(0, "label", data.labels)
    frame.insert(0, "qid", np.repeat(data.qids, data.group_sizes))
    order = ["label", "qid", *[AWKWARD_COLUMNS[i] for i in (4, 0, 6, 2, 5, 1, 3)]]
    table, shuffled = RankingData.from_pandas(frame), RankingData.from_pandas(frame[order])
    trained_objective = PLRank(n_permutations=2) if objective == "plrank" else objective
    settings = dict(rounds=4) if engine == "catboost" else dict(rounds=4, num_leaves=7)
    model = train(engine, trained_objective, table, table, **settings)
    assert model.feature_names == tuple(AWKWARD_COLUMNS)
    # validation data in another order are matched to the training columns: the same validation curve
    assert train(engine, trained_objective, table, shuffled, **settings).valid_history == model.valid_history
    model.save(tmp_path / f"model{suffix}")
    saved = load_model(tmp_path / f"model{suffix}")
    assert saved.feature_names == tuple(AWKWARD_COLUMNS)
    expected = model.predict(table.X)
    for scorer in (model, saved):
        for X in (shuffled, frame[order[2:]], table):
            assert np.array_equal(scorer.predict(X), expected)
    missing, extra = frame[order[3:]], frame[order[2:]].assign(doc_id=1.0)
    with pytest.raises(ValueError, match=r"^X: the feature columns differ from those of the model \('len<100' "
                                         r"missing\); a model scores the columns it was trained on, found by name$"):
        saved.predict(missing)
    with pytest.raises(ValueError, match=r"\('doc_id' not in the model\)"):
        model.predict(extra)


def _few_long_queries(n_queries, size, seed=3):
    from plboost.data import RankingData

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * size, 4)).astype(np.float32)
    labels = np.clip(np.round(X[:, 0] + 0.7 * rng.normal(size=len(X)) + 1), 0, 4)
    return RankingData(X=X, labels=labels, qids=np.arange(n_queries), offsets=np.arange(n_queries + 1) * size)


@pytest.mark.engine
@pytest.mark.parametrize("objective, n_queries, size", [
    ("listnet", 1, 3000), ("pl_rank3", 1, 3000), ("yetirank", 1, 3000), ("pa_listmle", 1, 3000),
    ("listnet", 2, 300), ("pl_rank3", 3, 200)])
def test_xgboost_says_when_min_child_weight_leaves_a_listwise_objective_no_split(objective, n_queries, size):
    """XGBoost's min_child_weight (1) is a sum of hessians, and these objectives' sum to about one per query: on
    few queries it blocks every split, silently in XGBoost; plboost says so, and the advice it gives trains."""
    from plboost.objectives import get_objective

    data = _few_long_queries(n_queries, size)
    with pytest.warns(UserWarning, match=r"XGBoost grew no split in 4 trees with .*min_child_weight=1 .*sum to "):
        stumps = train("xgboost", get_objective(objective), data, rounds=4)
    assert all("[" not in tree for tree in stumps.booster.get_dump())
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        lowered = train("xgboost", get_objective(objective), data, rounds=4,
                        engine_params={"min_child_weight": 1e-3})
        train("xgboost", "rank:ndcg", data, rounds=2)
    assert any("[" in tree for tree in lowered.booster.get_dump())
