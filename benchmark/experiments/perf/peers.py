"""Perf section `peers`: the engine side by side with its peers, on the same instances, in one process.

For each n and each single-machine policy it times (CPU seconds, `time.process_time`, the minimum
of `--peers-repeat` runs):
- `engine`: `schedulers.engine.simulate` with its fast loops compiled (schedulers.jit; numba,
  warmed up before timing) — what every task runs from 100,000 jobs up, or always with
  ATLAS_BENCH_JIT=on; the Python loops when numba is not installed;
- `python`: the same fast loops as Python (ATLAS_BENCH_JIT=off) — what tasks run below 100,000 jobs;
- `heapq`: the minimal pure-Python heapq loop of that policy (benchmark.experiments.perf.peer_heapq), the limit a
  Python event loop can reach;
- `reference`: a transcription of the ATLAS paper's reference loops (benchmark.experiments.perf.peer_reference),
  for the policies it has: fifo, srpt, sprpt, rr, prr and its "LAS", which is `las-ref` here.
Costs are per event of the reference engine (`simulate(..., reference=True)`, the general loop
with every wake-up a policy asks for): the same divisor for all, so ratios of costs are
ratios of times per instance. The fast loops (schedulers.fastpath) for edf-p and las skip wake-ups
that change nothing and so process fewer events (`fast_events`); one divisor for all keeps every
cost ratio equal to the ratio of times on the same instance. The machine's load average is taken
before and after each policy. Every implementation's total completion time is checked against the
engine's (relative 10⁻⁹; the Python loops' schedule must be the compiled one bit for bit), so a fast
wrong loop cannot pass. Instances: benchmark.experiments.perf.scheduling.generated_jobs at offered load
`--peers-load`. May import schedulers and benchmark.
"""

from __future__ import annotations

import os
import time

import numpy as np

from benchmark.experiments.perf import peer_heapq, peer_reference
from benchmark.experiments.perf.scheduling import generated_jobs
from benchmark.progress import say
from benchmark.results import format_table
from schedulers import jit
from schedulers.engine import simulate
from schedulers.policy import get_policy

POLICIES = ("fifo", "sjf", "spjf", "srpt", "sprpt", "rr", "prr", "las", "las-ref", "edf-p")
HEAPQ_GOAL = 2.0  # engine within 2x of the bare heapq loop
COLUMNS = ["n", "policy", "events", "fast_events", "engine_us", "python_us", "heapq_us", "reference_us",
           "engine_vs_heapq", "python_vs_heapq", "reference_vs_engine", "load"]


#: --peers-sizes: each n runs ten policies `--peers-repeat` times on four implementations, two of them
#: pure-Python loops (the reference's are O(k) per event)
MAX_SIZE = 1_000_000
#: --peers-load: the generated instances' mean interarrival is the mean size / load; 0 has no arrivals
#: (infinite times), and beyond 0.01 … 100 the instance is an idle machine or one queue
MIN_LOAD, MAX_LOAD = 0.01, 100.0
MAX_REPEAT = 100


def add_arguments(parser) -> None:
    from benchmark.options import integer, integers, number

    parser.add_argument("--peers-sizes", type=integers(1, MAX_SIZE, "a number of jobs"), default="2000,20000",
                        help=f"job counts for the peers section (default 2000,20000; each 1 to {MAX_SIZE:,})")
    parser.add_argument("--peers-load", type=number(MIN_LOAD, MAX_LOAD, "an offered load"), default=0.9,
                        help="offered load of the generated instances (default 0.9: busy, the active set stays small, "
                             f"which favours the reference's O(k) loops; {MIN_LOAD:g} to {MAX_LOAD:g})")
    parser.add_argument("--peers-repeat", type=integer(1, MAX_REPEAT, "a number of runs"), default=7,
                        help=f"runs per timing; the minimum counts (default 7; 1 to {MAX_REPEAT})")


def heapq_loop(name: str, submit, size, predicted):
    """The minimal heapq loop of policy `name` (benchmark.experiments.perf.peer_heapq) on Python lists."""
    H = peer_heapq
    return {
        "fifo": lambda: H.non_preemptive(submit, size),
        "sjf": lambda: H.non_preemptive(submit, size, size),
        "spjf": lambda: H.non_preemptive(submit, size, predicted),
        "srpt": lambda: H.srpt(submit, size),
        "sprpt": lambda: H.one_at_a_time(submit, size, predicted, "sprpt"),
        "las-ref": lambda: H.one_at_a_time(submit, size, predicted, "las-ref"),
        "edf-p": lambda: H.edf_p(submit, size, predicted),
        "rr": lambda: H.rr(submit, size),
        "prr": lambda: H.prr(submit, size, predicted),
        "las": lambda: H.las(submit, size),
    }[name]


def _paired(impls: dict, repeat: int):
    """Minimum CPU seconds of each implementation over `repeat` rounds; each round runs all of them
    one after the other, so that a change of machine load hits every implementation alike."""
    best = {name: float("inf") for name in impls}
    out = {}
    for _ in range(max(1, repeat)):
        for name, fn in impls.items():
            t0 = time.process_time()
            out[name] = fn()
            best[name] = min(best[name], time.process_time() - t0)
    return best, out


def _same_total(total: float, engine_total: float) -> bool:
    return abs(total - engine_total) <= 1e-9 * abs(engine_total)


def _simulate(jobs, name: str, mode: str):
    with jit.setting(mode):
        return simulate(jobs, get_policy(name)())


def measure(n: int, repeat: int, load: float = 0.9, seed: int = 0) -> list[dict]:
    """One row per policy at n jobs; raises if a peer's total completion time differs from the engine's."""
    jobs = generated_jobs(n, seed=seed, load=load)
    submit, size, predicted = jobs.submit_time.tolist(), jobs.size.tolist(), jobs.predicted.tolist()
    records = peer_reference.jobs_from_lists(submit, size, predicted)
    mode = "on" if jit.available() else "off"
    rows = []
    for name in POLICIES:
        load_before = os.getloadavg()[0]
        _simulate(jobs, name, mode)  # compiles the loop, or loads it from numba's cache: not timed
        impls = {"engine": lambda: _simulate(jobs, name, mode), "python": lambda: _simulate(jobs, name, "off"),
                 "heapq": heapq_loop(name, submit, size, predicted)}
        if name in peer_reference.POLICIES:
            impls["reference"] = lambda: peer_reference.POLICIES[name](records)
        best, out = _paired(impls, repeat)
        result, python = out["engine"], out["python"]
        if not (np.array_equal(result.completion_time, python.completion_time) and result.events == python.events):
            raise AssertionError(f"compiled {name} at n={n}: not the Python loop's schedule")
        engine_total = float(result.completion_time.sum())
        if not _same_total(sum(out["heapq"]), engine_total):
            raise AssertionError(f"heapq {name} at n={n}: total completion {sum(out['heapq'])!r} != engine {engine_total!r}")
        if "reference" in out and not _same_total(out["reference"][0], engine_total):
            raise AssertionError(f"reference {name} at n={n}: total completion {out['reference'][0]!r} != engine {engine_total!r}")
        t_engine, t_python, t_heapq, t_ref = best["engine"], best["python"], best["heapq"], best.get("reference")
        events = simulate(jobs, get_policy(name)(), reference=True).events  # the common divisor
        per_event = 1e6 / events
        rows.append({
            "n": n, "policy": name, "events": events, "fast_events": result.events,
            "engine_us": t_engine * per_event, "python_us": t_python * per_event, "heapq_us": t_heapq * per_event,
            "reference_us": None if t_ref is None else t_ref * per_event,
            "engine_vs_heapq": t_engine / t_heapq, "python_vs_heapq": t_python / t_heapq,
            "reference_vs_engine": None if t_ref is None else t_ref / t_engine,
            "load": round((load_before + os.getloadavg()[0]) / 2, 2),
        })
    return rows


def run(args) -> dict:
    sizes = list(args.peers_sizes)
    backend = "compiled (numba)" if jit.available() else "Python (numba is not installed: pip install 'atlas-bench[fast]')"
    rows = []
    for n in sizes:
        rows += measure(n, args.peers_repeat, args.peers_load)
        say(f"  peers n={n:>8} done", args.quiet)
    print(f"engine = simulate's fast loops, {backend}; python = the same loops as Python (ATLAS_BENCH_JIT=off)")
    print("CPU µs per event of the reference engine (events; fast_events: those the fast loops processed), minimum of "
          f"{args.peers_repeat}; engine_vs_heapq = engine time / bare heapq loop time (goal ≤ {HEAPQ_GOAL:g}), "
          "reference_vs_engine = reference loops' time / engine time (goal > 1); load = 1-min load average")
    print(format_table(rows, COLUMNS, floatfmt="{:.2f}"))
    worst = max(row["engine_vs_heapq"] for row in rows)
    worst_python = max(row["python_vs_heapq"] for row in rows)
    slowest = min((row["reference_vs_engine"] for row in rows if row["reference_vs_engine"] is not None), default=None)
    print(f"\nworst engine/heapq ratio {worst:.2f} (goal ≤ {HEAPQ_GOAL:g}; the Python loops: {worst_python:.2f}); "
          + (f"smallest reference/engine ratio {slowest:.2f} (goal > 1)" if slowest is not None else ""))
    return {"rows": rows, "backend": backend, "load_offered": args.peers_load, "worst_engine_vs_heapq": worst,
            "worst_python_vs_heapq": worst_python, "smallest_reference_vs_engine": slowest,
            "cpu_count": os.cpu_count(), "repeat": args.peers_repeat}
