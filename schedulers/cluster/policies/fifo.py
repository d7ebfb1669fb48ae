"""Cluster FIFO: global submit order, gang, non-preemptive, head-of-line blocking (the strict baseline).

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import try_place
from schedulers.cluster.queues import count_decision
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


@register
class FIFOCluster(ClusterPolicy):
    name = "fifo"
    listing_rank = 10  # its place in every listing of cluster policies
    preemptive = False
    strict = True
    work_conserving = False  # documented: a blocked head of queue holds back later jobs
    description = "global FIFO, gang, non-preemptive, head-of-line blocking"

    # FIFO never preempts, so a job waits once and the waiting jobs, in submit order, are a queue
    # whose head is the only job a fill can start next: a fill costs the jobs it starts, not the
    # queue's length (a strict FIFO's queue grows without bound once head-of-line blocking has cut
    # its throughput below the offered load).
    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return FIFOParams()


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
# The waiting jobs in submit order are queue[ends[0]:ends[1]]: a job waits once (no preemption), and
# the jobs a fill starts are a prefix of the queue.
FIFOParams = namedtuple("FIFOParams", "")
FIFOState = namedtuple("FIFOState", "params queue ends")


def setup(s, params):
    return group(FIFOState(params, np.zeros(s.job.n, np.int64), np.zeros(2, np.int64)))


@jitable
def on_wait(s, p, j, now):
    p.queue[p.ends[1]] = j
    p.ends[1] += 1


@jitable
def on_unwait(s, p, j):
    p.ends[0] += 1  # the head starts


@jitable
def decide(s, p, at_round, now, chosen):
    """Submit order, stopping at the first job that does not fit."""
    m = p.ends[1] - p.ends[0]
    count_decision(s, m)
    for i in range(p.ends[0], p.ends[1]):
        j = p.queue[i]
        if s.nodes.free_total[0] == 0 or not try_place(s, j, now, at_round, -1):
            break
        chosen.append(j)


KERNEL = kernel(FIFOCluster.name, FIFOParams, FIFOState, setup=setup, select=decide, on_wait=on_wait, on_unwait=on_unwait,
                preemptive=False)  # its jobs wait once: a subclass that preempts writes its own rule
