"""Learning to rank from click logs: click models, simulated logs, and the estimators that correct the position
bias of clicks.

- :mod:`plboost.clicks.log`: the click log's tables (Parquet, CSV), :class:`ClickLog` in memory,
  :func:`load_click_log`;
- :mod:`plboost.clicks.models`: click models (position-based, trust bias, cascade and DCM);
- :mod:`plboost.clicks.simulation`: click logs simulated from labelled data and a logging ranker's scores, shown
  deterministically or sampled from its Plackett-Luce policy (:mod:`plboost.policies`);
- :mod:`plboost.clicks.estimators`: relevance estimates from a log (naive, IPS, policy-aware, affine, doubly
  robust);
- :mod:`plboost.clicks.propensities`: the position bias estimated from a log itself (regression EM);
- :mod:`plboost.clicks.training`: what a configuration trains on from a log, by name (``clicks=``).
"""

from .estimators import (ESTIMATORS, ClickData, RelevanceEstimates, logging_policy, relevance_estimates,
                         training_data)
from .log import ClickLog, ClickLogError, find_click_log, load_click_log
from .models import CascadeModel, PositionBasedModel, relevance_of_labels
from .propensities import ExaminationEstimate, estimate_examination
from .simulation import simulate_clicks
from .training import CLICK_RUNS, CLICK_TRAINING, EXAMINATIONS, check_click_training, click_training_data

__all__ = ["CLICK_RUNS", "CLICK_TRAINING", "ESTIMATORS", "EXAMINATIONS", "CascadeModel", "ClickData", "ClickLog",
           "ClickLogError", "ExaminationEstimate", "PositionBasedModel", "RelevanceEstimates", "check_click_training",
           "click_training_data", "estimate_examination", "find_click_log", "load_click_log",
           "logging_policy", "relevance_estimates", "relevance_of_labels", "simulate_clicks",
           "training_data"]
