"""MLflow tracking of `benchmark run` and `benchmark compare` (temporary SQLite stores only)."""

import json

import pandas as pd
import pytest

from benchmark.cli import main
from benchmark.tracking import metrics_of, row_prefix


@pytest.fixture
def jobs_csv(tmp_path):
    path = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2], "duration": [3, 1, 2, 1]}).to_csv(path, index=False)
    return path


def test_metric_names():
    assert row_prefix({"policy": "spjf", "predictor": "noise:0.5"}) == "spjf/noise:0.5"
    assert row_prefix({"policy": "lpt", "predictor": None, "machines": 5}) == "lpt.m5"
    assert row_prefix({"method": "lgbm-meta"}) == "lgbm-meta"
    assert row_prefix({"method": "lgbm-meta", "predictor": "lgbm-meta"}) == "lgbm-meta"  # prediction rows
    doc = {"rows": [{"policy": "fifo", "predictor": None, "value": 20.0, "ratio": 4 / 3, "opt": None, "ok": True}]}
    assert metrics_of(doc) == {"fifo.value": 20.0, "fifo.ratio": 4 / 3}


def test_runs_are_logged_and_compared(tmp_path, jobs_csv, monkeypatch, capsys):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    results = tmp_path / "results"
    for name, noise in (("first", "0"), ("second", "1")):
        code = main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--noise", noise, "--output", str(results / name), "--quiet"])
        assert code == 0
    assert (results / "mlflow.db").exists()
    assert (results / "mlartifacts").is_dir() and not any(cwd.iterdir())  # no ./mlruns left behind
    capsys.readouterr()
    csv = tmp_path / "compare.csv"
    assert main(["compare", "--results", str(results), "--experiment", "atlas-scheduling-total_completion", "--csv", str(csv)]) == 0
    table = pd.read_csv(csv)
    assert table["name"].tolist() == ["first", "second"]
    assert table["fifo.ratio"].tolist() == pytest.approx([20 / 15, 20 / 15])
    assert table["srpt.ratio"].tolist() == [1.0, 1.0]
    assert "spjf/noise:0.ratio" in table.columns and "spjf/noise:1.ratio" in table.columns
    shown = capsys.readouterr().out
    assert "first" in shown and "second" in shown

    import mlflow

    mlflow.set_tracking_uri(f"sqlite:///{results / 'mlflow.db'}")
    run = mlflow.search_runs(experiment_names=["atlas-scheduling-total_completion"]).iloc[0]
    assert run["params.objective"] == "total_completion" and run["params.package_version"]
    artifacts = mlflow.MlflowClient().list_artifacts(run["run_id"])
    assert {"results.json", "per_job.parquet"} <= {a.path for a in artifacts}


def test_no_mlflow_writes_no_store(tmp_path, jobs_csv, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    out = tmp_path / "results" / "x"
    assert main(["run", "--task", "scheduling", "--objective", "max_stretch", "--jobs", str(jobs_csv),
                 "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    assert json.loads((out / "results.json").read_text())["rows"]
    assert not (tmp_path / "results" / "mlflow.db").exists()


def test_compare_unknown_experiment_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert main(["compare", "--results", str(tmp_path), "--experiment", "atlas-nothing"]) == 2
    assert "atlas-nothing" in capsys.readouterr().err


def test_each_results_folder_keeps_its_own_store(tmp_path, jobs_csv, monkeypatch):
    import os

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    for folder in ("one", "two"):
        assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs_csv),
                     "--policies", "fifo", "--output", str(tmp_path / folder / "run"), "--quiet"]) == 0
        assert (tmp_path / folder / "mlflow.db").exists()
        assert "MLFLOW_TRACKING_URI" not in os.environ  # mlflow must not pin later runs to this store
    assert not (tmp_path / "mlruns").exists()
