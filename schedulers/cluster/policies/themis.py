"""Themis (Mahajan et al., NSDI'20): finish-time fairness with lease auctions and the fairness knob f.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.revision, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy, _EPS, revision_code
from schedulers.cluster.events import attained_at
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import attempt, refused
from schedulers.cluster.queues import candidates, job_order_add
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register
from schedulers.revision import revise_outlived


THEMIS_F = 0.8  # Themis's fairness knob f: only the 1 − f fraction of jobs with the worst ρ bid


@register
class Themis(ClusterPolicy):
    """Themis (Mahajan et al., NSDI'20): finish-time fairness with lease auctions and the knob f.

    Finish-time fairness ρ_i = T_sh / T_id: T_sh = (now − submit) + predicted remaining
    max(p̂ − work done, 1 s) at the job's full gang (the finish time its bid would get);
    T_id = p̂ · max(1, d_i / (M / N̄_i)), the finish time alone on a 1/N̄ share of the cluster, with
    N̄_i the *observed contention*: the time-average number of active jobs since the job arrived
    (the current count at its first round). Higher ρ = treated worse.

    Every lease (and at scheduling ticks when GPUs free up) the arbiter (1) sorts jobs by ρ, worst
    first; (2) offers the free GPUs to the ⌈(1 − f) · n⌉ worst (at least one) — f = THEMIS_F = 0.8,
    the ASTRAEA paper does not say which f it ran; (3) runs the partial-allocation auction among them:
    the allocation maximising the product of the bidders' ρ improvements, Π ρ_i(lose) / ρ_i(win),
    where winning a gang for the next lease gives T_sh and losing it adds a lease:
    log gain_i = log(1 + lease / T_sh,i). With rigid gangs an allocation is all or nothing, so the
    maximisation is a knapsack over the free GPUs, solved greedily by log gain per GPU (ties: ρ, job
    index); (4) leftover allocation: GPUs the auction leaves go to every other job, worst ρ first
    (work conservation).

    Modelling choices: an app is one job (the ASTRAEA workloads have no hyper-parameter apps);
    bids are truthful, so the auction's hidden payments (withholding part of a winner's
    allocation) are not modelled — they cannot be applied to an all-or-nothing gang anyway; p̂
    (`predicted_duration`) stands in for the agents' remaining-time estimates — this is the only
    size information Themis uses, and its error level is whatever the jobs table carries (the
    scenarios: p·exp(0.9 Z)). Placement is consolidated as for every policy.

    `revision` (schedulers.revision; default none, the rule above): a job whose service reached its
    estimate (p̂ at first) has the estimate revised at the next decision, and ρ reads the revised
    estimate for both T_sh and T_id; with none, an outlived job's remaining time stays 1 s."""

    name = "themis"
    listing_rank = 50  # its place in every listing of cluster policies
    needs_prediction = True
    description = "finish-time fairness T_sh/T_id, 1-f worst jobs bid in a lease auction, leftover to the rest"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return ThemisParams(f=self.f, blind=self.size_blind, rule=self.rule)

    # size_blind and reauction are ablations (`benchmark reproduce astraea`, docs/fairness.md "Why
    # the ranking differs"), not Themis: size_blind=True reads one p̂ for every job (the median of
    # the jobs' p̂), so ρ keeps its form but carries no information about which job is longer;
    # reauction=False runs no lease rounds (a job keeps its GPUs to completion, the auction only
    # hands out GPUs that free up)
    def __init__(self, *, f: float = THEMIS_F, size_blind: bool = False, reauction: bool = True,
                 revision: str = "none"):
        super().__init__()
        self.rule = revision_code(revision)
        self.revision = revision
        if not 0.0 <= float(f) < 1.0:
            raise ValueError("themis f must be in [0, 1)")
        for what, value in (("size_blind", size_blind), ("reauction", reauction)):
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"themis {what} must be True or False, got {value!r}")
        self.f = float(f)
        self.size_blind = bool(size_blind)
        self.reauction = bool(reauction)
        if not self.reauction:  # only then: a subclass's own class flag stays what it says
            self.preemptive = False


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
ThemisParams = namedtuple("ThemisParams", "f blind rule")
ThemisState = namedtuple("ThemisState", "params area area_t seen seen_area seen_t p_hat revisions")


def setup(s, params):
    n = s.job.n
    # the p̂ that ρ reads: the jobs' own, or (size_blind) their median for every job
    p_hat = s.job.predicted.copy()
    if params.blind and n > 0:
        p_hat[:] = np.median(s.job.predicted)
    return group(ThemisState(params=params, area=np.zeros(1), area_t=np.zeros(1), seen=np.zeros(n, np.bool_),
                             seen_area=np.zeros(n), seen_t=np.zeros(n), p_hat=p_hat, revisions=np.zeros(n, np.int64)))


@jitable
def themis_rhos(s, p, cand, now, n_now, neg_rho, t_sh):
    """Themis.rho of each candidate cand[i]: −ρ = −T_sh / T_id into neg_rho[i] and T_sh into t_sh[i]
    (the auction's gains are of the bidders only); its estimate (p_hat) revised first if outlived.
    The state's arrays are read once, not per candidate: in the compiled loop each read through the
    state takes and drops reference counts, and a decision has hundreds of candidates."""
    eng = s.eng
    group_of = eng.group_of
    base = eng.base
    g_V = eng.g_V
    vjoin = eng.vjoin
    rule = p.params.rule
    p_hat = p.p_hat
    revisions = p.revisions
    log_sd = s.job.log_sd
    predicted = s.job.predicted
    seen = p.seen
    seen_area = p.seen_area
    seen_t = p.seen_t
    area = p.area[0]
    M = s.nodes.M
    submit = s.job.submit
    gpus = s.job.gpus
    for i in range(len(cand)):
        j = cand[i]
        done = attained_at(group_of, base, g_V, vjoin, j)
        pj = revise_outlived(rule, p_hat, revisions, j, done, log_sd[j], predicted[j])
        r = pj - done
        rem = r if r >= 1.0 else 1.0
        if seen[j]:
            area0, t0 = seen_area[j], seen_t[j]
        else:
            area0, t0 = area, now
        n_bar = (area - area0) / (now - t0) if now > t0 else float(n_now)
        share = M / (n_bar if n_bar >= 1.0 else 1.0)
        t_sh[i] = (now - submit[j]) + rem
        ratio = gpus[j] / share
        neg_rho[i] = -(t_sh[i] / (pj * (ratio if ratio > 1.0 else 1.0)))


@jitable
def decide(s, p, at_round, now, chosen):
    """Themis.select: the ⌈(1 − f)·n⌉ worst-ρ jobs bid in the lease auction (greedy by log gain
    per GPU), then the leftover allocation to every job, worst ρ first."""
    n_now = s.q.n_wait[0] + s.q.n_hold[0]
    if n_now < 1:
        n_now = 1
    cand = candidates(s, at_round)
    m = len(cand)
    neg_rho = np.empty(m)
    t_sh = np.empty(m)
    themis_rhos(s, p, cand, now, n_now, neg_rho, t_sh)
    worst = np.argsort(neg_rho, kind="mergesort")  # (−ρ, j): cand is in job order
    nb = math.ceil((1.0 - p.params.f) * m - _EPS)
    if nb < 1:
        nb = 1
    # the bidders in (−ρ, j) order are worst's first nb, then stable by gain: (gain, −ρ, j)
    bidders = worst[:nb]
    gpus = s.job.gpus  # read once, as in place_in_order: a decision tries every candidate
    gain = np.empty(len(bidders))  # log gain per GPU, −log(1 + lease / T_sh) / d, of the bidders only
    lease = s.cfg.lease_s
    for b in range(len(bidders)):
        i = bidders[b]
        gain[b] = -math.log1p(lease / t_sh[i]) / gpus[cand[i]]
    auction = bidders[np.argsort(gain, kind="mergesort")]
    taken = np.zeros(m, np.bool_)
    totals = s.nodes.plan_total if at_round else s.nodes.free_total  # total_now, read once
    missed = s.plan.missed
    holding = s.q.holding
    preempted_at = s.q.preempted_at
    for group in range(2):
        order = auction if group == 0 else worst
        for i in order:
            total = totals[0]
            if total == 0:
                return
            if taken[i]:
                continue
            j = cand[i]
            g = gpus[j]
            if refused(g, total, missed, holding[j] or preempted_at[j] == now):
                continue
            if attempt(s, j, now, at_round, -1):
                chosen.append(j)
                taken[i] = True


@jitable
def on_wait(s, p, j, now):
    """j waits: in job order; the contention integral when it first became active."""
    if not p.seen[j]:
        p.seen[j] = True
        p.seen_area[j] = p.area[0]
        p.seen_t[j] = now
    job_order_add(s, j)


@jitable
def before_allocate(s, p, now):
    """∫ N(t) dt of the active jobs (waiting or running) up to now."""
    p.area[0] += (s.q.n_wait[0] + s.q.n_hold[0]) * (now - p.area_t[0])
    p.area_t[0] = now


KERNEL = kernel(Themis.name, ThemisParams, ThemisState, setup=setup, select=decide, on_wait=on_wait,
                before_allocate=before_allocate)
