"""The Philly scenario: two-week snapshot rule, quota derivation, VC mapping; every policy on real
slices of Philly and ElasticFlow completes every job and conserves GPU-seconds."""

import numpy as np
import pandas as pd
import pytest

from atlas_data.adapters import PHILLY_PATH, shipped_trace
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy, policy_names
from schedulers.cluster.scenarios import DAY, philly, two_week_snapshot, vc_quotas


def _table(days, tenants=None):
    n = len(days)
    return pd.DataFrame({"job_id": [f"j{i}" for i in range(n)], "submit_time": np.asarray(days, float) * DAY + 3600.0,
                         "duration": 10.0, "gpus": 1, "tenant": tenants or ["a"] * n})


def test_snapshot_takes_the_busiest_days_and_the_earliest_on_ties():
    # jobs per day: day 0: 1, day 1: 3, day 2: 1, day 3: 3, day 4: 0, day 5: 1 → 2-day windows:
    # [0,1] 4, [1,2] 4, [2,3] 4, [3,4] 3, [4,5] 1: the first maximum is days 0-1
    days = [0, 1, 1, 1, 2, 3, 3, 3, 5]
    window, info = two_week_snapshot(_table(days), days=2)
    assert info["jobs"] == 4 and info["start"] == "1970-01-01" and info["end"] == "1970-01-03"
    assert sorted(window["job_id"]) == ["j0", "j1", "j2", "j3"]
    # 3-day windows: [0..2] 5, [1..3] 7, [2..4] 4, [3..5] 4 → days 1-3
    window, info = two_week_snapshot(_table(days), days=3)
    assert info["jobs"] == 7 and info["start"] == "1970-01-02"
    # a trace shorter than the window is taken whole
    window, info = two_week_snapshot(_table([0, 1]), days=14)
    assert info["jobs"] == 2


def test_quota_is_proportional_to_requested_gpus():
    jobs = pd.DataFrame({"job_id": list("abcd"), "submit_time": 0.0, "duration": [10.0, 20.0, 5.0, 1.0],
                         "gpus": [1, 2, 4, 7], "tenant": ["x", "x", "y", "z"]})
    q = vc_quotas(jobs, 28).set_index("tenant")
    # requested GPUs x: 1 + 2 = 3, y: 4, z: 7 (of 14) → quotas 6, 8, 14 of 28 GPUs
    assert q["requested_gpus"].to_dict() == {"x": 3, "y": 4, "z": 7}
    assert q["quota_gpus"].to_dict() == pytest.approx({"x": 6.0, "y": 8.0, "z": 14.0})
    assert q["requested_gpu_seconds"]["x"] == 1 * 10 + 2 * 20
    assert list(vc_quotas(jobs, 28)["tenant"]) == ["z", "y", "x"]


@pytest.fixture(scope="module")
def scenario():
    return philly()


def test_philly_snapshot_matches_a_brute_force_over_the_raw_file(scenario):
    raw = pd.read_csv(PHILLY_PATH, dtype={"cluster": str})
    t = pd.to_datetime(raw["timestamp"], utc=True)
    day0 = t.dt.floor("D").min()
    best = max(((int(((t >= d) & (t < d + pd.Timedelta(days=14))).sum()), -i, d)
                for i, d in enumerate(pd.date_range(day0, t.max().floor("D"), freq="D"))))
    count, _, start = best
    assert scenario.info["start"] == start.date().isoformat() and len(scenario.jobs) == count
    inside = raw[(t >= start) & (t < start + pd.Timedelta(days=14))]
    # VC mapping and quota weights: tenant = cluster, weight = Σ num_gpus of the VC in the snapshot
    assert scenario.tenant_weights == inside.groupby("cluster")["num_gpus"].sum().astype(float).to_dict()
    assert scenario.quota["quota_gpus"].sum() == pytest.approx(210 * 8)
    assert (scenario.nodes, scenario.gpus_per_node) == (210, 8)
    assert scenario.jobs["submit_time"].min() == 0.0
    assert sorted(scenario.jobs["gpus"].tolist()) == sorted(inside["num_gpus"].tolist())
    assert scenario.jobs["duration"].sum() == inside["duration"].sum()  # original durations kept


def _slice(table, n, start=0):
    part = table.sort_values(["submit_time", "job_id"], kind="mergesort").iloc[start:start + n].reset_index(drop=True)
    rng = np.random.default_rng(5)
    part = part.assign(predicted_duration=part["duration"] * np.exp(rng.normal(0, 0.9, len(part))))
    return JobSet.from_frame(part)




def _check_every_policy(jobs, nodes):
    for name in policy_names("cluster"):
        cluster = ClusterSettings.of(nodes=nodes, gpus_per_node=8, lease_s=900, interval_s=10, cold_start_s=60,
                                     check=True)  # every decision and event validated
        run = simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=cluster)
        assert run.metrics["completed"] == jobs.n, name
        held = run.jobs["gpu_seconds"].to_numpy()
        cold = run.jobs["overhead_s"].to_numpy()
        # a job holds its gang for its work plus the cold starts it paid, nothing else
        assert held == pytest.approx(jobs.gpus * (jobs.size + cold)), name
        # the tenant ledgers hold exactly the jobs' GPU-seconds
        assert run.tenant_intervals["attained_gpu_s"].sum() == pytest.approx(held.sum()), name
        assert run.metrics["utilisation"] <= 1.0 + 1e-9
        if name == "fifo":
            assert run.metrics["avg_slowdown"] > 1.5  # the slice contends: jobs do wait


def test_every_policy_completes_a_real_philly_slice(scenario):
    # 300 consecutive jobs of the snapshot from its busiest hour on 2 × 8 GPUs: real contention
    table = scenario.jobs
    hour = np.floor(table["submit_time"] / 3600.0)
    start = int(np.searchsorted(np.sort(table["submit_time"].to_numpy()), hour.value_counts().idxmax() * 3600.0))
    part = table.sort_values(["submit_time", "job_id"], kind="mergesort").iloc[start:start + 300]
    part = part.assign(duration=np.minimum(part["duration"], 6 * 3600.0))  # keep the test fast: cap at 6 h
    jobs = JobSet.from_frame(part.reset_index(drop=True))
    assert len(jobs.tenant_names) >= 2 and int(jobs.gpus.max()) <= 16
    _check_every_policy(jobs, nodes=2)


def test_every_policy_completes_a_real_elasticflow_slice():
    table, _ = shipped_trace("elasticflow:cluster05")  # real jobs of one cluster, gangs of up to 8 GPUs
    table = table.assign(tenant=np.where(np.arange(len(table)) % 3 == 0, "a", "b"),
                         duration=np.minimum(table["duration"], 6 * 3600.0))
    _check_every_policy(_slice(table, 150, start=1000), nodes=1)
