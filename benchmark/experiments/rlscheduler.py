"""The experiment of `benchmark reproduce rlscheduler`: RLScheduler's FCFS / SJF bounded-slowdown table beside ours.

RLScheduler (Zhang et al., SC'20) publishes the average bounded slowdown of FCFS and SJF, with and
without backfilling, on two Parallel Workloads Archive logs (SDSC-SP2, HPC2N). This experiment runs
their evaluation protocol (docs/reproduce-rlscheduler.md) on the cluster simulator
(schedulers.cluster.simulator, kernel schedulers.cluster.policies.hpc_queue) and prints each cell beside
the published one: on the two shipped logs by default, on any SWF log with `--jobs FILE` (the table's
other two logs, Lublin-1 and Lublin-2, not shipped, are recognised by their jobs and get their cells).

The protocol, read from their environment (HPCSimPickJobs.py, job.py, compare-make-table.py):
- a log's jobs sorted by job number; jobs with run time 0 dropped, a negative run time (−1,
  missing) taken as 10 s; processors = max(allocated, requested); the requested time is the
  estimate, the run time where it is missing (−1);
- the machine: the header's MaxNodes nodes of MaxProcs / MaxNodes processors, a job taking
  ⌈processors / that⌉ nodes (MaxProcs when MaxNodes is missing, MaxNodes when MaxProcs is);
- 10 sequences of 1,024 consecutive jobs, each on an empty machine from its first submit; the
  starts drawn by their environment's generator (gym's `seeding.np_random(1)`: a NumPy RandomState
  keyed by a SHA-512 hash, here re-derived in `sequence_starts`) as `randint(1024, N − 1025)`, with
  N = 10,000 for SDSC-SP2 and HPC2N (their `batch_job_slice`) and the log's size otherwise;
- bounded slowdown max(1, (wait + run) / max(run, 10)) averaged over each sequence's jobs, then
  over the sequences.

With `--shake K` every cell also runs on K shaken copies of each sequence (input shaking, Tsafrir,
Ouaknine and Feitelson, MASCOTS 2007: the same jobs, each submit time moved by a small random
amount; atlas_data.shaking) and the table shows each result's spread and the differences between
policies over the copies.

`read_logs` reads and checks the logs, `measure` runs every cell, `write_outputs` writes
reproduce-rlscheduler.md and results.json (rows: log, policy, backfill, bsld, paper; with shaking the
bsld_shaken_* fields and the differences); `markdown` is also the block between the markers below.
The log reader `load_log`, the sequences and the shaking are shared with `benchmark reproduce hpc`
(benchmark.experiments.hpc, hpc_protocols).

Part of the experiments package (benchmark.experiments): may import benchmark.* below the commands
(progress, tasks), atlas_data and schedulers; never benchmark.commands.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import numpy as np

from atlas_data.errors import InputError
from atlas_data.outputs import command_line
from benchmark.progress import say

START, END = "<!-- reproduce-rlscheduler:start -->", "<!-- reproduce-rlscheduler:end -->"
PAPER = "RLScheduler: An Automated HPC Batch Job Scheduler Using Reinforcement Learning (SC'20)"
SEQUENCES, LENGTH, FIRST = 10, 1024, 1  # sequences, jobs per sequence, the generator's key (their --seed 1)
SHORT_RUN_S = 10  # the bounded slowdown's floor on the run time
# the logs of the published table: shipped file, their batch_job_slice, published bsld by (policy, backfill)
LOGS = {
    "SDSC-SP2": ("SDSC-SP2-1998-4.2-cln.swf.gz", 10_000,
                 {("fcfs", False): 1727.54, ("sjf", False): 2680.55, ("fcfs", True): 1595.12, ("sjf", True): 2167.84}),
    "HPC2N": ("HPC2N-2002-2.2-cln.swf.gz", 10_000,
              {("fcfs", False): 297.18, ("sjf", False): 157.71, ("fcfs", True): 127.38, ("sjf", True): 122.04}),
}
CELLS = (("fcfs", False), ("sjf", False), ("fcfs", True), ("sjf", True))
# the published table's two logs that are not shipped, by the fingerprint of the jobs the protocol reads
# from them (log_fingerprint): (their name in the paper, their batch_job_slice, their published cells),
# so that `--jobs` with one of them (lublin_256.swf and lublin_256_new2 of the RLScheduler repository,
# logs of the Lublin-Feitelson model) gets the paper's column, whatever the file's name, compression or
# comments. (The shipped two run without --jobs; given by path, they are any SWF log: N = the log's size.)
PAPER_LOGS = {
    "d3b89f0b5d30a764": ("Lublin-1", 0, {("fcfs", False): 7273.77, ("sjf", False): 277.35, ("fcfs", True): 235.82,
                                         ("sjf", True): 73.31}),
    "6fd5c82d2d37aa9d": ("Lublin-2", 0, {("fcfs", False): 7842.47, ("sjf", False): 787.89, ("fcfs", True): 247.61,
                                         ("sjf", True): 91.99}),
}


def shipped_log(file: str) -> Path:
    from importlib import resources

    return Path(str(resources.files("atlas_data").joinpath("resources", "pwa", file)))


# ----- the protocol ---------------------------------------------------------------------------------
def gym_np_random(key: int) -> np.random.RandomState:
    """gym 0.x `seeding.np_random(key)` (the version RLScheduler pins): the key reduced mod 2⁶⁴,
    hashed (SHA-512, first 8 bytes as little-endian 32-bit words), the hash split into 32-bit words
    seeding a NumPy RandomState."""
    key = key % 2 ** 64
    digest = hashlib.sha512(str(key).encode("utf8")).digest()[:8] + b"\0" * 4
    big = sum(2 ** (32 * i) * v for i, v in enumerate(struct.unpack("<3I", digest)))
    words = []
    while big > 0:
        big, word = divmod(big, 2 ** 32)
        words.append(word)
    rng = np.random.RandomState()
    rng.seed(words or [0])
    return rng


def sequence_starts(n_jobs: int, slice_: int = 0, sequences: int = SEQUENCES, length: int = LENGTH) -> list[int]:
    """The first job (index into the kept jobs) of each sequence: `randint(length, N − length − 1)`
    from the generator, N = `slice_` (0: the log's size), as their `reset_for_test`."""
    upper = (slice_ or n_jobs) - length - 1
    rng = gym_np_random(FIRST)
    return [int(rng.randint(length, upper)) for _ in range(sequences)]


#: the SWF fields `load_log` reads (the others are never held in memory)
LOG_FIELDS = ("job_number", "submit_time", "run_time", "allocated_processors", "requested_processors",
              "requested_time", "user_id")


def load_log(path, exact_times: bool = False) -> dict:
    """The log as the protocol reads it: {submit, run, request, nodes (per job), machine (nodes),
    path, jobs (how many), user (SWF field 12, −1 = missing), requested (field 9 as written), number
    (field 1), max_runtime (the header's MaxRuntime, 0 if absent), notes (what was dropped or kept
    specially, one line each: lines with no processor count or a run time of 0, dropped as `data
    import` drops them; lines with no run time, kept as 10 s jobs)};
    InputError for a log the protocol cannot run (read by atlas_data.adapters.swf_fields, only the
    LOG_FIELDS it uses).

    RLScheduler's reader (`exact_times` False, `reproduce rlscheduler`) takes whole seconds and jobs
    in job-number order whose submit times never decrease, and refuses any other log. With
    `exact_times` (`reproduce hpc`, which is not bound to their reader) a fractional submit, run or
    requested time is kept as it is written (a float), and a log whose submit times are out of
    job-number order is sorted by submit time (stably: job-number order among equal times), with a
    note saying how many jobs were out of order; a fractional job number or processor count (whole
    numbers in SWF) is still refused; and a line with no run time (−1), which cannot run, is dropped
    with the note `data import` prints for it (RLScheduler's 10 s jobs are their protocol's rule)."""
    from atlas_data.adapters import swf_fields, swf_header_int

    path_s = str(path)
    values, lines, header, _ = swf_fields(path, LOG_FIELDS, job_numbers=False)
    number, submit, run, allocated, requested, request, user = values.T
    whole = (number, allocated, requested) if exact_times else (number, submit, run, request)
    names = ("job number", "allocated processors", "requested processors") if exact_times else \
        ("job number", "submit time", "run time", "requested time")
    # their reader takes whole numbers (int()) and fails on others: the first line with one, its first field
    firsts = [(int(np.argmax(bad)), k) for k, column in enumerate(whole) if (bad := column != np.floor(column)).any()]
    if firsts:
        i, k = min(firsts)
        if exact_times:
            raise InputError(f"{names[k]} is {whole[k][i]:g}: a count, a whole number in SWF", path=path_s,
                             where=f"line {lines[i]}")
        raise InputError(f"the RLScheduler protocol reads whole seconds; {names[k]} is {whole[k][i]:g}", path=path_s,
                         where=f"line {lines[i]}")
    order = np.argsort(number, kind="stable")
    procs = np.maximum(allocated, requested)
    no_run = (run < 0) & (procs > 0) & (submit >= 0)
    if not exact_times:  # RLScheduler's rule: a job with no run time (−1) is a job of 10 s
        run = np.where(run < 0, 10.0, run)
    # a line that cannot run is dropped wherever it is in the log, with the note `data import` prints
    # for it (the reasons of atlas_data.adapters.import_swf, in its order: `no_submit_time` (submit time
    # −1, missing), `no_processors` (allocated and requested missing or ≤ 0), `non_positive_duration`)
    no_submit = submit[order] < 0
    no_procs = (procs[order] <= 0) & ~no_submit
    zero_run = (run[order] == 0) & ~no_procs & ~no_submit
    notes = [f"dropped {int(no_submit.sum())}: no_submit_time (submit time −1, missing; as `data import` drops "
             "them)"] if no_submit.any() else []
    notes += [f"dropped {int(no_procs.sum())}: no_processors (allocated and requested processors missing or <= 0; "
              "as `data import` drops them)"] if no_procs.any() else []
    if exact_times and no_run.any():
        notes.append(f"dropped {int(no_run.sum())}: no_duration (run time −1, missing; as `data import` drops them)")
    if zero_run.any():
        notes.append(f"dropped {int(zero_run.sum())}: non_positive_duration (a run time of 0; as `data import` drops them)")
    if no_run.any() and not exact_times:
        notes.append(f"kept {int(no_run.sum())} jobs with no run time (-1) as jobs of 10 s, as RLScheduler's "
                     "protocol does")
    keep = order[(run[order] > 0) & ~no_submit & ~no_procs]
    if not len(keep):
        raise InputError("no line of the log can run (" + "; ".join(notes) + ")", path=path_s)
    if exact_times and np.any(np.diff(submit[keep]) < 0):
        late = int((submit[keep][1:] < np.maximum.accumulate(submit[keep])[:-1]).sum())
        keep = keep[np.argsort(submit[keep], kind="stable")]
        notes.append(f"{late} job{' was' if late == 1 else 's were'} submitted before a job of a smaller number: "
                     "the jobs are taken in order of submit time (stably)")
    max_nodes, max_procs = swf_header_int(header, "MaxNodes", path), swf_header_int(header, "MaxProcs", path)
    max_procs = max_procs or max_nodes
    if not max_nodes and not max_procs:
        raise InputError("the header gives neither MaxNodes nor MaxProcs: the machine's size is unknown",
                         path=path_s)
    max_nodes = max_nodes or max_procs
    # the machine's nodes: within the simulator's bound of a cluster (the archive's largest has 40,960)
    from benchmark.tasks.config import MAX_NODES  # noqa: PLC0415

    if max_nodes > max_procs:
        raise InputError(f"header field MaxNodes: {max_nodes} nodes of {max_procs} processors (MaxProcs): a node "
                         "holds at least one processor", path=path_s)
    if max_nodes > MAX_NODES:
        raise InputError(f"header field MaxNodes: a machine of {max_nodes:,} nodes is more than the simulator's bound "
                         f"of {MAX_NODES:,} (docs/data-formats.md#limits)", path=path_s)
    per_node = max_procs / max_nodes
    nodes = np.ceil(procs[keep] / per_node).astype(np.int64)
    bad = (nodes > max_nodes) | (nodes < 1)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"a job of {procs[keep][i]:g} processors on a machine of {max_procs} (MaxProcs)",
                         path=path_s, where=f"line {lines[keep][i]}")
    req = request[keep]
    req = np.where(req == -1, run[keep], req)
    if np.any(np.diff(submit[keep]) < 0):
        i = int(np.argmax(np.diff(submit[keep]) < 0)) + 1
        raise InputError("submit times out of job-number order (the protocol's sequences are consecutive jobs)",
                         path=path_s, where=f"line {lines[keep][i]}")
    return {"submit": submit[keep], "run": run[keep], "request": req, "nodes": nodes, "machine": max_nodes,
            "path": path_s, "jobs": len(keep), "user": user[keep], "requested": request[keep],
            "number": number[keep], "max_runtime": swf_header_int(header, "MaxRuntime", path), "notes": notes}


def log_fingerprint(log: dict) -> str:
    """The jobs the protocol reads from a log (`load_log`: job number, submit, run and requested time,
    nodes, and the machine's nodes), hashed: the same for one log whatever its file's name, compression,
    comments or spacing."""
    fields = np.column_stack([log["number"], log["submit"], log["run"], log["request"], log["nodes"]]).astype("<f8")
    digest = hashlib.sha256(np.ascontiguousarray(fields).tobytes())
    digest.update(str(int(log["machine"])).encode())
    return digest.hexdigest()[:16]


def print_notes(name: str, log: dict) -> None:
    """The log's notes (what load_log dropped) on stderr, one line each, quiet or not."""
    import sys

    for note in log.get("notes", ()):
        print(f"{name}: note: {note}", file=sys.stderr)


def run_sequence(log: dict, start: int, policy: str, backfill: bool, length: int = LENGTH,
                 compiled: bool | None = None, shaken: tuple | None = None) -> float:
    """One sequence's average bounded slowdown on the cluster simulator; with `shaken` = (times,
    order) from atlas_data.shaking.shake on the sequence's relative submit times, on that shaken copy
    of the same jobs (in the copy's arrival order, each keeping its id: its place in the sequence)."""
    from schedulers import jit
    from schedulers.cluster import simulator
    from schedulers.cluster.policies.hpc_queue import HPCQueue, machine
    from schedulers.jobs import JobSet

    sl = slice(start, start + length)
    submit = log["submit"][sl] - log["submit"][start]
    run, request, nodes = log["run"][sl], log["request"][sl], log["nodes"][sl]
    n = len(run)
    ids = np.arange(n)
    if shaken is not None:
        submit, ids = shaken
        run, request, nodes = run[ids], request[ids], nodes[ids]
    jobs = JobSet(job_id=ids.astype(str).astype(object), submit_time=submit.astype(np.float64),
                  size=run.astype(np.float64), predicted=request.astype(np.float64),
                  gpus=nodes.astype(np.int64), tenant=np.zeros(n, np.int64), tenant_names=("all",),
                  weight=np.ones(n), time_offset=0.0)
    if compiled is None:
        compiled = jit.use_compiled(n, jit.CLUSTER_AUTO_MIN_JOBS)  # a sequence is small: Python beats compiling
    state = simulator.run(jobs, HPCQueue(sjf=policy == "sjf", backfill=backfill), compiled,
                          cluster=machine(log["machine"]))
    wait = state.start - submit
    return float(np.mean(np.maximum(1.0, (wait + run) / np.maximum(run, SHORT_RUN_S))))


def cell(log: dict, starts: list[int], policy: str, backfill: bool) -> float:
    return float(np.mean([run_sequence(log, s0, policy, backfill) for s0 in starts]))


# ----- input shaking (docs/reproduce-rlscheduler.md#input-shaking) ----------------------------------
MAX_SHAKE_COPIES = 1000  # each copy costs as much as the unshaken run (about 10 s on the two logs)
MAX_SHAKE_SHIFT_S = 86_400  # a day: beyond it a copy is no longer a slight perturbation of the log
DEFAULT_SHAKE_SHIFT_S = 60
# the policy differences shown with their spread: (a, b) is a − b
PAIRS = ((("sjf", False), ("fcfs", False)), (("sjf", True), ("fcfs", True)),
         (("fcfs", True), ("fcfs", False)), (("sjf", True), ("sjf", False)))


def shaken_sequences(log: dict, starts: list[int], copies: int, max_shift_s: int, seed: int,
                     length: int = LENGTH) -> list[list[tuple]]:
    """copies × sequences shaken copies (times, order) of the same jobs the protocol selects (`length`
    jobs from each start): each sequence's relative submit times shaken (atlas_data.shaking), drawn
    once and shared by every cell (paired comparisons)."""
    from atlas_data.shaking import shaken_copy

    return [[shaken_copy(log["submit"][s0:s0 + length] - log["submit"][s0], max_shift_s, seed, k, i)
             for i, s0 in enumerate(starts)] for k in range(copies)]


def shaken_cell(log: dict, starts: list[int], shaken: list[list[tuple]], policy: str, backfill: bool) -> list[float]:
    """The cell's result on each shaken copy (the mean over the copy's sequences)."""
    return [float(np.mean([run_sequence(log, s0, policy, backfill, shaken=copy[i]) for i, s0 in enumerate(starts)]))
            for copy in shaken]


def shaken_fields(values: list[float]) -> dict:
    """A row's shaken results: the copies' bounded slowdowns, their mean and central 95 % range."""
    from atlas_data.shaking import spread

    return {"shaken_copies": len(values), **{f"bsld_shaken_{k}": v for k, v in spread(values).items()},
            "bsld_shaken": values}


SHAKEN_HEAD, SHAKEN_RULE = " shaken: mean | shaken: 95 % range |", "---:|---:|"


def shaken_caption(shaking: dict, what: str) -> str:
    """The sentence that says what the shaken columns hold (`what`: what ran on the copies)."""
    return (f" Shaken: {what} on {shaking['copies']} copies of every sequence whose submit times each moved by a "
            f"random whole number of seconds in ±{shaking['max_shift_s']} s (seed {shaking['seed']}): their mean "
            "and the central 95 % of them (docs/reproduce-rlscheduler.md#input-shaking).")


def shaken_cells(row: dict) -> str:
    """The shaken columns of a table row."""
    return f" {row['bsld_shaken_mean']:.2f} | {row['bsld_shaken_lo']:.2f} – {row['bsld_shaken_hi']:.2f} |"


def _label(policy: str, backfill: bool) -> str:
    return policy.upper() + (" + backfilling" if backfill else "")


def differences(rows: list[dict]) -> list[dict]:
    """For each log and PAIRS (a, b): a − b, unshaken and over the shaken copies (paired_differences)."""
    return paired_differences(rows, PAIRS, lambda r: (r["policy"], r["backfill"]), lambda k: _label(*k))


def paired_differences(rows: list[dict], pairs, key, name=str) -> list[dict]:
    """For each log and pair (a, b) of row keys (`key(row)`; `name(key)` in the output): a − b of the
    bounded slowdown unshaken, over the shaken copies (copy by copy: both rows ran on the same copy)
    and whether every copy gives it the unshaken sign. A pair with a row missing is left out."""
    from atlas_data.shaking import spread

    by = {(r["log"], key(r)): r for r in rows}
    out = []
    for log in dict.fromkeys(r["log"] for r in rows):
        for a, b in pairs:
            ra, rb = by.get((log, a)), by.get((log, b))
            if ra is None or rb is None:
                continue
            per_copy = np.subtract(ra["bsld_shaken"], rb["bsld_shaken"])
            base = ra["bsld"] - rb["bsld"]
            out.append({"log": log, "a": name(a), "b": name(b), "diff": base, **{
                f"diff_shaken_{k}": v for k, v in spread(per_copy).items()},
                "same_sign": bool(np.all(np.sign(per_copy) == np.sign(base)))})
    return out


def differences_table(diffs: list[dict]) -> list[str]:
    """The Markdown lines of the differences' table (empty without differences)."""
    if not diffs:
        return []
    lines = ["", "Differences between policies (a − b, bounded slowdown), unshaken and over the shaken copies "
             "(both cells on the same copy):", "",
             "| log | a | b | unshaken | shaken: mean | shaken: 95 % range | same sign on every copy |",
             "|---|---|---|---:|---:|---:|---|"]
    for d in diffs:
        lines.append(f"| {d['log']} | {d['a']} | {d['b']} | {d['diff']:+.2f} | {d['diff_shaken_mean']:+.2f} | "
                     f"{d['diff_shaken_lo']:+.2f} – {d['diff_shaken_hi']:+.2f} | "
                     f"{'yes' if d['same_sign'] else '**no**'} |")
    return lines


# ----- the experiment ------------------------------------------------------------------------------
def markdown(rows: list[dict], source: str, elapsed_s: float, shaking: dict | None = None,
             diffs: list[dict] = ()) -> str:
    import datetime

    day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    lines = [f"Produced by `benchmark reproduce rlscheduler` on {source} ({day}, {elapsed_s:.0f} s). Paper column: "
             f"*{PAPER}*, average bounded slowdown over {SEQUENCES} sequences of {LENGTH:,} jobs; ours: their "
             "protocol on the cluster simulator (docs/reproduce-rlscheduler.md)."]
    head, rule = "| log | policy | backfilling | paper | ours | equal to 2 decimals |", "|---|---|---|---:|---:|---|"
    if shaking:
        lines[0] += shaken_caption(shaking, "the same cells")
        head, rule = head + SHAKEN_HEAD, rule + SHAKEN_RULE
    lines += ["", head, rule]
    for r in rows:
        paper = "—" if r["paper"] is None else f"{r['paper']:.2f}"
        same = "—" if r["paper"] is None else ("yes" if r["equal"] else "**no**")
        line = (f"| {r['log']} | {r['policy'].upper()} | {'yes' if r['backfill'] else 'no'} | {paper} | "
                f"{r['bsld']:.2f} | {same} |")
        if shaking:
            line += shaken_cells(r)
        lines.append(line)
    lines += differences_table(diffs)
    return "\n".join(lines) + "\n"


def read_logs(jobs: str | None, quiet: bool = False) -> tuple[list[tuple], str]:
    """The logs to run, read and checked before the first simulation: ([(name, log, slice, the paper's
    cells)], the source for the caption). `jobs`: an SWF log's path, or None for the two shipped logs;
    a log that is one of the paper's (by its jobs, `log_fingerprint`) gets the paper's cells."""
    if jobs:
        log = load_log(jobs)
        name, slice_, paper = PAPER_LOGS.get(log_fingerprint(log), (Path(jobs).name, 0, {}))
        if paper:
            say(f"{jobs}: the paper's {name} log (the same jobs): its cells are shown beside ours", quiet)
        todo = [(name, log, slice_, paper)]
        source = f"the SWF log {jobs}" + (f" (the paper's {name})" if paper else "")
    else:
        todo = [(name, load_log(shipped_log(file)), slice_, paper) for name, (file, slice_, paper) in LOGS.items()]
        source = "the shipped SDSC-SP2 and HPC2N logs"
    for name, log, slice_, _ in todo:  # every log checked before the first simulation
        print_notes(name, log)
        if (slice_ or log["jobs"]) - LENGTH - 1 <= LENGTH:
            raise InputError(f"{log['jobs']} jobs kept: the protocol needs at least {2 * LENGTH + 2}", path=log["path"],
                             where="--jobs")
    return todo, source


def measure(todo: list[tuple], shaking: dict | None = None, quiet: bool = False) -> tuple[list[dict], list[dict]]:
    """Every cell on every log of `todo` (read_logs), with `shaking` ({copies, seed, max_shift_s}) on
    shaken copies too: (the rows, the differences between policies over the copies)."""
    rows = []
    copies = shaking["copies"] if shaking else 0
    for name, log, slice_, paper in todo:
        starts = sequence_starts(log["jobs"], slice_)
        shaken = shaken_sequences(log, starts, copies, shaking["max_shift_s"], shaking["seed"]) if shaking else []
        for policy, backfill in CELLS:
            say(f"{name}: {policy.upper()}{' with backfilling' if backfill else ''}"
                f"{f' (and {copies} shaken copies)' if shaking else ''}", quiet)
            bsld = cell(log, starts, policy, backfill)
            published = paper.get((policy, backfill))
            row = {"log": name, "policy": policy, "backfill": backfill, "bsld": bsld, "paper": published,
                   "equal": None if published is None else f"{bsld:.2f}" == f"{published:.2f}", "starts": starts}
            if shaking:
                row.update(shaken_fields(shaken_cell(log, starts, shaken, policy, backfill)))
            rows.append(row)
    return rows, differences(rows) if shaking else []


def write_outputs(folder: Path, rows: list[dict], source: str, elapsed_s: float, shaking: dict | None = None,
                  diffs: list[dict] = ()) -> str:
    """Write reproduce-rlscheduler.md and results.json into `folder`; the markdown."""
    text = markdown(rows, source, elapsed_s, shaking, diffs)
    (folder / "reproduce-rlscheduler.md").write_text(text)
    summary = {"paper": PAPER, "source": source, "sequences": SEQUENCES, "length": LENGTH, "rows": rows,
               "shaking": shaking, "differences": list(diffs), "elapsed_s": elapsed_s, "complete": True,
               "argv": command_line()}
    (folder / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    return text
