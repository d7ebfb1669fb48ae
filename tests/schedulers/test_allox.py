"""Allox: the min-cost matching and the fairness knob on hand-computed examples."""

import pytest

from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy


def _allox(**kw):
    return get_policy("allox", "cluster")(**kw)


ONE_GPU = ClusterSettings.of(nodes=1, gpus_per_node=1)


def test_matching_is_bruno_coffman_sethi_on_one_machine():
    # one 1-GPU node, three 1-GPU jobs at t = 0 with p̂ = 30, 10, 20 (= p).
    # Positions k = 1 (last) .. 3 (first), cost k·p̂: the optimum gives k = 3 to 10, k = 2 to 20,
    # k = 1 to 30: cost 3·10 + 2·20 + 1·30 = 100 = ΣC of the schedule 10 | 20 | 30 (10 + 30 + 60).
    jobs = JobSet.from_arrays([0, 0, 0], [30.0, 10.0, 20.0], predicted=[30.0, 10.0, 20.0], gpus=[1, 1, 1],
                              tenant=["a", "a", "a"])
    run = simulate_fairness(jobs, _allox(), cluster=ONE_GPU)
    # the matching's ranks are the schedule: 10 first (k = 3), then 20 (k = 2), then 30 (k = 1)
    assert run.jobs["start_time"].tolist() == [30.0, 0.0, 10.0]
    assert run.jobs["completion_time"].tolist() == [60.0, 10.0, 30.0]
    assert run.jobs["completion_time"].sum() == 100.0


def test_matching_on_two_nodes_spreads_positions():
    # two 1-GPU nodes, p̂ = 1, 2, 3, 4 (all 1 GPU): multipliers {2, 2, 1, 1} go to the shortest two:
    # cost 2·1 + 2·2 + 3 + 4 = 13; jobs 1 and 2 start at 0, 3 and 4 follow on the node that frees.
    jobs = JobSet.from_arrays([0] * 4, [10.0, 20.0, 30.0, 40.0], predicted=[10.0, 20.0, 30.0, 40.0], gpus=[1] * 4,
                              tenant=["a"] * 4)
    run = simulate_fairness(jobs, _allox(), cluster=ClusterSettings.of(nodes=2, gpus_per_node=1))
    # schedule: node A 10 | 30, node B 20 | 40 → C = 10, 20, 40, 60 (ΣC = 130 = 10 × the matching cost 13)
    assert run.jobs["completion_time"].tolist() == [10.0, 20.0, 40.0, 60.0]


def test_fairness_knob_lets_the_least_progressed_tenant_go_first():
    # one 1-GPU node; x1 (tenant X, 100 s) runs from 0. At t = 10 arrive y1 (tenant Y, 50 s) and
    # x2 (tenant X, 10 s). At t = 100 X has attained 100 GPU·s against a fair 50 (quota 0.5 GPU each,
    # eq16): ρ_X = 2 > ρ_Y = 0. α = 0.5 → only ⌈0.5 · 2⌉ = 1 tenant, Y, enters the matching first:
    # y1 runs [100, 150], x2 [150, 160]. α = 1 → one matching over both: x2 (shorter) first,
    # x2 [100, 110], y1 [110, 160] (completions fall on 10 s scheduling ticks).
    jobs = JobSet.from_arrays([0, 10, 10], [100.0, 50.0, 10.0], predicted=[100.0, 50.0, 10.0], gpus=[1, 1, 1],
                              tenant=["X", "Y", "X"])
    fair = simulate_fairness(jobs, _allox(alpha=0.5), cluster=ONE_GPU).jobs
    fast = simulate_fairness(jobs, _allox(alpha=1.0), cluster=ONE_GPU).jobs
    assert fair["completion_time"].tolist() == [100.0, 150.0, 160.0]
    assert fast["completion_time"].tolist() == [100.0, 160.0, 110.0]


def test_allox_needs_predictions_and_a_valid_alpha():
    with pytest.raises(ValueError, match="alpha"):
        _allox(alpha=0.0)
    assert get_policy("allox", "cluster").needs_prediction and not get_policy("allox", "cluster").preemptive
