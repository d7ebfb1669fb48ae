"""The online, causal run-time predictor of whole job logs (predictors.online_jobs): no future reaches p̂."""

import numpy as np
import pytest

from predictors.online_jobs import OnlineLGBM, expectile_objective
from schedulers import backfill_events as be


def test_before_the_first_fit_it_predicts_as_easy_pp_and_fits_every_k_terminations():
    n = 130
    submit, run, req = list(range(n)), [10, 16] + [30 + i % 17 for i in range(n - 2)], [50, 50] + [60] * (n - 2)
    user = [1, 1, 1] + [2 + i % 4 for i in range(n - 3)]
    req[2] = 11
    p = OnlineLGBM(submit, run, req, [1] * n, user, refit_every=10)
    assert p.predict(0, 0) == 50 and p.predict(1, 1) == 50
    p.observe(0, 10)
    assert p.predict(2, 11) == 11  # one terminated job of the user: still the requested time
    p.observe(1, 17)
    assert p.predict(3, 20) == 60  # another user: no history
    assert p.predict(2, 20) == 11  # (10 + 16) // 2 = 13, capped at the request 11
    for j in range(3, 3 + 47):  # 49 terminated: no fit yet (MIN_FIT_ROWS = 50), although k = 10 passed
        p.predict(j, 20 + j)
        p.observe(j, 21 + j)
    assert p.model is None and p.fits == 0 and len(p.y) == 49
    p.predict(50, 80)
    p.observe(50, 81)  # the 50th termination: the first fit, on the jobs terminated so far
    assert p.fits == 1 and len(p.y) == 50
    for j in range(51, 60):
        p.predict(j, 90 + j)
        p.observe(j, 91 + j)
    assert p.fits == 1  # nine more: not yet k = 10 since the fit
    p.predict(60, 200)
    p.observe(60, 201)
    assert p.fits == 2
    assert 1 <= p.predict(61, 210) <= 60  # capped at the requested time


def test_the_expectile_objective_weighs_under_prediction_alpha():
    class Data:
        def get_label(self):
            return np.array([1.0, 1.0])

    grad, hess = expectile_objective(0.8)(np.array([0.0, 2.0]), Data())
    assert grad.tolist() == pytest.approx([2 * 0.8 * -1.0, 2 * 0.2 * 1.0])  # under: α; over: 1 − α
    assert hess.tolist() == pytest.approx([1.6, 0.4])


def test_run_times_of_jobs_finishing_after_a_submission_leave_its_prediction_unchanged():
    rng = np.random.default_rng(5)
    n = 700
    submit = np.sort(rng.integers(0, 60_000, n))
    req = rng.integers(60, 4_000, n)
    run = np.minimum(rng.integers(1, 4_000, n), req)
    procs = rng.integers(1, 9, n)
    user = rng.integers(0, 6, n)

    def schedule(run_times):
        p = OnlineLGBM(submit, run_times, req, procs, user, refit_every=60, trees=20)
        out = be.simulate(submit, run_times, req, procs, 8, predictor=p, sjbf=True, submit_check=False)
        return out, p

    base, p = schedule(run)
    assert p.fits >= 5  # refitted along the way: the model of each job's prediction differs
    k = 2 * n // 3
    later = base["start"] + run > submit[k]  # still running (or waiting) when job k is submitted
    run2 = run.copy()
    run2[later] = np.minimum(req[later], 3 * run[later])  # longer, never ending before it did
    other, _ = schedule(run2)
    assert other["predicted"][: k + 1].tolist() == base["predicted"][: k + 1].tolist()
    assert other["predicted"].tolist() != base["predicted"].tolist()  # the change reached later jobs
