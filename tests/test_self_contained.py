"""The product refers only to itself and to published papers: no internal documents, no machine paths.

Code, help texts, README, notebooks and docs must not point at documents that do not ship (the
internal product specification and source notes) nor at paths outside the checkout.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".ipynb", ".yaml", ".yml", ".toml", ".txt", ".cfg"}
SKIP_PARTS = {".git", ".venv", "results", "__pycache__", ".pytest_cache", "build", "dist"}
FORBIDDEN = [
    (re.compile(r"\bSPEC\b"), "the internal specification"),
    (re.compile(r"seed\s*§|seeds/|\.txt\s*§"), "an internal source note"),
    (re.compile(r"/work/|\.\./shared"), "a path outside the checkout"),
]
THIS_FILE = Path(__file__).resolve()


def shipped_text_files():
    for path in sorted(ROOT.rglob("*")):
        if path.is_file() and path.suffix in SUFFIXES and not SKIP_PARTS & set(path.relative_to(ROOT).parts):
            if path.resolve() != THIS_FILE and "LICENSE" not in path.name:
                yield path


def offending_lines(paths) -> list[str]:
    found = []
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            for pattern, what in FORBIDDEN:
                if pattern.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{number}: refers to {what}: {line.strip()[:100]}")
    return found


def test_no_reference_to_documents_or_paths_that_do_not_ship():
    assert offending_lines(shipped_text_files()) == []


def test_the_check_finds_each_kind_of_reference(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    bad = tmp_path / "m.py"
    bad.write_text('"""Rules of SPEC §6."""\n# as in seed §11\nDATA = "/work/shared/data"\nok = "spec_type"\n')
    found = offending_lines([bad])
    assert [f.split(": refers to ")[1].split(":")[0] for f in found] == [
        "the internal specification", "an internal source note", "a path outside the checkout"]
