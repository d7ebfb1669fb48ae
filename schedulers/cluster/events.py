"""What happens to a job in a run, written once over its state (schedulers.cluster.state): the
engine's clock (`attained_engine`; the loop's `apply_moves` moves jobs on it), joining and leaving the waiting and running jobs (the
kernel's hooks), starts, preemptions (and their undo at the same instant), cold starts, completions,
the executed-allocation stretches, and `allocate`, the engine callback of one instant: completions,
arrivals at ticks, cold-start ends, a round when one is due (only AT a lease boundary, while a job
waits: the round plan, unclaimed GPUs first, then compaction), then a work-conserving fill; each
decision (`decide`) executed exactly as the kernel chose, releases before starts. With the rule
checks on (`check=True`) every decision and event is validated (`violation`, VIOLATIONS).

May import numpy, schedulers.jit and the simulator's modules below it (state, ledgers, placement,
queues, kernels, stretches).
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from schedulers.cluster.kernels import before_allocate, on_hold, on_unhold, on_unwait, on_wait, select
from schedulers.cluster.ledgers import ledger_arrive, ledger_complete, ledger_hold, ledger_release
from schedulers.cluster.placement import (clear_plan, compact, may_place, plan_equals_placement, plan_fits_on,
                                          prepare_round, release_placement, same_placement)
from schedulers.cluster.state import _COLD, _EPS, _IDLE, _RUN, DROPPED, GAPS, VIOLATION, VIOLATION_JOB
from schedulers.cluster.stretches import close_segment, open_segment, record_placement, reopen_segment
from schedulers.jit import jitable


@jitable(inline=True)
def attained_at(group_of, base, g_V, vjoin, j):
    """Job j's service on the engine's clock arrays (`s.eng`: `attained_engine`), which a caller that
    reads many jobs reads once: in the compiled loop each read through the state takes and drops
    reference counts."""
    g = group_of[j]
    if g == _IDLE:
        return base[j]
    return base[j] + (g_V[g] - vjoin[j])


@jitable(inline=True)
def attained_engine(s, j):
    eng = s.eng
    return attained_at(eng.group_of, eng.base, eng.g_V, eng.vjoin, j)


@jitable(inline=True)
def assign(s, j, g):
    eng = s.eng
    eng.moves_j.append(j)
    eng.moves_g.append(g)


@jitable(inline=True)
def wake_at(s, t):
    if t < s.eng.wake_req[0]:
        s.eng.wake_req[0] = t


@jitable
def hold_add(s, p, j):
    on_hold(s, p, j)
    q = s.q
    n_hold = q.n_hold
    q.holding[j] = True
    q.hold_pos[j] = n_hold[0]
    q.hold_list[n_hold[0]] = j
    n_hold[0] += 1


@jitable
def hold_remove(s, p, j):
    on_unhold(s, p, j)
    q = s.q
    n_hold = q.n_hold
    hold_pos = q.hold_pos
    hold_list = q.hold_list
    q.holding[j] = False
    i = hold_pos[j]
    last = hold_list[n_hold[0] - 1]
    hold_list[i] = last
    hold_pos[last] = i
    n_hold[0] -= 1
    hold_pos[j] = -1


@jitable
def wait_add(s, p, j, now):
    on_wait(s, p, j, now)
    q = s.q
    q.waiting[j] = True
    q.n_wait[0] += 1
    q.wait_demand[s.job.gpus[j]] += 1
    q.wait_since[j] = now


@jitable
def wait_remove(s, p, j):
    on_unwait(s, p, j)
    q = s.q
    q.waiting[j] = False
    q.n_wait[0] -= 1
    q.wait_demand[s.job.gpus[j]] -= 1


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
    q = s.q  # read once (every read through the state costs reference counts)
    preempted_at = q.preempted_at
    undo = preempted_at[j] == now and plan_equals_placement(s, j)
    if not undo:
        plan = s.plan
        plan_len = plan.plan_len
        pl_node = plan.pl_node
        pl_k = plan.pl_k
        plan_node = plan.plan_node
        plan_k = plan.plan_k
        plan.pl_len[j] = plan_len[j]
        for i in range(plan_len[j]):
            pl_node[j, i] = plan_node[j, i]
            pl_k[j, i] = plan_k[j, i]
        record_placement(s, j)
    hold_add(s, p, j)
    ledger_hold(s, j, now)
    if undo:
        q.preempted[j] -= 1
        preempted_at[j] = -1.0
        reopen_segment(s, j, now)
        undo_until = q.undo_until
        if not math.isnan(undo_until[j]):
            until = undo_until[j]
            q.cold_spent[j] -= q.undo_spent[j]
            undo_until[j] = math.nan
            q.cold_until[j] = until
            heapq.heappush(q.cold_heap, (until, j))
            assign(s, j, _COLD)
        else:
            assign(s, j, _RUN)
        return
    started = q.started
    cold_start_s = s.cfg.cold_start_s
    if started[j] and cold_start_s > 0:
        until = now + cold_start_s
        q.cold_until[j] = until
        heapq.heappush(q.cold_heap, (until, j))
        open_segment(s, j, now, 1)
        assign(s, j, _COLD)
    else:
        started[j] = True
        open_segment(s, j, now, 0)
        assign(s, j, _RUN)


@jitable
def preempt(s, p, j, now):
    hold_remove(s, p, j)
    release_placement(s, j)
    q = s.q  # read once (every read through the state costs reference counts)
    cold_until = q.cold_until
    until = cold_until[j]
    if not math.isnan(until):
        cold_until[j] = math.nan
        spent = now - (until - s.cfg.cold_start_s)
        q.cold_spent[j] += spent
        q.undo_until[j] = until
        q.undo_spent[j] = spent
        q.undo_list.append(j)
    ledger_release(s, j, now)
    close_segment(s, j, now)
    q.preempted[j] += 1
    q.preempted_at[j] = now
    wait_add(s, p, j, now)
    assign(s, j, _IDLE)


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
        plan = s.plan  # its arrays read once for the chosen jobs (each read costs reference counts)
        plan_len = plan.plan_len
        plan_node = plan.plan_node
        plan_k = plan.plan_k
        pl_len = plan.pl_len
        pl_node = plan.pl_node
        pl_k = plan.pl_k
        kept = plan.kept
        holding = s.q.holding
        for c in range(len(chosen)):
            j = chosen[c]
            if holding[j]:
                if same_placement(plan_len, plan_node, plan_k, pl_len, pl_node, pl_k, j):
                    renewed[c] = True
                    kept[j] = True
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
