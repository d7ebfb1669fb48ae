"""The `benchmark` console script: parses arguments and dispatches to command modules.

Each module in COMMAND_MODULES has `register(subparsers)`, which adds its parser(s) and sets
`handler` on them. A command line imports only the module of the command it names (the others
get a stub parser carrying their one-line help, from COMMANDS): the task modules behind `run`
import pandas and matplotlib, which `benchmark --help` or `benchmark compare` never need. Bad input (InputError, argparse errors) exits 2 with one line on stderr;
Ctrl-C, SIGTERM or SIGHUP at any moment (imports included) exits 130 with one line; nothing else ever
prints a traceback unless ATLAS_DEBUG=1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from atlas_data.errors import InputError, one_line

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
    "benchmark.commands.robustness",
    "benchmark.commands.value",
)

# top-level command -> (its module, its one-line help); the help must match the module's own
# (tests/benchmark/test_cli.py checks both, and that every module's commands are listed)
COMMANDS = {
    "data": ("benchmark.commands.data", "build, synthesise, describe or import datasets"),
    "run": ("benchmark.commands.run", "run one task and write an output folder"),
    "perf": ("benchmark.commands.perf", "measure speed against the performance targets"),
    "demo": ("benchmark.commands.demo", "run the main job on the embedded default data"),
    "compare": ("benchmark.commands.compare", "show tracked MLflow runs side by side"),
    "sweep": ("benchmark.commands.sweep", "run the cross product of a YAML config (local processes or Dask)"),
    "submit": ("benchmark.commands.leaderboard", "validate, score and store a leaderboard submission"),
    "leaderboard": ("benchmark.commands.leaderboard", "render the leaderboard ranking(s)"),
    "reproduce": ("benchmark.commands.reproduce", "reproduce a paper's tables and figures beside ours"),
    "transfer": ("benchmark.commands.transfer", "cross-cluster transfer of a duration predictor (own vs other clusters)"),
    "robustness": ("benchmark.commands.robustness", "robustness curves: each p̂ policy against noise and no-information controls"),
    "value": ("benchmark.commands.value", "the value of prediction on many real jobs tables, one table of verdicts"),
}


#: what `benchmark --help` opens with: for the user, not this module's docstring
DESCRIPTION = ("ATLAS-Bench: how much a job-duration predictor helps a scheduler, on one machine and on a "
               "multi-tenant GPU cluster, on real traces and without leakage. `benchmark COMMAND --help` gives a "
               "command's options; docs/cli.md lists them all.")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit status 2."""

    def error(self, message: str):  # noqa: D401 - argparse API
        # argparse quotes the value given (`invalid int value: '...'`): a megabyte argument stays one short line
        sys.stderr.write(f"error: {one_line(self.prog)}: {one_line(message)}\n")
        raise SystemExit(2)


class _Only:
    """The subparsers action seen by a command module: adds only the commands in `names`."""

    def __init__(self, subparsers, names):
        self._subparsers, self._names = subparsers, names

    def add_parser(self, name, **kwargs):
        if name in self._names:
            return self._subparsers.add_parser(name, **kwargs)
        return _Parser(prog=name, add_help=False)  # a throw-away parser for a command not asked for


def build_parser(commands=None) -> argparse.ArgumentParser:
    """The `benchmark` parser: every command in full, or only `commands` (names) in full.

    The other commands are stubs (their help line only), so a parser for one command imports
    one command module.
    """
    parser = _Parser(prog="benchmark", description=DESCRIPTION)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subparsers.required = True
    full = set(COMMANDS) if commands is None else set(commands)
    for name, (_module, help_text) in COMMANDS.items():
        if name not in full:
            subparsers.add_parser(name, help=help_text)
    for module in COMMAND_MODULES:
        names = {n for n, (m, _) in COMMANDS.items() if m == module and n in full}
        if names:
            importlib.import_module(module).register(_Only(subparsers, names))
    # argparse lists commands in the order they were added; --help keeps COMMANDS' order
    order = list(COMMANDS)
    subparsers._choices_actions.sort(key=lambda action: order.index(action.dest))
    return parser


def entry() -> None:
    """The `benchmark` console script: run the command, then end the process with its status."""
    from benchmark.interrupts import exit_after_command

    exit_after_command()
    end_process(main())


def end_process(code: int) -> None:
    """End the process with status `code`, without the interpreter's teardown of every module and
    object: after a 200,000-job run that teardown took 0.4-0.5 s of CPU, a seventh of the command
    (docs/performance.md#whole-command-cost). What shutdown does that can matter is done first, in
    its order: threading's exit hooks (executors, the interrupt guard of benchmark.interrupts) and
    the join of every non-daemon thread, the atexit handlers (logging, temporary folders, pools),
    the standard streams' flush. Where one of these steps is missing, or a stream cannot be flushed
    (a closed pipe), the ordinary exit does all of it as before."""
    import atexit
    import threading

    shutdown = getattr(threading, "_shutdown", None)  # noqa: SLF001 - the interpreter's first shutdown step
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)  # noqa: SLF001 - its second
    if shutdown is None or run_exit_handlers is None:
        sys.exit(code)
    shutdown()
    run_exit_handlers()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


class StepFailed(Exception):
    """A command line run in-process by another command (`run_step`) exited with `code`; it has printed
    its own error. Raised, not returned, so that the caller's output folder is discarded."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


def run_step(argv: list[str]) -> None:
    """Run one command line in this process (benchmark demo, benchmark value); StepFailed if it fails."""
    code = main(argv)
    if code != 0:
        raise StepFailed(code)


def main(argv: list[str] | None = None) -> int:
    from atlas_data.plugins import judge_interrupts_with
    from benchmark.interrupts import may_be_signal, one_command

    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    # one command, one interrupt state: none of an earlier command's counts against this one, and the
    # signal handlers and the plugins' interrupt judge are left as found (the API and notebooks run many)
    with one_command():
        # a KeyboardInterrupt a plugin raises itself is its error (exit 2); one a signal raised is an interrupt
        judge = judge_interrupts_with(may_be_signal)
        try:
            return _interruptible(argv)
        finally:
            judge_interrupts_with(judge)


def _interruptible(argv: list[str]) -> int:
    """The command, with Ctrl-C, SIGTERM and SIGHUP turned into one line and exit 130."""
    import gc

    from benchmark.interrupts import after_interrupt, deferred_signals, mark_interrupted, quiet_exit, terminate_as_interrupt

    how = None
    with after_interrupt():  # the interrupted work's finalizers run in here: their noise is dropped
        try:
            with terminate_as_interrupt():
                try:
                    return _main(argv)
                finally:
                    quiet_exit()  # registered while SIGTERM still interrupts: no moment without either
        except KeyboardInterrupt as exc:
            mark_interrupted()
            how = f"terminated ({exc})" if str(exc) in ("SIGTERM", "SIGHUP") else "interrupted"
        with deferred_signals(reraise=False):  # a second Ctrl-C must not break the one line
            gc.collect()  # the interrupted frames are gone: close what they held (connections) now
            sys.stderr.write(f"{how}\n")
            sys.stderr.flush()
    return 130


def _main(argv: list[str]) -> int:
    from atlas_data.outputs import using_command_line

    try:
        # imports the named command's module only: Ctrl-C may land here too
        parser = build_parser([argv[0]] if argv and argv[0] in COMMANDS else [])
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help (0) return like every other outcome
        return int(exc.code or 0)
    try:
        from schedulers import jit

        jit.mode()  # a bad ATLAS_BENCH_JIT is refused before any work, not in the middle of it
        with using_command_line(argv):  # recorded in every output folder this command writes
            code = args.handler(args)
    except Exception as exc:  # the user must never see a traceback
        from benchmark.interrupts import interrupting_signal

        name = interrupting_signal()
        if name is not None:  # a library made the interrupt its own error: still one line, 130
            raise KeyboardInterrupt(name) from None
        if isinstance(exc, InputError):
            sys.stderr.write(f"error: {exc}\n")
            return 2
        if os.environ.get("ATLAS_DEBUG") == "1":
            raise
        first = one_line((str(exc).strip().splitlines() or [""])[0])  # database errors carry the SQL on more lines
        sys.stderr.write(f"internal error: {type(exc).__name__}: {first} (set ATLAS_DEBUG=1 for details)\n")
        return 1
    return int(code or 0)


if __name__ == "__main__":
    raise SystemExit(main())
