"""ASTRAEA (long-term GPU-time fairness): two-phase LTGF selection, and ASTRAEA-P with predicted durations.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.revision, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.base import DEFAULT_REVISION, NEW_JOB_BONUS, ClusterPolicy, revision_code
from schedulers.cluster.events import attained_at
from schedulers.cluster.kernels import kernel
from schedulers.cluster.ledgers import advance, rho_job_at, rho_of, rho_parts
from schedulers.cluster.placement import attempt, refused, total_now
from schedulers.cluster.queues import bag_add, bag_remove, count_decision, may_fit, room
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register
from schedulers.revision import NONE, revise_outlived


@register
class Astraea(ClusterPolicy):
    """ASTRAEA: two-phase LTGF selection (the ASTRAEA paper).

    Phase 1: the tenant with the smallest ρ_tenant (pre-charged); a tenant whose best candidate
    cannot be placed is dropped for this round; equal ρ_tenant: tenant name order. Phase 2: inside
    it the job with the largest reward −ρ_job + NEW_JOB_BONUS·[never started]; ties: submit time,
    then job_id (the job index). Since ρ ≥ 0 and a never-started job has ρ = 0, the bonus puts new
    jobs first, oldest first; the paper gives no number for it. After a job is placed
    its tenant is pre-charged demand × lease before the next pick (ρ's denominator stays at its
    round-start value, as in the paper's worked example). After the loop, any candidate that still
    fits is placed in the same order (work conservation despite tenant skipping).

    Cost (in the kernel below): the waiting jobs are kept per tenant in two tiers with a count per
    gang size. A waiting job that neither ran nor was preempted at this instant is placed on the free
    GPUs alone, which change only when a job is placed; so between two placements a gang size either
    finds a placement or not, whichever of its jobs asks. At a fill (no round at this instant) a
    tenant none of whose gang sizes finds one is skipped without reading its jobs' ρ. Every tenant
    with a candidate is advanced either way, so the LTGF clocks move exactly as when every ρ is read."""

    name = "astraea"
    listing_rank = 80  # its place in every listing of cluster policies
    description = "two-phase LTGF selection: min rho tenant, max reward job, pre-charge, skip unplaceable"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels, below)."""
        return AstraeaParams(by_prediction=False, band=0.0, rule=NONE)


@register
class AstraeaP(Astraea):
    """ASTRAEA with predicted durations: ASTRAEA's phases with p̂ as the order inside a fairness band.

    Phase 1: among the tenants whose pre-charged ρ_tenant is within `band` (default 1.0, in ρ units:
    one fair share of GPU time) of the smallest, the one whose best candidate (phase 2's
    choice) has the smallest p̂; ties ρ_tenant, then tenant index. Pre-charging, skipping a tenant
    whose best candidate cannot be placed and the leftover pass are ASTRAEA's. Phase 2: first the
    started jobs (running, or waiting after a preemption) whose revised predicted remaining time —
    estimate − service received, the estimate p̂ revised by the `revision` rule
    (schedulers.revision, default DEFAULT_REVISION) once the service reaches it — is at most a
    lease, shortest first (ties job index); then never-started jobs, shortest p̂ first (ties job
    index); then the other jobs that have run by ρ_job, ties p̂, then job index. Phase 1's key is the
    best candidate's p̂, or its remaining time if it is of the first group. With revision `none` the
    first group is empty (an outlived p̂ would leave a job 0 s from its end at every round): p̂ only
    orders jobs, so with every p̂ equal the run is ASTRAEA's, job for job.

    Measured (docs/fairness.md#astraea-p-what-predicted-durations-change,
    tests/schedulers/astraea_p_study.py): on the Venus-like scenario (three draws) avg slowdown
    2.81 → 1.79 with exact p̂ (1.77 with the default revision), sharing-loss / tenant-loss within a
    point of ASTRAEA's on average;
    random or permuted p̂ give 2.2–2.4, so the gain is p̂'s information. Bad p̂ costs: a long job
    predicted short jumps ahead of shorter jobs of the band's other tenants (on a contended Philly,
    random p̂ is worse than ASTRAEA). The band bounds how far ahead of its share a tenant may be
    served; without it (band = ∞) a tenant with only long jobs starves (Philly). The revision rule's
    evidence: docs/fairness.md#revising-outlived-predictions."""

    name = "astraea-p"
    listing_rank = 90  # its place in every listing of cluster policies
    needs_prediction = True
    description = "ASTRAEA, shortest predicted job first among the tenants within a fairness band"

    def __init__(self, *, band: float = 1.0, revision: str = DEFAULT_REVISION):
        super().__init__()
        if not float(band) >= 0.0:
            raise ValueError("astraea-p band must be >= 0 (in rho_tenant units; inf: no band)")
        self.band = float(band)  # the fairness band of phase 1, in ρ_tenant units (see the docstring)
        self.rule = revision_code(revision)
        self.revision = revision

    def kernel_params(self):
        return AstraeaParams(by_prediction=True, band=self.band, rule=self.rule)


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
# Tier A, a tenant's waiting never-started jobs, has a fixed key (j; (p̂, j) for ASTRAEA-P: key[j]),
# so each tenant's are kept in key order (a_buf; for ASTRAEA-P their keys beside it, a_f), with a
# count per gang size. Tier B's key, ρ_job,
# moves with time: each tenant's waiting jobs that ran (sw_buf, counted per gang size) and running
# jobs (hb_buf) are kept as sets, keyed when a decision first reaches them into a heap (b_h, b_f) in
# (ρ_job, p̂, j) order. A waiting job's parts of ρ_job (attained, weight, base, class) and its keys
# do not change while it waits: they are kept in rows beside sw_buf (sw_f), so that keying a tier
# reads them in order instead of from the jobs' arrays at random (about ten cache lines per job at
# 10⁶ jobs). When ASTRAEA-P revises, a job whose revised predicted remaining time r is at most a
# lease goes into a heap of its own (e_h, e_f, in (r, j) order), taken before tier A and the rest of
# tier B. A decision takes a tenant's candidates from e_h, then tier A's head (a_ptr[k]), then b_h.
# A heap is an array of rows of its tier's keys (b_f[k][i]: key, second key, job) and the heap of
# their indices (heap_make, heap_pop): no tuple is built, and no list is passed to a call per sift
# (in the compiled loop each such call counts references to it). A waiting job's r does not change while it waits (its service does not), so it is read
# once as it starts to wait (r[j]), and the waiting ones predicted to end within a lease are kept as
# a set (e_buf): a fill keys only those, and a round also its running jobs, whose r moves. est[j] is
# job j's estimate (p̂, revised by the rule once outlived), revisions[j] how often it was revised: a
# revision happens only when the service has reached the estimate, and leaves the estimate above
# it, so reading r again while the service stays put changes nothing.
if not NEW_JOB_BONUS > 0:  # the tiers below put never-started jobs first only so
    raise ValueError("ASTRAEA's kernel needs a positive new-job bonus")
# Phase 1 scans the tenants at each pick, O(tenants) per pick: for ASTRAEA the smallest (ρ_tenant, k)
# (with a few tenants cheaper than a heap of tuples), for ASTRAEA-P the band (band_phase1: its key
# moves with the band's lower edge).
AstraeaParams = namedtuple("AstraeaParams", "by_prediction band rule")
# the columns of a waiting job's row in sw_f: attained GPU·s, weight, base (its ρ_job's parts), class
# (xid), revised remaining time r (inf unless ASTRAEA-P revises), tier-B key (p̂ or 0)
SW_ATT, SW_WEIGHT, SW_BASE, SW_CLASS, SW_R, SW_KEY = range(6)
SW_COLUMNS = 6
AstraeaState = namedtuple("AstraeaState", "params a_buf a_len a_count sw_buf sw_len sw_pos s_count hb_buf hb_len "
                                          "hb_pos b_h b_f b_n b_heaped b_built w_count round_at a_ptr key est revisions "
                                          "e_buf e_len e_pos e_h e_f e_n e_built r sw_f a_f")


def setup(s, params):
    T = s.job.T
    n = s.job.n
    maxg = s.job.maxg
    est = s.job.predicted.copy()  # each job's estimate of its size: p̂, revised once outlived
    return group(AstraeaState(
        params=params, a_buf=[np.zeros(8, np.int64) for _ in range(T)], a_len=np.zeros(T, np.int64),
        a_count=np.zeros((T, maxg + 1), np.int64), sw_buf=[np.zeros(8, np.int64) for _ in range(T)],
        sw_len=np.zeros(T, np.int64), sw_pos=np.full(n, -1, np.int64), s_count=np.zeros((T, maxg + 1), np.int64),
        hb_buf=[np.zeros(8, np.int64) for _ in range(T)], hb_len=np.zeros(T, np.int64), hb_pos=np.full(n, -1, np.int64),
        b_h=[np.zeros(8, np.int64) for _ in range(T)], b_f=[np.zeros((8, 3)) for _ in range(T)],
        b_n=np.zeros(T, np.int64), b_heaped=np.zeros(T, np.bool_), b_built=np.zeros(T, np.bool_), w_count=np.zeros(T, np.int64), round_at=np.full(1, -1.0),
        a_ptr=np.zeros(T, np.int64), key=np.zeros(n), est=est, revisions=np.zeros(n, np.int64),
        e_buf=[np.zeros(8, np.int64) for _ in range(T)], e_len=np.zeros(T, np.int64), e_pos=np.full(n, -1, np.int64),
        e_h=[np.zeros(8, np.int64) for _ in range(T)], e_f=[np.zeros((8, 3)) for _ in range(T)],
        e_n=np.zeros(T, np.int64), e_built=np.zeros(T, np.bool_), r=np.full(n, math.inf),
        sw_f=[np.zeros((8, SW_COLUMNS)) for _ in range(T)], a_f=[np.zeros((8, 1)) for _ in range(T)]))


def on_hold(s, p, j):
    bag_add(p.hb_buf, p.hb_len, p.hb_pos, s.job.tenant[j], j)


def on_unhold(s, p, j):
    bag_remove(p.hb_buf, p.hb_len, p.hb_pos, s.job.tenant[j], j)


@jitable
def revising(p):
    """Whether ASTRAEA-P puts started jobs predicted to end within a lease first (rule ≠ none)."""
    return p.params.by_prediction and p.params.rule != NONE


@jitable
def remaining(s, p, j):
    """Job j's revised predicted remaining time, estimate − service received (s); the estimate, p̂ at
    first, is revised by the policy's rule (schedulers.revision) once the service reaches it. Reads
    only what the scheduler sees: p̂, its spread and the service received. Unknown p̂ (NaN): inf."""
    eng = s.eng
    job = s.job
    a = attained_at(eng.group_of, eng.base, eng.g_V, eng.vjoin, j)
    return remaining_on(p.params.rule, p.est, p.revisions, job.log_sd, job.predicted, a, j)


@jitable(inline=True)
def remaining_on(rule, est, revisions, log_sd, predicted, a, j):
    """`remaining` of job j whose service is a, on arrays a caller that reads many jobs reads once."""
    r = revise_outlived(rule, est, revisions, j, a, log_sd[j], predicted[j]) - a
    return math.inf if math.isnan(r) else r


@jitable
def a_position(buf, keys, length, by_prediction, kj, j):
    """The first index of tenant's tier A buf[:length] not before j (of key kj) in tier A's order: j,
    or (key, j) for ASTRAEA-P (p̂, NaN as inf, i.e. last, as numpy's stable sort has it). The keys
    are read from keys[:length, 0], kept beside buf (ASTRAEA-P): in order, not from key[] at random."""
    lo = 0
    hi = length
    while lo < hi:
        mid = (lo + hi) // 2
        a = buf[mid]
        before = a < j
        if by_prediction:
            ka = keys[mid, 0]
            if ka != kj:
                before = ka < kj
        if before:
            lo = mid + 1
        else:
            hi = mid
    return lo


def on_wait(s, p, j, now):
    """j waits: into its tenant's tier A (in key order) or B."""
    k = s.job.tenant[j]
    p.w_count[k] += 1
    p.key[j] = p_key(p.params.by_prediction, s.job.predicted, j)
    if s.q.started[j]:
        i = p.sw_len[k]
        bag_add(p.sw_buf, p.sw_len, p.sw_pos, k, j)
        p.s_count[k, s.job.gpus[j]] += 1
        r = math.inf
        if revising(p):  # its r, fixed while it waits
            r = remaining(s, p, j)
            p.r[j] = r
            if r <= s.cfg.lease_s:
                bag_add(p.e_buf, p.e_len, p.e_pos, k, j)
        f = grown_rows(p.sw_f, k, i, len(p.sw_buf[k]))
        led = s.led
        job = s.job
        f[i, SW_ATT] = led.job_att[j]
        f[i, SW_WEIGHT] = job.weight[j]
        f[i, SW_BASE] = led.job_base[j]
        f[i, SW_CLASS] = job.xid[j]
        f[i, SW_R] = r
        f[i, SW_KEY] = p.key[j]
        return
    length = p.a_len[k]
    buf = room(p.a_buf, p.a_len, k)
    by_prediction = p.params.by_prediction
    kj = p.key[j]
    keys = grown_rows(p.a_f, k, length, len(buf)) if by_prediction else p.a_f[k]
    pos = a_position(buf, keys, length, by_prediction, kj, j)
    for i in range(length, pos, -1):
        buf[i] = buf[i - 1]
    buf[pos] = j
    if by_prediction:
        for i in range(length, pos, -1):
            keys[i, 0] = keys[i - 1, 0]
        keys[pos, 0] = kj
    p.a_len[k] = length + 1
    p.a_count[k, s.job.gpus[j]] += 1


def on_unwait(s, p, j):
    k = s.job.tenant[j]
    p.w_count[k] -= 1
    if s.q.started[j]:
        i = p.sw_pos[j]
        last = p.sw_len[k] - 1
        bag_remove(p.sw_buf, p.sw_len, p.sw_pos, k, j)
        if i != last:  # the last job took j's place in sw_buf: its row too
            f = p.sw_f[k]
            for c in range(SW_COLUMNS):
                f[i, c] = f[last, c]
        p.s_count[k, s.job.gpus[j]] -= 1
        if p.e_pos[j] >= 0:
            bag_remove(p.e_buf, p.e_len, p.e_pos, k, j)
        return
    length = p.a_len[k]
    buf = p.a_buf[k]
    keys = p.a_f[k]
    by_prediction = p.params.by_prediction
    pos = a_position(buf, keys, length, by_prediction, p.key[j], j)
    for i in range(pos, length - 1):
        buf[i] = buf[i + 1]
    if by_prediction:
        for i in range(pos, length - 1):
            keys[i, 0] = keys[i + 1, 0]
    p.a_len[k] = length - 1
    p.a_count[k, s.job.gpus[j]] -= 1


@jitable(inline=True)
def row_less(f, a, b):
    """Row a of f before row b: (key, second key, job) in that order (no key is NaN)."""
    x = f[a, 0]
    y = f[b, 0]
    if x != y:
        return x < y
    x = f[a, 1]
    y = f[b, 1]
    if x != y:
        return x < y
    return f[a, 2] < f[b, 2]


@jitable(inline=True)
def sift_down(h, n, i, f):
    """h[i] moved down the heap h[:n] of rows of f (row_less order) to its place."""
    j = h[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and row_less(f, h[c + 1], h[c]):
            c += 1
        if not row_less(f, h[c], j):
            break
        h[i] = h[c]
        i = c
    h[i] = j


@jitable
def heap_make(h, n, f):
    """h[:n] = 0, ..., n − 1 made a heap of the rows f[:n]: its head h[0] the smallest."""
    for i in range(n):
        h[i] = i
    heapify(h, n, f)


@jitable(inline=True)
def heapify(h, n, f):
    """h[:n], indices of rows of f, made a heap: its head h[0] the smallest."""
    for i in range(n // 2 - 1, -1, -1):
        sift_down(h, n, i, f)


@jitable(inline=True)
def heap_pop(h, n, f):
    """The head of the heap h[:n] taken off: (its job, the heap's new length)."""
    j = int(f[h[0], 2])
    n -= 1
    if n > 0:
        h[0] = h[n]
        sift_down(h, n, 0, f)
    return j, n


@jitable
def capacity(bufs, rows, k, m):
    """Tenant k's heap bufs[k] and its rows rows[k] made to hold m jobs (contents not kept); called
    only when they are too small (a call passing the lists costs reference counts)."""
    size = max(m, 2 * len(bufs[k]))
    bufs[k] = np.empty(size, np.int64)
    rows[k] = np.empty((size, 3))


@jitable
def grown_rows(rows, k, used, m):
    """Tenant k's rows rows[k], made to hold m rows first (its first `used` kept)."""
    f = rows[k]
    if f.shape[0] < m:
        grown = np.empty((m, f.shape[1]))
        grown[:used] = f[:used]
        rows[k] = grown
        return grown
    return f


@jitable
def tier_b(s, p, k, at_round, now):
    """Tenant k's tier B (its waiting jobs that ran, and its running jobs at a round) as rows (b_f)
    (ρ_job, p̂ for ASTRAEA-P or 0, j), its head found (b_h[0]) and the rest made a heap at the first
    pop (b_pop); without the jobs of e_h (ASTRAEA-P revising: tier_e, built first, read their r).
    The waiting ones' ρ_job from their rows (sw_f)."""
    sw_len = p.sw_len[k]
    hb_len = p.hb_len[k] if at_round else 0
    if len(p.b_h[k]) < sw_len + hb_len:
        capacity(p.b_h, p.b_f, k, sw_len + hb_len)
    h = p.b_h[k]
    bf = p.b_f[k]
    by_remaining = revising(p)
    lease = s.cfg.lease_s
    led = s.led
    Gk = led.G[k]
    sf = p.sw_f[k]
    buf = p.sw_buf[k]
    m = 0
    for i in range(sw_len):
        if by_remaining and sf[i, SW_R] <= lease:
            continue  # in e_h
        bf[m, 0] = rho_parts(sf[i, SW_ATT] + 0.0, sf[i, SW_WEIGHT], Gk[int(sf[i, SW_CLASS])], sf[i, SW_BASE])
        bf[m, 1] = sf[i, SW_KEY]
        bf[m, 2] = buf[i]
        m += 1
    if hb_len > 0:
        r = p.r
        key = p.key  # key[j]: p̂ for ASTRAEA-P, 0 for ASTRAEA (on_wait)
        job = s.job  # the arrays ρ_job reads, read once
        hold_since = led.hold_since
        job_att = led.job_att
        gpus = job.gpus
        tenant = job.tenant
        weight = job.weight
        G = led.G
        xid = job.xid
        job_base = led.job_base
        buf = p.hb_buf[k]
        for i in range(hb_len):
            j = buf[i]
            if by_remaining and r[j] <= lease:
                continue  # in e_h
            bf[m, 0] = rho_job_at(hold_since, job_att, gpus, tenant, weight, G, xid, job_base, j, now)
            bf[m, 1] = key[j]
            bf[m, 2] = j
            m += 1
    if m > 0:  # its head only: most tiers are read to their head alone, and heapified at a first pop (b_pop)
        best = 0
        for i in range(1, m):
            if row_less(bf, i, best):
                best = i
        h[0] = best
    p.b_heaped[k] = False
    p.b_n[k] = m
    p.b_built[k] = True


@jitable(inline=True)
def b_pop(b_h, b_f, b_n, b_heaped, k):
    """Tenant k's tier B's head taken off (p.b_h, p.b_f, p.b_n, p.b_heaped); the tier made a heap
    first if it is not yet one (tier_b finds only its head)."""
    h = b_h[k]
    f = b_f[k]
    n = b_n[k]
    if not b_heaped[k]:
        heap_make(h, n, f)
        b_heaped[k] = True
    _, n = heap_pop(h, n, f)
    b_n[k] = n


@jitable
def tier_e(s, p, k, at_round, now):
    """Tenant k's candidates ASTRAEA-P (revising) predicts to end within a lease, as a heap (e_h,
    e_f) of rows (revised remaining time, the same, j): its waiting ones (e_buf) and, at a round, its
    running ones, whose r is read now (into r[j], which tier_b reads)."""
    e_len = p.e_len[k]
    hb_len = p.hb_len[k] if at_round else 0
    if len(p.e_h[k]) < e_len + hb_len:
        capacity(p.e_h, p.e_f, k, e_len + hb_len)
    h = p.e_h[k]
    ef = p.e_f[k]
    r = p.r
    buf = p.e_buf[k]
    for i in range(e_len):
        j = buf[i]
        ef[i, 0] = r[j]
        ef[i, 1] = r[j]
        ef[i, 2] = j
    m = e_len
    if hb_len > 0:
        lease = s.cfg.lease_s
        eng = s.eng  # the arrays `remaining` reads, read once
        group_of = eng.group_of
        base = eng.base
        g_V = eng.g_V
        vjoin = eng.vjoin
        rule = p.params.rule
        est = p.est
        revisions = p.revisions
        log_sd = s.job.log_sd
        predicted = s.job.predicted
        buf = p.hb_buf[k]
        for i in range(hb_len):
            j = buf[i]
            rj = remaining_on(rule, est, revisions, log_sd, predicted, attained_at(group_of, base, g_V, vjoin, j), j)
            r[j] = rj
            if rj <= lease:
                ef[m, 0] = rj
                ef[m, 1] = rj
                ef[m, 2] = j
                m += 1
    heap_make(h, m, ef)
    p.e_n[k] = m
    p.e_built[k] = True


@jitable
def p_key(by_prediction, predicted, j):
    """ASTRAEA-P's p̂ key of job j (NaN last); 0 for ASTRAEA, which has none. Not inlined: numba's
    inlining of it into on_wait compiled a loop whose tier-A writes were lost (numba 0.68.1)."""
    if not by_prediction:
        return 0.0
    v = predicted[j]
    return math.inf if math.isnan(v) else v


# where a tenant's best candidate is (next_head): tier A's head, e_h's or b_h's
FROM_A, FROM_E, FROM_B = 0, 1, 2


@jitable
def next_head(s, p, k, at_round, now, taken, more):
    """Tenant k's candidate at `taken` (FROM_A, ...; -1: none), just placed by a phase-1 pick, taken
    off its tier; then, if `more`, (where the tenant's best candidate now is, its ASTRAEA-P phase-1
    key: its p̂, or its revised remaining time (from e_h), the job), else (-1, 0, -1). Each heap is
    built when a decision first reads it. Tier A first, unless ASTRAEA-P (revising) predicts a job
    to end within a lease (e_h); then tier B. Each call passing the state costs reference counts in
    the compiled loop, so the pick's caller places the job itself (`attempt`), and once a tenant's
    pick came from tier B (e_h and tier A read to their ends) takes the next one off tier B itself
    (b_pop); ASTRAEA's phase 1 (`decide`: tier A, then tier B) reads both heads itself."""
    if taken == FROM_A:
        p.a_ptr[k] += 1
    elif taken == FROM_E:
        _, n = heap_pop(p.e_h[k], p.e_n[k], p.e_f[k])
        p.e_n[k] = n
    elif taken == FROM_B:
        b_pop(p.b_h, p.b_f, p.b_n, p.b_heaped, k)
    if not more:
        return -1, 0.0, -1
    a_ptr = p.a_ptr[k]
    a_len = p.a_len[k]
    rev = revising(p)
    # tier A first, without e_h's build, when tier B is empty or ASTRAEA does not revise
    if a_ptr < a_len and (not rev or p.w_count[k] == a_len and not (at_round and p.hb_len[k] > 0)):
        j = p.a_buf[k][a_ptr]
        return FROM_A, p.key[j], j
    if rev:
        if not p.e_built[k]:
            if p.e_len[k] > 0 or at_round and p.hb_len[k] > 0:
                tier_e(s, p, k, at_round, now)
            else:  # nothing to key (most fills): e_h empty, without the call
                p.e_n[k] = 0
                p.e_built[k] = True
        if p.e_n[k] > 0:
            ef = p.e_f[k]
            i = p.e_h[k][0]
            return FROM_E, ef[i, 0], int(ef[i, 2])  # the revised remaining time of a job predicted to end within a lease
    if a_ptr < a_len:
        j = p.a_buf[k][a_ptr]
        return FROM_A, p.key[j], j
    if not p.b_built[k]:
        tier_b(s, p, k, at_round, now)
    bf = p.b_f[k]
    i = p.b_h[k][0]
    return FROM_B, bf[i, 1], int(bf[i, 2])  # p̂


@jitable(inline=True)
def charge(gpus, lease, k, j, head, chosen, charged):
    """Job j, placed by tenant k's pick (next_head, attempt), chosen; the tenant pre-charged demand
    (gpus[j]) × lease."""
    head[k] += 1
    chosen.append(j)
    charged[k] += gpus[j] * lease


@jitable
def open_tenants(s, p, at_round, now, end, charged, fair_k):
    """A decision's start: each tenant's candidate count (end: its waiting jobs, and its running ones
    at a round), and for every tenant with a candidate its ledgers advanced to now (as when each
    ρ_job is read), its attained and fair GPU·s read into charged and fair_k."""
    b_built = p.b_built  # read once, not per tenant (each read through the state costs reference counts)
    e_built = p.e_built
    a_ptr = p.a_ptr
    w_count = p.w_count
    hb_len = p.hb_len
    led = s.led
    att = led.att
    fair = led.fair
    t_last = led.t_last
    for k in range(s.job.T):
        b_built[k] = False
        e_built[k] = False
        a_ptr[k] = 0
        end[k] = w_count[k] + (hb_len[k] if at_round else 0)
        if end[k] > 0:
            if now - t_last[k] > 0.0:  # else advance has nothing to integrate
                advance(s, k, now)
            charged[k] = att[k]
            fair_k[k] = fair[k]


@jitable
def band_phase1(s, p, at_round, now, chosen, head, end, charged, fair_k, skipped):
    """ASTRAEA-P's phase 1 (AstraeaP): among the tenants whose pre-charged ρ_tenant is within
    `band` of the smallest, the one whose best candidate has the smallest key (p̂, or revised
    remaining time); ties ρ_tenant, then k. With every p̂ equal and rule none this is ASTRAEA's
    (ρ_tenant, k) order: the smallest ρ is in the band."""
    T = s.job.T
    active = np.zeros(T, np.bool_)
    rho = np.zeros(T)
    key = np.zeros(T)  # the key of the tenant's best candidate
    where = np.zeros(T, np.int64)  # where that candidate is (next_head)
    cand = np.zeros(T, np.int64)  # that candidate
    open_tenants(s, p, at_round, now, end, charged, fair_k)
    for k in range(T):
        if end[k] > 0:
            rho[k] = rho_of(charged[k], fair_k[k])
            where[k], key[k], cand[k] = next_head(s, p, k, at_round, now, -1, True)
            active[k] = True
    totals = s.nodes.plan_total if at_round else s.nodes.free_total  # total_now, and the pick's arrays, read once
    gpus = s.job.gpus
    lease = s.cfg.lease_s
    band = p.params.band
    b_h = p.b_h
    b_f = p.b_f
    b_n = p.b_n
    b_heaped = p.b_heaped
    while totals[0] > 0:
        low = math.inf
        for k in range(T):
            if active[k] and rho[k] < low:
                low = rho[k]
        best = -1
        for k in range(T):  # (key of the best candidate, ρ_tenant, k) over the band
            if active[k] and rho[k] <= low + band and (
                    best < 0 or key[k] < key[best] or (key[k] == key[best] and rho[k] < rho[best])):
                best = k
        if best < 0:
            return
        k = best
        j = cand[k]
        if gpus[j] > totals[0] or not attempt(s, j, now, at_round, -1):  # too large: attempt() would refuse it
            skipped.append(k)
            active[k] = False
            continue
        charge(gpus, lease, k, j, head, chosen, charged)
        rho[k] = rho_of(charged[k], fair_k[k])
        active[k] = head[k] < end[k]
        if where[k] == FROM_B:  # e_h and tier A are read to their ends: tier B's next head, without a call
            b_pop(b_h, b_f, b_n, b_heaped, k)
            if active[k]:
                bf = b_f[k]
                i = b_h[k][0]
                key[k] = bf[i, 1]
                cand[k] = int(bf[i, 2])
        else:
            where[k], key[k], cand[k] = next_head(s, p, k, at_round, now, where[k], active[k])


@jitable
def leftover_tier_a(s, p, k, at_round, now, chosen):
    """The leftover pass over tenant k's tier A from its head on (plain waiting jobs: a tier none of
    whose gang sizes can be placed is left at once); False once no GPU is left."""
    gpus = s.job.gpus
    i = p.a_ptr[k]
    buf = p.a_buf[k]
    a_len = p.a_len[k]
    fits = may_fit(s, p.a_count, k, total_now(s, at_round))
    while i < a_len and fits:
        total = total_now(s, at_round)
        if total == 0:
            return False
        j = buf[i]
        i += 1
        if gpus[j] <= total:
            misses = len(s.plan.missed_list)
            if attempt(s, j, now, at_round, -1):
                chosen.append(j)
                fits = may_fit(s, p.a_count, k, total_now(s, at_round))
            elif len(s.plan.missed_list) != misses:
                fits = may_fit(s, p.a_count, k, total)
    p.a_ptr[k] = i
    return total_now(s, at_round) > 0


@jitable
def leftover_ending(s, p, k, at_round, now, chosen):
    """The leftover pass over tenant k's candidates predicted to end within a lease (ASTRAEA-P
    revising: they come before its tier A); False once no GPU is left."""
    if p.w_count[k] == p.a_len[k] and not (at_round and p.hb_len[k] > 0):
        return True  # no tier B
    if not p.e_built[k]:
        tier_e(s, p, k, at_round, now)
    h = p.e_h[k]
    ef = p.e_f[k]
    gpus = s.job.gpus
    totals = s.nodes.plan_total if at_round else s.nodes.free_total  # total_now, read once
    n = p.e_n[k]
    while n > 0:
        total = totals[0]
        if total == 0:
            p.e_n[k] = n
            return False
        j, n = heap_pop(h, n, ef)
        if gpus[j] <= total and attempt(s, j, now, at_round, -1):
            chosen.append(j)
    p.e_n[k] = 0
    return totals[0] > 0


@jitable
def eligible(spec, plain, missed, total):
    """How many jobs counted in spec (running, or preempted at this instant) and plain (the other
    waiting ones), per gang size, attempt() may still try: a size that fits in `total`, and for a
    plain job one that has not missed since the last choice."""
    m = 0
    top = total if total < len(spec) - 1 else len(spec) - 1
    for g in range(1, top + 1):
        m += spec[g]
        if not missed[g]:
            m += plain[g]
    return m


@jitable
def leftover_tier_b(s, p, k, at_round, now, chosen):
    """The leftover pass over tenant k's tier B, best first; False once no GPU is left. Only the jobs
    that fit in the GPUs left at its start are heaped (the others attempt() refuses to the end), and
    the pass stops once attempt() would refuse every job left (counted per gang size, `eligible`):
    the same attempts, in the same order, as reading the tier to its end."""
    totals = s.nodes.plan_total if at_round else s.nodes.free_total  # total_now, read once
    gpus = s.job.gpus
    holding = s.q.holding
    preempted_at = s.q.preempted_at
    missed = s.plan.missed
    h = p.b_h[k]
    bf = p.b_f[k]
    n = p.b_n[k]
    heaped = p.b_heaped[k]
    total = totals[0]
    spec = np.zeros(s.job.maxg + 1, np.int64)
    plain = np.zeros(s.job.maxg + 1, np.int64)
    m = 0
    for i in range(n):  # the rows left (a heap's, or all of an unheaped tier) that fit in `total`
        r = h[i] if heaped else i
        j = int(bf[r, 2])
        g = gpus[j]
        if g <= total:
            h[m] = r
            m += 1
            if holding[j] or preempted_at[j] == now:
                spec[g] += 1
            else:
                plain[g] += 1
    heapify(h, m, bf)
    p.b_n[k] = 0
    left = eligible(spec, plain, missed, total)
    while m > 0 and left > 0:
        total = totals[0]
        if total == 0:
            return False
        j, m = heap_pop(h, m, bf)
        g = gpus[j]
        special = holding[j] or preempted_at[j] == now
        if special:
            spec[g] -= 1
        else:
            plain[g] -= 1
        if refused(g, total, missed, special):
            continue
        if attempt(s, j, now, at_round, -1):
            chosen.append(j)
        left = eligible(spec, plain, missed, totals[0])
    return totals[0] > 0


@jitable
def leftovers(s, p, at_round, now, chosen, charged, fair_k, skipped, quick):
    """After phase 1: the skipped tenants' candidates in (ρ_tenant, k) order, each that fits."""
    ks = np.sort(np.array(skipped))
    r = np.empty(len(ks))
    for i in range(len(ks)):
        r[i] = rho_of(charged[ks[i]], fair_k[ks[i]])
    for k in ks[np.argsort(r, kind="mergesort")]:  # (ρ_tenant, k)
        if revising(p) and not leftover_ending(s, p, k, at_round, now, chosen):
            return
        if p.a_ptr[k] < p.a_len[k] and not leftover_tier_a(s, p, k, at_round, now, chosen):
            return
        if p.w_count[k] == p.a_len[k] and not (at_round and p.hb_len[k] > 0):
            continue  # no tier B
        if quick and not may_fit(s, p.s_count, k, total_now(s, at_round)):
            continue
        if not p.b_built[k]:
            tier_b(s, p, k, at_round, now)
        if not leftover_tier_b(s, p, k, at_round, now, chosen):
            return


def decide(s, p, at_round, now, chosen):
    """Astraea.select: tenants by pre-charged ρ_tenant (ASTRAEA-P: band_phase1), each tenant's
    candidates best first (tier A in its kept order, then tier B, keyed when a decision first
    reaches it; merged by key when ASTRAEA-P revises); then the skipped tenants' candidates in
    (ρ_tenant, k) order (leftovers). At a fill with no round at this instant every candidate is a
    plain waiting job, so a tier none of whose gang sizes can be placed is passed over unread."""
    m = (s.q.n_hold[0] if at_round else 0) + s.q.n_wait[0]
    count_decision(s, m)
    if at_round:
        p.round_at[0] = now
    quick = not at_round and p.round_at[0] != now
    head = np.zeros(s.job.T, np.int64)
    end = np.zeros(s.job.T, np.int64)
    charged = np.zeros(s.job.T)
    fair_k = np.zeros(s.job.T)
    skipped = [0]
    skipped.clear()
    if p.params.by_prediction:
        band_phase1(s, p, at_round, now, chosen, head, end, charged, fair_k, skipped)
    else:
        T = s.job.T
        rho = np.zeros(T)  # the pre-charged ρ_tenant of each tenant still to pick (`left`)
        left = np.zeros(T, np.bool_)
        open_tenants(s, p, at_round, now, end, charged, fair_k)
        for k in range(T):
            if end[k] > 0:
                rho[k] = rho_of(charged[k], fair_k[k])
                left[k] = True
        a_ptr = p.a_ptr  # the pick's arrays, read once (next_head's order for ASTRAEA: tier A, then B)
        a_len = p.a_len
        a_buf = p.a_buf
        b_h = p.b_h
        b_f = p.b_f
        b_n = p.b_n
        b_heaped = p.b_heaped
        b_built = p.b_built
        s_count = p.s_count
        totals = s.nodes.plan_total if at_round else s.nodes.free_total  # total_now
        gpus = s.job.gpus
        lease = s.cfg.lease_s
        from_b = np.zeros(T, np.bool_)  # tier A read to its end: the tenant's picks are tier B's
        while totals[0] > 0:
            k = -1
            for t in range(T):  # the smallest (ρ_tenant, k): a scan of the few tenants, not a heap of tuples
                if left[t] and (k < 0 or rho[t] < rho[k]):
                    k = t
            if k < 0:
                break
            left[k] = False
            if not from_b[k] and a_ptr[k] < a_len[k]:
                j = a_buf[k][a_ptr[k]]
            else:
                if not from_b[k]:
                    if quick and not may_fit(s, s_count, k, totals[0]):
                        skipped.append(k)  # whichever job heads tier B, attempt() would refuse it: not keyed
                        continue
                    if not b_built[k]:
                        tier_b(s, p, k, at_round, now)
                    from_b[k] = True
                j = int(b_f[k][b_h[k][0], 2])
            if gpus[j] > totals[0] or not attempt(s, j, now, at_round, -1):  # too large: attempt() would refuse it
                skipped.append(k)
                continue
            charge(gpus, lease, k, j, head, chosen, charged)
            if from_b[k]:
                b_pop(b_h, b_f, b_n, b_heaped, k)
            else:
                a_ptr[k] += 1
            if head[k] < end[k]:
                rho[k] = rho_of(charged[k], fair_k[k])
                left[k] = True
    if len(skipped) == 0 or total_now(s, at_round) == 0:
        return
    leftovers(s, p, at_round, now, chosen, charged, fair_k, skipped, quick)


KERNEL = kernel(Astraea.name, AstraeaParams, AstraeaState, setup=setup, select=decide, on_wait=on_wait,
                on_unwait=on_unwait, on_hold=on_hold, on_unhold=on_unhold)
