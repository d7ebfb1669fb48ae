"""The cluster simulator's cheaper paths decide exactly what the plain statement of each rule decides.

- `placement.find_placement` (the consolidated placement search) against the rule written out plainly, on
  random heterogeneous states and node restrictions;
- `fifo`, `yarn-cs` and `tiresias-l` keep their waiting jobs in their own queues (a fill costs the jobs
  it reads, not the queue's length): their kernels give the runs of the plain rules written as
  plugins' Python rules (schedulers.cluster.rule: every candidate, sorted), job for job;
- the Venus-like workload over more days keeps a 24-hour cycle and is the shipped scenario at 14 days.
"""

import numpy as np
import pytest

from schedulers.cluster import placement
from schedulers.cluster.base import _EPS, ClusterPolicy
from schedulers.cluster.loop import SIMULATOR_MODULES
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.policies.fifo import FIFOCluster
from schedulers.cluster.policies.yarn_cs import YarnCS
from schedulers.cluster.scenarios import DAY, venus
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet


class _Free:
    """Free GPUs per node, as plain lists."""

    def __init__(self, capacity, free):
        self.capacity, self.free = list(capacity), list(free)


def kernel_find(caps, free, g, allowed=None):
    """placement.find_placement on these free counts: the placement as ((node, gpus), ...) or None."""
    fr = np.asarray(free, np.int64)
    owner = [0 if allowed is None or n in allowed else 1 for n in range(len(caps))]
    nodes = placement.search_nodes(caps, owner, g // int(min(caps)) + 1)
    parts = placement.find_placement(fr, int(fr.sum()), g, nodes, -1 if allowed is None else 0)
    return tuple(zip(nodes.found_node[:parts].tolist(), nodes.found_k[:parts].tolist())) if parts else None


def plain_find(cluster: _Free, g: int, allowed=None):
    """Consolidated placement as docs/fairness.md states it: one node by best fit (fewest free GPUs
    that still fit, lowest index), else whole free nodes largest first (ties: index) until the
    remainder fits on one other node by best fit."""
    cap, free = cluster.capacity, cluster.free
    ok = [n for n in range(len(cap)) if allowed is None or n in allowed]
    if g < 1 or g > sum(free):
        return None

    def best_fit(need, used):
        fits = [(free[n], n) for n in ok if n not in used and free[n] >= need]
        return min(fits)[1] if fits else -1

    node = best_fit(g, set()) if g <= max(cap) else -1
    if node >= 0:
        return ((node, g),)
    whole = sorted((n for n in ok if free[n] == cap[n]), key=lambda n: (-cap[n], n))
    chosen, used, remaining = [], set(), g
    for n in whole:
        if remaining <= max(cap):
            last = best_fit(remaining, used)
            if last >= 0:
                return tuple(chosen + [(last, remaining)])
        take = min(cap[n], remaining)
        chosen.append((n, take))
        used.add(n)
        remaining -= take
        if remaining == 0:
            return tuple(chosen)
    if 0 < remaining <= max(cap):
        last = best_fit(remaining, used)
        if last >= 0:
            return tuple(chosen + [(last, remaining)])
    return None


@pytest.mark.parametrize("seed", range(6))
def test_find_is_the_consolidated_rule(seed):
    rng = np.random.default_rng(seed)
    compared = placed = 0
    for _ in range(60):
        caps = rng.choice([1, 2, 4, 8], size=rng.integers(1, 12)).tolist() if seed % 2 else [8] * int(rng.integers(1, 10))
        free = [int(rng.integers(0, c + 1)) if rng.random() < 0.6 else c for c in caps]
        cluster = _Free(caps, free)
        allowed = None if rng.random() < 0.6 else set(rng.choice(len(caps), size=rng.integers(1, len(caps) + 1)).tolist())
        for g in range(1, sum(caps) + 2):
            got = kernel_find(caps, free, g, allowed)
            assert got == plain_find(cluster, g, allowed), (caps, free, allowed, g)
            compared += 1
            placed += got is not None
    assert placed > 100 and compared - placed > 100  # both outcomes are exercised


class PlainFIFO(ClusterPolicy):
    """FIFO as a plugin's rule: every waiting job in submit order, stop at the first that does not fit."""

    name = "plain-fifo"
    preemptive = False
    strict = True
    work_conserving = False


class PlainYarnCS(ClusterPolicy):
    """YARN-CS as its rule reads: every waiting job in submit order, tenants blocked at their first miss."""

    name = "plain-yarn-cs"
    preemptive = False
    work_conserving = False

    def select(self, view, candidates, place):
        tenant, gpus = view.jobs.tenant, view.jobs.gpus
        used = [view.tenant_gpus(k) for k in range(len(view.jobs.tenant_names))]
        blocked, lend, chosen = set(), [], []
        for j in sorted(candidates):
            k = tenant[j]
            if k in blocked:
                lend.append(j)
            elif used[k] + gpus[j] <= view.quota(k) + _EPS and place(j):
                used[k] += gpus[j]
                chosen.append(j)
            else:
                blocked.add(k)
                lend.append(j)
        blocked.clear()
        for j in lend:
            k = tenant[j]
            if k not in blocked:
                if place(j):
                    chosen.append(j)
                else:
                    blocked.add(k)
        return chosen


def _busy_workload(seed: int, n: int = 500) -> JobSet:
    """A cluster far too small for its jobs: long queues, many tenants blocked, lent quota."""
    rng = np.random.default_rng(seed)
    size = np.round(np.exp(rng.uniform(np.log(30), np.log(20000), n)))
    return JobSet.from_arrays(np.sort(rng.integers(0, 40000, n)).astype(float), size,
                              gpus=rng.choice([1, 1, 2, 4, 8, 12, 16], n), tenant=rng.choice(["a", "b", "c", "d", "e"], n))


def _same_run(fast, plain, jobs, cluster):
    """The built-in policy `fast` on its kernel (schedulers.cluster.kernels) as Python and compiled gives
    the run of the plain rule (a plugin's Python rule), both on `cluster`."""
    import os

    b = simulate_fairness(jobs, plain, cluster=cluster)
    assert b.loop == "Python"
    for jit in ("off", "on"):
        os.environ["ATLAS_BENCH_JIT"] = jit
        try:
            a = simulate_fairness(jobs, fast, cluster=cluster)
        finally:
            del os.environ["ATLAS_BENCH_JIT"]
        assert a.loop == {"off": "Python", "on": "compiled"}[jit]
        assert a.jobs.equals(b.jobs)
        assert a.allocations.equals(b.allocations)
        assert a.tenant_intervals.equals(b.tenant_intervals)
        drop = {"sim_seconds"}
        assert {k: v for k, v in a.metrics.items() if k not in drop} == {k: v for k, v in b.metrics.items() if k not in drop}
    return b


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("fast,plain", [(FIFOCluster, PlainFIFO), (YarnCS, PlainYarnCS)], ids=["fifo", "yarn-cs"])
def test_queue_fills_decide_as_the_plain_rule(fast, plain, seed):
    caps = [8, 8, 4, 2, 8] if seed % 2 else None
    kw = dict(node_capacities=caps) if caps else dict(nodes=3, gpus_per_node=8)
    kw.update(lease_s=300, interval_s=10, cold_start_s=30, check=False)
    if plain is PlainYarnCS:
        kw["tenant_weights"] = [4.0, 2.0, 1.0, 1.0, 0.5]
    run = _same_run(fast(), plain(), _busy_workload(seed), ClusterSettings.of(**kw))
    assert run.metrics["completed"] == 500
    waits = (run.jobs["start_time"] - run.jobs["submit_time"]).to_numpy()
    assert np.median(waits) > 3600  # the queue is long: the fills had much to read


def test_a_longer_venus_workload_keeps_the_day():
    shipped, same = venus(seed=0), venus(seed=0, n_jobs=11_304, days=14)
    assert shipped.jobs.equals(same.jobs)
    long = venus(seed=1, n_jobs=11_304 * 4, days=56).jobs
    t = long["submit_time"].to_numpy()
    assert t.max() > 55 * DAY and t.min() >= 0
    hourly = np.bincount(((t % DAY) // 3600).astype(int), minlength=24)
    assert 12 <= int(np.argmax(hourly)) <= 18  # the diurnal peak stays in the afternoon, every day
    per_day = np.bincount((t // DAY).astype(int), minlength=56)
    assert per_day.min() > 0 and 0.6 < per_day.mean() / (11_304 / 14) < 1.4  # Venus's jobs per day
    with pytest.raises(ValueError):
        venus(seed=0, n_jobs=10, days=0)


def test_a_quiet_short_venus_workload_draws_more_candidates():
    """On one day where the heaviest tenants are quiet, fewer than a quarter of the first batch of
    candidate arrivals are accepted (seed 3: it raised "not enough candidate arrivals"); a second
    batch makes up the jobs asked for, within the day."""
    from schedulers.cluster.scenarios import _arrivals

    rng = np.random.default_rng(3)
    weights = 1.0 / np.arange(1, 17) ** 0.8
    weights = weights / weights.sum()
    activity = rng.choice([0.3, 1.0, 2.5], size=(16, 1), p=[0.25, 0.5, 0.25])
    t, k, idx = _arrivals(rng, 1000, 1, weights, activity)
    assert len(t) == 8000 and len(k) == 8000  # two batches of 4,000 candidates
    assert len(idx) == 1000 and len(np.unique(idx)) == 1000 and (np.diff(idx) > 0).all()
    jobs = venus(seed=3, n_jobs=1000, days=1).jobs
    assert len(jobs) == 1000 and jobs["job_id"].is_unique
    assert jobs["submit_time"].is_monotonic_increasing and jobs["submit_time"].max() <= DAY
    assert jobs["tenant"].nunique() == 16


@pytest.mark.parametrize("fast,plain", [(FIFOCluster, PlainFIFO), (YarnCS, PlainYarnCS)], ids=["fifo", "yarn-cs"])
def test_a_preempting_subclass_writes_its_own_rule(fast, plain):
    """fifo's and yarn-cs's kernels keep jobs that wait once: a subclass that preempts is refused in
    one line (it would otherwise run a kernel its flags do not fit), and the plain rule that preempts
    runs, with rounds."""
    from schedulers.policy import PolicyError

    cluster = ClusterSettings.of(nodes=3, gpus_per_node=8, lease_s=600, interval_s=10, cold_start_s=30)
    jobs = _busy_workload(7, n=200)
    with pytest.raises(PolicyError, match="kernel is written for a policy that never preempts"):
        simulate_fairness(jobs, type("Preempting", (fast,), {"preemptive": True})(), cluster=cluster)
    run = simulate_fairness(jobs, type("PlainPreempting", (plain,), {"preemptive": True})(), cluster=cluster)
    assert run.metrics["rounds"] > 10 and run.metrics["completed"] == 200


def test_tiresias_order_is_the_plain_rule():
    """Tiresias-L's order (2D-LAS queue from attained GPU·s with starvation promotion, FIFO inside a
    queue), written out plainly as a plugin's rule, decides the same runs as its kernel."""
    from schedulers.cluster.policies.tiresias_l import TiresiasL

    class PlainTiresias(ClusterPolicy):
        name = "plain-tiresias-l"

        def setup(self, view):
            self.offset = [0.0] * view.jobs.n

        def order(self, view, candidates):
            keys = []
            for j in candidates:
                att = view.attained_gpu_s(j)
                if not view.is_running(j) and att > 0 and view.now - view.wait_since(j) > 2.0 * view.attained(j):
                    self.offset[j] = att  # promoted: counts from zero again
                keys.append((sum(att - self.offset[j] >= t for t in TiresiasL.THRESHOLDS_GPU_S), j))
            return [j for _, j in sorted(keys)]

    for seed, caps in ((5, None), (6, [8, 8, 4, 2, 8])):
        kw = dict(node_capacities=caps) if caps else dict(nodes=3, gpus_per_node=8)
        kw.update(lease_s=600, interval_s=10, cold_start_s=30)
        plain = PlainTiresias()
        run = _same_run(TiresiasL(), plain, _busy_workload(seed, n=300), ClusterSettings.of(**kw))
        assert run.metrics["rounds"] > 10 and run.metrics["completed"] == 300
        assert (run.jobs["preemptions"] > 0).sum() > 10
        assert sum(o > 0 for o in plain.offset) > 5  # starving jobs were promoted


def _tuple_unpacked_reads(path):
    """Lines of `path` that unpack reads of attributes from a tuple (`a, b = s.x, s.y`)."""
    import ast  # noqa: PLC0415

    tree = ast.parse(path.read_text())
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple)
            and isinstance(node.value, ast.Tuple) and any(isinstance(e, ast.Attribute) for e in node.value.elts)]


def test_the_simulator_never_unpacks_state_reads_from_a_tuple(tmp_path):
    """numba 0.68.1 compiled `seg, plan, q, cfg = s.seg, s.plan, s.q, s.cfg` (start_job) into a loop
    that left jobs unserved while the Python run was right: the simulator and the built-in kernels
    read the state one name per line (schedulers.cluster.loop says why)."""
    from pathlib import Path  # noqa: PLC0415

    import schedulers.cluster.policies as policies  # noqa: PLC0415

    files = [*SIMULATOR_MODULES, *sorted(Path(policies.__file__).parent.glob("*.py"))]
    found = {f.name: lines for f in files if (lines := _tuple_unpacked_reads(f))}
    assert found == {}
    probe = tmp_path / "probe.py"  # the check itself finds them
    probe.write_text("def f(s):\n    a, b = s.x, s.y\n    c, d = 1, 2\n    return a, b, c, d\n")
    assert _tuple_unpacked_reads(probe) == [2]
