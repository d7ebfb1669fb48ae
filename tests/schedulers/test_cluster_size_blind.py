"""A kernel of a policy that is not clairvoyant cannot read true sizes: they are not in the state it is
given (`s`, every group and array reachable from it) nor in its `setup`, by construction
(schedulers.cluster.kernels: only a kernel registered `clairvoyant=True` gets them, and only a
clairvoyant policy may run one). The behavioural test beside it (test_cluster_no_size_leak.py)
checks the built-in policies' decisions; this one checks what a kernel can reach at all.
"""

from collections import namedtuple

import numpy as np
import pytest

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.placement import place_in_order
from schedulers.cluster.queues import candidates
from schedulers.cluster.rule import params_of
from schedulers.cluster.settings import ClusterSettings
from schedulers.cluster.state import group
from schedulers.jobs import JobSet
from schedulers.policy_base import PolicyError

# sizes no other number of the run equals (submit times, ticks, leases and GPU counts are whole)
SIZES = [1000.123, 2000.456, 1500.789, 700.321, 3000.654]
SEEN: list[set] = []


def _reachable_numbers(obj, seen=None, among=None) -> set:
    """Every number stored anywhere reachable from `obj` (groups, arrays, lists, heap tuples); with
    `among` (a list of floats), only those of them that are reachable.

    The state holds the executed stretches' preallocated chunks (millions of entries): turning them into
    Python floats at every decision took a minute of CPU, where asking which of the sizes they hold does not.
    """
    seen = set() if seen is None else seen
    out: set = set()
    if id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "fiu":
            values = np.asarray(obj, np.float64)
            out.update(values.ravel().tolist() if among is None else [x for x in among if (values == x).any()])
        return out
    if isinstance(obj, (int, float, np.integer, np.floating)) and not isinstance(obj, bool):
        if among is None or float(obj) in among:
            out.add(float(obj))
        return out
    if isinstance(obj, (list, tuple)):  # namedtuples (the groups) too
        for item in obj:
            out |= _reachable_numbers(item, seen, among)
    return out


PeekParams = namedtuple("PeekParams", "")
PeekState = namedtuple("PeekState", "params")


def _setup(s, params, *rest):
    SEEN.append(_reachable_numbers(rest))  # what setup is given beyond the state
    return group(PeekState(params))


def _select(s, p, at_round, now, chosen):
    SEEN.append((now, _reachable_numbers(s, among=SIZES)))  # the test asks only about the sizes
    order = candidates(s, at_round)
    place_in_order(s, order, len(order), now, at_round, chosen)


kernel("test-peek", PeekParams, PeekState, setup=_setup, select=_select, compilable=False)


class Peek(ClusterPolicy):
    name = "test-peek"

    def kernel_params(self):
        return PeekParams()


def _jobs():
    return JobSet.from_arrays([0.0, 0.0, 10.0, 20.0, 30.0], SIZES, gpus=[8, 4, 8, 4, 8],
                              tenant=["a", "b", "a", "b", "a"])


def test_a_kernel_that_is_not_clairvoyant_reaches_no_true_size(monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    SEEN.clear()
    run = simulate_fairness(_jobs(), Peek(), cluster=ClusterSettings.of(nodes=1, gpus_per_node=8, lease_s=300,
                                                                         cold_start_s=0))
    assert run.metrics["completed"] == 5
    setup_given, decisions = SEEN[0], SEEN[1:]
    assert setup_given == set()  # setup got nothing but the state
    done = run.jobs["completion_time"].to_numpy()
    started = run.jobs["start_time"].to_numpy()
    # decisions while jobs ran: before its completion a job's true size is nowhere the kernel can reach
    running_at = [now for now, _ in decisions if any(started[j] <= now < done[j] for j in range(5))]
    assert len(running_at) >= 3
    for now, numbers in decisions:
        unfinished = {SIZES[j] for j in range(5) if done[j] > now}
        assert not numbers & unfinished, now


def test_a_clairvoyant_kernel_is_given_them_and_only_a_clairvoyant_policy_runs_it(monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    ClairParams = namedtuple("ClairParams", "")
    ClairState = namedtuple("ClairState", "params size")
    got = []

    def setup(s, params, size):
        got.append(size.tolist())
        return group(ClairState(params, size))

    def select(s, p, at_round, now, chosen):
        order = candidates(s, at_round)
        order = order[np.argsort(p.size[order], kind="mergesort")]
        place_in_order(s, order, len(order), now, at_round, chosen)

    kernel("test-clairvoyant", ClairParams, ClairState, setup=setup, select=select, compilable=False,
           clairvoyant=True)

    class Reads(ClusterPolicy):
        name = "test-clairvoyant"
        clairvoyant = True

        def kernel_params(self):
            return ClairParams()

    class Hides(Reads):
        clairvoyant = False

    run = simulate_fairness(_jobs(), Reads(), cluster=ClusterSettings.of(nodes=1, gpus_per_node=8))
    assert got == [SIZES] and run.metrics["completed"] == 5
    with pytest.raises(PolicyError, match="reads true sizes"):
        params_of(Hides(), _jobs())
