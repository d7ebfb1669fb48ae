"""Hostile inputs and destructive outputs, through `benchmark.cli.main` in-process.

Every case is exit status 2 with exactly one line on stderr, and the user's files stay as they
were; the outputs that do get written are complete (results.json `complete: true` with the
command line), an interrupted run leaves nothing, and a rerun replaces its own earlier output
whole (docs/results-and-tracking.md#safe-outputs, docs/data-formats.md#types-and-ranges).
"""

import hashlib
import json
import os
import re
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

from benchmark.cli import main
from cli_checks import exit_2_one_line, snapshot

# the commands' figures are placeholders but where a test looks at them (figures_rendered; tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

BASE = {"job_id": ["a", "b", "c", "d"], "submit_time": [0.0, 0.0, 1.0, 2.0], "duration": [3.0, 1.0, 2.0, 1.0]}


def _table(tmp_path, name="jobs.csv", **columns):
    frame = pd.DataFrame({**BASE, **columns})
    path = tmp_path / name
    if name.endswith(".csv"):
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return path


def _scheduling(jobs, out, *extra):
    return ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", jobs, "--no-mlflow",
            "--quiet", "--output", out, *extra]


@pytest.fixture
def user_files(tmp_path):
    """A folder of the user's work (a thesis and a sub-folder of data) and a plain file."""
    thesis = tmp_path / "thesis"
    (thesis / "sub").mkdir(parents=True)
    (thesis / "thesis.tex").write_text("\\documentclass{book}\n")
    (thesis / "sub" / "data.csv").write_text("x,y\n1,2\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")
    return thesis, notes


# ----- data loss -------------------------------------------------------------------------------------
def test_data_build_never_replaces_what_it_did_not_write(tmp_path, user_files, monkeypatch, capsys):
    thesis, notes = user_files
    work = tmp_path / "work"
    work.mkdir()
    (work / "draft.md").write_text("draft\n")
    before = snapshot(tmp_path)
    monkeypatch.chdir(work)
    build = ["data", "build", "--jobs", "300", "--quiet", "--out"]
    exit_2_one_line(capsys, build + [thesis], "holds files not written by `benchmark data build`", "thesis.tex")
    exit_2_one_line(capsys, build + ["../work"], "is the working folder or one of its parents")
    exit_2_one_line(capsys, build + ["."], "is the working folder or one of its parents")
    exit_2_one_line(capsys, build + [tmp_path], "is the working folder or one of its parents")
    exit_2_one_line(capsys, build + [notes], "is a file, not a folder")
    assert snapshot(tmp_path) == before  # no .notes.txt.old-PID, nothing moved, nothing added


def test_data_build_reruns_into_its_own_folder_and_other_commands_refuse_it(tmp_path, capsys):
    ds = tmp_path / "ds"
    assert main(["data", "build", "--jobs", "300", "--seed", "1", "--quiet", "--out", str(ds)]) == 0
    card = json.loads((ds / "dataset.json").read_text())
    marker = json.loads((ds / ".atlas-bench-output").read_text())
    assert marker["command"] == "data build" and marker["complete"] is True
    assert marker["argv"] == ["benchmark", "data", "build", "--jobs", "300", "--seed", "1", "--quiet", "--out", str(ds)]
    (ds / "stale.txt").write_text("from an earlier build")  # a file the earlier build wrote (its marker lists it)
    (ds / ".atlas-bench-output").write_text(json.dumps({**marker, "files": marker["files"] + ["stale.txt"]}))
    assert main(["data", "build", "--jobs", "300", "--seed", "2", "--quiet", "--out", str(ds)]) == 0
    assert not (ds / "stale.txt").exists()
    assert json.loads((ds / "dataset.json").read_text())["fingerprint"] != card["fingerprint"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ds.")]
    before = snapshot(ds)
    exit_2_one_line(capsys, _scheduling(_table(tmp_path), ds), "was written by `benchmark data build`, not by `benchmark run`")
    exit_2_one_line(capsys, ["data", "synth", "--jobs", "50", "--quiet", "--out", ds], "`benchmark data build`")
    assert snapshot(ds) == before


def test_every_writing_command_refuses_a_user_folder(tmp_path, user_files, capsys):
    thesis, notes = user_files
    before = snapshot(tmp_path)
    jobs = _table(tmp_path, "in.csv")
    config = tmp_path / "sweep.yaml"
    config.write_text(yaml.safe_dump({"task": "scheduling", "jobs": "in.csv", "objectives": ["total_completion"],
                                      "policies": ["fifo"]}))
    png = thesis / "figure.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nnot ours")
    parquet = thesis / "jobs.parquet"
    pd.DataFrame(BASE).to_parquet(parquet)
    before = snapshot(tmp_path)
    for argv, fragment in [
        (_scheduling(jobs, thesis), "holds files not written by `benchmark run`"),
        (_scheduling(jobs, notes), "is a file, not a folder"),
        (["run", "--task", "fairness", "--jobs", jobs, "--no-mlflow", "--output", thesis], "`benchmark run`"),
        (["run", "--task", "prediction", "--no-mlflow", "--output", thesis], "`benchmark run`"),
        (["data", "synth", "--jobs", "50", "--out", thesis], "`benchmark data synth`"),
        (["data", "import", "--format", "jobs", jobs, "--out", parquet], "exists and was not written by `benchmark data import`"),
        (["data", "describe", tmp_path / "no-dataset", "--output", png], "not written by `benchmark data describe`"),
        (["sweep", config, "--no-mlflow", "--output", thesis], "`benchmark sweep`"),
        (["reproduce", "atlas", "--jobs", jobs, "--noise", "0.5", "--output", thesis], "`benchmark reproduce`"),
        (["demo", "--no-mlflow", "--output", thesis], "`benchmark demo`"),
        (["submit", "--template", thesis], "`benchmark submit --template`"),
        (["leaderboard", "--output", notes], "exists and was not written by `benchmark leaderboard`"),
        (["compare", "--results", tmp_path / "none", "--csv", notes], "exists and was not written by `benchmark compare`"),
    ]:
        exit_2_one_line(capsys, argv, fragment)
    assert snapshot(tmp_path) == before


def test_run_output_onto_a_file_fails_before_any_computation(tmp_path, monkeypatch, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("keep me\n")

    def never(*args, **kwargs):
        raise AssertionError("computation started before the output was checked")

    monkeypatch.setattr("benchmark.tasks.scheduling.load_jobs", never)
    monkeypatch.setattr("benchmark.tasks.fairness.simulate_fairness", never)
    exit_2_one_line(capsys, _scheduling(_table(tmp_path), notes), "--output", "is a file")
    exit_2_one_line(capsys, ["run", "--task", "fairness", "--jobs", _table(tmp_path), "--no-mlflow", "--output", notes],
                     "is a file")
    assert notes.read_text() == "keep me\n"


# ----- complete or absent ----------------------------------------------------------------------------------
def test_results_are_marked_complete_with_the_command_line(tmp_path):
    jobs = _table(tmp_path)
    out = tmp_path / "out"
    argv = _scheduling(jobs, out, "--policies", "fifo,srpt")
    assert main([str(a) for a in argv]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["complete"] is True and doc["argv"] == ["benchmark", *map(str, argv)]
    assert {r["policy"]: r["value"] for r in doc["rows"]} == {"fifo": 20.0, "srpt": 15.0}  # hand schedules


def test_an_interrupted_run_leaves_the_earlier_output_whole_and_nothing_else(tmp_path, monkeypatch, capsys):
    jobs = _table(tmp_path)
    out = tmp_path / "out"
    assert main([str(a) for a in _scheduling(jobs, out, "--policies", "fifo")]) == 0
    before = snapshot(out)

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("benchmark.plots.ratio_bars", interrupt)  # after results.json is written
    assert main([str(a) for a in _scheduling(jobs, out, "--policies", "srpt")]) == 130
    assert snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv", "out"]
    fresh = tmp_path / "fresh"
    assert main([str(a) for a in _scheduling(jobs, fresh, "--policies", "srpt")]) == 130
    assert not fresh.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv", "out"]


def test_a_rerun_replaces_its_output_whole_and_logs_only_the_new_files(tmp_path, monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    jobs = _table(tmp_path)
    out = tmp_path / "results" / "run"
    first = ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs), "--quiet",
             "--output", str(out)]
    assert main(first + ["--noise", "0,1"]) == 0
    assert (out / "robustness.png").exists()  # two noise levels draw the robustness curve
    assert main(first + ["--policies", "fifo,srpt"]) == 0
    assert not (out / "robustness.png").exists() and not (out / "robustness.svg").exists()
    assert sorted(p.name for p in out.iterdir()) == [".atlas-bench-output", "per_job.parquet", "ratios.png", "ratios.svg",
                                                     "results.csv", "results.json", "stretch_cdf.png", "stretch_cdf.svg"]
    from benchmark.tracking import import_mlflow, tracking_uri_for

    client = import_mlflow().MlflowClient(tracking_uri=tracking_uri_for(out.parent))
    experiment = client.get_experiment_by_name("atlas-scheduling-total_completion")
    runs = client.search_runs([experiment.experiment_id], "tags.`atlas.level` = 'run'",
                              order_by=["attributes.start_time ASC"])
    assert len(runs) == 2
    logged = [{a.path for a in client.list_artifacts(r.info.run_id)} for r in runs]
    assert "robustness.png" in logged[0] and "robustness.png" not in logged[1]
    assert {"results.json", "ratios.png"} <= logged[1]


# ----- types and ranges at the door --------------------------------------------------------------------------
def test_date_times_and_time_spans_are_seconds_never_nanoseconds(tmp_path):
    days = pd.to_datetime(["2020-01-01", "2020-01-01", "2020-01-02", "2020-01-03"])
    spans = pd.to_timedelta([3, 1, 2, 1], unit="s")
    jobs = _table(tmp_path, "dt.parquet", submit_time=days, duration=spans)
    out = tmp_path / "out"
    assert main([str(a) for a in _scheduling(jobs, out, "--policies", "fifo,srpt")]) == 0
    per_job = pd.read_parquet(out / "per_job.parquet").query("policy == 'srpt'").set_index("job_id")
    assert per_job["submit_time"].to_dict() == {"a": 0.0, "b": 0.0, "c": 86400.0, "d": 172800.0}
    assert per_job["duration"].to_dict() == {"a": 3.0, "b": 1.0, "c": 2.0, "d": 1.0}
    # SRPT: b 0→1, a 1→4; c and d alone on their days
    assert json.loads((out / "results.json").read_text())["rows"][1]["value"] == 1 + 4 + 86402 + 172801


@pytest.mark.parametrize("name, columns, fragments", [
    ("id.parquet", {"job_id": [1e19, 1.0, 2.0, 3.0]}, ("row 1", "job_id 1e+19", "not exactly a whole number below 2^53")),
    ("id2.parquet", {"job_id": [1.5, 1.0, 2.0, 3.0]}, ("row 1", "job_id 1.5",)),
    ("dtdur.parquet", {"duration": pd.to_datetime(["2020-01-01"] * 4)}, ("column 'duration'", "holds date-times")),
    ("tdgpu.parquet", {"gpus": pd.to_timedelta([1, 1, 1, 1], unit="s")}, ("column 'gpus'", "holds time spans")),
    ("huge.csv", {"duration": [1e308, 1, 1, 1]}, ("row 1 (line 2)", "duration must be at most 1e+12 s")),
    ("late.csv", {"submit_time": [0, 0, 1, 2e12]}, ("row 4 (line 5)", "submit_time must be within ±1e+12 s")),
    ("phat.csv", {"predicted_duration": [1, 1, 1e13, 1]}, ("row 3 (line 4)", "predicted_duration must be at most")),
    ("gpus.csv", {"gpus": [1e20, 1, 1, 1]}, ("row 1 (line 2)", "gpus must be at most 1e+06")),
    ("zero.csv", {"duration": [0, 1, 1, 1]}, ("row 1 (line 2)", "duration must be > 0")),
    ("nan.csv", {"duration": [np.nan, 1, 1, 1]}, ("row 1 (line 2)", "duration is missing/NaN")),
])
@pytest.mark.parametrize("task", ["scheduling", "fairness"])
def test_bad_types_and_ranges_are_exit_2(tmp_path, capsys, name, columns, fragments, task):
    jobs = _table(tmp_path, name, **columns)
    out = tmp_path / "never"
    argv = (_scheduling(jobs, out) if task == "scheduling"
            else ["run", "--task", "fairness", "--jobs", jobs, "--no-mlflow", "--output", out])
    exit_2_one_line(capsys, argv, name, *fragments)
    assert not out.exists()


def test_a_repeated_csv_column_is_refused_from_the_header(tmp_path, capsys):
    jobs = tmp_path / "dup.csv"
    jobs.write_text("job_id,submit_time,duration,duration\na,0,1,2\nb,1,2,3\n")
    exit_2_one_line(capsys, _scheduling(jobs, tmp_path / "o"), "dup.csv", "column 'duration'", "appears more than once")
    exit_2_one_line(capsys, ["data", "import", "--format", "jobs", jobs, "--out", tmp_path / "j.parquet"],
                     "column 'duration'")
    assert not (tmp_path / "o").exists() and not (tmp_path / "j.parquet").exists()


def test_na_null_and_none_are_ids_like_any_other(tmp_path):
    jobs = tmp_path / "na.csv"
    jobs.write_text("job_id,submit_time,duration,tenant\nNA,0,3,null\nnull,0,1,None\nNone,1,2,NA\n")
    out = tmp_path / "out"
    assert main([str(a) for a in _scheduling(jobs, out, "--policies", "srpt")]) == 0
    assert sorted(pd.read_parquet(out / "per_job.parquet")["job_id"]) == ["NA", "None", "null"]
    imported = tmp_path / "na.parquet"
    assert main(["data", "import", "--format", "jobs", str(jobs), "--out", str(imported), "--quiet"]) == 0
    table = pd.read_parquet(imported)
    assert table["job_id"].tolist() == ["NA", "null", "None"] and table["tenant"].tolist() == ["null", "None", "NA"]
    # a rerun replaces its own signed file
    assert main(["data", "import", "--format", "jobs", str(jobs), "--out", str(imported), "--quiet"]) == 0
    weights = tmp_path / "weights.csv"
    weights.write_text("tenant,weight\nnull,1\nNone,2\nNA,3\n")
    fair = tmp_path / "fair"
    assert main(["run", "--task", "fairness", "--jobs", str(jobs), "--tenant-weights", str(weights), "--no-mlflow",
                 "--quiet", "--output", str(fair)]) == 0
    assert json.loads((fair / "results.json").read_text())["options"]["tenant_weights"] == {"NA": 3.0, "None": 2.0,
                                                                                            "null": 1.0}


def test_extreme_values_never_hang_or_crash_the_fairness_simulator(tmp_path, monkeypatch, capsys):
    def never(*args, **kwargs):
        raise AssertionError("the simulation started")

    monkeypatch.setattr("benchmark.tasks.fairness.simulate_fairness", never)
    fairness = ["run", "--task", "fairness", "--no-mlflow", "--output", tmp_path / "never", "--jobs"]
    # within the 10^12 s bound, but 2.8e8 fairness windows: refused before simulating, not hours later
    line = exit_2_one_line(capsys, fairness + [_table(tmp_path, "long.csv", duration=[1e12, 1, 1, 1])],
                            "--fair-window", "fairness windows")
    # a span of millions of days is said in three digits, not as a number as long as the span is
    assert re.search(r"about \d\.\d\de\+\d\d days", line), line
    exit_2_one_line(capsys, fairness + [_table(tmp_path, "gang.csv", gpus=[65, 1, 1, 1])],
                     "gang.csv: job 'a': asks for 65 GPUs, the cluster has 64")
    exit_2_one_line(capsys, fairness + [_table(tmp_path, "wide.csv", gpus=[9, 1, 12, 10]), "--nodes", "1"],
                     "wide.csv: job 'c': asks for 12 GPUs, the cluster has 8", "3 jobs ask for more")
    assert not (tmp_path / "never").exists()


def test_a_dataset_with_date_times_or_bad_ids_is_refused(tmp_path, capsys):
    n = 30
    frame = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "submit_time": np.arange(n) * 60.0, "user": "u", "group": "g",
        "is_recurrent": False, "log_gpu": 0.0, "p_star": np.full(n, 100.0), "y": np.log1p(100.0),
        "split": ["train"] * 10 + ["val"] * 10 + ["test"] * 10,
    })
    card = {"source": "hand-made", "features": ["log_gpu"]}
    cases = [
        ({"submit_time": pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(n), unit="min")},
         ("column 'submit_time'", "a dataset holds seconds as numbers")),
        ({"p_star": np.r_[np.full(n - 1, 100.0), 1e300]}, (f"row {n}", "p_star must be finite, > 0 and at most 1e+12 s")),
        ({"job_id": np.r_[np.arange(n - 1, dtype=float), 1e19]}, (f"row {n}", "not exactly a whole number")),
    ]
    for i, (columns, fragments) in enumerate(cases):
        ds = tmp_path / f"ds{i}"
        ds.mkdir()
        frame.assign(**columns).to_parquet(ds / "atlas.parquet", index=False)
        (ds / "dataset.json").write_text(json.dumps(card))
        argv = ["run", "--task", "scheduling", "--objective", "total_completion", "--data", ds, "--no-mlflow",
                "--output", tmp_path / "never"]
        exit_2_one_line(capsys, argv, "atlas.parquet", *fragments)
    assert not (tmp_path / "never").exists()


def test_a_submission_beyond_the_bound_is_refused(tmp_path, capsys):
    n = 30
    p_star = np.full(n, 100.0)
    frame = pd.DataFrame({
        "job_id": [f"j{i}" for i in range(n)], "submit_time": np.arange(n) * 60.0, "user": "u", "group": "g",
        "is_recurrent": False, "log_gpu": 0.0, "p_star": p_star, "y": np.log1p(p_star),
        "split": ["train"] * 10 + ["val"] * 10 + ["test"] * 10,
    })
    ds = tmp_path / "ds"
    ds.mkdir()
    frame.to_parquet(ds / "atlas.parquet", index=False)
    fingerprint = hashlib.sha256((ds / "atlas.parquet").read_bytes()).hexdigest()
    (ds / "dataset.json").write_text(json.dumps({"source": "hand-made", "features": ["log_gpu"], "fingerprint": fingerprint}))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "submission.yaml").write_text(yaml.safe_dump({
        "name": "huge", "authors": ["A"], "description": "", "url": "", "track": "prediction",
        "dataset_fingerprint": fingerprint}))
    test_ids = [f"j{i}" for i in range(20, n)]
    pd.DataFrame({"job_id": test_ids, "p_hat": [1e308] + [100.0] * 9}).to_parquet(sub / "predictions.parquet")
    entries = tmp_path / "entries"
    exit_2_one_line(capsys, ["submit", sub, "--track", "prediction", "--data", ds, "--entries-dir", entries],
                     "predictions.parquet", "p_hat must be at most 1e+12 s")
    assert not entries.exists()
    os.remove(sub / "predictions.parquet")
    pd.DataFrame({"job_id": test_ids, "p_hat": pd.to_timedelta([100] * 10, unit="s")}).to_parquet(sub / "predictions.parquet")
    exit_2_one_line(capsys, ["submit", sub, "--track", "prediction", "--data", ds, "--entries-dir", entries],
                     "column 'p_hat'", "has type duration")


def test_a_value_without_a_column_name_is_refused_not_shifted(tmp_path, capsys):
    """Data rows with one field more than the header: pandas would read the first field as a row
    index and shift every value one column left (ids gone, submit times read as durations)."""
    bad = tmp_path / "shifted.csv"
    bad.write_text("job_id,submit_time,duration\na,0,100,2\nb,10,50,1\nc,20,30,3\n")
    exit_2_one_line(capsys, _scheduling(bad, tmp_path / "out"), "shifted.csv: row 1 (line 2): 4 fields, the header has 3")
    exit_2_one_line(capsys, ["data", "import", "--format", "jobs", bad, "--out", tmp_path / "imported.parquet"],
                     "row 1 (line 2): 4 fields")
    assert not (tmp_path / "out").exists() and not (tmp_path / "imported.parquet").exists()


def test_a_header_in_other_letter_case_gets_a_whole_columns_suggestion(tmp_path, capsys):
    path = tmp_path / "upper.csv"
    path.write_text("Job_ID,Submit_Time,Duration\na,0,100\nb,10,50\nc,20,30\n")
    exit_2_one_line(capsys, _scheduling(path, tmp_path / "out"),
                     "--columns job_id=Job_ID,submit_time=Submit_Time,duration=Duration")
    assert main([str(a) for a in _scheduling(path, tmp_path / "out", "--columns",
                                             "job_id=Job_ID,submit_time=Submit_Time,duration=Duration")]) == 0


def test_a_parquet_index_is_a_column_like_any_other(tmp_path):
    """A frame saved after `set_index("job_id")` keeps job_id as the parquet's index; a frame saved
    after filtering rows keeps their old positions as an unnamed index, which is not data."""
    frame = pd.DataFrame(BASE)
    frame.set_index("job_id").to_parquet(tmp_path / "named.parquet")
    frame.iloc[[3, 1, 2]].to_parquet(tmp_path / "filtered.parquet")
    for name, ids in (("named", ["a", "b", "c", "d"]), ("filtered", ["b", "c", "d"])):
        out = tmp_path / name
        assert main([str(a) for a in _scheduling(tmp_path / f"{name}.parquet", out, "--policies", "fifo")]) == 0
        per_job = pd.read_parquet(out / "per_job.parquet")
        assert sorted(per_job["job_id"]) == ids
        assert list(per_job.columns).count("index") == 0


def test_too_few_jobs_to_split_names_the_file(tmp_path, capsys):
    exit_2_one_line(capsys, ["run", "--task", "prediction", "--jobs", _table(tmp_path, "two.csv", **{
        k: v[:2] for k, v in BASE.items()}), "--no-mlflow", "--quiet", "--output", tmp_path / "out"],
        "two.csv: need at least 3 jobs to split train/val/test, got 2")
    same_time = _table(tmp_path, "instant.csv", submit_time=[5.0] * 4)
    exit_2_one_line(capsys, ["run", "--task", "prediction", "--jobs", same_time, "--no-mlflow", "--quiet",
                              "--output", tmp_path / "out"], "instant.csv: the train split is empty")


def test_columns_a_task_does_not_use_are_named_not_dropped_silently(tmp_path, capsys):
    path = _table(tmp_path, "extra.csv", priority=[1, 2, 1, 3], user=["u", "v", "u", "w"])
    for task, extra in (("scheduling", ["--objective", "total_completion"]), ("fairness", ["--nodes", "1"])):
        out = tmp_path / task
        capsys.readouterr()
        assert main(["run", "--task", task, *extra, "--jobs", str(path), "--no-mlflow", "--output", str(out)]) == 0
        assert "note: " + str(path) + ": 2 column(s) not used by this task: priority, user" in capsys.readouterr().err
        assert json.loads((out / "results.json").read_text())["dataset"]["unused_columns"] == ["priority", "user"]
    plain = tmp_path / "plain"
    assert main(_scheduling(str(_table(tmp_path, "plain.csv")), str(plain))) == 0
    assert "unused_columns" not in json.loads((plain / "results.json").read_text())["dataset"]


@pytest.mark.figures_rendered  # looks at the figure
def test_tenant_names_the_plot_font_lacks_stay_readable_and_quiet(tmp_path, capsys):
    """Chinese tenant names: matplotlib's font has no such glyphs. --quiet stays quiet (it warned once
    per glyph), and the SVG beside each PNG keeps the names as text, drawn by the viewer's fonts."""
    path = _table(tmp_path, "cn.csv", tenant=["研究组", "工程部", "研究组", "工程部"], gpus=[1, 2, 1, 4])
    out = tmp_path / "out"
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["run", "--task", "fairness", "--jobs", str(path), "--nodes", "1", "--no-mlflow", "--quiet",
                     "--output", str(out)]) == 0
    assert capsys.readouterr().err == ""
    assert not [w for w in caught if "missing from font" in str(w.message)]
    svg = (out / "tenant_rho.svg").read_text(encoding="utf-8")
    assert re.search(r"<text[^>]*>[^<]*研究组", svg) and re.search(r"<text[^>]*>[^<]*工程部", svg)
    assert "<text" not in (out / "jct_slowdown.svg").read_text(encoding="utf-8")  # no such labels: paths, as before


def test_a_trace_of_one_duration_is_predicted_and_plotted_without_warnings(tmp_path, capsys):
    path = tmp_path / "same.csv"
    pd.DataFrame({"job_id": range(60), "submit_time": range(0, 600, 10), "duration": 100.0}).to_csv(path, index=False)
    capsys.readouterr()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["run", "--task", "prediction", "--jobs", str(path), "--methods", "isotonic", "--no-mlflow",
                     "--quiet", "--output", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == ""
    assert not [str(w.message) for w in caught if "singular" in str(w.message)]
    assert (tmp_path / "out" / "pred_vs_true.png").is_file()
