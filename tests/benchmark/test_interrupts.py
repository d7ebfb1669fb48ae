"""benchmark.interrupts through `benchmark.cli.main`: an interrupted command prints its one line and
nothing else, however its work is torn down; an uninterrupted one hides nothing."""

from __future__ import annotations

import sys

import pytest

from benchmark import cli


class _Connection:
    """Stands for an SQLite connection that a finalizer closes after an interrupt cut its transaction."""

    def __del__(self):
        raise RuntimeError("cannot rollback - no transaction is active")


def _work_holding_a_connection(outcome):
    def work(argv):
        connection = _Connection()  # noqa: F841 - held by this frame until the outcome's traceback is gone
        if outcome is KeyboardInterrupt:
            raise KeyboardInterrupt
        return 0
    return work


@pytest.fixture
def reported(monkeypatch):
    """What reaches the unraisable hook (where "Exception ignored in …" is printed from)."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(str(unraisable.exc_value)))
    return seen


def test_an_interrupted_command_prints_one_line_whatever_its_teardown_reports(monkeypatch, capsys, reported):
    monkeypatch.setattr(cli, "_main", _work_holding_a_connection(KeyboardInterrupt))
    assert cli.main(["run"]) == 130
    assert capsys.readouterr().err == "interrupted\n"
    assert reported == []


def test_without_an_interrupt_a_finalizer_error_is_still_reported(monkeypatch, reported):
    monkeypatch.setattr(cli, "_main", _work_holding_a_connection(None))
    assert cli.main(["run"]) == 0
    assert reported == ["cannot rollback - no transaction is active"]


def test_after_an_interrupted_command_the_next_one_is_heard_again(monkeypatch, reported):
    monkeypatch.setattr(cli, "_main", _work_holding_a_connection(KeyboardInterrupt))
    assert cli.main(["run"]) == 130
    monkeypatch.setattr(cli, "_main", _work_holding_a_connection(None))
    assert cli.main(["run"]) == 0
    assert reported == ["cannot rollback - no transaction is active"]


def _parser_running(handler):
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.set_defaults(handler=handler)
    return lambda commands: parser


def _a_library_that_turns_the_interrupt_into_its_own_error(sig):
    """As SQLAlchemy does when an interrupt cuts a migration: it rolls back, and what reaches the
    caller is its PendingRollbackError, not the KeyboardInterrupt."""
    import signal

    def handler(args):
        try:
            signal.raise_signal(sig)
        except KeyboardInterrupt:
            raise RuntimeError("Can't reconnect until invalid transaction is rolled back") from None
        return 0
    return handler


@pytest.mark.parametrize("sig, line", [("SIGINT", "interrupted"), ("SIGTERM", "terminated (SIGTERM)")])
def test_an_interrupt_a_library_turned_into_its_own_error_is_still_an_interrupt(monkeypatch, capsys, sig, line):
    import signal

    monkeypatch.setattr(cli, "build_parser", _parser_running(
        _a_library_that_turns_the_interrupt_into_its_own_error(getattr(signal, sig))))
    # a process started with Ctrl-C ignored (nohup, a CI runner) keeps ignoring it: hear it here
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli.main(["run"]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capsys.readouterr().err == f"{line}\n"
    # the next command's own error is its own again
    def fails(args):
        raise RuntimeError("a real bug")
    monkeypatch.setattr(cli, "build_parser", _parser_running(fails))
    assert cli.main(["run"]) == 1
    assert capsys.readouterr().err.startswith("internal error: RuntimeError: a real bug")


def test_the_console_script_leaves_no_moment_in_which_sigterm_kills(monkeypatch):
    """`benchmark` is the whole process: once its command returns, signals are ignored until it
    exits (restoring SIGTERM's default there left a window in which `kill` ended it with -15)."""
    import signal

    from benchmark import interrupts

    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    monkeypatch.setattr(interrupts, "_process_exits_after", True)
    monkeypatch.setattr(cli, "_main", lambda argv: 0)
    try:
        assert cli.main(["run"]) == 0
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _work_logging_a_database_error(interrupted: bool):
    """What MLflow does when a signal lands in its SQLite session: logs the error, traceback included."""
    import logging
    import signal

    from benchmark import interrupts

    def work(argv):
        try:
            if interrupted:
                interrupts._raise_interrupt(signal.SIGTERM, None)
            raise RuntimeError("database is locked")
        except (KeyboardInterrupt, RuntimeError):
            logging.getLogger("mlflow.store.db.utils").exception("SQLAlchemy database error")
            if interrupted:
                raise
        return 0
    return work


def test_mlflow_logging_a_killed_sessions_error_stays_off_the_terminal(monkeypatch, capfd):
    from benchmark.tracking import import_mlflow

    import_mlflow()
    monkeypatch.setattr(cli, "_main", _work_logging_a_database_error(interrupted=True))
    assert cli.main(["run"]) == 130
    assert capfd.readouterr().err == "terminated (SIGTERM)\n"
    monkeypatch.setattr(cli, "_main", _work_logging_a_database_error(interrupted=False))
    assert cli.main(["run"]) == 0
    err = capfd.readouterr().err
    assert "SQLAlchemy database error" in err and "database is locked" in err  # not interrupted: still heard


def test_an_interrupt_outside_a_command_does_not_mark_the_next_one(tmp_path, capsys):
    """A signal that interrupted work outside any command (a host program's, a test's) left its name
    on record, and the next command's bad input was reported as that interrupt (130) instead of 2."""
    import os
    import signal
    import time

    from benchmark.cli import main
    from benchmark.interrupts import interrupting_signal, terminate_as_interrupt

    with terminate_as_interrupt():
        with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)
    assert interrupting_signal() == "SIGTERM"  # on record: no command ended to clear it
    capsys.readouterr()
    assert main(["sweep", str(tmp_path / "missing.yaml"), "--output", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and "missing.yaml" in err[0], err
