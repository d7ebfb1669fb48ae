"""LTGF accounting (long-term GPU-time fairness, docs/fairness.md): exact integrals of attained and fair
GPU·s per job and per tenant, updated only at events.

Definitions (the ASTRAEA paper's LTGF; M = cluster GPUs):
- tenant quota Q_k = M · W_k / Σ W.
- tenant fair share FS_k(t): `eq16` (default, the paper's simulator) = Q_k at every instant;
  `eq8` (theory) = min(D_k(t), Q_k) with D_k(t) the summed demand of the tenant's active
  (pending or running) jobs.
- job fair share FS_i(t) = min(d_i, FS_k(t) · w_i / Σ_active w) — the paper's formula, capped
  per instant at the job's demand; the part a small job cannot use is *not* redistributed to the
  other jobs' fair share (the paper's min without water-filling).
- attained: d_i GPUs for every second the job *holds* its gang — running or cold-starting (the
  GPUs are taken from everyone else either way).
- ρ = attained / fair over [t_begin, t]: t_begin = 0 (the shifted trace start) for tenants; for a
  job the time `arrive` is called — the cluster policies call it at the first scheduling tick at or
  after the submit time (see docs/fairness.md). A job or tenant with no fair share yet has ρ = 0 if it attained nothing.

Everything is piecewise constant between events, and a tenant's rates change only at events of
its own jobs (arrival, completion, start/stop of holding GPUs). Each tenant is therefore advanced
lazily. Job fair shares are exact in O(#distinct d_i/w_i per tenant) per event: with x_i = d_i/w_i
and c_k(t) = FS_k(t)/Σ_active w, FS_i(t) = w_i · min(x_i, c_k(t)), so one running integral
G_k(x) = ∫ min(x, c_k) per distinct x serves every job with that x (ρ_i from two readings of G).

Windowed tenant accounting (`tenant_loss_intervals`): attained and eq8 fair GPU·s per tenant per
window of `window_s` seconds.

The ledgers are kept by the cluster simulator's own functions (schedulers.cluster.ledgers: `advance`,
`ledger_arrive`, `ledger_hold`, `ledger_release`, `ledger_complete`), the one implementation; `LTGF`
here reads and drives them outside a run (the ideal schedule's floors, the hand-worked tests).
May import numpy and schedulers.cluster (state, ledgers).
"""

from __future__ import annotations

import math

import numpy as np

from schedulers.cluster import ledgers
from schedulers.cluster.state import FAIR_SHARES, tenant_quotas  # noqa: F401 (read from here too)
from schedulers.cluster.state import ClusterArrays, Config, JobArrays, new_state


class LTGF:
    """The two ledgers of ASTRAEA for a set of jobs, on the simulator's ledger functions. Call
    `arrive`, `hold`, `release`, `complete` at event times (in time order per tenant)."""

    def __init__(self, gpus, tenant, weight, n_tenants: int, total_gpus: int, *,
                 tenant_weights=None, fair_share: str = "eq16", window_s: float = 3600.0):
        if fair_share not in FAIR_SHARES:
            raise ValueError(f"fair_share must be one of {FAIR_SHARES}")
        gpus = np.asarray(gpus, np.int64)
        weight = np.asarray(weight, np.float64)
        n = len(gpus)
        x = gpus / weight if n else np.zeros(0)
        xval, xid = np.unique(x, return_inverse=True) if n else (np.zeros(1), np.zeros(0, np.int64))
        self.quota = tenant_quotas(n_tenants, total_gpus, tenant_weights)
        self.window_s = float(window_s)
        zeros = np.zeros(n)
        jobs = JobArrays(submit=zeros, size=zeros, gpus=gpus, tenant=np.asarray(tenant, np.int64), weight=weight,
                         xid=xid.astype(np.int64), xval=xval.astype(np.float64), predicted=zeros, log_sd=zeros)
        cluster = ClusterArrays(cap=np.array([max(1, int(total_gpus))], np.int64), node_order=np.zeros(1, np.int64),
                                quota=np.array(self.quota, np.float64), owner=np.zeros(1, np.int64))
        cfg = Config(lease_s=1.0, interval_s=1.0, cold_start_s=0.0, window_s=self.window_s,
                     eq16=fair_share == "eq16", rho_submit=False, preemptive=False, P=1, check=False,
                     work_conserving=True)
        self._s = new_state(jobs, cluster, cfg)
        self._done = np.zeros(n, np.bool_)

    # ----- events -------------------------------------------------------------------------------
    def arrive(self, j: int, t: float) -> None:
        ledgers.ledger_arrive(self._s, j, t)

    def hold(self, j: int, t: float) -> None:
        ledgers.ledger_hold(self._s, j, t)

    def release(self, j: int, t: float) -> None:
        ledgers.ledger_release(self._s, j, t)

    def complete(self, j: int, t: float) -> None:
        """Job j finished at t (releases its GPUs if it held them)."""
        ledgers.ledger_complete(self._s, j, t)
        self._done[j] = True

    def finish(self, t: float) -> None:
        """Advance every tenant to t (end of the run)."""
        for k in range(len(self.quota)):
            ledgers.advance(self._s, k, t)

    # ----- readings -----------------------------------------------------------------------------
    @property
    def job_att(self) -> np.ndarray:
        """Attained GPU·s of each job up to its last release (all of it once completed)."""
        return self._s.led.job_att

    @property
    def job_fair(self) -> np.ndarray:
        """Fair GPU·s of each completed job."""
        return self._s.led.job_fair

    def job_attained(self, j: int, t: float) -> float:
        return float(ledgers.ledger_attained(self._s, j, t))

    def job_fair_share(self, j: int, t: float) -> float:
        led, job = self._s.led, self._s.job
        if self._done[j]:
            return float(led.job_fair[j])
        ledgers.advance(self._s, int(job.tenant[j]), t)
        return float(job.weight[j] * (led.G[job.tenant[j], job.xid[j]] - led.job_base[j]))

    def job_rho(self, j: int, t: float) -> float:
        attained = self.job_attained(j, t)
        if attained <= 0.0 and not self._done[j]:  # ρ = 0 whatever the fair share (a waiting job that never ran)
            ledgers.advance(self._s, int(self._s.job.tenant[j]), t)
            return 0.0
        return _ratio(attained, self.job_fair_share(j, t))

    def tenant_attained(self, k: int, t: float) -> float:
        ledgers.advance(self._s, k, t)
        return float(self._s.led.att[k])

    def tenant_fair_share(self, k: int, t: float) -> float:
        ledgers.advance(self._s, k, t)
        return float(self._s.led.fair[k])

    def tenant_rho(self, k: int, t: float) -> float:
        ledgers.advance(self._s, k, t)
        return _ratio(float(self._s.led.att[k]), float(self._s.led.fair[k]))

    def window_table(self, t_end: float):
        """{tenant_code, window, start_s, attained_gpu_s, fair_eq8_gpu_s, fair_eq16_gpu_s}: one array
        per column, a row for every tenant's every window in [0, t_end) (GPU·s).

        eq16 = quota × the window's length inside [0, t_end); eq8 = ∫ min(demand, quota), which is
        > 0 exactly in the windows where the tenant had demand."""
        self.finish(t_end)
        led = self._s.led
        width = max([len(w) for w in led.win_att] + [1])
        w_att, w_fair8 = np.zeros((len(self.quota), width)), np.zeros((len(self.quota), width))
        for k in range(len(self.quota)):
            w_att[k, :len(led.win_att[k])] = list(led.win_att[k])
            w_fair8[k, :len(led.win_fair8[k])] = list(led.win_fair8[k])
        return ledgers.LedgerReadings(led.job_att, led.job_fair, w_att, w_fair8, self.quota, self.window_s).window_table(t_end)


def _ratio(attained: float, fair: float) -> float:
    if fair > 0.0:
        return attained / fair
    return 0.0 if attained <= 0.0 else math.inf
