"""Deprecated: PA-ListMLE lives in :mod:`plboost.objectives.pa_listmle` (the registry's name), or use
``plboost.PositionAwareListMLE``."""

import warnings

from .pa_listmle import POSITION_WEIGHTS, PositionAwareListMLE, exponential_weights

warnings.warn("plboost.objectives.palistmle is now plboost.objectives.pa_listmle (or use "
              "plboost.PositionAwareListMLE); the old module will be removed", DeprecationWarning, stacklevel=2)

__all__ = ["POSITION_WEIGHTS", "PositionAwareListMLE", "exponential_weights"]
