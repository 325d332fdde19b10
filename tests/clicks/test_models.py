"""Click models: relevance from labels, and clicks drawn with the probabilities each model's definition gives."""

import numpy as np
import pytest

from plboost.clicks.models import CascadeModel, PositionBasedModel, relevance_of_labels


def test_graded_and_binary_relevance():
    labels = np.array([0, 1, 2, 3, 4.0])
    np.testing.assert_allclose(relevance_of_labels(labels, max_label=4), [0, 1 / 15, 3 / 15, 7 / 15, 1])
    np.testing.assert_allclose(relevance_of_labels(labels[:3], max_label=2), [0, 1 / 3, 1])
    np.testing.assert_array_equal(relevance_of_labels(labels, max_label=4, kind="binary", threshold=3), [0, 0, 0, 1, 1])
    np.testing.assert_array_equal(relevance_of_labels(labels, max_label=0), 0.0)


def z_scores(clicks, probabilities):
    """(observed - expected) / standard error of the click rate at each rank, over the impressions."""
    n = clicks.shape[0]
    expected = probabilities.mean(axis=0)
    spread = np.sqrt(np.maximum(expected * (1 - expected), 1e-12) / n)
    return (clicks.mean(axis=0) - expected) / spread


@pytest.mark.parametrize("model", [PositionBasedModel(), PositionBasedModel(eta=2.0, negative_noise=0.05),
                                   PositionBasedModel.trust_bias(eta=1.0, top_k=6)], ids=repr)
def test_position_based_clicks_have_the_affine_probabilities(model):
    rng = np.random.default_rng(1)
    relevance = rng.choice([0.0, 0.2, 1.0], size=(40_000, 6))
    relevance[:, 5][rng.random(40_000) < 0.3] = np.nan  # short lists
    alpha, beta = model.affine(6)
    theta = (1 / np.arange(1, 7)) ** model.eta
    positive = np.broadcast_to(np.atleast_1d(model.positive_noise), (6,)) if np.isscalar(model.positive_noise) \
        else np.array(model.positive_noise)
    np.testing.assert_allclose(alpha + beta, theta * positive)  # a relevant document at rank k: theta_k eps+_k
    want = np.where(np.isnan(relevance), 0.0, alpha * np.nan_to_num(relevance) + beta)
    clicks = model.draw(relevance, rng.random(relevance.shape))
    assert np.abs(z_scores(clicks, want)).max() < 4.5
    assert clicks[np.isnan(relevance)].sum() == 0


def test_trust_bias_noise_is_vardasbis():
    model = PositionBasedModel.trust_bias(top_k=3)
    alpha, beta = model.affine(3)
    ranks = np.arange(1, 4)
    np.testing.assert_allclose(beta, (1 / ranks) * 0.65 / ranks)
    np.testing.assert_allclose(alpha, (1 / ranks) * (0.98 - (ranks - 1) / 100 - 0.65 / ranks))


def cascade_click_probabilities(relevance, model):
    """P(click at rank j) of one list, written from the definition: examined w.p. e_j, clicked w.p. gamma_j;
    after a click go on w.p. continuation / j^eta, after none always."""
    result, examined = [], 1.0
    for j, r in enumerate(relevance, start=1):
        gamma = model.negative_noise + (model.positive_noise - model.negative_noise) * r
        result.append(examined * gamma)
        examined = examined * (1 - gamma) + examined * gamma * model.continuation * (1 / j) ** model.eta
    return np.array(result)


@pytest.mark.parametrize("model", [CascadeModel(), CascadeModel(continuation=0.6, eta=0.5)], ids=repr)
def test_cascade_clicks_follow_the_scan(model):
    rng = np.random.default_rng(2)
    lists = np.array([[0.0, 1.0, 0.3, 0.0, 1.0], [1.0, 1.0, 0.0, 0.5, 0.0]])
    which = rng.integers(0, 2, size=30_000)
    relevance = lists[which]
    clicks = model.draw(relevance, rng.random((30_000, 10)))
    want = np.array([cascade_click_probabilities(row, model) for row in lists])[which]
    assert np.abs(z_scores(clicks, want)).max() < 4.5
    if model.continuation == 0:
        assert clicks.sum(axis=1).max() == 1


@pytest.mark.parametrize("make, message", [
    (lambda: PositionBasedModel(eta=-1.0), r"PositionBasedModel: eta must be a finite number >= 0"),
    (lambda: PositionBasedModel(positive_noise=1.5), r"positive_noise must be a probability in \[0, 1\]"),
    (lambda: PositionBasedModel(positive_noise=0.1, negative_noise=0.2), r"positive_noise must exceed"),
    (lambda: PositionBasedModel(relevance="ternary"), r"relevance must be one of"),
    (lambda: CascadeModel(continuation=2.0), r"CascadeModel: continuation must be a finite number in \[0, 1\]"),
    (lambda: CascadeModel(positive_noise=0.1, negative_noise=0.1), r"positive_noise must exceed"),
])
def test_bad_settings_are_refused_naming_them(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_an_examination_table_replaces_the_power_law():
    model = PositionBasedModel(examination_table=(0.68, 0.61, 0.48), negative_noise=0.1)
    np.testing.assert_allclose(model.examination(5), [0.68, 0.61, 0.48, 0.48, 0.48])
    alpha, beta = model.affine(2)
    np.testing.assert_allclose(alpha, [0.68 * 0.9, 0.61 * 0.9])
    np.testing.assert_allclose(beta, [0.068, 0.061])
    with pytest.raises(ValueError, match=r"examination_table must be a probability in \[0, 1\] or one per rank"):
        PositionBasedModel(examination_table=(1.2, 0.5))
