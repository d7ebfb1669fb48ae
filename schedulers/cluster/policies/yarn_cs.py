"""YARN capacity scheduler: per-tenant FIFO within quota, idle quota lendable, no preemption.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

from schedulers.cluster.rounds import ClusterPolicy, _EPS
from schedulers.policy import register


@register
class YarnCS(ClusterPolicy):
    """YARN capacity scheduler: per-tenant FIFO within the quota first, then idle quota lent in
    submit order; never preempts, so lent GPUs come back only when the borrower finishes."""

    name = "yarn-cs"
    preemptive = False
    work_conserving = False  # documented: a blocked head of queue holds back later jobs
    description = "per-tenant FIFO with quotas, idle quota lendable, no preemption"

    def select(self, view, candidates, cluster):
        used = list(self.tenant_used)
        blocked: set[int] = set()
        lend: list[int] = []
        chosen = []
        for j in sorted(candidates):
            k = self.tenant[j]
            if k in blocked:
                lend.append(j)
            elif used[k] + self.gpus[j] <= self.quota[k] + _EPS and self.try_place(cluster, j):
                used[k] += self.gpus[j]
                chosen.append(j)
            else:
                blocked.add(k)
                lend.append(j)
        blocked.clear()
        for j in lend:
            k = self.tenant[j]
            if k not in blocked:
                if self.try_place(cluster, j):
                    chosen.append(j)
                else:
                    blocked.add(k)
        return chosen
