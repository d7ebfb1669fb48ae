"""Gandiva_fair (Chaudhary et al., EuroSys'20): ticket-based stride scheduling across tenants.

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

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import attempt, place_in_order, total_now
from schedulers.cluster.queues import candidates
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


@register
class GandivaFair(ClusterPolicy):
    """Gandiva_fair: stride scheduling across tenants with tickets = tenant weights.

    The tenant with the smallest pass gets its next job (least attained GPU·s first) and its pass
    grows by gpus × lease / tickets; a tenant whose next job does not fit is skipped, and the GPUs
    left at the end go to the skipped tenants' jobs that fit (smallest pass first), so no GPU idles. A tenant that comes back after being idle restarts at the
    smallest pass of the active tenants (no credit for idle time, unlike LTGF's eq16)."""

    name = "gandiva-fair"
    listing_rank = 60  # its place in every listing of cluster policies
    description = "ticket-based stride scheduling per tenant"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return GandivaParams()


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
GandivaParams = namedtuple("GandivaParams", "")
GandivaState = namedtuple("GandivaState", "params pass_ was_active")


def setup(s, params):
    return group(GandivaState(params, np.zeros(s.job.T), np.zeros(s.job.T, np.bool_)))


@jitable
def start_pass(s, p, have):
    """GandivaFair._start_pass: a tenant back from idle restarts at the smallest pass of the
    active ones; `have[k]`: tenant k has candidates now."""
    floor = 0.0
    found = False
    pass_ = p.pass_  # read once (each read through the state costs reference counts when compiled)
    was_active = p.was_active
    run_gpus = s.led.run_gpus
    for k in range(s.job.T):
        if have[k] and was_active[k]:
            if not found or pass_[k] < floor:
                floor = pass_[k]
                found = True
    for k in range(s.job.T):
        if have[k] and not was_active[k]:
            if floor > pass_[k]:
                pass_[k] = floor
        was_active[k] = have[k] or run_gpus[k] > 0


@jitable
def decide(s, p, at_round, now, chosen):
    """GandivaFair._select_queued: stride scheduling over tenants, each tenant's candidates in
    (attained GPU·s, job) order."""
    cand = candidates(s, at_round)
    m = len(cand)
    hold_since = s.led.hold_since  # read once, not per candidate (each read through the state costs
    job_att = s.led.job_att        # reference counts in the compiled loop; hundreds of candidates)
    gpus = s.job.gpus
    tenant = s.job.tenant
    T = s.job.T
    first = np.full(T, -1, np.int64)
    end = np.zeros(T, np.int64)
    # each tenant's candidates in (attained GPU·s, job) order, the tenants in order: the candidates
    # (in job order) counted into their tenants' ranges, each range then sorted by key (stable) —
    # the order of a stable sort of all of them by key, then by tenant, for less than one sort's work
    for i in range(m):
        k = tenant[cand[i]]
        end[k] += 1
    at = 0
    for k in range(T):
        if end[k] > 0:
            first[k] = at
            at += end[k]
        end[k] = at
    js = np.empty(m, np.int64)
    fill = first.copy()
    for i in range(m):
        j = cand[i]
        k = tenant[j]
        js[fill[k]] = j
        fill[k] += 1
    for k in range(T):
        if first[k] < 0:
            continue
        part = js[first[k]:end[k]]
        key = np.empty(len(part))
        for i in range(len(part)):
            j = part[i]
            h = hold_since[j]
            key[i] = job_att[j] + (0.0 if math.isnan(h) else gpus[j] * (now - h))
        js[first[k]:end[k]] = part[np.argsort(key, kind="mergesort")]
    have = first >= 0
    start_pass(s, p, have)
    head = first.copy()
    heap = [(0.0, 0)]
    heap.clear()
    for k in range(s.job.T):
        if have[k]:
            heap.append((p.pass_[k], k))
    heapq.heapify(heap)
    while heap and total_now(s, at_round) > 0:
        _, k = heapq.heappop(heap)
        j = js[head[k]]
        if not attempt(s, j, now, at_round, -1):
            continue  # this tenant's next job does not fit: skipped this round
        chosen.append(j)
        p.pass_[k] += s.job.gpus[j] * s.cfg.lease_s / s.led.quota[k]
        head[k] += 1
        if head[k] < end[k]:
            heapq.heappush(heap, (p.pass_[k], k))
    # the GPUs left go to the skipped tenants' jobs that fit, smallest pass first
    left = [0]
    left.clear()
    for k in range(s.job.T):
        if have[k] and head[k] < end[k]:
            left.append(k)
    ks = np.array(left)  # in tenant order, then stable by pass: (pass, k)
    pv = np.empty(len(ks))
    for i in range(len(ks)):
        pv[i] = p.pass_[ks[i]]
    for k in ks[np.argsort(pv, kind="mergesort")]:
        before = len(chosen)
        place_in_order(s, js[head[k]:end[k]], end[k] - head[k], now, at_round, chosen)
        for c in range(before, len(chosen)):
            p.pass_[k] += s.job.gpus[chosen[c]] * s.cfg.lease_s / s.led.quota[k]
        if total_now(s, at_round) == 0:
            return


KERNEL = kernel(GandivaFair.name, GandivaParams, GandivaState, setup=setup, select=decide)
