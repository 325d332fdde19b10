"""Fairness of exposure of stochastic rankings: what each document and group of documents is shown, and how far
that is from fair.

Exposure. Under a ranking policy (:class:`plboost.policies.PlackettLucePolicy`) and a position-examination model
:math:`\\theta_1 \\ge \\theta_2 \\ge \\dots` (default :math:`1 / \\log_2(1 + j)` over the top k, DCG's discount),
document d's expected exposure is :math:`E_d = \\sum_{j \\le k} P(\\mathrm{rank}_d = j)\\, \\theta_j` (Singh and
Joachims, "Fairness of Exposure in Rankings", KDD 2018). The policy's expected DCG@k is then
:math:`\\sum_d \\rho_d E_d` with gains :math:`\\rho_d = 2^{y_d} - 1`, so :func:`expected_ndcg` is exact wherever
the exposure is.

Disparities, per query (each function returns one value per query, NaN where the query does not define it; the
means in :func:`evaluate_policy` leave those out). Every one is a squared difference, so that it is smooth in
the exposures and an objective can descend the very number reported (:func:`disparity_gradient`):

- ``"demographic_parity"``: groups should get equal mean exposure (Singh and Joachims 2018, Sec. 4.1). With
  :math:`\\mu_a` the mean exposure of group a's documents in the query and m groups present,
  :math:`D = \\frac{1}{P} \\sum_{a < b} (\\mu_a - \\mu_b)^2` over the :math:`P = m(m-1)/2` pairs.
- ``"disparate_treatment"``: groups should get exposure in proportion to their merit (Singh and Joachims 2018,
  Sec. 4.2; the group disparity of FairPG-Rank, Singh and Joachims, NeurIPS 2019): the same with
  :math:`\\mu_a / M_a`, :math:`M_a` the mean merit (gain) of group a's documents; undefined where a present group
  has no merit.
- ``"individual"``: each document's exposure in proportion to its own merit (the individual disparate treatment
  of Singh and Joachims; in this squared form the fairness measure that Oosterhuis, SIGIR 2021, optimises with
  PL-Rank): :math:`D = \\frac{2}{n(n-1)} \\sum_{i < j} (E_i \\rho_j - E_j \\rho_i)^2`; needs no groups.
- ``"expected_exposure"``: the expected-exposure loss of Diaz, Mitra, Ekstrand, Biega and Carterette,
  "Evaluating Stochastically-Ranked Retrieval", CIKM 2020: :math:`\\lVert E - E^* \\rVert^2`, where the target
  :math:`E^*` is the exposure of the ideal policy that ranks by label and orders each label's documents
  uniformly at random (the block of documents of one label, holding ranks a..b, each get the mean of
  :math:`\\theta_a .. \\theta_b`). Diaz et al. use a patience model of examination; any ``examination`` can be
  given here.

Groups are any per-document values (integers, strings); merit is a per-document array of numbers >= 0 (the
objectives take the label's gain).
"""

from __future__ import annotations

import numpy as np

from ._constraints import Integer, Options, Real, check
from ._queries import check_labels, check_scores, offsets_from_boundaries
from .metrics import evaluate
from .policies import PlackettLucePolicy, dcg_examination

#: the disparities this module measures, as :func:`disparity` and :func:`disparity_gradient` name them
DISPARITIES = ("demographic_parity", "disparate_treatment", "individual", "expected_exposure")
#: the disparities that need a group per document
GROUP_DISPARITIES = ("demographic_parity", "disparate_treatment")
#: the merit of a document of label y: 2^y - 1 ("exp", as NDCG's gain) or y ("linear")
MERITS = ("exp", "linear")

__all__ = ["DISPARITIES", "GROUP_DISPARITIES", "check_groups", "disparity", "disparity_gradient",
           "evaluate_policy", "expected_metrics", "expected_ndcg", "group_exposure", "merit_of", "target_exposure"]


def check_groups(groups, n_docs: int, *, name: str = "groups") -> np.ndarray:
    """Each document's group as an int64 code, after checking that there is one per document and none is missing
    (NaN or None): integers from 0 to twice the documents are codes as they are (a code without documents is a group
    absent from every query), other values are numbered 0..G-1 in the order of ``np.unique``."""
    values = np.asarray(groups)
    if values.ndim != 1 or values.size != n_docs:
        raise ValueError(f"{name}: one group per document is needed ({n_docs}), got an array of shape {values.shape}")
    if values.dtype == object:
        missing = np.array([v is None or (isinstance(v, float) and np.isnan(v)) for v in values], dtype=bool)
    elif values.dtype.kind == "f":
        missing = np.isnan(values)
    else:
        missing = np.zeros(values.size, dtype=bool)
    if missing.any():
        raise ValueError(f"{name}: document {int(np.flatnonzero(missing)[0])} has no group ({values[missing][0]!r})")
    if values.dtype.kind in "iu" and values.size and values.min() >= 0 and values.max() <= 2 * n_docs:
        return values.astype(np.int64, copy=False)  # codes already: a group without documents is absent
    try:
        return np.unique(values, return_inverse=True)[1].astype(np.int64).reshape(-1)
    except TypeError as error:
        raise ValueError(f"{name}: groups must be values of one kind that can be ordered ({error})") from None


def merit_of(labels, merit: str = "exp") -> np.ndarray:
    """The merit of each document: its label's gain, ``2^y - 1`` (``"exp"``) or ``y`` (``"linear"``)."""
    merit = check(merit, Options(*MERITS), "merit", "plboost.fairness")
    labels = np.asarray(labels, dtype=np.float64)
    return np.exp2(labels) - 1.0 if merit == "exp" else labels.copy()


def _query_index(offsets: np.ndarray) -> np.ndarray:
    return np.repeat(np.arange(offsets.size - 1), np.diff(offsets))


def group_exposure(exposure, groups, offsets) -> np.ndarray:
    """The mean exposure of each group's documents in each query: a (queries, groups) array, NaN where a query
    has no document of the group."""
    offsets, exposure, codes = _checked(exposure, offsets, groups)
    return _group_means(exposure, codes, offsets)[0]


def _group_means(values, codes, offsets):
    """Per (query, group): the mean of ``values`` (NaN where empty) and the count."""
    n_groups = int(codes.max()) + 1 if codes.size else 0
    cell = _query_index(offsets) * n_groups + codes
    size = (offsets.size - 1) * n_groups
    counts = np.bincount(cell, minlength=size).reshape(-1, n_groups).astype(np.float64)
    sums = np.bincount(cell, weights=values, minlength=size).reshape(-1, n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sums / counts, counts


def target_exposure(labels, offsets, examination=None) -> np.ndarray:
    """Diaz et al.'s target exposure :math:`E^*` of each document: the mean examination of the ranks its label's
    block holds when the query is ranked by label (descending). ``examination``: :math:`\\theta_1 ..` (default
    DCG's discount over every rank); ranks past its end are not examined."""
    offsets = offsets_from_boundaries(offsets, name="offsets")
    labels = _checked_labels(labels, int(offsets[-1]))
    sizes = np.diff(offsets)
    theta = _examination(examination, int(sizes.max()) if sizes.size else 0)
    cumulative = np.r_[0.0, np.cumsum(theta)]
    query = _query_index(offsets)
    order = np.lexsort((-labels, query))  # by query, each query's labels descending
    rank = np.arange(labels.size) - offsets[query[order]]  # the rank each sorted document holds
    sorted_query, sorted_label = query[order], labels[order]
    starts = np.r_[True, (sorted_query[1:] != sorted_query[:-1]) | (sorted_label[1:] != sorted_label[:-1])] \
        if labels.size else np.zeros(0, dtype=bool)
    block = np.cumsum(starts) - 1  # each sorted document's block of one query and label
    first = rank[starts]
    count = np.bincount(block, minlength=first.size)
    block_mean = (cumulative[first + count] - cumulative[first]) / np.maximum(count, 1)
    target = np.empty(labels.size)
    target[order] = block_mean[block]
    return target


def disparity(name: str, exposure, offsets, *, groups=None, merit=None, labels=None, examination=None) -> np.ndarray:
    """Disparity ``name`` (one of :data:`DISPARITIES`, defined in the module docstring) of each query, from each
    document's ``exposure``; NaN where the query does not define it. ``groups`` for the group disparities,
    ``merit`` for "disparate_treatment" and "individual", ``labels`` (and the ``examination`` the exposure was
    computed with) for "expected_exposure"."""
    values, _ = _disparity(name, exposure, offsets, groups, merit, labels, examination, gradient=False)
    return values


def disparity_gradient(name: str, exposure, offsets, *, groups=None, merit=None, labels=None,
                       examination=None, target=None) -> np.ndarray:
    """:math:`\\partial D_q / \\partial E_d` of disparity ``name`` for each document d of each query q (0 in the
    queries that do not define it): what a fairness objective descends through the exposures. ``target``: the
    expected-exposure loss's :func:`target_exposure`, where the caller has it (a function of the labels alone)."""
    _, gradient = _disparity(name, exposure, offsets, groups, merit, labels, examination, gradient=True,
                             target=target)
    return gradient


def _disparity(name, exposure, offsets, groups, merit, labels, examination, *, gradient, target=None):
    name = check(name, Options(*DISPARITIES), "disparity", "plboost.fairness")
    if name in GROUP_DISPARITIES and groups is None:
        raise ValueError(f"plboost.fairness: disparity {name!r} compares groups; pass groups= (one per document)")
    offsets, exposure, codes = _checked(exposure, offsets, groups)
    n_docs = exposure.size
    if name in ("disparate_treatment", "individual"):
        if merit is None:
            raise ValueError(f"plboost.fairness: disparity {name!r} needs merit= (one number >= 0 per document, e.g. "
                             "merit_of(labels))")
        merit = _checked_merit(merit, n_docs)
    if name == "expected_exposure":
        if target is None and labels is None:
            raise ValueError("plboost.fairness: disparity 'expected_exposure' needs labels= (its target ranks by them)")
        if target is None:
            target = target_exposure(labels, offsets, examination)
        return _expected_exposure_loss(exposure, target, offsets)
    if name == "individual":
        return _individual(exposure, merit, offsets)
    return _between_groups(exposure, codes, offsets, merit if name == "disparate_treatment" else None)


def _individual(exposure, merit, offsets):
    """:math:`D = 2 [(\\sum E^2)(\\sum \\rho^2) - (\\sum E \\rho)^2] / (n (n-1))`, the pairs' sum in O(n), and
    :math:`\\partial D / \\partial E_k = 4 (E_k \\sum \\rho^2 - \\rho_k \\sum E \\rho) / (n (n-1))`."""
    sizes = np.diff(offsets)
    query = _query_index(offsets)
    n_queries = sizes.size
    squares = np.bincount(query, weights=exposure ** 2, minlength=n_queries)
    merit_squares = np.bincount(query, weights=merit ** 2, minlength=n_queries)
    cross = np.bincount(query, weights=exposure * merit, minlength=n_queries)
    pairs = sizes * (sizes - 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(sizes > 1, 2.0 * (squares * merit_squares - cross ** 2) / pairs, np.nan)
        factor = np.where(sizes > 1, 4.0 / pairs, 0.0)
    values = np.maximum(values, 0.0, where=~np.isnan(values), out=values)  # rounding of a difference of products
    gradient = factor[query] * (exposure * merit_squares[query] - merit * cross[query])
    return values, gradient


def _between_groups(exposure, codes, offsets, merit):
    """Mean squared difference over the pairs of groups present of ``mu_a`` (or ``mu_a / M_a`` with merit): with
    m groups present, :math:`\\sum_{a<b} (x_a - x_b)^2 = m \\sum x^2 - (\\sum x)^2`, whose derivative in
    :math:`x_a` is :math:`2 (m x_a - \\sum x)`; :math:`\\partial x_a / \\partial E_d = 1 / (|G_a| M_a)`."""
    means, counts = _group_means(exposure, codes, offsets)
    present = counts > 0
    scale = 1.0 / np.where(present, counts, 1.0)
    if merit is not None:
        merit_means, _ = _group_means(merit, codes, offsets)
        meritless = present & ~(merit_means > 0)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = means / merit_means
            scale = scale / merit_means
        present = present & ~meritless.any(axis=1, keepdims=True)
    m = present.sum(axis=1).astype(np.float64)
    x = np.where(present, means, 0.0)
    total = x.sum(axis=1)
    pairs = m * (m - 1.0) / 2.0
    defined = m >= 2
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(defined, (m * (x ** 2).sum(axis=1) - total ** 2) / pairs, np.nan)
        d_x = np.where(present & defined[:, None], 2.0 * (m[:, None] * x - total[:, None]) / pairs[:, None], 0.0)
    values = np.maximum(values, 0.0, where=defined, out=values)
    query = _query_index(offsets)
    d_x = d_x * np.where(present, scale, 0.0)
    return values, d_x[query, codes]


def _expected_exposure_loss(exposure, target, offsets):
    query = _query_index(offsets)
    values = np.bincount(query, weights=(exposure - target) ** 2, minlength=offsets.size - 1)
    return values, 2.0 * (exposure - target)


def expected_ndcg(policy: PlackettLucePolicy, labels, *, k: int = 10, gain: str = "exp", no_relevant: str = "one",
                  method: str = "auto", n_samples: int = 10_000, seed: int = 0) -> np.ndarray:
    """Each query's expected NDCG@k under ``policy``: :math:`\\sum_d \\rho_d E_d / \\mathrm{IDCG@k}` with the
    exposure :math:`E_d` under DCG's discount over the top k (exact where the policy's exposure is; ``method``,
    ``n_samples`` and ``seed`` as :meth:`PlackettLucePolicy.exposure` takes them). ``no_relevant``: the value of
    a query without a relevant document, as :mod:`plboost.metrics` names it (NaN for "exclude")."""
    k = check(k, Integer(low=1), "k", "expected_ndcg")
    gain = check(gain, Options(*MERITS), "gain", "expected_ndcg")
    no_relevant = check(no_relevant, Options("one", "zero", "exclude"), "no_relevant", "expected_ndcg")
    labels = _checked_labels(labels, policy.scores.size)
    exposure = policy.exposure(dcg_examination(k), method=method, n_samples=n_samples, seed=seed).values
    return _expected_ndcg(exposure, labels, policy.offsets, k, gain, no_relevant)


def _expected_ndcg(exposure, labels, offsets, k, gain, no_relevant):
    gains = merit_of(labels, gain)
    query = _query_index(offsets)
    dcg = np.bincount(query, weights=gains * exposure, minlength=offsets.size - 1)
    sizes = np.diff(offsets)
    ranked = np.lexsort((-gains, query))  # by query, each query's gains descending
    rank = np.arange(gains.size) - offsets[query]
    kept = rank < k
    discount = dcg_examination(k)
    ideal = np.bincount(query[kept], weights=gains[ranked][kept] * discount[rank[kept]], minlength=sizes.size)
    empty = {"one": 1.0, "zero": 0.0, "exclude": np.nan}[no_relevant]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, dcg / ideal, empty)


def expected_metrics(policy: PlackettLucePolicy, labels, *, n_samples: int = 100, seed: int = 0,
                     **evaluate_options) -> dict:
    """Every metric of :func:`plboost.metrics.evaluate` (``evaluate_options`` as it takes them) in expectation
    under ``policy``: the mean over ``n_samples`` sampled rankings of whole queries of each metric's mean over the
    queries, as ``name -> (value, standard error)``, the standard error from the spread of the samples' means.
    ERR and MAP are not linear in the rank probabilities, so this samples where :func:`expected_ndcg` need not."""
    n_samples = check(n_samples, Integer(low=2), "n_samples", "expected_metrics")
    labels = _checked_labels(labels, policy.scores.size)
    whole = PlackettLucePolicy(policy.scores, policy.offsets, temperature=policy.temperature, top_k=None)
    ranks = whole.sample(n_samples, seed=seed)
    means: dict[str, list[float]] = {}
    for row in ranks:
        values = evaluate(-row.astype(np.float64), labels, offsets=policy.offsets, **evaluate_options)
        for name, value in values.items():
            if name != "conventions":
                means.setdefault(name, []).append(float(np.nanmean(value)) if np.ndim(value) else float(value))
    return {name: (float(np.mean(v)), float(np.std(v, ddof=1) / np.sqrt(len(v)))) for name, v in means.items()}


def evaluate_policy(scores, labels, offsets, *, groups=None, temperature: float = 1.0, k: int = 10,
                    merit: str = "exp", method: str = "auto", n_samples: int = 10_000, seed: int = 0) -> dict:
    """The expected NDCG@k of the Plackett-Luce policy of ``scores`` at ``temperature`` (0: the deterministic
    ranking) and its disparities under DCG's examination over the top k, each the mean over the queries that
    define it (with ``<name>_queries``, how many): "individual" and "expected_exposure" always, the group
    disparities where ``groups`` is given. Exposures are exact for queries of at most
    :data:`plboost.policies.EXACT_LIMIT` documents (or at temperature 0), else from ``n_samples`` rankings."""
    offsets = offsets_from_boundaries(offsets, name="offsets")
    scores = check_scores(scores, int(offsets[-1]), name="scores")
    labels = _checked_labels(labels, scores.size)
    temperature = check(temperature, Real(low=0.0), "temperature", "evaluate_policy")
    policy = PlackettLucePolicy(scores, offsets, temperature=temperature, top_k=k)
    theta = dcg_examination(k)
    exposure = policy.exposure(theta, method=method, n_samples=n_samples, seed=seed).values
    result = {f"expected_NDCG@{k}": float(np.mean(_expected_ndcg(exposure, labels, offsets, k, "exp", "one")))}
    names = [name for name in DISPARITIES if groups is not None or name not in GROUP_DISPARITIES]
    merits = merit_of(labels, merit)
    for name in names:
        values = disparity(name, exposure, offsets, groups=groups, merit=merits, labels=labels, examination=theta)
        defined = ~np.isnan(values)
        result[name] = float(values[defined].mean()) if defined.any() else float("nan")
        result[f"{name}_queries"] = int(defined.sum())
    return result


def _checked(exposure, offsets, groups):
    offsets = offsets_from_boundaries(offsets, name="offsets")
    exposure = check_scores(exposure, int(offsets[-1]), name="exposure")
    codes = None if groups is None else check_groups(groups, exposure.size)
    return offsets, np.asarray(exposure, dtype=np.float64), codes


def _checked_labels(labels, n_docs):
    labels = check_labels(labels, name="labels")
    if labels.size != n_docs:
        raise ValueError(f"labels: expected {n_docs} labels (one per document), got {labels.size}")
    return labels


def _checked_merit(merit, n_docs):
    merit = np.asarray(merit, dtype=np.float64)
    if merit.shape != (n_docs,) or not np.all(np.isfinite(merit)) or np.any(merit < 0):
        raise ValueError(f"plboost.fairness: merit must hold one finite number >= 0 per document ({n_docs}), got "
                         f"shape {merit.shape}")
    return merit


def _examination(examination, length: int) -> np.ndarray:
    if examination is None:
        return dcg_examination(length)
    theta = np.asarray(examination, dtype=np.float64)
    if theta.ndim != 1 or not np.all(np.isfinite(theta)) or np.any(theta < 0):
        raise ValueError("plboost.fairness: examination must be a 1-d array of finite numbers >= 0, got "
                         f"{examination!r}")
    return np.r_[theta, np.zeros(max(0, length - theta.size))][:length]
