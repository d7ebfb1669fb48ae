"""The paper protocol against hand computations and an independent transcription of the reference
code's rules (plain loops, O(n²) where the reference is, no engine)."""

from __future__ import annotations

import heapq
import math

import numpy as np
import pandas as pd
import pytest

from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import get_policy
from schedulers.protocol import (
    clip_to_true, makespan_sample_size, random_pick, reference_s_star, run_paper, single_machine_load,
)

EPS = 1e-9


# ----- independent re-implementation of the reference's max-stretch rules --------------------
def ref_prepare(submit, size, y_pred, n, seed):
    n_all = len(submit)
    pick = np.sort(np.random.RandomState(seed).choice(n_all, size=n, replace=False)) if n < n_all else np.arange(n_all)
    r, p, q = submit[pick], size[pick], y_pred[pick]
    o = np.argsort(r)
    r, p, q = r[o] - r[o][0], np.maximum(p[o], 1.0), np.maximum(q[o], 1.0)
    return r, p, np.clip(q, 0.1 * p, 10 * p)


def ref_edf(r, p, d):
    n, rem, C, heap, i, t = len(r), p.copy(), np.full(len(r), np.nan), [], 0, 0.0
    while i < n or heap:
        if not heap and i < n:
            t = max(t, r[i])
        while i < n and r[i] <= t + EPS:
            heapq.heappush(heap, (d[i], i))
            i += 1
        dj, j = heapq.heappop(heap)
        nxt = r[i] if i < n else math.inf
        dt = min(rem[j], nxt - t)
        rem[j] -= dt
        t += dt
        if rem[j] <= EPS:
            C[j] = t
        else:
            heapq.heappush(heap, (dj, j))
    return C


def ref_feasible(r, p, d):
    C = ref_edf(r, p, d)
    return bool(np.all(C <= d + 1e-6))


def ref_s_star(r, p, tol=1e-3):
    def ok(S):
        d = r + S * p
        return not (p.sum() > (d.max() - r[0]) + 1e-12) and ref_feasible(r, p, d)

    lo, hi = 1.0, 2.0
    while not ok(hi):
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= tol * max(1.0, hi):
            break
    return hi


def ref_srpt(r, p, key):
    n, rem_t, rem_k, C, heap, i, t, active = len(r), p.copy(), key.copy(), np.full(len(r), np.nan), [], 0, 0.0, -1
    while i < n or active >= 0 or heap:
        if active < 0 and not heap and i < n:
            t = max(t, r[i])
        while i < n and r[i] <= t + EPS:
            if active < 0 or rem_k[i] < rem_k[active]:
                if active >= 0:
                    heapq.heappush(heap, (rem_k[active], active))
                active = i
            else:
                heapq.heappush(heap, (rem_k[i], i))
            i += 1
        if active < 0:
            if not heap:
                continue
            _, active = heapq.heappop(heap)
        nxt = r[i] if i < n else math.inf
        dt = min(rem_t[active], nxt - t)
        if dt <= 1e-12:
            t = nxt
            continue
        rem_t[active] -= dt
        rem_k[active] = max(0.0, rem_k[active] - dt)
        t += dt
        if rem_t[active] <= EPS:
            C[active] = t
            active = -1
    return C


def ref_las(r, p):
    """The reference's "LAS/FB", verbatim in spirit: argmin attained runs until done or next arrival."""
    n, rem, att, C, active, i, t, done = len(r), p.copy(), np.zeros(len(r)), np.full(len(r), np.nan), np.zeros(len(r), bool), 0, 0.0, 0
    while done < n:
        if not active.any() and i < n:
            t = max(t, r[i])
        while i < n and r[i] <= t + EPS:
            active[i] = True
            i += 1
        idx = np.flatnonzero(active)
        j = idx[np.argmin(att[idx])]
        nxt = r[i] if i < n else math.inf
        dt = min(rem[j], nxt - t)
        if dt <= 1e-12:
            t = nxt
            continue
        rem[j] -= dt
        att[j] += dt
        t += dt
        if rem[j] <= EPS:
            C[j] = t
            active[j] = False
            done += 1
    return C


def _instance(n, seed, ties=False):
    rng = np.random.default_rng(seed)
    submit = np.sort(rng.integers(0, 40 * n, n)).astype(float) if ties else np.cumsum(rng.exponential(30.0, n))
    size = np.ceil(np.exp(rng.normal(3.0, 1.5, n)))
    y_pred = size * np.exp(rng.normal(0, 1.2, n))
    y_pred[:5] = 0.3  # below the 1 s floor
    return submit, size, y_pred


def _table(submit, size, order=None):
    n = len(submit)
    order = np.arange(n) if order is None else order
    return pd.DataFrame({"job_id": [f"j{i:04d}" for i in range(n)], "submit_time": submit[order], "duration": size[order]})


# ----- hand cases --------------------------------------------------------------------------
def test_clip_moves_p_hat_into_a_tenth_to_ten_times_the_true_size():
    p = np.array([10.0, 100.0, 1.0, 50.0])
    p_hat = np.array([0.5, 2000.0, 5.0, 60.0])
    np.testing.assert_array_equal(clip_to_true(p_hat, p), [1.0, 1000.0, 5.0, 60.0])


def test_paper_max_stretch_floors_then_clips_the_p_hat_it_schedules_with():
    # four jobs, no sampling (n >= n_all): p̂ floored at 1 s, then clipped with the true p
    table = pd.DataFrame({"job_id": ["a", "b", "c", "d"], "submit_time": [0.0, 5.0, 7.0, 30.0],
                          "duration": [10.0, 100.0, 0.5, 50.0]})
    p_hat = np.array([0.5, 2000.0, 20.0, 60.0])
    rows, per_job, ref, _ = run_paper("max_stretch", table, {"x": p_hat}, policies=["sprpt"], n=10)
    got = per_job.set_index("job_id")["predicted_duration"].to_dict()
    # a: max(0.5, 1) = 1 -> clip [1, 100] -> 1; b: 2000 -> 1000; c: p floored to 1, p̂ 20 -> 10; d: 60 stays
    assert got == {"a": 1.0, "b": 1000.0, "c": 10.0, "d": 60.0}
    assert rows[0]["leaks"] == ["clip-by-true-size"]


def test_las_ref_is_not_las_on_two_jobs():
    # r = 0, 1; p = 4, 4. las-ref: job 0 runs to 1, job 1 (attained 0) runs alone to 5, job 0 to 8.
    # exact LAS: job 1 catches up to level 1 at 2, then both share: both finish at 8.
    jobs = JobSet.from_arrays([0.0, 1.0], [4.0, 4.0])
    np.testing.assert_allclose(simulate(jobs, get_policy("las-ref")()).completion_time, [8.0, 5.0])
    np.testing.assert_allclose(simulate(jobs, get_policy("las")()).completion_time, [8.0, 8.0])


@pytest.mark.parametrize("seed,ties", [(0, False), (1, True), (2, True)])
def test_las_ref_matches_the_reference_loop(seed, ties):
    submit, size, _ = _instance(300, seed, ties)
    jobs = JobSet.from_arrays(submit, size)
    ours = simulate(jobs, get_policy("las-ref")()).completion_time
    np.testing.assert_allclose(ours, ref_las(jobs.submit_time, jobs.size), rtol=1e-9, atol=1e-6)


def test_reference_s_star_matches_the_reference_bisection():
    submit, size, _ = _instance(200, 3)
    jobs = JobSet.from_arrays(submit, size)
    assert reference_s_star(jobs.submit_time, jobs.size) == pytest.approx(ref_s_star(jobs.submit_time, jobs.size), rel=1e-12)


@pytest.mark.parametrize("seed", [4, 5])
def test_paper_max_stretch_matches_an_independent_reimplementation(seed):
    submit, size, y_pred = _instance(400, seed)
    shuffled = np.random.default_rng(seed).permutation(400)  # a "raw" row order that is not submit order
    table = _table(submit, size, shuffled)
    rows, _, ref, inst = run_paper("max_stretch", table, {"m": y_pred[shuffled]}, n=150, sample_seed=42)
    r, p, q = ref_prepare(submit[shuffled], size[shuffled], y_pred[shuffled], 150, 42)
    s_bisect = ref_s_star(r, p)
    stretch = lambda C: np.maximum((C - r) / p, 1.0)  # noqa: E731
    s_opt = stretch(ref_edf(r, p, r + s_bisect * p))
    norm = s_opt.max()
    expected = {
        "edf": stretch(ref_edf(r, p, r + s_bisect * p)), "srpt": stretch(ref_srpt(r, p, p.copy())),
        "fifo": stretch(ref_edf(r, p, np.arange(len(r), dtype=float))), "las-ref": stretch(ref_las(r, p)),
        "sprpt": stretch(ref_srpt(r, p, q.copy())), "edf-p-ref": stretch(ref_edf(r, p, r + s_bisect * q)),
    }
    assert ref["s_star"] == pytest.approx(s_bisect, rel=1e-12)
    assert ref["s_emp"] == pytest.approx(norm, rel=1e-9)
    assert inst[0]["n"] == 150 and inst[0]["load"] == pytest.approx(p.sum() / (r.max() - r.min()))
    for row in rows:
        s = expected[row["policy"]]
        assert row["ratio"] == pytest.approx(s.max() / norm, rel=1e-9), row["policy"]
        assert row["median_ratio"] == pytest.approx(np.median(s) / norm, rel=1e-9), row["policy"]
        assert row["median_opt_ratio"] == pytest.approx(np.median(s) / np.median(s_opt), rel=1e-9), row["policy"]
    leaks = {row["policy"]: row["leaks"] for row in rows}
    assert leaks["sprpt"] == ["clip-by-true-size"]
    assert leaks["edf-p-ref"] == ["clip-by-true-size", "edf-p-true-s-star"]
    assert leaks["edf"] == leaks["las-ref"] == leaks["fifo"] == []


def test_paper_total_completion_is_the_head_window_without_floors():
    submit, size, y_pred = _instance(60, 6)
    size[:3] = 0.25  # below 1 s: the paper protocol does not floor total-completion sizes
    order = np.random.default_rng(0).permutation(60)
    table = _table(submit, size, order)
    rows, _, ref, _ = run_paper("total_completion", table, {"m": y_pred[order]}, n=40)
    r, p, q = submit[:40] - submit[0], size[:40], y_pred[:40]  # submit is sorted: the head is the first 40

    def nonpreemptive(key):
        t, C, waiting, i = 0.0, np.zeros(40), [], 0
        while i < 40 or waiting:
            if not waiting:
                t = max(t, r[i])
            while i < 40 and r[i] <= t:
                heapq.heappush(waiting, (key[i], i))
                i += 1
            _, j = heapq.heappop(waiting)
            t += p[j]
            C[j] = t
        return C.sum()

    srpt = ref_srpt(r, p, p.copy()).sum()
    assert ref["sum_completion"] == pytest.approx(srpt, rel=1e-12)
    got = {(row["policy"], row["predictor"]): row["ratio"] for row in rows}
    assert got[("fifo", None)] == pytest.approx(nonpreemptive(np.zeros(40)) / srpt, rel=1e-12)
    assert got[("sjf", None)] == pytest.approx(nonpreemptive(p) / srpt, rel=1e-12)
    assert got[("spjf", "m")] == pytest.approx(nonpreemptive(q) / srpt, rel=1e-12)


def test_makespan_sample_sizes_are_the_papers():
    assert [makespan_sample_size(m, 10**6) for m in (5, 10, 20, 50, 100)] == [115, 330, 860, 2800, 6600]
    assert makespan_sample_size(2, 10**6) == 20 and makespan_sample_size(100, 1000) == 1000


def test_paper_makespan_random_is_the_mean_of_ten_uniform_assignments():
    rng = np.random.default_rng(8)
    size = np.ceil(np.exp(rng.normal(5, 1.5, 500)))
    table = _table(np.arange(500.0), size)
    rows, _, ref, _ = run_paper("makespan", table, {"m": size * 1.1}, machines=[5, 10], sample_seed=42)
    for m in (5, 10):
        pick = np.random.RandomState(42).choice(500, size=makespan_sample_size(m, 500), replace=False)
        p = size[pick]
        spans = []
        for trial in range(10):
            draw = np.random.RandomState(42 + trial)
            loads = np.zeros(m)
            for x in p:  # one randint(m) per job, in draw order, as the reference
                loads[draw.randint(m)] += x
            spans.append(loads.max())
        bound = max(p.sum() / m, p.max())
        loads = np.zeros(m)
        for x in sorted(p, reverse=True):
            loads[np.argmin(loads)] += x
        got = {row["policy"]: row for row in rows if row["machines"] == m}
        assert ref[m]["n"] == len(pick)
        assert got["random-ref"]["ratio"] == pytest.approx(np.mean(spans) / bound, rel=1e-12)
        assert got["random-ref"]["trials"] == 10
        assert got["lpt"]["ratio"] == pytest.approx(loads.max() / bound, rel=1e-12)


def test_random_pick_is_numpys_legacy_draw():
    np.testing.assert_array_equal(random_pick(100, 7, 42), np.random.RandomState(42).choice(100, 7, replace=False))
    np.testing.assert_array_equal(random_pick(5, 7, 42), np.arange(5))


def test_single_machine_load():
    assert single_machine_load([0.0, 10.0, 20.0], [5.0, 5.0, 30.0]) == pytest.approx(2.0)
    assert single_machine_load([3.0, 3.0], [1.0, 1.0]) is None
