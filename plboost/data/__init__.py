"""Ranking data: SVMlight/LETOR files (with an on-disk cache of parsed files) and synthetic data."""

from .cache import clear_cache
from .svmlight import DataFormatError, RankingData, load_splits, load_svmlight
from .synthetic import make_synthetic, write_synthetic_splits

__all__ = ["DataFormatError", "RankingData", "clear_cache", "load_splits", "load_svmlight", "make_synthetic",
           "write_synthetic_splits"]
