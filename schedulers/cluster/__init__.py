"""The GPU-cluster half of the simulator (docs/fairness.md): multi-tenant gang jobs on nodes × GPUs.

The cluster simulator, written once over one run's state and run compiled (numba) or as Python,
split by concern:
- `simulator`: `run(jobs, policy, compiled)`, the run's arguments, event budget and `RunState`;
- `settings`: `ClusterSettings`, the cluster a run simulates (nodes, lease, interval, cold start, tenant
  weights, the ledgers' settings): the simulator's, not a policy's;
- `state`: the state's layout (`new_state`, its groups) and the run's input records;
- `loop`: the event loop; `events`: what happens at an instant (starts, preemptions, cold starts,
  rounds at lease boundaries, fills, completions, the rule checks);
- `placement`: the consolidated placement rule, the round plan and its compaction;
- `ledgers`: the LTGF ledgers; `queues`: the waiting and running jobs as the kernels read them;
- `stretches`: the executed-allocation stretches as a run records them (in chunks);
- `kernels`: the registry of the policies' kernels (their decisions and hooks);
- `jitshared`: the compiled run (one event loop for every kernel, the hooks called through pointers);
  `jitglue`: numba's part (the state's groups as structrefs, the hooks' overloads).

Around it:
- `policies/`: one module per policy (astraea, themis, tiresias_l, ...): its registered class and its
  kernel, the policy's decision; every module there is discovered by the registry (schedulers.policy);
- `base`: `ClusterPolicy`, what every cluster policy is (its flags and settings, a kernel or a Python rule);
- `rule`: a policy's Python rule (`order` / `select`: plugins, subclasses) as one more kernel, run by
  the simulator's Python loop;
- `nodes`: the real node lists; `ltgf`: the LTGF ledgers driven outside a run;
- `metrics`: run a policy and compute the fairness metrics;
- `scenarios`: the paper's Venus-like and Philly setups.

The single- and parallel-machine objectives live beside it in `schedulers` (objectives, normalisers,
protocol, policies/).
"""
