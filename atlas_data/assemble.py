"""Raw PAI tables -> one row per job (the `jobs` step of the ATLAS pipeline).

Joins the job table with per-job task resources (task table), and the group tag (user-specified GPU type, group,
workload). Only submit-time columns survive; the instance table is the label step's business.

Resources per job: `cpu` = Σ_t plan_cpu_t/100 · inst_num_t (cores), `gpu` = Σ_t plan_gpu_t/100 ·
inst_num_t (GPUs), `mem` = Σ_t plan_mem_t · inst_num_t (GB), `n_instances` = Σ_t inst_num_t,
`n_tasks`, `max_task_instances`. Missing plan values count as 0 and a missing inst_num as 1.

May import: numpy, pandas, pyarrow, atlas_data.raw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from atlas_data.raw import RawTables

JOB_COLUMNS = ["job_name", "user", "status", "submit_time", "group", "workload", "gpu_type_spec",
               "n_tasks", "n_instances", "max_task_instances", "cpu", "gpu", "mem"]


def _as_arrow(table) -> pa.Table:
    return pa.Table.from_pandas(table, preserve_index=False) if isinstance(table, pd.DataFrame) else table


def task_resources(tasks: pa.Table | pd.DataFrame) -> pd.DataFrame:
    """Per job: n_tasks, n_instances, max_task_instances, cpu, gpu, mem (requested totals)."""
    tasks = _as_arrow(tasks)
    inst = pc.fill_null(tasks.column("inst_num").cast(pa.float64()), 1.0)

    def total(col: str, scale: float) -> pa.ChunkedArray:
        return pc.multiply(pc.multiply(pc.fill_null(tasks.column(col).cast(pa.float64()), 0.0), inst), scale)

    table = pa.table({"job_name": tasks.column("job_name"), "inst": inst, "cpu": total("plan_cpu", 0.01),
                      "gpu": total("plan_gpu", 0.01), "mem": total("plan_mem", 1.0)})
    agg = table.group_by("job_name").aggregate(
        [("inst", "count"), ("inst", "sum"), ("inst", "max"), ("cpu", "sum"), ("gpu", "sum"), ("mem", "sum")])
    out = agg.to_pandas().rename(columns={
        "inst_count": "n_tasks", "inst_sum": "n_instances", "inst_max": "max_task_instances",
        "cpu_sum": "cpu", "gpu_sum": "gpu", "mem_sum": "mem"})
    return out[["job_name", "n_tasks", "n_instances", "max_task_instances", "cpu", "gpu", "mem"]]


def group_tags(group_tag: pa.Table | pd.DataFrame | None) -> pd.DataFrame:
    """inst_id -> group, workload, gpu_type_spec (first row per inst_id; empty strings = unknown)."""
    cols = ["inst_id", "group", "workload", "gpu_type_spec"]
    if group_tag is None:
        return pd.DataFrame({c: pd.Series([], dtype="str") for c in cols})
    df = _as_arrow(group_tag).select(cols).to_pandas()
    df = df.drop_duplicates("inst_id", keep="first")
    for c in cols[1:]:
        df[c] = df[c].fillna("").astype("str")
    return df


def jobs_from_raw(raw: RawTables | dict) -> pd.DataFrame:
    """One row per job of the job table with its submit-time attributes (JOB_COLUMNS)."""
    job = raw["job"]
    jobs = _as_arrow(job).select(["job_name", "inst_id", "user", "status", "start_time"]).to_pandas()
    jobs = jobs.rename(columns={"start_time": "submit_time"})
    jobs["user"] = jobs["user"].fillna("").astype("str")
    tags = group_tags(raw.get("group_tag"))
    jobs = jobs.merge(tags, on="inst_id", how="left")
    for c in ("group", "workload", "gpu_type_spec"):
        jobs[c] = jobs[c].fillna("").astype("str")
    res = task_resources(raw["task"])
    jobs = jobs.merge(res, on="job_name", how="left")
    jobs["n_tasks"] = jobs["n_tasks"].fillna(0).astype(np.int64)
    for c in ("n_instances", "max_task_instances", "cpu", "gpu", "mem"):
        jobs[c] = jobs[c].fillna(0.0).astype(float)
    return jobs.drop(columns=["inst_id"])
