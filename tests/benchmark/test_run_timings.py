"""`benchmark run --task scheduling` records where its time goes (`timings` in results.json) and
prints it with --profile (docs/results-and-tracking.md)."""

import json

import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.timings import Timings, peak_rss_mib, render, reset_peak_rss

pytestmark = pytest.mark.usefixtures("figures_unrendered")  # no test here looks at a figure its commands draw (tests/conftest.py)


def _jobs(tmp_path):
    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": list("abcdef"), "submit_time": [0, 0, 1, 2, 2, 5],
                  "duration": [3, 1, 2, 1, 4, 2]}).to_csv(path, index=False)
    return path


def test_results_json_records_every_stage_and_each_policy(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ATLAS_BENCH_JIT", raising=False)
    out = tmp_path / "out"
    argv = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", _jobs(tmp_path),
            "--noise", "0,1", "--policies", "fifo,srpt,spjf", "--output", out, "--no-mlflow", "--profile"]
    assert main([str(a) for a in argv]) == 0
    timings = json.loads((out / "results.json").read_text())["timings"]
    stages = timings["stages_s"]
    for stage in ("read", "predictions", "normalisers (reference values)", "policies", "per-job table",
                  "write per_job.parquet", "plots"):
        assert stage in stages and stages[stage] >= 0
    assert list(timings["policies_s"]) == ["fifo", "srpt", "spjf/noise:0", "spjf/noise:1"]
    assert stages["policies"] == pytest.approx(sum(timings["policies_s"].values()), abs=1e-3)
    assert timings["total_s"] >= sum(stages.values()) - 1e-3
    assert timings["peak_rss_mib"] > 10 and set(timings["peak_rss_mib_after"]) == set(stages)
    assert timings["fast_loops"] == "Python (ATLAS_BENCH_JIT=auto, compiled from 100,000 jobs)"  # 6 jobs
    printed = capsys.readouterr().out
    assert "where the time went" in printed and "spjf/noise:1" in printed and "peak memory" in printed
    assert "single-machine loops: Python (ATLAS_BENCH_JIT=auto" in printed


def test_results_json_says_when_the_loops_ran_compiled(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    out = tmp_path / "out"
    argv = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", _jobs(tmp_path),
            "--policies", "srpt,rr", "--output", out, "--no-mlflow", "--quiet"]
    assert main([str(a) for a in argv]) == 0
    assert json.loads((out / "results.json").read_text())["timings"]["fast_loops"] == "compiled (numba; ATLAS_BENCH_JIT=on)"


def test_makespan_times_each_machine_count(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", "--task", "scheduling", "--objective", "makespan", "--jobs", _jobs(tmp_path), "--machines", "2,3",
            "--policies", "lpt", "--output", out, "--no-mlflow", "--quiet"]
    assert main([str(a) for a in argv]) == 0
    assert list(json.loads((out / "results.json").read_text())["timings"]["policies_s"]) == ["lpt/m=2", "lpt/m=3"]
    assert capsys.readouterr().out == ""  # no --profile, --quiet: nothing printed


def test_profile_is_an_option_of_the_scheduling_task_only(tmp_path, capsys):
    assert main(["run", "--task", "fairness", "--scenario", "venus", "--profile", "--no-mlflow"]) == 2
    assert "--profile is not an option of --task fairness" in capsys.readouterr().err


def test_timings_stages_add_up_and_render():
    t = Timings()
    t.add("read", 1.0)
    t.add("read", 0.5)
    with t.stage("plots"):
        pass
    t.policies["srpt"] = 2.0
    t.add("policies", 2.0)
    doc = t.as_dict()
    assert doc["stages_s"]["read"] == 1.5 and list(doc["stages_s"]) == ["read", "plots", "policies"]
    text = render({**doc, "total_s": 4.0}, {"tracking (log to MLflow)": 1.0})
    assert "read" in text and "      srpt" in text and "tracking (log to MLflow)" in text
    assert "total                                  5.000 s" in text


def test_peak_memory_can_be_measured_afresh():
    import mmap

    import numpy as np

    fresh = reset_peak_rss()  # in a long test process the peak so far may be far above the current size
    before = peak_rss_mib()
    # A mapping of its own, so the pages are new: a numpy buffer from malloc may reuse pages the long
    # test process already holds (this failed once in CI with the peak unchanged).
    block = mmap.mmap(-1, 80_000_000)
    np.frombuffer(block, dtype=np.uint8)[:] = 1  # 80 MB, touched
    high = peak_rss_mib()
    assert high >= before + (70 if fresh else 0)
    block.close()  # unmapped: returned to the system
    if fresh and reset_peak_rss():
        assert peak_rss_mib() < high - 60
