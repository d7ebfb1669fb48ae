"""Tiresias-L (Gu et al., NSDI'19): discretised 2D-LAS on attained GPU·s with starvation promotion.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

import heapq
from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.events import attained_engine
from schedulers.cluster.kernels import kernel
from schedulers.cluster.ledgers import ledger_attained
from schedulers.cluster.placement import place_in_order
from schedulers.cluster.queues import candidates, job_order_add, job_order_remove
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


@register
class TiresiasL(ClusterPolicy):
    """Tiresias-L: 2D-LAS with discretised queues on attained GPU·s (no size knowledge).

    Queue = number of thresholds the job's attained GPU·s has passed; FIFO inside a queue.
    Starvation: a job waiting longer than STARVATION × its executed time goes back to queue 0.
    Preemption happens at lease rounds, like every policy on this core."""

    name = "tiresias-l"
    listing_rank = 40  # its place in every listing of cluster policies
    description = "discretised 2D-LAS on attained GPU·s with starvation promotion"
    THRESHOLDS_GPU_S = (3600.0, 36000.0)
    STARVATION = 2.0

    # The waiting jobs are kept in their queues, in index order (FIFO inside a queue), so a round or a
    # fill reads them in priority order without a key or a sort per waiting job: a waiting job's
    # attained GPU·s do not change, so its queue changes only when it is promoted, which happens once
    # its wait passes STARVATION × its executed time (a heap of those instants). On a busy cluster
    # thousands of jobs wait, and every fill and round read them all. The priority order is also kept
    # per gang size as keys queue × n + job (n jobs), so `select` reads only the sizes that may still
    # find GPUs (`_leftovers`).

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return TiresiasParams()


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
TiresiasParams = namedtuple("TiresiasParams", "")
TiresiasState = namedtuple("TiresiasState", "params offset queue_of starving")


def setup(s, params):
    starving = [(0.0, 0.0, 0)]
    starving.clear()
    return group(TiresiasState(params, np.zeros(s.job.n), np.full(s.job.n, -1, np.int64), starving))


LEVELS = len(TiresiasL.THRESHOLDS_GPU_S) + 1  # queues: thresholds passed, 0 to 2


@jitable
def level_of(s, p, j, a):
    """TiresiasL.level: thresholds passed by the attained GPU·s since the job's offset."""
    lv = a - p.offset[j]
    q = 0
    if lv >= 3600.0:
        q += 1
    if lv >= 36000.0:
        q += 1
    return q


@jitable
def promote(s, p, now):
    """TiresiasL._promote: every waiting job whose wait passed STARVATION × its executed time
    goes back to the first queue (counting from zero again)."""
    late = [(0.0, 0.0, 0)]
    late.clear()
    while len(p.starving) > 0 and p.starving[0][0] <= now + 1e-9 * max(1.0, abs(now)):
        entry = heapq.heappop(p.starving)
        since, j = entry[1], entry[2]
        if p.queue_of[j] < 0 or s.q.wait_since[j] != since:
            continue
        if not now - since > 2.0 * attained_engine(s, j):
            late.append(entry)
            continue
        a = ledger_attained(s, j, now)
        p.offset[j] = a
        p.queue_of[j] = level_of(s, p, j, a)
    for entry in late:
        heapq.heappush(p.starving, entry)


@jitable
def decide(s, p, at_round, now, chosen):
    """TiresiasL: every candidate in (queue, job) order, each that fits."""
    promote(s, p, now)
    cand = candidates(s, at_round)
    m = len(cand)
    lev = np.empty(m, np.int64)
    holding = s.q.holding
    queue_of = p.queue_of
    per_level = np.zeros(LEVELS + 1, np.int64)
    for i in range(m):
        j = cand[i]
        lev[i] = level_of(s, p, j, ledger_attained(s, j, now)) if holding[j] else queue_of[j]
        per_level[lev[i] + 1] += 1
    # a stable sort by level (the candidates are in job order): three levels, so counting
    for q in range(LEVELS):
        per_level[q + 1] += per_level[q]
    order = np.empty(m, np.int64)
    for i in range(m):
        q = lev[i]
        order[per_level[q]] = cand[i]
        per_level[q] += 1
    place_in_order(s, order, m, now, at_round, chosen)


@jitable
def on_wait(s, p, j, now):
    """j waits: in job order, into its queue, and on the starvation heap if it ran."""
    job_order_add(s, j)
    a = ledger_attained(s, j, now)
    p.queue_of[j] = level_of(s, p, j, a)
    if a > 0:
        heapq.heappush(p.starving, (now + 2.0 * attained_engine(s, j), now, j))


@jitable
def on_unwait(s, p, j):
    job_order_remove(s, j)
    p.queue_of[j] = -1


KERNEL = kernel(TiresiasL.name, TiresiasParams, TiresiasState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait)
