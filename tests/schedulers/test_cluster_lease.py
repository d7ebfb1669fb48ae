"""Rounds happen only AT lease boundaries (schedulers.cluster.events).

A running job keeps its lease to the next multiple of `lease_s`, whatever tick a competitor arrives
on, and a boundary passed with nothing waiting brings no round until the next boundary. Hand cases
in the Python simulator and in the compiled loop, then a property over generated workloads: every
round, and so every preemption, is at a multiple of the lease.
"""

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedulers.cluster import events
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import builtin_classes, get_policy

ROUND_POLICIES = [cls.name for cls in builtin_classes("cluster") if cls.preemptive]  # the policies with lease rounds
LEASE, COLD = 900.0, 60.0


def _two_jobs(b_submit: float, hived: bool = False) -> tuple[JobSet, int]:
    """One 8-GPU node. A (tenant ta): submit 0, 5,000 s, 8 GPUs; B (tenant tb): 600 s, 8 GPUs.

    For HiveD (tenants own whole nodes as cells) a second node, tb's cell, and a job of ta that
    fills ta's own node from 0, so that A runs opportunistically on tb's cell; returns (jobs, nodes)."""
    submit, size, tenant, ids = [0.0, b_submit], [5_000.0, 600.0], ["ta", "tb"], ["a", "b"]
    if hived:
        submit, size, tenant, ids = [0.0] + submit, [20_000.0] + size, ["ta"] + tenant, ["0own"] + ids
    jobs = JobSet.from_arrays(submit, size, predicted=size, gpus=[8] * len(size), tenant=tenant, job_id=ids)
    return jobs, 2 if hived else 1


def _run(monkeypatch, jit: str, name: str, jobs: JobSet, **cluster):
    """`jit`: "on" / "off" (the simulator compiled / as Python); `cluster`: the simulator's cluster
    (ClusterSettings.of's keywords)."""
    monkeypatch.setenv("ATLAS_BENCH_JIT", jit)
    return simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=ClusterSettings.of(**cluster))


@pytest.mark.parametrize("name", ROUND_POLICIES)
@pytest.mark.parametrize("b_submit, boundary", [(1_000.0, 1_800.0), (1_003.0, 1_800.0), (901.0, 1_800.0),
                                                (1_795.0, 1_800.0), (1_800.0, 1_800.0), (1_801.0, 2_700.0)])
def test_a_running_job_keeps_its_lease_to_the_next_boundary(monkeypatch, name, b_submit, boundary):
    # the boundary at 900 passes with nothing waiting (no round); B, whatever tick it is seen at,
    # waits for the next boundary, where it preempts A (B is owed more under every rule here but
    # Gandiva_fair's: B's tenant, back from idle, restarts at A's tenant's pass and loses the tie,
    # so A is renewed there and preempted at the boundary after; and Themis's: B seen at 1,800 s
    # after waiting 0-5 s has finish-time fairness ρ = (wait + 600) / (600 · 2 active jobs) < 1, below
    # A's, so B wins the lease only at 2,700 s)
    late = name == "gandiva-fair" or (name == "themis" and b_submit in (1_795.0, 1_800.0))
    start = boundary + (LEASE if late else 0.0)
    for jit in ("off", "on"):
        jobs, nodes = _two_jobs(b_submit, hived=name == "hived")
        run = _run(monkeypatch, jit, name, jobs, nodes=nodes, gpus_per_node=8, lease_s=LEASE, interval_s=10.0,
                   cold_start_s=COLD)
        assert run.loop == {"on": "compiled", "off": "Python"}[jit]
        jobs = run.jobs.set_index("job_id")
        assert jobs.loc["b", "start_time"] == start, jit
        assert jobs.loc["b", "completion_time"] == start + 600.0
        assert jobs.loc["a", "preemptions"] == 1 and jobs.loc["b", "preemptions"] == 0
        # A is preempted at B's start, resumes when B ends, cold-starts, then runs its remaining
        # 5,000 - start seconds: it completes at 5,660 whatever the boundary
        assert jobs.loc["a", "completion_time"] == 5_660.0
        a = run.allocations[run.allocations["job_id"] == "a"][["start", "end", "kind"]].values.tolist()
        assert a == [[0.0, start, "run"], [start + 600.0, start + 660.0, "cold-start"], [start + 660.0, 5_660.0, "run"]]
        assert run.metrics["rounds"] == 1 + (start - boundary) / LEASE


def _round_times(monkeypatch):
    """Record the instant of every round of a run of the simulator as Python."""
    times = []
    real = events.decide

    def spy(s, p, at_round, now):
        if at_round:
            times.append(now)
        return real(s, p, at_round, now)
    monkeypatch.setattr(events, "decide", spy)
    return times


def _on_boundary(t: float, lease: float) -> bool:
    k = math.floor(t / lease + 1e-9)
    return abs(t - k * lease) <= 1e-9


@st.composite
def _workloads(draw):
    """A few nodes, 3-25 jobs with submit times on and off 10-s ticks and runs across several leases."""
    nodes = draw(st.lists(st.sampled_from([4, 8]), min_size=1, max_size=3))
    n = draw(st.integers(3, 25))
    lease = draw(st.sampled_from([300.0, 600.0, 900.0]))
    submit = sorted(draw(st.lists(st.integers(0, 4_000), min_size=n, max_size=n)))
    off_tick = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    submit = [s + (3.5 if o else 0.0) for s, o in zip(submit, off_tick)]
    size = draw(st.lists(st.integers(30, 3_000), min_size=n, max_size=n))
    gpus = draw(st.lists(st.sampled_from([1, 2, 4, max(nodes)]), min_size=n, max_size=n))
    tenant = draw(st.lists(st.sampled_from(["t0", "t1", "t2"]), min_size=n, max_size=n))
    jobs = JobSet.from_arrays(np.array(submit), np.array(size, float), predicted=np.array(size, float) * 1.3,
                              gpus=gpus, tenant=tenant)
    return jobs, dict(node_capacities=nodes, lease_s=lease, interval_s=10.0, cold_start_s=20.0)


@pytest.mark.parametrize("name", ROUND_POLICIES)
@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_workloads())
def test_every_round_and_preemption_is_at_a_lease_boundary(monkeypatch, name, case):
    jobs, kwargs = case
    times = _round_times(monkeypatch)
    run = _run(monkeypatch, "off", name, jobs, **kwargs)  # its rounds are spied on (compiled gives the same runs)
    lease = kwargs["lease_s"]
    assert len(times) == run.metrics["rounds"]
    assert all(_on_boundary(t, lease) for t in times), times
    # in the executed allocations: a stretch that ends before its job completes and is not a cold
    # start turning into a run ended at a round (a preemption or a migration)
    alloc = run.allocations
    done = run.jobs.set_index("job_id")["completion_time"]
    for row in alloc.itertuples():
        if row.end != done[row.job_id] and not (row.kind == "cold-start" and row.end - row.start == kwargs["cold_start_s"]):
            assert row.end in times, row


def test_a_boundary_far_from_the_origin_is_still_a_round(monkeypatch):
    """At times near 10^11 s, now / lease of a boundary (an odd lease: 333.3 s) can round just below
    the integer: the boundary must still be recognised (before, no round happened there, the engine
    was asked to wake at the same instant forever, and the run failed as a stuck policy)."""
    boundary = 1_050_105_011 * 333.3  # the first boundary after B's submit at 3.5e11 s
    for jit in ("off", "on"):
        jobs = JobSet.from_arrays([0.0, 3.5e11], [4e11, 600.0], predicted=[4e11, 600.0], gpus=[8, 8],
                                  tenant=["ta", "tb"], job_id=["a", "b"])
        run = _run(monkeypatch, jit, "astraea", jobs, nodes=1, gpus_per_node=8, lease_s=333.3,
                   fair_window_s=1e10)  # few tenant windows over 4e11 s
        assert run.metrics["completed"] == 2
        b = run.jobs.set_index("job_id").loc["b"]
        assert b["start_time"] == boundary and b["completion_time"] == boundary + 600.0
        a = run.allocations[run.allocations["job_id"] == "a"]
        assert a["end"].iloc[0] == boundary  # A's lease ends at that round
