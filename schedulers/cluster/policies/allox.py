"""AlloX (Le et al., EuroSys'20): min-cost matching of jobs to (node, position) on p̂, fairness knob α.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy, revision_code
from schedulers.cluster.kernels import assignment, kernel
from schedulers.cluster.ledgers import advance, rho_of
from schedulers.cluster.placement import place_in_order, total_now
from schedulers.cluster.queues import candidates
from schedulers.cluster.state import _EPS, group
from schedulers.jit import jitable
from schedulers.policy_base import register


ALLOX_ALPHA = 0.5  # AlloX's fairness knob: share of tenants (least progress first) considered first
ALLOX_MATCH_MAX = 256  # jobs entering one matching (the shortest footprints); the rest follow in footprint order


@register
class Allox(ClusterPolicy):
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
    - `revision` (schedulers.revision) is accepted as by every prediction-aware policy, and changes
      nothing: a non-preemptive policy revises only at its decisions, and AlloX's decisions rank
      only waiting jobs, which have never run, so no estimate is outlived when it is read.
    """

    name = "allox"
    listing_rank = 100  # its place in every listing of cluster policies
    needs_prediction = True
    preemptive = False
    description = "AlloX: min-cost matching of jobs to (node, position) on p̂, fairness knob α over tenant progress"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return AlloxParams(alpha=self.alpha, match_max=ALLOX_MATCH_MAX)

    def __init__(self, *, alpha: float = ALLOX_ALPHA, revision: str = "none", **kwargs):
        super().__init__(**kwargs)
        self.revision = revision  # accepted, checked, and without effect: see the class docstring
        revision_code(revision)
        if not 0.0 < float(alpha) <= 1.0:
            raise ValueError("allox alpha must be in (0, 1]")
        self.alpha = float(alpha)


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
AlloxParams = namedtuple("AlloxParams", "alpha match_max")
AlloxState = namedtuple("AlloxState", "params uniform")
#: the largest ratio of two footprints of one matching for which `allox_order` takes the matching's
#: order without solving it (see there): far inside the solver's floating-point accuracy
UNIFORM_SPREAD = 2.0**30


def setup(s, params):
    cap = s.nodes.cap
    uniform = True
    for i in range(len(cap)):
        if cap[i] != cap[0]:
            uniform = False
    return group(AlloxState(params, uniform))


@jitable
def one_position_each(s, p, head):
    """Whether the matching of `head` (at most one job per node) is known without solving it: on
    nodes of one capacity, with every footprint positive and within UNIFORM_SPREAD of the others,
    every optimal matching puts each job first on its own node (a job at a later position could move
    to a free first position for less), so the matching's order is the jobs' footprint order."""
    if not p.uniform or len(head) > s.nodes.N:
        return False
    lo = math.inf
    hi = 0.0
    for j in head:
        pg = s.job.predicted[j] * float(s.job.gpus[j])
        if pg < lo:
            lo = pg
        if pg > hi:
            hi = pg
    return lo > 0.0 and hi <= lo * UNIFORM_SPREAD


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
    if one_position_each(s, p, head):
        return by_size
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


KERNEL = kernel(Allox.name, AlloxParams, AlloxState, setup=setup, select=decide)
