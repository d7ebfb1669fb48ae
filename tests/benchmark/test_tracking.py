"""MLflow tracking of `benchmark run` and `benchmark compare` (temporary SQLite stores only)."""

import json
import time

import pandas as pd
import pytest

from benchmark.cli import main
from atlas_data.errors import InputError
from benchmark.tracking import metrics_of, row_prefix


@pytest.fixture
def jobs_csv(tmp_path):
    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}).to_csv(path, index=False)
    return path


def test_metric_names():
    assert row_prefix({"policy": "spjf", "predictor": "noise:0.5"}) == "spjf/noise:0.5"
    assert row_prefix({"policy": "lpt", "predictor": None, "machines": 5}) == "lpt.m5"
    assert row_prefix({"method": "lgbm-meta"}) == "lgbm-meta"
    assert row_prefix({"method": "lgbm-meta", "predictor": "lgbm-meta"}) == "lgbm-meta"  # prediction rows
    doc = {"rows": [{"policy": "fifo", "predictor": None, "value": 20.0, "ratio": 4 / 3, "opt": None, "ok": True}]}
    assert metrics_of(doc) == {"fifo.value": 20.0, "fifo.ratio": 4 / 3}


def test_runs_are_logged_and_compared(tmp_path, jobs_csv, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    results = tmp_path / "results"
    for name, noise in (("first", "0"), ("second", "1")):
        code = main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--noise", noise, "--output", str(results / name), "--quiet"])
        assert code == 0
    assert (results / "mlflow.db").exists()
    assert (results / "mlartifacts").is_dir() and not any(cwd.iterdir())  # no ./mlruns left behind
    capsys.readouterr()
    csv = tmp_path / "compare.csv"
    assert main(["compare", "--results", str(results), "--experiment", "atlas-scheduling-total_completion", "--csv", str(csv)]) == 0
    table = pd.read_csv(csv)
    assert table["name"].tolist() == ["first", "second"]
    assert table["fifo.ratio"].tolist() == pytest.approx([20 / 15, 20 / 15])
    assert table["srpt.ratio"].tolist() == [1.0, 1.0]
    assert "spjf/noise:0.ratio" in table.columns and "spjf/noise:1.ratio" in table.columns
    shown = capsys.readouterr().out
    assert "first" in shown and "second" in shown

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{results / 'mlflow.db'}")
    run = mlflow.search_runs(experiment_names=["atlas-scheduling-total_completion"]).iloc[0]
    assert run["params.objective"] == "total_completion" and run["params.package_version"]
    artifacts = mlflow.MlflowClient().list_artifacts(run["run_id"])
    assert {"results.json", "per_job.parquet"} <= {a.path for a in artifacts}


def test_no_mlflow_writes_no_store(tmp_path, jobs_csv, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    out = tmp_path / "results" / "x"
    assert main(["run", "--task", "scheduling", "--objective", "max_stretch", "--jobs", str(jobs_csv),
                 "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    assert json.loads((out / "results.json").read_text())["rows"]
    assert not (tmp_path / "results" / "mlflow.db").exists()


def test_compare_unknown_experiment_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert main(["compare", "--results", str(tmp_path), "--experiment", "atlas-nothing"]) == 2
    assert "atlas-nothing" in capsys.readouterr().err


def test_each_results_folder_keeps_its_own_store(tmp_path, jobs_csv, monkeypatch):
    import os

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    for folder in ("one", "two"):
        assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--policies", "fifo", "--output", str(tmp_path / folder / "run"), "--quiet"]) == 0
        assert (tmp_path / folder / "mlflow.db").exists()
        assert "MLFLOW_TRACKING_URI" not in os.environ  # mlflow must not pin later runs to this store
    assert not (tmp_path / "mlruns").exists()


# ----- a store that survives interruptions and damage -------------------------------------------
import shutil  # noqa: E402
import signal  # noqa: E402
import sqlite3  # noqa: E402

from benchmark import tracking  # noqa: E402


def _run(jobs_csv, out, *extra):
    return main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                 "--policies", "fifo,srpt", "--output", str(out), "--quiet", *extra])


def _sql(db, query, *args):
    with sqlite3.connect(db) as con:
        rows = con.execute(query, args).fetchall()
    con.close()
    return rows


def _statuses(db):
    return dict(_sql(db, "SELECT status, COUNT(*) FROM runs GROUP BY status"))


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """Two sound stores built once: `empty` (schema only) and `used` (one finished run)."""
    import os

    os.environ.pop("MLFLOW_TRACKING_URI", None)
    root = tmp_path_factory.mktemp("stores")
    empty = root / "empty" / "mlflow.db"
    tracking.prepare(f"sqlite:///{empty}")
    jobs = root / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0, 1], "duration": [2, 1]}).to_csv(jobs, index=False)
    assert _run(jobs, root / "used" / "first") == 0
    return {"empty": empty, "used": root / "used" / "mlflow.db"}


@pytest.fixture
def quick_build(stores, monkeypatch):
    """A new store is a copy of the module's empty one: the real build (50 migrations, seconds) is
    exercised by the `stores` fixture and the concurrency and fault tests; here it is the detection."""
    built = []

    def build(db):
        shutil.copyfile(stores["empty"], db)
        built.append(db)

    monkeypatch.setattr(tracking, "_build", build)
    return built


def _copy_store(stores, kind, results):
    results.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(stores[kind], results / "mlflow.db")
    return results / "mlflow.db"


def _head_and_previous():
    head, _ = tracking._schema_revisions()
    from alembic.script import ScriptDirectory
    from mlflow.store.db.utils import _get_alembic_config

    previous = ScriptDirectory.from_config(_get_alembic_config("")).get_revision(head).down_revision
    return head, previous if isinstance(previous, str) else previous[0]


EMPTY_DAMAGE = {
    # what an interrupted first migration or four runs starting at once left behind (issue 15)
    "leftover tmp table": "CREATE TABLE _alembic_tmp_experiments AS SELECT * FROM experiments",
    "no version row": "DELETE FROM alembic_version",
    "two version rows": "INSERT INTO alembic_version VALUES ('{previous}')",
    "stopped part way": "UPDATE alembic_version SET version_num = '{previous}'",
}


@pytest.mark.parametrize("damage", sorted(EMPTY_DAMAGE))
def test_half_migrated_store_without_runs_is_rebuilt(stores, jobs_csv, tmp_path, monkeypatch, capsys, damage,
                                                     request):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    db = _copy_store(stores, "empty", tmp_path / "results")
    head, previous = _head_and_previous()
    _sql(db, EMPTY_DAMAGE[damage].format(previous=previous))
    built = request.getfixturevalue("quick_build") if damage != "leftover tmp table" else None  # one real rebuild
    assert _run(jobs_csv, tmp_path / "results" / "run") == 0
    assert built is None or built == [db]
    err = capsys.readouterr().err
    assert "rebuilt the MLflow store" in err and "held no runs" in err
    assert _sql(db, "SELECT version_num FROM alembic_version") == [(head,)]
    assert not _sql(db, "SELECT name FROM sqlite_master WHERE name LIKE '\\_alembic\\_tmp%' ESCAPE '\\'")
    assert _statuses(db) == {"FINISHED": 1}


@pytest.mark.parametrize("how", ["copy left beside the table", "table dropped, copy not renamed"])
def test_half_migrated_store_with_runs_is_repaired_keeping_them(stores, jobs_csv, tmp_path, monkeypatch, capsys, how):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    names_before = _sql(db, "SELECT name FROM experiments ORDER BY experiment_id")
    if how.startswith("copy"):
        _sql(db, "CREATE TABLE _alembic_tmp_experiments AS SELECT * FROM experiments")
    else:
        _sql(db, "ALTER TABLE experiments RENAME TO _alembic_tmp_experiments")
    damaged = db.read_bytes()
    assert _run(jobs_csv, results / "second") == 0
    err = capsys.readouterr().err
    assert "repaired the MLflow store" in err
    backups = list(results.glob("mlflow.db.damaged-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == damaged  # the damaged file is kept as it was
    assert _statuses(db) == {"FINISHED": 2}  # the old run is still there, the new one logged
    assert _sql(db, "SELECT name FROM experiments ORDER BY experiment_id") == names_before
    assert not _sql(db, "SELECT name FROM sqlite_master WHERE name LIKE '\\_alembic\\_tmp%' ESCAPE '\\'")


def test_unrepairable_store_with_runs_is_exit_2_with_the_command_before_any_work(stores, jobs_csv, tmp_path,
                                                                                 monkeypatch, capsys, quick_build):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    _sql(db, "DELETE FROM alembic_version")
    damaged = db.read_bytes()
    assert _run(jobs_csv, results / "second") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith(f"error: {db}")
    assert f"mv {db} {db}.damaged" in err and "holds 1 runs" in err
    assert db.read_bytes() == damaged and not (results / "second").exists()  # refused before the work
    shutil.move(db, f"{db}.damaged")  # the command it gave
    assert _run(jobs_csv, results / "second") == 0
    assert _statuses(db) == {"FINISHED": 1}


@pytest.mark.parametrize("version,words", [("previous", "mlflow db upgrade sqlite:///"),
                                           ("0123456789ab", "newer MLflow")])
def test_store_of_another_mlflow_version_is_exit_2_with_the_fix(stores, jobs_csv, tmp_path, monkeypatch, capsys,
                                                                version, words):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    _sql(db, "UPDATE alembic_version SET version_num = ?", _head_and_previous()[1] if version == "previous" else version)
    assert _run(jobs_csv, results / "second") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err
    assert main(["compare", "--results", str(results)]) == 2
    assert words in capsys.readouterr().err


def test_leftovers_of_a_killed_build_are_removed_and_junk_is_refused(stores, tmp_path, jobs_csv, monkeypatch, capsys,
                                                                     quick_build):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    results.mkdir()
    (results / "mlflow.db.building-99999").write_bytes(b"half a database")
    (results / "mlflow.db.repairing-99999").write_bytes(b"half a copy")
    assert _run(jobs_csv, results / "run") == 0
    assert sorted(p.name for p in results.iterdir()) == ["mlartifacts", "mlflow.db", "mlflow.db.lock", "run"]
    assert quick_build == [results / "mlflow.db"]
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "mlflow.db").write_text("not a database at all, just text that is long enough" * 100)
    capsys.readouterr()
    assert _run(jobs_csv, junk / "run") == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "not a usable MLflow SQLite store" in err


def test_compare_never_creates_a_store(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert main(["compare", "--results", str(tmp_path / "nothing")]) == 0
    assert "no tracked runs" in capsys.readouterr().out and not (tmp_path / "nothing").exists()


def _interrupting(monkeypatch, action):
    """Make MLflow's artifact upload (mid-logging: the run exists, params and metrics are in) do `action`."""
    import mlflow

    def log_artifacts(*args, **kwargs):
        action()

    monkeypatch.setattr(mlflow, "log_artifacts", log_artifacts)


def _ctrl_c():
    raise KeyboardInterrupt


def _sigterm():
    import os
    import time

    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # would kill pytest itself: fail instead
        raise AssertionError("SIGTERM is not handled inside the command")
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)  # the handler raises long before this ends
    raise AssertionError("SIGTERM did not interrupt")


@pytest.mark.parametrize("action,line", [(_ctrl_c, "interrupted"), (_sigterm, "terminated (SIGTERM)")])
def test_interrupt_while_logging_ends_the_run_killed(stores, jobs_csv, tmp_path, monkeypatch, capsys, action, line):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    _interrupting(monkeypatch, action)
    assert _run(jobs_csv, results / "second") == 130
    assert capsys.readouterr().err == f"{line}\n"
    assert _statuses(db) == {"FINISHED": 1, "KILLED": 1}
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored for the caller
    monkeypatch.undo()
    assert _run(jobs_csv, results / "third") == 0  # the store takes the next run
    assert _statuses(db) == {"FINISHED": 2, "KILLED": 1}


def test_compare_shows_each_runs_status_and_counts_abandoned_ones(stores, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    results = tmp_path / "results"
    db = _copy_store(stores, "used", results)
    import mlflow

    tracking.use_store(mlflow, f"sqlite:///{db}")
    client = mlflow.MlflowClient(f"sqlite:///{db}")
    experiment = client.get_experiment_by_name("atlas-scheduling-total_completion").experiment_id
    client.create_run(experiment, run_name="killed-by-sigkill")  # what a SIGKILL while logging leaves
    csv = tmp_path / "compare.csv"
    assert main(["compare", "--results", str(results), "--csv", str(csv)]) == 0
    table = pd.read_csv(csv)
    assert table[["name", "status"]].values.tolist() == [["first", "FINISHED"], ["killed-by-sigkill", "RUNNING"]]
    out = capsys.readouterr().out
    assert "status" in out.splitlines()[0] and "note: 1 run(s) still RUNNING" in out


def test_tracking_uri_store_keeps_artifacts_beside_it_not_in_the_working_folder(stores, tmp_path, jobs_csv,
                                                                                monkeypatch, quick_build):
    store = tmp_path / "elsewhere" / "store.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{store}")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    assert _run(jobs_csv, tmp_path / "results" / "run") == 0
    assert not any(cwd.iterdir())  # no ./mlruns
    assert not (tmp_path / "results" / "mlflow.db").exists()
    assert list((tmp_path / "elsewhere" / "mlartifacts").glob("*/artifacts/results.json"))


def test_artifact_location_is_never_the_working_folder(tmp_path):
    assert tracking.artifact_location_for(f"sqlite:///{tmp_path}/a.db") == (tmp_path / "mlartifacts").as_uri()
    assert tracking.artifact_location_for("http://127.0.0.1:5000") is None  # the server decides
    assert tracking.artifact_location_for(str(tmp_path / "mlruns")) is None  # a file store keeps its own
    with pytest.raises(InputError, match="mlflow server"):
        tracking.artifact_location_for("postgresql://u@127.0.0.1/db")


@pytest.fixture
def sigint(request):
    """SIGINT set as the test says for its duration (a terminal's default_int_handler, or ignored as a
    background job has it), whatever this pytest process inherited; restored afterwards."""
    previous = signal.signal(signal.SIGINT, request.param)
    yield request.param
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("sigint", [signal.default_int_handler], indirect=True)
def test_deferred_signals_hold_a_ctrl_c_until_the_block_is_done(sigint):
    import os

    from benchmark.interrupts import deferred_signals

    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_signals():
            os.kill(os.getpid(), signal.SIGINT)
            done.append("after the signal")
    assert done == ["after the signal"]
    with deferred_signals(reraise=False):
        os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("sigint", [signal.default_int_handler, signal.SIG_IGN], indirect=True)
def test_sigterm_interrupts_whether_ctrl_c_is_handled_or_ignored(sigint):
    """A background job (SIGINT ignored) must still turn `kill` into a clean stop; a sweep worker
    (its parent stops it) is the one process that keeps SIGTERM's default action."""
    import os

    from benchmark import interrupts

    with pytest.raises(KeyboardInterrupt, match="SIGTERM"):
        with interrupts.terminate_as_interrupt():
            assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # else the kill ends pytest
            os.kill(os.getpid(), signal.SIGTERM)
            for _ in range(1000):  # the handler runs between bytecodes, well before this ends
                time.sleep(0.005)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL and signal.getsignal(signal.SIGINT) is sigint


def test_a_sweep_worker_leaves_sigterm_to_its_default(monkeypatch):
    from benchmark import interrupts

    previous = signal.getsignal(signal.SIGINT)
    monkeypatch.setattr(interrupts, "_parent_handles_signals", False)
    try:
        interrupts.leave_signals_to_parent()
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        with interrupts.terminate_as_interrupt():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGINT, previous)
