"""`benchmark data import` of a long SWF log in bounded memory, and out of memory as exit 2.

Each import runs in a child process under `ulimit -v 4000000` (RLIMIT_AS, as tests/benchmark/
test_spin_faults.py), which reports its resident memory after its imports and its peak (VmHWM).
The memory an import adds per log line is measured as the slope between two sizes, so that the
constant part (the interpreter, a 4 MiB block of text being parsed) cancels. Between 10⁵ and 10⁶
lines the old import (job ids as Python text objects checked by a hash table, float64 fields, a frame
copied into one block) took about 295 bytes a line (and 2.9 GB at 10⁷ lines, then a crash under the
cap), this one about 195 (1.8 GB at 10⁷ lines: 171 a line; at small sizes the C allocator's heap
keeps a little more). The 10⁷-line check itself is marked slow.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main

REPO = Path(__file__).resolve().parents[2]
MEMORY_KB = 4_000_000  # `ulimit -v 4000000`
BYTES_PER_LINE = 250  # between 10⁵ and 10⁶ lines; 10⁷ lines within 2 GB is the slow test's bound

CHILD = """
import contextlib, io, json, resource, sys
import gzip, numpy, pandas, pyarrow.parquet
from benchmark.cli import main
import atlas_data.adapters, atlas_data.outputs, benchmark.commands.data_import

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024

log, out, room = sys.argv[1], sys.argv[2], int(sys.argv[3])
base = status("VmRSS")
if room:  # the address space left for the import itself, beyond what the imports above took
    cap = status("VmSize") + room
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
    code = main(["data", "import", "--format", "swf", log, "--out", out])
print(json.dumps({"code": code, "err": err.getvalue().strip().splitlines(), "base": base, "peak": status("VmHWM")}))
"""


def _capped() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_KB * 1024, MEMORY_KB * 1024))


def write_log(path: Path, n: int) -> Path:
    """An n-line log of distinct jobs: 500 users, 40 groups, 2,000 executables, a few lines without a run time."""
    rng = np.random.default_rng(0)
    with path.open("w") as fh:
        fh.write("; MaxNodes: 128\n; MaxProcs: 128\n")
        for lo in range(0, n, 1_000_000):
            m = min(1_000_000, n - lo)
            procs = rng.integers(1, 129, m)
            columns = [np.arange(lo + 1, lo + m + 1), lo * 30 + np.cumsum(rng.integers(0, 60, m)),
                       rng.integers(0, 5000, m), rng.integers(-1, 40_000, m), procs, rng.integers(-1, 40_000, m),
                       np.full(m, -1), procs, rng.integers(60, 64_800, m), np.full(m, -1), np.ones(m, int),
                       rng.integers(1, 501, m), rng.integers(1, 41, m), rng.integers(1, 2001, m),
                       rng.integers(1, 5, m), np.ones(m, int), np.full(m, -1), np.full(m, -1)]
            np.savetxt(fh, np.column_stack(columns), fmt="%d")
    return path


def child_import(log: Path, out: Path, room: int = 0, timeout: float = 300) -> dict:
    """`data import --format swf LOG --out OUT` in a capped child: {code, err (lines), base, peak} (bytes)."""
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), str(log), str(out), str(room)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=timeout, preexec_fn=_capped)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])  # never a crash (a signal: negative)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_long_log_imports_in_memory_bounded_per_line(tmp_path):
    small, large = 100_000, 1_000_000
    runs = {}
    for n in (small, large):
        log = write_log(tmp_path / f"log{n}.swf", n)
        runs[n] = child_import(log, tmp_path / f"jobs{n}.parquet")
        assert runs[n]["code"] == 0 and runs[n]["err"] == [], runs[n]
    per_line = ((runs[large]["peak"] - runs[large]["base"]) - (runs[small]["peak"] - runs[small]["base"])) / (large - small)
    assert per_line < BYTES_PER_LINE, f"{per_line:.0f} bytes per line"
    jobs = pd.read_parquet(tmp_path / f"jobs{large}.parquet")
    # the table is the log's: job ids as written (text), the lines without a run time (−1) or of 0 s dropped
    text = (tmp_path / f"log{large}.swf").read_text().splitlines()[2:]
    runs_s = np.array([int(line.split()[3]) for line in text])
    assert len(jobs) == int((runs_s > 0).sum()) and len(jobs) < large
    first = next(i for i, r in enumerate(runs_s) if r > 0)
    assert jobs["job_id"].iloc[0] == text[first].split()[0] and jobs["job_id"].iloc[-1] == str(
        1 + max(i for i, r in enumerate(runs_s) if r > 0))
    assert jobs["tenant"].iloc[0] == text[first].split()[11]
    assert jobs["job_id"].map(type).eq(str).all() and jobs["job_id"].is_unique


def test_out_of_memory_is_exit_2_with_one_line_and_nothing_written(tmp_path):
    log = write_log(tmp_path / "log.swf", 100_000)
    run = child_import(log, tmp_path / "jobs.parquet", room=24 << 20)
    assert run["code"] == 2 and len(run["err"]) == 1, run
    assert run["err"][0] == (f"error: {log}: ran out of memory while importing it: the trace is too large for this "
                             "machine's memory or its memory limit (ulimit -v); docs/data-formats.md#limits")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.swf"]


@pytest.mark.parametrize("where", ["atlas_data.adapters.validate_jobs", "atlas_data.adapters.write_signed_parquet"])
def test_a_memory_error_at_any_step_is_exit_2(tmp_path, capsys, monkeypatch, where):
    import pyarrow as pa

    def exhausted(*args, **kwargs):
        raise (pa.ArrowMemoryError if "parquet" in where else MemoryError)("malloc of size 80000000 failed")

    monkeypatch.setattr(where, exhausted)
    log = write_log(tmp_path / "log.swf", 1_000)
    capsys.readouterr()
    assert main(["data", "import", "--format", "swf", str(log), "--out", str(tmp_path / "jobs.parquet")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {log}: ran out of memory while importing it"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.swf"]


def test_job_numbers_not_written_as_whole_numbers_keep_their_text_and_a_repeat_is_found_either_way(tmp_path, capsys):
    row = "{} {} 0 50 2 -1 -1 2 60 -1 1 3 1 1 1 1 -1 -1"
    (tmp_path / "as_written.swf").write_text("\n".join(row.format(j, i) for i, j in enumerate(["007", "8", "9.0"])))
    from atlas_data.adapters import import_swf

    assert import_swf(tmp_path / "as_written.swf")[0]["job_id"].tolist() == ["007", "8", "9.0"]
    for name, ids in (("whole.swf", ["5", "8", "12", "8"]), ("text.swf", ["5", "8.0", "12", "8.0"])):
        (tmp_path / name).write_text("\n".join(row.format(j, i) for i, j in enumerate(ids)) + "\n")
        capsys.readouterr()
        assert main(["data", "import", "--format", "swf", str(tmp_path / name), "--out", str(tmp_path / "o.parquet")]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: {tmp_path / name}: row 4 (line 4): duplicate job_id '{ids[1]}': row 2 (line 2) and row 4 (line 4)"]


@pytest.mark.slow
def test_ten_million_lines_import_within_2_gb_under_the_cap(tmp_path):
    log = write_log(tmp_path / "log.swf", 10_000_000)
    run = child_import(log, tmp_path / "jobs.parquet", timeout=1_800)
    assert run["code"] == 0 and run["err"] == [], run
    assert run["peak"] < 2 * 10**9, f"{run['peak'] / 1e9:.2f} GB"
    assert len(pd.read_parquet(tmp_path / "jobs.parquet", columns=["duration"])) > 9_990_000
