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

from schedulers.cluster.core import (CANDIDATES, DECISIONS, MOST_CANDIDATES, advance, attained_engine, attempt, bag_add,
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
        return AstraeaParams(by_prediction=False, variant=0, width=0.0, power=0.0, remaining=False, protect=False)

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
    """ASTRAEA with predicted durations: same two phases; inside a tenant, never-started jobs
    (the new-job bonus tier) go shortest p̂ first instead of submit order, and jobs that have run
    are ordered by ρ_job, ties by predicted remaining max(0, p̂ − work done). Helps when a tenant's
    queue mixes short and long new jobs and p̂ ranks them well; hurts when p̂ under-predicts a long
    job (it jumps the queue) or over-predicts a short one (it waits behind longer jobs)."""

    name = "astraea-p"
    needs_prediction = True
    description = "ASTRAEA, new jobs of a tenant shortest-predicted first"

    def kernel_params(self):
        return AstraeaParams(by_prediction=True, variant=0, width=0.0, power=0.0, remaining=False, protect=False)

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
AstraeaParams = namedtuple("AstraeaParams", "by_prediction variant width power remaining protect", defaults=(0, 0.0, 0.0, False, False))
AstraeaState = namedtuple("AstraeaState", "params a_buf a_len a_count sw_buf sw_len sw_pos s_count hb_buf hb_len "
                                          "hb_pos b_heap b_built w_count round_at protected")


def setup(s, params):
    T, n, maxg = s.job.T, s.job.n, s.job.maxg
    b_heap = [[(0.0, 0.0, 0)] for _ in range(T)]
    for k in range(T):
        b_heap[k].clear()
    return group(AstraeaState, params, [np.zeros(8, np.int64) for _ in range(T)], np.zeros(T, np.int64),
                        np.zeros((T, maxg + 1), np.int64), [np.zeros(8, np.int64) for _ in range(T)],
                        np.zeros(T, np.int64), np.full(n, -1, np.int64), np.zeros((T, maxg + 1), np.int64),
                        [np.zeros(8, np.int64) for _ in range(T)], np.zeros(T, np.int64), np.full(n, -1, np.int64),
                        b_heap, np.zeros(T, np.bool_), np.zeros(T, np.int64), np.full(1, -1.0), np.zeros(n, np.bool_))


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
    (ρ_job, [max(0, p̂ − done) for ASTRAEA-P,] j): popped in the order of the sorted keys."""
    h = p.b_heap[k]
    h.clear()
    for part in range(2 if at_round else 1):
        buf = p.sw_buf[k] if part == 0 else p.hb_buf[k]
        for i in range(p.sw_len[k] if part == 0 else p.hb_len[k]):
            j = buf[i]
            if p.protected[j]:
                continue
            key2 = 0.0  # ASTRAEA has no second key
            if p.params.by_prediction:
                r = s.job.predicted[j] - attained_engine(s, j)
                key2 = r if r > 0.0 else 0.0
            h.append((job_rho(s, j, now), key2, j))
    heapq.heapify(h)
    p.b_built[k] = True


@jitable
def head_job(s, p, k, at_round, now, head):
    """Tenant k's best candidate not yet chosen in this decision."""
    if head[k] < p.a_len[k]:
        return p.a_buf[k][head[k]]
    if not p.b_built[k]:
        tier_b(s, p, k, at_round, now)
    return p.b_heap[k][0][2]


@jitable
def head_p(s, p, j):
    """The p̂ key of a tenant's best candidate j: p̂, or (remaining) max(0, p̂ − work done)."""
    v = s.job.predicted[j]
    if p.params.remaining and s.q.started[j]:
        v = v - attained_engine(s, j)
        if v < 0.0:
            v = 0.0
    return v


@jitable
def phase1_scan(s, p, at_round, now, chosen, head, end, charged, fair_k, skipped):
    """Phase 1 of the exploration variants, a scan over the tenants per pick (variant 1: band
    (⌈ρ/width⌉, p̂ head, ρ, k); 2: within width of the smallest ρ, (p̂ head, ρ, k); 3: ρ·(p̂/lease)^power;
    4: ρ·exp(width·u(k, now)), u a hash in [−1, 1] (a control without p̂); 5: as 2 with p̂·gpus)."""
    T = s.job.T
    active = np.zeros(T, np.bool_)
    for k in range(T):
        p.b_built[k] = False
        end[k] = p.w_count[k] + (p.hb_len[k] if at_round else 0)
        if end[k] > 0:
            advance(s, k, now)
            charged[k] = s.led.att[k]
            fair_k[k] = s.led.fair[k]
            active[k] = True
    v = p.params.variant
    w = p.params.width
    lease = s.cfg.lease_s
    if at_round and p.params.protect:
        for h in range(s.q.n_hold[0]):
            p.protected[s.q.hold_list[h]] = False
        for h in range(s.q.n_hold[0]):
            j = s.q.hold_list[h]
            rem = s.job.predicted[j] - attained_engine(s, j)
            if rem <= lease and (rem > 0.0 or p.params.power < 0.0):
                if attempt(s, j, now, at_round, -1):
                    k = s.job.tenant[j]
                    p.protected[j] = True
                    chosen.append(j)
                    charged[k] += s.job.gpus[j] * lease
                    end[k] -= 1
                    if end[k] == 0:
                        active[k] = False
    while total_now(s, at_round) > 0:
        best = -1
        b1 = 0.0
        b2 = 0.0
        b3 = 0.0
        rmin = math.inf
        if v == 2 or v == 5:
            for k in range(T):
                if active[k]:
                    r = rho_of(charged[k], fair_k[k])
                    if r < rmin:
                        rmin = r
        for k in range(T):
            if not active[k]:
                continue
            r = rho_of(charged[k], fair_k[k])
            j = head_job(s, p, k, at_round, now, head)
            ph = head_p(s, p, j)
            if v == 1:
                k1 = math.ceil(r / w) if math.isfinite(r) else math.inf
                k2 = ph
                k3 = r
            elif v == 2 or v == 5:
                if not r <= rmin + w and not r == rmin:
                    continue
                k1 = ph * (s.job.gpus[j] if v == 5 else 1.0)
                k2 = r
                k3 = 0.0
            elif v == 3 or v == 6:
                k1 = r * (ph / lease) ** p.params.power if v == 3 or ph < lease else r
                k2 = 0.0
                k3 = 0.0
            else:
                x = math.sin(k * 12.9898 + now * 0.0078233) * 43758.5453
                u = 2.0 * (x - math.floor(x)) - 1.0
                k1 = r * math.exp(w * u)
                k2 = 0.0
                k3 = 0.0
            if best < 0 or k1 < b1 or (k1 == b1 and (k2 < b2 or (k2 == b2 and k3 < b3))):
                best = k
                b1 = k1
                b2 = k2
                b3 = k3
        if best < 0:
            break
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
        charged[k] += s.job.gpus[j] * lease
        if head[k] >= end[k]:
            active[k] = False


def decide(s, p, at_round, now, chosen):
    """Astraea.select: tenants by pre-charged ρ_tenant, each tenant's candidates best first (tier A
    in its kept order, then tier B, keyed when a decision first reaches it); then the skipped
    tenants' candidates in (ρ_tenant, k) order. At a fill with no round at this instant every
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
    if p.params.variant > 0:
        phase1_scan(s, p, at_round, now, chosen, head, end, charged, fair_k, skipped)
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
