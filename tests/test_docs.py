"""The user documentation in docs/ stays true to the code.

(a) every `--option` written in docs/*.md is an option of some `benchmark` parser (and a literal
    value after an option with fixed choices is one of them);
(b) every registered policy name is documented in docs/policies.md;
(c) every relative Markdown link points to an existing file (and heading anchor).

The project README, the landing page, is checked like the pages of docs/.

Options, values and pages that colleagues are adding on other branches are allowed while they
do not exist yet; once they exist they are checked like everything else.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [DOCS.parent / "README.md"]

# Options of other programs quoted in the docs, allowed only on a line that names that program.
OTHER_TOOLS = {"--nthreads": "dask worker", "--nworkers": "dask worker", "--backend-store-uri": "mlflow ui",
               "--durations": "pytest", "--cpu-by-file": "pytest", "--python": "uv pip install", "--dist": "pytest"}

OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# an option followed by a literal lower-case value (or a|b|c list of them), e.g. `--sample window|random`
OPTION_VALUE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)[ =]([a-z][a-z0-9_.-]*(?:\\?\|[a-z][a-z0-9_.-]*)*)(?![\w/:])")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _parsers():
    """Every parser reachable from `benchmark`'s top-level parser (sub-commands recursively)."""
    from benchmark.cli import build_parser

    todo, seen = [build_parser()], []
    while todo:
        parser = todo.pop()
        seen.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return seen


@pytest.fixture(scope="module")
def cli_options() -> dict[str, set[str] | None]:
    """option string -> the union of its choices over all parsers (None: free value)."""
    options: dict[str, set[str] | None] = {}
    for parser in _parsers():
        for action in parser._actions:
            for name in action.option_strings:
                if action.choices is None or isinstance(action, argparse._SubParsersAction):
                    options.setdefault(name, None)
                else:
                    known = options.get(name) or set()
                    options[name] = known | {str(c) for c in action.choices}
    return options


def _lines():
    for page in PAGES:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            yield page, number, line


def test_docs_exist():
    names = {p.name for p in PAGES}
    for required in ("README.md", "data-formats.md", "predictors.md", "evaluation-protocol.md", "policies.md",
                     "fairness.md", "results-and-tracking.md", "leaderboards.md", "references.md"):
        assert required in names


def test_every_documented_option_exists(cli_options):
    problems = []
    for page, number, line in _lines():
        for option in OPTION.findall(line):
            if option in cli_options:
                continue
            tool = OTHER_TOOLS.get(option)
            if tool is not None and tool in line:
                continue
            problems.append(f"{page.name}:{number}: {option} is not a `benchmark` option")
    assert not problems, "\n".join(problems)


def test_documented_option_values_are_valid_choices(cli_options):
    problems = []
    for page, number, line in _lines():
        for option, values in OPTION_VALUE.findall(line):
            choices = cli_options.get(option)
            if not choices:  # a free-valued option
                continue
            for value in values.replace("\\|", "|").split("|"):
                if value in choices:
                    continue
                problems.append(f"{page.name}:{number}: {option} {value}: not one of {sorted(choices)}")
    assert not problems, "\n".join(problems)


def test_every_registered_policy_is_documented():
    from schedulers.policy import get_policy, policy_names

    text = (DOCS / "policies.md").read_text(encoding="utf-8")
    # the package's own policies (a test may register a plugin policy of its own in this process)
    missing = [name for kind in ("single", "parallel", "cluster") for name in policy_names(kind)
               if get_policy(name, kind).__module__.startswith("schedulers.") and f"`{name}`" not in text]
    assert not missing, f"policies not documented in docs/policies.md: {missing}"


def _slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors, counts, fenced = set(), {}, False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        anchors.update(re.findall(r'<a id="([^"]+)"', line))
        match = re.match(r"#{1,6} (.+)", line)
        if match and not fenced:
            slug = _slug(match.group(1))
            n = counts.get(slug, 0)
            counts[slug] = n + 1
            anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def test_relative_links_resolve():
    problems = []
    for page, number, line in _lines():
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                problems.append(f"{page.name}:{number}: link to missing file {path}")
                continue
            if anchor and file.suffix == ".md" and anchor not in _anchors(file):
                problems.append(f"{page.name}:{number}: no heading #{anchor} in {file.name}")
    assert not problems, "\n".join(problems)
