"""The ablations behind `benchmark reproduce astraea`'s "Why the ranking differs": each setting they
use moves its policy the way it should on a hand-made instance, the defaults are unchanged, and
the report's section is built from the ablation runs (not written in advance).

Hand-made instances run as Python (a few jobs); the settings are kernel parameters, so the compiled
loop runs the same source.
"""

from __future__ import annotations

import numpy as np
import pytest

from atlas_data.errors import InputError
from benchmark.commands import reproduce_astraea as ra
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.policies.themis import Themis
from schedulers.cluster.policies.yarn_cs import YarnCS
from schedulers.jobs import JobSet
from schedulers.policy import build_policy, get_policy, resolve_policy

ONE_NODE = dict(nodes=1, gpus_per_node=8, lease_s=900, interval_s=10, cold_start_s=0, check=True)


def _starts(run) -> dict[str, float]:
    return dict(zip(run.jobs["job_id"], run.jobs["start_time"]))


# ----- YARN-CS: max_capacity --------------------------------------------------------------------------------
def _borrower():
    """Tenants a and b, quota 4 GPUs each on one 8-GPU node; b is idle. a submits two 4-GPU jobs at 0
    and an 8-GPU gang (more than its quota) at 5,000 s."""
    return JobSet.from_arrays(np.array([0.0, 0.0, 5000.0, 20000.0]), np.array([3000.0, 3000.0, 1000.0, 100.0]),
                              gpus=[4, 4, 8, 1], tenant=["a", "a", "a", "b"], job_id=["a1", "a2", "a3", "b1"])


def test_yarn_cs_lends_idle_quota_up_to_its_max_capacity():
    lent = simulate_fairness(_borrower(), YarnCS(**ONE_NODE))
    hard = simulate_fairness(_borrower(), YarnCS(max_capacity=1, **ONE_NODE))
    # by default a2 runs at once on b's idle quota; with hard quotas it waits for a1 to finish
    assert _starts(lent)["a2"] == 0.0
    assert _starts(hard)["a2"] == 3000.0
    # a gang larger than the tenant's whole quota still starts, alone: when a runs nothing else
    assert _starts(lent)["a3"] == 5000.0 and _starts(hard)["a3"] == 6000.0
    assert hard.metrics["completed"] == 4 and hard.metrics["preemptions"] == 0
    # a cap of 1.5 quotas (6 GPUs) still keeps a2 (4 + 4 GPUs) waiting; 2 quotas let it borrow
    assert _starts(simulate_fairness(_borrower(), YarnCS(max_capacity=1.5, **ONE_NODE)))["a2"] == 3000.0
    assert _starts(simulate_fairness(_borrower(), YarnCS(max_capacity=2, **ONE_NODE)))["a2"] == 0.0
    # the sharing loss that costs: a's fair share is its quota, 2 GPUs per job while both are active;
    # lent, a2 gets 4 (ρ 2); hard, it waits for a1 (3,000 s), runs 3,000 s, a3 active from 5,000 s:
    # 12,000 / (2·3,000 + 4·2,000 + 2·1,000)
    rho = {name: run.jobs.set_index("job_id")["rho"] for name, run in (("lent", lent), ("hard", hard))}
    assert rho["lent"]["a2"] == pytest.approx(2.0) and rho["hard"]["a2"] == pytest.approx(0.75)


def test_yarn_cs_default_lends_without_limit():
    base = simulate_fairness(_borrower(), YarnCS(**ONE_NODE))
    same = simulate_fairness(_borrower(), YarnCS(max_capacity=float("inf"), **ONE_NODE))
    assert base.jobs.equals(same.jobs) and base.allocations.equals(same.allocations)
    assert YarnCS(**ONE_NODE).kernel_params().max_capacity == float("inf")


# ----- Themis: size_blind, reauction ----------------------------------------------------------------
def _short_behind_long():
    """One 8-GPU node. x (p̂ 100 s) runs from 0; long (p̂ 1,000 s) arrives at 10 s, short (p̂ 10 s) at
    50 s. When x ends (100 s) exact p̂ gives short ρ = (50 + 10)/10 = 6, long (90 + 1,000)/1,000 = 1.09."""
    return JobSet.from_arrays(np.array([0.0, 10.0, 50.0]), np.array([100.0, 1000.0, 10.0]),
                              np.array([100.0, 1000.0, 10.0]), gpus=[8, 8, 8], tenant=["t", "t", "t"],
                              job_id=["x", "long", "short"])


def test_themis_size_blind_loses_the_order_that_p_hat_gives():
    exact = _starts(simulate_fairness(_short_behind_long(), Themis(**ONE_NODE)))
    blind = _starts(simulate_fairness(_short_behind_long(), Themis(size_blind=True, **ONE_NODE)))
    assert exact["x"] == 0.0 and exact["short"] == 100.0 and exact["long"] == 110.0
    # one p̂ for every job (the median, 100 s): long has waited longer, so it goes first, and short
    # waits for the lease round at 900 s
    assert blind["x"] == 0.0 and blind["long"] == 100.0 and blind["short"] == 900.0


def _long_then_short():
    """One 8-GPU node: long (8 GPUs, 5,000 s) from 0; short (8 GPUs, 100 s) arrives at 300 s."""
    return JobSet.from_arrays(np.array([0.0, 300.0]), np.array([5000.0, 100.0]), np.array([5000.0, 100.0]),
                              gpus=[8, 8], tenant=["t", "u"], job_id=["long", "short"])


def test_themis_without_reauction_never_preempts():
    auction = simulate_fairness(_long_then_short(), Themis(**ONE_NODE))
    held = simulate_fairness(_long_then_short(), Themis(reauction=False, **ONE_NODE))
    # the lease round at 900 s gives the GPUs to short (ρ = (600 + 100)/100 = 7); without rounds it waits
    assert _starts(auction)["short"] == 900.0 and auction.metrics["preemptions"] == 1
    assert _starts(held)["short"] == 5000.0 and held.metrics["preemptions"] == 0


def test_themis_defaults_are_unchanged():
    policy = Themis(**ONE_NODE)
    assert policy.kernel_params() == (0.8, False) and policy.preemptive is True
    base = simulate_fairness(_short_behind_long(), policy)
    same = simulate_fairness(_short_behind_long(), Themis(f=0.8, size_blind=False, reauction=True, **ONE_NODE))
    assert base.jobs.equals(same.jobs) and base.allocations.equals(same.allocations)


@pytest.mark.parametrize("spec,problem", [("yarn-cs(max_capacity=0.5)", "a number >= 1"),
                                          ("yarn-cs(max_capacity=nan)", "a number >= 1"),
                                          ("themis(size_blind='yes')", "must be True or False"),
                                          ("themis(reauction=None)", "must be True or False")])
def test_a_setting_out_of_its_range_is_refused(spec, problem):
    cls = get_policy(resolve_policy(spec, "cluster"), "cluster")
    with pytest.raises(InputError, match=problem):
        build_policy(cls, **ONE_NODE)
