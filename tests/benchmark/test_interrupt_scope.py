"""Interrupt state is scoped to one command (benchmark.interrupts.one_command): a process that runs many
commands — the Python API, a notebook, a test session — sees an interrupted command end with 130 and the
next one report its own error (exit 2, one line); every `main()` leaves the SIGINT, SIGTERM and SIGHUP
handlers, `sys.unraisablehook` and the plugins' interrupt judge as it found them."""

import signal
import sys

import pytest

from benchmark.cli import main

# a --plugins file that stops its own command with SIGTERM, as `kill` would while the command runs
KILLER = '''
import os, signal, time
os.kill(os.getpid(), signal.{sig})
for _ in range(200):  # the handler runs between bytecodes, well before this ends
    time.sleep(0.005)
'''
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _state():
    from atlas_data import plugins

    return [signal.getsignal(s) for s in SIGNALS], sys.unraisablehook, plugins._may_be_signal


def _run(capsys, argv) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.fixture
def handlers():
    """Put the process's handlers back whatever a test set (the test sets a host program's)."""
    saved = [signal.getsignal(s) for s in SIGNALS]
    hook = sys.unraisablehook
    yield
    for sig, handler in zip(SIGNALS, saved):
        signal.signal(sig, handler)
    sys.unraisablehook = hook


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_an_interrupted_command_then_a_failing_one_in_the_same_process(tmp_path, capsys, monkeypatch, handlers, sig):
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # pytest's: the command turns it into an interrupt
    monkeypatch.chdir(tmp_path)
    (tmp_path / "killer.py").write_text(KILLER.format(sig=sig))
    (tmp_path / "bad.yaml").write_text("task: nope\n")
    before = _state()

    code, err = _run(capsys, ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "missing.csv",
                              "--plugins", "killer.py", "--no-mlflow", "--quiet"])
    assert (code, err) == (130, ["terminated (SIGTERM)" if sig == "SIGTERM" else "interrupted"])
    assert _state() == before

    # the next commands report their own errors, not the interrupt of the one before
    code, err = _run(capsys, ["sweep", "bad.yaml"])
    assert code == 2 and len(err) == 1 and err[0].startswith("error: bad.yaml: task:"), err
    code, err = _run(capsys, ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs",
                              "missing.csv", "--no-mlflow", "--quiet"])
    assert code == 2 and len(err) == 1 and err[0].startswith("error: missing.csv"), err
    assert _state() == before


def _host_handler(signum, frame):  # noqa: ARG001
    _host_handler.calls.append(signum)


@pytest.mark.parametrize("found", ["defaults", "background job", "host program"])
def test_main_leaves_the_signal_handlers_it_found(tmp_path, capsys, monkeypatch, handlers, found):
    """Whatever handled the signals before `main()` handles them after it: Python's defaults, a background
    job's ignored SIGINT and SIGHUP (`nohup cmd &`), or a host program's own functions — after an interrupted
    command (or, under a host's SIGTERM handler, a command the host's handler let go on), a failing one and a
    finished one."""
    from atlas_data.plugins import user_code

    if found == "background job":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    elif found == "host program":
        _host_handler.calls = []
        for sig in SIGNALS:
            signal.signal(sig, _host_handler)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "killer.py").write_text(KILLER.format(sig="SIGTERM"))
    before = _state()
    assert before[2] is None  # the Python API outside any command: every KeyboardInterrupt is a Ctrl-C

    code, err = _run(capsys, ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "missing.csv",
                              "--plugins", "killer.py", "--no-mlflow", "--quiet"])
    if found == "host program":  # its handler took the SIGTERM: the command went on, to its own error
        assert _host_handler.calls == [signal.SIGTERM]
        assert code == 2 and len(err) == 1 and err[0].startswith("error: missing.csv"), err
    else:
        assert (code, err) == (130, ["terminated (SIGTERM)"])
    assert _state() == before
    assert _run(capsys, ["run", "--task", "prediction", "--methods", "bogus", "--no-mlflow", "--quiet"])[0] == 2
    assert _state() == before
    assert _run(capsys, ["run", "--help"])[0] == 0
    assert _state() == before
    # a plugin that sets handlers of its own changes them for its command only
    (tmp_path / "meddler.py").write_text("import signal, sys\n"
                                         "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):\n"
                                         "    signal.signal(s, signal.SIG_IGN)\n"
                                         "sys.unraisablehook = lambda unraisable: None\n")
    assert _run(capsys, ["run", "--task", "scheduling", "--plugins", "meddler.py", "--no-mlflow", "--quiet"])[0] == 2
    assert _state() == before
    # after the commands, a KeyboardInterrupt in plugin code run through the API is still taken for a Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        with user_code("a plugin called from a notebook"):
            raise KeyboardInterrupt
