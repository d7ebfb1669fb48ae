"""HiveD (Zhao et al., OSDI'20), simplified: tenant quotas as reserved node cells, opportunistic use of idle cells.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class with
its Python rule (what the engine runs for a subclass or a checked run, over the mechanics of
`schedulers.cluster.rounds.ClusterPolicy`) and its kernel, the same decision that the cluster
simulator (`schedulers.cluster.core`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy.
"""

from __future__ import annotations

import heapq
import math
from collections import namedtuple

import numpy as np

from bisect import bisect_left, bisect_right, insort

from schedulers.cluster.core import CANDIDATES, DECISIONS, MOST_CANDIDATES, attempt, group, kernel, place_in_order
from schedulers.cluster.rounds import Candidates, ClusterPolicy
from schedulers.jit import jitable
from schedulers.policy import register


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
    queued = True  # waiting jobs in its own queues (below)
    description = "tenant quotas as reserved node cells, opportunistic use of idle cells"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.core; the kernel is below)."""
        return HiveDParams()

    def node_owners(self, quota) -> list[int]:
        """Its cells: the tenant owning each node (`cell_owners`)."""
        return cell_owners(self.capacities, quota)

    def setup(self, view):
        self.cells = [set() for _ in range(self.T)]
        for node, k in enumerate(cell_owners(self.capacities, self.quota)):
            self.cells[k].add(node)
        self.cell_nodes = [sorted(cell) for cell in self.cells]
        # each tenant's waiting jobs in index order: a fill or a round reads a tenant's jobs only up
        # to its first miss in its own cells (the queues of a busy cluster hold thousands of jobs)
        self.queues: list[list[int]] = [[] for _ in range(self.T)]
        # the waiting jobs by gang size, in index order: the opportunistic pass reads only the sizes
        # that may still find GPUs (see `_leftovers`)
        self.by_size: dict[int, list[int]] = {}
        self.sizes: list[int] = []  # the keys of by_size, ascending
        # the jobs preempted at instant fresh_at that wait again: `place_leftovers` always tries them
        # (they may keep their own GPUs), so the opportunistic pass reads them apart
        self.fresh: dict[int, None] = {}
        self.fresh_at = -1.0
        self.inside: dict[int, tuple] = {}  # running job -> (its placement, whether it lies in its own cells)

    def _wait(self, j, now):
        super()._wait(j, now)
        insort(self.queues[self.tenant[j]], j)
        g = self.gpus[j]
        queue = self.by_size.get(g)
        if queue is None:
            queue = self.by_size[g] = []
            insort(self.sizes, g)
        insort(queue, j)
        if self.preempted_at[j] == now:
            if self.fresh_at != now:
                self.fresh, self.fresh_at = {}, now
            self.fresh[j] = None

    def _unwait(self, j):
        super()._unwait(j)
        queue = self.queues[self.tenant[j]]
        del queue[bisect_left(queue, j)]
        queue = self.by_size[self.gpus[j]]
        del queue[bisect_left(queue, j)]

    def select(self, view, candidates, cluster):
        if isinstance(candidates, Candidates):
            return self._select_queued(candidates.running, cluster)
        blocked: set[int] = set()
        rest = []
        chosen = []
        for j in sorted(candidates):
            k = self.tenant[j]
            if j in self.holding and not all(n in self.cells[k] for n, _ in self.placement[j]):
                rest.append(j)  # running opportunistically: it stays where it is unless an owner needs the GPUs
            elif k not in blocked and self.try_place(cluster, j, allowed=self.cells[k]):
                chosen.append(j)
            else:
                blocked.add(k)
                rest.append(j)
        for j in rest:
            if cluster.free_total == 0:
                break
            if self.try_place(cluster, j):
                chosen.append(j)
        return chosen

    def _select_queued(self, running: bool, cluster) -> list[int]:
        """The rule above on the tenants' queues. A tenant's own cells are its own nodes, which no
        other tenant's choice in the first pass touches, so each tenant's jobs are read apart, up
        to its first miss, and the choices merged back into index order. A job needs g free GPUs
        in the tenant's cells to be placed there, so a job asking for more than the cells have free
        is a miss without a placement search."""
        tenant, cells, gpus, try_place = self.tenant, self.cells, self.gpus, self.try_place
        T = self.T
        own: list[list[int]] = [[] for _ in range(T)]
        always: list[int] = []  # the opportunistic pass's jobs that `place_leftovers` always tries
        if running:
            placement, before = self.placement, self.inside
            inside = self.inside = {}  # the running jobs' only: a job that stopped is forgotten
            for j in self.holding:
                p = placement[j]
                known = before.get(j)
                if known is None or known[0] is not p:
                    cell = cells[tenant[j]]
                    known = (p, all(n in cell for n, _ in p))
                inside[j] = known
                (own[tenant[j]] if known[1] else always).append(j)
        free = cluster.free
        block = [math.inf] * T  # a tenant's first job that found no GPUs in its cells (then its later ones)
        chosen_by_tenant = []
        queues, cell_nodes = self.queues, self.cell_nodes
        for k in range(T):
            mine_running, queue = own[k], queues[k]
            if mine_running:
                mine_running.sort()
                jobs = heapq.merge(mine_running, queue)
            elif queue:
                jobs = queue
            else:
                continue
            room = sum([free[n] for n in cell_nodes[k]])
            allowed = cells[k]
            mine = []
            for j in jobs:
                g = gpus[j]
                if g <= room and try_place(cluster, j, allowed=allowed):
                    mine.append(j)
                    room -= g  # placed inside the cells
                else:  # blocked: this job and the tenant's later ones go to the opportunistic pass
                    block[k] = j
                    break
            if mine:
                chosen_by_tenant.append(mine)
            if mine_running and block[k] <= mine_running[-1]:
                always.extend(j for j in mine_running if j >= block[k])
        chosen = list(heapq.merge(*chosen_by_tenant)) if len(chosen_by_tenant) > 1 else (
            chosen_by_tenant[0] if chosen_by_tenant else [])
        now = self.now
        if self.fresh_at == now:
            waiting, preempted_at = self.waiting, self.preempted_at
            always.extend(j for j in self.fresh if j in waiting and preempted_at[j] == now and j >= block[tenant[j]])
        always.sort()
        self._leftovers(cluster, always, block, chosen)
        return chosen

    def _leftovers(self, cluster, always: list[int], block: list, chosen: list[int]) -> None:
        """`place_leftovers` on the jobs of the opportunistic pass in index order — `always` (running
        jobs, and jobs preempted at this instant, which it always tries) and every waiting job j
        with j >= block[its tenant] — without reading the jobs it would skip: a waiting job of g GPUs
        is skipped while g exceeds the free GPUs or found no placement since the last choice, so the
        next job tried is the first one after the last read among `always` and the heads of the gang
        sizes still open (`by_size`). The heads are read again after a choice; a miss only closes
        its size."""
        by_size, sizes, gpus, tenant = self.by_size, self.sizes, self.gpus, self.tenant
        preempted_at, now, try_place = self.preempted_at, self.now, self.try_place
        head = dict.fromkeys(sizes, 0)  # per gang size: index of its first job not read yet
        missed: set[int] = set()
        n_always, a = len(always), 0
        last = -1  # the last job read
        inf = math.inf
        while True:
            free = cluster.free_total
            if free == 0:
                return
            missed.clear()  # (a choice was just made, or none yet)
            heads = {}  # open size -> its first job after `last`
            for g in sizes:
                if g > free:
                    break
                queue = by_size[g]
                i, size = head[g], len(queue)
                if i < size and queue[i] <= last:
                    i = bisect_right(queue, last, i)
                while i < size:
                    j = queue[i]
                    if j >= block[tenant[j]] and preempted_at[j] != now:
                        heads[g] = j
                        break
                    i += 1  # chosen in its cells, or preempted at this instant (in `always`)
                head[g] = i
            while True:  # tries until the next choice
                if heads:
                    best_g = min(heads, key=heads.__getitem__)
                    best = heads[best_g]
                else:
                    best_g, best = 0, inf
                while a < n_always and always[a] < best:  # the jobs always tried before that head
                    j = always[a]
                    a += 1
                    last = j
                    if gpus[j] <= free and try_place(cluster, j):
                        chosen.append(j)
                        free = cluster.free_total
                        if missed or free == 0:
                            break  # read the heads again
                        for g in [g for g in heads if g > free]:
                            del heads[g]  # no longer fits: skipped from here on
                        if best_g > free:
                            break
                else:
                    if best == inf:
                        return
                    last = best
                    head[best_g] += 1
                    if try_place(cluster, best):
                        chosen.append(best)
                        break  # read the heads again
                    missed.add(best_g)
                    del heads[best_g]
                    continue
                if missed or free == 0 or best_g > free:
                    break


# ----- the kernel (schedulers.cluster.core): the same decision over the simulator's arrays -------
HiveDParams = namedtuple("HiveDParams", "")
HiveDState = namedtuple("HiveDState", "params blocked")


def setup(s, params):
    return group(HiveDState, params, np.zeros(s.job.T, np.bool_))


@jitable
def decide(s, p, at_round, now, chosen):
    """HiveD._select_queued: each tenant's own jobs in job order inside its cells up to its first
    miss; then every other candidate in job order, anywhere (a job running outside its cells
    is only re-decided there). A tenant's first pass touches only its own cells, so the tenants'
    passes are made together in one walk in job order over the running jobs and the waiting
    jobs (kept in job order: a busy HiveD cluster has thousands waiting), which leaves the same
    plan and gives the choices and the second pass's jobs in job order without a sort."""
    s.counters[DECISIONS] += 1
    s.counters[CANDIDATES] += (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0]
    if (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0] > s.counters[MOST_CANDIDATES]:
        s.counters[MOST_CANDIDATES] = (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0]
    running = np.sort(s.q.hold_list[:s.q.n_hold[0]].copy()) if at_round else np.zeros(0, np.int64)
    blocked, tenant, ws, owner = p.blocked, s.job.tenant, s.q.ws, s.nodes.owner
    pl_len, pl_node = s.plan.pl_len, s.plan.pl_node
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


KERNEL = kernel("hived", HiveDParams, HiveDState, setup=setup, select=decide)
