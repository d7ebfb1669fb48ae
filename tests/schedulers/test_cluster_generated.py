"""The cluster simulator (schedulers.cluster.simulator) compiled and the same source as Python, on
generated workloads: small random clusters (nodes of 4, 8 and 16 GPUs), 5-40 jobs with gangs up to two nodes,
tenants with quota weights and jobs with weights, submit times on and off the ticks, leases that are
and are not multiples of the tick, p̂ with noise, cold start 0 or not, eq8 / eq16 and ρ from submit /
tick. For every built-in policy the two give identical per-job tables, tenant windows, executed
allocations and metrics, bit for bit (test_cluster_compiled.py does it on four one-day workloads of
750-1,000 jobs).

Derandomized: CI draws the same workloads every time. The first run compiles the loop (numba
caches it on disk).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from schedulers.cluster.metrics import compiled_policies, simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

pytestmark = pytest.mark.long_file  # started first on the xdist workers (tests/conftest.py)

pytest.importorskip("numba")


@st.composite
def workloads(draw):
    """(JobSet, policy keyword arguments, tenant_loss_share) of a small random cluster workload."""
    nodes = draw(st.lists(st.sampled_from([4, 8, 16]), min_size=1, max_size=4))
    big = max(nodes)
    total = sum(nodes)
    n = draw(st.integers(5, 40))
    interval = draw(st.sampled_from([10.0, 30.0]))
    lease = draw(st.sampled_from([300.0, 600.0, 900.0, 250.0]))  # 250 s: boundaries off the 30-s ticks
    # submit times: whole ticks, or off them (seen at the next tick), over a span of 0.2-3 leases per job
    span = draw(st.sampled_from([0.2, 1.0, 3.0])) * lease * n
    ticks = draw(st.lists(st.integers(0, int(span / interval)), min_size=n, max_size=n))
    offsets = draw(st.lists(st.sampled_from([0.0, 0.0, 0.5, 3.25, interval - 1.0]), min_size=n, max_size=n))
    submit = np.sort(np.array(ticks, float) * interval + np.array(offsets))
    size = np.array(draw(st.lists(st.integers(10, 8_000), min_size=n, max_size=n)), float)
    noise = np.array(draw(st.lists(st.sampled_from([0.25, 0.6, 1.0, 1.7, 4.0]), min_size=n, max_size=n)))
    predicted = np.maximum(np.round(size * noise), 1.0)
    sizes = sorted({g for g in (1, 2, 3, 4, 8, big, 2 * big) if g <= total})
    gpus = draw(st.lists(st.sampled_from(sizes), min_size=n, max_size=n))
    n_tenants = draw(st.integers(1, 4))
    tenant = draw(st.lists(st.integers(0, n_tenants - 1), min_size=n, max_size=n))
    job_weight = draw(st.one_of(st.none(), st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=n, max_size=n)))
    jobs = JobSet.from_arrays(submit, size, predicted, gpus=gpus, tenant=[f"t{k}" for k in tenant],
                              weight=job_weight)
    tenant_weights = draw(st.one_of(st.none(), st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]),
                                                        min_size=len(jobs.tenant_names),
                                                        max_size=len(jobs.tenant_names))))
    kwargs = dict(node_capacities=nodes, lease_s=lease, interval_s=interval,
                  cold_start_s=draw(st.sampled_from([0.0, 30.0, 60.0])), tenant_weights=tenant_weights,
                  fair_share=draw(st.sampled_from(["eq16", "eq8"])), rho_from=draw(st.sampled_from(["submit", "tick"])),
                  fair_window_s=draw(st.sampled_from([600.0, 3_600.0])))
    return jobs, kwargs, draw(st.sampled_from(["eq16", "eq8"]))


def _run(monkeypatch, setting, name, jobs, kwargs, share, check=False):
    """`kwargs`: the simulator's cluster (ClusterSettings.of's keywords)."""
    monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
    return simulate_fairness(jobs, get_policy(name, "cluster")(), tenant_loss_share=share,
                             cluster=ClusterSettings.of(check=check, **kwargs))




@pytest.mark.parametrize("name", compiled_policies())
@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=workloads())
def test_compiled_and_python_runs_are_the_same_on_generated_workloads(monkeypatch, same_run, name, case):
    jobs, kwargs, share = case
    python = _run(monkeypatch, "off", name, jobs, kwargs, share, check=True)  # every decision validated
    compiled_run = _run(monkeypatch, "on", name, jobs, kwargs, share)
    assert (python.loop, compiled_run.loop) == ("Python", "compiled")
    assert python.metrics["completed"] == jobs.n and python.metrics["dropped_choices"] == 0
    same_run(python, compiled_run)
