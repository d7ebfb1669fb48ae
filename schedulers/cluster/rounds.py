"""The lease / round / fill mechanics of a cluster policy run on the engine (docs/fairness.md): what a
plugin policy, a subclass of a built-in one and a run with the rule checks on use, and the reference
the cluster simulator (schedulers.cluster.core, which runs the built-in policies' kernels) is tested
against, bit for bit.

`ClusterPolicy` owns the cluster mechanics, so each policy's Python rule is only its decision
(`order`, or `select` when the decision is not a single sort):

- gang jobs on a `schedulers.cluster.nodes.Cluster`, consolidated placement;
- leases: global rounds at multiples of `lease_s` (from the shifted trace start), and only there: a
  boundary passed with nothing waiting has no round, and a job that starts waiting after it waits
  for the next boundary (or a fill), so a running job keeps its lease to the next boundary whatever
  tick a competitor arrives on. At a round the
  running and the waiting jobs are all candidates and `select` decides, in the policy's priority
  order, on a `RoundPlan` — the whole cluster as if free, where each running candidate still holds
  its GPUs until it is decided. The plan is built so that executing it can never fail:
  * a running job chosen again keeps its GPUs when no earlier (higher-priority) choice took them:
    it is *renewed*, no cost;
  * a newly chosen job is planned first on GPUs that no undecided running candidate holds; only
    when no placement exists there is it planned on the GPUs of running candidates not decided yet
    (they rank below it, so it may take them);
  * a running job whose GPUs an earlier choice took is planned elsewhere if it still fits — it is
    *migrated* (checkpoint, release, cold start on its new GPUs) — or it is not chosen;
  * the plan is then compacted (`_compact`): every chosen running job stays on its GPUs when all
    the new choices still fit around them; only when one does not are the migrations kept.
  Then, as the ASTRAEA paper's coordinator does: every running job not renewed is checkpointed
  and released, and only after all releases the chosen jobs start on exactly their planned GPUs.
  The plan is the execution: `dropped_choices` (chosen but not started) is counted and is 0, and
  `migrations` counts the moved jobs. A work-conserving fill follows at the same instant; a job it
  puts back on the very GPUs it was just preempted from counts as renewed (no cost). Rounds
  happen only while some job waits (otherwise every running job would be renewed).
- work conservation: after every round and fill the waiting jobs for which a gang placement exists
  on the free GPUs are counted (`work_conservation_gaps`, instants with at least one such job).
  Policies whose rule leaves such jobs waiting say so in `work_conserving = False`: `fifo`
  (head-of-line blocking) and `yarn-cs` (a tenant's queue is FIFO: its later jobs never overtake
  its blocked head).
- the scheduler works at scheduling-interval ticks (multiples of `interval_s`): a job submitted
  between two ticks is seen at the next one (as in the paper's simulator, which handles the jobs
  submitted during the previous interval). It is Active in the LTGF ledgers from that tick
  (`rho_from="tick"`, the default) or from its submit time (`rho_from="submit"`: a job is Active
  while pending or running, so the ≤ interval wait counts as sharing loss). Its JCT counts from its submit.
- between rounds, waiting jobs are placed into free GPUs at ticks — only when an arrival or a
  release may let one start, so a quiet cluster costs no events. A job started between rounds
  holds its GPUs until the next round.
- cold start: a job *resumed* after a preemption or a migration holds its GPUs but makes no progress
  for `cold_start_s` (it sits in a rate-0 engine group, then moves to the rate-1 group). The
  checkpoint written at every lease end is taken by the on-demand checkpoint daemon while training
  goes on (as in the ASTRAEA paper), so it costs nothing by itself; its restore is part of the cold
  start. Overhead per job = the cold-start seconds it actually spent (a resume cut short by the next
  round counts what it spent). A job's first start has no cold start.
- executed allocations: every stretch a job holds GPUs is recorded (`allocations()`: job, start,
  end, placement, kind = run / cold-start), so every ρ can be recomputed from the output files.
- LTGF ledgers (`schedulers.cluster.ltgf.LTGF`) are kept for every policy, so every policy gets ρ metrics.

Engine groups: one per-job group at rate 1 ("running": 1 s of work per second on its gang) and one
at rate 0 ("cold"). Ties everywhere: job index = (submit time, job_id) order.

May import numpy, schedulers.policy and schedulers.cluster.
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array

import numpy as np

from schedulers.cluster.nodes import Cluster
from schedulers.cluster.ltgf import FAIR_SHARES, LTGF
from schedulers.policy import IDLE, Allocation, Policy, PolicyError, register

COLD_START_S = 60.0  # restore + framework start of a resumed job (Gandiva/Tiresias report tens of s to ~1 min)
LEASE_S = 900.0
INTERVAL_S = 10.0
FAIR_WINDOW_S = 3600.0
NEW_JOB_BONUS = 1.0  # ASTRAEA phase 2: reward = -rho_job + bonus for never-started jobs (paper gives no number)
# when a job enters the LTGF ledgers (its t_begin); the first is the default (docs/fairness.md: with
# "submit" an ideal schedule already has sharing-loss jobs, the ≤ interval wait for the first tick)
RHO_FROM = ("tick", "submit")
_EPS = 1e-9


def first_tick(t: float, interval_s: float) -> float:
    """The first scheduling tick (multiple of `interval_s`) at or after t: when a job submitted at t
    is seen by the scheduler."""
    return math.ceil(t / interval_s - _EPS) * interval_s


class ClusterPolicy(Policy):
    """Shared cluster mechanics; subclasses implement `order` (or `select`)."""

    kind = "cluster"
    preemptive = True  # re-decide at lease rounds
    strict = False  # stop at the first job that does not fit (FIFO) instead of skipping it
    work_conserving = True  # False: the policy's own rule may leave a job waiting that would fit (documented)
    # True: the policy keeps its waiting jobs in its own queues, and fills and rounds offer it a
    # `Candidates` marker (`fill_candidates` / `round_candidates`) that its `select` or `order`
    # reads from them instead of a list of every waiting job
    queued = False

    def __init__(self, *, nodes: int = 8, gpus_per_node: int = 8, node_capacities=None, lease_s: float = LEASE_S,
                 interval_s: float = INTERVAL_S, cold_start_s: float = COLD_START_S, tenant_weights=None,
                 fair_share: str = FAIR_SHARES[0], fair_window_s: float = FAIR_WINDOW_S, rho_from: str = RHO_FROM[0],
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
        self.job_ids = J.job_id
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
        self.plan_allowed: dict[int, object] = {}  # the node restriction it was planned under (HiveD's cells)
        self.dropped_choices = 0  # chosen at a round but not started (the plan is the execution: stays 0)
        self.migrations = [0] * n  # renewed on other GPUs than it held (checkpoint + cold start)
        self.work_conservation_gaps = 0  # rounds/fills after which a waiting job would have fit
        # executed allocations, one row per stretch a job holds GPUs (kind 0 = run, 1 = cold start)
        # (typed arrays: a long run records millions of stretches, and a float in a list costs 32 bytes)
        self.seg_job = array("q")
        self.seg_start = array("d")
        self.seg_end = array("d")
        self.seg_place: list[tuple] = []  # the job's placement tuple itself, shared, not a copy
        self.seg_kind = array("b")
        self.seg_open = [-1] * n  # index of the job's open segment, -1 if it holds no GPUs
        self._offers = (Candidates(self, running=False), Candidates(self, running=True))
        self.setup(view)

    def setup(self, view) -> None:
        """Per-run state of a subclass."""

    def node_owners(self, quota) -> list[int]:
        """The tenant each node is reserved for, by index into the tenants (0 for every node when the
        policy reserves none: its kernel's placements are then unrestricted); `quota`: the tenants'
        quotas in GPUs. HiveD's cells."""
        return [0] * len(self.capacities)

    # ----- decision hooks ----------------------------------------------------------------------
    def order(self, view, candidates: list[int]) -> list[int]:
        """Candidates in priority order (default: submit order)."""
        return sorted(candidates)

    def fill_candidates(self):
        """The candidates of a fill between rounds: the waiting jobs — the `Candidates` marker for a
        `queued` policy. A policy with its own submit-order queue (fifo, yarn-cs) returns that queue,
        which its `select` then reads."""
        return self._offers[0] if self.queued else list(self.waiting)

    def round_candidates(self):
        """The candidates of a round: the running, then the waiting jobs (the marker for a `queued`
        policy)."""
        return self._offers[1] if self.queued else list(self.holding) + list(self.waiting)

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

    def try_place(self, cluster, j: int, allowed=None) -> bool:
        """Plan j on `cluster` (a RoundPlan at rounds, the real Cluster at fills) and take the GPUs.

        A running job (or one preempted at this very instant) keeps its GPUs when they are still
        free there; otherwise j gets a consolidated placement (`cluster.find`, which at a round
        prefers GPUs no undecided running job holds)."""
        if not (isinstance(j, (int, np.integer)) and 0 <= j < len(self.placement)):  # -1 would place the last job
            raise PolicyError(f"{self.name}: placed {self._job_label(j)} at t = {self.now:g}")
        held = self.placement[j]
        holding = j in self.holding
        # renewal, or undo of this instant's preemption: the GPUs it holds (held) if they are free there
        if ((holding or self.preempted_at[j] == self.now) and held is not None and cluster.fits(held)
                and (allowed is None or all(n in allowed for n, _ in held))):
            p = held
            if holding and isinstance(cluster, RoundPlan):
                cluster.renew(p)
            else:
                cluster.take(p)
        else:
            g = self.gpus[j]
            if g > cluster.free_total:
                return False
            p = cluster.find(g, allowed)
            if p is None:
                return False
            cluster.take(p)
            if holding and isinstance(cluster, RoundPlan):
                cluster.decided(held)
        self.plan[j] = p
        self.plan_allowed[j] = allowed
        return True

    def place_leftovers(self, cluster, jobs, chosen: list[int], charge=None, missed: set[int] | None = None,
                        settled=None) -> bool:
        """The work-conserving pass of a rule: place each of `jobs`, in order, that fits on the GPUs
        left, appending it to `chosen` (and calling `charge(j)`); False once no GPU is free, or once
        `settled(missed, free)` says after a miss that no job left can be placed.

        A waiting job's placement is a function of the free GPUs alone, and they change only when a
        job is placed, so a gang size that found none is skipped until the next choice (a running
        job, or one preempted at this instant, may still keep its own GPUs: always tried). `missed`,
        those gang sizes, may be the caller's, shared with its own passes since the last choice."""
        gpus, holding, preempted_at, now = self.gpus, self.holding, self.preempted_at, self.now
        if missed is None:
            missed = set()
        for j in jobs:
            free = cluster.free_total
            if free == 0:
                return False
            g = gpus[j]
            plain = j not in holding and preempted_at[j] != now
            if g > free or (plain and g in missed):
                continue
            if self.try_place(cluster, j):
                chosen.append(j)
                missed.clear()
                if charge is not None:
                    charge(j)
            elif plain:
                missed.add(g)
                if settled is not None and settled(missed, free):
                    return False
        return True

    # ----- engine callback ------------------------------------------------------------------------
    def allocate(self, view) -> Allocation:
        now = self.now = view.now
        alloc = Allocation()
        for j in view.completed:
            self._complete(j, now)
        tick = first_tick(now, self.interval_s)
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
                self._close_segment(j, t)
                self._open_segment(j, t, 0)
                alloc.assign(j, self.run_group)
        decided = False
        if now >= self.next_round - _EPS:
            k = math.floor(now / self.lease_s + _EPS)
            if (k + 1) * self.lease_s <= now + _EPS:  # now / lease rounded below the boundary now is at (large times)
                k += 1
            self.next_round = (k + 1) * self.lease_s
            # a round only AT a lease boundary: an event after a boundary nothing waited at (an
            # arrival, a release) must not cut the running jobs' leases short; they last to the next
            if self.preemptive and self.waiting and now - k * self.lease_s <= _EPS:
                self._round(view, alloc, now)
                decided = True
        if self.dirty and self.waiting and self._may_place():
            if on_tick:
                self._fill(view, alloc, now)
                decided = True
            else:
                alloc.wake_at(tick)
        if decided and self.waiting and self._may_place():
            self.work_conservation_gaps += 1
            if self.check and self.work_conserving:
                raise PolicyError(f"{self.name}: a waiting job fits on the free GPUs after the decision at t = {now:g}")
        if self.cold_heap:
            alloc.wake_at(self.cold_heap[0][0])
        if self.preemptive and self.waiting:
            alloc.wake_at(self.next_round)
        if self.check:
            self.cluster.check()
        return alloc

    # ----- mechanics -----------------------------------------------------------------------------
    def _may_place(self) -> bool:
        """Some waiting job has a gang placement on the free GPUs (each distinct demand is checked:
        consolidated placement is not monotone in the demand)."""
        free = self.cluster.free_total
        return any(g <= free and self.cluster.find(g) is not None for g in self.wait_demand)

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
            self._close_segment(j, now)
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
            self._reopen_segment(j, now)
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
            self._open_segment(j, now, 1)
            alloc.assign(j, self.cold_group)
        else:
            if self.started[j]:
                self.resumes[j] += 1
            self.started[j] = True
            self._open_segment(j, now, 0)
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
        self._close_segment(j, now)
        self.preempted[j] += 1
        self.preempted_at[j] = now
        self._wait(j, now)
        alloc.assign(j, IDLE)

    def _round(self, view, alloc: Allocation, now: float) -> None:
        """Decide on a RoundPlan, then execute exactly that plan: releases first, then starts."""
        self.rounds += 1
        self.undo_cold: dict[int, tuple[float, float]] = {}
        plan = RoundPlan(self.cluster, [self.placement[j] for j in self.holding])
        self.plan.clear()
        chosen = self._checked(self.select(view, self.round_candidates(), plan), now)
        self._compact(chosen)
        renewed = {j for j in chosen if j in self.holding and self.plan[j] == self.placement[j]}
        moved = {j for j in chosen if j in self.holding and j not in renewed}
        for j in sorted(self.holding):
            if j not in renewed:  # not chosen, or chosen on other GPUs: checkpoint and release
                self._preempt(alloc, j, now)
        for j in chosen:
            if j in renewed:
                continue
            p = self.plan[j]
            if not self.cluster.fits(p):  # cannot happen: the plan is feasible once the releases are done
                self.dropped_choices += 1
                if self.check:
                    raise PolicyError(f"{self.name}: job {j} chosen at t = {now:g} but its planned GPUs are taken")
                continue
            self.cluster.take(p)
            self._start(view, alloc, j, p, now)
            if j in moved:  # a migration, not a lost lease
                self.preempted[j] -= 1
                self.migrations[j] += 1
        if self.check:
            for j in chosen:
                if j not in self.holding or self.placement[j] != self.plan[j]:
                    raise PolicyError(f"{self.name}: job {j} chosen at t = {now:g} does not hold its planned GPUs")
            if set(self.holding) != set(chosen):
                raise PolicyError(f"{self.name}: the jobs holding GPUs after the round at t = {now:g} are not the chosen ones")
        self.dirty = True

    def _compact(self, chosen: list[int]) -> None:
        """Keep every chosen running job on its GPUs when the other choices still fit around them.

        The chosen running jobs hold disjoint GPUs now, so keeping them all is feasible; each new
        choice then takes its planned GPUs if they are left, else a consolidated placement on the
        GPUs left (under the same node restriction it was planned with). If some new choice fits
        nowhere, the plan stays as built — its migrations are needed. Either way every chosen job
        gets GPUs, and the plan that results is the one executed."""
        placed: dict[int, tuple] = {j: self.placement[j] for j in chosen if j in self.holding}
        if all(self.plan[j] == p for j, p in placed.items()):
            return  # the plan already keeps every chosen running job where it is
        packed = self.cluster.empty_copy()
        for p in placed.values():
            packed.take(p)
        for j in chosen:
            if j in placed:
                continue
            p = self.plan[j]
            if not packed.fits(p):
                p = packed.find(self.gpus[j], self.plan_allowed.get(j))
                if p is None:
                    return
            packed.take(p)
            placed[j] = p
        self.plan.update(placed)

    def _fill(self, view, alloc: Allocation, now: float) -> None:
        # on the real cluster: select takes the GPUs it plans, so the plan is the execution here too
        self.dirty = False
        self.plan.clear()
        for j in self._checked(self.select(view, self.fill_candidates(), self.cluster), now):
            self._start(view, alloc, j, self.plan[j], now)

    def _checked(self, chosen, now: float) -> list[int]:
        """What `select` returned, if it is a decision that can be executed: distinct jobs, each placed
        by `try_place` (or `place_leftovers`) in this very call."""
        try:
            chosen = list(chosen)
        except TypeError:
            raise PolicyError(f"{self.name}: select returned a {type(chosen).__name__}, not a list of job indices") from None
        seen = set()
        for j in chosen:
            if j not in self.holding and j not in self.waiting:  # an order or select that offers a job it was not given
                raise PolicyError(f"{self.name}: chose {self._job_label(j)} at t = {now:g}, which is neither running "
                                  "nor waiting")
            if j not in self.plan:
                raise PolicyError(f"{self.name}: chose {self._job_label(j)} at t = {now:g} without placing it "
                                  "(select returns the jobs that try_place placed)")
            if j in seen:
                raise PolicyError(f"{self.name}: chose {self._job_label(j)} twice at t = {now:g}")
            seen.add(j)
        return chosen

    def _job_label(self, j) -> str:
        if isinstance(j, (int, np.integer)) and 0 <= j < len(self.placement):
            return f"job {self.job_ids[j]}"
        return f"{j!r} (no job index: 0 to {len(self.placement) - 1})"

    # ----- executed allocations -------------------------------------------------------------------
    def _open_segment(self, j: int, t: float, kind: int) -> None:
        self.seg_open[j] = len(self.seg_job)
        self.seg_job.append(j)
        self.seg_start.append(t)
        self.seg_end.append(math.nan)
        self.seg_place.append(self.placement[j])
        self.seg_kind.append(kind)

    def _close_segment(self, j: int, t: float) -> None:
        i = self.seg_open[j]
        if i >= 0:
            self.seg_end[i] = t
            self.seg_open[j] = -1

    def _reopen_segment(self, j: int, t: float) -> None:
        """Undo of a preemption at this instant: the stretch it closed goes on."""
        for i in range(len(self.seg_job) - 1, -1, -1):
            if self.seg_job[i] == j:
                if self.seg_end[i] == t:
                    self.seg_end[i] = math.nan
                    self.seg_open[j] = i
                    return
                break
        self._open_segment(j, t, 1 if j in self.undo_cold else 0)

    def allocations(self):
        """Executed allocations: (job index, start, end, placement, kind) per stretch of held GPUs,
        kind "run" or "cold-start"; zero-length stretches are left out."""
        kinds = ("run", "cold-start")
        job, start, end, places, kind = self.allocation_arrays()
        return [(j, a, b, p, kinds[k]) for j, a, b, p, k in
                zip(job.tolist(), start.tolist(), end.tolist(), places, kind.tolist())]

    def allocation_arrays(self):
        """`allocations()` as columns, without a tuple per stretch: (job index, start, end as numpy
        arrays, placements as a list, kind codes 0 = run / 1 = cold-start)."""
        start = np.frombuffer(self.seg_start, np.float64) if len(self.seg_start) else np.zeros(0)
        end = np.frombuffer(self.seg_end, np.float64) if len(self.seg_end) else np.zeros(0)
        keep = end > start  # an open stretch (end NaN) or a zero-length one is left out
        rows = np.flatnonzero(keep)
        job = np.frombuffer(self.seg_job, np.int64)[rows] if len(rows) else np.zeros(0, np.int64)
        kind = np.frombuffer(self.seg_kind, np.int8)[rows] if len(rows) else np.zeros(0, np.int8)
        place = self.seg_place
        return job, start[rows], end[rows], [place[i] for i in rows.tolist()], kind

    # ----- helpers for decisions --------------------------------------------------------------------
    def progress(self, view, j: int) -> float:
        """Seconds of work done (service at rate 1)."""
        return view.attained(j)



class RoundPlan:
    """The cluster as a round sees it: every GPU is free to plan, but a running candidate holds its
    GPUs until it is decided, and new jobs go to GPUs nobody holds when they can.

    `plan` carries every decision taken so far (its free counts are what `select` plans on);
    `unclaimed` is `plan` minus the GPUs of undecided running candidates, per node. `find` tries
    `unclaimed` first and falls back to `plan` (taking GPUs of running candidates that rank below
    the job being placed: they will be migrated or not renewed), consolidated as on an empty
    cluster. (Choosing instead the node where the gang displaces the fewest held GPUs was measured on
    the Venus-like scenario: it moved 1.7× more jobs.) Per node, the planned GPUs never
    exceed the node, and a renewed job's GPUs are in the plan as they are on the real cluster, so
    once every job not renewed is released, every planned placement fits: executing it cannot fail.
    """

    __slots__ = ("plan", "unclaimed", "held", "fits")

    def __init__(self, cluster: Cluster, holdings) -> None:
        self.plan = cluster.empty_copy()
        self.fits = self.plan.fits  # `fits(placement)`: every planned placement is checked against the plan
        held = self.held = [0] * len(cluster.capacity)
        for placement in holdings:
            for node, k in placement:
                held[node] += k
        self.unclaimed = cluster.with_free([max(0, c - h) for c, h in zip(cluster.capacity, held)])

    @property
    def free_total(self) -> int:
        return self.plan.free_total

    @property
    def capacity(self) -> list[int]:
        return self.plan.capacity

    @property
    def free(self) -> list[int]:
        return self.plan.free

    def _sync(self, node: int) -> None:
        value = self.plan.free[node] - self.held[node]
        if value < 0:
            value = 0
        if value != self.unclaimed.free[node]:
            self.unclaimed.set_free(node, value)

    def find(self, g: int, allowed=None):
        placement = self.unclaimed.find(g, allowed)
        if placement is not None:
            return placement
        return self.plan.find(g, allowed)

    def take(self, placement) -> None:
        self.plan.take(placement)
        for node, _ in placement:
            self._sync(node)

    def decided(self, held) -> None:
        """A running candidate was chosen: the GPUs it held no longer count as held."""
        for node, k in held:
            self.held[node] -= k
            self._sync(node)

    def renew(self, held) -> None:
        """A running candidate keeps its GPUs: take them and stop counting them as held. The
        unclaimed GPUs of its nodes stay as they are (planned and held both drop by the same count)."""
        self.plan.take(held)
        for node, k in held:
            self.held[node] -= k


class Candidates:
    """The jobs a fill (the waiting ones) or a round (the running, then the waiting ones) offers a
    `queued` policy (`fill_candidates` / `round_candidates`): its `select` or `order` reads them from
    its queues; anything else (a plugin subclass's own rule) may iterate it as a list of jobs."""

    __slots__ = ("policy", "running")

    def __init__(self, policy: ClusterPolicy, running: bool) -> None:
        self.policy = policy
        self.running = running

    def jobs(self) -> list[int]:
        policy = self.policy
        return (list(policy.holding) if self.running else []) + list(policy.waiting)

    def __iter__(self):
        return iter(self.jobs())

    def __len__(self) -> int:
        return len(self.jobs())

    def __repr__(self) -> str:
        return f"<the {'running and ' if self.running else ''}waiting jobs>"


class TenantQueues:
    """Per-tenant queues of the waiting jobs for a `queued` ClusterPolicy whose rule groups them by
    tenant (ASTRAEA, AlloX): `queues[k]` the tenant's waiting jobs (in the order they started
    waiting; the rules sort them), `queue_sizes[k]` {gang size: how many of them}. Mix in before
    ClusterPolicy and call `setup_queues()` from `setup`."""

    def setup_queues(self) -> None:
        self.queues: list[dict[int, None]] = [{} for _ in range(self.T)]
        self.queue_sizes: list[dict[int, int]] = [{} for _ in range(self.T)]

    def _wait(self, j, now):
        super()._wait(j, now)
        k, g = self.tenant[j], self.gpus[j]
        self.queues[k][j] = None
        sizes = self.queue_sizes[k]
        sizes[g] = sizes.get(g, 0) + 1

    def _unwait(self, j):
        super()._unwait(j)
        k, g = self.tenant[j], self.gpus[j]
        del self.queues[k][j]
        sizes = self.queue_sizes[k]
        c = sizes[g] - 1
        if c:
            sizes[g] = c
        else:
            del sizes[g]


def enqueue(queue, j: int) -> None:
    """Add waiting job j to a queue kept in submit (job index) order: appended, or put in its place
    when it waits again after a preemption (only in a subclass of a non-preemptive policy)."""
    if queue and j < queue[-1]:
        bisect.insort(queue, j)
    else:
        queue.append(j)


def dequeue(queue, j: int) -> None:
    """Remove job j, which starts, from its queue: the head, unless a preempting subclass chose another."""
    if queue[0] == j:
        queue.popleft()
    else:
        queue.remove(j)


def _rho(attained: float, fair: float) -> float:
    if fair > 0.0:
        return attained / fair
    return 0.0 if attained <= 0.0 else math.inf
