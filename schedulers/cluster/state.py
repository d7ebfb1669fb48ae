"""The state of one run of the cluster simulator, and its layout: a `State` of groups, each a
namedtuple in a Python run and a numba structref with the same fields in a compiled one (`group`).

- `s.job`: the jobs (submit, gpus, tenant, weight, predicted) and their counts — not their true sizes;
- `s.cfg`: lease, interval, cold start, ledger settings, whether the policy preempts (`Config`, the
  run's settings as given);
- `s.eng`: the engine's virtual clock of the running group, per-job attained work and wake-ups;
- `s.nodes`: free GPUs per node of the cluster (row 0 of `fr2`), of a round's plan (1) and of the
  plan's unclaimed GPUs (2), and the placement search's scratch;
- `s.led`: the LTGF ledgers (tenant integrals, per-job attained and fair GPU·s, windows);
- `s.plan`: each job's placement and the plan of the current decision;
- `s.q`: running and waiting jobs, cold starts, preemption and migration counts;
- `s.seg`: the executed-allocation stretches (schedulers.cluster.stretches: kept in chunks);
- `s.counters`: the named counters (`ROUNDS`, `DROPPED`, ...).

`new_state(jobs, cluster, cfg)` makes it from the run's inputs (`JobArrays`, `ClusterArrays`,
`Config`). A kernel is given this State, so it holds no true size: those, and the running jobs'
finish times that follow from them, are the engine's `Work` (`new_work`), which only the loop
holds and passes to a kernel's setup only when the kernel is registered clairvoyant
(schedulers.cluster.kernels). Also here: the counters' and violations' codes, the engine's group codes, the fair-share
rules and the tenants' quotas.

May import numpy, schedulers.jit and schedulers.cluster.stretches.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.stretches import empty_chunks
from schedulers.jit import jitable

_EPS = 1e-9
_REL_TOL = 1e-11
_RUN, _COLD, _IDLE = 0, 1, -1  # the engine's groups: running, cold-starting, neither
# the named counters (s.counters): rounds, dropped choices, work-conservation gaps, events,
# decisions (rounds and fills), candidates offered to them in all, most candidates of one decision;
# then the first broken rule (a VIOLATIONS code, 0: none) and the job it names (-1: none)
ROUNDS, DROPPED, GAPS, EVENTS, DECISIONS, CANDIDATES, MOST_CANDIDATES, VIOLATION, VIOLATION_JOB = range(9)

# what a run that breaks the simulator's rules is stopped for (the rule checks, `check=True`; a run
# with no job in service for STUCK_AFTER wake-ups in a row is stopped always), by VIOLATION code
VIOLATIONS = {
    1: "chose {job} twice at t = {t:g}",
    2: "chose {job} at t = {t:g}, which is neither running nor waiting",
    3: "chose {job} at t = {t:g} without placing it",
    4: "{job} chosen at t = {t:g} but its planned GPUs are taken",
    5: "the jobs holding GPUs after the round at t = {t:g} are not the chosen ones",
    6: "a waiting job fits on the free GPUs after the decision at t = {t:g}",
    7: "the free GPUs of the nodes disagree with the running jobs' placements at t = {t:g}",
    8: "is stuck: {stuck} wake-ups in a row with no job in service (t = {t:g})",
    9: "went past its budget of {budget:,} events at t = {t:g} and was stopped",
}
BUDGET = 9  # the VIOLATIONS code of a run stopped at its event budget (`event_budget`)

STUCK_AFTER = 10_000
FAIR_SHARES = ("eq16", "eq8")  # how a tenant's fair share accrues (docs/fairness.md); the first is the default


def tenant_quotas(n_tenants: int, total_gpus: int, tenant_weights=None) -> list[float]:
    """Q_k = M · W_k / Σ W (equal weights when none are given)."""
    tw = np.ones(n_tenants) if tenant_weights is None else np.asarray(tenant_weights, np.float64)
    return (total_gpus * tw / tw.sum()).tolist()


# the jobs as the kernels see them: no true size (the engine keeps those apart, in `Work`)
Job = namedtuple("Job", "submit gpus tenant weight xid xval predicted log_sd n T maxg")
Config = namedtuple("Config", "lease_s interval_s cold_start_s window_s eq16 rho_submit preemptive P check "
                               "work_conserving")
Clock = namedtuple("Clock", "group_of base vjoin stamp completion start g_V g_rate g_count wakes moves_j moves_g "
                            "wake_req")
# the work the engine has to do, which only the loop holds: the true sizes and the running jobs' virtual
# finish times (their heap), apart from the State a kernel is given
Work = namedtuple("Work", "size run_heap")
Nodes = namedtuple("Nodes", "fr2 tot free free_total plan_free plan_total unclaimed unclaimed_total cap node_order "
                            "maxcap N M inv_cap inv_cap_min owner held packed packed_total used found_node found_k")
Ledgers = namedtuple("Ledgers", "t_last run_gpus demand active_w att fair fair8 G G_ref job_base job_fair job_att "
                                "hold_since win_att win_fair8 quota")
Plan = namedtuple("Plan", "pl_len pl_node pl_k plan_len plan_node plan_k planned plan_restrict missed missed_list kept")
Queues = namedtuple("Queues", "holding hold_list hold_pos n_hold n_wait wait_demand ws wait_since cold_until cold_heap "
                              "started cold_spent undo_until undo_spent undo_list preempted preempted_at migrations "
                              "arrivals next_round flags violation_at waiting")
# the executed stretches and placement records, kept in chunks (schedulers.cluster.stretches): their
# counts (`n`, `flat_n`) and each field's chunks; each job's current record, open and last stretch
Segments = namedtuple("Segments", "n job start end kind pl pn flat_n flat_node flat_k pl_flat_of seg_open last_seg")
State = namedtuple("State", "job cfg eng nodes led plan q seg counters")


# the inputs of a run (schedulers.cluster.simulator.arguments makes them; the loop's arguments)
JobArrays = namedtuple("JobArrays", "submit size gpus tenant weight xid xval predicted log_sd")
ClusterArrays = namedtuple("ClusterArrays", "cap node_order quota owner")


def group(record):
    """A group of the state: the namedtuple `record` itself in a Python run; in a compiled loop a
    structref with the same fields (schedulers.cluster.jitglue), so that functions pass one reference
    instead of every field (a namedtuple is passed field by field, which made the compiled loop
    several times larger)."""
    return record


def kept(record, name):
    """`record.name` for a value that outlives the run's state (its Outcome, handed to Python). In a
    compiled run a group's arrays are read borrowed, without a reference (schedulers.cluster.jitglue:
    references are atomic counts); this read takes one, as Python does."""
    return getattr(record, name)


def int_list():
    """An empty list of int64 (typed for numba)."""
    out = [0]
    out.clear()
    return out


def float_list():
    out = [0.0]
    out.clear()
    return out


jitable(int_list)
jitable(float_list)


@jitable
def _largest(values):
    top = 0
    for i in range(values.shape[0]):
        if values[i] > top:
            top = values[i]
    return top


@jitable
def new_clock(n):
    """The engine's virtual clock of the running group (`s.eng`): no job in a group yet."""
    return group(Clock(group_of=np.full(n, _IDLE, np.int64), base=np.zeros(n), vjoin=np.zeros(n),
                       stamp=np.zeros(n, np.int64), completion=np.full(n, math.nan), start=np.full(n, math.nan),
                       g_V=np.zeros(2), g_rate=np.array([1.0, 0.0]), g_count=np.zeros(2, np.int64),
                       wakes=float_list(), moves_j=int_list(), moves_g=int_list(), wake_req=np.full(1, math.inf)))


@jitable
def new_nodes(cluster, max_parts):
    """The nodes (`s.nodes`): row 0 of `fr2` the cluster's free GPUs (all), row 1 a round plan's,
    row 2 the plan's unclaimed ones; the placement search's scratch."""
    cap = cluster.cap
    N = cap.shape[0]
    fr2 = np.zeros((3, N), np.int64)
    tot = np.zeros(3, np.int64)
    for i in range(N):
        fr2[0, i] = cap[i]
    tot[0] = cap.sum()
    inv_cap = 1.0 / cap.astype(np.float64)
    return group(Nodes(fr2=fr2, tot=tot, free=fr2[0], free_total=tot[0:1], plan_free=fr2[1], plan_total=tot[1:2],
                       unclaimed=fr2[2], unclaimed_total=tot[2:3], cap=cap, node_order=cluster.node_order,
                       maxcap=_largest(cap), N=N, M=tot[0], inv_cap=inv_cap, inv_cap_min=inv_cap.min(),
                       owner=cluster.owner, held=np.zeros(N, np.int64), packed=np.zeros(N, np.int64),
                       packed_total=np.zeros(1, np.int64), used=np.zeros(N, np.bool_),
                       found_node=np.zeros(max_parts + 1, np.int64), found_k=np.zeros(max_parts + 1, np.int64)))


@jitable
def new_ledgers(n, n_classes, quota):
    """The LTGF ledgers (`s.led`, schedulers.cluster.ledgers): nothing attained, nothing due."""
    T = quota.shape[0]
    X = n_classes
    win_att = [float_list() for _ in range(T)]
    win_fair8 = [float_list() for _ in range(T)]
    return group(Ledgers(t_last=np.zeros(T), run_gpus=np.zeros(T, np.int64), demand=np.zeros(T, np.int64),
                         active_w=np.zeros(T), att=np.zeros(T), fair=np.zeros(T), fair8=np.zeros(T),
                         G=np.zeros((T, X)), G_ref=np.zeros((T, X), np.int64), job_base=np.zeros(n),
                         job_fair=np.zeros(n), job_att=np.zeros(n), hold_since=np.full(n, math.nan), win_att=win_att,
                         win_fair8=win_fair8, quota=quota))


@jitable
def new_plan(n, max_parts, maxg):
    """Each job's placement and the plan of the current decision (`s.plan`): none. The parts' nodes and
    GPUs are int32, as the stretches keep them (schedulers.cluster.stretches): a million jobs' four
    tables of `max_parts` parts take 160 MB instead of 320 MB at the end of a run, with its stretches."""
    P = max_parts
    return group(Plan(pl_len=np.zeros(n, np.int64), pl_node=np.zeros((n, P), np.int32), pl_k=np.zeros((n, P), np.int32),
                      plan_len=np.zeros(n, np.int64), plan_node=np.zeros((n, P), np.int32),
                      plan_k=np.zeros((n, P), np.int32), planned=int_list(), plan_restrict=np.full(n, -1, np.int64),
                      missed=np.zeros(maxg + 1, np.bool_), missed_list=int_list(), kept=np.zeros(n, np.bool_)))


@jitable
def new_queues(n, maxg, lease_s):
    """The running and waiting jobs, cold starts, preemption and migration counts (`s.q`): none."""
    cold_heap = [(0.0, 0)]
    cold_heap.clear()
    return group(Queues(holding=np.zeros(n, np.bool_), hold_list=np.zeros(n, np.int64),
                        hold_pos=np.full(n, -1, np.int64), n_hold=np.zeros(1, np.int64), n_wait=np.zeros(1, np.int64),
                        wait_demand=np.zeros(maxg + 1, np.int64), ws=np.zeros(n, np.int64), wait_since=np.zeros(n),
                        cold_until=np.full(n, math.nan), cold_heap=cold_heap, started=np.zeros(n, np.bool_),
                        cold_spent=np.zeros(n), undo_until=np.full(n, math.nan), undo_spent=np.zeros(n),
                        undo_list=int_list(), preempted=np.zeros(n, np.int64), preempted_at=np.full(n, -1.0),
                        migrations=np.zeros(n, np.int64), arrivals=int_list(), next_round=np.full(1, lease_s),
                        flags=np.zeros(1, np.bool_), violation_at=np.full(1, math.nan), waiting=np.zeros(n, np.bool_)))


@jitable
def new_segments(n):
    """The executed-allocation stretches (`s.seg`): none."""
    return group(Segments(n=np.zeros(1, np.int64), job=empty_chunks(np.int32), start=empty_chunks(np.float64),
                          end=empty_chunks(np.float64), kind=empty_chunks(np.int8), pl=empty_chunks(np.int32),
                          pn=empty_chunks(np.int16), flat_n=np.zeros(1, np.int64), flat_node=empty_chunks(np.int32),
                          flat_k=empty_chunks(np.int32), pl_flat_of=np.full(n, -1, np.int64),
                          seg_open=np.full(n, -1, np.int64), last_seg=np.full(n, -1, np.int64)))


@jitable
def new_work(size):
    """The engine's work (`Work`): the jobs' true sizes, no job running."""
    run_heap = [(0.0, 0, 0)]
    run_heap.clear()
    return group(Work(size=size, run_heap=run_heap))


@jitable
def new_state(jobs, cluster, cfg):
    """The state of a run at time 0 (`jobs` a JobArrays, `cluster` a ClusterArrays, `cfg` the run's
    Config): an empty cluster, nothing waiting. The jobs' true sizes are not in it (`new_work`)."""
    n = jobs.submit.shape[0]
    maxg = _largest(jobs.gpus)
    job = group(Job(submit=jobs.submit, gpus=jobs.gpus, tenant=jobs.tenant, weight=jobs.weight,
                    xid=jobs.xid, xval=jobs.xval, predicted=jobs.predicted, log_sd=jobs.log_sd, n=n,
                    T=cluster.quota.shape[0], maxg=maxg))
    counters = np.zeros(9, np.int64)
    counters[VIOLATION_JOB] = -1
    return group(State(job=job, cfg=group(cfg), eng=new_clock(n), nodes=new_nodes(cluster, cfg.P),
                       led=new_ledgers(n, jobs.xval.shape[0], cluster.quota), plan=new_plan(n, cfg.P, maxg),
                       q=new_queues(n, maxg, cfg.lease_s), seg=new_segments(n), counters=counters))
