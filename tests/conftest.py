"""Fixtures of the whole suite."""

import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def mlflow_store_outside_the_checkout(tmp_path_factory):
    """Runs logged by tests go to a temporary store, never to the checkout's results/mlflow.db.

    Without MLFLOW_TRACKING_URI a run logs to its project's store, `<git top-level>/results/mlflow.db`
    (benchmark.tracking), and the suite runs inside the checkout. Tests of the store location
    unset the variable and change into a temporary folder themselves.
    """
    if os.environ.get("MLFLOW_TRACKING_URI"):
        yield
        return
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"
    yield
    os.environ.pop("MLFLOW_TRACKING_URI", None)


@pytest.fixture(scope="session", autouse=True)
def sigint_as_in_a_terminal():
    """The suite sees Ctrl-C as Python's default handler, however it was launched.

    A shell starts a background job (`make test &` in a script, a CI step sent to the background) with
    SIGINT ignored, and the command line leaves an ignored SIGINT ignored (a background job's choice;
    tests/benchmark/test_interrupt_scope.py checks that): the tests that send SIGINT would then see no
    interrupt at all. Tests of an ignored SIGINT set it themselves.
    """
    import signal

    found = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, found)


_STARTED = {}


def pytest_sessionstart(session):
    import time

    _STARTED["wall"] = time.perf_counter()


def pytest_terminal_summary(terminalreporter):
    """Wall and CPU time of the whole suite (this process and the workers it has waited for, user + system)
    beside pytest's own line, so that a slow run on a loaded machine can be told from a slower suite."""
    import time

    from benchmark.timings import cpu_seconds

    if "wall" not in _STARTED:
        return
    wall = time.perf_counter() - _STARTED["wall"]
    cpu = cpu_seconds()
    load = os.getloadavg()[0]
    terminalreporter.write_line(f"suite: {wall:.0f} s wall, {cpu:.0f} s CPU (this process and its finished workers), "
                                f"load average {load:.2f}")
