"""An example GPU-cluster policy written as a Python rule (docs/policies.md, "A cluster policy as a plugin").

    benchmark run --task fairness --scenario venus \
        --plugins examples.my_cluster_policy --policies "astraea,tenant-band-sjf(band=0.5)"

A cluster policy only decides: the cluster simulator owns leases, rounds, placement, migrations,
cold starts and the LTGF ledgers, exactly as for the built-in policies. This rule orders the
candidates of each decision (the running and waiting jobs at a lease round, the waiting ones at a
fill) by the tenant's share received, in bands of `band` (ρ_tenant rounded down to a multiple of
it, so that tenants close in share count as equal), then by predicted GPU time gpus × p̂, shortest
first; the simulator places them in that order. It reads p̂, so it declares `needs_prediction`.
"""

import math

from schedulers.cluster.base import ClusterPolicy
from schedulers.policy import register


@register
class TenantBandSJF(ClusterPolicy):
    name = "tenant-band-sjf"
    needs_prediction = True
    description = "least-served tenant band first, then shortest predicted GPU time (an example Python rule)"

    def __init__(self, *, band: float = 0.5):  # its own settings only: the cluster is the simulator's
        if not band > 0:
            raise ValueError(f"band must be > 0, got {band}")
        self.band = float(band)

    def order(self, view, candidates):
        jobs = view.jobs
        rho = {k: view.tenant_rho(k) for k in {int(jobs.tenant[j]) for j in candidates}}

        def key(j):
            share = rho[int(jobs.tenant[j])]
            band = math.floor(share / self.band) if math.isfinite(share) else math.inf
            return band, jobs.gpus[j] * jobs.predicted[j], j

        return sorted(candidates, key=key)
