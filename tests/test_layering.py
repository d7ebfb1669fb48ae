"""The package layering holds: atlas_data → predictors → schedulers → leaderboards → benchmark.

A module may import from its own package and from packages to its left, never to its right;
`schedulers` additionally never imports `predictors` (it sees p̂ only as a `predicted_duration`
column). Every import counts, including the lazy ones inside functions.

And no module imports itself through others: the import graph between the project's modules (lazy
imports included) has no cycle — a cycle means two modules are one, split across files (the JIT
switch and the fast loops were once such a pair).
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


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """{module: the project modules it imports} over every package of LAYERS, lazy imports included;
    `from package import name` counts as importing `package.name` where that is a module."""
    paths = {module_name(root, path): path for package in LAYERS for path in sorted((root / package).rglob("*.py"))}
    graph = {}
    for name, path in paths.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the module's own package, up level - 1
                    anchor = here.split(".")[:len(here.split(".")) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                targets.add(base)
                targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, groups = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(groups)


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


def test_no_modules_import_each_other_in_a_cycle():
    graph = import_graph(ROOT)
    assert "schedulers.jit" in graph["schedulers.fastpath"]  # the graph is read, lazy imports included
    assert "schedulers.jit" in graph["schedulers.cluster.metrics"]
    assert import_cycles(graph) == []


def test_a_cycle_through_a_lazy_import_is_found(tmp_path):
    for package in LAYERS:
        (tmp_path / package).mkdir()
    (tmp_path / "schedulers" / "__init__.py").write_text("")
    (tmp_path / "schedulers" / "a.py").write_text("from schedulers import b\n")
    (tmp_path / "schedulers" / "b.py").write_text("def f():\n    from . import c\n")
    (tmp_path / "schedulers" / "c.py").write_text("def g():\n    import schedulers.a\n")
    (tmp_path / "schedulers" / "d.py").write_text("import schedulers.a\n")
    assert import_cycles(import_graph(tmp_path)) == [["schedulers.a", "schedulers.b", "schedulers.c"]]
