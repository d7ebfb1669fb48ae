"""Fairness metrics (docs/fairness.md) on hand-computed cases."""

import math

import pytest

from schedulers.cluster.metrics import JOB_COLUMNS, METRICS, ideal_fairness, simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy


def _fifo(jobs, **cluster):
    return simulate_fairness(jobs, get_policy("fifo", "cluster")(),
                             cluster=ClusterSettings.of(nodes=1, gpus_per_node=8, **cluster))


def test_one_tenant_two_gangs():
    # two 8-GPU, 100 s jobs at 0 on one 8-GPU node: J1 0-100, J2 100-200
    run = _fifo(JobSet.from_arrays([0, 0], [100, 100], gpus=[8, 8]))
    m = run.metrics
    assert set(METRICS) <= set(m) and set(JOB_COLUMNS) <= set(run.jobs.columns)
    assert m["avg_jct"] == 150.0
    assert m["avg_slowdown"] == 1.5
    assert m["p99_slowdown"] == pytest.approx(1.99)  # linear interpolation between 1 and 2
    assert m["makespan"] == 200.0
    assert m["utilisation"] == 1.0
    assert m["preemptions"] == 0 and m["overhead_pct"] == 0.0 and m["completed"] == 2
    # ρ: both active on [0,100): share min(8, 8/2) = 4 each. J1: 800/400 = 2.
    # J2: fair 400 + 8·100 = 1200, attained 800 -> 2/3 < 0.95
    assert run.jobs["rho"].tolist() == pytest.approx([2.0, 2 / 3])
    assert m["sharing_loss_jobs"] == 0.5
    assert run.jobs["gpu_seconds"].tolist() == [800.0, 800.0]
    assert run.jobs["run_time"].tolist() == [100.0, 100.0]


@pytest.mark.parametrize("share", ["eq16", "eq8"])
def test_tenant_loss_intervals(share):
    # same jobs, tenants X (J1) and Y (J2), quota 4 each, windows of 100 s; demand 8 > quota 4 whenever
    # a tenant is active, so both denominators agree here
    jobs = JobSet.from_arrays([0, 0], [100, 100], gpus=[8, 8], tenant=["X", "Y"])
    run = simulate_fairness(jobs, get_policy("fifo", "cluster")(), tenant_loss_share=share,
                            cluster=ClusterSettings.of(nodes=1, gpus_per_node=8, fair_window_s=100))
    assert run.metrics["tenant_loss_share"] == share and run.metrics["tenant_window_s"] == 100.0
    # ρ_job: J1 800 / (min(8, 4)·100) = 2; J2 800 / (4·200) = 1 -> no sharing loss
    assert run.jobs["rho"].tolist() == pytest.approx([2.0, 1.0])
    assert run.metrics["sharing_loss_jobs"] == 0.0
    w = run.tenant_intervals.set_index(["tenant", "window"])
    # X: window 0 800/400 = 2; window 1 no demand (not counted). Y: window 0 0/400 = 0 (loss); window 1 2
    assert w.loc[("X", 0), "rho"] == 2.0 and math.isnan(w.loc[("X", 1), "rho"])
    assert w.loc[("Y", 0), "rho"] == 0.0 and w.loc[("Y", 1), "rho"] == 2.0
    assert run.metrics["tenant_loss_intervals"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("share, loss", [("eq16", 1.0), ("eq8", 0.0)])
def test_quota_denominator_counts_demand_below_quota_as_loss(share, loss):
    # two tenants with quota 4 of 8 GPUs each run one 2-GPU job on [0, 100): each gets all it asks for
    # (eq8: 200 / min(2, 4)·100 = 1) but half its quota (eq16: 200 / 4·100 = 0.5)
    jobs = JobSet.from_arrays([0, 0], [100, 100], gpus=[2, 2], tenant=["X", "Y"])
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(), tenant_loss_share=share,
                            cluster=ClusterSettings.of(nodes=1, gpus_per_node=8, fair_window_s=100))
    assert run.metrics["tenant_loss_intervals"] == loss
    assert run.tenant_intervals["rho"].tolist() == pytest.approx([0.5, 0.5] if share == "eq16" else [1.0, 1.0])


def test_overhead_is_cold_start_over_average_jct():
    # one GPU, two tenants, one 300 s job each, lease 100, cold start 20 (ASTRAEA alternates them)
    jobs = JobSet.from_arrays([0, 0], [300, 300], tenant=["a", "b"])
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(),
                            cluster=ClusterSettings.of(nodes=1, gpus_per_node=1, lease_s=100, cold_start_s=20))
    t = run.jobs
    # a: 0-100; b: 100-200 (first start: no cold start); then every resume pays 20 s
    assert t["overhead_s"].sum() == pytest.approx(20.0 * (run.metrics["preemptions"] - 0))
    assert (t["completion_time"].max()) == pytest.approx(600 + t["overhead_s"].sum())  # one GPU, always busy
    assert run.metrics["utilisation"] == pytest.approx(1.0)
    assert run.metrics["overhead_pct"] == pytest.approx(100 * t["overhead_s"].mean() / t["jct"].mean())


@pytest.mark.parametrize("rho_from, rho", [("tick", 1.0), ("submit", 100 / 105)])
def test_job_rho_counts_from_the_tick_or_the_submit(rho_from, rho):
    # a 1-GPU, 100 s job submitted at 5 on an idle 8-GPU node is seen (and started) at the 10 s tick
    jobs = JobSet.from_arrays([0, 5], [1, 100], job_id=["a", "b"])
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(),
                            cluster=ClusterSettings.of(nodes=1, gpus_per_node=8, rho_from=rho_from))
    b = run.jobs.set_index("job_id").loc["b"]
    assert b["start_time"] == 10 and b["completion_time"] == 110 and b["rho"] == pytest.approx(rho)


# Floors (docs/fairness.md): the ideal schedule of three jobs on 1 × 8 GPUs, tenants X and Y with
# quota 4 each, 10 s ticks, 100 s windows. a (X, 2 GPUs) submitted 0, runs 0-100; b (X, 2 GPUs)
# submitted 5, seen and started at the 10 s tick, runs 10-60; c (Y, 4 GPUs) submitted 95, runs 100-130.
# Ideal makespan 130: windows [0, 100) and [100, 130).
# ρ_job (eq16 ledger, job share min(d, 4 / active jobs of the tenant)):
#   a: fair 2·100 = 200 = attained either way; b from submit: fair 2·55 = 110, attained 100 -> 0.91;
#   c from submit: fair 4·35 = 140, attained 120 -> 0.86; from the tick both are 1.
# windows (attained / fair): X0 300 / eq16 400, / eq8 ∫min(D, 4) = 310 from submit (b's demand from 5),
#   300 from the tick; Y0 has demand only from submit (c at 95): 0 / 400 or 0 / 20; Y1 120 / 120.
FLOOR_JOBS = JobSet.from_arrays([0, 5, 95], [100, 50, 30], gpus=[2, 2, 4], tenant=["X", "X", "Y"], job_id=list("abc"))
FLOORS = [("submit", "eq16", 2 / 3, 2 / 3), ("submit", "eq8", 2 / 3, 2 / 3),
          ("tick", "eq16", 0.0, 1 / 2), ("tick", "eq8", 0.0, 0.0)]


@pytest.mark.parametrize("rho_from, share, sharing, tenant", FLOORS)
def test_ideal_schedule_floor_by_hand(rho_from, share, sharing, tenant):
    cluster = ClusterSettings.of(nodes=1, gpus_per_node=8, fair_window_s=100, rho_from=rho_from)
    floor = ideal_fairness(FLOOR_JOBS, tenant_loss_share=share, cluster=cluster)
    assert floor == pytest.approx({"sharing_loss_jobs": sharing, "tenant_loss_intervals": tenant})


@pytest.mark.parametrize("rho_from, share, sharing, tenant", FLOORS)
def test_an_uncontended_run_scores_exactly_its_floor(rho_from, share, sharing, tenant):
    # the three jobs never need more than 8 GPUs at once: fifo runs the ideal schedule itself
    cluster = ClusterSettings.of(nodes=1, gpus_per_node=8, fair_window_s=100, rho_from=rho_from)
    run = simulate_fairness(FLOOR_JOBS, get_policy("fifo", "cluster")(), tenant_loss_share=share, cluster=cluster)
    assert run.jobs["start_time"].tolist() == [0, 10, 100] and run.metrics["preemptions"] == 0
    assert run.jobs.set_index("job_id")["rho"].to_dict() == pytest.approx(
        {"a": 1.0, "b": 1.0 if rho_from == "tick" else 100 / 110, "c": 1.0 if rho_from == "tick" else 120 / 140})
    assert {k: run.metrics[k] for k in ("sharing_loss_jobs", "tenant_loss_intervals")} == pytest.approx(
        {"sharing_loss_jobs": sharing, "tenant_loss_intervals": tenant})


def test_ideal_schedule_ignores_capacity():
    # two 8-GPU jobs at 0 on one 8-GPU node: the ideal runs both at once (a real run cannot), so
    # each job's ρ is 1 and the floor is 0, while fifo makes the second wait (test_one_tenant_two_gangs)
    jobs = JobSet.from_arrays([0, 0], [100, 100], gpus=[8, 8])
    cluster = ClusterSettings.of(nodes=1, gpus_per_node=8)
    assert ideal_fairness(jobs, cluster=cluster) == {"sharing_loss_jobs": 0.0, "tenant_loss_intervals": 0.0}
    assert simulate_fairness(jobs, get_policy("fifo", "cluster")(), cluster=cluster).metrics["sharing_loss_jobs"] == 0.5
