"""HiveD (Zhao et al., OSDI'20), simplified: tenant quotas as reserved node cells, opportunistic use of idle cells.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

from schedulers.cluster.rounds import Candidates, ClusterPolicy
from schedulers.policy import register


@register
class HiveD(ClusterPolicy):
    """HiveD (simplified): each tenant owns reserved cells = whole nodes in proportion to its quota
    (largest-remainder rounding over the node list; buddy cells are whole nodes here). Guaranteed
    jobs run FIFO inside their own cells; when those are full a job may run opportunistically on
    any free GPUs and is preempted (or moved) at the next lease round if an owner needs the cells back;
    otherwise it keeps its GPUs (it is not moved into its own cells when they free up)."""

    name = "hived"
    queued = True  # waiting jobs in its own queues (below)
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
        # each tenant's waiting jobs in index order: a fill or a round reads a tenant's jobs only up
        # to its first miss in its own cells, and the opportunistic pass skips the gang sizes that
        # found no GPUs (the queues of a busy cluster hold thousands of jobs)
        self.queues: list[list[int]] = [[] for _ in range(self.T)]

    def _wait(self, j, now):
        super()._wait(j, now)
        insort(self.queues[self.tenant[j]], j)

    def _unwait(self, j):
        super()._unwait(j)
        queue = self.queues[self.tenant[j]]
        del queue[bisect_left(queue, j)]

    def select(self, view, candidates, cluster):
        if isinstance(candidates, Candidates):
            return self._select_queued(candidates.running, cluster)
        blocked: set[int] = set()
        rest = []
        chosen = []
        for j in sorted(candidates):
            k = self.tenant[j]
            if j in self.holding and not all(n in self.cells[k] for n, _ in self.placement[j]):
                rest.append(j)  # running opportunistically: it stays where it is unless an owner needs the GPUs
            elif k not in blocked and self.try_place(cluster, j, allowed=self.cells[k]):
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

    def _select_queued(self, running: bool, cluster) -> list[int]:
        """The rule above on the tenants' queues. A tenant's own cells are its own nodes, which no
        other tenant's choice in the first pass touches, so each tenant's jobs are read apart, up
        to its first miss, and the choices merged back into index order."""
        tenant, cells, holding = self.tenant, self.cells, self.holding
        own: list[list[int]] = [[] for _ in range(self.T)]
        rests: list = []
        if running:
            outside = []
            for j in sorted(holding):
                k = tenant[j]
                (own[k] if all(n in cells[k] for n, _ in self.placement[j]) else outside).append(j)
            rests.append(outside)
        chosen_by_tenant = []
        for k in range(self.T):
            jobs = heapq.merge(own[k], self.queues[k]) if own[k] else iter(self.queues[k])
            mine = []
            for j in jobs:
                if self.try_place(cluster, j, allowed=cells[k]):
                    mine.append(j)
                else:  # blocked: this job and the tenant's later ones go to the opportunistic pass
                    rests.append([j])
                    rests.append(list(jobs))
                    break
            if mine:
                chosen_by_tenant.append(mine)
        chosen = list(heapq.merge(*chosen_by_tenant))
        self.place_leftovers(cluster, heapq.merge(*rests), chosen)
        return chosen
