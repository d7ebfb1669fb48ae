"""The experiments: the science behind the `benchmark` commands that reproduce papers, measure
robustness and transfer, and time the code against its peers — importable from a notebook without
the command line.

Each command in benchmark.commands is a page of argument handling that checks its options and calls
one of these modules; the modules take checked values (numbers, lists, paths, a settings record),
not an argparse namespace (the perf sections alone keep their own `--SECTION-*` options: each has
`add_arguments(parser)` and `run(args)`). Modules here may import benchmark.* below the commands
(tasks, sweeps, plots, results, options, progress, markdown, value, timings), each other, and
atlas_data, predictors and schedulers; never benchmark.commands nor benchmark.cli (a command that
runs other command lines in-process, demo and value, runs them itself; tests/test_layering.py checks it).

- atlas: `benchmark reproduce atlas` (the ATLAS paper's scheduling table, paper protocol beside honest);
- astraea, astraea_runs, astraea_ablations: `benchmark reproduce astraea` (the table; the sweeps and
  their runs; why the ranking differs);
- rlscheduler: `benchmark reproduce rlscheduler`, and the SWF log reader, sequences and input shaking
  that hpc shares; hpc: `benchmark reproduce hpc`; hpc_protocols: its `--protocol` whole-log tables;
- robustness: `benchmark robustness` (each p̂ policy against noise and no-information controls);
- transfer: `benchmark transfer` (a duration predictor on its own cluster and on the others);
- value: `benchmark value` (the value of prediction on many jobs tables; the per-run value is
  benchmark.value, which every scheduling run computes);
- demo: `benchmark demo`'s steps and the summary read from their results;
- perf: `benchmark perf`'s sections and the scheduling core's peers (a package of its own).
"""
