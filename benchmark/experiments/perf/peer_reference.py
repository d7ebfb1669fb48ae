"""A transcription of the event loops of the ATLAS paper's reference code [ATLAS26], the peer that
`benchmark perf --peers` measures the engine against (docs/performance.md).

Written for this project from the algorithms as the paper's published total-completion code runs
them, keeping what costs time there: a record object per job, jobs sorted by arrival, an absolute
tolerance EPS, a result record per completed job collected into a DataFrame at the end.
- fifo: one pass in arrival order.
- srpt: a heap of (remaining, arrival, id, job); the smallest runs until it finishes or the next
  arrival, then goes back on the heap.
- sprpt: the same loop keyed on the predicted remaining size max(0, p̂ − attained).
- rr, prr: a list of (job, remaining); at every event each active job is advanced at its rate
  (1/k; prr: (1 − λ)/k, plus λ for the smallest p̂), O(k) per event.
- las: the reference's "LAS" — the least-attained job (a scan of the active list) runs alone until
  it finishes or the next arrival. That is `las-ref` here, not exact LAS (docs/policies.md).
Ties go by arrival then id, as in the JobSet row order. May import numpy and pandas.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import pandas as pd

EPS = 1e-12
_INF = float("inf")


@dataclass
class Job:
    job_id: int
    arrival_time: float
    true_size: float
    predicted_size: float


def jobs_from_lists(submit, size, predicted=None) -> list[Job]:
    """One record per job (job_id = row index), as the reference builds them from its table."""
    predicted = size if predicted is None else predicted
    return [Job(j, float(r), float(p), float(q)) for j, (r, p, q) in enumerate(zip(submit, size, predicted))]


def _record(job: Job, completion: float) -> dict:
    return {"job_id": job.job_id, "arrival_time": job.arrival_time, "completion_time": completion,
            "flow_time": completion - job.arrival_time,
            "slowdown": (completion - job.arrival_time) / max(job.true_size, EPS)}


def fifo(jobs: list[Job]):
    order = sorted(jobs, key=lambda job: job.arrival_time)
    t, total, rows = 0.0, 0.0, []
    for job in order:
        if t < job.arrival_time:
            t = job.arrival_time
        t += job.true_size
        total += t
        rows.append(_record(job, t))
    return total, pd.DataFrame(rows)


def _heap_loop(jobs: list[Job], predicted: bool):
    """srpt (predicted False) or sprpt (True): run the heap's smallest until done or the next arrival."""
    order = sorted(jobs, key=lambda job: job.arrival_time)
    n, i, t, total, rows = len(order), 0, 0.0, 0.0, []
    ready: list = []  # (key, arrival, id, job, true remaining, attained)
    while i < n or ready:
        if not ready and i < n and t < order[i].arrival_time:
            t = order[i].arrival_time
        while i < n and order[i].arrival_time <= t + EPS:
            job = order[i]
            key = job.predicted_size if predicted else job.true_size
            heapq.heappush(ready, (key, job.arrival_time, job.job_id, job, job.true_size, 0.0))
            i += 1
        if not ready:
            continue
        key, arrival, jid, job, remaining, attained = heapq.heappop(ready)
        next_arrival = order[i].arrival_time if i < n else _INF
        run = min(remaining, next_arrival - t)
        if run <= EPS:
            heapq.heappush(ready, (key, arrival, jid, job, remaining, attained))
            t = next_arrival
            continue
        t += run
        remaining -= run
        attained += run
        if remaining <= EPS:
            total += t
            rows.append(_record(job, t))
        else:
            key = max(0.0, job.predicted_size - attained) if predicted else remaining
            heapq.heappush(ready, (key, arrival, jid, job, remaining, attained))
    return total, pd.DataFrame(rows)


def srpt(jobs: list[Job]):
    return _heap_loop(jobs, predicted=False)


def sprpt(jobs: list[Job]):
    return _heap_loop(jobs, predicted=True)


def _sharing_loop(jobs: list[Job], lam: float | None):
    """rr (lam None) or prr: advance every active job at its rate to the next event."""
    order = sorted(jobs, key=lambda job: job.arrival_time)
    n, i, t, total, rows = len(order), 0, 0.0, 0.0, []
    active: list = []  # (job, remaining)
    while i < n or active:
        if not active and i < n and t < order[i].arrival_time:
            t = order[i].arrival_time
        while i < n and order[i].arrival_time <= t + EPS:
            active.append((order[i], order[i].true_size))
            i += 1
        if not active:
            continue
        k = len(active)
        if lam is None:
            rates = [1.0 / k] * k
        else:
            favourite = min(range(k), key=lambda idx: active[idx][0].predicted_size)
            rates = [(1.0 - lam) / k] * k
            rates[favourite] += lam
        time_to_finish = min(rem / max(rates[idx], EPS) for idx, (_, rem) in enumerate(active))
        next_arrival = order[i].arrival_time if i < n else _INF
        dt = min(time_to_finish, next_arrival - t)
        t += dt
        finished = []
        for idx, (job, rem) in enumerate(active):
            rem -= rates[idx] * dt
            active[idx] = (job, rem)
            if rem <= EPS and dt == time_to_finish:
                finished.append(idx)
        for idx in reversed(finished):
            job, _ = active.pop(idx)
            total += t
            rows.append(_record(job, t))
    return total, pd.DataFrame(rows)


def rr(jobs: list[Job]):
    return _sharing_loop(jobs, None)


def prr(jobs: list[Job], lam: float = 0.7):
    return _sharing_loop(jobs, lam)


def las(jobs: list[Job]):
    """The reference's "LAS": the least-attained job runs alone until it finishes or the next arrival."""
    order = sorted(jobs, key=lambda job: job.arrival_time)
    n, i, t, total, rows = len(order), 0, 0.0, 0.0, []
    active: list = []  # [job, remaining, attained]
    while i < n or active:
        if not active and i < n and t < order[i].arrival_time:
            t = order[i].arrival_time
        while i < n and order[i].arrival_time <= t + EPS:
            active.append([order[i], order[i].true_size, 0.0])
            i += 1
        if not active:
            continue
        idx = min(range(len(active)), key=lambda a: active[a][2])
        entry = active[idx]
        next_arrival = order[i].arrival_time if i < n else _INF
        run = min(entry[1], next_arrival - t)
        t += run
        entry[1] -= run
        entry[2] += run
        if entry[1] <= EPS:
            active.pop(idx)
            total += t
            rows.append(_record(entry[0], t))
    return total, pd.DataFrame(rows)


POLICIES = {"fifo": fifo, "srpt": srpt, "sprpt": sprpt, "rr": rr, "prr": prr, "las-ref": las}
