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
"""

from ..records import environment_versions as versions
from .comparison import compare, dataset_outputs
from .planning import (PROTOCOL_SETTINGS, PlannedRun, RecordWarning, plan_runs, protocol_differences, record_path_of,
                       run_provenance, table_protocol)
from .reports import describe_protocol, format_table, plotting
from .results import DEFAULT_BASELINE, Comparison, FoldResult, choose_baseline
from .running import RunResult, dask_client, evaluate_scores, evaluation_spec, run, run_dask, warm_up
from .spec import BASELINES, RunSpec, checked_objective_params, load_config, parse_run, with_baselines

__all__ = ["BASELINES", "DEFAULT_BASELINE", "PROTOCOL_SETTINGS", "Comparison", "FoldResult", "PlannedRun",
           "RecordWarning", "RunResult", "RunSpec", "checked_objective_params", "choose_baseline", "compare",
           "dask_client", "dataset_outputs", "describe_protocol", "evaluate_scores", "evaluation_spec",
           "format_table", "load_config", "parse_run", "plan_runs", "plotting", "protocol_differences",
           "record_path_of", "run", "run_dask", "run_provenance", "table_protocol", "versions", "warm_up",
           "with_baselines"]
