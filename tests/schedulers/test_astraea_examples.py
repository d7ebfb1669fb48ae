"""The two worked examples of the ASTRAEA paper (docs/fairness.md), on the real policy code."""

import numpy as np
import pytest

from schedulers.cluster import events, kernels, ledgers, placement, simulator, state
from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

# 6-GPU cluster: Job1 wants 6 GPUs, Job2 and Job3 3 GPUs; 40 min of work each; 10 min rounds
SIX = JobSet.from_arrays([0, 0, 0], [2400] * 3, gpus=[6, 3, 3], job_id=["1", "2", "3"])
SIX_GPUS = ClusterSettings.of(nodes=1, gpus_per_node=6, lease_s=600, cold_start_s=0, interval_s=10)


class FinishTimeRotation(ClusterPolicy):
    """The paper's finish-time rotation: Job1 alone one round, Job2 + Job3 together the next (a
    plugin's Python rule)."""

    name = "test-rotation"

    def select(self, view, candidates, place):
        turn = [0] if view.rounds % 2 == 0 else [1, 2]
        pick = [j for j in turn if j in candidates] or sorted(candidates)
        return [j for j in pick if place(j)]


def _attained_at(policy, at):
    """Each job's attained GPU·s at time `at`, from the run's executed allocations."""
    run = simulate_fairness(SIX, policy, cluster=SIX_GPUS)
    alloc = run.allocations
    held = (np.minimum(alloc["end"], at) - alloc["start"]).clip(lower=0) * alloc["gpus"]
    per_job = held.groupby(alloc["job_id"]).sum()
    return [float(per_job.get(j, 0.0)) for j in SIX.job_id]


def test_six_gpu_finish_time_rotation_gives_60_30_30():
    policy = FinishTimeRotation()
    # rounds at 0 (the first placement happens at t = 0 before any round), 600, 1200, ...
    got = _attained_at(policy, 1200.0)
    # per 20 min: Job1 60 GPU·min, Job2 and Job3 30 GPU·min each
    assert [g / 60 for g in got] == pytest.approx([60.0, 30.0, 30.0])


def test_six_gpu_ltgf_gives_60_each_over_30_min():
    policy = get_policy("astraea", "cluster")()
    got = _attained_at(policy, 1800.0)
    assert [g / 60 for g in got] == pytest.approx([60.0, 60.0, 60.0])
    run = simulate_fairness(SIX, get_policy("astraea", "cluster")(), cluster=SIX_GPUS)
    # fair share per job: 6 GPUs / 3 jobs = 2 each while all three are active -> ρ = 1 for all
    assert run.jobs["rho"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert run.metrics["sharing_loss_jobs"] == 0.0


def test_sixteen_gpu_two_tenant_round():
    """The paper's two-tenant round on ASTRAEA's kernel: ledgers set to ρ_A = 54,000/72,000,
    ρ_B = 72,000/72,000 and ρ_job A1 0.50, A2 0.80, B1 0.40, every job waiting and run before."""
    jobs = JobSet.from_arrays([0, 0, 0], [5000] * 3, gpus=[8, 4, 8], tenant=["A", "A", "B"], job_id=["A1", "A2", "B1"])
    cluster = ClusterSettings.of(nodes=2, gpus_per_node=8, lease_s=900)
    args, _ = simulator.arguments(jobs, get_policy("astraea", "cluster")(), cluster=cluster)
    s = state.new_state(args.jobs, args.cluster, args.cfg)
    p = kernels.setup(s, args.params, args.jobs.size)
    now = 900.0
    for j in range(3):
        ledgers.ledger_arrive(s, j, 0.0)
        s.q.started[j] = True  # all have run before (their ρ are history)
        events.wait_add(s, p, j, 0.0)
    s.led.t_last[:] = now  # the tenants' ledgers are read as they are set here
    s.led.att[:] = [54_000.0, 72_000.0]
    s.led.fair[:] = [72_000.0, 72_000.0]
    s.led.G[:] = 1_000.0  # each job's fair GPU·s: 1,000 × weight 1
    s.led.job_base[:] = 0.0
    s.led.job_att[:] = [500.0, 800.0, 400.0]
    assert [ledgers.job_rho(s, j, now) for j in range(3)] == [0.5, 0.8, 0.4]
    placement.prepare_round(s)
    chosen = []
    kernels.select(s, p, True, now, chosen)
    # A first (0.75 < 1.0): its best job A1 (ρ 0.5), pre-charged (54,000 + 8 × 900)/72,000 = 0.85 < 1.0,
    # so A again: A2, pre-charged + 4 × 900 -> 0.90; B1 (8 GPUs) does not fit in the 4 left
    assert chosen == [0, 1]
    plans = [[(int(s.plan.plan_node[j, i]), int(s.plan.plan_k[j, i])) for i in range(s.plan.plan_len[j])] for j in chosen]
    assert plans == [[(0, 8)], [(1, 4)]]
    assert s.nodes.plan_free.tolist() == [0, 4]
