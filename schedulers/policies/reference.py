"""Policies that reproduce the ATLAS paper's public reference code under their own names.

They exist only so that the paper's table can be reproduced (`--protocol paper`, `benchmark
reproduce atlas`; see docs/reproduce-atlas.md). Each differs from the policy of the same idea in
`single.py` / `parallel.py`, and each says how:

- `las-ref` is **not LAS**. The reference runs the single least-attained job (ties: lowest index)
  at full rate until it finishes or the next job arrives, then chooses again. Exact LAS (`las`)
  shares the machine among all jobs tied at the least attained level, so that no job runs past
  the next-lowest level; `las-ref` lets one job run far past the others and behaves much more
  like FIFO between arrivals.
- `edf-p-ref` is EDF on predicted deadlines r_j + S·p̂_j with a *given* factor S. The reference
  passes S* computed from the true sizes, which is a leak that the protocol labels; `edf-p`
  estimates S online instead.
- `random-ref` sends each job to a machine drawn uniformly at random (numpy `RandomState(seed)`,
  one `randint(m)` per job in draw order), ignoring the loads; `random` list-schedules a random
  order onto the least-loaded machine.

All are O(log n) per event. May import numpy and schedulers.policy_base / schedulers.policies.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from schedulers.policies.parallel import _ListScheduling
from schedulers.policies.single import EDF, _OneAtATime, attained_service, estimated_deadline
from schedulers.policy_base import register


@register
class LASReference(_OneAtATime):
    """The reference code's "LAS/FB": one least-attained job at a time, re-chosen at each arrival.

    Keyed by attained service (ties: index). A waiting job's attained service does not change,
    so its heap key stays exact; the running job is compared with its current attained service
    at every arrival and pushed back when a job with less (a new arrival has 0) is waiting.
    """

    name = "las-ref"
    listing_rank = 140  # its place in every listing of single policies
    fast_loop = "las-ref"  # its loop in schedulers.fastpath
    preemptive = True
    description = "NOT LAS: the reference code's LAS — the least-attained job runs alone until it finishes or the next arrival"
    order_key = staticmethod(attained_service)
    key_reads_attained = True


@register
class EDFPReference(EDF):
    """`edf` with p̂ in place of p: preemptive EDF on d_j = r_j + S·p̂_j with a fixed, given S (the
    reference code's EDF-P). Not clairvoyant itself: the S it is given is the caller's business."""

    name = "edf-p-ref"
    listing_rank = 150  # its place in every listing of single policies
    fast_loop = "edf-p-ref"  # its loop in schedulers.fastpath
    clairvoyant = False
    needs_prediction = True
    description = "EDF on r + S·p̂ with a given S (the reference code's EDF-P; it passes S* of the true sizes)"
    order_key = staticmethod(estimated_deadline)  # p̂: the estimate, never revised here


@register
class RandomReference(_ListScheduling):
    """Each job to a uniformly random machine (RandomState(seed).randint(m) per job, in draw order).

    `draw_order` (optional) lists job indices in the order the reference draws for them — its
    own sample order; by default index order. Each machine runs its jobs back to back.
    """

    name = "random-ref"
    listing_rank = 60  # its place in every listing of parallel policies
    description = "each job to a uniformly random machine, loads ignored (the reference code's Random)"

    def __init__(self, machines: int = 1, seed: int = 0, draw_order=None):
        super().__init__(machines=machines, seed=seed)
        self.draw_order = None if draw_order is None else np.asarray(draw_order, np.int64)

    def machine_queues(self, view) -> list[deque]:
        n = view.jobs.n
        order = np.arange(n) if self.draw_order is None else self.draw_order
        if sorted(order.tolist()) != list(range(n)):
            raise ValueError("draw_order must be a permutation of the job indices")
        rng = np.random.RandomState(self.seed)
        machine = np.empty(n, np.int64)
        machine[order] = [rng.randint(self.machines) for _ in range(n)]
        queues = [deque() for _ in range(self.machines)]
        for j in order.tolist():
            queues[machine[j]].append(j)
        return queues
