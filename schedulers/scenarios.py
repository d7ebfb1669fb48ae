"""Synthetic workloads for the fairness task; `venus()` is shaped like ASTRAEA's Venus evaluation.

The real Venus two-week snapshot (11,304 jobs, 16 tenants, 100 × 8 GPUs) is not public in this
form, so `venus(seed)` draws a seeded workload with the statistics the seed reports:

- cluster: 100 nodes × 8 GPUs (800 GPUs), all free at time 0;
- 11,304 jobs submitted over 14 days (Poisson, diurnal rate ×(1 ± 0.6), peak at 15:00);
- run times from the Venus CDF of the seed (§3): P(<10 min) = 67.3 %, P(<1 h) = 83.3 %,
  P(<6 h) = 90.6 %, P(<1 d) = 96.2 %, P(<6 d) = 99.6 %, the rest up to 14 d; log-uniform inside
  each band, shortest 10 s;
- GPU demand (not in the seed; a Helios-like mix, dense as the paper's down-scaled cluster):
  1: 45 %, 2: 10 %, 4: 13 %, 8: 20 %, 16: 8 %, 32: 3 %, 64: 1 % — about 5.7 GPUs per job,
  ≈ 95 % offered load over the two weeks;
- 16 tenants; quota weights ∝ 1/(k+1)^0.8 (a few large VCs, many small), each tenant submits a
  share of jobs ∝ its weight but its rate swings by day: every tenant has its own random busy
  days (×2.5 rate) and quiet days (×0.3), so demand peaks at different times as in the seed's
  Tenant-A / Tenant-B example (one saturated while the other idles);
- p̂ (`predicted_duration`) = p · exp(N(0, 0.9)), an error level like the ATLAS predictors
  (RMSLE ≈ 0.9), for astraea-p and themis.

Pure numpy/pandas, seeded; may import numpy and pandas only.
"""

from __future__ import annotations

from dataclasses import dataclass

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

# The paper's Venus figures (SPEC §7 / seed §15–16), for side-by-side reporting.
PAPER_VENUS = {
    "astraea": {"sharing_loss_jobs": 0.071, "tenant_loss_intervals": 0.052, "overhead_pct": 0.8},
    "themis": {"sharing_loss_jobs": 0.197},
    "yarn-cs": {"sharing_loss_jobs": 0.736, "tenant_loss_intervals": 0.446},
    "gandiva-fair": {"tenant_loss_intervals": 0.080},
    "tiresias-l": {"tenant_loss_intervals": 0.490},
    "allox (not implemented)": {"tenant_loss_intervals": 0.069},
}


@dataclass(frozen=True)
class Scenario:
    name: str
    jobs: pd.DataFrame  # jobs table (SPEC §3) with predicted_duration
    tenant_weights: dict[str, float]
    nodes: int
    gpus_per_node: int
    description: str


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


def venus(seed: int = 0, n_jobs: int = VENUS_JOBS) -> Scenario:
    rng = np.random.default_rng(seed)
    T = VENUS_TENANTS
    weights = 1.0 / np.arange(1, T + 1) ** 0.8
    weights = weights / weights.sum()
    names = [f"vc{k:02d}" for k in range(T)]
    # per tenant, per day activity factor
    activity = rng.choice([0.3, 1.0, 2.5], size=(T, VENUS_DAYS), p=[0.25, 0.5, 0.25])
    # candidate arrivals by thinning a dense Poisson process on (tenant, time)
    horizon = VENUS_DAYS * DAY
    m = int(n_jobs * 4)
    t = rng.uniform(0.0, horizon, m)
    k = rng.choice(T, size=m, p=weights)
    hour = (t % DAY) / 3600.0
    diurnal = 1.0 + 0.6 * np.cos(2 * np.pi * (hour - 15.0) / 24.0)
    day = np.minimum((t // DAY).astype(np.int64), VENUS_DAYS - 1)
    accept = diurnal * activity[k, day]
    accept = accept / accept.max()
    keep = rng.random(m) < accept
    idx = np.flatnonzero(keep)
    if len(idx) < n_jobs:  # pragma: no cover - m is ample
        raise RuntimeError("not enough candidate arrivals")
    idx = np.sort(rng.choice(idx, size=n_jobs, replace=False))
    t, k = t[idx], k[idx]
    order = np.argsort(t, kind="stable")
    t, k = np.round(t[order], 1), k[order]
    gpu_values = np.array([g for g, _ in GPU_MIX])
    gpu_p = np.array([p for _, p in GPU_MIX])
    gpus = rng.choice(gpu_values, size=n_jobs, p=gpu_p / gpu_p.sum())
    duration = _runtimes(rng, n_jobs)
    predicted = np.maximum(1.0, np.round(duration * np.exp(rng.normal(0.0, PREDICTION_SIGMA, n_jobs))))
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
                     f"{VENUS_NODES}x{VENUS_GPUS_PER_NODE} GPUs, {VENUS_DAYS} days"),
    )


SCENARIOS = {"venus": venus}
