"""``plboost simulate-clicks``: a log written, read back, with its settings; refusals before anything trains."""

import re

import numpy as np
import pytest

from plboost.cli import main
from plboost.clicks import load_click_log


@pytest.mark.engine
@pytest.mark.parametrize("fmt, model", [("parquet", "pbm"), ("csv", "cascade")])
def test_a_simulated_log_reads_back_with_its_settings(mq2008, tmp_path, capsys, fmt, model):
    train_path = mq2008[0].source
    code = main(["simulate-clicks", "--train", str(train_path), "--out", str(tmp_path), "--format", fmt,
                 "--impressions", "300", "--top-k", "5", "--temperature", "0.5", "--click-model", model,
                 "--logger-rounds", "5", "--seed", "4"])
    assert code == 0
    line = capsys.readouterr().out
    assert "300 impressions of" in line and f"clicks.{fmt}" in line and "the logger: lambdarank on" in line
    log = load_click_log(tmp_path / f"clicks.{fmt}", tmp_path / f"documents.{fmt}")
    assert log.n_impressions == 300 and log.position.max() == 5
    assert log.metadata["seed"] == 4 and log.metadata["logging"] == {"temperature": 0.5, "top_k": 5}
    assert log.metadata["click_model"] == model and log.metadata["logger"]["rounds"] == 5
    assert len(log.metadata["logger"]["queries"]) == max(1, round(0.01 * log.n_queries))
    assert np.isfinite(log.logging_scores).all()


@pytest.mark.parametrize("options, message", [
    (["--temperature", "-1"], r"argument --temperature: expected a finite number >= 0, got '-1'"),
    (["--temperature", "inf"], r"argument --temperature: expected a finite number >= 0, got 'inf'"),
    (["--eta", "nan"], r"argument --eta: expected a finite number >= 0, got 'nan'"),
    (["--logger-share", "0"], r"argument --logger-share: expected a number in \(0, 1\], got '0'"),
    (["--click-noise", "1.5"], r"argument --click-noise: expected a number in \[0, 1\], got '1.5'"),
    (["--continuation", "0.5"], r"--continuation is the cascade model's; give --click-model cascade"),
    (["--click-noise", "0.5", "--click-relevant", "0.2"], r"positive_noise must exceed negative_noise"),
    (["--logger-objective", "best"], r"--logger-objective 'best': not an objective"),
])
def test_bad_options_are_refused_in_one_line(mq2008, tmp_path, capsys, options, message):
    try:
        code = main(["simulate-clicks", "--train", str(mq2008[0].source), "--out", str(tmp_path / "log"), *options])
    except SystemExit as exit_:  # argparse's own refusals
        code = exit_.code
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and re.search(message, err), err
    assert not (tmp_path / "log").exists()  # nothing written


def test_an_existing_log_is_never_replaced(mq2008, tmp_path, capsys):
    (tmp_path / "clicks.parquet").write_text("mine")
    assert main(["simulate-clicks", "--train", str(mq2008[0].source), "--out", str(tmp_path)]) == 2
    assert "clicks.parquet exists already; give another directory" in capsys.readouterr().err
    assert (tmp_path / "clicks.parquet").read_text() == "mine"


def test_an_out_that_is_a_file_is_refused_before_anything_trains(mq2008, tmp_path, capsys):
    mine = tmp_path / "mine.txt"
    mine.write_text("mine")
    assert main(["simulate-clicks", "--train", str(mq2008[0].source), "--out", str(mine)]) == 2
    assert capsys.readouterr().err.strip() == (f"plboost simulate-clicks: error: --out {mine} is a file; give a "
                                               "directory (the log is two tables)")
    assert mine.read_text() == "mine"
