"""`benchmark run --task fairness` end to end: outputs, the venus scenario, bad input as exit 2."""

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from schedulers.cluster.metrics import JOB_COLUMNS, METRICS
from schedulers.policy import builtin_classes, get_policy

# the commands' figures are not rendered but where a test looks at them (figures_rendered; tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

ALL = [cls.name for cls in builtin_classes("cluster")]  # every built-in cluster policy, in the listing order


def _jobs_csv(tmp_path, n=40, predicted=True, name="jobs.csv"):
    rng = np.random.default_rng(1)
    size = rng.integers(30, 4000, n)
    frame = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "submit_time": np.sort(rng.integers(0, 3000, n)),
        "duration": size, "gpus": rng.choice([1, 2, 4, 8], n), "tenant": rng.choice(["t1", "t2", "t3"], n),
    })
    if predicted:
        frame["predicted_duration"] = size * 1.5
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def _run(*argv):
    return main(["run", "--task", "fairness", "--no-mlflow", "--quiet", *map(str, argv)])


@pytest.mark.figures_rendered  # looks at the PNGs
def test_all_policies_outputs(tmp_path):
    out = tmp_path / "out"
    assert _run("--jobs", _jobs_csv(tmp_path), "--nodes", "2", "--lease", "300", "--output", out) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["task"] == "fairness" and doc["n_jobs"] == 40 and doc["options"]["fair_share"] == "eq16"
    assert [r["policy"] for r in doc["rows"]] == ALL
    assert doc["cluster_loops"] == dict.fromkeys(ALL, "Python")  # 40 jobs: below the compiled loop's threshold
    for row in doc["rows"]:
        assert set(METRICS) <= set(row) and row["completed"] == 40
        assert row["predictor"] == ("column" if get_policy(row["policy"], "cluster").needs_prediction else None)
    for name in ALL:
        jobs = pd.read_parquet(out / "jobs" / f"{name}.parquet")
        assert list(jobs.columns[: len(JOB_COLUMNS)]) == list(JOB_COLUMNS) and len(jobs) == 40
        assert (jobs["gpu_seconds"] == jobs["gpus"] * jobs["run_time"]).all()
        assert (out / "tenant_intervals" / f"{name}.parquet").is_file()
    for png in ("rho_cdf.png", "tenant_rho.png", "jct_slowdown.png"):
        assert (out / png).stat().st_size > 1000


def test_options_and_tenant_weights(tmp_path, capsys):
    weights = tmp_path / "w.csv"
    weights.write_text("tenant,weight\nt1,2\nt2,1\nt3,1\n")
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", "--no-mlflow", "--jobs", str(_jobs_csv(tmp_path)), "--policies",
                 "astraea,yarn-cs", "--gpus-per-node", "4", "--nodes", "4", "--tenant-weights", str(weights),
                 "--fair-share", "eq8", "--cold-start", "0", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "astraea" in printed and "fair share eq8" in printed
    doc = json.loads((out / "results.json").read_text())
    assert doc["options"]["tenant_weights"] == {"t1": 2.0, "t2": 1.0, "t3": 1.0}
    assert doc["options"]["gpus"] == 16 and all(r["overhead_pct"] == 0 for r in doc["rows"])


def test_venus_scenario_prints_the_paper_table(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", "--no-mlflow", "--scenario", "venus", "--n", "600",
                 "--policies", "astraea,yarn-cs", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Venus: ours vs the paper" in printed and "73.6%" in printed and "7.1%" in printed
    doc = json.loads((out / "results.json").read_text())
    assert doc["paper"]["astraea"]["sharing_loss_jobs"] == 0.071
    assert doc["options"]["gpus"] == 800 and all(r["completed"] == 600 for r in doc["rows"])


def test_pod_trace_runs_on_its_own_small_cluster(tmp_path):
    out = tmp_path / "out"
    assert _run("--jobs", "openb", "--n", "300", "--policies", "astraea,fifo", "--output", out) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["dataset"]["trace"] == "openb" and doc["n_jobs"] == 300 and doc["options"]["gpus"] == 32
    assert set(doc["options"]["tenant_weights"]) <= {"LS", "BE", "Burstable", "Guaranteed"}


@pytest.mark.parametrize("argv, message", [
    (["--policies", "astraea,nope"], "unknown policy 'nope'"),
    (["--policies", "astraea-p"], "predict"),
    (["--lease", "0"], "argument --lease: a time span in seconds must be > 0, got '0'"),
    (["--nodes", "0"], "--nodes"),
    (["--scenario", "venus"], "only one of"),
])
def test_bad_input_exit_2(tmp_path, capsys, argv, message):
    jobs = _jobs_csv(tmp_path, predicted=False)
    code = _run("--jobs", jobs, "--output", tmp_path / "o", *argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_missing_tenant_weight_exit_2(tmp_path, capsys):
    weights = tmp_path / "w.json"
    weights.write_text(json.dumps({"t1": 1}))
    assert _run("--jobs", _jobs_csv(tmp_path), "--tenant-weights", weights, "--output", tmp_path / "o") == 2
    assert "tenant 't2' has no weight" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--jobs", "JOBS", "--feature-columns", "x"],
     "--feature-columns: --feature-columns only shapes learned p̂: give --predictor NAME too"),
    (["--scenario", "venus", "--tenant-column", "user"],
     "--tenant-column: --tenant-column does not apply to --scenario (a scenario defines its tenants)"),
])
def test_options_that_would_be_ignored_are_exit_2(tmp_path, capsys, argv, message):
    argv = [str(_jobs_csv(tmp_path)) if a == "JOBS" else a for a in argv]
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", *argv, "--output", str(out), "--no-mlflow", "--quiet"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"error: {message}"]
    assert not out.exists()


def test_a_first_compile_is_told_on_stderr(tmp_path, monkeypatch, capsys):
    """The run says on stderr that it is compiling the cluster loop when that takes a while (the
    first large run after installing); a slow compile is stood in for."""
    pytest.importorskip("numba")
    import time

    from schedulers.cluster import jitglue, jitshared, simulator

    real = jitshared._compiled
    slow = set()

    def slow_first_compile(function, signature):  # a kernel's setup slow the first time, then the real compile
        if function.py_func.__qualname__.rsplit(".", 1)[-1].startswith("setup") and id(function) not in slow:
            slow.add(id(function))
            time.sleep(0.5)
        return real(function, signature)

    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    monkeypatch.setattr(jitshared, "_compiled", slow_first_compile)
    monkeypatch.setattr(simulator, "COMPILE_NOTICE_AFTER_S", 0.1)
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", "--no-mlflow", "--jobs", str(_jobs_csv(tmp_path)), "--nodes", "2",
                 "--policies", "astraea,fifo", "--output", str(out)]) == 0
    err = capsys.readouterr().err
    assert jitglue.compile_notice("astraea") in err and jitglue.compile_notice("fifo") in err
    assert json.loads((out / "results.json").read_text())["cluster_loops"]["astraea"] == "compiled"


def test_results_say_which_policies_ran_compiled(tmp_path, monkeypatch):
    """With ATLAS_BENCH_JIT=on the built-in policies the compiled loop knows run on it, and
    results.json says so per policy; the rows are those of the Python run."""
    pytest.importorskip("numba")
    out_on, out_off = tmp_path / "on", tmp_path / "off"
    jobs = _jobs_csv(tmp_path)
    for setting, out in (("on", out_on), ("off", out_off)):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        assert _run("--jobs", jobs, "--nodes", "2", "--policies", "astraea,fifo", "--output", out) == 0
    on = json.loads((out_on / "results.json").read_text())
    off = json.loads((out_off / "results.json").read_text())
    assert on["cluster_loops"] == {"astraea": "compiled", "fifo": "compiled"}
    assert off["cluster_loops"] == {"astraea": "Python", "fifo": "Python"}
    for a, b in zip(on["rows"], off["rows"]):
        assert {k: v for k, v in a.items() if k != "sim_seconds"} == {k: v for k, v in b.items() if k != "sim_seconds"}


def test_the_offered_load_line_says_what_it_divides_and_the_peak_beside_it(tmp_path, capsys):
    # two 1-GPU jobs of 100 h submitted an hour apart on 8 × 8 GPUs: 720,000 GPU·s over a submit span
    # of 1 h on 64 GPUs is a load of 720,000 / 230,400 = 3.125, while at most 2 GPUs are ever asked for
    path = tmp_path / "long.csv"
    pd.DataFrame({"job_id": ["a", "b"], "submit_time": [0, 3600], "duration": [360_000, 360_000], "gpus": [1, 1],
                  "tenant": ["t1", "t2"]}).to_csv(path, index=False)
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", "--no-mlflow", "--jobs", str(path), "--nodes", "8", "--policies", "fifo",
                 "--output", str(out)]) == 0
    load = json.loads((out / "results.json").read_text())["offered_load"]
    assert load == {"gpu_seconds": 720_000.0, "span_s": 3600.0, "load": 3.125, "peak_demand_gpus": 2.0, "gpus": 64}
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("offered load")]
    assert lines == ["offered load 3.12 = Σ duration × GPUs / (submit span × cluster GPUs) = 720,000 GPU·s / "
                     "(1.00 h × 64 GPUs); peak demand if nobody waited: 2 of 64 GPUs (never more asked at once than "
                     "the cluster has)"]


def test_the_simulator_owns_the_cluster_a_policy_is_built_without_it(tmp_path, monkeypatch):
    """A fairness run builds each policy from its own settings only and gives the cluster (nodes, lease,
    tick, cold start, quotas, ledgers) to the simulator, the one cluster of the run for every policy (a
    policy given a cluster setting is refused: tests/schedulers/test_cluster.py)."""
    from schedulers.cluster import base, metrics

    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    given, clusters = [], []
    real_init, real_sim = base.ClusterPolicy.__init__, metrics.simulate_fairness

    def init(self, **settings):
        given.append((type(self).name, settings))
        real_init(self, **settings)

    def sim(jobs, policy, **kwargs):
        clusters.append(kwargs.get("cluster"))
        return real_sim(jobs, policy, **kwargs)

    monkeypatch.setattr(base.ClusterPolicy, "__init__", init)
    monkeypatch.setattr("benchmark.tasks.fairness.simulate_fairness", sim)
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", "--no-mlflow", "--quiet", "--jobs", str(_jobs_csv(tmp_path)),
                 "--nodes", "3", "--gpus-per-node", "4", "--lease", "600", "--cold-start", "30",
                 "--policies", "fifo,astraea-p(band=0.5)", "--output", str(out)]) == 0
    assert given == [("fifo", {}), ("astraea-p(band=0.5)", {})]
    assert len(clusters) == 2 and clusters[0] is clusters[1]
    assert (clusters[0].capacities, clusters[0].lease_s, clusters[0].cold_start_s) == ((4, 4, 4), 600.0, 30.0)
    doc = json.loads((out / "results.json").read_text())
    assert [row["policy"] for row in doc["rows"]] == ["fifo", "astraea-p(band=0.5)"]
