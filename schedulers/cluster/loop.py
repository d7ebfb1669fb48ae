"""The cluster simulator's event loop (schedulers.engine.Engine._run), over one run's state
(schedulers.cluster.state), written once: `run_events` runs a run's events as Python (`run_python`)
or compiled, once for every kernel (schedulers.cluster.jitshared). A run takes its records
(`JobArrays`, `ClusterArrays`, `Config`), its event budget and the kernel's settings, and returns an
`Outcome`.

At each event — the next arrival, wake-up or completion of the running group — it completes the
jobs due, takes the arrivals, calls `allocate` (schedulers.cluster.events) and applies the group
moves it asked for. It checks in with schedulers.jit every POLL_EVERY events (`checkpoint`: the
event budget, Ctrl-C) and stops a run that breaks a rule or is stuck.

May import numpy, schedulers.jit and the simulator's modules (state, stretches, ledgers, kernels, events).
"""

from __future__ import annotations

import heapq
import math
from collections import namedtuple
from pathlib import Path

import numpy as np

from schedulers.cluster.events import allocate, violation
from schedulers.cluster.kernels import one_event, setup
from schedulers.cluster.ledgers import advance
from schedulers.cluster.state import (_COLD, _IDLE, _REL_TOL, _RUN, BUDGET, EVENTS, STUCK_AFTER, VIOLATION, kept,
                                      new_state, new_work)
from schedulers.cluster.stretches import OFFSETS_MAX, STORED, RecordLimitError, chunk_entries
from schedulers.jit import checkpoint, jitable



# the loop's result: per-job times and counts, the ledgers' readings, the executed stretches (in chunks:
# StretchChunks, which `collect` turns into Stretches)
Outcome = namedtuple("Outcome", "completion start counters preempted migrations cold_spent job_att job_fair w_att "
                                "w_fair8 stretches violation_at finished")
# the executed stretches of positive length (schedulers.cluster.metrics.allocation_table), one array per
# field (the types of schedulers.cluster.stretches.STORED): job, start, end, kind (0 run, 1 cold start),
# where its placement starts in flat_node / flat_k and how many parts it has
Stretches = namedtuple("Stretches", "job start end kind pl pn flat_node flat_k")
# a finished run's stretches as the loop hands them over (schedulers.cluster.stretches): how many
# stretches and placement parts, and each field's chunks (the last one filled up to the count)
StretchChunks = namedtuple("StretchChunks", "n job start end kind pl pn flat_n flat_node flat_k")

#: the modules the compiled run is made of (with schedulers.jit, schedulers.revision and a kernel's own):
#: a change to any of them recompiles it (schedulers.cluster.jitshared)
SIMULATOR_MODULES = tuple(Path(__file__).with_name(name) for name in (
    "state.py", "stretches.py", "ledgers.py", "placement.py", "queues.py", "kernels.py", "events.py", "loop.py"))


@jitable
def pop_completions(s, work, t_next, one, completed):
    """The running jobs whose work is done by t_next (their virtual finish within tolerance of the
    running group's clock) out of the engine, into `completed` (only the first: `one`)."""
    eng = s.eng
    run_heap = work.run_heap
    stamp = eng.stamp
    group_of = eng.group_of
    base = eng.base
    g_count = eng.g_count
    completion = eng.completion
    size = work.size
    V = eng.g_V[_RUN]
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


@jitable
def drop_stale(run_heap, stamp, group_of):
    """The engine's heap of running jobs without its stale entries (jobs preempted or done since
    they were pushed: a valid entry's stamp is its job's and the job runs), heapified again. A
    stale entry is otherwise popped only once it surfaces at the top, when the running group's
    clock reaches the finish it had; with millions of preemptions the heap grew to many times the
    running jobs. Every entry is distinct (a job's stamp grows at each move), so the valid entries
    surface in the same order from the rebuilt heap."""
    n = 0
    for i in range(len(run_heap)):
        entry = run_heap[i]
        j = entry[1]
        if entry[2] == stamp[j] and group_of[j] == _RUN:
            run_heap[n] = entry
            n += 1
    while len(run_heap) > n:
        run_heap.pop()
    heapq.heapify(run_heap)


@jitable
def apply_moves(s, work, now):
    """The group moves `allocate` asked for, in order: each job into its engine group (running,
    cold-starting or idle), a running job's virtual finish time into the engine's heap; a job that
    starts being served gets its start time; the wake-up it asked for. The moves are written out in
    the loop over them, on the engine's arrays read once: in the compiled loop a call, or a copied
    function's arguments, counts references to each array it is given. The wake-up is read before
    the moves (they do not change it) and the engine's list of wake-ups last: llvmlite's reference
    count pruning gives up on a block's references after the first one it cannot prune (here the
    list, which outlives the others; the engine, when it was read again after the moves), so the
    others are read before it."""
    eng = s.eng  # each array read once for all the moves (every read through the state counts references)
    moves_j = eng.moves_j
    moves_g = eng.moves_g
    g_rate = eng.g_rate
    start = eng.start
    group_of = eng.group_of
    base = eng.base
    vjoin = eng.vjoin
    g_V = eng.g_V
    g_count = eng.g_count
    stamp = eng.stamp
    run_heap = work.run_heap
    size = work.size
    wake = eng.wake_req[0]
    wakes = eng.wakes
    for i in range(len(moves_j)):
        j = moves_j[i]
        g = moves_g[i]
        old = group_of[j]
        if old != g:
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
        if g != _IDLE and g_rate[g] > 0.0 and math.isnan(start[j]):
            start[j] = now
    if wake < math.inf:
        heapq.heappush(wakes, wake)


@jitable
def close_ledgers(s):
    """The ledgers' end of the run (LTGF.window_table advances every tenant to the makespan)."""
    t_end = 0.0
    any_done = False
    for j in range(s.job.n):
        c = s.eng.completion[j]
        if not math.isnan(c) and (not any_done or c > t_end):
            t_end = c
            any_done = True
    for k in range(s.job.T):
        advance(s, k, t_end)


@jitable
def stretches(s):
    """The executed stretches in their chunks (StretchChunks; `collect` makes them arrays)."""
    seg = s.seg
    return StretchChunks(n=kept(seg, "n"), job=seg.job, start=seg.start, end=seg.end, kind=seg.kind, pl=seg.pl,
                         pn=seg.pn, flat_n=kept(seg, "flat_n"), flat_node=seg.flat_node, flat_k=seg.flat_k)


def collect(chunks: StretchChunks) -> Stretches:
    """A finished run's stretches (the loop's StretchChunks) as one array per field (STORED types),
    the stretches of positive length only (a stretch that ends at its start held no GPU time). Each
    chunk is freed once copied (the chunk lists are emptied), so that the copy needs one chunk on
    top of what the stretches take (schedulers.cluster.stretches). RecordLimitError for a run that
    recorded more placement parts than the stretches' offsets (`pl`, int32) hold: the offsets a
    stretch stores are below that count, so every one is whole when it is within the bound."""
    if int(chunks.flat_n[0]) > OFFSETS_MAX + 1:
        raise RecordLimitError(f"the run recorded {int(chunks.flat_n[0]):,} placement parts: its stretches hold the "
                         f"offsets of at most {OFFSETS_MAX + 1:,} (schedulers.cluster.stretches)")
    n = int(chunks.n[0])
    step = chunk_entries("end")
    keep = np.empty(n, np.bool_)
    for c, (start, end) in enumerate(zip(chunks.start, chunks.end)):
        m = min(step, n - c * step)
        np.greater(end[:m], start[:m], out=keep[c * step:c * step + m])
    fields = {name: _joined(getattr(chunks, name), chunk_entries(name), n, keep, STORED[name])
              for name in ("job", "start", "end", "kind", "pl", "pn")}
    for name in ("flat_node", "flat_k"):
        fields[name] = _joined(getattr(chunks, name), chunk_entries(name), int(chunks.flat_n[0]), None, STORED[name])
    return Stretches(**fields)


def _joined(parts: list, step: int, n: int, keep, dtype) -> np.ndarray:
    """The first `n` entries of the chunks `parts` of `step` entries each (those where `keep` is
    true, when it is given) in one array; `parts` is emptied, each chunk freed once it is copied."""
    out = np.empty(n if keep is None else int(np.count_nonzero(keep)), dtype)
    pending = parts[::-1]
    parts.clear()
    at = 0
    for c in range(len(pending)):
        chunk = pending.pop()
        m = min(step, n - c * step)
        if keep is None:
            out[at:at + m] = chunk[:m]
            at += m
        else:
            mask = keep[c * step:c * step + m]
            size = int(np.count_nonzero(mask))
            if size == m:  # a chunk without a stretch of length 0 (most): copied whole, several times faster
                out[at:at + m] = chunk[:m]
            else:
                np.compress(mask, chunk[:m], out=out[at:at + size])
            at += size
        del chunk
    return out


@jitable
def outcome(s, finished):
    """The run's Outcome once the loop has ended."""
    led = s.led
    n_win = 0
    for k in range(s.job.T):
        if len(led.win_att[k]) > n_win:
            n_win = len(led.win_att[k])
    w_att = np.zeros((s.job.T, n_win))
    w_fair8 = np.zeros((s.job.T, n_win))
    for k in range(s.job.T):
        for w in range(len(led.win_att[k])):
            w_att[k, w] = led.win_att[k][w]
            w_fair8[k, w] = led.win_fair8[k][w]
    eng = s.eng
    q = s.q  # the arrays handed to Python with a reference of their own (`kept`): they outlive the state
    return Outcome(completion=kept(eng, "completion"), start=kept(eng, "start"), counters=kept(s, "counters"),
                   preempted=kept(q, "preempted"), migrations=kept(q, "migrations"), cold_spent=kept(q, "cold_spent"),
                   job_att=kept(led, "job_att"), job_fair=kept(led, "job_fair"), w_att=w_att, w_fair8=w_fair8,
                   stretches=stretches(s), violation_at=q.violation_at[0], finished=finished)


@jitable
def run_events(s, work, p, max_events):
    """The events of a run from time 0 to its end, over its state `s`, the engine's `work` and the
    kernel's state `p`: the run's Outcome."""
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
    run_heap = work.run_heap
    stamp = eng.stamp
    group_of = eng.group_of
    g_V = eng.g_V
    g_rate = eng.g_rate
    wakes = eng.wakes
    submit = s.job.submit
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
            pop_completions(s, work, t_next, one, completed)
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
        eng.moves_j.clear()
        eng.moves_g.clear()
        eng.wake_req[0] = math.inf
        allocate(s, p, now, completed, arrived)
        apply_moves(s, work, now)
        if len(run_heap) > 2 * g_count[_RUN] + 64:  # mostly stale: rebuilt (amortised O(1) per push)
            drop_stale(run_heap, stamp, group_of)
        if g_count[_RUN] + g_count[_COLD] > 0:
            idle = 0
        elif n_wait[0] > 0 and len(arrived) == 0:
            idle += 1
            if idle >= STUCK_AFTER:
                violation(s, 8, -1, now)
        if counters[VIOLATION] != 0:
            break
    counters[EVENTS] = events
    close_ledgers(s)
    return outcome(s, finished)


def run_python(jobs, cluster, cfg, max_events, params):
    """The Outcome of the run on the loop's records as Python: the state, the engine's work and the
    kernel's state made as the compiled run makes them (schedulers.cluster.jitshared), then the same
    `run_events`."""
    s = new_state(jobs, cluster, cfg)
    work = new_work(jobs.size)  # the true sizes: the engine's, apart from the state a kernel is given
    p = setup(s, params, work.size)  # given to a clairvoyant kernel only (schedulers.cluster.kernels)
    return run_events(s, work, p, max_events)
