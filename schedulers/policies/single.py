"""Single-machine policies (one unit-speed machine, release dates), docs/policies.md.

Every policy is O(log n) per event: one-job-at-a-time policies keep a heap of waiting jobs; the
sharing policies (rr, prr, las) put jobs into engine service groups, whose virtual clocks make
processor sharing exact without touching every job at every event. Ties are broken by job index,
which is (submit time, job_id) order.

A one-job-at-a-time policy's order is one *key function* of its job columns (below: `true_size`,
`remaining_size`, ...), written once: the policy's `key` calls it on the engine, and the
specialised loop of schedulers.fastpath calls the same function (compiled into it by numba when
the compiled loops run). So are the decisions they share: the preemption rule of every
one-job-at-a-time policy (`preempts`) and EDF-P's doubling of S (`double_while_late`),
each a function of plain heaps, arrays and numbers that the engine's policy calls and the fast
loop runs as its plug-in.
May import schedulers.policy_base, schedulers.revision and schedulers.jit (`jitable`) only.
"""

from __future__ import annotations

import heapq

from schedulers.jit import jitable
from schedulers.policy_base import IDLE, Allocation, Policy, register
from schedulers.revision import NONE, check_log_sd, revise_outlived, rule_code


def clock_slack(now: float) -> float:
    """Service below this counts as received at time `now`: the clock resolves times to about 1e-16
    of now, so a wake-up computed to land on a threshold may land a few ulps short of it (and a
    policy that then asks for the same wake-up again would never move on)."""
    return 1e-12 * max(1.0, now)


# ----- the keys: each one-job-at-a-time policy's order, written once ------------------------------
# A key function (j, attained, submit, size, estimate, stretch) -> the key of job j (smaller runs
# first, ties by index): `attained` its service so far (0.0 at its release), `submit`, `size`
# (None for a policy that is not clairvoyant: never read by its key), `estimate` (p̂ until revised)
# columns, `stretch` the deadline factor S. The policy's `key` calls it (the engine's path); the
# fast loop (schedulers.fastpath) calls it compiled. Keys that read `attained` say so in their
# class (`key_reads_attained`), so that the engine computes it only for them.
@jitable(inline=True)
def submit_order(j, attained, submit, size, estimate, stretch):
    """fifo: every key equal, so the index (submit order) decides."""
    return 0.0


@jitable(inline=True)
def true_size(j, attained, submit, size, estimate, stretch):
    return size[j]


@jitable(inline=True)
def estimated_size(j, attained, submit, size, estimate, stretch):
    return estimate[j]


@jitable(inline=True)
def remaining_size(j, attained, submit, size, estimate, stretch):
    return size[j] - attained


@jitable(inline=True)
def estimated_remaining(j, attained, submit, size, estimate, stretch):
    remaining = estimate[j] - attained
    # max(0, remaining), in a form that numpy also runs on arrays of jobs (the fast loops compute every
    # job's release key in one call): a negative remaining gives -0.0, which orders as 0.0 does
    return remaining * (remaining > 0.0)


@jitable(inline=True)
def true_deadline(j, attained, submit, size, estimate, stretch):
    return submit[j] + stretch * size[j]


@jitable(inline=True)
def estimated_deadline(j, attained, submit, size, estimate, stretch):
    return submit[j] + stretch * estimate[j]


@jitable(inline=True)
def attained_service(j, attained, submit, size, estimate, stretch):
    return attained


# ----- the decisions that the engine's policies and the fast loops share ----------------------------
@jitable(inline=True)
def preempts(first, j, key, run):
    """The preemption rule of a one-job-at-a-time policy: whether the first waiting job `j`, of key
    `first`, takes the machine from the running job `run`, of key `key` — when it comes first by
    (key, index). `_OneAtATime.allocate` calls it on the engine, and the keyed loops of
    schedulers.fastpath; each then swaps the two through its heap of waiting jobs
    (heapq.heapreplace). (Of numbers only: the compiled loops took about 10 % more time when the
    rule took the heap — a reference count taken and dropped on it at every arrival.)"""
    return first < key or (first == key and j < run)


@jitable
def double_while_late(key, now, run, deadline, waiting, stretch, submit, size, estimate, moves):
    """EDF-P's doubling of S (`EDFP.after`): while the running job `run` is past its predicted deadline
    (`deadline` at S = `stretch`, at time `now`), S doubles, every waiting job's deadline is computed
    anew by `key` (the heap `waiting` of (deadline, job), re-keyed in place), and then the running
    job's, which keeps the machine unless a waiting job now takes it (`preempts`).
    `moves` is filled with the jobs' moves in order, (job, 0) out of service and (job, 1) into it:
    the preempted job, then the one taken. (stretch, doublings, running job, its deadline) after.
    The deadlines are read at no attained service: EDF-P's key does not read it (EDFP refuses a
    subclass whose key would). `EDFP.after` calls it on the engine, and edf-p's fast loop."""
    moves.clear()
    doublings = 0
    while now >= deadline:
        stretch *= 2.0
        doublings += 1
        for i in range(len(waiting)):
            j = waiting[i][1]
            waiting[i] = (key(j, 0.0, submit, size, estimate, stretch), j)
        heapq.heapify(waiting)
        deadline = key(run, 0.0, submit, size, estimate, stretch)
        if waiting and preempts(waiting[0][0], waiting[0][1], deadline, run):
            first, j = heapq.heapreplace(waiting, (deadline, run))
            moves.append((run, 0))
            moves.append((j, 1))
            run, deadline = j, first
    return stretch, doublings, run, deadline



def reached(attained: float, estimate: float) -> bool:
    """Whether a job's service has reached its estimate, float rounding of the wake-up time included."""
    return attained >= estimate - 1e-9 * max(1.0, estimate)


def revise(policy, view, j: int, attained: float) -> None:
    """schedulers.revision.revise_outlived on job j of a single-machine policy (its `estimate`,
    `revisions` and `revision_code`), a job the caller found at its estimate: a service a rounding
    short of it counts as the estimate."""
    log_sd = view.jobs.predicted_log_sd
    revise_outlived(policy.revision_code, policy.estimate, policy.revisions, j, max(attained, policy.estimate[j]),
                    0.0 if log_sd is None else float(log_sd[j]), float(view.jobs.predicted[j]))


class _OneAtATime(Policy):
    """Base for policies that run exactly one job at full rate; subclasses choose the key.

    A prediction-aware subclass orders jobs by a per-job *estimate* that starts at p̂ and, under a
    revision rule other than `none` (schedulers.revision), is revised when the running job has
    received as much service as its estimate: the policy asks to be woken at that instant, revises,
    and re-decides. Only the running job gains service, so only its estimate can be outlived: O(log n)
    per event. A non-preemptive policy decides only when the machine frees and never runs a job it
    has not finished, so a revision cannot change its schedule (the rule is accepted and has no
    effect there)."""

    preemptive = False
    revision = "none"  # the prediction-aware subclasses take it as a setting (_Revising)
    revision_code = NONE
    # the order: a key function above (staticmethod), which schedulers.fastpath runs too; a subclass
    # may instead override `key` (it then runs on the engine only)
    order_key = None
    key_reads_attained = False  # whether `order_key` reads the job's attained service
    # the preemption rule (a function above, staticmethod), which schedulers.fastpath runs too
    preemption_rule = staticmethod(preempts)
    stretch = 1.0  # the deadline factor S a deadline key reads (edf: its setting; edf-p: estimated online)

    def reset(self, view) -> None:
        self.group = view.new_group(1.0)
        self.waiting: list[tuple[float, int]] = []
        self.running = IDLE
        self.estimate = view.jobs.predicted.tolist() if self.needs_prediction else None
        self.revisions = [0] * view.jobs.n if self.revision_code != NONE else None
        check_log_sd(view.jobs.predicted_log_sd, self.revision_code, f"policy '{self.name}'")
        if self.order_key is not None:  # the columns its key function reads (true sizes only if clairvoyant)
            self.submit = view.jobs.submit_time.tolist()
            self.sizes = view.jobs.size.tolist() if self.clairvoyant else None

    def key(self, view, j: int) -> float:
        """Job j's key now: the class's `order_key` on this run's columns."""
        if self.key_reads_attained:
            return self.order_key(j, view.attained(j), self.submit, self.sizes, self.estimate, self.stretch)
        if self.order_key is None:
            raise NotImplementedError(f"{type(self).__qualname__} sets no order_key and overrides no key")
        return self.order_key(j, 0.0, self.submit, self.sizes, self.estimate, self.stretch)

    def allocate(self, view) -> Allocation | None:
        alloc = Allocation()
        if self.running != IDLE and view.is_done(self.running):
            self.running = IDLE
        for j in view.arrived:
            heapq.heappush(self.waiting, (self.key(view, j), j))
        if self.running != IDLE and self.revisions is not None:
            attained = view.attained(self.running)
            if reached(attained, self.estimate[self.running]):
                revise(self, view, self.running, attained)
        if self.running != IDLE and self.preemptive and self.waiting:
            key = self.key(view, self.running)
            first, j = self.waiting[0]
            if self.preemption_rule(first, j, key, self.running):
                heapq.heapreplace(self.waiting, (key, self.running))
                alloc.assign(self.running, IDLE)
                self.running = j
                alloc.assign(j, self.group)
        if self.running == IDLE and self.waiting:
            _, self.running = heapq.heappop(self.waiting)
            alloc.assign(self.running, self.group)
        if self.running != IDLE and self.revisions is not None and self.preemptive:
            # at least the clock's slack ahead: a wake-up closer than that lands on `now` itself far
            # into a run (one ulp of t = 10⁷ s is 2e-9 s), and the job would be woken there forever
            remaining = self.estimate[self.running] - view.attained(self.running)
            alloc.wake_at(view.now + max(remaining, clock_slack(view.now)))
        return self.after(view, alloc)

    def after(self, view, alloc: Allocation) -> Allocation:
        return alloc


class _Revising(_OneAtATime):
    """A one-job-at-a-time policy keyed by the estimate, with the revision rule as its setting."""

    needs_prediction = True

    def __init__(self, revision: str = "none"):
        self.revision_code = rule_code(revision)  # ValueError naming the rules if unknown
        self.revision = revision


@register
class FIFO(_OneAtATime):
    name = "fifo"
    listing_rank = 10  # its place in every listing of single policies
    fast_loop = "fifo"  # its loop in schedulers.fastpath
    description = "non-preemptive, submit order"

    order_key = staticmethod(submit_order)


@register
class SJF(_OneAtATime):
    name = "sjf"
    listing_rank = 20  # its place in every listing of single policies
    fast_loop = "sjf"  # its loop in schedulers.fastpath
    clairvoyant = True
    description = "non-preemptive, smallest true size first"
    order_key = staticmethod(true_size)


@register
class SPJF(_Revising):
    name = "spjf"
    listing_rank = 30  # its place in every listing of single policies
    fast_loop = "spjf"  # its loop in schedulers.fastpath
    needs_prediction = True
    description = "non-preemptive, smallest predicted size first"
    order_key = staticmethod(estimated_size)


@register
class SRPT(_OneAtATime):
    name = "srpt"
    listing_rank = 40  # its place in every listing of single policies
    fast_loop = "srpt"  # its loop in schedulers.fastpath
    clairvoyant = True
    preemptive = True
    description = "preemptive, smallest true remaining size (optimal for total completion)"
    order_key = staticmethod(remaining_size)
    key_reads_attained = True


@register
class SPRPT(_Revising):
    name = "sprpt"
    listing_rank = 50  # its place in every listing of single policies
    fast_loop = "sprpt"  # its loop in schedulers.fastpath
    needs_prediction = True
    preemptive = True
    description = "preemptive, smallest predicted remaining max(0, estimate - attained); estimate p̂, revised when outlived"
    order_key = staticmethod(estimated_remaining)
    key_reads_attained = True


@register
class PSPJF(_Revising):
    name = "pspjf"
    listing_rank = 60  # its place in every listing of single policies
    fast_loop = "pspjf"  # its loop in schedulers.fastpath
    needs_prediction = True
    preemptive = True
    description = "preemptive, smallest predicted size (key: the estimate, p̂ until revised)"
    order_key = staticmethod(estimated_size)


@register
class EDF(_OneAtATime):
    """Preemptive EDF on deadlines r_j + S·p_j with true sizes; at S = S* it is optimal for max stretch."""

    name = "edf"
    listing_rank = 70  # its place in every listing of single policies
    fast_loop = "edf"  # its loop in schedulers.fastpath
    clairvoyant = True
    preemptive = True
    description = "preemptive EDF on r + S*·p (true sizes; the max-stretch optimum)"

    def __init__(self, stretch: float = 1.0):
        if not float(stretch) > 0:  # a deadline before the release orders nothing the rule intends
            raise ValueError(f"edf stretch must be > 0, got {stretch}")
        self.stretch = float(stretch)
    order_key = staticmethod(true_deadline)


@register
class EDFP(_Revising):
    """Preemptive EDF on predicted deadlines d_j = r_j + S·p̂_j, S estimated online by doubling.

    S starts at `initial_stretch` and doubles whenever a job is still unfinished at its predicted
    deadline — the only online evidence that S is too small. On a doubling all pending deadlines
    are recomputed (O(n log n), at most log2(S_final) times). True sizes are never read.
    """

    name = "edf-p"
    listing_rank = 80  # its place in every listing of single policies
    fast_loop = "edf-p"  # its loop in schedulers.fastpath
    needs_prediction = True
    preemptive = True
    description = "preemptive EDF on r + S·p̂, S doubled online on a missed predicted deadline"

    def __init__(self, initial_stretch: float = 1.0, revision: str = "none"):
        if not float(initial_stretch) > 0:  # S = 0 doubles to 0: the deadlines would never move
            raise ValueError(f"edf-p initial_stretch must be > 0, got {initial_stretch}")
        super().__init__(revision)
        self.initial_stretch = float(initial_stretch)

    def reset(self, view) -> None:
        if self.key_reads_attained or type(self).key is not _OneAtATime.key:
            raise TypeError(f"{type(self).__qualname__}: EDF-P's doubling recomputes deadlines with its order_key "
                            "alone, at no attained service (double_while_late); its key may not read more")
        super().reset(view)
        self.stretch = self.initial_stretch
        self.doublings = 0
    order_key = staticmethod(estimated_deadline)
    doubling_rule = staticmethod(double_while_late)  # S's doubling, which edf-p's fast loop runs too

    def after(self, view, alloc: Allocation) -> Allocation:
        if self.running == IDLE:
            return alloc
        moves: list[tuple[int, int]] = []
        self.stretch, doublings, self.running, deadline = self.doubling_rule(
            self.order_key, view.now, self.running, self.key(view, self.running), self.waiting, self.stretch,
            self.submit, self.sizes, self.estimate, moves)
        self.doublings += doublings
        for j, into in moves:
            alloc.assign(j, self.group if into else IDLE)
        alloc.wake_at(deadline)
        return alloc


@register
class RoundRobin(Policy):
    name = "rr"
    listing_rank = 90  # its place in every listing of single policies
    fast_loop = "rr"  # its loop in schedulers.fastpath
    description = "processor sharing: every active job at rate 1/k"

    def reset(self, view) -> None:
        self.group = view.new_group(1.0)

    def allocate(self, view):
        alloc = Allocation()
        for j in view.arrived:
            alloc.assign(j, self.group)
        return alloc


@register
class PRR(Policy):
    """Preferential round robin: (1 − λ)/k to every active job, plus λ to the smallest predicted.

    With a revision rule other than `none` the order is by each job's estimate (p̂ until outlived):
    every active job gains service, so each keeps a target on its group's clock (the clock value at
    which its service reaches its estimate) in a heap; the policy is woken at the earliest target,
    revises that job and re-chooses the favourite. O(log n) per event. Every job keeps at least
    (1 − λ)/k of the machine whatever p̂ says, so no job starves: a job's stretch is at most
    k/(1 − λ) for k the most jobs active during its stay."""

    name = "prr"
    listing_rank = 100  # its place in every listing of single policies
    fast_loop = "prr"  # its loop in schedulers.fastpath
    needs_prediction = True
    description = "every job (1-λ)/k, the job with the smallest estimate (p̂, revised when outlived) additionally λ"

    def __init__(self, lam: float = 0.7, revision: str = "none"):
        if not 0.0 <= lam <= 1.0:
            raise ValueError("prr lambda must be in [0, 1]")
        self.lam = float(lam)
        self.revision_code = rule_code(revision)
        self.revision = revision

    def reset(self, view) -> None:
        self.shared = view.new_group(0.0)  # everyone except the favourite
        self.favourite_group = view.new_group(0.0)
        self.by_prediction: list[tuple[float, int]] = []
        self.favourite = IDLE
        self.estimate = view.jobs.predicted.tolist()
        self.revising = self.revision_code != NONE
        if self.revising:
            check_log_sd(view.jobs.predicted_log_sd, self.revision_code, f"policy '{self.name}'")
            self.revisions = [0] * view.jobs.n
            self.stamp = [0] * view.jobs.n
            self.targets: list[tuple[float, int, int]] = []  # (shared clock at the estimate, job, stamp)

    def allocate(self, view):
        alloc = Allocation()
        if self.revising:
            self._revise_outlived(view)
        for j in view.arrived:
            heapq.heappush(self.by_prediction, (self.estimate[j], j))
        # entries of finished jobs, and of revised estimates (an estimate only grows: the stale one is smaller)
        while self.by_prediction and (view.is_done(self.by_prediction[0][1])
                                      or self.by_prediction[0][0] != self.estimate[self.by_prediction[0][1]]):
            heapq.heappop(self.by_prediction)
        best = self.by_prediction[0][1] if self.by_prediction else IDLE
        previous, self.favourite = self.favourite, best
        to_shared = []
        if best != previous and previous != IDLE and not view.is_done(previous):
            alloc.assign(previous, self.shared)
            to_shared.append(previous)
        for j in view.arrived:  # each arrival moves once: straight into its group
            alloc.assign(j, self.favourite_group if j == best else self.shared)
            if j != best:
                to_shared.append(j)
        if best != previous and best != IDLE and best not in view.arrived:
            alloc.assign(best, self.favourite_group)
        # active jobs after this change: engine group sizes (completions removed) + arrivals
        k = view.group_size(self.shared) + view.group_size(self.favourite_group) + len(view.arrived)
        if k:
            alloc.set_rate(self.shared, (1.0 - self.lam) * (k - 1) / k)
            alloc.set_rate(self.favourite_group, (1.0 - self.lam) / k + self.lam)
        if self.revising:
            if best != previous and best != IDLE:
                self.stamp[best] += 1  # its target on the shared clock no longer holds
            for j in to_shared:
                self._target(view, j)
            if k:
                self._wake_at_next_estimate(view, alloc, k)
        return alloc

    def _target(self, view, j: int) -> None:
        self.stamp[j] += 1
        remaining = max(0.0, self.estimate[j] - view.attained(j))
        heapq.heappush(self.targets, (view.group_clock(self.shared) + remaining, j, self.stamp[j]))

    def _revise(self, view, j: int, attained: float) -> None:
        """Revise job j, which the caller found at its estimate, and key it anew."""
        revise(self, view, j, attained)
        heapq.heappush(self.by_prediction, (self.estimate[j], j))

    def _revise_outlived(self, view) -> None:
        """Revise every job whose service has reached its estimate (the shared ones by their targets)."""
        slack = clock_slack(view.now)
        clock = view.group_clock(self.shared)
        while self.targets and self.targets[0][0] <= clock + slack * 2.0 + 1e-9 * max(1.0, abs(clock)):
            _, j, stamp = heapq.heappop(self.targets)
            if stamp != self.stamp[j] or view.is_done(j) or j == self.favourite:
                continue
            self._revise(view, j, view.attained(j) + slack)
            self._target(view, j)
        f = self.favourite
        if f != IDLE and not view.is_done(f):
            attained = view.attained(f) + slack
            if reached(attained, self.estimate[f]):
                self._revise(view, f, attained)

    def _wake_at_next_estimate(self, view, alloc: Allocation, k: int) -> None:
        slack = clock_slack(view.now)
        member = (1.0 - self.lam) / k
        while self.targets and (self.targets[0][2] != self.stamp[self.targets[0][1]] or view.is_done(self.targets[0][1])):
            heapq.heappop(self.targets)
        if self.targets and member > 0.0:
            gap = (self.targets[0][0] - view.group_clock(self.shared)) / member
            alloc.wake_at(view.now + max(gap, slack))
        f = self.favourite
        if f != IDLE:
            remaining = self.estimate[f] - view.attained(f)
            alloc.wake_at(view.now + max(remaining / ((1.0 - self.lam) / k + self.lam), slack))


@register
class LAS(Policy):
    """Least attained service (foreground-background), exact.

    The jobs tied at the lowest attained level share the machine equally. Frozen cohorts (jobs
    tied at a higher level) wait on a stack whose top is the lowest frozen level; when the running
    cohort reaches it, the two merge (smaller moved into larger, so O(n log² n) in total). A new
    arrival (attained 0) freezes the running cohort. A job never runs past the next-lowest level.
    """

    name = "las"
    listing_rank = 110  # its place in every listing of single policies
    fast_loop = "las"  # its loop in schedulers.fastpath
    description = "least attained service: the lowest-attained jobs share the machine"

    def reset(self, view) -> None:
        self.running = IDLE  # group id of the running (lowest) cohort
        self.offset: dict[int, float] = {}  # level(g) = offset[g] + clock(g)
        self.members: dict[int, list[int]] = {}  # may hold finished jobs; pruned when iterated
        self.count: dict[int, int] = {}  # live members per cohort
        self.where: list[int] = [IDLE] * view.jobs.n
        self.frozen: list[tuple[float, int]] = []  # stack of (level, group); top = lowest level

    def _level(self, view, g: int) -> float:
        return self.offset[g] + view.group_clock(g)

    def allocate(self, view):
        alloc = Allocation()
        for j in view.completed:
            self.count[self.where[j]] -= 1
        if self.running != IDLE and self.count[self.running] == 0:
            alloc.set_rate(self.running, 0.0)
            self.running = self.frozen.pop()[1] if self.frozen else IDLE
            if self.running != IDLE:
                alloc.set_rate(self.running, 1.0)
        if view.arrived:
            if self.running != IDLE and self._level(view, self.running) > 0.0:
                alloc.set_rate(self.running, 0.0)
                self.frozen.append((self._level(view, self.running), self.running))
                self.running = IDLE
            if self.running == IDLE:
                self.running = view.new_group(0.0)
                self.offset[self.running] = -view.group_clock(self.running)
                self.members[self.running], self.count[self.running] = [], 0
                alloc.set_rate(self.running, 1.0)
            for j in view.arrived:
                self._join(alloc, j, self.running)
        # merge with the frozen cohort the running one has caught up with (smaller into larger)
        while self.frozen and self.running != IDLE:
            level, g = self.frozen[-1]
            gap = level - self._level(view, self.running)
            # merge when level with it, or when the gap is below what the clock can resolve
            if gap > 1e-9 * max(1.0, level) and view.now + gap * self.count[self.running] > view.now:
                break
            self.frozen.pop()
            small, big = (g, self.running) if self.count[g] <= self.count[self.running] else (self.running, g)
            for j in self.members[small]:
                if not view.is_done(j) and self.where[j] == small:
                    self.count[small] -= 1
                    self._join(alloc, j, big)
            self.members[small] = []
            alloc.set_rate(small, 0.0)
            alloc.set_rate(big, 1.0)
            self.running = big
        if self.frozen and self.running != IDLE:
            gap = self.frozen[-1][0] - self._level(view, self.running)
            alloc.wake_at(view.now + max(gap, 0.0) * self.count[self.running])
        return alloc

    def _join(self, alloc: Allocation, j: int, g: int) -> None:
        alloc.assign(j, g)
        self.members[g].append(j)
        self.count[g] += 1
        self.where[j] = g
