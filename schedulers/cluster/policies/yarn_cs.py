"""YARN capacity scheduler: per-tenant FIFO within quota, idle quota lendable, no preemption.

Two settings are ablations for `benchmark reproduce astraea` (docs/fairness.md "Why the ranking
differs from the paper's"), not the default: `max_capacity` (how far a tenant may borrow) and
`preempt` (YARN's optional preemption, on a second kernel below).

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

import heapq
import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.base import _EPS, ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import try_place
from schedulers.cluster.queues import candidates, count_decision
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


@register
class YarnCS(ClusterPolicy):
    """YARN capacity scheduler: per-tenant FIFO within the quota first, then idle quota lent in
    submit order; never preempts, so lent GPUs come back only when the borrower finishes."""

    name = "yarn-cs"
    listing_rank = 30  # its place in every listing of cluster policies
    preemptive = False
    work_conserving = False  # documented: a blocked head of queue holds back later jobs
    description = "per-tenant FIFO with quotas, idle quota lendable, no preemption"

    # YARN-CS never preempts, so a job waits once and each tenant's waiting jobs, in submit order, are
    # a queue. The rule reads them in global submit order and stops reading a tenant at its first job
    # that cannot start, so a fill merges the tenants' queues (a heap over their heads) and costs the
    # jobs it reads, not every waiting job (the queues grow without bound on an overloaded cluster).
    def __init__(self, *, max_capacity: float = math.inf, preempt: bool = False):
        super().__init__()
        try:
            cap = float(max_capacity)
        except (TypeError, ValueError):
            cap = math.nan
        if not cap >= 1.0:
            raise ValueError(f"yarn-cs max_capacity must be a number >= 1 (a multiple of the quota), got {max_capacity!r}")
        # YARN's maximum-capacity, as a multiple of the tenant's quota (its guaranteed capacity): how
        # far a tenant may borrow idle quota. inf (default) lends without limit; 1 is hard quotas, the
        # static quota the ASTRAEA paper names YARN-CS for: an ablation (`benchmark reproduce
        # astraea`). With a finite cap a gang larger than the cap may still start when its tenant
        # runs nothing else (else it could never start and the run would not end)
        self.max_capacity = cap
        if not isinstance(preempt, (bool, np.bool_)):
            raise ValueError(f"yarn-cs preempt must be True or False, got {preempt!r}")
        # preempt=True: YARN's optional preemption, at lease rounds (its grace period): every tenant
        # gets its guaranteed quota back from borrowers, who keep what is left. An ablation, on its
        # own kernel (the default one keeps jobs that wait once)
        self.preempt = bool(preempt)
        if self.preempt:  # only then: a subclass's own class flag stays what it says
            self.preemptive = True

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernels are below)."""
        if self.preempt:
            return YarnPreemptParams(max_capacity=self.max_capacity)
        return YarnParams(max_capacity=self.max_capacity)


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
# Each tenant's waiting jobs in submit order are a linked list (first[k], then nxt[j] until -1): a
# job waits once (no preemption), and the jobs a fill starts are a prefix of each tenant's list.
YarnParams = namedtuple("YarnParams", "max_capacity")
YarnState = namedtuple("YarnState", "params first last nxt")


def setup(s, params):
    T = s.job.T
    return group(YarnState(params, np.full(T, -1, np.int64), np.full(T, -1, np.int64),
                 np.full(s.job.n, -1, np.int64)))


@jitable
def on_wait(s, p, j, now):
    k = s.job.tenant[j]
    p.nxt[j] = -1
    if p.last[k] >= 0:
        p.nxt[p.last[k]] = j
    else:
        p.first[k] = j
    p.last[k] = j


@jitable
def on_unwait(s, p, j):
    k = s.job.tenant[j]  # j is its tenant's first waiting job
    p.first[k] = p.nxt[j]
    if p.first[k] < 0:
        p.last[k] = -1


@jitable(inline=True)
def within(used, g, quota):
    """Pass 1: a g-GPU job of a tenant using `used` GPUs fits in its quota (its guaranteed capacity)."""
    return used + g <= quota + _EPS


@jitable(inline=True)
def may_borrow(used, g, quota, cap):
    """Pass 2: within the maximum capacity cap × quota (always, at the default inf), or alone (a gang
    larger than the cap still starts when its tenant runs nothing else, else it never could)."""
    return used + g <= cap * quota + _EPS or used <= _EPS


@jitable
def decide(s, p, at_round, now, chosen):
    """YarnCS.select: pass 1 within the quotas, pass 2 on idle quota up to `max_capacity` × quota,
    each in global submit order, each tenant until its first job that does not start."""
    m = s.q.n_wait[0]
    count_decision(s, m)
    used = s.led.run_gpus.copy()
    heap = [(0, 0)]
    heap.clear()
    for k in range(s.job.T):
        if p.first[k] >= 0:
            heap.append((p.first[k], k))
    heapq.heapify(heap)
    lent = [(0, 0)]
    lent.clear()
    while len(heap) > 0:
        j, k = heapq.heappop(heap)
        g = s.job.gpus[j]
        if within(used[k], g, s.led.quota[k]) and try_place(s, j, now, at_round, -1):
            used[k] += g
            chosen.append(j)
            if p.nxt[j] >= 0:
                heapq.heappush(heap, (p.nxt[j], k))
        else:
            lent.append((j, k))
    cap = p.params.max_capacity
    heapq.heapify(lent)
    while len(lent) > 0:
        j, k = heapq.heappop(lent)
        g = s.job.gpus[j]
        if may_borrow(used[k], g, s.led.quota[k], cap) and try_place(s, j, now, at_round, -1):
            used[k] += g
            chosen.append(j)
            if p.nxt[j] >= 0:
                heapq.heappush(lent, (p.nxt[j], k))


KERNEL = kernel(YarnCS.name, YarnParams, YarnState, setup=setup, select=decide, on_wait=on_wait, on_unwait=on_unwait,
                preemptive=False)  # its jobs wait once: a subclass that preempts writes its own rule


# ----- yarn-cs(preempt=True): the same two passes at lease rounds, over running and waiting jobs ----
# At a round every running job is a candidate again (schedulers.cluster.events): pass 1 gives each
# tenant its quota in submit order (its oldest jobs, running or not), so a job of a tenant under its
# quota may take GPUs a borrower holds; pass 2 then lends what is left, running borrowers first (YARN
# preempts only what a guarantee needs), then waiting jobs, each tenant until its first that does not
# start. Between rounds the fills are the default kernel's two passes over the waiting jobs.
YarnPreemptParams = namedtuple("YarnPreemptParams", "max_capacity")
YarnPreemptState = namedtuple("YarnPreemptState", "params")


def setup_preempt(s, params):
    return group(YarnPreemptState(params))


@jitable
def decide_preempt(s, p, at_round, now, chosen):
    """YarnCS.select with preemption: pass 1 within the quotas over all candidates (at a round the
    running ones too), pass 2 on the rest up to `max_capacity` × quota, running jobs first."""
    cand = candidates(s, at_round)
    T = s.job.T
    used = np.zeros(T) if at_round else s.led.run_gpus.astype(np.float64)
    blocked = np.zeros(T, np.bool_)
    rest = [0]
    rest.clear()
    for j in cand:
        k = s.job.tenant[j]
        g = s.job.gpus[j]
        if not blocked[k] and within(used[k], g, s.led.quota[k]) and try_place(s, j, now, at_round, -1):
            used[k] += g
            chosen.append(j)
        else:
            blocked[k] = True
            rest.append(j)
    cap = p.params.max_capacity
    stopped = np.zeros(T, np.bool_)
    for running in (True, False):
        for j in rest:
            if s.q.holding[j] != running:
                continue
            k = s.job.tenant[j]
            g = s.job.gpus[j]
            if stopped[k] and not running:
                continue
            if may_borrow(used[k], g, s.led.quota[k], cap) and try_place(s, j, now, at_round, -1):
                used[k] += g
                chosen.append(j)
            elif not running:
                stopped[k] = True


KERNEL_PREEMPT = kernel(f"{YarnCS.name}-preempt", YarnPreemptParams, YarnPreemptState, setup=setup_preempt,
                        select=decide_preempt)
