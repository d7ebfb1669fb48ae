"""The round mechanics (schedulers.cluster.events): a decision is executed exactly as decided.

Hand-checked cases first (the fragmentation case, the planning copy), then every policy on random
multi-tenant workloads in check mode, then an independent recomputation of every ρ from the executed
allocations that a run writes.
"""

import math

import numpy as np
import pandas as pd
import pytest

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import builtin_classes, get_policy, policy_names

ROUND_POLICIES = [cls.name for cls in builtin_classes("cluster") if cls.preemptive]  # the policies with lease rounds
TWO_NODES = ClusterSettings.of(nodes=2, gpus_per_node=8)
TWO_NODES_CHECKED = ClusterSettings.of(nodes=2, gpus_per_node=8, check=True)
LEASE_300 = ClusterSettings.of(nodes=2, gpus_per_node=8, lease_s=300, cold_start_s=30, check=True)


def _fragmented():
    """2 nodes x 8 GPUs. Tenant A: a1 and a2 (4 GPUs, long) on node 0, a3 (4 GPUs, long) on node 1,
    a2 ends at 50 s: A then holds 4 GPUs on each node. Tenant B submits one 8-GPU job at 150 s."""
    return JobSet.from_arrays(
        [0, 0, 0, 150], [20_000, 50, 20_000, 3_000], predicted=[20_000, 50, 20_000, 3_000],
        gpus=[4, 4, 4, 8], tenant=["A", "A", "A", "B"], job_id=["a1", "a2", "a3", "b"])


@pytest.mark.parametrize("name", ["astraea", "astraea-p", "gandiva-fair"])
def test_fragmentation_most_owed_tenant_starts_at_the_first_round(name):
    run = simulate_fairness(_fragmented(), get_policy(name, "cluster")(), cluster=TWO_NODES_CHECKED)
    jobs = run.jobs.set_index("job_id")
    # b cannot start at 150 (4 + 4 free GPUs on two nodes); the first round (900 s) plans b on a
    # whole node and moves one of A's jobs next to the other: b starts at 900, not thousands of s later
    assert jobs.loc["b", "start_time"] == 900.0
    assert jobs.loc["b", "completion_time"] == 3_900.0
    assert run.metrics["dropped_choices"] == 0
    assert run.metrics["migrations"] == 1 and jobs["migrations"].sum() == 1
    alloc = run.allocations
    moved = alloc[alloc["kind"] == "cold-start"]
    assert len(moved) == 1 and moved["start"].iloc[0] == 900.0 and moved["end"].iloc[0] == 960.0
    b = alloc[alloc["job_id"] == "b"]
    assert b[["start", "end", "gpus", "kind"]].values.tolist() == [[900.0, 3_900.0, 8, "run"]]


class _Planned(ClusterPolicy):
    """Test policy: r0 and r1 start at t = 0; nothing else is started at a fill; a round places the
    candidates in a fixed rank of their job_id."""

    name = "test-planned"
    RANK = {"n4": 0, "n8a": 1, "n8b": 2, "r0": 3, "r1": 4}

    def select(self, view, candidates, place):
        ids = view.jobs.job_id
        if not view.at_round:
            return [j for j in candidates if ids[j] in ("r0", "r1") and place(j)]
        return [j for j in sorted(candidates, key=lambda j: self.RANK[ids[j]]) if place(j)]


def test_round_plan_prefers_gpus_no_running_job_holds():
    # 3 nodes × 8: r0 (4 GPUs) runs on node 0, r1 (8) on node 1, node 2 is free. At the round at 300
    # the new jobs rank first: n4 takes node 0's free half (best fit among GPUs no running job holds),
    # n8a the free node 2, n8b — nothing unclaimed is left — node 1, displacing r1; r0 is renewed in
    # place and r1 no longer fits: preempted.
    jobs = JobSet.from_arrays([0, 0, 10, 10, 10], [5000, 5000, 1000, 1000, 1000], gpus=[4, 8, 4, 8, 8],
                              job_id=["r0", "r1", "n4", "n8a", "n8b"])
    run = simulate_fairness(jobs, _Planned(), cluster=ClusterSettings.of(nodes=3, gpus_per_node=8, lease_s=300,
                                                                         cold_start_s=30))
    first = run.allocations.groupby("job_id").first()
    assert first.loc["r0", ["start", "end", "nodes"]].tolist() == [0.0, 5000.0, "0:4"]  # never moved
    assert first.loc["r1", ["start", "end", "nodes"]].tolist() == [0.0, 300.0, "1:8"]  # preempted at the round
    assert first.loc[["n4", "n8a", "n8b"], "nodes"].tolist() == ["0:4", "2:8", "1:8"]
    assert (first.loc[["n4", "n8a", "n8b"], "start"] == 300.0).all()
    assert run.metrics["migrations"] == 0 and run.metrics["dropped_choices"] == 0


class _Ranked(ClusterPolicy):
    """Test policy: candidates by a fixed rank of their job_id."""

    name = "test-ranked"
    RANK = {"n": 0, "r1": 1, "r3": 2}

    def order(self, view, candidates):
        return sorted(candidates, key=lambda j: self.RANK[view.jobs.job_id[j]])


def test_compaction_keeps_a_chosen_running_job_in_place():
    # r1 and r3 (8 GPUs each) run on node 0 and node 1; n (4 GPUs) arrives at 100. The round at 300
    # ranks n, r1, r3: n is planned first, on node 0 (r1's node: no GPU is unclaimed), which would
    # move r1 to node 1 and drop r3. Compacted: r1 stays on node 0, n takes half of node 1, r3 is
    # preempted — one preemption, no migration, and every choice starts at 300.
    jobs = JobSet.from_arrays([0, 0, 100], [5000, 5000, 1000], gpus=[8, 8, 4], job_id=["r1", "r3", "n"])
    run = simulate_fairness(jobs, _Ranked(), cluster=LEASE_300)
    t = run.jobs.set_index("job_id")
    assert t.loc["n", "start_time"] == 300.0 and t.loc["n", "completion_time"] == 1300.0
    assert run.metrics["migrations"] == 0
    first = run.allocations.groupby("job_id").first()
    assert first.loc["r1", ["start", "end", "nodes"]].tolist() == [0.0, 5000.0, "0:8"]  # never moved
    assert first.loc["n", "nodes"] == "1:4"
    assert first.loc["r3", ["start", "end"]].tolist() == [0.0, 300.0] and t.loc["r3", "preemptions"] >= 1


def _multi_tenant(seed, n=80):
    rng = np.random.default_rng(seed)
    size = rng.integers(30, 4000, n).astype(float)
    return JobSet.from_arrays(
        np.sort(rng.integers(0, 6000, n)).astype(float), size, predicted=size * np.exp(rng.normal(0, 0.8, n)),
        gpus=rng.choice([1, 2, 3, 4, 6, 8, 12], n), tenant=rng.choice(["t0", "t1", "t2", "t3"], n))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", policy_names("cluster"))
def test_every_choice_is_executed_and_no_gpu_idles_while_a_gang_fits(name, seed):
    # check mode raises inside the run when a chosen job does not hold its planned GPUs after a round,
    # or (for work-conserving policies) when a waiting job fits on the free GPUs after a decision
    policy = get_policy(name, "cluster")()
    run = simulate_fairness(_multi_tenant(seed), policy, cluster=LEASE_300)
    assert run.metrics["dropped_choices"] == 0
    assert run.metrics["completed"] == 80
    if policy.work_conserving:
        assert run.metrics["work_conservation_gaps"] == 0


def test_head_of_line_blocking_is_counted_as_a_gap():
    # fifo: an 8-GPU head waits for a busy node while a 1-GPU job behind it would fit
    jobs = JobSet.from_arrays([0, 10, 20], [1000, 100, 100], gpus=[4, 8, 1])
    run = simulate_fairness(jobs, get_policy("fifo", "cluster")(), cluster=ClusterSettings.of(nodes=1, gpus_per_node=8))
    assert run.metrics["work_conservation_gaps"] > 0
    assert run.jobs.set_index("job_id")["start_time"].tolist() == [0.0, 1000.0, 1100.0]  # behind the 8-GPU job


# ----- independent recomputation of the printed metrics from allocations.parquet ----------------------
def _fair_job_seconds(jobs: pd.DataFrame, quota: dict, j: int) -> float:
    """∫ min(d_j, Q_k · w_j / Σ_active w) over [submit_j, completion_j), Active = [submit, completion)."""
    me = jobs.iloc[j]
    mine = jobs[jobs["tenant"] == me["tenant"]]
    cuts = sorted({me["submit_time"], me["completion_time"], *mine["submit_time"], *mine["completion_time"]})
    total = 0.0
    for a, b in zip(cuts, cuts[1:]):
        if a < me["submit_time"] or b > me["completion_time"] or b <= a:
            continue
        mid = (a + b) / 2
        active = ((mine["submit_time"] <= mid) & (mine["completion_time"] > mid)).sum()  # weights are all 1
        total += min(me["gpus"], quota[me["tenant"]] / active) * (b - a)
    return total


def _windows(jobs: pd.DataFrame, alloc: pd.DataFrame, quota: dict, window: float, end: float):
    """(tenant, window) -> (attained, fair eq16, had demand) from the allocations alone."""
    out = {}
    for k in sorted(quota):
        for w in range(int(math.ceil(end / window))):
            lo, hi = w * window, min((w + 1) * window, end)
            a = alloc[alloc["tenant"] == k]
            att = float((a["gpus"] * (np.minimum(a["end"], hi) - np.maximum(a["start"], lo)).clip(lower=0)).sum())
            mine = jobs[jobs["tenant"] == k]
            demand = bool(((mine["submit_time"] < hi) & (mine["completion_time"] > lo)).any())
            out[(k, w)] = (att, quota[k] * (hi - lo), demand)
    return out


@pytest.mark.parametrize("name", ["astraea", "themis", "tiresias-l"])
def test_rho_and_tenant_windows_recomputed_from_the_allocations(name):
    jobs_set = _multi_tenant(7, n=40)
    # the recomputation below counts a job Active from its submit time and windows on the quota (eq16):
    # those definitions, pinned (the defaults are the first tick and eq8)
    cluster = ClusterSettings.of(nodes=2, gpus_per_node=8, lease_s=300, cold_start_s=30, fair_window_s=1800,
                                 rho_from="submit")
    run = simulate_fairness(jobs_set, get_policy(name, "cluster")(), tenant_loss_share="eq16", cluster=cluster)
    alloc, jobs = run.allocations, run.jobs
    assert (alloc["end"] > alloc["start"]).all() and set(alloc["kind"]) <= {"run", "cold-start"}
    quota = {k: 16 / 4 for k in jobs["tenant"].unique()}
    # attained GPU·s per job = Σ gpus × held seconds (run and cold start) in the allocation rows
    held = (alloc["gpus"] * (alloc["end"] - alloc["start"])).groupby(alloc["job_id"]).sum()
    assert held.reindex(jobs["job_id"]).to_numpy() == pytest.approx(jobs["gpu_seconds"].to_numpy(), rel=1e-12)
    # progress: the run rows give each job exactly its duration of work
    work = alloc[alloc["kind"] == "run"].assign(d=lambda f: f["end"] - f["start"]).groupby("job_id")["d"].sum()
    assert work.reindex(jobs["job_id"]).to_numpy() == pytest.approx(jobs["duration"].to_numpy(), rel=1e-9)
    # no node ever over-committed: sweep the allocation rows
    events = []
    for _, r in alloc.iterrows():
        for part in r["nodes"].split(","):
            node, k = map(int, part.split(":"))
            events += [(r["start"], 1, node, k), (r["end"], 0, node, -k)]
    used = [0, 0]
    for _, _, node, k in sorted(events):
        used[node] += k
        assert 0 <= used[node] <= 8
    rho = [held[jobs["job_id"].iloc[j]] / _fair_job_seconds(jobs, quota, j) for j in range(len(jobs))]
    assert rho == pytest.approx(jobs["rho"].tolist(), rel=1e-9)
    assert run.metrics["sharing_loss_jobs"] == pytest.approx(float(np.mean(np.asarray(rho) < 0.95)), abs=1e-12)
    win = _windows(jobs, alloc, quota, 1800.0, run.metrics["makespan"])
    counted = [(a / f) < 1 - 1e-9 for a, f, d in win.values() if d]
    assert run.metrics["tenant_loss_intervals"] == pytest.approx(float(np.mean(counted)), abs=1e-12)


class _Plugin(ClusterPolicy):
    """A user's cluster policy (defined outside the project's packages): `order` and `select` by hand."""

    name = "test-plugin"


@pytest.mark.parametrize("hook, message", [
    # a negative index is a valid Python index: it used to plan the last job (or fail as KeyError: -1)
    ({"order": lambda self, view, c: [-1] + list(c)}, "placed -1 (no job index: 0 to 3) at t = 0"),
    ({"order": lambda self, view, c: [9] + list(c)}, "placed 9 (no job index: 0 to 3)"),
    # every job, the unsubmitted and the finished ones too (was KeyError: 0)
    ({"order": lambda self, view, c: list(range(view.jobs.n))}, "chose job b at t = 0, which is neither running nor waiting"),  # b arrives at 150
    ({"select": lambda self, view, c, place: list(c)}, "chose job a1 at t = 0 without placing it"),
    ({"select": lambda self, view, c, place: 2 * ClusterPolicy.select(self, view, c, place)}, "chose job a1 twice"),
    ({"select": lambda self, view, c, place: None}, "select returned a NoneType, not a list of job indices"),
    ({"select": lambda self, view, c, place: [j for j in c if place(j)][:1]}, "placed job a2 at t = 0 but did not return it"),
])
def test_a_plugin_choice_that_cannot_be_executed_is_refused_in_one_line(hook, message):
    from schedulers.policy import PluginPolicyError

    policy = type("Broken", (_Plugin,), hook)()
    with pytest.raises(PluginPolicyError, match="broke the engine's rules") as info:
        simulate_fairness(_fragmented(), policy, cluster=TWO_NODES)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_plugin_order_is_executed_as_ordered():
    # largest job first: b (8 GPUs, at 150 s) waits for the first round, then takes a whole node
    policy = type("Largest", (_Plugin,), {"order": lambda self, view, c: sorted(c, key=lambda j: (-view.jobs.gpus[j], j))})
    run = simulate_fairness(_fragmented(), policy(), cluster=TWO_NODES_CHECKED)
    jobs = run.jobs.set_index("job_id")
    assert jobs.loc["b", "start_time"] == 900.0 and run.metrics["dropped_choices"] == 0


def test_a_plugin_that_never_starts_a_job_is_refused_in_seconds():
    from schedulers.policy import PluginPolicyError

    policy = type("Idle", (_Plugin,), {"select": lambda self, view, c, place: []})()
    with pytest.raises(PluginPolicyError, match="is stuck: 10000 wake-ups in a row with no job in service"):
        simulate_fairness(_fragmented(), policy, cluster=TWO_NODES)  # rounds and ticks forever: was a minute, to 1,000,200 events
