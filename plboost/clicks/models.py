"""Click models: how a person clicks a displayed ranking, for simulating click logs and for the estimators'
propensities.

Each model maps a document's label to the probability ``R`` that it is relevant (:func:`relevance_of_labels`)
and draws the clicks of one displayed ranking from one uniform number per displayed rank.

- :class:`PositionBasedModel` (Richardson et al. 2007; Wang et al., SIGIR 2016; Joachims et al., WSDM 2017):
  rank k is examined with probability :math:`\\theta_k = (1/k)^\\eta`, independently of the rest, and an examined
  document is clicked with probability :math:`\\epsilon^+_k R + \\epsilon^-_k (1 - R)` (click noise), so

  .. math::  P(C = 1 \\mid d \\text{ at rank } k) = \\alpha_k R_d + \\beta_k, \\quad
             \\alpha_k = \\theta_k (\\epsilon^+_k - \\epsilon^-_k), \\quad \\beta_k = \\theta_k \\epsilon^-_k.

  With constant :math:`\\epsilon^\\pm` it is the position-based model of the papers (their default
  :math:`\\epsilon^- = 0.1, \\epsilon^+ = 1`); with :math:`\\epsilon^\\pm` that vary by rank it is trust bias
  (Agarwal et al., WWW 2019, in the affine form of Vardasbi et al., CIKM 2020: :meth:`PositionBasedModel.trust_bias`,
  :math:`\\epsilon^+_k = 0.98 - (k - 1)/100`, :math:`\\epsilon^-_k = 0.65/k`).
- :class:`CascadeModel` (Craswell et al., WSDM 2008; the dependent click model of Guo et al., WSDM 2009): the
  person scans from the top; an examined document is clicked with probability
  :math:`\\epsilon^- + (\\epsilon^+ - \\epsilon^-) R`; after a click they go on with probability
  :math:`\\lambda_k = m (1/k)^\\eta` (``m = 0``: the cascade model, one click at most), after a non-click always.
  Whether rank k is examined depends on the clicks above it: no per-rank examination exists, and estimators that
  assume one are biased under it (Vardasbi et al., SIGIR 2020).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._constraints import Options, Real, check
from .._jit import kernel

#: how labels become the probability of relevance: "graded" (2^y - 1) / (2^y_max - 1), "binary" 1[y >= threshold]
RELEVANCE = ("graded", "binary")


def relevance_of_labels(labels, *, max_label: float, kind: str = "graded", threshold: float | None = None):
    """The probability that each document is relevant, from its label: "graded", :math:`(2^y - 1) /
    (2^{y_{max}} - 1)` (the ULTRA toolkit's and the papers' graded model); "binary", 1 where ``y >= threshold``
    (default: ``max_label``), else 0 (Joachims et al. 2017's binarised relevance)."""
    kind = check(kind, Options(*RELEVANCE), "relevance")
    labels = np.asarray(labels, dtype=np.float64)
    if kind == "binary":
        return (labels >= (max_label if threshold is None else threshold)).astype(np.float64)
    if max_label <= 0:
        return np.zeros_like(labels)
    return np.expm1(labels * np.log(2.0)) / np.expm1(max_label * np.log(2.0))


def _per_rank(value, k: int, name: str, owner: str) -> np.ndarray:
    """A click model's parameter at ranks 1..k: a number for every rank, or one number per rank (the last
    repeated below its end)."""
    values = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if values.ndim != 1 or values.size == 0 or not np.all(np.isfinite(values)) or np.any((values < 0) | (values > 1)):
        raise ValueError(f"{owner}: {name} must be a probability in [0, 1] or one per rank, got {value!r}")
    return np.r_[values, np.full(max(0, k - values.size), values[-1])][:k]


@dataclass(frozen=True)
class PositionBasedModel:
    """Clicks of the position-based model: examination :math:`(1/k)^\\eta`, then click noise (see the module).

    ``positive_noise`` and ``negative_noise`` (:math:`\\epsilon^+`, :math:`\\epsilon^-`) are numbers, or one per
    rank from the top (trust bias). ``relevance`` and ``threshold``: how a label becomes R
    (:func:`relevance_of_labels`). ``examination_table``: :math:`\\theta_1, \\theta_2, \\ldots` given instead of
    :math:`(1/k)^\\eta` (the last repeated below its end), e.g. the ULTRA toolkit's table (0.68, 0.61, 0.48, 0.34,
    0.28, 0.20, 0.11, 0.10, 0.08, 0.06) that XGBoost's click simulation uses.
    """

    eta: float = 1.0
    positive_noise: float | tuple = 1.0
    negative_noise: float | tuple = 0.1
    relevance: str = "graded"
    threshold: float | None = None
    examination_table: tuple | None = None

    name = "pbm"
    uniforms_per_rank = 1

    def __post_init__(self):
        check(self.eta, Real(low=0.0), "eta", "PositionBasedModel")
        check(self.relevance, Options(*RELEVANCE), "relevance", "PositionBasedModel")
        for name in ("positive_noise", "negative_noise"):
            value = getattr(self, name)
            _per_rank(value, 1, name, "PositionBasedModel")
            if not np.isscalar(value):
                object.__setattr__(self, name, tuple(float(v) for v in np.asarray(value, dtype=np.float64)))
        if self.examination_table is not None:
            _per_rank(self.examination_table, 1, "examination_table", "PositionBasedModel")
            object.__setattr__(self, "examination_table", tuple(float(v) for v in np.atleast_1d(
                np.asarray(self.examination_table, dtype=np.float64))))
        if np.any(self.affine(30)[0] <= 0):
            raise ValueError("PositionBasedModel: positive_noise must exceed negative_noise at every rank (a click "
                             "must say something about relevance)")

    @classmethod
    def trust_bias(cls, eta: float = 1.0, top_k: int = 100, **options) -> PositionBasedModel:
        """Trust bias as Vardasbi et al. (CIKM 2020) simulate it: :math:`\\epsilon^+_k = 0.98 - (k - 1)/100`,
        :math:`\\epsilon^-_k = 0.65/k`, for ranks 1..``top_k``."""
        ranks = np.arange(1, top_k + 1)
        return cls(eta=eta, positive_noise=tuple(0.98 - (ranks - 1) / 100), negative_noise=tuple(0.65 / ranks),
                   **options)

    def examination(self, k: int) -> np.ndarray:
        """:math:`\\theta_1 .. \\theta_k`."""
        if self.examination_table is not None:
            return _per_rank(self.examination_table, k, "examination_table", "PositionBasedModel")
        return (1.0 / np.arange(1, k + 1)) ** self.eta

    def affine(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """:math:`\\alpha_1..\\alpha_k` and :math:`\\beta_1..\\beta_k`: P(click at rank j) = alpha_j R + beta_j."""
        theta = self.examination(k)
        positive = _per_rank(self.positive_noise, k, "positive_noise", "PositionBasedModel")
        negative = _per_rank(self.negative_noise, k, "negative_noise", "PositionBasedModel")
        return theta * (positive - negative), theta * negative

    def click_probabilities(self, relevance: np.ndarray) -> np.ndarray:
        """P(click) of each displayed document, ``relevance`` an (impressions, k) array of R (NaN: no document)."""
        alpha, beta = self.affine(relevance.shape[1])
        return np.where(np.isnan(relevance), 0.0, alpha * np.nan_to_num(relevance) + beta)

    def draw(self, relevance: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """Clicks (int8, impressions x k) of the displayed documents' ``relevance`` (NaN: none shown there)."""
        return (uniforms < self.click_probabilities(relevance)).astype(np.int8)

    def settings(self) -> dict:
        return {"click_model": self.name, "eta": self.eta, "positive_noise": self.positive_noise,
                "negative_noise": self.negative_noise, "relevance": self.relevance, "threshold": self.threshold,
                "examination_table": self.examination_table}


@dataclass(frozen=True)
class CascadeModel:
    """Clicks of the cascade model (``continuation=0``) or the dependent click model: the person scans from the
    top, clicks an examined document with probability :math:`\\epsilon^- + (\\epsilon^+ - \\epsilon^-) R`, and
    after a click at rank k goes on with probability ``continuation * (1/k)**eta``."""

    continuation: float = 0.0
    eta: float = 1.0
    positive_noise: float = 1.0
    negative_noise: float = 0.1
    relevance: str = "graded"
    threshold: float | None = None

    name = "cascade"
    uniforms_per_rank = 2

    def __post_init__(self):
        for name, constraint in (("continuation", Real(low=0.0, high=1.0)), ("eta", Real(low=0.0)),
                                 ("positive_noise", Real(low=0.0, high=1.0)),
                                 ("negative_noise", Real(low=0.0, high=1.0))):
            check(getattr(self, name), constraint, name, "CascadeModel")
        check(self.relevance, Options(*RELEVANCE), "relevance", "CascadeModel")
        if self.positive_noise <= self.negative_noise:
            raise ValueError("CascadeModel: positive_noise must exceed negative_noise (a click must say something "
                             "about relevance)")

    def draw(self, relevance: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """Clicks (int8, impressions x k) of the displayed documents' ``relevance`` (NaN: none shown there), one
        uniform per rank for the click and one more per rank for going on after it (``uniforms`` has 2k
        columns)."""
        clicks = np.zeros(relevance.shape, dtype=np.int8)
        _cascade_kernel(np.ascontiguousarray(relevance), np.ascontiguousarray(uniforms), self.continuation, self.eta,
                        self.positive_noise, self.negative_noise, clicks)
        return clicks

    def settings(self) -> dict:
        return {"click_model": self.name, "continuation": self.continuation, "eta": self.eta,
                "positive_noise": self.positive_noise, "negative_noise": self.negative_noise,
                "relevance": self.relevance, "threshold": self.threshold}


@kernel
def _cascade_kernel(relevance, uniforms, continuation, eta, positive, negative, clicks):
    k = relevance.shape[1]
    for i in range(relevance.shape[0]):
        for j in range(k):
            r = relevance[i, j]
            if np.isnan(r):
                break
            if uniforms[i, j] < negative + (positive - negative) * r:
                clicks[i, j] = 1
                if uniforms[i, k + j] >= continuation * (1.0 / (j + 1.0)) ** eta:
                    break
