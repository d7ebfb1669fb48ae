"""The GPU-cluster half of the simulator (docs/fairness.md): multi-tenant gang jobs on nodes × GPUs.

- `nodes`: the cluster model (placement, release); `ltgf`: the LTGF ledgers;
- `rounds`: `ClusterPolicy`, the lease / round / fill mechanics every cluster policy shares, and the
  one rule that turns a round's plan into the executed schedule;
- `policies/`: one module per policy (astraea, themis, tiresias_l, ...), each only its decision;
- `metrics`: run a policy on the shared engine and compute the fairness metrics;
- `scenarios`: the paper's Venus-like and Philly setups.

The single- and parallel-machine objectives live beside it in `schedulers` (objectives, normalisers,
protocol, policies/). Both halves run on the one engine, `schedulers.engine`.
"""
