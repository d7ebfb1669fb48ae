"""The GPU-cluster half of the simulator (docs/fairness.md): multi-tenant gang jobs on nodes × GPUs.

- `core`: the cluster simulator — event loop, leases, rounds, placement, LTGF ledgers — written once
  over one run's state, running each built-in policy's kernel compiled (numba) or as Python;
- `policies/`: one module per policy (astraea, themis, tiresias_l, ...): its registered class and its
  kernel, the policy's decision; every module there is discovered by the registry (schedulers.policy);
- `base`: `ClusterPolicy`, what every cluster policy is (settings, flags, a kernel or a Python rule);
- `rule`: a policy's Python rule (`order` / `select`: plugins, subclasses) as one more kernel, run by
  the simulator's Python loop;
- `nodes`: the cluster model (placement, release) of the engine runs; `ltgf`: their LTGF ledgers;
- `metrics`: run a policy and compute the fairness metrics;
- `scenarios`: the paper's Venus-like and Philly setups.

The single- and parallel-machine objectives live beside it in `schedulers` (objectives, normalisers,
protocol, policies/).
"""
