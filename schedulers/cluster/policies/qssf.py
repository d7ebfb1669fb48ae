"""QSSF (Hu et al., SC'21, Helios): quasi-shortest-service-first on the predicted GPU service gpus × p̂.

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster
simulator (`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy, revision_code
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import attempt
from schedulers.cluster.queues import candidates
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


@register
class QSSF(ClusterPolicy):
    """QSSF, the quasi-shortest-service-first scheduler of Helios [Hu21]: Q. Hu, P. Sun, S. Yan,
    Y. Wen, T. Zhang, *Characterization and Prediction of Deep Learning Workloads in Large-Scale GPU
    Datacenters*, SC 2021.

    Each waiting job's priority is its predicted GPU service, gpus × p̂ (the paper's estimator
    predicts the duration from the job's name, user and history; here p̂ is the run's
    `predicted_duration`); the smallest service goes first.

    What we follow is the authors' public simulator (S-Lab-System-Group/HeliosArtifact,
    `framework/QSSF Service/policies/qssf.py`): at every scheduling step, released jobs free their
    GPUs, new jobs join the queue, the queue is sorted by the priority, and jobs are placed in
    that order **until the first one that does not fit** (their loop `break`s: no backfilling, the
    priority-order head blocks the jobs behind it). Jobs are never preempted. Their queue is sorted
    by GPU count first and then, stably, by the priority, so ties go to fewer GPUs, then to the
    earlier job: here (gpus × p̂, gpus, job index). Their simulator steps every second; here the
    decisions are the simulator's fills at scheduling ticks (`--interval`). One detail of theirs
    is not followed: when every waiting job arrived at the current step, they skip the estimator
    and order those jobs by GPU count only (estimates are made lazily); here every decision ranks
    every waiting job by gpus × p̂.

    Because the blocked head holds back smaller-priority jobs that would fit, the rule is not
    work-conserving (`work_conservation_gaps` counts those decisions), as for `fifo`.

    `revision` (schedulers.revision) is accepted as by every prediction-aware policy, and changes
    nothing: a non-preemptive policy revises only at its decisions, and QSSF's decisions rank only
    waiting jobs, which have never run, so no estimate is outlived when it is read.
    """

    name = "qssf"
    listing_rank = 110  # its place in every listing of cluster policies
    needs_prediction = True
    preemptive = False
    strict = True  # stops at the first job that does not fit, in priority order
    work_conserving = False  # documented: the blocked highest-priority job holds back later ones
    description = "Helios QSSF: smallest predicted GPU service gpus × p̂ first, non-preemptive, stops at the first misfit"

    def __init__(self, *, revision: str = "none"):
        super().__init__()
        self.revision = revision  # accepted, checked, and without effect: see the class docstring
        revision_code(revision)

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return QSSFParams()


# ----- the kernel (schedulers.cluster.kernels): the decision over the simulator's arrays -------------
QSSFParams = namedtuple("QSSFParams", "")
QSSFState = namedtuple("QSSFState", "params")


def setup(s, params):
    return group(QSSFState(params))


@jitable
def decide(s, p, at_round, now, chosen):
    """The waiting jobs by (gpus × p̂, gpus, job), placed until the first that does not fit (never a
    round: the policy does not preempt, so the candidates are the waiting jobs)."""
    cand = candidates(s, at_round)  # in job order
    m = len(cand)
    gpus = np.empty(m, np.int64)
    service = np.empty(m)
    for i in range(m):
        gpus[i] = s.job.gpus[cand[i]]
        service[i] = float(gpus[i]) * s.job.predicted[cand[i]]
    idx = np.argsort(gpus, kind="mergesort")  # stable sorts from the last key: (service, gpus, job)
    idx = idx[np.argsort(service[idx], kind="mergesort")]
    for i in range(m):
        j = cand[idx[i]]
        if s.nodes.free_total[0] == 0 or not attempt(s, j, now, at_round, -1):
            break
        chosen.append(j)


KERNEL = kernel(QSSF.name, QSSFParams, QSSFState, setup=setup, select=decide)
