"""The `benchmark` parser is cheap: a command line imports only the module of the command it names."""

import argparse
import subprocess
import sys

from benchmark.cli import COMMAND_MODULES, COMMANDS, build_parser


def _choices(parser) -> dict:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest: a.help for a in action._choices_actions}


def test_every_command_is_listed_with_its_own_help():
    full = _choices(build_parser())
    assert full == {name: help_text for name, (_, help_text) in COMMANDS.items()}
    assert {module for module, _ in COMMANDS.values()} == set(COMMAND_MODULES)
    assert list(_choices(build_parser([]))) == list(COMMANDS)  # same order, stubs only


def test_one_command_parser_parses_that_command():
    args = build_parser(["run"]).parse_args(["run", "--task", "scheduling", "--objective", "makespan"])
    assert args.objective == "makespan" and callable(args.handler)


def test_help_imports_no_task_module_nor_pandas():
    code = ("import sys; from benchmark.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('pandas', 'matplotlib', 'benchmark.tasks.scheduling', 'benchmark.commands.run') "
            "if m in sys.modules]\n"
            "print('HEAVY', heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    assert "leaderboard" in out and "transfer" in out


def _options(parser, path=("benchmark",)):
    """(command path, option, help) of every argument of every (sub)command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        elif not isinstance(action, argparse._HelpAction):
            yield " ".join(path), "/".join(action.option_strings) or action.dest, action.help


def test_every_option_of_every_command_has_help():
    options = list(_options(build_parser()))
    assert len(options) > 150  # every command's parser was walked, not only the stubs
    assert ("benchmark data build", "--source", None) not in options and any(
        where == "benchmark data build" and name == "--source" for where, name, _ in options)
    empty = [(where, name) for where, name, text in options if not (text or "").strip() or text == argparse.SUPPRESS]
    assert empty == []


def test_benchmark_help_opens_with_what_the_tool_is_not_a_module_docstring(capsys):
    from benchmark.cli import main

    try:
        main(["--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    description = out.split("\n\n")[1]
    assert description.startswith("ATLAS-Bench: how much a job-duration predictor helps a scheduler")
    assert "console script" not in out and "dispatches" not in out
