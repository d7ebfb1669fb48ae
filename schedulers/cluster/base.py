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

May import schedulers.policy_base, schedulers.revision and schedulers.cluster.settings.
"""

from __future__ import annotations

import dataclasses
import inspect

from schedulers.cluster.settings import (COLD_START_S, FAIR_WINDOW_S, INTERVAL_S, LEASE_S,  # noqa: F401 (read
                                         RHO_FROM, ClusterSettings, cold_start_problem, first_tick)  # from here too)
from schedulers.policy_base import Policy
from schedulers.revision import RULES, rule_code

NEW_JOB_BONUS = 1.0  # ASTRAEA phase 2: reward = -rho_job + bonus for never-started jobs (paper gives no number)
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


# the cluster's settings — `cluster` (a ClusterSettings), ClusterSettings.of's keywords and ClusterSettings's
# fields: given to the simulator (schedulers.cluster.simulator.run, schedulers.cluster.metrics.simulate_fairness:
# `cluster=`), never to a policy
CLUSTER_KEYWORDS = ("cluster",
                    *(name for name, p in inspect.signature(ClusterSettings.of).parameters.items()
                      if p.kind is inspect.Parameter.KEYWORD_ONLY),
                    *(field.name for field in dataclasses.fields(ClusterSettings)))


def cluster_keyword_refusal(policy: str, key: str) -> str:
    """The one line refusing cluster setting `key` given to policy `policy` (a name) at construction."""
    given = "cluster=ClusterSettings(...)" if key == "cluster" else f"cluster=ClusterSettings.of({key}=...)"
    return (f"policy '{policy}': '{key}' is a setting of the cluster, not of a policy: pass it to the simulator "
            f"instead ({given})")


class ClusterPolicy(Policy):
    """A GPU-cluster policy: its flags, its own settings and its decision (a kernel, or a Python rule:
    `order` / `select`; see the module). The cluster it is simulated on is the simulator's."""

    kind = "cluster"
    preemptive = True  # re-decide at lease rounds
    strict = False  # a Python `order`: stop at the first job that does not fit (FIFO) instead of skipping it
    work_conserving = True  # False: the policy's own rule may leave a job waiting that would fit (documented)
    revision = "none"  # how an outlived p̂ is revised (schedulers.revision); the prediction-aware policies set it
    # the cluster a policy is simulated on is the simulator's (schedulers.cluster.settings), set by the
    # task from its own options, never a policy's setting in --policies (schedulers.policy)
    task_settings = CLUSTER_KEYWORDS

    def __new__(cls, *args, **kwargs):
        """A policy given a cluster setting (CLUSTER_KEYWORDS) is refused whatever its constructor
        takes (a plugin's too): TypeError, one line naming the keyword."""
        given = [key for key in kwargs if key in CLUSTER_KEYWORDS]
        if given:
            raise TypeError(cluster_keyword_refusal(cls.name or cls.__qualname__, given[0]))
        return super().__new__(cls)

    def node_owners(self, capacities, quota) -> list[int]:
        """The tenant each node (of `capacities` GPUs) is reserved for, by index into the tenants (0
        for every node when the policy reserves none: its kernel's placements are then unrestricted);
        `quota`: the tenants' quotas in GPUs. HiveD's cells."""
        return [0] * len(capacities)

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
