"""EASY backfilling as pyss runs it (schedulers.backfill_events): hand-computed schedules of its rules.

The published SC'15 cells these semantics reproduce are checked in
tests/benchmark/test_hpc_protocols.py; here each rule on a few jobs, worked out by hand.
"""

import numpy as np
import pytest

from schedulers import backfill_events as be


class Fixed(be.Predictor):
    """Given predictions (a test's stand-in for a predictor)."""

    def __init__(self, values):
        self.values = values

    def predict(self, job, now):
        return self.values[job]


def jobs(*rows):
    """(submit, run, requested, procs) columns of rows given as tuples."""
    return [np.array(c) for c in zip(*rows)]


def test_easy_backfills_on_requested_times_and_clairvoyant_on_run_times():
    # 4 processors. A (2 procs) runs 0–10; B (4) is the head at 1, reserved at 10; C (2, req 8)
    # fits before the shadow time on its request at 2; D (1 proc, run 2, req 9) submitted at 3 when
    # nothing is free: the submission check runs no pass; at C's end (5) D's request (5 + 9 > 10) would
    # cross the reservation with no extra processor: it waits for B (10–15)
    submit, run, req, procs = jobs((0, 10, 10, 2), (1, 5, 5, 4), (2, 3, 8, 2), (3, 2, 9, 1))
    out = be.simulate(submit, run, req, procs, 4)
    assert out["start"].tolist() == [0, 10, 2, 15]
    # on the true run times D (5 + 2 ≤ 10) is backfilled at C's end
    out = be.simulate(submit, run, req, procs, 4, predictor=be.Clairvoyant(run))
    assert out["start"].tolist() == [0, 10, 2, 5]


def test_a_job_takes_the_processors_the_head_leaves_over():
    # 4 processors: A (3) runs 0–10; B (2) is the head at 1, reserved at 10 with 2 processors left over;
    # C (1 proc, req 50) crosses the shadow time but takes one of the two: starts at 2
    submit, run, req, procs = jobs((0, 10, 10, 3), (1, 5, 5, 2), (2, 50, 50, 1))
    assert be.simulate(submit, run, req, procs, 4)["start"].tolist() == [0, 10, 2]
    # with B asking for all 4 nothing is left over: C waits for B's end (B 10–15)
    submit, run, req, procs = jobs((0, 10, 10, 3), (1, 5, 5, 4), (2, 50, 50, 1))
    assert be.simulate(submit, run, req, procs, 4)["start"].tolist() == [0, 10, 15]


def test_a_correction_runs_no_pass_and_easy_pp_schedules_at_every_submission():
    # 4 processors, given predictions. A (3 procs, run 20, req 100, p̂ 5) starts at 0; B (4, p̂ 10) is
    # the head at 1, reserved at A's predicted end 5; C (1 proc, p̂ 8) would cross it: waits. At 5 A's
    # prediction is over and raised to its request (100): no pass. D (4 procs, p̂ 1) is submitted at 6.
    submit, run, req, procs = jobs((0, 20, 100, 3), (1, 10, 10, 4), (2, 8, 8, 1), (6, 1, 1, 4))
    given = Fixed([5, 10, 8, 1])
    # EASY with a predictor: D does not fit now, so its submission runs no pass; C waits for A's end
    # (20): B 20–30, then C at 30, D at C's end 38
    out = be.simulate(submit, run, req, procs, 4, predictor=given)
    assert out["start"].tolist() == [0, 20, 30, 38]
    assert out["corrections"] == 1 and out["predicted"].tolist() == [5, 10, 8, 1]
    # EASY++ runs the pass at D's submission: the shadow is now 100, C (6 + 8 ≤ 100) starts at 6;
    # B at 20, D at B's end 30
    out = be.simulate(submit, run, req, procs, 4, predictor=given, sjbf=True, submit_check=False)
    assert out["start"].tolist() == [0, 20, 6, 30]


def test_sjbf_backfills_the_shortest_prediction_first():
    # 4 processors: A (3 procs) runs 0–10, X (1 proc) 0–3; B (4) is the head at 1, reserved at 10 with
    # nothing left over; C (1 proc, req 7) and D (1 proc, req 4) arrive at 2 with nothing free. At X's
    # end (3) one processor is free and both would end by 10: in submit order C takes it (D waits for
    # B: 15); shortest first D takes it (3–7) and C, at 7, would cross the reservation: it waits (15)
    submit, run, req, procs = jobs((0, 10, 10, 3), (0, 3, 3, 1), (1, 5, 5, 4), (2, 7, 7, 1), (2, 4, 4, 1))
    assert be.simulate(submit, run, req, procs, 4)["start"].tolist() == [0, 0, 10, 3, 15]
    assert be.simulate(submit, run, req, procs, 4, sjbf=True)["start"].tolist() == [0, 0, 10, 15, 3]


def test_recent_mean_predicts_from_the_users_two_last_terminated_jobs():
    run, req, user = [10, 15, 100, 7], [50, 50, 11, 30], [1, 1, 1, 2]
    p = be.RecentMean(run, req, user)
    assert p.predict(2, 0) == 11  # no terminated job: the requested time
    p.observe(0, 10)
    assert p.predict(2, 10) == 11  # one: still the requested time (pyss's rule)
    p.observe(1, 20)
    assert p.predict(2, 20) == 11 and p.predict(3, 20) == 30  # (10 + 15) // 2 = 12 capped at 11; another user
    run2 = [10, 15, 100, 7]
    q = be.RecentMean(run2, [50, 50, 50, 30], user)
    q.observe(0, 10), q.observe(1, 20)
    assert q.predict(2, 20) == 12  # the mean rounded down


def test_the_correctors_by_hand():
    # reqtime: the requested time; double: twice the prediction (revision.py's doubling, not capped);
    # tsafrir: the first prediction plus 1, 5, 15 min ..., capped at the request
    assert be.correct("reqtime", 100, 100, 0, 5000) == 5000
    assert be.correct("double", 100, 100, 0, 150) == 200
    assert [be.correct("tsafrir", 0, 100, k, 5000) for k in range(4)] == [160, 400, 1000, 1900]
    assert be.correct("tsafrir", 0, 100, 5, 5000) == 5000
    with pytest.raises(ValueError, match="unknown corrector"):
        be.simulate([0], [1], [1], [1], 1, corrector="ninetynine")


def test_a_prediction_reads_no_run_time_of_a_job_still_running_at_submission():
    # EASY++ on 8 random jobs per user: changing the run time of jobs that terminate after a job's
    # submission leaves that job's prediction unchanged
    rng = np.random.default_rng(3)
    n = 300
    submit = np.sort(rng.integers(0, 20_000, n))
    req = rng.integers(50, 3_000, n)
    run = np.minimum(rng.integers(1, 3_000, n), req)
    procs = rng.integers(1, 9, n)
    user = rng.integers(0, 4, n)
    kw = dict(sjbf=True, submit_check=False)
    base = be.simulate(submit, run, req, procs, 8, predictor=be.RecentMean(run, req, user), **kw)
    end = base["start"] + run
    k = n // 2
    later = end > submit[k]  # not yet terminated when job k is submitted
    run2 = run.copy()
    run2[later] = np.minimum(req[later], 3 * run[later])  # longer (never ending before it did), ≤ the request
    other = be.simulate(submit, run2, req, procs, 8, predictor=be.RecentMean(run2, req, user), **kw)
    assert other["predicted"][: k + 1].tolist() == base["predicted"][: k + 1].tolist()
    assert other["predicted"].tolist() != base["predicted"].tolist()  # the change did reach later jobs


def test_bounded_slowdown_by_hand():
    assert be.bounded_slowdowns([0, 0, 0], [5, 100, 20], [0, 100, 10]).tolist() == [1.0, 2.0, 1.5]


@pytest.mark.parametrize("corrector", ["reqtime", "tsafrir"])
def test_a_run_past_its_budget_stops_with_one_line_naming_the_policy(corrector):
    # A runs 100 s on a request of 50 (against simulate's contract, run ≤ requested): both correctors end
    # at the requested time, which A outlives at the same instant, forever; the budget stops it (doubling
    # passes the run time and ends)
    submit, run, req, procs = jobs((0, 100, 50, 1), (1, 5, 5, 1))
    budget = be.event_budget(2, corrector)
    assert budget == 2 * (2 + be.MAX_CORRECTIONS[corrector]) + 4_096
    with pytest.raises(be.EventBudgetExceeded, match=rf"^easy-pp on 2 jobs: pyss's EASY loop went past its budget "
                       rf"of {budget:,} events at time 50 s and was stopped"):
        be.simulate(submit, run, req, procs, 1, predictor=Fixed([1, 1]), corrector=corrector, name="easy-pp")


def test_the_budget_holds_the_longest_correction_chains():
    # doubling from 1 s to a run of 2^40 s takes 40 corrections (to 400,000 s: 19)
    submit, run, req, procs = jobs((0, 2**40, 2**41, 1), (0, 400_000, 500_000, 1))
    out = be.simulate(submit, run, req, procs, 2, predictor=Fixed([1, 1]), corrector="double")
    assert out["corrections"] == 40 + 19 and out["start"].tolist() == [0, 0]
    out = be.simulate(submit, run, req, procs, 2, predictor=Fixed([1, 1]), corrector="tsafrir")
    # each job takes tsafrir's most corrections (its 11 steps, all below its run time, then the request)
    assert out["corrections"] == 2 * be.MAX_CORRECTIONS["tsafrir"] == 24
