"""Learning to rank from click logs: click models, simulated logs, and the estimators that correct the position
bias of clicks.

- :mod:`plboost.clicks.log`: the click log's tables (Parquet, CSV), :class:`ClickLog` in memory,
  :func:`load_click_log`;
- :mod:`plboost.clicks.models`: click models (position-based, trust bias, cascade and DCM);
- :mod:`plboost.clicks.simulation`: click logs simulated from labelled data and a logging ranker's scores, shown
  deterministically or sampled from its Plackett-Luce policy (:mod:`plboost.policies`);
- :mod:`plboost.clicks.estimators`: relevance estimates from a log (naive, IPS, policy-aware, affine, doubly
  robust);
- :mod:`plboost.clicks.propensities`: the position bias estimated from a log itself (regression EM).
"""

from .estimators import (ESTIMATORS, ClickData, RelevanceEstimates, logging_policy, relevance_estimates,
                         training_data)
from .log import ClickLog, ClickLogError, load_click_log
from .models import CascadeModel, PositionBasedModel, relevance_of_labels
from .propensities import ExaminationEstimate, estimate_examination
from .simulation import simulate_clicks

__all__ = ["ESTIMATORS", "CascadeModel", "ClickData", "ClickLog", "ClickLogError", "ExaminationEstimate",
           "PositionBasedModel", "RelevanceEstimates", "estimate_examination", "load_click_log", "logging_policy",
           "relevance_estimates", "relevance_of_labels", "simulate_clicks", "training_data"]
