"""The README is a landing page, and the figures it and docs/results.md show are reproduced by their commands.

- README.md stays short (at most 250 lines) and gives the two set-up commands, `make demo` and
  `make test`, which the Makefile defines;
- docs/cli.md is exactly what `python -m benchmark.clidoc` writes from the current parser;
- every generated block lives in one place: the full tables in docs/results.md, the headline in
  README.md, each between its generator's markers;
- the figures reproduce: the cheapest part of a block's command (the demo's three scheduling steps
  on `elasticflow:cluster05`, a 545-job test part) is rerun on every test run and its section of
  the committed demo block must come out identical; the slow tests rerun each block's whole
  command into a copy of its file and compare everything but the block's first line (which holds
  the date and the timing).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from benchmark.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
RESULTS = ROOT / "docs" / "results.md"
CLI_DOC = ROOT / "docs" / "cli.md"


def _block(text: str, start: str, end: str) -> str:
    assert text.count(start) == 1 and text.count(end) == 1, (start, end)
    return text.split(start, 1)[1].split(end, 1)[0].strip("\n")


def _without_first_line(block: str) -> str:
    first, _, rest = block.partition("\n")
    assert first.startswith("Produced by `benchmark ") or first.startswith("Cross-cluster transfer on "), first
    return rest


# ----- the landing page --------------------------------------------------------------------------------
def test_readme_is_a_short_landing_page_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    fence = re.search(r"```\n(.*?)```", text, re.S)  # the first code block: how to start
    assert fence and re.search(r"^make demo\b", fence.group(1), re.M) and re.search(r"^make test\b", fence.group(1), re.M)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    for page in ("docs/results.md", "docs/cli.md"):  # where to go next
        assert f"]({page})" in text


def test_each_generated_block_lives_in_one_place():
    from benchmark.experiments import astraea as reproduce_astraea
    from benchmark.experiments import atlas as reproduce
    from benchmark.experiments import demo, robustness, transfer
    from benchmark.experiments import rlscheduler as reproduce_rlscheduler

    readme, results = README.read_text(encoding="utf-8"), RESULTS.read_text(encoding="utf-8")
    assert "Produced by `benchmark demo`" in _block(readme, demo.HEADLINE_START, demo.HEADLINE_END)
    for module in (demo, reproduce, reproduce_astraea, reproduce_rlscheduler, robustness, transfer):
        assert _block(results, module.START, module.END).strip()
        assert module.START not in readme and module.END not in readme
    assert demo.HEADLINE_START not in results


# ----- docs/cli.md -------------------------------------------------------------------------------------
def test_the_cli_reference_is_generated_from_the_current_parser():
    from benchmark.clidoc import cli_markdown

    assert CLI_DOC.read_text(encoding="utf-8") == cli_markdown(), (
        "docs/cli.md differs from the parser: run `python -m benchmark.clidoc docs/cli.md`")


def test_the_cli_reference_lists_every_command_and_option():
    import argparse

    from benchmark.cli import COMMANDS, build_parser
    from benchmark.clidoc import cli_markdown

    text = cli_markdown()
    for name in COMMANDS:
        assert f"## `benchmark {name}`" in text
    assert "## `benchmark leaderboard`" in text and "`site`" in text  # the option the old synopsis had lost
    todo = [p for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction) for p in a.choices.values()]
    assert len(todo) == len(COMMANDS)
    while todo:
        parser = todo.pop()
        section = text.split(f" `{parser.prog}`\n", 1)[1]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
            elif action.option_strings and action.help != argparse.SUPPRESS and "-h" not in action.option_strings:
                assert f"| `{action.option_strings[0]}`" in section.split("\n#", 1)[0], (parser.prog, action.option_strings)


def test_clidoc_writes_the_page_and_refuses_a_bad_command_line(tmp_path, capsys):
    from benchmark.clidoc import cli_markdown
    from benchmark.clidoc import main as clidoc

    assert clidoc([str(tmp_path / "cli.md")]) == 0
    assert (tmp_path / "cli.md").read_text() == cli_markdown()
    assert clidoc(["--check"]) == 2 and clidoc(["a.md", "b.md"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("error: usage: python -m benchmark.clidoc") for line in err)


# ----- the figures reproduce ---------------------------------------------------------------------------
def _section(summary: str, caption: str) -> str:
    """One table of the demo summary: from its bold caption to the next caption."""
    i = summary.index(caption)
    j = summary.find("\n**", i + len(caption))
    return summary[i:] if j < 0 else summary[i:j]


def test_the_demo_block_reproduces_on_its_cheapest_steps(tmp_path, monkeypatch):
    """Rerun the demo's three scheduling steps on elasticflow:cluster05 (its exact command lines: learned
    lgbm-meta p̂ on the 545-job test part, noise p̂, every policy) and compare that table with the committed
    block of docs/results.md, caption and every row."""
    import benchmark.plots as plots
    from benchmark.experiments.demo import END, REAL_ARRIVALS, START, demo_steps, summary_markdown

    for figure in ("ratio_bars", "stretch_cdf", "robustness_curve"):  # the block reads no figure
        monkeypatch.setattr(plots, figure, lambda *args, **kwargs: None)
    out = tmp_path / "demo"
    steps = [argv for _, argv in demo_steps(out) if argv[:3] == ["run", "--task", "scheduling"] and REAL_ARRIVALS in argv]
    assert len(steps) == 3
    for argv in steps:
        assert main(argv + ["--no-mlflow", "--quiet"]) == 0
    caption = f"**Scheduling ratios** (real trace `{REAL_ARRIVALS}`"
    ours = _section(summary_markdown(out), caption)
    committed = _section(_block(RESULTS.read_text(encoding="utf-8"), START, END), caption)
    assert "| spjf | lgbm-meta |" in committed and "| prr | noise:1 (noise, uses true sizes) |" in committed
    assert ours.strip() == committed.strip()


def _differing_blocks(committed: str, ours: str, blocks) -> list[str]:
    """The start markers of the blocks whose text differs, the first line (date, timing) aside."""
    return [start for start, end in blocks
            if _without_first_line(_block(ours, start, end)) != _without_first_line(_block(committed, start, end))]


def _rerun(tmp_path, argv: list[str], files: dict[str, list[tuple[str, str]]]) -> None:
    """Run `benchmark ARGV --readme COPY...` on copies of the committed files; compare each block but its first line."""
    copies = {}
    for name in files:
        copies[name] = tmp_path / Path(name).name
        shutil.copyfile(ROOT / name, copies[name])
    readmes = [arg for name in files for arg in ("--readme", str(copies[name]))]
    assert main(argv + ["--output", str(tmp_path / "out")] + readmes) == 0
    for name, blocks in files.items():
        differing = _differing_blocks((ROOT / name).read_text(encoding="utf-8"), copies[name].read_text(encoding="utf-8"),
                                      blocks)
        assert not differing, f"{name}: {differing} differ from what `benchmark {' '.join(argv)}` writes now"


DEMO = ("<!-- demo-results:start -->", "<!-- demo-results:end -->")
HEADLINE = ("<!-- demo-headline:start -->", "<!-- demo-headline:end -->")
SLOW_BLOCKS = {
    # block -> (command line, {file: blocks}); each writes where `--readme` points, as the lead's regeneration does
    "demo": (["demo", "--no-mlflow", "--quiet"], {"README.md": [HEADLINE], "docs/results.md": [DEMO]}),
    "reproduce-atlas": (["reproduce", "atlas", "--quiet"],
                        {"docs/results.md": [("<!-- reproduce-atlas:start -->", "<!-- reproduce-atlas:end -->")]}),
    "reproduce-astraea": (["reproduce", "astraea", "--quiet"],
                          {"docs/results.md": [("<!-- reproduce-astraea:start -->", "<!-- reproduce-astraea:end -->")]}),
    "robustness": (["robustness", "--quiet"], {"docs/results.md": [("<!-- robustness:start -->", "<!-- robustness:end -->")]}),
    "transfer": (["transfer", "--quiet"], {"docs/results.md": [("<!-- transfer:start -->", "<!-- transfer:end -->")]}),
    "reproduce-rlscheduler": (["reproduce", "rlscheduler", "--shake", "10", "--quiet"],
                              {"docs/results.md": [("<!-- reproduce-rlscheduler:start -->",
                                                    "<!-- reproduce-rlscheduler:end -->")]}),
    "reproduce-hpc": (["reproduce", "hpc", "--predictor", "lgbm-meta", "--shake", "5", "--quiet"],
                      {"docs/hpc-backfilling.md": [("<!-- reproduce-hpc:start -->", "<!-- reproduce-hpc:end -->")]}),
    "reproduce-hpc-whole": (["reproduce", "hpc", "--whole", "--predictor", "lgbm-meta", "--quiet"],
                            {"docs/hpc-backfilling.md": [("<!-- reproduce-hpc-whole:start -->",
                                                          "<!-- reproduce-hpc-whole:end -->")]}),
}


@pytest.mark.slow
@pytest.mark.parametrize("block", SLOW_BLOCKS)
def test_each_block_reproduces_with_its_command(tmp_path, block):
    argv, files = SLOW_BLOCKS[block]
    _rerun(tmp_path, argv, files)


def test_the_comparison_ignores_only_the_first_line():
    """A new date or timing passes; a changed figure anywhere else fails."""
    start, end = "<!-- transfer:start -->", "<!-- transfer:end -->"
    committed = RESULTS.read_text(encoding="utf-8")
    first, _, rest = _block(committed, start, end).partition("\n")
    assert "| cluster01 | 241 |" in rest

    def with_block(body: str) -> str:
        return f"intro\n{start}\n{body}\n{end}\n"

    assert _differing_blocks(committed, with_block(first.replace("Cross", "Cross") + " (2027-01-01, 99 s)\n" + rest),
                             [(start, end)]) == []
    assert _differing_blocks(committed, with_block(first + "\n" + rest.replace("| cluster01 | 241 |", "| cluster01 | 242 |")),
                             [(start, end)]) == [start]


def test_the_slow_checks_run_valid_command_lines_on_blocks_that_exist():
    """What the slow tests run parses, and each committed block they compare starts with its provenance line."""
    from benchmark.cli import build_parser

    parser = build_parser()
    for block, (argv, files) in SLOW_BLOCKS.items():
        readmes = [arg for name in files for arg in ("--readme", name)]
        args = parser.parse_args(argv + ["--output", "OUT"] + readmes)  # SystemExit on a bad option
        assert args.readme in (list(files), *files), block  # demo takes --readme once per file
        for name, blocks in files.items():
            text = (ROOT / name).read_text(encoding="utf-8")
            for start, end in blocks:
                assert _without_first_line(_block(text, start, end)).strip(), (name, start)
