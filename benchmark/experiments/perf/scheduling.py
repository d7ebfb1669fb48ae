"""Perf section `scheduling`: every single-machine policy at n = 10⁴, 10⁵, 10⁶ generated jobs, and
the engine's speed-up over the plain O(n²) simulators (schedulers.naive) at n = 20,000 for the
sharing policies rr, prr and las (docs/performance.md).

Generated instance: Poisson arrivals at load 1.5 (overloaded, as a single machine fed the real
traces is, so many jobs are active at once), log-normal sizes (σ = 1.5, mean 60 s),
p̂ = p·exp(0.5 Z) with its spread 0.5 (what gittins and serpt read). Beside every registered policy,
the revising settings (REVISED, on the engine: a revision is a wake-up of the engine) and `sprpt`
itself on the engine (`sprpt engine`), the like-for-like reference of their cost per event; the
events column says how many events each took. May import schedulers and benchmark.
"""

from __future__ import annotations

import math
import time

import numpy as np

from benchmark.progress import say
from benchmark.results import format_table
from schedulers import jit
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.naive import simulate_naive
from schedulers.policy import get_policy, policy_names, resolve_policy

REVISED = ("sprpt(revision='double')", "pspjf(revision='double')", "edf-p(revision='double')", "prr(revision='double')")
ENGINE = "sprpt engine"  # sprpt on the reference engine instead of its specialised loop


#: --sizes: each n is generated and run by every single-machine policy (about 1 GB at 10⁷ jobs)
MAX_SIZE = 10_000_000
#: the engine's runs timed against each plain simulator's one (the fastest counts)
NAIVE_ENGINE_REPEAT = 3
#: --naive-n: the plain simulators are O(n²) (20,000 jobs: about a minute for the three)
MAX_NAIVE_N = 100_000


def add_arguments(parser) -> None:
    from benchmark.options import integer, integers

    parser.add_argument("--sizes", type=integers(1, MAX_SIZE, "a number of jobs"), default="10000,100000,1000000",
                        help=f"job counts for the scheduling section, comma-separated (default 10000,100000,1000000; "
                             f"each 1 to {MAX_SIZE:,})")
    parser.add_argument("--naive-n", type=integer(1, MAX_NAIVE_N, "a number of jobs"), default=20_000,
                        help=f"n for the O(n²) comparison (default 20000; 1 to {MAX_NAIVE_N:,})")


def generated_jobs(n: int, seed: int = 0, load: float = 1.5) -> JobSet:
    rng = np.random.default_rng(seed)
    sigma = 1.5
    size = rng.lognormal(np.log(60.0) - sigma**2 / 2, sigma, n)
    submit = np.cumsum(rng.exponential(size.mean() / load, n))
    predicted = size * np.exp(0.5 * rng.standard_normal(n))
    jobs = JobSet.from_arrays(submit, size, predicted)
    return jobs.with_predictions(jobs.predicted, 0.5)


def _policy(name: str):
    return get_policy(name)(stretch=50.0) if name == "edf" else get_policy(name)()


def run(args) -> dict:
    sizes = list(args.sizes)
    names = policy_names("single") + [resolve_policy(spec, "single") for spec in REVISED] + [ENGINE]
    figures: dict = {"policies": {}, "naive": {}, "loops": {}, "events": {}}
    rows = []
    for n in sizes:
        jobs = generated_jobs(n)
        row, events = {"n": n}, {}
        for name in names:
            t0 = time.perf_counter()
            if name == ENGINE:
                result = simulate(jobs, _policy("sprpt"), reference=True)
            else:
                result = simulate(jobs, _policy(name))
            row[name] = time.perf_counter() - t0
            events[name] = result.events
            say(f"  n={n:>8} {name:<9} {row[name]:7.2f} s  {result.events:>10} events "
                f"({row[name] / max(result.events, 1) * 1e6:.2f} µs each)", args.quiet)
        rows.append(row)
        figures["policies"][n] = {k: v for k, v in row.items() if k != "n"}
        figures["events"][n] = events
        figures["loops"][n] = jit.describe(n)
    print("seconds per policy (generated jobs, load 1.5; wall clock, the first compiled run of a process "
          "includes loading numba and its cached loops)")
    print(format_table(rows, ["n"] + names, floatfmt="{:.2f}"))
    for n, loops in figures["loops"].items():
        print(f"  n={n}: fast loops {loops}")
    print("\nrelative to srpt at the largest n:")
    last = rows[-1]
    print("  " + ", ".join(f"{k} {last[k] / last['srpt']:.2f}x" for k in names))

    n = args.naive_n
    jobs = generated_jobs(n, seed=1)
    naive_rows = []
    for name in ("rr", "prr", "las"):
        t_engine = math.inf
        for _ in range(NAIVE_ENGINE_REPEAT):  # the fastest of a few: one run of 0.02–0.07 s is at the mercy of the machine
            t0 = time.perf_counter()
            fast = simulate(jobs, _policy(name)).completion_time
            t_engine = min(t_engine, time.perf_counter() - t0)
        t0 = time.perf_counter()
        slow = simulate_naive(name, jobs.submit_time.tolist(), jobs.size.tolist(), jobs.predicted.tolist())
        t_naive = time.perf_counter() - t0
        agree = bool(np.allclose(fast, slow, rtol=1e-6))
        naive_rows.append({"policy": name, "engine_s": t_engine, "naive_s": t_naive, "speedup": t_naive / t_engine, "same_schedule": agree})
        figures["naive"][name] = naive_rows[-1]
    print(f"\nengine vs plain O(n²) loop at n = {n}")
    print(format_table(naive_rows, ["policy", "engine_s", "naive_s", "speedup", "same_schedule"], floatfmt="{:.2f}"))
    return figures
