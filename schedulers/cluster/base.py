"""`ClusterPolicy`, what every GPU-cluster policy is: its settings and flags, and how it decides.

A cluster policy only decides; the cluster simulator (schedulers.cluster.simulator) owns everything else
(docs/fairness.md): gang jobs on nodes × GPUs, leases and rounds (only at lease boundaries, while a
job waits), the round plan and its compaction, migrations, cold starts, work-conserving fills at
scheduling ticks, the LTGF ledgers and the executed allocations. A policy decides in one of two ways:

- a **kernel** (every built-in policy, and a plugin that wants speed): `kernel_params()` returns the
  settings of a kernel registered with `schedulers.cluster.kernels.kernel`, run compiled by numba or as
  Python from the same source (docs/policies.md, "A built-in cluster policy: one file");
- a **Python rule** (the simple way to write a plugin): `order(view, candidates)` (a priority order;
  the simulator places the candidates in it) or `select(view, candidates, place)` (choose and place:
  `place(j)` plans a candidate and says whether it found GPUs), run by the simulator's Python loop
  through `schedulers.cluster.rule`. A class that defines `order` or `select` (a subclass of a
  built-in policy too) is run by its rule.

May import schedulers.policy_base, schedulers.revision and schedulers.cluster.state.
"""

from __future__ import annotations

import math

from schedulers.cluster.state import FAIR_SHARES
from schedulers.policy_base import Policy
from schedulers.revision import RULES, rule_code

COLD_START_S = 60.0  # restore + framework start of a resumed job (Gandiva/Tiresias report tens of s to ~1 min)
LEASE_S = 900.0
INTERVAL_S = 10.0
FAIR_WINDOW_S = 3600.0
NEW_JOB_BONUS = 1.0  # ASTRAEA phase 2: reward = -rho_job + bonus for never-started jobs (paper gives no number)
# when a job enters the LTGF ledgers (its t_begin); the first is the default (docs/fairness.md: with
# "submit" an ideal schedule already has sharing-loss jobs, the ≤ interval wait for the first tick)
RHO_FROM = ("tick", "submit")
_EPS = 1e-9


# the revision rule of an outlived p̂ (schedulers.revision) a prediction-aware cluster policy uses
# unless told otherwise (`astraea-p(revision=...)`); docs/policies.md and docs/fairness.md give the
# evidence it was chosen on
DEFAULT_REVISION = "double"


def revision_code(rule: str) -> int:
    """The kernel's integer for revision rule `rule` (ValueError naming the rules if unknown)."""
    if not isinstance(rule, str):
        raise ValueError(f"revision must be one of {', '.join(RULES)}, got {rule!r}")
    return rule_code(rule)


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


class ClusterPolicy(Policy):
    """A GPU-cluster policy: the cluster's settings, the policy's flags, and its decision (a kernel,
    or a Python rule: `order` / `select`; see the module)."""

    kind = "cluster"
    preemptive = True  # re-decide at lease rounds
    strict = False  # a Python `order`: stop at the first job that does not fit (FIFO) instead of skipping it
    work_conserving = True  # False: the policy's own rule may leave a job waiting that would fit (documented)
    revision = "none"  # how an outlived p̂ is revised (schedulers.revision); the prediction-aware policies set it

    def __init__(self, *, nodes: int = 8, gpus_per_node: int = 8, node_capacities=None, lease_s: float = LEASE_S,
                 interval_s: float = INTERVAL_S, cold_start_s: float = COLD_START_S, tenant_weights=None,
                 fair_share: str = FAIR_SHARES[0], fair_window_s: float = FAIR_WINDOW_S, rho_from: str = RHO_FROM[0],
                 check: bool = False):
        self.capacities = list(node_capacities) if node_capacities is not None else [int(gpus_per_node)] * int(nodes)
        self.lease_s = float(lease_s)
        self.interval_s = float(interval_s)
        self.cold_start_s = float(cold_start_s)
        if self.lease_s <= 0 or self.interval_s < 0 or self.cold_start_s < 0:  # interval 0: every event a tick
            raise ValueError("lease must be > 0, interval and cold start >= 0")
        problem = cold_start_problem(self.cold_start_s, self.lease_s)
        if problem is not None:
            raise ValueError(problem)
        self.tenant_weights = tenant_weights
        if fair_share not in FAIR_SHARES:
            raise ValueError(f"fair_share must be one of {FAIR_SHARES}")
        self.fair_share = fair_share
        self.fair_window_s = float(fair_window_s)
        if rho_from not in RHO_FROM:
            raise ValueError(f"rho_from must be one of {RHO_FROM}")
        self.rho_from = rho_from
        # the rule checks: every decision is validated as it is executed (docs/policies.md); a
        # Python rule's choices are always validated
        self.check = check

    def node_owners(self, quota) -> list[int]:
        """The tenant each node is reserved for, by index into the tenants (0 for every node when the
        policy reserves none: its kernel's placements are then unrestricted); `quota`: the tenants'
        quotas in GPUs. HiveD's cells."""
        return [0] * len(self.capacities)

    def kernel_params(self):
        """The settings (a namedtuple) of this policy's kernel, registered with
        schedulers.cluster.kernels.kernel; None: the policy decides by its Python rule."""
        return None

    def uses_python_rule(self) -> bool:
        """Whether this policy decides by its Python rule: it has no kernel of its own, or its class
        (a subclass of a built-in policy, say) defines `order` or `select`."""
        cls = type(self)
        return (cls.order is not ClusterPolicy.order or cls.select is not ClusterPolicy.select
                or self.kernel_params() is None)

    # ----- the Python rule (plugins; schedulers.cluster.rule runs it) -----------------------------
    def setup(self, view) -> None:
        """Per-run state of a Python rule: called once before the run's first decision."""

    def order(self, view, candidates: list[int]) -> list[int]:
        """Candidates in priority order (default: submit order, i.e. job index)."""
        return sorted(candidates)

    def select(self, view, candidates: list[int], place) -> list[int]:
        """Choose jobs and place them (`place(j)` -> whether j got GPUs); return the placed ones, in
        order. Default: `order`, each placed if it fits (`strict`: stop at the first that does not)."""
        chosen = []
        for j in self.order(view, candidates):
            if view.free_gpus == 0:
                break
            if place(j):
                chosen.append(j)
            elif self.strict:
                break
        return chosen
