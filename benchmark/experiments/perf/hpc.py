"""Perf section `hpc` (docs/performance.md): each HPC batch scheduler on a whole SWF log.

`benchmark perf --hpc [--perf-hpc-log FILE] [--perf-hpc-policies a,b] [--perf-hpc-repeat R]` runs
every policy of `benchmark reproduce hpc` (fcfs, sjf, easy, easy-p with the true run times,
easy-pp, conservative) once on the whole log — every kept job, one run from an empty machine, as
`reproduce hpc --whole` does — on the compiled cluster loop, by default on the shipped HPC2N log
(202,871 jobs, 240 processors). Per policy: the first run (which compiles the policy's loop, or
loads it from numba's cache), then the median of R more runs, each split into the simulation
(`schedulers.cluster.simulator.run`) and the whole run with the metrics of the table (bounded slowdown,
wait, utilisation and the cluster task's metrics). Target: a whole log per policy within
TARGET_S seconds. Reading the log is timed apart. The machine's load is read before and after
each policy.

May import benchmark (and through it atlas_data and schedulers).
"""

from __future__ import annotations

import os
import statistics
import time

TARGET_S = 10.0
DEFAULT_LOG = "HPC2N"
COMPILED = True  # the loop timed: the compiled one (tests run the section on the Python loop)


def add_arguments(parser) -> None:
    parser.add_argument("--perf-hpc-log", default=DEFAULT_LOG, metavar="LOG",
                        help="hpc section: a shipped log's name (SDSC-SP2, HPC2N, CTC-SP2) or an SWF file (default "
                             f"{DEFAULT_LOG}, 202,871 jobs)")
    parser.add_argument("--perf-hpc-policies", metavar="A,B,...",
                        help="hpc section: policies to time (default: all six of reproduce hpc)")
    from benchmark.options import integer

    parser.add_argument("--perf-hpc-repeat", type=integer(1, 100, "a number of runs"), default=3, metavar="R",
                        help="hpc section: timed runs per policy after the first (default 3; 1 to 100)")


def read_log(spec: str) -> dict:
    """A shipped log by name, or an SWF file, as `reproduce hpc` reads it."""
    from pathlib import Path

    from atlas_data.errors import InputError
    from benchmark.experiments.hpc import HPC_LOGS, load_log, shipped_log, with_site_limit

    if spec in HPC_LOGS:
        return with_site_limit(load_log(shipped_log(HPC_LOGS[spec][0]), exact_times=True))
    if not Path(spec).is_file():
        raise InputError(f"neither a shipped log ({', '.join(HPC_LOGS)}) nor a file", where="--perf-hpc-log")
    return with_site_limit(load_log(spec, exact_times=True))


def run(args) -> dict:
    from benchmark.experiments.hpc import check_estimates, policy_names, run_sequence
    from benchmark.progress import say
    from benchmark.results import format_table

    quiet = bool(getattr(args, "quiet", False))
    names = policy_names(args.perf_hpc_policies, "--perf-hpc-policies")
    repeat = int(args.perf_hpc_repeat)
    t0 = time.perf_counter()
    log = read_log(args.perf_hpc_log)
    check_estimates(log, names)
    read_s = time.perf_counter() - t0
    n = log["jobs"]
    say(f"[perf hpc] {args.perf_hpc_log}: {n:,} jobs on {log['machine']} processors, read in {read_s:.1f}s", quiet)
    rows = []
    for name in names:
        load_before = os.getloadavg()[0]
        started = time.perf_counter()
        first = run_sequence(log, 0, name, n, compiled=COMPILED)
        first_s = time.perf_counter() - started
        whole, sim = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            out = run_sequence(log, 0, name, n, compiled=COMPILED)
            whole.append(time.perf_counter() - started)
            sim.append(out["seconds"])
            assert out["bsld"] == first["bsld"], "a deterministic run gave two results"
        run_s = statistics.median(whole)
        rows.append({"policy": name, "jobs": n, "first_s": round(first_s, 2), "run_s": round(run_s, 2),
                     "simulation_s": round(statistics.median(sim), 2), "jobs_per_s": round(n / run_s),
                     "bsld": round(first["bsld"], 2), "load": round((load_before + os.getloadavg()[0]) / 2, 2)})
        say(f"[perf hpc] {name}: {run_s:.2f}s (first run {first_s:.1f}s)", quiet)
    ok = all(r["run_s"] <= TARGET_S for r in rows)
    if not quiet:
        print(f"HPC batch schedulers on the whole {args.perf_hpc_log} log ({n:,} jobs; read {read_s:.1f}s); "
              f"median of {repeat} runs after the first")
        print(format_table(rows, list(rows[0]), floatfmt="{:.4g}"))
        print(f"target: a whole log per policy within {TARGET_S:.0f}s: {'ok' if ok else 'not met'}")
    return {"log": args.perf_hpc_log, "jobs": n, "read_seconds": round(read_s, 2), "repeat": repeat, "rows": rows,
            "target_s": TARGET_S, "ok": ok}
