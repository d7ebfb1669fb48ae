"""The MLflow store loses nothing and never hangs (docs/results-and-tracking.md#what-counts-as-an-mlflow-store).

Through `benchmark.cli.main` in-process unless the case needs another process (a lock holder) or
another user (read-only places: the tests run as root, for whom permissions do not apply, so those
commands run as `nobody`). Every refusal is exit 2 with one line on stderr, and the user's file is
byte-identical afterwards (sha256), with no lock or journal file made beside it.
"""

import errno
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from benchmark import tracking
from benchmark.cli import main
from cli_checks import all_statuses as _statuses
from cli_checks import exit_2_one_line
from cli_checks import parent_statuses as _parent_statuses
from cli_checks import sql as _sql

# the commands' figures are placeholders: no test here looks at one (tests/conftest.py)
# long_file: started first on the xdist workers (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("figures_unrendered"), pytest.mark.long_file]

REPO = Path(__file__).resolve().parents[2]
CLI = "from benchmark.cli import entry; entry()"  # what the `benchmark` console script runs
JOBS = {"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}
SWEEP = "task: scheduling\njobs: jobs.csv\nobjectives: [total_completion]\npolicies: [fifo]\n"


@pytest.fixture(autouse=True)
def project(tmp_path, monkeypatch):
    """The working folder is tmp_path (no git): the project's store is tmp_path/results/mlflow.db."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("ATLAS_STORE_LOCK_TIMEOUT", raising=False)
    monkeypatch.chdir(tmp_path)
    pd.DataFrame(JOBS).to_csv(tmp_path / "jobs.csv", index=False)
    (tmp_path / "sweep.yaml").write_text(SWEEP)
    return tmp_path


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two sound stores built once: `empty` (schema only) and `used` (one finished run, two children)."""
    root = tmp_path_factory.mktemp("stores")
    empty = root / "empty" / "mlflow.db"
    tracking.prepare(f"sqlite:///{empty}")
    pd.DataFrame(JOBS).to_csv(root / "jobs.csv", index=False)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        patch.chdir(root)
        assert main(_run(root / "jobs.csv", root / "results" / "first")) == 0
    return {"empty": empty, "used": root / "results" / "mlflow.db"}


def _run(jobs, out, *extra):
    """A scheduling run of 4 jobs that logs to MLflow (a second or two)."""
    return [str(a) for a in ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", jobs,
                             "--policies", "fifo,srpt", "--quiet", "--output", out, *extra]]


def _sweep(out):
    return ["sweep", "sweep.yaml", "--quiet", "--output", str(out)]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _folder(folder: Path) -> dict[str, tuple[str, int]]:
    """{name: (sha256, mtime_ns)} of every file in `folder`: a reader must change none and add none."""
    return {p.name: (_sha(p), p.stat().st_mtime_ns) for p in sorted(folder.iterdir()) if p.is_file()}




def _copy(stores, kind, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(stores[kind], folder / "mlflow.db")
    return folder / "mlflow.db"


# ----- 1. a user's own SQLite file is never taken for a store -----------------------------------------
def _own_tables(db):
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        con.execute("CREATE TABLE orders (id INTEGER, customer INTEGER, total REAL)")
        con.executemany("INSERT INTO customers VALUES (?, ?)", [(1, "Ada"), (2, "Grace")])
    con.close()


def _own_alembic_and_experiments(db):
    """The user's own app: alembic-managed, with an `experiments` table of its own (and no runs)."""
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        con.execute("INSERT INTO alembic_version VALUES ('3f2a1b4c5d6e')")
        con.execute("CREATE TABLE experiments (id INTEGER, sample TEXT, temperature REAL)")
        con.execute("INSERT INTO experiments VALUES (1, 'S1', 21.5)")
    con.close()


def _own_runs_table(db):
    """experiments and runs tables of the user's own, without MLflow's columns."""
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE experiments (id INTEGER, title TEXT)")
        con.execute("CREATE TABLE runs (id INTEGER, experiment INTEGER, km REAL)")
        con.execute("INSERT INTO runs VALUES (1, 1, 5.2)")
    con.close()


def _not_sqlite(db):
    db.write_text("name,total\nAda,3\n" * 200)


USER_FILES = {"own tables": (_own_tables, "holds the tables customers, orders"),
              "own alembic and experiments": (_own_alembic_and_experiments, "not MLflow's experiments and runs"),
              "own runs table": (_own_runs_table, "not MLflow's experiments and runs tables"),
              "not SQLite": (_not_sqlite, "not a usable MLflow SQLite store")}


@pytest.mark.parametrize("command", ["compare", "run", "sweep"])
@pytest.mark.parametrize("kind", sorted(USER_FILES))
def test_a_users_file_is_refused_and_left_byte_for_byte(tmp_path, monkeypatch, capsys, command, kind):
    make, words = USER_FILES[kind]
    mine = tmp_path / "mine"
    mine.mkdir()
    db = mine / "app.db"
    make(db)
    before, files = _sha(db), _folder(mine)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{db}")
    argv = {"compare": ["compare"], "run": _run("jobs.csv", tmp_path / "out"), "sweep": _sweep(tmp_path / "out")}
    line = exit_2_one_line(capsys, argv[command], str(db), words, "left as it is")
    assert "rebuilt" not in line
    assert _sha(db) == before and _folder(mine) == files  # no lock file, journal or backup beside it
    assert not (tmp_path / "out").exists()  # refused before any work


@pytest.mark.parametrize("damage", ["no version row", "runs table renamed away"])
def test_a_rebuild_of_a_store_without_runs_keeps_the_old_file(stores, tmp_path, capsys, damage):
    """A store an interruption left half-migrated, with no runs, is rebuilt, and the old file is kept."""
    results = tmp_path / "results"
    db = _copy(stores, "empty", results)
    if damage == "no version row":
        _sql(db, "DELETE FROM alembic_version")
    else:  # a table dropped and its migrated copy not renamed back: recognised by the copy's columns
        _sql(db, "DELETE FROM alembic_version")
        _sql(db, "ALTER TABLE runs RENAME TO _alembic_tmp_runs")
    damaged = _sha(db)
    capsys.readouterr()
    assert main(_run("jobs.csv", results / "run")) == 0
    err = capsys.readouterr().err
    assert "rebuilt the MLflow store" in err and "held no runs" in err and "the old file is kept as" in err
    backups = list(results.glob("mlflow.db.damaged-*"))
    assert len(backups) == 1 and str(backups[0]) in err and _sha(backups[0]) == damaged
    assert _statuses(db) == {"FINISHED": 3}  # the new run and its two children


def test_the_rule_of_what_is_an_mlflow_store(stores, tmp_path):
    ((head,),) = _sql(stores["empty"], "SELECT version_num FROM alembic_version")  # as MLflow wrote it
    assert tracking.not_mlflow(tracking.read_state(stores["used"])) is None
    assert tracking.not_mlflow(tracking.read_state(stores["empty"])) is None
    empty = tmp_path / "zero.db"
    empty.touch()
    assert tracking.read_state(empty).objects == 0 and tracking.not_mlflow(tracking.read_state(empty)) is None
    only_version = tmp_path / "only_version.db"  # MLflow never writes this (its tables come first): not a store
    _sql(only_version, "CREATE TABLE alembic_version (version_num VARCHAR(32))")
    _sql(only_version, "INSERT INTO alembic_version VALUES (?)", head)
    assert "not MLflow's experiments and runs tables" in tracking.not_mlflow(tracking.read_state(only_version))
    for make, _ in USER_FILES.values():
        if make is not _not_sqlite:
            path = tmp_path / f"{make.__name__}.db"
            make(path)
            assert tracking.not_mlflow(tracking.read_state(path)) is not None


# ----- 2. compare only reads ---------------------------------------------------------------------
def test_compare_takes_no_lock_and_repairs_nothing(stores, tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    db = _copy(stores, "used", results)
    _sql(db, "CREATE TABLE _alembic_tmp_experiments AS SELECT * FROM experiments")  # half-migrated
    files = _folder(results)

    def forbidden(*args, **kwargs):
        raise AssertionError("compare locked or changed the store")

    for name in ("store_lock", "ensure_store", "_build", "_repair", "_backup", "prepare"):
        monkeypatch.setattr(tracking, name, forbidden)
    capsys.readouterr()
    assert main(["compare"]) == 0
    out, err = capsys.readouterr()
    assert "first" in out and "FINISHED" in out  # what it holds, as it is
    assert err.count("\n") == 1 and "half-migrated" in err and "the next `benchmark run`" in err
    assert _folder(results) == files  # nothing changed, nothing added (no lock file, no backup)


def test_compare_of_an_empty_or_zero_byte_store_says_it_holds_no_runs(stores, tmp_path, capsys):
    results = tmp_path / "results"
    results.mkdir()
    db = results / "mlflow.db"
    db.touch()
    capsys.readouterr()
    assert main(["compare"]) == 0
    assert "no tracked runs" in capsys.readouterr().out
    assert db.stat().st_size == 0 and sorted(p.name for p in results.iterdir()) == ["mlflow.db"]
    _copy(stores, "empty", results)
    files = _folder(results)
    assert main(["compare"]) == 0
    assert "no tracked runs" in capsys.readouterr().out and _folder(results) == files


def test_compare_while_a_run_holds_the_lock_answers_at_once(stores, tmp_path, monkeypatch, capsys):
    db = _copy(stores, "used", tmp_path / "results")
    monkeypatch.setenv("ATLAS_STORE_LOCK_TIMEOUT", "30")
    with tracking.store_lock(f"sqlite:///{db}"):
        started = time.monotonic()
        assert main(["compare"]) == 0
        assert time.monotonic() - started < 10
    out, err = capsys.readouterr()
    assert "first" in out and "waiting" not in err


def _as_another_user(argv, cwd: Path, env=None, timeout=120) -> subprocess.CompletedProcess:
    """`benchmark ARGV` in a process that permissions apply to. Root writes through any permission
    (capabilities CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH): when the tests run as root, the child
    drops both from its bounding set before it starts, so a read-only file or folder is read-only to it."""
    environment = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "ATLAS_STORE_LOCK_TIMEOUT")}
    environment.update(PYTHONPATH=str(REPO), MPLBACKEND="Agg", **(env or {}))

    def drop_the_bypass():
        if os.getuid() == 0:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
                if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                    raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")

    return subprocess.run([sys.executable, "-c", CLI, *argv], cwd=cwd, env=environment, capture_output=True,
                          text=True, timeout=timeout, preexec_fn=drop_the_bypass)


@pytest.fixture
def shared(tmp_path):
    """A folder for read-only stores, made writable again for pytest to clean up."""
    folder = tmp_path / "shared"
    folder.mkdir()
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o755)


def _read_only(folder: Path) -> None:
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)


def test_compare_reads_a_store_it_cannot_write(stores, shared):
    store = shared / "ro"
    db = _copy(stores, "used", store)
    _read_only(store)
    files = _folder(store)
    done = _as_another_user(["compare", "--results", str(store)], shared)
    assert done.returncode == 0, done.stderr
    assert "first" in done.stdout and "FINISHED" in done.stdout and done.stderr == ""
    assert _folder(store) == files and _sha(db) == files["mlflow.db"][0]


# ----- 3. a wait for the store lock says so and ends ----------------------------------------------
def test_a_run_waiting_for_the_lock_says_for_whom_and_gives_up(stores, tmp_path, monkeypatch, capsys):
    results = tmp_path / "results"
    db = _copy(stores, "used", results)
    before = _sha(db)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom benchmark.tracking import store_lock\n"
         "with store_lock(sys.argv[1]):\n    print('held', flush=True)\n    time.sleep(60)\n", f"sqlite:///{db}"],
        env={**os.environ, "PYTHONPATH": str(REPO)}, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("ATLAS_STORE_LOCK_TIMEOUT", "0.5")
        capsys.readouterr()
        started = time.monotonic()
        assert main(_run("jobs.csv", results / "second")) == 2
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2, err
    assert err[0].startswith(f"note: waiting for the MLflow store lock {db}.lock (held by pid {holder.pid}: ")
    assert "at most 0.5 s (ATLAS_STORE_LOCK_TIMEOUT)" in err[0]
    assert err[1].startswith(f"error: {db}.lock: gave up after 0.5 s") and f"held by pid {holder.pid}" in err[1]
    assert f"the results in {results / 'second'} are complete" in err[1]
    assert json.loads((results / "second" / "results.json").read_text())["complete"] is True
    assert _sha(db) == before  # nothing logged
    assert main(_run("jobs.csv", results / "third")) == 0  # the holder is gone: the lock is free
    assert _statuses(db) == {"FINISHED": 6}


def test_a_malformed_lock_timeout_is_refused_before_the_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATLAS_STORE_LOCK_TIMEOUT", "soon")
    exit_2_one_line(capsys, _run("jobs.csv", tmp_path / "out"), "ATLAS_STORE_LOCK_TIMEOUT", "'soon'")
    assert not (tmp_path / "out").exists() and not (tmp_path / "results").exists()


# ----- 4. and 5. a server that does not answer, a URI MLflow cannot use: exit 2 before any work --------
def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("command", ["run", "sweep", "compare"])
def test_an_unreachable_tracking_server_is_exit_2_in_seconds(tmp_path, monkeypatch, capsys, command):
    uri = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    argv = {"compare": ["compare"], "run": _run("jobs.csv", tmp_path / "out"), "sweep": _sweep(tmp_path / "out")}
    started = time.monotonic()
    exit_2_one_line(capsys, argv[command], f"MLFLOW_TRACKING_URI={uri}", "cannot reach the tracking server")
    assert time.monotonic() - started < tracking.CONNECT_TIMEOUT_S + 5
    assert not (tmp_path / "out").exists()


URIS = {
    "remote database": ("postgresql://atlas:secret@127.0.0.1:1/runs", "mlflow server"),
    "unknown scheme": ("htp://127.0.0.1:5000", "no tracking store for the scheme 'htp:'"),
    "in-memory SQLite": ("sqlite://", "must name a database file"),
}


@pytest.mark.parametrize("command", ["run", "sweep"])
@pytest.mark.parametrize("kind", sorted(URIS))
def test_a_store_uri_it_cannot_use_is_exit_2_before_the_work(tmp_path, monkeypatch, capsys, command, kind):
    uri, words = URIS[kind]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    argv = _run("jobs.csv", tmp_path / "out") if command == "run" else _sweep(tmp_path / "out")
    line = exit_2_one_line(capsys, argv, "MLFLOW_TRACKING_URI=", words)
    assert "secret" not in line  # a password in the URI is not printed
    assert not (tmp_path / "out").exists()


def test_compare_names_a_missing_database_driver(monkeypatch, capsys):
    import importlib.util

    monkeypatch.setenv("MLFLOW_TRACKING_URI", "mssql+pyodbc://atlas@127.0.0.1:1/runs")
    line = exit_2_one_line(capsys, ["compare"], "database driver 'pyodbc'", "not installed")
    assert importlib.util.find_spec("pyodbc") is None, line  # the case is real only without the driver
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "htp://127.0.0.1:5000")
    exit_2_one_line(capsys, ["compare"], "no tracking store for the scheme")


# ----- 6. a store that cannot be written: before the work; a full disk while logging -----------------
@pytest.mark.parametrize("what", ["store file and folder read-only", "folder read-only, no store yet"])
def test_a_store_in_a_place_it_cannot_write_is_exit_2_before_the_work(stores, shared, what):
    store = shared / "ro"
    if what.startswith("store file"):
        db = _copy(stores, "used", store)
    else:
        store.mkdir()
        db = store / "mlflow.db"
    _read_only(store)
    files = _folder(store)
    work = shared / "work"
    work.mkdir()
    pd.DataFrame(JOBS).to_csv(work / "jobs.csv", index=False)
    done = _as_another_user(_run(work / "jobs.csv", work / "out"), work, env={"MLFLOW_TRACKING_URI": f"sqlite:///{db}"})
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {db}: "), err
    assert ("is read-only" if what.startswith("store file") else f"{store} is not writable") in err[0]
    assert not (work / "out").exists() and _folder(store) == files


def _full_disk_on_artifacts(monkeypatch):
    import mlflow

    def log_artifact(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(mlflow, "log_artifact", log_artifact)


def _full_disk_on_sqlite(monkeypatch):
    """SQLite's own "database or disk is full": every new connection may not grow the file, and a write
    that would fit in the free space left in the file's pages fails as SQLite fails it when the disk is
    full (a run logs few enough rows to fit there)."""
    import sqlite3

    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def cap(connection, record):
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")

    def full(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith(("INSERT", "UPDATE")):
            raise sqlite3.OperationalError("database or disk is full")

    event.listen(Engine, "connect", cap)
    event.listen(Engine, "before_cursor_execute", full)

    def undo():
        event.remove(Engine, "connect", cap)
        event.remove(Engine, "before_cursor_execute", full)

    return undo


@pytest.mark.parametrize("where", ["artifacts", "database"])
def test_a_full_disk_while_logging_is_exit_2_with_the_results_complete(stores, tmp_path, monkeypatch, capsys, where):
    results = tmp_path / "results"
    db = _copy(stores, "used", results)  # a new path: MLflow opens a new engine for it, with the cap below
    undo = _full_disk_on_artifacts(monkeypatch) if where == "artifacts" else _full_disk_on_sqlite(monkeypatch)
    try:
        line = exit_2_one_line(capsys, _run("jobs.csv", results / "second"), str(db),
                               "could not write the MLflow store: the disk is full",
                               f"the results in {results / 'second'} are complete")
    finally:
        if undo:
            undo()
    assert ("No space left on device" if where == "artifacts" else "database or disk is full") in line
    assert json.loads((results / "second" / "results.json").read_text())["complete"] is True
    assert "RUNNING" not in _statuses(db)
    parents = _parent_statuses(db)  # the new run ended FAILED, or was never made
    assert parents == ({"FINISHED": 1, "FAILED": 1} if where == "artifacts" else parents)
    assert parents in ({"FINISHED": 1}, {"FINISHED": 1, "FAILED": 1})
