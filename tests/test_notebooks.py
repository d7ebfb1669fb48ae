"""The notebooks are executed on small data so they never rot (nbclient, a real kernel)."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_the_three_notebooks_exist():
    assert [p.stem for p in NOTEBOOKS] == ["01_quickstart", "02_robustness", "03_astraea_fairness"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("ATLAS_NOTEBOOK_OUT", str(tmp_path / "out"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel shows figures inline
    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in book.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    # every notebook ends with a figure or a table a reader can look at
    assert any(o.output_type in ("display_data", "execute_result") for o in outputs)
    assert (tmp_path / "out").is_dir() and any((tmp_path / "out").iterdir())
