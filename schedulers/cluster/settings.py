"""The cluster a run simulates, and how: `ClusterSettings`, owned by the cluster simulator
(schedulers.cluster.simulator), not by a policy — the nodes, the lease and scheduling interval, the
cold start of a resumed job, the tenants' weights and the LTGF ledgers' settings, the rule checks.
A policy owns only its decision and its own settings (schedulers.cluster.base).

May import schedulers.cluster.state.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from schedulers.cluster.state import FAIR_SHARES

COLD_START_S = 60.0  # restore + framework start of a resumed job (Gandiva/Tiresias report tens of s to ~1 min)
LEASE_S = 900.0
INTERVAL_S = 10.0
FAIR_WINDOW_S = 3600.0
# when a job enters the LTGF ledgers (its t_begin); the first is the default (docs/fairness.md: with
# "submit" an ideal schedule already has sharing-loss jobs, the ≤ interval wait for the first tick)
RHO_FROM = ("tick", "submit")
_EPS = 1e-9


def cold_start_problem(cold_start_s: float, lease_s: float) -> str | None:
    """Why a cold start of `cold_start_s` cannot go with a lease of `lease_s` (None: it can): it must
    be at most half the lease. A job resumed at a round must get to run before the next round may
    preempt it again: with a cold start as long as the lease a busy cluster can preempt every resumed
    job before it ran, round after round, and the run never ends (astraea on 300 jobs and 16 GPUs
    with a 1,000 s cold start); just below the lease, a resumed job may run only lease − cold start
    of each lease, and the run takes up to lease / (lease − cold start) times longer (900 s lease,
    899 s cold start: 900 times). Half the lease bounds that factor by 2."""
    if not cold_start_s <= lease_s / 2:
        return (f"a cold start of {cold_start_s:g} s is more than half the lease ({lease_s:g} s): a job resumed at a "
                "round must run before the next round may preempt it again, or a busy cluster may never finish")
    return None


def first_tick(t: float, interval_s: float) -> float:
    """The first scheduling tick (multiple of `interval_s`) at or after t: when a job submitted at t
    is seen by the scheduler (t itself for an interval of 0: a decision at every event)."""
    if interval_s == 0:
        return t
    return math.ceil(t / interval_s - _EPS) * interval_s


@dataclass(frozen=True, eq=False)
class ClusterSettings:
    """The cluster and the simulator's settings of a run (ValueError if they do not go together):
    `capacities` the GPUs of each node; `lease_s` the lease (rounds only at its boundaries);
    `interval_s` the scheduling tick (0: every event); `cold_start_s` a resumed job's restart;
    `tenant_weights` the tenants' weights (None: equal); `fair_share`, `fair_window_s`, `rho_from`
    the LTGF ledgers' settings (docs/fairness.md); `check` the rule checks (every decision and event
    validated)."""

    capacities: tuple = (8,) * 8
    lease_s: float = LEASE_S
    interval_s: float = INTERVAL_S
    cold_start_s: float = COLD_START_S
    tenant_weights: object = None
    fair_share: str = FAIR_SHARES[0]
    fair_window_s: float = FAIR_WINDOW_S
    rho_from: str = RHO_FROM[0]
    check: bool = False

    def __post_init__(self):
        set_ = object.__setattr__  # normalised once, here (a frozen dataclass)
        set_(self, "capacities", tuple(int(c) for c in self.capacities))
        for name in ("lease_s", "interval_s", "cold_start_s", "fair_window_s"):
            set_(self, name, float(getattr(self, name)))
        if self.lease_s <= 0 or self.interval_s < 0 or self.cold_start_s < 0:  # interval 0: every event a tick
            raise ValueError("lease must be > 0, interval and cold start >= 0")
        problem = cold_start_problem(self.cold_start_s, self.lease_s)
        if problem is not None:
            raise ValueError(problem)
        if self.fair_share not in FAIR_SHARES:
            raise ValueError(f"fair_share must be one of {FAIR_SHARES}")
        if self.rho_from not in RHO_FROM:
            raise ValueError(f"rho_from must be one of {RHO_FROM}")

    @classmethod
    def of(cls, *, nodes: int = 8, gpus_per_node: int = 8, node_capacities=None, **settings) -> ClusterSettings:
        """The settings of `nodes` nodes of `gpus_per_node` GPUs (or of nodes of `node_capacities`),
        with the other fields as keywords (TypeError naming an unknown one)."""
        capacities = list(node_capacities) if node_capacities is not None else [int(gpus_per_node)] * int(nodes)
        return cls(capacities=tuple(capacities), **settings)

    @property
    def total_gpus(self) -> int:
        return int(sum(self.capacities))
