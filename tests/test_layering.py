"""The package layering holds: atlas_data → predictors → schedulers → leaderboards → benchmark.

A module may import from its own package and from packages to its left, never to its right;
`schedulers` additionally never imports `predictors` (it sees p̂ only as a `predicted_duration`
column). Every import counts, including the lazy ones inside functions.

And no module imports itself through others: the import graph between the project's modules (lazy
imports included) has no cycle — a cycle means two modules are one, split across files (the JIT
switch and the fast loops were once such a pair). The graph counts imports by name at run time too:
`importlib.import_module("a.b")` (or `__import__`) with a literal name, and discovery — a module
that lists a package's modules (`pkgutil.iter_modules`) imports every module of each project
package it names in a string (the policy registry and the policy modules it discovers).

Inside benchmark, the experiments (benchmark.experiments) never import the command line
(benchmark.commands, benchmark.cli): the commands call them.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("atlas_data", "predictors", "schedulers", "leaderboards", "benchmark")
FORBIDDEN_EXTRA = {("schedulers", "predictors")}


IMPORT_BY_NAME = {"import_module", "__import__"}
DISCOVERY = {"iter_modules", "walk_packages"}


def _called(node) -> str:
    """The name of the function a Call calls (`importlib.import_module(...)` -> import_module)."""
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def imports_by_name(tree) -> list[tuple[int, str]]:
    """(line, module) of every `importlib.import_module("a.b")` / `__import__("a.b")` with a literal name."""
    return [(node.lineno, node.args[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Call) and _called(node) in IMPORT_BY_NAME and node.args
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)]


def discovers(tree) -> bool:
    """Whether a file lists packages' modules to import them (pkgutil.iter_modules / walk_packages)."""
    return any(isinstance(node, ast.Call) and _called(node) in DISCOVERY for node in ast.walk(tree))


def imported_packages(path: Path) -> list[tuple[int, str]]:
    """(line, top-level package) of every absolute import in a file, imports by name included."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
    found += [(line, name.split(".")[0]) for line, name in imports_by_name(tree)]
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
    """{module: the project modules it imports} over every package of LAYERS, lazy imports and imports
    by name included; `from package import name` counts as importing `package.name` where that is a
    module, and a module that discovers packages' modules imports every module of the packages it names."""
    paths = {module_name(root, path): path for package in LAYERS for path in sorted((root / package).rglob("*.py"))}
    packages = {name for name, path in paths.items() if path.name == "__init__.py"}
    graph = {}
    for name, path in paths.items():
        here = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = {module for _, module in imports_by_name(tree)}
        if discovers(tree):
            named = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and node.value in packages}
            targets.update(m for m in paths for package in named if m.startswith(package + "."))
        for node in ast.walk(tree):
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


def test_an_import_by_name_and_a_discovery_are_edges_of_the_graph(tmp_path):
    for package in LAYERS:
        (tmp_path / package).mkdir()
    (tmp_path / "schedulers" / "__init__.py").write_text("")
    (tmp_path / "schedulers" / "plugins").mkdir()
    (tmp_path / "schedulers" / "plugins" / "__init__.py").write_text("")
    (tmp_path / "schedulers" / "plugins" / "one.py").write_text("from schedulers import registry\n")
    (tmp_path / "schedulers" / "registry.py").write_text(
        "import importlib, pkgutil\nPACKAGES = ('schedulers.plugins',)\n"
        "def load():\n    for p in PACKAGES:\n        for m in pkgutil.iter_modules(importlib.import_module(p).__path__):\n"
        "            importlib.import_module(p + '.' + m.name)\n")
    (tmp_path / "schedulers" / "a.py").write_text("import importlib\ndef f():\n    importlib.import_module('schedulers.b')\n")
    (tmp_path / "schedulers" / "b.py").write_text("def g():\n    return __import__('schedulers.a')\n")
    graph = import_graph(tmp_path)
    assert graph["schedulers.a"] == {"schedulers.b"} and graph["schedulers.b"] == {"schedulers.a"}
    assert graph["schedulers.registry"] == {"schedulers.plugins.one"}
    assert import_cycles(graph) == [["schedulers.a", "schedulers.b"], ["schedulers.plugins.one", "schedulers.registry"]]
    (tmp_path / "atlas_data" / "x.py").write_text("import importlib\nimportlib.import_module('benchmark.cli')\n")
    assert back_arrows(tmp_path) == ["atlas_data/x.py:2 imports benchmark"]


def test_the_policy_registry_discovers_the_policy_modules_and_none_imports_it_back():
    graph = import_graph(ROOT)
    assert {"schedulers.policies.single", "schedulers.cluster.policies.fifo"} <= graph["schedulers.policy"]
    reach, todo = set(), ["schedulers.cluster.policies.fifo", "schedulers.policies.single"]
    while todo:
        module = todo.pop()
        for target in graph[module] - reach:
            reach.add(target)
            todo.append(target)
    assert "schedulers.policy" not in reach and "schedulers.policy_base" in reach


def test_the_experiments_never_import_the_command_line():
    """benchmark.experiments is the science a notebook imports; the commands call it, never the reverse
    (benchmark/experiments/__init__.py)."""
    graph = import_graph(ROOT)
    experiments = [m for m in graph if m == "benchmark.experiments" or m.startswith("benchmark.experiments.")]
    assert "benchmark.experiments.astraea" in experiments and "benchmark.experiments.perf.peers" in experiments
    assert "benchmark.experiments.astraea" in graph["benchmark.commands.reproduce_astraea"]  # the graph is read
    wrong = sorted((m, t) for m in experiments for t in graph[m]
                   if t == "benchmark.cli" or t == "benchmark.commands" or t.startswith("benchmark.commands."))
    assert wrong == []
