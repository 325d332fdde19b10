"""The notebooks run top to bottom (small settings), and are kept in git without outputs."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert [path.name for path in NOTEBOOKS] == ["click_logs.ipynb", "pl_partition_simulation.ipynb",
                                                 "plackett_luce_mq2008.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stored_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip outputs before committing"


#: what running each notebook costs: the MQ2008 and click-log ones train LightGBM (and XGBoost); the simulation
#: trains no engine but takes about 20 s of numpy. A notebook not listed here is taken to train.
RUN_MARKS = {"plackett_luce_mq2008": pytest.mark.engine, "click_logs": pytest.mark.engine,
             "pl_partition_simulation": pytest.mark.slow}


@pytest.mark.parametrize("path", [pytest.param(path, marks=RUN_MARKS.get(path.stem, pytest.mark.engine), id=path.stem)
                                  for path in NOTEBOOKS])
def test_notebook_runs(path, shared_data, monkeypatch):
    monkeypatch.setenv("PLBOOST_NOTEBOOK_QUICK", "1")
    monkeypatch.setenv("PLBOOST_DATA", str(shared_data))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    errors = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
              if output.output_type == "error"]
    assert not errors
    images = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
              if o.output_type == "display_data" and "image/png" in o.get("data", {})]
    assert images, "every notebook draws at least one figure"


def test_simulation_notebook_runs_its_short_grid_by_default():
    """The full simulation takes about 20 to 25 minutes on 2 cores: it stays one switch away, off."""
    path = next(path for path in NOTEBOOKS if path.name == "pl_partition_simulation.ipynb")
    notebook = nbformat.read(path, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert "\nFULL = False\n" in code and "PLBOOST_NOTEBOOK_FULL" in code
    assert "RANKNET_LIMIT" in code, "RankNet is skipped where the script skips it"
