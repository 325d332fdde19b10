"""One experiment run: (data, objective, engine, parameters) -> trained model, metrics and timings.

The driver behind ``plboost train`` and ``plboost demo``. Metrics are computed by :mod:`plboost.metrics`
on the model's raw scores, with the conventions recorded next to the numbers.
"""

from __future__ import annotations

import json
import platform
from dataclasses import asdict, dataclass, field

import numpy as np

from . import __version__, engines, metrics
from .engines import TrainedModel


@dataclass
class RunSpec:
    """What to train: objective and its parameters, engine, tree parameters, evaluation conventions."""

    objective: str = "plrank"
    objective_params: dict = field(default_factory=dict)
    engine: str = "lightgbm"
    rounds: int = 100
    learning_rate: float = 0.1
    num_leaves: int = 31
    early_stopping: int | None = None
    eval_at: tuple[int, ...] = (1, 3, 5, 10)
    engine_params: dict = field(default_factory=dict)
    seed: int = 0
    no_relevant: str = "one"
    g_max: int = 4

    def __post_init__(self):
        self.eval_at = tuple(int(k) for k in self.eval_at)
        if not self.eval_at or min(self.eval_at) < 1:
            raise ValueError(f"eval_at must be positive cut-offs, got {self.eval_at}")
        for name in ("rounds", "num_leaves"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate}")
        metrics.Conventions(no_relevant=self.no_relevant, g_max=self.g_max)  # validates both

    @property
    def label(self) -> str:
        """A short name for tables, e.g. ``plrank(n_permutations=3) [lightgbm]``."""
        params = ", ".join(f"{k}={v}" for k, v in self.objective_params.items())
        return f"{self.objective}({params}) [{self.engine}]" if params else f"{self.objective} [{self.engine}]"


@dataclass
class RunResult:
    """A finished run: the spec, the trained model, and the metrics on the evaluation split."""

    spec: RunSpec
    model: TrainedModel
    evaluated_on: str
    metrics: dict
    conventions: str

    def to_dict(self) -> dict:
        return {
            "objective": self.spec.objective,
            "objective_params": self.model.objective_params,
            "engine": self.spec.engine,
            "spec": asdict(self.spec),
            "engine_params": _jsonable(self.model.engine_params),
            "evaluated_on": self.evaluated_on,
            "metrics": self.metrics,
            "conventions": self.conventions,
            "train_seconds": self.model.train_seconds,
            "rounds": self.model.rounds,
            "best_iteration": self.model.best_iteration,
            "trees_used": self.model.trees_used,
            "versions": versions(),
        }

    def save_json(self, path) -> None:
        with open(path, "w") as handle:
            json.dump(self.to_dict(), handle, indent=2)
            handle.write("\n")


def evaluate_scores(scores, data, spec: RunSpec) -> tuple[dict, str]:
    """Metrics of ``scores`` on ``data`` (NDCG@k and ERR@k for every k of ``spec.eval_at``, ERR, MAP)."""
    result = metrics.evaluate(scores, data.labels, offsets=data.offsets, ndcg_at=spec.eval_at,
                              err_at=spec.eval_at, no_relevant=spec.no_relevant, g_max=spec.g_max)
    conventions = str(result.pop("conventions"))
    return {name: float(value) for name, value in result.items()}, conventions


def run(spec: RunSpec, train, valid=None, test=None, *, progress: bool = False) -> RunResult:
    """Train ``spec`` on ``train`` (early stopping on ``valid``) and evaluate on ``test``.

    Without ``test`` the metrics are those of ``valid``, and without either, of ``train``;
    :attr:`RunResult.evaluated_on` says which.
    """
    objective, builtin_params = engines.resolve_objective(spec.objective, spec.engine, spec.objective_params)
    model = engines.train(spec.engine, objective, train, valid, rounds=spec.rounds,
                          learning_rate=spec.learning_rate, num_leaves=spec.num_leaves,
                          early_stopping=spec.early_stopping, eval_at=max(spec.eval_at),
                          engine_params={**builtin_params, **spec.engine_params}, seed=spec.seed,
                          progress=progress)
    split, data = next((name, d) for name, d in (("test", test), ("valid", valid), ("train", train))
                       if d is not None)
    values, conventions = evaluate_scores(model.predict(data.X), data, spec)
    return RunResult(spec, model, split, values, conventions)


def format_table(rows: list[dict], columns: list[str], *, digits: int = 4) -> str:
    """A Markdown table of ``rows`` (dicts) restricted to ``columns``; floats get ``digits`` decimals."""
    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return f"{value:.{digits}f}"
        return "" if value is None else str(value)

    body = [[cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in body)) if body else len(c) for i, c in enumerate(columns)]
    def line(cells):
        return "| " + " | ".join(text.ljust(w) for text, w in zip(cells, widths)) + " |"
    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(columns), rule] + [line(r) for r in body])


def versions() -> dict:
    """Versions of Python, plboost and the engines, for result files."""
    import lightgbm
    import numba
    import xgboost

    return {"python": platform.python_version(), "plboost": __version__, "lightgbm": lightgbm.__version__,
            "xgboost": xgboost.__version__, "numpy": np.__version__, "numba": numba.__version__}


def _jsonable(params: dict) -> dict:
    return {k: v if isinstance(v, (str, int, float, bool, list, type(None))) else repr(v)
            for k, v in params.items()}
