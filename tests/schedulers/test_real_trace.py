"""On the real Alibaba GPU pod trace, the core's ΣC_j, S* and makespans agree with independent
computations written here from scratch (no engine code)."""

import heapq

import numpy as np
import pytest

from atlas_data.adapters import default_jobs
from schedulers import normalisers
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.objectives import run_objective
from schedulers.policy import get_policy


@pytest.fixture(scope="module")
def real_jobs():
    table = default_jobs().sort_values(["submit_time", "job_id"]).head(3000)
    return JobSet.from_frame(table)


def _srpt_total_completion(r, p):
    """Textbook SRPT with a heap of (remaining, index)."""
    order, t, i, total, heap = np.argsort(r, kind="stable"), 0.0, 0, 0.0, []
    n = len(r)
    while i < n or heap:
        if not heap:
            t = max(t, r[order[i]])
        while i < n and r[order[i]] <= t:
            heapq.heappush(heap, (p[order[i]], order[i]))
            i += 1
        rem, j = heapq.heappop(heap)
        horizon = r[order[i]] if i < n else np.inf
        if t + rem <= horizon:
            t += rem
            total += t
        else:
            heapq.heappush(heap, (rem - (horizon - t), j))
            t = horizon
    return total


def _fifo_total_completion(r, p):
    t, total = 0.0, 0.0
    for rj, pj in zip(r, p):  # already in submit order
        t = max(t, rj) + pj
        total += t
    return total


def test_total_completion_against_textbook_implementations(real_jobs):
    srpt = simulate(real_jobs, get_policy("srpt")()).completion_time.sum()
    assert srpt == pytest.approx(_srpt_total_completion(real_jobs.submit_time, real_jobs.size), rel=1e-9)
    fifo = simulate(real_jobs, get_policy("fifo")()).completion_time.sum()
    assert fifo == pytest.approx(_fifo_total_completion(real_jobs.submit_time, real_jobs.size), rel=1e-12)


def test_max_stretch_edf_at_s_star_on_real_trace(real_jobs):
    rows, per_job, reference = run_objective("max_stretch", real_jobs, ["edf", "srpt"], {})
    s_star = reference["s_star"]
    edf = next(r for r in rows if r["policy"] == "edf")
    assert 1 - 1e-4 <= edf["ratio"] <= 1 + 1e-9
    # S* lies between the best lower bound (1) and the SRPT schedule's max stretch
    srpt = next(r for r in rows if r["policy"] == "srpt")
    assert 1.0 <= s_star <= srpt["value"] * (1 + 1e-12)
    assert not normalisers.edf_feasible(real_jobs.submit_time, real_jobs.size, real_jobs.submit_time + s_star * (1 - 2e-4) * real_jobs.size)


def test_makespan_against_independent_lpt(real_jobs):
    sizes = real_jobs.size
    rows, _, reference = run_objective("makespan", real_jobs, ["lpt"], {}, machines=[5, 20])
    for row in rows:
        m = row["machines"]
        loads = [0.0] * m
        for p in sorted(sizes, reverse=True):
            heapq.heapreplace(loads, loads[0] + p)
        assert row["value"] == pytest.approx(max(loads), rel=1e-12)
        assert row["reference"] == pytest.approx(max(sizes.sum() / m, sizes.max()))
