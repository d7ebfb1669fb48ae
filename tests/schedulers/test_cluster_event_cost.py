"""The per-event cost work of the cluster kernels decides the same runs as the rules did before it:
AlloX (each tenant's waiting jobs kept in footprint order and read only while one may fit; the
matching of at most one job per node on nodes of one capacity taken as the footprint order, without
the solver) and HiveD (each tenant's own pass over its own waiting jobs; the second pass reading
only the jobs it would try) against their earlier decisions, kept here as reference kernels that
read every waiting job at every decision and solve every matching; and `may_place`'s one pass over
the nodes against the placement search for every waiting gang size."""

import math
from collections import namedtuple

import numpy as np
import pytest

from schedulers.cluster import placement
from schedulers.cluster.kernels import assignment, kernel
from schedulers.cluster.ledgers import advance, rho_of
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.settings import ClusterSettings
from schedulers.cluster.placement import attempt, place_in_order, total_now
from schedulers.cluster.policies.allox import Allox
from schedulers.cluster.policies.hived import HiveD
from schedulers.cluster.queues import candidates, count_decision
from schedulers.cluster.scenarios import venus
from schedulers.cluster.state import _EPS, group
from schedulers.jobs import JobSet

# ----- AlloX as it decided before: every candidate collected, sorted and matched by the solver -----
SortedAlloxParams = namedtuple("SortedAlloxParams", "alpha match_max")
SortedAlloxState = namedtuple("SortedAlloxState", "params")


def _allox_setup(s, params):
    return group(SortedAlloxState(params))


def _allox_order(s, jobs, limit):
    m = len(jobs)
    if m <= 1:
        return jobs
    idx = np.sort(jobs)
    best = np.array([s.job.predicted[j] * float(s.job.gpus[j]) * s.nodes.inv_cap_min for j in idx])
    by_size = idx[np.argsort(best, kind="mergesort")]
    best_sorted = np.sort(best)
    L = min(limit, m)
    head = by_size[:L]
    K = -(-L // s.nodes.N) + 1
    cost = np.empty((L, s.nodes.N * K))
    for r in range(L):
        pg = s.job.predicted[head[r]] * float(s.job.gpus[head[r]])
        for node in range(s.nodes.N):
            for k in range(K):
                cost[r, node * K + k] = pg * s.nodes.inv_cap[node] * float(k + 1)
    rows, cols = assignment(cost)
    mj, mbest = head[rows], best_sorted[rows]
    mnode, mk = cols // K, cols % K + 1
    top = np.zeros(s.nodes.N, np.int64)
    np.maximum.at(top, mnode, mk)
    rank = np.argsort(mj, kind="mergesort")
    rank = rank[np.argsort(mbest[rank], kind="mergesort")]
    rank = rank[np.argsort((top[mnode] - mk)[rank], kind="mergesort")]
    return np.concatenate([mj[rank], by_size[L:]])


def _allox_decide(s, p, at_round, now, chosen):
    cand = candidates(s, at_round)
    ks = np.unique(s.job.tenant[cand])
    rk = np.empty(len(ks))
    for i, k in enumerate(ks):
        advance(s, k, now)
        rk[i] = rho_of(s.led.att[k], s.led.fair[k])
    ks = ks[np.argsort(rk, kind="mergesort")]
    first = max(1, math.ceil(p.params.alpha * len(ks) - _EPS))
    for part in (ks[:first], ks[first:]):
        jobs = np.array([j for j in cand if s.job.tenant[j] in set(part.tolist())], np.int64)
        if len(jobs) == 0:
            continue
        total = total_now(s, at_round)
        limit = min(max(total // int(s.job.gpus[jobs].min()), 1), p.params.match_max)
        if total == 0:
            return
        order = _allox_order(s, jobs, limit)
        place_in_order(s, order, len(order), now, at_round, chosen)
        if total_now(s, at_round) == 0:
            return


kernel("allox-sorted", SortedAlloxParams, SortedAlloxState, setup=_allox_setup, select=_allox_decide,
       compilable=False, preemptive=False)


class SortedAllox(Allox):
    name = "allox-sorted"

    def kernel_params(self):
        return SortedAlloxParams(self.alpha, 256)


# ----- HiveD as it decided before: one walk over every running and waiting job in job order -------
WalkHiveDParams = namedtuple("WalkHiveDParams", "")
WalkHiveDState = namedtuple("WalkHiveDState", "params")


def _hived_setup(s, params):
    return group(WalkHiveDState(params))


def _hived_decide(s, p, at_round, now, chosen):
    count_decision(s, (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0])
    blocked, rest = set(), []
    for j in candidates_in_order(s, at_round):
        k = s.job.tenant[j]
        if s.q.holding[j] and any(s.nodes.owner[s.plan.pl_node[j, i]] != k for i in range(s.plan.pl_len[j])):
            rest.append(j)  # running outside its cells: only re-decided in the second pass
        elif k in blocked:
            rest.append(j)
        elif attempt(s, j, now, at_round, k):
            chosen.append(j)
        else:
            blocked.add(k)
            rest.append(j)
    place_in_order(s, np.array(rest, np.int64), len(rest), now, at_round, chosen)


def candidates_in_order(s, at_round):
    running = sorted(s.q.hold_list[:s.q.n_hold[0]].tolist()) if at_round else []
    return sorted(running + s.q.ws[:s.q.n_wait[0]].tolist())


kernel("hived-walk", WalkHiveDParams, WalkHiveDState, setup=_hived_setup, select=_hived_decide, compilable=False)


class WalkHiveD(HiveD):
    name = "hived-walk"

    def kernel_params(self):
        return WalkHiveDParams()


def _jobs(seed, n, days):
    return JobSet.from_frame(venus(seed=seed, n_jobs=n, days=days).jobs)



CLUSTERS = {"uniform": dict(nodes=8, gpus_per_node=8), "mixed": dict(node_capacities=[8, 8, 4, 2, 8, 16, 4, 16, 8])}


@pytest.mark.parametrize("cluster", sorted(CLUSTERS))
def test_allox_decides_as_when_it_sorted_and_solved_every_matching(monkeypatch, cluster, same_run):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    jobs = _jobs(3, 1500, 3)
    on = ClusterSettings.of(**CLUSTERS[cluster], cold_start_s=30.0)
    solved = []
    monkeypatch.setattr("schedulers.cluster.policies.allox.assignment",
                        lambda cost: solved.append(cost.shape) or assignment(cost))
    run = simulate_fairness(jobs, Allox(), cluster=on)
    reference = simulate_fairness(jobs, SortedAllox(), cluster=on)
    same_run(run, reference)
    assert run.metrics["completed"] == jobs.n
    waits = (run.jobs["start_time"] - run.jobs["submit_time"]).to_numpy()
    assert np.median(waits) > 300  # a queue: the decisions had many jobs to order
    if cluster == "uniform":  # matchings of up to one job per node were not solved, the larger ones were
        assert solved and min(rows for rows, _ in solved) > 8
    else:
        assert min(rows for rows, _ in solved) == 2


@pytest.mark.parametrize("seed", [5, 6])
def test_hived_decides_as_when_it_walked_every_waiting_job(monkeypatch, seed, same_run):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    jobs = _jobs(seed, 1500, 3)
    on = ClusterSettings.of(**CLUSTERS["uniform" if seed % 2 else "mixed"], lease_s=600.0, cold_start_s=30.0)
    run = simulate_fairness(jobs, HiveD(), cluster=on)
    same_run(run, simulate_fairness(jobs, WalkHiveD(), cluster=on))
    assert run.metrics["rounds"] > 10 and run.metrics["preemptions"] > 10 and run.metrics["completed"] == jobs.n


def test_may_place_is_the_search_for_every_waiting_gang_size():
    rng = np.random.default_rng(0)
    answers = set()
    for _ in range(400):
        caps = rng.choice([2, 4, 8, 16], size=rng.integers(1, 8)).astype(np.int64)
        free = np.array([c if rng.random() < 0.2 else rng.integers(0, c + 1) for c in caps], np.int64)
        maxg = 40
        demand = np.zeros(maxg + 1, np.int64)
        demand[rng.choice(np.arange(1, maxg + 1), size=rng.integers(1, 4))] = 1
        s = _State(caps, free, demand, maxg)
        expected = any(demand[g] and g <= free.sum() and placement.find(s, free, int(free.sum()), g, -1) > 0
                       for g in range(1, maxg + 1))
        assert placement.may_place(s) == expected, (caps, free, np.nonzero(demand))
        answers.add(expected)
    assert answers == {True, False}


class _State:
    """The fields of a run's state that may_place and find read."""

    def __init__(self, caps, free, demand, maxg):
        nodes = placement.search_nodes(caps)
        self.nodes = type("Nodes", (), dict(nodes._asdict(), N=len(caps), free=free,
                                             free_total=np.array([free.sum()]), cap=caps))()
        self.q = type("Q", (), dict(wait_demand=demand))()
        self.job = type("Job", (), dict(maxg=maxg))()
