"""plboost: Plackett-Luce-family listwise ranking objectives for LightGBM and XGBoost."""

__version__ = "0.1.0"
