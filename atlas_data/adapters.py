"""Adapters from real GPU-cluster traces to the jobs table (docs/data-formats.md), and the shipped default trace.

- `import_openb`: Alibaba cluster-trace-gpu-v2023 pod lists (`openb_pod_list_*.csv`).
- `import_helios`: Helios-style job logs (SenseTime, `cluster_log.csv`) and runtime-only Philly
  files (`philly_runtime.csv`).
- `import_philly`: the Microsoft Philly job list (`philly_jobs.csv`: timestamp, duration,
  num_gpus, cluster = VC); tenant = VC.
- `import_elasticflow`: the ElasticFlow traces of 10 Microsoft clusters (`raw-traces.tar.gz` or
  one `clusterNN.csv`); tenant = cluster.
- `import_swf`: a Standard Workload Format log of the Parallel Workloads Archive (`*.swf`);
  tenant = user (or group / queue / partition), requests and ids kept as feature columns.
- `import_jobs`: a jobs table already in our format, its columns optionally renamed (`--columns`).
- `convert(format, path, out)`: any of the above to a parquet jobs table, written atomically.
- `default_pod_trace_path()` / `default_jobs()`: the openb trace shipped in
  `atlas_data/resources/openb/` (attribution in the README.md there), the embedded default data.
- `shipped_trace(name)`: a trace shipped in `atlas_data/resources/` by name — `openb`, `philly`,
  `philly:<vc>`, `elasticflow`, `elasticflow:<cluster>` (attribution in each folder's README.md).
- `TRACE_FEATURES`: the submit-time feature columns each shipped trace declares for prediction
  (`atlas_data.jobs_features`).

Each importer returns `(jobs, report)`; `report.dropped` counts dropped rows by reason (each row
is counted once, under the first reason that applies, in the order listed by the importer).
Malformed input (missing column, text where a number belongs, duplicate id) raises InputError
naming the file, the row (with its file line) or column, and the problem. A column an importer
was given but cannot map is an InputError too (never a note): no importer loses data silently.

May import only numpy, pandas and other `atlas_data` modules.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.jobs_features import FeatureColumns
from atlas_data.jobs_table import (Places, read_csv_frame, read_jobs_source, read_table, row_label, seconds_of,
                                  suggest_column_map, text_column, validate_jobs)
from atlas_data.outputs import check_output_file, output_file, write_signed_parquet
from atlas_data.swf_log import SWF_FIELDS, read_swf_columns

FORMATS = ("openb", "helios", "philly", "elasticflow", "swf", "jobs")

OPENB_COLUMNS = ("name", "num_gpu", "creation_time", "deletion_time", "scheduled_time")
OPENB_RESOURCE_DIR = Path(__file__).resolve().parent / "resources" / "openb"
OPENB_DEFAULT_POD_LIST = "openb_pod_list_default.csv"
PHILLY_PATH = Path(__file__).resolve().parent / "resources" / "philly" / "philly_jobs.csv"
ELASTICFLOW_PATH = Path(__file__).resolve().parent / "resources" / "elasticflow" / "raw-traces.tar.gz"
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "cluster")
ELASTICFLOW_COLUMNS = ("job_id", "submission_time", "duration", "num_gpu")
#: the columns the ElasticFlow authors generated for their experiments (`elasticflow-traces.tar.gz` of
#: microsoft/elasticflow-traces, beside the measured four): read and not used, said in a note — the
#: model name, iteration count and batch size are drawn at random, and the deadline is
#: submission_time + U(0.5, 1.5) · duration, computed from the duration itself
ELASTICFLOW_GENERATED = ("num_iteration", "model_name", "deadline", "batch_size")

#: The submit-time columns each importer declares as prediction features (docs/real-traces.md):
#: the jobs table's own `tenant` and `gpus`, plus, for openb, the pod's requests kept from the
#: pod list. Philly and ElasticFlow publish nothing else known at submit time (Philly's gpu_time
#: is duration × num_gpus, a post-execution value).
OPENB_FEATURE_COLUMNS = ("gpu_spec", "cpu_milli", "memory_mib", "gpu_milli")
#: the other column of a published pod list: the pod's last phase, an outcome (read, not used)
OPENB_OUTCOME_COLUMNS = ("pod_phase",)
TRACE_FEATURES = {
    "openb": FeatureColumns(categorical=("tenant", "gpu_spec"), numeric=("gpus", "cpu_milli", "memory_mib", "gpu_milli")),
    "philly": FeatureColumns(categorical=("tenant",), numeric=("gpus",)),
    "elasticflow": FeatureColumns(categorical=("tenant",), numeric=("gpus",)),
    # SWF logs: the kept submit-time fields; `swf_feature_columns` keeps those a given log fills
    "swf": FeatureColumns(categorical=("tenant", "user_id", "group_id", "queue_id", "partition_id", "executable_id"),
                          numeric=("gpus", "requested_time", "requested_processors", "requested_memory")),
}


@dataclass(frozen=True)
class ImportReport:
    """What an importer read, kept and dropped (by reason), plus notes on kept-but-special rows."""

    source: str
    path: str
    rows_read: int
    kept: int
    dropped: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def dropped_total(self) -> int:
        return int(sum(self.dropped.values()))

    def summary_lines(self) -> list[str]:
        lines = [f"{self.source}: read {self.rows_read} rows from {self.path}: kept {self.kept}, dropped {self.dropped_total}"]
        lines += [f"  dropped {count}: {reason}" for reason, count in self.dropped.items()]
        lines += [f"  note: {note}" for note in self.notes]
        return lines

    def dropped_line(self) -> str | None:
        """The drops in one line (what a quiet command still says: no row is dropped unsaid); None if none."""
        if not self.dropped_total:
            return None
        reasons = ", ".join(f"{reason} {count}" for reason, count in self.dropped.items() if count)
        return f"{self.source}: {self.path}: dropped {self.dropped_total} of {self.rows_read} rows ({reasons})"


def _require_columns(df: pd.DataFrame, columns, path: str, what: str) -> None:
    for column in columns:
        if column not in df.columns:
            present = ", ".join(map(str, df.columns)) or "none"
            raise InputError(
                f"{what} needs this column (columns present: {present})", path=path, where=f"column '{column}'"
            )


def _numbers(df: pd.DataFrame, column: str, path: str, places: Places, *, temporal: str | None = None) -> np.ndarray:
    """Column as float64, NaN where empty; text that is not a number is an error.

    `temporal="instant"`: a date-time column (parquet) is seconds since 1970-01-01 UTC and a time span
    is seconds; `temporal="span"`: a time span is seconds; otherwise either dtype is refused.
    """
    raw = df[column]
    converted = seconds_of(raw, column, path, instant=temporal == "instant", span=temporal is not None)
    if converted is not None:
        return converted
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & raw.notna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{column} is not a number: {raw.iloc[i]!r}", path=path, where=row_label(i, places))
    return values


def _times(df: pd.DataFrame, column: str, path: str, places: Places) -> np.ndarray:
    """Seconds (float64, NaN where empty) from numbers or datetime strings (naive strings = UTC)."""
    raw = df[column]
    converted = seconds_of(raw, column, path, instant=True)  # date-time / time-span dtypes (parquet)
    if converted is not None:
        return converted
    if pd.api.types.is_numeric_dtype(raw.dtype):
        return raw.to_numpy(dtype=np.float64, na_value=np.nan)
    present = raw.notna().to_numpy()
    numeric = pd.to_numeric(raw, errors="coerce")
    first = int(np.argmax(present)) if present.any() else 0
    # the first non-empty cell decides: seconds throughout, or date-times throughout
    if not present.any() or not np.isnan(numeric.iloc[first]):
        bad = numeric.isna().to_numpy() & present
        kind = "a number (the column holds seconds)"
        values = numeric.to_numpy(dtype=np.float64, na_value=np.nan)
    else:
        parsed = pd.to_datetime(raw, errors="coerce", utc=True, format="mixed")
        bad = (parsed.isna().to_numpy() | ~numeric.isna().to_numpy()) & present
        kind = "a date-time (the column holds date-times)"
        values = None
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{column} is not {kind}: {raw.iloc[i]!r}", path=path, where=row_label(i, places))
    if values is not None:
        return values
    seconds = (parsed - pd.Timestamp(0, tz="UTC")).dt.total_seconds()
    return seconds.to_numpy(dtype=np.float64, na_value=np.nan)


def _duration_drops(duration: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """The duration rules every importer ends with: `no_duration` (empty), `non_positive_duration`."""
    return [("no_duration", np.isnan(duration)), ("non_positive_duration", ~(duration > 0))]


def _drop_by_reason(reasons: list[tuple[str, np.ndarray]], n: int) -> tuple[np.ndarray, dict[str, int]]:
    """keep mask and {reason: count}; a row is counted under the first reason that matches."""
    dropped = np.zeros(n, dtype=bool)
    counts: dict[str, int] = {}
    for reason, mask in reasons:
        new = mask & ~dropped
        counts[reason] = int(new.sum())
        dropped |= new
    return ~dropped, counts


def _refuse_unmapped(df: pd.DataFrame, known, importer: str, layout: str, path: str) -> None:
    """A column of the file outside the importer's layout (`known`) is an InputError naming it: it is
    never dropped unsaid. `layout` says what the format has, e.g. "a Philly job list has a, b"."""
    unmapped = [c for c in df.columns if c not in known]
    if unmapped:
        raise InputError(
            f"the {importer} importer cannot map column(s) {', '.join(map(str, unmapped))} ({layout}); for another "
            f"layout use --format jobs --columns {suggest_column_map(df.columns) or 'JOBS_COLUMN=FILE_COLUMN'}",
            path=path, where=f"column '{unmapped[0]}'")


def _tenants(df: pd.DataFrame, column: str | None, path: str) -> tuple[pd.Series, np.ndarray]:
    """Tenant per row as text; empty cells become "default" (the returned mask marks them: its count
    over the kept rows goes into the notes)."""
    if column is None:
        return pd.Series(["default"] * len(df), dtype=str), np.zeros(len(df), dtype=bool)
    if column not in df.columns:
        present = ", ".join(map(str, df.columns))
        raise InputError(
            f"tenant column not found (columns present: {present}); choose one with --tenant-column",
            path=path,
            where=f"column '{column}'",
        )
    raw = df[column]
    empty = raw.isna().to_numpy().copy()
    text = raw.astype(str).str.strip().to_numpy(dtype=object).copy()
    empty |= text == ""
    text[empty] = "default"
    return pd.Series(text, dtype=str), empty


def import_openb(path: str | os.PathLike, tenant_column: str = "qos",
                 extra_columns: tuple[str, ...] | None = ()) -> tuple[pd.DataFrame, ImportReport]:
    """Alibaba GPU v2023 pod list -> jobs table.

    job_id = name, submit_time = creation_time, duration = deletion_time − scheduled_time,
    gpus = num_gpu, tenant = `tenant_column` (qos by default: LS / BE / Burstable / Guaranteed).
    Dropped, in this order: `no_gpu` (num_gpu 0 or empty: CPU-only pods), `never_scheduled`
    (scheduled_time or deletion_time empty: Pending pods), `non_positive_duration`.
    Kept as they are: GPU-sharing pods (num_gpu = 1 with gpu_milli < 1000) count as gpus = 1,
    because the jobs table has whole-GPU gangs only; Failed pods (they held their GPUs); pods still
    Running at the end of the trace (deletion_time = last deletion time), whose durations are
    right-censored — both counted in the notes. `extra_columns` (e.g. OPENB_FEATURE_COLUMNS) are
    kept as they are after the jobs-table columns (the prediction features of the pods); None keeps
    those of OPENB_FEATURE_COLUMNS the file has, and names them in the notes (`data import`).
    A column outside the published pod-list layout (and not the tenant column) is an InputError.
    """
    path_s = str(path)
    df, kind = read_table(path, string_columns=("name", "gpu_spec") + ((tenant_column,) if tenant_column else ()))
    if len(df) == 0:
        raise InputError("the pod list has no rows", path=path_s)
    _require_columns(df, OPENB_COLUMNS, path_s, "an openb pod list")
    layout = OPENB_COLUMNS + ("qos",) + OPENB_FEATURE_COLUMNS + OPENB_OUTCOME_COLUMNS
    _refuse_unmapped(df, layout + (tenant_column,), "openb", f"an openb pod list has {', '.join(dict.fromkeys(layout))}",
                     path_s)
    kept_features = extra_columns is None
    if kept_features:
        extra_columns = tuple(c for c in OPENB_FEATURE_COLUMNS if c in df.columns)
    places = Places.for_file(kind, len(df))
    num_gpu = _numbers(df, "num_gpu", path_s, places)
    creation = _numbers(df, "creation_time", path_s, places, temporal="instant")
    deletion = _numbers(df, "deletion_time", path_s, places, temporal="instant")
    scheduled = _numbers(df, "scheduled_time", path_s, places, temporal="instant")
    duration = deletion - scheduled
    with np.errstate(invalid="ignore"):
        keep, dropped = _drop_by_reason(
            [
                ("no_gpu", ~(num_gpu > 0)),
                ("never_scheduled", np.isnan(scheduled) | np.isnan(deletion)),
                ("non_positive_duration", ~(duration > 0)),
            ],
            len(df),
        )
    i = _first_missing(creation, keep)
    if i is not None:  # named by the file's column, not the jobs table's submit_time
        raise InputError("creation_time is missing/NaN", path=path_s, where=row_label(i, places))
    tenant, tenant_defaulted = _tenants(df, tenant_column, path_s)
    jobs = pd.DataFrame(
        {
            "job_id": df["name"].to_numpy()[keep],
            "submit_time": creation[keep],
            "duration": duration[keep],
            "gpus": num_gpu[keep],
            "tenant": tenant.to_numpy()[keep],
        }
    )
    jobs = validate_jobs(jobs, path_s, places=places.subset(keep))
    _require_columns(df, extra_columns, path_s, "an openb pod list")
    for column in extra_columns:
        jobs[column] = df[column].to_numpy()[keep]

    notes = []
    if "gpu_milli" in df.columns:
        milli = pd.to_numeric(df["gpu_milli"], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
        shared = int((keep & (num_gpu == 1) & (milli < 1000)).sum())
        notes.append(f"{shared} kept pods share a GPU (gpu_milli < 1000) and count as gpus = 1")
    last = np.nanmax(deletion) if np.isfinite(deletion).any() else np.nan
    censored = int((keep & (deletion == last)).sum())
    notes.append(f"{censored} kept pods end at the last deletion_time of the trace (durations right-censored)")
    defaulted = int((tenant_defaulted & keep).sum())
    if defaulted:
        notes.append(f"{defaulted} kept jobs have an empty '{tenant_column}' and use tenant 'default'")
    if kept_features and extra_columns:
        notes.append(f"kept the pods' requests as they are: {', '.join(extra_columns)} (--feature-columns can name them)")
    outcomes = [c for c in OPENB_OUTCOME_COLUMNS if c in df.columns and c != tenant_column]
    if outcomes:
        notes.append(f"not used: {', '.join(outcomes)} (the pod's last phase, known only after it ran)")
    report = ImportReport("openb", path_s, len(df), len(jobs), dropped, tuple(notes))
    return jobs, report


#: the columns of a published Helios `cluster_log.csv` [Hu21]; the importer maps or deliberately
#: ignores each (cpu_num, node_num, state, jobname, queue: not jobs-table columns) and refuses others
HELIOS_LOG_COLUMNS = ("job_id", "user", "vc", "jobname", "gpu_num", "cpu_num", "node_num", "state", "submit_time",
                      "start_time", "end_time", "duration", "queue")
_HELIOS_ID = ("job_id", "jobid", "job_name", "id")
_HELIOS_GPUS = ("gpu_num", "num_gpu", "gpus", "gpu")
_HELIOS_TENANT = ("vc", "tenant", "user")


def _first_present(df: pd.DataFrame, names) -> str | None:
    return next((n for n in names if n in df.columns), None)


def import_helios(path: str | os.PathLike, tenant_column: str | None = None) -> tuple[pd.DataFrame, ImportReport]:
    """Helios / Philly-style job log -> jobs table.

    Helios (`cluster_log.csv`: job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,
    start_time,end_time,duration,...): job_id = job_id, submit_time = submit_time (seconds or a
    date-time string, read as UTC), duration = `duration` when the column exists, else
    end_time − start_time; gpus = gpu_num (1 when absent); tenant = `tenant_column`, by default
    the first of vc / tenant / user present. Jobs of every state are kept (they held GPUs).
    Dropped, in order: `no_gpu` (gpu_num 0 or empty: CPU jobs), `no_duration` (empty), `non_positive_duration`.

    Runtime-only files (a `runtime` column and no submit_time, e.g. Philly's philly_runtime.csv)
    become a batch instance: every job submitted at 0, gpus = 1, tenant "default",
    job_id = "philly-<row>" with <row> the 1-based data row; runtimes that are empty or <= 0 are
    dropped as `no_duration` / `non_positive_duration`.
    """
    path_s = str(path)
    df, kind = read_table(path, string_columns=_HELIOS_ID + _HELIOS_TENANT + ((tenant_column,) if tenant_column else ()))
    if len(df) == 0:
        raise InputError("the job log has no rows", path=path_s)
    places = Places.for_file(kind, len(df))
    n = len(df)
    notes: list[str] = []

    if "submit_time" not in df.columns and "runtime" in df.columns:
        # a batch at time 0 with gpus = 1 has room for nothing but the runtime (and the tenant)
        unmapped = [c for c in df.columns if c not in ("runtime", tenant_column)]
        if unmapped:
            raise InputError(
                f"a runtime-only file (no submit_time) becomes a batch at time 0 with gpus = 1, which cannot keep "
                f"its column(s) {', '.join(unmapped)}; import it with --format jobs --columns "
                f"{suggest_column_map(df.columns)}", path=path_s, where=f"column '{unmapped[0]}'")
        duration = _numbers(df, "runtime", path_s, places, temporal="span")
        job_id = np.array([f"philly-{i + 1}" for i in range(n)], dtype=object)
        submit = np.zeros(n)
        gpus = np.ones(n)
        tenant, tenant_defaulted = _tenants(df, tenant_column, path_s)
        reasons = []
        source = "helios (runtime-only: batch at time 0)"
        notes.append("runtime-only file: all jobs submitted at time 0, gpus = 1")
    else:
        if "submit_time" not in df.columns:
            present = ", ".join(map(str, df.columns))
            instead = ("this is a Philly job list: import it with --format philly"
                       if {"timestamp", "duration", "num_gpus"} <= set(df.columns)
                       else f"for another layout use --format jobs --columns {suggest_column_map(df.columns)}")
            raise InputError(f"a Helios job log needs this column (columns present: {present}); {instead}",
                             path=path_s, where="column 'submit_time'")
        known = HELIOS_LOG_COLUMNS + _HELIOS_ID + _HELIOS_GPUS + _HELIOS_TENANT + (tenant_column,)
        _refuse_unmapped(df, known, "helios", f"a Helios log has {', '.join(HELIOS_LOG_COLUMNS)}", path_s)
        id_column = _first_present(df, _HELIOS_ID)
        if id_column is None:
            raise InputError("a Helios job log needs a job id column", path=path_s, where="column 'job_id'")
        job_id = df[id_column].to_numpy(dtype=object)
        submit = _times(df, "submit_time", path_s, places)
        if "duration" in df.columns:
            duration = _numbers(df, "duration", path_s, places, temporal="span")
        elif "start_time" in df.columns and "end_time" in df.columns:
            duration = _times(df, "end_time", path_s, places) - _times(df, "start_time", path_s, places)
        else:
            raise InputError(
                "a Helios job log needs 'duration' or both 'start_time' and 'end_time'",
                path=path_s,
                where="column 'duration'",
            )
        gpu_column = _first_present(df, _HELIOS_GPUS)
        gpus = _numbers(df, gpu_column, path_s, places) if gpu_column else np.ones(n)
        if tenant_column is None:
            tenant_column = _first_present(df, _HELIOS_TENANT)
        tenant, tenant_defaulted = _tenants(df, tenant_column, path_s)
        with np.errstate(invalid="ignore"):
            reasons = [("no_gpu", ~(gpus > 0))]
        source = "helios"
    with np.errstate(invalid="ignore"):
        keep, dropped = _drop_by_reason(
            reasons + _duration_drops(duration), n
        )
    jobs = pd.DataFrame(
        {
            "job_id": job_id[keep],
            "submit_time": submit[keep],
            "duration": duration[keep],
            "gpus": gpus[keep],
            "tenant": tenant.to_numpy()[keep],
        }
    )
    jobs = validate_jobs(jobs, path_s, places=places.subset(keep))
    defaulted = int((tenant_defaulted & keep).sum())
    if defaulted:
        notes.append(f"{defaulted} kept jobs have an empty '{tenant_column}' and use tenant 'default'")
    return jobs, ImportReport(source, path_s, n, len(jobs), dropped, tuple(notes))


def import_philly(path: str | os.PathLike, tenant_column: str = "cluster") -> tuple[pd.DataFrame, ImportReport]:
    """Microsoft Philly job list (`philly_jobs.csv`, as in the Pollux artifact) -> jobs table.

    Columns: timestamp (submit, a date-time read as UTC, or seconds), duration (s), num_gpus,
    cluster (the virtual cluster). job_id = the file's `job_id` column when it has one, else
    "philly-<row>" with <row> the 1-based data row; submit_time = timestamp in seconds since
    1970-01-01 UTC (every run shifts its own time origin to the first submit); duration =
    duration; gpus = num_gpus; tenant = `tenant_column` (default cluster, i.e. tenant = VC).
    Dropped, in order: `no_gpu` (num_gpus 0 or empty), `no_duration` (empty),
    `non_positive_duration`.
    """
    path_s = str(path)
    df, kind = read_table(path, string_columns=("job_id", tenant_column))
    if len(df) == 0:
        raise InputError("the Philly job list has no rows", path=path_s)
    if "timestamp" not in df.columns and "runtime" in df.columns:
        raise InputError("a Philly job list needs this column; a runtime-only file (such as philly_runtime.csv) "
                         "becomes a batch at time 0 with --format helios", path=path_s, where="column 'timestamp'")
    _require_columns(df, [c for c in PHILLY_COLUMNS if c != "cluster"] + [tenant_column], path_s, "a Philly job list")
    layout = PHILLY_COLUMNS + ("gpu_time", "job_id")
    _refuse_unmapped(df, layout + (tenant_column,), "philly", f"a Philly job list has {', '.join(layout)}", path_s)
    places = Places.for_file(kind, len(df))
    n = len(df)
    job_id = (df["job_id"].to_numpy(dtype=object) if "job_id" in df.columns
              else np.array([f"philly-{i + 1}" for i in range(n)], dtype=object))
    submit = _times(df, "timestamp", path_s, places)
    duration = _numbers(df, "duration", path_s, places, temporal="span")
    gpus = _numbers(df, "num_gpus", path_s, places)
    tenant, tenant_defaulted = _tenants(df, tenant_column, path_s)
    with np.errstate(invalid="ignore"):
        keep, dropped = _drop_by_reason([("no_gpu", ~(gpus > 0))] + _duration_drops(duration), n)
    i = _first_missing(submit, keep)
    if i is not None:
        raise InputError("timestamp is missing/NaN", path=path_s, where=row_label(i, places))
    jobs = pd.DataFrame({"job_id": job_id[keep], "submit_time": submit[keep], "duration": duration[keep],
                         "gpus": gpus[keep], "tenant": tenant.to_numpy()[keep]})
    jobs = validate_jobs(jobs, path_s, places=places.subset(keep))
    what = " (virtual cluster)" if tenant_column == "cluster" else ""
    notes = [f"tenant = '{tenant_column}'{what}: {jobs['tenant'].nunique()} tenants"]
    defaulted = int((tenant_defaulted & keep).sum())
    if defaulted:
        notes.append(f"{defaulted} kept jobs have an empty '{tenant_column}' and use tenant 'default'")
    return jobs, ImportReport("philly", path_s, n, len(jobs), dropped, tuple(notes))


def _first_missing(values: np.ndarray, keep: np.ndarray) -> int | None:
    bad = np.isnan(values) & keep
    return int(np.argmax(bad)) if bad.any() else None


def _elasticflow_members(path: Path) -> list[tuple[str, pd.DataFrame, str]]:
    """(cluster name, frame, where-prefix) per CSV: the members of a .tar.gz, or one CSV file."""
    import tarfile

    name = path.name.lower()
    if not (name.endswith(".tar.gz") or name.endswith(".tgz")):
        df, _ = read_table(path, string_columns=("job_id",))
        return [(path.name.split(".")[0], df, "")]
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a regular file", path=str(path))
    members = []
    try:
        with tarfile.open(path, "r:gz") as tar:
            for info in sorted(tar.getmembers(), key=lambda m: m.name):
                base = Path(info.name).name
                if not info.isfile() or not base.lower().endswith(".csv") or base.startswith("."):
                    continue
                with tar.extractfile(info) as fh:
                    df = read_csv_frame(fh.read(), string_columns=("job_id",), label=str(path), where=f"member {base}")
                members.append((base[: -len(".csv")], df, f"member {base}, "))
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputError(f"cannot read tar.gz archive: {exc}", path=str(path)) from None
    if not members:
        raise InputError("the archive holds no .csv file", path=str(path))
    return members


def import_elasticflow(path: str | os.PathLike, tenant_column: str | None = None) -> tuple[pd.DataFrame, ImportReport]:
    """ElasticFlow traces (microsoft/elasticflow-traces) -> jobs table.

    `path` is the published `raw-traces.tar.gz` (every `clusterNN.csv` in it) or one cluster's
    CSV. Columns: job_id, submission_time (s), duration (s), num_gpu. job_id = job_id,
    submit_time = submission_time, duration = duration, gpus = num_gpu, tenant = the cluster, i.e.
    the CSV's file name without `.csv` (`tenant_column` names a column to use instead). The ten
    clusters share one time axis (seconds from the start of the trace). Dropped, in order:
    `no_gpu`, `no_duration`, `non_positive_duration`. A job_id seen twice is an error.
    """
    path = Path(path)
    path_s = str(path)
    parts, origins, dropped_total, n_total, generated, defaulted = [], [], {}, 0, set(), 0
    for cluster, df, prefix in _elasticflow_members(path):
        where_file = f"{path_s} ({prefix.rstrip(', ')})" if prefix else path_s
        if len(df) == 0:
            raise InputError("the trace has no rows", path=where_file)
        _require_columns(df, ELASTICFLOW_COLUMNS, where_file, "an ElasticFlow trace")
        _refuse_unmapped(df, ELASTICFLOW_COLUMNS + ELASTICFLOW_GENERATED + (tenant_column,), "elasticflow",
                         f"an ElasticFlow trace has {', '.join(ELASTICFLOW_COLUMNS)}, and the generated "
                         f"{', '.join(ELASTICFLOW_GENERATED)}", where_file)
        generated.update(c for c in ELASTICFLOW_GENERATED if c in df.columns and c != tenant_column)
        places = Places.for_file("csv", len(df))
        submit = _numbers(df, "submission_time", where_file, places, temporal="instant")
        duration = _numbers(df, "duration", where_file, places, temporal="span")
        gpus = _numbers(df, "num_gpu", where_file, places)
        i = _first_missing(submit, np.ones(len(df), dtype=bool))
        if i is not None:
            raise InputError("submission_time is missing/NaN", path=where_file, where=row_label(i, places))
        if tenant_column is None:
            tenant, empty_tenant = pd.Series([cluster] * len(df), dtype=str), np.zeros(len(df), dtype=bool)
        else:
            tenant, empty_tenant = _tenants(df, tenant_column, where_file)
        with np.errstate(invalid="ignore"):
            keep, dropped = _drop_by_reason([("no_gpu", ~(gpus > 0))] + _duration_drops(duration), len(df))
        defaulted += int((empty_tenant & keep).sum())
        part = pd.DataFrame({"job_id": df["job_id"].to_numpy(dtype=object)[keep], "submit_time": submit[keep],
                             "duration": duration[keep], "gpus": gpus[keep], "tenant": tenant.to_numpy()[keep]})
        parts.append(validate_jobs(part, where_file, places=places.subset(keep)))
        origins.append((prefix, places.subset(keep)))
        for reason, count in dropped.items():
            dropped_total[reason] = dropped_total.get(reason, 0) + count
        n_total += len(df)
    jobs = pd.concat(parts, ignore_index=True)
    _no_id_in_two_members(jobs, origins, path_s)
    jobs = validate_jobs(jobs, path_s)
    tenants = jobs["tenant"].nunique()
    if tenant_column is None:
        notes = [f"tenant = cluster: {tenants} cluster{'s' if tenants != 1 else ''}"]
    else:
        notes = [f"tenant = '{tenant_column}': {tenants} tenant{'s' if tenants != 1 else ''}"]
    if defaulted:
        notes.append(f"{defaulted} kept jobs have an empty '{tenant_column}' and use tenant 'default'")
    if generated:
        names = [c for c in ELASTICFLOW_GENERATED if c in generated]
        notes.append(f"not used: {', '.join(names)} (generated by the ElasticFlow authors for their experiments, "
                     "not measured; the deadline is computed from the duration)")
    return jobs, ImportReport("elasticflow", path_s, n_total, len(jobs), dropped_total, tuple(notes))


def _no_id_in_two_members(jobs: pd.DataFrame, origins: list[tuple[str, Places]], path_s: str) -> None:
    """A job_id in two members of an archive is an InputError naming both members and rows (each
    member's own duplicates were reported with its rows already)."""
    duplicated = jobs["job_id"].duplicated(keep="first").to_numpy()
    if not duplicated.any():
        return
    i = int(np.argmax(duplicated))
    first = int(np.argmax((jobs["job_id"] == jobs["job_id"].iloc[i]).to_numpy()))
    starts = np.cumsum([0] + [len(places.rows) for _, places in origins])

    def place(k: int) -> str:
        m = int(np.searchsorted(starts, k, side="right")) - 1
        prefix, places = origins[m]
        return f"{prefix.rstrip(', ')}, {places.label(k - int(starts[m]))}"

    raise InputError(f"duplicate job_id {jobs['job_id'].iloc[i]!r}, first seen in {place(first)}; the members repeat "
                     "jobs, so import them one at a time (--format elasticflow MEMBER.csv)", path=path_s,
                     where=place(i))


def import_jobs(path: str | os.PathLike, columns: dict[str, str] | None = None) -> tuple[pd.DataFrame, ImportReport]:
    """A jobs table in our own format: read and validated, nothing dropped.

    `columns` maps jobs-table columns to the file's own names (`--columns job_id=id,...`). The
    file's other columns are kept as they are after the jobs-table columns (nothing it holds is
    lost; `--feature-columns` can later name them) and listed in the notes.
    """
    df, places = read_jobs_source(path, columns)
    jobs = validate_jobs(df, str(path), places=places)
    other = [c for c in df.columns if c not in jobs.columns]
    for column in other:
        jobs[column] = df[column].to_numpy()
    notes = []
    if columns:
        notes.append("columns mapped: " + ", ".join(f"{t} = '{s}'" for t, s in columns.items()))
    if other:
        notes.append(f"kept {len(other)} other column(s) as they are: {', '.join(other)}")
    return jobs, ImportReport("jobs", str(path), len(jobs), len(jobs), {}, tuple(notes))


# ----- Standard Workload Format (Parallel Workloads Archive) -----------------------------------------
#: the fields that may be the tenant (`--tenant-column`), and the extra column each becomes
SWF_TENANTS = {"user": "user_id", "group": "group_id", "queue": "queue_number", "partition": "partition_number"}
#: submit-time fields kept as extra columns (prediction features): categorical ids and numeric requests;
#: wait time, CPU time, used memory, status, preceding job and think time are outcomes or links, not kept
SWF_CATEGORICAL = {"user_id": "user_id", "group_id": "group_id", "queue_id": "queue_number",
                   "partition_id": "partition_number", "executable_id": "executable_number"}
SWF_NUMERIC = {"requested_time": "requested_time", "requested_processors": "requested_processors",
               "requested_memory": "requested_memory"}
SWF_SUFFIXES = (".swf", ".swf.gz")
#: the fields `import_swf` reads (the others are never held in memory)
SWF_IMPORTED = tuple(f for f in SWF_FIELDS if f in {"job_number", "submit_time", "run_time", "allocated_processors",
                                                    *SWF_TENANTS.values(), *SWF_CATEGORICAL.values(),
                                                    *SWF_NUMERIC.values()})


def is_swf_path(spec: str | os.PathLike) -> bool:
    """True for a file name ending in .swf or .swf.gz (read by `import_swf` wherever a jobs table goes)."""
    return str(spec).lower().endswith(SWF_SUFFIXES)


SWF_HEADER_MAX = 2**53  # a header number above this is not exact as the float every time and size is


def swf_header_int(header: list[str], name: str, path: str | os.PathLike | None = None) -> int:
    """The whole number after `; NAME:` in an SWF header's comment lines (0 when the field is absent or
    holds no number, as the format allows). A number that is not plain ASCII digits (`²`, Arabic-Indic
    digits) or exceeds 2^53 (times and sizes beyond exact float range) is an InputError naming the
    field, never a silent 0 or a rounded value."""
    for line in header:
        key, _, value = line.lstrip(";").partition(":")
        if key.strip() != name or not value.split():
            continue
        token = value.split()[0]
        if not token[0].isdigit():
            return 0  # words, not a number: the field as absent
        if not (token.isascii() and token.isdigit()):
            raise InputError(f"header field {name}: {token[:40]!r} is not a whole number written in ASCII digits",
                             path=None if path is None else str(path))
        if len(token) > 16 or int(token) > SWF_HEADER_MAX:
            raise InputError(f"header field {name}: {token[:20]}{'…' if len(token) > 20 else ''} is above 2^53, "
                             "beyond what a time or a size can hold exactly", path=None if path is None else str(path))
        return int(token)
    return 0


def swf_fields(path: str | os.PathLike, fields=SWF_FIELDS,
               job_numbers: bool = True) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray | None]:
    """(the job lines' `fields` (all 18 SWF_FIELDS unless told) as numbers, one row per line, −1 = missing;
    each row's line number; the header comment lines; each row's job number as written, an array of
    text, or None when `job_numbers` is False: 4 bytes a character a line, 0.3 GB for 10⁷ lines of
    8-digit numbers) of a Standard Workload Format log, `.swf` or `.swf.gz`, read block by block
    (`atlas_data.swf_log`: memory is that of the kept fields, a gzip bomb or binary data is refused).
    Blank lines are skipped; a line with a different field count, or a field that is not a finite
    number, is an InputError naming the line; a log without job lines too."""
    log = read_swf_columns(path, fields)
    _refuse_inexact(log.columns, log.lines, str(path))
    values = np.empty((len(log), len(fields)), order="F")  # column by column, each freed once copied
    for k, name in enumerate(fields):
        values[:, k] = log.columns.pop(name)
    return values, log.lines, log.header, log.job_numbers_text() if job_numbers else None


def _refuse_inexact(columns: dict, line_numbers, path_s: str) -> None:
    """InputError naming the first line, and its first field, with an SWF field above 2^53
    (SWF_HEADER_MAX): a time, size or request there is not exact as a float, and a requested time of
    10^17 and one of 10^30 would schedule differently by rounding alone. `columns`: {SWF field name:
    its values, one per job line}, any subset of SWF_FIELDS (read column by column: no copy)."""
    first = None  # (row, field number, name)
    for name, values in columns.items():
        over = np.abs(values) > SWF_HEADER_MAX
        if over.any():
            found = (int(np.argmax(over)), SWF_FIELDS.index(name) + 1, name)
            first = found if first is None or found[:2] < first[:2] else first
    if first is not None:
        i, number, name = first
        raise InputError(f"field {number} ({name}) is {columns[name][i]:.6g}, above 2^53: beyond what a time or a "
                         "size can hold exactly", path=path_s, where=f"line {line_numbers[i]}")


def import_swf(path: str | os.PathLike, tenant_column: str = "user") -> tuple[pd.DataFrame, ImportReport]:
    """Standard Workload Format log (Parallel Workloads Archive, `*.swf`) -> jobs table.

    Lines starting with `;` are header comments, blank lines are skipped; every other line holds
    the 18 whitespace-separated SWF_FIELDS (a different count, or a field that is not a number, is
    an InputError naming the line); −1 means missing. job_id = job number, submit_time = submit
    time, duration = run time, gpus = allocated processors (requested processors where −1; counted
    in the notes), tenant = `tenant_column` (user, group, queue or partition; −1 → "default").
    Kept as extra columns, missing = empty: user_id, group_id, queue_id, partition_id,
    executable_id (text) and requested_time, requested_processors, requested_memory (numbers).
    Dropped, in order: `no_submit_time` (−1), `no_processors` (allocated and requested missing or
    ≤ 0), `no_duration` (run time −1), `non_positive_duration` (run time 0).
    """
    path = Path(path)
    path_s = str(path)
    if tenant_column not in SWF_TENANTS:
        raise InputError(f"an SWF tenant is one of {', '.join(SWF_TENANTS)}, got {tenant_column!r}",
                         where="--tenant-column")
    log = read_swf_columns(path, SWF_IMPORTED)
    _refuse_inexact(log.columns, log.lines, path_s)
    comments = len(log.header)
    n = len(log)
    field = log.columns  # each popped once used: the log's memory shrinks as the table grows
    places = Places(np.arange(1, n + 1, dtype=np.int64), None, log.lines)

    def present(x: np.ndarray) -> np.ndarray:  # −1 (or any negative) marks a missing value
        return x >= 0

    allocated, requested = field.pop("allocated_processors"), field["requested_processors"]
    fell_back = ~(allocated > 0) & (requested > 0)
    gpus = np.where(allocated > 0, allocated, np.where(requested > 0, requested, np.nan))
    del allocated, requested
    submit, run = field.pop("submit_time"), field.pop("run_time")
    keep, dropped = _drop_by_reason([("no_submit_time", ~present(submit)), ("no_processors", np.isnan(gpus)),
                                     ("no_duration", ~present(run)), ("non_positive_duration", ~(run > 0))], n)
    fell_back = int((fell_back & keep).sum())
    tenant_raw = field[SWF_TENANTS[tenant_column]][keep]
    defaulted = int((~present(tenant_raw)).sum())
    texts, codes = _swf_id_codes(tenant_raw)
    texts[pd.isna(texts)] = "default"
    del tenant_raw
    # no copy of the columns (a frame built from a dict copies them into one block); the table's checks
    # and the job ids' text are made without a Python object per row: a log of 10^7 lines fits in memory
    jobs = pd.DataFrame({"job_id": _swf_job_ids(log, field.pop("job_number"), keep), "submit_time": submit[keep],
                         "duration": run[keep], "gpus": gpus[keep], "tenant": text_column(codes, texts)}, copy=False)
    del submit, run, gpus, texts, codes
    places = places.subset(keep)
    del log  # its line numbers and job numbers; the fields of the extra columns stay, in `field`, until made
    jobs = validate_jobs(jobs, path_s, places=places)
    del places
    for column, source in SWF_CATEGORICAL.items():
        jobs[column] = pd.Series(_swf_ids(field.pop(source)[keep]), dtype=object)
    for column, source in SWF_NUMERIC.items():
        x = field.pop(source)[keep]
        jobs[column] = np.where(present(x), x, np.nan)
    notes = [f"{comments} header comment line(s); tenant = {tenant_column}: {jobs['tenant'].nunique()} tenants"]
    if fell_back:
        notes.append(f"{fell_back} kept jobs have no allocated processors and use the requested ones")
    if defaulted:
        notes.append(f"{defaulted} kept jobs have no {tenant_column} (−1) and use tenant 'default'")
    return jobs, ImportReport("swf", path_s, n, len(jobs), dropped, tuple(notes))


def _swf_job_ids(log, number: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """The kept rows' job ids: the job numbers as integers when every one is written as its whole number
    (`17`, as archive logs write them: the jobs table's text of an integer id is the same), which the
    jobs table checks without a Python object per row; otherwise the job numbers as written (text)."""
    number = number[keep]
    whole = (number == np.floor(number)) & (np.abs(number) < 2.0 ** 53)
    if whole.all():
        ints = number.astype(np.int64)
        del number, whole
        written = log.job_numbers[keep]
        if (ints.astype(written.dtype) == written).all():  # a longer number is cut to the width: not equal
            return ints
    return log.job_numbers_text(keep)


def _swf_id_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SWF id fields as (the distinct ids as text ("7"), None for missing (−1); each row's index into
    them): vectorised, logs have millions of lines."""
    distinct, inverse = np.unique(values, return_inverse=True)
    out = np.full(len(distinct), None, dtype=object)
    ok = distinct >= 0
    whole = ok & (distinct == np.floor(distinct)) & (distinct < 2.0 ** 53)
    out[whole] = distinct[whole].astype(np.int64).astype(str)
    other = ok & ~whole
    out[other] = [f"{v:g}" for v in distinct[other]]
    return out, inverse.reshape(-1)


def _swf_ids(values: np.ndarray) -> np.ndarray:
    """SWF id fields as text ("7"), None where missing (−1). Each distinct id is one text object shared by
    its rows (a user's million jobs hold one "7", not a million)."""
    texts, codes = _swf_id_codes(values)
    return texts[codes]


def swf_feature_columns(jobs: pd.DataFrame) -> FeatureColumns:
    """The feature columns of an imported SWF log: the kept submit-time fields that tell jobs apart.

    Not a feature: a field missing in every row (many archive logs leave, e.g., requested memory at
    −1 throughout), one with the same value in every row, and an id field that groups the jobs
    exactly as the tenant does (the field the tenant was taken from: the same feature twice)."""
    def informative(c):  # missing in every row is one value too
        return c in jobs.columns and jobs[c].nunique(dropna=False) > 1

    def same_groups_as_tenant(c):
        pairs = pd.DataFrame({"t": jobs["tenant"].astype(str), "c": jobs[c].astype(object).fillna("")})
        return len(pairs.drop_duplicates()) == pairs["t"].nunique() == pairs["c"].nunique()

    return FeatureColumns(
        categorical=("tenant",) + tuple(c for c in SWF_CATEGORICAL if informative(c) and not same_groups_as_tenant(c)),
        numeric=("gpus",) + tuple(c for c in SWF_NUMERIC if informative(c)))


IMPORTERS = {"openb": import_openb, "helios": import_helios, "philly": import_philly,
             "elasticflow": import_elasticflow, "swf": import_swf, "jobs": import_jobs}


def import_trace(format: str, path: str | os.PathLike, *, tenant_column: str | None = None,
                 columns: dict[str, str] | None = None):
    """Dispatch by format name; `tenant_column` None means the importer's default; `columns`
    ({jobs-table column: file column}, `--columns`) applies to the `jobs` format only."""
    if format not in IMPORTERS:
        raise InputError(f"unknown format {format!r} (choose one of {', '.join(FORMATS)})", where="--format")
    if format == "openb":  # a data import keeps the pods' requests, the shipped trace's features
        return import_openb(path, **({} if tenant_column is None else {"tenant_column": tenant_column}),
                            extra_columns=None)
    if format == "jobs":
        if tenant_column is not None:
            raise InputError("--tenant-column applies to openb, helios, philly, elasticflow and swf only; with "
                             "--format jobs map the tenant with --columns tenant=COLUMN", where="--tenant-column")
        return import_jobs(path, columns)
    if columns:
        raise InputError(f"--columns applies to --format jobs only: the {format} importer knows its own columns",
                         where="--columns")
    if tenant_column is None:
        return IMPORTERS[format](path)
    return IMPORTERS[format](path, tenant_column=tenant_column)


def _check_output(out: Path) -> None:
    if not out.name.lower().endswith(".parquet"):
        raise InputError("output must be a .parquet file", path=str(out), where="--out")
    check_output_file(out, "data import", option="--out")
    if not out.parent.is_dir():
        raise InputError("output folder does not exist", path=str(out), where="--out")


def write_parquet_atomic(jobs: pd.DataFrame, out: str | os.PathLike) -> Path:
    """Write `jobs` to `out` via a temporary file in the same folder and a rename (atlas_data.outputs):
    a reader never sees a half-written file, on any error nothing is left behind, and an existing
    file is replaced only when an earlier `data import` wrote it (signed in the parquet metadata)."""
    out = Path(out)
    _check_output(out)
    return output_file(out, "data import", lambda tmp: write_signed_parquet(jobs, tmp, "data import"),
                       option="--out", make_parent=False)


def convert(format: str, path: str | os.PathLike, out: str | os.PathLike, *, tenant_column: str | None = None,
            columns: dict[str, str] | None = None):
    """Import `path` in `format` and write the jobs table to `out` (parquet, atomically).

    Returns the ImportReport. Bad input or a bad output path raise InputError before anything
    is written; an existing `out` is replaced only by a complete new file, and only when it is
    an earlier `data import` output. Running out of memory (a trace too large for the machine or
    its limit, `ulimit -v`) is an InputError too, with nothing written.
    """
    out_path = Path(out)
    _check_output(out_path)
    try:
        jobs, report = import_trace(format, path, tenant_column=tenant_column, columns=columns)
        write_parquet_atomic(jobs, out_path)
    except MemoryError:  # numpy's and Arrow's (ArrowMemoryError) alike; the frames holding the columns are gone
        raise InputError("ran out of memory while importing it: the trace is too large for this machine's memory "
                         "or its memory limit (ulimit -v); docs/data-formats.md#limits", path=str(path)) from None
    return report


def default_pod_trace_path() -> Path:
    """The openb v2023 pod list shipped with the package (8,152 real pods)."""
    return OPENB_RESOURCE_DIR / OPENB_DEFAULT_POD_LIST


@functools.lru_cache(maxsize=4)
def _default_jobs_cached(tenant_column: str) -> pd.DataFrame:
    return import_openb(default_pod_trace_path(), tenant_column=tenant_column)[0]


def default_jobs(tenant_column: str = "qos") -> pd.DataFrame:
    """The shipped openb trace as a jobs table (the embedded default data of the scheduling runs).

    Parsed once per tenant column; every call returns a fresh copy the caller may modify.
    """
    return _default_jobs_cached(tenant_column).copy()


# ----- traces shipped with the package ---------------------------------------------------------------
SHIPPED_TRACES = ("openb", "philly", "elasticflow")


def is_shipped_trace_name(text: str) -> bool:
    """True for `openb`, `philly[:<vc>]`, `elasticflow[:<cluster>]` (names, not file paths)."""
    return str(text).split(":", 1)[0] in SHIPPED_TRACES and "/" not in str(text) and not str(text).endswith((".csv", ".parquet"))


@functools.lru_cache(maxsize=4)
def _shipped_cached(kind: str) -> pd.DataFrame:
    if kind == "openb":
        return import_openb(default_pod_trace_path(), extra_columns=OPENB_FEATURE_COLUMNS)[0]
    if kind == "philly":
        return import_philly(PHILLY_PATH)[0]
    return import_elasticflow(ELASTICFLOW_PATH)[0]


def shipped_trace(name: str, with_features: bool = False) -> tuple[pd.DataFrame, dict]:
    """A trace shipped in atlas_data/resources by name, as (jobs table copy, card).

    `openb` (the 8,152-pod default trace, tenant = qos), `philly` (82,247 jobs, tenant = VC),
    `philly:<vc>` (one VC), `elasticflow` (10 clusters, tenant = cluster), `elasticflow:<cluster>`
    (one cluster: `cluster05`, `05` and `5` name the same one). Unknown names raise InputError
    listing the valid ones. `with_features` keeps the trace's declared feature columns
    (TRACE_FEATURES) in the table and names them in the card under `feature_columns`.
    """
    kind, _, part = str(name).partition(":")
    if kind not in SHIPPED_TRACES:
        raise InputError(f"unknown shipped trace {name!r} (choose {', '.join(SHIPPED_TRACES)})", where="--jobs")
    path = {"openb": default_pod_trace_path(), "philly": PHILLY_PATH, "elasticflow": ELASTICFLOW_PATH}[kind]
    if not path.is_file():
        raise InputError("shipped trace missing from this installation", path=str(path), where="--jobs")
    jobs = _shipped_cached(kind)
    card = {"source": f"{kind} (shipped)", "path": str(path), "trace": str(name)}
    if part:
        if kind == "openb":
            raise InputError("the openb trace has no parts; use 'openb'", where="--jobs")
        names = sorted(jobs["tenant"].unique())
        wanted = part
        if kind == "elasticflow" and part.isdigit():
            wanted = f"cluster{int(part):02d}"
        if wanted not in names:
            what = "VC" if kind == "philly" else "cluster"
            raise InputError(f"no {what} {part!r} in the {kind} trace (choose one of {', '.join(names)})", where="--jobs")
        jobs = jobs[jobs["tenant"] == wanted]
        card["tenant"] = wanted
    if with_features:
        card["feature_columns"] = TRACE_FEATURES[kind].as_dict()
    else:
        jobs = jobs.drop(columns=[c for c in OPENB_FEATURE_COLUMNS if c in jobs.columns])
    return jobs.reset_index(drop=True).copy(), card


def shipped_feature_columns(name: str) -> FeatureColumns:
    """The feature columns a shipped trace's importer declares (`openb`, `philly[:vc]`, `elasticflow[:cluster]`)."""
    return TRACE_FEATURES[str(name).split(":", 1)[0]]
