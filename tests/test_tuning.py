"""Tuning with the same budget for every configuration (plboost.tuning, compare(..., tune=...))."""

import json
import logging

import pandas as pd
import pytest

from plboost.data import write_synthetic_splits
from plboost.data.layouts import find_layout
from plboost.experiment import RunSpec, compare, parse_run, record_path_of
from plboost.objectives import OBJECTIVES
from plboost.tuning import Dimension, Tuning, apply_params, search_space, spaces_from_toml

optuna = pytest.importorskip("optuna")
pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def folds(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tune")
    write_synthetic_splits(directory / "Fold1", n_queries=(40, 15, 15), seed=3)
    return directory


DEFAULTS = RunSpec(rounds=20, early_stopping=5)


def _trials(comparison):
    return [(row["configuration"], row["trial"], row["params"], row["state"]) for row in comparison.tuning_rows]


def test_the_same_seed_gives_the_same_trials_and_another_seed_others(folds):
    specs = [parse_run("plrank", DEFAULTS), parse_run("lambdarank", DEFAULTS)]
    first = compare(specs, find_layout(folds), tune=Tuning(4, seed=7))
    again = compare(specs, find_layout(folds), tune=Tuning(4, seed=7))
    other = compare(specs, find_layout(folds), tune=Tuning(4, seed=8))
    assert len(first.tuning_rows) == 8 and _trials(first) == _trials(again)
    assert [r.metrics for r in first.results] == [r.metrics for r in again.results]  # the same best parameters
    # trial 0 is the untuned configuration under every seed; the trials after it differ
    assert _trials(first)[0] == _trials(other)[0]
    assert [t[2] for t in _trials(first)[1:4]] != [t[2] for t in _trials(other)[1:4]]
    assert "tuned: 4 trial(s) of TPE (seed 7)" in first.header()


def test_the_test_file_is_not_read_during_the_search(folds, monkeypatch):
    import plboost.data
    import plboost.data.svmlight
    import plboost.experiment.comparison

    events = []
    original_load, original_run = plboost.data.svmlight.load_svmlight, plboost.experiment.comparison.run

    def spy_load(path, **kwargs):
        events.append(("load", str(path)))
        return original_load(path, **kwargs)

    def spy_run(spec, train, valid=None, test=None, **kwargs):
        events.append(("train", "with test" if test is not None else "no test"))
        return original_run(spec, train, valid, test, **kwargs)

    monkeypatch.setattr(plboost.data.svmlight, "load_svmlight", spy_load)
    monkeypatch.setattr(plboost.data, "load_svmlight", spy_load)
    monkeypatch.setattr(plboost.experiment.comparison, "run", spy_run)
    specs = [parse_run("plrank", DEFAULTS), parse_run("urank", DEFAULTS)]
    compare(specs, find_layout(folds), tune=Tuning(3), load_options={"cache": False})
    test_path = str(find_layout(folds).splits[0].test)
    test_loads = [i for i, event in enumerate(events) if event == ("load", test_path)]
    searches = [i for i, event in enumerate(events) if event == ("train", "no test")]
    assert len(searches) == 2 * 3 and len(test_loads) == 1
    assert test_loads[0] > max(searches)  # read once, after every trial of every configuration
    assert [e for e in events[test_loads[0]:] if e[0] == "train"] == [("train", "with test")] * 2


def test_an_interrupted_search_resumes_to_the_uninterrupted_result(folds, tmp_path, monkeypatch):
    import plboost.experiment.comparison

    original_run, calls = plboost.experiment.comparison.run, []

    def interrupted(spec, train, valid=None, test=None, **kwargs):
        calls.append(spec)
        if len(calls) == 3:
            raise KeyboardInterrupt  # Ctrl-C during trial 2
        return original_run(spec, train, valid, test, **kwargs)

    spec = parse_run("plrank", DEFAULTS)
    uninterrupted = compare([spec], find_layout(folds), out_dir=tmp_path / "uninterrupted", tune=Tuning(5))
    monkeypatch.setattr(plboost.experiment.comparison, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        compare([spec], find_layout(folds), out_dir=tmp_path, tune=Tuning(5))
    monkeypatch.setattr(plboost.experiment.comparison, "run", original_run)
    lines = []
    result = compare([spec], find_layout(folds), out_dir=tmp_path, tune=Tuning(5), log=lines.append)
    assert [(row["trial"], row["state"]) for row in result.tuning_rows][2:4] == [(2, "interrupted"), (2, "complete")]

    def search(rows):
        return [{k: v for k, v in row.items() if k != "seconds"} for row in rows if row["state"] != "interrupted"]

    assert search(result.tuning_rows) == search(uninterrupted.tuning_rows)  # the same trials, values and numbers
    assert [r.metrics for r in result.results] == [r.metrics for r in uninterrupted.results]
    assert not any("started again" in line for line in lines)
    # the log says how far the search had come (issue 40 item 17)
    resumed = [line for line in lines if ": resumed with 2 of 5 trials already finished; 3 to run" in line]
    assert len(resumed) == 1 and resumed[0].endswith("(trial 2, interrupted, runs again)"), lines
    result.save(tmp_path)
    saved = pd.read_csv(tmp_path / "tuning.csv")
    assert list(saved.columns) == ["dataset", "split", "configuration", "repeat", "trial", "params",
                                   "validation metric", "validation value", "best iteration", "seconds", "state"]
    assert len(saved) == 6
    record = json.loads(record_path_of(tmp_path, spec, "Fold1").read_text())
    reference = json.loads(record_path_of(tmp_path / "uninterrupted", spec, "Fold1").read_text())
    assert record["tuned"] == reference["tuned"]
    best = saved[(saved.trial == record["tuned"]["trial"]) & (saved.state != "interrupted")].iloc[0]
    assert record["tuned"]["validation"] == pytest.approx(best["validation value"])
    assert record["tuned"]["validation"] == saved[saved.state == "complete"]["validation value"].max()
    # a rerun reuses the record; more trials continue the same search
    again = compare([spec], find_layout(folds), out_dir=tmp_path, tune=Tuning(5))
    assert again.runs == {"reuse": 1}
    more = compare([spec], find_layout(folds), out_dir=tmp_path, tune=Tuning(7))
    assert more.runs == {"redo": 1} and len(more.tuning_rows) == 8


class _Killed(BaseException):
    """What a process killed mid-trial (kill -9, a power cut) leaves behind: Optuna does not catch it, so the trial
    stays running in the study's database, as a dead process leaves it."""


def _toy_search(tuning, stops=()):
    """The rows of a search for PL-Rank on a toy trainer (a validation curve computed from the parameters;
    top_k=20 refused as an engine refuses a parameter), stopped before the trainer's calls in ``stops``
    ((call, exception) pairs: KeyboardInterrupt for Ctrl-C, _Killed for a killed process) and resumed after each."""
    from plboost.tuning import best_trial, search, trial_rows

    spec = parse_run("plrank", DEFAULTS)
    space, calls, stops = search_space(spec), [], dict(stops)

    def train_trial(trial_spec, on_round):
        calls.append(trial_spec)
        if len(calls) in stops:
            raise stops[len(calls)]
        params = trial_spec.objective_params
        if params.get("top_k") == 20:
            raise ValueError("refused")
        peak = (trial_spec.learning_rate * 7 + trial_spec.num_leaves / 97 + params.get("n_permutations", 1) / 5) % 1
        for round_ in range(15):  # past the pruner's 10 rounds of warm-up
            on_round(round_, peak * (round_ + 1) / 15)
        return peak, 15

    # a storage kept across the calls, as tuning.db is across processes (in memory: the test runs 40 searches)
    arguments = dict(tuning=tuning, space=space, name="toy", storage=optuna.storages.InMemoryStorage(),
                     provenance={"data": "toy"})
    for _ in range(len(stops)):
        with pytest.raises((KeyboardInterrupt, _Killed)):
            search(spec, train_trial, **arguments)
    study = search(spec, train_trial, **arguments)
    rows = trial_rows(study, dataset="d", split="s", configuration="c", repeat=0, metric="m")
    return rows, best_trial(study, tuning.n_trials)[0]


def _without_interrupted(rows):
    return [{k: v for k, v in row.items() if k != "seconds"} for row in rows if row["state"] != "interrupted"]


@pytest.mark.parametrize("stop", [KeyboardInterrupt, _Killed], ids=["ctrl-c", "killed"])
def test_a_search_interrupted_at_any_trial_resumes_to_the_uninterrupted_search(stop):
    """A search stopped at any trial, once or twice, and resumed, proposes, scores and picks what the uninterrupted
    search does: the sampler of each trial is seeded by the trial's number in the search, a trial left running by a
    killed process is failed before the sampler sees it, and a trial an engine refused counts, as it did."""
    tuning = Tuning(11, seed=23)
    reference, best = _toy_search(tuning)
    states = [row["state"] for row in reference]
    assert {"complete", "pruned", "fail"} <= set(states), states  # the toy search has each kind of trial
    for call in range(1, tuning.n_trials + 1):
        # the second stop ends the trial after the rerun of the first's, where the search has one
        for stops in ([(call, stop)], [(call, stop), (call + 2, stop)])[:1 + (call < tuning.n_trials)]:
            rows, number = _toy_search(tuning, stops)
            assert _without_interrupted(rows) == _without_interrupted(reference), (call, stops)
            assert number == best
            interrupted = [row["trial"] for row in rows if row["state"] == "interrupted"]
            assert len(interrupted) == len(stops) and interrupted == sorted(interrupted), interrupted


def test_tuning_refuses_splits_without_validation(tmp_path):
    from plboost.data import make_synthetic

    (tmp_path / "data").mkdir()
    make_synthetic(n_queries=20, seed=1).save_svmlight(tmp_path / "data" / "train.txt")
    make_synthetic(n_queries=10, seed=2).save_svmlight(tmp_path / "data" / "test.txt")
    layout = find_layout(tmp_path / "data")
    assert layout.splits[0].valid is None
    with pytest.raises(ValueError, match="tuning needs a validation file for every split"):
        compare([RunSpec()], layout, tune=Tuning(2))


def test_search_spaces_leave_out_what_a_configuration_fixes():
    space = search_space(parse_run("plrank,n_permutations=3", RunSpec(engine_params={"lambda_l2": 1.0})))
    names = [d.name for d in space.dimensions]
    assert "n_permutations" not in names and "lambda_l2" not in names
    assert {"learning_rate", "num_leaves", "top_k", "leaf_values"} <= set(names)
    assert "leaf_values" not in [d.name for d in search_space(parse_run("plrank@xgboost", RunSpec())).dimensions]
    assert search_space(parse_run("urank", RunSpec())).objective == ()
    tuned = apply_params(parse_run("plrank", RunSpec()), space, {"learning_rate": 0.05, "top_k": None,
                                                                  "bagging_fraction": 0.8, "leaf_values": "exact"})
    assert (tuned.learning_rate, tuned.leaf_values, tuned.objective_params) == (0.05, "exact", {"top_k": None})
    assert tuned.engine_params == {"bagging_fraction": 0.8, "bagging_freq": 1}
    assert tuned.label == "plrank(top_k=None) [lightgbm, exact leaves]"


def test_explicit_position_weights_fix_top_k():
    """PA-ListMLE's explicit weights hold one weight per position: a search draws no other top_k for them
    (every such trial would be refused), while named weights leave top_k to the search."""
    ten = [1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5, 0.5]
    names = [d.name for d in search_space(parse_run(f"pa_listmle,position_weights={ten}", RunSpec())).dimensions]
    assert "top_k" not in names and "position_weights" not in names and "n_permutations" in names
    space = search_space(parse_run("pa_listmle,position_weights=dcg", RunSpec()))
    assert [d.name for d in space.objective] == ["top_k", "n_permutations", "stop_at_lowest_grade", "curvature"]
    space = search_space(parse_run("pa_listmle", RunSpec()))
    assert [d.name for d in space.objective] == ["top_k", "n_permutations", "position_weights", "stop_at_lowest_grade",
                                                 "curvature"]
    tuned = apply_params(parse_run("pa_listmle", RunSpec()), space, {"top_k": None, "position_weights": "dcg"})
    assert tuned.objective_params == {"top_k": None, "position_weights": "dcg"}


def test_a_search_with_explicit_position_weights_fails_no_trial(folds):
    spec = parse_run("pa_listmle,position_weights=[1,1,1,1,1,0.5,0.5,0.5,0.5,0.5]", DEFAULTS)
    result = compare([spec], find_layout(folds), tune=Tuning(6, seed=3))
    params = [json.loads(row["params"]) for row in result.tuning_rows]
    assert len(params) == 6 and all("top_k" not in p for p in params)
    assert all(row["state"] != "fail" for row in result.tuning_rows)


def test_exact_leaves_are_searched_without_bagging(folds):
    # stop_at_lowest_grade fixed, so that the 12 seeded trials draw both leaf values
    spec = parse_run("plrank,stop_at_lowest_grade=false", DEFAULTS)
    result = compare([spec], find_layout(folds), tune=Tuning(12, seed=1))
    params = [json.loads(row["params"]) for row in result.tuning_rows]
    assert {p["leaf_values"] for p in params} == {"diagonal", "exact"}  # both drawn in 12 trials
    assert all("bagging_fraction" not in p for p in params if p["leaf_values"] == "exact")
    assert all(row["state"] != "fail" for row in result.tuning_rows)


def test_search_spaces_from_toml(tmp_path):
    overrides = spaces_from_toml({"lightgbm": {"num_leaves": {"low": 15, "high": 63}, "lambda_l2": False},
                                  "umart": {"window": {"choices": [1, 2]}}}, "runs.toml")
    space = search_space(parse_run("umart", RunSpec()), overrides)
    dims = {d.name: d for d in space.dimensions}
    assert dims["num_leaves"] == Dimension("num_leaves", 15, 63, default=31) and "lambda_l2" not in dims
    assert dims["window"].choices == (1, 2)
    with pytest.raises(ValueError, match=r"runs.toml \[tune.lightgbm\] num_leaves: .*low < high"):
        spaces_from_toml({"lightgbm": {"num_leaves": {"low": 63, "high": 15}}}, "runs.toml")
    with pytest.raises(ValueError, match=r"\[tune.lightgbn\]: not an engine or objective"):
        spaces_from_toml({"lightgbn": {}}, "runs.toml")


def test_trial_0_is_the_untuned_run_and_the_others_search(shared_data):
    """Tuning starts from the untuned configuration (so the best trial is never worse on validation) and then
    tries other parameters."""
    from plboost.data import load_splits
    from plboost.experiment import run

    layout = find_layout(shared_data / "MQ2008")
    split = layout.splits[0]
    train, valid = load_splits(split.train, split.valid)
    defaults = RunSpec(rounds=60, early_stopping=30)
    specs = [parse_run("lambdarank", defaults), parse_run("plrank", defaults)]
    tuned = compare(specs, layout, splits=["Fold1"], tune=Tuning(3))
    for spec in specs:
        untuned = run(spec, train, valid).metrics["NDCG@10"]
        trials = [row for row in tuned.tuning_rows if row["configuration"] == spec.label]
        assert len(trials) == 3
        assert trials[0]["validation value"] == pytest.approx(untuned, abs=1e-12)  # trial 0 is the untuned run
        assert len({json.dumps(row["params"], sort_keys=True) for row in trials}) == 3, spec.label


def test_compare_tune_on_the_command_line(folds, tmp_path, capsys):
    from plboost.cli import main

    config = tmp_path / "runs.toml"
    config.write_text('[[run]]\nobjective = "umart"\n\n[tune.umart]\nwindow = { choices = [1, 3] }\nsigmoid = false\n')
    out = tmp_path / "out"
    assert main(["compare", str(folds), "--config", str(config), "--tune", "3", "--rounds", "10", "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "tuned: 3 trial(s) of TPE (seed 0) per configuration and split" in printed
    assert "at the best validation iteration" in printed
    trials = pd.read_csv(out / "tuning.csv")
    params = [json.loads(text) for text in trials["params"]]
    assert {p["window"] for p in params} <= {1, 3}  # the untuned window=2 is outside this space: drawn
    assert params[0]["learning_rate"] == 0.1 and params[0]["num_leaves"] == 31  # the rest of trial 0: untuned
    assert all("sigmoid" not in p for p in params)
    assert (out / "tuning.db").is_file()


def test_a_missing_optuna_is_named(monkeypatch):
    import sys

    from plboost.tuning import import_optuna

    monkeypatch.setitem(sys.modules, "optuna", None)
    with pytest.raises(ValueError, match=r"pip install 'plboost\[tune\]'"):
        import_optuna()


def test_ctrl_c_during_a_tuned_compare_is_one_line_with_the_resume_hint(folds, tmp_path, monkeypatch, capsys):
    """Optuna logged the interrupted trial's 40-line KeyboardInterrupt traceback ("Trial 2 failed") before
    "plboost compare: interrupted"."""
    import plboost.experiment.comparison
    from plboost.cli import main

    original_run, calls = plboost.experiment.comparison.run, []

    def interrupted(spec, train, valid=None, test=None, **kwargs):
        calls.append(spec)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return original_run(spec, train, valid, test, **kwargs)

    class Seen(logging.Handler):  # what Optuna's own handler, which pytest does not capture, would print
        def emit(self, record):
            seen.append(record.getMessage())

    seen, watcher = [], Seen()
    trial_logger = logging.getLogger("optuna.study._optimize")
    trial_logger.addHandler(watcher)
    monkeypatch.setattr(plboost.experiment.comparison, "run", interrupted)
    try:
        status = main(["compare", str(folds), "--run", "plrank", "--rounds", "3", "--num-leaves", "7", "--tune", "3",
                       "--out", str(tmp_path / "out"), "--quiet"])
    finally:
        trial_logger.removeHandler(watcher)
    err = capsys.readouterr().err
    assert status == 130 and not [message for message in seen if "failed" in message], seen
    assert err.strip().splitlines() == [f"plboost compare: interrupted; the same command resumes from the records in "
                                        f"{tmp_path / 'out'}"], err


@pytest.mark.parametrize("name", [name for name, cls in OBJECTIVES.items()
                                  if set(cls.search_space) & set(cls().get_params())])
def test_trial_zero_holds_the_objectives_own_defaults(name):
    """Trial 0 is the untuned configuration: each searched parameter of an objective starts from the value the
    objective takes when it is not given (PL-Rank-3's n_samples moved from 100 to 30 in both places)."""
    cls = OBJECTIVES[name]
    built = cls().get_params()
    searched = {dim: fields["default"] for dim, fields in cls.search_space.items() if dim in built}
    assert searched == {dim: built[dim] for dim in searched}
