"""What one whole `benchmark run` costs besides its own work (docs/performance.md, "Whole-command cost").

No timing is asserted (timings depend on the machine's load): these tests check what the cost is
made of — which libraries a command imports — and that `benchmark perf --command` measures the
command against a bare process that did the same work.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmark import plots
from benchmark.experiments.perf import command as perf_command
from benchmark.experiments.perf import peer_heapq
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

ROOT = Path(__file__).resolve().parents[2]
# libraries a scheduling run without --predictor and with --no-mlflow never needs: each costs
# 0.2-2 s of start-up (scikit-learn pulls scipy.stats; numba is for 100,000 jobs and more)
NOT_NEEDED = ("sklearn", "lightgbm", "mlflow", "numba", "predictors", "torch", "dask", "xgboost")

_PROBE = """
import json, sys
from benchmark.cli import main
seen = {}
code_bad = main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", sys.argv[1],
                 "--policies", "srpt", "--no-mlflow", "--quiet", "--output", sys.argv[3]])
seen["after_refused"] = sorted({m.split(".")[0] for m in sys.modules})
code = main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", sys.argv[2],
             "--policies", "srpt", "--no-mlflow", "--quiet", "--output", sys.argv[4]])
seen["after_run"] = sorted({m.split(".")[0] for m in sys.modules})
from matplotlib.mathtext import MathTextParser
seen["mathtext_parser_built"] = MathTextParser._parser is not None
print(json.dumps({"codes": [code_bad, code], **seen}))
"""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""), "MPLBACKEND": "Agg"}


def test_a_scheduling_run_imports_only_what_it_uses(tmp_path):
    """A run refused at its input has not imported matplotlib (the figures' library is imported when a
    figure is drawn); a whole run without --predictor and with --no-mlflow imports none of NOT_NEEDED."""
    bad = tmp_path / "bad.csv"
    bad.write_text("job_id,submit_time,duration\nj0,0,5\nj1,1,oops\n", encoding="utf-8")
    good = tmp_path / "jobs.csv"
    perf_command.write_jobs_csv(300, good)
    done = subprocess.run([sys.executable, "-c", _PROBE, str(bad), str(good), str(tmp_path / "out-bad"),
                           str(tmp_path / "out")], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["codes"] == [2, 0]
    assert "line 3" in done.stderr and "duration is not a number" in done.stderr
    assert "matplotlib" not in seen["after_refused"] and "pandas" in seen["after_refused"]
    assert [m for m in NOT_NEEDED if m in seen["after_refused"] + seen["after_run"]] == []
    assert "matplotlib" in seen["after_run"]  # the figures were drawn: the probe sees imports at all
    # the stretch CDF's log axis is labelled without mathtext (plots.PlainLogFormatter): its parser is never built
    assert seen["mathtext_parser_built"] is False
    assert (tmp_path / "out" / "stretch_cdf.png").is_file() and not (tmp_path / "out-bad").exists()


def test_the_bare_process_does_the_work_of_the_command(tmp_path):
    """benchmark.experiments.perf.peer_heapq.srpt_process reads the CSV perf writes, and its ΣC_j and completion times
    are the engine's SRPT schedule on the same file (sizes floored at 1 s, times shifted to 0)."""
    jobs_csv, out_csv = tmp_path / "jobs.csv", tmp_path / "bare.csv"
    perf_command.write_jobs_csv(400, jobs_csv)
    total = peer_heapq.srpt_process(str(jobs_csv), str(out_csv))
    from atlas_data.jobs_table import read_jobs

    jobs = JobSet.from_frame(read_jobs(jobs_csv))
    result = simulate(jobs, get_policy("srpt")())
    assert total == pytest.approx(float(result.completion_time.sum()), rel=1e-12)
    lines = out_csv.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "job_id,completion_time" and len(lines) == 401
    bare = {job: float(c) for job, c in (line.split(",") for line in lines[1:])}
    engine = dict(zip(jobs.job_id.tolist(), result.completion_time.tolist()))
    assert bare.keys() == engine.keys()
    np.testing.assert_allclose([bare[j] for j in engine], list(engine.values()), rtol=1e-12)


def test_perf_command_times_both_processes_on_the_same_file(tmp_path):
    """One round at 300 jobs: both processes ran to the end, did the same work (measure raises when
    the bare process's ΣC_j is not the command's), and the ratios are those of the medians."""
    row = perf_command.measure(300, 1, tmp_path)
    assert row["n"] == 300 and row["rounds"] == 1
    assert row["command_wall_s"] > 0 and row["bare_wall_s"] > 0 and row["bare_cpu_s"] > 0
    assert row["wall_ratio"] == pytest.approx(row["command_wall_s"] / row["bare_wall_s"])
    assert row["cpu_ratio"] == pytest.approx(row["command_cpu_s"] / row["bare_cpu_s"])
    assert {"read", "policies", "plots"} <= set(row["command_stages_s"])
    assert (tmp_path / "run-0" / "results.json").is_file() and (tmp_path / "bare.csv").is_file()


@pytest.mark.parametrize("label_only_base", [True, False])
def test_log_axis_labels_are_matplotlibs_as_plain_text(label_only_base):
    """PlainLogFormatter writes the labels matplotlib's log scale writes, in plain text: 10⁰, 2×10³,
    −10¹, 10⁻² (mathtext's `10^{3}` as superscript digits, its minus sign as U+2212)."""
    from matplotlib.ticker import LogFormatterSciNotation

    ours, theirs = plots.PlainLogFormatter(10.0, labelOnlyBase=label_only_base), \
        LogFormatterSciNotation(10.0, labelOnlyBase=label_only_base)
    expected = {1.0: "10⁰", 10.0: "10¹", 1e4: "10⁴", 1e-2: "10⁻²", -10.0: "−10¹"}
    if not label_only_base:
        expected.update({2.0: "2×10⁰", 3e5: "3×10⁵", 0.05: "5×10⁻²", 2.5: "2.5×10⁰"})
    for x, text in expected.items():
        assert ours(x) == text, (x, theirs(x))
    for x in (2.0, 3e5, 0.05):  # the decades only: matplotlib leaves the others blank, and so do we
        assert label_only_base is False or ours(x) == theirs(x) == ""
    fig, ax = plots.subplots()
    ax.plot([1.0, 1e4], [0.0, 1.0])
    plots.log_scale(ax, "x")
    fig.draw_without_rendering()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert {"10⁰", "10¹", "10²", "10³", "10⁴"} <= set(labels) and not any("$" in label for label in labels)


_ENDING = """
import atexit, sys, threading, time
atexit.register(lambda: print("atexit handler ran"))
sys.stdout.write("buffered, not flushed\\n")
if sys.argv[1] == "thread":  # a non-daemon thread still running: the ordinary exit waits for it
    threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished"))).start()
sys.argv = ["benchmark", "run", "--task", "nonsense"]
from benchmark.cli import entry
entry()
"""


@pytest.mark.parametrize("case", ["plain", "thread"])
def test_the_console_script_ends_with_its_status_output_and_exit_handlers(case):
    """benchmark.cli.entry ends the process without the interpreter's teardown (end_process), but with
    the command's exit status, every buffered line of stdout, the atexit handlers' work, and — when
    another thread still runs — after that thread, as an ordinary exit does."""
    env = {k: v for k, v in _env().items() if k != "PYTHONUNBUFFERED"}  # stdout block-buffered, as in a pipe
    done = subprocess.run([sys.executable, "-c", _ENDING, case], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 2 and "invalid choice: 'nonsense'" in done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "buffered, not flushed" and "atexit handler ran" in lines
    assert ("thread finished" in lines) == (case == "thread")


def test_reading_shortcuts_give_what_the_sorts_gave():
    """The shortcuts of reading a table (no text sort when submit times have no ties, text encoded by
    arrays, tenant codes by hashing) give the fingerprint, order and codes the sorts gave: a table in
    time order and the same rows shuffled (which takes the sorting path) have one fingerprint, with
    ids and tenants in several scripts, and a missing tenant still hashes as missing."""
    import pandas as pd

    from atlas_data.build import _strings_blob, content_fingerprint
    from schedulers.jobs import _sorted_codes, tie_order

    rng = np.random.default_rng(3)
    n = 500
    frame = pd.DataFrame({"job_id": [f"jöb-{i}-名" for i in range(n)], "submit_time": np.cumsum(rng.exponential(5.0, n)),
                          "duration": rng.lognormal(3.0, 1.0, n),
                          "tenant": rng.choice(["α", "team b", "default", "Zeta"], n)})
    shuffled = frame.sample(frac=1.0, random_state=1).reset_index(drop=True)
    assert content_fingerprint(frame) == content_fingerprint(shuffled)
    values = np.array(["a", "", "é", "x" * 300], dtype=object)
    loop = b"".join(len(v.encode()).to_bytes(4, "little") + v.encode() for v in values)
    assert _strings_blob(values) == loop
    assert _strings_blob(np.array(["a", None], dtype=object)) == b"\x01\x00\x00\x00a\xff\xff\xff\xff"
    ids, submit = frame["job_id"].to_numpy(object), frame["submit_time"].to_numpy()
    assert tie_order(ids, submit).tolist() == list(range(n))
    tied = np.round(submit / 50.0)  # many ties: the sort by id decides within each
    expected = sorted(range(n), key=lambda i: (tied[i], ids[i]))
    assert tie_order(ids, tied).tolist() == expected
    tenants = frame["tenant"].to_numpy(object)
    names, codes = _sorted_codes(tenants)
    unique_names, unique_codes = np.unique(tenants, return_inverse=True)
    assert names.tolist() == unique_names.tolist() and codes.tolist() == unique_codes.tolist()
