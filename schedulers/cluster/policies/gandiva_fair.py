"""Gandiva_fair (Chaudhary et al., EuroSys'20): ticket-based stride scheduling across tenants.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

import heapq

from schedulers.cluster.rounds import ClusterPolicy
from schedulers.policy import register


@register
class GandivaFair(ClusterPolicy):
    """Gandiva_fair: stride scheduling across tenants with tickets = tenant weights.

    The tenant with the smallest pass gets its next job (least attained GPU·s first) and its pass
    grows by gpus × lease / tickets; a tenant whose next job does not fit is skipped, and the GPUs
    left at the end go to the skipped tenants' jobs that fit (smallest pass first), so no GPU idles. A tenant that comes back after being idle restarts at the
    smallest pass of the active tenants (no credit for idle time, unlike LTGF's eq16)."""

    name = "gandiva-fair"
    description = "ticket-based stride scheduling per tenant"

    def setup(self, view):
        self.pass_ = [0.0] * self.T
        self.tickets = [q for q in self.quota]
        self.was_active = [False] * self.T

    def select(self, view, candidates, cluster):
        now = view.now
        per: dict[int, list] = {}
        for j in candidates:
            per.setdefault(self.tenant[j], []).append((self.ltgf.job_attained(j, now), j))
        active_pass = [self.pass_[k] for k in per if self.was_active[k]]
        floor = min(active_pass) if active_pass else 0.0
        for k in range(self.T):
            if k in per and not self.was_active[k]:
                self.pass_[k] = max(self.pass_[k], floor)
            self.was_active[k] = k in per or self.tenant_used[k] > 0
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
