"""Gandiva_fair (Chaudhary et al., EuroSys'20): ticket-based stride scheduling across tenants.

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

from bisect import bisect_left, insort
from itertools import chain

from schedulers.cluster.core import attempt, candidates, group, kernel, place_in_order, total_now
from schedulers.cluster.rounds import Candidates, ClusterPolicy
from schedulers.jit import jitable
from schedulers.policy import register


@register
class GandivaFair(ClusterPolicy):
    """Gandiva_fair: stride scheduling across tenants with tickets = tenant weights.

    The tenant with the smallest pass gets its next job (least attained GPU·s first) and its pass
    grows by gpus × lease / tickets; a tenant whose next job does not fit is skipped, and the GPUs
    left at the end go to the skipped tenants' jobs that fit (smallest pass first), so no GPU idles. A tenant that comes back after being idle restarts at the
    smallest pass of the active tenants (no credit for idle time, unlike LTGF's eq16)."""

    name = "gandiva-fair"
    queued = True  # waiting jobs in its own queues (below)
    description = "ticket-based stride scheduling per tenant"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.core; the kernel is below)."""
        return GandivaParams()

    def setup(self, view):
        self.pass_ = [0.0] * self.T
        self.tickets = [q for q in self.quota]
        self.was_active = [False] * self.T
        # each tenant's waiting jobs as (attained GPU·s, job), in that order: a waiting job's attained
        # GPU·s do not change, so a fill or a round reads a tenant's jobs only as far as it places
        # them (the queues of a busy cluster hold thousands of jobs)
        self.queues: list[list[tuple[float, int]]] = [[] for _ in range(self.T)]
        self.queued_key: dict[int, tuple[float, int]] = {}
        # the jobs preempted at instant fresh_at that wait again
        self.fresh: dict[int, None] = {}
        self.fresh_at = -1.0

    def _wait(self, j, now):
        super()._wait(j, now)
        key = self.queued_key[j] = (self.ltgf.job_attained(j, now), j)
        insort(self.queues[self.tenant[j]], key)
        if self.preempted_at[j] == now:  # `place_leftovers` always tries it (it may keep its own GPUs)
            if self.fresh_at != now:
                self.fresh, self.fresh_at = {}, now
            self.fresh[j] = None

    def _unwait(self, j):
        super()._unwait(j)
        queue = self.queues[self.tenant[j]]
        del queue[bisect_left(queue, self.queued_key.pop(j))]

    def _start_pass(self, tenants) -> None:
        """A tenant back from idle restarts at the smallest pass of the active ones; `tenants`: the
        tenants with candidates now."""
        pass_, was_active, used = self.pass_, self.was_active, self.tenant_used
        active_pass = [pass_[k] for k in tenants if was_active[k]]
        floor = min(active_pass) if active_pass else 0.0
        for k in tenants:
            if not was_active[k]:
                pass_[k] = max(pass_[k], floor)
        was_active[:] = [k in tenants or used[k] > 0 for k in range(self.T)]

    def select(self, view, candidates, cluster):
        now = view.now
        if isinstance(candidates, Candidates):
            return self._select_queued(now, candidates.running, cluster)
        per: dict[int, list] = {}
        for j in candidates:
            per.setdefault(self.tenant[j], []).append((self.ltgf.job_attained(j, now), j))
        self._start_pass(per)
        heap = [(self.pass_[k], k) for k in per]
        heapq.heapify(heap)
        for lst in per.values():
            lst.sort(reverse=True)  # pop() gives least attained, then lowest index
        chosen = []
        while heap and cluster.free_total > 0:
            _, k = heapq.heappop(heap)
            j = per[k][-1][1]
            if not self.try_place(cluster, j):
                continue  # this tenant's next job does not fit: skip the tenant this round
            per[k].pop()
            chosen.append(j)
            self.pass_[k] += self.gpus[j] * self.lease_s / self.tickets[k]
            if per[k]:
                heapq.heappush(heap, (self.pass_[k], k))
        # work conservation: the GPUs left go to the skipped tenants' jobs that fit, smallest pass first
        # (Gandiva_fair trades idle tickets between tenants; no GPU idles while a job fits)
        for k in sorted((k for k in per if per[k]), key=lambda k: (self.pass_[k], k)):
            for _, j in reversed(per[k]):
                if cluster.free_total == 0:
                    return chosen
                if self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                    chosen.append(j)
                    self.pass_[k] += self.gpus[j] * self.lease_s / self.tickets[k]
        return chosen

    def _select_queued(self, now: float, running: bool, cluster) -> list[int]:
        """The rule above, each tenant's candidates read in (attained, job) order from its queue
        merged with its running jobs (whose attained GPU·s grow), as far as the rule reads them.

        The leftover pass is `place_leftovers` per tenant, sharing the stride pass's missed gang
        sizes. Both passes skip a waiting job whose gang size found no GPUs
        since the last choice, or exceeds the free GPUs (its placement is a function of the free
        GPUs alone, which change only when a job is placed): `try_place` would fail on it again.
        A running job, or one preempted at this instant, is always tried (it may keep its GPUs).
        A fill stops once every waiting gang size is skipped and no such job waits."""
        tenant, gpus, holding, preempted_at = self.tenant, self.gpus, self.holding, self.preempted_at
        try_place, pass_, tickets, lease = self.try_place, self.pass_, self.tickets, self.lease_s
        held: dict[int, list] = {}
        if running:
            att, since = self.ltgf.job_att, self.ltgf.hold_since
            for j in holding:  # (`LTGF.job_attained` written out)
                h = since[j]
                attained = att[j] + (0.0 if h != h else gpus[j] * (now - h))
                mine = held.get(tenant[j])
                if mine is None:
                    held[tenant[j]] = [(attained, j)]
                else:
                    mine.append((attained, j))
        heads, rests = {}, {}
        for k, queue in enumerate(self.queues):
            mine = held.get(k)
            if mine:  # the queue merged with the running jobs (two sorted runs: one linear pass)
                rest = iter(sorted(mine + queue) if queue else sorted(mine))
            elif queue:
                rest = iter(queue)
            else:
                continue
            heads[k] = next(rest)
            rests[k] = rest
        self._start_pass(heads)
        heap = [(pass_[k], k) for k in heads]
        heapq.heapify(heap)
        chosen: list[int] = []
        missed: set[int] = set()  # gang sizes that found no GPUs since the last choice
        heappop, heapreplace = heapq.heappop, heapq.heapreplace
        while heap and cluster.free_total > 0:
            k = heap[0][1]  # the smallest pass (the entries differ in k: the order is total)
            j = heads[k][1]
            g = gpus[j]
            plain = j not in holding and preempted_at[j] != now
            if g > cluster.free_total or (plain and g in missed):
                heappop(heap)  # no GPUs for this tenant's next job (as before): skip the tenant this round
                continue
            if not try_place(cluster, j):
                if plain:
                    missed.add(g)
                heappop(heap)  # this tenant's next job does not fit: skip the tenant this round
                continue
            missed.clear()
            chosen.append(j)
            pass_[k] += g * lease / tickets[k]
            head = heads[k] = next(rests[k], None)
            if head is not None:
                heapreplace(heap, (pass_[k], k))
            else:
                heappop(heap)
        # a fill with no job preempted at this instant waiting offers waiting jobs only
        stop_early = not running and not (self.fresh_at == now and any(
            j in self.waiting and preempted_at[j] == now for j in self.fresh))
        sizes = self.wait_demand  # every waiting gang size (a superset of those left)

        def settled(missed, free) -> bool:  # every job left is skipped
            return stop_early and all(g in missed or g > free for g in sizes)

        for k in sorted((k for k in heads if heads[k] is not None), key=lambda k: (pass_[k], k)):
            def charge(j, share=tickets[k], k=k):
                pass_[k] += gpus[j] * lease / share
            if not self.place_leftovers(cluster, (j for _, j in chain((heads[k],), rests[k])), chosen, charge,
                                        missed, settled):
                return chosen
        return chosen


# ----- the kernel (schedulers.cluster.core): the same decision over the simulator's arrays -------
GandivaParams = namedtuple("GandivaParams", "")
GandivaState = namedtuple("GandivaState", "params pass_ was_active")


def setup(s, params):
    return group(GandivaState, params, np.zeros(s.job.T), np.zeros(s.job.T, np.bool_))


@jitable
def start_pass(s, p, have):
    """GandivaFair._start_pass: a tenant back from idle restarts at the smallest pass of the
    active ones; `have[k]`: tenant k has candidates now."""
    floor = 0.0
    found = False
    for k in range(s.job.T):
        if have[k] and p.was_active[k]:
            if not found or p.pass_[k] < floor:
                floor = p.pass_[k]
                found = True
    for k in range(s.job.T):
        if have[k] and not p.was_active[k]:
            if floor > p.pass_[k]:
                p.pass_[k] = floor
        p.was_active[k] = have[k] or s.led.run_gpus[k] > 0


@jitable
def decide(s, p, at_round, now, chosen):
    """GandivaFair._select_queued: stride scheduling over tenants, each tenant's candidates in
    (attained GPU·s, job) order."""
    cand = candidates(s, at_round)
    m = len(cand)
    key = np.empty(m)
    ten = np.empty(m, np.int64)
    for i in range(m):
        j = cand[i]
        h = s.led.hold_since[j]
        key[i] = s.led.job_att[j] + (0.0 if math.isnan(h) else s.job.gpus[j] * (now - h))
    perm = np.argsort(key, kind="mergesort")
    for i in range(m):
        ten[i] = s.job.tenant[cand[perm[i]]]
    perm = perm[np.argsort(ten, kind="mergesort")]
    js = cand[perm]
    first = np.full(s.job.T, -1, np.int64)
    end = np.zeros(s.job.T, np.int64)
    for i in range(m):
        k = s.job.tenant[js[i]]
        if first[k] < 0:
            first[k] = i
        end[k] = i + 1
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


KERNEL = kernel("gandiva-fair", GandivaParams, GandivaState, setup=setup, select=decide)
