"""Cluster FIFO: global submit order, gang, non-preemptive, head-of-line blocking (the strict baseline).

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

from schedulers.cluster.rounds import ClusterPolicy
from schedulers.policy import register


@register
class FIFOCluster(ClusterPolicy):
    name = "fifo"
    preemptive = False
    strict = True
    work_conserving = False  # documented: a blocked head of queue holds back later jobs
    description = "global FIFO, gang, non-preemptive, head-of-line blocking"
