"""Ranking data: SVMlight/LETOR files (with an on-disk cache of parsed files, and out-of-core chunk files for data
larger than memory) and synthetic data."""

from .cache import clear_cache
from .out_of_core import OutOfCoreData, load_out_of_core
from .svmlight import DataFormatError, RankingData, load_splits, load_svmlight
from .synthetic import make_synthetic, write_synthetic_splits

__all__ = ["DataFormatError", "OutOfCoreData", "RankingData", "clear_cache", "load_out_of_core", "load_splits",
           "load_svmlight", "make_synthetic", "write_synthetic_splits"]
