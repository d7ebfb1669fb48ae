"""SRTF oracle: shortest true remaining time first at every lease round (a clairvoyant reference, not a real policy).

One policy module of the cluster half (docs/policies.md, docs/fairness.md): only its decision; the
round, lease and placement mechanics are `schedulers.cluster.rounds.ClusterPolicy`.
May import numpy, scipy and schedulers.cluster / schedulers.policy.
"""

from __future__ import annotations

from schedulers.cluster.rounds import ClusterPolicy
from schedulers.policy import register


@register
class SRTFOracle(ClusterPolicy):
    name = "srtf-oracle"
    fast_loop = "srtf-oracle"  # its branch of the compiled cluster loop (schedulers.cluster.fastcore)
    clairvoyant = True
    description = "shortest true remaining time first at every lease round (clairvoyant reference)"

    def order(self, view, candidates):
        return sorted(candidates, key=lambda j: (view.remaining(j), j))
