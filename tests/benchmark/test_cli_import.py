"""`benchmark data import`: counts on stdout, exit 2 with exactly one stderr line on bad input, nothing written."""

from __future__ import annotations

import pandas as pd
import pytest

from atlas_data.adapters import default_jobs, default_pod_trace_path
from atlas_data.jobs_table import read_jobs
from benchmark.cli import main


def test_import_openb_prints_counts_and_round_trips(tmp_path, capsys):
    out = tmp_path / "jobs.parquet"
    assert main(["data", "import", "--format", "openb", str(default_pod_trace_path()), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "kept 6203, dropped 1949" in stdout
    assert "dropped 1088: no_gpu" in stdout and "dropped 861: never_scheduled" in stdout
    assert f"wrote 6203 jobs to {out}" in stdout
    pd.testing.assert_frame_equal(read_jobs(out), default_jobs())

    # the written table imports again as a plain jobs table, unchanged
    again = tmp_path / "again.parquet"
    assert main(["data", "import", "--format", "jobs", str(out), "--out", str(again), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    pd.testing.assert_frame_equal(read_jobs(again), read_jobs(out))


def test_tenant_column_option(tmp_path, capsys):
    out = tmp_path / "jobs.parquet"
    argv = ["data", "import", "--format", "openb", str(default_pod_trace_path()), "--out", str(out),
            "--tenant-column", "pod_phase", "--quiet"]
    assert main(argv) == 0
    assert sorted(read_jobs(out)["tenant"].unique()) == ["Failed", "Running", "Succeeded"]


BAD_JOBS = [
    ("job_id,submit_time\na,0\n", "column 'duration': required column is missing (columns present: job_id, submit_time); name the file's columns with --columns duration=COLUMN"),
    ("job_id,submit_time,duration\na,0,1\nb,1,2\na,2,3\n",
     "row 3 (line 4): duplicate job_id 'a': row 1 (line 2) and row 3 (line 4)"),
    ("job_id,submit_time,duration\na,0,1\nb,1,-4\n", "row 2 (line 3): duration must be > 0, got -4"),
    ("job_id,submit_time,duration\na,0,1\nb,1,nan\n", "row 2 (line 3): duration is missing/NaN"),
    ("job_id,submit_time,duration\na,0,1\nb,inf,1\n", "row 2 (line 3): submit_time must be finite, got inf"),
    ("job_id,submit_time,duration,gpus\na,0,1,0\n", "row 1 (line 2): gpus must be >= 1, got 0"),
    ("job_id,submit_time,duration,gpus\na,0,1,2.5\n", "row 1 (line 2): gpus must be a whole number, got 2.5"),
    ("job_id,submit_time,duration,predicted_duration\na,0,1,0\n",
     "row 1 (line 2): predicted_duration must be > 0, got 0"),
    ("job_id,submit_time,duration\n", "the jobs table has no rows"),
]


@pytest.mark.parametrize("text, problem", BAD_JOBS)
def test_bad_jobs_table_exits_2_with_one_line(tmp_path, capsys, text, problem, one_error):
    src = tmp_path / "jobs.csv"
    src.write_text(text)
    out = tmp_path / "out.parquet"
    line = one_error(["data", "import", "--format", "jobs", str(src), "--out", str(out)])
    assert line == f"error: {src}: {problem}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["jobs.csv"]  # nothing written, no temp file


def test_bad_openb_and_file_errors(tmp_path, capsys, one_error):
    out = tmp_path / "out.parquet"
    pods = tmp_path / "pods.csv"
    pods.write_text("name,num_gpu,creation_time,deletion_time,scheduled_time\np0,1,0,10,x\n")
    line = one_error(["data", "import", "--format", "openb", str(pods), "--out", str(out)])
    assert line == f"error: {pods}: row 1 (line 2): scheduled_time is not a number: 'x'"

    missing = tmp_path / "missing.csv"
    line = one_error(["data", "import", "--format", "openb", str(missing), "--out", str(out)])
    assert line == f"error: {missing}: file not found"

    odd = tmp_path / "pods.json"
    odd.write_text("{}")
    line = one_error(["data", "import", "--format", "jobs", str(odd), "--out", str(out)])
    assert line.startswith(f"error: {odd}: unknown file extension")

    line = one_error(["data", "import", "--format", "openb", str(default_pod_trace_path()),
                            "--out", str(out), "--tenant-column", "team"])
    assert line.startswith(f"error: {default_pod_trace_path()}: column 'team': tenant column not found")

    line = one_error(["data", "import", "--format", "openb", str(default_pod_trace_path()),
                            "--out", str(tmp_path / "jobs.csv")])
    assert line == f"error: {tmp_path / 'jobs.csv'}: --out: output must be a .parquet file"

    line = one_error(["data", "import", "--format", "slurm", str(pods), "--out", str(out)])
    assert "invalid choice: 'slurm'" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pods.csv", "pods.json"]


def test_failed_import_keeps_an_existing_output(tmp_path, capsys, one_error):
    out = tmp_path / "jobs.parquet"
    assert main(["data", "import", "--format", "openb", str(default_pod_trace_path()), "--out", str(out), "--quiet"]) == 0
    before = out.read_bytes()
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_time,duration\na,0,0\n")
    one_error(["data", "import", "--format", "jobs", str(bad), "--out", str(out)])
    assert out.read_bytes() == before


def test_import_helios_runtime_only_file(tmp_path, capsys):
    src = tmp_path / "philly_runtime.csv"
    src.write_text("runtime\n0.0\n12.5\n\n3600\n-1\n")
    out = tmp_path / "jobs.parquet"
    assert main(["data", "import", "--format", "helios", str(src), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "kept 2, dropped 3" in stdout
    assert "dropped 1: no_duration" in stdout and "dropped 2: non_positive_duration" in stdout
    jobs = read_jobs(out)
    assert jobs["job_id"].tolist() == ["philly-2", "philly-4"]
    assert jobs["duration"].tolist() == [12.5, 3600.0]
    assert jobs["submit_time"].tolist() == [0.0, 0.0]
