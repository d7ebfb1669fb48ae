"""ASTRAEA (long-term GPU-time fairness): two-phase LTGF selection, and ASTRAEA-P with predicted durations.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

import heapq

from schedulers.cluster.rounds import ClusterPolicy, NEW_JOB_BONUS, _rho
from schedulers.policy import register


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

    def job_keys(self, view, candidates, rhos) -> list[tuple]:
        """The phase-2 key of each candidate (smallest first): ρ_job − bonus if never started, then j."""
        started = self.started
        return [(rho if started[j] else rho - NEW_JOB_BONUS, j) for j, rho in zip(candidates, rhos)]

    def select(self, view, candidates, cluster):
        now = view.now
        ltgf = self.ltgf
        per: dict[int, list] = {}
        tenant = self.tenant
        for j, key in zip(candidates, self.job_keys(view, candidates, ltgf.job_rhos(candidates, now))):
            k = tenant[j]
            lst = per.get(k)
            if lst is None:
                per[k] = [key]
            else:
                lst.append(key)
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
                    if cluster.free_total == 0:  # nothing more can be placed
                        return chosen
                    j = key[-1]
                    if self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                        chosen.append(j)
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

    def job_keys(self, view, candidates, rhos) -> list[tuple]:
        predicted, started, keys = view.jobs.predicted, self.started, []
        for j, rho in zip(candidates, rhos):
            p = predicted[j]
            if not started[j]:
                keys.append((rho - NEW_JOB_BONUS, p, j))
            else:
                keys.append((rho, max(0.0, p - self.progress(view, j)), j))
        return keys
