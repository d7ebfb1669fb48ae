"""`benchmark reproduce hpc`: the cluster task's metrics of every backfilling run (JCT, slowdown, the
users' sharing losses; one computation, schedulers.cluster.metrics), `--whole` (each policy once on
the whole log), and `benchmark perf --hpc` (a whole log per policy, timed)."""

import json

import numpy as np
import pytest

from benchmark.experiments.perf import hpc as perf_hpc
from benchmark.cli import main
from benchmark.experiments import hpc
from schedulers.cluster.metrics import ideal_fairness
from schedulers.jobs import JobSet
from swf_logs import random_swf

# the commands' figures are placeholders: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _log(submit, run, procs, users, machine=8):
    """A log as `reproduce hpc` reads it; requested times generous (nobody is killed)."""
    run = np.array(run, float)
    return {"submit": np.array(submit, float), "run": run, "requested": run * 10, "request": run * 10,
            "nodes": np.array(procs, np.int64), "machine": machine, "user": np.array(users, float)}


def test_jct_and_slowdown_by_hand():
    # A (8 of 8, 100 s) at 0; B (8, 10 s) at 1 waits for A's end: JCTs 100 and 109
    out = hpc.run_sequence(_log([0, 1], [100, 10], [8, 8], [1, 1]), 0, "fcfs", length=2, compiled=False)
    assert out["start"].tolist() == [0, 100]
    assert out["avg_jct"] == pytest.approx((100 + 109) / 2)
    assert out["avg_slowdown"] == pytest.approx((1 + 10.9) / 2)
    assert out["p99_slowdown"] == pytest.approx(np.percentile([1, 10.9], 99))


def test_a_user_refused_the_machine_loses_and_one_served_does_not():
    # one user: B's wait is the user's own A, which holds the whole machine: B's ρ is far under 0.95
    # (it receives 80 of its share of [1, 110)), A's is ≥ 1; the user's one hour window is not a loss
    # (it received all it asked for: 880 processor-seconds of 880)
    one = hpc.run_sequence(_log([0, 1], [100, 10], [8, 8], [1, 1]), 0, "fcfs", length=2, compiled=False)
    assert one["sharing_loss_jobs"] == 0.5 and one["tenant_loss_intervals"] == 0.0
    # two users: B's user has asked for 8 processors since 1 and received nothing until 100 — under
    # min(demand, quota 4) over its hour: one of the two (user, hour) pairs is a loss
    two = hpc.run_sequence(_log([0, 1], [100, 10], [8, 8], [1, 2]), 0, "fcfs", length=2, compiled=False)
    assert two["sharing_loss_jobs"] == 0.5 and two["tenant_loss_intervals"] == 0.5
    # nobody waits: no loss
    free = hpc.run_sequence(_log([0, 1], [100, 10], [4, 4], [1, 2]), 0, "fcfs", length=2, compiled=False)
    assert free["sharing_loss_jobs"] == 0.0 and free["tenant_loss_intervals"] == 0.0


def _busy(n=400, key=3):
    rng = np.random.default_rng(key)
    run = np.maximum(1.0, np.floor(rng.uniform(10, 600, n)))
    return _log(np.cumsum(rng.integers(0, 60, n)), run, rng.integers(1, 9, n), rng.integers(0, 6, n))


def test_the_losses_separate_the_schedulers_and_the_ideal_scores_zero():
    log = _busy()
    runs = {p: hpc.run_sequence(log, 0, p, length=400, compiled=False) for p in ("fcfs", "easy", "conservative")}
    # backfilling serves the waiting users better than a queue that holds everyone behind its head
    for key in ("sharing_loss_jobs", "tenant_loss_intervals", "avg_jct"):
        assert runs["fcfs"][key] > runs["easy"][key] and runs["fcfs"][key] > runs["conservative"][key], key
    assert runs["fcfs"]["sharing_loss_jobs"] > 0.5 > 0.35 > runs["easy"]["sharing_loss_jobs"]
    # the ideal schedule of the same jobs (each from its submit, capacity ignored) loses nothing
    jobs = JobSet(job_id=np.arange(400).astype(str).astype(object), submit_time=log["submit"], size=log["run"],
                  predicted=log["run"], gpus=log["nodes"], tenant=log["user"].astype(np.int64),
                  tenant_names=tuple(str(u) for u in range(6)), weight=np.ones(400), time_offset=0.0)
    assert ideal_fairness(jobs, cluster=hpc.machine(8)) == {"sharing_loss_jobs": 0.0, "tenant_loss_intervals": 0.0}


def _swf(path, n):
    return random_swf(path, n, seed=2, max_gap=150, max_request=400)


def test_whole_runs_each_policy_once_on_every_job(tmp_path, capsys):
    log_path = _swf(tmp_path / "log.swf", 600)  # too short for the protocol's sequences
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(log_path), "--output", str(tmp_path / "no"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "at least 2050" in err[0] and "--whole" in err[0], err
    out = tmp_path / "out"
    assert main(["reproduce", "hpc", "--jobs", str(log_path), "--whole", "--policies", "fcfs,conservative",
                 "--output", str(out), "--quiet"]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["whole"] is True and doc["sequences"] is None
    log = hpc.load_log(log_path)
    for row in doc["rows"]:
        assert (row["runs"], row["jobs"]) == (1, 600)
        direct = hpc.run_sequence(log, 0, row["policy"], length=600)
        for key in ("bsld", "wait", "utilisation", *hpc.CLUSTER_METRICS):
            assert row[key] == direct[key], key
        assert row["killed"] == int(hpc.killed_runs(log)[2].sum()) > 0
    text = (out / "reproduce-hpc.md").read_text()
    assert "`benchmark reproduce hpc --whole`" in text and "once on the whole of each log, from an empty machine" in text
    # the cluster metrics' table, row for row
    fcfs = doc["rows"][0]
    assert (f"| log.swf | fcfs | {fcfs['avg_jct'] / 3600:.2f} | {fcfs['avg_slowdown']:,.1f} | "
            f"{fcfs['p99_slowdown']:,.0f} | {fcfs['sharing_loss_jobs']:.3f} | {fcfs['tenant_loss_intervals']:.3f} |"
            in text)


def test_whole_with_a_learned_predictor_runs_the_whole_test_part(tmp_path, capsys):
    log_path = _swf(tmp_path / "log.swf", 3_000)
    capsys.readouterr()
    argv = ["reproduce", "hpc", "--jobs", str(log_path), "--policies", "easy-p", "--predictor", "constant", "--quiet"]
    assert main([*argv, "--output", str(tmp_path / "no")]) == 2  # 450 test jobs: no sequences of 1,024
    assert "--whole" in capsys.readouterr().err
    assert main([*argv, "--whole", "--output", str(tmp_path / "out")]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [r["label"] for r in doc["rows"]] == ["easy-p (constant)", "easy-p (oracle)"]
    jobs = {r["jobs"] for r in doc["rows"]}  # the last 15 % by submit time, every one of them
    assert len(jobs) == 1 and 440 <= jobs.pop() <= 460


def test_perf_hpc_times_every_policy_on_the_whole_log(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(perf_hpc, "COMPILED", False)  # the compiled loops' equality is tested elsewhere
    log_path = _swf(tmp_path / "log.swf", 300)
    out = tmp_path / "perf.json"
    assert main(["perf", "--hpc", "--perf-hpc-log", str(log_path), "--perf-hpc-policies", "fcfs,easy-pp",
                 "--perf-hpc-repeat", "2", "--output", str(out), "--quiet"]) == 0
    figures = json.loads(out.read_text())["hpc"]
    log = hpc.load_log(log_path)
    assert figures["jobs"] == 300 and figures["repeat"] == 2
    for row in figures["rows"]:
        assert row["bsld"] == round(hpc.run_sequence(log, 0, row["policy"], length=300)["bsld"], 2)
        assert 0 < row["simulation_s"] <= row["run_s"] and row["jobs_per_s"] > 0
    assert [r["policy"] for r in figures["rows"]] == ["fcfs", "easy-pp"]
    capsys.readouterr()
    assert main(["perf", "--hpc", "--perf-hpc-log", str(log_path), "--perf-hpc-policies", "easy,sjf+",
                 "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--perf-hpc-policies" in err[0] and "sjf+" in err[0], err


def test_a_whole_log_too_long_for_the_sharing_ledger_is_refused_before_any_run(tmp_path, capsys, monkeypatch):
    # 1,000 users over three years: 1,000 × 26,000 hours of (user, hour) records, past the limit
    lines = ["; MaxNodes: 8", "; MaxProcs: 8"]
    lines += [f"{i + 1} {i * 95_000} 0 60 1 -1 -1 -1 100 -1 1 {i + 1} 1 1 1 1 -1 -1" for i in range(1_000)]
    (tmp_path / "long.swf").write_text("\n".join(lines) + "\n")
    ran = []
    monkeypatch.setattr(hpc, "run_sequence", lambda *a, **k: ran.append(a))
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(tmp_path / "long.swf"), "--whole", "--output",
                 str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "long.swf" in err[0] and "--whole" in err[0] and "1,000 users" in err[0], err
    assert not ran and not (tmp_path / "out").exists()


def test_whole_logs_shake_like_sequences(tmp_path):
    log_path = _swf(tmp_path / "log.swf", 400)
    argv = ["reproduce", "hpc", "--jobs", str(log_path), "--whole", "--policies", "easy,easy-pp", "--quiet"]
    assert main([*argv, "--shake", "2", "--shake-shift", "0", "--output", str(tmp_path / "zero")]) == 0
    zero = json.loads((tmp_path / "zero" / "results.json").read_text())
    for row in zero["rows"]:  # a zero shift is the unshaken whole log
        assert row["bsld_shaken"] == [row["bsld"]] * 2 and row["shaken"]["wait"]["mean"] == pytest.approx(row["wait"])
    assert main([*argv, "--shake", "3", "--output", str(tmp_path / "moved")]) == 0
    moved = json.loads((tmp_path / "moved" / "results.json").read_text())
    assert [(d["a"], d["b"]) for d in moved["differences"]] == [("easy-pp", "easy")]
    assert any(set(r["bsld_shaken"]) != {r["bsld"]} for r in moved["rows"])
