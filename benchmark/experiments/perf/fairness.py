"""Perf section `fairness` (docs/performance.md): every cluster policy on three workloads, with the
time and peak memory of each simulation.

- `venus`: the Venus-like scenario — 11,304 jobs, 100 × 8 GPUs, two weeks, lease 900 s,
  interval 10 s — against the 30 s target (for `astraea`; the other policies beside it);
- `philly`: the whole shipped Philly trace (82,247 jobs, 15 VCs) on the Philly scenario's
  210 × 8 GPUs, quotas ∝ the GPUs each VC requested over the whole trace, p̂ from the
  scenarios' error model p·exp(N(0, 0.9)) (the trace has none; timing only);
- `synthetic`: `--fairness-jobs N` jobs (default 1,000,000; 0 leaves it out) drawn like the Venus
  scenario over 14 · N / 11,304 days (at least one), so the 100 × 8 GPUs see Venus's jobs per day,
  its 24-hour cycle and busy and quiet days per tenant; target < 2 min per policy.

Simulation time only (workload generation timed separately; so is compiling or loading the
compiled cluster loop, which runs the built-in policies from 100,000 jobs when numba is installed:
each policy's line says which simulator ran it). `--fairness-limit S` (default 600 s;
0: none) stops a policy's simulation after S seconds and records it as stopped, so that the whole
section ends in bounded time even where a policy is far from the target (Unix only: a SIGALRM
timer). Peak memory is the process's peak
resident size during the policy's simulation (reset before each where Linux allows it; otherwise
the process's peak so far, which the figures then say). May import schedulers and benchmark.
"""

from __future__ import annotations

import contextlib
import signal
import time

import numpy as np

from benchmark.progress import say

TARGET_S = 30.0
SCALE_TARGET_S = 120.0
SCALE_JOBS = 1_000_000  # the job count the 2-minute target is for
LIMIT_S = 600.0  # default --fairness-limit: a policy's simulation is stopped after this long
#: --fairness-jobs: ten times the 10⁶ of the target (the workload and a run's state grow with it: a
#: policy's run at 10⁶ jobs peaks near 1 GB)
MAX_JOBS = 10_000_000


class Overtime(Exception):
    """A policy's simulation ran past --fairness-limit."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise Overtime in this (main) thread after `seconds` of wall time; no limit if 0 or where
    SIGALRM timers do not exist."""
    if not seconds or not hasattr(signal, "setitimer"):
        yield
        return

    def _overtime(signum, frame):
        raise Overtime()

    previous = signal.signal(signal.SIGALRM, _overtime)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
WORKLOADS = ("venus", "philly", "synthetic")


def add_arguments(parser) -> None:
    parser.add_argument("--fairness-policies", help="policies for --fairness (default: all cluster policies)")
    parser.add_argument("--fairness-workloads", default=",".join(WORKLOADS),
                        help=f"workloads for --fairness, comma-separated (default {','.join(WORKLOADS)})")
    from benchmark.options import MAX_SECONDS, integer, number

    parser.add_argument("--fairness-jobs", type=integer(0, MAX_JOBS, "a number of jobs"), default=1_000_000,
                        help=f"jobs in the synthetic multi-tenant workload of --fairness (default 1000000; 0 to "
                             f"{MAX_JOBS:,}; 0 leaves it out)")
    parser.add_argument("--fairness-limit", type=number(0.0, MAX_SECONDS, "a time limit in seconds"), default=LIMIT_S,
                        metavar="SECONDS", help=f"stop a policy's simulation after this long and record it as stopped "
                                                f"(default {LIMIT_S:g}; 0: no limit; at most 10^12)")


def venus_workload(n_jobs: int | None = None):
    """(JobSet, nodes, gpus per node, tenant weights in JobSet tenant order, description)."""
    from schedulers.cluster.scenarios import VENUS_DAYS, VENUS_JOBS, venus
    from schedulers.jobs import JobSet

    if n_jobs is None:
        sc = venus(seed=0)
    else:  # the same jobs per day on the same cluster, over more days (each with its own diurnal cycle)
        sc = venus(seed=0, n_jobs=n_jobs, days=max(1, round(VENUS_DAYS * n_jobs / VENUS_JOBS)))
    jobs = JobSet.from_frame(sc.jobs)
    weights = np.array([sc.tenant_weights[t] for t in jobs.tenant_names])
    return jobs, sc.nodes, sc.gpus_per_node, weights


def philly_workload():
    """The whole shipped Philly trace, quotas ∝ each VC's requested GPUs over the whole trace."""
    from atlas_data.adapters import shipped_trace
    from schedulers.cluster.scenarios import PHILLY_GPUS_PER_NODE, PHILLY_NODES, _scenario_predictions, vc_quotas
    from schedulers.jobs import JobSet

    trace, _card = shipped_trace("philly")
    quota = vc_quotas(trace, PHILLY_NODES * PHILLY_GPUS_PER_NODE)
    # the trace has no p̂: the predictive policies get the scenarios' error model (a timing run)
    rng = np.random.default_rng(0)
    trace = trace.assign(predicted_duration=_scenario_predictions(trace["duration"].to_numpy(float), rng))
    jobs = JobSet.from_frame(trace)
    requested = dict(zip(quota["tenant"], quota["requested_gpus"].astype(float)))
    weights = np.array([requested[t] for t in jobs.tenant_names])
    return jobs, PHILLY_NODES, PHILLY_GPUS_PER_NODE, weights


def _workload(name: str, n_jobs: int):
    if name == "venus":
        return venus_workload()
    if name == "philly":
        return philly_workload()
    return venus_workload(n_jobs)


def _warm_up(jobs, names, nodes, gpn, weights, quiet: bool = False) -> dict | None:
    """Compile (or load from numba's cache) the compiled cluster loops of `names` on a few jobs, when
    they will run compiled at this size: {policy: seconds} (a policy whose kernel an earlier one
    shares loads nothing), or None."""
    from schedulers import jit
    from schedulers.cluster.metrics import compiled_policies
    from schedulers.policy import get_policy

    if not jit.use_compiled(jobs.n, jit.CLUSTER_AUTO_MIN_JOBS):
        return None
    kernels = [n for n in names if n in compiled_policies()]
    if not kernels:
        return None
    import dataclasses

    from schedulers.cluster import simulator
    from schedulers.cluster.settings import ClusterSettings

    head = slice(0, 50)
    few = dataclasses.replace(jobs, job_id=jobs.job_id[head], submit_time=jobs.submit_time[head], size=jobs.size[head],
                              predicted=None if jobs.predicted is None else jobs.predicted[head],
                              gpus=jobs.gpus[head], tenant=jobs.tenant[head], weight=jobs.weight[head])
    seconds = {}
    for name in kernels:
        t0 = time.perf_counter()
        simulator.run(few, get_policy(name, "cluster")(), compiled=True, notice=lambda text: say(f"  {text}", quiet),
                      cluster=ClusterSettings.of(nodes=nodes, gpus_per_node=gpn, tenant_weights=weights))
        seconds[name] = round(time.perf_counter() - t0, 3)
    return seconds


def run(args) -> dict:
    from atlas_data.errors import InputError
    from benchmark.timings import peak_rss_mib, reset_peak_rss
    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.cluster.settings import ClusterSettings
    from schedulers.policy import get_policy, policy_names

    quiet = getattr(args, "quiet", False)
    names = getattr(args, "fairness_policies", None)
    names = [n.strip() for n in names.split(",")] if names else policy_names("cluster")
    workloads = [w.strip() for w in str(getattr(args, "fairness_workloads", ",".join(WORKLOADS))).split(",") if w.strip()]
    n_jobs = int(getattr(args, "fairness_jobs", 1_000_000))
    limit = float(getattr(args, "fairness_limit", LIMIT_S))
    for w in workloads:
        if w not in WORKLOADS:
            raise InputError(f"unknown workload {w!r} (choose from {', '.join(WORKLOADS)})", where="--fairness-workloads")
    if n_jobs == 0:
        workloads = [w for w in workloads if w != "synthetic"]
    figures: dict = {"target_s": TARGET_S, "scale_target_s": SCALE_TARGET_S, "limit_s": limit, "workloads": {}}
    for workload in workloads:
        t0 = time.perf_counter()
        jobs, nodes, gpn, weights = _workload(workload, n_jobs)
        gen_s = time.perf_counter() - t0
        section = {"jobs": jobs.n, "tenants": len(jobs.tenant_names), "gpus": nodes * gpn,
                   "generate_s": round(gen_s, 3), "policies": {}}
        figures["workloads"][workload] = section
        if workload == "venus":  # the figures of earlier versions, where venus was the only workload
            figures.update(jobs=jobs.n, gpus=nodes * gpn, generate_s=section["generate_s"], policies=section["policies"])
        say(f"fairness perf: {workload}, {jobs.n} jobs, {len(jobs.tenant_names)} tenants, {nodes}x{gpn} GPUs, "
            f"loaded in {gen_s:.2f} s", quiet)
        warm = _warm_up(jobs, names, nodes, gpn, weights, quiet)
        cluster = ClusterSettings.of(nodes=nodes, gpus_per_node=gpn, tenant_weights=weights)
        if warm is not None:
            section["compiled_loop_load_s"] = round(sum(warm.values()), 3)
            section["compiled_loop_load_s_by_policy"] = warm
            say(f"  the compiled cluster loops: compiled or loaded in {sum(warm.values()):.2f} s ("
                + ", ".join(f"{name} {s:.2f}" for name, s in warm.items()) + "; not in the times below)", quiet)
        for name in names:
            policy = get_policy(name, "cluster")()
            fresh = reset_peak_rss()
            t1 = time.perf_counter()
            try:
                with time_limit(limit):
                    result = simulate_fairness(jobs, policy, cluster=cluster)
            except Overtime:
                del policy
                section["policies"][name] = {"seconds": None, "stopped_after_s": limit, "completed": None}
                mark = "  (target < 2 min: MISSED)" if workload == "synthetic" and jobs.n >= SCALE_JOBS else ""
                say(f"  {workload:9s} {name:13s} > {limit:g} s: stopped at --fairness-limit{mark}", quiet)
                continue
            wall = time.perf_counter() - t1
            peak = peak_rss_mib()
            section["policies"][name] = {
                "seconds": round(wall, 3), "peak_rss_mib": None if peak is None else round(peak, 1),
                "peak_is_per_policy": fresh, "events": result.metrics["events"],
                "rounds": result.metrics["rounds"], "completed": result.metrics["completed"], "loop": result.loop}
            mark = ""
            if workload == "venus" and name == "astraea":
                mark = "  (target < 30 s: met)" if wall < TARGET_S else "  (target < 30 s: MISSED)"
            if workload == "synthetic" and jobs.n >= SCALE_JOBS:
                mark = "  (target < 2 min: met)" if wall < SCALE_TARGET_S else "  (target < 2 min: MISSED)"
            elif workload == "synthetic":  # queues, hence costs, grow with the span: no extrapolation
                mark = "  (the target < 2 min is for 10⁶ jobs)"
            memory = "" if peak is None else f"  peak {peak:6.0f} MiB"
            say(f"  {workload:9s} {name:13s} {wall:7.2f} s{memory}  {result.metrics['events']:8d} events  "
                f"{result.metrics['rounds']:7d} rounds  completed {result.metrics['completed']}  {result.loop}{mark}",
                quiet)
            del result, policy
        stopped = [n for n, p in section["policies"].items() if p["seconds"] is None]
        total = sum(p["seconds"] if p["seconds"] is not None else p["stopped_after_s"] for p in section["policies"].values())
        section["all_policies_s"] = round(total, 3)
        section["stopped"] = stopped
        if workload == "venus":
            figures["all_policies_s"] = section["all_policies_s"]
        more = f" (at least: {len(stopped)} stopped at the limit)" if stopped else ""
        say(f"  {workload}: all {len(names)} policies {total:.2f} s{more}", quiet)
    return figures
