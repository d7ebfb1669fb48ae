"""The structure bars a newcomer relies on: no function in schedulers/ or benchmark/ longer than
120 lines or taking more than 10 parameters, no module in schedulers/ longer than 900 lines, and no
command module (benchmark/commands/) longer than 400 — the command line stays a page of argument
handling over the experiments."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION_LINES, MAX_PARAMETERS = 120, 10
MAX_MODULE_LINES = {"schedulers": 900, "benchmark/commands": 400}


def _functions(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            parameters = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs) + bool(a.vararg) + bool(a.kwarg)
            yield node, node.end_lineno - node.lineno + 1, parameters


def test_no_function_is_longer_than_120_lines_or_takes_more_than_10_parameters():
    problems = []
    for package in ("schedulers", "benchmark"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node, lines, parameters in _functions(path):
                if lines > MAX_FUNCTION_LINES or parameters > MAX_PARAMETERS:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {lines} lines, "
                                    f"{parameters} parameters")
    assert problems == []


def test_no_module_is_past_its_package_s_length():
    problems = [f"{path.relative_to(ROOT)}: {n} lines (at most {limit})"
                for folder, limit in MAX_MODULE_LINES.items()
                for path in sorted((ROOT / folder).rglob("*.py"))
                if (n := len(path.read_text(encoding="utf-8").splitlines())) > limit]
    assert problems == []


def test_the_checks_see_a_long_function(tmp_path):
    """The measure itself: a generated 121-line, 11-parameter function is caught."""
    source = "def f(" + ", ".join(f"a{i}" for i in range(11)) + "):\n" + "    x = 1\n" * 119 + "    return x\n"
    path = tmp_path / "probe.py"
    path.write_text(source, encoding="utf-8")
    [(node, lines, parameters)] = list(_functions(path))
    assert (node.name, lines, parameters) == ("f", 121, 11)
