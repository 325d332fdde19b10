"""Run by Python at start-up in the processes that tests start (``tests/conftest.py`` puts this directory first on
their ``PYTHONPATH``): scikit-learn cannot be imported there, as in a core install of plboost, which does not
depend on it. LightGBM and XGBoost import scikit-learn whenever it is installed, about 1.5 s of CPU in every fresh
process on a 2-core machine (docs/benchmarks.md); the suite starts over a hundred such processes.

Another ``sitecustomize`` later on the path (a distribution's, a virtual environment's) still runs, after this.
"""

import importlib.machinery
import importlib.util
import os
import sys


class _NoScikitLearn:
    """A finder, first on ``sys.meta_path``, for which scikit-learn's modules do not exist: importing one raises
    ``ModuleNotFoundError: No module named 'sklearn'``, as where it is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "sklearn" or name.startswith("sklearn."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


if __name__ == "sitecustomize":
    sys.meta_path.insert(0, _NoScikitLearn())

    _here = os.path.dirname(os.path.abspath(__file__))
    _rest = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != _here]
    _spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _rest)
    if _spec is not None and _spec.loader is not None:
        _module = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_module)
