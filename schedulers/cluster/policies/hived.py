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
from schedulers.cluster.queues import count_decision, sorted_add, sorted_remove
from schedulers.cluster.state import group, int_list
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
# the waiting jobs in job order per tenant (t_buf[k][:t_len[k]]) and per gang size (g_buf[g][:g_len[g]]),
# the gang sizes of the run (`sizes`), the waiting jobs preempted at `now` of their preemption (`recent`)
HiveDState = namedtuple("HiveDState", "params t_buf t_len g_buf g_len sizes recent")


def setup(s, params):
    T = s.job.T
    maxg = s.job.maxg
    return group(HiveDState(params=params, t_buf=[np.zeros(8, np.int64) for _ in range(T)],
                            t_len=np.zeros(T, np.int64), g_buf=[np.zeros(8, np.int64) for _ in range(maxg + 1)],
                            g_len=np.zeros(maxg + 1, np.int64), sizes=np.unique(s.job.gpus), recent=int_list()))


@jitable
def on_wait(s, p, j, now):
    """j waits: into its tenant's and its gang size's lists (job order)."""
    sorted_add(p.t_buf, p.t_len, s.job.tenant[j], j)
    sorted_add(p.g_buf, p.g_len, s.job.gpus[j], j)
    if s.q.preempted_at[j] == now:
        p.recent.append(j)


@jitable
def on_unwait(s, p, j):
    sorted_remove(p.t_buf, p.t_len, s.job.tenant[j], j)
    sorted_remove(p.g_buf, p.g_len, s.job.gpus[j], j)


@jitable
def inside_cells(s, j, k):
    """Whether running job j's GPUs are all on tenant k's cells."""
    owner = s.nodes.owner
    pl_node = s.plan.pl_node
    for part in range(s.plan.pl_len[j]):
        if owner[pl_node[j, part]] != k:
            return False
    return True


@jitable
def own_pass(s, p, k, running, now, at_round, first):
    """Tenant k's own jobs (its running ones inside its cells, at a round, and its waiting ones) in
    job order inside its cells, up to its first miss: the chosen into `first`."""
    buf = p.t_buf[k]
    n_wait = p.t_len[k]
    tenant = s.job.tenant
    r = 0
    w = 0
    n_running = len(running)
    while True:
        while r < n_running and tenant[running[r]] != k:
            r += 1
        if r >= n_running and w >= n_wait:
            return
        if w >= n_wait or (r < n_running and running[r] < buf[w]):
            j = running[r]
            r += 1
            if not inside_cells(s, j, k):
                continue
        else:
            j = buf[w]
            w += 1
        if not attempt(s, j, now, at_round, k):
            return
        first.append(j)


@jitable
def special(s, p, running, now):
    """The candidates of the second pass that it tries whatever their gang size missed: the running
    ones (at a round) and the waiting ones preempted at this instant, not chosen yet, in job order."""
    plan_len = s.plan.plan_len
    out = [0]
    out.clear()
    for j in running:
        if plan_len[j] == 0:
            out.append(j)
    kept = 0
    recent = p.recent
    for i in range(len(recent)):
        j = recent[i]
        if s.q.waiting[j] and s.q.preempted_at[j] == now:
            recent[kept] = j
            kept += 1
            if plan_len[j] == 0:
                out.append(j)
    while len(recent) > kept:
        recent.pop()
    order = np.unique(np.array(out, np.int64)) if len(out) > 0 else np.zeros(0, np.int64)
    return order


@jitable
def next_by_size(s, p, g, cursor, last):
    """The first waiting job of gang size g after job `last` not planned in this decision, or -1
    (`cursor[g]` moves on to it)."""
    buf = p.g_buf[g]
    n = p.g_len[g]
    c = cursor[g]
    if c < n and buf[c] <= last:
        c = np.searchsorted(buf[:n], last, side="right")
    plan_len = s.plan.plan_len
    while c < n and plan_len[buf[c]] > 0:
        c += 1
    cursor[g] = c
    return buf[c] if c < n else -1


@jitable
def other_pass(s, p, running, now, at_round, chosen):
    """place_in_order over every candidate not chosen by its tenant's own pass, in job order, anywhere:
    the jobs it would try, found without reading the others — the running and just-preempted ones
    (`special`) and, per gang size that fits and has not missed since the last choice, the next
    waiting job of that size."""
    sp = special(s, p, running, now)
    totals = s.nodes.plan_total if at_round else s.nodes.free_total
    missed = s.plan.missed
    sizes = p.sizes
    cursor = np.zeros(s.job.maxg + 1, np.int64)
    gpus = s.job.gpus
    one = np.empty(1, np.int64)
    si = 0
    last = -1
    while True:
        total = totals[0]
        if total == 0:
            return
        while si < len(sp) and gpus[sp[si]] > total:
            si += 1
        j = sp[si] if si < len(sp) else -1
        for g in sizes:
            if g > total:
                break
            if missed[g] or p.g_len[g] == 0:
                continue
            c = next_by_size(s, p, g, cursor, last)
            if c >= 0 and (j < 0 or c < j):
                j = c
        if j < 0:
            return
        if si < len(sp) and sp[si] == j:
            si += 1
        last = j
        one[0] = j
        place_in_order(s, one, 1, now, at_round, chosen)


@jitable
def decide(s, p, at_round, now, chosen):
    """HiveD._select_queued: each tenant's own jobs in job order inside its cells up to its first
    miss; then every other candidate in job order, anywhere (a job running outside its cells
    is only re-decided there). A tenant's first pass touches only its own cells (its choices leave
    the same plan whichever tenant goes first), so each tenant's pass reads its own waiting jobs,
    kept in job order, and the chosen are put in job order (a busy HiveD cluster has thousands
    waiting); the second pass reads only the jobs it would try (`other_pass`)."""
    count_decision(s, (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0])
    running = np.sort(s.q.hold_list[:s.q.n_hold[0]].copy()) if at_round else np.zeros(0, np.int64)
    first = [0]
    first.clear()
    for k in range(s.job.T):
        own_pass(s, p, k, running, now, at_round, first)
    if len(first) > 0:
        for j in np.sort(np.array(first, np.int64)):
            chosen.append(j)
    other_pass(s, p, running, now, at_round, chosen)


KERNEL = kernel(HiveD.name, HiveDParams, HiveDState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait)
