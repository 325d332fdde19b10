"""Run records of a comparison: what determines a result (its provenance), written atomically.

``plboost compare --out DIR`` keeps every finished run in ``DIR/runs/<objective>_<engine>_<key>/<split>.json``
(``<split>.repeat<r>.json`` for repeats after the first), so an interrupted comparison resumes instead of
starting again. A record is worth reusing only if rerunning would give the same result, so it carries
everything that determines that result:

* ``data``: for the training, validation and test files, the path (for people) and a SHA-256 of the
  file's bytes (for the comparison: a file edited in place, or another dataset under the same name, is
  a different file);
* ``spec``: the whole configuration: objective and its parameters, engine and raw engine parameters,
  rounds, learning rate, leaves, early stopping, seed and repeat, evaluation conventions, leaf values;
* ``engine settings``: what plboost sets in the engine besides the spec so that a run does not depend on
  timing (LightGBM's ``force_col_wise`` and ``deterministic``);
* ``versions``: plboost, LightGBM and XGBoost;
* ``tuning`` (tuned comparisons): the number of trials, seed, early stopping and search space.

:func:`stale_reasons` compares two provenances and says, in words, what differs. Records are written to
a temporary file and renamed over the old one (:func:`write_json_atomic`), so a killed process or a
full disk leaves either the old record or the new one, never half of one; a record that cannot be read
all the same (written by hand, or by an older plboost) raises :class:`UnreadableRecord`, which names the
file, and the run is recomputed.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from ._engine_registry import ENGINES
from ._writing import json_text, write_atomic
from .data.tabular import TABLE_OPTIONS, is_table

#: the version of the record format; records of another format are recomputed
RECORD_FORMAT = 2
#: the packages whose versions a record must match to be reused: plboost and the engines it depends on, and an
#: optional engine (CatBoost) for the runs that train with it (:func:`package_versions`)
VERSIONED_PACKAGES = ("plboost", *ENGINES)

_fingerprints: dict[tuple, str] = {}


def file_fingerprint(path) -> str:
    """``"sha256:<hex>"`` of the file's bytes (as stored: a ``.gz`` file is hashed compressed).

    Hashing reads the whole file once (about 1 GB/s); the result is remembered for the life of the
    process, keyed by the file's inode, size, and modification and status-change times in nanoseconds,
    so the several configurations of a comparison hash each file once.
    """
    path = Path(path)
    status = path.stat()
    key = (str(path.resolve()), status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    digest = _fingerprints.get(key)
    if digest is None:
        with open(path, "rb") as handle:
            digest = "sha256:" + hashlib.file_digest(handle, "sha256").hexdigest()
        _fingerprints[key] = digest
    return digest


def data_provenance(split, table_options: dict | None = None, *, clicks: bool = False) -> dict:
    """Path and content fingerprint of each file of a :class:`~plboost.data.layouts.Split`; a table's also has
    the options it is read with (``table``: the query and label columns, the features, sort; ``table_options``
    are those given, the others at their defaults), which decide what the same file holds. With ``clicks``, also
    the split's click log tables (``clicks``, ``documents``), for a run that trains from them, and its logging
    ranker's model file (``logger``) where the log has one."""
    files = {"train": split.train, "valid": split.valid, "test": split.test}
    provenance = {role: None if path is None else _file_provenance(path, table_options)
                  for role, path in files.items()}
    if clicks:
        roles = ("clicks", "documents", "logger") if getattr(split, "logger", None) is not None else \
            ("clicks", "documents")
        for role in roles:
            path = getattr(split, role)
            provenance[role] = None if path is None else {"path": str(path), "content": file_fingerprint(path)}
    return provenance


def _file_provenance(path, table_options: dict | None) -> dict:
    entry = {"path": str(path), "content": file_fingerprint(path)}
    if is_table(path):
        entry["table"] = normalized({**TABLE_OPTIONS, **(table_options or {})})
    return entry


def file_identity(entry: dict | None) -> tuple:
    """What makes a file of a record's data provenance the same data: its content and, for a table, the options
    it is read with."""
    return (entry or {}).get("content"), (entry or {}).get("table")


def package_versions(engine: str | None = None) -> dict:
    """Versions of the packages that decide a run's result (:data:`VERSIONED_PACKAGES`): plboost's, those of the
    engines plboost depends on, and an optional engine's only where it is the run's ``engine`` (a record of a
    LightGBM run stays valid whether or not CatBoost is installed, or upgraded)."""
    from ._version import __version__

    return {"plboost": __version__, **{name: record.version for name, record in ENGINES.items()
                                       if record.extra is None or name == engine}}


def environment_versions(engines=()) -> dict:
    """Versions of Python, NumPy and Numba besides :func:`package_versions` (with those of the optional
    ``engines`` given), for result files."""
    import platform

    import numba
    import numpy

    optional = {name: ENGINES[name].version for name in engines if ENGINES[name].extra is not None}
    return {"python": platform.python_version(), **package_versions(), **optional, "numpy": numpy.__version__,
            "numba": numba.__version__}


def stale_reasons(recorded: dict | None, wanted: dict) -> list[str]:
    """What differs between a record's provenance and the wanted one, as short phrases; empty when the
    record can be reused.

    >>> old = {"data": {"test": {"path": "a/test.txt", "content": "sha256:1"}}, "spec": {"rounds": 300},
    ...        "versions": {"lightgbm": "4.6.0"}}
    >>> new = {"data": {"test": {"path": "b/test.txt", "content": "sha256:2"}}, "spec": {"rounds": 5},
    ...        "versions": {"lightgbm": "4.7.0"}}
    >>> stale_reasons(old, new)
    ['test file content (a/test.txt -> b/test.txt)', 'rounds 300 -> 5', 'lightgbm 4.6.0 -> 4.7.0']
    """
    if not recorded:
        return ["no provenance (a record of an older plboost)"]
    reasons = []
    old_data, new_data = recorded.get("data") or {}, wanted["data"]
    for role, new in new_data.items():
        old = old_data.get(role)
        if (old or {}).get("content") != (new or {}).get("content"):
            where = " -> ".join(dict.fromkeys(str(d["path"]) for d in (old, new) if d))
            reasons.append(f"{role} file content ({where})" if old and new else f"{role} file ({where or 'none'})")
        elif file_identity(old) != file_identity(new):
            before, now = (old or {}).get("table") or {}, (new or {}).get("table") or {}
            changed = [f"{name} {_show(before.get(name))} -> {_show(now.get(name))}"
                       for name in dict.fromkeys([*now, *before]) if not _same(before.get(name), now.get(name))]
            reasons.append(f"{role} table read with {', '.join(changed)}")
    old_spec, new_spec = recorded.get("spec") or {}, wanted["spec"]
    for name in list(new_spec) + [name for name in old_spec if name not in new_spec]:
        if not _same(old_spec.get(name), new_spec.get(name)):
            reasons.append(f"{name} {_show(old_spec.get(name))} -> {_show(new_spec.get(name))}")
    old_versions = recorded.get("versions") or {}
    for package in dict.fromkeys([*wanted["versions"], *old_versions]):
        if package not in VERSIONED_PACKAGES:
            continue
        if old_versions.get(package) != wanted["versions"].get(package):
            reasons.append(f"{package} {old_versions.get(package, '?')} -> {wanted['versions'].get(package)}")
    for key in dict.fromkeys([*wanted, *recorded]):
        old, new = recorded.get(key), wanted.get(key)
        if key in ("data", "spec", "versions") or _same(old, new):
            continue
        if isinstance(old, dict) or isinstance(new, dict):
            old, new = old or {}, new or {}
            changed = [f"{name} {_show(old.get(name))} -> {_show(new.get(name))}"
                       for name in dict.fromkeys([*new, *old]) if not _same(old.get(name), new.get(name))]
            reasons.append(f"{key}: {', '.join(changed)}")
        elif isinstance(old, list) or isinstance(new, list):
            reasons.append(f"{key} {_show(old)} -> {_show(new)}")
        else:
            reasons.append(f"{key}: {'none' if old is None else 'set'} -> {'none' if new is None else 'set'}")
    return reasons


def normalized(value):
    """``value`` as it reads back from JSON (tuples become lists), for comparing with a record."""
    return json.loads(json.dumps(value))


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return normalized(a) == normalized(b)


def _show(value) -> str:
    return "unset" if value is None else json.dumps(value) if isinstance(value, (dict, list)) else str(value)


class UnreadableRecord(ValueError):
    """A run record that is empty, truncated or not a record of this plboost; the message names the file."""


def read_record(path) -> dict:
    """The record at ``path``; :class:`UnreadableRecord` (naming the file) when it cannot be used."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise UnreadableRecord(f"{path}: cannot read the run record ({error})") from None
    if not text.strip():
        raise UnreadableRecord(f"{path}: the run record is empty (a run killed while writing it?)")
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise UnreadableRecord(f"{path}: the run record is not valid JSON ({error}); truncated?") from None
    if not isinstance(record, dict) or "metrics" not in record or "label" not in record:
        raise UnreadableRecord(f"{path}: not a plboost run record (no 'label' and 'metrics')")
    _read_nulls_as_nan(record)
    problem = record_problem(record)
    if problem is not None:
        raise UnreadableRecord(f"{path}: a damaged run record ({problem})")
    return record


def _read_nulls_as_nan(record: dict) -> None:
    """The NaN a record's numbers were written as (``null``, by :func:`plboost._writing.json_text`: a metric with no
    query counted), back as NaN, so that a reused run reads as the run that wrote it."""
    def number(value):
        return math.nan if value is None else value

    if isinstance(record.get("metrics"), dict):
        record["metrics"] = {name: number(value) for name, value in record["metrics"].items()}
    if isinstance(record.get("valid_history"), list):
        record["valid_history"] = [number(value) for value in record["valid_history"]]
    if isinstance(record.get("per_query"), dict):
        record["per_query"] = {name: [number(v) for v in values] if isinstance(values, list) else values
                               for name, values in record["per_query"].items()}


def record_problem(record: dict) -> str | None:
    """What makes ``record`` unusable as a run record of this format, in a few words; None when every field a
    comparison reads has its type (a record edited by hand, or cut by another program, fails here rather than
    in the middle of a table).

    >>> record_problem({"format": 2, "label": "plrank [lightgbm]", "split": "Fold1", "conventions": "...",
    ...                 "metrics": "garbage"})
    "'metrics' is not a table of numbers"
    """
    if record.get("format") != RECORD_FORMAT:
        return f"format {record.get('format')!r}, where this plboost writes {RECORD_FORMAT}"
    for name, kind in (("label", str), ("split", str), ("conventions", str)):
        if not isinstance(record.get(name), kind):
            return f"no {name!r} text" if name not in record else f"{name!r} is not text"
    metrics = record.get("metrics")
    if not isinstance(metrics, dict) or not metrics or not all(_is_number(v) for v in metrics.values()):
        return "'metrics' is not a table of numbers"
    for name in ("train_seconds",):
        if not _is_number(record.get(name)):
            return f"{name!r} is not a number"
    for name, optional in (("trees_used", False), ("repeat", False), ("best_iteration", True)):
        value = record.get(name)
        if not (optional and value is None) and not (isinstance(value, int) and not isinstance(value, bool)
                                                     and value >= 0):
            return f"{name!r} is not a count"
    history = record.get("valid_history")
    if not isinstance(history, list) or not all(_is_number(v) for v in history):
        return "'valid_history' is not a list of numbers"
    provenance = record.get("provenance")
    if not isinstance(provenance, dict) or not isinstance(provenance.get("spec"), dict):
        return "no configuration ('provenance.spec')"
    files = provenance.get("data")
    if not isinstance(files, dict) or not all(entry is None or isinstance(entry, dict) for entry in files.values()):
        return "no data files ('provenance.data')"
    qids, per_query = record.get("qids"), record.get("per_query")
    if qids is None and per_query is None:
        return None
    if not isinstance(qids, list) or not isinstance(per_query, dict):
        return "'qids' and 'per_query' do not go together"
    if any(not isinstance(values, list) or len(values) != len(qids) or not all(_is_number(v) for v in values)
           for values in per_query.values()) or set(per_query) != set(metrics):
        return f"'per_query' does not hold one number per query ({len(qids)}) for each metric"
    return None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def write_json_atomic(path, payload) -> Path:
    """Write ``payload`` as JSON to ``path`` through a temporary file in the same directory, flushed to
    disk and renamed over ``path``: readers see the old file or the whole new one."""
    def write(handle):
        handle.write(json_text(payload, indent=1).encode())
    return write_atomic(path, write, make_parents=True)


def save_array_atomic(path, array) -> Path:
    """``numpy.save`` through a temporary file and a rename, as :func:`write_json_atomic`."""
    import numpy as np

    return write_atomic(path, lambda handle: np.save(handle, array), make_parents=True)
