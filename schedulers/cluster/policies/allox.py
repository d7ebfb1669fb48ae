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
from schedulers.cluster.queues import count_decision, sorted_add, sorted_remove
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
      Solved exactly by scipy's linear_sum_assignment; on nodes of one capacity a matching of at
      most one job per node is known without it (each job first on its own node: footprint order).
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

    def __init__(self, *, alpha: float = ALLOX_ALPHA, revision: str = "none"):
        super().__init__()
        self.revision = revision  # accepted, checked, and without effect: see the class docstring
        revision_code(revision)
        if not 0.0 < float(alpha) <= 1.0:
            raise ValueError("allox alpha must be in (0, 1]")
        self.alpha = float(alpha)


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
AlloxParams = namedtuple("AlloxParams", "alpha match_max")
# each job's place in the order of footprints (footprint, then job: `rank`, and `by_rank` its inverse),
# fixed for the run; each tenant's waiting jobs as their ranks in that order (w_buf[k][:w_len[k]]),
# and how many of them have each gang size (w_count[k, g])
AlloxState = namedtuple("AlloxState", "params uniform rank by_rank w_buf w_len w_count")
#: the largest ratio of two footprints of one matching for which `allox_order` takes the matching's
#: order without solving it (see there): far inside the solver's floating-point accuracy
UNIFORM_SPREAD = 2.0**30
#: waiting jobs read from the tenants' lists per call of place_in_order after the matched ones
PLACE_CHUNK = 64


def setup(s, params):
    cap = s.nodes.cap
    uniform = True
    for i in range(len(cap)):
        if cap[i] != cap[0]:
            uniform = False
    n = s.job.n
    best = np.empty(n)
    for j in range(n):
        best[j] = footprint(s, j)
    by_rank = np.argsort(best, kind="mergesort")  # (footprint, job)
    rank = np.empty(n, np.int64)
    for r in range(n):
        rank[by_rank[r]] = r
    T = s.job.T
    return group(AlloxState(params=params, uniform=uniform, rank=rank, by_rank=by_rank.astype(np.int64),
                            w_buf=[np.zeros(8, np.int64) for _ in range(T)], w_len=np.zeros(T, np.int64),
                            w_count=np.zeros((T, s.job.maxg + 1), np.int64)))


@jitable(inline=True)
def footprint(s, j):
    """Job j's GPU·s spread over the smallest node (its node-time there): the order of the matching."""
    return s.job.predicted[j] * float(s.job.gpus[j]) * s.nodes.inv_cap_min


@jitable
def on_wait(s, p, j, now):
    """j waits: into its tenant's list, in footprint order."""
    k = s.job.tenant[j]
    sorted_add(p.w_buf, p.w_len, k, p.rank[j])
    p.w_count[k, s.job.gpus[j]] += 1


@jitable
def on_unwait(s, p, j):
    k = s.job.tenant[j]
    sorted_remove(p.w_buf, p.w_len, k, p.rank[j])
    p.w_count[k, s.job.gpus[j]] -= 1


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
def allox_order(s, p, head):
    """Allox.matched_order: jobs `head` (in footprint order) in the order of the min-cost matching of
    jobs to (node, position): first on its node first, then footprint, then job."""
    L = len(head)
    if L <= 1 or one_position_each(s, p, head):
        return head
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
        mbest[i] = footprint(s, mj[i])
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
    out = np.empty(nm, np.int64)
    for i in range(nm):
        out[i] = mj[rank[i]]
    return out


@jitable
def next_jobs(p, tenants, cursor, heads, out, count):
    """The next `count` jobs of `tenants` in footprint order into out[:count]: a merge of their lists
    from `cursor` on (`heads`: the rank at each tenant's cursor, -1 past its end), which moves past
    them. The lists are read once, not per job (each read through the state costs reference counts
    in the compiled loop)."""
    w_buf = p.w_buf
    w_len = p.w_len
    by_rank = p.by_rank
    for c in range(count):
        best_t = -1
        for t in range(len(tenants)):
            if heads[t] >= 0 and (best_t < 0 or heads[t] < heads[best_t]):
                best_t = t
        out[c] = by_rank[heads[best_t]]
        k = tenants[best_t]
        cursor[best_t] += 1
        heads[best_t] = w_buf[k][cursor[best_t]] if cursor[best_t] < w_len[k] else -1


@jitable
def none_fits(s, p, tenants, total):
    """Whether no waiting job of `tenants` can be placed on `total` free GPUs any more: each gang size
    they have up to `total` has missed since the last choice (place_in_order would pass them all)."""
    missed = s.plan.missed
    top = total if total < s.job.maxg else s.job.maxg
    for g in range(1, top + 1):
        if not missed[g]:
            for k in tenants:
                if p.w_count[k, g] > 0:
                    return False
    return True


@jitable
def place_tenants(s, p, tenants, limit, now, at_round, chosen):
    """The jobs of `tenants`: the `limit` smallest footprints in the order of their matching, then
    the rest by footprint, each placed if it fits (place_in_order); the rest are read only while
    some of them may still fit."""
    m = 0
    for k in tenants:
        m += p.w_len[k]
    cursor = np.zeros(len(tenants), np.int64)
    heads = np.empty(len(tenants), np.int64)
    for t in range(len(tenants)):
        heads[t] = p.w_buf[tenants[t]][0]  # every tenant of a part has a waiting job
    head = np.empty(limit if limit < m else m, np.int64)
    next_jobs(p, tenants, cursor, heads, head, len(head))
    order = allox_order(s, p, head)
    place_in_order(s, order, len(order), now, at_round, chosen)
    left = m - len(head)
    chunk = np.empty(PLACE_CHUNK, np.int64)
    while left > 0:
        total = total_now(s, at_round)
        if total == 0 or none_fits(s, p, tenants, total):
            return
        count = PLACE_CHUNK if left > PLACE_CHUNK else left
        next_jobs(p, tenants, cursor, heads, chunk, count)
        place_in_order(s, chunk, count, now, at_round, chosen)
        left -= count


@jitable
def decide(s, p, at_round, now, chosen):
    """Allox.select: the ⌈α·tenants⌉ least-progressed tenants' jobs by the matching, then the
    other tenants' jobs the same way. (A kernel that never preempts: every decision is a fill of
    waiting jobs, none of them preempted.)"""
    count_decision(s, s.q.n_wait[0])
    n_have = 0
    for k in range(s.job.T):
        if p.w_len[k] > 0:
            n_have += 1
    ks = np.empty(n_have, np.int64)
    rk = np.empty(n_have)
    i = 0
    for k in range(s.job.T):
        if p.w_len[k] > 0:
            advance(s, k, now)
            ks[i] = k
            rk[i] = rho_of(s.led.att[k], s.led.fair[k])
            i += 1
    ks = ks[np.argsort(rk, kind="mergesort")]  # (ρ_tenant, k)
    first = math.ceil(p.params.alpha * len(ks) - _EPS)
    if first < 1:
        first = 1
    for part in range(2):
        tenants = ks[:first] if part == 0 else ks[first:]
        if len(tenants) == 0:
            continue
        smallest = s.job.maxg
        for k in tenants:
            for g in range(1, smallest):
                if p.w_count[k, g] > 0:
                    smallest = g
                    break
        total = total_now(s, at_round)
        limit = total // smallest
        if limit < 1:
            limit = 1
        if limit > p.params.match_max:
            limit = p.params.match_max
        if total == 0:
            return
        place_tenants(s, p, tenants, limit, now, at_round, chosen)
        if total_now(s, at_round) == 0:
            return


KERNEL = kernel(Allox.name, AlloxParams, AlloxState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait, preemptive=False)  # its jobs wait once: a subclass that preempts writes its own rule
