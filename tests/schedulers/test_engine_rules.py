"""The engine executes exactly what a policy decides, or refuses the decision with one line.

A plugin policy (any class defined outside the project's packages, as these are) that breaks a
rule gets a `PluginPolicyError` naming it — never a silently different schedule, never an
IndexError from deep inside the engine.
"""

import numpy as np
import pytest

from atlas_data.errors import InputError
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import IDLE, Allocation, Policy, PluginPolicyError

JOBS = JobSet.from_arrays([0.0, 0.0, 0.0, 5.0], [3.0, 2.0, 4.0, 1.0], job_id=["a", "b", "c", "d"])


class OneAtATime(Policy):
    """Non-preemptive, in the order `pick` chooses among the waiting jobs (default: submit order)."""

    name = "test-one-at-a-time"

    def reset(self, view):
        self.machine = view.new_group(1.0)
        self.waiting, self.running = [], IDLE

    def pick(self, view):
        return self.waiting.pop(0)

    def allocate(self, view):
        alloc = Allocation()
        self.waiting.extend(view.arrived)
        if self.running != IDLE and view.is_done(self.running):
            self.running = IDLE
        if self.running == IDLE and self.waiting:
            self.running = self.pick(view)
            alloc.assign(self.running, self.machine)
        return alloc


def _run(policy):
    return simulate(JOBS, policy, reference=True)


def test_the_executed_schedule_is_the_decided_one():
    class LastFirst(OneAtATime):
        def pick(self, view):
            return self.waiting.pop()

    # at 0: c (4) runs; at 4: b (2) -> 6; at 6: d arrived at 5 and is last -> 7; then a -> 10
    result = _run(LastFirst())
    np.testing.assert_array_equal(result.completion_time, [10.0, 6.0, 4.0, 7.0])
    np.testing.assert_array_equal(result.start_time, [7.0, 4.0, 0.0, 6.0])


def _broken(pick=None, allocate=None, reset=None):
    body = {}
    if pick is not None:
        body["pick"] = lambda self, view: pick(self, view)
    if allocate is not None:
        body["allocate"] = lambda self, view: allocate(self, view)
    if reset is not None:
        body["reset"] = lambda self, view: (OneAtATime.reset(self, view), reset(self, view))
    return type("Broken", (OneAtATime,), body)()


@pytest.mark.parametrize("policy, message", [
    # a negative index is a valid Python index: it used to run (or report) another job, here b or c
    (_broken(pick=lambda self, view: -2), "assigned -2, which is no job index (0 to 3)"),
    (_broken(pick=lambda self, view: 7), "assigned 7, which is no job index (0 to 3)"),
    (_broken(pick=lambda self, view: view.jobs.job_id[self.waiting.pop(0)]), "assigned 'a', which is no job index"),
    (_broken(pick=lambda self, view: float(self.waiting.pop(0))), "assigned 0.0, which is no job index"),
    (_broken(reset=lambda self, view: setattr(self, "machine", -2)), "assigned job a to -2, which is no group"),
    (_broken(reset=lambda self, view: setattr(self, "machine", 5)), "assigned job a to 5, which is no group"),
    (_broken(allocate=lambda self, view: [(0, self.machine)]), "returned a list from allocate, not an Allocation"),
    (_broken(allocate=lambda self, view: Allocation().set_rate(self.machine, "1")), "set an invalid rate '1'"),
    (_broken(allocate=lambda self, view: Allocation().set_rate(-1, 1.0)), "set the rate of -1, which is no group"),
    (_broken(allocate=lambda self, view: OneAtATime.allocate(self, view).wake_at(float("nan"))),
     "asked to wake at nan, which is not a time at or after now (0)"),
    (_broken(allocate=lambda self, view: (view.is_done(-1), Allocation())[1]), "asked about -1, which is no job index"),
])
def test_a_broken_decision_is_refused_naming_the_policy(policy, message):
    with pytest.raises(PluginPolicyError, match="broke the engine's rules") as info:
        _run(policy)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_policy_cannot_write_into_the_jobs_it_is_shown():
    class Rewrites(OneAtATime):
        def pick(self, view):
            view.jobs.submit_time[:] = 0.0  # would change the instance for every later run and metric
            return self.waiting.pop(0)

    submit = JOBS.submit_time.copy()
    with pytest.raises(InputError, match="raised ValueError: assignment destination is read-only"):
        _run(Rewrites())
    np.testing.assert_array_equal(JOBS.submit_time, submit)


@pytest.mark.parametrize("allocate", [
    lambda self, view: Allocation().wake_at(view.now + 1e-9),  # serves nobody, wakes itself forever
    lambda self, view: OneAtATime.allocate(self, view).wake_at(view.now),  # no time ever passes
])
def test_a_stuck_policy_is_refused_after_ten_thousand_wake_ups_not_a_million_events(allocate):
    with pytest.raises(PluginPolicyError, match="is stuck: 10000 wake-ups in a row with no job in service or no time "
                                                "passing") as info:
        _run(_broken(allocate=allocate))
    assert "4 job(s) unfinished" in str(info.value)  # was: "did not finish within 1000201 events", seconds later
