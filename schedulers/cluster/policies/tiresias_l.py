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
        ltgf = self.ltgf
        keys = []
        for j in candidates:
            att = ltgf.job_attained(j, now)
            if j not in self.holding and att > 0 and now - self.wait_since[j] > self.STARVATION * self.progress(view, j):
                self.offset[j] = att  # promoted: counts from zero again
            level = att - self.offset[j]
            q = sum(level >= t for t in self.THRESHOLDS_GPU_S)
            keys.append((q, j))
        keys.sort()
        return [j for _, j in keys]
