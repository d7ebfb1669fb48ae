"""Tiresias-L (Gu et al., NSDI'19): discretised 2D-LAS on attained GPU·s with starvation promotion.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class with
its Python rule (what the engine runs for a subclass or a checked run, over the mechanics of
`schedulers.cluster.rounds.ClusterPolicy`) and its kernel, the same decision that the cluster
simulator (`schedulers.cluster.core`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy.
"""

from __future__ import annotations

import heapq
from collections import namedtuple

import numpy as np

from bisect import bisect_left, bisect_right, insort

from schedulers.cluster.core import (attained_engine, candidates, group, job_order_add, job_order_remove, kernel,
                                     ledger_attained, place_in_order)
from schedulers.cluster.rounds import Candidates, ClusterPolicy
from schedulers.jit import jitable
from schedulers.policy import register


@register
class TiresiasL(ClusterPolicy):
    """Tiresias-L: 2D-LAS with discretised queues on attained GPU·s (no size knowledge).

    Queue = number of thresholds the job's attained GPU·s has passed; FIFO inside a queue.
    Starvation: a job waiting longer than STARVATION × its executed time goes back to queue 0.
    Preemption happens at lease rounds, like every policy on this core."""

    name = "tiresias-l"
    queued = True  # waiting jobs in its own queues (below)
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
        """Its kernel's settings (schedulers.cluster.core; the kernel is below)."""
        return TiresiasParams()

    def setup(self, view):
        n = self.n = view.jobs.n
        self.offset = [0.0] * n
        self.queues: list[list[int]] = [[] for _ in range(len(self.THRESHOLDS_GPU_S) + 1)]
        self.queue_of = [-1] * n  # a waiting job's queue, -1 if it does not wait
        self.starving: list[tuple[float, float, int]] = []  # (promotion instant, wait start, job)
        self.view = view
        # the thresholds passed are counted whatever their order: sorted, bisect_right counts them
        self.thresholds = sorted(self.THRESHOLDS_GPU_S)
        self.by_size: dict[int, list[int]] = {}  # gang size -> keys of its waiting jobs, ascending
        self.sizes: list[int] = []  # the keys of by_size, ascending
        # the jobs preempted at instant fresh_at that wait again: `place_leftovers` always tries them
        # (they may keep their own GPUs), so `_leftovers` reads them apart
        self.fresh: dict[int, None] = {}
        self.fresh_at = -1.0

    def level(self, j: int, attained: float) -> int:
        """The queue of a job that has attained `attained` GPU·s: thresholds passed since its offset."""
        return bisect_right(self.thresholds, attained - self.offset[j])

    def _wait(self, j, now):
        super()._wait(j, now)
        att = self.ltgf.job_attained(j, now)
        q = self.queue_of[j] = self.level(j, att)
        insort(self.queues[q], j)
        g = self.gpus[j]
        keys = self.by_size.get(g)
        if keys is None:
            keys = self.by_size[g] = []
            insort(self.sizes, g)
        insort(keys, q * self.n + j)
        if self.preempted_at[j] == now:
            if self.fresh_at != now:
                self.fresh, self.fresh_at = {}, now
            self.fresh[j] = None
        if att > 0:
            heapq.heappush(self.starving, (now + self.STARVATION * self.progress(self.view, j), now, j))
            if len(self.starving) > 2 * len(self.waiting) + 64:  # mostly jobs started since: drop those
                self.starving = [e for e in self.starving if self.queue_of[e[2]] >= 0 and self.wait_since[e[2]] == e[1]]
                heapq.heapify(self.starving)

    def _unwait(self, j):
        super()._unwait(j)
        q = self.queue_of[j]
        queue = self.queues[q]
        del queue[bisect_left(queue, j)]
        keys = self.by_size[self.gpus[j]]
        del keys[bisect_left(keys, q * self.n + j)]
        self.queue_of[j] = -1

    def _promote(self, view, now: float) -> None:
        """Promote every waiting job whose wait has passed STARVATION × its executed time (the
        exact test of the rule; the heap only says which jobs may pass it)."""
        heap, late = self.starving, []
        while heap and heap[0][0] <= now + 1e-9 * max(1.0, abs(now)):
            entry = heapq.heappop(heap)
            _, since, j = entry
            if self.queue_of[j] < 0 or self.wait_since[j] != since:
                continue  # started since (or waits again from a later instant, with its own entry)
            if not now - since > self.STARVATION * self.progress(view, j):
                late.append(entry)  # the instant is rounded: not yet
                continue
            att = self.ltgf.job_attained(j, now)
            self.offset[j] = att  # promoted: counts from zero again
            q = self.level(j, att)
            old = self.queue_of[j]
            if q != old:
                queue = self.queues[old]
                del queue[bisect_left(queue, j)]
                insort(self.queues[q], j)
                self.queue_of[j] = q
                keys = self.by_size[self.gpus[j]]
                del keys[bisect_left(keys, old * self.n + j)]
                insort(keys, q * self.n + j)
        for entry in late:
            heapq.heappush(heap, entry)

    def _running_keys(self, now: float) -> list[int]:
        """The running jobs' keys (queue × n + job), their queue from their attained GPU·s now
        (`LTGF.job_attained` written out)."""
        ltgf, gpus, offset, thresholds, n = self.ltgf, self.gpus, self.offset, self.thresholds, self.n
        att, since = ltgf.job_att, ltgf.hold_since
        keys = []
        for j in self.holding:
            held = since[j]
            attained = att[j] + (0.0 if held != held else gpus[j] * (now - held))
            keys.append(bisect_right(thresholds, attained - offset[j]) * n + j)
        return keys

    def order(self, view, candidates):
        now = view.now
        if isinstance(candidates, Candidates):
            self._promote(view, now)
            if not candidates.running:
                return [j for queue in self.queues for j in queue]
            n, out = self.n, []
            keys = sorted(self._running_keys(now))
            i = 0
            for q, queue in enumerate(self.queues):
                held = []
                while i < len(keys) and keys[i] < (q + 1) * n:
                    held.append(keys[i] - q * n)
                    i += 1
                out.extend(heapq.merge(held, queue) if held else queue)
            return out
        # any other list of candidates: the rule as it reads
        job_attained = self.ltgf.job_attained
        keys = []
        for j in candidates:
            att = job_attained(j, now)
            if att > 0 and j not in self.holding and now - self.wait_since[j] > self.STARVATION * self.progress(view, j):
                self.offset[j] = att  # promoted: counts from zero again
            keys.append((self.level(j, att), j))
        keys.sort()
        return [j for _, j in keys]

    def select(self, view, candidates, cluster):
        chosen: list[int] = []
        if not isinstance(candidates, Candidates):
            self.place_leftovers(cluster, self.order(view, candidates), chosen)  # in queue order, every job that fits
            return chosen
        # the same: `place_leftovers` on `order`, read from the keys
        now = view.now
        self._promote(view, now)
        always = self._running_keys(now) if candidates.running else []
        if self.fresh_at == now:
            waiting, preempted_at, queue_of, n = self.waiting, self.preempted_at, self.queue_of, self.n
            always.extend(queue_of[j] * n + j for j in self.fresh if j in waiting and preempted_at[j] == now)
        always.sort()
        self._leftovers(cluster, always, chosen)
        return chosen

    def _leftovers(self, cluster, always: list[int], chosen: list[int]) -> None:
        """`place_leftovers` on the candidates in key order — `always` (running jobs, and jobs
        preempted at this instant, which it always tries) and the waiting jobs (`by_size`) — without
        reading the jobs it would skip: a waiting job of g GPUs is skipped while g exceeds the free
        GPUs or found no placement since the last choice, so the next job tried is the first one
        after the last read among `always` and the heads of the gang sizes still open. Those heads
        are read again only when a choice may have changed them (a size that missed opens again, or
        the free GPUs fall below the size of the first head)."""
        by_size, sizes, gpus, n = self.by_size, self.sizes, self.gpus, self.n
        preempted_at, now, try_place = self.preempted_at, self.now, self.try_place
        head = dict.fromkeys(sizes, 0)  # per gang size: index of its first key not read yet
        missed: set[int] = set()
        n_always, a = len(always), 0
        last = -1  # the last key read
        end = len(self.queues) * n  # above every key
        while True:
            free = cluster.free_total
            if free == 0:
                return
            best, best_g = end, 0  # the first head of an open size, and its size
            for g in sizes:
                if g > free:
                    break
                if g in missed:
                    continue
                keys = by_size[g]
                i, size = head[g], len(keys)
                if i < size and keys[i] <= last:
                    i = bisect_right(keys, last, i)
                while i < size and preempted_at[keys[i] % n] == now:
                    i += 1  # preempted at this instant: in `always`
                head[g] = i
                if i < size and keys[i] < best:
                    best, best_g = keys[i], g
            while a < n_always and always[a] < best:  # the jobs always tried before that head
                key = always[a]
                a += 1
                last = key
                j = key % n
                if gpus[j] <= free and try_place(cluster, j):
                    chosen.append(j)
                    free = cluster.free_total
                    if missed or best_g > free or free == 0:
                        missed.clear()
                        break  # read the heads again
            else:
                if best == end:
                    return
                last = best
                head[best_g] += 1
                j = best % n
                if try_place(cluster, j):
                    chosen.append(j)
                    missed.clear()
                else:
                    missed.add(best_g)


# ----- the kernel (schedulers.cluster.core): the same decision over the simulator's arrays -------
TiresiasParams = namedtuple("TiresiasParams", "")
TiresiasState = namedtuple("TiresiasState", "params offset queue_of starving")


def setup(s, params):
    starving = [(0.0, 0.0, 0)]
    starving.clear()
    return group(TiresiasState, params, np.zeros(s.job.n), np.full(s.job.n, -1, np.int64), starving)


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
    lev = np.empty(len(cand), np.int64)
    for i in range(len(cand)):
        j = cand[i]
        lev[i] = level_of(s, p, j, ledger_attained(s, j, now)) if s.q.holding[j] else p.queue_of[j]
    order = cand[np.argsort(lev, kind="mergesort")]
    place_in_order(s, order, len(order), now, at_round, chosen)


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


KERNEL = kernel("tiresias-l", TiresiasParams, TiresiasState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait)
