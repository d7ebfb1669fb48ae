"""AlloX (Le et al., EuroSys'20): min-cost matching of jobs to (node, position) on p̂, fairness knob α.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class with
its Python rule (what the engine runs for a subclass or a checked run, over the mechanics of
`schedulers.cluster.rounds.ClusterPolicy`) and its kernel, the same decision that the cluster
simulator (`schedulers.cluster.core`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.core import (_EPS, advance, assignment, candidates, group, kernel, place_in_order, rho_of,
                                     total_now)
from schedulers.cluster.rounds import Candidates, ClusterPolicy, TenantQueues, _EPS, _rho
from schedulers.jit import jitable
from schedulers.policy import register


ALLOX_ALPHA = 0.5  # AlloX's fairness knob: share of tenants (least progress first) considered first
ALLOX_MATCH_MAX = 256  # jobs entering one matching (the shortest footprints); the rest follow in footprint order


@register
class Allox(TenantQueues, ClusterPolicy):
    """AlloX (Le et al., EuroSys'20): min-cost bipartite matching of jobs to resources on processing-
    time estimates, with a fairness knob α over users' progress — on the one engine.

    AlloX schedules queued jobs on interchangeable resources (CPUs, GPUs) that run each job at its
    own speed. For the queued jobs J and machines M it builds the bipartite graph job j — (machine m,
    position k), k = 1 the last job on m, with cost k · p_jm (a job at position k delays itself and
    the k − 1 jobs after it), solves the min-cost matching (optimal for ΣC of the queued jobs,
    Bruno–Coffman–Sethi), and on each machine runs its jobs in decreasing k. Online it re-solves when
    jobs arrive or resources free up; running jobs are never preempted. Fairness: users are ordered
    by progress (share received) and only the jobs of the ⌈α · users⌉ least-progressed users enter
    the matching (α = 1: pure performance; small α: stricter fairness).

    Modelling choices on a GPU cluster of gang jobs (the ASTRAEA paper gives none):
    - machines = the nodes; p_jm = p̂_j · d_j / cap_m, the node-time a d_j-GPU gang takes from node m
      (its GPU·s footprint spread over the node's GPUs). One resource type, so AlloX's CPU-vs-GPU
      choice does not arise; heterogeneous node lists (`--node-list`) give different p_jm.
    - p̂ (`predicted_duration`) stands in for AlloX's profiler estimates, so the policy needs p̂.
    - users = tenants; progress = ρ_tenant of the LTGF ledger (attained / fair GPU·s), the single-
      resource form of AlloX's dominant share relative to the user's entitlement. α = ALLOX_ALPHA
      (0.5; the ASTRAEA paper does not say which α it ran). Ties: tenant index.
    - non-preemptive: no lease rounds; waiting jobs start at scheduling ticks when GPUs free up.
    - the matching decides which jobs start and in what order (rank on their machine, then p_jm),
      placement is consolidated as for every policy; a job that does not fit now is skipped.
      After the α tenants' jobs, the other tenants' jobs are matched and placed the same way, so
      no GPU idles while a job that fits waits (the knob orders, it does not reserve).
    - only the L jobs with the smallest footprints enter one matching, L = min(ALLOX_MATCH_MAX, free
      GPUs / smallest demand) — no more can start now — with ⌈L / nodes⌉ + 1 positions per node; on
      identical nodes the matching orders jobs by footprint, so the rest follow in that order.
      Solved exactly by scipy's linear_sum_assignment.
    """

    name = "allox"
    queued = True  # waiting jobs in per-tenant sets (below)
    needs_prediction = True
    preemptive = False
    description = "AlloX: min-cost matching of jobs to (node, position) on p̂, fairness knob α over tenant progress"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.core; the kernel is below)."""
        return AlloxParams(alpha=self.alpha, match_max=ALLOX_MATCH_MAX)

    def __init__(self, *, alpha: float = ALLOX_ALPHA, **kwargs):
        super().__init__(**kwargs)
        if not 0.0 < float(alpha) <= 1.0:
            raise ValueError("allox alpha must be in (0, 1]")
        self.alpha = float(alpha)

    def setup(self, view):
        self.inv_caps = 1.0 / np.asarray(self.capacities, np.float64)
        self.identical = len(set(self.capacities)) == 1  # every node has the same GPUs
        self.gpus_arr = np.asarray(self.gpus, np.float64)
        self.gpus_int = np.asarray(self.gpus, np.int64)
        # each tenant's waiting jobs (the matching sorts them: their order here does not matter), so
        # that a fill does not regroup every waiting job of a busy cluster
        self.setup_queues()

    def footprint(self, view, jobs):
        """p_jm for the jobs (rows) on every node m (columns), node-seconds."""
        jobs = np.asarray(jobs, np.int64)
        return (view.jobs.predicted[jobs] * self.gpus_arr[jobs])[:, None] * self.inv_caps[None, :]

    def matching(self, view, jobs: list[int]) -> list[tuple[int, int, int]]:
        """(job, node, position k) of the min-cost matching; k = 1 is the last job on its node."""
        from scipy.optimize import linear_sum_assignment

        if not jobs:
            return []
        R = len(self.capacities)
        K = -(-len(jobs) // R) + 1
        tau = self.footprint(view, jobs)  # L × R
        k = np.arange(1, K + 1, dtype=np.float64)
        cost = (tau[:, :, None] * k[None, None, :]).reshape(len(jobs), R * K)  # column = m * K + (k - 1)
        rows, cols = linear_sum_assignment(cost)
        return [(jobs[r], int(c // K), int(c % K) + 1) for r, c in zip(rows, cols)]

    def matched_order(self, view, jobs: list[int], limit: int = ALLOX_MATCH_MAX) -> list[int]:
        """The jobs in start order: the `limit` smallest footprints by the matching, then the rest."""
        if len(jobs) <= 1:
            return list(jobs)
        idx = np.asarray(jobs, np.int64)
        best = view.jobs.predicted[idx] * self.gpus_arr[idx] * self.inv_caps.min()
        order = np.lexsort((idx, best))
        by_size = idx[order].tolist()
        if limit <= 1:  # a matching of one job puts it first: the order is the footprint order
            return by_size
        if self.identical and min(limit, len(by_size)) <= len(self.capacities):
            lo, hi = best[order[0]], best[order[min(limit, len(by_size)) - 1]]
            if 0.0 < lo and hi < math.inf:
                # identical nodes, no more jobs than nodes, every cost k · p_jm > 0: the optimum puts
                # each job alone at position 1 of some node (a later position costs p_jm more), so all
                # rank first on their node and the order is the footprint order
                return by_size
        head, tail = by_size[:limit], by_size[limit:]
        best_of = dict(zip(idx[order[:limit]].tolist(), best[order[:limit]].tolist()))
        match = self.matching(view, head)
        top: dict[int, int] = {}
        for _, m, k in match:
            top[m] = max(top.get(m, 0), k)
        ranked = sorted(match, key=lambda t: (top[t[1]] - t[2], best_of[t[0]], t[0]))  # first on its node first
        return [j for j, _, _ in ranked] + tail

    def select(self, view, candidates, cluster):
        now = view.now
        # a fill of the non-preemptive rule: every candidate is a waiting job that is placed on the
        # free GPUs alone, so a group none of whose gang sizes finds a placement places nothing
        quick = isinstance(candidates, Candidates) and not candidates.running and not self.preemptive
        if isinstance(candidates, Candidates) and not candidates.running:
            per = {k: list(queue) for k, queue in enumerate(self.queues) if queue}
        else:
            per: dict[int, list[int]] = {}
            for j in candidates:
                per.setdefault(self.tenant[j], []).append(j)
        tenants = sorted(per, key=lambda k: (self.ltgf.tenant_rho(k, now), k))
        first = max(1, math.ceil(self.alpha * len(tenants) - _EPS))
        chosen = []
        for group in (tenants[:first], tenants[first:]):
            if quick:
                free, find, sizes = cluster.free_total, cluster.find, set()
                for k in group:
                    sizes.update(self.queue_sizes[k])
                if not any(g <= free and find(g) is not None for g in sizes):
                    continue  # the matching would order jobs none of which can start
            jobs = [j for k in group for j in per[k]]
            if not jobs:
                continue
            # at most as many jobs can start now as free GPUs / smallest demand: only those need matching
            smallest = int(self.gpus_int[np.asarray(jobs, np.int64)].min())
            limit = min(ALLOX_MATCH_MAX, max(1, cluster.free_total // smallest))
            if not self.place_leftovers(cluster, self.matched_order(view, jobs, limit), chosen):
                return chosen
        return chosen


# ----- the kernel (schedulers.cluster.core): the same decision over the simulator's arrays -------
AlloxParams = namedtuple("AlloxParams", "alpha match_max")
AlloxState = namedtuple("AlloxState", "params")


def setup(s, params):
    return group(AlloxState, params)


@jitable
def allox_order(s, p, jobs, limit):
    """Allox.matched_order: the `limit` smallest footprints in the order of the min-cost
    matching of jobs to (node, position), then the rest by footprint."""
    m = len(jobs)
    if m <= 1:
        return jobs
    idx = np.sort(jobs)
    best = np.empty(m)
    for i in range(m):
        best[i] = s.job.predicted[idx[i]] * float(s.job.gpus[idx[i]]) * s.nodes.inv_cap_min
    by_size = idx[np.argsort(best, kind="mergesort")]  # (footprint, job)
    best_sorted = np.sort(best)
    L = limit if limit < m else m
    head = by_size[:L]
    K = -(-L // s.nodes.N) + 1
    cost = np.empty((L, s.nodes.N * K))
    for r in range(L):
        j = head[r]
        pg = s.job.predicted[j] * float(s.job.gpus[j])
        for node in range(s.nodes.N):
            tau = pg * s.nodes.inv_cap[node]
            for k in range(K):
                cost[r, node * K + k] = tau * float(k + 1)
    rows, cols = assignment(cost)
    nm = len(rows)
    mj = np.empty(nm, np.int64)
    mnode = np.empty(nm, np.int64)
    mk = np.empty(nm, np.int64)
    mbest = np.empty(nm)
    top = np.zeros(s.nodes.N, np.int64)
    for i in range(nm):
        mj[i] = head[rows[i]]
        mbest[i] = best_sorted[rows[i]]
        mnode[i] = cols[i] // K
        mk[i] = cols[i] % K + 1
        if mk[i] > top[mnode[i]]:
            top[mnode[i]] = mk[i]
    rank = np.argsort(mj, kind="mergesort")  # (top[node] − k, footprint, job): first on its node first
    rank = rank[np.argsort(mbest[rank], kind="mergesort")]
    first_key = np.empty(nm, np.int64)
    for i in range(nm):
        first_key[i] = top[mnode[rank[i]]] - mk[rank[i]]
    rank = rank[np.argsort(first_key, kind="mergesort")]
    out = np.empty(m, np.int64)
    for i in range(nm):
        out[i] = mj[rank[i]]
    for i in range(L, m):
        out[nm + i - L] = by_size[i]
    return out


@jitable
def decide(s, p, at_round, now, chosen):
    """Allox.select: the ⌈α·tenants⌉ least-progressed tenants' jobs by the matching, then the
    other tenants' jobs the same way."""
    cand = candidates(s, at_round)
    have = np.zeros(s.job.T, np.bool_)
    for j in cand:
        have[s.job.tenant[j]] = True
    ks = np.nonzero(have)[0]
    rk = np.empty(len(ks))
    for i in range(len(ks)):
        advance(s, ks[i], now)
        rk[i] = rho_of(s.led.att[ks[i]], s.led.fair[ks[i]])
    ks = ks[np.argsort(rk, kind="mergesort")]  # (ρ_tenant, k)
    first = math.ceil(p.params.alpha * len(ks) - _EPS)
    if first < 1:
        first = 1
    group_of_tenant = np.zeros(s.job.T, np.int64)
    for i in range(len(ks)):
        group_of_tenant[ks[i]] = 0 if i < first else 1
    for group in range(2):
        sel = [0]
        sel.clear()
        for j in cand:
            if group_of_tenant[s.job.tenant[j]] == group:
                sel.append(j)
        if len(sel) == 0:
            continue
        jobs = np.array(sel)
        smallest = s.job.gpus[jobs[0]]
        for j in jobs:
            if s.job.gpus[j] < smallest:
                smallest = s.job.gpus[j]
        total = total_now(s, at_round)
        limit = total // smallest
        if limit < 1:
            limit = 1
        if limit > p.params.match_max:
            limit = p.params.match_max
        if total == 0:
            return
        order = allox_order(s, p, jobs, limit)
        place_in_order(s, order, len(order), now, at_round, chosen)
        if total_now(s, at_round) == 0:
            return


KERNEL = kernel("allox", AlloxParams, AlloxState, setup=setup, select=decide)
