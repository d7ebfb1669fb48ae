"""Tiresias-L (Gu et al., NSDI'19): discretised 2D-LAS on attained GPU·s with starvation promotion.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, insort

from schedulers.cluster.rounds import Candidates, ClusterPolicy
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
    # thousands of jobs wait, and every fill and round read them all.
    def setup(self, view):
        self.offset = [0.0] * view.jobs.n
        self.queues: list[list[int]] = [[] for _ in range(len(self.THRESHOLDS_GPU_S) + 1)]
        self.queue_of = [-1] * view.jobs.n  # a waiting job's queue, -1 if it does not wait
        self.starving: list[tuple[float, float, int]] = []  # (promotion instant, wait start, job)
        self.view = view

    def level(self, j: int, attained: float) -> int:
        """The queue of a job that has attained `attained` GPU·s: thresholds passed since its offset."""
        level = attained - self.offset[j]
        q = 0
        for t in self.THRESHOLDS_GPU_S:
            if level >= t:
                q += 1
        return q

    def _wait(self, j, now):
        super()._wait(j, now)
        att = self.ltgf.job_attained(j, now)
        q = self.queue_of[j] = self.level(j, att)
        insort(self.queues[q], j)
        if att > 0:
            heapq.heappush(self.starving, (now + self.STARVATION * self.progress(self.view, j), now, j))
            if len(self.starving) > 2 * len(self.waiting) + 64:  # mostly jobs started since: drop those
                self.starving = [e for e in self.starving if self.queue_of[e[2]] >= 0 and self.wait_since[e[2]] == e[1]]
                heapq.heapify(self.starving)

    def _unwait(self, j):
        super()._unwait(j)
        queue = self.queues[self.queue_of[j]]
        del queue[bisect_left(queue, j)]
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
            if q != self.queue_of[j]:
                queue = self.queues[self.queue_of[j]]
                del queue[bisect_left(queue, j)]
                insort(self.queues[q], j)
                self.queue_of[j] = q
        for entry in late:
            heapq.heappush(heap, entry)

    def order(self, view, candidates):
        now = view.now
        if isinstance(candidates, Candidates):
            self._promote(view, now)
            if not candidates.running:
                return [j for queue in self.queues for j in queue]
            running = [[] for _ in self.queues]
            job_attained = self.ltgf.job_attained
            for j in self.holding:
                running[self.level(j, job_attained(j, now))].append(j)
            out = []
            for held, queue in zip(running, self.queues):
                if held:
                    held.sort()
                    out.extend(heapq.merge(held, queue))
                else:
                    out.extend(queue)
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
        self.place_leftovers(cluster, self.order(view, candidates), chosen)  # in queue order, every job that fits
        return chosen
