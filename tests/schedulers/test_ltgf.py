"""LTGF ledgers against hand computation: job cap per instant, tenant eq8 vs eq16, windows."""

import math

import pytest

from schedulers.cluster.ltgf import LTGF


def test_job_fair_share_capped_at_demand_per_instant():
    # one tenant, M = 8, jobs A (1 GPU) and B (8 GPUs) active from 0.
    L = LTGF(gpus=[1, 8], tenant=[0, 0], weight=[1, 1], n_tenants=1, total_gpus=8)
    L.arrive(0, 0.0)
    L.arrive(1, 0.0)
    L.hold(0, 0.0)
    # [0,100): c = 8/2 = 4 GPUs per job: A's share min(1, 4) = 1, B's min(8, 4) = 4 (A's unused 3 are
    # not handed to B: the paper's min without water-filling)
    assert L.job_fair_share(0, 50.0) == pytest.approx(50.0)
    assert L.job_fair_share(1, 50.0) == pytest.approx(200.0)
    L.complete(0, 100.0)
    L.hold(1, 100.0)
    # [100,200): B alone, share min(8, 8) = 8
    assert L.job_rho(0, 200.0) == pytest.approx(100.0 / 100.0)
    assert L.job_attained(1, 200.0) == pytest.approx(800.0)
    assert L.job_fair_share(1, 200.0) == pytest.approx(4 * 100 + 8 * 100)
    assert L.job_rho(1, 200.0) == pytest.approx(800 / 1200)
    assert L.tenant_rho(0, 200.0) == pytest.approx((100 + 800) / (8 * 200))


def test_weights_inside_a_tenant():
    # two 8-GPU jobs with weights 3 and 1 on M = 8: shares 6 and 2 GPUs per second
    L = LTGF(gpus=[8, 8], tenant=[0, 0], weight=[3, 1], n_tenants=1, total_gpus=8)
    L.arrive(0, 0.0)
    L.arrive(1, 0.0)
    assert L.job_fair_share(0, 10.0) == pytest.approx(60.0)
    assert L.job_fair_share(1, 10.0) == pytest.approx(20.0)


def _idle_then_burst(mode: str) -> LTGF:
    """M = 8, tenants X, Y with quota 4 each. X runs an 8-GPU job on [0, 1000); Y is idle, then
    bursts with two 4-GPU jobs that hold all 8 GPUs on [1000, 2000)."""
    L = LTGF(gpus=[8, 4, 4], tenant=[0, 1, 1], weight=[1, 1, 1], n_tenants=2, total_gpus=8,
             fair_share=mode, window_s=1000.0)
    L.arrive(0, 0.0)
    L.hold(0, 0.0)
    L.complete(0, 1000.0)
    for j in (1, 2):
        L.arrive(j, 1000.0)
        L.hold(j, 1000.0)
    for j in (1, 2):
        L.complete(j, 2000.0)
    return L


def test_eq16_credits_the_idle_tenant_eq8_does_not():
    e16, e8 = _idle_then_burst("eq16"), _idle_then_burst("eq8")
    # at t = 1000: X used 8000 GPU·s of a fair 4000 either way; Y has 0 of 4000 (eq16) / of 0 (eq8)
    assert e16.quota == [4.0, 4.0]
    # at t = 2000:
    #   eq16: fair = quota·t = 8000 for both -> X 8000/8000 = 1, Y 8000/8000 = 1 (burst paid back)
    #   eq8:  fair = ∫min(D, Q) = 4·1000 for both -> X 2, Y 2 (Y's burst looks like over-service)
    assert e16.tenant_rho(0, 2000.0) == pytest.approx(1.0)
    assert e16.tenant_rho(1, 2000.0) == pytest.approx(1.0)
    assert e8.tenant_rho(0, 2000.0) == pytest.approx(2.0)
    assert e8.tenant_rho(1, 2000.0) == pytest.approx(2.0)
    # job level (inside Y): c = FS_Y / 2; eq16: 4/2 = 2 per job -> 2000 fair, 4000 attained -> ρ 2
    assert e16.job_rho(1, 2000.0) == pytest.approx(2.0)
    assert e8.job_rho(1, 2000.0) == pytest.approx(2.0)  # eq8: min(D=8, Q=4) = 4 as well while bursting


def test_eq8_and_eq16_differ_when_demand_is_below_quota():
    # one tenant with quota 8 and a single 2-GPU job: eq8 share min(2, 8) = 2, eq16 share 8
    for mode, fair in (("eq16", 8 * 100.0), ("eq8", 2 * 100.0)):
        L = LTGF(gpus=[2], tenant=[0], weight=[1], n_tenants=1, total_gpus=8, fair_share=mode)
        L.arrive(0, 0.0)
        L.hold(0, 0.0)
        assert L.tenant_fair_share(0, 100.0) == pytest.approx(fair)
        assert L.job_fair_share(0, 100.0) == pytest.approx(200.0)  # capped at the job's demand both ways


def test_windows_carry_both_denominators():
    L = _idle_then_burst("eq16")
    rows = {(k, w): (a, f8, f16) for k, w, _, a, f8, f16 in zip(*L.window_table(2000.0).values())}
    # X: 8 GPUs on [0, 1000): eq8 share min(8, 4) = 4 -> 4000; eq16 quota 4 x 1000 = 4000
    assert rows[(0, 0)] == pytest.approx((8000.0, 4000.0, 4000.0))
    assert rows[(1, 0)] == pytest.approx((0.0, 0.0, 4000.0))  # Y idle: no demand (eq8 0), quota still grows
    assert rows[(1, 1)] == pytest.approx((8000.0, 4000.0, 4000.0))
    assert rows[(0, 1)] == pytest.approx((0.0, 0.0, 4000.0))


def test_last_window_is_cut_at_the_end_of_the_run():
    L = _idle_then_burst("eq16")
    rows = {(k, w): f16 for k, w, _, _, _, f16 in zip(*L.window_table(1500.0).values())}
    assert rows[(0, 1)] == pytest.approx(4 * 500.0)


def test_tenant_weights_give_quotas():
    L = LTGF(gpus=[1], tenant=[0], weight=[1], n_tenants=3, total_gpus=12, tenant_weights=[1, 2, 3])
    assert L.quota == pytest.approx([2.0, 4.0, 6.0])
