"""The LTGF ledgers of a run (docs/fairness.md; the definitions: schedulers.cluster.ltgf): tenant
integrals of attained and fair GPU·s advanced lazily to each event, each job's attained and fair
GPU·s, and each tenant's windows; written once over the run's state `s.led` (schedulers.cluster.state),
run compiled or as Python. `LedgerReadings`: what the metrics read from them after a run.

May import numpy and schedulers.jit.
"""

from __future__ import annotations

import math

import numpy as np

from schedulers.jit import jitable


@jitable
def _windows(t0, t1, run, share8, wa, wf, W):
    """LTGF._windows: attained and eq8 fair GPU·s of [t0, t1) into the tenant's windows."""
    w = int(t0 // W)
    while True:
        end = t1 if t1 < (w + 1) * W else (w + 1) * W
        lo = w * W
        d = end - (t0 if t0 > lo else lo)
        if d > 0:
            while len(wa) <= w:
                wa.append(0.0)
                wf.append(0.0)
            wa[w] = wa[w] + run * d
            wf[w] = wf[w] + share8 * d
        if end >= t1:
            break
        w += 1


@jitable
def advance(s, k, t):
    """Tenant k's ledgers up to t (LTGF._advance: its integrals). Each array is read from the state
    only where it is used: every decision of ASTRAEA, Themis and Gandiva_fair advances each tenant
    with candidates, and each read through the state costs reference counts."""
    led = s.led
    t_last = led.t_last
    t0 = t_last[k]
    dt = t - t0
    if dt <= 0.0:  # nothing to integrate: most calls
        return
    t_last[k] = t
    run = led.run_gpus[k]
    demand = led.demand[k]
    quota = led.quota[k]
    share8 = demand if demand <= quota else quota
    share = quota if s.cfg.eq16 else share8
    led.att[k] += run * dt
    led.fair[k] += share * dt
    led.fair8[k] += share8 * dt
    active_w = led.active_w[k]
    if active_w > 0.0:
        c = share / active_w
        G = led.G
        G_ref = led.G_ref
        xval = s.job.xval
        for x in range(xval.shape[0]):
            if G_ref[k, x] > 0:
                v = xval[x]
                G[k, x] += (v if v < c else c) * dt
    if run != 0 or share8 != 0:
        _windows(t0, t, float(run), float(share8), led.win_att[k], led.win_fair8[k], s.cfg.window_s)


@jitable
def ledger_arrive(s, j, t):
    job = s.job  # each array read once (every read through the state costs reference counts)
    led = s.led
    k = job.tenant[j]
    if t - led.t_last[k] > 0.0:  # else advance has nothing to integrate (most calls: a call costs reference counts)
        advance(s, k, t)
    led.demand[k] += job.gpus[j]
    led.active_w[k] += job.weight[j]
    x = job.xid[j]
    G = led.G
    G_ref = led.G_ref
    if G_ref[k, x] == 0:
        G[k, x] = 0.0
    G_ref[k, x] += 1
    led.job_base[j] = G[k, x]


@jitable
def ledger_hold(s, j, t):
    job = s.job
    led = s.led
    k = job.tenant[j]
    if t - led.t_last[k] > 0.0:
        advance(s, k, t)
    led.run_gpus[k] += job.gpus[j]
    led.hold_since[j] = t


@jitable
def ledger_release(s, j, t):
    job = s.job
    led = s.led
    k = job.tenant[j]
    if t - led.t_last[k] > 0.0:
        advance(s, k, t)
    g = job.gpus[j]
    hold_since = led.hold_since
    led.run_gpus[k] -= g
    led.job_att[j] += g * (t - hold_since[j])
    hold_since[j] = math.nan


@jitable
def ledger_complete(s, j, t):
    job = s.job
    led = s.led
    if not math.isnan(led.hold_since[j]):
        ledger_release(s, j, t)
    k = job.tenant[j]
    if t - led.t_last[k] > 0.0:
        advance(s, k, t)
    x = job.xid[j]
    w = job.weight[j]
    led.job_fair[j] = w * (led.G[k, x] - led.job_base[j])
    led.G_ref[k, x] -= 1
    led.demand[k] -= job.gpus[j]
    active_w = led.active_w
    active_w[k] -= w
    if active_w[k] < 1e-12:
        active_w[k] = 0.0


@jitable
def job_rho(s, j, t):
    """ρ_job of a candidate (not completed) once its tenant is advanced to t."""
    led = s.led
    job = s.job
    return rho_job_at(led.hold_since, led.job_att, job.gpus, job.tenant, job.weight, led.G, job.xid, led.job_base, j, t)


@jitable
def rho_job_at(hold_since, job_att, gpus, tenant, weight, G, xid, job_base, j, t):
    """job_rho on the ledgers' and the jobs' arrays, read once by a caller that keys many candidates
    (each read through the state costs reference counts in the compiled loop)."""
    h = hold_since[j]
    return rho_parts(job_att[j] + (0.0 if math.isnan(h) else gpus[j] * (t - h)), weight[j], G[tenant[j], xid[j]],
                     job_base[j])


@jitable(inline=True)
def rho_parts(attained, weight, G_kx, base):
    """ρ_job from its parts: the job's attained GPU·s, its weight, its tenant's fair-share integral of
    its class now (G_kx) and at its arrival (base). A caller that keeps a waiting job's parts (fixed
    while it waits) reads them from there."""
    if attained <= 0.0:
        return 0.0
    f = weight * (G_kx - base)
    return attained / f if f > 0.0 else math.inf


@jitable
def ledger_attained(s, j, t):
    led = s.led
    h = led.hold_since[j]
    return led.job_att[j] + (0.0 if math.isnan(h) else s.job.gpus[j] * (t - h))


@jitable
def rho_of(a, f):
    if f > 0.0:
        return a / f
    return 0.0 if a <= 0.0 else math.inf


class LedgerReadings:
    """The LTGF readings schedulers.cluster.metrics takes after a run (see schedulers.cluster.ltgf)."""

    def __init__(self, job_att, job_fair, w_att, w_fair8, quota, window_s):
        self.job_att = job_att
        self.job_fair = job_fair
        self._w_att = w_att
        self._w_fair8 = w_fair8
        self.quota = quota
        self.window_s = window_s

    def window_table(self, t_end: float) -> dict:
        """LTGF.window_table of the run (every tenant was advanced to the makespan by the loop): one
        array per column, tenant by tenant, each tenant's windows in time order."""
        W = self.window_s
        n_win = max(1, int(math.ceil(t_end / W)))
        tenants = len(self.quota)
        kept = min(self._w_att.shape[1], n_win)
        attained, fair8 = np.zeros((tenants, n_win)), np.zeros((tenants, n_win))
        attained[:, :kept] = self._w_att[:tenants, :kept]
        fair8[:, :kept] = self._w_fair8[:tenants, :kept]
        window = np.arange(n_win, dtype=np.int64)
        start_s = window * float(W)
        length = np.maximum(0.0, np.minimum(float(W), t_end - start_s))
        return {"tenant_code": np.repeat(np.arange(tenants, dtype=np.int64), n_win), "window": np.tile(window, tenants),
                "start_s": np.tile(start_s, tenants), "attained_gpu_s": attained.ravel(),
                "fair_eq8_gpu_s": fair8.ravel(),
                "fair_eq16_gpu_s": (np.asarray(self.quota, np.float64)[:, None] * length[None, :]).ravel()}
