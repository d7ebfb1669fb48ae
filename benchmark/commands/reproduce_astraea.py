"""`benchmark reproduce astraea`: every figure of the ASTRAEA paper beside ours, in one command.

The argument handling only: the options are checked here, before any computation, and the
experiment is benchmark.experiments.astraea (the runs: every simulation is a cell of a `benchmark
sweep` config written to OUT/sweeps/, so each part can be re-run alone, on Dask too; the ablations
behind "Why the ranking differs"; the table, its verdicts and why-lines, the figure). Writes
OUT/reproduce-astraea.md, .png, .json, OUT/sweep.parquet (the cells' tidy rows), the cells' ordinary
output folders under OUT/cells/, and with `--readme FILE` the block between
`<!-- reproduce-astraea:start -->` and `<!-- reproduce-astraea:end -->`. OUT is written aside and
renamed into place when complete (atlas_data.outputs). See docs/reproduce-astraea.md.

May import benchmark.experiments, benchmark.options, benchmark.progress, benchmark.results,
benchmark.sweeps, benchmark.tasks and atlas_data.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.experiments.astraea import END, START, reproduce as run_experiment, write_readme
from benchmark.experiments.astraea_runs import (DEFAULT_LEASES, DEFAULT_PHILLY_NODES, DEFAULT_SIZES, VENUS_NODES,
                                                CellsFailed, Settings)
from benchmark.options import MAX_SECONDS, job_count, read_float, workers
from benchmark.options import seed as seed_type
from benchmark.progress import say
from benchmark.results import check_readme_block


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=job_count, help="jobs per scenario: N consecutive jobs from a seeded start (default all; "
                        "for quick checks, the paper's figures are for all jobs)")
    parser.add_argument("--seed", type=seed_type, default=0, help="scenario and sample seed (default 0)")
    parser.add_argument("--venus-nodes", type=int, default=VENUS_NODES,
                        help=f"Venus-like cluster (main table and lease curve), nodes of 8 GPUs (default {VENUS_NODES}, "
                             "the paper's)")
    parser.add_argument("--leases", default=DEFAULT_LEASES,
                        help=f"lease-sensitivity curve, s (default {DEFAULT_LEASES})")
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help=f"cluster-size curve: Venus-like nodes of 8 GPUs (default {DEFAULT_SIZES})")
    parser.add_argument("--philly-nodes", default=DEFAULT_PHILLY_NODES,
                        help=f"Philly cluster sizes, nodes of 8 GPUs (default {DEFAULT_PHILLY_NODES}: the paper's, and a "
                             "contended one)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="run the sweep cells on local worker processes (default) or Dask")
    parser.add_argument("--address", help="Dask scheduler, e.g. tcp://host:8786 (default: start a LocalCluster)")
    parser.add_argument("--workers", type=workers, help="worker processes (default: CPU count)")
    parser.add_argument("--output", default="results/reproduce-astraea",
                        help="output folder (default results/reproduce-astraea)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the reproduce-astraea block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")




def reproduce(args) -> int:
    started = time.perf_counter()
    load_average = os.getloadavg()
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    from benchmark.sweeps.execution import check_address

    check_address(args.address, args.executor)
    if args.venus_nodes < 1:  # --n and --workers: their parser types (benchmark.options)
        raise InputError(f"--venus-nodes must be at least 1, got {args.venus_nodes}", where="--venus-nodes")
    leases = _numbers(args.leases, "leases", lambda t: read_float(t, 1.0, MAX_SECONDS, "a lease"), 1.0)
    sizes = _numbers(args.sizes, "sizes", int, 1)
    philly_nodes = _numbers(args.philly_nodes, "philly-nodes", int, 1)
    from benchmark.tasks.config import MAX_NODES

    for what, values in (("venus-nodes", [args.venus_nodes]), ("sizes", sizes), ("philly-nodes", philly_nodes)):
        if any(v is not None and v > MAX_NODES for v in values):  # the fairness simulator's bound (docs/fairness.md)
            raise InputError(f"at most {MAX_NODES:,} nodes, got {max(v for v in values if v is not None):,}",
                             where=f"--{what}")
    settings = Settings(seed=args.seed, n=args.n, venus_nodes=args.venus_nodes, leases=leases, sizes=sizes,
                        philly_nodes=philly_nodes, executor=args.executor, address=args.address, workers=args.workers,
                        quiet=args.quiet)
    out = Path(args.output)
    check_output_folder(out, "reproduce")  # before any computation
    try:
        with output_folder(out, "reproduce") as folder:  # every run and the table appear together, or not at all
            try:
                text = run_experiment(settings, folder, started, load_average)
            except CellsFailed as exc:
                import sys

                sys.stderr.write(f"error: {len(exc.lines)} runs failed:\n" + "".join(f"  {line}\n" for line in exc.lines))
                raise _Failed() from None
    except _Failed:
        return 1
    if args.readme:
        write_readme(args.readme, out / "reproduce-astraea.json")
    print(text)
    say(f"reproduce astraea: {time.perf_counter() - started:.0f} s; written {out / 'reproduce-astraea.md'}, .png, .json",
        args.quiet)
    return 0


class _Failed(Exception):
    """Some cells failed (already reported): the output folder is discarded, exit 1."""


def _numbers(text: str, what: str, convert, low) -> list:
    from benchmark.tasks.inputs import csv_list

    values = csv_list(text, what, convert)
    if not values or any(not (math.isfinite(v) and v >= low) for v in values) or len(set(values)) < len(values):
        raise InputError(f"--{what} needs distinct values >= {low:g}, got {text!r}", where=f"--{what}")
    return values
