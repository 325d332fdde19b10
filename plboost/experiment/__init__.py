"""Experiments: one run = (data, objective, engine, parameters) -> model, metrics and timings; a
comparison = many runs over the folds of a benchmark -> a table.

The driver behind ``plboost train``, ``compare`` and ``demo``. Metrics are computed by
:mod:`plboost.metrics` on the model's raw scores, with the conventions recorded next to the numbers.
Its modules import one way, each from those above it in this list only:

- :mod:`~plboost.experiment.spec`: what to train (:class:`RunSpec`, its key, ``--run`` text and TOML files);
- :mod:`~plboost.experiment.running`: train and evaluate one configuration (:func:`run`, :func:`run_dask`);
- :mod:`~plboost.experiment.reports`: headers, Markdown tables, result files and plots of a comparison;
- :mod:`~plboost.experiment.results`: a comparison's results as plain data (:class:`Comparison`);
- :mod:`~plboost.experiment.planning`: records, provenance, resuming, the table's protocol;
- :mod:`~plboost.experiment.comparison`: the loop (:func:`compare`), with tuning (:mod:`plboost.tuning`) given a
  function that trains a trial.

Names load on first use (a module-level ``__getattr__``, PEP 562): ``from plboost.experiment import RunSpec`` loads
:mod:`~plboost.experiment.spec` alone, so a command refuses a bad configuration before the comparison's modules
(pandas, SciPy's statistics) have loaded.
"""

from __future__ import annotations

import importlib

#: public name -> the module of this package that defines it
_PUBLIC = {
    **dict.fromkeys(("compare", "dataset_outputs"), "comparison"),
    **dict.fromkeys(("PROTOCOL_SETTINGS", "PlannedRun", "RecordWarning", "plan_runs", "protocol_differences",
                     "record_path_of", "run_provenance", "table_protocol"), "planning"),
    **dict.fromkeys(("describe_protocol", "format_table", "plotting"), "reports"),
    **dict.fromkeys(("DEFAULT_BASELINE", "Comparison", "FoldResult", "choose_baseline"), "results"),
    **dict.fromkeys(("RunResult", "dask_client", "evaluate_scores", "evaluation_spec", "run", "run_dask", "warm_up"),
                    "running"),
    **dict.fromkeys(("BASELINES", "RunSpec", "check_click_configurations", "checked_objective_params", "load_config",
                     "parse_run", "with_baselines"), "spec"),
}

__all__ = sorted([*_PUBLIC, "versions"])


def __getattr__(name: str):
    if name == "versions":
        from ..records import environment_versions as value
    elif name in _PUBLIC:
        value = getattr(importlib.import_module(f"{__name__}.{_PUBLIC[name]}"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
