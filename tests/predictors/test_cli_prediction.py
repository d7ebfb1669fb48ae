"""`benchmark run --task prediction` end to end on a small dataset folder, and the cached
`predictors.api.predict_test` used by the scheduling task."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from predictors import api
from predictors.synthetic import make_frame, write_dataset

METHODS = "constant,single-stage,cqr-stack,lgbm-meta,oracle"


@pytest.fixture(scope="module")
def small_ds(tmp_path_factory):
    out = tmp_path_factory.mktemp("ds") / "ds"
    write_dataset(make_frame(1500, seed=11), out)
    return out


@pytest.fixture(scope="module")
def run_dir(small_ds, tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "out"
    code = main(["run", "--task", "prediction", "--data", str(small_ds), "--methods", METHODS,
                 "--output", str(out), "--no-mlflow", "--quiet"])
    assert code == 0
    return out


def test_results_json_has_one_row_per_method(run_dir, small_ds):
    doc = json.loads((run_dir / "results.json").read_text())
    assert doc["task"] == "prediction" and doc["objective"] is None
    test_rows = pd.read_parquet(small_ds / "atlas.parquet").query("split == 'test'")
    assert doc["n_jobs"] == len(test_rows)
    assert doc["dataset"]["fingerprint"] == json.loads((small_ds / "dataset.json").read_text())["fingerprint"]
    rows = {r["method"]: r for r in doc["rows"]}
    assert list(rows) == METHODS.split(",")
    for r in rows.values():
        for key in ("rmsle", "cov25", "cov50", "cov25_recurrent", "cov50_recurrent", "spearman", "under_log",
                    "interval_coverage", "interval_width", "fit_seconds", "predict_seconds"):
            assert key in r
    assert rows["oracle"]["rmsle"] == 0.0 and rows["oracle"]["cov25"] == 1.0 and rows["oracle"]["under_log"] < 1e-12
    # the under-prediction mass of the train median: the test sizes above it, by their log factor
    p = test_rows["p_star"].to_numpy(float)
    median = float(np.expm1(np.median(pd.read_parquet(small_ds / "atlas.parquet").query("split == 'train'")["y"])))
    assert rows["constant"]["under_log"] == pytest.approx(np.mean(np.maximum(0.0, np.log(p / median))))
    assert rows["lgbm-meta"]["rmsle"] < rows["single-stage"]["rmsle"] < rows["constant"]["rmsle"]
    assert rows["cqr-stack"]["interval_coverage"] is not None and rows["lgbm-meta"]["interval_coverage"] is None
    assert (run_dir / "results.csv").is_file()


def test_prediction_files_cover_exactly_the_test_split(run_dir, small_ds):
    test_ids = set(pd.read_parquet(small_ds / "atlas.parquet").query("split == 'test'")["job_id"])
    for name in METHODS.split(","):
        frame = pd.read_parquet(run_dir / "predictions" / f"{name}.parquet")
        assert set(frame["job_id"]) == test_ids and len(frame) == len(test_ids)
        assert np.all(frame["p_hat"] > 0)
        assert ({"lo", "hi"} <= set(frame.columns)) == (name == "cqr-stack")


def test_plots_are_written(run_dir):
    for png in ("pred_vs_true.png", "coverage_curve.png"):
        data = (run_dir / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_table_on_stdout_unless_quiet(small_ds, tmp_path, capsys):
    assert main(["run", "--task", "prediction", "--data", str(small_ds), "--methods", "constant,oracle",
                 "--output", str(tmp_path / "o"), "--no-mlflow"]) == 0
    out = capsys.readouterr().out
    assert "Cov@25 (%) All/Rec" in out and "oracle" in out and "100.0 / 100.0" in out


def test_unknown_method_exits_2_with_one_line(small_ds, tmp_path, capsys):
    code = main(["run", "--task", "prediction", "--data", str(small_ds), "--methods", "constant,bogus",
                 "--output", str(tmp_path / "o"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "'bogus'" in err and "lgbm-meta" in err
    assert not (tmp_path / "o").exists()


def test_missing_dataset_folder_exits_2(tmp_path, capsys):
    code = main(["run", "--task", "prediction", "--data", str(tmp_path / "nowhere"), "--methods", "constant", "--quiet"])
    assert code == 2 and "nowhere" in capsys.readouterr().err


def test_predict_test_api_caches_and_invalidates_on_new_fingerprint(tmp_path, monkeypatch):
    ds = tmp_path / "ds"
    write_dataset(make_frame(800, seed=5), ds)
    first = api.predict_test(ds, "single-stage", seed=0, n_estimators=20)
    assert list(first.columns) == ["job_id", "p_hat", "log_sd"]  # the spread travels with p̂ (scheduling reads it)
    assert api.cache_path(ds, "single-stage", 0).is_file()

    calls = []
    real = api.run_method
    monkeypatch.setattr(api, "run_method", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = api.predict_test(ds, "single-stage", seed=0, n_estimators=20)
    pd.testing.assert_frame_equal(first, again)
    assert calls == []  # served from the cache

    write_dataset(make_frame(800, seed=6), ds)  # rebuilt dataset: new fingerprint
    rebuilt = api.predict_test(ds, "single-stage", seed=0, n_estimators=20)
    assert calls == [1]
    assert not rebuilt["p_hat"].equals(first["p_hat"])


def test_method_names_for_the_scheduling_task():
    assert "lgbm-meta" in api.method_names() and "oracle" in api.method_names()


def test_perf_section_times_each_method(tmp_path):
    out = tmp_path / "perf.json"
    assert main(["perf", "--predictors", "--predictor-train-jobs", "1400", "--predictor-methods",
                 "constant,single-stage", "--output", str(out), "--quiet"]) == 0
    doc = json.loads(out.read_text())["predictors"]
    assert doc["counts"]["train"] == 1400
    assert [r["method"] for r in doc["rows"]] == ["constant", "single-stage"]
    assert all(r["fit_seconds"] >= 0 and r["predict_seconds"] >= 0 for r in doc["rows"])
    assert doc["rows"][1]["rmsle"] < doc["rows"][0]["rmsle"]


def test_the_prediction_task_leaves_its_fits_for_predict_test(run_dir, small_ds, monkeypatch):
    # predict_test must now read the task's fit from the cache instead of fitting again
    def no_refit(*args, **kwargs):
        raise AssertionError("refitted a method the prediction task had already fitted")

    monkeypatch.setattr(api, "run_method", no_refit)
    for method in ("lgbm-meta", "constant"):
        cached = api.predict_test(small_ds, method)
        written = pd.read_parquet(run_dir / "predictions" / f"{api.file_stem(method)}.parquet")
        pd.testing.assert_frame_equal(cached.reset_index(drop=True), written.reset_index(drop=True))


def test_a_second_prediction_run_reuses_the_cached_fits_and_says_so(run_dir, small_ds, tmp_path, monkeypatch, capsys):
    first = {r["method"]: r for r in json.loads((run_dir / "results.json").read_text())["rows"]}
    assert not any(r["fit_cached"] for r in first.values())  # the module's first run fitted everything

    def no_refit(*args, **kwargs):
        raise AssertionError("the prediction task refitted a method whose fit is cached")

    monkeypatch.setattr(api, "run_method", no_refit)
    out = tmp_path / "again"
    assert main(["run", "--task", "prediction", "--data", str(small_ds), "--methods", "lgbm-meta,constant",
                 "--output", str(out), "--no-mlflow"]) == 0
    err = capsys.readouterr().err
    reuse_lines = [line for line in err.splitlines() if line.startswith("reused the cached fit of")]
    assert len(reuse_lines) == 1 and "lgbm-meta, constant" in reuse_lines[0]
    again = {r["method"]: r for r in json.loads((out / "results.json").read_text())["rows"]}
    assert again["lgbm-meta"]["fit_cached"] is True and again["constant"]["fit_cached"] is True
    # the same p̂, so the same scores; the fit seconds reported are the original fit's
    assert again["lgbm-meta"]["rmsle"] == first["lgbm-meta"]["rmsle"]
    assert again["lgbm-meta"]["fit_seconds"] == pytest.approx(first["lgbm-meta"]["fit_seconds"])
    assert again["lgbm-meta"]["fit_seconds"] > 0


def test_a_new_seed_misses_the_cache_and_fits(small_ds, tmp_path, monkeypatch):
    calls = []
    real = api.run_method
    monkeypatch.setattr(api, "run_method", lambda split, name, config: calls.append((name, config.seed)) or real(split, name, config))
    assert main(["run", "--task", "prediction", "--data", str(small_ds), "--methods", "constant", "--seed", "3",
                 "--output", str(tmp_path / "o"), "--no-mlflow", "--quiet"]) == 0
    assert calls == [("constant", 3)]
    row = json.loads((tmp_path / "o" / "results.json").read_text())["rows"][0]
    assert row["fit_cached"] is False
