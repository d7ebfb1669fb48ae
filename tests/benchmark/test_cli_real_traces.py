"""The real traces end to end: import, scheduling on an ElasticFlow cluster, the Philly scenario."""

import io
import json
import tarfile

import numpy as np
import pandas as pd
import pytest

from atlas_data.adapters import ELASTICFLOW_PATH, PHILLY_PATH
from atlas_data.jobs_table import read_jobs
from benchmark.cli import main

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def test_import_philly_and_elasticflow(tmp_path, capsys):
    out = tmp_path / "philly.parquet"
    assert main(["data", "import", "--format", "philly", str(PHILLY_PATH), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "kept 82247, dropped 0" in printed and "15 tenants" in printed
    raw = pd.read_csv(PHILLY_PATH, dtype={"cluster": str})
    jobs = read_jobs(out)
    assert jobs["tenant"].tolist() == raw["cluster"].tolist() and jobs["gpus"].tolist() == raw["num_gpus"].tolist()
    out = tmp_path / "ef.parquet"
    assert main(["data", "import", "--format", "elasticflow", str(ELASTICFLOW_PATH), "--out", str(out), "--quiet"]) == 0
    assert read_jobs(out)["tenant"].nunique() == 10


def test_import_bad_philly_is_one_line_and_writes_nothing(tmp_path, capsys, one_error):
    bad = tmp_path / "p.csv"
    bad.write_text("timestamp,duration,num_gpus,cluster\n2017-10-09 07:01:55,66,1,a\n2017-10-09 07:01:56,-3,x,a\n")
    out = tmp_path / "o.parquet"
    line = one_error(["data", "import", "--format", "philly", str(bad), "--out", str(out)])
    assert str(bad) in line and "row 2 (line 3)" in line and "num_gpus is not a number" in line
    assert not out.exists()


def _cluster10() -> pd.DataFrame:
    with tarfile.open(ELASTICFLOW_PATH, "r:gz") as tar:
        return pd.read_csv(io.BytesIO(tar.extractfile("cluster10.csv").read()))


@pytest.mark.parametrize("objective", ["total_completion", "max_stretch", "makespan"])
def test_scheduling_on_an_elasticflow_cluster_states_its_load(tmp_path, capsys, objective):
    out = tmp_path / objective
    argv = ["run", "--task", "scheduling", "--objective", objective, "--jobs", "elasticflow:cluster10",
            "--noise", "0,1", "--no-mlflow", "--output", str(out)]
    if objective == "makespan":
        argv += ["--machines", "5,10"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    raw = _cluster10()
    load = np.maximum(raw["duration"], 1).sum() / (raw["submission_time"].max() - raw["submission_time"].min())
    doc = json.loads((out / "results.json").read_text())
    assert doc["n_jobs"] == len(raw) and doc["dataset"]["trace"] == "elasticflow:cluster10"
    assert doc["load"]["load"] == pytest.approx(load)
    assert f"single-machine load Σp/span = {load:.3g}" in printed
    ratios = [r["ratio"] for r in doc["rows"]]
    assert min(ratios) >= 1 - 1e-4 and {"srpt", "lpt"} & {r["policy"] for r in doc["rows"]}


def test_unknown_shipped_cluster_is_exit_2(capsys, one_error):
    line = one_error(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", "elasticflow:cluster42",
                         "--no-mlflow"])
    assert "no cluster 'cluster42'" in line and "cluster01" in line


def test_fairness_philly_scenario_quota_table_and_claims(tmp_path, capsys):
    out = tmp_path / "philly"
    assert main(["run", "--task", "fairness", "--scenario", "philly", "--nodes", "64", "--policies",
                 "astraea,themis,yarn-cs,allox", "--no-mlflow", "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((out / "results.json").read_text())
    snap = doc["dataset"]["snapshot"]
    assert snap["start"] == "2017-10-09" and snap["end"] == "2017-10-23" and doc["n_jobs"] == snap["jobs"]
    quota = pd.read_csv(out / "quota.csv", dtype={"tenant": str})
    raw = pd.read_csv(PHILLY_PATH, dtype={"cluster": str})
    t = pd.to_datetime(raw["timestamp"])
    inside = raw[(t >= "2017-10-09") & (t < "2017-10-23")]
    requested = inside.groupby("cluster")["num_gpus"].sum()
    expect = (512 * requested / requested.sum()).to_dict()
    assert quota.set_index("tenant")["quota_gpus"].to_dict() == pytest.approx(expect)
    assert all(r["completed"] == doc["n_jobs"] for r in doc["rows"])
    assert len(doc["paper_claims"]) == 2 and "VC quotas" in printed
    assert printed.count("-> holds") + printed.count("-> does not hold") == 2


@pytest.mark.slow
def test_philly_scenario_all_policies_under_two_minutes(tmp_path):
    import time

    out = tmp_path / "philly"
    t0 = time.perf_counter()
    assert main(["run", "--task", "fairness", "--scenario", "philly", "--no-mlflow", "--quiet", "--output", str(out)]) == 0
    assert time.perf_counter() - t0 < 120.0
    doc = json.loads((out / "results.json").read_text())
    assert len(doc["rows"]) == 10 and {r["policy"] for r in doc["rows"]} >= {"astraea", "themis", "allox", "yarn-cs"}
    # peak demand below the 1,680 GPUs: nobody waits past its first tick, every policy coincides
    assert doc["offered_load"]["peak_demand_gpus"] < 1680
    assert all(r["sharing_loss_jobs"] == 0 and r["preemptions"] == 0 for r in doc["rows"])
