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
  after the submit time (see schedulers.cluster.rounds). A job or tenant with no fair share yet has ρ = 0 if it attained nothing.

Everything is piecewise constant between events, and a tenant's rates change only at events of
its own jobs (arrival, completion, start/stop of holding GPUs). Each tenant is therefore advanced
lazily. Job fair shares are exact in O(#distinct d_i/w_i per tenant) per event: with x_i = d_i/w_i
and c_k(t) = FS_k(t)/Σ_active w, FS_i(t) = w_i · min(x_i, c_k(t)), so one running integral
G_k(x) = ∫ min(x, c_k) per distinct x serves every job with that x (ρ_i from two readings of G).

Windowed tenant accounting (`tenant_loss_intervals`): attained and eq8 fair GPU·s per tenant per
window of `window_s` seconds. May import numpy only.
"""

from __future__ import annotations

import math

import numpy as np

FAIR_SHARES = ("eq16", "eq8")  # the first is the default (the paper's simulator)


def tenant_quotas(n_tenants: int, total_gpus: int, tenant_weights=None) -> list[float]:
    """Q_k = M · W_k / Σ W (equal weights when none are given)."""
    tw = np.ones(n_tenants) if tenant_weights is None else np.asarray(tenant_weights, np.float64)
    return (total_gpus * tw / tw.sum()).tolist()


class LTGF:
    """The two ledgers of ASTRAEA. Call `arrive`, `hold`, `release`, `complete` at event times."""

    def __init__(self, gpus, tenant, weight, n_tenants: int, total_gpus: int, *,
                 tenant_weights=None, fair_share: str = "eq16", window_s: float = 3600.0):
        if fair_share not in FAIR_SHARES:
            raise ValueError(f"fair_share must be one of {FAIR_SHARES}")
        self.fair_share = fair_share
        self.gpus = [int(g) for g in gpus]
        self.tenant = [int(k) for k in tenant]
        self.weight = [float(w) for w in weight]
        self.x = [g / w for g, w in zip(self.gpus, self.weight)]
        self.quota = tenant_quotas(n_tenants, total_gpus, tenant_weights)
        self.total_gpus = total_gpus
        self.window_s = float(window_s)
        T, n = n_tenants, len(self.gpus)
        self.t_last = [0.0] * T
        self.run_gpus = [0] * T  # GPUs held now
        self.demand = [0] * T  # Σ demand of active jobs
        self.active_w = [0.0] * T
        self.att = [0.0] * T
        self.fair = [0.0] * T  # chosen fair share (eq8 or eq16)
        self.fair8 = [0.0] * T
        self.win_att: list[dict[int, float]] = [dict() for _ in range(T)]
        self.win_fair8: list[dict[int, float]] = [dict() for _ in range(T)]
        self.G: list[dict[float, list]] = [dict() for _ in range(T)]  # x -> [∫min(x, c), refcount]
        self.job_base = [0.0] * n
        self.job_fair = [0.0] * n  # final fair GPU·s once completed
        self.job_att = [0.0] * n  # attained GPU·s up to hold_since
        self.hold_since = [math.nan] * n
        self.done = [False] * n

    # ----- tenant clock -----------------------------------------------------------------------
    def tenant_share(self, k: int) -> float:
        """FS_k at the current instant (chosen fair share)."""
        return self.quota[k] if self.fair_share == "eq16" else min(self.demand[k], self.quota[k])

    def _advance(self, k: int, t: float) -> None:
        t0 = self.t_last[k]
        dt = t - t0
        if dt <= 0.0:
            return
        self.t_last[k] = t
        run = self.run_gpus[k]
        share8 = min(self.demand[k], self.quota[k])
        share = self.quota[k] if self.fair_share == "eq16" else share8
        self.att[k] += run * dt
        self.fair[k] += share * dt
        self.fair8[k] += share8 * dt
        if self.active_w[k] > 0.0:
            c = share / self.active_w[k]
            for x, cell in self.G[k].items():
                cell[0] += (x if x < c else c) * dt
        if run or share8:
            self._windows(k, t0, t, run, share8)

    def _windows(self, k: int, t0: float, t1: float, run: float, share8: float) -> None:
        W = self.window_s
        wa, wf = self.win_att[k], self.win_fair8[k]
        w = int(t0 // W)
        if t1 <= (w + 1) * W:  # inside one window (most intervals): the loop below, once
            lo = w * W
            d = t1 - (t0 if t0 > lo else lo)
            if d > 0:
                wa[w] = wa.get(w, 0.0) + run * d
                wf[w] = wf.get(w, 0.0) + share8 * d
            return
        while True:
            end = min(t1, (w + 1) * W)
            d = end - max(t0, w * W)
            if d > 0:
                wa[w] = wa.get(w, 0.0) + run * d
                wf[w] = wf.get(w, 0.0) + share8 * d
            if end >= t1:
                break
            w += 1

    # ----- events -------------------------------------------------------------------------------
    def arrive(self, j: int, t: float) -> None:
        k = self.tenant[j]
        self._advance(k, t)
        self.demand[k] += self.gpus[j]
        self.active_w[k] += self.weight[j]
        cell = self.G[k].get(self.x[j])
        if cell is None:
            cell = self.G[k][self.x[j]] = [0.0, 0]
        cell[1] += 1
        self.job_base[j] = cell[0]

    def hold(self, j: int, t: float) -> None:
        k = self.tenant[j]
        self._advance(k, t)
        self.run_gpus[k] += self.gpus[j]
        self.hold_since[j] = t

    def release(self, j: int, t: float) -> None:
        k = self.tenant[j]
        self._advance(k, t)
        self.run_gpus[k] -= self.gpus[j]
        self.job_att[j] += self.gpus[j] * (t - self.hold_since[j])
        self.hold_since[j] = math.nan

    def complete(self, j: int, t: float) -> None:
        """Job j finished at t (releases its GPUs if it held them)."""
        if not math.isnan(self.hold_since[j]):
            self.release(j, t)
        k = self.tenant[j]
        self._advance(k, t)
        x = self.x[j]
        cell = self.G[k][x]
        self.job_fair[j] = self.weight[j] * (cell[0] - self.job_base[j])
        cell[1] -= 1
        if cell[1] == 0:
            del self.G[k][x]
        self.demand[k] -= self.gpus[j]
        self.active_w[k] -= self.weight[j]
        if self.active_w[k] < 1e-12:
            self.active_w[k] = 0.0
        self.done[j] = True

    def finish(self, t: float) -> None:
        """Advance every tenant to t (end of the run)."""
        for k in range(len(self.t_last)):
            self._advance(k, t)

    # ----- readings -----------------------------------------------------------------------------
    def job_attained(self, j: int, t: float) -> float:
        held = self.hold_since[j]
        return self.job_att[j] + (0.0 if math.isnan(held) else self.gpus[j] * (t - held))

    def job_fair_share(self, j: int, t: float) -> float:
        if self.done[j]:
            return self.job_fair[j]
        k = self.tenant[j]
        self._advance(k, t)
        return self.weight[j] * (self.G[k][self.x[j]][0] - self.job_base[j])

    def job_rho(self, j: int, t: float) -> float:
        attained = self.job_attained(j, t)
        if attained <= 0.0 and not self.done[j]:  # ρ = 0 whatever the fair share (a waiting job that never ran)
            self._advance(self.tenant[j], t)  # the tenant's clock moves exactly as a full reading would move it
            return 0.0
        return _ratio(attained, self.job_fair_share(j, t))

    def job_rhos(self, jobs, t: float) -> list[float]:
        """`job_rho(j, t)` of each of `jobs`, the same values, in one pass: each tenant is advanced
        once (a reading at the same t advances nothing more)."""
        tenant, gpus, att, since, done = self.tenant, self.gpus, self.job_att, self.hold_since, self.done
        weight, x, G, base = self.weight, self.x, self.G, self.job_base
        advanced = set()
        out = []
        for j in jobs:
            k = tenant[j]
            if k not in advanced:
                self._advance(k, t)
                advanced.add(k)
            if done[j]:
                out.append(self.job_rho(j, t))
                continue
            held = since[j]
            attained = att[j] + (0.0 if held != held else gpus[j] * (t - held))
            if attained <= 0.0:
                out.append(0.0)
                continue
            fair = weight[j] * (G[k][x[j]][0] - base[j])
            out.append(attained / fair if fair > 0.0 else math.inf)
        return out

    def tenant_attained(self, k: int, t: float) -> float:
        self._advance(k, t)
        return self.att[k]

    def tenant_fair_share(self, k: int, t: float) -> float:
        self._advance(k, t)
        return self.fair[k]

    def tenant_rho(self, k: int, t: float) -> float:
        self._advance(k, t)
        return _ratio(self.att[k], self.fair[k])

    def window_table(self, t_end: float):
        """(tenant, window, start_s, attained, fair eq8, fair eq16) GPU·s for every window in [0, t_end).

        eq16 = quota × the window's length inside [0, t_end); eq8 = ∫ min(demand, quota), which is
        > 0 exactly in the windows where the tenant had demand."""
        self.finish(t_end)
        W = self.window_s
        n_win = max(1, int(math.ceil(t_end / W)))
        rows = []
        for k in range(len(self.t_last)):
            wa, wf = self.win_att[k], self.win_fair8[k]
            q = self.quota[k]
            for w in range(n_win):
                length = max(0.0, min(W, t_end - w * W))
                rows.append((k, w, w * W, wa.get(w, 0.0), wf.get(w, 0.0), q * length))
        return rows


def _ratio(attained: float, fair: float) -> float:
    if fair > 0.0:
        return attained / fair
    return 0.0 if attained <= 0.0 else math.inf
