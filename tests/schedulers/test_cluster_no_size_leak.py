"""No cluster policy but the clairvoyant reference reads true durations (the cardinal sin of the field).

A kernel is given a state that holds no true size (schedulers.cluster.state; test_cluster_size_blind.py
checks what it can reach), and this test checks the decisions themselves: give the job that completes last another true duration
(a third of it). Until it completes in either run nothing observable differs — p̂, arrivals, every
other completion — so a policy that does not read true durations decides exactly the same until
then: the same stretches on the same GPUs. `srtf-oracle`, which reads them, is the control that
shows the test can see a leak.
"""

import numpy as np
import pytest

from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy, policy_names


def _workload(seed: int, n: int = 80):
    rng = np.random.default_rng(seed)
    size = rng.integers(30, 6000, n).astype(float)
    submit = np.sort(rng.integers(0, 8000, n)).astype(float)
    predicted = size * np.exp(rng.normal(0, 0.8, n))
    gpus = rng.choice([1, 2, 3, 4, 6, 8, 12], n)
    tenant = rng.choice(["t0", "t1", "t2", "t3"], n)
    return submit, size, predicted, gpus, tenant


def _run(name, submit, size, predicted, gpus, tenant):
    jobs = JobSet.from_arrays(submit, size, predicted=predicted, gpus=gpus, tenant=tenant)
    cluster = ClusterSettings.of(nodes=2, gpus_per_node=8, lease_s=300, cold_start_s=30)
    return simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=cluster)


def _same_until_the_last_completion(name, seed):
    submit, size, predicted, gpus, tenant = _workload(seed)
    a = _run(name, submit, size, predicted, gpus, tenant)
    done = a.jobs["completion_time"].to_numpy()
    last = int(np.argmax(done))
    other = size.copy()
    other[last] /= 3.0
    b = _run(name, submit, other, predicted, gpus, tenant)
    cut = min(done[last], b.jobs["completion_time"].iloc[last])
    assert cut > np.sort(done)[len(done) // 2]  # more than half of the run is compared
    rows_a = a.allocations[a.allocations["end"] < cut].reset_index(drop=True)
    rows_b = b.allocations[b.allocations["end"] < cut].reset_index(drop=True)
    return rows_a.equals(rows_b)


@pytest.mark.parametrize("name", [n for n in policy_names("cluster") if not get_policy(n, "cluster").clairvoyant])
def test_a_policy_that_does_not_read_durations_decides_the_same_until_they_show(monkeypatch, name):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    assert all(_same_until_the_last_completion(name, seed) for seed in (1, 2))


def test_the_clairvoyant_reference_is_seen_reading_them(monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    assert not all(_same_until_the_last_completion("srtf-oracle", seed) for seed in (1, 2))
