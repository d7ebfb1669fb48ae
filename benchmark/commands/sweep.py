"""`benchmark sweep CONFIG.yaml`: the cross product of a config's lists, one tidy table.

Thin command layer over benchmark.sweeps (config format, axes, executors and outputs are
documented there). Exit 0 when every cell ran, 1 when some failed (listed one line each on
stderr and in OUT/failures.json), 2 on a bad config or option. May import benchmark.sweeps,
benchmark.results and atlas_data.errors.
"""

from __future__ import annotations

import sys
from pathlib import Path

from atlas_data.outputs import check_output_folder
from benchmark.options import MAX_CELLS_LIMIT, integer, workers


def register(subparsers) -> None:
    parser = subparsers.add_parser("sweep", help="run the cross product of a YAML config (local processes or Dask)")
    parser.add_argument("config", metavar="CONFIG.yaml", help="sweep config (keys: task, jobs|data, objectives, "
                        "policies, predictors, noise, seeds, n, machines, nodes, lease, options, mlflow, max_cells)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local worker processes (default) or a Dask cluster")
    parser.add_argument("--address", help="Dask scheduler, e.g. tcp://host:8786 (default: start a LocalCluster)")
    parser.add_argument("--workers", type=workers, help="worker processes of the local pool or the started LocalCluster (default: CPU count, "
                        "at most one per cell; ignored with --address)")
    parser.add_argument("--output", help="output folder (default results/sweep-<time>)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log the cells to MLflow")
    parser.add_argument("--quiet", action="store_true", help="no progress and no table on stdout")
    parser.add_argument("--max-cells", type=integer(1, MAX_CELLS_LIMIT, "a number of cells"), metavar="N",
                        help="refuse a config that expands to more than N cells (default: the config's max_cells key, "
                             "else 10,000)")
    parser.set_defaults(handler=_sweep)


def _sweep(args) -> int:
    from benchmark import sweeps
    from benchmark.results import default_output_dir, format_table

    from benchmark.sweeps.execution import check_address

    check_address(args.address, args.executor)
    config = sweeps.load_config(args.config)
    if args.max_cells is not None:
        from dataclasses import replace

        config = replace(config, max_cells=args.max_cells)
    out = Path(args.output) if args.output else default_output_dir("sweep")
    check_output_folder(out, "sweep")  # before any cell runs
    result = sweeps.run_sweep(config, out, executor=args.executor, address=args.address, workers=args.workers,
                              mlflow=not args.no_mlflow, quiet=args.quiet)
    failures = result.failures
    if not args.quiet:
        table = sweeps.summary(result.table)
        if len(table):
            rows = [{"policy": label, **row} for label, row in zip(table.index, table.to_dict("records"))]
            print(f"mean ratio over {result.table['cell'].nunique()} cells (1 = optimal / bound)")
            print(format_table(rows, ["policy", *table.columns]))
        print(f"\nsweep: {len(result.results) - len(failures)}/{len(result.results)} cells, "
              f"{len(result.table)} rows -> {result.out_dir / 'sweep.parquet'}")
    if failures:
        sys.stderr.write(f"error: {len(failures)} of {len(result.results)} cells failed "
                         f"(details in {result.out_dir / 'failures.json'}):\n")
        for failed in failures:
            sys.stderr.write(f"  {failed.cell.id}: {failed.error}\n")
        return 1
    return 0
