"""The two worked examples of the ASTRAEA paper (docs/fairness.md), on the real policy code."""

import pytest

from schedulers.cluster.nodes import Cluster
from schedulers.engine import Engine, View
from schedulers.cluster.metrics import simulate_fairness
from schedulers.jobs import JobSet
from schedulers.cluster.rounds import ClusterPolicy
from schedulers.policy import get_policy

# 6-GPU cluster: Job1 wants 6 GPUs, Job2 and Job3 3 GPUs; 40 min of work each; 10 min rounds
SIX = JobSet.from_arrays([0, 0, 0], [2400] * 3, gpus=[6, 3, 3], job_id=["1", "2", "3"])
SIX_KW = dict(nodes=1, gpus_per_node=6, lease_s=600, cold_start_s=0, interval_s=10)


class FinishTimeRotation(ClusterPolicy):
    """The paper's finish-time rotation: Job1 alone one round, Job2 + Job3 together the next."""

    name = "test-rotation"

    def select(self, view, candidates, cluster):
        turn = [0] if self.rounds % 2 == 0 else [1, 2]
        pick = [j for j in turn if j in candidates] or sorted(candidates)
        return [j for j in pick if self.try_place(cluster, j)]


class Snapshot:
    """Observer: each job's attained GPU·s at time `at` (exact: the allocation is constant on [t0, t1])."""

    def __init__(self, policy, at):
        self.policy, self.at, self.values = policy, at, None

    def on_interval(self, engine, t0, t1):
        if t0 < self.at <= t1:
            self.values = [self.policy.ltgf.job_attained(j, self.at) for j in range(engine.jobs.n)]


def _attained_at(policy, at):
    snap = Snapshot(policy, at)
    Engine(SIX, policy, machines=None, observers=[snap]).run()
    return snap.values


def test_six_gpu_finish_time_rotation_gives_60_30_30():
    policy = FinishTimeRotation(**SIX_KW)
    # rounds at 0 (the first placement happens at t = 0 before any round), 600, 1200, ...
    got = _attained_at(policy, 1200.0)
    # per 20 min: Job1 60 GPU·min, Job2 and Job3 30 GPU·min each
    assert [g / 60 for g in got] == pytest.approx([60.0, 30.0, 30.0])


def test_six_gpu_ltgf_gives_60_each_over_30_min():
    policy = get_policy("astraea", "cluster")(**SIX_KW)
    got = _attained_at(policy, 1800.0)
    assert [g / 60 for g in got] == pytest.approx([60.0, 60.0, 60.0])
    run = simulate_fairness(SIX, get_policy("astraea", "cluster")(**SIX_KW))
    # fair share per job: 6 GPUs / 3 jobs = 2 each while all three are active -> ρ = 1 for all
    assert run.jobs["rho"].tolist() == pytest.approx([1.0, 1.0, 1.0])
    assert run.metrics["sharing_loss_jobs"] == 0.0


class _Ledger:
    """The state of the paper's two-tenant worked round: ρ_A = 54,000/72,000, ρ_B = 72,000/72,000."""

    rho = {0: 0.50, 1: 0.80, 2: 0.40}  # A1, A2, B1

    def job_rho(self, j, t):
        return self.rho[j]

    def job_rhos(self, jobs, t):
        return [self.rho[j] for j in jobs]

    def tenant_attained(self, k, t):
        return (54_000.0, 72_000.0)[k]

    def tenant_fair_share(self, k, t):
        return 72_000.0


def test_sixteen_gpu_two_tenant_round():
    jobs = JobSet.from_arrays([0, 0, 0], [5000] * 3, gpus=[8, 4, 8], tenant=["A", "A", "B"], job_id=["A1", "A2", "B1"])
    policy = get_policy("astraea", "cluster")(nodes=2, gpus_per_node=8, lease_s=900)
    engine = Engine(jobs, policy, machines=None)
    view = View(engine, False)
    policy.reset(view)
    policy.started = [True, True, True]  # all have run before (their ρ are history)
    policy.ltgf = _Ledger()
    cluster = Cluster.homogeneous(2, 8)
    chosen = policy.select(view, [0, 1, 2], cluster)
    assert chosen == [0, 1]  # A1, then A2; B1 (8 GPUs) does not fit in the 4 left
    assert policy.plan[0] == ((0, 8),) and policy.plan[1] == ((1, 4),)
    # pre-charge demand × lease: (54,000 + 7,200)/72,000 = 0.85, then + 3,600 -> 0.90
    assert [(k, j) for k, j, _ in policy.last_picks] == [(0, 0), (0, 1)]
    assert [r for _, _, r in policy.last_picks] == pytest.approx([0.85, 0.90])
    assert cluster.free == [0, 4]
