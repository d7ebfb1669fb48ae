"""Parallel-machine list scheduling for P||C_max (batch, non-preemptive), docs/policies.md.

The policy fixes, before time 0, an order and a machine for every job: jobs are taken in the
policy's order and each goes to the machine whose load is smallest so far. Predictive variants
order *and* balance by p̂ (the only sizes they know); the engine then runs each machine's queue
with true sizes, so the makespan counts true sizes. May import numpy and schedulers.policy_base.
"""

from __future__ import annotations

import heapq
from collections import deque

import numpy as np

from schedulers.policy_base import IDLE, Allocation, Policy, register


class _ListScheduling(Policy):
    kind = "parallel"
    descending = False

    def __init__(self, machines: int = 1, seed: int = 0):
        self.machines = int(machines)
        self.seed = int(seed)

    def sizes(self, view) -> np.ndarray:
        raise NotImplementedError

    def order(self, view, sizes: np.ndarray) -> np.ndarray:
        # stable sort: ties keep index order, i.e. job_id
        return np.argsort(-sizes if self.descending else sizes, kind="stable")

    def machine_queues(self, view) -> list[deque]:
        """Each machine's jobs in run order: the policy's order, each onto the least-loaded machine."""
        sizes = self.sizes(view)
        loads = [(0.0, i) for i in range(self.machines)]
        queues = [deque() for _ in range(self.machines)]
        for j in self.order(view, sizes).tolist():
            load, i = heapq.heappop(loads)
            queues[i].append(j)
            heapq.heappush(loads, (load + float(sizes[j]), i))
        return queues

    def reset(self, view) -> None:
        self.queues = self.machine_queues(view)
        self.groups = [view.new_group(1.0) for _ in range(self.machines)]
        self.machine_of = np.full(view.jobs.n, IDLE, np.int64)
        self.started = False

    def allocate(self, view):
        alloc = Allocation()
        free = range(self.machines) if not self.started else [int(self.machine_of[j]) for j in view.completed]
        self.started = True
        for i in free:
            if self.queues[i]:
                j = self.queues[i].popleft()
                self.machine_of[j] = i
                alloc.assign(j, self.groups[i])
        return alloc


@register
class LPT(_ListScheduling):
    name = "lpt"
    listing_rank = 10  # its place in every listing of parallel policies
    clairvoyant = True
    descending = True
    description = "longest true size first onto the least loaded machine"

    def sizes(self, view):
        return view.jobs.size


@register
class SPT(_ListScheduling):
    name = "spt"
    listing_rank = 20  # its place in every listing of parallel policies
    clairvoyant = True
    description = "shortest true size first onto the least loaded machine"

    def sizes(self, view):
        return view.jobs.size


@register
class RandomOrder(_ListScheduling):
    name = "random"
    listing_rank = 30  # its place in every listing of parallel policies
    clairvoyant = True  # balances by true load, like online list scheduling that sees completions
    description = "seeded random order onto the least loaded machine"

    def sizes(self, view):
        return view.jobs.size

    def order(self, view, sizes):
        return np.random.default_rng(self.seed).permutation(len(sizes))


@register
class LPPT(_ListScheduling):
    name = "lppt"
    listing_rank = 40  # its place in every listing of parallel policies
    needs_prediction = True
    descending = True
    description = "longest predicted first, balanced by predicted load"

    def sizes(self, view):
        return view.jobs.predicted


@register
class SPPT(_ListScheduling):
    name = "sppt"
    listing_rank = 50  # its place in every listing of parallel policies
    needs_prediction = True
    description = "shortest predicted first, balanced by predicted load"

    def sizes(self, view):
        return view.jobs.predicted
