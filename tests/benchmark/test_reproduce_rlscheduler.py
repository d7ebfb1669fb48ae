"""`benchmark reproduce rlscheduler`: RLScheduler's published FCFS / SJF cells, the protocol's rules
on the cluster simulator (kernel schedulers.cluster.policies.hpc_queue, events one at a time), and
bad SWF input refused with one line."""

import gzip
import json

import numpy as np
import pytest

from benchmark.cli import main
from benchmark.experiments import rlscheduler as rls
from cli_checks import exit_2_one_line, snapshot
from schedulers.cluster import simulator
from schedulers.cluster.policies.hpc_queue import HPCQueue
from schedulers.cluster.policies.hpc_queue import machine as machine_of
from schedulers.jobs import JobSet

pytestmark = pytest.mark.long_file  # started first on the xdist workers (tests/conftest.py)


def test_every_published_cell_equal_to_two_decimals(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "rlscheduler", "--quiet", "--output", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert doc["complete"] and doc["argv"][:3] == ["benchmark", "reproduce", "rlscheduler"]
    cells = {(r["log"], r["policy"], r["backfill"]): r for r in doc["rows"]}
    assert len(cells) == 8
    for log, (_, _, paper) in rls.LOGS.items():
        for (policy, backfill), published in paper.items():
            row = cells[(log, policy, backfill)]
            assert row["paper"] == published
            assert f"{row['bsld']:.2f}" == f"{published:.2f}", (log, policy, backfill, row["bsld"])
            assert row["equal"] is True
    text = (out / "reproduce-rlscheduler.md").read_text()
    assert "| HPC2N | SJF | no | 157.71 | 157.71 | yes |" in text
    assert text in capsys.readouterr().out


def test_sequence_starts_are_the_environments():
    # derived by running the protocol's code path (gym 0.x seeding.np_random(1), randint(1024, N − 1025))
    # for N = 10,000, their batch_job_slice for SDSC-SP2 and HPC2N
    assert rls.sequence_starts(59_705, 10_000) == [1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085]
    # without a slice, N is the log's size
    starts = rls.sequence_starts(77_205)
    assert starts != rls.sequence_starts(59_705, 10_000) and all(1024 <= s < 77_205 - 1025 for s in starts)


def test_the_shipped_logs_are_the_archives_files_with_their_headers():
    for file in ("SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz", "CTC-SP2-1996-3.1-cln.swf.gz"):
        with gzip.open(rls.shipped_log(file), "rt") as fh:
            head = fh.read(20_000)
        assert head.startswith(";") and "MaxProcs" in head
    with gzip.open(rls.shipped_log("SDSC-SP2-1998-4.2-cln.swf.gz"), "rt") as fh:
        assert "JOBLOG" in fh.read(20_000).upper()  # the SDSC usage agreement stays


def test_the_protocols_reading_of_a_log():
    log = rls.load_log(rls.shipped_log("SDSC-SP2-1998-4.2-cln.swf.gz"))
    # 59,715 lines, the 10 with run time 0 dropped; the 5,671 with run time −1 kept at 10 s
    assert log["jobs"] == 59_705 and log["machine"] == 128
    assert int((log["run"] == 10).sum()) >= 5_671


def _run(submit, run, request, procs, machine, sjf=False, backfill=False):
    n = len(submit)
    jobs = JobSet(job_id=np.arange(n).astype(str).astype(object), submit_time=np.array(submit, float),
                  size=np.array(run, float), predicted=np.array(request, float), gpus=np.array(procs, np.int64),
                  tenant=np.zeros(n, np.int64), tenant_names=("all",), weight=np.ones(n), time_offset=0.0)
    return simulator.run(jobs, HPCQueue(sjf=sjf, backfill=backfill), False, cluster=machine_of(machine)).start.tolist()


def test_sjf_keeps_its_head_once_chosen():
    # A fills the machine; B arrives to an empty queue and is the head; C, shorter, comes later and waits for B
    assert _run([0, 10, 20], [100, 50, 5], [100, 50, 5], [4, 4, 4], 4, sjf=True) == [0, 100, 150]


def test_an_instants_events_are_decided_one_at_a_time():
    # A and B (2 of 4 processors each, requested 100) end together at 10; C (4) is the blocked head
    # (shadow 100), D (2, requested 20) waits. The protocol sees A's end alone first: C still does not
    # fit, D is backfilled into A's processors, and C waits for D (30). Deciding after both ends at
    # once would start C at 10.
    starts = _run([0, 0, 1, 5], [10, 10, 10, 20], [100, 100, 10, 20], [2, 2, 4, 2], 4, backfill=True)
    assert starts == [0, 0, 30, 10]


def test_backfilling_by_requested_time_only():
    # A (3 of 4 processors, requested 100) runs; B needs 4: shadow time 100. C (1 processor,
    # requested 50) ends before it and is backfilled at once; D (1 processor, requested 200) is not
    starts = _run([0, 1, 2, 3], [100, 10, 50, 10], [100, 10, 50, 200], [3, 4, 1, 1], 4, backfill=True)
    assert starts == [0, 100, 2, 110]
    # without backfilling C waits behind B
    assert _run([0, 1, 2, 3], [100, 10, 50, 10], [100, 10, 50, 200], [3, 4, 1, 1], 4) == [0, 100, 110, 110]


def _swf(path, lines, header=("; MaxNodes: 4", "; MaxProcs: 4")):
    path.write_text("\n".join([*header, *lines]) + "\n")
    return path


def _line(number, submit, run, procs=1, request=-1):
    return f"{number} {submit} 0 {run} {procs} -1 -1 {procs} {request} -1 1 1 1 1 1 1 -1 -1"


@pytest.mark.parametrize("case, fragments", [
    ("fields", ["line 4", "expected 18"]),
    ("size", ["line 3", "machine of 4"]),
    ("header", ["neither MaxNodes nor MaxProcs"]),
    ("short", ["at least 2050"]),
    ("fraction", ["line 3", "whole seconds"]),
    ("suffix", ["--jobs", "SWF log"]),
    # header numbers that pass str.isdigit but are no ASCII whole number, or beyond exact floats
    ("superscript", ["MaxProcs", "ASCII digits"]),
    ("arabic-indic", ["MaxNodes", "ASCII digits"]),
    ("huge", ["MaxRuntime", "2^53"]),
    ("thousands of digits", ["MaxProcs", "2^53"]),
])
def test_bad_swf_input_is_one_line_and_writes_nothing(tmp_path, capsys, case, fragments):
    path = tmp_path / "log.swf"
    if case == "fields":
        _swf(path, [_line(1, 0, 5), "2 1 0 5"])
    elif case == "size":
        _swf(path, [_line(1, 0, 5, procs=8)])
    elif case == "header":
        _swf(path, [_line(1, 0, 5)], header=("; Computer: none",))
    elif case == "short":
        _swf(path, [_line(i + 1, i, 5) for i in range(100)])
    elif case == "fraction":
        _swf(path, [_line(1, "0.5", 5)])
    elif case == "superscript":
        _swf(path, [_line(1, 0, 5)], header=("; MaxNodes: 4", "; MaxProcs: 4\u00b2"))
    elif case == "arabic-indic":
        _swf(path, [_line(1, 0, 5)], header=("; MaxNodes: \u0664", "; MaxProcs: 4"))
    elif case == "huge":
        _swf(path, [_line(1, 0, 5)], header=("; MaxNodes: 4", "; MaxProcs: 4", "; MaxRuntime: 100000000000000000"))
    elif case == "thousands of digits":
        _swf(path, [_line(1, 0, 5)], header=("; MaxNodes: 4", "; MaxProcs: " + "9" * 5000))
    else:
        path = tmp_path / "log.csv"
        path.write_text("job_id,submit_time,duration\na,0,1\n")
    before = snapshot(tmp_path)
    out = tmp_path / "out"
    exit_2_one_line(capsys, ["reproduce", "rlscheduler", "--jobs", path, "--output", out, "--quiet"],
                    str(path.name), *fragments)
    assert not out.exists() and snapshot(tmp_path) == before


@pytest.mark.slow
def test_the_compiled_loop_gives_the_python_run():
    # the kernel compiles with the simulator's one-event loop (compiling takes about a minute on 2 busy cores)
    file, slice_, _ = rls.LOGS["SDSC-SP2"]
    log = rls.load_log(rls.shipped_log(file))
    start = rls.sequence_starts(log["jobs"], slice_)[0]
    for policy, backfill in rls.CELLS:
        assert (rls.run_sequence(log, start, policy, backfill, compiled=True)
                == rls.run_sequence(log, start, policy, backfill, compiled=False))


def _cells_computed_once(monkeypatch) -> None:
    """rls.cell remembers each cell by everything run_sequence reads (the jobs' arrays as read, the machine,
    the starts, the policy): a second run on a log read as the same jobs simulates nothing again."""
    real, memo = rls.cell, {}

    def cell(log, starts, policy, backfill):
        key = (*((log[k].dtype.str, log[k].tobytes()) for k in ("submit", "run", "request", "nodes")),
               int(log["machine"]), tuple(starts), policy, backfill)
        if key not in memo:
            memo[key] = real(log, starts, policy, backfill)
        return memo[key]

    monkeypatch.setattr(rls, "cell", cell)


def test_a_log_of_the_published_table_given_with_jobs_gets_its_paper_column(tmp_path, capsys, monkeypatch):
    # a log registered as one of the table's (as lublin_256.swf is Lublin-1), given recompressed under
    # another name with a comment added: recognised by its jobs, its rows named as in the paper and shown
    # beside the published cells (its cells are those of the first run when it is read as the same jobs).
    # The machine is busy but keeps up (load 0.84): a queue that only grows makes each decision scan
    # hundreds of jobs in Python (run times of up to 3,000 s, load 25, took 11 s of CPU instead of 2.6)
    _cells_computed_once(monkeypatch)
    lines = [_line(i, 37 * i, 20 + (i * 7919) % 60, procs=1 + i % 4, request=3600) for i in range(1, 2101)]
    plain = _swf(tmp_path / "plain.swf", lines)
    first = tmp_path / "first"
    assert main(["reproduce", "rlscheduler", "--jobs", str(plain), "--output", str(first), "--quiet"]) == 0
    ours = {(r["policy"], r["backfill"]): r["bsld"] for r in json.loads((first / "results.json").read_text())["rows"]}
    assert all(r is not None for r in ours.values())
    published = {cell: round(v, 2) + (0.5 if cell == ("sjf", True) else 0.0) for cell, v in ours.items()}
    key = rls.log_fingerprint(rls.load_log(plain))
    monkeypatch.setitem(rls.PAPER_LOGS, key, ("Lublin-1", 0, published))
    copy = tmp_path / "renamed.swf.gz"
    with gzip.open(copy, "wt") as fh:
        fh.write("; a comment of mine\n" + plain.read_text())
    out = tmp_path / "out"
    capsys.readouterr()
    assert main(["reproduce", "rlscheduler", "--jobs", str(copy), "--output", str(out)]) == 0
    assert f"{copy}: the paper's Lublin-1 log (the same jobs)" in capsys.readouterr().err
    rows = json.loads((out / "results.json").read_text())["rows"]
    assert [(r["log"], r["policy"], r["backfill"], r["bsld"], r["paper"], r["equal"]) for r in rows] == [
        ("Lublin-1", policy, backfill, ours[(policy, backfill)], published[(policy, backfill)],
         (policy, backfill) != ("sjf", True)) for policy, backfill in rls.CELLS]
    text = (out / "reproduce-rlscheduler.md").read_text()
    assert f"| Lublin-1 | SJF | yes | {published[('sjf', True)]:.2f} | {ours[('sjf', True)]:.2f} | **no** |" in text
    # a log of no published table keeps its file name and no paper column
    assert all(r["log"] == "plain.swf" and r["paper"] is None for r in
               json.loads((first / "results.json").read_text())["rows"])


def test_the_lublin_logs_are_known_by_the_jobs_the_protocol_reads(tmp_path):
    assert [(name, s, sorted(cells) == sorted(rls.CELLS)) for name, s, cells in rls.PAPER_LOGS.values()] == [
        ("Lublin-1", 0, True), ("Lublin-2", 0, True)]  # N = the log's size (their batch_job_slice 0)
    # the fingerprint is a fixed function of the jobs read: computed by it on the shipped HPC2N log when the
    # Lublin logs' keys were computed; it must not change, or those keys no longer find their logs
    assert rls.log_fingerprint(rls.load_log(rls.shipped_log("HPC2N-2002-2.2-cln.swf.gz"))) == "92fe2e11dc018371"
    lines = [_line(i, 10 * i, 5 + i % 7, procs=1 + i % 4, request=20) for i in range(1, 60)]
    plain = rls.load_log(_swf(tmp_path / "a.swf", lines))
    spaced = tmp_path / "b.swf.gz"
    with gzip.open(spaced, "wt") as fh:
        fh.write("; MaxNodes: 4\n; a comment\n; MaxProcs: 4\n" + "\n".join("  " + line.replace(" ", "   ")
                                                                            for line in lines) + "\n")
    assert rls.log_fingerprint(rls.load_log(spaced)) == rls.log_fingerprint(plain)
    changed = rls.load_log(_swf(tmp_path / "c.swf", lines[:-1] + [_line(59, 590, 6, procs=1, request=20)]))
    assert rls.log_fingerprint(changed) != rls.log_fingerprint(plain)
