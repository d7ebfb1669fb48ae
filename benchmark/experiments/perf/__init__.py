"""The sections of `benchmark perf`: timings against the targets in docs/performance.md (benchmarks, not tests).

One module per section (scheduling, pipeline, predictors, fairness, traces, peers, command, hpc),
each with `add_arguments(parser)` (its own `--SECTION-...` options) and `run(args) -> dict` (the
figures it printed); benchmark.commands.perf chooses the sections and saves their figures. The peers
of the scheduling core are peer_heapq (minimal heapq loops; also the bare process of the `command`
section, `python -m benchmark.experiments.perf.peer_heapq`, so this package's `__init__` files import
nothing) and peer_reference (the ATLAS paper's reference loops). Modules here may import benchmark.*
below the commands, the other experiments, atlas_data, predictors and schedulers.
"""
