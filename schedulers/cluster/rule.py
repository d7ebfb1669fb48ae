"""A cluster policy's Python rule (`order` / `select`) as one more kernel of the cluster simulator.

The simple way to write a cluster policy (docs/policies.md, "Writing a policy"): a ClusterPolicy
subclass that defines `order(view, candidates)` or `select(view, candidates, place)`. The simulator
(schedulers.cluster.simulator) runs it with everything else of a built-in policy's run — leases,
rounds, the plan, placement, ledgers — on its Python loop: this kernel calls the rule at each
decision with a `RuleView` and places what it returns. Every choice is validated as it is made:
a job index that is no job, a job that is neither running nor waiting, a job returned twice or
returned without being placed is a PolicyError naming the job and the time.

May import numpy, schedulers.engine (JobsView), schedulers.policy_base and the simulator's
modules (schedulers.cluster: state, ledgers, placement, queues, kernels, events).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schedulers.cluster.events import attained_engine
from schedulers.cluster.kernels import _KERNELS, kernel
from schedulers.cluster.ledgers import advance, job_rho, ledger_attained, rho_of
from schedulers.cluster.placement import attempt, total_now
from schedulers.cluster.queues import candidates
from schedulers.cluster.state import ROUNDS, group
from schedulers.engine import JobsView
from schedulers.policy_base import PolicyError

RuleParams = namedtuple("RuleParams", "policy jobs")
RuleState = namedtuple("RuleState", "params view")


class RuleView:
    """What a Python rule reads at a decision (read-only; valid during the call). True sizes only
    for a clairvoyant policy (`remaining`, `jobs.size`): the view of another holds none (`size`
    None; the simulator's state holds none either, schedulers.cluster.state)."""

    __slots__ = ("_s", "_size", "jobs", "now", "at_round")

    def __init__(self, s, jobs, clairvoyant: bool, size=None):
        self._s = s
        self._size = size if clairvoyant else None
        self.jobs = JobsView(jobs, clairvoyant)
        self.now = 0.0
        self.at_round = False  # a round (running and waiting jobs are candidates) or a fill (waiting ones)

    def _job(self, j) -> int:
        if not (isinstance(j, (int, np.integer)) and 0 <= j < self.jobs.n):
            raise PolicyError(f"asked about {j!r}, which is no job index (0 to {self.jobs.n - 1})")
        return int(j)

    @property
    def free_gpus(self) -> int:
        """GPUs still free to place on in this decision (a round's plan, or the cluster at a fill)."""
        return int(total_now(self._s, self.at_round))

    @property
    def running(self) -> list[int]:
        """The jobs holding GPUs, in job order."""
        q = self._s.q
        return sorted(q.hold_list[:q.n_hold[0]].tolist())

    @property
    def rounds(self) -> int:
        """Rounds so far, this one included."""
        return int(self._s.counters[ROUNDS])

    def is_running(self, j) -> bool:
        return bool(self._s.q.holding[self._job(j)])

    def started(self, j) -> bool:
        """Whether j has ever run."""
        return bool(self._s.q.started[self._job(j)])

    def attained(self, j) -> float:
        """Seconds of work j has done (service at rate 1)."""
        return float(attained_engine(self._s, self._job(j)))

    def remaining(self, j) -> float:
        if self._size is None:
            raise PolicyError("a non-clairvoyant policy tried to read remaining sizes")
        j = self._job(j)
        return float(self._size[j] - attained_engine(self._s, j))

    def attained_gpu_s(self, j) -> float:
        """GPU·s j has held so far (its cold starts included)."""
        return float(ledger_attained(self._s, self._job(j), self.now))

    def job_rho(self, j) -> float:
        """ρ_job of a job that has not completed: attained / fair GPU·s (docs/fairness.md)."""
        j = self._job(j)
        advance(self._s, int(self._s.job.tenant[j]), self.now)
        return float(job_rho(self._s, j, self.now))

    def tenant_rho(self, k) -> float:
        """ρ_tenant of tenant k (index into `jobs.tenant_names`): attained / fair GPU·s."""
        advance(self._s, int(k), self.now)
        return float(rho_of(self._s.led.att[k], self._s.led.fair[k]))

    def tenant_gpus(self, k) -> int:
        """GPUs tenant k's running jobs hold."""
        return int(self._s.led.run_gpus[k])

    def quota(self, k) -> float:
        """Tenant k's quota in GPUs."""
        return float(self._s.led.quota[k])

    def wait_since(self, j) -> float:
        """When j last started waiting (seen by the scheduler, or preempted)."""
        return float(self._s.q.wait_since[self._job(j)])

    def preemptions(self, j) -> int:
        return int(self._s.q.preempted[self._job(j)])


def setup(s, params, size):
    """The rule's view: true sizes (`size`) only for a clairvoyant policy."""
    clairvoyant = bool(params.policy.clairvoyant)
    view = RuleView(s, params.jobs, clairvoyant, size if clairvoyant else None)
    params.policy.setup(view)
    return group(RuleState(params, view))


def _label(p, j) -> str:
    n = p.view.jobs.n
    if isinstance(j, (int, np.integer)) and 0 <= j < n:
        return f"job {p.view.jobs.job_id[j]}"
    return f"{j!r} (no job index: 0 to {n - 1})"


def decide(s, p, at_round, now, chosen):
    """The rule's decision: `select(view, candidates, place)` (by default `order`, placed in turn)."""
    policy = p.params.policy
    view = p.view
    view.now = now
    view.at_round = at_round
    offered = candidates(s, at_round).tolist()
    allowed = set(offered)
    placed: set[int] = set()
    name = policy.name

    def place(j) -> bool:
        if not (isinstance(j, (int, np.integer)) and 0 <= j < s.job.n):
            raise PolicyError(f"{name}: placed {_label(p, j)} at t = {now:g}")
        j = int(j)
        if j not in allowed:
            raise PolicyError(f"{name}: chose {_label(p, j)} at t = {now:g}, which is neither running nor waiting")
        if j in placed:
            raise PolicyError(f"{name}: chose {_label(p, j)} twice at t = {now:g}")
        if s.job.gpus[j] > total_now(s, at_round) or not attempt(s, j, now, at_round, -1):
            return False
        placed.add(j)
        return True

    picked = policy.select(view, offered, place)
    try:
        picked = list(picked)
    except TypeError:
        raise PolicyError(f"{name}: select returned a {type(picked).__name__}, not a list of job indices") from None
    seen: set[int] = set()
    for j in picked:
        if not (isinstance(j, (int, np.integer)) and 0 <= j < s.job.n) or int(j) not in allowed:
            raise PolicyError(f"{name}: chose {_label(p, j)} at t = {now:g}, which is neither running nor waiting")
        j = int(j)
        if j in seen:
            raise PolicyError(f"{name}: chose {_label(p, j)} twice at t = {now:g}")
        if j not in placed:
            raise PolicyError(f"{name}: chose {_label(p, j)} at t = {now:g} without placing it "
                              "(select returns the jobs that place(j) placed)")
        seen.add(j)
        chosen.append(j)
    if len(seen) != len(placed):
        j = min(placed - seen)
        raise PolicyError(f"{name}: placed {_label(p, j)} at t = {now:g} but did not return it (select returns "
                          "every job that place(j) placed)")


def params_of(policy, jobs):
    """The settings of the kernel that decides for `policy` on `jobs`: its own (`kernel_params`),
    or its Python rule's when it decides by one (ClusterPolicy.uses_python_rule)."""
    if policy.uses_python_rule():
        return RuleParams(policy, jobs)
    params = policy.kernel_params()
    made = _KERNELS[type(params)]
    if made.preemptive is not None and bool(policy.preemptive) != made.preemptive:
        raise PolicyError(f"{policy.name}: the {made.name} kernel is written for a policy that "
                          f"{'preempts' if made.preemptive else 'never preempts'}; a subclass that sets "
                          f"preemptive = {policy.preemptive} decides by its own rule (define order or select)")
    if made.clairvoyant and not policy.clairvoyant:
        raise PolicyError(f"{policy.name}: the {made.name} kernel reads true sizes, and the policy is not "
                          "clairvoyant (a policy that reads them says so: clairvoyant = True)")
    return params


# registered clairvoyant: it is given the sizes and hands them on only to a clairvoyant policy's view
KERNEL = kernel("python rule", RuleParams, RuleState, setup=setup, select=decide, compilable=False, clairvoyant=True)
