"""HiveD (Zhao et al., OSDI'20), simplified: tenant quotas as reserved node cells, opportunistic use of idle cells.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

from schedulers.cluster.rounds import ClusterPolicy
from schedulers.policy import register


@register
class HiveD(ClusterPolicy):
    """HiveD (simplified): each tenant owns reserved cells = whole nodes in proportion to its quota
    (largest-remainder rounding over the node list; buddy cells are whole nodes here). Guaranteed
    jobs run FIFO inside their own cells; when those are full a job may run opportunistically on
    any free GPUs and is preempted (or moved) at the next lease round if an owner needs the cells back;
    otherwise it keeps its GPUs (it is not moved into its own cells when they free up)."""

    name = "hived"
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

    def select(self, view, candidates, cluster):
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
