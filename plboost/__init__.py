"""plboost: Plackett-Luce-family listwise ranking objectives for LightGBM and XGBoost."""

from ._queries import CutQueryError
from .cv import query_folds

__version__ = "0.1.0"

__all__ = ["CutQueryError", "query_folds"]
