"""The notebooks of examples/notebooks/ run from top to bottom (nbclient, a fresh kernel of this
Python), so they never rot; they are committed without outputs and leave nothing in the checkout."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "examples" / "notebooks").glob("*.ipynb"))
#: A notebook's whole run: the tournament's first game may compile the engine (numba) on a busy machine.
TIMEOUT_S = 900


def test_there_are_notebooks():
    assert {p.stem for p in NOTEBOOKS} >= {"table1", "tournament"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_is_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip its outputs"


def _status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True).stdout


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_notebook_runs_from_top_to_bottom(path):
    notebook = nbformat.read(path, as_version=4)  # executed in memory: the file is not written
    before = _status()
    client = nbclient.NotebookClient(notebook, timeout=TIMEOUT_S, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()  # a cell that raises fails here, naming the cell (CellExecutionError)
    errors = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert _status() == before, "the notebook wrote into the checkout"
    assert sys.executable  # the kernel is this Python's (ipykernel's native kernel spec)
