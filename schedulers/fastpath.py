"""Specialised event loops for the built-in single-machine policies: the engine, unrolled per policy.

`schedulers.engine.Engine` is the reference implementation: one event loop for every policy, a
policy callback and an `Allocation` object per event, service groups in lists. That generality
costs 6–27× the time of a bare heapq loop per event (docs/performance.md). For the built-in
single-machine policies `simulate` runs one of the loops below instead, each the engine's loop for
one shape of service:

- `_make_one_at_a_time`: one job at rate 1, chosen by its key (`_OneAtATime.allocate`), for every
  preemptive key-based policy (pspjf, srpt, sprpt, edf, edf-p-ref, las-ref). The order is the
  policy's own key function (`order_key`, in its policy file), the function its `key` calls on
  the engine, and the running job is preempted by its preemption rule (`preemption_rule`), the
  function `_OneAtATime.allocate` calls: each written once, a plug-in of the loop (one loop per
  key, with the key and rule copied in: by numba when compiled, by schedulers.inlining as Python).
  Every job's release key is computed before the loop, in one call of the key function on the
  job columns as arrays (`release_keys`);
- `_non_preemptive`: sjf and spjf, whose key is read at a job's release only: the same one job at a
  time on their release keys (`release_keys`, the same key function), one job per pass;
- `_make_edf_p`: the same with EDFP's doubling of S (its `doubling_rule`, the function `EDFP.after`
  calls), on edf-p's key function and preemption rule;
- `_fifo`: fifo's key is the same for every job, so its waiting jobs are an index range, not a heap
  (3.6× less time than the keyed loop on a heap as Python, 14× compiled: docs/performance.md);
- `_rr`, `_prr`, `_las`: the sharing policies, whose decisions move jobs between service groups.

All but `_las` and `_make_edf_p` perform the *same floating-point operations in the same order* —
group clocks advanced by `rate * dt` at every event, snapped to the finishing job's virtual finish,
the same relative tolerances, the same wake-ups — so schedules, start times, preemption counts and
event counts are identical to the reference engine, bit for bit. `_las` and edf-p's loop keep the
engine's tolerances but not its wake-ups that change nothing (stale level crossings, stale predicted deadlines); they take fewer
events and agree with the engine to rounding (1e-9 relative), with the same preemption counts and,
for edf-p, the same final S and doublings (tests/schedulers/test_fastpath.py checks every policy
on random instances with ties, releases and predictions). No Python object is allocated per event
beyond the heap's (key, job) tuples, and the Python loops read Python lists and floats, never
numpy scalars.

A policy takes a fast path only if it is an instance of a built-in class whose decision methods
it does not override (a `prr(lam=0.5)` setting still does; a plugin subclass with its own `key`
runs on the engine).

The same loops run compiled by numba from this source (`compiled_loops`, when schedulers.jit says
so): they take Python lists or float64 arrays alike, fill in output buffers they are given, start
every heap with one typed entry (so the compiler knows its type) and use no dictionaries. Keep it
so: a loop numba cannot compile fails the compiled-loop tests of tests/schedulers/test_fastpath.py.
The compiled loops perform the same IEEE floating-point operations in the same order as the Python
ones (no fast-math), so their runs are identical, bit for bit; the Python loops stay the reference,
and the fallback when numba is missing.

Every loop takes its event budget (`event_budget`: 4 events per job + 4,096) and checks in with
`schedulers.jit.checkpoint` every 16,384 events (fifo's, the tightest, at the end of the job that
reaches them), where a compiled loop lets Python run a pending signal handler (Ctrl-C) and a loop
past its budget returns -1 events (EventBudgetExceeded): one integer comparison per event, the
same floating-point operations. Times that are not finite are refused before any loop (`JobSet.require_finite`).

Which classes run on which loop is read from the classes: a built-in class names its loop in its
own `fast_loop` (schedulers.policy_base.Policy), and a one-job-at-a-time class its key function in
its `order_key`, its preemption rule in `preemption_rule` (and edf-p its doubling rule in
`doubling_rule`). May import the standard library, atlas_data.plugins, schedulers.inlining,
schedulers.jit, and numpy (and numba, through schedulers.jit) where the compiled loops are used.
"""

from __future__ import annotations

import hashlib
import heapq
import inspect
import math

from atlas_data.plugins import is_plugin
from schedulers import jit
from schedulers.inlining import inline_calls
from schedulers.jit import EventBudgetExceeded, call, checkpoint, jitable

_REL_TOL = 1e-11  # as in schedulers.engine: completions closer than this are simultaneous
_NAN = math.nan
_INF = math.inf
_DECISION_METHODS = ("reset", "allocate", "key", "order_key", "key_reads_attained", "preemption_rule", "doubling_rule",
                     "after", "_level", "_join")

_OWN_LOOPS = frozenset({"fifo", "rr", "prr", "las", "edf-p"})  # the kinds not on the keyed loop
# (completion, start, preemptions, events): lists (Python loops) or arrays (compiled) in JobSet row
# order (preemptions None: none), and an int
Raw = tuple


def fast_simulate(jobs, policy) -> Raw | None:
    """The run of `policy` on `jobs` on one machine, or None if no fast path applies.

    The loops run compiled when ATLAS_BENCH_JIT says so for this many jobs (schedulers.jit), as
    Python otherwise; both give the same schedule, bit for bit."""
    import numpy as np  # noqa: PLC0415

    kind = _fast_kind(policy)
    if kind is None:
        return None
    jobs.require_finite()
    loops = loops_for(jobs.n)
    python = loops is None
    size = jobs.size.tolist() if python else column(jobs.size)
    predicted = jobs.predicted if policy.needs_prediction else None  # p̂ only for a policy that reads it
    predicted = None if predicted is None else predicted.tolist() if python else column(predicted)
    keys = None if kind in _OWN_LOOPS else release_keys(policy, jobs)  # the keyed loop's
    if keys is not None:  # the loop's column they are (sjf's sizes, spjf's p̂: no second list of them),
        # else their own list, or array (a column of the compiled loops, copied only if it is not one)
        same = [made for given, made in ((jobs.size, size), (jobs.predicted, predicted))
                if given is not None and keys.__array_interface__ == given.__array_interface__]
        keys = same[0] if same else keys.tolist() if python else np.require(keys, np.float64, ["C", "W", "O"])
    submit = column(jobs.submit_time, then=_INF)  # a sentinel after the last release: submit[nxt] needs no test
    return _run(kind, policy, submit.tolist() if python else submit, size, predicted, keys,
                _PYTHON_LOOPS if python else loops, _python_buffers if python else buffers)


def release_keys(policy, jobs):
    """Every job's key at its release (attained service 0.0) under a one-job-at-a-time `policy`, as a
    float64 array: one call of the policy's own key function (`order_key`) on the job columns as
    arrays, whose arithmetic numpy performs job by job, the same IEEE operations as the key's calls
    on one job (the Python loops would otherwise pay a Python call per job). The true sizes only for
    a clairvoyant policy (zeros otherwise, one number seen as a column: nothing allocated), p̂ only
    for one that reads it."""
    import numpy as np  # noqa: PLC0415

    n = jobs.n
    size = jobs.size if policy.clairvoyant else np.broadcast_to(0.0, n)
    estimate = jobs.predicted if policy.needs_prediction and jobs.predicted is not None else np.broadcast_to(0.0, n)
    keys = np.asarray(type(policy).order_key(slice(None), 0.0, jobs.submit_time, size, estimate, float(policy.stretch)),
                      np.float64)
    return keys if keys.ndim else np.full(n, keys)  # a key that reads no column is one number


def loops_for(n_jobs: int):
    """The compiled loops if they should run on `n_jobs` jobs (schedulers.jit), else None."""
    return compiled_loops() if jit.use_compiled(n_jobs) else None


def compiled_loops():
    """The loops of this module compiled by numba (each on its first call; imports numba)."""
    global _compiled
    if _compiled is None:
        _compiled = _Loops(jit.njit)
    return _compiled


def column(values, then: float | None = None):
    """A job column as the compiled loops take it: a writable float64 array of its own (one array
    type for every column, so that each loop compiles once), with `then` appended if given."""
    import numpy as np  # noqa: PLC0415

    return np.array(values, np.float64) if then is None else np.append(np.asarray(values, np.float64), then)


def buffers(n: int, preemptive: bool) -> tuple:
    """The completion, start (NaN: not started) and preemption arrays the compiled loops fill in."""
    import numpy as np  # noqa: PLC0415

    return np.full(n, np.nan), np.full(n, np.nan), (np.zeros(n, np.int64) if preemptive else None)


def _python_buffers(n: int, preemptive: bool) -> tuple:
    return [_NAN] * n, [_NAN] * n, ([0] * n if preemptive else None)


def _run(kind, policy, submit, size, predicted, keys, loops, buffers) -> Raw:
    """`kind`'s loop from `loops` (Python's or the compiled ones) on the job columns given as Python
    lists (Python loops) or float64 arrays (compiled loops), submit with its sentinel, and (the
    keyed loop) the jobs' release keys; `buffers(n, preemptive)` makes the completion, start and
    preemption outputs the loops fill in."""
    n = len(size)
    if policy.needs_prediction and predicted is None:  # simulate() refuses this first; a direct call
        raise ValueError(f"{kind} reads predicted durations and the job set has none")  # must not run on zeros
    budget = event_budget(n)
    cls = type(policy)
    if kind in ("rr", "las", "fifo") or (keys is not None and not cls.preemptive):
        completion, start, _ = buffers(n, False)
        if keys is None:
            events = call(getattr(loops, kind), submit, size, completion, start, budget)
        else:  # sjf, spjf: a job's key is read at its release only, so the release keys are the order
            events = call(loops.non_preemptive, submit, size, keys, completion, start, budget)
        return completion, start, None, _within_budget(kind, events, budget, n)
    # p̂, or a placeholder of the loops' column type for a policy that does not read it (never the sizes)
    pred = predicted if policy.needs_prediction else _zeros(n, like=size)
    out = completion, start, preempt = buffers(n, True)
    if kind == "prr":
        events = call(loops.prr, submit, size, pred, float(policy.lam), completion, start, preempt, budget)
        return completion, start, preempt, _within_budget(kind, events, budget, n)
    # a preemptive one-job-at-a-time policy: its loop runs the policy's own key function (`order_key`)
    # and preemption rule (and edf-p's doubling rule); the key reads the true sizes only if the policy
    # is clairvoyant (a placeholder otherwise)
    key_size = size if policy.clairvoyant else _zeros(n, like=size)
    if kind == "edf-p":
        events, stretch, doublings = call(loops.keyed(_make_edf_p, cls), submit, size, key_size, pred,
                                          float(policy.initial_stretch), out, budget)
        _within_budget(kind, events, budget, n)
        policy.stretch, policy.doublings = stretch, doublings  # what EDFP.reset/after leave behind
        return completion, start, preempt, events
    events = call(loops.keyed(_make_one_at_a_time, cls), submit, size, keys, key_size, pred, float(policy.stretch),
                  out, budget)
    return completion, start, preempt, _within_budget(kind, events, budget, n)


#: a loop's events: each is an arrival instant, a completion instant or (las) a merge of cohorts, at
#: most 3 per job, plus edf-p's missed predicted deadlines (each doubles S, which overflows after
#: about 2,100 doublings)
EVENTS_PER_JOB = 4
EXTRA_EVENTS = 4_096


def event_budget(n: int) -> int:
    """The most events a fast loop can take on `n` jobs (schedulers.jit: past it, the loop stops)."""
    return EVENTS_PER_JOB * n + EXTRA_EVENTS


def _within_budget(kind: str, events: int, budget: int, n: int) -> int:
    """`events`, or EventBudgetExceeded if the loop stopped at its budget (it returns -1 then)."""
    if events < 0:
        raise EventBudgetExceeded(f"the {kind} loop on {n:,} jobs went past its budget of {budget:,} events and was "
                                  "stopped (a run of this many jobs takes fewer: its times are not numbers the loop "
                                  "can order)")
    return events


def _zeros(n: int, like):
    if isinstance(like, list):
        return [0.0] * n
    import numpy as np  # noqa: PLC0415

    return np.zeros(n, np.float64)


def fast_loop_of(cls) -> str:
    """The kind of loop a class names in its own `fast_loop` ("" if none): only a built-in class's
    counts — a plugin class never takes a specialised loop, whatever it sets."""
    return "" if is_plugin(cls) else cls.__dict__.get("fast_loop", "")


def _fast_kind(policy) -> str | None:
    if getattr(policy, "revision", "none") != "none":  # the loops keep p̂ as the key: the engine revises
        return None
    cls = type(policy)
    for base in cls.__mro__:
        kind = fast_loop_of(base)
        if kind:
            # a subclass that only sets parameters or a name keeps the fast path; one that
            # changes a decision (key, allocate, ...) runs on the reference engine
            same = all(getattr(cls, m, None) is getattr(base, m, None) for m in _DECISION_METHODS)
            if same and getattr(cls, "preemptive", None) is getattr(base, "preemptive", None):
                return kind
            return None
    return None


def _fifo(submit, size, completion, start, budget):
    """fifo: jobs run in index order, so the waiting jobs are the range [next_start, released)."""
    n = len(size)
    now = V = 0.0
    nxt = events = 0
    next_submit = submit[0]
    tol_rel = _REL_TOL
    check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
    for run in range(n):
        if nxt <= run:  # the machine is idle until this job's release (no group is active)
            if next_submit > now:
                now = next_submit
            events += 1
            while next_submit <= now:
                nxt += 1
                next_submit = submit[nxt]
        fin = V + size[run]
        start[run] = now
        while True:  # the events while `run` is served: arrivals, then its completion (each pass takes
            # an arrival or ends: the loop's tightest, so it checks in once per job, below)
            t = now + (fin - V)
            events += 1
            if t <= next_submit:
                if t > now:
                    V += t - now
                    now = t
                if fin > V:
                    V = fin
                break
            V += next_submit - now  # dt > 0: next_submit > now here
            now = next_submit
            while next_submit <= now:
                nxt += 1
                next_submit = submit[nxt]
            if t <= now + tol_rel * (now if now > 1.0 else 1.0) and fin <= V + tol_rel * (V if V > 1.0 else 1.0):
                break  # finishes within the tolerance of this arrival: completes at it
        completion[run] = now
        while next_submit <= now:
            nxt += 1
            next_submit = submit[nxt]
        if events >= check_at:
            check_at = checkpoint(events, budget)
            if check_at < 0:
                return -1
    return events


def _non_preemptive(submit, size, release_key, completion, start, budget):
    """sjf, spjf (a one-job-at-a-time policy that never preempts, `_OneAtATime` in
    schedulers.policies.single): one job at rate 1, chosen by (key, index) when the machine frees.
    A job's key is read once, at its release (attained 0.0), so the order is its release key
    (`release_keys`: the policy's own key function) and the loop needs no key function; the same
    event sequence as `_fifo`, the waiting jobs a heap. One job per pass, its arrivals in an inner
    loop: as Python about 8 % less time than the preemptive loop's one event per pass (measured in
    docs/performance.md)."""
    n = len(size)
    waiting = [(0.0, 0)]  # a heap of (key, job); the entry types it for the compiler
    waiting.clear()
    push, pop = heapq.heappush, heapq.heappop
    now = V = 0.0
    nxt = events = 0
    next_submit = submit[0]
    tol_rel = _REL_TOL
    check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
    for _ in range(n):
        if not waiting:  # the machine is idle until the next release (no group is active)
            if next_submit > now:
                now = next_submit
            events += 1
            while next_submit <= now:
                push(waiting, (release_key[nxt], nxt))
                nxt += 1
                next_submit = submit[nxt]
        run = pop(waiting)[1]
        fin = V + size[run]
        start[run] = now
        while True:  # the events while `run` is served: arrivals, then its completion
            t = now + (fin - V)  # engine: (finish - V) / rate with rate 1.0, exact
            events += 1
            if events >= check_at:
                check_at = checkpoint(events, budget)
                if check_at < 0:
                    return -1
            if t <= next_submit:  # completion (first among simultaneous events)
                if t > now:
                    V += t - now
                    now = t
                if fin > V:
                    V = fin
                break
            V += next_submit - now  # an arrival while `run` is served; dt > 0
            now = next_submit
            while next_submit <= now:
                push(waiting, (release_key[nxt], nxt))
                nxt += 1
                next_submit = submit[nxt]
            if t <= now + tol_rel * (now if now > 1.0 else 1.0) and fin <= V + tol_rel * (V if V > 1.0 else 1.0):
                break  # finishes within the tolerance of this arrival: completes at it
        completion[run] = now
        while next_submit <= now:
            push(waiting, (release_key[nxt], nxt))
            nxt += 1
            next_submit = submit[nxt]
    return events


def _make_one_at_a_time(key, reads_attained, prefer, sources: str):
    """The loop of a preemptive one-job-at-a-time policy (`_OneAtATime` in
    schedulers.policies.single) keyed by `key`, its key function: one job at rate 1, chosen by
    (key, index) when the machine frees and compared with the first waiting job at every arrival by
    `prefer`, its preemption rule, as `_OneAtATime.allocate` does. Every job's key at its release
    (attained 0.0) is given (`release_key`: `release_keys`); the running job's is computed at each
    arrival, with its attained service, if the key reads it (`reads_attained`), and is its release
    key otherwise (what the policy's `key` computes then). `sources` (a digest of the source files
    the loop, the key and the rule come from) keys numba's on-disk cache: a compiled loop is never
    loaded for another key's source."""

    def loop(submit, size, release_key, key_size, estimate, stretch, out, budget):
        sources  # noqa: B018 (the cache key: see above)
        completion, start, preempt = out
        n = len(size)
        base = [0.0] * n
        waiting = [(0.0, 0)]  # a heap of (key, job); the entry types it for the compiler
        waiting.clear()
        push, pop = heapq.heappush, heapq.heappop
        now = V = fin = vjoin = 0.0
        run = -1
        nxt = finished = events = 0
        next_submit = submit[0]
        tol_rel = _REL_TOL
        check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
        while finished < n:
            if run < 0:
                if not waiting:  # idle until the next release
                    if next_submit > now:
                        now = next_submit
                    events += 1
                    while next_submit <= now:
                        push(waiting, (release_key[nxt], nxt))
                        nxt += 1
                        next_submit = submit[nxt]
                run = pop(waiting)[1]
                vjoin = V
                fin = V + size[run] - base[run]
                if start[run] != start[run]:
                    start[run] = now
            t = now + (fin - V)  # engine: (finish - V) / rate with rate 1.0, exact
            events += 1
            if events >= check_at:
                check_at = checkpoint(events, budget)
                if check_at < 0:
                    return -1
            if t <= next_submit:  # completion (first among simultaneous events)
                if t > now:
                    V += t - now
                    now = t
                if fin > V:
                    V = fin
                completion[run] = now
                finished += 1
                run = -1
                while next_submit <= now:
                    push(waiting, (release_key[nxt], nxt))
                    nxt += 1
                    next_submit = submit[nxt]
                continue
            V += next_submit - now  # an arrival while `run` is served; dt > 0
            now = next_submit
            while next_submit <= now:
                push(waiting, (release_key[nxt], nxt))
                nxt += 1
                next_submit = submit[nxt]
            if t <= now + tol_rel * (now if now > 1.0 else 1.0) and fin <= V + tol_rel * (V if V > 1.0 else 1.0):
                completion[run] = now  # finishes within the tolerance of this arrival
                finished += 1
                run = -1
                continue
            if reads_attained:
                current = key(run, base[run] + (V - vjoin), submit, key_size, estimate, stretch)
            else:
                current = release_key[run]
            first, j = waiting[0]
            if prefer(first, j, current, run):  # the preemption rule: the first waiting job takes the machine
                heapq.heapreplace(waiting, (current, run))
                base[run] += V - vjoin
                preempt[run] += 1
                run = j
                vjoin = V
                fin = V + size[run] - base[run]
                if start[run] != start[run]:
                    start[run] = now
        return events

    return loop


def _make_edf_p(key, prefer, double, sources: str):
    """edf-p's loop (EDFP): preemptive EDF on its key `key`, r + S·p̂, with its preemption rule
    `prefer` and its doubling rule `double` (S doubled at a missed predicted deadline). `sources`:
    the cache key, as for `_make_one_at_a_time`.

    The engine wakes at every predicted deadline it has ever scheduled; only the running job's
    current one can change anything (a doubling), so this loop keeps that one deadline, not a
    heap of stale ones. Fewer events than the engine's, so V and `now` are summed over fewer
    steps: times agree with the engine's to rounding (1e-9 relative), not bit for bit."""

    def loop(submit, size, key_size, estimate, initial_stretch, out, budget):
        sources  # noqa: B018 (the cache key)
        completion, start, preempt = out
        n = len(size)
        base = [0.0] * n
        stretch, doublings = initial_stretch, 0
        waiting = [(0.0, 0)]
        waiting.clear()
        moves = [(0, 0)]  # a doubling's moves: (job, 0) out of service, (job, 1) into it
        push, pop = heapq.heappush, heapq.heappop
        now = V = fin = vjoin = 0.0
        run = -1
        nxt = finished = events = 0
        next_submit = submit[0]
        wake = _INF  # the running job's predicted deadline
        tol_rel = _REL_TOL
        check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
        while finished < n:
            t_next = next_submit if next_submit < wake else wake
            events += 1
            if events >= check_at:
                check_at = checkpoint(events, budget)
                if check_at < 0:
                    return -1, stretch, doublings
            completed = False
            if run >= 0:
                t = now + (fin - V)
                if t <= t_next:  # the running job completes (V snapped to its finish, as the engine does)
                    if t > now:
                        V += t - now
                        now = t
                    if fin > V:
                        V = fin
                    completed = True
                else:
                    if t_next > now:
                        V += t_next - now
                        now = t_next
                    completed = (t <= now + tol_rel * (now if now > 1.0 else 1.0)
                                 and fin <= V + tol_rel * (V if V > 1.0 else 1.0))
                if completed:
                    completion[run] = now
                    base[run] = size[run]
                    finished += 1
                    run = -1
                    wake = _INF
            else:
                if t_next == _INF:
                    raise RuntimeError("fast path: no pending event")
                if t_next > now:
                    now = t_next
            arrived = False
            while next_submit <= now:
                push(waiting, (key(nxt, 0.0, submit, key_size, estimate, stretch), nxt))
                nxt += 1
                next_submit = submit[nxt]
                arrived = True
            if not (completed or arrived or wake <= now):
                continue
            # _OneAtATime.allocate (`wake` is the running job's key)
            if run >= 0 and waiting:
                first, j = waiting[0]
                if prefer(first, j, wake, run):  # the preemption rule
                    push(waiting, (wake, run))
                    base[run] += V - vjoin
                    preempt[run] += 1
                    run = -1
            if run < 0:
                if not waiting:
                    continue
                wake, run = pop(waiting)
                vjoin = V
                fin = V + size[run] - base[run]
                if start[run] != start[run]:
                    start[run] = now
            if now >= wake:  # EDFP.after: S doubles while the running job is past its predicted deadline
                stretch, more, run, wake = double(key, now, run, wake, waiting, stretch, submit, key_size, estimate,
                                                  moves)
                doublings += more
                for j, into in moves:  # as Engine._apply moves the jobs
                    if into:
                        vjoin = V
                        fin = V + size[j] - base[j]
                        if start[j] != start[j]:
                            start[j] = now
                    else:
                        base[j] += V - vjoin
                        preempt[j] += 1
        return events, stretch, doublings

    return loop


def _rr(submit, size, completion, start, budget):
    """rr: one shared group of rate 1; members finish in order of their virtual finish time."""
    n = len(size)
    heap = [(0.0, 0)]  # (virtual finish, job)
    heap.clear()
    push, pop = heapq.heappush, heapq.heappop
    now = V = 0.0
    nxt = events = 0
    next_submit = submit[0]
    tol_rel = _REL_TOL
    check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
    while nxt < n or heap:
        events += 1
        if events >= check_at:
            check_at = checkpoint(events, budget)
            if check_at < 0:
                return -1
        k = len(heap)
        if k:
            r = 1.0 / k
            top = heap[0][0]
            t = now + (top - V) / r
            if t <= next_submit:  # completion(s)
                if t > now:
                    V += r * (t - now)
                    now = t
                if top > V:
                    V = top
                lim = V + tol_rel * (V if V > 1.0 else 1.0)
                completion[pop(heap)[1]] = now
                while heap and heap[0][0] <= lim:
                    completion[pop(heap)[1]] = now
                if next_submit > now:
                    continue
            else:  # an arrival (after `now`: every earlier one is in)
                V += r * (next_submit - now)
                now = next_submit
                if t <= now + tol_rel * (now if now > 1.0 else 1.0):
                    lim = V + tol_rel * (V if V > 1.0 else 1.0)
                    while heap and heap[0][0] <= lim:
                        completion[pop(heap)[1]] = now
        elif next_submit > now:
            now = next_submit
        while next_submit <= now:
            push(heap, (V + size[nxt], nxt))
            start[nxt] = now
            nxt += 1
            next_submit = submit[nxt]
    return events


@jitable(inline=True)
def _finish(j, now, size, base, group, stamp, done, completion):
    """prr: job j completes at `now` (out of its group; its stamp bumped, so its heap entries go stale)."""
    base[j] = size[j]
    group[j] = -1
    stamp[j] += 1
    done[j] = True
    completion[j] = now


@jitable(inline=True)
def _complete_shared(heap0, lim, now, size, base, group, stamp, done, completion):
    """prr: the shared group's members whose virtual finish is at most `lim`, completed at `now`
    (stale heap entries dropped on the way): how many."""
    count = 0
    while heap0:
        f, j, s = heap0[0]
        if s != stamp[j]:
            heapq.heappop(heap0)
            continue
        if f > lim:
            break
        heapq.heappop(heap0)
        _finish(j, now, size, base, group, stamp, done, completion)
        count += 1
    return count


@jitable(inline=True)
def _prr_moves(moves, best, previous, first, end, done):
    """PRR.allocate's moves when `best` becomes the favourite after `previous` at an event at which
    jobs first..end-1 were released: (job, 0: shared group / 1: the favourite's), in the order the
    engine applies them — the old favourite out, each released job into its group, the new one in."""
    moves.clear()
    if best != previous and previous != -1 and not done[previous]:
        moves.append((previous, 0))
    for j in range(first, end):
        moves.append((j, 1 if j == best else 0))
    if best != previous and best != -1 and not first <= best < end:
        moves.append((best, 1))


def _prr(submit, size, pred, lam, completion, start, preempt, budget):
    """prr: group 0 shares (1 − λ)(k − 1)/k among all but the favourite, group 1 holds the
    favourite (smallest p̂) at (1 − λ)/k + λ. Jobs move between the groups when the favourite changes."""
    n = len(size)
    base, vjoin, group, stamp = [0.0] * n, [0.0] * n, [-1] * n, [0] * n
    done = [False] * n
    V0 = V1 = rate0 = rate1 = 0.0
    cnt0 = cnt1 = 0
    heap0 = [(0.0, 0, 0)]  # group 0: (virtual finish, job, stamp at push)
    heap0.clear()
    fin1, in1 = 0.0, -1  # group 1 holds at most one job (the favourite): its virtual finish and index
    by_pred = [(0.0, 0)]  # (p̂, job) of every released job; finished ones are dropped when on top
    by_pred.clear()
    moves = [(0, 0)]  # (job, group) in the order Engine._apply applies them
    push, pop = heapq.heappush, heapq.heappop
    fav = -1
    now = 0.0
    nxt = finished = events = 0
    next_submit = submit[0]
    tol_rel = _REL_TOL
    check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
    f0 = f1 = r0 = r1 = t0 = t1 = 0.0
    shared = 1.0 - lam
    while finished < n:
        t_next = next_submit
        best = -1
        due0 = cnt0 > 0 and rate0 > 0.0
        if due0:
            while True:  # drop entries of jobs that moved since they were pushed (every move bumps the stamp)
                f0, j, s = heap0[0]
                if s == stamp[j]:
                    break
                pop(heap0)
            r0 = rate0 / cnt0
            t0 = now + (f0 - V0) / r0
            if t0 <= t_next:
                t_next, best = t0, 0
        due1 = cnt1 > 0 and rate1 > 0.0
        if due1:
            f1 = fin1
            r1 = rate1  # / cnt1, which is 1: group 1 holds the favourite alone
            t1 = now + (f1 - V1) / r1
            if t1 < t_next or (t1 == t_next and best < 0):
                t_next, best = t1, 1
        if t_next == _INF:
            raise RuntimeError("fast path: no pending event")
        if t_next < now:
            t_next = now
        dt = t_next - now
        if due0 and dt > 0.0:
            V0 += r0 * dt
        if due1 and dt > 0.0:
            V1 += r1 * dt
        if best == 0 and f0 > V0:  # snapped to the finishing job's virtual finish
            V0 = f0
        elif best == 1 and f1 > V1:
            V1 = f1
        now = t_next
        events += 1
        if events >= check_at:
            check_at = checkpoint(events, budget)
            if check_at < 0:
                return -1
        completed = 0
        horizon = now + tol_rel * (now if now > 1.0 else 1.0)
        if due0 and t0 <= horizon:
            completed = _complete_shared(heap0, V0 + tol_rel * (V0 if V0 > 1.0 else 1.0), now, size, base, group, stamp,
                                         done, completion)
            cnt0 -= completed
        if due1 and t1 <= horizon and fin1 <= V1 + tol_rel * (V1 if V1 > 1.0 else 1.0):
            _finish(in1, now, size, base, group, stamp, done, completion)
            in1 = -1
            cnt1 -= 1
            completed += 1
        finished += completed
        first = nxt
        while next_submit <= now:
            push(by_pred, (pred[nxt], nxt))
            nxt += 1
            next_submit = submit[nxt]
        if not completed and first == nxt:
            continue
        # PRR.allocate, its moves applied in order after its rates (as Engine._apply does)
        while by_pred and done[by_pred[0][1]]:
            pop(by_pred)
        previous, fav = fav, (by_pred[0][1] if by_pred else -1)
        _prr_moves(moves, fav, previous, first, nxt, done)
        k = cnt0 + cnt1 + (nxt - first)
        if k:
            rate0 = shared * (k - 1) / k
            rate1 = shared / k + lam
        for j, g in moves:
            old = group[j]
            if old == g:
                continue
            if old == 0:
                base[j] += V0 - vjoin[j]
                cnt0 -= 1
                if rate0 > 0.0 and rate1 <= 0.0:
                    preempt[j] += 1
            elif old == 1:
                base[j] += V1 - vjoin[j]
                cnt1 -= 1
                in1 = -1
                if rate1 > 0.0 and rate0 <= 0.0:
                    preempt[j] += 1
            stamp[j] += 1
            group[j] = g
            vjoin[j] = V0 if g == 0 else V1
            if g == 0:
                cnt0 += 1
                push(heap0, (V0 + size[j] - base[j], j, stamp[j]))
            else:
                cnt1 += 1
                fin1, in1 = V1 + size[j] - base[j], j
            if (rate0 if g == 0 else rate1) > 0.0 and start[j] != start[j]:
                start[j] = now
    return events


def _las(submit, size, completion, start, budget):
    """las: cohorts of jobs at equal attained service; the lowest one runs (its members share the
    machine), the others wait on a stack, lowest level on top; the running cohort merges with the
    next one when it reaches its level (smaller heap into larger), as LAS does.

    A cohort is a heap of (size, job): a member finishes when the cohort's level (attained service
    per member) reaches its size. The engine's tolerances are kept — completions within 1e-11 are
    simultaneous, cohorts within 1e-9 merge — but not its wake-ups at level crossings that no
    longer happen (scheduled before an arrival froze the cohort), and the level is one float per
    cohort rather than per-group clocks: times agree with the engine's to rounding (1e-9
    relative), with fewer events."""
    n = len(size)
    cohort = [(0.0, 0)]  # the running cohort: a heap of (size, job)
    cohort.clear()
    stack = [(0.0, cohort, 0.0)]  # (level, cohort heap, level − 1e-9·max(1, level): merge at or past it); top = lowest
    stack.clear()
    push, pop = heapq.heappush, heapq.heappop
    now = level = 0.0
    nxt = events = 0
    next_submit = submit[0]
    tol_rel = _REL_TOL
    check_at = checkpoint(0, budget)  # the event count at which the loop checks in (schedulers.jit)
    while nxt < n or cohort:
        events += 1
        if events >= check_at:
            check_at = checkpoint(events, budget)
            if check_at < 0:
                return -1
        k = len(cohort)
        crossed = False
        if k:
            top = cohort[0][0]
            t_done = now + (top - level) * k
            t_level = now + (stack[-1][0] - level) * k if stack else _INF
            if t_done <= next_submit and t_done <= t_level:  # completion(s)
                if t_done > now:
                    now = t_done
                if top > level:
                    level = top
                lim = level + tol_rel * (level if level > 1.0 else 1.0)
                completion[pop(cohort)[1]] = now
                while cohort and cohort[0][0] <= lim:
                    completion[pop(cohort)[1]] = now
            else:
                if t_level <= next_submit:
                    # the next cohort's level (or a gap the clock cannot resolve): merge below
                    t, crossed = t_level, True
                else:
                    t = next_submit
                if t > now:
                    level += (t - now) / k
                    now = t
                if t_done <= now + tol_rel * (now if now > 1.0 else 1.0):  # completion at the same time
                    lim = level + tol_rel * (level if level > 1.0 else 1.0)
                    while cohort and cohort[0][0] <= lim:
                        completion[pop(cohort)[1]] = now
            if not cohort and stack:
                level, cohort, _ = stack.pop()
                crossed = False
        elif next_submit > now:
            now = next_submit
        if next_submit <= now:
            if cohort and level > 0.0:  # arrivals freeze the running cohort
                stack.append((level, cohort, level - 1e-9 * (level if level > 1.0 else 1.0)))
                cohort = cohort[:0]  # a new empty heap (of the same type, for the compiler)
                crossed = False
            if not cohort:
                level = 0.0
            while next_submit <= now:
                push(cohort, (size[nxt], nxt))
                start[nxt] = now
                nxt += 1
                next_submit = submit[nxt]
        while stack and cohort and (crossed or level >= stack[-1][2]):
            # merge with the frozen cohort caught up with (within 1e-9), smaller heap into larger
            crossed = False
            frozen_level, other, _ = stack.pop()
            if len(other) > len(cohort):
                cohort, other = other, cohort
                level = frozen_level
            for entry in other:
                push(cohort, entry)
    return events


class _Loops:
    """The loops by kind, each passed through `wrap` (`jit.njit`: the compiled record of
    `compiled_loops`), and the loops made for a policy's key function (`keyed`)."""

    def __init__(self, wrap=None):
        self._wrap = wrap
        same = wrap or (lambda f: f)
        self.fifo, self.rr, self.prr, self.las = same(_fifo), same(_rr), same(_prr), same(_las)
        self.non_preemptive = same(_non_preemptive)
        self._keyed: dict = {}

    def keyed(self, make, cls):
        """The loop `make(*plug_ins, sources)` (`_make_one_at_a_time`, `_make_edf_p`) for one-job-at-a-time
        class `cls`'s plug-ins (`_plug_ins`), made once (compiled: one loop per plug-ins, cached on
        disk under a digest of their sources)."""
        plug_ins = _plug_ins(make, cls)
        loop = self._keyed.get((make, plug_ins))
        if loop is None:
            if self._wrap is None:
                loop = inline_calls(make(*plug_ins, "python"))  # the key and rules copied in, as numba does
            else:
                loop = make(*plug_ins, _sources_digest(plug_ins))
                # numba names its cache index after the function: one index per loop and key
                loop.__qualname__ = f"{make.__name__}_{plug_ins[0].__name__}" + ("_attained" if plug_ins[1] is True else "")
                loop = self._wrap(loop)
            self._keyed[(make, plug_ins)] = loop
        return loop

    def made(self) -> list:
        """Every loop made so far: the fixed ones and the keyed ones."""
        return [self.fifo, self.rr, self.prr, self.las, self.non_preemptive, *self._keyed.values()]


def _plug_ins(make, cls) -> tuple:
    """What loop `make` takes from class `cls`: its key function, then for the keyed loop whether the
    key reads attained service and its preemption rule, for edf-p's its preemption and doubling rules."""
    if make is _make_edf_p:
        return cls.order_key, cls.preemption_rule, cls.doubling_rule
    return cls.order_key, bool(cls.key_reads_attained), cls.preemption_rule


def _sources_digest(plug_ins) -> str:
    """A digest of the source files a keyed loop is compiled from: this module, jit.SOURCES and the
    plug-in functions' modules (numba's cache checks only the loop's own file)."""
    digest = hashlib.sha256()
    paths = [__file__, *jit.SOURCES] + [inspect.getsourcefile(f) for f in plug_ins if callable(f)]
    for path in dict.fromkeys(paths):
        with open(path, "rb") as file:
            digest.update(file.read())
    return digest.hexdigest()[:16]


_PYTHON_LOOPS = _Loops()
_compiled = None  # the compiled loops once made (numba compiles each on its first call)
