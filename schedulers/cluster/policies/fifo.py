"""Cluster FIFO: global submit order, gang, non-preemptive, head-of-line blocking (the strict baseline).

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

from collections import deque

from schedulers.cluster.rounds import ClusterPolicy, dequeue, enqueue
from schedulers.policy import register


@register
class FIFOCluster(ClusterPolicy):
    name = "fifo"
    preemptive = False
    strict = True
    work_conserving = False  # documented: a blocked head of queue holds back later jobs
    description = "global FIFO, gang, non-preemptive, head-of-line blocking"

    # FIFO never preempts, so a job waits once and the waiting jobs, in submit order, are a queue
    # whose head is the only job a fill can start next: a fill costs the jobs it starts, not the
    # queue's length (a strict FIFO's queue grows without bound once head-of-line blocking has cut
    # its throughput below the offered load).
    def setup(self, view):
        self.queue: deque[int] = deque()

    def _wait(self, j, now):
        super()._wait(j, now)
        enqueue(self.queue, j)

    def _unwait(self, j):
        super()._unwait(j)
        dequeue(self.queue, j)

    def fill_candidates(self):
        return self.queue

    def select(self, view, candidates, cluster):
        """The base rule (submit order, stop at the first job that does not fit) on the queue."""
        if candidates is not self.queue:  # a round of a subclass that preempts: the base rule on the list
            return super().select(view, candidates, cluster)
        chosen = []
        for j in candidates:
            if cluster.free_total == 0 or not self.try_place(cluster, j):
                break
            chosen.append(j)
        return chosen
