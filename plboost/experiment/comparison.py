"""The comparison loop: :func:`compare` trains and evaluates every configuration on every split of a benchmark
(tuning first when asked), reusing what its output directory holds."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from .._constraints import Integer, check
from ..clicks.training import LOGGER
from ..clicks.log import ClickLogError, find_click_log, find_logging_model, holds_click_log, load_click_log
from ..data import OutOfCoreData, RankingData, load_splits
from ..data.splits import match_columns, predict_scores
from ..data.tabular import TABLE_OPTIONS
from ..records import environment_versions, normalized, save_array_atomic, write_json_atomic
from ..tuning import apply_params, best_trial, import_optuna, search, search_space, storage_url, study_name, trial_rows
from .planning import PlannedRun, add_earlier_runs, plan_runs, same_results, table_g_max, table_protocol
from .reports import counted
from .results import Comparison, FoldResult
from .running import evaluate_scores, evaluation_g_max, jsonable_params, run, warm_up
from .spec import RunSpec, check_click_configurations


def compare(specs, layout, *, splits=None, repeats: int = 1, out_dir=None, resume=True, progress=False, log=None,
            load_options=None, tune=None, click_log=None) -> Comparison:
    """Train every configuration of ``specs`` on every split of ``layout`` and evaluate on its test file.

    Parameters
    ----------
    specs : list of RunSpec
        The configurations; their evaluation conventions must agree.
    layout : plboost.data.layouts.Layout
        The benchmark (see :func:`plboost.data.layouts.find_layout`).
    splits : list of str, optional
        Names of the splits to use (e.g. ``["Fold1", "Fold2"]``); default all.
    repeats : int
        Train each configuration on each split this many times, repeat ``r`` with the engine's seed and the
        objective's seed (where it has one) shifted by ``r``.
    out_dir : path, optional
        Where each run's record (``runs/<objective>_<engine>_<key>/<split>.json``, see :func:`record_path_of`) and test
        predictions (``.npy``) are kept. With ``resume``, a run whose record has the same provenance (data
        contents, configuration, versions) is reused; any other record is replaced by a new run. Runs
        recorded there earlier for the same data and evaluation conventions, under configurations not in
        ``specs``, join the comparison when they were made under its protocol (:func:`table_protocol`: rounds,
        early stopping, learning rate and leaves unless a configuration sets its own, seed, repeats, tuning
        budget and seed, metric settings); the others are named in :attr:`Comparison.left_out` and the header.
    log : callable, optional
        Called with a line of text after each run.
    load_options : dict, optional
        Options for :func:`plboost.data.load_splits` (e.g. ``cache``, ``progress``; ``out_of_core`` True, False or
        None to read the files out of core, in memory, or as the memory available allows, and
        ``memory_budget_bytes``; ``query``, ``label``, ``features`` and ``sort`` for tables, which are part of the
        runs' provenance).
    tune : plboost.tuning.Tuning, optional
        Tune every configuration on every split with the same budget before testing it (see
        :mod:`plboost.tuning`); the test file of a split is read only after all its searches ended.
    click_log : path, optional
        A directory of click logs that the configurations with ``clicks`` train from in place of each split's
        training file (validated and tested on the split's labelled files all the same): the log itself
        (``clicks.parquet`` ...) for a layout of one split, else one in a subdirectory per split
        (``<click_log>/Fold1/clicks.parquet``). Part of those runs' provenance.
    """
    specs, chosen = _checked_comparison(specs, layout, splits, repeats)
    chosen = _with_click_logs(specs, chosen, click_log, tune)
    spaces = _check_tuning(tune, specs, chosen, layout)
    protocol = table_protocol(specs, repeats, tune)
    table_options = {name: value for name, value in (load_options or {}).items() if name in TABLE_OPTIONS}
    g_max = table_g_max(specs, chosen, load_options)
    planned = plan_runs(specs, chosen, out_dir, repeats=repeats, resume=resume, tune=tune, spaces=spaces,
                        protocol=protocol, table_options=table_options,
                        evaluation={} if g_max is None else {"g_max": g_max})
    dataset_name = Path(layout.directory).name or str(layout.directory)
    results, conventions, tuning_rows, warm, same = [], "", [], {}, []
    for split in chosen:
        items = [p for p in planned if p.split is split]
        data, click_logs = None, {}
        if tune is not None:
            data = _search_split(items, split, tune, spaces, out_dir, dataset_name, tuning_rows,
                                 load_options=load_options, progress=progress, log=log)
        for item in items:
            where = f"{split.name} {item.spec.label}" + (f" repeat {item.spec.repeat}" if repeats > 1 else "")
            if item.action == "reuse":
                results.append(replace(FoldResult.from_dict(item.record), label=item.spec.label))
                conventions = item.record["conventions"]
                if log:
                    log(f"{where}: reused ({item.path})")
                continue
            copy = _seed_free_repeat(results, item)
            if copy is not None:
                results.append(copy)
                same.append(item.action)
                if log:
                    log(f"{where}: not trained: repeats 0 and 1 gave the same test results (the configuration does "
                        "not depend on the seed), so this repeat is repeat 0's result")
                continue
            if data is None:
                data = load_splits(split.train, split.valid, split.test, **(load_options or {}))
            if item.spec.clicks != LOGGER:  # the logger trains nothing
                warm[item.spec.label] = warm.get(item.spec.label, 0.0) + warm_up(item.trained_spec or item.spec)
            train = data[0]
            if item.spec.clicks is not None:
                if split.name not in click_logs:
                    click_logs[split.name] = load_click_log(split.clicks, split.documents)
                train = click_logs[split.name]
            fold, conventions = _run_and_record(item, train, *data[1:], progress=progress,
                                                g_max=evaluation_g_max(item.spec, *data) if g_max is None else g_max)
            results.append(fold)
            if log:
                redone = f" (redone: {', '.join(item.reasons)})" if item.action == "redo" else ""
                log(f"{where}: NDCG@10 {fold.metrics.get('NDCG@10', float('nan')):.4f}, "
                    f"{counted(fold.trees_used, 'tree')}, {fold.train_seconds:.1f} s{redone}")
    comparison = Comparison(str(layout.directory), specs, results, conventions, tuning_rows=tuning_rows,
                            tuning=None if tune is None else tune.describe(f"NDCG@{max(specs[0].eval_at)}"),
                            protocol=protocol, warm_up_seconds={k: v for k, v in warm.items() if v > 0})
    for item in planned:
        comparison.runs[item.action] = comparison.runs.get(item.action, 0) + 1
        for reason in item.reasons:
            key = reason.split(" (")[0] if "file" in reason else reason
            comparison.redo_reasons[key] = comparison.redo_reasons.get(key, 0) + 1
    for action in same:
        comparison.runs[action] -= 1
        comparison.runs["same"] = comparison.runs.get("same", 0) + 1
    if out_dir is not None:
        add_earlier_runs(comparison, out_dir, chosen, planned, log)
    return comparison


def dataset_outputs(layouts, out_dir=None) -> list[tuple[str, Path | None]]:
    """For a comparison over several datasets: each one's name (its directory's, by which results are matched
    across datasets, so two alike are refused) and output directory (``out_dir``, or with several datasets its
    subdirectory of that name; None without ``out_dir``)."""
    names = [Path(layout.directory).name for layout in layouts]
    if len(set(names)) != len(names):
        raise ValueError(f"two datasets have the same directory name ({', '.join(names)}); results are matched "
                         "by it")
    if out_dir is None:
        return [(name, None) for name in names]
    return [(name, Path(out_dir) / name if len(names) > 1 else Path(out_dir)) for name in names]


def _check_tuning(tune, specs, splits, layout) -> dict | None:
    """The search space of every configuration, or None without tuning; refuses splits without validation."""
    if tune is None:
        return None
    import_optuna()
    missing = [split.name for split in splits if split.valid is None]
    if missing:
        raise ValueError(f"tuning needs a validation file for every split; {layout.directory} has none for "
                         f"{', '.join(missing)} (the search must not see the test file)")
    return {spec.label: search_space(spec, tune.overrides) for spec in specs}


def _search_split(items, split, tune, spaces, out_dir, dataset_name, tuning_rows, *, load_options, progress, log):
    """Search every configuration of ``items`` on ``split`` (training and validation files only), set each
    item's ``trained_spec`` to its best trial, then load the test file: returns (train, valid, test)."""
    todo = [item for item in items if item.action != "reuse"]
    storage = storage_url(out_dir) if out_dir is not None else None
    train = valid = None
    for item in items:
        spec = _tuning_spec(item.spec, tune)
        name = study_name(dataset_name, split.name, f"{spec.objective} [{spec.engine}] #{spec.key}", spec.repeat)
        metric = f"NDCG@{max(spec.eval_at)}"
        if item in todo:
            if train is None:
                train, valid = load_splits(split.train, split.valid, **(load_options or {}))
            if log:
                log(f"{split.name} {spec.label}: searching, {tune.n_trials} trial(s)")
            seeded = replace(tune, seed=tune.seed + spec.repeat)
            study = search(spec, _trial_trainer(train, valid, metric), tuning=seeded, space=spaces[spec.label],
                           name=name, storage=storage, provenance=item.provenance, progress=progress, log=log)
            number, best = best_trial(study, tune.n_trials)
            item.trained_spec = apply_params(spec, spaces[spec.label], best.params)
            item.tuned = {"params": best.params, "trial": number, "validation": best.value, "metric": metric}
        elif storage is not None:
            study = _load_study(name, storage)
            if study is None:
                continue
        tuning_rows += trial_rows(study, dataset=dataset_name, split=split.name, configuration=spec.label,
                                  repeat=spec.repeat, metric=f"validation {metric}")
    if train is None:
        return None
    (test,) = load_splits(split.test, **(load_options or {}))
    return train, valid, _with_width(match_columns(test, train), train.n_features)


def _trial_trainer(train, valid, metric: str):
    """The function :func:`plboost.tuning.search` trains a trial with: (validation ``metric``, trees used)."""
    def train_trial(spec: RunSpec, on_round):
        result = run(spec, train, valid, on_round=on_round)
        return result.metrics[metric], result.model.trees_used

    return train_trial


def _tuning_spec(spec: RunSpec, tune) -> RunSpec:
    return spec if spec.early_stopping else replace(spec, early_stopping=tune.early_stopping)


def _load_study(name, storage):
    optuna = import_optuna()
    try:
        return optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        return None


def _with_width(data, width: int):
    """``data`` with exactly ``width`` feature columns: widened with zeros, or cut where it has features the
    training files lack (all-zero columns of the training data, which no tree splits on)."""
    if data.n_features <= width:
        return data.widen(width)
    if isinstance(data, OutOfCoreData):
        return data.with_width(width)
    if data.feature_names is not None:
        raise ValueError(f"{data.source}: {data.n_features} feature columns, but the training data have {width} "
                         "features; files used together need the same features")
    return RankingData(data.X[:, :width], data.labels, data.qids, data.offsets, data.source)


def _with_click_logs(specs, splits, click_log, tune) -> list:
    """``splits`` with the click log each one's runs from clicks train on (see :func:`compare`), after
    :func:`check_click_configurations`."""
    check_click_configurations(specs, click_log, tune)
    if click_log is None:
        return splits
    directory = Path(click_log)
    if not directory.is_dir():
        raise ClickLogError(f"{directory}: not a directory of click logs (one per split: {directory / splits[0].name}, "
                            "...; or, for one split, the log's own directory)")
    if holds_click_log(directory):
        if len(splits) > 1:
            raise ValueError(f"{directory} is one click log, for {len(splits)} splits; put one per split in a "
                             f"subdirectory named after it ({directory / splits[0].name}, ...)")
        return [_with_log(splits[0], directory)]
    return [_with_log(split, directory / split.name) for split in splits]


def _with_log(split, directory: Path):
    """``split`` with the tables of the click log in ``directory``."""
    clicks, documents = find_click_log(directory)
    return replace(split, clicks=clicks, documents=documents, logger=find_logging_model(directory))


def _checked_comparison(specs, layout, splits, repeats):
    specs = list(specs)
    if not specs:
        raise ValueError("nothing to compare: give at least one configuration")
    first = {}
    for number, spec in enumerate(specs, 1):
        earlier = first.setdefault(spec.key, (number, spec.label))
        if earlier[0] != number:
            raise ValueError(f"configuration #{number} ({spec.label}) is configuration #{earlier[0]} ({earlier[1]}) "
                             "again: the same objective, parameters (defaults included) and settings; give it once")
    if len({s.label for s in specs}) != len(specs):
        twice = [s for s in specs if sum(t.label == s.label for t in specs) > 1]
        labels = ", ".join(sorted({s.label for s in twice}))
        if any(s.name is not None for s in twice):
            raise ValueError(f"two configurations have the same name or label ({labels}); give each its own name")
        raise ValueError(f"two configurations have the same label ({labels}): they differ only in settings "
                         "a label does not show (engine parameters, rounds, ...); give each a name "
                         "(name = \"...\" in its [[run]] table)")
    if len({(s.no_relevant, s.g_max, s.eval_at) for s in specs}) > 1:
        raise ValueError("all configurations of a comparison must use the same evaluation conventions")
    repeats = check(repeats, Integer(low=1), "repeats", "compare")
    chosen = list(layout.splits)
    if splits is not None:
        splits = list(splits)
        if not splits:
            raise ValueError("splits (--folds) names no split: name at least one, or leave it out for all")
        twice = sorted({name for name in splits if splits.count(name) > 1})
        if twice:
            raise ValueError(f"splits (--folds) names {', '.join(map(str, twice))} more than once: each split is "
                             "trained once per repeat (use --repeats for more runs); name each split once")
        known = {s.name: s for s in layout.splits}
        missing = [name for name in splits if name not in known]
        if missing:
            raise ValueError(f"unknown splits {missing}; {layout.directory} has {sorted(known)}")
        chosen = [known[name] for name in splits]
    return specs, chosen


def _seed_free_repeat(results: list[FoldResult], item: PlannedRun) -> FoldResult | None:
    """Repeat 0's result as repeat ``r`` of ``item`` (``r`` >= 2), where repeats 0 and 1 of its configuration on its
    split gave the same test results, validation curve and trees: a configuration that does not depend on the seed
    (lambdarank without bagging, ...) would give it ``r`` times over. None otherwise, and for
    a tuned run, whose repeats each have a search of their own."""
    if item.action == "reuse" or item.spec.repeat < 2 or item.trained_spec is not None:
        return None
    earlier = {r.repeat: r for r in results if r.label == item.spec.label and r.split == item.split.name}
    first, second = earlier.get(0), earlier.get(1)
    if first is None or second is None or not same_results(first, second):
        return None
    return replace(first, repeat=item.spec.repeat)


def _run_and_record(item: PlannedRun, train, valid, test, *, progress: bool,
                    g_max: int | None = None) -> tuple[FoldResult, str]:
    """Train and test ``item``, with ERR's ``g_max`` the table's where it has one; write its record."""
    g_max = evaluation_g_max(item.spec, train, valid, test) if g_max is None else g_max
    result = run(item.trained_spec or item.spec, train, valid, test, progress=progress, g_max=g_max)
    scores = predict_scores(result.model, test)
    per_query, _ = evaluate_scores(scores, test, item.spec, per_query=True, g_max=g_max)
    fold = FoldResult(item.spec.label, item.split.name, result.metrics, result.model.train_seconds,
                      result.model.trees_used, [float(v) for v in result.model.valid_history],
                      repeat=item.spec.repeat, best_iteration=result.model.best_iteration,
                      qids=test.qids.tolist(), per_query={name: values.tolist() for name, values in per_query.items()})
    if item.path is not None:
        fold.predictions = str(save_array_atomic(item.path.with_suffix(".npy"), scores))
        record = {"format": 2, **asdict(fold), "conventions": result.conventions, "provenance": item.provenance,
                  "engine_params": jsonable_params(result.model.engine_params),
                  "objective_params": jsonable_params(result.model.objective_params),
                  "versions": environment_versions([item.spec.engine])}
        if item.protocol is not None:
            record["protocol"] = item.protocol
        if item.spec.name is not None:
            record["name"] = item.spec.name  # display only: outside the provenance
        if item.tuned is not None:
            record["tuned"] = {**item.tuned, "spec": normalized(asdict(item.trained_spec))}
        write_json_atomic(item.path, record)
    return fold, result.conventions
