"""The cluster simulator's cheaper paths decide exactly what the plain statement of each rule decides.

- `Cluster.find` (bucket bound, whole nodes read from their capacity's bucket) against the
  consolidated-placement rule written out plainly, on random heterogeneous states and node restrictions;
- `fifo` and `yarn-cs` fill from their own queues (a fill costs the jobs it reads, not the queue's
  length): the same runs as the plain rules (every waiting job, sorted), job for job;
- the Venus-like workload over more days keeps a 24-hour cycle and is the shipped scenario at 14 days.
"""

import numpy as np
import pytest

from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.nodes import Cluster
from schedulers.cluster.policies.fifo import FIFOCluster
from schedulers.cluster.policies.yarn_cs import YarnCS
from schedulers.cluster.rounds import _EPS, ClusterPolicy
from schedulers.cluster.scenarios import DAY, venus
from schedulers.jobs import JobSet


def plain_find(cluster: Cluster, g: int, allowed=None):
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
        cluster = Cluster(caps, free)
        allowed = None if rng.random() < 0.6 else set(rng.choice(len(caps), size=rng.integers(1, len(caps) + 1)).tolist())
        for g in range(1, sum(caps) + 2):
            got = cluster.find(g, allowed)
            assert got == plain_find(cluster, g, allowed), (caps, free, allowed, g)
            compared += 1
            placed += got is not None
    assert placed > 100 and compared - placed > 100  # both outcomes are exercised


@pytest.mark.parametrize("seed", range(3))
def test_find_after_takes_and_releases_is_the_consolidated_rule(seed):
    """`find` remembers the gang sizes that found no placement until the free counts change: every
    take, release and set_free must make it look again."""
    rng = np.random.default_rng(seed)
    caps = [8, 8, 4, 2, 8, 1, 8]
    cluster, held, misses = Cluster(caps), [], 0
    for step in range(400):
        g = int(rng.integers(1, 30))
        first = cluster.find(g)
        assert first == cluster.find(g) == plain_find(cluster, g), (step, g)
        misses += first is None
        if first is not None and rng.random() < 0.5:
            cluster.take(first)
            held.append(first)
        elif held and rng.random() < 0.5:
            cluster.release(held.pop(int(rng.integers(len(held)))))
        elif rng.random() < 0.2:
            node = int(rng.integers(len(caps)))
            cluster.set_free(node, int(rng.integers(0, caps[node] + 1)) if not any(n == node for p in held for n, _ in p) else cluster.free[node])
        cluster.check()
    assert misses > 50


class PlainFIFO(FIFOCluster):
    """FIFO by the base rule: every waiting job, sorted, stop at the first that does not fit."""

    def fill_candidates(self):
        return ClusterPolicy.fill_candidates(self)

    def select(self, view, candidates, cluster):
        return ClusterPolicy.select(self, view, candidates, cluster)


class PlainYarnCS(YarnCS):
    """YARN-CS as its rule reads: every waiting job in submit order, tenants blocked at their first miss."""

    def fill_candidates(self):
        return ClusterPolicy.fill_candidates(self)

    def select(self, view, candidates, cluster):
        used = list(self.tenant_used)
        blocked, lend, chosen = set(), [], []
        for j in sorted(candidates):
            k = self.tenant[j]
            if k in blocked:
                lend.append(j)
            elif used[k] + self.gpus[j] <= self.quota[k] + _EPS and self.try_place(cluster, j):
                used[k] += self.gpus[j]
                chosen.append(j)
            else:
                blocked.add(k)
                lend.append(j)
        blocked.clear()
        for j in lend:
            k = self.tenant[j]
            if k not in blocked:
                if self.try_place(cluster, j):
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


def _same_run(fast, plain, jobs):
    """The built-in policy `fast` on the engine (its cheaper Python path; `fast` keeps its state)
    and on its kernel (schedulers.cluster.core) give the run of the plain rule."""
    import copy

    fresh = copy.deepcopy(fast)
    b = simulate_fairness(jobs, plain)
    for a in (simulate_fairness(jobs, fast, reference=True), simulate_fairness(jobs, fresh)):
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
    run = _same_run(fast(**kw), plain(**kw), _busy_workload(seed))
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


@pytest.mark.parametrize("fast,plain", [(FIFOCluster, PlainFIFO), (YarnCS, PlainYarnCS)], ids=["fifo", "yarn-cs"])
def test_a_preempting_subclass_gets_the_plain_rule_at_its_rounds(fast, plain):
    """A plugin may subclass fifo or yarn-cs and preempt: its rounds hand `select` a list of running and
    waiting jobs, which must be read by the same rule."""
    preempting = type("Preempting", (fast,), {"preemptive": True})
    plain_preempting = type("PlainPreempting", (plain,), {"preemptive": True})
    kw = dict(nodes=3, gpus_per_node=8, lease_s=600, interval_s=10, cold_start_s=30)
    run = _same_run(preempting(**kw), plain_preempting(**kw), _busy_workload(7, n=200))
    assert run.metrics["rounds"] > 10 and run.metrics["completed"] == 200


@pytest.mark.parametrize("fair_share", ["eq16", "eq8"])
def test_job_rhos_reads_what_job_rho_reads(fair_share):
    """ASTRAEA reads every candidate's ρ_job in one pass (`LTGF.job_rhos`): the same floats, bit for
    bit, as one `job_rho` per job — for jobs never started, holding, preempted and done — and the
    tenants' ledgers are left exactly as the per-job readings leave them."""
    from schedulers.cluster.ltgf import LTGF

    rng = np.random.default_rng(3)
    n, T = 60, 4
    gpus, tenant, weight = rng.choice([1, 2, 4, 8], n), rng.integers(0, T, n), rng.choice([1.0, 0.5, 2.0], n)
    one, many = (LTGF(gpus, tenant, weight, T, 32, fair_share=fair_share, window_s=500.0) for _ in range(2))
    state = ["new"] * n
    t, checked = 0.0, 0
    for step in range(400):
        t += float(rng.choice([0.0, 7.5, 60.0, 333.3]))
        j = int(rng.integers(n))
        if state[j] == "new":
            event, state[j] = "arrive", "active"
        elif state[j] in ("active", "released") and rng.random() < 0.9:
            event, state[j] = "hold", "held"
        elif state[j] == "held" and step % 3:
            event, state[j] = "release", "released"
        elif state[j] != "done":
            event, state[j] = "complete", "done"
        else:
            continue
        for ledger in (one, many):
            getattr(ledger, event)(j, t)
        if step % 7 == 0:
            seen = [i for i in range(n) if state[i] != "new"]
            assert many.job_rhos(seen, t) == [one.job_rho(i, t) for i in seen]
            assert (many.t_last, many.att, many.fair, many.fair8) == (one.t_last, one.att, one.fair, one.fair8)
            checked += len(seen)
    assert checked > 1000 and "done" in state and "held" in state


def test_tiresias_order_is_the_plain_rule():
    """Tiresias-L's order (2D-LAS queue from attained GPU·s with starvation promotion, FIFO inside a
    queue), written out plainly, decides the same runs."""
    from schedulers.cluster.policies.tiresias_l import TiresiasL

    class PlainTiresias(TiresiasL):
        queued = False  # fills and rounds offer lists of every candidate

        def select(self, view, candidates, cluster):
            return ClusterPolicy.select(self, view, candidates, cluster)

        def order(self, view, candidates):
            now, keys = view.now, []
            for j in candidates:
                att = self.ltgf.job_attained(j, now)
                if j not in self.holding and att > 0 and now - self.wait_since[j] > self.STARVATION * self.progress(view, j):
                    self.offset[j] = att
                keys.append((sum(att - self.offset[j] >= t for t in self.THRESHOLDS_GPU_S), j))
            return [j for _, j in sorted(keys)]

    for seed, caps in ((5, None), (6, [8, 8, 4, 2, 8])):
        kw = dict(node_capacities=caps) if caps else dict(nodes=3, gpus_per_node=8)
        kw.update(lease_s=600, interval_s=10, cold_start_s=30)
        fast = TiresiasL(**kw)
        run = _same_run(fast, PlainTiresias(**kw), _busy_workload(seed, n=300))
        assert run.metrics["rounds"] > 10 and run.metrics["completed"] == 300
        assert (run.jobs["preemptions"] > 0).sum() > 10
        assert sum(o > 0 for o in fast.offset) > 5  # starving jobs were promoted
        assert all(not queue for queue in fast.queues) and not fast.waiting


@pytest.mark.parametrize("name,seeds", [("hived", (8, 9)), ("gandiva-fair", (10, 11))])
def test_tenant_queues_decide_as_the_plain_rule(name, seeds):
    """HiveD reads each tenant's queue up to its first miss in its own cells; Gandiva_fair reads each
    tenant's (attained, job) queue merged with its running jobs only as far as it places them; both
    skip gang sizes that found no GPUs in the leftover pass: the same runs as each rule on every
    candidate, sorted."""
    from schedulers.policy import get_policy

    fast_class = get_policy(name, "cluster")

    class Plain(fast_class):
        queued = False  # fills and rounds offer lists of every candidate

    for seed, caps in zip(seeds, (None, [8, 8, 4, 2, 8, 4])):
        kw = dict(node_capacities=caps) if caps else dict(nodes=4, gpus_per_node=8)
        kw.update(lease_s=600, interval_s=10, cold_start_s=30, tenant_weights=[3.0, 1.0, 1.0, 2.0, 1.0])
        fast = fast_class(**kw)
        run = _same_run(fast, Plain(**kw), _busy_workload(seed, n=400))
        assert run.metrics["rounds"] > 10 and run.metrics["completed"] == 400
        assert (run.jobs["preemptions"] > 0).sum() > 5
        assert all(not queue for queue in fast.queues) and not getattr(fast, "queued_key", None)


def test_allox_tenant_queues_decide_as_the_plain_rule():
    """AlloX keeps each tenant's waiting jobs apart (a fill does not regroup every waiting job) and
    skips gang sizes that found no GPUs: the same runs as its rule written out on every waiting job."""
    import math

    from schedulers.cluster.policies.allox import ALLOX_MATCH_MAX, Allox

    class PlainAllox(Allox):
        queued = False  # fills offer a list of every waiting job

        def select(self, view, candidates, cluster):
            per = {}
            for j in candidates:
                per.setdefault(self.tenant[j], []).append(j)
            tenants = sorted(per, key=lambda k: (self.ltgf.tenant_rho(k, view.now), k))
            first = max(1, math.ceil(self.alpha * len(tenants) - _EPS))
            chosen = []
            for group in (tenants[:first], tenants[first:]):
                jobs = [j for k in group for j in per[k]]
                if not jobs:
                    continue
                limit = min(ALLOX_MATCH_MAX, max(1, cluster.free_total // min(self.gpus[j] for j in jobs)))
                for j in self.matched_order(view, jobs, limit):
                    if cluster.free_total == 0:
                        return chosen
                    if self.gpus[j] <= cluster.free_total and self.try_place(cluster, j):
                        chosen.append(j)
            return chosen

    rng = np.random.default_rng(12)
    for seed, caps in ((12, None), (13, [8, 8, 4, 2, 8, 4])):
        jobs = _busy_workload(seed, n=400)
        jobs = jobs.with_predictions(jobs.size * np.exp(0.8 * rng.standard_normal(jobs.n)))
        kw = dict(node_capacities=caps) if caps else dict(nodes=4, gpus_per_node=8)
        kw.update(lease_s=600, interval_s=10, cold_start_s=30, tenant_weights=[3.0, 1.0, 1.0, 2.0, 1.0])
        fast = Allox(**kw)
        run = _same_run(fast, PlainAllox(**kw), jobs)
        assert run.metrics["completed"] == 400
        waits = (run.jobs["start_time"] - run.jobs["submit_time"]).to_numpy()
        assert np.median(waits) > 1800  # long queues: the fills had much to read
        assert all(not queue for queue in fast.queues)
        # the start order itself (footprints of the matched head read for it alone), on many sizes
        view = type("View", (), {"jobs": jobs})()
        for trial in range(40):
            some = rng.choice(jobs.n, size=int(rng.integers(2, 120)), replace=False).tolist()
            limit = int(rng.integers(1, len(some) + 1))
            assert fast.matched_order(view, some, limit) == plain_matched_order(fast, view, some, limit)


def plain_matched_order(policy, view, jobs, limit):
    """AlloX's start order as first written: every job's footprint in a dictionary."""
    idx = np.asarray(jobs, np.int64)
    best = view.jobs.predicted[idx] * policy.gpus_arr[idx] * policy.inv_caps.min()
    by_size = idx[np.lexsort((idx, best))].tolist()
    head, tail = by_size[:limit], by_size[limit:]
    best_of = dict(zip(idx.tolist(), best.tolist()))
    match = policy.matching(view, head)
    top = {}
    for _, m, k in match:
        top[m] = max(top.get(m, 0), k)
    return [j for j, _, _ in sorted(match, key=lambda t: (top[t[1]] - t[2], best_of[t[0]], t[0]))] + tail
