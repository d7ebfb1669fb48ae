"""ASTRAEA (long-term GPU-time fairness): two-phase LTGF selection, and ASTRAEA-P with predicted durations.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class with
its Python rule (what the engine runs for a subclass or a checked run, over the mechanics of
`schedulers.cluster.rounds.ClusterPolicy`) and its kernel, the same decision that the cluster
simulator (`schedulers.cluster.core`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy.
"""

from __future__ import annotations

import heapq
import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.core import (CANDIDATES, DECISIONS, MOST_CANDIDATES, advance, attempt, bag_add,
                                     bag_remove, group, job_rho, kernel, may_fit, rho_of, room, total_now)
from schedulers.cluster.rounds import Candidates, ClusterPolicy, TenantQueues, NEW_JOB_BONUS, _rho
from schedulers.jit import jitable
from schedulers.policy import register


@register
class Astraea(TenantQueues, ClusterPolicy):
    """ASTRAEA: two-phase LTGF selection (the ASTRAEA paper).

    Phase 1: the tenant with the smallest ρ_tenant (pre-charged); a tenant whose best candidate
    cannot be placed is dropped for this round; equal ρ_tenant: tenant name order. Phase 2: inside
    it the job with the largest reward −ρ_job + NEW_JOB_BONUS·[never started]; ties: submit time,
    then job_id (the job index). Since ρ ≥ 0 and a never-started job has ρ = 0, the bonus puts new
    jobs first, oldest first; the paper gives no number for it. After a job is placed
    its tenant is pre-charged demand × lease before the next pick (ρ's denominator stays at its
    round-start value, as in the paper's worked example). After the loop, any candidate that still
    fits is placed in the same order (work conservation despite tenant skipping).

    Cost (the decision is the same): the waiting jobs are kept per tenant with a count per gang size
    (`queued`). A waiting job that neither ran nor was preempted at this instant is placed on the free
    GPUs alone, which change only when a job is placed; so between two placements a gang size either
    finds a placement or not, whichever of its jobs asks. At a fill (no round at this instant) a
    tenant none of whose gang sizes finds one is skipped without reading its jobs' ρ, and the fill
    ends as soon as no waiting job's gang size finds one. Every tenant with a candidate is read
    (`tenant_attained`) either way, so the LTGF clocks move exactly as when every ρ is read."""

    name = "astraea"
    queued = True  # waiting jobs per tenant (below)
    description = "two-phase LTGF selection: min rho tenant, max reward job, pre-charge, skip unplaceable"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.core, below)."""
        return AstraeaParams(by_prediction=False, band=0.0)

    def setup(self, view):
        self.setup_queues()  # each tenant's waiting jobs, and their gang sizes
        self.round_at = -1.0  # time of the last round (jobs preempted then may keep their GPUs at a fill)

    def job_keys(self, view, candidates, rhos) -> list[tuple]:
        """The phase-2 key of each candidate (smallest first): ρ_job − bonus if never started, then j."""
        started = self.started
        return [(rho if started[j] else rho - NEW_JOB_BONUS, j) for j, rho in zip(candidates, rhos)]

    def select(self, view, candidates, cluster):
        now = view.now
        ltgf = self.ltgf
        tenant = self.tenant
        quick = False  # every candidate is a waiting job placed on the free GPUs alone (see the class)
        if isinstance(candidates, Candidates):
            if candidates.running:
                self.round_at = now
                per = _by_tenant(self.holding, tenant)
                for k, queue in enumerate(self.queues):
                    if queue:
                        lst = per.get(k)
                        if lst is None:
                            per[k] = list(queue)
                        else:
                            lst.extend(queue)
            else:
                per = {k: queue for k, queue in enumerate(self.queues) if queue}
                quick = self.round_at != now
        else:
            per = _by_tenant(candidates, tenant)
        charged, fair, heap = {}, {}, []
        for k in per:
            c = charged[k] = ltgf.tenant_attained(k, now)
            f = fair[k] = ltgf.tenant_fair_share(k, now)
            heap.append((_rho(c, f), k))
        heapq.heapify(heap)
        keyed: dict[int, list] = {}  # tenant -> its candidates' phase-2 keys, best last (read when first needed)
        job_keys, job_rhos = self.job_keys, ltgf.job_rhos

        def keys_of(k):
            lst = keyed.get(k)
            if lst is None:
                jobs = list(per[k])
                lst = keyed[k] = job_keys(view, jobs, job_rhos(jobs, now))
                lst.sort(reverse=True)  # pop() = best
            return lst

        chosen = []
        skipped = []
        picks = self.last_picks = []  # (tenant, job, pre-charged ρ_tenant after the pick): the round, for inspection
        lease = self.lease_s
        gpus, holding, preempted_at, at = self.gpus, self.holding, self.preempted_at, self.now
        try_place, heappop, heappush, find = self.try_place, heapq.heappop, heapq.heappush, cluster.find
        sizes_of, wait_demand = self.queue_sizes, self.wait_demand
        # gang size -> whether a waiting job of that size that neither holds GPUs nor was preempted at
        # this instant finds a placement (and so try_place places it); valid until the next placement
        fits: dict[int, bool] = {}

        def some_size_fits(k, free) -> bool:
            """Whether some gang size of tenant k's waiting jobs finds a placement now."""
            for g in sizes_of[k]:
                ok = fits.get(g)
                if ok is None:
                    ok = fits[g] = g <= free and find(g) is not None
                if ok:
                    return True
            return False
        while heap:
            free = cluster.free_total
            if free <= 0:
                break
            k = heappop(heap)[1]
            if quick and not some_size_fits(k, free):  # none of its jobs can be placed, so neither can its best
                skipped.append(k)
                continue
            lst = keyed.get(k)
            if lst is None:
                lst = keys_of(k)
            j = lst[-1][-1]
            g = gpus[j]
            if g > free:
                skipped.append(k)
                continue
            plain = j not in holding and preempted_at[j] != at
            if plain and fits.get(g) is False:
                skipped.append(k)
                continue
            if not try_place(cluster, j):
                if plain:
                    fits[g] = False
                skipped.append(k)
                continue
            fits.clear()
            lst.pop()
            chosen.append(j)
            c = charged[k] = charged[k] + g * lease
            rho = _rho(c, fair[k])
            picks.append((k, j, rho))
            if lst:
                heappush(heap, (rho, k))
            if quick:
                free = cluster.free_total
                if free <= 0 or not any(g <= free and find(g) is not None for g in wait_demand):
                    return chosen  # no waiting job can be placed any more: nothing below would place one
        if skipped and cluster.free_total > 0:
            rest = sorted([(_rho(charged[k], fair[k]), k) for k in skipped])
            if not quick:
                self.place_leftovers(cluster, [key[-1] for _, k in rest for key in reversed(keys_of(k))], chosen)
                return chosen
            for _, k in rest:
                if not some_size_fits(k, cluster.free_total):
                    continue  # none of its jobs can be placed
                for key in reversed(keys_of(k)):
                    free = cluster.free_total
                    if free == 0:
                        return chosen
                    j = key[-1]
                    g = gpus[j]
                    ok = fits.get(g)
                    if ok is None:
                        ok = fits[g] = g <= free and find(g) is not None
                    if ok:
                        if try_place(cluster, j):
                            chosen.append(j)
                            fits.clear()
                        else:
                            fits[g] = False
        return chosen


def _by_tenant(jobs, tenant) -> dict[int, list]:
    """{tenant: its jobs of `jobs`, in that order}."""
    per: dict[int, list] = {}
    for j in jobs:
        lst = per.get(tenant[j])
        if lst is None:
            per[tenant[j]] = [j]
        else:
            lst.append(j)
    return per


@register
class AstraeaP(Astraea):
    """ASTRAEA with predicted durations: ASTRAEA's phases with p̂ as the order inside a fairness band.

    Phase 1: among the tenants whose pre-charged ρ_tenant is within `band` (= 1.0, in ρ units:
    one fair share of GPU time) of the smallest, the one whose best candidate (phase 2's
    choice) has the smallest p̂; ties ρ_tenant, then tenant index. Pre-charging, skipping a tenant
    whose best candidate cannot be placed and the leftover pass are ASTRAEA's. Phase 2: never-started
    jobs first, shortest p̂ first (ties job index); then the jobs that have run by ρ_job, ties p̂, then
    job index. p̂ only orders jobs, so with every p̂ equal the run is ASTRAEA's, job for job.

    Measured (docs/fairness.md#astraea-p-what-predicted-durations-change,
    tests/schedulers/astraea_p_study.py): on the Venus-like scenario (three draws) avg slowdown
    2.81 → 1.79 with exact p̂, sharing-loss / tenant-loss within a point of ASTRAEA's on average;
    random or permuted p̂ give 2.2–2.4, so the gain is p̂'s information. Bad p̂ costs: a long job
    predicted short jumps ahead of shorter jobs of the band's other tenants (on a contended Philly,
    random p̂ is worse than ASTRAEA). The band bounds how far ahead of its share a tenant may be
    served; without it (band = ∞) a tenant with only long jobs starves (Philly)."""

    name = "astraea-p"
    needs_prediction = True
    description = "ASTRAEA, shortest predicted job first among the tenants within a fairness band"
    band = 1.0  # the fairness band of phase 1, in ρ_tenant units (see the docstring)

    def kernel_params(self):
        return AstraeaParams(by_prediction=True, band=self.band)

    def job_keys(self, view, candidates, rhos) -> list[tuple]:
        predicted, started, keys = view.jobs.predicted, self.started, []
        for j, rho in zip(candidates, rhos):
            p = predicted[j]
            if not started[j]:
                keys.append((rho - NEW_JOB_BONUS, p, j))
            else:
                keys.append((rho, max(0.0, p - self.progress(view, j)), j))
        return keys


# ----- the kernel (schedulers.cluster.core): the same decision over the simulator's arrays -------
# Tier A, a tenant's waiting never-started jobs, has a fixed key (j; (p̂, j) for ASTRAEA-P), so each
# tenant's are kept in key order (a_buf), with a count per gang size. Tier B's key, ρ_job, moves
# with time: each tenant's waiting jobs that ran (sw_buf, counted per gang size) and running jobs
# (hb_buf) are kept as sets, keyed into a heap (b_heap) when a decision first reaches them.
# Phase 1 is a heap of (ρ_tenant, k) for ASTRAEA; ASTRAEA-P's band (band_phase1) scans the tenants
# at each pick (its key moves with the band's lower edge), O(tenants) per pick.
AstraeaParams = namedtuple("AstraeaParams", "by_prediction band")
AstraeaState = namedtuple("AstraeaState", "params a_buf a_len a_count sw_buf sw_len sw_pos s_count hb_buf hb_len "
                                          "hb_pos b_heap b_built w_count round_at")


def setup(s, params):
    T, n, maxg = s.job.T, s.job.n, s.job.maxg
    b_heap = [[(0.0, 0.0, 0)] for _ in range(T)]
    for k in range(T):
        b_heap[k].clear()
    return group(AstraeaState, params, [np.zeros(8, np.int64) for _ in range(T)], np.zeros(T, np.int64),
                        np.zeros((T, maxg + 1), np.int64), [np.zeros(8, np.int64) for _ in range(T)],
                        np.zeros(T, np.int64), np.full(n, -1, np.int64), np.zeros((T, maxg + 1), np.int64),
                        [np.zeros(8, np.int64) for _ in range(T)], np.zeros(T, np.int64), np.full(n, -1, np.int64),
                        b_heap, np.zeros(T, np.bool_), np.zeros(T, np.int64), np.full(1, -1.0))


def on_hold(s, p, j):
    bag_add(p.hb_buf, p.hb_len, p.hb_pos, s.job.tenant[j], j)


def on_unhold(s, p, j):
    bag_remove(p.hb_buf, p.hb_len, p.hb_pos, s.job.tenant[j], j)


@jitable
def a_before(s, p, a, b):
    """Tier-A order: j, or (p̂, j) for ASTRAEA-P with NaN last, as numpy's stable sort has it."""
    if p.params.by_prediction:
        pa = s.job.predicted[a]
        pb = s.job.predicted[b]
        if pa < pb or (math.isnan(pb) and not math.isnan(pa)):
            return True
        if pb < pa or (math.isnan(pa) and not math.isnan(pb)):
            return False
    return a < b


@jitable
def a_position(s, p, buf, length, j):
    """The first index of buf[:length] not before j."""
    lo = 0
    hi = length
    while lo < hi:
        mid = (lo + hi) // 2
        if a_before(s, p, buf[mid], j):
            lo = mid + 1
        else:
            hi = mid
    return lo


def on_wait(s, p, j, now):
    """j waits: into its tenant's tier A (never started, in key order) or B."""
    k = s.job.tenant[j]
    p.w_count[k] += 1
    if s.q.started[j]:
        bag_add(p.sw_buf, p.sw_len, p.sw_pos, k, j)
        p.s_count[k, s.job.gpus[j]] += 1
        return
    length = p.a_len[k]
    buf = room(p.a_buf, p.a_len, k)
    pos = a_position(s, p, buf, length, j)
    for i in range(length, pos, -1):
        buf[i] = buf[i - 1]
    buf[pos] = j
    p.a_len[k] = length + 1
    p.a_count[k, s.job.gpus[j]] += 1


def on_unwait(s, p, j):
    k = s.job.tenant[j]
    p.w_count[k] -= 1
    if s.q.started[j]:
        bag_remove(p.sw_buf, p.sw_len, p.sw_pos, k, j)
        p.s_count[k, s.job.gpus[j]] -= 1
        return
    length = p.a_len[k]
    buf = p.a_buf[k]
    pos = a_position(s, p, buf, length, j)
    for i in range(pos, length - 1):
        buf[i] = buf[i + 1]
    p.a_len[k] = length - 1
    p.a_count[k, s.job.gpus[j]] -= 1


@jitable
def tier_b(s, p, k, at_round, now):
    """Tenant k's tier B (its waiting jobs that ran, and its running jobs at a round) as a heap of
    (ρ_job, [p̂ for ASTRAEA-P,] j): popped in the order of the sorted keys."""
    h = p.b_heap[k]
    h.clear()
    for part in range(2 if at_round else 1):
        buf = p.sw_buf[k] if part == 0 else p.hb_buf[k]
        for i in range(p.sw_len[k] if part == 0 else p.hb_len[k]):
            j = buf[i]
            h.append((job_rho(s, j, now), head_p(s, p, j), j))
    heapq.heapify(h)
    p.b_built[k] = True


@jitable
def head_p(s, p, j):
    """ASTRAEA-P's p̂ key of job j (NaN last); 0 for ASTRAEA, which has none."""
    if not p.params.by_prediction:
        return 0.0
    v = s.job.predicted[j]
    return math.inf if math.isnan(v) else v


@jitable
def head_job(s, p, k, at_round, now, head):
    """Tenant k's best candidate not yet chosen in this decision (phase 2's choice)."""
    if head[k] < p.a_len[k]:
        return p.a_buf[k][head[k]]
    if not p.b_built[k]:
        tier_b(s, p, k, at_round, now)
    return p.b_heap[k][0][2]


@jitable
def band_phase1(s, p, at_round, now, chosen, head, end, charged, fair_k, skipped):
    """ASTRAEA-P's phase 1 (AstraeaP): among the tenants whose pre-charged ρ_tenant is within
    `band` of the smallest, the one whose best candidate has the smallest p̂; ties ρ_tenant, then
    k. With every p̂ equal this is ASTRAEA's (ρ_tenant, k) order: the smallest ρ is in the band."""
    T = s.job.T
    active = np.zeros(T, np.bool_)
    rho = np.zeros(T)
    key = np.zeros(T)  # p̂ of the tenant's best candidate
    for k in range(T):  # every tenant with a candidate is advanced, as when each ρ_job is read
        p.b_built[k] = False
        end[k] = p.w_count[k] + (p.hb_len[k] if at_round else 0)
        if end[k] > 0:
            advance(s, k, now)
            charged[k] = s.led.att[k]
            fair_k[k] = s.led.fair[k]
            rho[k] = rho_of(charged[k], fair_k[k])
            key[k] = head_p(s, p, head_job(s, p, k, at_round, now, head))
            active[k] = True
    while total_now(s, at_round) > 0:
        low = math.inf
        for k in range(T):
            if active[k] and rho[k] < low:
                low = rho[k]
        best = -1
        for k in range(T):  # (p̂ of the best candidate, ρ_tenant, k) over the band
            if active[k] and rho[k] <= low + p.params.band and (
                    best < 0 or key[k] < key[best] or (key[k] == key[best] and rho[k] < rho[best])):
                best = k
        if best < 0:
            return
        k = best
        in_a = head[k] < p.a_len[k]
        j = head_job(s, p, k, at_round, now, head)
        if not attempt(s, j, now, at_round, -1):
            skipped.append(k)
            active[k] = False
            continue
        if not in_a:
            heapq.heappop(p.b_heap[k])
        head[k] += 1
        chosen.append(j)
        charged[k] += s.job.gpus[j] * s.cfg.lease_s
        rho[k] = rho_of(charged[k], fair_k[k])
        if head[k] < end[k]:
            key[k] = head_p(s, p, head_job(s, p, k, at_round, now, head))
        else:
            active[k] = False

def decide(s, p, at_round, now, chosen):
    """Astraea.select: tenants by pre-charged ρ_tenant (ASTRAEA-P: band_phase1), each tenant's
    candidates best first (tier A in its kept order, then tier B, keyed when a decision first
    reaches it); then the skipped tenants' candidates in (ρ_tenant, k) order. At a fill with no round at this instant every
    candidate is a plain waiting job, so a tier none of whose gang sizes can be placed is passed
    over unread."""
    m = (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0]
    s.counters[DECISIONS] += 1
    s.counters[CANDIDATES] += m
    if m > s.counters[MOST_CANDIDATES]:
        s.counters[MOST_CANDIDATES] = m
    if at_round:
        p.round_at[0] = now
    quick = not at_round and p.round_at[0] != now
    head = np.zeros(s.job.T, np.int64)
    end = np.zeros(s.job.T, np.int64)
    charged = np.zeros(s.job.T)
    fair_k = np.zeros(s.job.T)
    skipped = [0]
    skipped.clear()
    if p.params.by_prediction:
        band_phase1(s, p, at_round, now, chosen, head, end, charged, fair_k, skipped)
    else:
        heap = [(0.0, 0)]
        heap.clear()
        for k in range(s.job.T):  # every tenant with a candidate is advanced, as when each ρ_job is read
            p.b_built[k] = False
            end[k] = p.w_count[k] + (p.hb_len[k] if at_round else 0)
            if end[k] > 0:
                advance(s, k, now)
                charged[k] = s.led.att[k]
                fair_k[k] = s.led.fair[k]
                heap.append((rho_of(charged[k], fair_k[k]), k))
        heapq.heapify(heap)
        while heap and total_now(s, at_round) > 0:
            _, k = heapq.heappop(heap)
            in_a = head[k] < p.a_len[k]
            if in_a:
                j = p.a_buf[k][head[k]]
            else:
                if not p.b_built[k]:
                    tier_b(s, p, k, at_round, now)
                j = p.b_heap[k][0][2]
            if not attempt(s, j, now, at_round, -1):
                skipped.append(k)
                continue
            if not in_a:
                heapq.heappop(p.b_heap[k])
            head[k] += 1
            chosen.append(j)
            charged[k] += s.job.gpus[j] * s.cfg.lease_s
            if head[k] < end[k]:
                heapq.heappush(heap, (rho_of(charged[k], fair_k[k]), k))
    if len(skipped) == 0 or total_now(s, at_round) == 0:
        return
    ks = np.sort(np.array(skipped))
    r = np.empty(len(ks))
    for i in range(len(ks)):
        r[i] = rho_of(charged[ks[i]], fair_k[ks[i]])
    for k in ks[np.argsort(r, kind="mergesort")]:  # (ρ_tenant, k)
        i = head[k]
        if i < p.a_len[k]:  # tier A: plain waiting jobs
            buf = p.a_buf[k]
            fits = may_fit(s, p.a_count, k, total_now(s, at_round))
            while i < p.a_len[k] and fits:
                total = total_now(s, at_round)
                if total == 0:
                    return
                j = buf[i]
                i += 1
                if s.job.gpus[j] <= total:
                    misses = len(s.plan.missed_list)
                    if attempt(s, j, now, at_round, -1):
                        chosen.append(j)
                        fits = may_fit(s, p.a_count, k, total_now(s, at_round))
                    elif len(s.plan.missed_list) != misses:
                        fits = may_fit(s, p.a_count, k, total)
            if total_now(s, at_round) == 0:
                return
        if p.w_count[k] == p.a_len[k] and not (at_round and p.hb_len[k] > 0):
            continue  # no tier B
        if quick and not may_fit(s, p.s_count, k, total_now(s, at_round)):
            continue
        if not p.b_built[k]:
            tier_b(s, p, k, at_round, now)
        h = p.b_heap[k]
        while len(h) > 0:
            total = total_now(s, at_round)
            if total == 0:
                return
            j = heapq.heappop(h)[2]
            if s.job.gpus[j] <= total and attempt(s, j, now, at_round, -1):
                chosen.append(j)


KERNEL = kernel("astraea", AstraeaParams, AstraeaState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait, on_hold=on_hold, on_unhold=on_unhold)
