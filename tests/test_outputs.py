"""No command writes over a file it reads, named or not (issue 24, item 2): each kind of implicitly read file
given as an output path leaves the file's bytes as they were, and the command exits with status 2 and one line."""

import os
from pathlib import Path

import pytest

from plboost.cli import main
from plboost.data import make_synthetic
from plboost.outputs import check_outputs, data_reads, result_file_of, same_file


def run(capsys, *argv) -> tuple[int, list[str]]:
    status = main([str(a) for a in argv])
    return status, capsys.readouterr().err.strip().splitlines()


@pytest.fixture
def data(tmp_path) -> dict:
    """train/valid/test files without qid, each with its LightGBM-style .query file beside it."""
    paths = {}
    for name, seed in (("train", 1), ("valid", 2), ("test", 3)):
        synthetic = make_synthetic(n_queries=6, seed=seed)
        text = "".join(line.split(" ", 2)[0] + " " + line.split(" ", 2)[2]
                       for line in synthetic.save_svmlight(tmp_path / "tmp.txt").read_text().splitlines(True))
        paths[name] = tmp_path / f"rank.{name}"
        paths[name].write_text(text)
        (tmp_path / f"rank.{name}.query").write_text("".join(f"{size}\n" for size in synthetic.group_sizes))
    (tmp_path / "tmp.txt").unlink()
    return paths


def train_argv(data, *extra):
    return ["train", "--train", data["train"], "--valid", data["valid"], "--test", data["test"], "--rounds", "2",
            "--quiet", "--no-cache", *extra]


@pytest.mark.parametrize("role", ["train", "valid", "test"])
@pytest.mark.parametrize("option", ["--out", "--save-model"])
def test_train_refuses_an_output_that_is_the_query_file_beside_a_data_file(data, capsys, role, option):
    query = Path(f"{data[role]}.query")
    before = query.read_bytes()
    status, err = run(capsys, *train_argv(data, option, query))
    assert status == 2 and len(err) == 1, err
    assert err[0] == (f"plboost train: error: {option} {query} is the query file read with {data[role]}, which this "
                      "command reads; it would be overwritten")
    assert query.read_bytes() == before


def test_a_query_file_that_does_not_exist_yet_is_refused_too(data, capsys):
    """Written there, it would be read with the data from then on (<stem>.query for a .gz file as well)."""
    gz = data["train"].with_name("other.txt.gz")
    for output in (gz.with_name("other.txt.gz.query"), gz.with_name("other.txt.query")):
        status, err = run(capsys, "train", "--train", gz, "--out", output, "--quiet")
        assert status == 2 and len(err) == 1 and "is the query file read with" in err[0]
        assert not output.exists()


def test_links_and_dotdot_are_seen_through(data, capsys, tmp_path):
    query = Path(f"{data['test']}.query")
    before = query.read_bytes()
    hard, soft = tmp_path / "hard.json", tmp_path / "soft.json"
    os.link(query, hard)
    soft.symlink_to(query)
    (tmp_path / "sub").mkdir()
    for output in (hard, soft, tmp_path / "sub" / ".." / query.name):
        status, err = run(capsys, *train_argv(data, "--out", output))
        assert status == 2 and len(err) == 1 and f"is the query file read with {data['test']}" in err[0], err
    assert query.read_bytes() == before


@pytest.mark.engine
def test_evaluate_refuses_its_data_query_and_model_files(data, capsys, tmp_path):
    model = tmp_path / "model.txt"
    assert main([str(a) for a in train_argv(data, "--save-model", model)]) == 0
    capsys.readouterr()
    for output, what in ((Path(f"{data['test']}.query"), "the query file read with"), (model, "the model file"),
                         (data["test"], "the data file")):
        before = output.read_bytes()
        status, err = run(capsys, "evaluate", "--model", model, "--data", data["test"], "--out", output, "--quiet")
        assert status == 2 and len(err) == 1 and what in err[0], err
        assert output.read_bytes() == before


@pytest.fixture
def comparison(tmp_path) -> Path:
    """A comparison directory as compare --out leaves it (the contents do not matter to the check)."""
    directory = tmp_path / "results"
    (directory / "runs" / "plrank_lightgbm").mkdir(parents=True)
    for name in ("results.json", "results.csv", "summary.csv", "per_query.csv", "significance.csv", "tuning.csv"):
        (directory / name).write_text(f"{name}\n")
    (directory / "runs" / "plrank_lightgbm" / "Fold1.json").write_text("{}\n")
    return directory


@pytest.mark.parametrize("name", ["results.csv", "results.json", "summary.csv", "per_query.csv", "significance.csv",
                                  "tuning.csv", "runs/plrank_lightgbm/Fold1.json"])
def test_summarize_never_replaces_a_result_file_of_a_directory_it_reads(comparison, capsys, name):
    output = comparison / name
    before = output.read_bytes()
    status, err = run(capsys, "summarize", comparison, "--out", output)
    assert status == 2 and len(err) == 1, err
    assert err[0].startswith(f"plboost summarize: error: --out {output} ")
    assert output.read_bytes() == before


def test_summarize_refuses_a_result_file_beside_a_given_results_json(comparison, capsys):
    status, err = run(capsys, "summarize", comparison / "results.json", "--out", comparison / "summary.csv")
    assert status == 2 and "would replace summary.csv of the comparison in" in err[0]


def test_a_new_file_beside_the_results_is_allowed(comparison):
    check_outputs({"--out": comparison / "winning-across-machines.csv"}, [], [comparison])
    assert result_file_of(comparison / "notes.csv", comparison) is None
    assert result_file_of(comparison / "runs" / "x" / "new.json", comparison) == "runs/x/new.json"


def test_compare_refuses_an_out_directory_whose_records_would_replace_its_config(data, tmp_path, capsys):
    out = tmp_path / "out"
    config = out / "runs" / "runs.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[[run]]\nobjective = "plrank"\n')
    status, err = run(capsys, "compare", data["train"].parent, "--config", config, "--out", out, "--quiet")
    assert status == 2 and len(err) == 1 and f"would write over {config} (the --config file)" in err[0], err
    assert config.read_text() == '[[run]]\nobjective = "plrank"\n'


def test_same_file_tells_files_apart(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("1")
    b.write_text("1")
    assert not same_file(a, b) and same_file(a, tmp_path / "." / "a") and not same_file(a, tmp_path / "missing")
    assert [read.what for read in data_reads(tmp_path / "x.txt.gz", "test")] == [
        "the test file", f"the query file read with {tmp_path / 'x.txt.gz'}",
        f"the query file read with {tmp_path / 'x.txt.gz'}"]


@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_no_command_replaces_a_result_file_of_a_comparison_directory(comparison, data, capsys, tmp_path, command):
    """train --out CMP/results.json replaced an earlier compare's results.json (then summarize CMP failed): the
    result files of a comparison directory are protected from every command, not only from compare and summarize."""
    output = comparison / "results.json"
    before = output.read_bytes()
    argv = (["train", "--train", data["train"], "--rounds", "1", "--quiet"] if command == "train"
            else ["evaluate", "--model", tmp_path / "model.txt", "--data", data["test"]])
    if command == "evaluate":
        (tmp_path / "model.txt").write_text("tree\n")
    status, err = run(capsys, *argv, "--out", output)
    assert status == 2 and err == [f"plboost {command}: error: --out {output} would replace results.json of the "
                                   f"comparison in {comparison} (plboost compare wrote it; summarize reads it); give a "
                                   "new file name"]
    assert output.read_bytes() == before


@pytest.mark.engine
@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (a full disk)")
@pytest.mark.parametrize("option", ["--out", "--save-model"])
def test_a_full_disk_is_one_line_naming_the_file(data, capsys, option):
    """--save-model /dev/full echoed LightGBM's "[LightGBM] [Fatal] Cannot write binary data" line; --out /dev/full
    said "no space left on the device" without naming the file."""
    status, err = run(capsys, "train", "--train", data["train"], "--rounds", "1", "--quiet", option, "/dev/full")
    assert status == 2 and err == ["plboost train: error: /dev/full: No space left on device"]
