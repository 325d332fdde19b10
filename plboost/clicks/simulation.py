"""Simulated click logs: the semi-synthetic protocol of the unbiased learning-to-rank papers.

Joachims, Swaminathan and Schnabel (WSDM 2017, section 6) and Oosterhuis and de Rijke (SIGIR 2020): a logging
ranker, trained on the labels of a small share of the training queries, shows rankings of the training queries;
the clicks on them are drawn from a click model (:mod:`plboost.clicks.models`) and the labels; a ranker is then
learned from the clicks alone and evaluated on the labels of test queries. :func:`simulate_clicks` does the middle
step: given labelled data and the logging ranker's scores, each impression

1. draws a query uniformly, with replacement;
2. shows the top ``top_k`` of a ranking of it: the logging ranker's own (``temperature=0``, ties in random order)
   or one sampled from its Plackett-Luce policy at ``temperature`` (:class:`plboost.policies.PlackettLucePolicy`);
3. draws the clicks of the displayed documents from the click model.

Training the logging ranker is the command's job (``plboost simulate-clicks``). The log keeps the logging
scores, the policy (temperature and cut-off) and every setting and seed in its metadata, not the labels.
"""

from __future__ import annotations

import numpy as np

from .._constraints import SEED, Integer, Real, check
from ..data.ranking_data import RankingData
from ..policies import PlackettLucePolicy
from .log import ClickLog
from .models import PositionBasedModel, relevance_of_labels


def simulate_clicks(data: RankingData, logging_scores, *, n_impressions: int, click_model=None, top_k: int = 10,
                    temperature: float = 0.0, seed: int = 0, max_label: float | None = None) -> ClickLog:
    """A click log of ``n_impressions`` impressions of the queries of ``data``, ranked by ``logging_scores`` (one
    per document) shown deterministically (``temperature=0``) or sampled from their Plackett-Luce policy, cut at
    ``top_k``, clicked as ``click_model`` says (default: :class:`PositionBasedModel`, eta 1, noise 0.1 / 1, graded
    relevance over labels up to ``max_label``, default the data's largest label). The same arguments give the same
    log.

    >>> from plboost.data import make_synthetic
    >>> data = make_synthetic(n_queries=20, docs_per_query=(8, 8), seed=1)
    >>> log = simulate_clicks(data, data.X[:, 0], n_impressions=100, top_k=5, seed=3)
    >>> log  # doctest: +ELLIPSIS
    ClickLog(100 impressions of 20 queries, 160 documents, 500 displayed rows, ... clicks)
    """
    n_impressions = check(n_impressions, Integer(low=1), "n_impressions", "simulate_clicks")
    top_k = check(top_k, Integer(low=1), "top_k", "simulate_clicks")
    temperature = check(temperature, Real(low=0.0), "temperature", "simulate_clicks")
    seed = check(seed, SEED, "seed", "simulate_clicks")
    click_model = PositionBasedModel() if click_model is None else click_model
    if not hasattr(click_model, "draw"):
        raise TypeError(f"simulate_clicks: click_model must be a click model of plboost.clicks.models, got "
                        f"{click_model!r}")
    if not isinstance(data, RankingData):
        raise TypeError(f"simulate_clicks: data must be a RankingData with the labels, got {type(data).__name__}")
    policy = PlackettLucePolicy(logging_scores, data.offsets, temperature=temperature, top_k=top_k)
    largest = float(data.labels.max()) if max_label is None else check(max_label, Real(low=0.0), "max_label")
    relevance = relevance_of_labels(data.labels, max_label=largest, kind=click_model.relevance,
                                    threshold=click_model.threshold)

    rng = np.random.default_rng([seed, 0])  # the queries; the rankings and clicks draw from streams of their own
    query = rng.integers(0, data.n_queries, size=n_impressions)
    counts = np.bincount(query, minlength=data.n_queries)
    shown = policy.top_documents(counts, seed=seed)  # rankings grouped by query
    by_query = np.argsort(query, kind="stable")
    row_of = np.empty(n_impressions, dtype=np.int64)
    row_of[by_query] = np.arange(n_impressions)  # the i-th impression of a query shows its i-th ranking
    shown = shown[row_of]

    displayed = np.where(shown >= 0, relevance[np.maximum(shown, 0)], np.nan)
    uniforms = np.random.default_rng([seed, 1]).random((n_impressions, policy.top_k * click_model.uniforms_per_rank))
    clicks = click_model.draw(displayed, uniforms)

    impression, rank = np.nonzero(shown >= 0)
    X = data.X.toarray() if hasattr(data.X, "toarray") else np.asarray(data.X)
    metadata = {"made_by": "plboost.clicks.simulate_clicks", "seed": seed, "n_impressions": n_impressions,
                "logging": {"temperature": temperature, "top_k": top_k}, **click_model.settings(),
                "max_label": largest, "source": None if data.source is None else str(data.source)}
    return ClickLog(X, data.qids, data.offsets, _within_query(data.offsets), impression.astype(np.int64),
                    shown[impression, rank], (rank + 1).astype(np.int32), clicks[impression, rank],
                    data.feature_names, policy.scores.copy(), None, metadata)


def _within_query(offsets: np.ndarray) -> np.ndarray:
    """Each document's index within its query: its id in a simulated log."""
    return np.arange(offsets[-1]) - np.repeat(offsets[:-1], np.diff(offsets))
