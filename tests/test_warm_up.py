"""plboost warm-up (plboost.warm_up): every objective warmed once, in balanced runs; what it compiles is what a
later process finds in Numba's cache."""

import subprocess
import sys

import pytest

from plboost.cli import main
from plboost.objectives import OBJECTIVES
from plboost.warm_up import PARSER, warm_up, warm_up_chunks


@pytest.mark.parametrize("workers", [1, 2, 3, 7, 64])
def test_chunks_hold_every_objective_and_the_parser_once_in_at_most_one_run_per_worker(workers):
    chunks = warm_up_chunks(workers)
    assert 1 <= len(chunks) <= min(workers, len(OBJECTIVES) + 1) and all(chunks)
    assert sorted(name for chunk in chunks for name in chunk) == sorted([*OBJECTIVES, PARSER])
    assert PARSER not in {name for chunk in warm_up_chunks(workers, ["listnet", "plrank"]) for name in chunk}


def test_objectives_sharing_kernels_share_a_worker_on_two_cores():
    chunks = warm_up_chunks(2, ["plrank", "pa_listmle", "pl_partition", "pl_lb"])
    assert chunks == [["plrank", "pa_listmle"], ["pl_partition", "pl_lb"]]


def test_unknown_objectives_are_refused_by_name(capsys):
    with pytest.raises(ValueError, match="unknown plboost objective 'plrnak'; known: fair_pl_rank3, lambdaloss, "):
        warm_up_chunks(2, ["listnet", "plrnak"])
    assert main(["warm-up", "plrnak"]) == 2
    assert "plboost warm-up: error: unknown plboost objective 'plrnak'" in capsys.readouterr().err


@pytest.mark.engine
def test_a_later_process_compiles_nothing_the_warm_up_compiled(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba-cache"))  # empty: the warm-up compiles listnet
    seconds = warm_up(["listnet", PARSER], workers=1, progress=False)
    assert list(seconds) == ["listnet", PARSER] and min(seconds.values()) > 0
    probe = ("from plboost import _jit; from plboost.warm_up import warm_objective, warm_parser; "
             "warm_objective('listnet'); warm_parser(); print(_jit.compile_seconds())")
    compiled = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert float(compiled.stdout) == 0.0  # compile_seconds grows with every compile: tests/test_jit.py


def test_the_parser_alone_is_warmed_by_name_and_the_summary_says_what_was(capsys):
    assert warm_up_chunks(4, [PARSER]) == [[PARSER]]
    assert main(["warm-up", PARSER, "--quiet", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("plboost warm-up: the SVMlight parser compiled or found in Numba's cache in "), out
