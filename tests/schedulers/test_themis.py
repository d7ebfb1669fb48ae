"""Themis: finish-time fairness with observed contention, the knob f and the lease auction, by hand."""

import math

import pytest

from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

# one node of 2 GPUs, lease 100 s, ticks 10 s, no cold start. H (2 GPUs, 1000 s) runs from 0;
# X (2 GPUs, 50 s) arrives at 10; Y and Z (1 GPU, 30 s each) at 90. p̂ = p.
# Active jobs N(t): 1 on [0, 10), 2 on [10, 90), 4 from 90, so at the round t = 100:
#   N̄_H = (10 + 160 + 40) / 100 = 2.1,  T_id = 1000 · 2 / (2 / 2.1) = 2100, T_sh = 100 + 900  → ρ 0.476
#   N̄_X = (160 + 40) / 90 = 2.222,      T_id = 50 · 2.222 = 111.1,         T_sh = 90 + 50    → ρ 1.26
#   N̄_Y = N̄_Z = 4,                      T_id = 30 · 1 / (2 / 4) = 60,      T_sh = 10 + 30    → ρ 0.667
JOBS = JobSet.from_arrays([0, 10, 90, 90], [1000.0, 50.0, 30.0, 30.0], predicted=[1000.0, 50.0, 30.0, 30.0],
                          gpus=[2, 2, 1, 1], tenant=["a", "a", "a", "a"])
CLUSTER = ClusterSettings.of(nodes=1, gpus_per_node=2, lease_s=100, interval_s=10, cold_start_s=0)


def test_f_08_only_the_worst_job_bids():
    # ⌈0.2 · 4⌉ = 1 bidder: X (worst ρ) wins the node for [100, 150]; H is preempted. At 150 the
    # worst of H, Y, Z is Y (ρ = 90 / 60 = 1.5, tie with Z by index): Y wins, Z gets the leftover GPU,
    # both run [150, 180]; H resumes at 180 and finishes at 180 + 900.
    run = simulate_fairness(JOBS, get_policy("themis", "cluster")(f=0.8), cluster=CLUSTER)
    assert run.jobs["completion_time"].tolist() == [1080.0, 150.0, 180.0, 180.0]
    assert run.jobs["preemptions"].tolist() == [1, 0, 0, 0]


def test_f_0_everyone_bids_and_the_auction_prefers_the_largest_gain_per_gpu():
    # all four bid; log gain per GPU log(1 + lease / T_sh) / d: H log(1.1)/2 = 0.048,
    # X log(1 + 100/140)/2 = 0.270, Y = Z = log(1 + 100/40) = 1.253 → Y and Z win [100, 130].
    # At 130 X (log(1 + 100/170)/2 = 0.231) beats H (0.046): X [130, 180], H [180, 1080].
    assert math.log1p(100 / 40) > math.log1p(100 / 140) / 2 > math.log1p(100 / 1000) / 2
    run = simulate_fairness(JOBS, get_policy("themis", "cluster")(f=0.0), cluster=CLUSTER)
    assert run.jobs["completion_time"].tolist() == [1080.0, 180.0, 130.0, 130.0]


def test_rho_uses_observed_contention(monkeypatch):
    """The kernel's ρ of every candidate at the round t = 100 (recorded from the Python run)."""
    from schedulers.cluster.policies import themis

    seen = {}
    real = themis.themis_rhos

    def recording(s, p, cand, now, n_now, neg_rho, t_sh):
        real(s, p, cand, now, n_now, neg_rho, t_sh)
        if now == 100.0:
            for j, v in zip(cand, neg_rho):
                seen.setdefault(int(j), -v)

    monkeypatch.setattr(themis, "themis_rhos", recording)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    simulate_fairness(JOBS, get_policy("themis", "cluster")(), cluster=CLUSTER)
    assert sorted(seen) == [0, 1, 2, 3]
    assert seen[0] == pytest.approx(1000 / 2100)
    assert seen[1] == pytest.approx(140 / (50 * 200 / 90))
    assert seen[2] == pytest.approx(40 / 60) and seen[3] == pytest.approx(40 / 60)


def test_f_must_be_below_one():
    with pytest.raises(ValueError, match="f must be"):
        get_policy("themis", "cluster")(f=1.0)
