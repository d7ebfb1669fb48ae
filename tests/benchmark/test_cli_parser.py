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
