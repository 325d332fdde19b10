"""Training on real data (MQ2008 Fold1): PLRank against the engines' own ranking objectives."""

import subprocess
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
