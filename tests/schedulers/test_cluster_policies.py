"""Every cluster policy on the cluster simulator: invariants on a random workload, small exact cases."""

import numpy as np
import pytest

from schedulers.cluster.base import CLUSTER_KEYWORDS, ClusterPolicy
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import PolicyError, builtin_classes, get_policy

CLUSTER_POLICIES = [cls.name for cls in builtin_classes("cluster")]
CLUSTER = ClusterSettings.of(nodes=3, gpus_per_node=8, lease_s=300, interval_s=10, cold_start_s=30, check=True)


def _workload(seed=3, n=60):
    rng = np.random.default_rng(seed)
    size = rng.integers(20, 3000, n).astype(float)
    return JobSet.from_arrays(
        np.sort(rng.integers(0, 5000, n)).astype(float), size,
        predicted=size * np.exp(rng.normal(0, 0.8, n)),
        gpus=rng.choice([1, 1, 2, 4, 8, 12], n), tenant=rng.choice(["a", "b", "c"], n),
    )


def _node_use_never_exceeds_capacity(allocations, capacities) -> int:
    """Sweep each node's executed stretches (ends before starts at one instant): the GPUs in use never
    exceed the node's; returns the number of stretches read."""
    events = []
    for row in allocations.itertuples():
        parts = [tuple(map(int, part.split(":"))) for part in row.nodes.split(",")]
        assert sum(k for _, k in parts) == row.gpus  # gang: all its GPUs, never part of them
        for node, k in parts:
            events += [(row.start, 1, node, k), (row.end, 0, node, -k)]
    used = [0] * len(capacities)
    for _, _, node, k in sorted(events):
        used[node] += k
        assert 0 <= used[node] <= capacities[node]
    return len(allocations)


@pytest.mark.parametrize("name", CLUSTER_POLICIES)
def test_invariants_and_gpu_seconds(name):
    # CLUSTER turns the rule checks on: after every event each node's free GPUs are its capacity less its
    # running jobs' (a job progresses only on its GPUs), every choice is a candidate placed once, and a
    # work-conserving policy leaves no waiting job that fits
    jobs = _workload()
    run = simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=CLUSTER)
    t = run.jobs
    assert np.isfinite(t["completion_time"]).all()
    assert _node_use_never_exceeds_capacity(run.allocations, CLUSTER.capacities) > 50
    # GPU-seconds = gpus × run time; run time = work + time spent cold-starting (≤ 30 s per resume)
    assert t["gpu_seconds"].to_numpy() == pytest.approx((jobs.gpus * (jobs.size + t["overhead_s"])).to_numpy())
    assert (t["overhead_s"] <= (t["preemptions"] + t["migrations"]) * 30.0 + 1e-9).all()
    if not get_policy(name, "cluster").preemptive:  # never preempts
        assert t["preemptions"].sum() == 0 and t["overhead_s"].sum() == 0
    else:
        assert t["preemptions"].sum() > 0


@pytest.mark.parametrize("key", CLUSTER_KEYWORDS)
def test_a_policy_given_a_cluster_setting_is_refused_naming_it(key):
    """The cluster is the simulator's (ClusterSettings): every cluster policy, a plugin whose
    constructor takes any keyword too, refuses a cluster setting in one line naming it, before its
    own constructor runs."""
    built = []

    class Plugin(ClusterPolicy):
        name = "test-any-keyword"

        def __init__(self, **settings):
            built.append(settings)

    for cls in [*builtin_classes("cluster"), Plugin]:
        with pytest.raises(TypeError) as info:
            cls(**{key: 1})
        given = "cluster=ClusterSettings(...)" if key == "cluster" else f"cluster=ClusterSettings.of({key}=...)"
        assert str(info.value) == (f"policy '{cls.name}': '{key}' is a setting of the cluster, not of a policy: "
                                   f"pass it to the simulator instead ({given})")
    assert built == []
    Plugin(band=1)  # its own settings reach it
    assert built == [{"band": 1}]


def test_the_cluster_is_given_to_the_simulator():
    # one 8-GPU node: two 8-GPU jobs run one after the other; on the default cluster (8 × 8 GPUs) together
    jobs = JobSet.from_arrays([0, 0], [100.0, 100.0], gpus=[8, 8])
    one = simulate_fairness(jobs, get_policy("fifo", "cluster")(), cluster=ClusterSettings.of(nodes=1))
    default = simulate_fairness(jobs, get_policy("fifo", "cluster")())
    assert one.jobs["start_time"].tolist() == [0.0, 100.0] and default.jobs["start_time"].tolist() == [0.0, 0.0]
    assert (one.metrics["utilisation"], default.metrics["utilisation"]) == (1.0, 16 / 64)


def test_registry_is_kind_scoped():
    assert {"fifo", "astraea", "easy-p"} <= set(CLUSTER_POLICIES)
    assert get_policy("fifo").kind == "single"  # the single-machine fifo keeps its name
    assert get_policy("fifo", "cluster").kind == "cluster"
    assert get_policy("astraea").kind == "cluster"
    with pytest.raises(KeyError):
        get_policy("astraea", "single")


def test_predictive_policy_refused_without_predictions():
    jobs = JobSet.from_arrays([0], [10.0])
    with pytest.raises(PolicyError, match="predicted"):
        simulate_fairness(jobs, get_policy("astraea-p", "cluster")())
    with pytest.raises(PolicyError, match="needs 16 GPUs"):
        simulate_fairness(JobSet.from_arrays([0], [10.0], gpus=[16]), get_policy("astraea", "cluster")(),
                          cluster=ClusterSettings.of(nodes=1))


def test_fifo_blocks_head_of_line():
    # one 8-GPU node: J1 (4 GPUs, 100 s) at 0, J2 (8 GPUs) at 1, J3 (1 GPU) at 2
    jobs = JobSet.from_arrays([0, 1, 2], [100, 100, 100], gpus=[4, 8, 1])
    run = simulate_fairness(jobs, get_policy("fifo", "cluster")(), cluster=ClusterSettings.of(nodes=1, gpus_per_node=8))
    assert run.jobs["start_time"].tolist() == [0, 100, 200]  # J3 waits behind J2
    # ASTRAEA skips what cannot be placed: J3 starts at the 10 s tick beside J1, J2 when both end
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(), cluster=ClusterSettings.of(nodes=1, gpus_per_node=8))
    assert run.jobs["start_time"].tolist() == [0, 110, 10]


def test_cold_start_on_resume_renewal_is_free():
    # one 1-GPU node, lease 100, cold start 20. Tenants a, b, one 300 s job each at 0.
    jobs = JobSet.from_arrays([0, 0], [300, 300], tenant=["a", "b"])
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(),
                            cluster=ClusterSettings.of(nodes=1, gpus_per_node=1, lease_s=100, cold_start_s=20))
    # 0-100 a; 100-200 b (first start, no cold start); 200-300 a resumes: 20 s cold + 80 s work ...
    t = run.jobs
    assert t["start_time"].tolist() == [0, 100]
    assert t["preemptions"].sum() >= 2
    assert t["run_time"].tolist() == pytest.approx((300 + t["overhead_s"]).tolist())
    assert run.metrics["overhead_pct"] == pytest.approx(100 * t["overhead_s"].mean() / t["jct"].mean())


ONE_GPU = ClusterSettings.of(nodes=1, gpus_per_node=1, lease_s=100, cold_start_s=0)


def test_astraea_p_helps_with_good_predictions_and_hurts_with_bad_ones():
    # one GPU, one tenant, lease 100: L (1000 s) submitted just before S (50 s)
    def run(name, p_hat):
        jobs = JobSet.from_arrays([0, 0], [1000, 50], predicted=p_hat, job_id=["L", "S"])
        return simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=ONE_GPU)

    plain = run("astraea", [1000, 50])
    good = run("astraea-p", [1000, 50])
    # astraea: L 0-100, S (new-job bonus) 100-150, L 150-1050: JCTs 1050, 150
    assert plain.jobs["completion_time"].tolist() == [1050, 150]
    # astraea-p: S first (shorter p̂): S 0-50, L 50-1050
    assert good.jobs["completion_time"].tolist() == [1050, 50]
    assert good.metrics["avg_jct"] < plain.metrics["avg_jct"]
    # bad p̂ (S predicted long): with S submitted first, plain astraea runs S first, astraea-p does not
    def run_s_first(name, p_hat, **settings):
        jobs = JobSet.from_arrays([0, 0], [50, 1000], predicted=p_hat, job_id=["S", "T"])
        return simulate_fairness(jobs, get_policy(name, "cluster")(**settings), cluster=ONE_GPU)

    plain = run_s_first("astraea", [5000, 40])
    bad = run_s_first("astraea-p", [5000, 40], revision="none")
    assert plain.jobs["completion_time"].tolist() == [50, 1050]
    assert bad.jobs["completion_time"].tolist() == [150, 1050]  # T 0-100, S 100-150, T 150-1050
    assert bad.metrics["avg_jct"] > plain.metrics["avg_jct"]
    # with the default revision (double) T, 100 s received at the round at 100, is revised 40 → 160:
    # 60 s left, kept; at 200 revised to 320, 120 s left > the lease: S 200-250, T 250-1050
    assert run_s_first("astraea-p", [5000, 40]).jobs["completion_time"].tolist() == [250, 1050]


def test_eq16_lets_a_bursting_tenant_catch_up_eq8_does_not():
    # 8 GPUs, quotas 4 + 4; x has eight 1-GPU jobs from 0, y eight 1-GPU jobs from 1000; 4000 s each
    sub = [0.0] * 8 + [1000.0] * 8
    jobs = JobSet.from_arrays(sub, [4000.0] * 16, tenant=["x"] * 8 + ["y"] * 8)

    def y_gpu_s(mode):
        run = simulate_fairness(jobs, get_policy("astraea", "cluster")(),
                                cluster=ClusterSettings.of(nodes=1, gpus_per_node=8, lease_s=100, cold_start_s=0,
                                                           fair_share=mode, fair_window_s=100))
        win = run.tenant_intervals
        y = win[win.tenant == "y"].set_index("window")["attained_gpu_s"]
        return y[10], y[11], y.loc[10:19].sum()

    # round at 1000, eq16: ρ_x = 8000/(4·1000) = 2, ρ_y = 0/4000 = 0; each y pick pre-charges 100, and
    # even 8 picks leave ρ_y = 800/4000 = 0.2 < 2: y takes all 8 GPUs, and keeps them for the whole
    # [1000, 2000) window (ρ_y = a_y/(4t) stays below ρ_x = 8000/(4t) until a_y = 8000).
    assert y_gpu_s("eq16") == pytest.approx((800.0, 800.0, 8000.0))
    # eq8: y's fair share is 0 at 1000 (no past demand), so one pre-charged pick makes ρ_y infinite and
    # x takes the other 7 GPUs (ρ_x = 8700/4000 < ∞): y runs 1 GPU on [1000, 1100). At 1100:
    # ρ_y = 100/400 = 0.25, ρ_x = 8700/4400 = 1.977; y picks while (100 + 100k)/400 <= 1.977, i.e. 7
    # jobs, then x (tie-free) takes the last GPU: y runs 7 GPUs on [1100, 1200).
    eq8 = y_gpu_s("eq8")
    assert eq8[:2] == pytest.approx((100.0, 700.0))
    assert eq8[2] < 0.7 * 8000.0  # no pay-back of the lent quota
