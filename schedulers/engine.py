"""The one discrete-event simulator core that every policy runs on.

The engine owns time, events and accounting; a policy owns only its decision. Service is
organised in *groups*: a group has a rate and a set of member jobs. A *shared* group splits its
total rate equally among its members (processor sharing); a *per-job* group gives every member
the same rate. Each group keeps a virtual clock V (service received so far by any one member) and
a heap of members keyed by the virtual time at which they finish, so that

    attained_j(t) = base_j + V_g(t) - V_g(at join)

is exact between events and a group with k members costs O(log k) per arrival or completion —
round robin, PRR and LAS included. Events are arrivals, completions, and wake-ups a policy asks
for (lease ends, scheduling intervals, LAS level crossings). Between events every active group's
clock advances by rate * dt; nothing is sampled on a time grid.

Observers (fairness accounting) get `on_interval(engine, t0, t1)` for every stretch of time in
which the allocation is constant, before the events at t1 are processed.

A plugin policy's exceptions (and the rule breaks the engine finds) are reported as the plugin's
(`schedulers.policy_base.guard`). `simulate` runs the built-in single-machine policies on their
specialised loops (schedulers.fastpath), with this engine as the reference implementation.
May import numpy and schedulers.policy_base / schedulers.jobs / schedulers.fastpath only.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass

import numpy as np

from schedulers.fastpath import fast_simulate
from schedulers.jobs import JobSet
from schedulers.policy_base import IDLE, Allocation, Policy, PolicyError, guard

_REL_TOL = 1e-11  # completions closer than this (relative, in virtual service) are simultaneous
_MAX_IDLE_WAKES = 10_000  # wake-ups in a row that serve nobody or let no time pass: a stuck policy


@dataclass(frozen=True, eq=False)
class SimResult:
    """Per-job outcome of one simulation, in JobSet row order, times from the shifted origin."""

    completion_time: np.ndarray
    start_time: np.ndarray
    preemptions: np.ndarray
    events: int


def _read_only(values):
    """A view of `values` that cannot be written: a policy that writes into the job arrays would
    change the instance under every later run (and the metrics computed from it)."""
    if values is None:
        return None
    view = values.view()
    view.flags.writeable = False
    return view


class JobsView:
    """What a policy may read about jobs, read-only. True sizes only for clairvoyant policies."""

    __slots__ = ("_jobs", "_clairvoyant", "n", "submit_time", "predicted", "predicted_log_sd", "gpus", "tenant", "weight",
                 "job_id", "tenant_names")

    def __init__(self, jobs: JobSet, clairvoyant: bool):
        self._jobs = jobs
        self._clairvoyant = clairvoyant
        self.n = jobs.n
        self.submit_time = _read_only(jobs.submit_time)
        self.predicted = _read_only(jobs.predicted)
        self.predicted_log_sd = _read_only(jobs.predicted_log_sd)
        self.gpus = _read_only(jobs.gpus)
        self.tenant = _read_only(jobs.tenant)
        self.tenant_names = jobs.tenant_names
        self.weight = _read_only(jobs.weight)
        self.job_id = _read_only(jobs.job_id)

    @property
    def size(self) -> np.ndarray:
        if not self._clairvoyant:
            raise PolicyError("a non-clairvoyant policy tried to read true job sizes")
        return _read_only(self._jobs.size)


class View:
    """The state a policy sees at an event. Reused between events (do not keep references)."""

    __slots__ = ("_e", "jobs", "now", "arrived", "completed", "woken")

    def __init__(self, engine: "Engine", clairvoyant: bool):
        self._e = engine
        self.jobs = JobsView(engine.jobs, clairvoyant)
        self.now = 0.0
        self.arrived: list[int] = []
        self.completed: list[int] = []
        self.woken = False

    def _job(self, j) -> int:
        # a negative index would silently read another job's state (IDLE is -1)
        if not (isinstance(j, (int, np.integer)) and 0 <= j < self.jobs.n):
            raise PolicyError(f"asked about {j!r}, which is no job index (0 to {self.jobs.n - 1})")
        return j

    def attained(self, j: int) -> float:
        return self._e.attained(self._job(j))

    def remaining(self, j: int) -> float:
        if not self.jobs._clairvoyant:
            raise PolicyError("a non-clairvoyant policy tried to read remaining sizes")
        return self._e.size[self._job(j)] - self._e.attained(j)

    def new_group(self, rate: float = 0.0, *, shared: bool = True) -> int:
        return self._e.new_group(rate, shared)

    def group_size(self, g: int) -> int:
        return self._e.g_count[g]

    def group_clock(self, g: int) -> float:
        """Service received so far by any one member of group g since the group was created."""
        return self._e.g_V[g]

    def is_done(self, j: int) -> bool:
        return self._e.done[self._job(j)]


def _require_predictions(jobs: JobSet, policy: Policy) -> None:
    if policy.needs_prediction and jobs.predicted is None:
        raise PolicyError(f"policy '{policy.name}' needs predicted durations and none were given")


class Engine:
    """Run `policy` on `jobs` with `machines` unit-speed machines (capacity check).

    `machines=None` disables the rate-capacity check; the cluster model then checks GPUs itself.
    """

    def __init__(self, jobs: JobSet, policy: Policy, *, machines: int | None = 1, observers=()):
        _require_predictions(jobs, policy)
        self.jobs = jobs
        self.policy = policy
        self.machines = machines
        self.observers = list(observers)
        n = jobs.n
        self.size: list[float] = jobs.size.tolist()
        self.group_of: list[int] = [IDLE] * n
        self.base: list[float] = [0.0] * n  # attained service when the job last changed group
        self.vjoin: list[float] = [0.0] * n  # group clock when it joined
        self.stamp: list[int] = [0] * n  # invalidates stale heap entries
        self.done: list[bool] = [False] * n
        self.released: list[bool] = [False] * n
        self.completion = np.full(n, np.nan)
        self.start: list[float] = [math.nan] * n
        self.preemptions = np.zeros(n, np.int64)
        # groups
        self.g_V: list[float] = []
        self.g_rate: list[float] = []
        self.g_shared: list[bool] = []
        self.g_count: list[int] = []
        self.g_heap: list[list] = []
        self.active: set[int] = set()  # groups with members and positive rate
        self._dirty: set[int] = set()  # groups whose membership changed since the last refresh
        self.now = 0.0

    # ----- groups -------------------------------------------------------------------------
    def new_group(self, rate: float, shared: bool) -> int:
        self.g_V.append(0.0)
        self.g_rate.append(float(rate))
        self.g_shared.append(bool(shared))
        self.g_count.append(0)
        self.g_heap.append([])
        return len(self.g_V) - 1

    def member_rate(self, g: int) -> float:
        k = self.g_count[g]
        if k == 0:
            return 0.0
        return self.g_rate[g] / k if self.g_shared[g] else self.g_rate[g]

    def attained(self, j: int) -> float:
        g = self.group_of[j]
        if g == IDLE:
            return self.base[j]
        return self.base[j] + (self.g_V[g] - self.vjoin[j])

    def _refresh(self, g: int) -> None:
        if self.g_count[g] > 0 and self.g_rate[g] > 0.0:
            self.active.add(g)
        else:
            self.active.discard(g)

    def _move(self, j: int, g: int) -> None:
        # checked, not indexed: a negative index (IDLE is -1) would silently move another job or group
        if not (isinstance(j, (int, np.integer)) and 0 <= j < len(self.done)):
            raise PolicyError(f"policy '{self.policy.name}' assigned {j!r}, which is no job index (0 to {len(self.done) - 1})")
        if g != IDLE and not (isinstance(g, (int, np.integer)) and 0 <= g < len(self.g_V)):
            raise PolicyError(f"policy '{self.policy.name}' assigned job {self.jobs.job_id[j]} to {g!r}, which is no "
                              "group (view.new_group returns one; IDLE takes a job out of service)")
        if self.done[j]:
            raise PolicyError(f"policy '{self.policy.name}' assigned completed job {self.jobs.job_id[j]}")
        if not self.released[j]:
            raise PolicyError(f"policy '{self.policy.name}' assigned job {self.jobs.job_id[j]} before its release")
        old = self.group_of[j]
        if old == g:
            return
        if old != IDLE:
            self.base[j] += self.g_V[old] - self.vjoin[j]
            self.g_count[old] -= 1
            self._dirty.add(old)
            if self.g_rate[old] > 0.0 and (g == IDLE or self.g_rate[g] <= 0.0):
                self.preemptions[j] += 1
        self.stamp[j] += 1
        self.group_of[j] = g
        if g != IDLE:
            V = self.g_V[g]
            self.vjoin[j] = V
            self.g_count[g] += 1
            heapq.heappush(self.g_heap[g], (V + self.size[j] - self.base[j], j, self.stamp[j]))
            self._dirty.add(g)

    def _top(self, g: int):
        heap = self.g_heap[g]
        stamp, group_of = self.stamp, self.group_of
        while heap:
            finish, j, s = heap[0]
            if s == stamp[j] and group_of[j] == g:
                return finish, j
            heapq.heappop(heap)
        return None

    def _apply(self, alloc: Allocation | None, wakes: list[float]) -> None:
        if alloc is None:
            return
        if not isinstance(alloc, Allocation):
            raise PolicyError(f"policy '{self.policy.name}' returned a {type(alloc).__name__} from allocate, "
                              "not an Allocation or None")
        g_rate, start, dirty = self.g_rate, self.start, self._dirty
        for g, rate in alloc.rates.items():
            if not (isinstance(g, (int, np.integer)) and 0 <= g < len(g_rate)):
                raise PolicyError(f"policy '{self.policy.name}' set the rate of {g!r}, which is no group")
            if not (isinstance(rate, (int, float, np.integer, np.floating)) and 0.0 <= rate < math.inf):
                raise PolicyError(f"policy '{self.policy.name}' set an invalid rate {rate!r}")
            g_rate[g] = float(rate)
            dirty.add(g)
        for j, g in alloc.moves:
            self._move(j, g)
            if g != IDLE and g_rate[g] > 0.0 and start[j] != start[j]:  # NaN: never served yet
                start[j] = self.now
        for g in dirty:
            self._refresh(g)
        dirty.clear()
        if alloc.wake is not None:
            if not alloc.wake >= self.now:  # NaN too: it would never be woken
                raise PolicyError(f"policy '{self.policy.name}' asked to wake at {alloc.wake!r}, which is not a time at or "
                                  f"after now ({self.now:g})")
            heapq.heappush(wakes, alloc.wake)
        if self.machines is not None:
            self._check_capacity()

    def _check_capacity(self) -> None:
        total = 0.0
        for g in self.active:
            rate, k = self.g_rate[g], self.g_count[g]
            member = rate / k if self.g_shared[g] else rate
            if member > 1.0 + 1e-9:
                raise PolicyError(f"policy '{self.policy.name}' ran a job at rate {member} > 1")
            total += member * k
        if total > self.machines * (1.0 + 1e-9):
            raise PolicyError(f"policy '{self.policy.name}' used capacity {total} > {self.machines}")

    # ----- main loop ----------------------------------------------------------------------
    def run(self) -> SimResult:
        with guard(self.policy):
            return self._run()

    def _run(self) -> SimResult:
        jobs, policy = self.jobs, self.policy
        n = jobs.n
        submit = jobs.submit_time.tolist()
        view = View(self, policy.clairvoyant)
        policy.reset(view)
        wakes: list[float] = []
        next_arrival = 0
        finished = 0
        events = 0
        idle_wakes, last_call = 0, -math.inf
        g_V, active, member_rate = self.g_V, self.active, self.member_rate
        while finished < n:
            # next event time
            t_next = submit[next_arrival] if next_arrival < n else math.inf
            if wakes and wakes[0] < t_next:
                t_next = wakes[0]
            best_g, best_finish = -1, 0.0
            due: list[tuple[float, int, float]] = []  # (completion time, group, member rate)
            for g in active:
                top = self._top(g)
                if top is None:
                    continue
                rate = member_rate(g)
                t = self.now + (top[0] - g_V[g]) / rate
                due.append((t, g, rate))
                if t < t_next or (t == t_next and best_g < 0):
                    t_next, best_g, best_finish = t, g, top[0]
            if math.isinf(t_next):
                raise PolicyError(f"policy '{policy.name}' left {n - finished} job(s) unserved with nothing pending")
            if t_next < self.now:
                t_next = self.now
            dt = t_next - self.now
            if dt > 0.0:
                for obs in self.observers:
                    obs.on_interval(self, self.now, t_next)
                for _, g, rate in due:  # every active group has a member, hence an entry in due
                    g_V[g] += rate * dt
            if best_g >= 0:
                g_V[best_g] = max(g_V[best_g], best_finish)  # exact arithmetic at the event
            self.now = t_next
            events += 1
            # completions
            completed: list[int] = []
            horizon = t_next + _REL_TOL * max(1.0, t_next)
            for t, g, _ in due:
                if t > horizon:
                    continue
                V = g_V[g]
                tol = _REL_TOL * max(1.0, abs(V))
                while True:
                    top = self._top(g)
                    if top is None or top[0] > V + tol:
                        break
                    j = top[1]
                    heapq.heappop(self.g_heap[g])
                    self.base[j] = self.size[j]
                    self.group_of[j] = IDLE
                    self.stamp[j] += 1
                    self.g_count[g] -= 1
                    self.done[j] = True
                    self.completion[j] = t_next
                    completed.append(j)
                self._refresh(g)
            finished += len(completed)
            # arrivals
            arrived: list[int] = []
            while next_arrival < n and submit[next_arrival] <= t_next:
                self.released[next_arrival] = True
                arrived.append(next_arrival)
                next_arrival += 1
            woken = False
            while wakes and wakes[0] <= t_next:
                heapq.heappop(wakes)
                woken = True
            if not (completed or arrived or woken):
                continue
            view.now, view.arrived, view.completed, view.woken = t_next, arrived, completed, woken
            self._apply(policy.allocate(view), wakes)
            if events > 50 * n + 1_000_000:
                raise PolicyError(f"policy '{policy.name}' did not finish within {events} events")
            # a wake-up after which no job is in service, or one at the instant of the last call: a policy
            # that never serves its jobs, or asks to be woken now again and again, would otherwise take
            # the whole event budget (a minute on a tiny instance)
            stalled = not (completed or arrived) and (not active or t_next == last_call)
            idle_wakes = idle_wakes + 1 if stalled else 0
            last_call = t_next
            if idle_wakes > _MAX_IDLE_WAKES:
                raise PolicyError(f"policy '{policy.name}' is stuck: {idle_wakes - 1} wake-ups in a row with no job in "
                                  f"service or no time passing (t = {t_next:g}, {n - finished} job(s) unfinished)")
        for obs in self.observers:
            if hasattr(obs, "on_finish"):
                obs.on_finish(self)
        return SimResult(self.completion, np.asarray(self.start, np.float64), self.preemptions, events)


def simulate(jobs: JobSet, policy: Policy, *, machines: int | None = 1, observers=(), reference: bool = False) -> SimResult:
    """Run one policy on one job set; see Engine.

    A built-in single-machine policy on one machine without observers runs on its specialised
    loop in schedulers.fastpath at a fraction of the cost per event. It gives the engine's
    schedule: the same start times and preemption counts, completion times bit for bit except
    for `las` and `edf-p` (equal to float rounding, ~1e-14 relative: their loops skip the engine's
    idle wake-ups, so they report fewer events). `reference=True` always runs the engine.
    """
    if not reference and machines == 1 and not observers:
        _require_predictions(jobs, policy)  # before a fast loop reads p̂
        raw = fast_simulate(jobs, policy)
        if raw is not None:
            completion, start, preemptions, events = raw
            n = jobs.n
            return SimResult(np.asarray(completion, np.float64), np.asarray(start, np.float64),
                             np.zeros(n, np.int64) if preemptions is None else np.asarray(preemptions, np.int64),
                             events)
    return Engine(jobs, policy, machines=machines, observers=observers).run()
