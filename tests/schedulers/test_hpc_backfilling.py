"""The HPC backfilling schedulers of `benchmark reproduce hpc` (docs/hpc-backfilling.md): EASY on requested
times (easy_p's rule with p̂ := requested), EASY++ (the user's recent jobs, raised when outlived, SJBF),
conservative backfilling, and a job killed at its requested time; hand-computed schedules on an
8-processor machine, EASY++'s causality, the compiled loops against the Python ones, and the command."""

import json

import numpy as np
import pytest

from benchmark.cli import main
from benchmark.experiments import hpc
from schedulers.cluster import simulator
from schedulers.jobs import JobSet


def _jobs(submit, run, predicted, procs, users=None):
    n = len(submit)
    users = [0] * n if users is None else users
    return JobSet(job_id=np.arange(n).astype(str).astype(object), submit_time=np.array(submit, float),
                  size=np.array(run, float), predicted=np.array(predicted, float), gpus=np.array(procs, np.int64),
                  tenant=np.array(users, np.int64), tenant_names=tuple(str(u) for u in range(max(users) + 1)),
                  weight=np.ones(n), time_offset=0.0)


def _starts(policy, submit, run, predicted, procs, users=None, machine=8, compiled=False, interval_s=1.0):
    state = simulator.run(_jobs(submit, run, predicted, procs, users), hpc.make_policy(policy), compiled,
                          cluster=hpc.machine(machine, interval_s))
    return state.start.tolist()


# A (4 processors, 10 s) and B (2, 30 s) start at 0; H (4, 10 s) is the blocked head: shadow 10 (A's
# end), 2 extra processors then. X (6, 10 s) waits behind it; Y (2, 25 s) arrives at 3.
EASY_VS_CONSERVATIVE = dict(submit=[0, 0, 1, 2, 3], run=[10, 30, 10, 10, 25], predicted=[10, 30, 10, 10, 25],
                            procs=[4, 2, 4, 6, 2])


def test_easy_backfills_on_the_extra_processors_and_conservative_does_not():
    # EASY: Y ends after the shadow time but takes only the 2 extra processors, so it starts at 3
    # (the head H still starts at 10); X, needing 6, then waits for Y's end at 28
    assert _starts("easy", **EASY_VS_CONSERVATIVE) == [0, 0, 10, 28, 3]
    # conservative: X holds a reservation [20, 30) (H [10, 20), B until 30); Y on [3, 28) would take
    # 2 of X's 6 processors, so Y reserves [30, 55) and X starts at 20
    assert _starts("conservative", **EASY_VS_CONSERVATIVE) == [0, 0, 10, 20, 30]
    # without backfilling Y waits its turn behind X
    assert _starts("fcfs", **EASY_VS_CONSERVATIVE) == [0, 0, 10, 20, 30]


def test_easy_backfills_a_job_that_ends_before_the_shadow_time():
    # A (6 of 8, 10 s) runs; H (8) is the head, shadow 10, no extra processors; C (2, 20 s) would
    # delay it and waits; D (2, 5 s) ends by 10 and starts at once (conservative the same: D fits
    # before H's reservation, C does not)
    case = dict(submit=[0, 1, 2, 3], run=[10, 10, 20, 5], predicted=[10, 10, 20, 5], procs=[6, 8, 2, 2])
    assert _starts("easy", **case) == [0, 10, 20, 3]
    assert _starts("conservative", **case) == [0, 10, 20, 3]


def test_a_job_is_killed_at_its_requested_time():
    log = {"run": np.array([50.0, 5.0, 30.0]), "requested": np.array([20.0, 10.0, -1.0])}
    run, request, killed = hpc.killed_runs(log)
    assert run.tolist() == [20.0, 5.0, 30.0]  # 50 s asked 20: ended at 20; no requested time: no kill
    # the third's estimate is the site's limit (here the longest requested time), not its own 30 s
    assert request.tolist() == [20.0, 10.0, 20.0] and killed.tolist() == [True, False, False]
    # through a run: the killed job frees its processors at 20, where the next job starts
    seq = {"submit": np.array([0.0, 1.0, 2.0]), "run": np.array([50.0, 5.0, 30.0]),
           "requested": np.array([20.0, 10.0, -1.0]), "request": np.array([20.0, 10.0, 30.0]),
           "nodes": np.array([8, 8, 8]), "machine": 8, "user": np.array([1.0, 1.0, 2.0])}
    out = hpc.run_sequence(seq, 0, "fcfs", length=3, compiled=False)
    assert out["start"].tolist() == [0, 20, 25]
    # waits 0, 19, 23; bounded slowdowns max(1, (w + r) / max(r, 10)): 1, 24/10, 53/30
    assert out["wait"] == pytest.approx(42 / 3)
    assert out["bsld"] == pytest.approx((1 + 2.4 + 53 / 30) / 3)
    assert out["utilisation"] == pytest.approx((20 + 5 + 30) / 55)


# user 0 runs two 5 s jobs (requested 100) that end at 5; J, user 0's third (6 processors, requested
# 100, runs 50), is predicted 5 s: the average of the two. H (8 processors, user 1) is the head.
def _outlived(y_submit, y_request):
    return dict(submit=[0, 0, 6, 7, y_submit], run=[5, 5, 50, 10, y_request], predicted=[100, 100, 100, 10, y_request],
                procs=[1, 1, 6, 8, 2], users=[0, 0, 0, 1, 2])


def test_easy_pp_predicts_from_the_users_last_two_jobs():
    # at 8, J is predicted to end at 6 + 5 = 11: the shadow time. Y (2, requested 4) would end at 12
    # and waits; EASY on requested times (J to end at 106) backfills it
    assert _starts("easy-pp", **_outlived(8, 4))[4] == 56 + 10
    assert _starts("easy", **_outlived(8, 4))[4] == 8
    # Y requested 3 ends by 11: EASY++ backfills it too
    assert _starts("easy-pp", **_outlived(8, 3))[4] == 8


def test_easy_pp_raises_an_outlived_prediction_to_the_requested_time():
    # at 12 J has outlived its 5 s prediction: raised to its requested 100, the shadow time is 106 and
    # Y (requested 10) is backfilled at once
    assert _starts("easy-pp", **_outlived(12, 10)) == [0, 0, 6, 56, 12]
    # EASY with the same predictions given as p̂ (J: 5), which counts an outlived job as ending now:
    # shadow 12, no extra processors, Y waits for H
    case = _outlived(12, 10)
    case["predicted"] = [100, 100, 5, 10, 10]
    assert _starts("easy-p", **case) == [0, 0, 6, 56, 66]


def _given(y_submit, estimate):
    case = _outlived(y_submit, 10)
    jobs = _jobs(case["submit"], case["run"], case["predicted"], case["procs"], case["users"])
    return simulator.run(jobs, hpc.make_policy("easy-pp", estimate=np.array(estimate, float)), False,
                         cluster=hpc.machine(8)).start.tolist()


def test_easy_pp_on_a_given_estimate_keeps_the_correction_and_sjbf():
    # EASY++ with a p̂ given per job (a learned predictor's) in place of its own prediction
    # J given 5 s: at 8 the shadow time is 11 and Y (requested 10) waits for H (as with J's requested 100
    # it would not: shadow 106)
    assert _given(8, [100, 100, 5, 10, 10])[4] == 66
    # J given 20 s: shadow 26, Y ends by 18 and is backfilled (its own prediction, 5 s, would not)
    assert _given(8, [100, 100, 20, 10, 10])[4] == 8
    assert _starts("easy-pp", **_outlived(8, 10))[4] == 66
    # the correction: at 12 J has outlived its 5 s, raised to its requested 100, and Y is backfilled;
    # Y's estimate 500 counts as its requested 10 (capped), else it would run past the shadow time
    assert _given(12, [100, 100, 5, 10, 500]) == [0, 0, 6, 56, 12]


def test_easy_pp_backfills_the_shortest_job_first():
    # A (6 of 8, 100 s) runs, H (8) is the head (shadow 100); L (2, 50 s) and S (2, 20 s) arrive together
    # with room for one: EASY takes L (submit order), EASY++ S (shortest prediction), then L at 22
    case = dict(submit=[0, 1, 2, 2], run=[100, 10, 50, 20], predicted=[100, 10, 50, 20], procs=[6, 8, 2, 2],
                users=[0, 1, 2, 3])
    assert _starts("easy", **case) == [0, 100, 2, 52]
    assert _starts("easy-pp", **case) == [0, 100, 22, 2]


def _workload(n=90, rng_key=3):
    rng = np.random.default_rng(rng_key)
    submit = np.cumsum(rng.integers(0, 12, n)).astype(float)
    request = rng.integers(10, 300, n).astype(float)
    run = np.maximum(1.0, np.floor(request * rng.uniform(0.05, 1.0, n)))
    return dict(submit=submit, run=run, predicted=request, procs=rng.integers(1, 9, n), users=rng.integers(0, 5, n))


def test_easy_pp_reads_no_future_run_time():
    # a later job's run time changes nothing before that job's end is known: every start before
    # start_k + (the shorter of its two run times) is the same, and so is job k's own start
    case = _workload()
    base = _starts("easy-pp", **case)
    for k in (40, 60, 75):
        for new in (1.0, case["predicted"][k]):
            other = dict(case, run=case["run"].copy())
            other["run"][k] = new
            changed = _starts("easy-pp", **other)
            assert changed[k] == base[k]
            known = base[k] + min(new, case["run"][k])
            same = [j for j in range(len(base)) if base[j] < known]
            assert len(same) > k // 2
            assert [changed[j] for j in same] == [base[j] for j in same]
            assert all(changed[j] >= known for j in range(len(base)) if j not in same)


def test_easy_and_easy_p_are_one_rule_and_easy_pp_another():
    # `easy` is easy-p (the fairness task's policy) given the requested times as p̂: on the same p̂ the
    # same run; EASY++ on the same input predicts, and schedules differently
    case = _workload(60, 5)
    assert _starts("easy-p", **case) == _starts("easy", **case)
    assert _starts("easy-pp", **case) != _starts("easy", **case)


@pytest.mark.slow
def test_the_compiled_loops_give_the_python_runs():
    case = _workload(200, 7)
    for policy in ("easy", "easy-pp", "conservative"):
        assert _starts(policy, **case, compiled=True) == _starts(policy, **case, compiled=False), policy


@pytest.mark.slow
def test_the_compiled_loops_decide_at_every_event_on_fractional_times():
    case = _workload(200, 7)
    case["submit"] = case["submit"] + 0.25 * (np.arange(200) % 4)
    case["run"] = case["run"] + 0.5
    for policy in ("fcfs", "easy", "easy-pp", "conservative"):
        python = _starts(policy, **case, interval_s=0.0)
        assert any(t != int(t) for t in python)  # decisions between whole seconds
        assert _starts(policy, **case, compiled=True, interval_s=0.0) == python, policy


def test_a_decision_at_every_event_by_hand():
    # 2 processors; A (2, 1.5 s) at 0.25, B (1, 2 s) at 0.5: B starts when A ends, at 1.75, not on the next second
    case = dict(submit=[0.25, 0.5], run=[1.5, 2.0], predicted=[3.0, 3.0], procs=[2, 1])
    for policy in ("fcfs", "easy", "conservative"):
        assert _starts(policy, **case, machine=2, interval_s=0.0) == [0.25, 1.75], policy
        assert _starts(policy, **case, machine=2) == [1.0, 3.0], policy  # on the one-second tick


# ----- the command ------------------------------------------------------------------------------------
def _swf(path, n, procs=8):
    rng = np.random.default_rng(1)
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    t = 0
    for i in range(n):
        t += int(rng.integers(0, 200))
        req = int(rng.integers(20, 400))
        run = int(rng.integers(1, req + 50))  # some run past their request: killed there
        lines.append(f"{i + 1} {t} 0 {run} {int(rng.integers(1, procs + 1))} -1 -1 -1 {req} -1 1 "
                     f"{int(rng.integers(1, 6))} 1 1 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_command_on_an_swf_log(tmp_path, capsys):
    log = _swf(tmp_path / "log.swf", 2_100)
    out = tmp_path / "out"
    assert main(["reproduce", "hpc", "--jobs", str(log), "--policies", "fcfs,easy", "--output", str(out),
                 "--quiet"]) == 0
    doc = json.loads((out / "results.json").read_text())
    rows = {r["policy"]: r for r in doc["rows"]}
    assert list(rows) == ["fcfs", "easy"] and doc["complete"]
    assert rows["easy"]["bsld"] < rows["fcfs"]["bsld"] and rows["easy"]["wait"] < rows["fcfs"]["wait"]
    assert all(0 < r["utilisation"] <= 1 and r["killed"] > 0 for r in rows.values())
    assert (out / "reproduce-hpc.md").read_text() in capsys.readouterr().out
    # the figure: PNG and SVG, each row's p̂ told by its colour
    assert (out / "reproduce-hpc.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "reproduce-hpc.svg").read_text().lstrip().startswith("<?xml")
    assert [hpc.p_hat_kind(r) for r in doc["rows"]] == ["none", "requested"]
    assert hpc.p_hat_kind({"policy": "easy-p", "p_hat": "oracle"}) == "oracle"
    assert hpc.p_hat_kind({"policy": "easy-pp", "p_hat": None}) == "easy++"
    assert hpc.p_hat_kind({"policy": "easy-pp", "p_hat": "lgbm-meta"}) == "learned"


def _run_learned(log, out, policies):
    assert main(["reproduce", "hpc", "--jobs", str(log), "--policies", policies, "--predictor", "constant",
                 "--output", str(out), "--quiet"]) == 0
    return (out / "results.json").read_text()


def test_a_learned_predictor_runs_on_the_test_part(tmp_path, monkeypatch):
    # `constant` (the train median) fitted on the first 85 % by submit time; the sequences are the
    # last 15 %'s, and easy-p's p̂ is that median capped at each job's requested time
    log = _swf(tmp_path / "log.swf", 14_000)
    seen = {}
    real = hpc.run_sequence

    def spy(part, start, name, **kw):
        seen.setdefault("part", part)
        return real(part, start, name, **kw)

    monkeypatch.setattr(hpc, "run_sequence", spy)
    out = tmp_path / "out"
    assert main(["reproduce", "hpc", "--jobs", str(log), "--policies", "easy-p", "--predictor", "constant",
                 "--output", str(out), "--quiet"]) == 0
    part = seen["part"]
    full = hpc.load_log(log)
    assert 2_050 < part["jobs"] < 2_150 and (part["number"] == full["number"][-part["jobs"]:]).all()
    assert len(set(part["learned"].tolist())) == 1  # one median for every job
    median = float(np.median(full["run"][:int(0.7 * 14_000)]))  # the train part's run times
    assert part["learned"][0] == pytest.approx(median, rel=0.1)
    doc = json.loads((out / "results.json").read_text())
    # easy-p once per p̂ on the same sequences: the learned one and the oracle
    assert doc["predictor"] == "constant"
    assert [(r["label"], r["p_hat"]) for r in doc["rows"]] == [("easy-p (constant)", "constant"),
                                                                ("easy-p (oracle)", "oracle")]
    assert doc["rows"][1]["bsld"] < doc["rows"][0]["bsld"]  # a constant guess is worse than the truth
    # easy-pp, with its own prediction and with the learned one
    doc = json.loads(_run_learned(log, tmp_path / "out2", "easy-pp"))
    assert [(r["label"], r["p_hat"]) for r in doc["rows"]] == [("easy-pp", None), ("easy-pp (constant)", "constant")]
    assert doc["rows"][0]["bsld"] != doc["rows"][1]["bsld"]


@pytest.mark.parametrize("argv, fragment", [
    (["--policies", "fcfs,easy+"], "unknown policy 'easy+'"),
    (["--policies", "easy,easy"], "named twice"),
    (["--predictor", "no-such-method"], "no-such-method"),
])
def test_bad_options_are_one_line_and_write_nothing(tmp_path, capsys, argv, fragment):
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["reproduce", "hpc", *argv, "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and argv[0] in err[0] and fragment in err[0], err
    assert not out.exists()


def test_a_short_log_is_refused_before_any_run(tmp_path, capsys):
    log = _swf(tmp_path / "log.swf", 300)
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(log), "--output", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "at least 2050" in err[0], err
    assert not (tmp_path / "out").exists()


def test_a_missing_requested_time_hands_no_policy_the_true_run_time(monkeypatch):
    # RLScheduler's protocol takes the run time as the estimate of a job without a requested time;
    # here every estimate a policy reads (and a learned p̂'s cap) must stay the same when such a
    # job's run time changes: the site's limit stands in for it
    from schedulers.cluster import metrics

    seen = []
    real = metrics.simulate_fairness

    def spy(jobs, policy, **kw):
        seen.append(jobs.predicted.copy())
        return real(jobs, policy, **kw)

    monkeypatch.setattr(metrics, "simulate_fairness", spy)
    rng = np.random.default_rng(4)
    n = 60
    requested = rng.integers(50, 400, n).astype(float)
    requested[[5, 17, 40]] = -1.0  # three jobs without a requested time
    base = {"submit": np.cumsum(rng.integers(0, 30, n)).astype(float), "requested": requested,
            "run": np.minimum(requested, rng.integers(5, 300, n)).astype(float), "nodes": rng.integers(1, 9, n),
            "machine": 8, "user": rng.integers(0, 4, n).astype(float), "learned": rng.uniform(10, 500, n),
            "path": "log.swf"}
    base["run"][[5, 17, 40]] = [100.0, 250.0, 30.0]
    other = {**base, "run": base["run"].copy()}
    other["run"][[5, 17, 40]] = [3_000.0, 7.0, 900.0]
    for policy, p_hat in (("sjf", None), ("easy", None), ("easy-pp", None), ("easy-pp", "m"), ("conservative", None),
                          ("easy-p", "m")):
        seen.clear()
        for log in (base, other):
            hpc.run_sequence(hpc.with_site_limit(log), 0, policy, length=n, compiled=False, p_hat=p_hat)
        assert np.array_equal(seen[0], seen[1]), policy
        assert seen[0][5] <= requested.max() and seen[0][5] != 100.0, policy
    # the oracle reads the run time, as it should
    seen.clear()
    for log in (base, other):
        hpc.run_sequence(hpc.with_site_limit(log), 0, "easy-p", length=n, compiled=False)
    assert seen[0][5] == 100.0 and seen[1][5] == 3_000.0


def test_a_log_without_any_estimate_runs_what_it_supports_and_refuses_the_rest_when_named(tmp_path, capsys):
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    lines += [f"{i + 1} {i * 50} 0 {40 + i % 7} 2 -1 -1 -1 -1 -1 1 {i % 3 + 1} 1 1 1 1 -1 -1" for i in range(300)]
    (tmp_path / "none.swf").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    argv = ["reproduce", "hpc", "--jobs", str(tmp_path / "none.swf"), "--whole", "--quiet"]
    # the default list narrows to the policies that read no estimate, with a note
    assert main([*argv, "--output", str(tmp_path / "default")]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["none.swf: note: the log gives no requested time (field 9) and no MaxRuntime: running fcfs, "
                   "easy-p only (sjf, easy, easy-pp, conservative need the users' estimates)"], err
    rows = json.loads((tmp_path / "default" / "results.json").read_text())["rows"]
    assert [r["label"] for r in rows] == ["fcfs", "easy-p (oracle)"]
    # a policy that needs an estimate, named, is refused
    assert main([*argv, "--policies", "fcfs,sjf", "--output", str(tmp_path / "no")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no requested time" in err[0] and "sjf need the users' estimates" in err[0], err
    assert not (tmp_path / "no").exists()


def test_lines_without_processors_are_dropped_with_data_imports_note(tmp_path, capsys):
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    lines += [f"{i + 1} {i * 50} 0 {40 + i % 7} {-1 if i in (3, 9, 10) else 2} -1 -1 -1 60 -1 1 {i % 3 + 1} "
              "1 1 1 1 -1 -1" for i in range(300)]
    (tmp_path / "neg.swf").write_text("\n".join(lines) + "\n")
    log = hpc.load_log(tmp_path / "neg.swf")
    assert log["jobs"] == 297 and 4.0 not in log["number"].tolist() and 5.0 in log["number"].tolist()
    assert log["notes"] == ["dropped 3: no_processors (allocated and requested processors missing or <= 0; "
                            "as `data import` drops them)"]
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(tmp_path / "neg.swf"), "--whole", "--policies", "fcfs,easy",
                 "--output", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "neg.swf: note: dropped 3: no_processors" in err
    rows = json.loads((tmp_path / "out" / "results.json").read_text())["rows"]
    assert rows[0]["jobs"] == 297


def _swf_line(number, submit, run, procs, request):
    return f"{number} {submit} -1 {run} {procs} -1 -1 {procs} {request} -1 1 {number % 2 + 1} 1 1 1 1 -1 -1"


# job 2 is submitted before job 1; job 3 ran 0 s, job 4 has no processor count; job 5 outlives its request
MIXED_LOG = ["; MaxNodes: 2", "; MaxProcs: 2", _swf_line(1, 10.5, 4.25, 2, 5.5), _swf_line(2, 3.25, 2.5, 2, 3),
             _swf_line(3, 4, 0, 1, 10), _swf_line(4, 5, 3, -1, 10), _swf_line(5, 12.75, 2.5, 1, 2)]


def test_fractional_times_and_submit_order_are_read_exactly_with_a_note_each(tmp_path, capsys):
    path = tmp_path / "mixed.swf"
    path.write_text("\n".join(MIXED_LOG) + "\n")
    log = hpc.load_log(path, exact_times=True)
    assert log["number"].tolist() == [2, 1, 5]  # by submit time, not job number
    assert log["submit"].tolist() == [3.25, 10.5, 12.75] and log["run"].tolist() == [2.5, 4.25, 2.5]
    assert log["notes"] == [
        "dropped 1: no_processors (allocated and requested processors missing or <= 0; as `data import` drops them)",
        "dropped 1: non_positive_duration (a run time of 0; as `data import` drops them)",
        "1 job was submitted before a job of a smaller number: the jobs are taken in order of submit time (stably)"]
    # FCFS by hand on 2 processors (times from the first submit): job 2 at 0 (ends 2.5), job 1 at its
    # submit 7.25 (ends 11.5), job 5 (submitted 9.5) when job 1 ends; job 5 is killed at its request, 2 s
    run = hpc.run_sequence(hpc.with_site_limit(log), 0, "fcfs", length=3, compiled=False)
    assert run["start"].tolist() == [0.0, 7.25, 11.5]
    assert run["wait"] == pytest.approx((0 + 0 + 2.0) / 3)
    assert hpc.killed_runs(log)[0].tolist() == [2.5, 4.25, 2.0]
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(path), "--whole", "--policies", "fcfs,easy", "--output",
                 str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"mixed.swf: note: {note}" for note in log["notes"]], err
    rows = json.loads((tmp_path / "out" / "results.json").read_text())["rows"]
    assert [r["jobs"] for r in rows] == [3, 3] and rows[0]["wait"] == pytest.approx(2.0 / 3)
    # RLScheduler's protocol reads whole seconds in job-number order: the same log is refused there
    assert main(["reproduce", "rlscheduler", "--jobs", str(path), "--output", str(tmp_path / "rls"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "whole seconds" in err[0], err


def test_a_line_with_no_run_time_is_dropped_by_reproduce_hpc_and_kept_as_10_s_by_rlschedulers_protocol(tmp_path):
    # job 2 was cancelled (run time −1), job 4 ran 0 s
    lines = ["; MaxProcs: 4", _swf_line(1, 0, 5, 1, 9), _swf_line(2, 1, -1, 2, 30), _swf_line(3, 2, 7, 1, 9),
             _swf_line(4, 3, 0, 1, 9), _swf_line(5, 4, 6, 4, 9)]
    (tmp_path / "cancelled.swf").write_text("\n".join(lines) + "\n")
    hpc_log = hpc.load_log(tmp_path / "cancelled.swf", exact_times=True)
    assert hpc_log["number"].tolist() == [1, 3, 5] and hpc_log["run"].tolist() == [5, 7, 6]
    assert hpc_log["notes"] == ["dropped 1: no_duration (run time −1, missing; as `data import` drops them)",
                                "dropped 1: non_positive_duration (a run time of 0; as `data import` drops them)"]
    rls_log = hpc.load_log(tmp_path / "cancelled.swf")
    assert rls_log["number"].tolist() == [1, 2, 3, 5] and rls_log["run"].tolist() == [5, 10, 7, 6]
    assert rls_log["request"].tolist() == [9, 30, 9, 9] and rls_log["nodes"].tolist() == [1, 2, 1, 4]
    assert rls_log["notes"] == ["dropped 1: non_positive_duration (a run time of 0; as `data import` drops them)",
                                "kept 1 jobs with no run time (-1) as jobs of 10 s, as RLScheduler's protocol does"]
    # the same jobs as `data import` keeps
    from atlas_data.adapters import import_swf

    jobs, report = import_swf(tmp_path / "cancelled.swf")
    assert jobs["job_id"].tolist() == ["1", "3", "5"] and report.dropped == {
        "no_submit_time": 0, "no_processors": 0, "no_duration": 1, "non_positive_duration": 1}


def test_several_jobs_out_of_order_are_counted_and_equal_times_keep_job_number_order(tmp_path):
    lines = ["; MaxProcs: 4", _swf_line(1, 50, 5, 1, 9), _swf_line(2, 20, 5, 1, 9), _swf_line(3, 20, 5, 1, 9),
             _swf_line(4, 60, 5, 1, 9), _swf_line(5, 55, 5, 1, 9)]
    (tmp_path / "order.swf").write_text("\n".join(lines) + "\n")
    log = hpc.load_log(tmp_path / "order.swf", exact_times=True)
    assert log["number"].tolist() == [2, 3, 1, 5, 4]
    assert log["notes"] == ["3 jobs were submitted before a job of a smaller number: the jobs are taken in order of "
                            "submit time (stably)"]
    assert log["submit"].tolist() == [20, 20, 50, 55, 60]


@pytest.mark.parametrize("lines, fragments", [
    ([_swf_line(1, 0, 5, 1.5, 9)], ["line 3", "allocated processors is 1.5: a count, a whole number in SWF"]),
    ([_swf_line(1, 0, 5, -1, 9), _swf_line(2, 1, 0, 1, 9)], ["no line of the log can run", "dropped 1: no_processors",
                                                             "dropped 1: non_positive_duration"]),
])
def test_a_log_with_nothing_usable_is_one_line(tmp_path, capsys, lines, fragments):
    path = tmp_path / "bad.swf"
    path.write_text("\n".join(["; MaxNodes: 2", "; MaxProcs: 2", *lines]) + "\n")
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(path), "--whole", "--output", str(tmp_path / "out"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and all(f in err[0] for f in fragments), err
    assert not (tmp_path / "out").exists()
