"""The cluster simulator compiled (numba) for the built-in policies it knows: the same schedule as the
Python simulator (schedulers.cluster.rounds on schedulers.engine), bit for bit.

The Python simulator is the reference and the general one (plugins, subclasses, `check=True`, node
restrictions); this loop is a transcription of it for the built-in policy classes that name one of
its `KERNELS` in their `fast_loop` (schedulers.policy's registry is the list), and it is used only
where it gives the same run: `schedulers.cluster.metrics.simulate_fairness` picks it as
`ATLAS_BENCH_JIT` says (see schedulers.jit) for exactly those classes. Everything the
Python code computes is computed here with the same IEEE operations in the same order — the
engine's virtual clock of the running group, the completion tolerance, the LTGF ledgers (advanced
for the same tenants at the same instants, so that every running sum is split the same way), the
tenant-loss windows, the round plan (unclaimed GPUs first, compaction), undo of a preemption at the
same instant, cold starts, the executed-allocation stretches and the work-conservation count —
so the per-job table, the allocations, the tenant windows and every metric are identical
(tests/schedulers/test_cluster_compiled.py runs both on several workloads and compares them).

The orders that the Python code takes from a set or a dict (running jobs, waiting jobs) never
decide anything in these policies: every decision sorts by a key that ends in the job index.

Importing it imports numba (`schedulers.cluster.metrics` imports it only when the compiled loop is
to run). AlloX's min-cost matching is scipy's `linear_sum_assignment`, called from the loop (an
object-mode block), so that its choice among equal-cost matchings is the Python run's. May import
numpy, scipy, numba and schedulers.jit; the rest lazily.
"""

from __future__ import annotations

import heapq
import math
import threading

import numba
import numpy as np
from scipy.optimize import linear_sum_assignment

from schedulers import jit


def _compiled(function):
    return jit.njit(function)

# the branches of `simulate` by the `fast_loop` a policy class names (its `policy` argument)
KERNELS = {"srtf-oracle": 0, "astraea": 1, "astraea-p": 2, "gandiva-fair": 3, "themis": 4, "tiresias-l": 5,
           "hived": 6, "allox": 7}
_EPS = 1e-9
_REL_TOL = 1e-11
_RUN, _COLD, _IDLE = 0, 1, -1
#: a first call that takes longer than this to compile or load the loop gets the notice of `run`
COMPILE_NOTICE_AFTER_S = 2.0
COMPILE_NOTICE = ("compiling the cluster simulator for this machine (once after installing: one to two minutes; "
                  "cached for later runs)")



@_compiled
def _best_fit(fr, need, use_used, used, owner, restrict):
    """The node with the fewest free GPUs that still holds `need` (lowest index), -1 if none; only
    nodes of tenant `restrict` (HiveD's cells) when it is >= 0, not those marked `used`."""
    best, best_free = -1, 0
    for i in range(fr.shape[0]):
        f = fr[i]
        if f >= need and not (use_used and used[i]) and (restrict < 0 or owner[i] == restrict):
            if best < 0 or f < best_free:
                best, best_free = i, f
    return best


@_compiled
def find_placement(fr, total, g, cap, node_order, maxcap, used, found_node, found_k, owner, restrict):
    """Cluster.find on free counts `fr` (sum `total`): the consolidated placement of a g-GPU gang
    (on the nodes of tenant `restrict` only, when >= 0) written into found_node / found_k; its
    number of parts (0: none)."""
    if g > total or g < 1:
        return 0
    if g <= maxcap:
        node = _best_fit(fr, g, False, used, owner, restrict)
        if node >= 0:
            found_node[0] = node
            found_k[0] = g
            return 1
    N = fr.shape[0]
    for i in range(N):
        used[i] = False
    parts = 0
    remaining = g
    for idx in range(N):  # wholly free nodes, largest first (ties: index)
        nd = node_order[idx]
        if fr[nd] != cap[nd] or not (restrict < 0 or owner[nd] == restrict):
            continue
        if remaining <= maxcap:
            last = _best_fit(fr, remaining, True, used, owner, restrict)
            if last >= 0:
                found_node[parts] = last
                found_k[parts] = remaining
                return parts + 1
        take = cap[nd] if cap[nd] < remaining else remaining
        found_node[parts] = nd
        found_k[parts] = take
        parts += 1
        used[nd] = True
        remaining -= take
        if remaining == 0:
            return parts
    if 0 < remaining <= maxcap:
        last = _best_fit(fr, remaining, True, used, owner, restrict)
        if last >= 0:
            found_node[parts] = last
            found_k[parts] = remaining
            return parts + 1
    return 0


@_compiled
def _windows(t0, t1, run, share8, wa, wf, W):
    """LTGF._windows: attained and eq8 fair GPU·s of [t0, t1) into the tenant's windows."""
    w = int(t0 // W)
    while True:
        end = t1 if t1 < (w + 1) * W else (w + 1) * W
        lo = w * W
        d = end - (t0 if t0 > lo else lo)
        if d > 0:
            while len(wa) <= w:
                wa.append(0.0)
                wf.append(0.0)
            wa[w] = wa[w] + run * d
            wf[w] = wf[w] + share8 * d
        if end >= t1:
            break
        w += 1


@_compiled
def advance_tenant(k, t, t_last, run_gpus, demand, active_w, quota, eq16, att, fair, fair8, G, G_ref, xval, wa, wf,
                   window_s):
    """LTGF._advance: tenant k's integrals up to t."""
    t0 = t_last[k]
    dt = t - t0
    if dt <= 0.0:
        return
    t_last[k] = t
    run = run_gpus[k]
    share8 = demand[k] if demand[k] <= quota[k] else quota[k]
    share = quota[k] if eq16 else share8
    att[k] += run * dt
    fair[k] += share * dt
    fair8[k] += share8 * dt
    if active_w[k] > 0.0:
        c = share / active_w[k]
        for x in range(xval.shape[0]):
            if G_ref[k, x] > 0:
                v = xval[x]
                G[k, x] += (v if v < c else c) * dt
    if run != 0 or share8 != 0:
        _windows(t0, t, float(run), float(share8), wa, wf, window_s)



@_compiled
def _sync(node, fr2, tot, held):
    """RoundPlan._sync: a node's unclaimed GPUs = planned free minus held by undecided running jobs."""
    v = fr2[1, node] - held[node]
    if v < 0:
        v = 0
    tot[2] += v - fr2[2, node]
    fr2[2, node] = v


@_compiled
def place_job(j, hold, preempted_now, at_round, g, pl_len, pl_node, pl_k, fr2, tot, held, plan_len, plan_node,
              plan_k, planned, cap, node_order, maxcap, used, found_node, found_k, owner, restrict):
    """ClusterPolicy.try_place of job j on the round plan (at_round: rows 1 and 2 of fr2) or the real
    cluster (row 0): its held GPUs if it runs (or was preempted at this instant) and they are free
    there, else a consolidated placement; the plan is written into plan_len/plan_node/plan_k."""
    row = 1 if at_round else 0
    if (hold or preempted_now) and pl_len[j] > 0:
        ok = True
        for i in range(pl_len[j]):
            if fr2[row, pl_node[j, i]] < pl_k[j, i] or not (restrict < 0 or owner[pl_node[j, i]] == restrict):
                ok = False
                break
        if ok:
            for i in range(pl_len[j]):
                node, k = pl_node[j, i], pl_k[j, i]
                fr2[row, node] -= k
                tot[row] -= k
                if at_round:
                    if hold:  # RoundPlan.renew: planned and held drop together
                        held[node] -= k
                    else:
                        _sync(node, fr2, tot, held)
            if plan_len[j] == 0:
                planned.append(j)
            plan_len[j] = pl_len[j]
            for i in range(pl_len[j]):
                plan_node[j, i] = pl_node[j, i]
                plan_k[j, i] = pl_k[j, i]
            return True
    if g > tot[row]:
        return False
    parts = 0
    if at_round:
        parts = find_placement(fr2[2], tot[2], g, cap, node_order, maxcap, used, found_node, found_k, owner, restrict)
    if parts == 0:
        parts = find_placement(fr2[row], tot[row], g, cap, node_order, maxcap, used, found_node, found_k, owner,
                               restrict)
    if parts == 0:
        return False
    for i in range(parts):
        fr2[row, found_node[i]] -= found_k[i]
        tot[row] -= found_k[i]
        if at_round:
            _sync(found_node[i], fr2, tot, held)
    if at_round and hold:  # RoundPlan.decided: the GPUs it held are no longer held
        for i in range(pl_len[j]):
            held[pl_node[j, i]] -= pl_k[j, i]
            _sync(pl_node[j, i], fr2, tot, held)
    if plan_len[j] == 0:
        planned.append(j)
    plan_len[j] = parts
    for i in range(parts):
        plan_node[j, i] = found_node[i]
        plan_k[j, i] = found_k[i]
    return True


def _assignment(cost):
    """scipy's linear_sum_assignment(cost) (rows, columns), called from the compiled loop."""
    with numba.objmode(rows="int64[:]", cols="int64[:]"):
        r, c = linear_sum_assignment(cost)
        rows = np.asarray(r, np.int64)
        cols = np.asarray(c, np.int64)
    return rows, cols


_assignment = jit.njit(_assignment, nogil=False)  # it holds the GIL to call scipy


def _poll() -> None:
    """Called from the loop every few ten thousand events: Python runs any pending signal handler
    here (Ctrl-C, the `--fairness-limit` timer), whose exception ends the loop (see `run`)."""


def simulate(submit, size, gpus, tenant, weight, xid, xval, predicted, cap, node_order, quota, lease_s,
             interval_s, cold_start_s, window_s, eq16, rho_submit, policy, bonus, pol_param, pol_int, owner,
             max_parts):
    n = submit.shape[0]
    N = cap.shape[0]
    T = quota.shape[0]
    X = xval.shape[0]
    P = max_parts
    maxcap = 0
    for i in range(N):
        if cap[i] > maxcap:
            maxcap = cap[i]
    maxg = 0
    for j in range(n):
        if gpus[j] > maxg:
            maxg = gpus[j]
    inf = math.inf
    nan = math.nan

    # ----- engine -----------------------------------------------------------------------------
    group_of = np.full(n, _IDLE, np.int64)
    base = np.zeros(n)
    vjoin = np.zeros(n)
    stamp = np.zeros(n, np.int64)
    completion = np.full(n, nan)
    start = np.full(n, nan)
    g_V = np.zeros(2)
    g_rate = np.array([1.0, 0.0])
    g_count = np.zeros(2, np.int64)
    run_heap = [(0.0, 0, 0)]
    run_heap.clear()
    wakes = [0.0]
    wakes.clear()
    moves_j = [0]
    moves_j.clear()
    moves_g = [0]
    moves_g.clear()
    wake_req = np.full(1, inf)

    # ----- cluster ----------------------------------------------------------------------------
    # free GPUs per node: the cluster (row 0), a round's plan (1) and its unclaimed GPUs (2), totals in tot
    fr2 = np.zeros((3, N), np.int64)
    tot = np.zeros(3, np.int64)
    free = fr2[0]
    free_total = tot[0:1]
    plan_free = fr2[1]
    plan_total = tot[1:2]
    unclaimed = fr2[2]
    unclaimed_total = tot[2:3]
    for i in range(N):
        free[i] = cap[i]
    free_total[0] = cap.sum()
    M = free_total[0]

    # ----- LTGF ledgers -------------------------------------------------------------------------
    t_last = np.zeros(T)
    run_gpus = np.zeros(T, np.int64)
    demand = np.zeros(T, np.int64)
    active_w = np.zeros(T)
    att = np.zeros(T)
    fair = np.zeros(T)
    fair8 = np.zeros(T)
    G = np.zeros((T, X))
    G_ref = np.zeros((T, X), np.int64)
    job_base = np.zeros(n)
    job_fair = np.zeros(n)
    job_att = np.zeros(n)
    hold_since = np.full(n, nan)
    win_att = [[0.0] for _ in range(T)]
    win_fair8 = [[0.0] for _ in range(T)]
    for k in range(T):
        win_att[k].clear()
        win_fair8[k].clear()

    # ----- policy state -------------------------------------------------------------------------
    pl_len = np.zeros(n, np.int64)  # placement (0: never placed)
    pl_node = np.zeros((n, P), np.int64)
    pl_k = np.zeros((n, P), np.int64)
    plan_len = np.zeros(n, np.int64)  # plan of the current decision (0: not in the plan)
    plan_node = np.zeros((n, P), np.int64)
    plan_k = np.zeros((n, P), np.int64)
    planned = [0]
    planned.clear()
    holding = np.zeros(n, np.bool_)
    hold_list = np.zeros(n, np.int64)
    hold_pos = np.full(n, -1, np.int64)
    n_hold = np.zeros(1, np.int64)
    n_wait = np.zeros(1, np.int64)
    wait_demand = np.zeros(maxg + 1, np.int64)
    cold_until = np.full(n, nan)
    cold_heap = [(0.0, 0)]
    cold_heap.clear()
    started = np.zeros(n, np.bool_)
    cold_spent = np.zeros(n)
    undo_until = np.full(n, nan)  # this round's undo record of a cold start cut short (NaN: none)
    undo_spent = np.zeros(n)
    undo_list = [0]
    undo_list.clear()
    preempted = np.zeros(n, np.int64)
    preempted_at = np.full(n, -1.0)
    migrations = np.zeros(n, np.int64)
    # rounds, dropped choices, work-conservation gaps, events, decisions (rounds and fills), candidates
    # offered to them in all, most candidates of one decision
    counters = np.zeros(7, np.int64)
    flags = np.zeros(1, np.bool_)  # dirty
    next_round = np.full(1, lease_s)
    arrivals = [0]
    arrivals.clear()
    seg_job = [0]
    seg_job.clear()
    seg_start = [0.0]
    seg_start.clear()
    seg_end = [0.0]
    seg_end.clear()
    seg_kind = [0]
    seg_kind.clear()
    seg_pl = [0]  # offset of the stretch's placement in pl_flat_node / pl_flat_k
    seg_pl.clear()
    seg_pn = [0]
    seg_pn.clear()
    pl_flat_node = [0]
    pl_flat_node.clear()
    pl_flat_k = [0]
    pl_flat_k.clear()
    pl_flat_of = np.full(n, -1, np.int64)  # where the job's current placement sits in the flat lists
    seg_open = np.full(n, -1, np.int64)
    last_seg = np.full(n, -1, np.int64)
    # planning copies of a round
    held = np.zeros(N, np.int64)
    packed = np.zeros(N, np.int64)
    packed_total = np.zeros(1, np.int64)
    used = np.zeros(N, np.bool_)
    found_node = np.zeros(P + 1, np.int64)
    found_k = np.zeros(P + 1, np.int64)
    # per-decision scratch
    missed = np.zeros(maxg + 1, np.bool_)
    missed_list = [0]
    missed_list.clear()
    tenant_seen = np.zeros(T, np.bool_)
    kept = np.zeros(n, np.bool_)
    preemptive = policy != 7  # AlloX never preempts: no lease rounds
    inv_cap = 1.0 / cap.astype(np.float64)
    inv_cap_min = inv_cap.min()
    plan_restrict = np.full(n, -1, np.int64)  # the tenant whose cells a job was planned in (-1: anywhere)
    wait_since = np.zeros(n)
    # the waiting jobs in job order (every decision but ASTRAEA's reads its candidates in job order),
    # and the tenants HiveD's first pass blocked
    ws = np.zeros(n, np.int64)
    blocked = np.zeros(T, np.bool_)
    # Tiresias-L: offsets, queues of the waiting jobs, promotion instants
    offset = np.zeros(n)
    queue_of = np.full(n, -1, np.int64)
    starving = [(0.0, 0.0, 0)]
    starving.clear()
    # Gandiva_fair: stride passes (its tickets are the quotas)
    pass_ = np.zeros(T)
    was_active = np.zeros(T, np.bool_)
    # Themis: contention integral, and (area, time) when each job became active
    area = np.zeros(1)
    area_t = np.zeros(1)
    n_active = np.zeros(1, np.int64)
    seen = np.zeros(n, np.bool_)
    seen_area = np.zeros(n)
    seen_t = np.zeros(n)
    # ASTRAEA(-P): bonus > 0 and ρ_job >= 0 put a tenant's never-started candidates (tier A) before the
    # ones that ran (tier B). Tier A's key is fixed (j; (p̂, j) for ASTRAEA-P), so each tenant's waiting
    # never-started jobs are kept in key order (a_buf), with a count per gang size. Tier B's key, ρ_job,
    # moves with time: each tenant's waiting jobs that ran (sw_buf, counted per gang size) and running
    # jobs (hb_buf) are kept as sets, keyed into a heap (b_heap) when a decision first reaches them.
    a_buf = [np.zeros(8, np.int64) for _ in range(T)]
    a_len = np.zeros(T, np.int64)
    a_count = np.zeros((T, maxg + 1), np.int64)
    sw_buf = [np.zeros(8, np.int64) for _ in range(T)]
    sw_len = np.zeros(T, np.int64)
    sw_pos = np.full(n, -1, np.int64)
    s_count = np.zeros((T, maxg + 1), np.int64)
    hb_buf = [np.zeros(8, np.int64) for _ in range(T)]
    hb_len = np.zeros(T, np.int64)
    hb_pos = np.full(n, -1, np.int64)
    b_heap = [[(0.0, 0.0, 0)] for _ in range(T)]
    for k in range(T):
        b_heap[k].clear()
    b_built = np.zeros(T, np.bool_)
    w_count = np.zeros(T, np.int64)  # waiting jobs per tenant
    round_at = np.full(1, -1.0)  # time of the last round

    # ----- engine helpers ---------------------------------------------------------------------
    def attained_engine(j):
        g = group_of[j]
        if g == _IDLE:
            return base[j]
        return base[j] + (g_V[g] - vjoin[j])

    def move(j, g):
        old = group_of[j]
        if old == g:
            return
        if old != _IDLE:
            base[j] += g_V[old] - vjoin[j]
            g_count[old] -= 1
        stamp[j] += 1
        group_of[j] = g
        if g != _IDLE:
            V = g_V[g]
            vjoin[j] = V
            g_count[g] += 1
            if g == _RUN:
                heapq.heappush(run_heap, (V + size[j] - base[j], j, stamp[j]))

    def assign(j, g):
        moves_j.append(j)
        moves_g.append(g)

    def wake_at(t):
        if t < wake_req[0]:
            wake_req[0] = t

    def find(fr, total, g, restrict):
        return find_placement(fr, total, g, cap, node_order, maxcap, used, found_node, found_k, owner, restrict)

    # ----- LTGF ---------------------------------------------------------------------------------
    def advance(k, t):
        advance_tenant(k, t, t_last, run_gpus, demand, active_w, quota, eq16, att, fair, fair8, G, G_ref, xval,
                       win_att[k], win_fair8[k], window_s)

    def ledger_arrive(j, t):
        k = tenant[j]
        advance(k, t)
        demand[k] += gpus[j]
        active_w[k] += weight[j]
        x = xid[j]
        if G_ref[k, x] == 0:
            G[k, x] = 0.0
        G_ref[k, x] += 1
        job_base[j] = G[k, x]

    def ledger_hold(j, t):
        k = tenant[j]
        advance(k, t)
        run_gpus[k] += gpus[j]
        hold_since[j] = t

    def ledger_release(j, t):
        k = tenant[j]
        advance(k, t)
        run_gpus[k] -= gpus[j]
        job_att[j] += gpus[j] * (t - hold_since[j])
        hold_since[j] = nan

    def ledger_complete(j, t):
        if not math.isnan(hold_since[j]):
            ledger_release(j, t)
        k = tenant[j]
        advance(k, t)
        x = xid[j]
        job_fair[j] = weight[j] * (G[k, x] - job_base[j])
        G_ref[k, x] -= 1
        demand[k] -= gpus[j]
        active_w[k] -= weight[j]
        if active_w[k] < 1e-12:
            active_w[k] = 0.0

    def job_rho(j, t):
        """ρ_job of a candidate (not completed) once its tenant is advanced to t."""
        h = hold_since[j]
        attained = job_att[j] + (0.0 if math.isnan(h) else gpus[j] * (t - h))
        if attained <= 0.0:
            return 0.0
        k = tenant[j]
        f = weight[j] * (G[k, xid[j]] - job_base[j])
        return attained / f if f > 0.0 else inf

    # ----- queues -------------------------------------------------------------------------------
    def room(bufs, lens, k):
        """Tenant k's buffer bufs[k], doubled first if its lens[k] jobs fill it."""
        buf = bufs[k]
        if lens[k] == len(buf):
            grown = np.empty(2 * len(buf), np.int64)
            grown[:len(buf)] = buf
            bufs[k] = grown
            return grown
        return buf

    def bag_add(bufs, lens, pos, k, j):
        """j into tenant k's unordered set bufs[k][:lens[k]] (pos: where each job sits)."""
        length = lens[k]
        buf = room(bufs, lens, k)
        buf[length] = j
        pos[j] = length
        lens[k] = length + 1

    def bag_remove(bufs, lens, pos, k, j):
        i = pos[j]
        length = lens[k] - 1
        buf = bufs[k]
        last = buf[length]
        buf[i] = last
        pos[last] = i
        lens[k] = length
        pos[j] = -1

    def hold_add(j):
        if policy == 1 or policy == 2:
            bag_add(hb_buf, hb_len, hb_pos, tenant[j], j)
        holding[j] = True
        hold_pos[j] = n_hold[0]
        hold_list[n_hold[0]] = j
        n_hold[0] += 1

    def hold_remove(j):
        if policy == 1 or policy == 2:
            bag_remove(hb_buf, hb_len, hb_pos, tenant[j], j)
        holding[j] = False
        i = hold_pos[j]
        last = hold_list[n_hold[0] - 1]
        hold_list[i] = last
        hold_pos[last] = i
        n_hold[0] -= 1
        hold_pos[j] = -1

    def level_of(j, a):
        """TiresiasL.level: thresholds passed by the attained GPU·s since the job's offset."""
        lv = a - offset[j]
        q = 0
        if lv >= 3600.0:
            q += 1
        if lv >= 36000.0:
            q += 1
        return q

    def ledger_attained(j, t):
        h = hold_since[j]
        return job_att[j] + (0.0 if math.isnan(h) else gpus[j] * (t - h))

    def a_before(a, b):
        """Tier-A order: j, or (p̂, j) for ASTRAEA-P with NaN last, as numpy's stable sort has it."""
        if policy == 2:
            pa = predicted[a]
            pb = predicted[b]
            if pa < pb or (math.isnan(pb) and not math.isnan(pa)):
                return True
            if pb < pa or (math.isnan(pa) and not math.isnan(pb)):
                return False
        return a < b

    def a_position(buf, length, j):
        """The first index of buf[:length] not before j."""
        lo = 0
        hi = length
        while lo < hi:
            mid = (lo + hi) // 2
            if a_before(buf[mid], j):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def tier_add(j):
        k = tenant[j]
        w_count[k] += 1
        if started[j]:
            bag_add(sw_buf, sw_len, sw_pos, k, j)
            s_count[k, gpus[j]] += 1
            return
        length = a_len[k]
        buf = room(a_buf, a_len, k)
        pos = a_position(buf, length, j)
        for i in range(length, pos, -1):
            buf[i] = buf[i - 1]
        buf[pos] = j
        a_len[k] = length + 1
        a_count[k, gpus[j]] += 1

    def tier_remove(j):
        k = tenant[j]
        w_count[k] -= 1
        if started[j]:
            bag_remove(sw_buf, sw_len, sw_pos, k, j)
            s_count[k, gpus[j]] -= 1
            return
        length = a_len[k]
        buf = a_buf[k]
        pos = a_position(buf, length, j)
        for i in range(pos, length - 1):
            buf[i] = buf[i + 1]
        a_len[k] = length - 1
        a_count[k, gpus[j]] -= 1

    def wait_add(j, now):
        if policy == 4 and not seen[j]:  # Themis: the contention integral when the job became active
            seen[j] = True
            seen_area[j] = area[0]
            seen_t[j] = now
        if policy == 1 or policy == 2:  # ASTRAEA keeps its tiers instead of the job-order list
            tier_add(j)
        else:
            pos = np.searchsorted(ws[:n_wait[0]], j)  # the waiting jobs in job order
            for i in range(n_wait[0], pos, -1):
                ws[i] = ws[i - 1]
            ws[pos] = j
        n_wait[0] += 1
        wait_demand[gpus[j]] += 1
        wait_since[j] = now
        if policy == 5:  # Tiresias-L: its queue, and when it may be promoted
            a = ledger_attained(j, now)
            queue_of[j] = level_of(j, a)
            if a > 0:
                heapq.heappush(starving, (now + 2.0 * attained_engine(j), now, j))

    def wait_remove(j):
        if policy == 1 or policy == 2:
            tier_remove(j)
        else:
            pos = np.searchsorted(ws[:n_wait[0]], j)
            for i in range(pos, n_wait[0] - 1):
                ws[i] = ws[i + 1]
        n_wait[0] -= 1
        wait_demand[gpus[j]] -= 1
        queue_of[j] = -1

    # ----- placements -----------------------------------------------------------------------------
    def release_placement(j):
        for i in range(pl_len[j]):
            free[pl_node[j, i]] += pl_k[j, i]
            free_total[0] += pl_k[j, i]

    def plan_fits_on(fr, j):
        for i in range(plan_len[j]):
            if fr[plan_node[j, i]] < plan_k[j, i]:
                return False
        return True

    def plan_equals_placement(j):
        if plan_len[j] != pl_len[j]:
            return False
        for i in range(pl_len[j]):
            if plan_node[j, i] != pl_node[j, i] or plan_k[j, i] != pl_k[j, i]:
                return False
        return True

    def set_plan_from_placement(j):
        if plan_len[j] == 0:
            planned.append(j)
        plan_len[j] = pl_len[j]
        for i in range(pl_len[j]):
            plan_node[j, i] = pl_node[j, i]
            plan_k[j, i] = pl_k[j, i]

    def clear_plan():
        for j in planned:
            plan_len[j] = 0
        planned.clear()

    # ----- segments (executed allocations) -------------------------------------------------------
    def open_segment(j, t, kind):
        seg_open[j] = len(seg_job)
        last_seg[j] = len(seg_job)
        seg_job.append(j)
        seg_start.append(t)
        seg_end.append(nan)
        seg_kind.append(kind)
        seg_pl.append(pl_flat_of[j])
        seg_pn.append(pl_len[j])

    def close_segment(j, t):
        i = seg_open[j]
        if i >= 0:
            seg_end[i] = t
            seg_open[j] = -1

    def reopen_segment(j, t):
        i = last_seg[j]
        if i >= 0 and seg_end[i] == t:
            seg_end[i] = nan
            seg_open[j] = i
            return
        open_segment(j, t, 1 if not math.isnan(undo_until[j]) else 0)

    # ----- the mechanics of schedulers.cluster.rounds.ClusterPolicy ------------------------------
    def complete(j, now):
        if holding[j]:
            hold_remove(j)
            release_placement(j)
            cold_until[j] = nan
            close_segment(j, now)
            flags[0] = True
        ledger_complete(j, now)

    def start_job(j, now):
        """_start: j takes its plan (already taken from the cluster)."""
        wait_remove(j)
        undo = preempted_at[j] == now and plan_equals_placement(j)
        if not undo:
            pl_len[j] = plan_len[j]
            pl_flat_of[j] = len(pl_flat_node)
            for i in range(plan_len[j]):
                pl_node[j, i] = plan_node[j, i]
                pl_k[j, i] = plan_k[j, i]
                pl_flat_node.append(plan_node[j, i])
                pl_flat_k.append(plan_k[j, i])
        hold_add(j)
        ledger_hold(j, now)
        if undo:
            preempted[j] -= 1
            preempted_at[j] = -1.0
            reopen_segment(j, now)
            if not math.isnan(undo_until[j]):
                until = undo_until[j]
                cold_spent[j] -= undo_spent[j]
                undo_until[j] = nan
                cold_until[j] = until
                heapq.heappush(cold_heap, (until, j))
                assign(j, _COLD)
            else:
                assign(j, _RUN)
            return
        if started[j] and cold_start_s > 0:
            until = now + cold_start_s
            cold_until[j] = until
            heapq.heappush(cold_heap, (until, j))
            open_segment(j, now, 1)
            assign(j, _COLD)
        else:
            started[j] = True
            open_segment(j, now, 0)
            assign(j, _RUN)

    def preempt(j, now):
        hold_remove(j)
        release_placement(j)
        until = cold_until[j]
        if not math.isnan(until):
            cold_until[j] = nan
            spent = now - (until - cold_start_s)
            cold_spent[j] += spent
            undo_until[j] = until
            undo_spent[j] = spent
            undo_list.append(j)
        ledger_release(j, now)
        close_segment(j, now)
        preempted[j] += 1
        preempted_at[j] = now
        wait_add(j, now)
        assign(j, _IDLE)

    # round plan: plan_free (planned), held (GPUs of undecided running candidates), unclaimed
    def try_place(j, now, at_round, restrict):
        """ClusterPolicy.try_place (restrict >= 0: allowed = that tenant's HiveD cells)."""
        ok = place_job(j, holding[j], preempted_at[j] == now, at_round, gpus[j], pl_len, pl_node, pl_k, fr2, tot,
                       held, plan_len, plan_node, plan_k, planned, cap, node_order, maxcap, used, found_node,
                       found_k, owner, restrict)
        if ok:
            plan_restrict[j] = restrict
        return ok

    def attempt(j, now, at_round, restrict):
        """try_place, without the placement search for a waiting job whose gang size already found
        none in this decision since the last choice: the free GPUs (the plan's, at a round) change
        only when a job is placed, and a waiting job's placement is a function of them alone (the
        Python rules call try_place, which fails again; place_leftovers skips it the same way)."""
        plain = restrict < 0 and not holding[j] and preempted_at[j] != now
        g = gpus[j]
        if plain and missed[g]:
            return False
        if try_place(j, now, at_round, restrict):
            for m in missed_list:
                missed[m] = False
            missed_list.clear()
            return True
        if plain:
            missed[g] = True
            missed_list.append(g)
        return False

    def place_in_order(order, count, now, at_round, chosen):
        """place_leftovers: each job of order[:count] that fits, in order."""
        for i in range(count):
            total = plan_total[0] if at_round else free_total[0]
            if total == 0:
                break
            j = order[i]
            if gpus[j] <= total and attempt(j, now, at_round, -1):
                chosen.append(j)

    def candidates(at_round):
        """The decision's candidates in job order: the running jobs (at a round) merged with the
        waiting ones, which are kept in job order."""
        m = (n_hold[0] if at_round else 0) + n_wait[0]
        counters[4] += 1
        counters[5] += m
        if m > counters[6]:
            counters[6] = m
        if not at_round:
            return ws[:n_wait[0]].copy()
        running = np.sort(hold_list[:n_hold[0]].copy())
        out = np.empty(m, np.int64)
        r = 0
        w = 0
        for c in range(m):
            if w >= n_wait[0] or (r < len(running) and running[r] < ws[w]):
                out[c] = running[r]
                r += 1
            else:
                out[c] = ws[w]
                w += 1
        return out

    def select_srtf(at_round, now, chosen):
        cand = candidates(at_round)
        rem = np.empty(len(cand))
        for i in range(len(cand)):
            rem[i] = size[cand[i]] - attained_engine(cand[i])
        order = cand[np.argsort(rem, kind="mergesort")]  # (remaining, j): stable on the sorted jobs
        place_in_order(order, len(order), now, at_round, chosen)

    def total_now(at_round):
        return plan_total[0] if at_round else free_total[0]

    def rho_of(a, f):
        if f > 0.0:
            return a / f
        return 0.0 if a <= 0.0 else inf

    def may_fit(counts, k, total):
        """Whether a plain waiting job of tenant k counted in counts[k] may still be placed: some gang
        size of them fits in `total` and has not missed since the last choice (else attempt refuses
        every one of them, with nothing changed)."""
        top = total if total < maxg else maxg
        for g in range(1, top + 1):
            if counts[k, g] > 0 and not missed[g]:
                return True
        return False

    def tier_b(k, at_round, now):
        """Tenant k's tier B (its waiting jobs that ran, and its running jobs at a round) as a heap of
        (ρ_job, [max(0, p̂ − done) for ASTRAEA-P,] j): popped in the order of the sorted keys."""
        h = b_heap[k]
        h.clear()
        for part in range(2 if at_round else 1):
            buf = sw_buf[k] if part == 0 else hb_buf[k]
            for i in range(sw_len[k] if part == 0 else hb_len[k]):
                j = buf[i]
                key2 = 0.0  # ASTRAEA has no second key
                if policy == 2:
                    r = predicted[j] - attained_engine(j)
                    key2 = r if r > 0.0 else 0.0
                h.append((job_rho(j, now), key2, j))
        heapq.heapify(h)
        b_built[k] = True

    def select_astraea(at_round, now, chosen):
        """Astraea.select: tenants by pre-charged ρ_tenant, each tenant's candidates best first (tier A
        in its kept order, then tier B, keyed when a decision first reaches it); then the skipped
        tenants' candidates in (ρ_tenant, k) order. At a fill with no round at this instant every
        candidate is a plain waiting job, so a tier none of whose gang sizes can be placed is passed
        over unread."""
        m = (n_hold[0] if at_round else 0) + n_wait[0]
        counters[4] += 1
        counters[5] += m
        if m > counters[6]:
            counters[6] = m
        if at_round:
            round_at[0] = now
        quick = not at_round and round_at[0] != now
        head = np.zeros(T, np.int64)
        end = np.zeros(T, np.int64)
        charged = np.zeros(T)
        fair_k = np.zeros(T)
        heap = [(0.0, 0)]
        heap.clear()
        for k in range(T):  # every tenant with a candidate is advanced, as when each ρ_job is read
            b_built[k] = False
            end[k] = w_count[k] + (hb_len[k] if at_round else 0)
            if end[k] > 0:
                advance(k, now)
                charged[k] = att[k]
                fair_k[k] = fair[k]
                heap.append((rho_of(charged[k], fair_k[k]), k))
        heapq.heapify(heap)
        skipped = [0]
        skipped.clear()
        while heap and total_now(at_round) > 0:
            _, k = heapq.heappop(heap)
            in_a = head[k] < a_len[k]
            if in_a:
                j = a_buf[k][head[k]]
            else:
                if not b_built[k]:
                    tier_b(k, at_round, now)
                j = b_heap[k][0][2]
            if not attempt(j, now, at_round, -1):
                skipped.append(k)
                continue
            if not in_a:
                heapq.heappop(b_heap[k])
            head[k] += 1
            chosen.append(j)
            charged[k] += gpus[j] * lease_s
            if head[k] < end[k]:
                heapq.heappush(heap, (rho_of(charged[k], fair_k[k]), k))
        if len(skipped) == 0 or total_now(at_round) == 0:
            return
        ks = np.sort(np.array(skipped))
        r = np.empty(len(ks))
        for i in range(len(ks)):
            r[i] = rho_of(charged[ks[i]], fair_k[ks[i]])
        for k in ks[np.argsort(r, kind="mergesort")]:  # (ρ_tenant, k)
            i = head[k]
            if i < a_len[k]:  # tier A: plain waiting jobs
                buf = a_buf[k]
                fits = may_fit(a_count, k, total_now(at_round))
                while i < a_len[k] and fits:
                    total = total_now(at_round)
                    if total == 0:
                        return
                    j = buf[i]
                    i += 1
                    if gpus[j] <= total:
                        misses = len(missed_list)
                        if attempt(j, now, at_round, -1):
                            chosen.append(j)
                            fits = may_fit(a_count, k, total_now(at_round))
                        elif len(missed_list) != misses:
                            fits = may_fit(a_count, k, total)
                if total_now(at_round) == 0:
                    return
            if w_count[k] == a_len[k] and not (at_round and hb_len[k] > 0):
                continue  # no tier B
            if quick and not may_fit(s_count, k, total_now(at_round)):
                continue
            if not b_built[k]:
                tier_b(k, at_round, now)
            h = b_heap[k]
            while len(h) > 0:
                total = total_now(at_round)
                if total == 0:
                    return
                j = heapq.heappop(h)[2]
                if gpus[j] <= total and attempt(j, now, at_round, -1):
                    chosen.append(j)

    def start_pass(have):
        """GandivaFair._start_pass: a tenant back from idle restarts at the smallest pass of the
        active ones; `have[k]`: tenant k has candidates now."""
        floor = 0.0
        found = False
        for k in range(T):
            if have[k] and was_active[k]:
                if not found or pass_[k] < floor:
                    floor = pass_[k]
                    found = True
        for k in range(T):
            if have[k] and not was_active[k]:
                if floor > pass_[k]:
                    pass_[k] = floor
            was_active[k] = have[k] or run_gpus[k] > 0

    def select_gandiva(at_round, now, chosen):
        """GandivaFair._select_queued: stride scheduling over tenants, each tenant's candidates in
        (attained GPU·s, job) order."""
        cand = candidates(at_round)
        m = len(cand)
        key = np.empty(m)
        ten = np.empty(m, np.int64)
        for i in range(m):
            j = cand[i]
            h = hold_since[j]
            key[i] = job_att[j] + (0.0 if math.isnan(h) else gpus[j] * (now - h))
        perm = np.argsort(key, kind="mergesort")
        for i in range(m):
            ten[i] = tenant[cand[perm[i]]]
        perm = perm[np.argsort(ten, kind="mergesort")]
        js = cand[perm]
        first = np.full(T, -1, np.int64)
        end = np.zeros(T, np.int64)
        for i in range(m):
            k = tenant[js[i]]
            if first[k] < 0:
                first[k] = i
            end[k] = i + 1
        have = first >= 0
        start_pass(have)
        head = first.copy()
        heap = [(0.0, 0)]
        heap.clear()
        for k in range(T):
            if have[k]:
                heap.append((pass_[k], k))
        heapq.heapify(heap)
        while heap and total_now(at_round) > 0:
            _, k = heapq.heappop(heap)
            j = js[head[k]]
            if not attempt(j, now, at_round, -1):
                continue  # this tenant's next job does not fit: skipped this round
            chosen.append(j)
            pass_[k] += gpus[j] * lease_s / quota[k]
            head[k] += 1
            if head[k] < end[k]:
                heapq.heappush(heap, (pass_[k], k))
        # the GPUs left go to the skipped tenants' jobs that fit, smallest pass first
        left = [0]
        left.clear()
        for k in range(T):
            if have[k] and head[k] < end[k]:
                left.append(k)
        ks = np.array(left)  # in tenant order, then stable by pass: (pass, k)
        pv = np.empty(len(ks))
        for i in range(len(ks)):
            pv[i] = pass_[ks[i]]
        for k in ks[np.argsort(pv, kind="mergesort")]:
            before = len(chosen)
            place_in_order(js[head[k]:end[k]], end[k] - head[k], now, at_round, chosen)
            for c in range(before, len(chosen)):
                pass_[k] += gpus[chosen[c]] * lease_s / quota[k]
            if total_now(at_round) == 0:
                return

    def themis_rho(j, now, n_now):
        """Themis.rho: (ρ = T_sh / T_id, T_sh) of job j."""
        p = predicted[j]
        r = p - attained_engine(j)
        rem = r if r >= 1.0 else 1.0
        if seen[j]:
            area0, t0 = seen_area[j], seen_t[j]
        else:
            area0, t0 = area[0], now
        n_bar = (area[0] - area0) / (now - t0) if now > t0 else float(n_now)
        share = M / (n_bar if n_bar >= 1.0 else 1.0)
        t_sh = (now - submit[j]) + rem
        ratio = gpus[j] / share
        return t_sh / (p * (ratio if ratio > 1.0 else 1.0)), t_sh

    def select_themis(at_round, now, chosen):
        """Themis.select: the ⌈(1 − f)·n⌉ worst-ρ jobs bid in the lease auction (greedy by log gain
        per GPU), then the leftover allocation to every job, worst ρ first."""
        n_now = n_wait[0] + n_hold[0]
        if n_now < 1:
            n_now = 1
        cand = candidates(at_round)
        m = len(cand)
        neg_rho = np.empty(m)
        gain = np.empty(m)
        for i in range(m):
            rho, t_sh = themis_rho(cand[i], now, n_now)
            neg_rho[i] = -rho
            gain[i] = -math.log1p(lease_s / t_sh) / gpus[cand[i]]
        worst = np.argsort(neg_rho, kind="mergesort")  # (−ρ, j)
        nb = math.ceil((1.0 - pol_param) * m - _EPS)
        if nb < 1:
            nb = 1
        bidders = worst[:nb]
        bidders = np.sort(bidders)  # job order (cand is sorted), then (gain, −ρ)
        bidders = bidders[np.argsort(neg_rho[bidders], kind="mergesort")]
        auction = bidders[np.argsort(gain[bidders], kind="mergesort")]
        taken = np.zeros(m, np.bool_)
        for group in range(2):
            order = auction if group == 0 else worst
            for i in order:
                total = total_now(at_round)
                if total == 0:
                    return
                j = cand[i]
                if not taken[i] and gpus[j] <= total and attempt(j, now, at_round, -1):
                    chosen.append(j)
                    taken[i] = True

    def promote(now):
        """TiresiasL._promote: every waiting job whose wait passed STARVATION × its executed time
        goes back to the first queue (counting from zero again)."""
        late = [(0.0, 0.0, 0)]
        late.clear()
        while len(starving) > 0 and starving[0][0] <= now + 1e-9 * max(1.0, abs(now)):
            entry = heapq.heappop(starving)
            since, j = entry[1], entry[2]
            if queue_of[j] < 0 or wait_since[j] != since:
                continue
            if not now - since > 2.0 * attained_engine(j):
                late.append(entry)
                continue
            a = ledger_attained(j, now)
            offset[j] = a
            queue_of[j] = level_of(j, a)
        for entry in late:
            heapq.heappush(starving, entry)

    def select_tiresias(at_round, now, chosen):
        """TiresiasL: every candidate in (queue, job) order, each that fits."""
        promote(now)
        cand = candidates(at_round)
        lev = np.empty(len(cand), np.int64)
        for i in range(len(cand)):
            j = cand[i]
            lev[i] = level_of(j, ledger_attained(j, now)) if holding[j] else queue_of[j]
        order = cand[np.argsort(lev, kind="mergesort")]
        place_in_order(order, len(order), now, at_round, chosen)

    def select_hived(at_round, now, chosen):
        """HiveD._select_queued: each tenant's own jobs in job order inside its cells up to its first
        miss; then every other candidate in job order, anywhere (a job running outside its cells
        is only re-decided there). A tenant's first pass touches only its own cells, so the tenants'
        passes are made together in one walk in job order over the running jobs and the waiting
        jobs (kept in job order: a busy HiveD cluster has thousands waiting), which leaves the same
        plan and gives the choices and the second pass's jobs in job order without a sort."""
        counters[4] += 1
        counters[5] += (n_hold[0] if at_round else 0) + n_wait[0]
        if (n_hold[0] if at_round else 0) + n_wait[0] > counters[6]:
            counters[6] = (n_hold[0] if at_round else 0) + n_wait[0]
        running = np.sort(hold_list[:n_hold[0]].copy()) if at_round else np.zeros(0, np.int64)
        for k in range(T):
            blocked[k] = False
        rest = [0]
        rest.clear()
        r = 0
        w = 0
        while r < len(running) or w < n_wait[0]:
            if w >= n_wait[0] or (r < len(running) and running[r] < ws[w]):
                j = running[r]
                r += 1
                k = tenant[j]
                inside = True
                for p in range(pl_len[j]):
                    if owner[pl_node[j, p]] != k:
                        inside = False
                if not inside:
                    rest.append(j)
                    continue
            else:
                j = ws[w]
                w += 1
                k = tenant[j]
            if blocked[k]:
                rest.append(j)
            elif attempt(j, now, at_round, k):
                chosen.append(j)
            else:
                blocked[k] = True
                rest.append(j)
        if len(rest) > 0:
            order = np.empty(len(rest), np.int64)
            for i in range(len(rest)):
                order[i] = rest[i]
            place_in_order(order, len(order), now, at_round, chosen)

    def allox_order(jobs, limit):
        """Allox.matched_order: the `limit` smallest footprints in the order of the min-cost
        matching of jobs to (node, position), then the rest by footprint."""
        m = len(jobs)
        if m <= 1:
            return jobs
        idx = np.sort(jobs)
        best = np.empty(m)
        for i in range(m):
            best[i] = predicted[idx[i]] * float(gpus[idx[i]]) * inv_cap_min
        by_size = idx[np.argsort(best, kind="mergesort")]  # (footprint, job)
        best_sorted = np.sort(best)
        L = limit if limit < m else m
        head = by_size[:L]
        K = -(-L // N) + 1
        cost = np.empty((L, N * K))
        for r in range(L):
            j = head[r]
            pg = predicted[j] * float(gpus[j])
            for node in range(N):
                tau = pg * inv_cap[node]
                for k in range(K):
                    cost[r, node * K + k] = tau * float(k + 1)
        rows, cols = _assignment(cost)
        nm = len(rows)
        mj = np.empty(nm, np.int64)
        mnode = np.empty(nm, np.int64)
        mk = np.empty(nm, np.int64)
        mbest = np.empty(nm)
        top = np.zeros(N, np.int64)
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

    def select_allox(at_round, now, chosen):
        """Allox.select: the ⌈α·tenants⌉ least-progressed tenants' jobs by the matching, then the
        other tenants' jobs the same way."""
        cand = candidates(at_round)
        have = np.zeros(T, np.bool_)
        for j in cand:
            have[tenant[j]] = True
        ks = np.nonzero(have)[0]
        rk = np.empty(len(ks))
        for i in range(len(ks)):
            advance(ks[i], now)
            rk[i] = rho_of(att[ks[i]], fair[ks[i]])
        ks = ks[np.argsort(rk, kind="mergesort")]  # (ρ_tenant, k)
        first = math.ceil(pol_param * len(ks) - _EPS)
        if first < 1:
            first = 1
        group_of_tenant = np.zeros(T, np.int64)
        for i in range(len(ks)):
            group_of_tenant[ks[i]] = 0 if i < first else 1
        for group in range(2):
            sel = [0]
            sel.clear()
            for j in cand:
                if group_of_tenant[tenant[j]] == group:
                    sel.append(j)
            if len(sel) == 0:
                continue
            jobs = np.array(sel)
            smallest = gpus[jobs[0]]
            for j in jobs:
                if gpus[j] < smallest:
                    smallest = gpus[j]
            total = total_now(at_round)
            limit = total // smallest
            if limit < 1:
                limit = 1
            if limit > pol_int:
                limit = pol_int
            if total == 0:
                return
            order = allox_order(jobs, limit)
            place_in_order(order, len(order), now, at_round, chosen)
            if total_now(at_round) == 0:
                return

    def select(at_round, now, chosen):
        if policy == 7:
            select_allox(at_round, now, chosen)
        elif policy == 5:
            select_tiresias(at_round, now, chosen)
        elif policy == 6:
            select_hived(at_round, now, chosen)
        elif policy == 0:
            select_srtf(at_round, now, chosen)
        elif policy == 3:
            select_gandiva(at_round, now, chosen)
        elif policy == 4:
            select_themis(at_round, now, chosen)
        else:
            select_astraea(at_round, now, chosen)

    def compact(chosen):
        same = True
        for j in chosen:
            if holding[j] and not plan_equals_placement(j):
                same = False
                break
        if same:
            return
        for i in range(N):
            packed[i] = cap[i]
        packed_total[0] = M
        for j in chosen:
            if holding[j]:
                for i in range(pl_len[j]):
                    packed[pl_node[j, i]] -= pl_k[j, i]
                    packed_total[0] -= pl_k[j, i]
        new_len = np.zeros(len(chosen), np.int64)
        new_node = np.zeros((len(chosen), P), np.int64)
        new_k = np.zeros((len(chosen), P), np.int64)
        for c in range(len(chosen)):
            j = chosen[c]
            if holding[j]:
                continue
            if plan_fits_on(packed, j):
                new_len[c] = plan_len[j]
                for i in range(plan_len[j]):
                    new_node[c, i] = plan_node[j, i]
                    new_k[c, i] = plan_k[j, i]
            else:
                parts = find(packed, packed_total[0], gpus[j], plan_restrict[j])
                if parts == 0:
                    return
                new_len[c] = parts
                for i in range(parts):
                    new_node[c, i] = found_node[i]
                    new_k[c, i] = found_k[i]
            for i in range(new_len[c]):
                packed[new_node[c, i]] -= new_k[c, i]
                packed_total[0] -= new_k[c, i]
        for c in range(len(chosen)):
            j = chosen[c]
            if holding[j]:
                set_plan_from_placement(j)
            else:
                plan_len[j] = new_len[c]
                for i in range(new_len[c]):
                    plan_node[j, i] = new_node[c, i]
                    plan_k[j, i] = new_k[c, i]

    def prepare_round():
        """A RoundPlan: every GPU free to plan; the running candidates' GPUs held until decided."""
        counters[0] += 1
        for j in undo_list:
            undo_until[j] = nan
        undo_list.clear()
        for i in range(N):
            plan_free[i] = cap[i]
            held[i] = 0
        plan_total[0] = M
        for h in range(n_hold[0]):
            j = hold_list[h]
            for i in range(pl_len[j]):
                held[pl_node[j, i]] += pl_k[j, i]
        unclaimed_total[0] = 0
        for i in range(N):
            v = cap[i] - held[i]
            unclaimed[i] = v if v > 0 else 0
            unclaimed_total[0] += unclaimed[i]

    def decide(at_round, now):
        """ClusterPolicy._round (at_round) or _fill: select on the plan (or the cluster), then execute
        exactly that plan — at a round, releases first (in job order), then the starts."""
        if not at_round:
            flags[0] = False
        clear_plan()
        for m in missed_list:
            missed[m] = False
        missed_list.clear()
        chosen = [0]
        chosen.clear()
        select(at_round, now, chosen)
        renewed = np.zeros(len(chosen), np.bool_)
        moved = np.zeros(len(chosen), np.bool_)
        if at_round:
            compact(chosen)
            for c in range(len(chosen)):
                j = chosen[c]
                if holding[j]:
                    if plan_equals_placement(j):
                        renewed[c] = True
                        kept[j] = True
                    else:
                        moved[c] = True
            running = np.sort(hold_list[:n_hold[0]].copy())
            for j in running:
                if not kept[j]:
                    preempt(j, now)
            for c in range(len(chosen)):
                if renewed[c]:
                    kept[chosen[c]] = False
        for c in range(len(chosen)):
            if renewed[c]:
                continue
            j = chosen[c]
            if at_round:  # the fill's select took the GPUs on the cluster itself
                if not plan_fits_on(free, j):
                    counters[1] += 1
                    continue
                for i in range(plan_len[j]):
                    free[plan_node[j, i]] -= plan_k[j, i]
                    free_total[0] -= plan_k[j, i]
            start_job(j, now)
            if moved[c]:
                preempted[j] -= 1
                migrations[j] += 1
        if at_round:
            flags[0] = True

    def may_place():
        total = free_total[0]
        for g in range(1, maxg + 1):
            if wait_demand[g] > 0 and g <= total and find(free, total, g, -1) > 0:
                return True
        return False

    def allocate(now, completed, arrived):
        if policy == 4:  # Themis: ∫ N(t) dt of the active jobs
            area[0] += n_active[0] * (now - area_t[0])
            area_t[0] = now
        for j in completed:
            complete(j, now)
        tick = math.ceil(now / interval_s - _EPS) * interval_s
        on_tick = tick <= now + _EPS
        if len(arrived) > 0:
            for j in arrived:
                arrivals.append(j)
            if rho_submit:
                for j in arrived:
                    ledger_arrive(j, now)
        if len(arrivals) > 0:
            if on_tick:
                for j in arrivals:
                    wait_add(j, now)
                    if not rho_submit:
                        ledger_arrive(j, now)
                arrivals.clear()
                flags[0] = True
            else:
                wake_at(tick)
        while len(cold_heap) > 0 and cold_heap[0][0] <= now + _EPS:
            t, j = heapq.heappop(cold_heap)
            if cold_until[j] == t:
                cold_until[j] = nan
                cold_spent[j] += cold_start_s
                close_segment(j, t)
                open_segment(j, t, 0)
                assign(j, _RUN)
        decided = False
        for step in range(2):  # a round if one is due, then a fill (one call site each: a smaller loop)
            if step == 0:
                if not now >= next_round[0] - _EPS:
                    continue
                k = math.floor(now / lease_s + _EPS)
                if (k + 1) * lease_s <= now + _EPS:  # now / lease rounded below the boundary now is at (large times)
                    k += 1
                next_round[0] = (k + 1) * lease_s
                if not preemptive or n_wait[0] == 0 or not now - k * lease_s <= _EPS:  # only AT a boundary
                    continue
                prepare_round()
            else:
                if not (flags[0] and n_wait[0] > 0 and may_place()):
                    continue
                if not on_tick:
                    wake_at(tick)
                    continue
            decide(step == 0, now)
            decided = True
        if decided and n_wait[0] > 0 and may_place():
            counters[2] += 1
        if len(cold_heap) > 0:
            wake_at(cold_heap[0][0])
        if preemptive and n_wait[0] > 0:
            wake_at(next_round[0])
        n_active[0] = n_wait[0] + n_hold[0]

    # ----- the engine's event loop (schedulers.engine.Engine._run) -----------------------------
    now = 0.0
    next_arrival = 0
    finished = 0
    events = 0
    completed = [0]
    completed.clear()
    arrived = [0]
    arrived.clear()
    while finished < n:
        if events & 0xFFFF == 0:
            with numba.objmode():
                _poll()
        t_next = submit[next_arrival] if next_arrival < n else inf
        if len(wakes) > 0 and wakes[0] < t_next:
            t_next = wakes[0]
        best = False
        has_due = False
        due_t = 0.0
        best_finish = 0.0
        if g_count[_RUN] > 0:
            while len(run_heap) > 0:
                fin, j, s = run_heap[0]
                if s == stamp[j] and group_of[j] == _RUN:
                    break
                heapq.heappop(run_heap)
            if len(run_heap) > 0:
                fin = run_heap[0][0]
                due_t = now + (fin - g_V[_RUN]) / g_rate[_RUN]
                has_due = True
                if due_t <= t_next:
                    t_next = due_t
                    best = True
                    best_finish = fin
        if math.isinf(t_next):
            break  # nothing pending: the Python engine raises (a policy that leaves jobs unserved)
        if t_next < now:
            t_next = now
        dt = t_next - now
        if dt > 0.0 and has_due:
            g_V[_RUN] += g_rate[_RUN] * dt
        if best:
            if best_finish > g_V[_RUN]:
                g_V[_RUN] = best_finish
        now = t_next
        events += 1
        completed.clear()
        horizon = t_next + _REL_TOL * max(1.0, t_next)
        if has_due and due_t <= horizon:
            V = g_V[_RUN]
            tol = _REL_TOL * max(1.0, abs(V))
            while len(run_heap) > 0:
                fin, j, s = run_heap[0]
                if not (s == stamp[j] and group_of[j] == _RUN):
                    heapq.heappop(run_heap)
                    continue
                if fin > V + tol:
                    break
                heapq.heappop(run_heap)
                base[j] = size[j]
                group_of[j] = _IDLE
                stamp[j] += 1
                g_count[_RUN] -= 1
                completion[j] = t_next
                completed.append(j)
        finished += len(completed)
        arrived.clear()
        while next_arrival < n and submit[next_arrival] <= t_next:
            arrived.append(next_arrival)
            next_arrival += 1
        woken = False
        while len(wakes) > 0 and wakes[0] <= t_next:
            heapq.heappop(wakes)
            woken = True
        if not (len(completed) > 0 or len(arrived) > 0 or woken):
            continue
        moves_j.clear()
        moves_g.clear()
        wake_req[0] = inf
        allocate(now, completed, arrived)
        for i in range(len(moves_j)):
            j = moves_j[i]
            g = moves_g[i]
            move(j, g)
            if g != _IDLE and g_rate[g] > 0.0 and math.isnan(start[j]):
                start[j] = now
        if wake_req[0] < inf:
            heapq.heappush(wakes, wake_req[0])
    counters[3] = events
    # the ledgers' end of the run (LTGF.window_table advances every tenant to the makespan)
    t_end = 0.0
    any_done = False
    for j in range(n):
        c = completion[j]
        if not math.isnan(c) and (not any_done or c > t_end):
            t_end = c
            any_done = True
    for k in range(T):
        advance(k, t_end)

    # ----- outputs ------------------------------------------------------------------------------
    n_seg = len(seg_job)
    s_job = np.empty(n_seg, np.int64)
    s_start = np.empty(n_seg)
    s_end = np.empty(n_seg)
    s_kind = np.empty(n_seg, np.int8)
    s_pl = np.empty(n_seg, np.int64)
    s_pn = np.empty(n_seg, np.int64)
    for i in range(n_seg):
        s_job[i] = seg_job[i]
        s_start[i] = seg_start[i]
        s_end[i] = seg_end[i]
        s_kind[i] = seg_kind[i]
        s_pl[i] = seg_pl[i]
        s_pn[i] = seg_pn[i]
    flat_node = np.empty(len(pl_flat_node), np.int64)
    flat_k = np.empty(len(pl_flat_node), np.int64)
    for i in range(len(pl_flat_node)):
        flat_node[i] = pl_flat_node[i]
        flat_k[i] = pl_flat_k[i]
    n_win = 0
    for k in range(T):
        if len(win_att[k]) > n_win:
            n_win = len(win_att[k])
    w_att = np.zeros((T, n_win))
    w_fair8 = np.zeros((T, n_win))
    for k in range(T):
        for w in range(len(win_att[k])):
            w_att[k, w] = win_att[k][w]
            w_fair8[k, w] = win_fair8[k][w]
    return (completion, start, counters, preempted, migrations, cold_spent, job_att, job_fair,
            t_last, att, fair, fair8, run_gpus, demand, w_att, w_fair8,
            s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node, flat_k, finished)



simulate = jit.njit(simulate, nogil=False)  # it takes the GIL to poll for signals


# ----- the Python side: inputs, and the run's state as schedulers.cluster.metrics reads it ---------
def eligible(policy) -> bool:
    """Whether `policy` is exactly a built-in class of the registry whose `fast_loop` this loop knows,
    without the rule checks (a subclass, e.g. a plugin, may change any hook)."""
    from schedulers.policy import builtin_classes  # noqa: PLC0415

    cls = type(policy)
    return cls.__dict__.get("fast_loop") in KERNELS and cls in builtin_classes("cluster") and not policy.check


class CompiledState:
    """What schedulers.cluster.metrics reads from a policy after its run, filled from the loop's
    outputs: ledgers, per-job counters, round counters, executed allocations."""

    def __init__(self, policy, out, jobs, quota, window_s):
        (completion, start, counters, preempted, migrations, cold_spent, job_att, job_fair, _t_last, _att,
         _fair, _fair8, _run, _demand, w_att, w_fair8, s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node,
         flat_k, _finished) = out
        self.name = policy.name
        self.M = int(sum(policy.capacities))
        self.rounds = int(counters[0])
        self.dropped_choices = int(counters[1])
        self.work_conservation_gaps = int(counters[2])
        self.events = int(counters[3])
        self.decisions = int(counters[4])  # rounds and fills (what the candidates counts below are over)
        self.candidates = int(counters[5])
        self.most_candidates = int(counters[6])
        self.preempted = preempted
        self.migrations = migrations
        self.cold_spent = cold_spent
        self.fair_share = policy.fair_share
        self.fair_window_s = policy.fair_window_s
        self.rho_from = policy.rho_from
        self.ltgf = _Ledgers(job_att, job_fair, w_att, w_fair8, quota, window_s)
        self._segments = (s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node, flat_k)
        self.completion = completion
        self.start = start

    def allocation_text(self):
        """As ClusterPolicy.allocation_arrays, with each placement as its text
        "node:gpus[,node:gpus]" (one text object per distinct placement; most are one node: coded by
        node and GPUs)."""
        s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node, flat_k = self._segments
        rows = np.flatnonzero(s_end > s_start)
        offsets, parts = s_pl[rows], s_pn[rows]
        nodes = np.empty(len(rows), dtype=object)
        one = parts == 1
        if one.any():
            width = int(flat_k.max()) + 1
            code = flat_node[offsets[one]] * width + flat_k[offsets[one]]
            values, inverse = np.unique(code, return_inverse=True)
            text = np.array([f"{v // width}:{v % width}" for v in values.tolist()], dtype=object)
            nodes[one] = text[inverse]
        if (~one).any():
            node_list, k_list = flat_node.tolist(), flat_k.tolist()
            made: dict[tuple, str] = {}
            many = []
            for o, m in zip(offsets[~one].tolist(), parts[~one].tolist()):
                key = tuple(zip(node_list[o:o + m], k_list[o:o + m]))
                many.append(made.get(key) or made.setdefault(key, ",".join(f"{n}:{k}" for n, k in key)))
            nodes[~one] = np.array(many, dtype=object)
        return s_job[rows], s_start[rows], s_end[rows], nodes, s_kind[rows]


class _Ledgers:
    """The LTGF readings schedulers.cluster.metrics takes after a run (see schedulers.cluster.ltgf)."""

    def __init__(self, job_att, job_fair, w_att, w_fair8, quota, window_s):
        self.job_att = job_att
        self.job_fair = job_fair
        self._w_att = w_att
        self._w_fair8 = w_fair8
        self.quota = quota
        self.window_s = window_s

    def window_table(self, t_end: float):
        """LTGF.window_table of the run (every tenant was advanced to the makespan by the loop)."""
        W = self.window_s
        n_win = max(1, int(math.ceil(t_end / W)))
        width = self._w_att.shape[1]
        rows = []
        for k in range(len(self.quota)):
            wa, wf = self._w_att[k].tolist(), self._w_fair8[k].tolist()
            q = self.quota[k]
            for w in range(n_win):
                length = max(0.0, min(W, t_end - w * W))
                rows.append((k, w, w * W, wa[w] if w < width else 0.0, wf[w] if w < width else 0.0, q * length))
        return rows


def _cell_owners(policy, quota) -> np.ndarray:
    """HiveD's cells as the tenant owning each node (zeros for the other policies)."""
    if policy.name != "hived":
        return np.zeros(len(policy.capacities), np.int64)
    from schedulers.cluster.policies.hived import cell_owners  # noqa: PLC0415

    return np.array(cell_owners(policy.capacities, quota), np.int64)


def _arguments(jobs, policy) -> tuple[tuple, list]:
    """(the arguments of `simulate` for `policy` on `jobs`, the tenants' quotas), or PolicyError /
    ValueError where the Python run raises them."""
    from schedulers.cluster.ltgf import FAIR_SHARES, tenant_quotas  # noqa: PLC0415
    from schedulers.cluster.policies.allox import ALLOX_MATCH_MAX  # noqa: PLC0415
    from schedulers.cluster.rounds import NEW_JOB_BONUS  # noqa: PLC0415
    from schedulers.policy import PolicyError  # noqa: PLC0415

    if policy.needs_prediction and jobs.predicted is None:
        raise PolicyError(f"policy '{policy.name}' needs predicted durations and none were given")
    if not NEW_JOB_BONUS > 0:  # ASTRAEA's never-started jobs come first only so (select_astraea's tiers)
        raise ValueError("the compiled loop needs a positive new-job bonus")
    caps = [int(c) for c in policy.capacities]
    M = sum(caps)
    gpus = jobs.gpus.astype(np.int64)
    if jobs.n and int(gpus.max()) > M:
        j = int(np.argmax(gpus))
        raise PolicyError(f"job {jobs.job_id[j]} needs {int(gpus[j])} GPUs, the cluster has {M}")
    T = len(jobs.tenant_names)
    if policy.fair_share not in FAIR_SHARES:  # as LTGF refuses it in the Python run
        raise ValueError(f"fair_share must be one of {FAIR_SHARES}")
    quotas = tenant_quotas(T, M, policy.tenant_weights)
    x = np.array([g / w for g, w in zip(gpus.tolist(), jobs.weight.tolist())], np.float64)
    xval, xid = np.unique(x, return_inverse=True) if jobs.n else (np.zeros(1), np.zeros(0, np.int64))
    cap = np.array(caps, np.int64)
    node_order = np.array(sorted(range(len(caps)), key=lambda i: (-caps[i], i)), np.int64)
    max_parts = (int(gpus.max()) // int(cap.min()) + 2) if jobs.n else 1
    predicted = jobs.predicted if jobs.predicted is not None else np.zeros(jobs.n)
    args = (
        np.ascontiguousarray(jobs.submit_time, np.float64), np.ascontiguousarray(jobs.size, np.float64), gpus,
        jobs.tenant.astype(np.int64), np.ascontiguousarray(jobs.weight, np.float64), xid.astype(np.int64),
        xval.astype(np.float64), np.ascontiguousarray(predicted, np.float64), cap, node_order,
        np.array(quotas, np.float64), float(policy.lease_s), float(policy.interval_s), float(policy.cold_start_s),
        float(policy.fair_window_s), policy.fair_share == "eq16", policy.rho_from == "submit", KERNELS[type(policy).fast_loop],
        float(NEW_JOB_BONUS), float(getattr(policy, "f", getattr(policy, "alpha", 0.0))), ALLOX_MATCH_MAX,
        _cell_owners(policy, quotas), max_parts)
    return args, quotas


def _signature(args) -> tuple:
    """The numba types `simulate` is compiled for when called with `args`."""
    return tuple(numba.typeof(a) for a in args)


def run(jobs, policy, notice=None):
    """Simulate `policy` (an `eligible` one) on `jobs` with the compiled loop: the run's
    CompiledState, or PolicyError / ValueError where the Python run raises them.

    `notice(text)` is told when the loop is being compiled (the first run after installing), once
    that has taken COMPILE_NOTICE_AFTER_S: a run from numba's cache loads it in under a second."""
    from schedulers.policy import PolicyError  # noqa: PLC0415

    args, quotas = _arguments(jobs, policy)
    if notice is not None and not simulate.signatures:  # not compiled or loaded in this process yet
        timer = threading.Timer(COMPILE_NOTICE_AFTER_S, notice, args=(COMPILE_NOTICE,))
        timer.daemon = True
        timer.start()
        try:
            simulate.compile(_signature(args))
        finally:
            timer.cancel()
    try:
        out = simulate(*args)
    except SystemError as exc:  # a signal handler raised inside the loop's poll: numba wraps its exception
        if isinstance(exc.__cause__, BaseException):
            raise exc.__cause__ from None
        raise
    if int(out[-1]) < jobs.n:
        raise PolicyError(f"policy '{policy.name}' left {jobs.n - int(out[-1])} job(s) unserved with nothing pending")
    return CompiledState(policy, out, jobs, quotas, float(policy.fair_window_s))
