"""Run a cluster policy on the engine and turn its ledgers into the fairness metrics (docs/fairness.md).

`simulate_fairness(jobs, policy)` -> FairnessRun: per-job table, per-(tenant, window) table and the
metric dict. Metric definitions (names as in the results rows):

- `sharing_loss_jobs`: share of jobs with ρ_job < 0.95, ρ_job over [submit, completion].
- `tenant_loss_intervals`: share of (tenant, window) pairs with ρ_tenant < 1 among the pairs in
  which the tenant had demand (eq8 fair share > 0). Inside a window ρ_tenant = attained / ∫min(D, Q):
  the demand-aware share, whatever fair share the scheduler used, so a tenant that simply had no
  work is not counted as a loss (with eq16 every idle tenant would be, as the ASTRAEA paper notes for its simulator).
- `avg_jct` (C − r), `avg_slowdown` / `p99_slowdown` = JCT / true duration = (pending + running) /
  running, where cold-start time counts as pending (no progress).
- `makespan` = last completion (time origin = first submit), `preemptions` (leases not renewed),
  `overhead_pct` = 100 × mean per-job cold-start seconds / avg JCT (checkpoints are overlapped
  with training and restored inside the cold start, see schedulers.cluster.rounds),
  `utilisation` = held GPU·s / (GPUs × makespan), `completed`.

May import numpy, pandas and schedulers.*.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from schedulers.engine import Engine
from schedulers.jobs import JobSet

SHARING_LOSS_RHO = 0.95
METRICS = ("sharing_loss_jobs", "tenant_loss_intervals", "avg_jct", "avg_slowdown", "p99_slowdown",
           "makespan", "preemptions", "overhead_pct", "utilisation", "completed")
JOB_COLUMNS = ("job_id", "tenant", "gpus", "submit_time", "start_time", "completion_time", "run_time",
               "gpu_seconds", "rho", "preemptions")


@dataclass(frozen=True, eq=False)
class FairnessRun:
    policy: str
    jobs: pd.DataFrame
    tenant_intervals: pd.DataFrame
    metrics: dict = field(default_factory=dict)


def simulate_fairness(jobs: JobSet, policy) -> FairnessRun:
    """Simulate one cluster policy (an instance of ClusterPolicy) on `jobs`."""
    t0 = time.perf_counter()
    result = Engine(jobs, policy, machines=None).run()
    wall = time.perf_counter() - t0
    ltgf = policy.ltgf
    n = jobs.n
    completion = result.completion_time
    makespan = float(np.nanmax(completion)) if n else 0.0
    gpus = jobs.gpus.astype(np.int64)
    gpu_seconds = np.asarray(ltgf.job_att, np.float64)
    fair = np.asarray(ltgf.job_fair, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(fair > 0, gpu_seconds / np.where(fair > 0, fair, 1.0), np.where(gpu_seconds > 0, np.inf, 0.0))
    run_time = gpu_seconds / gpus
    jct = completion - jobs.submit_time
    slowdown = jct / jobs.size
    overhead_s = np.asarray(policy.cold_spent, np.float64)
    preempt = np.asarray(policy.preempted, np.int64)
    table = pd.DataFrame({
        "job_id": pd.Series(jobs.job_id.astype(str), dtype=str),
        "tenant": pd.Series(np.asarray(jobs.tenant_names, dtype=object)[jobs.tenant] if n else [], dtype=str),
        "gpus": gpus,
        "submit_time": jobs.submit_time,
        "start_time": result.start_time,
        "completion_time": completion,
        "run_time": run_time,
        "gpu_seconds": gpu_seconds,
        "rho": rho,
        "preemptions": preempt,
        "duration": jobs.size,
        "jct": jct,
        "slowdown": slowdown,
        "overhead_s": overhead_s,
    })
    rows = ltgf.window_table(makespan)
    win = pd.DataFrame(rows, columns=["tenant_code", "window", "start_s", "attained_gpu_s", "fair_gpu_s", "rho"])
    win.insert(0, "tenant", pd.Series(np.asarray(jobs.tenant_names, dtype=object)[win["tenant_code"].to_numpy(np.int64)], dtype=str))
    win = win.drop(columns="tenant_code")
    win["cum_rho"] = _cumulative_rho(win)
    counted = win["fair_gpu_s"] > 0
    done = int(np.isfinite(completion).sum())
    avg_jct = float(np.mean(jct)) if n else math.nan
    metrics = {
        "sharing_loss_jobs": float(np.mean(rho < SHARING_LOSS_RHO)) if n else math.nan,
        "tenant_loss_intervals": float(np.mean(win.loc[counted, "rho"] < 1.0 - 1e-9)) if counted.any() else math.nan,
        "avg_jct": avg_jct,
        "avg_slowdown": float(np.mean(slowdown)) if n else math.nan,
        "p99_slowdown": float(np.percentile(slowdown, 99)) if n else math.nan,
        "makespan": makespan,
        "preemptions": int(preempt.sum()),
        "overhead_pct": float(100.0 * overhead_s.mean() / avg_jct) if n and avg_jct > 0 else 0.0,
        "utilisation": float(gpu_seconds.sum() / (policy.M * makespan)) if makespan > 0 else math.nan,
        "completed": done,
        "fair_share": policy.fair_share,
        "rounds": int(policy.rounds),
        "events": int(result.events),
        "sim_seconds": round(wall, 3),
    }
    return FairnessRun(policy.name, table, win, metrics)


def _cumulative_rho(win: pd.DataFrame) -> np.ndarray:
    att = win.groupby("tenant", sort=False)["attained_gpu_s"].cumsum().to_numpy()
    fair = win.groupby("tenant", sort=False)["fair_gpu_s"].cumsum().to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(fair > 0, att / np.where(fair > 0, fair, 1.0), np.nan)
