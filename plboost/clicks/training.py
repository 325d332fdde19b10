"""What a run trains on when it learns from a click log, named as a configuration names it (``clicks=``): an
estimator's relevance estimates, for an objective that takes them, or the log's displayed rows, for the engines'
own debiasing (XGBoost's ``lambdarank_unbiased``, LightGBM's ``position``).

The examination the estimators divide by is the click model the log records (a simulated log's) or, with
``examination="em"``, the one regression EM estimates from the log itself (:mod:`plboost.clicks.propensities`).
Doubly robust is not offered by name: it needs a regression estimate per document, given in Python
(:class:`~plboost.clicks.estimators.ClickData` with ``options={"regression": ...}``).
"""

from __future__ import annotations

from .._constraints import Options, check
from .estimators import ClickData
from .log import ClickLog
from .propensities import estimate_examination

#: how a run trains from a click log: an estimator's relevance estimates, or the displayed rows
CLICK_TRAINING = ("naive", "ips", "policy_aware", "affine", "displayed")
#: where the estimators' examination comes from: the click model the log records, or regression EM on the log
EXAMINATIONS = ("recorded", "em")


def check_click_training(clicks: str, examination: str = "recorded") -> tuple[str, str]:
    """``clicks`` and ``examination`` checked together: EM's examination serves the estimators that divide by an
    examination (``ips``, ``policy_aware``); the others refuse it."""
    if clicks == "doubly_robust":
        raise ValueError("clicks='doubly_robust' needs a regression estimate per document, which a configuration "
                         "cannot name; train it from Python: ClickData(log, 'doubly_robust', {'regression': ...})")
    clicks = check(clicks, Options(*CLICK_TRAINING), "clicks")
    examination = check(examination, Options(*EXAMINATIONS), "examination")
    if examination == "em" and clicks not in ("ips", "policy_aware"):
        raise ValueError(f"examination='em' is for clicks='ips' or 'policy_aware', which divide by the "
                         f"examination; clicks={clicks!r} does not")
    return clicks, examination


def click_training_data(log: ClickLog, clicks: str, *, examination: str = "recorded"):
    """The :class:`~plboost.data.RankingData` a run trains on from ``log``: with ``clicks="displayed"``,
    :meth:`ClickLog.displayed_rows`; else the log's documents labelled with ``clicks``' estimates
    (:class:`~plboost.clicks.estimators.ClickData`), the examination the log's or EM's."""
    if not isinstance(log, ClickLog):
        raise TypeError(f"click_training_data: log must be a ClickLog, got {type(log).__name__}")
    clicks, examination = check_click_training(clicks, examination)
    if clicks == "displayed":
        return log.displayed_rows()
    options = {"examination": estimate_examination(log).relative} if examination == "em" else {}
    return ClickData(log, clicks, options).to_ranking_data()
