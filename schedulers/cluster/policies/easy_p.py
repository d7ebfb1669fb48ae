"""EASY backfilling on p̂: FIFO with a reservation for the blocked head, later jobs backfilled around it.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster
simulator (`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.revision, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy, revision_code
from schedulers.cluster.events import attained_engine
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import attempt, find
from schedulers.cluster.queues import candidates, job_order_add
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register
from schedulers.revision import NONE, revise_outlived


@register
class EasyP(ClusterPolicy):
    """EASY backfilling (Lifka 1995; Mu'alem & Feitelson, TPDS 2001) with p̂ as the runtime estimate,
    on gang jobs and nodes.

    At each decision (a fill at a scheduling tick; jobs are never preempted):

    1. the waiting jobs are started in submit order while they fit (FIFO);
    2. the first that does not fit, the **head**, gets a reservation at the **shadow time**: the
       running jobs (with those just started) are released one predicted end at a time, in order
       of predicted end start + p̂ — a job that has already run longer than its p̂ is "predicted to
       end any moment" and counts as ending now — until the head's gang has a placement on the
       GPUs then free (the simulator's own node-level placement search, not a GPU count); the
       shadow time is that predicted end;
    3. every later waiting job, in submit order, that has a placement now starts now if either it is
       predicted to end by the shadow time (now + p̂ ≤ shadow), or it would still leave the head a
       placement at the shadow time while it runs (it takes the "extra" GPUs: the GPUs free at the
       shadow time minus its placement, and minus every such job started before it, still hold the
       head's gang). Otherwise it waits: it would delay the head as predicted.

    The reservation holds only as far as p̂ is right: a job that runs past its p̂ delays the
    shadow time. A job left waiting while it would fit on the free GPUs is the rule's choice, so
    the policy is not work-conserving (`work_conservation_gaps` counts those decisions).

    `revision` (schedulers.revision; default none, the rule above): a running job that has outlived
    its estimate (p̂ at first) has it revised at the decision that sees it, and its predicted end is
    its start + the revised estimate instead of "any moment". Non-preemptive, the policy revises
    only at its decisions, and only the running jobs' estimates (a waiting job has received none).

    The same rule with p̂ := the user's requested time is EASY as HPC batch schedulers run it
    (`benchmark reproduce hpc`, docs/hpc-backfilling.md); `EasyPlusPlus` below is EASY++.
    """

    name = "easy-p"
    listing_rank = 120  # its place in every listing of cluster policies
    needs_prediction = True
    preemptive = False
    work_conserving = False  # documented: a job that would delay the head's reservation waits
    description = "EASY backfilling on p̂: FIFO, the blocked head reserves its GPUs at the predicted shadow time"

    def __init__(self, *, revision: str = "none"):
        super().__init__()
        self.rule = revision_code(revision)
        self.revision = revision

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return EasyParams(False, False, np.empty(0), self.rule)


class EasyPlusPlus(EasyP):
    """EASY++ (Tsafrir, Etsion & Feitelson, "Backfilling Using System-Generated Predictions Rather
    than User Runtime Estimates", IEEE TPDS 18(6), 2007): EasyP's rule with the scheduler's own
    prediction and the shortest job backfilled first. Its input p̂ is the user's requested time (the
    kill time), its tenants the users; the kernel predicts, causally, inside the run:

    - a job's prediction, made when it is submitted, is the average run time of its user's two most
      recent jobs completed by then (the one, if only one), capped at its requested time; with none,
      the requested time;
    - a running job that outlives its prediction has it raised to its requested time (the
      reservation is recomputed at every decision, so the shadow time moves with it);
    - the jobs behind the head are tried for backfilling in order of prediction, then submit order
      (SJBF), not in submit order.

    `estimate` (one p̂ per job, e.g. a learned predictor's) replaces the recent-jobs prediction,
    capped at the requested time as it is, with the rest of EASY++ unchanged (the correction, SJBF).

    Not a registered policy of the fairness task: its predictor needs the requested time and the
    users of an HPC log (`benchmark reproduce hpc`).
    """

    name = "easy-pp"
    description = "EASY++: EASY with the user's two last run times as prediction, raised when outlived, SJBF"

    def __init__(self, *, estimate=None):
        super().__init__()
        self.estimate = np.empty(0) if estimate is None else np.ascontiguousarray(estimate, np.float64)

    def kernel_params(self):
        return EasyParams(len(self.estimate) == 0, True, self.estimate, NONE)  # its own correction, not a rule


# ----- the kernel (schedulers.cluster.kernels): the decision over the simulator's arrays -------------
# end[j]: the predicted end (start + p̂) of a job this kernel started; free_at: the free GPUs per
# node at the shadow time, scratch of one decision; refused[g] == epoch[0]: a job of g GPUs that
# runs past the shadow time was refused since the last start (the next one of g GPUs would get
# the same placement on the same free GPUs and be refused again: a long queue is read without a
# placement search per job).
# recent: EASY++'s recent-jobs prediction; plus: EASY++'s correction and SJBF (EasyPlusPlus); estimate:
# the p̂ EasyPlusPlus is given instead of its prediction (empty: none). pred[j]: the prediction a job
# is scheduled by (p̂, or EASY++'s, made on submit); begin[j]: its start; last[u, 0 / 1]: run times of
# user u's most recent / second most recent completed jobs, done[u]: how many of them there are (0, 1, 2+).
# rule: the revision rule of an outlived p̂ (schedulers.revision); revisions[j]: how often pred[j] was revised.
EasyParams = namedtuple("EasyParams", "recent plus estimate rule")
EasyState = namedtuple("EasyState", "params end free_at refused epoch pred begin last done revisions")


def setup(s, params):
    return group(EasyState(params=params, end=np.zeros(s.job.n), free_at=np.zeros(s.nodes.N, np.int64),
                           refused=np.zeros(s.job.maxg + 1, np.int64), epoch=np.zeros(1, np.int64),
                           pred=np.zeros(s.job.n), begin=np.zeros(s.job.n), last=np.zeros((s.job.T, 2)),
                           done=np.zeros(s.job.T, np.int64), revisions=np.zeros(s.job.n, np.int64)))


@jitable
def on_wait(s, p, j, now):
    """A submitted job: its prediction (EASY++: from its user's jobs completed by now, nothing later)."""
    job_order_add(s, j)
    cap = s.job.predicted[j]
    if not p.params.recent:
        guess = p.params.estimate[j] if p.params.plus and len(p.params.estimate) > 0 else cap
        p.pred[j] = guess if guess < cap else cap
        return
    u = s.job.tenant[j]
    k = p.done[u]
    guess = cap
    if k == 1:
        guess = p.last[u, 0]
    elif k >= 2:
        guess = 0.5 * (p.last[u, 0] + p.last[u, 1])
    p.pred[j] = guess if guess < cap else cap


@jitable
def on_unhold(s, p, j):
    """A job completed (the policy never preempts): its run time enters its user's history."""
    if p.params.recent:
        u = s.job.tenant[j]
        p.last[u, 1] = p.last[u, 0]
        p.last[u, 0] = s.eng.completion[j] - p.begin[j]
        p.done[u] += 1


@jitable
def started(s, p, j, now, chosen):
    p.end[j] = now + p.pred[j]
    p.begin[j] = now
    chosen.append(j)


@jitable
def revised_end(s, p, j):
    """Running job j's predicted end, start + its estimate, the estimate revised first by the
    policy's rule if j's service has reached it."""
    # begin + the estimate: the end set at the start (now + p̂) while no revision moved it
    p.end[j] = p.begin[j] + revise_outlived(p.params.rule, p.pred, p.revisions, j, attained_engine(s, j),
                                            s.job.log_sd[j], s.job.predicted[j])
    return p.end[j]


@jitable
def shadow(s, p, head, now, chosen):
    """(shadow time, GPUs free then): the running jobs and those this decision just started
    (`chosen`, placed on the plan) released in order of (max(predicted end, now), job) into
    p.free_at until the head's gang has a placement there; every job predicted to end at that same
    instant is released too."""
    nh = s.q.n_hold[0]
    r = nh + len(chosen)
    jobs = np.empty(r, np.int64)
    for i in range(nh):
        jobs[i] = s.q.hold_list[i]
    for i in range(len(chosen)):
        jobs[nh + i] = chosen[i]
    jobs = np.sort(jobs)
    ends = np.empty(r)
    for i in range(r):
        e = p.end[jobs[i]]
        if e <= now and p.params.plus:  # EASY++: outlived its prediction, raised to its requested time
            e = p.begin[jobs[i]] + s.job.predicted[jobs[i]]
        elif p.params.rule != NONE:
            e = revised_end(s, p, jobs[i])
        ends[i] = e if e > now else now  # outlived its p̂: predicted to end any moment
    order = np.argsort(ends, kind="mergesort")  # (end, job)
    for i in range(s.nodes.N):
        p.free_at[i] = s.nodes.free[i]
    total = s.nodes.free_total[0]
    g = s.job.gpus[head]
    i = 0
    while i < r:
        t = ends[order[i]]
        while i < r and ends[order[i]] == t:
            j = jobs[order[i]]
            if s.q.holding[j]:
                for k in range(s.plan.pl_len[j]):
                    p.free_at[s.plan.pl_node[j, k]] += s.plan.pl_k[j, k]
                    total += s.plan.pl_k[j, k]
            else:  # started by this decision: its placement is its plan
                for k in range(s.plan.plan_len[j]):
                    p.free_at[s.plan.plan_node[j, k]] += s.plan.plan_k[j, k]
                    total += s.plan.plan_k[j, k]
            i += 1
        if g <= total and find(s, p.free_at, total, g, -1) > 0:
            return t, total
    return now, total  # not reached: the head's gang fits on the empty cluster


@jitable
def decide(s, p, at_round, now, chosen):
    """EasyP's rule (never a round: the policy does not preempt, so the candidates are the waiting
    jobs, in job order = submit order)."""
    cand = candidates(s, at_round)
    m = len(cand)
    h = 0
    while h < m:  # FIFO while the jobs fit
        j = cand[h]
        if s.nodes.free_total[0] == 0 or not attempt(s, j, now, at_round, -1):
            break
        started(s, p, j, now, chosen)
        h += 1
    if h + 1 >= m or s.nodes.free_total[0] == 0:
        return  # no blocked head, nobody behind it, or no GPU left
    head = cand[h]
    hg = s.job.gpus[head]
    t_shadow, total_at = shadow(s, p, head, now, chosen)
    p.epoch[0] += 1
    parts_node = np.empty(s.cfg.P + 1, np.int64)
    parts_k = np.empty(s.cfg.P + 1, np.int64)
    rest = cand[h + 1:].copy()  # (a C array either way: the branch below replaces it)
    if p.params.plus:  # EASY++: shortest job backfilled first, by (prediction, job)
        rest = rest[np.argsort(p.pred[rest], kind="mergesort")]
    for i in range(len(rest)):
        total = s.nodes.free_total[0]
        if total == 0:
            break
        j = rest[i]
        g = s.job.gpus[j]
        if g > total or s.plan.missed[g]:  # (missed: no placement for g on the free GPUs, as attempt knows)
            continue
        if now + p.pred[j] <= t_shadow:  # predicted to end before the head's reservation
            if attempt(s, j, now, at_round, -1):
                started(s, p, j, now, chosen)
                p.epoch[0] += 1
            continue
        # runs past the shadow time: only on the extra GPUs, where the head still fits at the shadow
        if p.refused[g] == p.epoch[0]:
            continue
        p.refused[g] = p.epoch[0]
        if hg > total_at - g:
            continue
        parts = find(s, s.nodes.free, total, g, -1)  # the placement attempt would give it now
        if parts == 0:
            continue
        for k in range(parts):
            parts_node[k] = s.nodes.found_node[k]
            parts_k[k] = s.nodes.found_k[k]
            p.free_at[parts_node[k]] -= parts_k[k]
        # (free_at ≥ the free GPUs now on every node, so it stays ≥ 0)
        ok = find(s, p.free_at, total_at - g, hg, -1) > 0
        if ok and attempt(s, j, now, at_round, -1):
            started(s, p, j, now, chosen)
            total_at -= g
            p.epoch[0] += 1
        else:  # it would delay the head: it waits, and its GPUs stay free at the shadow time
            for k in range(parts):
                p.free_at[parts_node[k]] += parts_k[k]


KERNEL = kernel(EasyP.name, EasyParams, EasyState, setup=setup, select=decide, on_wait=on_wait, on_unhold=on_unhold)
