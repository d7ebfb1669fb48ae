"""Tiresias-L (Gu et al., NSDI'19): discretised 2D-LAS on attained GPU·s with starvation promotion.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

from schedulers.cluster.rounds import ClusterPolicy
from schedulers.policy import register


@register
class TiresiasL(ClusterPolicy):
    """Tiresias-L: 2D-LAS with discretised queues on attained GPU·s (no size knowledge).

    Queue = number of thresholds the job's attained GPU·s has passed; FIFO inside a queue.
    Starvation: a job waiting longer than STARVATION × its executed time goes back to queue 0.
    Preemption happens at lease rounds, like every policy on this core."""

    name = "tiresias-l"
    description = "discretised 2D-LAS on attained GPU·s with starvation promotion"
    THRESHOLDS_GPU_S = (3600.0, 36000.0)
    STARVATION = 2.0

    def setup(self, view):
        self.offset = [0.0] * view.jobs.n

    def order(self, view, candidates):
        now = view.now
        job_attained = self.ltgf.job_attained
        holding, wait_since, offset = self.holding, self.wait_since, self.offset
        thresholds, starvation = self.THRESHOLDS_GPU_S, self.STARVATION
        keys = []
        for j in candidates:
            att = job_attained(j, now)
            if att > 0 and j not in holding and now - wait_since[j] > starvation * self.progress(view, j):
                offset[j] = att  # promoted: counts from zero again
            level = att - offset[j]
            q = 0
            for t in thresholds:
                if level >= t:
                    q += 1
            keys.append((q, j))
        keys.sort()
        return [j for _, j in keys]
