"""ASTRAEA (long-term GPU-time fairness): two-phase LTGF selection, and ASTRAEA-P with predicted durations.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

import heapq

from schedulers.cluster.rounds import Candidates, ClusterPolicy, TenantQueues, NEW_JOB_BONUS, _rho
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
    fast_loop = "astraea"  # its branch of the compiled cluster loop (schedulers.cluster.fastcore)
    queued = True  # waiting jobs per tenant (below)
    description = "two-phase LTGF selection: min rho tenant, max reward job, pre-charge, skip unplaceable"

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
    fast_loop = "astraea-p"  # its branch of the compiled cluster loop (schedulers.cluster.fastcore)
    needs_prediction = True
    description = "ASTRAEA, new jobs of a tenant shortest-predicted first"

    def job_keys(self, view, candidates, rhos) -> list[tuple]:
        predicted, started, keys = view.jobs.predicted, self.started, []
        for j, rho in zip(candidates, rhos):
            p = predicted[j]
            if not started[j]:
                keys.append((rho - NEW_JOB_BONUS, p, j))
            else:
                keys.append((rho, max(0.0, p - self.progress(view, j)), j))
        return keys
