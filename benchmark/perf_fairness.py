"""Perf section `fairness` (docs/performance.md): the Venus-like scenario — 11,304 jobs, 100 × 8 GPUs, two
weeks, lease 900 s, interval 10 s — per policy, against the 30 s target (for `astraea`; the other
policies are reported beside it). Simulation time only (workload generation timed separately).

May import schedulers and benchmark.
"""

from __future__ import annotations

import time

import numpy as np

from benchmark.progress import say

TARGET_S = 30.0


def add_arguments(parser) -> None:
    parser.add_argument("--fairness-policies", help="policies for --fairness (default: all cluster policies)")


def run(args) -> dict:
    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.jobs import JobSet
    from schedulers.policy import get_policy, policy_names
    from schedulers.cluster.scenarios import venus

    quiet = getattr(args, "quiet", False)
    t0 = time.perf_counter()
    sc = venus(seed=0)
    jobs = JobSet.from_frame(sc.jobs)
    weights = np.array([sc.tenant_weights[t] for t in jobs.tenant_names])
    gen_s = time.perf_counter() - t0
    names = getattr(args, "fairness_policies", None)
    names = [n.strip() for n in names.split(",")] if names else policy_names("cluster")
    figures: dict = {"jobs": jobs.n, "gpus": sc.nodes * sc.gpus_per_node, "generate_s": round(gen_s, 3),
                     "target_s": TARGET_S, "policies": {}}
    say(f"fairness perf: venus scenario, {jobs.n} jobs, {sc.nodes}x{sc.gpus_per_node} GPUs, "
        f"generated in {gen_s:.2f} s", quiet)
    for name in names:
        policy = get_policy(name, "cluster")(nodes=sc.nodes, gpus_per_node=sc.gpus_per_node, tenant_weights=weights)
        t1 = time.perf_counter()
        result = simulate_fairness(jobs, policy)
        wall = time.perf_counter() - t1
        figures["policies"][name] = {"seconds": round(wall, 3), "events": result.metrics["events"],
                                     "rounds": result.metrics["rounds"], "completed": result.metrics["completed"]}
        mark = "" if name != "astraea" else ("  (target < 30 s: met)" if wall < TARGET_S else "  (target < 30 s: MISSED)")
        say(f"  {name:13s} {wall:6.2f} s  {result.metrics['events']:6d} events  "
            f"{result.metrics['rounds']:5d} rounds  completed {result.metrics['completed']}{mark}", quiet)
    total = sum(p["seconds"] for p in figures["policies"].values())
    figures["all_policies_s"] = round(total, 3)
    say(f"  all {len(names)} policies: {total:.2f} s", quiet)
    return figures
