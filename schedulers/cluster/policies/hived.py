"""HiveD (Zhao et al., OSDI'20), simplified: tenant quotas as reserved node cells, opportunistic use of idle cells.

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
from schedulers.cluster.placement import attempt, place_in_order
from schedulers.cluster.queues import count_decision
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


def cell_owners(capacities, quota) -> list[int]:
    """The tenant owning each node as HiveD's cells: whole nodes in proportion to the quotas, a node
    belonging to the tenant whose span of the cumulative quota holds the node's middle GPU."""
    bounds, cum = [], 0.0
    for q in quota:
        cum += q
        bounds.append(cum)
    owner, k, acc = [], 0, 0.0
    for c in capacities:
        mid = acc + c / 2.0
        while k < len(bounds) - 1 and mid > bounds[k]:
            k += 1
        owner.append(k)
        acc += c
    return owner


@register
class HiveD(ClusterPolicy):
    """HiveD (simplified): each tenant owns reserved cells = whole nodes in proportion to its quota
    (largest-remainder rounding over the node list; buddy cells are whole nodes here). Guaranteed
    jobs run FIFO inside their own cells; when those are full a job may run opportunistically on
    any free GPUs and is preempted (or moved) at the next lease round if an owner needs the cells back;
    otherwise it keeps its GPUs (it is not moved into its own cells when they free up)."""

    name = "hived"
    listing_rank = 70  # its place in every listing of cluster policies
    description = "tenant quotas as reserved node cells, opportunistic use of idle cells"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return HiveDParams()

    def node_owners(self, capacities, quota) -> list[int]:
        """Its cells: the tenant owning each node (`cell_owners`)."""
        return cell_owners(capacities, quota)


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
HiveDParams = namedtuple("HiveDParams", "")
HiveDState = namedtuple("HiveDState", "params blocked")


def setup(s, params):
    return group(HiveDState(params, np.zeros(s.job.T, np.bool_)))


@jitable
def decide(s, p, at_round, now, chosen):
    """HiveD._select_queued: each tenant's own jobs in job order inside its cells up to its first
    miss; then every other candidate in job order, anywhere (a job running outside its cells
    is only re-decided there). A tenant's first pass touches only its own cells, so the tenants'
    passes are made together in one walk in job order over the running jobs and the waiting
    jobs (kept in job order: a busy HiveD cluster has thousands waiting), which leaves the same
    plan and gives the choices and the second pass's jobs in job order without a sort."""
    count_decision(s, (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0])
    running = np.sort(s.q.hold_list[:s.q.n_hold[0]].copy()) if at_round else np.zeros(0, np.int64)
    blocked = p.blocked
    tenant = s.job.tenant
    ws = s.q.ws
    owner = s.nodes.owner
    pl_len = s.plan.pl_len
    pl_node = s.plan.pl_node
    for k in range(s.job.T):
        blocked[k] = False
    rest = [0]
    rest.clear()
    r = 0
    w = 0
    n_running = len(running)
    n_wait = s.q.n_wait[0]  # the waiting jobs do not change during a decision
    while r < n_running or w < n_wait:
        if w >= n_wait or (r < n_running and running[r] < ws[w]):
            j = running[r]
            r += 1
            k = tenant[j]
            inside = True
            for part in range(pl_len[j]):
                if owner[pl_node[j, part]] != k:
                    inside = False
            if not inside:
                rest.append(j)
                continue
        else:
            j = ws[w]
            w += 1
            k = tenant[j]
        if blocked[k]:
            rest.append(j)
        elif attempt(s, j, now, at_round, k):
            chosen.append(j)
        else:
            blocked[k] = True
            rest.append(j)
    if len(rest) > 0:
        order = np.empty(len(rest), np.int64)
        for i in range(len(rest)):
            order[i] = rest[i]
        place_in_order(s, order, len(order), now, at_round, chosen)


KERNEL = kernel(HiveD.name, HiveDParams, HiveDState, setup=setup, select=decide)
