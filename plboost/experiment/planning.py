"""Planning a comparison's runs from its output directory: which records to reuse, redo or run anew
(:func:`plan_runs`, provenance), the table's protocol, and which runs recorded earlier join the table."""

from __future__ import annotations

import re
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from .. import metrics
from .._engine_registry import ENGINES
from .._values import plain_value as _plain
from ..data.splits import largest_label
from ..engines.parameters import canonical_engine_params
from ..records import (UnreadableRecord, data_provenance, file_identity, normalized, package_versions, read_record,
                       stale_reasons)
from .results import Comparison, FoldResult
from .spec import RunSpec, shown_value


@dataclass
class PlannedRun:
    """What :func:`compare` does for one configuration, split and repeat: ``"new"`` (no record), ``"reuse"``
    (a record with the same provenance) or ``"redo"`` (a record that differs, for ``reasons``)."""

    spec: RunSpec
    split: object
    path: Path | None
    action: str
    reasons: list = field(default_factory=list)
    record: dict | None = None
    provenance: dict | None = None
    #: with tuning: the best trial's configuration, which is trained and tested, and what the search found
    trained_spec: RunSpec | None = None
    tuned: dict | None = None
    #: the protocol of the comparison that asked for the run (recorded with it; see :func:`table_protocol`)
    protocol: dict | None = None


def table_g_max(specs, splits, load_options=None) -> int | None:
    """ERR's ``g_max`` for every run of a table whose configurations leave it to the data (None where they set it,
    or with one split, whose runs each take its largest label anyway): the largest label of every split's files,
    so that no fold's ERR is on another scale than the others' (a Fold1 of labels 0-1 beside a Fold2 of 0-2 gave
    ERR with g_max 1 and 2, averaged). Scans the labels of every split's files before training
    (:func:`plboost.data.splits.largest_label`: no features are parsed)."""
    if specs[0].g_max is not None or len(splits) < 2:
        return None
    return max(largest_label([split.train, split.valid, split.test], **(load_options or {})) for split in splits)


def plan_runs(specs, splits, out_dir=None, *, repeats: int = 1, resume: bool = True, tune=None,
              spaces=None, protocol=None, table_options=None, evaluation=None, load_options=None) -> list[PlannedRun]:
    """For every split, configuration and repeat, whether :func:`compare` will reuse its record in
    ``out_dir``, redo it (the record's provenance differs, it cannot be read, or ``resume`` is off) or run
    it anew. An unreadable record is named in a warning. With ``tune`` (and the ``spaces`` of the
    configurations), the tuning settings and search space are part of the provenance; so are the
    ``table_options`` of tables (:func:`plboost.records.data_provenance`) and the ``evaluation`` settings the
    table resolved for every run (ERR's ``g_max``: see :func:`table_g_max`, which finds it from the files,
    read with ``load_options``, when ``evaluation`` is None)."""
    if evaluation is None:
        g_max = table_g_max(specs, splits, load_options) if out_dir is not None else None
        evaluation = {} if g_max is None else {"g_max": g_max}
    planned = []
    for split in splits:
        data = data_provenance(split, table_options) if out_dir is not None else None
        from_clicks = data_provenance(split, table_options, clicks=True) \
            if out_dir is not None and split.clicks is not None else None
        for spec in specs:
            for repeat in range(int(repeats)):
                spec_r = replace(spec, repeat=repeat)
                if out_dir is None:
                    provenance = None if tune is None else {"tuning": tune.provenance(spaces[spec.label])}
                    planned.append(PlannedRun(spec_r, split, None, "new", provenance=provenance))
                    continue
                path = record_path_of(out_dir, spec, split.name, repeat)
                wanted = run_provenance(spec_r, from_clicks if spec.clicks is not None else data)
                if tune is not None:
                    wanted["tuning"] = tune.provenance(spaces[spec.label])
                if evaluation:
                    wanted["evaluation"] = dict(evaluation)
                item = PlannedRun(spec_r, split, path, "new", provenance=wanted, protocol=protocol)
                planned.append(item)
                if not path.exists():
                    continue
                try:
                    record = read_record(path)
                except UnreadableRecord as error:
                    warnings.warn(f"{error}; the run is recomputed", RecordWarning, stacklevel=2)
                    item.action, item.reasons = "redo", ["unreadable record"]
                    continue
                reasons = stale_reasons(record.get("provenance"), wanted)
                if not resume:
                    reasons = ["--no-resume"]
                item.action, item.reasons = ("redo", reasons) if reasons else ("reuse", [])
                item.record = None if reasons else record
    return planned


class RecordWarning(UserWarning):
    """A run record in a comparison's output directory cannot be used; the run is recomputed."""


def run_provenance(spec: RunSpec, data: dict) -> dict:
    """Everything that determines the result of ``spec`` on a split (see :mod:`plboost.records`)."""
    shown = {name: value for name, value in asdict(spec).items() if name != "name"}  # display only
    if spec.clicks is None:  # a run on labels keeps the provenance it had before click logs
        del shown["clicks"], shown["examination"]
    provenance = {"data": data, "spec": normalized(shown), "versions": package_versions(spec.engine)}
    chosen = ENGINES[spec.engine].reproducible_settings
    if chosen:  # what plboost sets besides the spec: a record trained without it would not be rerun the same
        provenance["engine settings"] = normalized(dict(chosen))
    registered = [metric.column(None) for metric in metrics.registered_metrics()]
    if registered:  # metrics of the user's own (plboost.metrics.register_metric): a record without them is stale
        provenance["registered metrics"] = registered
    return provenance


#: the run settings a table's configurations share unless one sets its own; with the repeats and the tuning
#: settings, the table's protocol
PROTOCOL_SETTINGS = ("rounds", "early_stopping", "learning_rate", "num_leaves", "seed", "eval_at", "no_relevant",
                     "g_max")


def table_protocol(specs, repeats: int = 1, tune=None) -> dict:
    """The protocol of a table of ``specs``: each of :data:`PROTOCOL_SETTINGS` at the value most configurations
    share (the first one's on a tie; a configuration with another value sets its own), the number of repeats, and
    the tuning budget and seeds (None without tuning). Runs recorded under another protocol never join the table.

    >>> table_protocol([RunSpec(rounds=40), RunSpec(objective="lambdarank", rounds=40, learning_rate=0.05)])["rounds"]
    40
    """
    protocol = {}
    for name in PROTOCOL_SETTINGS:
        values = [_plain(getattr(spec, name)) for spec in specs]
        protocol[name] = max(values, key=values.count)  # the first of the most common
    protocol["repeats"] = int(repeats)
    protocol["tuning"] = None if tune is None else tune.settings()
    return protocol


def protocol_differences(record: dict, spec: RunSpec, protocol: dict) -> list[str]:
    """How the protocol a run was recorded under (its ``protocol``, else its configuration's settings) differs
    from ``protocol``, e.g. ``["rounds 3 (this table: 40)"]``. A setting in which the run's configuration
    differed from its own protocol was its own and is part of its identity, not of the protocol."""
    recorded = record.get("protocol") or {}
    differences = []
    for name in PROTOCOL_SETTINGS:
        value = _plain(getattr(spec, name))
        if name in recorded and recorded[name] != value:
            continue  # the configuration's own setting
        if value != protocol[name]:
            differences.append(f"{name.replace('_', ' ')} {shown_value(value)} "
                               f"(this table: {shown_value(protocol[name])})")
    tuning = (record.get("provenance") or {}).get("tuning")
    tuning = None if tuning is None else {name: v for name, v in tuning.items() if name != "space"}
    if _plain(tuning) != _plain(protocol.get("tuning")):
        differences.append(f"tuning {_shown_tuning(tuning)} (this table: {_shown_tuning(protocol.get('tuning'))})")
    return differences


def _unshown_engine_params(spec: RunSpec, table_specs) -> str:
    """The engine parameters of an unnamed configuration recorded earlier, as text ("none" for none), when they
    are not those of any unnamed configuration of the table on its engine (or it has some, and the table no such
    configuration): its label would hide them. "" when its label tells the whole story."""
    if spec.name is not None:
        return ""
    own = _plain(canonical_engine_params(spec.engine, spec.engine_params))
    same = [_plain(canonical_engine_params(s.engine, s.engine_params)) for s in table_specs
            if s.engine == spec.engine and s.name is None]  # a named one's label says nothing of its parameters
    if (own in same) if same else not own:
        return ""
    return ", ".join(f"{name}={shown_value(value)}" for name, value in sorted(own.items())) or "none"


def _shown_tuning(tuning: dict | None) -> str:
    if not tuning:
        return "none"
    return ", ".join(f"{name.replace('_', ' ')} {shown_value(value)}" for name, value in tuning.items())


def add_earlier_runs(comparison: Comparison, out_dir, splits, planned, log) -> None:
    """Add the runs recorded in ``out_dir`` for the same data files and conventions under configurations
    that this comparison did not run, when they were made under the comparison's protocol (its first
    ``repeats`` repeats); name those left out in :attr:`Comparison.left_out`."""
    current = {item.path for item in planned}
    contents = {}  # each split's data, as its runs on labels and those from a click log read them
    for item in planned:
        identity = {role: file_identity(d) for role, d in item.provenance["data"].items()}
        if identity not in contents.setdefault(item.split.name, []):
            contents[item.split.name].append(identity)
    earlier, found, left_out, tuned = {}, {}, {}, set()
    asked = {spec.key for spec in comparison.specs}
    repeats = int(comparison.protocol.get("repeats", 1)) if comparison.protocol else 1
    for path in sorted((Path(out_dir) / "runs").glob("*/*.json")):
        if path in current:
            continue
        try:
            record = read_record(path)
        except UnreadableRecord as error:
            warnings.warn(f"{error}; left out", RecordWarning, stacklevel=3)
            continue
        provenance = record.get("provenance") or {}
        recorded_data = provenance.get("data") or {}
        if record.get("split") not in contents:
            continue
        if {role: file_identity(d) for role, d in recorded_data.items()} not in contents[record["split"]]:
            continue
        if comparison.conventions and record.get("conventions") != comparison.conventions:
            if log:
                log(f"{path}: left out (other evaluation conventions)")
            continue
        try:
            spec = RunSpec(**{**provenance["spec"], "eval_at": tuple(provenance["spec"].get("eval_at") or ())},
                           name=record.get("name"))
        except (TypeError, ValueError) as error:
            warnings.warn(f"{path}: the recorded configuration cannot be used ({error}); left out", RecordWarning,
                          stacklevel=3)
            continue
        if comparison.metric_names and sorted(record["metrics"]) != sorted(comparison.metric_names):
            warnings.warn(f"{path}: recorded with other metrics ({', '.join(record['metrics'])}); left out",
                          RecordWarning, stacklevel=3)
            continue
        if spec.key in asked:
            continue  # the records of a configuration asked for again, perhaps written another way
        differences = protocol_differences(record, spec, comparison.protocol) if comparison.protocol else []
        if differences:
            left_out.setdefault(f"{spec.label}: another protocol ({', '.join(differences)})", path.parent)
            continue
        hidden = _unshown_engine_params(spec, comparison.specs)
        if hidden:
            left_out.setdefault(f"{spec.label}: engine parameters its label does not show ({hidden}); a name "
                                "would show them", path.parent)
            continue
        if spec.label in comparison.labels or (spec.label in earlier and earlier[spec.label].key != spec.key):
            left_out.setdefault(f"{spec.label}: recorded under other settings with the same label", path.parent)
            continue  # the table could not tell them apart
        if record.get("repeat", 0) >= repeats:
            continue  # the table's runs are repeats 0 to repeats - 1
        earlier.setdefault(spec.label, spec)
        found.setdefault(spec.label, []).append(replace(FoldResult.from_dict(record), label=spec.label))
        if record.get("tuned") is not None:
            tuned.add(spec.label)
    for label in list(earlier):
        if label not in tuned:
            found[label] += seed_free_repeats(found[label], list(contents), repeats)
        runs = {(result.split, result.repeat) for result in found[label]}
        missing = sorted(set(contents) - {split for split, _ in runs})
        complete = [r for r in range(repeats) if all((split, r) in runs for split in contents)]
        if missing:  # the tests pair queries: every configuration of a table covers the same splits and repeats
            warnings.warn(f"{label}: recorded earlier in {out_dir} without a usable record on {', '.join(missing)}; "
                          "left out", RecordWarning, stacklevel=3)
        elif len(complete) < repeats:
            left_out[f"{label}: another protocol (repeats {len(complete)} (this table: {repeats}))"] = (
                record_path_of(out_dir, earlier[label], "").parent)
        else:
            comparison.results += found[label]
            continue
        del earlier[label]
    comparison.specs = list(comparison.specs) + list(earlier.values())
    comparison.earlier = list(earlier)
    comparison.left_out = list(left_out)
    if log:
        for reason, folder in left_out.items():
            log(f"{folder}: left out ({reason})")


def same_results(first: FoldResult, second: FoldResult) -> bool:
    """Whether two repeats of a configuration on a split gave the same test results, validation curve and trees:
    a configuration that does not depend on the seed (lambdarank without bagging, ...)."""
    if not first.per_query or first.per_query.keys() != second.per_query.keys():
        return False
    return (first.trees_used == second.trees_used
            and np.array_equal(first.valid_history, second.valid_history, equal_nan=True)
            and all(np.array_equal(first.per_query[m], second.per_query[m], equal_nan=True) for m in first.per_query))


def seed_free_repeats(results: list[FoldResult], splits, repeats: int) -> list[FoldResult]:
    """Repeat 0's result as each repeat 2.. ``repeats - 1`` missing from ``results`` (one untuned configuration's) on
    a split where its repeats 0 and 1 gave the same results: :func:`plboost.experiment.compare` trains no such
    repeat (it would give the same again), so its records stop at repeat 1."""
    have = {(result.split, result.repeat): result for result in results}
    copies = []
    for split in splits:
        first, second = have.get((split, 0)), have.get((split, 1))
        if first is not None and second is not None and same_results(first, second):
            copies += [replace(first, repeat=r) for r in range(2, repeats) if (split, r) not in have]
    return copies


def record_path_of(out_dir, spec: RunSpec, split: str, repeat: int = 0) -> Path:
    """Where :func:`compare` keeps the record of configuration ``spec`` on ``split`` (repeat ``repeat``):
    ``runs/<objective>_<engine>_<key>/``, by :attr:`RunSpec.key`, so that the same configuration written
    another way (parameters in another order, a default given, a tuple for a list) finds its records."""
    name = f"{split}.json" if repeat == 0 else f"{split}.repeat{repeat}.json"
    folder = re.sub(r"[^A-Za-z0-9_.=-]+", "_", f"{spec.objective}_{spec.engine}").strip("_") + f"_{spec.key}"
    return Path(out_dir) / "runs" / folder / name
