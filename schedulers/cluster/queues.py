"""The waiting and running jobs' queues of a run (`s.q`, schedulers.cluster.state) as the kernels read
them: the waiting jobs in job order (`s.q.ws`), per-tenant bags, the candidates of a decision and the
counts of decisions. (Joining and leaving them, which calls the kernel's hooks, is
schedulers.cluster.events.)

May import numpy, schedulers.jit and schedulers.cluster.state.
"""

from __future__ import annotations

import numpy as np

from schedulers.cluster.state import CANDIDATES, DECISIONS, MOST_CANDIDATES
from schedulers.jit import jitable


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
def sorted_add(bufs, lens, k, v):
    """v into the ascending list bufs[k][:lens[k]] (values distinct; most arrive at its end)."""
    length = lens[k]
    buf = room(bufs, lens, k)
    pos = np.searchsorted(buf[:length], v)
    for i in range(length, pos, -1):
        buf[i] = buf[i - 1]
    buf[pos] = v
    lens[k] = length + 1


@jitable
def sorted_remove(bufs, lens, k, v):
    """v out of the ascending list bufs[k][:lens[k]]."""
    length = lens[k]
    buf = bufs[k]
    pos = np.searchsorted(buf[:length], v)
    for i in range(pos, length - 1):
        buf[i] = buf[i + 1]
    lens[k] = length - 1


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
