"""Gandiva_fair (Chaudhary et al., EuroSys'20): ticket-based stride scheduling across tenants.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort
from itertools import chain

from schedulers.cluster.rounds import Candidates, ClusterPolicy
from schedulers.policy import register


@register
class GandivaFair(ClusterPolicy):
    """Gandiva_fair: stride scheduling across tenants with tickets = tenant weights.

    The tenant with the smallest pass gets its next job (least attained GPU·s first) and its pass
    grows by gpus × lease / tickets; a tenant whose next job does not fit is skipped, and the GPUs
    left at the end go to the skipped tenants' jobs that fit (smallest pass first), so no GPU idles. A tenant that comes back after being idle restarts at the
    smallest pass of the active tenants (no credit for idle time, unlike LTGF's eq16)."""

    name = "gandiva-fair"
    queued = True  # waiting jobs in its own queues (below)
    description = "ticket-based stride scheduling per tenant"

    def setup(self, view):
        self.pass_ = [0.0] * self.T
        self.tickets = [q for q in self.quota]
        self.was_active = [False] * self.T
        # each tenant's waiting jobs as (attained GPU·s, job), in that order: a waiting job's attained
        # GPU·s do not change, so a fill or a round reads a tenant's jobs only as far as it places
        # them (the queues of a busy cluster hold thousands of jobs)
        self.queues: list[list[tuple[float, int]]] = [[] for _ in range(self.T)]
        self.queued_key: dict[int, tuple[float, int]] = {}

    def _wait(self, j, now):
        super()._wait(j, now)
        key = self.queued_key[j] = (self.ltgf.job_attained(j, now), j)
        insort(self.queues[self.tenant[j]], key)

    def _unwait(self, j):
        super()._unwait(j)
        queue = self.queues[self.tenant[j]]
        del queue[bisect_left(queue, self.queued_key.pop(j))]

    def _start_pass(self, tenants) -> None:
        """A tenant back from idle restarts at the smallest pass of the active ones; `tenants`: the
        tenants with candidates now."""
        active_pass = [self.pass_[k] for k in tenants if self.was_active[k]]
        floor = min(active_pass) if active_pass else 0.0
        for k in range(self.T):
            if k in tenants and not self.was_active[k]:
                self.pass_[k] = max(self.pass_[k], floor)
            self.was_active[k] = k in tenants or self.tenant_used[k] > 0

    def select(self, view, candidates, cluster):
        now = view.now
        if isinstance(candidates, Candidates):
            return self._select_queued(now, candidates.running, cluster)
        per: dict[int, list] = {}
        for j in candidates:
            per.setdefault(self.tenant[j], []).append((self.ltgf.job_attained(j, now), j))
        self._start_pass(per)
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
        # work conservation: the GPUs left go to the skipped tenants' jobs that fit, smallest pass first
        # (Gandiva_fair trades idle tickets between tenants; no GPU idles while a job fits)
        for k in sorted((k for k in per if per[k]), key=lambda k: (self.pass_[k], k)):
            for _, j in reversed(per[k]):
                if cluster.free_total == 0:
                    return chosen
                if self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                    chosen.append(j)
                    self.pass_[k] += self.gpus[j] * self.lease_s / self.tickets[k]
        return chosen

    def _select_queued(self, now: float, running: bool, cluster) -> list[int]:
        """The rule above, each tenant's candidates read in (attained, job) order from its queue
        merged with its running jobs (whose attained GPU·s grow), as far as the rule reads them."""
        held: dict[int, list] = {}
        if running:
            job_attained, tenant = self.ltgf.job_attained, self.tenant
            for j in self.holding:
                held.setdefault(tenant[j], []).append((job_attained(j, now), j))
        heads, rests = {}, {}
        for k in range(self.T):
            queue, mine = self.queues[k], held.get(k)
            if mine:
                mine.sort()
                rest = heapq.merge(mine, queue) if queue else iter(mine)
            elif queue:
                rest = iter(queue)
            else:
                continue
            heads[k] = next(rest)
            rests[k] = rest
        self._start_pass(heads)
        heap = [(self.pass_[k], k) for k in heads]
        heapq.heapify(heap)
        chosen, lease, gpus = [], self.lease_s, self.gpus
        while heap and cluster.free_total > 0:
            _, k = heapq.heappop(heap)
            j = heads[k][1]
            if not self.try_place(cluster, j):
                continue  # this tenant's next job does not fit: skip the tenant this round
            chosen.append(j)
            self.pass_[k] += gpus[j] * lease / self.tickets[k]
            heads[k] = next(rests[k], None)
            if heads[k] is not None:
                heapq.heappush(heap, (self.pass_[k], k))
        for k in sorted((k for k in heads if heads[k] is not None), key=lambda k: (self.pass_[k], k)):
            def charge(j, k=k):
                self.pass_[k] += gpus[j] * lease / self.tickets[k]

            if not self.place_leftovers(cluster, (j for _, j in chain((heads[k],), rests[k])), chosen, charge):
                return chosen
        return chosen
