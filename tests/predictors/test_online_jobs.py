"""The online, causal run-time predictor of whole job logs (predictors.online_jobs): no future reaches p̂."""

import numpy as np
import pytest

from predictors.online_jobs import ONLINE_METHODS, OnlineLGBM, expectile_objective, online_predictor
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


#: every variant of ONLINE_METHODS (their settings but a small refit interval and few trees)
VARIANTS = sorted({tuple(sorted((k, v) for k, v in s.items() if k not in ("refit_every", "trees")))
                   for s in ONLINE_METHODS.values()})


@pytest.mark.parametrize("settings", VARIANTS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s) or "base")
def test_run_times_of_jobs_finishing_after_a_submission_leave_its_prediction_unchanged(settings):
    rng = np.random.default_rng(5)
    n = 700
    submit = np.sort(rng.integers(0, 60_000, n))
    req = rng.integers(60, 4_000, n)
    run = np.minimum(rng.integers(1, 4_000, n), req)
    procs = rng.integers(1, 9, n)
    user = rng.integers(0, 6, n)

    def schedule(run_times):
        p = OnlineLGBM(submit, run_times, req, procs, user, refit_every=60, trees=20, **dict(settings))
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


def _fitted(n=130, **settings):
    """A predictor fitted once (refit every 60) on users 1–4's jobs; user 9 has no terminated job."""
    rng = np.random.default_rng(2)
    run = rng.integers(10, 500, n)
    req = np.full(n, 600)
    user = np.arange(n) % 4 + 1
    user[-1] = 9
    p = OnlineLGBM(np.arange(n), run, req, np.ones(n, int), user, refit_every=60, trees=10, **settings)
    for j in range(n - 2):
        p.predict(j, j)
        p.observe(j, j + 1)
    assert p.fits == 2
    return p, run


def test_fill_uses_easy_pps_mean_where_the_user_has_two_runs_and_the_model_where_not():
    p, run = _fitted(use="fill")
    model, _ = _fitted()
    j = len(run) - 2  # user 4, whose two last terminated jobs are j − 4 and j − 8
    assert p.predict(j, 500) == min(600, (run[j - 4] + run[j - 8]) // 2)
    assert p.predict(j + 1, 500) == model.predict(j + 1, 500) != 600  # user 9: the model, not the request


def test_select_follows_the_predictor_with_the_smaller_loss_on_the_users_terminated_jobs():
    q = OnlineLGBM([0, 1], [100, 100], [600, 600], [1, 1], [1, 1], use="select", alpha=0.8)
    assert q.predict(0, 0) == 600 and q.both[0] == (600, 600)
    q.observe(0, 1)
    e = np.log(100) - np.log(600)  # both over-predicted: weight 1 − α
    assert q.loss[1] == pytest.approx([0.2 * e * e] * 2) and q.total_loss == pytest.approx([0.2 * e * e] * 2)
    p, run = _fitted(use="select")
    j = len(run) - 2
    easy_pp = p.two_job_mean(j)
    p.loss[p.user[j]] = [1.0, 2.0]
    assert p.predict(j, 500) == easy_pp  # EASY++'s mean has had the smaller loss on the user's jobs
    p.loss[p.user[j]] = [2.0, 1.0]
    model = p.predict(j, 500)
    assert model == p.both[j][1] and model != easy_pp  # the model's


def test_residual_boosts_from_easy_pps_prediction_and_ratio_from_the_request():
    p, run = _fitted(target="residual")
    # each training row ends with log(EASY++'s prediction at the job's submission), its init score
    assert len(p.x[0]) == 12 and p.x[0][-1] == pytest.approx(np.log(600))  # no run of user 1 yet
    assert p.x[9][-1] == pytest.approx(np.log((run[5] + run[1]) // 2))  # user 2's jobs 1 and 5
    r, _ = _fitted(target="ratio")  # the labels are log(run / requested), boosted from their α-quantile
    assert r.base == pytest.approx(np.quantile(np.log(run[:120]) - np.log(600), 0.6))
