"""The GPU-cluster half of the simulator (docs/fairness.md): multi-tenant gang jobs on nodes × GPUs.

- `core`: the cluster simulator — event loop, leases, rounds, placement, LTGF ledgers — written once
  over one run's state, running each built-in policy's kernel compiled (numba) or as Python;
- `policies/`: one module per policy (astraea, themis, tiresias_l, ...): its registered class and its
  kernel, the policy's decision;
- `rounds`: `ClusterPolicy`, the same mechanics for a policy's Python rule on the engine
  (`schedulers.engine`): plugins, subclasses, checked runs, and the reference of the tests;
- `nodes`: the cluster model (placement, release) of the engine runs; `ltgf`: their LTGF ledgers;
- `metrics`: run a policy and compute the fairness metrics;
- `scenarios`: the paper's Venus-like and Philly setups.

The single- and parallel-machine objectives live beside it in `schedulers` (objectives, normalisers,
protocol, policies/).
"""
