"""The experiments: the science behind the `benchmark` commands that reproduce papers, measure
robustness and transfer, and time the code against its peers — importable from a notebook without
the command line.

Each command in benchmark.commands is a page of argument handling that checks its options and calls
one of these modules; the modules take checked values (numbers, lists, paths, a settings record),
never an argparse namespace they must parse. Modules here may import benchmark.* below the commands
(tasks, sweeps, plots, results, options, progress, tracking), each other, and through them
atlas_data, predictors and schedulers; never benchmark.commands, and benchmark.cli only to run a
command line in-process (`run_step`).

- astraea, astraea_runs, astraea_ablations: `benchmark reproduce astraea`.
"""
