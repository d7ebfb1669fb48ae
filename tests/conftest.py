"""Fixtures of the whole suite."""

import atlas_data.blas  # noqa: F401 -- first: OpenBLAS kernels pinned before any test imports numpy (atlas_data/blas.py)

import os

import pytest
from figure_placeholders import RENDERED  # the running test is marked figures_rendered


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


@pytest.fixture(scope="module")
def cell_figures_unrendered():
    """The figures drawn in the worker processes of sweeps, reproductions and `benchmark demo` are written as
    placeholders (tests/figure_placeholders.py); the figures of the test's own process are drawn.

    For a file whose commands run their cells or steps in workers and whose tests look at no figure of a
    cell: each cell of a sweep draws its run's figures (3 for a fairness run), and in `reproduce astraea`
    they were 14 of its 20 s of CPU. Workers are forked by multiprocessing's fork server, which a patch
    of this process does not reach: the pool's initializer installs the placeholder in each worker.
    """
    from benchmark.sweeps import execution
    from figure_placeholders import WorkerInit

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(execution, "_worker_init", WorkerInit())
        yield


@pytest.fixture(scope="module")
def figures_unrendered(cell_figures_unrendered):
    """Every figure a command builds is written as a placeholder PNG and SVG instead of being rendered.

    Rendering is most of a small run's time: a 40-job `run --task fairness` took 3.5 s of CPU with its three
    figures and 0.4 s without (2026-12-06, load 10), and a `run` of any task draws its figures. A test file
    whose tests run commands but look at no figure uses this (`pytestmark`); the figures themselves are
    tested where they are looked at (tests/benchmark/test_plots.py and the tests reading .png/.svg files),
    which render them for real. The figures are still built, so an error in building one still fails.
    Module-scoped, so that the module's shared runs (module fixtures) are made without rendering too; a test
    of such a module that looks at its figures is marked `figures_rendered` and gets them drawn. The worker
    processes of sweeps and of `benchmark demo` write placeholders too (`cell_figures_unrendered`).
    """
    from atlas_data import outputs
    from figure_placeholders import write_placeholder

    real = outputs.write_figure

    def placeholder(fig, path, *, dpi=120, command=None):
        if RENDERED[0]:
            return real(fig, path, dpi=dpi, command=command)
        return write_placeholder(fig, path, dpi=dpi, command=command)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(outputs, "write_figure", placeholder)
        yield


def pytest_configure(config):
    # here rather than in pyproject.toml, whose every change makes `make` reinstall the venv
    config.addinivalue_line("markers", "figures_rendered: in a module whose commands' figures are placeholders "
                                       "(figures_unrendered), a test that draws them for real")
    config.addinivalue_line("markers", "long_file: the tests of a file that takes long (tens of seconds of a core "
                                       "or more): on pytest-xdist workers the file starts before the others")
    if hasattr(config.option, "loadscopereorder"):  # xdist's --dist loadfile: files in the workers' order (below)
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """On pytest-xdist workers, the files marked `long_file` first, the others after them in their order.

    With `--dist loadfile` a worker takes the next file of that order when it has run its own (xdist would
    otherwise hand them out by their number of tests, and test_fault_injection.py, a dozen tests and a minute
    of CPU, started past the middle of the run): a long file taken late runs on alone while the other worker
    has finished. Marked are the files of about 13 s of CPU or more in a whole run (`--cpu-by-file`), which leaves only
    files of a few seconds for the end. A run without xdist keeps pytest's order.
    """
    if not hasattr(config, "workerinput"):
        return
    long_files = {item.path for item in items if item.get_closest_marker("long_file") is not None}
    items.sort(key=lambda item: item.path not in long_files)  # stable: the order within each file is kept


def pytest_runtest_setup(item):
    RENDERED[0] = item.get_closest_marker("figures_rendered") is not None


_STARTED = {}
_CPU_BY_FILE: dict[str, float] = {}
_FILE_CPU: dict = {"path": None, "start": 0.0, "next": None}  # the running file, its CPU when it began, the next test


def pytest_addoption(parser):
    parser.addoption("--cpu-by-file", type=int, default=0, metavar="N",
                     help="after the run, list the N test files that took the most CPU seconds (setup, call and "
                          "teardown; the test process and every process it started, see tree_cpu_seconds): under "
                          "load, pytest's --durations are wall-clock and say more about the machine than about the test")


def pytest_sessionstart(session):
    import time

    _STARTED["wall"] = time.perf_counter()


def tree_cpu_seconds() -> float:
    """User + system CPU seconds of this process, of the children it has waited for, and of every
    descendant still alive or not yet waited for (Linux /proc; elsewhere only the first two).

    getrusage alone counts a child when it is waited for, which may be long after it ran: the fork server
    of the sweeps (benchmark.sweeps.execution) lives from the first sweep to the end of the session and
    waits for its pool workers itself, and a `Popen` left unwaited is reaped when a later test starts
    another. Their CPU was charged to whichever file was running then (test_notebooks read 70 s in the
    suite, 13-18 s alone). A descendant counted here alive moves into RUSAGE_CHILDREN when reaped, so
    the total stays the same then: each file is charged with what ran while it did.
    """
    from benchmark.timings import cpu_seconds

    total = cpu_seconds()
    if not os.path.isdir("/proc"):
        return total
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
                stats[int(entry)] = (int(fields[1]), sum(int(f) for f in fields[11:15]))  # ppid; utime stime cutime cstime
            except (OSError, IndexError, ValueError):
                continue
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    ticks = 0
    todo = list(children.get(os.getpid(), ()))
    while todo:
        pid = todo.pop()
        ticks += stats[pid][1]
        todo.extend(children.get(pid, ()))
    return total + ticks / os.sysconf("SC_CLK_TCK")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if item.config.getoption("cpu_by_file") and item.path != _FILE_CPU["path"]:
        _FILE_CPU.update(path=item.path, start=tree_cpu_seconds())
    _FILE_CPU["next"] = nextitem
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """The teardown report of a file's last test carries the file's CPU seconds (an xdist worker sends it
    to the main process with the report), when --cpu-by-file asks for them. Measured per file, not per
    test: the scan of /proc costs a few milliseconds."""
    outcome = yield
    nextitem = _FILE_CPU["next"]
    if (item.config.getoption("cpu_by_file") and call.when == "teardown"
            and (nextitem is None or nextitem.path != item.path)):
        outcome.get_result().user_properties.append(("cpu_seconds", tree_cpu_seconds() - _FILE_CPU["start"]))
        _FILE_CPU["path"] = None


def pytest_runtest_logreport(report):
    for key, value in getattr(report, "user_properties", ()):
        if key == "cpu_seconds":
            path = report.nodeid.split("::", 1)[0]
            _CPU_BY_FILE[path] = _CPU_BY_FILE.get(path, 0.0) + value


def pytest_sessionfinish(session):
    """The fork server that sweeps fork their worker processes from (benchmark.sweeps.execution) is stopped and
    waited for, here and in each pytest-xdist worker: it has waited for those workers, so their CPU counts in the
    "suite:" line with it. Left running, it would outlive its parent, be waited for by no process of the suite,
    and its workers' CPU (half a minute of a core in the sweeps and reproductions) would go uncounted."""
    from multiprocessing import forkserver

    stop = getattr(getattr(forkserver, "_forkserver", None), "_stop", None)  # CPython's own (used by its tests)
    if stop is not None:
        stop()


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
    top = terminalreporter.config.getoption("cpu_by_file")
    if top and _CPU_BY_FILE:
        terminalreporter.write_sep("=", f"CPU seconds by test file (top {top} of {len(_CPU_BY_FILE)}, "
                                        f"{sum(_CPU_BY_FILE.values()):.0f} s in all)")
        for path, seconds in sorted(_CPU_BY_FILE.items(), key=lambda kv: -kv[1])[:top]:
            terminalreporter.write_line(f"{seconds:8.1f}  {path}")
    terminalreporter.write_line(f"suite: {wall:.0f} s wall, {cpu:.0f} s CPU (this process and its finished workers), "
                                f"load average {load:.2f}")
