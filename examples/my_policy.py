"""An example user policy: Smallest Predicted Job First with aging (run with --plugins).

    benchmark run --task scheduling --objective total_completion --noise 0.5 \
        --plugins examples.my_policy --policies spjf,spjf-aging

A policy is a small class: the engine owns time, events and accounting; `allocate(view)` returns
only what changes. Declaring `needs_prediction = True` makes the engine refuse to run it
without p̂; true sizes are unreadable unless `clairvoyant = True`.
"""

import heapq

from schedulers.policy import IDLE, Allocation, Policy, register


@register
class SPJFAging(Policy):
    name = "spjf-aging"
    needs_prediction = True
    description = "non-preemptive; key p̂ − α·(waiting time at arrival order)"

    def __init__(self, alpha: float = 0.0):
        self.alpha = alpha

    def reset(self, view):
        self.machine = view.new_group(1.0)  # one job at a time at full rate
        self.queue, self.running = [], IDLE

    def allocate(self, view):
        alloc = Allocation()
        for j in view.arrived:
            key = view.jobs.predicted[j] - self.alpha * view.jobs.submit_time[j]
            heapq.heappush(self.queue, (key, j))
        if self.running != IDLE and view.is_done(self.running):
            self.running = IDLE
        if self.running == IDLE and self.queue:
            _, self.running = heapq.heappop(self.queue)
            alloc.assign(self.running, self.machine)
        return alloc
