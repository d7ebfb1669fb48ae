"""Workloads of the fairness task: `venus()` (synthetic, shaped like ASTRAEA's Venus evaluation) and
`philly()` (the real Philly trace in the paper's second setup).

The real Venus two-week snapshot (11,304 jobs, 16 tenants, 100 × 8 GPUs) is not public in this
form, so `venus(seed)` draws a seeded workload with the statistics the ASTRAEA paper reports:

- cluster: 100 nodes × 8 GPUs (800 GPUs), all free at time 0;
- 11,304 jobs submitted over 14 days (Poisson, diurnal rate ×(1 ± 0.6), peak at 15:00);
- run times from the Venus CDF of the ASTRAEA paper: P(<10 min) = 67.3 %, P(<1 h) = 83.3 %,
  P(<6 h) = 90.6 %, P(<1 d) = 96.2 %, P(<6 d) = 99.6 %, the rest up to 14 d; log-uniform inside
  each band, shortest 10 s;
- GPU demand (not in the paper; a Helios-like mix, dense as the paper's down-scaled cluster):
  1: 45 %, 2: 10 %, 4: 13 %, 8: 20 %, 16: 8 %, 32: 3 %, 64: 1 % — about 5.7 GPUs per job,
  ≈ 95 % offered load over the two weeks;
- 16 tenants; quota weights ∝ 1/(k+1)^0.8 (a few large VCs, many small), each tenant submits a
  share of jobs ∝ its weight but its rate swings by day: every tenant has its own random busy
  days (×2.5 rate) and quiet days (×0.3), so demand peaks at different times as in the paper's
  Tenant-A / Tenant-B example (one saturated while the other idles);
- p̂ (`predicted_duration`) = p · exp(N(0, 0.9)), an error level like the ATLAS predictors
  (RMSLE ≈ 0.9), for astraea-p and themis.

`philly(seed)` — ASTRAEA's Philly setup on the shipped real trace (`atlas_data/resources/philly`):

- snapshot: `two_week_snapshot` — the 14 consecutive whole days (UTC) with the most submitted
  jobs, ties to the earliest start; on the shipped list that is 2017-10-09 – 2017-10-22, 26,936
  jobs of 11 VCs (the paper's snapshot had 44,329 jobs of 15 VCs; no 14-day window of the
  published list has that many, see docs/real-traces.md);
- cluster: 210 nodes × 8 GPUs = 1,680 GPUs, all free at time 0; durations and GPU demands as in
  the trace, submit times shifted so the first job is at 0;
- tenant = VC, quota ∝ the GPUs requested by the VC's jobs in the snapshot (`vc_quotas`: weight_k
  = Σ num_gpus over the VC's jobs, Q_k = 1,680 · weight_k / Σ weight); the table is saved by the
  fairness task as quota.csv;
- p̂ = p · exp(N(0, 0.9)) seeded, the same error model as `venus` (Philly publishes no predictions).

Pure numpy/pandas and seeded; may import numpy, pandas and atlas_data (for the shipped trace).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

DAY = 86400.0
VENUS_JOBS = 11_304
VENUS_TENANTS = 16
VENUS_NODES = 100
VENUS_GPUS_PER_NODE = 8
VENUS_DAYS = 14
RUNTIME_BANDS = ((10.0, 600.0, 0.673), (600.0, 3600.0, 0.833), (3600.0, 21600.0, 0.906),
                 (21600.0, DAY, 0.962), (DAY, 6 * DAY, 0.996), (6 * DAY, 14 * DAY, 1.0))
GPU_MIX = ((1, 0.45), (2, 0.10), (4, 0.13), (8, 0.20), (16, 0.08), (32, 0.03), (64, 0.01))
PREDICTION_SIGMA = 0.9

# The paper's Venus figures (ASTRAEA paper, evaluation), for side-by-side reporting.
PAPER_VENUS = {
    "astraea": {"sharing_loss_jobs": 0.071, "tenant_loss_intervals": 0.052, "overhead_pct": 0.8},
    "themis": {"sharing_loss_jobs": 0.197},
    "yarn-cs": {"sharing_loss_jobs": 0.736, "tenant_loss_intervals": 0.446},
    "gandiva-fair": {"tenant_loss_intervals": 0.080},
    "tiresias-l": {"tenant_loss_intervals": 0.490},
    "allox": {"tenant_loss_intervals": 0.069},
}
PHILLY_NODES = 210
PHILLY_GPUS_PER_NODE = 8
SNAPSHOT_DAYS = 14
PHILLY_PAPER_JOBS = 44_329
PHILLY_PAPER_VCS = 15
# The paper gives no Philly percentages, only these claims (ASTRAEA paper, evaluation).
PAPER_PHILLY_CLAIMS = (
    "ASTRAEA's advantage in sharing-loss jobs over Themis and YARN-CS is larger on Philly than on Venus "
    "(Venus: Themis / ASTRAEA = 2.8x, YARN-CS / ASTRAEA = 10.3x)",
    "tenant level: ASTRAEA has the fewest tenant-loss intervals, as on Venus "
    "(Venus: 1.3x to 9.42x fewer than Allox, Gandiva_fair, Tiresias-L, YARN-CS)",
)


@dataclass(frozen=True)
class Scenario:
    name: str
    jobs: pd.DataFrame  # jobs table (docs/data-formats.md) with predicted_duration
    tenant_weights: dict[str, float]
    nodes: int
    gpus_per_node: int
    description: str
    quota: pd.DataFrame | None = None  # the derived quota table, when the scenario derives one
    info: dict = field(default_factory=dict)


def _runtimes(rng: np.random.Generator, n: int) -> np.ndarray:
    u = rng.random(n)
    out = np.empty(n)
    lo_p = 0.0
    for lo, hi, p in RUNTIME_BANDS:
        mask = (u >= lo_p) & (u < p) if p < 1.0 else (u >= lo_p)
        k = int(mask.sum())
        out[mask] = np.exp(rng.uniform(np.log(lo), np.log(hi), k))
        lo_p = p
    return np.round(out)


def venus(seed: int = 0, n_jobs: int = VENUS_JOBS, days: int = VENUS_DAYS) -> Scenario:
    """The Venus-like workload; `n_jobs` over `days` days (the default is the paper's 11,304 jobs over
    14 days; a longer workload at Venus's load keeps jobs per day, with a 24-hour diurnal cycle and
    busy and quiet days of its own for every day)."""
    if days < 1 or n_jobs < 1:
        raise ValueError("venus needs at least one job and one day")
    rng = np.random.default_rng(seed)
    T = VENUS_TENANTS
    weights = 1.0 / np.arange(1, T + 1) ** 0.8
    weights = weights / weights.sum()
    names = [f"vc{k:02d}" for k in range(T)]
    # per tenant, per day activity factor
    activity = rng.choice([0.3, 1.0, 2.5], size=(T, days), p=[0.25, 0.5, 0.25])
    t, k, idx = _arrivals(rng, n_jobs, days, weights, activity)
    t, k = t[idx], k[idx]
    order = np.argsort(t, kind="stable")
    t, k = np.round(t[order], 1), k[order]
    gpu_values = np.array([g for g, _ in GPU_MIX])
    gpu_p = np.array([p for _, p in GPU_MIX])
    gpus = rng.choice(gpu_values, size=n_jobs, p=gpu_p / gpu_p.sum())
    duration = _runtimes(rng, n_jobs)
    predicted = _scenario_predictions(duration, rng)
    jobs = pd.DataFrame({
        "job_id": pd.Series([f"venus-{i:05d}" for i in range(n_jobs)], dtype=str),
        "submit_time": t,
        "duration": duration,
        "gpus": gpus.astype(np.int64),
        "tenant": pd.Series(np.asarray(names, dtype=object)[k], dtype=str),
        "weight": 1.0,
        "predicted_duration": predicted,
    })
    return Scenario(
        name="venus",
        jobs=jobs,
        tenant_weights=dict(zip(names, weights.tolist())),
        nodes=VENUS_NODES,
        gpus_per_node=VENUS_GPUS_PER_NODE,
        description=(f"synthetic Venus-like workload (seed {seed}): {n_jobs} jobs, {T} tenants, "
                     f"{VENUS_NODES}x{VENUS_GPUS_PER_NODE} GPUs, {days} days"),
    )


def _arrivals(rng: np.random.Generator, n_jobs: int, days: int, weights: np.ndarray,
              activity: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(time, tenant, chosen): candidate arrivals on (tenant, time) from a dense Poisson process, thinned
    by the diurnal cycle and each tenant's activity of the day, and the n_jobs of them kept (sorted
    positions). Batches of 4·n_jobs candidates are drawn until n_jobs are accepted: one is nearly always
    enough, but on a day or two where the heaviest tenants are quiet fewer than a quarter are, and a
    further batch (the same thinning, scaled by the first batch's largest acceptance) adds to it."""
    m, scale, times, tenants, kept = int(n_jobs * 4), None, [], [], []
    while sum(len(x) for x in kept) < n_jobs:
        t = rng.uniform(0.0, days * DAY, m)
        k = rng.choice(len(weights), size=m, p=weights)
        hour = (t % DAY) / 3600.0
        diurnal = 1.0 + 0.6 * np.cos(2 * np.pi * (hour - 15.0) / 24.0)
        day = np.minimum((t // DAY).astype(np.int64), days - 1)
        accept = diurnal * activity[k, day]
        scale = accept.max() if scale is None else scale
        accept = accept / scale
        kept.append(np.flatnonzero(rng.random(m) < accept) + m * len(times))
        times.append(t)
        tenants.append(k)
    idx = np.sort(rng.choice(np.concatenate(kept), size=n_jobs, replace=False))
    return np.concatenate(times), np.concatenate(tenants), idx


def _scenario_predictions(duration: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """p̂ = p·exp(N(0, PREDICTION_SIGMA)), rounded to seconds, at least 1 s: the scenarios' error model."""
    return np.maximum(1.0, np.round(duration * np.exp(rng.normal(0.0, PREDICTION_SIGMA, len(duration)))))


def two_week_snapshot(jobs: pd.DataFrame, days: int = SNAPSHOT_DAYS) -> tuple[pd.DataFrame, dict]:
    """The `days` consecutive whole days with the most submitted jobs (ties: the earliest start).

    Days are UTC calendar days of `submit_time` (seconds since 1970-01-01 UTC); a window is
    [day d 00:00, day d + days 00:00). Returns the jobs inside it (in submit, job_id order) and
    {start, end (ISO dates, end exclusive), start_s, jobs, tenants}.
    """
    if len(jobs) == 0:
        raise ValueError("no jobs to take a snapshot from")
    t = jobs["submit_time"].to_numpy(np.float64)
    day = np.floor(t / DAY).astype(np.int64)
    first, last = int(day.min()), int(day.max())
    per_day = np.bincount(day - first, minlength=last - first + 1)
    if len(per_day) <= days:
        start = first
    else:
        counts = np.convolve(per_day, np.ones(days, dtype=np.int64), mode="valid")  # counts[i] = days i..i+days-1
        start = first + int(np.argmax(counts))  # argmax: the first maximum
    keep = (day >= start) & (day < start + days)
    window = jobs[keep].sort_values(["submit_time", "job_id"], kind="mergesort").reset_index(drop=True)
    info = {
        "rule": f"the {days} consecutive whole UTC days with the most submitted jobs (ties: earliest)",
        "start": pd.Timestamp(start * DAY, unit="s").date().isoformat(),
        "end": pd.Timestamp((start + days) * DAY, unit="s").date().isoformat(),
        "start_s": float(start * DAY),
        "jobs": int(keep.sum()),
        "tenants": int(window["tenant"].nunique()),
    }
    return window, info


def vc_quotas(jobs: pd.DataFrame, total_gpus: int) -> pd.DataFrame:
    """Quota per VC ∝ the GPUs requested by its jobs: tenant, jobs, requested_gpus (Σ gpus),
    requested_gpu_seconds (Σ gpus·duration, for reference), share, quota_gpus = total · share.
    Sorted by requested GPUs (largest first), ties by tenant name."""
    g = jobs.assign(gpu_s=jobs["gpus"] * jobs["duration"]).groupby("tenant", sort=True)
    table = pd.DataFrame({
        "jobs": g.size(),
        "requested_gpus": g["gpus"].sum().astype(np.int64),
        "requested_gpu_seconds": g["gpu_s"].sum(),
    }).reset_index()
    table["share"] = table["requested_gpus"] / table["requested_gpus"].sum()
    table["quota_gpus"] = total_gpus * table["share"]
    order = np.lexsort((table["tenant"].to_numpy(), -table["requested_gpus"].to_numpy()))
    return table.iloc[order].reset_index(drop=True)


def philly(seed: int = 0) -> Scenario:
    from atlas_data.adapters import shipped_trace

    trace, card = shipped_trace("philly")
    window, info = two_week_snapshot(trace)
    t0 = window["submit_time"].min()
    total = PHILLY_NODES * PHILLY_GPUS_PER_NODE
    quota = vc_quotas(window, total)
    rng = np.random.default_rng([seed, 0x9111])
    duration = window["duration"].to_numpy(np.float64)
    predicted = _scenario_predictions(duration, rng)
    jobs = window.assign(submit_time=window["submit_time"] - t0, predicted_duration=predicted)
    info = {**info, "first_submit_s": float(t0), "paper_jobs": PHILLY_PAPER_JOBS, "paper_vcs": PHILLY_PAPER_VCS,
            "trace": card["path"]}
    return Scenario(
        name="philly",
        jobs=jobs,
        tenant_weights=dict(zip(quota["tenant"], quota["requested_gpus"].astype(float))),
        nodes=PHILLY_NODES,
        gpus_per_node=PHILLY_GPUS_PER_NODE,
        description=(f"real Philly trace, two-week snapshot {info['start']} to {info['end']} (exclusive): "
                     f"{info['jobs']} jobs, {info['tenants']} VCs, {PHILLY_NODES}x{PHILLY_GPUS_PER_NODE} GPUs, "
                     f"quota ∝ requested GPUs per VC, p̂ = p·exp({PREDICTION_SIGMA:g} Z) (seed {seed})"),
        quota=quota,
        info=info,
    )


SCENARIOS = {"venus": venus, "philly": philly}
