"""run_objective runs each (policy, jobs, p̂) once per process: a repeated run is the first one's schedule."""

import numpy as np
import pandas as pd

import schedulers.objectives as objectives
from schedulers.jobs import JobSet


def _jobs():
    rng = np.random.default_rng(3)
    n = 60
    return JobSet.from_frame(pd.DataFrame({"job_id": [f"j{i}" for i in range(n)],
                                           "submit_time": np.sort(rng.uniform(0, 500, n)),
                                           "duration": rng.lognormal(3, 1, n) + 1}))


def test_the_second_objective_reuses_the_first_ones_runs_with_the_same_scores(monkeypatch):
    jobs = _jobs()
    p_hat = {"p": jobs.size * np.exp(np.random.default_rng(4).normal(0, 0.5, jobs.n))}
    policies = ["fifo", "srpt", "spjf", "gittins"]
    calls = []
    real = objectives.simulate
    monkeypatch.setattr(objectives, "simulate", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(objectives, "_RUNS", objectives.OrderedDict())
    fresh, _, _ = objectives.run_objective("max_stretch", jobs, policies, p_hat)
    n_fresh = len(calls)
    assert n_fresh == 3  # gittins reads a spread, which this p̂ has not: fifo, srpt, spjf/p
    objectives._RUNS.clear()
    objectives.run_objective("total_completion", jobs, policies, p_hat)
    again, _, _ = objectives.run_objective("max_stretch", jobs, policies, p_hat)
    assert len(calls) == 2 * n_fresh  # the max-stretch runs after total completion simulate nothing
    assert again == fresh
