"""SRTF oracle: shortest true remaining time first at every lease round (a clairvoyant reference, not a real policy).

One policy module of the cluster half (docs/policies.md, docs/fairness.md): the registered class
(name, flags, settings) and its kernel, the decision that the cluster simulator
(`schedulers.cluster.simulator`) runs compiled or as Python.
May import numpy, scipy, schedulers.jit, schedulers.cluster and schedulers.policy_base.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.events import attained_engine
from schedulers.cluster.kernels import kernel
from schedulers.cluster.placement import place_in_order
from schedulers.cluster.queues import candidates
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.policy_base import register


@register
class SRTFOracle(ClusterPolicy):
    name = "srtf-oracle"
    listing_rank = 20  # its place in every listing of cluster policies
    clairvoyant = True
    description = "shortest true remaining time first at every lease round (clairvoyant reference)"

    def kernel_params(self):
        """Its kernel's settings (schedulers.cluster.kernels; the kernel is below)."""
        return SRTFParams()


# ----- the kernel (schedulers.cluster.kernels): the same decision over the simulator's arrays -------
SRTFParams = namedtuple("SRTFParams", "")
SRTFState = namedtuple("SRTFState", "params size")  # size: the true sizes (a clairvoyant kernel's)


def setup(s, params, size):
    return group(SRTFState(params, size))


@jitable
def decide(s, p, at_round, now, chosen):
    cand = candidates(s, at_round)
    rem = np.empty(len(cand))
    for i in range(len(cand)):
        rem[i] = p.size[cand[i]] - attained_engine(s, cand[i])
    order = cand[np.argsort(rem, kind="mergesort")]  # (remaining, j): stable on the sorted jobs
    place_in_order(s, order, len(order), now, at_round, chosen)


KERNEL = kernel(SRTFOracle.name, SRTFParams, SRTFState, setup=setup, select=decide, clairvoyant=True)
