"""Synthetic PAI-2020 generator: writes the raw PAI-2020 trace layout (docs/data-formats.md), calibrated to the real trace.

The real tables are not available offline, so `benchmark data synth` writes header-less
`pai_job_table.csv`, `pai_task_table.csv`, `pai_instance_table.csv`, `pai_group_tag_table.csv`
and `pai_machine_spec.csv`, each with its `.header` file, exactly as published. The same code
path (`atlas_data.raw`) then reads either the synthetic or the real trace.

Generative model (all vectorised numpy; one `numpy.random.Generator(seed)`, so the same seed
gives byte-identical files):

- **users** (≈ 1.2·√N of them) with Zipf-like activity, a habitual log-duration, a failure rate
  and a GPU-type preference;
- **job groups** (the PAI `group` tag: same entry script and parameters): each belongs to one
  user and fixes workload, task structure, resource requests and a log-normal duration
  `log p ~ N(mu_g, sigma_g)` with `mu_g` = user habit + workload + size effects + group noise
  (normal plus a small exponential part, for the slight right skew of log p*) and a small
  `sigma_g` (≈ 0.28). Durations are clipped to [5 s, 2 days]: the sample skew of p* is governed
  by that far tail, and 2 days puts it near the published 11. 6 % of jobs are one-offs (a
  group of one); the rest come from recurring groups with a log-normal rate (median 1 job/day)
  over a long log-normal lifetime (median 90 days) that may have begun up to 4 trace spans
  before the trace, so ≈ 80 % of test jobs have a signature already seen in train and group
  history is informative. 8 % of jobs change their instance count (another signature
  bucket); 5 % are outliers with extra spread (N(0, 1.6) in log space);
- **tasks and instances**: single-instance jobs, single-task gangs, PS/worker(/evaluator)
  jobs and large CPU-only fan-outs; the instances of a gang start within seconds and end at
  different times, stragglers start late, 2 % of tasks have a failed-then-retried instance, so
  the fork-join label differs from any single instance;
- **placement** on the real PAI machine list (shipped, 1,897 machines): a task that names a GPU
  type (`gpu_type_spec`) runs on that type, others on P100/T4/V100/V100M32/MISC in proportion to
  the cluster's GPUs, CPU-only tasks on CPU machines;
- **status**: Failed by user/group habit (≈ 35 %), jobs still running at the end of the trace are
  Running (no end time), a few are Waiting; 0.3 % of finished jobs lack instance rows and a few
  have zero duration, as in the real trace;
- **arrivals**: ~61 days, diurnal (UTC+8 wall clock: trough ≈ 04:00, peak ≈ 16:00, ratio ≈ 3)
  and weekly (weekend ≈ 0.65 of a weekday), by inverting the cumulative intensity.

Calibration targets (published PAI-2020 / ATLAS figures; `benchmark data describe` prints the
achieved values next to them — see `CALIBRATION_TARGETS`):

| quantity | target | source |
|---|---|---|
| skew of p* (s) | ≈ 11.0 | ATLAS paper (11.02) |
| skew of log1p(p*) | small (0.17) | ATLAS paper |
| recurrent share of test jobs | ≈ 0.81 | ATLAS paper (81.3 %) |
| kept (Terminated, p* > 0) share of jobs | ≈ 0.61 | ATLAS: 730 k of ≈ 1.2 M jobs |
| instances per job | ≈ 6.2 | published trace: ≈ 7.5 M instances / 1.2 M jobs |
| share of instances in gang tasks (inst_num ≥ 2) | ≈ 0.85 | ATLAS paper |
| trace span | ≈ 61 days | PAI-2020 (July–August 2020) |

Times are integer seconds; t = 0 is 1970-01-01 00:00 UTC, so the UTC+8 wall clock is
`(t + 8 h) mod 24 h` and day 0 of the synthetic trace (`TIME_ORIGIN`) is a Monday 00:00 UTC+8.

May import: numpy, pandas, pyarrow, atlas_data.raw, atlas_data.errors.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from atlas_data.errors import InputError
from atlas_data.raw import COLUMNS, STEMS, bundled_machine_spec_path

DAY = 86_400
UTC8 = 8 * 3600
#: Monday 1970-01-05 00:00 in UTC+8
TIME_ORIGIN = 4 * DAY - UTC8

CALIBRATION_TARGETS = {
    "p_star_skew": (11.0, "ATLAS paper: skew of p* 11.02"),
    "y_skew": (0.17, "ATLAS paper: skew after log1p 0.17"),
    "test_recurrent_share": (0.813, "ATLAS paper: 81.3 % of test jobs recur"),
    "kept_share": (0.61, "ATLAS: ~730 k kept of ~1.2 M jobs"),
    "instances_per_job": (6.2, "published trace: ~7.5 M instances / 1.2 M jobs"),
    "gang_instance_share": (0.85, "ATLAS: 85 % of instances need gang scheduling"),
    "span_days": (61.0, "PAI-2020: two months"),
}

WORKLOADS = np.array(["", "bert", "ctr", "graphlearn", "inception", "nmt", "resnet", "rl", "vgg", "xlnet"])
WORKLOAD_P = np.array([0.62, 0.05, 0.07, 0.04, 0.04, 0.04, 0.05, 0.03, 0.03, 0.03])
WORKLOAD_EFFECT = np.array([0.0, 1.0, -0.3, 0.4, 0.6, 0.8, 0.5, 1.2, 0.3, 1.1])

TASK_NAMES = np.array(["worker", "ps", "evaluator", "tensorflow", "PyTorchWorker", "OpenmpiTracker", "OpenmpiWorker"])
GPU_TYPE_SPECS = np.array(["", "V100", "V100M32", "P100", "T4"])
# where a GPU type named by gpu_type_spec runs (index into the machine-type list below)
MACHINE_TYPES = np.array(["CPU", "MISC", "P100", "T4", "V100", "V100M32"])


@dataclass(frozen=True)
class SynthConfig:
    """Knobs of the generator (defaults are the calibrated values)."""

    jobs: int
    seed: int = 0
    span_days: float = 61.0
    one_off_share: float = 0.06       # share of jobs that are one-offs (a group of one)
    prehistory: float = 4.0           # recurring groups may start this many spans before the trace
    rate_median_per_day: float = 1.0  # jobs per day of a recurring group (log-normal)
    rate_sd: float = 1.3
    lifetime_median_days: float = 90.0
    lifetime_sd: float = 0.8
    mu_mean: float = 6.4              # mean log-duration (s) of a user's habit
    user_sd: float = 0.8
    group_sd: float = 0.8
    group_skew: float = 0.4           # exponential part of the group effect: right skew of log p*
    within_sd: float = 0.28
    outlier_share: float = 0.05
    fail_mean: float = 0.36
    max_duration_days: float = 2.0


# ---------------------------------------------------------------------------------------------
# helpers


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def hex_ids(rng: np.random.Generator, n: int, nbytes: int) -> pa.Array:
    """n random lowercase hex strings of 2*nbytes characters, without a Python loop."""
    raw = rng.integers(0, 256, size=(n, nbytes), dtype=np.uint8)
    chars = np.empty((n, 2 * nbytes), dtype=np.uint8)
    chars[:, 0::2] = _HEX[raw >> 4]
    chars[:, 1::2] = _HEX[raw & 15]
    return pa.array(chars.view(f"S{2 * nbytes}").ravel(), type=pa.binary(2 * nbytes)).cast(pa.string())


def _arrival_map(span_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Cumulative intensity on a 5-minute grid: maps operational time to wall-clock offsets."""
    step = 300.0
    grid = np.arange(0.0, span_s + step, step)
    local = TIME_ORIGIN + grid + UTC8
    hour = (local % DAY) / 3600.0
    dow = ((local // DAY) + 3) % 7
    rate = (1.0 + 0.5 * np.cos(2 * np.pi * (hour - 16.0) / 24.0)) * np.where(dow >= 5, 0.65, 1.0)
    cum = np.concatenate([[0.0], np.cumsum(rate[:-1] * step)])
    return grid, cum / cum[-1] * span_s


def _choice(rng, values, p, size):
    return values[rng.choice(len(values), size=size, p=np.asarray(p) / np.sum(p))]


def _load_machines() -> dict[str, np.ndarray]:
    import pandas as pd

    spec = pd.read_csv(bundled_machine_spec_path(), dtype={"machine": str, "gpu_type": str})
    return {"machine": spec["machine"].to_numpy(dtype=object), "gpu_type": spec["gpu_type"].to_numpy(dtype=object),
            "cap_cpu": spec["cap_cpu"].to_numpy(), "cap_mem": spec["cap_mem"].to_numpy(),
            "cap_gpu": spec["cap_gpu"].to_numpy()}


# ---------------------------------------------------------------------------------------------
# the generator


def synthesize(jobs: int, seed: int = 0, config: SynthConfig | None = None) -> dict[str, pa.Table]:
    """Generate the five raw tables (all columns, raw layout) as Arrow tables."""
    if jobs < 10:
        raise InputError(f"--jobs must be at least 10 (got {jobs})")
    cfg = config or SynthConfig(jobs=jobs, seed=seed)
    rng = np.random.default_rng(cfg.seed)
    span = cfg.span_days * DAY
    n = int(jobs)

    # users ------------------------------------------------------------------------------
    n_users = int(np.clip(round(1.2 * np.sqrt(n)), 8, 1400))
    user_w = rng.pareto(1.3, n_users) + 1.0
    user_w /= user_w.sum()
    user_mu = rng.normal(cfg.mu_mean, cfg.user_sd, n_users)
    user_fail = cfg.fail_mean * np.exp(rng.normal(-0.08, 0.4, n_users))
    user_spec = rng.choice(len(GPU_TYPE_SPECS), size=n_users, p=[0.55, 0.15, 0.08, 0.12, 0.10])
    user_spec_p = rng.uniform(0.1, 0.7, n_users)
    user_names = hex_ids(rng, n_users, 6)

    # groups and their jobs' operational times --------------------------------------------
    # One-off jobs (a group of one, submitted inside the trace) plus recurring groups that
    # run at a group-specific rate over a long lifetime, which may have begun before the
    # trace. A pool of i.i.d. recurring groups is cut where the expected number of in-span
    # jobs reaches the target; ~3 % of jobs are then dropped at random to land on exactly n.
    n_one = int(round(cfg.one_off_share * n))
    pool = max(n, 2000)
    birth = rng.uniform(-cfg.prehistory * span, span, pool)
    life = np.minimum(np.exp(rng.normal(np.log(cfg.lifetime_median_days * DAY), cfg.lifetime_sd, pool)), 400 * DAY)
    rate = np.exp(rng.normal(np.log(cfg.rate_median_per_day), cfg.rate_sd, pool)) / DAY
    # the cap keeps one group from dominating a small trace
    cap = max(20, min(4000, n // 100))
    count = 1 + np.minimum(rng.poisson(rate * life), cap).astype(np.int64)
    overlap = np.clip(np.minimum(birth + life, span) - np.maximum(birth, 0.0), 0.0, None) / life
    expected = ((birth >= 0) & (birth < span)) + (count - 1) * overlap
    G = int(np.searchsorted(np.cumsum(expected), 1.03 * (n - n_one))) + 1
    if G > pool:
        raise RuntimeError("synthetic generator group pool too small")
    birth = np.concatenate([birth[:G], rng.uniform(0, span, n_one)])
    life = np.concatenate([life[:G], np.ones(n_one)])
    count = np.concatenate([count[:G], np.ones(n_one, dtype=np.int64)])
    G = len(birth)
    job_group = np.repeat(np.arange(G), count)
    first = np.zeros(len(job_group), dtype=bool)
    first[np.concatenate([[0], np.cumsum(count)[:-1]])] = True
    u_op = np.where(first, birth[job_group], birth[job_group] + rng.uniform(0, 1, len(job_group)) * life[job_group])
    inside = (u_op >= 0) & (u_op < span)
    job_group, u_op = job_group[inside], u_op[inside]
    if len(job_group) < n:  # the expectation undershot (tiny n): fall back to sampling with replacement
        pick = np.sort(rng.choice(len(job_group), size=n, replace=True))
    else:
        pick = np.sort(rng.choice(len(job_group), size=n, replace=False))
    job_group, u_op = job_group[pick], u_op[pick]
    grid, cum = _arrival_map(span)
    submit = TIME_ORIGIN + np.floor(np.interp(u_op, cum, grid)).astype(np.int64)
    order = np.lexsort((job_group, submit))
    job_group, submit = job_group[order], submit[order]

    # group attributes (only for groups that kept jobs) ----------------------------------------
    used, job_g = np.unique(job_group, return_inverse=True)
    G = len(used)
    g_user = rng.choice(n_users, size=G, p=user_w)
    g_work = rng.choice(len(WORKLOADS), size=G, p=WORKLOAD_P)
    # structure: 0 single instance, 1 single-task gang, 2 ps/worker(+evaluator), 3 CPU fan-out, 4 mpi
    g_kind = rng.choice(5, size=G, p=[0.55, 0.22, 0.14, 0.02, 0.07])
    gang_sizes = np.array([2, 2, 4, 4, 8, 8, 16, 32])
    g_workers = np.select(
        [g_kind == 0, g_kind == 1, g_kind == 2, g_kind == 3, g_kind == 4],
        [np.ones(G, np.int64), gang_sizes[rng.integers(0, len(gang_sizes), G)],
         gang_sizes[rng.integers(0, len(gang_sizes), G)], rng.integers(10, 120, G),
         gang_sizes[rng.integers(0, 6, G)]])
    g_ps = np.where(g_kind == 2, rng.integers(1, 5, G), 0)
    g_eval = (g_kind == 2) & (rng.random(G) < 0.3)
    g_tracker = g_kind == 4
    g_gpu = _choice(rng, np.array([0, 25, 50, 100, 200, 400, 800]), [0.06, 0.15, 0.25, 0.34, 0.08, 0.06, 0.06], G)
    g_gpu = np.where(g_kind == 3, 0, g_gpu)
    g_gpu = np.where((g_kind == 4) & (g_gpu == 0), 100, g_gpu)
    g_cpu = _choice(rng, np.array([200, 400, 600, 800, 1200, 1600, 3200]), [0.1, 0.2, 0.25, 0.2, 0.12, 0.08, 0.05], G)
    g_mem = np.round(np.exp(rng.normal(np.log(20), 0.8, G)), 1)
    gpu_job = g_gpu > 0
    wants_spec = gpu_job & (rng.random(G) < user_spec_p[g_user]) & (user_spec[g_user] > 0)
    g_spec = np.where(wants_spec, user_spec[g_user], 0)
    total_gpu = g_gpu * g_workers / 100.0
    g_mu = (user_mu[g_user] + WORKLOAD_EFFECT[g_work] + 0.25 * np.log2(1 + total_gpu)
            + np.where(g_kind == 3, -0.8, 0.0) + rng.normal(0, cfg.group_sd, G)
            + rng.exponential(cfg.group_skew, G) - cfg.group_skew)
    g_sigma = np.exp(rng.normal(np.log(cfg.within_sd), 0.35, G))
    g_fail = np.clip(user_fail[g_user] * np.exp(rng.normal(-0.045, 0.3, G)), 0, 0.95)
    g_names = hex_ids(rng, G, 16)

    # jobs ----------------------------------------------------------------------------------
    j_user = g_user[job_g]
    z = rng.standard_normal(n)
    outlier = rng.random(n) < cfg.outlier_share
    logd = g_mu[job_g] + g_sigma[job_g] * z + np.where(outlier, rng.normal(0, 1.6, n), 0.0)
    duration = np.clip(np.exp(logd), 5.0, cfg.max_duration_days * DAY)
    queue = np.minimum(np.exp(rng.normal(np.log(8.0), 1.6, n)) * (1 + np.log1p(total_gpu[job_g])), 2 * DAY)
    status = np.full(n, "Terminated", dtype=object)
    failed = rng.random(n) < g_fail[job_g]
    status[failed] = "Failed"
    run = np.where(failed, duration * rng.uniform(0.01, 1.0, n), duration)
    start = submit + np.floor(queue).astype(np.int64)
    end_trace = TIME_ORIGIN + int(span)
    waiting = start >= end_trace
    running = ~waiting & (start + run >= end_trace)
    status[running] = "Running"
    status[waiting] = "Waiting"
    # a few finished jobs with zero duration (instances start and end in the same second)
    zero = (rng.random(n) < 0.002) & (status == "Terminated")
    run = np.where(zero, 0.0, run)
    # workers sometimes asked for another size -> another signature bucket
    resize = (rng.random(n) < 0.08) & (g_workers[job_g] >= 2)
    j_workers = np.where(resize, np.maximum(1, g_workers[job_g] * np.where(rng.random(n) < 0.5, 2, 0.5)), g_workers[job_g]).astype(np.int64)
    job_names = hex_ids(rng, n, 12)
    inst_ids = hex_ids(rng, n, 16)

    # tasks: up to 4 per job (main, ps, evaluator, tracker) ---------------------------------------
    main_name = np.select([g_kind == 2, g_kind == 4, g_kind == 3], [0, 6, 3], default=np.where(rng.random(G) < 0.5, 0, 4))
    t_job = []
    t_name = []
    t_inst = []
    t_scale = []   # task duration as a share of the job's run
    t_offset = []  # task start after the job starts
    t_gpu = []
    t_cpu = []
    t_mem = []
    all_jobs = np.arange(n)
    gj = job_g
    # main task
    t_job.append(all_jobs); t_name.append(main_name[gj]); t_inst.append(j_workers)
    t_scale.append(np.ones(n)); t_offset.append(rng.uniform(0, 20, n) * (g_kind[gj] == 2))
    t_gpu.append(g_gpu[gj]); t_cpu.append(g_cpu[gj]); t_mem.append(g_mem[gj])
    # ps
    sel = np.flatnonzero(g_ps[gj] > 0)
    t_job.append(sel); t_name.append(np.full(len(sel), 1)); t_inst.append(g_ps[gj][sel])
    t_scale.append(np.full(len(sel), 1.0)); t_offset.append(np.zeros(len(sel)))
    t_gpu.append(np.zeros(len(sel))); t_cpu.append(np.full(len(sel), 800.0)); t_mem.append(np.full(len(sel), 30.0))
    # evaluator
    sel = np.flatnonzero(g_eval[gj])
    t_job.append(sel); t_name.append(np.full(len(sel), 2)); t_inst.append(np.ones(len(sel), np.int64))
    t_scale.append(rng.uniform(0.3, 1.0, len(sel))); t_offset.append(rng.uniform(0, 60, len(sel)))
    t_gpu.append(np.full(len(sel), 50.0)); t_cpu.append(np.full(len(sel), 400.0)); t_mem.append(np.full(len(sel), 10.0))
    # mpi tracker
    sel = np.flatnonzero(g_tracker[gj])
    t_job.append(sel); t_name.append(np.full(len(sel), 5)); t_inst.append(np.ones(len(sel), np.int64))
    t_scale.append(np.full(len(sel), 1.0)); t_offset.append(np.zeros(len(sel)))
    t_gpu.append(np.zeros(len(sel))); t_cpu.append(np.full(len(sel), 100.0)); t_mem.append(np.full(len(sel), 2.0))
    t_job = np.concatenate(t_job); t_name = np.concatenate(t_name); t_inst = np.concatenate(t_inst).astype(np.int64)
    t_scale = np.concatenate(t_scale); t_offset = np.concatenate(t_offset)
    t_gpu = np.concatenate(t_gpu).astype(float); t_cpu = np.concatenate(t_cpu).astype(float); t_mem = np.concatenate(t_mem).astype(float)
    torder = np.lexsort((t_name, t_job))
    t_job, t_name, t_inst, t_scale, t_offset = t_job[torder], t_name[torder], t_inst[torder], t_scale[torder], t_offset[torder]
    t_gpu, t_cpu, t_mem = t_gpu[torder], t_cpu[torder], t_mem[torder]
    n_tasks = len(t_job)
    t_status = status[t_job]

    # placement type per task
    machines = _load_machines()
    m_type = np.searchsorted(MACHINE_TYPES, machines["gpu_type"].astype(str))
    gpus_per_type = np.bincount(m_type, weights=machines["cap_gpu"], minlength=len(MACHINE_TYPES))
    free_types = gpus_per_type[1:] / gpus_per_type[1:].sum()
    spec_to_type = np.array([0, 4, 5, 2, 3])  # GPU_TYPE_SPECS -> MACHINE_TYPES
    t_spec = g_spec[gj][t_job]
    t_type = np.where(t_spec > 0, spec_to_type[t_spec], 1 + rng.choice(len(free_types), size=n_tasks, p=free_types))
    t_type = np.where(t_gpu > 0, t_type, 0)
    t_gpu_name = np.where(t_gpu > 0, MACHINE_TYPES[t_type], "")

    # instances -------------------------------------------------------------------------------
    i_task = np.repeat(np.arange(n_tasks), t_inst)
    n_inst = len(i_task)
    first_of_task = np.zeros(n_inst, dtype=bool)
    first_of_task[np.concatenate([[0], np.cumsum(t_inst)[:-1]])] = True
    i_job = t_job[i_task]
    straggler = rng.random(n_inst) < 0.05
    i_start = (start[i_job] + t_offset[i_task] + rng.uniform(0, 5, n_inst)
               + np.where(straggler & ~first_of_task, rng.uniform(0, 300, n_inst), 0.0))
    i_start = np.where(first_of_task, start[i_job] + t_offset[i_task], i_start)
    shave = np.where(first_of_task, 0.0, rng.beta(1.0, 15.0, n_inst))
    task_run = run[i_job] * t_scale[i_task]
    i_end = np.maximum(i_start, i_start + task_run * (1.0 - shave))
    i_start = np.floor(i_start).astype(np.int64)
    i_end = np.floor(i_end).astype(np.int64)
    i_status = status[i_job].copy()
    unfinished = (i_status == "Running") | (i_status == "Waiting")
    i_status[(i_status == "Running") & (i_start >= end_trace)] = "Waiting"
    i_end_valid = ~unfinished
    i_start_valid = i_status != "Waiting"
    # a failed-then-retried attempt for 2 % of the tasks of finished jobs
    retry = first_of_task & (status[i_job] == "Terminated") & (rng.random(n_inst) < 0.02)
    r_idx = np.flatnonzero(retry)
    r_start = i_start[r_idx]
    r_end = r_start + np.floor((i_end[r_idx] - r_start) * rng.uniform(0.0, 0.3, len(r_idx))).astype(np.int64)
    # the retry restarts later: shift the original (successful) attempt after the failure
    delay = (r_end - r_start) + rng.integers(5, 60, len(r_idx))
    i_start[r_idx] += delay
    i_end[r_idx] += delay
    # jobs without instance rows (0.3 % of finished jobs)
    no_inst_job = (rng.random(n) < 0.003) & (status == "Terminated")
    keep_inst = ~no_inst_job[i_job]

    # machine per instance
    i_type = t_type[i_task]
    by_type = [np.flatnonzero(m_type == k) for k in range(len(MACHINE_TYPES))]
    i_machine = np.empty(n_inst, dtype=np.int64)
    for k, members in enumerate(by_type):  # six types, not a per-job loop
        sel = np.flatnonzero(i_type == k)
        i_machine[sel] = members[rng.integers(0, len(members), len(sel))]
    r_machine = i_machine[r_idx]

    # assemble arrow tables ------------------------------------------------------------------------
    task_names_arr = pa.array(TASK_NAMES)
    inst_names = hex_ids(rng, n_inst + len(r_idx), 16)
    worker_names = hex_ids(rng, n_inst + len(r_idx), 16)
    machine_arr = pa.array(machines["machine"].astype(str))

    all_i = np.concatenate([np.arange(n_inst), r_idx])
    all_start = np.concatenate([i_start, r_start])
    all_end = np.concatenate([i_end, r_end])
    all_status = np.concatenate([i_status, np.full(len(r_idx), "Failed", dtype=object)])
    all_machine = np.concatenate([i_machine, r_machine])
    all_keep = np.concatenate([keep_inst, keep_inst[r_idx]])
    all_end_valid = np.concatenate([i_end_valid, np.ones(len(r_idx), bool)])
    all_start_valid = np.concatenate([i_start_valid, np.ones(len(r_idx), bool)])
    # rows of one job together, attempts in time order
    iorder = np.lexsort((all_start, i_task[all_i]))
    iorder = iorder[all_keep[iorder]]
    ii = all_i[iorder]
    inst_table = pa.table({
        "job_name": job_names.take(pa.array(i_job[ii])),
        "task_name": task_names_arr.take(pa.array(t_name[i_task[ii]])),
        "inst_name": inst_names.take(pa.array(iorder)),
        "worker_name": worker_names.take(pa.array(iorder)),
        "inst_id": inst_ids.take(pa.array(i_job[ii])),
        "status": pa.array(all_status[iorder].astype(str)),
        "start_time": pa.array(all_start[iorder], mask=~all_start_valid[iorder]),
        "end_time": pa.array(all_end[iorder], mask=~all_end_valid[iorder]),
        "machine": machine_arr.take(pa.array(all_machine[iorder])),
    })

    # task rows: times from their instances
    t_start = np.full(n_tasks, np.iinfo(np.int64).max)
    np.minimum.at(t_start, i_task, i_start)
    t_end = np.zeros(n_tasks, dtype=np.int64)
    np.maximum.at(t_end, i_task, i_end)
    t_done = (t_status == "Terminated") | (t_status == "Failed")
    task_table = pa.table({
        "job_name": job_names.take(pa.array(t_job)),
        "task_name": task_names_arr.take(pa.array(t_name)),
        "inst_num": pa.array(t_inst.astype(float)),
        "status": pa.array(t_status.astype(str)),
        "start_time": pa.array(t_start, mask=t_status == "Waiting"),
        "end_time": pa.array(t_end, mask=~t_done),
        "plan_cpu": pa.array(t_cpu),
        "plan_mem": pa.array(t_mem),
        "plan_gpu": pa.array(t_gpu, mask=t_gpu <= 0),
        "gpu_type": pa.array(t_gpu_name.astype(str), mask=t_gpu <= 0),
    })

    j_end = np.zeros(n, dtype=np.int64)
    np.maximum.at(j_end, i_job, i_end)
    j_done = (status == "Terminated") | (status == "Failed")
    job_table = pa.table({
        "job_name": job_names,
        "inst_id": inst_ids,
        "user": user_names.take(pa.array(j_user)),
        "status": pa.array(status.astype(str)),
        "start_time": pa.array(submit),
        "end_time": pa.array(j_end, mask=~j_done),
    })

    tagged = np.flatnonzero(rng.random(n) < 0.96)
    group_table = pa.table({
        "inst_id": inst_ids.take(pa.array(tagged)),
        "user": user_names.take(pa.array(j_user[tagged])),
        "gpu_type_spec": pa.array(GPU_TYPE_SPECS[g_spec[job_g[tagged]]].astype(str)),
        "group": g_names.take(pa.array(job_g[tagged])),
        "workload": pa.array(WORKLOADS[g_work[job_g[tagged]]].astype(str)),
    })

    spec_table = pa.table({
        "machine": machine_arr,
        "gpu_type": pa.array(machines["gpu_type"].astype(str)),
        "cap_cpu": pa.array(machines["cap_cpu"].astype(np.int64)),
        "cap_mem": pa.array(machines["cap_mem"].astype(np.int64)),
        "cap_gpu": pa.array(machines["cap_gpu"].astype(np.int64)),
    })
    return {"job": job_table, "task": task_table, "instance": inst_table,
            "group_tag": group_table, "machine_spec": spec_table}


def write_raw(tables: dict[str, pa.Table], out_dir: Path | str) -> dict[str, Path]:
    """Write header-less `pai_<table>.csv` plus `pai_<table>.header`, as published."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, table in tables.items():
        stem = STEMS[key]
        assert table.column_names == COLUMNS[key], (key, table.column_names)
        tmp = out_dir / f".{stem}.csv.tmp"
        pacsv.write_csv(table, tmp, write_options=pacsv.WriteOptions(
            include_header=False, quoting_style="none", batch_size=1 << 16))
        os.replace(tmp, out_dir / f"{stem}.csv")
        (out_dir / f"{stem}.header").write_text(",".join(COLUMNS[key]) + "\n")
        paths[key] = out_dir / f"{stem}.csv"
    return paths


def synthesize_to_dir(jobs: int, seed: int, out_dir: Path | str) -> dict[str, Path]:
    """Generate and write the raw tables into `out_dir` as they are (a library helper: the
    `benchmark data synth` command writes through atlas_data.outputs instead)."""
    return write_raw(synthesize(jobs, seed), out_dir)
