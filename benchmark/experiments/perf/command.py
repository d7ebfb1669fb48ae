"""Perf section `command`: what one whole `benchmark run` command costs against a bare heapq process
doing the same job on the same file (docs/performance.md, "Whole-command cost").

It writes `--command-jobs` generated jobs (benchmark.experiments.perf.scheduling.generated_jobs, load 1.5) as a
jobs CSV, then times, in `--command-repeat` rounds (each round runs both, one after the other, so a
change of machine load hits both alike), two fresh processes:
- `benchmark run --task scheduling --objective total_completion --jobs FILE --policies srpt
  --no-mlflow --quiet`: the console script's entry, start-up to exit — reading and checking the
  file, the normaliser, the simulation, per_job.parquet, results.json/.csv and the figures;
- `python -m benchmark.experiments.perf.peer_heapq FILE OUT`: the csv module, a bare heapq SRPT loop and a CSV of
  completion times (benchmark.experiments.perf.peer_heapq.srpt_process).
Wall seconds and CPU seconds (user + system of the child) are the medians of the rounds; the
ratio is command / bare process (goal ≤ COMMAND_GOAL). The bare process's ΣC_j must equal the
command's SRPT total completion (relative 10⁻⁹), so the two did the same work. The command's own
split (results.json `timings`) of the median round is printed beside it. May import benchmark and
schedulers.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark.options import integer
from benchmark.experiments.perf.scheduling import generated_jobs
from benchmark.progress import say
from benchmark.results import format_table

COMMAND_GOAL = 4.0  # a whole run within 4x a bare heapq process on the same file
# the console script's entry (benchmark.cli.entry), as `benchmark` runs it
_ENTRY = "import sys; sys.argv[0] = 'benchmark'; from benchmark.cli import entry; entry()"


def add_arguments(parser) -> None:
    parser.add_argument("--command-jobs", type=integer(1, 100_000_000, "a number of jobs"), default=200_000,
                        help="jobs in the CSV of the command section (default 200000; 1 to 100,000,000)")
    parser.add_argument("--command-repeat", type=integer(1, 1000, "a number of rounds"), default=3,
                        help="rounds of the command section; the medians count (default 3; 1 to 1,000)")


def write_jobs_csv(n: int, path: Path) -> None:
    """n generated jobs as a jobs CSV (job_id, submit_time, duration), floats written exactly (repr)."""
    jobs = generated_jobs(n)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("job_id,submit_time,duration\n")
        handle.writelines(f"j{i},{s!r},{p!r}\n" for i, (s, p) in enumerate(zip(jobs.submit_time.tolist(), jobs.size.tolist())))


def _timed(argv: list[str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, its stdout) of one process; a failure raises with its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {done.returncode}: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def measure(n: int, repeat: int, folder: Path) -> dict:
    """The medians of `repeat` rounds of the command and of the bare process on n generated jobs."""
    jobs = folder / "jobs.csv"
    write_jobs_csv(n, jobs)
    times: dict[str, list] = {"command": [], "bare": []}
    loads, splits, totals = [], [], {}
    for k in range(max(1, repeat)):
        loads.append(os.getloadavg()[0])
        out = folder / f"run-{k}"
        command = [sys.executable, "-c", _ENTRY, "run", "--task", "scheduling", "--objective", "total_completion",
                   "--jobs", str(jobs), "--policies", "srpt", "--no-mlflow", "--quiet", "--output", str(out)]
        wall, cpu, _ = _timed(command)
        times["command"].append((wall, cpu))
        doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
        splits.append(doc.get("timings", {}).get("stages_s", {}))
        totals["command"] = float(doc["rows"][0]["value"])
        wall, cpu, stdout = _timed([sys.executable, "-m", "benchmark.experiments.perf.peer_heapq", str(jobs), str(folder / "bare.csv")])
        times["bare"].append((wall, cpu))
        totals["bare"] = float(stdout.strip())
        loads.append(os.getloadavg()[0])
    if abs(totals["bare"] - totals["command"]) > 1e-9 * abs(totals["command"]):
        raise AssertionError(f"bare process ΣC_j {totals['bare']!r} != the command's SRPT value {totals['command']!r}")
    walls = {name: statistics.median(w for w, _ in runs) for name, runs in times.items()}
    cpus = {name: statistics.median(c for _, c in runs) for name, runs in times.items()}
    middle = sorted(range(len(splits)), key=lambda i: times["command"][i][0])[len(splits) // 2]
    return {"n": n, "rounds": max(1, repeat), "command_wall_s": walls["command"], "bare_wall_s": walls["bare"],
            "wall_ratio": walls["command"] / walls["bare"], "command_cpu_s": cpus["command"], "bare_cpu_s": cpus["bare"],
            "cpu_ratio": cpus["command"] / cpus["bare"], "command_walls_s": [w for w, _ in times["command"]],
            "bare_walls_s": [w for w, _ in times["bare"]], "command_stages_s": splits[middle],
            "load": [round(min(loads), 2), round(max(loads), 2)]}


def run(args) -> dict:
    with tempfile.TemporaryDirectory(prefix="atlas-perf-command-") as tmp:
        row = measure(args.command_jobs, args.command_repeat, Path(tmp))
        say(f"  command n={row['n']:>8} done", args.quiet)
    print(f"one whole command (`benchmark run --task scheduling --objective total_completion --policies srpt "
          f"--no-mlflow` on a {row['n']}-job CSV, start-up to exit) against a bare heapq SRPT process on the same "
          f"file; medians of {row['rounds']} rounds, load average {row['load'][0]}–{row['load'][1]}")
    print(format_table([row], ["n", "command_wall_s", "bare_wall_s", "wall_ratio", "command_cpu_s", "bare_cpu_s",
                               "cpu_ratio"], floatfmt="{:.2f}"))
    stages = ", ".join(f"{name} {seconds:.2f}" for name, seconds in row["command_stages_s"].items() if seconds >= 0.005)
    accounted = sum(row["command_stages_s"].values())
    print(f"the command's own split (s, the median round): {stages}; start-up, results and exit "
          f"{row['command_wall_s'] - accounted:.2f}")
    print(f"\nwhole-command / bare process: {row['wall_ratio']:.2f}x wall, {row['cpu_ratio']:.2f}x CPU "
          f"(goal ≤ {COMMAND_GOAL:g})")
    return {**row, "goal": COMMAND_GOAL}
