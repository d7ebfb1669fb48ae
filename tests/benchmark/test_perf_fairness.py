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
    from benchmark.perf_fairness import philly_workload, venus_workload

    for jobs, *_ in (philly_workload(), venus_workload(300)):
        assert jobs.predicted is not None and len(jobs.predicted) == jobs.n
        assert (jobs.predicted >= 1).all() and not (jobs.predicted == jobs.size).all()
