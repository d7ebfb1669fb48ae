"""Multi-tenant GPU-cluster policies (docs/policies.md, docs/fairness.md): ASTRAEA and the baselines, on the one engine.

`ClusterPolicy` owns the cluster mechanics every policy shares, so each policy below is only its
decision (`order`, or `select` when the decision is not a single sort):

- gang jobs on a `schedulers.cluster.nodes.Cluster`, consolidated placement;
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
- LTGF ledgers (`schedulers.cluster.ltgf.LTGF`) are kept for every policy, so every policy gets ρ metrics.

Engine groups: one per-job group at rate 1 ("running": 1 s of work per second on its gang) and one
at rate 0 ("cold"). Ties everywhere: job index = (submit time, job_id) order.

May import numpy, scipy (Allox's assignment solver), schedulers.policy, schedulers.cluster and
schedulers.cluster.ltgf.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from schedulers.cluster.nodes import Cluster
from schedulers.cluster.ltgf import LTGF
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



def _rho(attained: float, fair: float) -> float:
    if fair > 0.0:
        return attained / fair
    return 0.0 if attained <= 0.0 else math.inf
