"""Revising outlived predictions (schedulers.revision) and the policies that read a predicted
distribution (schedulers.policies.distribution): the rules' values by hand, hand-computed schedules,
the known cases (a point mass gives SRPT, a shared decreasing-hazard distribution gives LAS), the
Gittins table against a brute-force integral, and no true size read."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from schedulers.engine import Engine, simulate
from schedulers.jobs import JobSet
from schedulers.policies.distribution import (GRID, CalibrationCeiling, Gittins, SERPT, empirical_gittins_table,
                                             gittins_table, serpt_table)
from schedulers.policies.single import EDFP, LAS, PRR, PSPJF, SPJF, SPRPT, SRPT
from schedulers.policy import PolicyError
from schedulers.revision import DOUBLE, NONE, QUANTILE, TSAFRIR, next_estimate, rule_code


# ----- the rules ----------------------------------------------------------------------------------
def test_double_doubles_past_the_service_received():
    assert next_estimate(DOUBLE, 100.0, 100.0, 0, 0.0, 100.0) == 200.0
    assert next_estimate(DOUBLE, 100.0, 450.0, 2, 0.0, 100.0) == 800.0


def test_tsafrir_adds_the_kth_step_of_the_list():
    assert next_estimate(TSAFRIR, 100.0, 100.0, 0, 0.0, 100.0) == 160.0  # + 1 min
    assert next_estimate(TSAFRIR, 160.0, 160.0, 1, 0.0, 100.0) == 460.0  # + 5 min
    assert next_estimate(TSAFRIR, 5e6, 5e6, 40, 0.0, 100.0) == 5e6 + 360000.0  # past the list: + 100 h


def test_quantile_is_the_conditional_median_of_the_predicted_log_normal():
    for p_hat, sd, attained in ((100.0, 1.0, 100.0), (100.0, 1.0, 1000.0), (50.0, 0.3, 400.0), (10.0, 2.0, 10.0)):
        dist = stats.lognorm(s=sd, scale=p_hat)
        expected = dist.isf(0.5 * dist.sf(attained))
        got = next_estimate(QUANTILE, attained, attained, 0, sd, p_hat)
        assert got == pytest.approx(expected, rel=1e-4)


def test_none_keeps_the_estimate_and_every_other_rule_passes_the_service_received():
    assert next_estimate(NONE, 100.0, 150.0, 0, 1.0, 100.0) == 100.0
    for rule in (DOUBLE, TSAFRIR, QUANTILE):
        for attained in (1.0, 99.9, 1e5):
            assert next_estimate(rule, min(attained, 100.0), attained, 3, 1.0, 100.0) >= attained + 1.0


def test_an_unknown_rule_is_refused_by_name():
    with pytest.raises(ValueError, match="double"):
        rule_code("triple")
    with pytest.raises(ValueError, match="revision"):
        SPRPT(revision="triple")


# ----- policies with revision: hand-computed schedules --------------------------------------------
def _two_jobs():
    # A: r 0, p 10, p̂ 2 (under-predicted); B: r 1, p 3, p̂ 5
    return JobSet.from_arrays([0.0, 1.0], [10.0, 3.0], [2.0, 5.0])


def test_sprpt_without_revision_lets_the_outlived_job_block():
    result = simulate(_two_jobs(), SPRPT())
    assert result.completion_time.tolist() == [10.0, 13.0]


def test_sprpt_with_doubling_preempts_the_outlived_job_when_its_revised_remaining_passes_the_waiting_one():
    # A's estimate 2 → 4 (t 2, remaining 2 < 5) → 8 (t 4, remaining 4 < 5) → 16 (t 8, remaining 8 > 5):
    # B runs 8..11, A resumes 11..13
    result = simulate(_two_jobs(), SPRPT(revision="double"))
    assert result.completion_time.tolist() == [13.0, 11.0]
    assert result.preemptions.tolist() == [1, 0]


def test_sprpt_with_tsafrir_steps():
    # A's estimate 2 → 2 + 60 at t 2: remaining 60 > B's 5 at t 2, so B runs 2..5 and A 5..13
    result = simulate(_two_jobs(), SPRPT(revision="tsafrir"))
    assert result.completion_time.tolist() == [13.0, 5.0]


def test_pspjf_with_doubling_reorders_by_the_revised_size():
    # key = estimate: A 2 → 4 at t 2 (< 5) → 8 at t 4 (> 5): B runs 4..7, A 7..13
    result = simulate(_two_jobs(), PSPJF(revision="double"))
    assert result.completion_time.tolist() == [13.0, 7.0]


def test_edf_p_revision_moves_the_deadline_of_the_outlived_job():
    # deadlines r + S·estimate, S = 1: A 2, B 6. At t 2 A's estimate doubles to 4 (deadline 4) and S
    # stays (A is not late: its deadline moved); at t 4 estimate 8 (deadline 8 > B's 6): B runs 4..7, A 7..13;
    # B itself misses its deadline 6 at t 6, the one doubling of S
    policy = EDFP(revision="double")
    result = simulate(_two_jobs(), policy)
    assert result.completion_time.tolist() == [13.0, 7.0]
    assert policy.doublings == 1
    assert simulate(_two_jobs(), EDFP()).completion_time.tolist() == [10.0, 13.0]


def test_revision_none_is_the_fast_loop_bit_for_bit():
    rng = np.random.default_rng(3)
    n = 300
    jobs = JobSet.from_arrays(np.sort(rng.uniform(0, 500, n)), rng.lognormal(1.5, 1.0, n), rng.lognormal(1.5, 1.0, n))
    for cls in (SPRPT, PSPJF, EDFP, SPJF):
        fast = simulate(jobs, cls())
        engine = Engine(jobs, cls(revision="none")).run()
        assert np.array_equal(fast.completion_time, engine.completion_time), cls.name


def test_revision_cannot_change_a_non_preemptive_schedule():
    rng = np.random.default_rng(4)
    n = 200
    jobs = JobSet.from_arrays(np.sort(rng.uniform(0, 300, n)), rng.lognormal(1.5, 1.0, n), rng.lognormal(1.0, 1.0, n))
    assert np.array_equal(simulate(jobs, SPJF()).completion_time, simulate(jobs, SPJF(revision="double")).completion_time)


def test_revising_policies_never_read_true_sizes():
    # the engine's view refuses a non-clairvoyant policy's read of sizes: a run is the proof
    jobs = _two_jobs().with_predictions([2.0, 5.0], 1.0)
    for policy in (SPRPT(revision="quantile"), PSPJF(revision="tsafrir"), Gittins(), SERPT()):
        assert not policy.clairvoyant
        Engine(jobs, policy).run()


def test_quantile_revision_needs_a_predicted_spread():
    with pytest.raises(ValueError, match="predicted_log_sd"):
        Engine(_two_jobs(), SPRPT(revision="quantile")).run()


# ----- Gittins and SERPT ----------------------------------------------------------------------------
def _brute_gittins_rank(sd, a):
    """inf over b of ∫_a^b P(X > t) dt / P(a < X ≤ b), the integral by the trapezoid rule on a fine
    grid of t (not the closed form the table uses)."""
    dist = stats.lognorm(s=sd)
    t = a * np.exp(np.linspace(0.0, 14.0 * sd + 4.0, 400_001))
    sf = dist.sf(t)
    work = integrate.cumulative_trapezoid(sf, t)
    done = dist.sf(a) - sf[1:]
    ok = done > 1e-12
    return float(np.min(work[ok] / done[ok]))


@pytest.mark.parametrize("sd, a", [(1.0, 0.5), (1.0, 2.0), (0.4, 1.0), (2.0, 0.1)])
def test_gittins_table_matches_a_brute_force_infimum(sd, a):
    k = GRID.index(a) if a in GRID else int(np.searchsorted(GRID, a))
    assert gittins_table(sd)[k] == pytest.approx(_brute_gittins_rank(sd, GRID[k]), rel=2e-3)


def test_serpt_table_is_the_mean_residual_life():
    dist = stats.lognorm(s=0.8)
    table = serpt_table(0.8)
    for k in (0, 100, 112, 130):
        a = GRID[k]
        expected = integrate.quad(dist.sf, a, np.inf)[0] / dist.sf(a)
        assert table[k] == pytest.approx(expected, rel=1e-6)


def test_gittins_with_a_point_mass_at_the_true_size_is_srpt():
    rng = np.random.default_rng(5)
    n = 400
    submit, size = np.sort(rng.uniform(0, 800, n)), rng.lognormal(1.5, 1.2, n)
    jobs = JobSet.from_arrays(submit, size, size).with_predictions(np.maximum(size, 1.0), 0.0)
    assert np.array_equal(Engine(jobs, Gittins()).run().completion_time, simulate(jobs, SRPT()).completion_time)


def test_gittins_with_one_shared_decreasing_hazard_distribution_serves_least_attained_first():
    # log-normal with σ = 3: its hazard falls beyond 1e-4 of the median, so the rank grows with age
    table = gittins_table(3.0)
    start = int(np.searchsorted(GRID, 2.0 ** -10))
    assert (np.diff(table[start:]) >= -1e-9 * table[start:-1]).all()
    rng = np.random.default_rng(6)
    n = 300
    jobs = JobSet.from_arrays(np.sort(rng.uniform(0, 600, n)), rng.lognormal(1.0, 1.5, n), np.full(n, 5.0))
    jobs = jobs.with_predictions(jobs.predicted, 3.0)
    gittins = Engine(jobs, Gittins()).run().completion_time.sum()
    las = simulate(jobs, LAS()).completion_time.sum()
    # one job at a time on grid cells (ratio 2^(1/8)) against LAS's exact sharing
    assert gittins == pytest.approx(las, rel=0.02)


def test_empirical_gittins_table_matches_a_brute_force_infimum_over_stopping_ages():
    rng = np.random.default_rng(11)
    sizes = np.ceil(rng.lognormal(2.0, 1.0, 60))
    ages = np.array([0.0, 1.0, 3.5, 7.0, 20.0, float(sizes.max()) + 1.0])
    table = empirical_gittins_table(sizes, ages)
    for a, rank in zip(ages[:-1], table[:-1]):
        alive = sizes[sizes > a]
        b = np.linspace(a, alive.max(), 20_001)[1:]  # every stopping age, not only the support points
        work = np.array([np.minimum(alive, x).sum() - a * len(alive) for x in b])
        done = np.array([(alive <= x).sum() for x in b])
        assert rank == pytest.approx(float(np.min(work[done > 0] / done[done > 0])), rel=1e-3)
    assert table[-1] == table[-2]  # past the largest size: the last age's rank


def test_calibration_ceiling_with_one_job_per_bin_is_srpt_and_with_one_bin_ignores_p_hat():
    rng = np.random.default_rng(12)
    n = 120
    submit, size = np.sort(rng.uniform(0, 400, n)), rng.lognormal(1.5, 1.0, n)
    exact = JobSet.from_arrays(submit, size, size)
    # (nearly) one job per bin: each bin's distribution is a point mass at the job's own size, so the
    # rank is the remaining size, read on the age grid's cells: SRPT to the grid's resolution
    srpt = simulate(exact, SRPT()).completion_time.sum()
    assert Engine(exact, CalibrationCeiling(n)).run().completion_time.sum() == pytest.approx(srpt, rel=1e-4)
    assert Engine(exact, CalibrationCeiling(4)).run().completion_time.sum() > 1.01 * srpt
    shuffled = JobSet.from_arrays(submit, size, rng.permutation(size))
    one_bin = [Engine(jobs, CalibrationCeiling(1)).run().completion_time for jobs in (exact, shuffled)]
    assert np.array_equal(one_bin[0], one_bin[1])
    with pytest.raises(PolicyError, match="at least one bin"):
        CalibrationCeiling(0)


def test_distribution_policies_need_a_spread():
    with pytest.raises(PolicyError, match="predicted distributions"):
        Engine(_two_jobs(), Gittins()).run()


def test_gittins_events_grow_linearly_with_jobs():
    # a decision changes only at arrivals, completions and the overtaking point: no per-cell wake-ups
    # while the running job keeps its place, so events per job do not grow with the number of jobs
    rng = np.random.default_rng(7)
    per_job = []
    for n in (500, 4000):
        size = rng.lognormal(2.0, 1.5, n)
        jobs = JobSet.from_arrays(np.sort(rng.uniform(0, size.sum() / 0.9, n)), size, size * rng.lognormal(0.0, 1.0, n))
        jobs = jobs.with_predictions(jobs.predicted, 1.0)
        per_job.append(Engine(jobs, Gittins()).run().events / n)
    assert max(per_job) < 8
    assert per_job[1] < 1.5 * per_job[0]


@pytest.mark.parametrize("cls", [Gittins, SERPT])
def test_rank_policies_are_not_stuck_where_the_clock_cannot_resolve_a_grid_cell(cls):
    # late in a long trace (t ~ 3e6 s) the smallest grid cells of a job (6e-5 of p̂) are a few ulps of
    # the clock: a wake-up at the cell's edge must still let the job cross it (it was stuck at σ = 2)
    rng = np.random.default_rng(8)
    n = 400
    size = rng.lognormal(7.0, 1.5, n)
    jobs = JobSet.from_arrays(3e6 + np.sort(rng.uniform(0, size.sum() / 4.0, n)), size, size * rng.lognormal(0, 2.0, n))
    jobs = jobs.with_predictions(jobs.predicted, 2.0)
    result = Engine(jobs, cls()).run()
    assert np.isfinite(result.completion_time).all()


def test_prr_with_doubling_revises_every_outlived_job_and_hands_the_favourite_share_on():
    # λ = 0.5, both released at 0: A p 6 p̂ 1, B p 1.5 p̂ 3; the favourite runs at 0.75, the other at 0.25.
    # A reaches 1 at t 4/3: estimate 2 (< 3, A stays favourite); A reaches 2 at t 8/3 (B has 2/3):
    # estimate 4 > 3, B becomes favourite and needs 5/6 more at 0.75: done at t 8/3 + 10/9 = 34/9, when
    # A has 2 + 0.25·10/9; A then runs alone at rate 1 and ends at 7.5 (one machine busy throughout).
    jobs = JobSet.from_arrays([0.0, 0.0], [6.0, 1.5], [1.0, 3.0])
    result = Engine(jobs, PRR(0.5, "double")).run()
    assert result.completion_time.tolist() == pytest.approx([7.5, 34.0 / 9.0], rel=1e-12)
    # without revision A keeps the favourite share: B ends at 1.5/0.25 = 6, A at 7.5
    assert simulate(jobs, PRR(0.5)).completion_time.tolist() == pytest.approx([7.5, 6.0], rel=1e-12)


def test_prr_with_doubling_keeps_every_job_served():
    # no job starves: every active job always runs at rate ≥ (1 − λ)/k
    rng = np.random.default_rng(9)
    n = 300
    size = rng.lognormal(2.0, 1.5, n)
    jobs = JobSet.from_arrays(np.sort(rng.uniform(0, size.sum() / 2.0, n)), size, size * rng.lognormal(0, 2.0, n))
    lam = 0.25
    result = Engine(jobs, PRR(lam, "double")).run()
    k_max = n
    stretch = (result.completion_time - jobs.submit_time) / jobs.size
    assert stretch.max() <= k_max / (1 - lam)
    assert np.isfinite(result.completion_time).all()


@pytest.mark.parametrize("cls", [SPRPT, PSPJF])
def test_revision_far_into_a_run_lands_after_now_and_gives_the_same_order(cls):
    # 2,000 jobs behind one job of 10⁸ s: their machine clock and their group's service are both near
    # 10⁸, where one ulp is 1.5e-8 s, coarser than the tolerance an estimate is reached within. The
    # wake-up at an estimate used to land on `now` itself and the run stopped as stuck after 10,000
    # wake-ups; now it is at least the clock's slack ahead, and the schedule is the one of the same
    # jobs at time 0, job for job, to that slack
    rng = np.random.default_rng(0)
    size = rng.lognormal(np.log(60.0) - 1.125, 1.5, 2000)  # benchmark perf --scheduling's jobs
    near = JobSet.from_arrays(np.cumsum(rng.exponential(size.mean() / 1.5, 2000)), size,
                              size * np.exp(0.5 * rng.standard_normal(2000)))
    big = 1e8
    far = JobSet.from_arrays(np.r_[0.0, near.submit_time + big], np.r_[big, near.size], np.r_[big, near.predicted])
    late = simulate(far, cls(revision="double"))
    early = simulate(near, cls(revision="double"))
    assert late.completion_time[0] == big
    np.testing.assert_array_equal(np.argsort(late.completion_time[1:], kind="stable"),
                                  np.argsort(early.completion_time, kind="stable"))
    np.testing.assert_allclose(late.completion_time[1:] - big, early.completion_time, rtol=0, atol=2000 * 1e-12 * 2 * big)
