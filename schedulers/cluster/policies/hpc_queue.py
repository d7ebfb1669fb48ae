"""FCFS and SJF on rigid parallel jobs, with or without backfilling: the batch schedulers of HPC logs.

The heuristics of RLScheduler's evaluation (Zhang et al., SC'20; docs/reproduce-rlscheduler.md),
as one kernel of the cluster simulator (`schedulers.cluster.simulator`): a log's processors are the
cluster the simulator is given (`machine`: one node of that many processors), each job's processors
its gang, its requested time (SWF field 9) its p̂. Used by `benchmark reproduce rlscheduler`; not a registered policy of the
fairness task (its settings are the protocol's, not the task's).
May import numpy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import attempt
from schedulers.cluster.queues import count_decision, job_order_add, job_order_remove
from schedulers.cluster.settings import ClusterSettings
from schedulers.cluster.state import group, int_list
from schedulers.jit import jitable


class HPCQueue(ClusterPolicy):
    """One queue, decided after every event (an arrival, then each completion, one at a time:
    `kernel(one_event=True)`), never preempting:

    1. the **head** is chosen when the queue gets its first job (that job) and when the head
       starts (the first waiting job by the order: submit order for FCFS, requested time then
       submit order for SJF); once chosen it stays the head until it starts, even if a job that
       comes first by the order arrives later;
    2. the head starts as soon as its processors are free; while it waits nothing else starts,
       unless `backfill`:
    3. with `backfill`, when the head is found blocked its **shadow time** is fixed: the running
       jobs released in order of start + requested time until enough processors are free for
       it, the shadow time that job's start + requested time. It is not revised later. After
       every event the head still cannot take, each waiting job in submit order starts if it fits
       now and is predicted to end before the shadow time (now + requested < shadow). Only that
       test: a backfilled job may still delay the head (no check of the processors left to it).
    """

    name = "hpc-queue"
    needs_prediction = True  # p̂ = the requested time
    preemptive = False
    work_conserving = False  # a blocked head holds the queue back (and backfilling only by time)
    description = "FCFS / SJF on rigid parallel jobs, optional backfilling around the head by requested times"

    def __init__(self, *, sjf: bool = False, backfill: bool = False):
        self.sjf = bool(sjf)
        self.backfill = bool(backfill)

    def kernel_params(self):
        return HPCQueueParams(self.sjf, self.backfill)


def machine(processors: int, interval_s: float = 1.0) -> ClusterSettings:
    """The cluster an HPC log's jobs run on, given to the simulator: one node of `processors`
    processors, a scheduling tick every `interval_s` (1 s: SWF times are whole seconds, every event
    is on a tick; 0 for a log with fractional times: every event a tick), no rounds (its policies
    never preempt), no cold start."""
    return ClusterSettings.of(nodes=1, gpus_per_node=int(processors), lease_s=1e12, interval_s=interval_s,
                              cold_start_s=0.0)


# ----- the kernel ---------------------------------------------------------------------------------
# head[0]: the head (-1: none); shadow[0]: its shadow time (nan: not fixed yet); end[j]: start +
# requested time of a job this kernel started; taken[j]: started by the current decision or before.
HPCQueueParams = namedtuple("HPCQueueParams", "sjf backfill")
HPCQueueState = namedtuple("HPCQueueState", "params head shadow end taken")


def setup(s, params):
    return group(HPCQueueState(params, np.full(1, -1, np.int64), np.full(1, math.nan), np.zeros(s.job.n),
                 np.zeros(s.job.n, np.bool_)))


@jitable
def shadow_time(s, p, head, now, chosen):
    """The head's shadow time: the running jobs and those this decision started, by start +
    requested time, released onto the free processors until the head's gang is free."""
    nh = s.q.n_hold[0]
    r = nh + len(chosen)
    ends = np.empty(r)
    sizes = np.empty(r, np.int64)
    for i in range(nh):
        j = s.q.hold_list[i]
        ends[i] = p.end[j]
        sizes[i] = s.job.gpus[j]
    for i in range(len(chosen)):
        ends[nh + i] = p.end[chosen[i]]
        sizes[nh + i] = s.job.gpus[chosen[i]]
    order = np.argsort(ends, kind="mergesort")
    free = s.nodes.free_total[0]
    t = now
    for i in range(r):
        free += sizes[order[i]]
        t = ends[order[i]]
        if free >= s.job.gpus[head]:
            break
    return t


@jitable
def next_head(s, p):
    """The first waiting job not yet taken, by the order (-1: none)."""
    best = -1
    for i in range(s.q.n_wait[0]):
        j = s.q.ws[i]
        if p.taken[j]:
            continue
        if not p.params.sjf:
            return j
        if best < 0 or s.job.predicted[j] < s.job.predicted[best]:
            best = j
    return best


@jitable
def on_wait(s, p, j, now):
    job_order_add(s, j)
    if p.head[0] < 0:  # the queue's first job is the head at once
        p.head[0] = j
        p.shadow[0] = math.nan
        if p.params.backfill and s.job.gpus[j] > s.nodes.free_total[0]:
            p.shadow[0] = shadow_time(s, p, j, now, int_list())


@jitable
def on_unwait(s, p, j):
    job_order_remove(s, j)


@jitable
def start(s, p, j, now, chosen):
    chosen.append(j)
    p.taken[j] = True
    p.end[j] = now + s.job.predicted[j]


@jitable
def decide(s, p, at_round, now, chosen):
    count_decision(s, s.q.n_wait[0])
    while p.head[0] >= 0 and attempt(s, p.head[0], now, at_round, -1):
        start(s, p, p.head[0], now, chosen)
        p.head[0] = next_head(s, p)
        p.shadow[0] = math.nan
    head = p.head[0]
    if head < 0 or not p.params.backfill:
        return
    if math.isnan(p.shadow[0]):
        p.shadow[0] = shadow_time(s, p, head, now, chosen)
    t_shadow = p.shadow[0]
    for i in range(s.q.n_wait[0]):
        if s.nodes.free_total[0] == 0:
            break
        j = s.q.ws[i]
        if j == head or p.taken[j] or not now + s.job.predicted[j] < t_shadow:
            continue
        if s.job.gpus[j] <= s.nodes.free_total[0] and attempt(s, j, now, at_round, -1):
            start(s, p, j, now, chosen)


KERNEL = kernel(HPCQueue.name, HPCQueueParams, HPCQueueState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait, one_event=True, preemptive=False)
