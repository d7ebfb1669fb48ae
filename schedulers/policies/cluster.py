"""Multi-tenant GPU-cluster policies (docs/policies.md, docs/fairness.md): ASTRAEA and the baselines, on the one engine.

`ClusterPolicy` owns the cluster mechanics every policy shares, so each policy below is only its
decision (`order`, or `select` when the decision is not a single sort):

- gang jobs on a `schedulers.cluster.Cluster`, consolidated placement;
- leases: global rounds at multiples of `lease_s` (from the shifted trace start). At a round the
  running and the waiting jobs are all candidates and `select` decides on an empty copy of the
  cluster (running jobs keep their current GPUs there when still free). Then, as the ASTRAEA paper's
  coordinator does: running jobs not chosen are checkpointed and released (one preemption each),
  chosen running jobs are *renewed* and keep their GPUs at no cost, and only then the chosen
  waiting jobs are placed (consolidated) on the real cluster — if the real fragmentation differs
  from the round's copy and one does not fit, it stays waiting. A work-conserving fill follows;
  a job it puts back on the very GPUs it was just preempted from counts as renewed (no cost).
  Rounds happen only while some job waits (otherwise every running job would be renewed).
- the scheduler works at scheduling-interval ticks (multiples of `interval_s`): a job submitted
  between two ticks is seen at the next one (as in the paper's simulator, which handles the jobs
  submitted during the previous interval); from then on it is active in the LTGF ledgers, so its
  ρ_job counts from that tick (`rho_from="tick"`, default; `"submit"` starts the ledgers at the
  submit time instead, which charges the ≤ interval wait of every job as sharing loss — it matters
  for the many jobs shorter than a few minutes). Its JCT always counts from its submit time.
- between rounds, waiting jobs are placed into free GPUs at ticks — only when an arrival or a
  release may let one start, so a quiet cluster costs no events. A job started between rounds
  holds its GPUs until the next round.
- cold start: a job *resumed* after a preemption holds its GPUs but makes no progress for
  `cold_start_s` (it sits in a rate-0 engine group, then moves to the rate-1 group). The checkpoint
  written at every lease end is taken by the on-demand checkpoint daemon while training goes on
  (as in the ASTRAEA paper), so it costs nothing by itself; its restore is part of the cold start. Overhead per
  job = the cold-start seconds it actually spent (a resume cut short by the next round counts what
  it spent). A job's first start has no cold start. A job preempted at a round and placed again on
  the same GPUs at the same instant (work-conserving fill) is a renewal after all: no cost.
- LTGF ledgers (`schedulers.ltgf.LTGF`) are kept for every policy, so every policy gets ρ metrics.

Engine groups: one per-job group at rate 1 ("running": 1 s of work per second on its gang) and one
at rate 0 ("cold"). Ties everywhere: job index = (submit time, job_id) order.

May import numpy, scipy (Allox's assignment solver), schedulers.policy, schedulers.cluster and
schedulers.ltgf.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from schedulers.cluster import Cluster
from schedulers.ltgf import LTGF
from schedulers.policy import IDLE, Allocation, Policy, PolicyError, register

COLD_START_S = 60.0  # restore + framework start of a resumed job (Gandiva/Tiresias report tens of s to ~1 min)
LEASE_S = 900.0
INTERVAL_S = 10.0
FAIR_WINDOW_S = 3600.0
NEW_JOB_BONUS = 1.0  # ASTRAEA phase 2: reward = -rho_job + bonus for never-started jobs (paper gives no number)
RHO_FROM = ("tick", "submit")  # when a job enters the LTGF ledgers (its t_begin)
_EPS = 1e-9


class ClusterPolicy(Policy):
    """Shared cluster mechanics; subclasses implement `order` (or `select`)."""

    kind = "cluster"
    preemptive = True  # re-decide at lease rounds
    strict = False  # stop at the first job that does not fit (FIFO) instead of skipping it

    def __init__(self, *, nodes: int = 8, gpus_per_node: int = 8, node_capacities=None, lease_s: float = LEASE_S,
                 interval_s: float = INTERVAL_S, cold_start_s: float = COLD_START_S, tenant_weights=None,
                 fair_share: str = "eq16", fair_window_s: float = FAIR_WINDOW_S, rho_from: str = "tick",
                 check: bool = False):
        self.capacities = list(node_capacities) if node_capacities is not None else [int(gpus_per_node)] * int(nodes)
        self.lease_s = float(lease_s)
        self.interval_s = float(interval_s)
        self.cold_start_s = float(cold_start_s)
        if self.lease_s <= 0 or self.interval_s <= 0 or self.cold_start_s < 0:
            raise ValueError("lease and interval must be > 0, cold start >= 0")
        self.tenant_weights = tenant_weights
        self.fair_share = fair_share
        self.fair_window_s = float(fair_window_s)
        if rho_from not in RHO_FROM:
            raise ValueError(f"rho_from must be one of {RHO_FROM}")
        self.rho_from = rho_from
        self.check = check

    # ----- per-run state ------------------------------------------------------------------------
    def reset(self, view) -> None:
        J = view.jobs
        n = J.n
        self.cluster = Cluster(self.capacities)
        self.M = self.cluster.total
        self.gpus = J.gpus.tolist()
        self.tenant = J.tenant.tolist()
        self.T = len(J.tenant_names)
        if n and max(self.gpus) > self.M:
            j = self.gpus.index(max(self.gpus))
            raise PolicyError(f"job {J.job_id[j]} needs {self.gpus[j]} GPUs, the cluster has {self.M}")
        self.ltgf = LTGF(J.gpus, J.tenant, J.weight, self.T, self.M, tenant_weights=self.tenant_weights,
                         fair_share=self.fair_share, window_s=self.fair_window_s)
        self.quota = self.ltgf.quota
        self.run_group = view.new_group(1.0, shared=False)
        self.cold_group = view.new_group(0.0, shared=False)
        self.placement: list = [None] * n
        self.waiting: dict[int, None] = {}
        self.holding: set[int] = set()
        self.wait_demand: dict[int, int] = {}  # gpus -> number of waiting jobs
        self.cold_until: dict[int, float] = {}
        self.cold_heap: list[tuple[float, int]] = []
        self.started = [False] * n
        self.resumes = [0] * n
        self.cold_spent = [0.0] * n  # seconds spent cold-starting (GPUs held, no progress)
        self.undo_cold: dict[int, tuple[float, float]] = {}
        self.now = 0.0
        self.preempted = [0] * n
        self.preempted_at = [-1.0] * n
        self.wait_since = [0.0] * n
        self.tenant_used = [0] * self.T
        self.next_round = self.lease_s
        self.dirty = False
        self.arrivals: list[int] = []  # submitted since the last tick, not yet seen by the scheduler
        self.rounds = 0
        self.plan: dict[int, tuple] = {}  # placement chosen by the last try_place of each job
        self.setup(view)

    def setup(self, view) -> None:
        """Per-run state of a subclass."""

    # ----- decision hooks ----------------------------------------------------------------------
    def order(self, view, candidates: list[int]) -> list[int]:
        """Candidates in priority order (default: submit order)."""
        return sorted(candidates)

    def select(self, view, candidates: list[int], cluster: Cluster) -> list[int]:
        """Choose jobs and place them on `cluster` (taking GPUs); return the chosen, in order."""
        chosen = []
        for j in self.order(view, candidates):
            if cluster.free_total == 0:
                break
            if self.try_place(cluster, j):
                chosen.append(j)
            elif self.strict:
                break
        return chosen

    def try_place(self, cluster: Cluster, j: int, allowed=None) -> bool:
        """Place j on `cluster`: a running job keeps its GPUs when they are free there."""
        p = self.placement[j]
        keeps = j in self.holding or self.preempted_at[j] == self.now  # renewal, or undo of this instant's preemption
        if keeps and p is not None and cluster.fits(p) and (allowed is None or all(n in allowed for n, _ in p)):
            cluster.take(p)
            self.plan[j] = p
            return True
        if self.gpus[j] > cluster.free_total:
            return False
        p = cluster.find(self.gpus[j], allowed)
        if p is None:
            return False
        cluster.take(p)
        self.plan[j] = p
        return True

    # ----- engine callback ------------------------------------------------------------------------
    def allocate(self, view) -> Allocation:
        now = self.now = view.now
        alloc = Allocation()
        for j in view.completed:
            self._complete(j, now)
        tick = math.ceil(now / self.interval_s - _EPS) * self.interval_s
        on_tick = tick <= now + _EPS
        if view.arrived:
            self.arrivals.extend(view.arrived)
            if self.rho_from == "submit":
                for j in view.arrived:
                    self.ltgf.arrive(j, now)
        if self.arrivals:
            if on_tick:
                for j in self.arrivals:
                    self._wait(j, now)
                    if self.rho_from == "tick":
                        self.ltgf.arrive(j, now)
                self.arrivals.clear()
                self.dirty = True
            else:
                alloc.wake_at(tick)
        while self.cold_heap and self.cold_heap[0][0] <= now + _EPS:
            t, j = heapq.heappop(self.cold_heap)
            if self.cold_until.get(j) == t:
                del self.cold_until[j]
                self.cold_spent[j] += self.cold_start_s
                alloc.assign(j, self.run_group)
        if now >= self.next_round - _EPS:
            self.next_round = (math.floor(now / self.lease_s + _EPS) + 1) * self.lease_s
            if self.preemptive and self.waiting:
                self._round(view, alloc, now)
        if self.dirty and self.waiting and self._may_place():
            if on_tick:
                self._fill(view, alloc, now)
            else:
                alloc.wake_at(tick)
        if self.cold_heap:
            alloc.wake_at(self.cold_heap[0][0])
        if self.preemptive and self.waiting:
            alloc.wake_at(self.next_round)
        if self.check:
            self.cluster.check()
        return alloc

    # ----- mechanics -----------------------------------------------------------------------------
    def _may_place(self) -> bool:
        g = min(self.wait_demand)
        return g <= self.cluster.free_total and self.cluster.find(g) is not None

    def _wait(self, j: int, now: float) -> None:
        self.waiting[j] = None
        g = self.gpus[j]
        self.wait_demand[g] = self.wait_demand.get(g, 0) + 1
        self.wait_since[j] = now

    def _unwait(self, j: int) -> None:
        del self.waiting[j]
        g = self.gpus[j]
        c = self.wait_demand[g] - 1
        if c:
            self.wait_demand[g] = c
        else:
            del self.wait_demand[g]

    def _complete(self, j: int, now: float) -> None:
        if j in self.holding:
            self.holding.discard(j)
            self.cluster.release(self.placement[j])
            self.tenant_used[self.tenant[j]] -= self.gpus[j]
            self.cold_until.pop(j, None)
            self.dirty = True
        self.ltgf.complete(j, now)

    def _start(self, view, alloc: Allocation, j: int, placement, now: float) -> None:
        self._unwait(j)
        undo = self.preempted_at[j] == now and placement == self.placement[j]
        self.placement[j] = placement
        self.holding.add(j)
        self.tenant_used[self.tenant[j]] += self.gpus[j]
        self.ltgf.hold(j, now)
        if undo:  # preempted and re-placed on the same GPUs at the same instant: a renewal after all
            self.preempted[j] -= 1
            self.preempted_at[j] = -1.0
            if j in self.undo_cold:
                until, spent = self.undo_cold.pop(j)
                self.cold_spent[j] -= spent
                self.cold_until[j] = until
                heapq.heappush(self.cold_heap, (until, j))
                alloc.assign(j, self.cold_group)
            else:
                alloc.assign(j, self.run_group)
            return
        if self.started[j] and self.cold_start_s > 0:
            self.resumes[j] += 1
            until = now + self.cold_start_s
            self.cold_until[j] = until
            heapq.heappush(self.cold_heap, (until, j))
            alloc.assign(j, self.cold_group)
        else:
            if self.started[j]:
                self.resumes[j] += 1
            self.started[j] = True
            alloc.assign(j, self.run_group)

    def _preempt(self, alloc: Allocation, j: int, now: float) -> None:
        self.holding.discard(j)
        self.cluster.release(self.placement[j])
        self.tenant_used[self.tenant[j]] -= self.gpus[j]
        until = self.cold_until.pop(j, None)
        if until is not None:  # preempted while cold-starting: the part spent is overhead
            spent = now - (until - self.cold_start_s)
            self.cold_spent[j] += spent
            self.undo_cold[j] = (until, spent)
        self.ltgf.release(j, now)
        self.preempted[j] += 1
        self.preempted_at[j] = now
        self._wait(j, now)
        alloc.assign(j, IDLE)

    def _round(self, view, alloc: Allocation, now: float) -> None:
        self.rounds += 1
        self.undo_cold: dict[int, tuple[float, float]] = {}
        scratch = self.cluster.empty_copy()
        candidates = list(self.holding) + list(self.waiting)
        chosen = self.select(view, candidates, scratch)
        keep = set(chosen)
        for j in sorted(self.holding):
            if j not in keep:
                self._preempt(alloc, j, now)
        for j in chosen:
            if j in self.waiting:
                p = self.cluster.place(self.gpus[j])
                if p is not None:
                    self._start(view, alloc, j, p, now)
        self.dirty = True

    def _fill(self, view, alloc: Allocation, now: float) -> None:
        self.dirty = False
        candidates = list(self.waiting)
        for j in self.select(view, candidates, self.cluster):
            self._start(view, alloc, j, self.plan[j], now)

    # ----- helpers for decisions --------------------------------------------------------------------
    def progress(self, view, j: int) -> float:
        """Seconds of work done (service at rate 1)."""
        return view.attained(j)


@register
class FIFOCluster(ClusterPolicy):
    name = "fifo"
    preemptive = False
    strict = True
    description = "global FIFO, gang, non-preemptive, head-of-line blocking"


@register
class SRTFOracle(ClusterPolicy):
    name = "srtf-oracle"
    clairvoyant = True
    description = "shortest true remaining time first at every lease round (clairvoyant reference)"

    def order(self, view, candidates):
        return sorted(candidates, key=lambda j: (view.remaining(j), j))


@register
class YarnCS(ClusterPolicy):
    """YARN capacity scheduler: per-tenant FIFO within the quota first, then idle quota lent in
    submit order; never preempts, so lent GPUs come back only when the borrower finishes."""

    name = "yarn-cs"
    preemptive = False
    description = "per-tenant FIFO with quotas, idle quota lendable, no preemption"

    def select(self, view, candidates, cluster):
        used = list(self.tenant_used)
        blocked: set[int] = set()
        lend: list[int] = []
        chosen = []
        for j in sorted(candidates):
            k = self.tenant[j]
            if k in blocked:
                lend.append(j)
            elif used[k] + self.gpus[j] <= self.quota[k] + _EPS and self.try_place(cluster, j):
                used[k] += self.gpus[j]
                chosen.append(j)
            else:
                blocked.add(k)
                lend.append(j)
        blocked.clear()
        for j in lend:
            k = self.tenant[j]
            if k not in blocked:
                if self.try_place(cluster, j):
                    chosen.append(j)
                else:
                    blocked.add(k)
        return chosen


@register
class TiresiasL(ClusterPolicy):
    """Tiresias-L: 2D-LAS with discretised queues on attained GPU·s (no size knowledge).

    Queue = number of thresholds the job's attained GPU·s has passed; FIFO inside a queue.
    Starvation: a job waiting longer than STARVATION × its executed time goes back to queue 0.
    Preemption happens at lease rounds, like every policy on this core."""

    name = "tiresias-l"
    description = "discretised 2D-LAS on attained GPU·s with starvation promotion"
    THRESHOLDS_GPU_S = (3600.0, 36000.0)
    STARVATION = 2.0

    def setup(self, view):
        self.offset = [0.0] * view.jobs.n

    def order(self, view, candidates):
        now = view.now
        ltgf = self.ltgf
        keys = []
        for j in candidates:
            att = ltgf.job_attained(j, now)
            if j not in self.holding and att > 0 and now - self.wait_since[j] > self.STARVATION * self.progress(view, j):
                self.offset[j] = att  # promoted: counts from zero again
            level = att - self.offset[j]
            q = sum(level >= t for t in self.THRESHOLDS_GPU_S)
            keys.append((q, j))
        keys.sort()
        return [j for _, j in keys]


THEMIS_F = 0.8  # Themis's fairness knob f: only the 1 − f fraction of jobs with the worst ρ bid


@register
class Themis(ClusterPolicy):
    """Themis (Mahajan et al., NSDI'20): finish-time fairness with lease auctions and the knob f.

    Finish-time fairness ρ_i = T_sh / T_id: T_sh = (now − submit) + predicted remaining
    max(p̂ − work done, 1 s) at the job's full gang (the finish time its bid would get);
    T_id = p̂ · max(1, d_i / (M / N̄_i)), the finish time alone on a 1/N̄ share of the cluster, with
    N̄_i the *observed contention*: the time-average number of active jobs since the job arrived
    (the current count at its first round). Higher ρ = treated worse.

    Every lease (and at scheduling ticks when GPUs free up) the arbiter (1) sorts jobs by ρ, worst
    first; (2) offers the free GPUs to the ⌈(1 − f) · n⌉ worst (at least one) — f = THEMIS_F = 0.8,
    the ASTRAEA paper does not say which f it ran; (3) runs the partial-allocation auction among them:
    the allocation maximising the product of the bidders' ρ improvements, Π ρ_i(lose) / ρ_i(win),
    where winning a gang for the next lease gives T_sh and losing it adds a lease:
    log gain_i = log(1 + lease / T_sh,i). With rigid gangs an allocation is all or nothing, so the
    maximisation is a knapsack over the free GPUs, solved greedily by log gain per GPU (ties: ρ, job
    index); (4) leftover allocation: GPUs the auction leaves go to every other job, worst ρ first
    (work conservation).

    Modelling choices: an app is one job (the ASTRAEA workloads have no hyper-parameter apps);
    bids are truthful, so the auction's hidden payments (withholding part of a winner's
    allocation) are not modelled — they cannot be applied to an all-or-nothing gang anyway; p̂
    (`predicted_duration`) stands in for the agents' remaining-time estimates — this is the only
    size information Themis uses, and its error level is whatever the jobs table carries (the
    scenarios: p·exp(0.9 Z)). Placement is consolidated as for every policy."""

    name = "themis"
    needs_prediction = True
    description = "finish-time fairness T_sh/T_id, 1-f worst jobs bid in a lease auction, leftover to the rest"

    def __init__(self, *, f: float = THEMIS_F, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 <= float(f) < 1.0:
            raise ValueError("themis f must be in [0, 1)")
        self.f = float(f)

    def setup(self, view):
        self.area = 0.0  # ∫ N(t) dt, N = active (waiting + holding) jobs
        self.area_t = 0.0
        self.n_active = 0
        self.seen: dict[int, tuple[float, float]] = {}  # job -> (area, time) when it became active

    def allocate(self, view):
        self.area += self.n_active * (view.now - self.area_t)
        self.area_t = view.now
        alloc = super().allocate(view)
        self.n_active = len(self.waiting) + len(self.holding)
        return alloc

    def _wait(self, j, now):
        if j not in self.seen:
            self.seen[j] = (self.area, now)
        super()._wait(j, now)

    def rho(self, view, j: int, now: float, n_now: int) -> tuple[float, float]:
        """(ρ = T_sh / T_id, T_sh) of job j at `now`."""
        p = view.jobs.predicted[j]
        rem = max(p - self.progress(view, j), 1.0)
        area0, t0 = self.seen.get(j, (self.area, now))
        n_bar = (self.area - area0) / (now - t0) if now > t0 else float(n_now)
        share = self.M / max(1.0, n_bar)
        t_sh = (now - view.jobs.submit_time[j]) + rem
        return t_sh / (p * max(1.0, self.gpus[j] / share)), t_sh

    def select(self, view, candidates, cluster):
        now = view.now
        n_now = max(1, len(self.waiting) + len(self.holding))
        info = {j: self.rho(view, j, now, n_now) for j in candidates}
        worst = sorted(candidates, key=lambda j: (-info[j][0], j))
        bidders = worst[: max(1, math.ceil((1.0 - self.f) * len(worst) - _EPS))]
        lease = self.lease_s
        auction = sorted(bidders, key=lambda j: (-math.log1p(lease / info[j][1]) / self.gpus[j], -info[j][0], j))
        chosen, taken = [], set()
        for group in (auction, worst):  # the auction, then the leftover allocation
            for j in group:
                if cluster.free_total == 0:
                    return chosen
                if j not in taken and self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                    chosen.append(j)
                    taken.add(j)
        return chosen


@register
class GandivaFair(ClusterPolicy):
    """Gandiva_fair: stride scheduling across tenants with tickets = tenant weights.

    The tenant with the smallest pass gets its next job (least attained GPU·s first) and its pass
    grows by gpus × lease / tickets. A tenant that comes back after being idle restarts at the
    smallest pass of the active tenants (no credit for idle time, unlike LTGF's eq16)."""

    name = "gandiva-fair"
    description = "ticket-based stride scheduling per tenant"

    def setup(self, view):
        self.pass_ = [0.0] * self.T
        self.tickets = [q for q in self.quota]
        self.was_active = [False] * self.T

    def select(self, view, candidates, cluster):
        now = view.now
        per: dict[int, list] = {}
        for j in candidates:
            per.setdefault(self.tenant[j], []).append((self.ltgf.job_attained(j, now), j))
        active_pass = [self.pass_[k] for k in per if self.was_active[k]]
        floor = min(active_pass) if active_pass else 0.0
        for k in range(self.T):
            if k in per and not self.was_active[k]:
                self.pass_[k] = max(self.pass_[k], floor)
            self.was_active[k] = k in per or self.tenant_used[k] > 0
        heap = [(self.pass_[k], k) for k in per]
        heapq.heapify(heap)
        for lst in per.values():
            lst.sort(reverse=True)  # pop() gives least attained, then lowest index
        chosen = []
        while heap and cluster.free_total > 0:
            _, k = heapq.heappop(heap)
            j = per[k][-1][1]
            if not self.try_place(cluster, j):
                continue  # this tenant's next job does not fit: skip the tenant this round
            per[k].pop()
            chosen.append(j)
            self.pass_[k] += self.gpus[j] * self.lease_s / self.tickets[k]
            if per[k]:
                heapq.heappush(heap, (self.pass_[k], k))
        return chosen


@register
class HiveD(ClusterPolicy):
    """HiveD (simplified): each tenant owns reserved cells = whole nodes in proportion to its quota
    (largest-remainder rounding over the node list; buddy cells are whole nodes here). Guaranteed
    jobs run FIFO inside their own cells; when those are full a job may run opportunistically on
    any free GPUs and is preempted at the next lease round if an owner needs the cells back."""

    name = "hived"
    description = "tenant quotas as reserved node cells, opportunistic use of idle cells"

    def setup(self, view):
        caps = self.capacities
        bounds, cum = [], 0.0
        for q in self.quota:  # cumulative quota; a node belongs to the tenant whose span holds its middle
            cum += q
            bounds.append(cum)
        owner, k, acc = [], 0, 0.0
        for c in caps:
            mid = acc + c / 2.0
            while k < len(bounds) - 1 and mid > bounds[k]:
                k += 1
            owner.append(k)
            acc += c
        self.cells = [set() for _ in range(self.T)]
        for node, k in enumerate(owner):
            self.cells[k].add(node)

    def select(self, view, candidates, cluster):
        blocked: set[int] = set()
        rest = []
        chosen = []
        for j in sorted(candidates):
            k = self.tenant[j]
            if k not in blocked and self.try_place(cluster, j, allowed=self.cells[k]):
                chosen.append(j)
            else:
                blocked.add(k)
                rest.append(j)
        for j in rest:
            if cluster.free_total == 0:
                break
            if self.try_place(cluster, j):
                chosen.append(j)
        return chosen


@register
class Astraea(ClusterPolicy):
    """ASTRAEA: two-phase LTGF selection (the ASTRAEA paper).

    Phase 1: the tenant with the smallest ρ_tenant (pre-charged); a tenant whose best candidate
    cannot be placed is dropped for this round; equal ρ_tenant: tenant name order. Phase 2: inside
    it the job with the largest reward −ρ_job + NEW_JOB_BONUS·[never started]; ties: submit time,
    then job_id (the job index). Since ρ ≥ 0 and a never-started job has ρ = 0, the bonus puts new
    jobs first, oldest first; the paper gives no number for it. After a job is placed
    its tenant is pre-charged demand × lease before the next pick (ρ's denominator stays at its
    round-start value, as in the paper's worked example). After the loop, any candidate that still
    fits is placed in the same order (work conservation despite tenant skipping)."""

    name = "astraea"
    description = "two-phase LTGF selection: min rho tenant, max reward job, pre-charge, skip unplaceable"

    def job_key(self, view, j: int, rho: float) -> tuple:
        new = not self.started[j]
        return (rho - (NEW_JOB_BONUS if new else 0.0), j)

    def select(self, view, candidates, cluster):
        now = view.now
        ltgf = self.ltgf
        per: dict[int, list] = {}
        for j in candidates:
            per.setdefault(self.tenant[j], []).append(self.job_key(view, j, ltgf.job_rho(j, now)))
        charged, fair, heap = {}, {}, []
        for k, lst in per.items():
            lst.sort(reverse=True)  # pop() = best
            charged[k] = ltgf.tenant_attained(k, now)
            fair[k] = ltgf.tenant_fair_share(k, now)
            heap.append((_rho(charged[k], fair[k]), k))
        heapq.heapify(heap)
        chosen = []
        skipped = []
        self.last_picks = []  # (tenant, job, pre-charged ρ_tenant after the pick): the round, for inspection
        lease = self.lease_s
        while heap and cluster.free_total > 0:
            _, k = heapq.heappop(heap)
            lst = per[k]
            j = lst[-1][-1]
            if not self.try_place(cluster, j):
                skipped.append(k)
                continue
            lst.pop()
            chosen.append(j)
            charged[k] += self.gpus[j] * lease
            self.last_picks.append((k, j, _rho(charged[k], fair[k])))
            if lst:
                heapq.heappush(heap, (_rho(charged[k], fair[k]), k))
        if skipped and cluster.free_total > 0:
            rest = sorted(((_rho(charged[k], fair[k]), k) for k in skipped))
            for _, k in rest:
                for key in reversed(per[k]):
                    j = key[-1]
                    if self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                        chosen.append(j)
                if cluster.free_total == 0:
                    break
        return chosen


@register
class AstraeaP(Astraea):
    """ASTRAEA with predicted durations: same two phases; inside a tenant, never-started jobs
    (the new-job bonus tier) go shortest p̂ first instead of submit order, and jobs that have run
    are ordered by ρ_job, ties by predicted remaining max(0, p̂ − work done). Helps when a tenant's
    queue mixes short and long new jobs and p̂ ranks them well; hurts when p̂ under-predicts a long
    job (it jumps the queue) or over-predicts a short one (it waits behind longer jobs)."""

    name = "astraea-p"
    needs_prediction = True
    description = "ASTRAEA, new jobs of a tenant shortest-predicted first"

    def job_key(self, view, j: int, rho: float) -> tuple:
        p = view.jobs.predicted[j]
        if not self.started[j]:
            return (rho - NEW_JOB_BONUS, p, j)
        return (rho, max(0.0, p - self.progress(view, j)), j)


ALLOX_ALPHA = 0.5  # AlloX's fairness knob: share of tenants (least progress first) considered first
ALLOX_MATCH_MAX = 256  # jobs entering one matching (the shortest footprints); the rest follow in footprint order


@register
class Allox(ClusterPolicy):
    """AlloX (Le et al., EuroSys'20): min-cost bipartite matching of jobs to resources on processing-
    time estimates, with a fairness knob α over users' progress — on the one engine.

    AlloX schedules queued jobs on interchangeable resources (CPUs, GPUs) that run each job at its
    own speed. For the queued jobs J and machines M it builds the bipartite graph job j — (machine m,
    position k), k = 1 the last job on m, with cost k · p_jm (a job at position k delays itself and
    the k − 1 jobs after it), solves the min-cost matching (optimal for ΣC of the queued jobs,
    Bruno–Coffman–Sethi), and on each machine runs its jobs in decreasing k. Online it re-solves when
    jobs arrive or resources free up; running jobs are never preempted. Fairness: users are ordered
    by progress (share received) and only the jobs of the ⌈α · users⌉ least-progressed users enter
    the matching (α = 1: pure performance; small α: stricter fairness).

    Modelling choices on a GPU cluster of gang jobs (the ASTRAEA paper gives none):
    - machines = the nodes; p_jm = p̂_j · d_j / cap_m, the node-time a d_j-GPU gang takes from node m
      (its GPU·s footprint spread over the node's GPUs). One resource type, so AlloX's CPU-vs-GPU
      choice does not arise; heterogeneous node lists (`--node-list`) give different p_jm.
    - p̂ (`predicted_duration`) stands in for AlloX's profiler estimates, so the policy needs p̂.
    - users = tenants; progress = ρ_tenant of the LTGF ledger (attained / fair GPU·s), the single-
      resource form of AlloX's dominant share relative to the user's entitlement. α = ALLOX_ALPHA
      (0.5; the ASTRAEA paper does not say which α it ran). Ties: tenant index.
    - non-preemptive: no lease rounds; waiting jobs start at scheduling ticks when GPUs free up.
    - the matching decides which jobs start and in what order (rank on their machine, then p_jm),
      placement is consolidated as for every policy; a job that does not fit now is skipped.
      After the α tenants' jobs, the other tenants' jobs are matched and placed the same way, so
      no GPU idles while a job that fits waits (the knob orders, it does not reserve).
    - only the L jobs with the smallest footprints enter one matching, L = min(ALLOX_MATCH_MAX, free
      GPUs / smallest demand) — no more can start now — with ⌈L / nodes⌉ + 1 positions per node; on
      identical nodes the matching orders jobs by footprint, so the rest follow in that order.
      Solved exactly by scipy's linear_sum_assignment.
    """

    name = "allox"
    needs_prediction = True
    preemptive = False
    description = "AlloX: min-cost matching of jobs to (node, position) on p̂, fairness knob α over tenant progress"

    def __init__(self, *, alpha: float = ALLOX_ALPHA, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 < float(alpha) <= 1.0:
            raise ValueError("allox alpha must be in (0, 1]")
        self.alpha = float(alpha)

    def setup(self, view):
        self.inv_caps = 1.0 / np.asarray(self.capacities, np.float64)
        self.gpus_arr = np.asarray(self.gpus, np.float64)

    def footprint(self, view, jobs):
        """p_jm for the jobs (rows) on every node m (columns), node-seconds."""
        jobs = np.asarray(jobs, np.int64)
        return (view.jobs.predicted[jobs] * self.gpus_arr[jobs])[:, None] * self.inv_caps[None, :]

    def matching(self, view, jobs: list[int]) -> list[tuple[int, int, int]]:
        """(job, node, position k) of the min-cost matching; k = 1 is the last job on its node."""
        from scipy.optimize import linear_sum_assignment

        if not jobs:
            return []
        R = len(self.capacities)
        K = -(-len(jobs) // R) + 1
        tau = self.footprint(view, jobs)  # L × R
        k = np.arange(1, K + 1, dtype=np.float64)
        cost = (tau[:, :, None] * k[None, None, :]).reshape(len(jobs), R * K)  # column = m * K + (k - 1)
        rows, cols = linear_sum_assignment(cost)
        return [(jobs[r], int(c // K), int(c % K) + 1) for r, c in zip(rows, cols)]

    def matched_order(self, view, jobs: list[int], limit: int = ALLOX_MATCH_MAX) -> list[int]:
        """The jobs in start order: the `limit` smallest footprints by the matching, then the rest."""
        if len(jobs) <= 1:
            return list(jobs)
        idx = np.asarray(jobs, np.int64)
        best = view.jobs.predicted[idx] * self.gpus_arr[idx] * self.inv_caps.min()
        order = np.lexsort((idx, best))
        by_size = idx[order].tolist()
        head, tail = by_size[:limit], by_size[limit:]
        best_of = dict(zip(idx.tolist(), best.tolist()))
        match = self.matching(view, head)
        top: dict[int, int] = {}
        for _, m, k in match:
            top[m] = max(top.get(m, 0), k)
        ranked = sorted(match, key=lambda t: (top[t[1]] - t[2], best_of[t[0]], t[0]))  # first on its node first
        return [j for j, _, _ in ranked] + tail

    def select(self, view, candidates, cluster):
        now = view.now
        per: dict[int, list[int]] = {}
        for j in candidates:
            per.setdefault(self.tenant[j], []).append(j)
        tenants = sorted(per, key=lambda k: (self.ltgf.tenant_rho(k, now), k))
        first = max(1, math.ceil(self.alpha * len(tenants) - _EPS))
        chosen = []
        for group in (tenants[:first], tenants[first:]):
            jobs = [j for k in group for j in per[k]]
            if not jobs:
                continue
            # at most as many jobs can start now as free GPUs / smallest demand: only those need matching
            limit = min(ALLOX_MATCH_MAX, max(1, cluster.free_total // min(self.gpus[j] for j in jobs)))
            for j in self.matched_order(view, jobs, limit):
                if cluster.free_total == 0:
                    return chosen
                if self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                    chosen.append(j)
        return chosen


def _rho(attained: float, fair: float) -> float:
    if fair > 0.0:
        return attained / fair
    return 0.0 if attained <= 0.0 else math.inf
