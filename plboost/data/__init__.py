"""Ranking data: SVMlight/LETOR files (with an on-disk cache of parsed files, and out-of-core chunk files for data
larger than memory), tables (pandas DataFrames, Parquet and CSV files) and synthetic data.

The modules, each on the ones before it: :mod:`~plboost.data.frames` (a DataFrame's checks and arrays),
:mod:`~plboost.data.ranking_data` (the in-memory dataset, :meth:`RankingData.from_pandas`),
:mod:`~plboost.data.svmlight_parser` (the text parser and its errors), :mod:`~plboost.data.svmlight` (the
in-memory loader), :mod:`~plboost.data.tabular` (the loader of Parquet and CSV files),
:mod:`~plboost.data.out_of_core` (data on disk, and the choice between memory and disk),
:mod:`~plboost.data.splits` (a split's files loaded together, with the loader their suffix calls for); beside them
:mod:`~plboost.data.cache` (parsed files kept on disk) and :mod:`~plboost.data.synthetic`.
"""

from .cache import clear_cache
from .groups import groups_from_feature, read_groups
from .out_of_core import OutOfCoreData, load_out_of_core
from .ranking_data import RankingData
from .splits import load_splits
from .svmlight import load_svmlight
from .svmlight_parser import DataFormatError
from .synthetic import make_synthetic, write_synthetic_splits
from .tabular import is_table, load_table

__all__ = ["DataFormatError", "OutOfCoreData", "RankingData", "clear_cache", "groups_from_feature", "is_table",
           "load_out_of_core", "load_splits", "load_svmlight", "load_table", "make_synthetic", "read_groups",
           "write_synthetic_splits"]
