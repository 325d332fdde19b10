"""Ranking metrics: NDCG@k, ERR@k and MAP, per query and averaged, with explicit conventions.

Every function takes one flat layout: ``scores`` and ``labels`` with one entry per document, and the query
layout as exactly one of ``offsets`` (int64 boundaries, ``Q + 1`` entries, as LightGBM's
``get_field("group")`` and XGBoost's ``group_ptr`` give them) or ``group`` (query sizes). Documents are
ranked within their query by a stable sort on the score, descending, so tied scores keep their input
order, as LightGBM and XGBoost rank them.

Metrics differ between libraries mostly in how they treat a query without any relevant document, where
NDCG and AP are 0/0. ``no_relevant`` names the choice: ``"one"`` scores such a query 1 (LightGBM and
XGBoost ``ndcg``/``map``), ``"zero"`` scores it 0 (trec_eval, XGBoost ``ndcg-``), ``"exclude"`` leaves it
out of the mean (per-query values are NaN). ERR of such a query is 0, a well-defined value, under ``"one"``
and ``"zero"``; ``"exclude"`` leaves it out too. :class:`Conventions` records the choices and renders them
as text, so a report can say which convention produced its numbers.

A metric of your own joins them in one call, :func:`register_metric`: :func:`evaluate`, and therefore
``plboost.experiment.compare``'s tables, significance tests and records, and the test metrics of tuned runs,
report it from then on (see :class:`Metric` for what the function is given).

References
----------
K. Järvelin and J. Kekäläinen. Cumulated gain-based evaluation of IR techniques. ACM TOIS 20(4), 2002.
O. Chapelle, D. Metzler, Y. Zhang and P. Grinspan. Expected reciprocal rank for graded relevance.
CIKM 2009.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from plboost._constraints import Boolean, Integer, Options, Text, check, check_params
from plboost._jit import helper, kernel, over_queries
from plboost._numerics import stable_argsort
from plboost._queries import check_labels, check_scores, offsets_from_boundaries, offsets_from_sizes
from plboost.errors import InvalidParameterError

__all__ = ["Conventions", "Metric", "ndcg", "err", "average_precision", "mean_average_precision", "evaluate",
           "register_metric", "unregister_metric", "registered_metrics", "table_metrics"]

#: the metrics of the PLRank paper's Table 1: what winning numbers summarise by default
PAPER_METRICS = ("NDCG@1", "NDCG@3", "NDCG@5", "NDCG@10", "ERR@10")
#: the metrics of a comparison table and its significance tests: the paper's, and ERR of the whole list
TABLE_METRICS = PAPER_METRICS + ("ERR",)
#: Value of an undefined (0/0) NDCG or AP under each ``no_relevant`` policy.
_NO_RELEVANT_VALUE = {"one": 1.0, "zero": 0.0, "exclude": np.nan}
#: the ``no_relevant`` policies, for command lines and checks
NO_RELEVANT_POLICIES = tuple(_NO_RELEVANT_VALUE)
_GAINS = ("exp", "linear")
_TIES = ("input-order",)
_CONVENTION_CONSTRAINTS = {"gain": Options(*_GAINS), "no_relevant": Options(*NO_RELEVANT_POLICIES),
                           "g_max": (Integer(low=1), None), "relevant_min": Integer(low=1), "ties": Options(*_TIES)}
#: ``k`` for "the whole list": every query is shorter.
_WHOLE_LIST = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Conventions:
    """The conventions behind a set of metric values, validated, and rendered by ``str()`` as text.

    Parameters
    ----------
    gain : {"exp", "linear"}
        NDCG gain of label :math:`y`: :math:`2^y - 1` or :math:`y`.
    no_relevant : {"one", "zero", "exclude"}
        Treatment of queries without a relevant document (see the module docstring).
    g_max : int or None
        ERR's maximum grade: the stop probability of label :math:`y` is :math:`(2^y - 1) / 2^{g_{max}}`; None
        (the default) where it is the data's largest label, as :func:`err` and :func:`evaluate` resolve it.
    relevant_min : int
        MAP counts a document as relevant when its label is at least ``relevant_min``.
    ties : {"input-order"}
        Tied scores keep their input order (stable sort by score, descending); the one rule implemented,
        recorded so that reports state it.
    """

    gain: str = "exp"
    no_relevant: str = "one"
    g_max: int | None = None
    relevant_min: int = 1
    ties: str = "input-order"

    def __post_init__(self):
        given = {name: getattr(self, name) for name in _CONVENTION_CONSTRAINTS}
        for name, value in check_params(_CONVENTION_CONSTRAINTS, given).items():
            object.__setattr__(self, name, value)  # frozen: the checked values replace the given ones, once

    def describe(self) -> str:
        """One line stating every convention, e.g. for the header of a results table."""
        gain = "2^y-1" if self.gain == "exp" else "y"
        no_relevant = {
            "one": "count as 1 in NDCG and MAP and 0 in ERR (LightGBM/XGBoost)",
            "zero": "count as 0 (trec_eval)",
            "exclude": "are left out of the means",
        }[self.no_relevant]
        err = ("R=(2^y-1)/2^g_max, g_max the data's largest label" if self.g_max is None
               else f"R=(2^y-1)/2^{self.g_max} (g_max={self.g_max})")
        return (f"NDCG: gain {gain}, discount 1/log2(1+rank); ERR: {err}; "
                f"MAP: relevant when label >= {self.relevant_min}; "
                f"queries without relevant documents {no_relevant}; "
                "ties: stable sort by score, descending, input order decides")

    __str__ = describe


def ndcg(scores, labels, *, offsets=None, group=None, k=10, gain="exp", no_relevant="one", per_query=False):
    r"""Normalised discounted cumulative gain at ``k`` (Järvelin & Kekäläinen, 2002).

    With documents ranked by score (ties in input order), :math:`y_r` the label at rank :math:`r` and
    :math:`y^*_r` the labels sorted in decreasing order,

    .. math::

        \mathrm{DCG@}k = \sum_{r=1}^{\min(k, n)} \frac{g(y_r)}{\log_2(1 + r)}, \qquad
        \mathrm{NDCG@}k = \frac{\mathrm{DCG@}k}{\mathrm{IDCG@}k}, \qquad
        \mathrm{IDCG@}k = \sum_{r=1}^{\min(k, n)} \frac{g(y^*_r)}{\log_2(1 + r)},

    with gain :math:`g(y) = 2^y - 1` (``gain="exp"``) or :math:`g(y) = y` (``"linear"``). A query with
    :math:`\mathrm{IDCG} = 0` (no label above 0) is scored by ``no_relevant``.

    Parameters
    ----------
    scores, labels : array-like of shape (n_documents,)
        Predicted scores and non-negative integer relevance labels.
    offsets : array-like of shape (n_queries + 1,), optional
        Query boundaries: query ``q`` is rows ``offsets[q]:offsets[q + 1]``.
    group : array-like of shape (n_queries,), optional
        Query sizes; give exactly one of ``offsets`` and ``group``.
    k : int
        Cut-off; a query shorter than ``k`` is evaluated whole.
    gain : {"exp", "linear"}
    no_relevant : {"one", "zero", "exclude"}
        Score of a query without relevant documents: 1, 0, or left out (NaN per query).
    per_query : bool
        Return the value of every query instead of their mean.

    Returns
    -------
    float or ndarray of shape (n_queries,)
        The mean over queries (NaN if every query is excluded), or the per-query values.

    Examples
    --------
    >>> round(ndcg([3.0, 2.0, 1.0], [0, 1, 2], group=[3], k=3), 4)  # (1/log2(3) + 3/2) / (3 + 1/log2(3))
    0.5869
    """
    conventions = Conventions(gain=gain, no_relevant=no_relevant)
    scores, labels, offsets = _check_inputs(scores, labels, offsets, group)
    ks = _check_ks("k", [k])
    values = _ndcg_kernel(_rank_labels(scores, labels, offsets), labels, offsets, ks, gain == "exp")[:, 0]
    return _finish(values, _NO_RELEVANT_VALUE[conventions.no_relevant], per_query)


def err(scores, labels, *, offsets=None, group=None, k=None, g_max=None, no_relevant="one", per_query=False):
    r"""Expected reciprocal rank at ``k`` (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009).

    The user scans the ranking from the top and stops at rank :math:`r` with probability
    :math:`R_r = (2^{y_r} - 1) / 2^{g_{max}}`; ERR is the expected reciprocal of the stopping rank:

    .. math::

        \mathrm{ERR@}k = \sum_{r=1}^{\min(k, n)} \frac{1}{r} \, R_r \prod_{i=1}^{r-1} (1 - R_i).

    Parameters
    ----------
    scores, labels, offsets, group, per_query
        As in :func:`ndcg`. Labels must not exceed ``g_max``.
    k : int or None
        Cut-off; ``None`` evaluates the whole list.
    g_max : int or None
        Maximum grade: by default (None) the largest of ``labels``, at least 1 (2 for MQ2008; 4 for MSLR-WEB and
        Yahoo! LTR, as gdeval fixes it). Give it to compare values across data of different label ranges.
    no_relevant : {"one", "zero", "exclude"}
        ERR of a query without relevant documents is 0 under ``"one"`` and ``"zero"``; ``"exclude"``
        leaves such queries out (NaN per query).

    Returns
    -------
    float or ndarray of shape (n_queries,)

    Examples
    --------
    >>> err([2.0, 1.0], [1, 2], group=[2], g_max=2)  # 1/4 + (1/2)(3/4)(3/4)
    0.53125
    """
    scores, labels, offsets = _check_inputs(scores, labels, offsets, group)
    conventions = Conventions(no_relevant=no_relevant, g_max=_resolved_g_max(labels, g_max))
    g_max = conventions.g_max
    ks = _check_ks("k", [_WHOLE_LIST if k is None else k])
    _check_err_labels(labels, g_max)
    values = _err_kernel(_rank_labels(scores, labels, offsets), offsets, ks, float(g_max))[:, 0]
    return _finish(values, _err_no_relevant_value(conventions), per_query)


def mean_average_precision(scores, labels, *, offsets=None, group=None, relevant_min=1, no_relevant="one",
                           per_query=False):
    r"""Mean average precision over queries, with binary relevance ``label >= relevant_min``.

    With :math:`\mathrm{rel}_r \in \{0, 1\}` the relevance of the document at rank :math:`r`,
    :math:`P@r` the precision of the top :math:`r` and :math:`R` the number of relevant documents,

    .. math::

        \mathrm{AP} = \frac{1}{R} \sum_{r=1}^{n} \mathrm{rel}_r \, P@r, \qquad
        \mathrm{MAP} = \frac{1}{Q} \sum_{q=1}^{Q} \mathrm{AP}_q.

    A query with :math:`R = 0` is scored by ``no_relevant`` (``"one"`` is LightGBM's ``map``).

    Parameters
    ----------
    scores, labels, offsets, group, no_relevant, per_query
        As in :func:`ndcg`.
    relevant_min : int
        Smallest label that counts as relevant.

    Returns
    -------
    float or ndarray of shape (n_queries,)

    Examples
    --------
    >>> mean_average_precision([3.0, 2.0, 1.0], [1, 0, 1], group=[3])  # (1/1 + 2/3) / 2
    0.8333333333333333
    """
    conventions = Conventions(no_relevant=no_relevant, relevant_min=relevant_min)
    scores, labels, offsets = _check_inputs(scores, labels, offsets, group)
    values = _ap_kernel(_rank_labels(scores, labels, offsets), offsets, float(relevant_min))
    return _finish(values, _NO_RELEVANT_VALUE[conventions.no_relevant], per_query)


def average_precision(scores, labels, *, offsets=None, group=None, relevant_min=1, no_relevant="one"):
    """Average precision of every query: ``mean_average_precision(..., per_query=True)``."""
    return mean_average_precision(scores, labels, offsets=offsets, group=group, relevant_min=relevant_min,
                                  no_relevant=no_relevant, per_query=True)


def evaluate(scores, labels, *, offsets=None, group=None, ndcg_at=(1, 3, 5, 10), err_at=(10,), whole_err=True,
             map=True, gain="exp", no_relevant="one", g_max=None, relevant_min=1, per_query=False,
             registered=True) -> dict:
    """Several metrics at once, ranking every query once.

    Parameters
    ----------
    scores, labels, offsets, group, per_query
        As in :func:`ndcg`.
    ndcg_at, err_at : sequences of int
        Cut-offs for ``"NDCG@k"`` and ``"ERR@k"``.
    whole_err : bool
        Include ``"ERR"``, ERR of the whole list.
    map : bool
        Include ``"MAP"``.
    registered : bool
        Include the metrics of :func:`register_metric` (``NAME@k`` for every ``ndcg_at`` cut-off, or ``NAME``).
    gain, no_relevant, g_max, relevant_min
        The conventions, as in :func:`ndcg`, :func:`err` and :func:`mean_average_precision`.

    Returns
    -------
    dict
        Metric name to value (a float, or an ndarray of shape (n_queries,) if ``per_query``), in the order
        NDCG@k, ERR@k, ERR, MAP, the registered metrics; and ``"conventions"``, the :class:`Conventions` used.

    Examples
    --------
    >>> result = evaluate([3.0, 2.0, 1.0], [0, 1, 2], group=[3], ndcg_at=(3,), err_at=())
    >>> sorted(result)
    ['ERR', 'MAP', 'NDCG@3', 'conventions']
    >>> print(result["conventions"])  # doctest: +NORMALIZE_WHITESPACE
    NDCG: gain 2^y-1, discount 1/log2(1+rank); ERR: R=(2^y-1)/2^2 (g_max=2); MAP: relevant when label >= 1;
    queries without relevant documents count as 1 in NDCG and MAP and 0 in ERR (LightGBM/XGBoost);
    ties: stable sort by score, descending, input order decides
    """
    scores, labels, offsets = _check_inputs(scores, labels, offsets, group)
    conventions = Conventions(gain=gain, no_relevant=no_relevant, g_max=_resolved_g_max(labels, g_max),
                              relevant_min=relevant_min)
    g_max = conventions.g_max
    ndcg_ks = _check_ks("ndcg_at", ndcg_at)
    err_ks = _check_ks("err_at", err_at)
    if whole_err:
        err_ks = np.append(err_ks, _WHOLE_LIST)
    if err_ks.size:
        _check_err_labels(labels, g_max)

    ranked = _rank_labels(scores, labels, offsets)
    fill, err_fill = _NO_RELEVANT_VALUE[no_relevant], _err_no_relevant_value(conventions)
    results = {}
    if ndcg_ks.size:
        values = _ndcg_kernel(ranked, labels, offsets, ndcg_ks, gain == "exp")
        for k, column in zip(ndcg_ks, values.T, strict=True):
            results[f"NDCG@{k}"] = _finish(column, fill, per_query)
    if err_ks.size:
        values = _err_kernel(ranked, offsets, err_ks, float(g_max))
        for k, column in zip(err_ks, values.T, strict=True):
            results["ERR" if k == _WHOLE_LIST else f"ERR@{k}"] = _finish(column, err_fill, per_query)
    if map:
        results["MAP"] = _finish(_ap_kernel(ranked, offsets, float(relevant_min)), fill, per_query)
    if registered:
        for metric in _REGISTERED.values():
            for k in (ndcg_ks if metric.at_cutoffs else (None,)):
                values = metric.per_query(ranked, offsets, None if k is None else int(k))
                results[metric.column(k)] = _finish(values, fill, per_query)
    results["conventions"] = conventions
    return results


# --- metrics of the user's own ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Metric:
    """A metric of the user's own, as :func:`register_metric` records it.

    ``function(ranked_labels, offsets, k)`` gets every query's labels in ranked order (float64; stable sort by
    score, descending: the order NDCG and ERR see) and the query ``offsets`` (int64, ``n_queries + 1``), and
    ``k``, a cut-off of :func:`evaluate`'s ``ndcg_at`` for a metric ``at_cutoffs`` (reported as ``NAME@k``),
    else None (reported as ``NAME``). It returns one float per query; NaN marks a query where the metric is
    undefined (no relevant document), which gets the ``no_relevant`` convention's value, as NDCG does.
    """

    name: str
    function: Callable
    at_cutoffs: bool = False
    description: str = ""

    def column(self, k) -> str:
        """The name of its column at cut-off ``k`` (None: the whole list)."""
        return self.name if k is None else f"{self.name}@{k}"

    def per_query(self, ranked, offsets, k, *, registered: bool = True) -> np.ndarray:
        """The function's values, checked: one finite number or NaN per query (``registered``: the message says how
        to stop reporting the metric)."""
        try:
            values = np.array(self.function(ranked, offsets, k), dtype=np.float64)
        except Exception as error:  # noqa: BLE001 - the user's function: name it, and how to stop it
            raise ValueError(f"metric {self.name}: its function(ranked_labels, offsets, k={k}) raised "
                             f"{type(error).__name__}: {error}; "
                             + (f"fix it, or unregister_metric({self.name!r})" if registered else "not registered")
                             ) from error
        if values.shape != (offsets.size - 1,):
            raise ValueError(f"metric {self.name}: its function returned shape {values.shape}, not one value per "
                             f"query ({offsets.size - 1},)")
        if np.isinf(values).any():
            raise ValueError(f"metric {self.name}: its function returned an infinite value")
        return values


_REGISTERED: dict[str, Metric] = {}
_NAME = Text(r"[A-Za-z][A-Za-z0-9_\-]*", "a name of letters, digits, '_' and '-', starting with a letter")
#: names of the built-in metrics' columns (with ``@k``), which a registered metric may not take
_BUILT_IN = ("NDCG", "ERR", "MAP")


def register_metric(name: str, function: Callable, *, at_cutoffs: bool = False, description: str = "") -> Metric:
    """Report ``function`` as metric ``name`` in every :func:`evaluate` from now on (see :class:`Metric`).

    A comparison's records remember the registered metrics' names: records written without this one are
    recomputed, not reused, and say why.

    >>> def reciprocal_rank(ranked_labels, offsets, k):
    ...     values = np.full(offsets.size - 1, np.nan)  # NaN: no relevant document
    ...     for q in range(offsets.size - 1):
    ...         top = ranked_labels[offsets[q]:offsets[q + 1]][:k]
    ...         relevant = np.flatnonzero(top >= 1)
    ...         values[q] = 1.0 / (relevant[0] + 1) if relevant.size else np.nan
    ...     return values
    >>> _ = register_metric("RR", reciprocal_rank, at_cutoffs=True, description="1 / rank of the first label >= 1")
    >>> evaluate([0.2, 0.9, 0.1], [1, 0, 0], group=[3], ndcg_at=(1, 3), err_at=(), whole_err=False, map=False)["RR@3"]
    0.5
    >>> unregister_metric("RR")
    """
    name = check(name, _NAME, "name", "register_metric")
    if not callable(function):
        raise InvalidParameterError(f"register_metric: function must be callable, got {function!r}")
    at_cutoffs = check(at_cutoffs, Boolean(), "at_cutoffs", "register_metric")
    if name in _BUILT_IN:
        raise ValueError(f"register_metric: {name!r} is a built-in metric's name; choose another")
    if name in _REGISTERED:
        raise ValueError(f"register_metric: {name!r} is registered already; unregister_metric({name!r}) first")
    metric = Metric(name, function, at_cutoffs, str(description))
    # one trial call, on two queries, so that a function that cannot be called so fails here, not in every evaluate
    metric.per_query(np.array([1.0, 0.0, 2.0]), np.array([0, 2, 3], dtype=np.int64), 1 if at_cutoffs else None,
                     registered=False)
    _REGISTERED[name] = metric
    return metric


def unregister_metric(name: str) -> None:
    """Stop reporting the metric registered as ``name``."""
    if name not in _REGISTERED:
        raise ValueError(f"unregister_metric: no metric {name!r} is registered"
                         f"{'; registered: ' + ', '.join(_REGISTERED) if _REGISTERED else ''}")
    del _REGISTERED[name]


def registered_metrics() -> tuple[Metric, ...]:
    """The metrics registered, in the order they were."""
    return tuple(_REGISTERED.values())


def table_metrics(names) -> list[str]:
    """The columns of a comparison table among ``names`` (what :func:`evaluate` reported): the paper's metrics
    and ERR (:data:`TABLE_METRICS`), then the registered metrics' columns, in their order."""
    names = list(names)
    registered = {metric.name for metric in _REGISTERED.values()}
    return [m for m in TABLE_METRICS if m in names] + [m for m in names if m.split("@")[0] in registered]


# --- validation -------------------------------------------------------------------------------------------

def _check_ks(name, ks) -> np.ndarray:
    return np.asarray([check(k, Integer(low=1), name) for k in ks], dtype=np.int64).reshape(-1)


def _check_inputs(scores, labels, offsets, group):
    """Scores and labels as contiguous, writable float64 arrays, and the query offsets, all checked against each
    other."""
    labels = np.ascontiguousarray(check_labels(labels, max_label=None))
    n_docs = labels.shape[0]
    if (offsets is None) == (group is None):
        raise ValueError("give the query layout as exactly one of offsets= (query boundaries, n_queries + 1 "
                         "entries) or group= (query sizes)")
    if offsets is not None:
        offsets = offsets_from_boundaries(offsets, n_docs, name="offsets")
    else:
        offsets = offsets_from_sizes(group, n_docs, name="group")
    scores = np.ascontiguousarray(check_scores(scores, n_docs, finite=False))  # ±inf ranks; NaN does not
    if np.isnan(scores).any():
        raise ValueError(f"scores: NaN at position {int(np.flatnonzero(np.isnan(scores))[0])}; "
                         "NaN scores cannot be ranked")
    return scores, labels, offsets


def _resolved_g_max(labels, g_max) -> int:
    """ERR's ``g_max``: as given, else the largest label (at least 1; labels are checked whole and finite), so that
    ERR follows the data's scale."""
    if g_max is not None:
        return g_max
    return max(1, int(labels.max())) if labels.size else 1


def _check_err_labels(labels, g_max):
    if labels.size and labels.max() > g_max:
        i = int(np.argmax(labels))
        raise ValueError(f"labels: label {labels[i]:g} at position {i} exceeds g_max={g_max}; ERR's stop "
                         "probability (2^y - 1) / 2^g_max must not exceed 1")


# --- reduction ----------------------------------------------------------------------------------------------

def _err_no_relevant_value(conventions):
    return np.nan if conventions.no_relevant == "exclude" else 0.0


def _finish(values, no_relevant_value, per_query):
    """Give queries without relevant documents (NaN from the kernels) their value; average unless per query."""
    values[np.isnan(values)] = no_relevant_value
    if per_query:
        return values
    kept = values[~np.isnan(values)]
    return float(kept.mean()) if kept.size else float("nan")


# --- kernels: queries first <= q < end, each writing only its own rows (run by plboost._jit.over_queries) -------

def _rank_labels(scores, labels, offsets):
    """Labels in ranked order within each query: stable sort by score, descending."""
    ranked = np.empty_like(labels)
    over_queries(_rank_labels_kernel, offsets, scores, labels, offsets, ranked)
    return ranked


def _ndcg_kernel(ranked, labels, offsets, ks, exp_gain):
    """NDCG at each of ``ks`` for every query, shape (n_queries, ks.size); NaN where the ideal DCG is 0."""
    out = np.empty((offsets.size - 1, ks.size))
    over_queries(_ndcg_range, offsets, ranked, labels, offsets, ks, exp_gain, out)
    return out


def _err_kernel(ranked, offsets, ks, g_max):
    """ERR at each of ``ks`` for every query, shape (n_queries, ks.size); NaN where no label is above 0."""
    out = np.empty((offsets.size - 1, ks.size))
    over_queries(_err_range, offsets, ranked, offsets, ks, g_max, out)
    return out


def _ap_kernel(ranked, offsets, relevant_min):
    """Average precision of every query; NaN where no label reaches ``relevant_min``."""
    out = np.empty(offsets.size - 1)
    over_queries(_ap_range, offsets, ranked, offsets, relevant_min, out)
    return out


@kernel
def _rank_labels_kernel(first, end, scores, labels, offsets, ranked):
    for q in range(first, end):
        a, b = offsets[q], offsets[q + 1]
        order = stable_argsort(-scores[a:b])
        for r in range(b - a):
            ranked[a + r] = labels[a + order[r]]


@helper
def _dcg(labels, k, exp_gain, top):
    """DCG@k of ``labels`` divided by ``2^top`` (exp gain) or by ``2^e``, the power of two at or below ``top``
    (linear gain), ``top`` the query's largest label: :math:`2^{y - top} - 2^{-top}` is :math:`(2^y - 1) / 2^{top}`
    without forming :math:`2^y`, which is infinite in float64 from y = 1024 on. NDCG is a ratio of two such sums,
    so the common factor cancels; a power of two scales exactly, so for labels whose gains are finite the
    ratio is the one of the unscaled sums, bit for bit."""
    total = 0.0
    shift = 2.0 ** -np.floor(np.log2(top)) if top > 0.0 else 1.0
    for r in range(min(k, labels.size)):
        gain = 2.0 ** (labels[r] - top) - 2.0 ** -top if exp_gain else labels[r] * shift
        total += gain / np.log2(r + 2.0)
    return total


@kernel
def _ndcg_range(first, end, ranked, labels, offsets, ks, exp_gain, out):
    for q in range(first, end):
        a, b = offsets[q], offsets[q + 1]
        ideal = labels[a:b][stable_argsort(-labels[a:b])]
        top = ideal[0]
        for j in range(ks.size):
            ideal_dcg = _dcg(ideal, ks[j], exp_gain, top)
            out[q, j] = _dcg(ranked[a:b], ks[j], exp_gain, top) / ideal_dcg if ideal_dcg > 0.0 else np.nan


@helper
def _err(labels, k, g_max):
    """ERR@k, with each stop probability :math:`(2^y - 1) / 2^{g_{max}}` formed as :math:`2^{y - g_{max}} -
    2^{-g_{max}}`: the same number (exactly, where :math:`2^y` is finite), and finite for any label and g_max."""
    total, p_reach = 0.0, 1.0
    for r in range(min(k, labels.size)):
        p_stop = 2.0 ** (labels[r] - g_max) - 2.0 ** -g_max
        total += p_reach * p_stop / (r + 1.0)
        p_reach *= 1.0 - p_stop
    return total


@kernel
def _err_range(first, end, ranked, offsets, ks, g_max, out):
    for q in range(first, end):
        a, b = offsets[q], offsets[q + 1]
        relevant = ranked[a:b].max() > 0.0
        for j in range(ks.size):
            out[q, j] = _err(ranked[a:b], ks[j], g_max) if relevant else np.nan


@kernel
def _ap_range(first, end, ranked, offsets, relevant_min, out):
    for q in range(first, end):
        a, b = offsets[q], offsets[q + 1]
        hits, total = 0, 0.0
        for r in range(b - a):
            if ranked[a + r] >= relevant_min:
                hits += 1
                total += hits / (r + 1.0)
        out[q] = total / hits if hits > 0 else np.nan
