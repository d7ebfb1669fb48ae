"""`benchmark perf --fairness` on tiny sizes: every workload asked for, time and peak memory per policy."""

import json

from benchmark.cli import main


def test_perf_fairness_synthetic_tiny(tmp_path, capsys):
    out = tmp_path / "perf.json"
    argv = ["perf", "--fairness", "--fairness-workloads", "synthetic", "--fairness-jobs", "300",
            "--fairness-policies", "fifo,astraea", "--output", str(out)]
    assert main(argv) == 0
    figures = json.loads(out.read_text())["fairness"]
    synthetic = figures["workloads"]["synthetic"]
    assert synthetic["jobs"] == 300 and synthetic["gpus"] == 800 and synthetic["tenants"] > 1
    assert list(synthetic["policies"]) == ["fifo", "astraea"]
    for name, row in synthetic["policies"].items():
        assert row["completed"] == 300 and row["seconds"] > 0 and row["peak_rss_mib"] > 10
    assert synthetic["policies"]["astraea"]["rounds"] > 0 and synthetic["policies"]["fifo"]["rounds"] == 0
    assert synthetic["all_policies_s"] >= synthetic["policies"]["astraea"]["seconds"]
    assert "venus" not in figures["workloads"] and "philly" not in figures["workloads"]
    err = capsys.readouterr().err
    assert "synthetic, 300 jobs" in err and "the target < 2 min is for 10⁶ jobs" in err
    assert "target < 2 min: met" not in err and "MISSED" not in err  # 300 jobs say nothing about 10⁶


def test_perf_fairness_refuses_an_unknown_workload(capsys):
    assert main(["perf", "--fairness", "--fairness-workloads", "mars"]) == 2
    assert "unknown workload 'mars'" in capsys.readouterr().err


def test_every_workload_gives_the_predictive_policies_their_p_hat():
    """The predictive cluster policies (themis, astraea-p, …) need p̂ on every workload, the shipped
    Philly trace included (it has none of its own)."""
    from benchmark.experiments.perf.fairness import philly_workload, venus_workload

    for jobs, *_ in (philly_workload(), venus_workload(300)):
        assert jobs.predicted is not None and len(jobs.predicted) == jobs.n
        assert (jobs.predicted >= 1).all() and not (jobs.predicted == jobs.size).all()


def test_a_policy_past_the_limit_is_stopped_and_recorded(tmp_path, capsys, monkeypatch):
    """--fairness-limit bounds the section: a policy still simulating at the limit is stopped, the
    next one still runs, and the figures say which were stopped."""
    import signal

    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")  # as Python AlloX takes about a second on these jobs
    out = tmp_path / "perf.json"
    before = signal.getsignal(signal.SIGALRM)
    argv = ["perf", "--fairness", "--fairness-workloads", "synthetic", "--fairness-jobs", "3000",
            "--fairness-policies", "allox,fifo", "--fairness-limit", "0.05", "--output", str(out)]
    assert main(argv) == 0
    synthetic = json.loads(out.read_text())["fairness"]["workloads"]["synthetic"]
    assert synthetic["policies"]["allox"] == {"seconds": None, "stopped_after_s": 0.05, "completed": None}
    assert synthetic["stopped"] == ["allox", "fifo"]  # 3,000 jobs take longer than 0.05 s, each
    err = capsys.readouterr().err
    assert "allox         > 0.05 s: stopped at --fairness-limit" in err and "fifo          > 0.05 s" in err
    assert "(at least: 2 stopped at the limit)" in err
    assert signal.getsignal(signal.SIGALRM) is before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    # without a limit every policy finishes
    assert main([*argv[:-4], "--fairness-limit", "0", "--output", str(out)]) == 0
    synthetic = json.loads(out.read_text())["fairness"]["workloads"]["synthetic"]
    assert synthetic["stopped"] == [] and synthetic["policies"]["allox"]["completed"] == 3000


def test_a_negative_limit_is_refused(one_error):
    assert "argument --fairness-limit: a time limit in seconds must be >= 0, got '-1'" in one_error(
        ["perf", "--fairness", "--fairness-limit", "-1"])
