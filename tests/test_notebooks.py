"""The notebooks use the Python API only and are executed on small data so they never rot
(nbclient, a real kernel)."""

import ast
import os
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.long_file  # started first on the xdist workers (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_the_three_notebooks_exist():
    assert [p.stem for p in NOTEBOOKS] == ["01_quickstart", "02_robustness", "03_astraea_fairness"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_uses_the_python_api_not_the_command_line(path):
    book = nbformat.read(path, as_version=4)
    code = [cell.source for cell in book.cells if cell.cell_type == "code"]
    imported = set()
    for source in code:
        for node in ast.walk(ast.parse(source)):  # every cell is valid Python
            if isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    assert "benchmark" in imported  # `from benchmark import api`
    assert not {m for m in imported if m.startswith("benchmark.")}, "notebooks reach past benchmark.api"
    text = "\n".join(code)
    assert not re.search(r"\bcli\b|\bmain\(|subprocess|os\.system|^!", text, re.M)
    assert "api." in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_NOTEBOOK_SMALL", "1")
    monkeypatch.setenv("ATLAS_NOTEBOOK_OUT", str(tmp_path / "out"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel shows figures inline
    # the kernel imports this checkout's packages, whatever the environment has installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    book = nbformat.read(path, as_version=4)
    NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in book.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    # every notebook ends with a figure or a table a reader can look at
    assert any(o.output_type in ("display_data", "execute_result") for o in outputs)
    # each saves its figure, and nothing lands in the kernel's working folder
    assert any(f.suffix == ".png" for f in (tmp_path / "out").iterdir())
    assert sorted(f.name for f in tmp_path.iterdir()) == ["out"]
    tables = " ".join(o.get("data", {}).get("text/plain", "") for o in outputs if o.output_type == "execute_result")
    expected = {"01_quickstart": ["hist-gbm (sklearn)", "lgbm-meta", "sprpt"], "02_robustness": ["noise:0.5"],
                "03_astraea_fairness": ["astraea-p", "sharing_loss_jobs"]}[path.stem]
    assert all(word in tables for word in expected)
