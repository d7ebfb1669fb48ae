"""Imports that never lose data, through the command line: a column an importer cannot map is exit 2
with one line; `--columns` for `data import --format jobs` and `run --jobs FILE`; `;`-separated files;
SWF logs by `--format swf` and by the `.swf` extension of `--jobs`."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from atlas_data.jobs_table import read_jobs
from benchmark.cli import main

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

MINE = "id,submit,runtime,gpus\nj1,0,100,2\nj2,5,30,1\nj3,7,12.5,4\n"
MAPPING = "job_id=id,submit_time=submit,duration=runtime,gpus=gpus"


def mine(tmp_path, text=MINE, name="mine.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_helios_refuses_a_file_it_would_turn_into_a_batch(tmp_path, capsys, one_error):
    out = tmp_path / "jobs.parquet"
    line = one_error(["data", "import", "--format", "helios", mine(tmp_path), "--out", out])
    assert line == (f"error: {tmp_path / 'mine.csv'}: column 'id': a runtime-only file (no submit_time) becomes a "
                    "batch at time 0 with gpus = 1, which cannot keep its column(s) id, submit, gpus; import it with "
                    "--format jobs --columns job_id=id,submit_time=submit,duration=runtime")
    assert not out.exists()


def test_helios_refuses_columns_outside_a_helios_log(tmp_path, capsys, one_error):
    path = mine(tmp_path, "job_id,gpu_num,submit_time,duration,priority\na,1,0,5,high\n", "log.csv")
    line = one_error(["data", "import", "--format", "helios", path, "--out", tmp_path / "o.parquet"])
    assert line.startswith(f"error: {path}: column 'priority': the helios importer cannot map column(s) priority")


def test_helios_runtime_only_file_is_still_a_batch(tmp_path, capsys):
    path = mine(tmp_path, "runtime\n10\n20\n", "philly_runtime.csv")
    out = tmp_path / "o.parquet"
    assert main(["data", "import", "--format", "helios", str(path), "--out", str(out)]) == 0
    assert read_jobs(out)["duration"].tolist() == [10.0, 20.0]


def test_jobs_format_without_mapping_suggests_it(tmp_path, capsys, one_error):
    line = one_error(["data", "import", "--format", "jobs", mine(tmp_path), "--out", tmp_path / "o.parquet"])
    assert line.endswith("column 'job_id': required column is missing (columns present: id, submit, runtime, gpus); "
                         "name the file's columns with --columns job_id=id,submit_time=submit,duration=runtime")


def test_jobs_format_with_columns_maps_every_column(tmp_path, capsys):
    out = tmp_path / "jobs.parquet"
    assert main(["data", "import", "--format", "jobs", str(mine(tmp_path)), "--out", str(out), "--columns", MAPPING]) == 0
    printed = capsys.readouterr().out
    assert "kept 3, dropped 0" in printed
    assert "note: columns mapped: job_id = 'id', submit_time = 'submit', duration = 'runtime', gpus = 'gpus'" in printed
    jobs = read_jobs(out)
    assert jobs["job_id"].tolist() == ["j1", "j2", "j3"]
    assert jobs["submit_time"].tolist() == [0.0, 5.0, 7.0]
    assert jobs["duration"].tolist() == [100.0, 30.0, 12.5]
    assert jobs["gpus"].tolist() == [2, 1, 4]


def test_jobs_format_keeps_the_other_columns(tmp_path, capsys):
    path = mine(tmp_path, "job_id,submit_time,duration,app,mem_gb\na,0,1,train,8\nb,1,2,eval,64\n", "jobs.csv")
    out = tmp_path / "jobs.parquet"
    assert main(["data", "import", "--format", "jobs", str(path), "--out", str(out)]) == 0
    assert "note: kept 2 other column(s) as they are: app, mem_gb" in capsys.readouterr().out
    written = pd.read_parquet(out)
    assert written["app"].tolist() == ["train", "eval"] and written["mem_gb"].tolist() == [8, 64]


@pytest.mark.parametrize("argv_tail, message", [
    (["--columns", "job_id=ident,submit_time=submit,duration=runtime"],
     "column 'ident': --columns maps job_id to 'ident', which the file does not have"),
    (["--columns", "job=id"], "--columns: 'job' is not a jobs-table column"),
])
def test_bad_mapping_exits_2_naming_it(tmp_path, capsys, argv_tail, message, one_error):
    out = tmp_path / "o.parquet"
    line = one_error(["data", "import", "--format", "jobs", mine(tmp_path), "--out", out, *argv_tail])
    assert message in line
    assert not out.exists()


def test_columns_applies_to_the_jobs_format_only(tmp_path, capsys, one_error):
    line = one_error(["data", "import", "--format", "helios", mine(tmp_path), "--out", tmp_path / "o.parquet",
                            "--columns", MAPPING])
    assert line == "error: --columns: --columns applies to --format jobs only: the helios importer knows its own columns"


def test_semicolon_file_imports(tmp_path, capsys):
    path = mine(tmp_path, MINE.replace(",", ";"), "semi.csv")
    out = tmp_path / "o.parquet"
    assert main(["data", "import", "--format", "jobs", str(path), "--out", str(out), "--columns", MAPPING,
                 "--quiet"]) == 0
    assert read_jobs(out)["duration"].tolist() == [100.0, 30.0, 12.5]


# ----- SWF ------------------------------------------------------------------------------------------------
def swf_log(path, n=600, seed=0):
    """An SWF log (18 fields per line, −1 = missing) where the executable sets the run time and the
    user's requested time follows it; a few cancelled (run time −1) and zero-length jobs."""
    rng = np.random.default_rng(seed)
    lines = ["; Version: 2.2", "; Computer: test", "; Note: written from the published SWF field list", ";"]
    submit = np.cumsum(rng.exponential(60.0, n)).astype(int)
    kept = 0
    for i in range(n):
        exe = int(rng.integers(1, 4))
        run = int(exe ** 3 * 100 * np.exp(0.1 * rng.standard_normal()))
        if i % 50 == 7:
            run = -1
        elif i % 50 == 8:
            run = 0
        else:
            kept += 1
        procs = int(rng.choice([1, 2, 4]))
        req_time = int(exe ** 3 * 150)
        user = int(rng.integers(1, 6))
        fields = [i + 1, int(submit[i]), int(rng.integers(0, 100)), run, procs, -1, -1, procs, req_time, -1, 1,
                  user, 1 + user % 2, exe, 1, 1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return kept


def test_swf_import_prints_drops_and_keeps_fields(tmp_path, capsys):
    path = tmp_path / "log.swf"
    kept = swf_log(path, n=100)
    out = tmp_path / "o.parquet"
    assert main(["data", "import", "--format", "swf", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"swf: read 100 rows from {path}: kept {kept}, dropped {100 - kept}" in printed
    assert "dropped 2: no_duration" in printed and "dropped 2: non_positive_duration" in printed
    written = pd.read_parquet(out)
    assert len(written) == kept
    assert {"user_id", "group_id", "queue_id", "executable_id", "requested_time", "requested_processors"} <= set(written)


def test_swf_bad_line_exits_2_naming_it(tmp_path, capsys, one_error):
    path = tmp_path / "log.swf"
    path.write_text("; header\n1 0 5 100 4 -1 -1 4 200 -1 1 3 1 7 1 1 -1 -1\n2 10 0 50 2 -1 -1 2 100\n")
    line = one_error(["data", "import", "--format", "swf", path, "--out", tmp_path / "o.parquet"])
    assert line == f"error: {path}: line 3: expected 18 whitespace-separated SWF fields, got 9"


# ----- benchmark run --jobs -------------------------------------------------------------------------------
def _run(*argv):
    return main(["run", "--no-mlflow", *map(str, argv)])


def test_run_jobs_file_with_columns(tmp_path, capsys, one_error):
    path = mine(tmp_path)
    out = tmp_path / "s"
    assert _run("--task", "scheduling", "--objective", "total_completion", "--jobs", path, "--columns", MAPPING,
                "--policies", "fifo,srpt", "--output", out, "--quiet") == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["n_jobs"] == 3
    per_job = pd.read_parquet(out / "per_job.parquet")
    srpt = per_job[per_job["policy"] == "srpt"].set_index("job_id")
    assert srpt["duration"].to_dict() == {"j1": 100.0, "j2": 30.0, "j3": 12.5}
    assert srpt["submit_time"].to_dict() == {"j1": 0.0, "j2": 5.0, "j3": 7.0}
    line = one_error(["run", "--no-mlflow", "--task", "scheduling", "--objective", "total_completion",
                            "--jobs", path, "--policies", "fifo"])
    assert "name the file's columns with --columns job_id=id,submit_time=submit,duration=runtime" in line
    line = one_error(["run", "--no-mlflow", "--task", "scheduling", "--objective", "total_completion",
                            "--jobs", path, "--columns", "job_id=nope", "--policies", "fifo"])
    assert "column 'nope': --columns maps job_id to 'nope', which the file does not have" in line
    line = one_error(["run", "--no-mlflow", "--task", "scheduling", "--objective", "total_completion",
                            "--columns", MAPPING])
    assert line == "error: --columns: --columns maps the columns of a --jobs FILE"


def test_run_on_an_swf_log_prints_its_drops(tmp_path, capsys):
    path = tmp_path / "log.swf"
    kept = swf_log(path, n=100)
    assert kept == 96  # lines 8 and 58 ran −1 s (cancelled), 9 and 59 ran 0 s
    args = ("--task", "scheduling", "--objective", "total_completion", "--jobs", path, "--policies", "fifo,srpt")
    capsys.readouterr()
    assert _run(*args, "--output", tmp_path / "s", "--quiet") == 0
    assert json.loads((tmp_path / "s" / "results.json").read_text())["n_jobs"] == kept
    # with --quiet one line, and only because rows were dropped: a run never drops input unsaid
    assert capsys.readouterr().err.splitlines() == [
        f"swf: {path}: dropped 4 of 100 rows (no_duration 2, non_positive_duration 2)"]
    assert _run(*args, "--output", tmp_path / "t") == 0
    err = capsys.readouterr().err.splitlines()
    assert f"swf: read 100 rows from {path}: kept 96, dropped 4" in err and "  dropped 2: no_duration" in err


def test_a_quiet_run_on_a_log_without_drops_says_nothing_of_the_import(tmp_path, capsys):
    path = tmp_path / "log.swf"
    swf_log(path, n=7)  # lines 8 and 9 are not there: nothing dropped
    capsys.readouterr()
    assert _run("--task", "scheduling", "--objective", "total_completion", "--jobs", path, "--policies", "fifo",
                "--output", tmp_path / "s", "--quiet") == 0
    assert capsys.readouterr().err == ""


def test_reproduce_hpc_with_a_learned_predictor_and_quiet_prints_one_line_of_drops(tmp_path, capsys):
    from swf_logs import random_swf

    log = random_swf(tmp_path / "log.swf", 3_000, seed=1, max_gap=30, max_request=400)
    with log.open("a") as fh:  # a cancelled job (run time −1) and one that ran 0 s
        fh.write("3001 99999 0 -1 1 -1 -1 -1 100 -1 1 1 1 1 1 1 -1 -1\n3002 99999 0 0 1 -1 -1 -1 100 -1 1 1 1 1 1 1 -1 -1\n")
    capsys.readouterr()
    assert main(["reproduce", "hpc", "--jobs", str(log), "--policies", "easy-p", "--predictor", "constant", "--whole",
                 "--quiet", "--output", str(tmp_path / "out")]) == 0
    # quiet: one line per fact, and no report beyond them — what the simulation does with the two jobs
    # (its reader's notes, printed quiet or not) and what the predictor's dataset dropped (one line)
    assert capsys.readouterr().err.splitlines() == [
        "log.swf: note: dropped 1: no_duration (run time −1, missing; as `data import` drops them)",
        "log.swf: note: dropped 1: non_positive_duration (a run time of 0; as `data import` drops them)",
        f"swf: {log}: dropped 2 of 3002 rows (no_duration 1, non_positive_duration 1)"]


def test_prediction_on_an_swf_log_learns_from_its_fields(tmp_path):
    path = tmp_path / "log.swf"
    swf_log(path)
    out = tmp_path / "p"
    assert _run("--task", "prediction", "--jobs", path, "--methods", "constant,single-stage", "--output", out,
                "--quiet") == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["dataset"]["feature_columns"] == {
        "categorical": ["tenant", "group_id", "executable_id"],  # user_id is the tenant; queue, partition constant
        "numeric": ["gpus", "requested_time", "requested_processors"]}  # requested memory is −1 throughout
    assert {"executable_id_code", "log_requested_time"} <= set(doc["dataset"]["features"])
    rmsle = {r["method"]: r["rmsle"] for r in doc["rows"]}
    # the executable (and the requested time) set the run time: the learner beats the constant by far
    assert rmsle["single-stage"] < 0.3 * rmsle["constant"]
