"""The cluster simulator (docs/fairness.md): `run(jobs, policy, compiled)` simulates a cluster policy
on a set of jobs, as Python or compiled (schedulers.cluster.jitshared: the same event loop), and returns
its `RunState`, what schedulers.cluster.metrics reads. `arguments` turns the jobs, the cluster
(a ClusterSettings: the simulator's, not the policy's) and the policy's settings into the loop's records, `event_budget` bounds the loop's events.

May import numpy, schedulers.jit, schedulers.policy_base (lazily) and the simulator's modules.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections import namedtuple

import numpy as np

from schedulers.cluster import jitglue, jitshared
from schedulers.cluster.ledgers import LedgerReadings
from schedulers.cluster.loop import collect, run_python
from schedulers.cluster.settings import ClusterSettings
from schedulers.cluster.state import (BUDGET, CANDIDATES, DECISIONS, DROPPED, EVENTS, GAPS,
                                      MOST_CANDIDATES, ROUNDS, STUCK_AFTER, VIOLATION, VIOLATION_JOB, VIOLATIONS,
                                      ClusterArrays, Config, JobArrays, tenant_quotas)
from schedulers.cluster.stretches import NODE_MAX, PARTS_MAX, RecordLimitError
from schedulers.jit import EventBudgetExceeded

#: a first call that takes longer than this to compile or load its functions gets the notice of `run`
COMPILE_NOTICE_AFTER_S = 2.0


class RunState:
    """What schedulers.cluster.metrics reads from a policy after its run, filled from the loop's
    Outcome: ledgers, per-job counters, round counters, executed allocations."""

    def __init__(self, name, cluster, out, quota, loop):
        counters = out.counters
        self.name = name
        self.loop = loop
        self.cluster = cluster
        self.M = cluster.total_gpus
        self.rounds = int(counters[ROUNDS])
        self.dropped_choices = int(counters[DROPPED])
        self.work_conservation_gaps = int(counters[GAPS])
        self.events = int(counters[EVENTS])
        self.decisions = int(counters[DECISIONS])  # rounds and fills (what the candidates counts below are over)
        self.candidates = int(counters[CANDIDATES])
        self.most_candidates = int(counters[MOST_CANDIDATES])
        self.preempted = out.preempted
        self.migrations = out.migrations
        self.cold_spent = out.cold_spent
        self.ltgf = LedgerReadings(out.job_att, out.job_fair, out.w_att, out.w_fair8, quota, cluster.fair_window_s)
        # the executed stretches (schedulers.cluster.metrics.allocation_table), out of their chunks
        self.segments = collect(out.stretches)
        self.completion = out.completion
        self.start = out.start


# the loop's arguments for one run (`arguments`): the jobs', the cluster's and the settings' records,
# the event budget, the kernel's settings; and the tenants' quotas
LoopArguments = namedtuple("LoopArguments", "jobs cluster cfg max_events params")


def arguments(jobs, policy, params=None, cluster=None) -> tuple[LoopArguments, list]:
    """(the arguments of the loop for `policy` on `jobs` on `cluster` (a ClusterSettings; None: the
    default one, `ClusterSettings()`) deciding by the kernel of `params` — by default its own,
    `kernel_params()` —, the tenants' quotas), or PolicyError / RecordLimitError."""
    from schedulers.policy_base import PolicyError  # noqa: PLC0415

    jobs.require_finite()
    if policy.needs_prediction and jobs.predicted is None:
        raise PolicyError(f"policy '{policy.name}' needs predicted durations and none were given")
    if getattr(policy, "revision", "none") == "quantile" and jobs.predicted_log_sd is None:
        raise PolicyError(f"policy '{policy.name}': revision rule 'quantile' needs predicted distributions "
                          "(predicted_log_sd), and the jobs carry none")
    cluster = ClusterSettings() if cluster is None else cluster
    caps = [int(c) for c in cluster.capacities]
    M = sum(caps)
    gpus = jobs.gpus.astype(np.int64)
    if jobs.n and int(gpus.max()) > M:
        j = int(np.argmax(gpus))
        raise PolicyError(f"job {jobs.job_id[j]} needs {int(gpus[j])} GPUs, the cluster has {M}")
    T = len(jobs.tenant_names)
    quotas = tenant_quotas(T, M, cluster.tenant_weights)
    x = np.array([g / w for g, w in zip(gpus.tolist(), jobs.weight.tolist())], np.float64)
    xval, xid = np.unique(x, return_inverse=True) if jobs.n else (np.zeros(1), np.zeros(0, np.int64))
    cap = np.array(caps, np.int64)
    node_order = np.array(sorted(range(len(caps)), key=lambda i: (-caps[i], i)), np.int64)
    max_parts = (int(gpus.max()) // int(cap.min()) + 2) if jobs.n else 1
    # a placement's parts are on distinct nodes: the stretches keep their count, nodes and GPUs in
    # narrow types (schedulers.cluster.stretches), and a run they would not hold is refused
    if min(max_parts, len(caps)) > PARTS_MAX:
        raise RecordLimitError(f"a job of {int(gpus.max()):,} GPUs may take {min(max_parts, len(caps)):,} nodes of this "
                         f"cluster: the simulator records placements of at most {PARTS_MAX:,} nodes")
    if max(len(caps), *caps) > NODE_MAX:
        raise RecordLimitError(f"the simulator takes at most {NODE_MAX:,} nodes of at most {NODE_MAX:,} GPUs each")
    predicted = jobs.predicted if jobs.predicted is not None else np.zeros(jobs.n)
    # the predicted log-normal spread of each job's size (the `quantile` revision rule); NaN: none given
    log_sd = jobs.predicted_log_sd if jobs.predicted_log_sd is not None else np.full(jobs.n, math.nan)
    loop_jobs = JobArrays(
        submit=np.ascontiguousarray(jobs.submit_time, np.float64), size=np.ascontiguousarray(jobs.size, np.float64),
        gpus=gpus, tenant=jobs.tenant.astype(np.int64), weight=np.ascontiguousarray(jobs.weight, np.float64),
        xid=xid.astype(np.int64), xval=xval.astype(np.float64), predicted=np.ascontiguousarray(predicted, np.float64),
        log_sd=np.ascontiguousarray(log_sd, np.float64))
    nodes = ClusterArrays(cap=cap, node_order=node_order, quota=np.array(quotas, np.float64),
                          owner=np.asarray(policy.node_owners(caps, quotas), np.int64))
    cfg = Config(lease_s=cluster.lease_s, interval_s=cluster.interval_s, cold_start_s=cluster.cold_start_s,
                 window_s=cluster.fair_window_s, eq16=cluster.fair_share == "eq16",
                 rho_submit=cluster.rho_from == "submit", preemptive=bool(policy.preemptive), P=max_parts,
                 check=bool(cluster.check), work_conserving=bool(policy.work_conserving))
    args = LoopArguments(jobs=loop_jobs, cluster=nodes, cfg=cfg, max_events=event_budget(jobs, cluster),
                         params=policy.kernel_params() if params is None else params)
    return args, quotas


#: the event budget of a run (`event_budget`): events per job (its arrival, completion, cold-start
#: ends and the ticks they call for: 3.5 per job on the Venus-like workload) and per lease round
EVENTS_PER_JOB = 64
EVENTS_PER_ROUND = 16


def event_budget(jobs, cluster) -> int:
    """The most events a run on `jobs` on `cluster` (a ClusterSettings) can take, far above any real run's: past it the
    loop stops (EventBudgetExceeded) instead of spinning. Each job brings a few events, and each
    lease round while jobs wait one and those it calls for; the rounds are bounded by the span of a
    schedule that runs the jobs one at a time with a cold start each (the cold start is at most half
    the lease: every round lets a job run), doubled. And twice STUCK_AFTER: a run in which no job is
    served is stopped as stuck first, the more telling line."""
    n = jobs.n
    span = (float(jobs.submit_time.max()) if n else 0.0) + float(jobs.size.sum()) + n * float(cluster.cold_start_s)
    rounds = 2.0 * span / float(cluster.lease_s) + 1.0
    budget = EVENTS_PER_JOB * (n + 1.0) + EVENTS_PER_ROUND * rounds + 2.0 * STUCK_AFTER
    return int(budget) if budget < 2.0**62 else 2**62


def run(jobs, policy, compiled: bool, notice=None, params=None, cluster=None) -> RunState:
    """Simulate `policy` on `jobs` on `cluster` (a ClusterSettings: the simulator's, never the policy's;
    None: the default one), compiled (when its kernel is `compilable`) or as Python: the run's
    RunState, or PolicyError (a broken rule, jobs left unserved) / ValueError (bad settings).

    `notice(text)` is told when the policy's run is being compiled (its first run after
    installing), once that has taken COMPILE_NOTICE_AFTER_S: a run from numba's cache loads its
    functions in under a second."""
    from schedulers.policy_base import PolicyError  # noqa: PLC0415

    cluster = ClusterSettings() if cluster is None else cluster
    args, quotas = arguments(jobs, policy, params, cluster)
    compiled = compiled and jitglue.compilable(args.params)
    if compiled:
        out = _run_compiled(args, policy.name, notice)
    else:
        out = run_python(*args)
    code = int(out.counters[VIOLATION])
    if code == BUDGET:
        raise EventBudgetExceeded(f"{policy.name} on {jobs.n:,} jobs: the cluster simulator's loop "
                                  + VIOLATIONS[code].format(budget=args.max_events, t=float(out.violation_at))
                                  + " (a run of these jobs takes fewer)")
    if code:
        j = int(out.counters[VIOLATION_JOB])
        raise PolicyError(f"{policy.name}: " + VIOLATIONS[code].format(job=f"job {jobs.job_id[j]}" if j >= 0 else "",
                                                                        t=float(out.violation_at), stuck=STUCK_AFTER))
    if int(out.finished) < jobs.n:
        raise PolicyError(f"policy '{policy.name}' left {jobs.n - int(out.finished)} job(s) unserved with nothing pending")
    return RunState(policy.name, cluster, out, quotas, "compiled" if compiled else "Python")


def _run_compiled(args: LoopArguments, name: str, notice):
    """The compiled run's Outcome on `args`, its functions compiled for their types first (or loaded
    from numba's cache): `notice(text)` is told once that has taken COMPILE_NOTICE_AFTER_S."""
    import numba  # noqa: PLC0415

    timer = None
    if notice is not None:
        timer = threading.Timer(COMPILE_NOTICE_AFTER_S, notice, args=(jitglue.compile_notice(name),))
        timer.daemon = True
        timer.start()
    try:
        with warnings.catch_warnings():  # numba's own pedantic check of its inlining, not ours to act on
            warnings.filterwarnings("ignore", category=numba.core.errors.NumbaIRAssumptionWarning)
            return jitshared.run(args, started=lambda: timer is not None and timer.cancel())
    finally:
        if timer is not None:
            timer.cancel()
