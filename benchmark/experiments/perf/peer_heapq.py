"""Minimal pure-Python heapq event loops: the limit `benchmark perf --peers` measures the engine against.

One short loop per single-machine policy, nothing but the algorithm: Python lists in, completion
times out, a heap keyed on the policy's key (ties by job index, i.e. submit order), no start
times, no preemption counts, no tolerances, no checks. Processor sharing (rr, prr, las) uses
virtual clocks, as the engine does, so that each loop is O(log n) per event. Jobs come in
(submit time, job_id) order, the JobSet row order. May import the standard library only.
"""

from __future__ import annotations

import heapq
import math

_INF = math.inf


def non_preemptive(submit, size, key=None):
    """fifo (key None: submit order), sjf (key = size), spjf (key = p̂): run each chosen job to the end."""
    n = len(size)
    completion = [0.0] * n
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    now, i = 0.0, 0
    while i < n or heap:
        if not heap and submit[i] > now:
            now = submit[i]
        while i < n and submit[i] <= now:
            push(heap, i if key is None else (key[i], i))
            i += 1
        j = pop(heap) if key is None else pop(heap)[1]
        now += size[j]
        completion[j] = now
    return completion


def srpt(submit, size):
    """Preemptive, smallest remaining true size; the running job is compared at each arrival."""
    n = len(size)
    completion = [0.0] * n
    heap: list = []
    push, pop, pushpop = heapq.heappush, heapq.heappop, heapq.heappushpop
    now, i, run, rem = 0.0, 0, -1, 0.0
    while i < n or run >= 0 or heap:
        arrived = False
        while i < n and submit[i] <= now:
            push(heap, (size[i], i))
            i += 1
            arrived = True
        if run < 0:
            if not heap:
                now = submit[i]
                continue
            rem, run = pop(heap)
        elif arrived:
            rem, run = pushpop(heap, (rem, run))
        t_arrival = submit[i] if i < n else _INF
        if now + rem <= t_arrival:
            now += rem
            completion[run] = now
            run = -1
        else:
            rem -= t_arrival - now
            now = t_arrival
    return completion


def one_at_a_time(submit, size, pred, kind):
    """Preemptive one-job-at-a-time with a key that moves while the job runs:
    sprpt (max(0, p̂ − attained)) and las-ref (attained), compared at each arrival."""
    n = len(size)
    completion = [0.0] * n
    attained = [0.0] * n
    heap: list = []
    push, pop, pushpop = heapq.heappush, heapq.heappop, heapq.heappushpop
    sprpt = kind == "sprpt"
    now, i, run = 0.0, 0, -1
    while i < n or run >= 0 or heap:
        arrived = False
        while i < n and submit[i] <= now:
            push(heap, (pred[i] if sprpt else 0.0, i))
            i += 1
            arrived = True
        if run < 0:
            if not heap:
                now = submit[i]
                continue
            run = pop(heap)[1]
        elif arrived:
            a = attained[run]
            run = pushpop(heap, (max(0.0, pred[run] - a) if sprpt else a, run))[1]
        t_arrival = submit[i] if i < n else _INF
        t_done = now + size[run] - attained[run]
        if t_done <= t_arrival:
            now = t_done
            completion[run] = now
            run = -1
        else:
            attained[run] += t_arrival - now
            now = t_arrival
    return completion


def edf_p(submit, size, pred, stretch=1.0):
    """Preemptive EDF on r + S·p̂, S doubled while the running job is past its predicted deadline."""
    n = len(size)
    completion = [0.0] * n
    rem = list(size)
    heap: list = []
    push, pop, pushpop = heapq.heappush, heapq.heappop, heapq.heappushpop
    now, i, run = 0.0, 0, -1
    while i < n or run >= 0 or heap:
        while i < n and submit[i] <= now:
            push(heap, (submit[i] + stretch * pred[i], i))
            i += 1
        if run < 0:
            if not heap:
                now = submit[i]
                continue
            run = pop(heap)[1]
        else:
            run = pushpop(heap, (submit[run] + stretch * pred[run], run))[1]
        while now >= submit[run] + stretch * pred[run]:  # a missed predicted deadline: double S
            stretch *= 2.0
            heap = [(submit[j] + stretch * pred[j], j) for _, j in heap]
            heapq.heapify(heap)
            run = pushpop(heap, (submit[run] + stretch * pred[run], run))[1]
        t_arrival = submit[i] if i < n else _INF
        deadline = submit[run] + stretch * pred[run]
        t_done = now + rem[run]
        if t_done <= t_arrival and t_done <= deadline:
            now = t_done
            completion[run] = now
            run = -1
            continue
        t = t_arrival if t_arrival < deadline else deadline
        rem[run] -= t - now
        now = t
    return completion


def rr(submit, size):
    """Processor sharing: one virtual clock V (service per job); a job finishes when V reaches V_join + p."""
    n = len(size)
    completion = [0.0] * n
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    now, V, i = 0.0, 0.0, 0
    while i < n or heap:
        t_arrival = submit[i] if i < n else _INF
        k = len(heap)
        if k:
            t_done = now + (heap[0][0] - V) * k
            if t_done <= t_arrival:
                V, j = pop(heap)
                now = t_done
                completion[j] = now
                continue
            V += (t_arrival - now) / k
        now = t_arrival
        push(heap, (V + size[i], i))
        i += 1
    return completion


def prr(submit, size, pred, lam=0.7):
    """Preferential round robin: every job (1 − λ)/k on a shared virtual clock W, the smallest-p̂
    job (the favourite) λ on top, tracked by its own remaining size."""
    n = len(size)
    completion = [0.0] * n
    finish_w = [0.0] * n  # W at which a job on the shared clock finishes
    version = [0] * n  # invalidates a job's entry in `shared` when it becomes the favourite
    done = [False] * n
    shared: list = []  # (finish_w, job, version)
    by_pred: list = []
    push, pop = heapq.heappush, heapq.heappop
    now, W, i, k = 0.0, 0.0, 0, 0
    fav, fav_rem = -1, 0.0
    while i < n or k:
        t_arrival = submit[i] if i < n else _INF
        if k:
            while shared and shared[0][2] != version[shared[0][1]]:
                pop(shared)
            share = (1.0 - lam) / k
            t_shared = now + (shared[0][0] - W) / share if shared else _INF
            t_fav = now + fav_rem / (share + lam)
            t = min(t_shared, t_fav, t_arrival)
            W += share * (t - now)
            fav_rem -= (share + lam) * (t - now)
            now = t
            arrival = False
            if t == t_fav:
                completion[fav] = now
                done[fav] = True
                k -= 1
                fav = -1
            elif t == t_shared:
                j = pop(shared)[1]
                completion[j] = now
                done[j] = True
                k -= 1
                continue
            else:
                arrival = True
        else:
            now, arrival = t_arrival, True
        if arrival:
            push(by_pred, (pred[i], i))
            finish_w[i] = W + size[i]
            push(shared, (finish_w[i], i, version[i]))
            i += 1
            k += 1
        while by_pred and done[by_pred[0][1]]:
            pop(by_pred)
        best = by_pred[0][1] if by_pred else -1
        if best != fav and best >= 0:
            if fav >= 0:
                finish_w[fav] = W + fav_rem
                push(shared, (finish_w[fav], fav, version[fav]))
            fav_rem = finish_w[best] - W
            version[best] += 1
            fav = best
    return completion


def las(submit, size):
    """Exact LAS: the running cohort (all jobs at the lowest attained level L) shares the machine;
    frozen cohorts wait on a stack, lowest level on top; a cohort reaching the next level merges
    with it (smaller heap into larger). A cohort member finishes when L reaches its size."""
    n = len(size)
    completion = [0.0] * n
    stack: list = []  # (level, heap of (size, job))
    cohort: list = []
    push, pop = heapq.heappush, heapq.heappop
    now, level, i = 0.0, 0.0, 0
    while i < n or cohort or stack:
        if not cohort and stack:
            level, cohort = stack.pop()
        t_arrival = submit[i] if i < n else _INF
        k = len(cohort)
        if k:
            t_done = now + (cohort[0][0] - level) * k
            t_level = now + (stack[-1][0] - level) * k if stack else _INF
            if t_done <= t_arrival and t_done <= t_level:
                level, j = pop(cohort)
                now = t_done
                completion[j] = now
                continue
            if t_level <= t_arrival:
                now = t_level
                level, other = stack.pop()
                small, cohort = (other, cohort) if len(other) <= len(cohort) else (cohort, other)
                for entry in small:
                    push(cohort, entry)
                continue
            level += (t_arrival - now) / k
        now = t_arrival
        if level > 0.0 and cohort:
            stack.append((level, cohort))
            cohort = []
        if not cohort:
            level = 0.0
        push(cohort, (size[i], i))
        i += 1
    return completion


# ----- the bare process `benchmark perf --command` measures a whole `benchmark run` against ----------
SIZE_FLOOR_S = 1.0  # the engine's floor on sizes (schedulers.jobs.SIZE_FLOOR_S)


def srpt_process(jobs_csv: str, out_csv: str) -> float:
    """What a minimal SRPT program does with a jobs CSV: read it with the csv module (columns job_id,
    submit_time, duration; no checks), order the jobs by submit time (then row), shift the times so
    the first is 0 and floor sizes at 1 s as the engine does, run `srpt`, write job_id,completion_time.
    Returns ΣC_j, which equals the engine's SRPT total completion on the same file."""
    import csv

    with open(jobs_csv, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader)
        at = {name: k for k, name in enumerate(header)}
        i_id, i_submit, i_size = at["job_id"], at["submit_time"], at["duration"]
        rows = sorted((float(row[i_submit]), k, row[i_id], float(row[i_size])) for k, row in enumerate(reader))
    first = rows[0][0] if rows else 0.0
    submit = [r[0] - first for r in rows]
    size = [max(SIZE_FLOOR_S, r[3]) for r in rows]
    completion = srpt(submit, size)
    with open(out_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["job_id", "completion_time"])
        writer.writerows((r[2], c) for r, c in zip(rows, completion))
    return sum(completion)


if __name__ == "__main__":  # python -m benchmark.experiments.perf.peer_heapq JOBS.csv OUT.csv: prints ΣC_j
    import sys

    print(repr(srpt_process(sys.argv[1], sys.argv[2])))
