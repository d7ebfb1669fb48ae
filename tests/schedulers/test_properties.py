"""Property tests of the core on random small instances, against independent computations:
the O(n²) simulators, a time-indexed CP-SAT optimum, and scheduling theorems."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from schedulers import normalisers
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.naive import simulate_naive
from schedulers.objectives import run_objective
from schedulers.policy import get_policy, policy_names

SINGLE = [p for p in policy_names("single") if p != "edf"]


@st.composite
def instances(draw, max_n=7, integer=False):
    n = draw(st.integers(1, max_n))
    if integer:
        submit = draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
        size = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    else:
        submit = draw(st.lists(st.floats(0, 20), min_size=n, max_size=n))
        size = draw(st.lists(st.floats(1, 10), min_size=n, max_size=n))
    predicted = draw(st.lists(st.floats(1, 10), min_size=n, max_size=n))
    jobs = JobSet.from_arrays(submit, size, predicted)
    return jobs.with_predictions(jobs.predicted, draw(st.sampled_from([0.0, 0.5, 2.0])))  # gittins, serpt read it


@settings(max_examples=60, deadline=None)
@given(instances(), st.sampled_from(["rr", "prr", "las"]))
def test_sharing_policies_match_the_naive_simulator(jobs, name):
    engine = simulate(jobs, get_policy(name)()).completion_time
    naive = simulate_naive(name, jobs.submit_time.tolist(), jobs.size.tolist(), jobs.predicted.tolist())
    np.testing.assert_allclose(engine, naive, rtol=1e-7, atol=1e-7)


@settings(max_examples=60, deadline=None)
@given(instances())
def test_srpt_minimises_total_completion_over_all_policies(jobs):
    srpt = simulate(jobs, get_policy("srpt")()).completion_time.sum()
    for name in SINGLE:
        total = simulate(jobs, get_policy(name)()).completion_time.sum()
        assert total >= srpt * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(instances())
def test_every_policy_is_work_conserving(jobs):
    # one machine that never idles while work waits: the last completion is policy-independent
    last = {name: simulate(jobs, get_policy(name)()).completion_time.max() for name in SINGLE}
    assert max(last.values()) == pytest.approx(min(last.values()), rel=1e-9)


def _cpsat_total_completion(jobs: JobSet) -> float:
    """Time-indexed CP-SAT optimum of 1|r_j,pmtn|ΣC_j on integer data (unit slots suffice)."""
    r, p = jobs.submit_time.astype(int), jobs.size.astype(int)
    horizon = int(r.max() + p.sum())
    model = cp_model.CpModel()
    x = {(j, t): model.NewBoolVar(f"x{j}_{t}") for j in range(jobs.n) for t in range(r[j], horizon)}
    for t in range(horizon):
        model.Add(sum(x[j, t] for j in range(jobs.n) if (j, t) in x) <= 1)
    completion = []
    for j in range(jobs.n):
        model.Add(sum(x[j, t] for t in range(r[j], horizon)) == int(p[j]))
        c = model.NewIntVar(0, horizon, f"c{j}")
        for t in range(r[j], horizon):
            model.Add(c >= t + 1).OnlyEnforceIf(x[j, t])
        completion.append(c)
    model.Minimize(sum(completion))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 2
    assert solver.Solve(model) == cp_model.OPTIMAL
    return solver.ObjectiveValue()


@settings(max_examples=15, deadline=None)
@given(instances(max_n=5, integer=True))
def test_srpt_total_completion_equals_the_cpsat_optimum(jobs):
    srpt = simulate(jobs, get_policy("srpt")()).completion_time.sum()
    assert srpt == pytest.approx(_cpsat_total_completion(jobs), rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(instances())
def test_edf_at_s_star_meets_every_deadline(jobs):
    s_star = normalisers.optimal_max_stretch(jobs.submit_time, jobs.size, rel_tol=1e-4)
    c = simulate(jobs, get_policy("edf")(stretch=s_star)).completion_time
    deadlines = jobs.submit_time + s_star * jobs.size
    assert np.all(c <= deadlines * (1 + 1e-9) + 1e-9)
    # and no policy beats S* by more than the tolerance
    for name in SINGLE:
        c = simulate(jobs, get_policy(name)()).completion_time
        assert ((c - jobs.submit_time) / jobs.size).max() >= s_star * (1 - 1e-4) - 1e-9


@settings(max_examples=20, deadline=None)
@given(instances(max_n=6))
def test_every_ratio_is_at_least_one(jobs):
    predictions = {"noise:0.5": jobs.predicted}
    for objective in ("total_completion", "max_stretch"):
        rows, _, _ = run_objective(objective, jobs, SINGLE + (["edf"] if objective == "max_stretch" else []), predictions)
        for row in rows:
            assert row["ratio"] >= 1 - 1e-4 - 1e-9, row
    rows, _, reference = run_objective("makespan", jobs, policy_names("parallel"), predictions, machines=[1, 2, 3])
    for row in rows:
        assert row["ratio"] >= 1 - 1e-9 and row["opt_ratio"] >= 1 - 1e-9
        assert reference[row["machines"]]["opt"] >= reference[row["machines"]]["bound"] - 1e-9


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.floats(1, 100))
def test_round_robin_on_equal_sizes_completes_together(n, p):
    jobs = JobSet.from_arrays([0.0] * n, [p] * n)
    c = simulate(jobs, get_policy("rr")()).completion_time
    np.testing.assert_allclose(c, n * p, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.floats(1, 100))
def test_las_equals_rr_when_all_jobs_start_together_with_equal_sizes(n, p):
    jobs = JobSet.from_arrays([0.0] * n, [p] * n)
    las = simulate(jobs, get_policy("las")()).completion_time
    rr = simulate(jobs, get_policy("rr")()).completion_time
    np.testing.assert_allclose(las, rr, rtol=1e-12)


def test_lpt_meets_grahams_bound_against_the_cpsat_optimum():
    rng = np.random.default_rng(3)
    for _ in range(10):
        n, m = int(rng.integers(3, 9)), int(rng.integers(2, 4))
        size = rng.integers(1, 20, n).astype(float)
        jobs = JobSet.from_arrays(np.zeros(n), size)
        opt = normalisers.makespan_optimum(size, m)
        lpt = simulate(jobs, get_policy("lpt")(machines=m), machines=m).completion_time.max()
        assert opt <= lpt <= (4 / 3 - 1 / (3 * m)) * opt + 1e-9
