"""Hand-computed schedules for every single-machine policy on one small instance.

Instance (r, p, p̂): j0 (0, 3, 2), j1 (0, 1, 2), j2 (1, 2, 2), j3 (2, 1, 2). The derivations are
in the comments; each number was worked out on paper, not read off the simulator.
"""

import numpy as np
import pytest

from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import PolicyError, get_policy

JOBS = JobSet.from_arrays([0, 0, 1, 2], [3, 1, 2, 1], [2, 2, 2, 2])

EXPECTED = {
    # FIFO: j0 [0,3], j1 [3,4], j2 [4,6], j3 [6,7]
    "fifo": [3, 4, 6, 7],
    # SJF at 0 picks j1 (1) → [0,1]; then j0 (only job released) [1,4]; j3 (1) before j2 (2)
    "sjf": [7, 1, 3, 4],
    # all p̂ equal → ties by index: same as FIFO
    "spjf": [3, 4, 6, 7],
    # SRPT: j1 [0,1], j0 from 1; at 1 j2 (2) < j0 rem 3 → j2 [1,3] (j3 at 2 has 1 = rem j2 1, j2 keeps by index);
    # j3 [3,4]; j0 [4,7]
    "srpt": [7, 1, 3, 4],
    # SPRPT with p̂=2: j0 runs, predicted remaining falls; never preempted → FIFO
    "sprpt": [3, 4, 6, 7],
    "pspjf": [3, 4, 6, 7],
    # RR: [0,1] two jobs at 1/2; [1,2] three at 1/3; from 2 four at 1/4 → j1 done at 2 + 4·(1/6) = 8/3;
    # then three at 1/3: j3 needs 5/6 → 8/3 + 5/2 = 31/6; j2 needs 2/3 at 1/2 → 31/6 + 4/3 = 6.5; j0 at 7
    "rr": [7, 8 / 3, 6.5, 31 / 6],
    # PRR λ=.7, favourite j0 (p̂ tie → index): rate .85 on [0,1], .8 on [1,2], .775 after 2 →
    # j0 done at 2 + 1.35/.775; afterwards j1 is the favourite
    "prr": [2 + 1.35 / 0.775, None, None, 7],
    # LAS: j0,j1 share to level .5 at t=1; j2 alone to .5 at 1.5; three share → level 2/3 at t=2;
    # j3 alone to 2/3 at 8/3; four share 1/4 each: j1, j3 need 1/3 → both done at 4; j0, j2 at level 1
    # share: j2 needs 1 → 6; j0 needs 1 alone → 7
    "las": [7, 4, 6, 4],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hand_schedule(name):
    result = simulate(JOBS, get_policy(name)())
    for got, want in zip(result.completion_time, EXPECTED[name]):
        if want is not None:
            assert got == pytest.approx(want, rel=1e-12)


def test_prr_middle_jobs():
    # after j0 finishes at t0 = 2 + 1.35/.775, three jobs remain; favourite j1 (index tie-break)
    c = simulate(JOBS, get_policy("prr")()).completion_time
    t0 = 2 + 1.35 / 0.775
    # attained at t0: j1 .15 + .1 + .075(t0 - 2); j2 .1 + .075(t0 - 2); j3 .075(t0 - 2)
    a1, a2, a3 = 0.25 + 0.075 * (t0 - 2), 0.1 + 0.075 * (t0 - 2), 0.075 * (t0 - 2)
    # k = 3: favourite rate .1 + .7 = .8, others .1
    t1 = t0 + (1 - a1) / 0.8
    assert c[1] == pytest.approx(t1)
    a2, a3 = a2 + 0.1 * (t1 - t0), a3 + 0.1 * (t1 - t0)
    # k = 2: favourite j2 gets .15 + .7 = .85, j3 gets .15
    t2 = t0 + (1 - a1) / 0.8 + (2 - a2) / 0.85
    assert c[2] == pytest.approx(t2)
    assert c[3] == pytest.approx(t2 + (1 - a3 - 0.15 * (t2 - t1)))


def test_edf_at_given_stretch():
    # deadlines r + 1·p: j0 3, j1 1, j2 3, j3 3 → j1 [0,1], j0 [1,4], j2 [4,6], j3 [6,7]
    c = simulate(JOBS, get_policy("edf")(stretch=1.0)).completion_time
    assert c.tolist() == [4, 1, 6, 7]


def test_edf_p_doubles_stretch_on_missed_predicted_deadline():
    # S=1: predicted deadlines j0 2, j1 2, j2 3, j3 4; j0 still running at 2 → S=2 (deadlines 4,4,5,6);
    # j0 done at 3, j1 [3,4]; j2 runs from 4 and is unfinished at its deadline 5 → S=4 (j2 9, j3 10)
    policy = get_policy("edf-p")()
    c = simulate(JOBS, policy).completion_time
    assert c.tolist() == [3, 4, 6, 7]
    assert policy.stretch == 4.0 and policy.doublings == 2


def test_time_origin_and_size_floor():
    jobs = JobSet.from_arrays([100.0, 100.5], [0.2, 2.0], job_id=["b", "a"])
    assert jobs.submit_time.tolist() == [0.0, 0.5] and jobs.time_offset == 100.0
    assert jobs.size.tolist() == [1.0, 2.0]  # floored at 1 s
    c = simulate(jobs, get_policy("fifo")()).completion_time
    assert c.tolist() == [1.0, 3.0]


def test_ties_by_submit_then_job_id():
    jobs = JobSet.from_arrays([5, 5, 0], [1, 1, 1], job_id=["b", "a", "z"])
    assert list(jobs.job_id) == ["z", "a", "b"]
    numeric = JobSet.from_arrays([0, 0, 0], [1, 1, 1], job_id=["10", "9", "100"])
    assert list(numeric.job_id) == ["9", "10", "100"]  # integer ids compare as numbers
    # exactly, beyond float precision and beyond 64 bits, whatever the rows' order in the file
    big = ["99999999999999999999", "99999999999999999998", "9007199254740993", "9007199254740992"]
    for ids in (big, big[::-1]):
        assert list(JobSet.from_arrays([0] * 4, [1] * 4, job_id=ids).job_id) == sorted(big, key=int)
    # the same number written twice goes by its text; a decimal id makes every id text
    assert list(JobSet.from_arrays([0, 0, 0], [1] * 3, job_id=["7", "007", "10"]).job_id) == ["007", "7", "10"]
    assert list(JobSet.from_arrays([0, 0, 0], [1] * 3, job_id=["2", "10", "1.5"]).job_id) == ["1.5", "10", "2"]


def test_non_clairvoyant_policy_cannot_read_true_sizes():
    from schedulers.policy import Allocation, Policy

    class Peek(Policy):
        name = "peek-test"

        def allocate(self, view):
            view.jobs.size  # noqa: B018 - must raise
            return Allocation()

    with pytest.raises(PolicyError, match="true job sizes"):
        simulate(JOBS, Peek())


def test_policy_needing_predictions_is_refused_without_them():
    with pytest.raises(PolicyError, match="predicted durations"):
        simulate(JobSet.from_arrays([0], [1]), get_policy("spjf")())


def test_running_an_unreleased_job_is_refused():
    from schedulers.policy import Allocation, Policy

    class Eager(Policy):
        name = "eager-test"

        def reset(self, view):
            self.g = view.new_group(1.0)

        def allocate(self, view):
            return Allocation().assign(1, self.g)  # job 1 arrives at t=5

    with pytest.raises(PolicyError, match="before its release"):
        simulate(JobSet.from_arrays([0, 5], [1, 1]), Eager())


def test_capacity_is_enforced():
    from schedulers.policy import Allocation, Policy

    class Greedy(Policy):
        name = "greedy-test"

        def reset(self, view):
            self.g = view.new_group(2.0)

        def allocate(self, view):
            a = Allocation()
            for j in view.arrived:
                a.assign(j, self.g)
            return a

    with pytest.raises(PolicyError, match="capacity 2.0 > 1"):
        simulate(JobSet.from_arrays([0, 0], [1, 1]), Greedy())


def test_parallel_lpt_hand_schedule():
    import pandas as pd

    jobs = JobSet.from_frame(
        pd.DataFrame({"job_id": list("abcde"), "submit_time": 0.0, "duration": [5, 4, 3, 3, 3],
                      "predicted_duration": [1, 2, 3, 4, 5]}),
        batch=True,
    )
    # LPT on 2 machines: a→M0 (5), b→M1 (4), c→M1 (7), d→M0 (8), e→M1 (10)
    c = simulate(jobs, get_policy("lpt")(machines=2), machines=2).completion_time
    assert c.tolist() == [5, 4, 7, 8, 10]
    # LPPT orders by p̂ descending (e,d,c,b,a) and balances by p̂: e→M0(5) d→M1(4) c→M1(7) b→M0(7) a→M0(8)
    # true loads: M0 = e3, b4, a5 → 3, 7, 12 ; M1 = d3, c3 → 3, 6
    c = simulate(jobs, get_policy("lppt")(machines=2), machines=2).completion_time
    assert c.tolist() == [12, 7, 6, 3, 3]
    assert np.isfinite(c).all()


# Instance B with distinct predictions (r, p, p̂): j0 (0, 4, 3.5), j1 (1, 1, 3), j2 (2, 2, 2)
JOBS_B = JobSet.from_arrays([0, 1, 2], [4, 1, 2], [3.5, 3, 2])
EXPECTED_B = {
    # non-preemptive: j0 [0,4]; then p̂ 2 < 3 → j2 [4,6], j1 [6,7]
    "spjf": [4, 7, 6],
    # fixed key p̂: j1 (3) preempts j0 (3.5) at 1 → [1,2]; j2 (2) at 2 → [2,4]; j0 resumes [4,7]
    "pspjf": [7, 2, 4],
    # predicted remaining of j0: 2.5 at t=1 (< 3) and 1.5 at t=2 (< 2) → never preempted
    "sprpt": [4, 7, 6],
    # PRR: j0 alone [0,1] at rate 1; j1 favourite at .85 (j0 .15) on [1,2]; j2 favourite at .8 from 2
    # (others .1): j1 needs .15 → done 3.5; then j2 at .85 needs .8 → 3.5 + .8/.85; j0 alone after → 7
    "prr": [7, 3.5, 3.5 + 0.8 / 0.85],
}


@pytest.mark.parametrize("name", sorted(EXPECTED_B))
def test_hand_schedule_with_distinct_predictions(name):
    result = simulate(JOBS_B, get_policy(name)())
    np.testing.assert_allclose(result.completion_time, EXPECTED_B[name], rtol=1e-12)


def test_parallel_spt_and_sppt_hand_schedules():
    import pandas as pd

    jobs = JobSet.from_frame(
        pd.DataFrame({"job_id": list("abcde"), "submit_time": 0.0, "duration": [5, 4, 3, 3, 3],
                      "predicted_duration": [1, 2, 3, 4, 5]}),
        batch=True,
    )
    # SPT: c→M0 (3), d→M1 (3), e→M0 (6), b→M1 (7), a→M0 (11)
    assert simulate(jobs, get_policy("spt")(machines=2), machines=2).completion_time.tolist() == [11, 7, 3, 3, 6]
    # SPPT by p̂ a,b,c,d,e, balanced by p̂: a→M0 (1) b→M1 (2) c→M0 (4) d→M1 (6) e→M0 (9);
    # true times M0: a 5, c 8, e 11; M1: b 4, d 7
    assert simulate(jobs, get_policy("sppt")(machines=2), machines=2).completion_time.tolist() == [5, 4, 8, 7, 11]
    # random: a seeded permutation, reproducible, never worse than list scheduling's 2 - 1/m bound
    first = simulate(jobs, get_policy("random")(machines=2, seed=7), machines=2).completion_time
    again = simulate(jobs, get_policy("random")(machines=2, seed=7), machines=2).completion_time
    assert first.tolist() == again.tolist() and first.max() <= (2 - 1 / 2) * 9


def test_makespan_batch_breaks_ties_by_job_id_not_by_submit_time():
    from schedulers.objectives import run_objective

    # equal sizes: LPT's order is the tie order. Submitted b then a; in the batch a comes first.
    jobs = JobSet.from_arrays([0, 5], [2, 2], [3, 1], job_id=["b", "a"])
    assert list(jobs.job_id) == ["b", "a"]
    rows, per_job, _ = run_objective("makespan", jobs, ["lpt", "lppt"], {"p": jobs.predicted}, machines=[1])
    lpt = per_job[per_job.policy == "lpt"].set_index("job_id")["completion_time"]
    assert lpt.to_dict() == {"a": 2.0, "b": 4.0}
    # p̂ follows its job through the re-sort: b has p̂ 3, so LPPT runs b first
    lppt = per_job[per_job.policy == "lppt"].set_index("job_id")
    assert lppt["completion_time"].to_dict() == {"a": 4.0, "b": 2.0}
    assert lppt["predicted_duration"].to_dict() == {"a": 1.0, "b": 3.0}


def test_a_watch_sees_every_row_as_it_is_scored_and_the_seconds_of_each_part():
    from schedulers.objectives import Watch, run_objective

    # a 1 s and a 3 s job released together: SRPT 1 + 4 = 5; FIFO (by submit, then id) runs b first: 3 + 4 = 7
    jobs = JobSet.from_arrays([0, 0], [3, 1], job_id=["b", "c"])
    seen = []
    watch = Watch(on_step=seen.append)
    rows, _, reference = run_objective("total_completion", jobs, ["fifo", "srpt"], {}, watch=watch)
    assert reference["sum_completion"] == 5.0
    assert seen == rows and [(r["policy"], r["value"]) for r in rows] == [("fifo", 7.0), ("srpt", 5.0)]
    assert set(watch.seconds) == {"reference_s", "policies_s", "per_job_s"}
    assert set(watch.seconds["policies_s"]) == {"fifo", "srpt"}
