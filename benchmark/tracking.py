"""MLflow tracking (docs/results-and-tracking.md): a parent run per task invocation, a child per result row.

`benchmark run` logs its finished output folder as one parent run in experiment `atlas-<task>`
(`atlas-scheduling-<objective>`): params = every option plus dataset fingerprint, package version
and git commit; tags `task`, `objective` (scheduling only), `output`, `atlas.level=run`; the
results rows as a table (`mlflow.log_table`, `results_table.json`); the input dataset or trace as
a run input whose digest is its content fingerprint (atlas_data.build.content_fingerprint); the
small files of the folder as artifacts (results, figures; the per-job parquet tables stay in the
folder named by the `output` tag, so nothing is stored twice). Each results row is a nested child
run (`atlas.level=child`) named after its policy or method, with the row's numeric fields as
metrics under their own names (`ratio`, `rmsle`, `sharing_loss_jobs`, …: CHILD_METRICS) and
policy/method/predictor/machines/objective/scenario as params and tags. A sweep is one parent
(`atlas.level=sweep`, experiment `atlas-sweep-<task>`) with one nested run per cell, each with
its own children.

Store: $MLFLOW_TRACKING_URI if set, else the project's store, SQLite at
`<project>/results/mlflow.db`, where the project folder is the git top-level of the working folder
(the working folder itself outside git): every run of a project lands in one store wherever
`--output` put its folder, and `benchmark compare` run anywhere in the project finds it. Artifacts
of a local SQLite store go to `mlartifacts` beside the database file.

Before any work (check_store, no lock, nothing written): an unknown URI scheme, a missing database
driver, a remote database (it names no artifact location), a server or database that does not
answer within seconds, a local store that cannot be written, and a file that is not an MLflow
store (not_mlflow: the rule of what is one) are exit 2 with one line; such a file is never touched.
A local store (SQLite file or file store) is written only under an exclusive lock on `<store>.lock`
(fcntl.flock), held from the store check to the end of the logging; its holder writes its pid and
command into it, and a command that waits for it says so on stderr and gives up after
$ATLAS_STORE_LOCK_TIMEOUT seconds (60) with exit 2; a command that created the lock file and then
refuses the store (exit 2, e.g. a schema version MLflow does not open) removes it again (a waiter
that finds its file removed locks the new one). A new SQLite store is built and migrated in a
temporary file and renamed into place, so an interrupt or four runs starting at once never leave it
half-migrated; a store that an older interruption left half-migrated is rebuilt (no runs in it) or
repaired on a copy, keeping the old file as `<db>.damaged-<time>`, or refused with exit 2 and the
command that fixes it. A store's schema version is MLflow's business: it is opened through
MlflowClient only, and MLflow's own refusal of a schema it does not write becomes exit 2 with the
fix (`mlflow db upgrade URI`); schema upgrades during a repair go through that same public command.
Nothing here reads MLflow's own files or imports a private MLflow name
(tests/benchmark/test_tracking_public_api.py). A full disk or read-only store while logging is exit 2
with one line (the run's folder is complete; its MLflow run, if made, ends FAILED). Readers
(`compare`) take no lock and change nothing (connect_readonly, damage).
An interrupt (SIGINT, or SIGTERM through benchmark.interrupts) while a run is being logged ends
that run and its children KILLED before the command exits 130.
May import mlflow (public API only), pandas, benchmark.interrupts, atlas_data and the standard library;
mlflow is imported lazily (it is slow to import), and so are schedulers.policy and predictors.methods
(to tag the rows that read true sizes).
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import math
import os
import sqlite3
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from atlas_data.errors import InputError
from atlas_data.io import lock_within, package_version

# the columns that say which result a row is: params and tags of its child run, never metrics
KEY_COLUMNS = ("policy", "method", "predictor", "p_hat_source", "machines")
# the metric names a child run may carry, per task: a row's finite numeric fields (docs/results-and-tracking.md
# lists the same names, checked by tests/benchmark/test_tracking.py); a prediction row may add `stage2_*`
CHILD_METRICS = {
    "scheduling": ("value", "reference", "ratio", "flow_ratio", "median_ratio", "p99_ratio", "edf_p_stretch",
                   "opt", "opt_ratio"),
    "fairness": ("value", "sharing_loss_jobs", "sharing_loss_jobs_floor", "tenant_loss_intervals",
                 "tenant_loss_intervals_floor", "avg_jct", "avg_slowdown", "p99_slowdown",
                 "makespan", "preemptions", "overhead_pct", "utilisation", "completed", "dropped_choices",
                 "migrations", "work_conservation_gaps", "tenant_window_s", "rounds", "events", "sim_seconds"),
    "prediction": ("rmsle", "cov25", "cov50", "cov25_recurrent", "cov50_recurrent", "spearman", "under_log",
                   "interval_coverage", "interval_width", "fit_seconds", "predict_seconds"),
}
CHILD_METRIC_PREFIXES = {"prediction": ("stage2_",)}
LEVEL_TAG = "atlas.level"  # sweep | run | child: what a run of the store stands for
CLAIRVOYANT_TAG = "atlas.clairvoyant"  # "true" on a child whose row read true sizes (a reference, not a competitor)
TABLE_FILE = "results_table.json"
DIGEST_CHARS = 32  # MLflow keeps at most 36 characters of a dataset digest: the fingerprint's first 32


def project_root() -> Path:
    """The project folder: the git top-level of the working folder, else the working folder."""
    cwd = Path.cwd()
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd, capture_output=True, text=True,
                             timeout=5)
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    return cwd


def tracking_uri(*, create: bool = False) -> str:
    """$MLFLOW_TRACKING_URI, else the project's store `<project>/results/mlflow.db` (the folder made if create)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return tracking_uri_for(project_root() / "results", create=create)


def tracking_uri_for(results_dir: Path, *, create: bool = True) -> str:
    """$MLFLOW_TRACKING_URI, else the SQLite store `<results_dir>/mlflow.db` (the folder made if create)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    results_dir = Path(results_dir).resolve()
    if create:
        results_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{results_dir / 'mlflow.db'}"


def experiment_name(task: str, objective: str | None) -> str:
    return f"atlas-{task}" + (f"-{objective}" if objective else "")


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


# ----- what a run logs ------------------------------------------------------------------------
def child_name(row: dict) -> str:
    """The display name of a row's child run: `spjf`, `spjf noise:0.5`, `lpt m5`, `lgbm-meta`."""
    name = str(row.get("policy") or row.get("method") or "row")
    if row.get("predictor") and row.get("predictor") != name:  # a prediction row names its method twice
        name += f" {row['predictor']}"
    if row.get("machines") is not None:
        name += f" m{row['machines']}"
    return name


def child_metrics(task: str, row: dict) -> dict[str, float]:
    """A row's metrics under their own names: its finite numeric fields among CHILD_METRICS of the task."""
    names = CHILD_METRICS.get(task, ())
    prefixes = CHILD_METRIC_PREFIXES.get(task, ())
    metrics = {}
    for key, value in row.items():
        if key in KEY_COLUMNS or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if (key in names or key.startswith(prefixes)) and math.isfinite(value):
            metrics[key] = float(value)
    return metrics


def child_params(doc: dict, options: dict[str, Any], row: dict) -> dict[str, str]:
    """What says which result a child is: policy or method, predictor, machines, objective, scenario."""
    params = {key: str(row[key]) for key in ("policy", "method", "predictor", "machines") if row.get(key) is not None}
    if row.get("method") is not None and row.get("predictor") == row.get("method"):
        params.pop("predictor")  # a prediction row repeats its method as predictor
    if doc.get("objective"):
        params["objective"] = str(doc["objective"])
    if options.get("scenario"):
        params["scenario"] = str(options["scenario"])
    params["task"] = str(doc["task"])
    return params


def reads_true_sizes(doc: dict, row: dict) -> bool:
    """A row that read true sizes: a clairvoyant policy (srpt, sjf, edf, lpt, srtf-oracle, …), p̂ of a
    reference method (`oracle`, p̂ = p) or a noise model's p̂ (`noise:σ`, p̂ = p·exp(σZ): made from the true
    sizes, `noise:0` is p itself). Such a row is a reference, so `compare` ranks the others first."""
    from predictors.references import REFERENCE_METHODS  # not predictors.methods: it imports scikit-learn

    if any(row.get(key) in REFERENCE_METHODS for key in ("method", "predictor", "p_hat_source")):
        return True
    if str(row.get("predictor") or "").startswith("noise:"):
        return True
    if not row.get("policy"):
        return False
    from schedulers.policy import get_policy, task_kind

    try:
        return bool(get_policy(str(row["policy"]), task_kind(doc.get("task"), doc.get("objective"))).clairvoyant)
    except KeyError:  # a plugin's policy this process has not loaded: not known to read true sizes
        return False


def params_of(options: dict[str, Any], doc: dict) -> dict[str, str]:
    params = {k: ("" if v is None else str(v))[:500] for k, v in options.items() if not callable(v) and not k.startswith("_")}
    dataset = doc.get("dataset") or {}
    params["dataset_fingerprint"] = str(dataset.get("fingerprint") or "")
    params["dataset_source"] = str(dataset.get("source") or "")
    params["n_jobs"] = str(doc.get("n_jobs"))
    params["package_version"] = package_version()
    params["git_commit"] = git_commit() or ""
    return params


def run_tags(doc: dict, out_dir: Path) -> dict[str, str]:
    """The parent run's tags; `objective` only when the task has one (never the text 'None')."""
    tags = {"task": str(doc["task"]), "output": str(Path(out_dir).resolve()), LEVEL_TAG: "run"}
    if doc.get("objective"):
        tags["objective"] = str(doc["objective"])
    return tags


def artifact_files(out_dir: Path) -> list[Path]:
    """The files logged as artifacts: all but the per-job parquet tables (they stay in the output folder,
    named by the `output` tag; copying them doubled the size of a store) and the folder's marker."""
    return sorted(p for p in Path(out_dir).rglob("*")
                  if p.is_file() and p.suffix != ".parquet" and not p.name.startswith("."))


def input_dataset(mlflow, doc: dict):
    """The run's input as an MLflow dataset (MetaDataset: name, source, digest = content fingerprint) and
    its input tags; None when the input has no fingerprint."""
    dataset = doc.get("dataset") or {}
    fingerprint = dataset.get("fingerprint")
    if not fingerprint:
        return None, {}
    from mlflow.data.code_dataset_source import CodeDatasetSource
    from mlflow.data.meta_dataset import MetaDataset

    path = dataset.get("path")
    source = None
    if path:
        import warnings

        with contextlib.suppress(Exception), warnings.catch_warnings():
            from mlflow.data.dataset_source_registry import resolve_dataset_source

            # MLflow registers the local-file source twice and warns that a path matches both
            warnings.simplefilter("ignore", UserWarning)
            source = resolve_dataset_source(str(Path(path).resolve()))
    if source is None:
        source = CodeDatasetSource(tags={"source": str(dataset.get("source") or dataset.get("trace") or "")})
    name = str(dataset.get("name") or dataset.get("trace") or (Path(path).name if path else dataset.get("source")))
    tags = {"fingerprint": str(fingerprint), "source": str(dataset.get("source") or "")}
    return MetaDataset(source=source, name=name, digest=str(fingerprint)[:DIGEST_CHARS]), tags


def log_run(out_dir: Path, options: dict[str, Any], *, run_name: str | None = None) -> str:
    """Log the finished output folder `out_dir` as a parent run with a child per row; return the parent's id."""
    out_dir = Path(out_dir)
    doc = json.loads((out_dir / "results.json").read_text())
    mlflow = import_mlflow()
    uri = tracking_uri(create=True)
    name = experiment_name(doc["task"], doc.get("objective"))
    if sqlite_path(uri) is None and file_store_path(uri) is None:
        _check_reachable(uri)  # it answered before the work; seconds now instead of MLflow's minutes of retries
    with store_lock(uri, after=f"; the results in {out_dir} are complete, not logged to MLflow"), \
            store_errors(uri, logging=out_dir):
        ensure_store(uri)
        use_store(mlflow, uri)
        experiment_id = _experiment_id(mlflow.MlflowClient(uri), name, uri)
        return _log(mlflow, uri, experiment_id, run_name or out_dir.name, out_dir, options, doc)


def log_sweep(out_dir: Path, task: str, params: dict[str, Any], cells: list[tuple[str, Path, dict]]) -> list[str]:
    """Log a finished sweep folder as one parent run with a nested run per finished cell (each with its
    children); return one problem line per cell that could not be logged (the others are logged)."""
    import pandas as pd

    from benchmark.interrupts import deferred_signals

    out_dir = Path(out_dir)
    mlflow = import_mlflow()
    uri = tracking_uri(create=True)
    problems: list[str] = []
    if sqlite_path(uri) is None and file_store_path(uri) is None:
        _check_reachable(uri)  # as in log_run
    with store_lock(uri, after=f"; the sweep in {out_dir} is complete, not logged to MLflow"), \
            store_errors(uri, logging=out_dir):
        ensure_store(uri)
        use_store(mlflow, uri)
        client = mlflow.MlflowClient(uri)
        experiment_id = _experiment_id(client, f"atlas-sweep-{task}", uri)
        sweep_id = None
        try:
            tags = {"task": task, "output": str(out_dir.resolve()), LEVEL_TAG: "sweep"}
            with deferred_signals():
                sweep_id = client.create_run(experiment_id, run_name=out_dir.name, tags=tags).info.run_id
            from mlflow.entities import Param

            client.log_batch(sweep_id, params=[Param(k, str(v)[:500]) for k, v in params.items()])
            table = out_dir / "sweep.parquet"
            if table.exists():
                frame = pd.read_parquet(table)
                frame = frame.apply(lambda col: col.map(lambda v: v.tolist() if hasattr(v, "tolist") else v))
                client.log_table(sweep_id, frame, TABLE_FILE)
            for path in sorted(out_dir.iterdir()):
                if path.is_file() and path.suffix != ".parquet" and not path.name.startswith("."):
                    client.log_artifact(sweep_id, str(path))
            for cell_id, cell_dir, options in cells:
                try:
                    doc = json.loads((Path(cell_dir) / "results.json").read_text())
                    _log(mlflow, uri, experiment_id, cell_id, Path(cell_dir), options, doc, parent_id=sweep_id,
                         extra_tags={"sweep_cell": cell_id})
                except Exception as exc:  # noqa: BLE001 - the cell's results stand without its MLflow run
                    problems.append(f"cell {cell_id}: MLflow logging failed: {type(exc).__name__}: {exc}")
            with deferred_signals():
                client.set_terminated(sweep_id, "FINISHED")
        except BaseException as exc:
            _end_after(exc, mlflow, uri, [] if sweep_id is None else [sweep_id])
            raise
    return problems


def _log(mlflow, uri: str, experiment_id: str, run_name: str, out_dir: Path, options: dict, doc: dict,
         *, parent_id: str | None = None, extra_tags: dict | None = None) -> str:
    """Create the run and its children, log everything, end them FINISHED; any interruption ends the
    ones still running KILLED (FAILED on an error)."""
    import pandas as pd

    from benchmark.interrupts import deferred_signals

    started: list[str] = []  # the runs this call created that are still RUNNING, parent first
    client = mlflow.MlflowClient(uri)
    try:
        tags = {**run_tags(doc, out_dir), **(extra_tags or {})}
        if parent_id:
            tags["mlflow.parentRunId"] = parent_id
        with deferred_signals():  # the run row and the active-run record exist together or not at all
            run_id = mlflow.start_run(experiment_id=experiment_id, run_name=run_name, tags=tags).info.run_id
            started.append(run_id)
        mlflow.log_params(params_of(options, doc))
        dataset, input_tags = input_dataset(mlflow, doc)
        if dataset is not None:
            mlflow.log_input(dataset, context=str(doc["task"]), tags=input_tags)
        rows = doc.get("rows", [])
        if rows:
            mlflow.log_table(pd.DataFrame(rows), artifact_file=TABLE_FILE)
        for row in rows:
            _log_child(mlflow, client, experiment_id, run_id, doc, options, row, started)
        for path in artifact_files(out_dir):
            folder = path.parent.relative_to(out_dir).as_posix()
            mlflow.log_artifact(str(path), artifact_path=None if folder == "." else folder)
        with deferred_signals():
            mlflow.end_run()
        return run_id
    except BaseException as exc:
        _end_after(exc, mlflow, uri, reversed(started))
        raise


def _end_after(exc: BaseException, mlflow, uri: str, run_ids) -> None:
    """End `run_ids` (in that order) that are still RUNNING: KILLED after an interrupt, FAILED after an error."""
    from benchmark.interrupts import deferred_signals

    status = "KILLED" if isinstance(exc, (KeyboardInterrupt, SystemExit)) else "FAILED"
    with deferred_signals(reraise=False):  # already on the way out: a second Ctrl-C waits
        # The frames the interrupt cut short may hold MLflow's SQLite cursor or session mid-statement,
        # and with it a lock on the store that no UPDATE below could get past: let them go first.
        traceback.clear_frames(exc.__traceback__)
        gc.collect()
        for run_id in run_ids:
            end_unfinished_run(mlflow, uri, run_id, status)


def _log_child(mlflow, client, experiment_id: str, parent_id: str, doc: dict, options: dict, row: dict,
               started: list[str]) -> None:
    """One row as a nested child run: three round trips (create, one batch, end)."""
    from mlflow.entities import Metric, Param, RunTag

    from benchmark.interrupts import deferred_signals

    params = child_params(doc, options, row)
    tags = {**params, LEVEL_TAG: "child", "mlflow.parentRunId": parent_id}
    if reads_true_sizes(doc, row):
        tags[CLAIRVOYANT_TAG] = "true"
    with deferred_signals():
        child = client.create_run(experiment_id, run_name=child_name(row), tags=tags).info.run_id
        started.append(child)
    now = int(time.time() * 1000)
    client.log_batch(child, metrics=[Metric(k, v, now, 0) for k, v in child_metrics(doc["task"], row).items()],
                     params=[Param(k, v) for k, v in params.items()], tags=[])
    with deferred_signals():
        client.set_terminated(child, "FINISHED")
        started.remove(child)  # only runs still RUNNING are ended KILLED on an interrupt


def end_unfinished_run(mlflow, uri: str, run_id: str, status: str) -> None:
    """End `run_id` with `status` if it is still RUNNING, by every means at hand (never raises)."""
    with contextlib.suppress(Exception):
        active = mlflow.active_run()
        if active is not None and active.info.run_id == run_id:
            mlflow.end_run(status=status)
    with contextlib.suppress(Exception):
        client = mlflow.MlflowClient(uri)
        if client.get_run(run_id).info.status == "RUNNING":
            client.set_terminated(run_id, status)
    db = sqlite_path(uri)
    if db is not None and db.exists():  # the session may be unusable after an interrupt: plain SQL
        with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(db, timeout=30)) as con:
            con.execute("UPDATE runs SET status = ?, end_time = ? WHERE run_uuid = ? AND status = 'RUNNING'",
                        (status, int(time.time() * 1000), run_id))
            con.commit()


def _experiment_id(client, name: str, uri: str) -> str:
    """The experiment's id, created first when missing (the caller holds the store lock)."""
    experiment = client.get_experiment_by_name(name)
    if experiment is not None:
        if experiment.lifecycle_stage != "active":
            raise InputError(f"experiment '{name}' was deleted in this store; restore it "
                             f"(mlflow experiments restore --experiment-id {experiment.experiment_id}) "
                             "or use another store", where=uri)
        return experiment.experiment_id
    return client.create_experiment(name, artifact_location=artifact_location_for(uri))


@contextlib.contextmanager
def unsynced_commits(uri: str):
    """Within: MLflow's commits to the local SQLite store `uri` do not wait for the disk (SQLite
    `synchronous = OFF` on every connection MLflow opens or takes from its pool, set back when the
    connection returns to the pool); on the way out the file is synced once. For a batch of runs logged
    in a row (`benchmark demo`: about 900 runs and children, 6,000 commits, 16,000 fdatasync calls that
    waited 9.7 s on the 2-core test machine). A crash of the process loses nothing SQLite committed; a
    crash of the OS or a power cut while inside can damage the store. Other stores: nothing changes."""
    db = sqlite_path(uri)
    if db is None:
        yield
        return
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    def unsynced(dbapi_connection, record, *_):
        if isinstance(dbapi_connection, sqlite3.Connection) and "synchronous" not in record.info:
            record.info["synchronous"] = int(dbapi_connection.execute("PRAGMA synchronous").fetchone()[0])
            dbapi_connection.execute("PRAGMA synchronous = OFF")

    def resynced(dbapi_connection, record):
        level = record.info.pop("synchronous", None)
        if level is not None and dbapi_connection is not None:
            dbapi_connection.execute(f"PRAGMA synchronous = {level}")

    events = (("connect", unsynced), ("checkout", unsynced), ("checkin", resynced))
    for name, listener in events:
        event.listen(Engine, name, listener)
    try:
        yield
    finally:
        for name, listener in events:
            event.remove(Engine, name, listener)
        if db.exists():
            fd = os.open(db, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


# ----- the store: where it is, its lock, its state ---------------------------------------------
def sqlite_path(uri: str) -> Path | None:
    """The database file of a local SQLite store URI (`sqlite:///rel.db`, `sqlite:////abs.db`), else None."""
    if not uri.startswith("sqlite:///"):
        return None
    rest = unquote(uri[len("sqlite:///"):].split("?", 1)[0])
    if not rest or rest == ":memory:":
        return None
    return Path(rest).absolute()


def file_store_path(uri: str) -> Path | None:
    """The folder of a local file store (`file:///dir` or a plain path), else None."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path)).absolute()
    if parsed.scheme == "" or (len(parsed.scheme) == 1 and os.name == "nt"):  # a plain path
        return Path(uri).absolute()
    return None


def lock_path(uri: str) -> Path | None:
    """`<store>.lock` beside a local store; None for a server or a remote database (it serialises itself)."""
    local = sqlite_path(uri) or file_store_path(uri)
    return None if local is None else local.with_name(local.name + ".lock")


LOCK_TIMEOUT_VARIABLE = "ATLAS_STORE_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT_S = 60.0  # how long a command waits for another one's store lock (docs/results-and-tracking.md)


def lock_timeout() -> float:
    """Seconds to wait for the store lock: $ATLAS_STORE_LOCK_TIMEOUT, else DEFAULT_LOCK_TIMEOUT_S."""
    text = os.environ.get(LOCK_TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise InputError(f"must be a number of seconds >= 0, not '{text}'", where=LOCK_TIMEOUT_VARIABLE)
    return value


def lock_holder(path: Path) -> str:
    """Who holds the lock at `path`, as its holder wrote it (`pid 123: benchmark run …`); '' if unknown."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        lines = path.read_text(encoding="utf-8").strip().splitlines()
        return lines[0][:300] if lines else ""
    return ""


@contextlib.contextmanager
def store_lock(uri: str, *, after: str = ""):
    """Hold the store's exclusive lock; no-op for remote stores.

    The holder writes its pid and command line into the lock file, so a command that finds the
    lock taken says on stderr (one line) what it waits for and whom; it gives up after
    lock_timeout() seconds with exit 2 (`after` is added to that line: what became of the work).
    """
    path = lock_path(uri)
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, as before
        fcntl = None
    if path is None or fcntl is None:
        yield
        return
    timeout = lock_timeout()
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        created = not path.exists()
        handle = open(path, "a+", encoding="utf-8")
        holder = ""  # read when the lock is found taken: the waiting line and the giving-up line name it

        def waiting() -> None:
            nonlocal holder
            holder = lock_holder(path)
            held = f" (held by {holder})" if holder else ""
            _note(f"waiting for the MLflow store lock {path}{held}, at most {timeout:g} s ({LOCK_TIMEOUT_VARIABLE})")
            sys.stderr.flush()

        def gave_up() -> InputError:
            held = f" (held by {holder})" if holder else ""
            return InputError(f"gave up after {timeout:g} s waiting for the MLflow store lock{held}: let that "
                              f"command finish, or set {LOCK_TIMEOUT_VARIABLE} to wait longer{after}", path=str(path))

        try:
            lock_within(handle, timeout, waiting=waiting, gave_up=gave_up)
            if _names_this_file(path, handle):
                break
        except BaseException:
            handle.close()
            raise
        handle.close()  # its holder removed it (a store it refused): lock the file that stands there now
    with handle:
        try:
            with contextlib.suppress(OSError):  # who holds it, for whoever waits (the lock is what counts)
                handle.seek(0)
                handle.truncate()
                command = " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv else ""
                handle.write(f"pid {os.getpid()}: {command[:200]}\n")
                handle.flush()
            yield
        except InputError:
            if created:  # a store refused (e.g. another schema version) keeps no lock file of ours beside it
                with contextlib.suppress(OSError):
                    path.unlink()
            raise
        finally:
            with contextlib.suppress(OSError):
                handle.truncate(0)
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _names_this_file(path: Path, handle) -> bool:
    """True while `path` is the file open as `handle` (not removed or replaced since it was opened)."""
    try:
        here, there = os.fstat(handle.fileno()), os.stat(path)
    except OSError:
        return False
    return (here.st_ino, here.st_dev) == (there.st_ino, there.st_dev)


def store_is_idle(uri: str) -> bool:
    """True when no process holds the store's lock (so no run is being logged to it right now).

    Asked with a shared lock on a read-only handle: a reader never creates or writes the lock file."""
    path = lock_path(uri)
    if path is None or not path.exists():
        return path is not None
    try:
        import fcntl
    except ImportError:
        return False
    try:
        handle = open(path, encoding="utf-8")
    except OSError:
        return False
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        return True


def artifact_location_for(uri: str) -> str | None:
    """Where a new experiment of this store keeps its artifacts; never the working folder.

    MLflow's own default for a database store is ./mlruns of whatever folder the command runs in.
    A local SQLite store gets `mlartifacts` beside its file; a file store keeps artifacts inside
    itself and a tracking server decides for itself (None = theirs). A remote database has no place
    of its own, so it needs a tracking server (exit 2).
    """
    db = sqlite_path(uri)
    if db is not None:
        return (db.parent / "mlartifacts").as_uri()
    scheme = urlparse(uri).scheme.split("+", 1)[0]
    if scheme in ("postgresql", "mysql", "mssql", "sqlite"):
        raise _remote_database_refused(uri)
    return None


def _remote_database_refused(uri: str) -> InputError:
    return InputError("a database store names no artifact location, and MLflow would write artifacts to ./mlruns "
                      "of the working folder: run `mlflow server --backend-store-uri URI --artifacts-destination "
                      "DIR` and set MLFLOW_TRACKING_URI to that server", where=f"MLFLOW_TRACKING_URI={shown_uri(uri)}")


def shown_uri(uri: str) -> str:
    """`uri` as it may be printed: a password in it replaced by ***."""
    parsed = urlparse(uri)
    if parsed.password is None:
        return uri
    netloc = parsed.netloc.replace(f":{parsed.password}@", ":***@", 1)
    return parsed._replace(netloc=netloc).geturl()


@dataclass(frozen=True)
class StoreState:
    """What a local SQLite store holds, read with plain sqlite3 (no MLflow, no migration)."""

    tables: frozenset[str] = frozenset()
    versions: tuple[str, ...] = ()   # rows of alembic_version: exactly one in a sound store
    n_runs: int = 0
    objects: int = 0  # entries of its schema (tables, indexes, views, triggers): 0 for an empty or 0-byte file
    columns: tuple[tuple[str, frozenset[str]], ...] = ()  # of the tables an MLflow store is recognised by

    @property
    def leftovers(self) -> list[str]:
        """Tables an interrupted batch migration left behind (`_alembic_tmp_<table>`)."""
        return sorted(t for t in self.tables if t.startswith("_alembic_tmp_"))


# The schema versions of MLflow's SQLite store this project was tested on (MLflow 3.17's): benchmark
# compare reads these with plain sqlite3 (its fast path, checked against MlflowClient.search_runs), and
# preflight opens a store of any other version with MLflow before the work. Not a list of what MLflow
# accepts (MLflow says that itself): tests/benchmark/test_tracking_public_api.py fails when the installed
# MLflow writes a version not listed here, until the fast path is checked on it and it is added.
CHECKED_SCHEMAS = frozenset({"dc11669786a5"})
_CORE_TABLES = ("alembic_version", "experiments", "runs", "metrics", "params", "tags")
# the columns MLflow's experiments and runs tables have had since its first schema: how a store is recognised
MLFLOW_COLUMNS = {"experiments": frozenset({"experiment_id", "name", "artifact_location", "lifecycle_stage"}),
                  "runs": frozenset({"run_uuid", "experiment_id", "status", "start_time", "lifecycle_stage"})}
_RECOGNISED_BY = tuple(name for table in MLFLOW_COLUMNS for name in (table, f"_alembic_tmp_{table}"))


def connect_readonly(db: Path) -> sqlite3.Connection:
    """`db` opened read-only (SQLite's mode=ro): it never creates, changes or locks a file beside it."""
    return sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=30)


def read_state(db: Path) -> StoreState:
    """The tables, schema versions and run count of `db`; an empty state for a missing or 0-byte file.
    Read-only: the file is never changed, whatever it holds."""
    if not db.exists() or db.stat().st_size == 0:
        return StoreState()
    try:
        with contextlib.closing(connect_readonly(db)) as con:
            schema = con.execute("SELECT type, name FROM sqlite_master").fetchall()
            tables = frozenset(name for kind, name in schema if kind == "table")
            columns = tuple((t, frozenset(r[1] for r in con.execute(f'PRAGMA table_info("{t}")')))
                            for t in _RECOGNISED_BY if t in tables)
            versions = ()
            if "alembic_version" in tables:
                with contextlib.suppress(sqlite3.OperationalError):  # a table of that name without the column
                    versions = tuple(str(r[0]) for r in con.execute("SELECT version_num FROM alembic_version"))
            n_runs = con.execute("SELECT COUNT(*) FROM runs").fetchone()[0] if "runs" in tables else 0
    except sqlite3.DatabaseError as exc:
        raise InputError(f"not a usable MLflow SQLite store ({exc}); the file is left as it is",
                         path=str(db)) from None
    except OSError as exc:
        raise InputError(f"cannot read the MLflow store: {exc.strerror or exc}", path=str(db)) from None
    return StoreState(tables=tables, versions=versions, n_runs=int(n_runs), objects=len(schema), columns=columns)


def not_mlflow(state: StoreState) -> str | None:
    """Why the file is not an MLflow store (None when it is one, or holds nothing at all).

    The rule (docs/results-and-tracking.md): an SQLite file is an MLflow store when it has MLflow's
    experiments and runs tables, each with MLflow's columns (MLFLOW_COLUMNS), either of them possibly
    as the `_alembic_tmp_<table>` copy an interrupted migration leaves. Only such a store is ever
    migrated, repaired or rebuilt; a file with no schema at all is a new, empty store. (No list of
    MLflow's schema versions is consulted: that would mean reading MLflow's own migration files.)
    """
    if state.objects == 0:
        return None
    columns = dict(state.columns)

    def has(table: str) -> bool:
        return any(MLFLOW_COLUMNS[table] <= columns.get(name, frozenset())
                   for name in (table, f"_alembic_tmp_{table}"))

    if has("experiments") and has("runs"):
        return None
    tables = sorted(state.tables)
    named = ", ".join(tables[:6]) + (", …" if len(tables) > 6 else "")
    held = f"holds the table{'s' if len(tables) > 1 else ''} {named}" if tables else "holds no tables"
    return f"it {held}, but not MLflow's experiments and runs tables"


def refuse_foreign(db: Path, state: StoreState) -> None:
    """Exit 2 for a file that is not an MLflow store (not_mlflow), before anything touches it."""
    why = not_mlflow(state)
    if why is not None:
        raise InputError(f"not an MLflow store: {why}; the file is left as it is: point MLFLOW_TRACKING_URI "
                         "(or --results) at an MLflow store or at a new file", path=str(db))


def damage(state: StoreState) -> str | None:
    """What an interruption left half-done in the store, seen with plain sqlite3 (None if nothing): a
    leftover `_alembic_tmp_*` table, a missing core table, other than one schema version row. Whether
    its one schema version is the one this MLflow writes is for MLflow to say (schema_refusal)."""
    problems = []
    if state.leftovers:
        problems.append(f"leftover table {', '.join(state.leftovers)}")
    missing = [t for t in _CORE_TABLES if t not in state.tables]
    if missing:
        problems.append(f"missing table {', '.join(missing)}")
    if "alembic_version" in state.tables and len(state.versions) != 1:
        problems.append(f"{len(state.versions)} schema version rows instead of 1")
    return "; ".join(problems) or None


OUT_OF_DATE = "out-of-date database schema"  # MLflow's words when it refuses a store's schema version


def schema_refusal(uri: str) -> str | None:
    """Open the store with MlflowClient (MLflow checks its schema version) and return MLflow's refusal
    of its schema version, else None. Only for a store with its core tables: MLflow would create the
    missing ones (damage finds those first)."""
    mlflow = import_mlflow()
    try:
        mlflow.MlflowClient(uri).search_experiments(max_results=1)
    except Exception as exc:  # MlflowException; anything else is not about the schema version
        if OUT_OF_DATE in str(exc):
            return (str(exc).strip().splitlines() or [""])[0]
        raise
    return None


def ensure_store(uri: str, *, create: bool = True, thorough: bool = False) -> None:
    """Make a local SQLite store sound before anyone logs to it; call it holding `store_lock(uri)`.

    Missing (or a file with no schema at all): built and migrated in a temporary file, renamed
    into place (unless create=False). A file that is not an MLflow store (not_mlflow) is refused
    (exit 2) and never touched. Half-migrated by an older interruption (leftover `_alembic_tmp_*`
    tables, a missing or doubled schema version: damage): rebuilt when it holds no runs, else
    repaired on a copy, else refused (exit 2) with the command that fixes it; a rebuild or repair
    keeps the old file as `<db>.damaged-<time>`. A store with no runs whose schema version MLflow
    refuses (a migration that stopped part way) is rebuilt the same way; one with runs is refused
    (exit 2) with the command to run. A sound-looking store that holds runs is not opened here unless
    thorough: MLflow checks its schema version when the logging opens it (`store_errors`).
    Other stores: nothing.
    """
    db = sqlite_path(uri)
    if db is None:
        return
    _remove_temporaries(db)
    state = read_state(db)
    refuse_foreign(db, state)
    if state.objects == 0:  # no store, or a file with nothing in it
        if create:
            _build(db)
        return
    problem = damage(state)
    if problem is None:
        if state.n_runs and not thorough:
            return  # looks sound and holds runs: MLflow checks the schema version itself (see store_errors)
        refusal = schema_refusal(uri)
        if refusal is None:
            return
        if state.n_runs:
            _refuse_version(db, uri, state.versions[0])
    if not state.n_runs:
        backup = _backup(db)
        _build(db)  # no runs in it: a fresh store replaces it, the old file is kept
        why = f"which an interrupted run had left half-migrated ({problem})" if problem else \
            (f"whose schema version {state.versions[0]} MLflow does not open (a migration that stopped part "
             "way, or a newer MLflow's store)")
        _note(f"{db}: rebuilt the MLflow store, {why}; it held no runs; the old file is kept as {backup}")
        return
    backup = _repair(db, state)
    if backup is None:
        raise InputError(f"the MLflow store was left half-migrated by an interrupted run ({problem}) and holds "
                         f"{state.n_runs} runs, so it is not rebuilt: move it aside and start a new store with "
                         f"`mv {db} {db}.damaged` (the old file stays readable with sqlite3)", path=str(db))
    _note(f"{db}: repaired the MLflow store, which an interrupted run had left half-migrated ({problem}); "
          f"the damaged file is kept as {backup}")


def _has_core_tables(state: StoreState) -> bool:
    return all(t in state.tables for t in _CORE_TABLES)


def _refuse_version(db: Path, uri: str, version: str | None):
    """Exit 2 for a store whose schema version MLflow refuses. Whether an older or a newer MLflow wrote
    it only MLflow's migration files could tell, which this project does not read: the line gives both fixes."""
    from importlib.metadata import version as installed

    mlflow_version = installed("mlflow")  # not mlflow.__version__: no import just to say it
    found = f"schema version {version}" if version else "a schema version"
    raise InputError(f"the MLflow store has {found}, which MLflow {mlflow_version} does not open: if an older "
                     f"MLflow wrote it, back it up, then run `mlflow db upgrade {shown_uri(uri)}`; if a newer one "
                     "did, upgrade MLflow (pip install -U 'mlflow<4') or use another store", path=str(db))


def _backup(db: Path) -> Path:
    """A copy of `db` as `<db>.damaged-<time>` (a name not taken yet), made before the store is replaced."""
    import shutil

    stamp = time.strftime("%Y%m%d-%H%M%S")
    backup = db.with_name(f"{db.name}.damaged-{stamp}")
    n = 1
    while backup.exists():
        n += 1
        backup = db.with_name(f"{db.name}.damaged-{stamp}-{n}")
    shutil.copyfile(db, backup)
    return backup


@contextlib.contextmanager
def store_errors(uri: str, *, logging: Path | None = None):
    """MLflow's own refusals of a store the user pointed at become exit 2 with the fix; so does a store
    that cannot be written while `logging` the finished folder (a full disk, read-only media)."""
    try:
        yield
    except Exception as exc:
        db = sqlite_path(uri)
        found = _write_failure_found(exc)
        if found is not None:
            reason, said = found  # why, and the error in the chain that says so (its line that does, below)
            done = f"; the results in {logging} are complete, their MLflow run (if made) is marked FAILED" \
                if logging is not None else ""
            lines = str(said).strip().splitlines() or [type(said).__name__]
            first = next((line for line in lines if any(p in line for p in _WRITE_FAILURES)), lines[0])[:200]
            raise InputError(f"could not write the MLflow store: {reason} ({first}){done}",
                             path=str(db) if db else None, where=None if db else shown_uri(uri)) from None
        if file_store_path(uri) is not None and "MLFLOW_ALLOW_FILE_STORE" in str(exc):
            raise _file_store_refused(uri) from None
        if db is None or OUT_OF_DATE not in str(exc):
            raise
        state = read_state(db)
        _refuse_version(db, uri, state.versions[0] if len(state.versions) == 1 else None)


def _write_failure(exc: BaseException | None) -> str | None:
    """'the disk is full' or 'it is read-only' when `exc`, or an error it wraps, says so; else None."""
    found = _write_failure_found(exc)
    return found[0] if found else None


# what an error's text says when the store cannot be written
_FULL, _READ_ONLY = ("database or disk is full", "No space left on device"), ("readonly database", "Read-only file system")
_WRITE_FAILURES = _FULL + _READ_ONLY


def _write_failure_found(exc: BaseException | None) -> tuple[str, BaseException] | None:
    """(_write_failure's answer, the error in `exc`'s chain that gives it), or None."""
    import errno

    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text, code = str(exc), getattr(exc, "errno", None)
        if code in (errno.ENOSPC, errno.EDQUOT) or any(p in text for p in _FULL):
            return "the disk is full", exc
        if code == errno.EROFS or any(p in text for p in _READ_ONLY):
            return "it is read-only", exc
        exc = exc.__cause__ or exc.__context__
    return None


def _note(message: str) -> None:
    sys.stderr.write(f"note: {message}\n")


def _sidecars(path: Path) -> list[Path]:
    return [path] + [path.with_name(path.name + suffix) for suffix in ("-journal", "-wal", "-shm")]


def _remove_temporaries(db: Path) -> None:
    """Delete what a killed process left while building or repairing this store (we hold the lock)."""
    if not db.parent.is_dir():
        return
    for leftover in db.parent.glob(f"{db.name}.building-*"):
        leftover.unlink(missing_ok=True)
    for leftover in db.parent.glob(f"{db.name}.repairing-*"):
        leftover.unlink(missing_ok=True)


_TEMPORARIES: list[int] = []  # how many temporary stores this process has made (each gets a new name)


def _temporary(db: Path, kind: str) -> Path:
    """A new name `<db>.<kind>-<pid>-<n>` for a store built or repaired beside `db`. Never reused in a
    process: MLflow keeps an open engine per store URI, and after the rename an old name's engine
    points at the renamed file."""
    _TEMPORARIES.append(0)
    return db.with_name(f"{db.name}.{kind}-{os.getpid()}-{len(_TEMPORARIES)}")


def _build(db: Path) -> None:
    """A new store at `db`: created and migrated by MlflowClient in a temporary file, renamed over `db`."""
    db.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary(db, "building")
    try:
        for path in _sidecars(tmp):
            path.unlink(missing_ok=True)
        # MLflow creates every table and migrates them to its schema when it first opens an empty file
        import_mlflow().MlflowClient(f"sqlite:///{tmp}").search_experiments(max_results=1)
        for path in _sidecars(db)[1:]:
            path.unlink(missing_ok=True)
        os.replace(tmp, db)
    finally:
        for path in _sidecars(tmp):
            path.unlink(missing_ok=True)


def _upgrade(uri: str) -> bool:
    """`mlflow db upgrade URI`, MLflow's public command for migrating a store; True when it succeeded."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run([sys.executable, "-m", "mlflow", "db", "upgrade", uri], capture_output=True,
                              text=True, timeout=600)
        return done.returncode == 0
    return False


def _repair(db: Path, state: StoreState) -> Path | None:
    """Undo a half-done migration on a copy of `db` and finish it; swap the copy in. None if it cannot."""
    import shutil

    tmp = _temporary(db, "repairing")
    try:
        shutil.copyfile(db, tmp)
        with contextlib.closing(sqlite3.connect(tmp, timeout=30)) as con:
            for leftover in state.leftovers:
                table = leftover[len("_alembic_tmp_"):]
                if table in state.tables:  # interrupted before the swap: the original is intact
                    con.execute(f'DROP TABLE "{leftover}"')
                else:  # interrupted after dropping the original: the copy is the table
                    con.execute(f'ALTER TABLE "{leftover}" RENAME TO "{table}"')
            if len(set(state.versions)) != 1:
                return None  # no version, or several different ones: where the schema stands is unknown
            con.execute("DELETE FROM alembic_version")
            con.execute("INSERT INTO alembic_version (version_num) VALUES (?)", (state.versions[0],))
            con.commit()
        fixed = read_state(tmp)
        if fixed.leftovers or len(fixed.versions) != 1 or not _has_core_tables(fixed):
            return None  # MLflow would create the missing tables empty: not a repair
        uri = f"sqlite:///{tmp}"
        if schema_refusal(uri) is not None and (not _upgrade(uri) or schema_refusal(uri) is not None):
            return None  # stopped part way, and MLflow's own upgrade did not finish it
        backup = _backup(db)
        os.replace(tmp, db)
        return backup
    except Exception:  # noqa: BLE001 - any failure means: not repairable here
        return None
    finally:
        for path in _sidecars(tmp):
            path.unlink(missing_ok=True)


def use_store(mlflow, uri: str) -> None:
    """Point mlflow at `uri` without leaving it in os.environ.

    mlflow.set_tracking_uri also exports MLFLOW_TRACKING_URI, which would pin every later run in
    this process (tests, sweeps, the demo) to the first store and hide the user's own setting.
    """
    previous = os.environ.get("MLFLOW_TRACKING_URI")
    mlflow.set_tracking_uri(uri)
    if previous is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = previous


class _WriteFailureFilter(logging.Filter):
    """Drops MLflow's log of a database error that is a full disk or a read-only store (with its
    traceback): it raises the error too, and store_errors says it in one line. Other errors are heard."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return _write_failure(exc) is None and _write_failure(Exception(record.getMessage())) is None


def import_mlflow():
    """mlflow, imported with its INFO chatter (database migrations, new experiments) silenced."""
    import mlflow

    from benchmark.interrupts import quiet_logs_when_interrupted

    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    db_log = logging.getLogger("mlflow.store.db.utils")
    if not any(isinstance(f, _WriteFailureFilter) for f in db_log.filters):
        db_log.addFilter(_WriteFailureFilter())
    quiet_logs_when_interrupted("mlflow", "alembic", "sqlalchemy")  # a killed session's errors are not news
    return mlflow


def prepare(uri: str) -> None:
    """Check the store up front (check_store), then create, check or repair it now (under its lock),
    before work that will log to it."""
    check_store(uri, write=True)
    import_mlflow()
    with store_lock(uri):
        ensure_store(uri, thorough=True)


def _file_store_refused(uri: str) -> InputError:
    return InputError("this MLflow no longer writes file stores: point MLFLOW_TRACKING_URI at a database, "
                      "e.g. sqlite:///PATH/mlflow.db (or set MLFLOW_ALLOW_FILE_STORE=true)",
                      where=f"MLFLOW_TRACKING_URI={uri}")


DATABASE_SCHEMES = ("postgresql", "mysql", "mssql")
DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}
CONNECT_TIMEOUT_S = 5.0  # a tracking server or database that does not answer a connection in this long is unreachable


def check_store_kind(uri: str, *, write: bool = True) -> None:
    """The URI's kind, before any work and without MLflow: a scheme MLflow has no store for, an
    SQLite URI naming no file, a database whose driver is not installed, and (for a command that
    writes) a remote database, which names no artifact location, are exit 2; so is a local file
    store unless MLFLOW_ALLOW_FILE_STORE is true, as MLflow itself refuses it."""
    where = f"MLFLOW_TRACKING_URI={shown_uri(uri)}"
    scheme = urlparse(uri).scheme.lower()
    base = scheme.split("+", 1)[0]
    if base == "sqlite":
        if sqlite_path(uri) is None:
            raise InputError("an SQLite store URI must name a database file, e.g. sqlite:///PATH/mlflow.db "
                             "(an in-memory store would keep nothing)", where=where)
        return
    if file_store_path(uri) is not None:
        if os.environ.get("MLFLOW_ALLOW_FILE_STORE", "").strip().lower() not in ("true", "1"):
            raise _file_store_refused(uri)
        return
    if base in DATABASE_SCHEMES:
        if write:
            raise _remote_database_refused(uri)
        _check_driver(uri, where)
        return
    if base in ("http", "https", "databricks") or base in _plugin_schemes():
        return
    raise InputError(f"MLflow has no tracking store for the scheme '{scheme}:': use sqlite:///PATH/mlflow.db, "
                     "http(s)://HOST:PORT of a tracking server, or leave MLFLOW_TRACKING_URI unset for the "
                     "project's store", where=where)


def _plugin_schemes() -> set[str]:
    """The URI schemes of installed MLflow tracking-store plugins (entry points `mlflow.tracking_store`)."""
    from importlib.metadata import entry_points

    with contextlib.suppress(Exception):
        return {entry.name for entry in entry_points(group="mlflow.tracking_store")}
    return set()


def _check_driver(uri: str, where: str) -> None:
    """A database URI whose driver module is missing: exit 2 naming it (SQLAlchemy picks the driver)."""
    try:
        from sqlalchemy.engine.url import make_url

        make_url(uri).get_dialect().import_dbapi()
    except ImportError as exc:
        name = getattr(exc, "name", None) or str(exc)
        raise InputError(f"the database driver '{name}' this URI needs is not installed (pip install it, or "
                         "name another driver as in postgresql+DRIVER://…)", where=where) from None
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy's own refusal of the URI
        raise InputError(f"not a database URI SQLAlchemy can use: {exc}", where=where) from None


def _check_reachable(uri: str) -> None:
    """A tracking server or database that does not take a connection within CONNECT_TIMEOUT_S: exit 2 now
    (MLflow itself retries for minutes, and only when it first logs, after the work)."""
    import socket

    parsed = urlparse(uri)
    base = parsed.scheme.lower().split("+", 1)[0]
    default = {"http": 80, "https": 443, **DATABASE_PORTS}.get(base)
    try:
        host, port = parsed.hostname, parsed.port or default
    except ValueError as exc:  # a port that is not a number
        raise InputError(f"not a usable URI: {exc}", where=f"MLFLOW_TRACKING_URI={shown_uri(uri)}") from None
    if not host or port is None:
        return
    what = "tracking server" if base in ("http", "https") else "database server"
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        reason = f"no answer in {CONNECT_TIMEOUT_S:g} s" if isinstance(exc, TimeoutError) \
            else (exc.strerror or str(exc))
        raise InputError(f"cannot reach the {what} at {host}:{port} ({reason}): start it, or point "
                         "MLFLOW_TRACKING_URI at one that runs (or pass --no-mlflow)",
                         where=f"MLFLOW_TRACKING_URI={shown_uri(uri)}") from None


def _check_writable(local: Path) -> None:
    """A local store this command will write to: it and its folder writable (the folder takes SQLite's
    journal, the lock file and mlartifacts), else exit 2 now, not after the work."""
    if local.exists() and not os.access(local, os.W_OK):
        raise InputError("the MLflow store is read-only (the file cannot be written): make it writable, point "
                         "MLFLOW_TRACKING_URI at a writable place, or pass --no-mlflow", path=str(local))
    folder = local.parent
    while not folder.exists() and folder != folder.parent:  # made when the store is built
        folder = folder.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"the MLflow store's folder {folder} is not writable (read-only media or no permission): "
                         "point MLFLOW_TRACKING_URI at a writable place, or pass --no-mlflow", path=str(local))


def check_store(uri: str, *, write: bool) -> StoreState | None:
    """Every check of the store that needs no lock and changes nothing, before any work (exit 2 with
    one line): its kind (check_store_kind), that a server or remote database answers, that a local
    store can be written (when `write`), and that an existing SQLite file is an MLflow store
    (not_mlflow). Returns what a local SQLite store holds (None for other stores)."""
    check_store_kind(uri, write=write)
    db = sqlite_path(uri)
    local = db or file_store_path(uri)
    if local is None:
        _check_reachable(uri)
        return None
    if write:
        lock_timeout()  # a malformed ATLAS_STORE_LOCK_TIMEOUT is exit 2 now, not when the lock is taken
        _check_writable(local)
    if db is None:
        return None
    state = read_state(db)
    refuse_foreign(db, state)
    return state


def preflight(uri: str) -> None:
    """Before a long command that logs to the store: check_store now, and a local SQLite store with
    visible damage, or of a schema version other than CHECKED_SCHEMAS, is repaired or checked by
    MLflow (prepare) now, not after the work: MLflow's refusal of its version is exit 2 before the
    work. The normal case costs one sqlite3 read and no MLflow import."""
    state = check_store(uri, write=True)
    if state is not None and state.objects and (damage(state) or state.versions[0] not in CHECKED_SCHEMAS):
        prepare(uri)
