"""Fault injection: every command interrupted at seeded random moments, as real processes.

Each test starts `benchmark ...` with this checkout's code in a subprocess (its own session, so a
Ctrl-C can be sent to its whole process group as a terminal does), sends SIGINT to the group or
SIGTERM to the process at a moment drawn from a seeded RNG within a phase (start-up, the work,
the MLflow logging, the first migration of a new store), and checks: exit 130 with one line (or 0
when it had already finished), no RUNNING run left in the store, no half-built store, the store
takes the next run, a rerun succeeds, no process of the command left behind. The rerun is the same
command line run in this process (`rerun`): what it checks is what the interrupted process left on
disk, and a process of its own would only add an interpreter start and the command's imports
(about 3 s of CPU each). It also starts four
first runs at once on a new store, and SIGKILLs a sweep and a run to check what they leave.

Marker `fault`; the subset without `slow` runs in CI (about two minutes), `-m "fault and slow"`
adds every task × phase × signal and the Dask executor. ATLAS_FAULT_SEED (default 15) draws
other moments; a failure message names the moment so it can be replayed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

pytestmark = [pytest.mark.fault, pytest.mark.skipif(not sys.platform.startswith("linux"),
                                                     reason="reads /proc to find the processes left behind"),
              pytest.mark.usefixtures("figures_unrendered"),  # the reruns in this process: no figure looked at
              pytest.mark.long_file]

REPO = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("ATLAS_FAULT_SEED", "15"))
CLI = "from benchmark.cli import entry; entry()"  # what the `benchmark` console script runs
LINES = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}
JOBS = {"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}
STORE_FILES = {"mlflow.db", "mlflow.db.lock", "mlartifacts"}  # what a results folder holds beside the runs
TASK_ARGS = {  # a few seconds each
    "scheduling": ["--objective", "total_completion", "--n", "200"],
    "prediction": ["--methods", "constant"],
    "fairness": ["--n", "40"],
}


# ----- processes --------------------------------------------------------------------------------
def _parents() -> dict[int, int]:
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    return parents


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _terminal_sigint() -> None:
    """In the child before exec: SIGINT as a terminal gives it, whatever this pytest inherited (a CI
    runner started in the background hands its children SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _background_sigint() -> None:
    """In the child before exec: SIGINT ignored, as `nohup` or `cmd &` in a script start a command."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Command:
    """A `benchmark` process, the processes it started (sampled every 50 ms), its stdout and stderr.

    Started as from a terminal (SIGINT default) or, with background=True, as a background job.
    """

    def __init__(self, args: list[str], cwd: Path, env: dict | None = None, background: bool = False):
        environment = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
        environment.update({"PYTHONPATH": str(REPO), **(env or {})})
        self.args = args
        self.started = time.monotonic()
        self.proc = subprocess.Popen([sys.executable, "-c", CLI, *args], cwd=cwd, env=environment,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True,
                                     preexec_fn=_background_sigint if background else _terminal_sigint)
        self.seen: set[int] = set()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        while self.proc.poll() is None:
            parents = _parents()
            frontier = {self.proc.pid}
            while frontier:
                frontier = {pid for pid, parent in parents.items() if parent in frontier} - self.seen
                self.seen |= frontier
            time.sleep(0.05)

    def workers(self, count: int = 2):
        """A condition: at least `count` grandchildren (workers forked by a fork server) are running."""
        def condition() -> bool:
            parents = _parents()
            children = {pid for pid, parent in parents.items() if parent == self.proc.pid}
            grandchildren = {pid for pid, parent in parents.items() if parent in children}
            self.seen |= children | grandchildren
            return len(grandchildren) >= count
        return condition

    def wait_for(self, condition, timeout: float = 120) -> bool:
        """Poll until condition() or the process ends; True if the condition came first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.01)
        raise AssertionError(f"timed out waiting ({self.args})")

    def send(self, sig: int) -> None:
        if self.proc.poll() is not None:
            return
        with_group = sig == signal.SIGINT  # a terminal's Ctrl-C reaches the whole foreground group
        try:
            os.killpg(self.proc.pid, sig) if with_group else self.proc.send_signal(sig)
        except ProcessLookupError:
            pass

    def finish(self, timeout: float = 180) -> tuple[int, str, str]:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"{self.args} did not end after its signal: {err[-2000:]}") from None
        self._watcher.join()
        return self.proc.returncode, out, err

    def survivors(self, grace_s: float = 10) -> list[str]:
        """The processes it started that are still alive `grace_s` after it ended (ideally none)."""
        deadline = time.monotonic() + grace_s
        while True:
            left = [pid for pid in self.seen if _alive(pid)]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        names = []
        for pid in left:
            try:
                names.append(f"{pid}: {Path(f'/proc/{pid}/cmdline').read_text().replace(chr(0), ' ')[:120]}")
            except OSError:
                continue
        return names


def _interrupted_or_finished(code: int, err: str, sig: int, moment: str) -> None:
    """Exit 130 and exactly the one line, or 0 when the signal came too late; never a traceback."""
    assert "Traceback" not in err and "Exception ignored" not in err, f"{moment}: {err[-3000:]}"
    if code == 130:
        assert err.strip().splitlines() == [LINES[sig]], f"{moment}: {err[-3000:]}"
    else:
        assert code == 0, f"{moment}: exit {code}: {err[-3000:]}"


def rerun(args: list[str], cwd: Path, monkeypatch) -> tuple[int, str]:
    """Run the command line `args` again in this process, in the working folder `cwd` with the store
    of its project (no MLFLOW_TRACKING_URI, as Command starts it): (exit status, stderr)."""
    import contextlib
    import io

    from benchmark.cli import main

    err = io.StringIO()
    with monkeypatch.context() as patch, contextlib.redirect_stderr(err):
        patch.chdir(cwd)
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        code = main(args)
    return code, err.getvalue()


# ----- the MLflow store -------------------------------------------------------------------------
def _sql(db: Path, query: str) -> list:
    with sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=30) as con:
        rows = con.execute(query).fetchall()
    con.close()
    return rows


def _statuses(db: Path) -> dict[str, int]:
    """Status counts of the task invocations (parent runs; each has a child run per result row)."""
    if not db.exists():
        return {}
    return dict(_sql(db, "SELECT status, COUNT(*) FROM runs r WHERE NOT EXISTS (SELECT 1 FROM tags t WHERE "
                         "t.run_uuid = r.run_uuid AND t.key = 'mlflow.parentRunId') GROUP BY status"))


def _all_statuses(db: Path) -> dict[str, int]:
    return dict(_sql(db, "SELECT status, COUNT(*) FROM runs GROUP BY status")) if db.exists() else {}


def _running_row(db: Path):
    def condition() -> bool:
        try:
            return db.exists() and bool(_sql(db, "SELECT 1 FROM runs WHERE status = 'RUNNING'"))
        except sqlite3.Error:
            return False
    return condition


def _assert_store_sound(db: Path) -> None:
    """No half-built or half-migrated store, no run left RUNNING."""
    assert not list(db.parent.glob(f"{db.name}.building-*")) and not list(db.parent.glob(f"{db.name}.repairing-*"))
    if not db.exists():
        return
    assert len(_sql(db, "SELECT version_num FROM alembic_version")) == 1
    assert not _sql(db, "SELECT name FROM sqlite_master WHERE name LIKE '\\_alembic\\_tmp%' ESCAPE '\\'")
    assert "RUNNING" not in _all_statuses(db)


@pytest.fixture(scope="module")
def template_store(tmp_path_factory) -> Path:
    """A sound, empty store built once (in this process), copied where a test needs one ready."""
    from benchmark import tracking

    db = tmp_path_factory.mktemp("template") / "mlflow.db"
    tracking.prepare(f"sqlite:///{db}")
    return db


def _ready_store(template: Path, results: Path) -> Path:
    results.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, results / "mlflow.db")
    return results / "mlflow.db"


# ----- output folders ---------------------------------------------------------------------------
def _marks_complete(folder: Path) -> bool:
    """Whether this version of the package marks finished output folders (results.json "complete")."""
    doc = json.loads((folder / "results.json").read_text())
    return "complete" in doc


def assert_absent_or_complete(folder: Path, marks_complete: bool) -> None:
    """An interrupted run's output folder is absent or whole: results.json says "complete": true.

    Only where the package marks finished folders (`marks_complete`, read from an uninterrupted
    run of the same test); an older package leaves no mark to check.
    """
    if not marks_complete or not folder.exists():
        return
    results = folder / "results.json"
    assert results.exists(), f"{folder} exists without results.json"
    assert json.loads(results.read_text()).get("complete") is True, f"{folder}/results.json is not complete"


# ----- moments ----------------------------------------------------------------------------------
def _rng(*parts) -> random.Random:
    return random.Random(f"{SEED}:" + ":".join(map(str, parts)))


def _interrupt_run(template, tmp_path, monkeypatch, task: str, phase: str, sig: int, background: bool = False) -> None:
    """Interrupt `benchmark run --task task` in `phase` with `sig`; then check the store, the
    processes, the output, and that the same command run again succeeds."""
    rng = _rng(task, phase, sig)
    cwd = tmp_path  # the project folder: its store is results/mlflow.db
    results = tmp_path / "results"
    db = _ready_store(template, results)
    args = ["run", "--task", task, *TASK_ARGS[task], "--quiet"]
    out = results / "interrupted"
    command = Command(args + ["--output", str(out)], cwd, background=background)
    if phase == "start-up":  # imports, argument checks, reading the data
        delay = rng.uniform(0.05, 2.0)
        time.sleep(delay)
    elif phase == "work":  # the task writes its folder (or a temporary sibling of it)
        command.wait_for(lambda: any(p.name not in STORE_FILES for p in results.iterdir()))
        delay = rng.uniform(0.0, 1.5)
        time.sleep(delay)
    else:  # the MLflow run exists and is being logged
        command.wait_for(_running_row(db))
        delay = rng.uniform(0.0, 0.15)
        time.sleep(delay)
    moment = f"{task}, {signal.Signals(sig).name} {delay:.3f} s into {phase} (seed {SEED})"
    command.send(sig)
    code, _, err = command.finish()
    _interrupted_or_finished(code, err, sig, moment)
    assert command.survivors() == [], moment
    _assert_store_sound(db)
    before = _statuses(db)
    if phase == "logging":  # the run was being logged: ended KILLED (or FINISHED if the signal came just after)
        assert before.get("KILLED", 0) + before.get("FINISHED", 0) == 1, f"{moment}: {before}"
    code, err = rerun(args + ["--output", str(results / "rerun")], cwd, monkeypatch)
    assert code == 0, f"rerun after {moment}: {err[-3000:]}"
    after = _statuses(db)
    assert after.get("FINISHED", 0) == before.get("FINISHED", 0) + 1 and "RUNNING" not in after, moment
    assert_absent_or_complete(out, _marks_complete(results / "rerun"))
    strays = {p.name for p in results.iterdir()} - STORE_FILES - {"interrupted", "rerun"}
    assert not strays, f"{moment}: left beside the output: {sorted(strays)}"
    written = sorted(p.name for p in cwd.iterdir() if p != results)
    assert not written, f"{moment}: wrote into the working folder: {written}"


FAST_RUN_CASES = [("scheduling", "logging", signal.SIGINT), ("prediction", "work", signal.SIGTERM),
                  ("fairness", "start-up", signal.SIGINT)]
ALL_RUN_CASES = [(task, phase, sig) for task in TASK_ARGS for phase in ("start-up", "work", "logging")
                 for sig in (signal.SIGINT, signal.SIGTERM)]


@pytest.mark.parametrize("task,phase,sig", FAST_RUN_CASES, ids=[f"{t}-{p}-{s.name}" for t, p, s in FAST_RUN_CASES])
def test_interrupted_run_leaves_a_usable_store(template_store, tmp_path, monkeypatch, task, phase, sig):
    _interrupt_run(template_store, tmp_path, monkeypatch, task, phase, sig)


@pytest.mark.slow
@pytest.mark.parametrize("task,phase,sig", [c for c in ALL_RUN_CASES if c not in FAST_RUN_CASES],
                         ids=[f"{t}-{p}-{s.name}" for t, p, s in ALL_RUN_CASES if (t, p, s) not in FAST_RUN_CASES])
def test_interrupted_run_every_task_phase_and_signal(template_store, tmp_path, monkeypatch, task, phase, sig):
    _interrupt_run(template_store, tmp_path, monkeypatch, task, phase, sig)


@pytest.mark.parametrize("task,phase", [("scheduling", "logging"), ("prediction", "work")])
def test_a_background_run_stopped_by_kill_ends_clean(template_store, tmp_path, monkeypatch, task, phase):
    """`nohup benchmark run … &` ignores Ctrl-C, but `kill` (SIGTERM) must still end it with exit
    130, its MLflow run KILLED and no half-written output. (Until this was fixed, SIGTERM killed
    such a process outright: a RUNNING run and a temporary folder were left behind.)"""
    _interrupt_run(template_store, tmp_path, monkeypatch, task, phase, signal.SIGTERM, background=True)


def test_interrupt_during_the_first_migration_leaves_no_half_built_store(tmp_path, monkeypatch):
    jobs = tmp_path / "jobs.csv"
    pd.DataFrame(JOBS).to_csv(jobs, index=False)
    results = tmp_path / "results"
    db = results / "mlflow.db"
    args = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs), "--quiet"]
    command = Command(args + ["--output", str(results / "first")], tmp_path)
    command.wait_for(lambda: bool(list(results.glob("mlflow.db.building-*"))))
    delay = _rng("migration").uniform(0.0, 2.5)
    time.sleep(delay)
    moment = f"SIGINT {delay:.3f} s into the first migration (seed {SEED})"
    command.send(signal.SIGINT)
    code, _, err = command.finish()
    _interrupted_or_finished(code, err, signal.SIGINT, moment)
    _assert_store_sound(db)
    if db.exists():  # built whole and renamed into place (the signal may come after that), or not at all
        from benchmark.tracking import schema_refusal

        assert schema_refusal(f"sqlite:///{db}") is None, moment  # MLflow opens it: its own schema version
    code, err = rerun(args + ["--output", str(results / "second")], tmp_path, monkeypatch)
    assert code == 0, f"rerun after {moment}: {err[-3000:]}"
    _assert_store_sound(db)
    assert _statuses(db)["FINISHED"] >= 1


def test_four_first_runs_at_once_on_a_new_store_all_succeed(tmp_path):
    jobs = tmp_path / "jobs.csv"
    pd.DataFrame(JOBS).to_csv(jobs, index=False)
    results = tmp_path / "results"
    commands = [Command(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs),
                         "--output", str(results / f"run{i}"), "--quiet"], tmp_path) for i in range(4)]
    outcomes = [command.finish() for command in commands]
    assert [code for code, _, _ in outcomes] == [0, 0, 0, 0], [err[-2000:] for _, _, err in outcomes]
    db = results / "mlflow.db"
    _assert_store_sound(db)
    assert _statuses(db) == {"FINISHED": 4}
    names = sorted(name for (name,) in _sql(db, "SELECT r.name FROM runs r JOIN tags t ON t.run_uuid = r.run_uuid "
                                                "WHERE t.key = 'atlas.level' AND t.value = 'run'"))
    assert names == ["run0", "run1", "run2", "run3"]
    assert len(_sql(db, "SELECT name FROM experiments WHERE name = 'atlas-scheduling-total_completion'")) == 1


def test_sigkill_while_logging_leaves_a_running_run_that_compare_shows(template_store, tmp_path, capsys, monkeypatch):
    from benchmark.cli import main

    jobs = tmp_path / "jobs.csv"
    pd.DataFrame(JOBS).to_csv(jobs, index=False)
    results = tmp_path / "results"
    db = _ready_store(template_store, results)
    args = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs), "--quiet"]
    command = Command(args + ["--output", str(results / "killed")], tmp_path)
    assert command.wait_for(_running_row(db)), "the run ended before it was logged"
    command.send(signal.SIGKILL)
    code, _, _ = command.finish()
    assert code == -signal.SIGKILL and _statuses(db) == {"RUNNING": 1}
    assert main(["compare", "--results", str(results)]) == 0
    shown = capsys.readouterr().out
    (row,) = [line for line in shown.splitlines() if "RUNNING" in line and not line.startswith("note")]
    assert " killed " in row and "note: 1 run(s) still RUNNING" in shown
    code, err = rerun(args + ["--output", str(results / "next")], tmp_path, monkeypatch)
    assert code == 0, err[-3000:]
    assert _statuses(db) == {"RUNNING": 1, "FINISHED": 1}


# ----- sweeps -----------------------------------------------------------------------------------
SWEEP = """\
task: scheduling
jobs: jobs.csv
objectives: [total_completion]
policies: [fifo, srpt, rr]
seeds: [0, 1, 2, 3, 4, 5]
n: 200
"""


@pytest.fixture
def sweep_config(tmp_path) -> Path:
    pd.DataFrame({"job_id": [f"j{i}" for i in range(400)], "submit_time": [i // 3 for i in range(400)],
                  "duration": [1 + (7 * i) % 50 for i in range(400)]}).to_csv(tmp_path / "jobs.csv", index=False)
    config = tmp_path / "sweep.yaml"
    config.write_text(SWEEP)
    return config


def test_sigkill_of_a_local_sweep_leaves_no_process_behind(sweep_config, tmp_path):
    command = Command(["sweep", str(sweep_config), "--workers", "2", "--no-mlflow", "--quiet",
                       "--output", str(tmp_path / "out")], tmp_path)
    assert command.wait_for(command.workers()), "the sweep ended before its workers started"
    delay = _rng("sigkill-sweep").uniform(0.0, 1.0)
    time.sleep(delay)
    assert len(command.seen) >= 3  # the fork server and two workers, at least
    command.send(signal.SIGKILL)
    code, _, _ = command.finish()
    assert code == -signal.SIGKILL
    assert command.survivors() == [], f"SIGKILL {delay:.3f} s after the workers started (seed {SEED})"


def _interrupt_sweep(sweep_config, tmp_path, monkeypatch, executor: str, phase: str, sig: int) -> None:
    out = tmp_path / "out"
    args = ["sweep", str(sweep_config), "--executor", executor, "--workers", "2", "--quiet"]
    command = Command(args + ["--output", str(out)], tmp_path)
    rng = _rng("sweep", executor, phase, sig)
    if phase == "start-up":  # imports, the store, the worker processes or the Dask cluster starting
        delay = rng.uniform(0.1, 6.0)
    else:  # cells running
        command.wait_for(command.workers())
        delay = rng.uniform(0.0, 3.0)
    time.sleep(delay)
    moment = f"{executor} sweep, {signal.Signals(sig).name} {delay:.3f} s into {phase} (seed {SEED})"
    command.send(sig)
    code, _, err = command.finish()
    _interrupted_or_finished(code, err, sig, moment)
    assert command.survivors() == [], moment
    for db in tmp_path.rglob("mlflow.db"):
        _assert_store_sound(db)
    code, err = rerun(args + ["--output", str(out)], tmp_path, monkeypatch)
    assert code == 0, f"rerun after {moment}: {err[-3000:]}"
    assert len(pd.read_parquet(out / "sweep.parquet")) == 6 * 3
    (db,) = [db for db in tmp_path.rglob("mlflow.db")]  # the project's store (the working folder's results/)
    assert db == tmp_path / "results" / "mlflow.db"
    _assert_store_sound(db)
    assert _all_statuses(db).get("FINISHED", 0) >= 1 + 6  # the sweep's run and one per cell


@pytest.mark.parametrize("phase,sig", [("cells", signal.SIGINT)], ids=["cells-SIGINT"])
def test_interrupted_local_sweep(sweep_config, tmp_path, monkeypatch, phase, sig):
    _interrupt_sweep(sweep_config, tmp_path, monkeypatch, "local", phase, sig)


@pytest.mark.slow
@pytest.mark.parametrize("executor,phase,sig", [("local", "start-up", signal.SIGINT),
                                                ("local", "cells", signal.SIGTERM),
                                                ("dask", "start-up", signal.SIGINT),
                                                ("dask", "cells", signal.SIGINT),
                                                ("dask", "cells", signal.SIGTERM)],
                         ids=lambda v: v.name if isinstance(v, signal.Signals) else str(v))
def test_interrupted_sweep_every_executor_and_phase(sweep_config, tmp_path, monkeypatch, executor, phase, sig):
    pytest.importorskip("distributed")
    _interrupt_sweep(sweep_config, tmp_path, monkeypatch, executor, phase, sig)


# ----- data build and submit --------------------------------------------------------------------
def test_interrupted_data_build_then_rerun(tmp_path, monkeypatch):
    sig = _rng("data").choice([signal.SIGINT, signal.SIGTERM])
    delay = _rng("data", "delay").uniform(0.3, 3.0)
    args = ["data", "build", "--jobs", "2000", "--out", str(tmp_path / "ds"), "--quiet"]
    command = Command(args, tmp_path)
    time.sleep(delay)
    moment = f"data build, {signal.Signals(sig).name} at {delay:.3f} s (seed {SEED})"
    command.send(sig)
    code, _, err = command.finish()
    _interrupted_or_finished(code, err, sig, moment)
    assert command.survivors() == [], moment
    if code == 130:
        assert not (tmp_path / "ds").exists() or (tmp_path / "ds" / "dataset.json").exists(), moment
    code, err = rerun(args, tmp_path, monkeypatch)
    assert code == 0, f"rerun after {moment}: {err[-3000:]}"
    card = json.loads((tmp_path / "ds" / "dataset.json").read_text())
    assert len(pd.read_parquet(tmp_path / "ds" / "atlas.parquet")) == card["counts"]["kept"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds"], moment  # nothing left beside it


@pytest.fixture(scope="module")
def submission(tmp_path_factory) -> Path:
    from benchmark.cli import main

    folder = tmp_path_factory.mktemp("submission") / "sub"
    assert main(["submit", "--template", str(folder), "--quiet"]) == 0
    return folder


def test_interrupted_submit_then_rerun(submission, tmp_path, monkeypatch):
    sig = _rng("submit").choice([signal.SIGINT, signal.SIGTERM])
    delay = _rng("submit", "delay").uniform(0.3, 3.0)
    entries = tmp_path / "entries"
    args = ["submit", str(submission), "--track", "prediction", "--entries-dir", str(entries), "--quiet"]
    command = Command(args, tmp_path)
    time.sleep(delay)
    moment = f"submit, {signal.Signals(sig).name} at {delay:.3f} s (seed {SEED})"
    command.send(sig)
    code, _, err = command.finish()
    _interrupted_or_finished(code, err, sig, moment)
    assert command.survivors() == [], moment
    for path in entries.rglob("*"):  # an entry is whole or absent
        if path.is_file():
            assert path.suffix == ".json" and json.loads(path.read_text())["track"] == "prediction", (moment, path)
    code, err = rerun(args, tmp_path, monkeypatch)
    assert code == 0, f"rerun after {moment}: {err[-3000:]}"
    assert len([p for p in entries.rglob("*") if p.is_file()]) == 1, moment
