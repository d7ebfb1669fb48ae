"""The `benchmark` console script: parses arguments and dispatches to command modules.

Each module in COMMAND_MODULES has `register(subparsers)`, which adds its parser(s) and sets
`handler` on them. Bad input (InputError, argparse errors) exits 2 with one line on stderr;
Ctrl-C or SIGTERM at any moment (imports included) exits 130 with one line; nothing else ever
prints a traceback unless ATLAS_DEBUG=1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from atlas_data.errors import InputError

COMMAND_MODULES = (
    "benchmark.commands.data",
    "benchmark.commands.run",
    "benchmark.commands.perf",
    "benchmark.commands.demo",
    "benchmark.commands.compare",
    "benchmark.commands.sweep",
    "benchmark.commands.leaderboard",
    "benchmark.commands.reproduce",
    "benchmark.commands.transfer",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        sys.stderr.write(f"error: {self.prog}: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="benchmark", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    from benchmark.interrupts import deferred_signals, quiet_exit, terminate_as_interrupt

    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    try:
        with terminate_as_interrupt():
            try:
                return _main(argv)
            finally:
                quiet_exit()  # registered while SIGTERM still interrupts: no moment without either
    except KeyboardInterrupt as exc:
        with deferred_signals(reraise=False):  # a second Ctrl-C must not break the one line
            how = "terminated (SIGTERM)" if str(exc) == "SIGTERM" else "interrupted"
            sys.stderr.write(f"{how}\n")
            sys.stderr.flush()
        return 130


def _main(argv: list[str]) -> int:
    from atlas_data.outputs import using_command_line

    try:
        parser = build_parser()  # imports every command module: Ctrl-C may land here too
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help (0) return like every other outcome
        return int(exc.code or 0)
    try:
        with using_command_line(argv):  # recorded in every output folder this command writes
            code = args.handler(args)
    except InputError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    except Exception as exc:  # the user must never see a traceback
        if os.environ.get("ATLAS_DEBUG") == "1":
            raise
        first = (str(exc).strip().splitlines() or [""])[0]  # database errors carry the SQL on more lines
        sys.stderr.write(f"internal error: {type(exc).__name__}: {first} (set ATLAS_DEBUG=1 for details)\n")
        return 1
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main())
