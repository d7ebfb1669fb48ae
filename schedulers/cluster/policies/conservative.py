"""Conservative backfilling on p̂: every waiting job holds a reservation; a job starts early only if it delays none.

The third backfilling scheduler of the HPC comparison (`benchmark reproduce hpc`,
docs/hpc-backfilling.md), beside EASY (schedulers.cluster.policies.easy_p) and FCFS / SJF
(hpc_queue): a kernel of the cluster simulator (`schedulers.cluster.simulator`), run compiled or as
Python. Not a registered policy of the fairness task (the comparison runs it on HPC logs).
May import numpy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import attempt
from schedulers.cluster.queues import candidates
from schedulers.cluster.state import group
from schedulers.jit import jitable


class ConservativeBackfill(ClusterPolicy):
    """Conservative backfilling (Mu'alem & Feitelson, TPDS 2001) with p̂ as the runtime estimate.

    At each decision the schedule is planned anew on a profile of free GPUs (processors) over
    time: now, the free GPUs; then each running job's predicted end (start + p̂; one that has run
    past its p̂ counts as ending now) frees its GPUs. The waiting jobs, in submit order, each take
    the earliest time from which the profile holds its GPUs for p̂ seconds, and that window is
    taken from the profile (its reservation); a job whose reservation is now starts now. So a job
    starts before its turn only on GPUs that no earlier job's reservation needs: it delays no
    reservation (as predicted). Planning anew at each decision is conservative backfilling
    "with compression": a job that ends before its p̂ lets the later reservations move earlier,
    never later.

    The profile counts GPUs, not their placement on nodes: on one node of P processors (an HPC
    log's machine) that is exact; on several nodes a job reserved for now whose gang finds no
    placement waits, its window still held. Not work-conserving: a job that would fit now but
    would delay a reservation waits.
    """

    name = "conservative"
    needs_prediction = True
    preemptive = False
    work_conserving = False  # a job that would delay an earlier job's reservation waits
    description = "conservative backfilling on p̂: each waiting job reserves its GPUs in submit order"

    def kernel_params(self):
        return ConservativeParams()


# ----- the kernel ---------------------------------------------------------------------------------
# end[j]: the predicted end (start + p̂) of a job this kernel started.
ConservativeParams = namedtuple("ConservativeParams", "")
ConservativeState = namedtuple("ConservativeState", "params end")


def setup(s, params):
    return group(ConservativeState(params, np.zeros(s.job.n)))


@jitable
def reserve(at, free, k, n, g, until):
    """Take g GPUs from the profile (breakpoint times at[:n], free GPUs free[:n] from each until the
    next) from breakpoint k until time `until` (a breakpoint is added there); the new length."""
    e = k
    while e < n and at[e] < until:
        e += 1
    if e >= n or at[e] != until:  # a new breakpoint at `until`, with the free GPUs of the stretch before it
        for i in range(n, e, -1):
            at[i] = at[i - 1]
            free[i] = free[i - 1]
        at[e] = until
        free[e] = free[e - 1]
        n += 1
    for i in range(k, e):
        free[i] -= g
    return n


@jitable
def decide(s, p, at_round, now, chosen):
    """Plan every waiting job's reservation in submit order; start those whose reservation is now."""
    cand = candidates(s, at_round)  # never a round (the policy does not preempt): the waiting jobs, in job order
    m = len(cand)
    nh = s.q.n_hold[0]
    size = 2 * m + nh + 2
    at = np.empty(size)
    free = np.zeros(size, np.int64)
    ends = np.empty(nh)
    gpus = np.empty(nh, np.int64)
    for i in range(nh):
        j = s.q.hold_list[i]
        e = p.end[j]
        ends[i] = e if e > now else now  # outlived its p̂: predicted to end any moment
        gpus[i] = s.job.gpus[j]
    order = np.argsort(ends, kind="mergesort")
    at[0] = now
    free[0] = s.nodes.free_total[0]
    n = 1
    for i in range(nh):
        e = ends[order[i]]
        if e > at[n - 1]:
            at[n] = e
            free[n] = free[n - 1]
            n += 1
        free[n - 1] += gpus[order[i]]
    for c in range(m):
        j = cand[c]
        g = s.job.gpus[j]
        d = s.job.predicted[j]
        k = 0
        while k < n:  # the earliest breakpoint from which g GPUs stay free for d seconds
            ok = True
            i = k
            while i < n and (i == k or at[i] < at[k] + d):
                if free[i] < g:
                    ok = False
                    break
                i += 1
            if ok:
                break
            k = i + 1  # a window from any breakpoint up to i holds i, which is short of GPUs
        if k >= n:
            continue  # wider than the machine: never (the simulator refuses such jobs before the run)
        if k == 0 and attempt(s, j, now, at_round, -1):
            p.end[j] = now + d
            chosen.append(j)
        n = reserve(at, free, k, n, g, at[k] + d)


KERNEL = kernel(ConservativeBackfill.name, ConservativeParams, ConservativeState, setup=setup, select=decide,
                preemptive=False)
