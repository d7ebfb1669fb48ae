"""The package layering holds: atlas_data → predictors → schedulers → leaderboards → benchmark.

A module may import from its own package and from packages to its left, never to its right;
`schedulers` additionally never imports `predictors` (it sees p̂ only as a `predicted_duration`
column). Every import counts, including the lazy ones inside functions.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("atlas_data", "predictors", "schedulers", "leaderboards", "benchmark")
FORBIDDEN_EXTRA = {("schedulers", "predictors")}


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    return found


def back_arrows(root: Path) -> list[str]:
    problems = []
    for rank, package in enumerate(LAYERS):
        for path in sorted((root / package).rglob("*.py")):
            for line, target in imported_packages(path):
                if target in LAYERS and (LAYERS.index(target) > rank or (package, target) in FORBIDDEN_EXTRA):
                    problems.append(f"{path.relative_to(root)}:{line} imports {target}")
    return problems


def test_no_module_imports_from_a_layer_above_it():
    assert back_arrows(ROOT) == []


@pytest.mark.parametrize("source, target", [
    ("leaderboards/x.py", "benchmark.results"),
    ("predictors/x.py", "schedulers.jobs"),
    ("schedulers/x.py", "predictors.api"),
    ("atlas_data/x.py", "leaderboards"),
])
def test_a_back_arrow_is_found_even_inside_a_function(tmp_path, source, target):
    for package in LAYERS:
        (tmp_path / package).mkdir()
    path = tmp_path / source
    path.write_text(f"def f():\n    from {target} import thing\n    return thing\n")
    assert back_arrows(tmp_path) == [f"{source}:2 imports {target.split('.')[0]}"]


def test_imports_down_the_layers_are_allowed(tmp_path):
    for package in LAYERS:
        (tmp_path / package).mkdir()
    (tmp_path / "benchmark" / "x.py").write_text("import atlas_data.io\nfrom leaderboards import score\n")
    (tmp_path / "schedulers" / "x.py").write_text("from atlas_data.errors import InputError\n")
    assert back_arrows(tmp_path) == []
