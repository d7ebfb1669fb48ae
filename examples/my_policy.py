"""An example user policy: Smallest Predicted Job First with aging (docs/plugins.md).

    benchmark run --task scheduling --objective max_stretch --noise 0.5 \
        --policies "spjf,examples.my_policy:SPJFAging(alpha=0.05)"

A policy is a small class: the engine owns time, events and accounting; `allocate(view)` returns
only what changes. Declaring `needs_prediction = True` makes the engine refuse to run it
without p̂; true sizes are unreadable unless `clairvoyant = True`.

Aging: when the machine frees up, the waiting job with the smallest p̂_j − α·(now − r_j) runs
next — every second of waiting takes α seconds off a job's predicted size, so a long job that
keeps being overtaken by short ones is eventually served. α = 0 is SPJF; a large α is FIFO. For
the waiting jobs at one decision the key orders like p̂_j + α·r_j (now is common to all), which
is what the heap stores.
"""

import heapq

from schedulers.policy import IDLE, Allocation, Policy, register


@register
class SPJFAging(Policy):
    name = "spjf-aging"
    needs_prediction = True
    description = "non-preemptive; smallest p̂ − α·waiting time first"

    def __init__(self, alpha: float = 0.0):
        if not alpha >= 0:
            raise ValueError(f"alpha must be >= 0, got {alpha}")
        self.alpha = float(alpha)

    def reset(self, view):
        self.machine = view.new_group(1.0)  # one job at a time at full rate
        self.queue, self.running = [], IDLE

    def allocate(self, view):
        alloc = Allocation()
        for j in view.arrived:
            key = view.jobs.predicted[j] + self.alpha * view.jobs.submit_time[j]
            heapq.heappush(self.queue, (key, j))
        if self.running != IDLE and view.is_done(self.running):
            self.running = IDLE
        if self.running == IDLE and self.queue:
            _, self.running = heapq.heappop(self.queue)
            alloc.assign(self.running, self.machine)
        return alloc
