"""Placement on the cluster simulator's nodes, written once over a run's state (`s.nodes`, `s.plan`):
where a gang job goes, a round's plan and its compaction, and the rule itself.

A *placement* is a set of (node, gpus) pairs; a gang job gets all its GPUs at once or none.
Placement `consolidated` (as in ASTRAEA; `find_placement`): fewest nodes, then best fit —
  1. if one node has enough free GPUs, take the node with the *fewest* free GPUs that still fits
     (best fit; ties: lowest node index);
  2. otherwise the job spans whole nodes: entirely free nodes, largest first, until the remainder
     fits on one node, which is then chosen by best fit among the others (it may be partly used).
     On a homogeneous cluster a 12-GPU job on 8-GPU nodes takes one whole node plus 4 GPUs.
     A job that fits on one node never spreads over several partly used nodes (it waits instead),
     and a multi-node job uses partly used nodes only for its remainder.
A policy may restrict a job to the nodes of one tenant (HiveD's cells: `restrict` >= 0).

A decision places its choices with `attempt` / `place_in_order` onto the round plan (at a round:
rows 1 and 2 of `fr2`, the plan's free and unclaimed GPUs; a running job keeps its GPUs when they
are free there) or onto the cluster's free GPUs (at a fill); `compact` repacks a round's plan,
`prepare_round` starts one.

May import numpy, schedulers.jit and schedulers.cluster.state.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from schedulers.cluster.state import ROUNDS
from schedulers.jit import jitable


@jitable(inline=True)
def _best_fit(fr, need, use_used, used, owner, restrict):
    """The node with the fewest free GPUs that still holds `need` (lowest index), -1 if none; only
    nodes of tenant `restrict` (HiveD's cells) when it is >= 0, not those marked `used`."""
    best, best_free = -1, 0
    for i in range(fr.shape[0]):
        f = fr[i]
        if f >= need and not (use_used and used[i]) and (restrict < 0 or owner[i] == restrict):
            if best < 0 or f < best_free:
                best, best_free = i, f
    return best


@jitable
def find_placement(fr, total, g, nodes, restrict):
    """The consolidated placement (the module's rule) of a g-GPU gang on free counts `fr` (sum
    `total`; on the nodes of tenant `restrict` only, when >= 0), written into nodes.found_node /
    nodes.found_k; its number of parts (0: none). `nodes`: the run's `s.nodes`, or any record with
    its fields cap, node_order, maxcap, owner (the nodes' tenants) and the scratch used, found_node,
    found_k (`search_nodes`)."""
    if g > total or g < 1:
        return 0
    maxcap = nodes.maxcap
    used = nodes.used
    owner = nodes.owner
    found_node = nodes.found_node
    found_k = nodes.found_k
    if g <= maxcap:
        node = _best_fit(fr, g, False, used, owner, restrict)
        if node >= 0:
            found_node[0] = node
            found_k[0] = g
            return 1
    cap = nodes.cap
    node_order = nodes.node_order
    N = fr.shape[0]
    for i in range(N):
        used[i] = False
    parts = 0
    remaining = g
    for idx in range(N):  # wholly free nodes, largest first (ties: index)
        nd = node_order[idx]
        if fr[nd] != cap[nd] or not (restrict < 0 or owner[nd] == restrict):
            continue
        if remaining <= maxcap:
            last = _best_fit(fr, remaining, True, used, owner, restrict)
            if last >= 0:
                found_node[parts] = last
                found_k[parts] = remaining
                return parts + 1
        take = cap[nd] if cap[nd] < remaining else remaining
        found_node[parts] = nd
        found_k[parts] = take
        parts += 1
        used[nd] = True
        remaining -= take
        if remaining == 0:
            return parts
    if 0 < remaining <= maxcap:
        last = _best_fit(fr, remaining, True, used, owner, restrict)
        if last >= 0:
            found_node[parts] = last
            found_k[parts] = remaining
            return parts + 1
    return 0


SearchNodes = namedtuple("SearchNodes", "cap node_order maxcap owner used found_node found_k")


def search_nodes(cap, owner=None, max_parts=None) -> SearchNodes:
    """The nodes `find_placement` reads, for capacities `cap` outside a run (`owner`: each node's
    tenant, 0 for all by default; `max_parts`: the most parts a placement may have)."""
    cap = np.asarray(cap, np.int64)
    order = np.array(sorted(range(len(cap)), key=lambda i: (-int(cap[i]), i)), np.int64)
    owner = np.zeros(len(cap), np.int64) if owner is None else np.asarray(owner, np.int64)
    parts = len(cap) + 1 if max_parts is None else int(max_parts) + 1
    return SearchNodes(cap, order, int(cap.max()), owner, np.zeros(len(cap), np.bool_), np.zeros(parts, np.int64),
                       np.zeros(parts, np.int64))


@jitable(inline=True)
def find(s, fr, total, g, restrict):
    """Cluster.find on free counts `fr` (sum `total`): the number of parts of the placement written
    into s.nodes.found_node / found_k (0: none)."""
    return find_placement(fr, total, g, s.nodes, restrict)


@jitable
def _sync(node, fr2, tot, held):
    """RoundPlan._sync: a node's unclaimed GPUs = planned free minus held by undecided running jobs."""
    v = fr2[1, node] - held[node]
    if v < 0:
        v = 0
    tot[2] += v - fr2[2, node]
    fr2[2, node] = v


@jitable
def place_held(s, j, hold, at_round, restrict):
    """place_job's first choice: job j (running, or preempted at this instant) onto the GPUs it
    holds, if it holds some and they are free on the round plan (at_round: rows 1 and 2 of fr2) or
    the real cluster (row 0); False if not. Its own function: the arrays it reads are not read on
    place_job's other paths, so that the compiled loop's reference counts on them are pruned."""
    plan = s.plan
    pl_len = plan.pl_len
    if pl_len[j] == 0:
        return False
    row = 1 if at_round else 0
    nodes = s.nodes
    fr2 = nodes.fr2
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    for i in range(pl_len[j]):
        if fr2[row, pl_node[j, i]] < pl_k[j, i] or not (restrict < 0 or nodes.owner[pl_node[j, i]] == restrict):
            return False
    tot = nodes.tot
    held = nodes.held
    for i in range(pl_len[j]):
        node, k = pl_node[j, i], pl_k[j, i]
        fr2[row, node] -= k
        tot[row] -= k
        if at_round:
            if hold:  # RoundPlan.renew: planned and held drop together
                held[node] -= k
            else:
                _sync(node, fr2, tot, held)
    if plan.plan_len[j] == 0:
        plan.planned.append(j)
    plan.plan_len[j] = pl_len[j]
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    for i in range(pl_len[j]):
        plan_node[j, i] = pl_node[j, i]
        plan_k[j, i] = pl_k[j, i]
    plan.plan_restrict[j] = restrict
    return True


@jitable
def place_job(s, j, hold, preempted_now, at_round, g, restrict):
    """ClusterPolicy.try_place of job j on the round plan (at_round: rows 1 and 2 of fr2) or the real
    cluster (row 0): its held GPUs if it runs (or was preempted at this instant) and they are free
    there (place_held), else a consolidated placement; the plan is written into
    plan_len/plan_node/plan_k (and `restrict` into plan_restrict).
    Each array is read from the state only on the path that needs it (every read of the state in
    the compiled loop takes and drops reference counts, and most attempts fail at the first test)."""
    if (hold or preempted_now) and place_held(s, j, hold, at_round, restrict):
        return True
    row = 1 if at_round else 0
    nodes = s.nodes
    tot = nodes.tot
    if g > tot[row]:
        return False
    plan = s.plan
    fr2 = nodes.fr2
    found_node = nodes.found_node
    found_k = nodes.found_k
    parts = 0
    if at_round:
        parts = find(s, fr2[2], tot[2], g, restrict)
    if parts == 0:
        parts = find(s, fr2[row], tot[row], g, restrict)
    if parts == 0:
        return False
    held = nodes.held
    for i in range(parts):
        fr2[row, found_node[i]] -= found_k[i]
        tot[row] -= found_k[i]
        if at_round:
            _sync(found_node[i], fr2, tot, held)
    if at_round and hold:  # RoundPlan.decided: the GPUs it held are no longer held
        pl_len = plan.pl_len
        pl_node = plan.pl_node
        pl_k = plan.pl_k
        for i in range(pl_len[j]):
            held[pl_node[j, i]] -= pl_k[j, i]
            _sync(pl_node[j, i], fr2, tot, held)
    if plan.plan_len[j] == 0:
        plan.planned.append(j)
    plan.plan_len[j] = parts
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    for i in range(parts):
        plan_node[j, i] = found_node[i]
        plan_k[j, i] = found_k[i]
    plan.plan_restrict[j] = restrict
    return True


@jitable(inline=True)
def try_place(s, j, now, at_round, restrict):
    """ClusterPolicy.try_place (restrict >= 0: allowed = that tenant's HiveD cells)."""
    q = s.q
    return place_job(s, j, q.holding[j], q.preempted_at[j] == now, at_round, s.job.gpus[j], restrict)


@jitable(inline=True)
def attempt(s, j, now, at_round, restrict):
    """try_place, without the placement search for a waiting job whose gang size already found
    none in this decision since the last choice: the free GPUs (the plan's, at a round) change
    only when a job is placed, and a waiting job's placement is a function of them alone (the
    Python rules call try_place, which fails again; place_leftovers skips it the same way).
    Each of the state's arrays is read once (a decision may make thousands of attempts)."""
    q = s.q
    hold = q.holding[j]
    preempted_now = q.preempted_at[j] == now
    g = s.job.gpus[j]
    plan = s.plan
    missed = plan.missed
    plain = restrict < 0 and not hold and not preempted_now
    if plain and missed[g]:
        return False
    if place_job(s, j, hold, preempted_now, at_round, g, restrict):
        for m in plan.missed_list:
            missed[m] = False
        plan.missed_list.clear()
        return True
    if plain:
        missed[g] = True
        plan.missed_list.append(g)
    return False


@jitable(inline=True)
def refused(g, total, missed, special):
    """Whether attempt() refuses a job of g GPUs at once, with `total` GPUs free: it is too large, or
    it is a plain waiting job (not `special`: running, or preempted at this instant) of a gang size
    that missed since the last placement. A pass over many jobs tests this on arrays read once."""
    return g > total or (missed[g] and not special)


@jitable
def place_in_order(s, order, count, now, at_round, chosen):
    """place_leftovers: each job of order[:count] that fits, in order."""
    # The state's arrays are read into locals once: a decision may read thousands of waiting jobs
    # here, most of them refused at once (too large, or a gang size that already missed), and in the
    # compiled loop every `s.group.array` read is a reference count taken and dropped (an atomic
    # operation each), which costs more than the test itself.
    gpus = s.job.gpus
    totals = s.nodes.plan_total if at_round else s.nodes.free_total
    missed = s.plan.missed
    holding = s.q.holding
    preempted_at = s.q.preempted_at
    for i in range(count):
        total = totals[0]
        if total == 0:
            break
        j = order[i]
        g = gpus[j]
        if refused(g, total, missed, holding[j] or preempted_at[j] == now):
            continue
        if attempt(s, j, now, at_round, -1):
            chosen.append(j)


@jitable(inline=True)
def total_now(s, at_round):
    return s.nodes.plan_total[0] if at_round else s.nodes.free_total[0]


@jitable
def release_placement(s, j):
    plan = s.plan  # each array read once (every read through the state costs reference counts)
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    nodes = s.nodes
    free = nodes.free
    free_total = nodes.free_total
    for i in range(plan.pl_len[j]):
        free[pl_node[j, i]] += pl_k[j, i]
        free_total[0] += pl_k[j, i]


@jitable
def plan_fits_on(s, fr, j):
    plan = s.plan
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    for i in range(plan.plan_len[j]):
        if fr[plan_node[j, i]] < plan_k[j, i]:
            return False
    return True


@jitable
def plan_equals_placement(s, j):
    plan = s.plan
    return same_placement(plan.plan_len, plan.plan_node, plan.plan_k, plan.pl_len, plan.pl_node, plan.pl_k, j)


@jitable
def same_placement(plan_len, plan_node, plan_k, pl_len, pl_node, pl_k, j):
    """plan_equals_placement on the plan's arrays, read once by a caller that compares many jobs."""
    n = pl_len[j]
    if plan_len[j] != n:
        return False
    for i in range(n):
        if plan_node[j, i] != pl_node[j, i] or plan_k[j, i] != pl_k[j, i]:
            return False
    return True


@jitable
def set_plan_from_placement(s, j):
    if s.plan.plan_len[j] == 0:
        s.plan.planned.append(j)
    s.plan.plan_len[j] = s.plan.pl_len[j]
    for i in range(s.plan.pl_len[j]):
        s.plan.plan_node[j, i] = s.plan.pl_node[j, i]
        s.plan.plan_k[j, i] = s.plan.pl_k[j, i]


@jitable
def clear_plan(s):
    for j in s.plan.planned:
        s.plan.plan_len[j] = 0
    s.plan.planned.clear()


@jitable
def compact(s, chosen):
    nodes = s.nodes
    plan = s.plan
    holding = s.q.holding
    pl_len = plan.pl_len
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    plan_len = plan.plan_len
    plan_node = plan.plan_node
    plan_k = plan.plan_k
    same = True
    for j in chosen:
        if holding[j] and not same_placement(plan_len, plan_node, plan_k, pl_len, pl_node, pl_k, j):
            same = False
            break
    if same:
        return
    packed = nodes.packed
    for i in range(nodes.N):
        packed[i] = nodes.cap[i]
    packed_total = nodes.M
    for j in chosen:
        if holding[j]:
            for i in range(pl_len[j]):
                packed[pl_node[j, i]] -= pl_k[j, i]
                packed_total -= pl_k[j, i]
    nodes.packed_total[0] = packed_total
    new_len = np.zeros(len(chosen), np.int64)
    new_node = np.zeros((len(chosen), s.cfg.P), np.int64)
    new_k = np.zeros((len(chosen), s.cfg.P), np.int64)
    for c in range(len(chosen)):
        j = chosen[c]
        if holding[j]:
            continue
        if plan_fits_on(s, packed, j):
            new_len[c] = plan_len[j]
            for i in range(plan_len[j]):
                new_node[c, i] = plan_node[j, i]
                new_k[c, i] = plan_k[j, i]
        else:
            parts = find(s, packed, nodes.packed_total[0], s.job.gpus[j], plan.plan_restrict[j])
            if parts == 0:
                return
            new_len[c] = parts
            for i in range(parts):
                new_node[c, i] = nodes.found_node[i]
                new_k[c, i] = nodes.found_k[i]
        for i in range(new_len[c]):
            packed[new_node[c, i]] -= new_k[c, i]
            nodes.packed_total[0] -= new_k[c, i]
    for c in range(len(chosen)):
        j = chosen[c]
        if holding[j]:
            set_plan_from_placement(s, j)
        else:
            plan_len[j] = new_len[c]
            for i in range(new_len[c]):
                plan_node[j, i] = new_node[c, i]
                plan_k[j, i] = new_k[c, i]


@jitable
def prepare_round(s):
    """A RoundPlan: every GPU free to plan; the running candidates' GPUs held until decided."""
    s.counters[ROUNDS] += 1
    for j in s.q.undo_list:
        s.q.undo_until[j] = math.nan
    s.q.undo_list.clear()
    nodes = s.nodes
    plan = s.plan
    cap = nodes.cap
    held = nodes.held
    unclaimed = nodes.unclaimed
    pl_len = plan.pl_len
    pl_node = plan.pl_node
    pl_k = plan.pl_k
    for i in range(nodes.N):
        nodes.plan_free[i] = cap[i]
        held[i] = 0
    nodes.plan_total[0] = nodes.M
    hold_list = s.q.hold_list
    for h in range(s.q.n_hold[0]):
        j = hold_list[h]
        for i in range(pl_len[j]):
            held[pl_node[j, i]] += pl_k[j, i]
    total = 0
    for i in range(nodes.N):
        v = cap[i] - held[i]
        unclaimed[i] = v if v > 0 else 0
        total += unclaimed[i]
    nodes.unclaimed_total[0] = total


@jitable
def may_place(s):
    """Whether some waiting job's gang size has a placement on the free GPUs. One pass over the nodes
    answers for most sizes: a size up to the most free GPUs of one node has one (on that node), and
    a larger one needs a wholly free node to start from (else `find` finds none); only a larger size
    with a wholly free node is searched."""
    total = s.nodes.free_total[0]
    if total == 0:
        return False
    free = s.nodes.free
    cap = s.nodes.cap
    most = 0
    whole = False
    for i in range(s.nodes.N):
        if free[i] > most:
            most = free[i]
        if free[i] == cap[i]:
            whole = True
    wait_demand = s.q.wait_demand
    for g in range(1, s.job.maxg + 1):
        if wait_demand[g] > 0 and g <= total:
            if g <= most or whole and find(s, free, total, g, -1) > 0:
                return True
    return False
