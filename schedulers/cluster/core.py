"""The cluster simulator: the event loop, the lease / round / fill mechanics, placement and the LTGF
ledgers, written once, as functions over one run's state. Each built-in policy's decision is its
kernel, in the policy's own module (`schedulers.cluster.policies.*`), registered with `kernel`.

The same source runs two ways (the pattern of schedulers.fastpath): as Python, or compiled by numba
(`schedulers.jit`), one compiled loop per policy kernel, cached on disk. Every function here and
in a kernel is marked `jit.jitable`: plain Python when Python calls it, compiled into the loop
when numba compiles it; both give the same runs bit for bit (tests/schedulers/test_cluster_compiled.py).
A plugin's Python rule (`order` / `select`) is one more kernel (schedulers.cluster.rule) that the
Python loop runs.

The state of a run (`new_state`) is grouped by concern:
- `s.job`: the jobs (submit, size, gpus, tenant, weight, predicted) and their counts;
- `s.cfg`: lease, interval, cold start, ledger settings, whether the policy preempts;
- `s.eng`: the engine's virtual clock of the running group, its completion heap and wake-ups;
- `s.nodes`: free GPUs per node of the cluster (row 0 of `fr2`), of a round's plan (1) and of the
  plan's unclaimed GPUs (2), and the placement search's scratch;
- `s.led`: the LTGF ledgers (tenant integrals, per-job attained and fair GPU·s, windows);
- `s.plan`: each job's placement and the plan of the current decision;
- `s.q`: running and waiting jobs, cold starts, preemption and migration counts;
- `s.seg`: the executed-allocation stretches;
- `s.counters`: the named counters (`ROUNDS`, `DROPPED`, ...).
A kernel's own state is a namedtuple its `setup` makes (`p`), passed to every hook.

What a policy decides (`select(s, p, at_round, now, chosen)`): which candidates run, placed with
`attempt` / `place_in_order` in priority order onto the plan (at a round) or the free GPUs (at a
fill); `chosen` receives them in that order. Its hooks see jobs start and stop waiting and
running (`on_wait`, `on_unwait`, `on_hold`, `on_unhold`) and each engine callback
(`before_allocate`). The mechanics (docs/fairness.md): rounds only at lease boundaries while a
job waits, the round plan (unclaimed GPUs first, then compaction), releases before starts, undo of a
preemption at the same instant, cold starts, work-conserving fills at scheduling ticks. With the
rule checks on (`check=True`) every decision and event is validated (`VIOLATIONS`).

May import numpy, scipy, schedulers.jit and schedulers.revision; numba only when a loop is compiled.
"""

from __future__ import annotations

import hashlib
import heapq
import math
import re
import threading
import warnings
from collections import namedtuple
from pathlib import Path

import numpy as np

from schedulers import jit
from schedulers.jit import EventBudgetExceeded, checkpoint, jitable

_EPS = 1e-9
_REL_TOL = 1e-11
_RUN, _COLD, _IDLE = 0, 1, -1
# the named counters (s.counters): rounds, dropped choices, work-conservation gaps, events,
# decisions (rounds and fills), candidates offered to them in all, most candidates of one decision;
# then the first broken rule (a VIOLATIONS code, 0: none) and the job it names (-1: none)
ROUNDS, DROPPED, GAPS, EVENTS, DECISIONS, CANDIDATES, MOST_CANDIDATES, VIOLATION, VIOLATION_JOB = range(9)
# what a run that breaks the simulator's rules is stopped for (the rule checks, `check=True`; a run
# with no job in service for STUCK_AFTER wake-ups in a row is stopped always), by VIOLATION code
VIOLATIONS = {
    1: "chose {job} twice at t = {t:g}",
    2: "chose {job} at t = {t:g}, which is neither running nor waiting",
    3: "chose {job} at t = {t:g} without placing it",
    4: "{job} chosen at t = {t:g} but its planned GPUs are taken",
    5: "the jobs holding GPUs after the round at t = {t:g} are not the chosen ones",
    6: "a waiting job fits on the free GPUs after the decision at t = {t:g}",
    7: "the free GPUs of the nodes disagree with the running jobs' placements at t = {t:g}",
    8: "is stuck: {stuck} wake-ups in a row with no job in service (t = {t:g})",
    9: "went past its budget of {budget:,} events at t = {t:g} and was stopped",
}
BUDGET = 9  # the VIOLATIONS code of a run stopped at its event budget (`event_budget`)
STUCK_AFTER = 10_000
FAIR_SHARES = ("eq16", "eq8")  # how a tenant's fair share accrues (docs/fairness.md); the first is the default


def tenant_quotas(n_tenants: int, total_gpus: int, tenant_weights=None) -> list[float]:
    """Q_k = M · W_k / Σ W (equal weights when none are given)."""
    tw = np.ones(n_tenants) if tenant_weights is None else np.asarray(tenant_weights, np.float64)
    return (total_gpus * tw / tw.sum()).tolist()
#: a first call that takes longer than this to compile or load the loop gets the notice of `run`
COMPILE_NOTICE_AFTER_S = 2.0

Job = namedtuple("Job", "submit size gpus tenant weight xid xval predicted log_sd n T maxg")
Config = namedtuple("Config", "lease_s interval_s cold_start_s window_s eq16 rho_submit preemptive P check "
                               "work_conserving")
Clock = namedtuple("Clock", "group_of base vjoin stamp completion start g_V g_rate g_count run_heap wakes moves_j "
                            "moves_g wake_req")
Nodes = namedtuple("Nodes", "fr2 tot free free_total plan_free plan_total unclaimed unclaimed_total cap node_order "
                            "maxcap N M inv_cap inv_cap_min owner held packed packed_total used found_node found_k")
Ledgers = namedtuple("Ledgers", "t_last run_gpus demand active_w att fair fair8 G G_ref job_base job_fair job_att "
                                "hold_since win_att win_fair8 quota")
Plan = namedtuple("Plan", "pl_len pl_node pl_k plan_len plan_node plan_k planned plan_restrict missed missed_list kept")
Queues = namedtuple("Queues", "holding hold_list hold_pos n_hold n_wait wait_demand ws wait_since cold_until cold_heap "
                              "started cold_spent undo_until undo_spent undo_list preempted preempted_at migrations "
                              "arrivals next_round flags violation_at waiting")
Segments = namedtuple("Segments", "seg_job seg_start seg_end seg_kind seg_pl seg_pn pl_flat_node pl_flat_k pl_flat_of "
                                  "seg_open last_seg")
State = namedtuple("State", "job cfg eng nodes led plan q seg counters")


def group(cls, *fields):
    """A group of the state: `cls(*fields)` (a namedtuple) in a Python run; in a compiled loop a
    structref with the same fields, so that functions pass one reference instead of every field
    (a namedtuple is passed field by field, which made the compiled loop several times larger)."""
    return cls(*fields)


def int_list():
    """An empty list of int64 (typed for numba)."""
    out = [0]
    out.clear()
    return out


def float_list():
    out = [0.0]
    out.clear()
    return out


jitable(int_list)
jitable(float_list)


@jitable
def new_state(submit, size, gpus, tenant, weight, xid, xval, predicted, log_sd, cap, node_order, quota, owner, lease_s,
              interval_s, cold_start_s, window_s, eq16, rho_submit, preemptive, max_parts, check, work_conserving):
    """The state of a run at time 0: an empty cluster, nothing waiting."""
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
    job = group(Job, submit, size, gpus, tenant, weight, xid, xval, predicted, log_sd, n, T, maxg)
    cfg = group(Config, lease_s, interval_s, cold_start_s, window_s, eq16, rho_submit, preemptive, P, check,
                work_conserving)
    run_heap = [(0.0, 0, 0)]
    run_heap.clear()
    eng = group(Clock, np.full(n, _IDLE, np.int64), np.zeros(n), np.zeros(n), np.zeros(n, np.int64),
                np.full(n, math.nan), np.full(n, math.nan), np.zeros(2), np.array([1.0, 0.0]), np.zeros(2, np.int64),
                run_heap, float_list(), int_list(), int_list(), np.full(1, math.inf))
    fr2 = np.zeros((3, N), np.int64)
    tot = np.zeros(3, np.int64)
    for i in range(N):
        fr2[0, i] = cap[i]
    tot[0] = cap.sum()
    inv_cap = 1.0 / cap.astype(np.float64)
    nodes = group(Nodes, fr2, tot, fr2[0], tot[0:1], fr2[1], tot[1:2], fr2[2], tot[2:3], cap, node_order, maxcap, N,
                  tot[0], inv_cap, inv_cap.min(), owner, np.zeros(N, np.int64), np.zeros(N, np.int64),
                  np.zeros(1, np.int64), np.zeros(N, np.bool_), np.zeros(P + 1, np.int64), np.zeros(P + 1, np.int64))
    win_att = [float_list() for _ in range(T)]
    win_fair8 = [float_list() for _ in range(T)]
    led = group(Ledgers, np.zeros(T), np.zeros(T, np.int64), np.zeros(T, np.int64), np.zeros(T), np.zeros(T),
                np.zeros(T), np.zeros(T), np.zeros((T, X)), np.zeros((T, X), np.int64), np.zeros(n), np.zeros(n),
                np.zeros(n), np.full(n, math.nan), win_att, win_fair8, quota)
    plan = group(Plan, np.zeros(n, np.int64), np.zeros((n, P), np.int64), np.zeros((n, P), np.int64),
                 np.zeros(n, np.int64), np.zeros((n, P), np.int64), np.zeros((n, P), np.int64), int_list(),
                 np.full(n, -1, np.int64), np.zeros(maxg + 1, np.bool_), int_list(), np.zeros(n, np.bool_))
    cold_heap = [(0.0, 0)]
    cold_heap.clear()
    q = group(Queues, np.zeros(n, np.bool_), np.zeros(n, np.int64), np.full(n, -1, np.int64), np.zeros(1, np.int64),
              np.zeros(1, np.int64), np.zeros(maxg + 1, np.int64), np.zeros(n, np.int64), np.zeros(n),
              np.full(n, math.nan), cold_heap, np.zeros(n, np.bool_), np.zeros(n), np.full(n, math.nan), np.zeros(n),
              int_list(), np.zeros(n, np.int64), np.full(n, -1.0), np.zeros(n, np.int64), int_list(),
              np.full(1, lease_s), np.zeros(1, np.bool_), np.full(1, math.nan), np.zeros(n, np.bool_))
    seg = group(Segments, int_list(), float_list(), float_list(), int_list(), int_list(), int_list(), int_list(),
                int_list(), np.full(n, -1, np.int64), np.full(n, -1, np.int64), np.full(n, -1, np.int64))
    counters = np.zeros(9, np.int64)
    counters[VIOLATION_JOB] = -1
    return group(State, job, cfg, eng, nodes, led, plan, q, seg, counters)


# ----- kernels: each policy's decision and hooks, dispatched on the type of its state ----------
Kernel = namedtuple("Kernel", "name params state setup select on_wait on_unwait on_hold on_unhold before_allocate "
                               "one_event compilable preemptive")
_KERNELS: dict[type, Kernel] = {}  # by the kernel's params class and its state class


def kernel(name, params, state, *, setup, select, on_wait=None, on_unwait=None, on_hold=None, on_unhold=None,
           before_allocate=None, one_event=False, compilable=True, preemptive=None) -> Kernel:
    """Register a policy's kernel: `params` the namedtuple class of its settings (made by the policy
    class's `kernel_params`), `state` the namedtuple class its `setup(s, params)` returns, `select`
    its decision; hooks left out keep the waiting jobs in job order (`s.q.ws`) and do nothing else.
    `compilable=False`: a kernel that calls into Python (schedulers.cluster.rule) runs only as Python;
    `preemptive=False`: a kernel written for a policy that never preempts (its jobs wait once);
    `one_event=True`: the loop hands the kernel's run one event at a time — each arrival, then each
    completion (in order of completion, then job), is an instant of its own with its own decision,
    where by default every event at one time is applied before one decision (the batch schedulers
    of HPC logs, docs/reproduce-rlscheduler.md, decide after each event)."""
    made = Kernel(name, params, state, jitable(setup), jitable(select), jitable(on_wait or _wait_in_job_order),
                  jitable(on_unwait or _unwait_in_job_order), jitable(on_hold or _no_hook),
                  jitable(on_unhold or _no_hook), jitable(before_allocate or _no_time_hook),
                  jitable(_one_event if one_event else _all_events), compilable, preemptive)
    _KERNELS[params] = made
    _KERNELS[state] = made
    return made


def setup(s, params):
    """The kernel's own state at time 0."""
    return _KERNELS[type(params)].setup(s, params)


HOOKS = ("select", "on_wait", "on_unwait", "on_hold", "on_unhold", "before_allocate", "one_event")


def _hook(name: str):
    """The call of kernel hook `name` (`hook(s, p, ...)`): the hook of the kernel whose state `p` is
    (in a compiled loop, the same choice made by an overload on p's type: `_overloads`)."""
    def call(s, p, *args):
        return getattr(_KERNELS[type(p)], name)(s, p, *args)
    call.__name__ = call.__qualname__ = name
    return call


select, on_wait, on_unwait, on_hold, on_unhold, before_allocate, one_event = (_hook(name) for name in HOOKS)


def _all_events(s, p):
    return False


def _one_event(s, p):
    return True


def _no_hook(s, p, j):
    pass


def _no_time_hook(s, p, now):
    pass


def _wait_in_job_order(s, p, j, now):
    job_order_add(s, j)


def _unwait_in_job_order(s, p, j):
    job_order_remove(s, j)


def assignment(cost):
    """scipy's linear_sum_assignment(cost) (rows, columns); a compiled loop calls it in object mode,
    so that its choice among equal-cost matchings is the Python run's. (Imported here: scipy.optimize
    costs every command that lists the cluster policies a quarter of a second.)"""
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415

    rows, cols = linear_sum_assignment(cost)
    return np.asarray(rows, np.int64), np.asarray(cols, np.int64)


# ----- placement and ledgers (the free GPUs and tenant integrals as arrays) -----------------------
@jitable
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


@jitable
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


@jitable
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


@jitable
def _sync(node, fr2, tot, held):
    """RoundPlan._sync: a node's unclaimed GPUs = planned free minus held by undecided running jobs."""
    v = fr2[1, node] - held[node]
    if v < 0:
        v = 0
    tot[2] += v - fr2[2, node]
    fr2[2, node] = v


@jitable
def place_job(s, j, hold, preempted_now, at_round, g, restrict):
    """ClusterPolicy.try_place of job j on the round plan (at_round: rows 1 and 2 of fr2) or the real
    cluster (row 0): its held GPUs if it runs (or was preempted at this instant) and they are free
    there, else a consolidated placement; the plan is written into plan_len/plan_node/plan_k (and
    `restrict` into plan_restrict).
    Each array is read from the state only on the path that needs it (every read of the state in
    the compiled loop takes and drops reference counts, and most attempts fail at the first test)."""
    row = 1 if at_round else 0
    nodes = s.nodes
    plan = s.plan
    fr2 = nodes.fr2
    tot = nodes.tot
    if (hold or preempted_now) and plan.pl_len[j] > 0:
        pl_len = plan.pl_len
        pl_node = plan.pl_node
        pl_k = plan.pl_k
        owner = nodes.owner
        ok = True
        for i in range(pl_len[j]):
            if fr2[row, pl_node[j, i]] < pl_k[j, i] or not (restrict < 0 or owner[pl_node[j, i]] == restrict):
                ok = False
                break
        if ok:
            held = nodes.held
            for i in range(pl_len[j]):
                node, k = pl_node[j, i], pl_k[j, i]
                fr2[row, node] -= k
                tot[row] -= k
                if at_round:
                    if hold:  # RoundPlan.renew: planned and held drop together
                        held[node] -= k
                    else:
                        _sync(node, fr2, tot, held)
            if plan.plan_len[j] == 0:
                plan.planned.append(j)
            plan.plan_len[j] = pl_len[j]
            plan_node = plan.plan_node
            plan_k = plan.plan_k
            for i in range(pl_len[j]):
                plan_node[j, i] = pl_node[j, i]
                plan_k[j, i] = pl_k[j, i]
            plan.plan_restrict[j] = restrict
            return True
    if g > tot[row]:
        return False
    found_node = nodes.found_node
    found_k = nodes.found_k
    parts = 0
    if at_round:
        parts = find(s, fr2[2], tot[2], g, restrict)
    if parts == 0:
        parts = find(s, fr2[row], tot[row], g, restrict)
    if parts == 0:
        return False
    held = nodes.held
    for i in range(parts):
        fr2[row, found_node[i]] -= found_k[i]
        tot[row] -= found_k[i]
        if at_round:
            _sync(found_node[i], fr2, tot, held)
    if at_round and hold:  # RoundPlan.decided: the GPUs it held are no longer held
        pl_len = plan.pl_len
        pl_node = plan.pl_node
        pl_k = plan.pl_k
        for i in range(pl_len[j]):
            held[pl_node[j, i]] -= pl_k[j, i]
            _sync(pl_node[j, i], fr2, tot, held)
    if plan.plan_len[j] == 0:
        plan.planned.append(j)
    plan.plan_len[j] = parts
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    for i in range(parts):
        plan_node[j, i] = found_node[i]
        plan_k[j, i] = found_k[i]
    plan.plan_restrict[j] = restrict
    return True



# ----- the mechanics ---------------------------------------------------------------------------
@jitable(inline=True)
def attained_engine(s, j):
    g = s.eng.group_of[j]
    if g == _IDLE:
        return s.eng.base[j]
    return s.eng.base[j] + (s.eng.g_V[g] - s.eng.vjoin[j])


@jitable
def move(s, j, g):
    old = s.eng.group_of[j]
    if old == g:
        return
    if old != _IDLE:
        s.eng.base[j] += s.eng.g_V[old] - s.eng.vjoin[j]
        s.eng.g_count[old] -= 1
    s.eng.stamp[j] += 1
    s.eng.group_of[j] = g
    if g != _IDLE:
        V = s.eng.g_V[g]
        s.eng.vjoin[j] = V
        s.eng.g_count[g] += 1
        if g == _RUN:
            heapq.heappush(s.eng.run_heap, (V + s.job.size[j] - s.eng.base[j], j, s.eng.stamp[j]))


@jitable(inline=True)
def assign(s, j, g):
    s.eng.moves_j.append(j)
    s.eng.moves_g.append(g)


@jitable(inline=True)
def wake_at(s, t):
    if t < s.eng.wake_req[0]:
        s.eng.wake_req[0] = t


@jitable
def find(s, fr, total, g, restrict):
    """Cluster.find on free counts `fr` (sum `total`): the number of parts of the placement written
    into s.nodes.found_node / found_k (0: none)."""
    nodes = s.nodes
    return find_placement(fr, total, g, nodes.cap, nodes.node_order, nodes.maxcap, nodes.used, nodes.found_node,
                          nodes.found_k, nodes.owner, restrict)


@jitable
def advance(s, k, t):
    """Tenant k's ledgers up to t (LTGF._advance: its integrals). Each array is read from the state
    only where it is used: every decision of ASTRAEA, Themis and Gandiva_fair advances each tenant
    with candidates, and each read through the state costs reference counts."""
    led = s.led
    t_last = led.t_last
    t0 = t_last[k]
    dt = t - t0
    if dt <= 0.0:  # nothing to integrate: most calls
        return
    t_last[k] = t
    run = led.run_gpus[k]
    demand = led.demand[k]
    quota = led.quota[k]
    share8 = demand if demand <= quota else quota
    share = quota if s.cfg.eq16 else share8
    led.att[k] += run * dt
    led.fair[k] += share * dt
    led.fair8[k] += share8 * dt
    active_w = led.active_w[k]
    if active_w > 0.0:
        c = share / active_w
        G = led.G
        G_ref = led.G_ref
        xval = s.job.xval
        for x in range(xval.shape[0]):
            if G_ref[k, x] > 0:
                v = xval[x]
                G[k, x] += (v if v < c else c) * dt
    if run != 0 or share8 != 0:
        _windows(t0, t, float(run), float(share8), led.win_att[k], led.win_fair8[k], s.cfg.window_s)


@jitable
def ledger_arrive(s, j, t):
    k = s.job.tenant[j]
    advance(s, k, t)
    s.led.demand[k] += s.job.gpus[j]
    s.led.active_w[k] += s.job.weight[j]
    x = s.job.xid[j]
    if s.led.G_ref[k, x] == 0:
        s.led.G[k, x] = 0.0
    s.led.G_ref[k, x] += 1
    s.led.job_base[j] = s.led.G[k, x]


@jitable
def ledger_hold(s, j, t):
    k = s.job.tenant[j]
    advance(s, k, t)
    s.led.run_gpus[k] += s.job.gpus[j]
    s.led.hold_since[j] = t


@jitable
def ledger_release(s, j, t):
    k = s.job.tenant[j]
    advance(s, k, t)
    s.led.run_gpus[k] -= s.job.gpus[j]
    s.led.job_att[j] += s.job.gpus[j] * (t - s.led.hold_since[j])
    s.led.hold_since[j] = math.nan


@jitable
def ledger_complete(s, j, t):
    if not math.isnan(s.led.hold_since[j]):
        ledger_release(s, j, t)
    k = s.job.tenant[j]
    advance(s, k, t)
    x = s.job.xid[j]
    s.led.job_fair[j] = s.job.weight[j] * (s.led.G[k, x] - s.led.job_base[j])
    s.led.G_ref[k, x] -= 1
    s.led.demand[k] -= s.job.gpus[j]
    s.led.active_w[k] -= s.job.weight[j]
    if s.led.active_w[k] < 1e-12:
        s.led.active_w[k] = 0.0


@jitable
def job_rho(s, j, t):
    """ρ_job of a candidate (not completed) once its tenant is advanced to t."""
    led = s.led
    job = s.job
    h = led.hold_since[j]
    attained = led.job_att[j] + (0.0 if math.isnan(h) else job.gpus[j] * (t - h))
    if attained <= 0.0:
        return 0.0
    k = job.tenant[j]
    f = job.weight[j] * (led.G[k, job.xid[j]] - led.job_base[j])
    return attained / f if f > 0.0 else math.inf


@jitable
def room(bufs, lens, k):
    """Tenant k's buffer bufs[k], doubled first if its lens[k] jobs fill it."""
    buf = bufs[k]
    if lens[k] == len(buf):
        grown = np.empty(2 * len(buf), np.int64)
        grown[:len(buf)] = buf
        bufs[k] = grown
        return grown
    return buf


@jitable
def bag_add(bufs, lens, pos, k, j):
    """j into tenant k's unordered set bufs[k][:lens[k]] (pos: where each job sits)."""
    length = lens[k]
    buf = room(bufs, lens, k)
    buf[length] = j
    pos[j] = length
    lens[k] = length + 1


@jitable
def bag_remove(bufs, lens, pos, k, j):
    i = pos[j]
    length = lens[k] - 1
    buf = bufs[k]
    last = buf[length]
    buf[i] = last
    pos[last] = i
    lens[k] = length
    pos[j] = -1


@jitable
def hold_add(s, p, j):
    on_hold(s, p, j)
    s.q.holding[j] = True
    s.q.hold_pos[j] = s.q.n_hold[0]
    s.q.hold_list[s.q.n_hold[0]] = j
    s.q.n_hold[0] += 1


@jitable
def hold_remove(s, p, j):
    on_unhold(s, p, j)
    s.q.holding[j] = False
    i = s.q.hold_pos[j]
    last = s.q.hold_list[s.q.n_hold[0] - 1]
    s.q.hold_list[i] = last
    s.q.hold_pos[last] = i
    s.q.n_hold[0] -= 1
    s.q.hold_pos[j] = -1


@jitable
def ledger_attained(s, j, t):
    led = s.led
    h = led.hold_since[j]
    return led.job_att[j] + (0.0 if math.isnan(h) else s.job.gpus[j] * (t - h))


@jitable
def wait_add(s, p, j, now):
    on_wait(s, p, j, now)
    s.q.waiting[j] = True
    s.q.n_wait[0] += 1
    s.q.wait_demand[s.job.gpus[j]] += 1
    s.q.wait_since[j] = now


@jitable
def job_order_add(s, j):
    """j into the waiting jobs kept in job order (`s.q.ws`): what every decision but ASTRAEA's reads."""
    ws = s.q.ws  # read once (see place_in_order): thousands may wait
    n = s.q.n_wait[0]
    pos = np.searchsorted(ws[:n], j)
    for i in range(n, pos, -1):
        ws[i] = ws[i - 1]
    ws[pos] = j


@jitable
def job_order_remove(s, j):
    ws = s.q.ws
    n = s.q.n_wait[0]
    pos = np.searchsorted(ws[:n], j)
    for i in range(pos, n - 1):
        ws[i] = ws[i + 1]


@jitable
def wait_remove(s, p, j):
    on_unwait(s, p, j)
    s.q.waiting[j] = False
    s.q.n_wait[0] -= 1
    s.q.wait_demand[s.job.gpus[j]] -= 1


@jitable
def release_placement(s, j):
    for i in range(s.plan.pl_len[j]):
        s.nodes.free[s.plan.pl_node[j, i]] += s.plan.pl_k[j, i]
        s.nodes.free_total[0] += s.plan.pl_k[j, i]


@jitable
def plan_fits_on(s, fr, j):
    plan = s.plan
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    for i in range(plan.plan_len[j]):
        if fr[plan_node[j, i]] < plan_k[j, i]:
            return False
    return True


@jitable
def plan_equals_placement(s, j):
    plan = s.plan
    n = plan.pl_len[j]
    if plan.plan_len[j] != n:
        return False
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    for i in range(n):
        if plan_node[j, i] != pl_node[j, i] or plan_k[j, i] != pl_k[j, i]:
            return False
    return True


@jitable
def set_plan_from_placement(s, j):
    if s.plan.plan_len[j] == 0:
        s.plan.planned.append(j)
    s.plan.plan_len[j] = s.plan.pl_len[j]
    for i in range(s.plan.pl_len[j]):
        s.plan.plan_node[j, i] = s.plan.pl_node[j, i]
        s.plan.plan_k[j, i] = s.plan.pl_k[j, i]


@jitable
def clear_plan(s):
    for j in s.plan.planned:
        s.plan.plan_len[j] = 0
    s.plan.planned.clear()


@jitable
def open_segment(s, j, t, kind):
    s.seg.seg_open[j] = len(s.seg.seg_job)
    s.seg.last_seg[j] = len(s.seg.seg_job)
    s.seg.seg_job.append(j)
    s.seg.seg_start.append(t)
    s.seg.seg_end.append(math.nan)
    s.seg.seg_kind.append(kind)
    s.seg.seg_pl.append(s.seg.pl_flat_of[j])
    s.seg.seg_pn.append(s.plan.pl_len[j])


@jitable
def close_segment(s, j, t):
    i = s.seg.seg_open[j]
    if i >= 0:
        s.seg.seg_end[i] = t
        s.seg.seg_open[j] = -1


@jitable
def reopen_segment(s, j, t):
    i = s.seg.last_seg[j]
    if i >= 0 and s.seg.seg_end[i] == t:
        s.seg.seg_end[i] = math.nan
        s.seg.seg_open[j] = i
        return
    open_segment(s, j, t, 1 if not math.isnan(s.q.undo_until[j]) else 0)


@jitable
def complete(s, p, j, now):
    if s.q.holding[j]:
        hold_remove(s, p, j)
        release_placement(s, j)
        s.q.cold_until[j] = math.nan
        close_segment(s, j, now)
        s.q.flags[0] = True
    ledger_complete(s, j, now)


@jitable
def start_job(s, p, j, now):
    """_start: j takes its plan (already taken from the cluster)."""
    wait_remove(s, p, j)
    undo = s.q.preempted_at[j] == now and plan_equals_placement(s, j)
    if not undo:
        s.plan.pl_len[j] = s.plan.plan_len[j]
        s.seg.pl_flat_of[j] = len(s.seg.pl_flat_node)
        for i in range(s.plan.plan_len[j]):
            s.plan.pl_node[j, i] = s.plan.plan_node[j, i]
            s.plan.pl_k[j, i] = s.plan.plan_k[j, i]
            s.seg.pl_flat_node.append(s.plan.plan_node[j, i])
            s.seg.pl_flat_k.append(s.plan.plan_k[j, i])
    hold_add(s, p, j)
    ledger_hold(s, j, now)
    if undo:
        s.q.preempted[j] -= 1
        s.q.preempted_at[j] = -1.0
        reopen_segment(s, j, now)
        if not math.isnan(s.q.undo_until[j]):
            until = s.q.undo_until[j]
            s.q.cold_spent[j] -= s.q.undo_spent[j]
            s.q.undo_until[j] = math.nan
            s.q.cold_until[j] = until
            heapq.heappush(s.q.cold_heap, (until, j))
            assign(s, j, _COLD)
        else:
            assign(s, j, _RUN)
        return
    if s.q.started[j] and s.cfg.cold_start_s > 0:
        until = now + s.cfg.cold_start_s
        s.q.cold_until[j] = until
        heapq.heappush(s.q.cold_heap, (until, j))
        open_segment(s, j, now, 1)
        assign(s, j, _COLD)
    else:
        s.q.started[j] = True
        open_segment(s, j, now, 0)
        assign(s, j, _RUN)


@jitable
def preempt(s, p, j, now):
    hold_remove(s, p, j)
    release_placement(s, j)
    until = s.q.cold_until[j]
    if not math.isnan(until):
        s.q.cold_until[j] = math.nan
        spent = now - (until - s.cfg.cold_start_s)
        s.q.cold_spent[j] += spent
        s.q.undo_until[j] = until
        s.q.undo_spent[j] = spent
        s.q.undo_list.append(j)
    ledger_release(s, j, now)
    close_segment(s, j, now)
    s.q.preempted[j] += 1
    s.q.preempted_at[j] = now
    wait_add(s, p, j, now)
    assign(s, j, _IDLE)


@jitable(inline=True)
def try_place(s, j, now, at_round, restrict):
    """ClusterPolicy.try_place (restrict >= 0: allowed = that tenant's HiveD cells)."""
    q = s.q
    return place_job(s, j, q.holding[j], q.preempted_at[j] == now, at_round, s.job.gpus[j], restrict)


@jitable(inline=True)
def attempt(s, j, now, at_round, restrict):
    """try_place, without the placement search for a waiting job whose gang size already found
    none in this decision since the last choice: the free GPUs (the plan's, at a round) change
    only when a job is placed, and a waiting job's placement is a function of them alone (the
    Python rules call try_place, which fails again; place_leftovers skips it the same way).
    Each of the state's arrays is read once (a decision may make thousands of attempts)."""
    q = s.q
    hold = q.holding[j]
    preempted_now = q.preempted_at[j] == now
    g = s.job.gpus[j]
    plan = s.plan
    missed = plan.missed
    plain = restrict < 0 and not hold and not preempted_now
    if plain and missed[g]:
        return False
    if place_job(s, j, hold, preempted_now, at_round, g, restrict):
        for m in plan.missed_list:
            missed[m] = False
        plan.missed_list.clear()
        return True
    if plain:
        missed[g] = True
        plan.missed_list.append(g)
    return False


@jitable
def place_in_order(s, order, count, now, at_round, chosen):
    """place_leftovers: each job of order[:count] that fits, in order."""
    # The state's arrays are read into locals once: a decision may read thousands of waiting jobs
    # here, most of them refused at once (too large, or a gang size that already missed), and in the
    # compiled loop every `s.group.array` read is a reference count taken and dropped (an atomic
    # operation each), which costs more than the test itself.
    gpus = s.job.gpus
    totals = s.nodes.plan_total if at_round else s.nodes.free_total
    missed = s.plan.missed
    holding = s.q.holding
    preempted_at = s.q.preempted_at
    for i in range(count):
        total = totals[0]
        if total == 0:
            break
        j = order[i]
        g = gpus[j]
        if g > total or (missed[g] and not holding[j] and preempted_at[j] != now):  # attempt() would refuse it
            continue
        if attempt(s, j, now, at_round, -1):
            chosen.append(j)


@jitable
def count_decision(s, m):
    """Count a decision (a round or a fill) offered m candidates: every kernel's decision calls it
    once, directly or through `candidates`."""
    s.counters[DECISIONS] += 1
    s.counters[CANDIDATES] += m
    if m > s.counters[MOST_CANDIDATES]:
        s.counters[MOST_CANDIDATES] = m


@jitable
def candidates(s, at_round):
    """The decision's candidates in job order: the running jobs (at a round) merged with the
    waiting ones, which are kept in job order."""
    ws = s.q.ws
    n_wait = s.q.n_wait[0]
    m = (s.q.n_hold[0] if at_round else 0) + n_wait
    count_decision(s, m)
    if not at_round:
        return ws[:n_wait].copy()
    running = np.sort(s.q.hold_list[:s.q.n_hold[0]].copy())
    out = np.empty(m, np.int64)
    r = 0
    w = 0
    for c in range(m):
        if w >= n_wait or (r < len(running) and running[r] < ws[w]):
            out[c] = running[r]
            r += 1
        else:
            out[c] = ws[w]
            w += 1
    return out


@jitable(inline=True)
def total_now(s, at_round):
    return s.nodes.plan_total[0] if at_round else s.nodes.free_total[0]


@jitable
def rho_of(a, f):
    if f > 0.0:
        return a / f
    return 0.0 if a <= 0.0 else math.inf


@jitable
def may_fit(s, counts, k, total):
    """Whether a plain waiting job of tenant k counted in counts[k] may still be placed: some gang
    size of them fits in `total` and has not missed since the last choice (else attempt refuses
    every one of them, with nothing changed)."""
    top = total if total < s.job.maxg else s.job.maxg
    missed = s.plan.missed
    for g in range(1, top + 1):
        if counts[k, g] > 0 and not missed[g]:
            return True
    return False


@jitable
def compact(s, chosen):
    nodes = s.nodes
    plan = s.plan
    holding = s.q.holding
    same = True
    for j in chosen:
        if holding[j] and not plan_equals_placement(s, j):
            same = False
            break
    if same:
        return
    packed = nodes.packed
    pl_len = plan.pl_len
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    plan_len = plan.plan_len
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    for i in range(nodes.N):
        packed[i] = nodes.cap[i]
    packed_total = nodes.M
    for j in chosen:
        if holding[j]:
            for i in range(pl_len[j]):
                packed[pl_node[j, i]] -= pl_k[j, i]
                packed_total -= pl_k[j, i]
    nodes.packed_total[0] = packed_total
    new_len = np.zeros(len(chosen), np.int64)
    new_node = np.zeros((len(chosen), s.cfg.P), np.int64)
    new_k = np.zeros((len(chosen), s.cfg.P), np.int64)
    for c in range(len(chosen)):
        j = chosen[c]
        if holding[j]:
            continue
        if plan_fits_on(s, packed, j):
            new_len[c] = plan_len[j]
            for i in range(plan_len[j]):
                new_node[c, i] = plan_node[j, i]
                new_k[c, i] = plan_k[j, i]
        else:
            parts = find(s, packed, nodes.packed_total[0], s.job.gpus[j], plan.plan_restrict[j])
            if parts == 0:
                return
            new_len[c] = parts
            for i in range(parts):
                new_node[c, i] = nodes.found_node[i]
                new_k[c, i] = nodes.found_k[i]
        for i in range(new_len[c]):
            packed[new_node[c, i]] -= new_k[c, i]
            nodes.packed_total[0] -= new_k[c, i]
    for c in range(len(chosen)):
        j = chosen[c]
        if holding[j]:
            set_plan_from_placement(s, j)
        else:
            plan_len[j] = new_len[c]
            for i in range(new_len[c]):
                plan_node[j, i] = new_node[c, i]
                plan_k[j, i] = new_k[c, i]


@jitable
def prepare_round(s):
    """A RoundPlan: every GPU free to plan; the running candidates' GPUs held until decided."""
    s.counters[ROUNDS] += 1
    for j in s.q.undo_list:
        s.q.undo_until[j] = math.nan
    s.q.undo_list.clear()
    nodes = s.nodes
    plan = s.plan
    cap = nodes.cap
    held = nodes.held
    unclaimed = nodes.unclaimed
    pl_len = plan.pl_len
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    for i in range(nodes.N):
        nodes.plan_free[i] = cap[i]
        held[i] = 0
    nodes.plan_total[0] = nodes.M
    hold_list = s.q.hold_list
    for h in range(s.q.n_hold[0]):
        j = hold_list[h]
        for i in range(pl_len[j]):
            held[pl_node[j, i]] += pl_k[j, i]
    total = 0
    for i in range(nodes.N):
        v = cap[i] - held[i]
        unclaimed[i] = v if v > 0 else 0
        total += unclaimed[i]
    nodes.unclaimed_total[0] = total


@jitable
def decide(s, p, at_round, now):
    """ClusterPolicy._round (at_round) or _fill: select on the plan (or the cluster), then execute
    exactly that plan — at a round, releases first (in job order), then the starts."""
    if not at_round:
        s.q.flags[0] = False
    clear_plan(s)
    for m in s.plan.missed_list:
        s.plan.missed[m] = False
    s.plan.missed_list.clear()
    chosen = [0]
    chosen.clear()
    select(s, p, at_round, now, chosen)
    if s.cfg.check and not check_choices(s, chosen, at_round, now):
        return
    renewed = np.zeros(len(chosen), np.bool_)
    moved = np.zeros(len(chosen), np.bool_)
    if at_round:
        compact(s, chosen)
        for c in range(len(chosen)):
            j = chosen[c]
            if s.q.holding[j]:
                if plan_equals_placement(s, j):
                    renewed[c] = True
                    s.plan.kept[j] = True
                else:
                    moved[c] = True
        running = np.sort(s.q.hold_list[:s.q.n_hold[0]].copy())
        for j in running:
            if not s.plan.kept[j]:
                preempt(s, p, j, now)
        for c in range(len(chosen)):
            if renewed[c]:
                s.plan.kept[chosen[c]] = False
    for c in range(len(chosen)):
        if renewed[c]:
            continue
        j = chosen[c]
        if at_round:  # the fill's select took the GPUs on the cluster itself
            if not plan_fits_on(s, s.nodes.free, j):
                s.counters[DROPPED] += 1
                if s.cfg.check:
                    violation(s, 4, j, now)
                continue
            for i in range(s.plan.plan_len[j]):
                s.nodes.free[s.plan.plan_node[j, i]] -= s.plan.plan_k[j, i]
                s.nodes.free_total[0] -= s.plan.plan_k[j, i]
        start_job(s, p, j, now)
        if moved[c]:
            s.q.preempted[j] -= 1
            s.q.migrations[j] += 1
    if at_round:
        s.q.flags[0] = True
        if s.cfg.check and s.q.n_hold[0] != len(chosen) - s.counters[DROPPED]:
            violation(s, 5, -1, now)


@jitable
def violation(s, code, j, now):
    """Record the first broken rule (code of VIOLATIONS, the job it names or -1, the time): the loop
    stops after the event, and `run` raises it."""
    if s.counters[VIOLATION] == 0:
        s.counters[VIOLATION] = code
        s.counters[VIOLATION_JOB] = j
        s.q.violation_at[0] = now


@jitable
def check_choices(s, chosen, at_round, now):
    """The rule checks of a decision (`check=True`): distinct jobs, each a candidate (running, at a
    round, or waiting) placed in this decision."""
    seen = np.zeros(s.job.n, np.bool_)
    for j in chosen:
        if j < 0 or j >= s.job.n or not (s.q.holding[j] and at_round or s.q.waiting[j]):
            violation(s, 2, j if 0 <= j < s.job.n else -1, now)
            return False
        if seen[j]:
            violation(s, 1, j, now)
            return False
        seen[j] = True
        if s.plan.plan_len[j] == 0:
            violation(s, 3, j, now)
            return False
    return True


@jitable
def check_nodes(s, now):
    """The rule checks after an event: every node's free GPUs are its capacity less the running jobs'."""
    used = np.zeros(s.nodes.N, np.int64)
    for h in range(s.q.n_hold[0]):
        j = s.q.hold_list[h]
        for i in range(s.plan.pl_len[j]):
            used[s.plan.pl_node[j, i]] += s.plan.pl_k[j, i]
    total = 0
    for i in range(s.nodes.N):
        if used[i] + s.nodes.free[i] != s.nodes.cap[i] or s.nodes.free[i] < 0:
            violation(s, 7, -1, now)
            return
        total += s.nodes.free[i]
    if total != s.nodes.free_total[0]:
        violation(s, 7, -1, now)


@jitable
def may_place(s):
    total = s.nodes.free_total[0]
    wait_demand = s.q.wait_demand
    for g in range(1, s.job.maxg + 1):
        if wait_demand[g] > 0 and g <= total and find(s, s.nodes.free, total, g, -1) > 0:
            return True
    return False


@jitable
def allocate(s, p, now, completed, arrived):
    before_allocate(s, p, now)
    for j in completed:
        complete(s, p, j, now)
    tick = now  # an interval of 0: every event is a tick (the HPC queues on logs with fractional times)
    if s.cfg.interval_s > 0:
        tick = math.ceil(now / s.cfg.interval_s - _EPS) * s.cfg.interval_s
    on_tick = tick <= now + _EPS
    if len(arrived) > 0:
        for j in arrived:
            s.q.arrivals.append(j)
        if s.cfg.rho_submit:
            for j in arrived:
                ledger_arrive(s, j, now)
    if len(s.q.arrivals) > 0:
        if on_tick:
            for j in s.q.arrivals:
                wait_add(s, p, j, now)
                if not s.cfg.rho_submit:
                    ledger_arrive(s, j, now)
            s.q.arrivals.clear()
            s.q.flags[0] = True
        else:
            wake_at(s, tick)
    while len(s.q.cold_heap) > 0 and s.q.cold_heap[0][0] <= now + _EPS:
        t, j = heapq.heappop(s.q.cold_heap)
        if s.q.cold_until[j] == t:
            s.q.cold_until[j] = math.nan
            s.q.cold_spent[j] += s.cfg.cold_start_s
            close_segment(s, j, t)
            open_segment(s, j, t, 0)
            assign(s, j, _RUN)
    decided = False
    for step in range(2):  # a round if one is due, then a fill (one call site each: a smaller loop)
        if step == 0:
            if not now >= s.q.next_round[0] - _EPS:
                continue
            k = math.floor(now / s.cfg.lease_s + _EPS)
            if (k + 1) * s.cfg.lease_s <= now + _EPS:  # now / lease rounded below the boundary now is at (large times)
                k += 1
            s.q.next_round[0] = (k + 1) * s.cfg.lease_s
            if not s.cfg.preemptive or s.q.n_wait[0] == 0 or not now - k * s.cfg.lease_s <= _EPS:  # only AT a boundary
                continue
            prepare_round(s)
        else:
            if not (s.q.flags[0] and s.q.n_wait[0] > 0 and may_place(s)):
                continue
            if not on_tick:
                wake_at(s, tick)
                continue
        decide(s, p, step == 0, now)
        decided = True
    if decided and s.q.n_wait[0] > 0 and may_place(s):
        s.counters[GAPS] += 1
        if s.cfg.check and s.cfg.work_conserving:
            violation(s, 6, -1, now)
    if s.cfg.check:
        check_nodes(s, now)
    if len(s.q.cold_heap) > 0:
        wake_at(s, s.q.cold_heap[0][0])
    if s.cfg.preemptive and s.q.n_wait[0] > 0:
        wake_at(s, s.q.next_round[0])



# ----- the event loop (schedulers.engine.Engine._run), one per kernel when compiled ---------------
def _make_loop(sources: str):
    """The loop over the kernel given by the type of its `params`; `sources` (a digest of the
    simulator's and the kernels' source files) keys numba's on-disk cache, so that a compiled
    loop is never loaded for sources it was not compiled from."""

    def loop(submit, size, gpus, tenant, weight, xid, xval, predicted, log_sd, cap, node_order, quota, owner, lease_s,
             interval_s, cold_start_s, window_s, eq16, rho_submit, preemptive, max_parts, check, work_conserving,
             max_events, params):
        sources  # noqa: B018 (the cache key: see above)
        s = new_state(submit, size, gpus, tenant, weight, xid, xval, predicted, log_sd, cap, node_order, quota, owner,
                      lease_s,
                      interval_s, cold_start_s, window_s, eq16, rho_submit, preemptive, max_parts, check,
                      work_conserving)
        p = setup(s, params)
        one = one_event(s, p)  # the kernel decides after each event (`kernel(one_event=True)`)
        now = 0.0
        next_arrival = 0
        finished = 0
        events = 0
        idle = 0  # wake-ups in a row after which no job is in service while some wait
        completed = [0]
        completed.clear()
        arrived = [0]
        arrived.clear()
        # the state's arrays and lists read once (they are never replaced, only written): in the
        # compiled loop each read through `s` takes and drops reference counts, atomic operations
        # that cost more than most of an event's work. One name per line: a tuple assignment of four
        # state groups (`a, b, c, d = s.seg, s.plan, s.q, s.cfg` in start_job) compiled to a loop
        # that left jobs unserved while the Python run was right (numba 0.68.1), so the simulator's
        # jitable code never unpacks state reads from a tuple (tests/schedulers/test_cluster_speed.py)
        eng = s.eng
        g_count = eng.g_count
        run_heap = eng.run_heap
        stamp = eng.stamp
        group_of = eng.group_of
        g_V = eng.g_V
        g_rate = eng.g_rate
        wakes = eng.wakes
        base = eng.base
        completion = eng.completion
        moves_j = eng.moves_j
        moves_g = eng.moves_g
        wake_req = eng.wake_req
        start = eng.start
        submit = s.job.submit
        size = s.job.size
        n_jobs = s.job.n
        n_wait = s.q.n_wait
        counters = s.counters
        check_at = checkpoint(0, max_events)  # Ctrl-C and the event budget (schedulers.jit)
        while finished < n_jobs:
            t_next = submit[next_arrival] if next_arrival < n_jobs else math.inf
            if len(wakes) > 0 and wakes[0] < t_next:
                t_next = wakes[0]
            best = False
            has_due = False
            due_t = 0.0
            best_finish = 0.0
            if g_count[_RUN] > 0:
                while len(run_heap) > 0:
                    fin, j, st = run_heap[0]
                    if st == stamp[j] and group_of[j] == _RUN:
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
            if events >= check_at:
                check_at = checkpoint(events, max_events)
                if check_at < 0:  # this event is one more than the budget: not processed
                    violation(s, BUDGET, -1, now)
                    break
            completed.clear()
            horizon = t_next + _REL_TOL * max(1.0, t_next)
            # one event at a time: an arrival due now goes first, the completions wait for the next pass
            if has_due and due_t <= horizon and not (one and next_arrival < n_jobs and submit[next_arrival] <= t_next):
                V = g_V[_RUN]
                tol = _REL_TOL * max(1.0, abs(V))
                while len(run_heap) > 0:
                    fin, j, st = run_heap[0]
                    if not (st == stamp[j] and group_of[j] == _RUN):
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
                    if one:
                        break
            finished += len(completed)
            arrived.clear()
            while next_arrival < n_jobs and submit[next_arrival] <= t_next and not (one and len(completed) > 0):
                arrived.append(next_arrival)
                next_arrival += 1
                if one:
                    break
            woken = False
            while len(wakes) > 0 and wakes[0] <= t_next:
                heapq.heappop(wakes)
                woken = True
            if not (len(completed) > 0 or len(arrived) > 0 or woken):
                continue
            moves_j.clear()
            moves_g.clear()
            wake_req[0] = math.inf
            allocate(s, p, now, completed, arrived)
            for i in range(len(moves_j)):
                j = moves_j[i]
                g = moves_g[i]
                move(s, j, g)
                if g != _IDLE and g_rate[g] > 0.0 and math.isnan(start[j]):
                    start[j] = now
            if wake_req[0] < math.inf:
                heapq.heappush(wakes, wake_req[0])
            if g_count[_RUN] + g_count[_COLD] > 0:
                idle = 0
            elif n_wait[0] > 0 and len(arrived) == 0:
                idle += 1
                if idle >= STUCK_AFTER:
                    violation(s, 8, -1, now)
            if counters[VIOLATION] != 0:
                break
        s.counters[EVENTS] = events
        # the ledgers' end of the run (LTGF.window_table advances every tenant to the makespan)
        t_end = 0.0
        any_done = False
        for j in range(s.job.n):
            c = s.eng.completion[j]
            if not math.isnan(c) and (not any_done or c > t_end):
                t_end = c
                any_done = True
        for k in range(s.job.T):
            advance(s, k, t_end)

        # ----- outputs ------------------------------------------------------------------------------
        n_seg = len(s.seg.seg_job)
        s_job = np.empty(n_seg, np.int64)
        s_start = np.empty(n_seg)
        s_end = np.empty(n_seg)
        s_kind = np.empty(n_seg, np.int8)
        s_pl = np.empty(n_seg, np.int64)
        s_pn = np.empty(n_seg, np.int64)
        for i in range(n_seg):
            s_job[i] = s.seg.seg_job[i]
            s_start[i] = s.seg.seg_start[i]
            s_end[i] = s.seg.seg_end[i]
            s_kind[i] = s.seg.seg_kind[i]
            s_pl[i] = s.seg.seg_pl[i]
            s_pn[i] = s.seg.seg_pn[i]
        flat_node = np.empty(len(s.seg.pl_flat_node), np.int64)
        flat_k = np.empty(len(s.seg.pl_flat_node), np.int64)
        for i in range(len(s.seg.pl_flat_node)):
            flat_node[i] = s.seg.pl_flat_node[i]
            flat_k[i] = s.seg.pl_flat_k[i]
        n_win = 0
        for k in range(s.job.T):
            if len(s.led.win_att[k]) > n_win:
                n_win = len(s.led.win_att[k])
        w_att = np.zeros((s.job.T, n_win))
        w_fair8 = np.zeros((s.job.T, n_win))
        for k in range(s.job.T):
            for w in range(len(s.led.win_att[k])):
                w_att[k, w] = s.led.win_att[k][w]
                w_fair8[k, w] = s.led.win_fair8[k][w]
        return (s.eng.completion, s.eng.start, s.counters, s.q.preempted, s.q.migrations, s.q.cold_spent,
                s.led.job_att, s.led.job_fair, s.led.t_last, s.led.att, s.led.fair, s.led.fair8, s.led.run_gpus,
                s.led.demand, w_att, w_fair8,
                s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node, flat_k, s.q.violation_at, finished)
    return loop


# ----- running it: Python, or compiled (one loop per kernel, cached) -----------------------------
_python_loop = _make_loop("python")
_compiled_loops: dict[str, object] = {}  # by kernel name
_registered = False
_lock = threading.Lock()


def _sources_digest(kernel_: Kernel) -> str:
    """A digest of the source files a kernel's compiled loop is made from: this module,
    schedulers.jit, schedulers.revision (the revision rules a kernel may call) and the kernel's own module."""
    import inspect  # noqa: PLC0415

    from schedulers import revision  # noqa: PLC0415

    digest = hashlib.sha256()
    for path in (Path(__file__), Path(jit.__file__), Path(revision.__file__), Path(inspect.getsourcefile(kernel_.select))):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _overloads() -> None:
    """What numba needs to compile the loop: every `jitable` function registered, the kernel hooks
    dispatched on the type of the kernel's state, and the calls into Python in object mode."""
    import numba  # noqa: PLC0415
    from numba.extending import overload  # noqa: PLC0415

    jit.register_jitables()

    @overload(group)
    def _group(cls, *fields):
        return _make_reference(cls.instance_class, fields)

    @overload(setup)
    def _setup(s, params):
        impl = _KERNELS[params.instance_class].setup
        return lambda s, params: impl(s, params)

    for name in HOOKS:
        _overload_hook(overload, name)

    @overload(assignment)
    def _assignment(cost):
        def impl(cost):
            with numba.objmode(rows="int64[:]", cols="int64[:]"):
                rows, cols = assignment(cost)
            return rows, cols
        return impl


_REFERENCE_TYPES: dict[type, type] = {}


def _make_reference(cls, field_types):
    """The compiled `group(cls, ...)`: a numba structref with the fields of namedtuple class `cls`,
    of a structref type made once per class (`origin`: the class)."""
    from numba.core import types  # noqa: PLC0415
    from numba.experimental import structref  # noqa: PLC0415

    ref_class = _REFERENCE_TYPES.get(cls)
    if ref_class is None:
        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

        ref_class = structref.register(type(f"{cls.__name__}Ref", (types.StructRef,),
                                            {"preprocess_fields": preprocess_fields, "origin": cls}))
        _REFERENCE_TYPES[cls] = ref_class
    ref_type = ref_class(list(zip(cls._fields, field_types)))
    source = ("def make(_new, _type):\n"
              "    def impl(cls, *fields):\n"
              "        ref = _new(_type)\n"
              + "".join(f"        ref.{name} = fields[{i}]\n" for i, name in enumerate(cls._fields))
              + "        return ref\n"
              "    return impl\n")
    scope: dict = {}
    exec(source, scope)  # noqa: S102 (assignments to the fields of the project's own classes)
    return scope["make"](structref.new, ref_type)


def _overload_hook(overload, name: str) -> None:
    """A compiled call of kernel hook `name` is the hook of the kernel the state's numba type stands for."""
    def typer(s, p, *args):
        impl = getattr(_KERNELS[p.origin], name)
        return lambda s, p, *args: impl(s, p, *args)
    overload(globals()[name])(typer)


def compiled_loop(params):
    """The compiled loop of the kernel whose settings `params` are (a numba dispatcher, compiled on
    its first run or loaded from numba's cache; one per kernel, so that changing one kernel's
    source recompiles only its loop)."""
    global _registered
    made = _KERNELS[type(params)]
    with _lock:
        if not _registered:
            _overloads()
            _registered = True
        loop = _compiled_loops.get(made.name)
        if loop is None:
            function = _make_loop(_sources_digest(made))
            # numba names its cache index after the function: one index per kernel, so that a loading
            # never unpickles another kernel's entries (a plugin's or a test's kernel types may not
            # be importable there)
            kind = re.sub(r"\W", "_", f"{made.params.__module__}.{made.params.__qualname__}")
            function.__qualname__ = f"{function.__qualname__}_{kind}"
            loop = _compiled_loops[made.name] = jit.njit(function, nogil=False)  # it takes the GIL to poll
        return loop


def compile_notice(name: str) -> str:
    return (f"compiling the cluster simulator's loop for {name} on this machine (once after installing, "
            "under a minute per policy; cached for later runs)")


def compilable(params) -> bool:
    """Whether the kernel of `params` can run compiled (a Python rule's cannot)."""
    return _KERNELS[type(params)].compilable


class RunState:
    """What schedulers.cluster.metrics reads from a policy after its run, filled from the loop's
    outputs: ledgers, per-job counters, round counters, executed allocations."""

    def __init__(self, policy, out, jobs, quota, window_s, loop):
        (completion, start, counters, preempted, migrations, cold_spent, job_att, job_fair, _t_last, _att,
         _fair, _fair8, _run, _demand, w_att, w_fair8, s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node,
         flat_k, _violation_at, _finished) = out
        self.name = policy.name
        self.loop = loop
        self.M = int(sum(policy.capacities))
        self.rounds = int(counters[ROUNDS])
        self.dropped_choices = int(counters[DROPPED])
        self.work_conservation_gaps = int(counters[GAPS])
        self.events = int(counters[EVENTS])
        self.decisions = int(counters[DECISIONS])  # rounds and fills (what the candidates counts below are over)
        self.candidates = int(counters[CANDIDATES])
        self.most_candidates = int(counters[MOST_CANDIDATES])
        self.preempted = preempted
        self.migrations = migrations
        self.cold_spent = cold_spent
        self.fair_share = policy.fair_share
        self.fair_window_s = policy.fair_window_s
        self.rho_from = policy.rho_from
        self.ltgf = LedgerReadings(job_att, job_fair, w_att, w_fair8, quota, window_s)
        # the executed stretches (schedulers.cluster.metrics.allocation_table reads them)
        self.segments = (s_job, s_start, s_end, s_kind, s_pl, s_pn, flat_node, flat_k)
        self.completion = completion
        self.start = start


class LedgerReadings:
    """The LTGF readings schedulers.cluster.metrics takes after a run (see schedulers.cluster.ltgf)."""

    def __init__(self, job_att, job_fair, w_att, w_fair8, quota, window_s):
        self.job_att = job_att
        self.job_fair = job_fair
        self._w_att = w_att
        self._w_fair8 = w_fair8
        self.quota = quota
        self.window_s = window_s

    def window_table(self, t_end: float) -> dict:
        """LTGF.window_table of the run (every tenant was advanced to the makespan by the loop): one
        array per column, tenant by tenant, each tenant's windows in time order."""
        W = self.window_s
        n_win = max(1, int(math.ceil(t_end / W)))
        tenants = len(self.quota)
        kept = min(self._w_att.shape[1], n_win)
        attained, fair8 = np.zeros((tenants, n_win)), np.zeros((tenants, n_win))
        attained[:, :kept] = self._w_att[:tenants, :kept]
        fair8[:, :kept] = self._w_fair8[:tenants, :kept]
        window = np.arange(n_win, dtype=np.int64)
        start_s = window * float(W)
        length = np.maximum(0.0, np.minimum(float(W), t_end - start_s))
        return {"tenant_code": np.repeat(np.arange(tenants, dtype=np.int64), n_win), "window": np.tile(window, tenants),
                "start_s": np.tile(start_s, tenants), "attained_gpu_s": attained.ravel(),
                "fair_eq8_gpu_s": fair8.ravel(),
                "fair_eq16_gpu_s": (np.asarray(self.quota, np.float64)[:, None] * length[None, :]).ravel()}


def arguments(jobs, policy, params=None) -> tuple[tuple, list]:
    """(the arguments of the loop for `policy` on `jobs` deciding by the kernel of `params` — by
    default its own, `kernel_params()` —, the tenants' quotas), or PolicyError / ValueError."""
    from schedulers.policy_base import PolicyError  # noqa: PLC0415

    jobs.require_finite()
    if policy.needs_prediction and jobs.predicted is None:
        raise PolicyError(f"policy '{policy.name}' needs predicted durations and none were given")
    if getattr(policy, "revision", "none") == "quantile" and jobs.predicted_log_sd is None:
        raise PolicyError(f"policy '{policy.name}': revision rule 'quantile' needs predicted distributions "
                          "(predicted_log_sd), and the jobs carry none")
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
    # the predicted log-normal spread of each job's size (the `quantile` revision rule); NaN: none given
    log_sd = jobs.predicted_log_sd if jobs.predicted_log_sd is not None else np.full(jobs.n, math.nan)
    args = (
        np.ascontiguousarray(jobs.submit_time, np.float64), np.ascontiguousarray(jobs.size, np.float64), gpus,
        jobs.tenant.astype(np.int64), np.ascontiguousarray(jobs.weight, np.float64), xid.astype(np.int64),
        xval.astype(np.float64), np.ascontiguousarray(predicted, np.float64),
        np.ascontiguousarray(log_sd, np.float64), cap, node_order,
        np.array(quotas, np.float64), np.asarray(policy.node_owners(quotas), np.int64), float(policy.lease_s),
        float(policy.interval_s), float(policy.cold_start_s), float(policy.fair_window_s), policy.fair_share == "eq16",
        policy.rho_from == "submit", bool(policy.preemptive), max_parts, bool(policy.check),
        bool(policy.work_conserving), event_budget(jobs, policy), policy.kernel_params() if params is None else params)
    return args, quotas


#: the event budget of a run (`event_budget`): events per job (its arrival, completion, cold-start
#: ends and the ticks they call for: 3.5 per job on the Venus-like workload) and per lease round
EVENTS_PER_JOB = 64
EVENTS_PER_ROUND = 16


def event_budget(jobs, policy) -> int:
    """The most events a run of `policy` on `jobs` can take, far above any real run's: past it the
    loop stops (EventBudgetExceeded) instead of spinning. Each job brings a few events, and each
    lease round while jobs wait one and those it calls for; the rounds are bounded by the span of a
    schedule that runs the jobs one at a time with a cold start each (the cold start is at most half
    the lease: every round lets a job run), doubled. And twice STUCK_AFTER: a run in which no job is
    served is stopped as stuck first, the more telling line."""
    n = jobs.n
    span = (float(jobs.submit_time.max()) if n else 0.0) + float(jobs.size.sum()) + n * float(policy.cold_start_s)
    rounds = 2.0 * span / float(policy.lease_s) + 1.0
    budget = EVENTS_PER_JOB * (n + 1.0) + EVENTS_PER_ROUND * rounds + 2.0 * STUCK_AFTER
    return int(budget) if budget < 2.0**62 else 2**62


def run(jobs, policy, compiled: bool, notice=None, params=None) -> RunState:
    """Simulate `policy` on `jobs`, compiled (when its kernel is `compilable`) or as Python: the
    run's RunState, or PolicyError (a broken rule, jobs left unserved) / ValueError (bad settings).

    `notice(text)` is told when the policy's loop is being compiled (its first run after
    installing), once that has taken COMPILE_NOTICE_AFTER_S: a run from numba's cache loads it in
    under a second."""
    from schedulers.policy_base import PolicyError  # noqa: PLC0415

    args, quotas = arguments(jobs, policy, params)
    compiled = compiled and compilable(args[-1])
    if compiled:
        loop = compiled_loop(args[-1])
        import numba  # noqa: PLC0415

        signature = tuple(numba.typeof(a) for a in args)
        if signature not in loop.overloads:  # not compiled or loaded in this process yet
            timer = None
            if notice is not None:
                timer = threading.Timer(COMPILE_NOTICE_AFTER_S, notice, args=(compile_notice(policy.name),))
                timer.daemon = True
                timer.start()
            try:
                with warnings.catch_warnings():  # numba's own pedantic check of its inlining, not ours to act on
                    warnings.filterwarnings("ignore", category=numba.core.errors.NumbaIRAssumptionWarning)
                    loop.compile(signature)
            finally:
                if timer is not None:
                    timer.cancel()
        out = jit.call(loop, *args)
    else:
        out = _python_loop(*args)
    code = int(out[2][VIOLATION])
    if code == BUDGET:
        raise EventBudgetExceeded(f"{policy.name} on {jobs.n:,} jobs: the cluster simulator's loop "
                                  + VIOLATIONS[code].format(budget=args[-2], t=float(out[-2][0]))
                                  + " (a run of these jobs takes fewer)")
    if code:
        j = int(out[2][VIOLATION_JOB])
        at = float(out[-2][0])
        raise PolicyError(f"{policy.name}: " + VIOLATIONS[code].format(job=f"job {jobs.job_id[j]}" if j >= 0 else "",
                                                                        t=at, stuck=STUCK_AFTER))
    if int(out[-1]) < jobs.n:
        raise PolicyError(f"policy '{policy.name}' left {jobs.n - int(out[-1])} job(s) unserved with nothing pending")
    return RunState(policy, out, jobs, quotas, float(policy.fair_window_s), "compiled" if compiled else "Python")
