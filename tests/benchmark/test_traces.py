"""Jobs tables as prediction data: `--jobs TRACE|FILE` for prediction, learned p̂ for scheduling and
fairness on a trace's test part, `--feature-columns`, `--train-jobs`, and the one default data source."""

import io
import json
import tarfile

import numpy as np
import pandas as pd
import pytest

from atlas_data.adapters import ELASTICFLOW_PATH
from atlas_data.split import split_boundaries
from benchmark.cli import main

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _run(*argv):
    return main(["run", "--no-mlflow", *map(str, argv)])


def _test_ids(frame: pd.DataFrame, submit="submit_time", ids="job_id") -> set:
    """The test part by the documented rule: submit ≥ the 85 % submit-time threshold."""
    _, t_test = split_boundaries(frame[submit].to_numpy(float))
    return set(frame.loc[frame[submit] >= t_test, ids].astype(str))


def _cluster(name: str) -> pd.DataFrame:
    with tarfile.open(ELASTICFLOW_PATH, "r:gz") as tar:
        return pd.read_csv(io.BytesIO(tar.extractfile(f"{name}.csv").read()), dtype={"job_id": str})


def _user_csv(tmp_path, n=900, seed=0, **extra):
    """A user's trace: the duration is set by the application (a text column) and the memory asked."""
    rng = np.random.default_rng(seed)
    app = rng.choice(["train", "eval", "sweep"], size=n)
    mem = rng.choice([8.0, 64.0], size=n)
    duration = np.where(app == "train", 20_000.0, np.where(app == "eval", 300.0, 3_000.0)) * (mem / 8.0) ** 0.5
    frame = pd.DataFrame({"job_id": [f"u{i}" for i in range(n)], "submit_time": np.cumsum(rng.exponential(120.0, n)),
                          "duration": duration * np.exp(0.2 * rng.standard_normal(n)),
                          "gpus": rng.choice([1, 2, 4], size=n), "tenant": rng.choice(["a", "b", "c"], size=n),
                          "app": app, "mem_gb": mem, **extra})
    path = tmp_path / "user.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_prediction_on_a_shipped_trace_covers_its_test_part(tmp_path, capsys):
    out = tmp_path / "pred"
    assert _run("--task", "prediction", "--jobs", "elasticflow:cluster10", "--methods", "constant,single-stage,oracle",
                "--output", out) == 0
    printed = capsys.readouterr().out
    assert "prediction on elasticflow:cluster10" in printed and "categorical tenant, numeric gpus" in printed
    doc = json.loads((out / "results.json").read_text())
    raw = _cluster("cluster10")
    test_ids = _test_ids(raw, submit="submission_time")
    assert doc["n_jobs"] == len(test_ids) == doc["dataset"]["counts"]["test"]
    assert sum(doc["dataset"]["counts"].values()) == len(raw) == 260
    assert doc["dataset"]["feature_columns"] == {"categorical": ["tenant"], "numeric": ["gpus"]}
    assert {"hist_sig_mean_eb", "hour_sin", "log_gpus", "tenant_code"} <= set(doc["dataset"]["features"])
    rows = {r["method"]: r for r in doc["rows"]}
    assert rows["oracle"]["rmsle"] == 0 and rows["oracle"]["cov25"] == 1
    for name in rows:
        frame = pd.read_parquet(out / "predictions" / f"{name}.parquet")
        assert set(frame["job_id"]) == test_ids and len(frame) == len(test_ids)
    # the constant is the train median: every test job gets the same p̂
    assert pd.read_parquet(out / "predictions" / "constant.parquet")["p_hat"].nunique() == 1


def test_user_feature_columns_are_learned_from(tmp_path):
    path, frame = _user_csv(tmp_path)
    rmsle = {}
    for label, extra in (("with", ["--feature-columns", "app,mem_gb"]), ("without", [])):
        out = tmp_path / label
        assert _run("--task", "prediction", "--jobs", path, *extra, "--methods", "constant,single-stage",
                    "--output", out, "--quiet") == 0
        doc = json.loads((out / "results.json").read_text())
        rmsle[label] = {r["method"]: r["rmsle"] for r in doc["rows"]}
        if label == "with":
            assert doc["dataset"]["feature_columns"] == {"categorical": ["tenant", "app"], "numeric": ["gpus", "mem_gb"]}
            assert {"app_code", "log_mem_gb", "hist_app_ewma"} <= set(doc["dataset"]["features"])
            assert doc["n_jobs"] == len(_test_ids(frame))
    # the application decides the duration: with it the learner is far better than without it
    assert rmsle["with"]["single-stage"] < 0.5 * rmsle["without"]["single-stage"]
    assert rmsle["with"]["single-stage"] < 0.3 * rmsle["with"]["constant"]


@pytest.mark.parametrize("column, extra, message", [
    ("owner", {}, "column 'owner': --feature-columns names a column the file does not have"),
    ("notes", {"notes": np.nan}, "column 'notes': --feature-columns: the column is empty in every row"),
    ("queue", {"queue": "q1"}, "column 'queue': --feature-columns: the column has one value in every row ('q1')"),
    ("end_time", {"end_time": 0.0}, "column 'end_time': --feature-columns: 'end_time' is a post-execution column"),
])
def test_bad_feature_columns_exit_2_with_one_line(tmp_path, capsys, column, extra, message, one_error):
    path, _ = _user_csv(tmp_path, n=60, **extra)
    line = one_error(["run", "--no-mlflow", "--task", "prediction", "--jobs", path, "--feature-columns", column,
                      "--output", tmp_path / "o"])
    assert line.startswith(f"error: {path}: {message}")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("argv, message", [
    (["--task", "prediction", "--jobs", "elasticflow:cluster10", "--feature-columns", "x"], "declares its own feature columns"),
    (["--task", "prediction", "--train-jobs", "elasticflow"], "--train-jobs applies to --jobs"),
    (["--task", "scheduling", "--objective", "total_completion", "--jobs", "elasticflow:cluster10",
      "--train-jobs", "elasticflow"], "--train-jobs only shapes learned p̂: give --predictor NAME too"),
    (["--task", "fairness", "--scenario", "venus", "--predictor", "lgbm-meta"], "--predictor needs --data or --jobs"),
])
def test_trace_options_that_would_be_ignored_exit_2(tmp_path, capsys, argv, message, one_error):
    assert message in one_error(["run", "--no-mlflow", *argv, "--output", tmp_path / "o"])


def test_scheduling_with_learned_p_hat_schedules_the_test_part(tmp_path, capsys):
    pred, out = tmp_path / "pred", tmp_path / "sched"
    assert _run("--task", "prediction", "--jobs", "elasticflow:cluster05", "--methods", "lgbm-meta", "--output", pred,
                "--quiet") == 0
    assert _run("--task", "scheduling", "--objective", "total_completion", "--jobs", "elasticflow:cluster05",
                "--predictor", "lgbm-meta", "--noise", "0.5", "--policies", "srpt,fifo,spjf", "--output", out) == 0
    printed = capsys.readouterr().out
    assert "noise (uses true sizes)" in printed and "learned (fit on train/validation)" in printed
    assert "data: shipped trace elasticflow:cluster05, test part (its real arrivals)" in printed
    doc = json.loads((out / "results.json").read_text())
    test_ids = _test_ids(_cluster("cluster05"), submit="submission_time")
    assert doc["n_jobs"] == len(test_ids) == 545
    rows = {(r["policy"], r["predictor"]): r for r in doc["rows"]}
    assert rows[("spjf", "lgbm-meta")]["p_hat_source"] == "learned (fit on train/validation)"
    assert rows[("spjf", "noise:0.5")]["p_hat_source"] == "noise (uses true sizes)"
    assert rows[("fifo", None)]["p_hat_source"] is None
    assert doc["p_hat_sources"] == {"noise:0.5": "noise (uses true sizes)", "lgbm-meta": "learned (fit on train/validation)"}
    per_job = pd.read_parquet(out / "per_job.parquet")
    learned = per_job[(per_job["policy"] == "spjf") & (per_job["predictor"] == "lgbm-meta")].set_index("job_id")
    assert set(learned.index) == test_ids
    # the p̂ scheduled is the p̂ the prediction task scores (floored at 1 s by the engine)
    scored = pd.read_parquet(pred / "predictions" / "lgbm-meta.parquet").set_index("job_id")["p_hat"]
    assert np.allclose(learned["predicted_duration"], np.maximum(scored.reindex(learned.index), 1.0))


def test_train_jobs_fits_on_the_other_clusters(tmp_path):
    own, moved = tmp_path / "own", tmp_path / "moved"
    assert _run("--task", "prediction", "--jobs", "elasticflow:cluster10", "--methods", "constant", "--output", own,
                "--quiet") == 0
    assert _run("--task", "prediction", "--jobs", "elasticflow:cluster10", "--train-jobs", "elasticflow",
                "--methods", "constant", "--output", moved, "--quiet") == 0
    a, b = (json.loads((d / "results.json").read_text()) for d in (own, moved))
    transfer = b["dataset"]["transfer"]
    assert transfer["dropped_target_jobs"] == 260 and transfer["train_jobs"] == "elasticflow"
    assert b["dataset"]["counts"]["train"] + b["dataset"]["counts"]["val"] == transfer["source_jobs_used"]
    assert transfer["source_jobs_used"] == 69_351 - 260 - transfer["dropped_after_target_test_start"]
    assert a["n_jobs"] == b["n_jobs"] and a["dataset"]["counts"]["test"] == b["dataset"]["counts"]["test"]
    p_own, p_moved = (pd.read_parquet(d / "predictions" / "constant.parquet")["p_hat"].iloc[0] for d in (own, moved))
    assert p_own != p_moved  # medians of different training jobs


def test_fairness_with_learned_p_hat_on_a_user_file(tmp_path):
    path, frame = _user_csv(tmp_path, n=400)
    out = tmp_path / "fair"
    assert _run("--task", "fairness", "--jobs", path, "--feature-columns", "app", "--predictor", "single-stage",
                "--policies", "astraea,astraea-p", "--nodes", "2", "--output", out, "--quiet") == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["n_jobs"] == len(_test_ids(frame))
    rows = {r["policy"]: r for r in doc["rows"]}
    assert rows["astraea-p"]["predictor"] == "single-stage"
    assert rows["astraea-p"]["p_hat_source"] == "learned (fit on train/validation)" and rows["astraea"]["p_hat_source"] is None
    jobs = pd.read_parquet(out / "jobs" / "astraea-p.parquet")
    assert set(jobs["job_id"].astype(str)) == _test_ids(frame)


def test_without_jobs_or_data_every_task_uses_the_default_dataset(small_default, tmp_path, capsys):
    out = tmp_path / "ms"
    assert _run("--task", "scheduling", "--objective", "max_stretch", "--output", out) == 0
    printed = capsys.readouterr().out
    assert "data: the ATLAS default dataset" in printed
    doc = json.loads((out / "results.json").read_text())
    assert doc["dataset"]["name"] == "default" and doc["options"]["predictor"] == "lgbm-meta"
    rows = {(r["policy"], r["predictor"]) for r in doc["rows"]}
    assert {("spjf", "lgbm-meta"), ("sprpt", "lgbm-meta"), ("pspjf", "lgbm-meta"), ("prr", "lgbm-meta"),
            ("edf-p", "lgbm-meta"), ("las", None), ("edf", None)} <= rows
    assert (small_default / "predictions" / "lgbm-meta-seed0.parquet").is_file()  # the cached p̂
    paper = tmp_path / "paper"
    assert _run("--task", "scheduling", "--objective", "max_stretch", "--protocol", "paper", "--output", paper,
                "--quiet") == 0
    rows = {(r["policy"], r["predictor"]) for r in json.loads((paper / "results.json").read_text())["rows"]}
    assert ("sprpt", "lgbm-meta") in rows and ("edf-p-ref", "lgbm-meta") in rows
    fair = tmp_path / "fair"
    assert _run("--task", "fairness", "--n", "200", "--policies", "astraea,astraea-p", "--output", fair, "--quiet") == 0
    doc = json.loads((fair / "results.json").read_text())
    assert doc["dataset"]["name"] == "default" and doc["dataset"]["tenant_column"] == "user"
    assert {r["policy"]: r["predictor"] for r in doc["rows"]} == {"astraea": None, "astraea-p": "lgbm-meta"}


def test_a_trace_fit_is_made_once_per_process(tmp_path, monkeypatch):
    import predictors.methods

    path, frame = _user_csv(tmp_path, n=300, seed=4)
    calls = []
    real = predictors.methods.run_method
    monkeypatch.setattr(predictors.methods, "run_method", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    for objective in ("total_completion", "max_stretch"):
        assert _run("--task", "scheduling", "--objective", objective, "--jobs", path, "--feature-columns", "app",
                    "--predictor", "single-stage", "--policies", "srpt,spjf", "--output", tmp_path / objective,
                    "--quiet") == 0
        doc = json.loads((tmp_path / objective / "results.json").read_text())
        assert doc["n_jobs"] == len(_test_ids(frame)) and doc["dataset"]["feature_columns"]["categorical"] == ["tenant", "app"]
    assert calls == ["single-stage"]  # the second objective reused the first fit


def test_train_columns_maps_the_train_file_as_columns_maps_the_target(tmp_path, one_error):
    target, _ = _user_csv(tmp_path, n=400, seed=0)
    (tmp_path / "train").mkdir()
    source, frame = _user_csv(tmp_path / "train", n=600, seed=1)
    renamed = tmp_path / "train" / "theirs.csv"
    frame.rename(columns={"job_id": "id", "submit_time": "submit", "duration": "runtime", "gpus": "ngpu",
                          "tenant": "team"}).to_csv(renamed, index=False)
    mapping = "job_id=id,submit_time=submit,duration=runtime,gpus=ngpu,tenant=team"
    plain, mapped = tmp_path / "plain", tmp_path / "mapped"
    common = ("--task", "prediction", "--jobs", target, "--methods", "constant,single-stage", "--quiet")
    assert _run(*common, "--train-jobs", source, "--output", plain) == 0
    assert _run(*common, "--train-jobs", renamed, "--train-columns", mapping, "--output", mapped) == 0
    for method in ("constant", "single-stage"):  # the same training jobs, hence the same p̂
        a, b = (pd.read_parquet(d / "predictions" / f"{method}.parquet") for d in (plain, mapped))
        assert a["job_id"].tolist() == b["job_id"].tolist() and np.array_equal(a["p_hat"], b["p_hat"])
    counts = json.loads((mapped / "results.json").read_text())["dataset"]["counts"]
    assert counts["train"] + counts["val"] > 0 and counts["test"] == len(_test_ids(pd.read_csv(target)))
    # the train file unmapped: one line naming it and the option to give
    line = one_error(["run", "--no-mlflow", *map(str, common), "--train-jobs", renamed, "--output", tmp_path / "o"])
    assert str(renamed) in line and "--train-columns job_id=id" in line
    line = one_error(["run", "--no-mlflow", *map(str, common), "--train-jobs", renamed, "--train-columns", "gpus=nope",
                      "--output", tmp_path / "o"])
    assert "--train-columns maps gpus to 'nope', which the file does not have" in line
    assert "--train-columns maps the columns of a --train-jobs FILE" in one_error(
        ["run", "--no-mlflow", *map(str, common), "--train-columns", mapping, "--output", tmp_path / "o"])
    assert "--train-columns applies to a jobs-table file" in one_error(
        ["run", "--no-mlflow", *map(str, common), "--train-jobs", "elasticflow", "--train-columns", mapping,
         "--output", tmp_path / "o"])
    assert not (tmp_path / "o").exists()


def test_train_jobs_holding_the_targets_jobs_is_one_trace(tmp_path, one_error):
    """Two files of one trace (the v2023 openb pod lists differ only in gpu_spec; a CSV and the parquet
    imported from it) share a clock and job ids: the fit leaves out the target's jobs and its test period."""
    target, frame = _user_csv(tmp_path, n=400, seed=0)
    _, t_test = split_boundaries(frame["submit_time"].to_numpy(float))
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "jobs.parquet"
    frame.to_parquet(copy, index=False)
    line = one_error(["run", "--no-mlflow", "--task", "prediction", "--jobs", str(target), "--train-jobs", str(copy),
                      "--methods", "constant", "--output", str(tmp_path / "o")])
    assert "the training jobs keep 0 jobs" in line and not (tmp_path / "o").exists()
    # the same jobs and 300 others: only the others finished before the target's test part are learned from
    other, _ = _user_csv(tmp_path / "copy", n=300, seed=1)
    other = pd.read_csv(other).assign(job_id=lambda d: "v" + d["job_id"])
    pd.concat([frame, other], ignore_index=True).to_parquet(copy, index=False)
    assert _run("--task", "prediction", "--jobs", target, "--train-jobs", copy, "--methods", "constant",
                "--output", tmp_path / "out", "--quiet") == 0
    transfer = json.loads((tmp_path / "out" / "results.json").read_text())["dataset"]["transfer"]
    finished = int(((other["submit_time"] + other["duration"]) <= t_test).sum())
    assert transfer["dropped_target_jobs"] == 400 and transfer["source_jobs_used"] == finished < 300


def test_a_method_refusing_a_small_table_names_the_file(tmp_path, one_error):
    path = tmp_path / "few.csv"
    pd.DataFrame({"job_id": range(5), "submit_time": np.arange(5) * 60.0, "duration": 100.0 + np.arange(5),
                  "gpus": 1, "tenant": "a"}).to_csv(path, index=False)
    for task in (["--task", "prediction", "--methods", "lgbm-meta"],
                 ["--task", "scheduling", "--objective", "total_completion", "--predictor", "lgbm-meta"]):
        line = one_error(["run", "--no-mlflow", *task, "--jobs", str(path), "--quiet",
                          "--output", str(tmp_path / "o")])
        assert line.startswith(f"error: {path}: the Stage-2 meta-model (lgbm-meta) needs at least 4 validation jobs")
    assert not (tmp_path / "o").exists()


def test_transfer_splits_describe_the_jobs_counted(tmp_path):
    """With --train-jobs, results.json's train and validation ranges are those of the training file's
    jobs (which `counts` counts), not of the target's unused train part."""
    target, frame = _user_csv(tmp_path, n=400, seed=0)
    (tmp_path / "train").mkdir()
    source, other = _user_csv(tmp_path / "train", n=600, seed=1)
    other["submit_time"] += 1e6
    other.to_csv(source, index=False)
    assert _run("--task", "prediction", "--jobs", target, "--train-jobs", source, "--methods", "constant",
                "--output", tmp_path / "out", "--quiet") == 0
    dataset = json.loads((tmp_path / "out" / "results.json").read_text())["dataset"]
    splits, counts = dataset["splits"], dataset["counts"]
    assert counts["train"] + counts["val"] == 600 and counts["test"] == len(_test_ids(frame))
    assert splits["train"][0] == other["submit_time"].min() and splits["val"][1] == other["submit_time"].max()
    assert splits["test"][1] == frame["submit_time"].max()


def test_feature_columns_with_a_shipped_train_trace_blame_the_train_trace(tmp_path, one_error):
    # the error said the shipped trace was given --feature-columns, which named the --jobs file's columns
    target, _ = _user_csv(tmp_path, n=100, seed=0)
    line = one_error(["run", "--no-mlflow", "--task", "prediction", "--jobs", str(target), "--feature-columns", "app",
                      "--train-jobs", "elasticflow:cluster10", "--methods", "constant", "--output", str(tmp_path / "o")])
    assert line.startswith("error: --feature-columns: names columns of the --jobs file, which --train-jobs "
                           "elasticflow:cluster10 (a shipped trace")
    assert not (tmp_path / "o").exists()


def test_prediction_with_n_records_the_tables_size_before_sampling(tmp_path):
    """`--n` takes a window of the table: results.json says how many jobs the table had (n_total)
    and that a window was taken, as the scheduling task does, and the counts add up to --n."""
    path, frame = _user_csv(tmp_path, n=900)
    for n, sample in ((300, "window"), (None, "all")):
        out = tmp_path / f"n{n}"
        extra = ["--n", n] if n else []
        assert _run("--task", "prediction", "--jobs", path, *extra, "--methods", "constant", "--output", out,
                    "--quiet") == 0
        dataset = json.loads((out / "results.json").read_text())["dataset"]
        assert dataset["n_total"] == 900 and dataset["sample"] == sample
        assert sum(dataset["counts"].values()) == (n or 900)


@pytest.mark.parametrize("task", ["scheduling", "fairness"])
def test_a_jobs_files_own_p_hat_replaced_by_predictor_is_said_in_one_line(tmp_path, capsys, task):
    path, _ = _user_csv(tmp_path, n=400, predicted_duration=np.full(400, 7.0))
    argv = (["--task", "scheduling", "--objective", "total_completion", "--policies", "spjf"] if task == "scheduling"
            else ["--task", "fairness", "--policies", "astraea-p", "--nodes", "2"])
    assert _run(*argv, "--jobs", path, "--feature-columns", "app", "--predictor", "constant",
                "--output", tmp_path / task) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if "predicted_duration" in line]
    assert notes == ["the jobs table's own predicted_duration is not used: p̂ comes from --predictor constant"]
    # without the column, nothing is said
    (tmp_path / "plain").mkdir()
    plain, _ = _user_csv(tmp_path / "plain", n=400)
    assert _run(*argv, "--jobs", plain, "--feature-columns", "app", "--predictor", "constant",
                "--output", tmp_path / f"{task}-plain") == 0
    assert "predicted_duration" not in capsys.readouterr().err
