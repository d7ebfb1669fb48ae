"""`benchmark run --task scheduling|prediction|fairness`: one run, one output folder.

Shared options live here; each task module in TASKS adds its own with `add_arguments(parser)`
and does the work in `run(args) -> int`.
"""

from __future__ import annotations

import importlib

from benchmark.options import job_count
from benchmark.options import seed as seed_type

# options every task reads; each task module lists the others it reads in READS
COMMON = frozenset({"task", "output", "no_mlflow", "quiet", "plugins", "seed", "handler", "columns"})
_PARSER = None  # the `run` parser, for its defaults

TASKS = {
    "scheduling": "benchmark.tasks.scheduling",
    "prediction": "benchmark.tasks.prediction",
    "fairness": "benchmark.tasks.fairness",
}


def register(subparsers) -> None:
    global _PARSER
    _PARSER = _build(subparsers)


def _build(subparsers):
    parser = subparsers.add_parser("run", help="run one task and write an output folder")
    parser.add_argument("--task", required=True, choices=sorted(TASKS))
    parser.add_argument("--jobs", metavar="FILE|TRACE",
                        help="jobs table (CSV or parquet, docs/data-formats.md; a .swf / .swf.gz file is read as a "
                             "Standard Workload Format log), or a trace shipped with the package: "
                             "openb, philly, philly:<vc>, elasticflow (10 clusters), elasticflow:<cluster> e.g. "
                             "elasticflow:cluster05 (see docs/real-traces.md)")
    parser.add_argument("--feature-columns", metavar="A,B,...",
                        help="with --jobs FILE: more submit-time columns of the file used as prediction features "
                             "(text = categorical, numbers = numeric; docs/real-traces.md lists the columns that can "
                             "never be features). Shipped traces declare their own")
    parser.add_argument("--columns", metavar="JOBS_COL=FILE_COL,...",
                        help="with --jobs FILE: the file's name for each jobs-table column, e.g. "
                             "job_id=id,submit_time=submit,duration=runtime,gpus=gpus (docs/data-formats.md)")
    parser.add_argument("--train-jobs", metavar="FILE|TRACE",
                        help="fit the predictors on this jobs table or shipped trace and predict the --jobs test part "
                             "(cross-cluster transfer, docs/real-traces.md)")
    parser.add_argument("--train-columns", metavar="JOBS_COL=FILE_COL,...",
                        help="with --train-jobs FILE: that file's name for each jobs-table column, as --columns "
                             "does for --jobs (docs/data-formats.md)")
    parser.add_argument("--data", help="ATLAS dataset folder (from `benchmark data build`) or a named one: default, "
                                       "paper-scale. With neither --jobs nor --data every task uses `default`")
    parser.add_argument("--predictor", help="predictor method name(s), comma-separated")
    parser.add_argument("--policies", help="policy names, comma-separated (default: all for the task)")
    parser.add_argument("--n", type=job_count, help="number of jobs to sample (seeded; at most 10^9)")
    parser.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    parser.add_argument("--output", help="output folder (default results/<task>-<objective>-<time>)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log this run to MLflow")
    parser.add_argument("--quiet", action="store_true", help="no progress and no table on stdout")
    parser.add_argument("--plugins", metavar="MODULES|FILES",
                        help="Python modules or .py files to import first (comma-separated), e.g. ones registering "
                             "policies or prediction methods (docs/plugins.md)")
    for module in TASKS.values():
        importlib.import_module(module).add_arguments(parser)
    parser.set_defaults(handler=_run)
    return parser


def _explicit_options(args) -> set[str]:
    """The options (dests) the command line gave, whatever their values: an option given with its
    default value (`--prr-lambda 0.7`, `--lease 900` to a scheduling run) is given all the same.
    Empty outside `benchmark run` (a programmatic Namespace: only values that differ from their
    defaults count then)."""
    import argparse
    import contextlib
    import io

    from atlas_data.outputs import command_line

    argv = command_line()
    if not argv or argv[1:2] != ["run"]:
        return set()
    top = argparse.ArgumentParser(prog="benchmark")
    probe = _build(top.add_subparsers())
    for action in probe._actions:  # no defaults: only what the command line gave lands in the namespace
        action.default = argparse.SUPPRESS
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            given = top.parse_args(argv[1:])
    except SystemExit:  # cannot happen: the same options were parsed once already
        return set()
    return set(vars(given)) - {"handler"}


def check_task_options(args) -> None:
    """An option the chosen task does not read is an error, not silently ignored (exit 2)."""
    from atlas_data.errors import InputError

    reads = {task: importlib.import_module(module).READS for task, module in TASKS.items()}
    explicit = _explicit_options(args)

    def given(dest: str) -> bool:
        return dest in explicit or (_PARSER is not None and getattr(args, dest, None) != _PARSER.get_default(dest))

    for dest in sorted(set().union(*reads.values()) - reads[args.task] - COMMON):
        if not given(dest):
            continue
        users = [task for task, names in reads.items() if dest in names]
        option = "--" + dest.replace("_", "-")
        raise InputError(f"{option} is not an option of --task {args.task}"
                         + (f" (it is read by --task {', '.join(users)})" if users else ""), where=option)
    check = getattr(importlib.import_module(TASKS[args.task]), "check_options", None)
    if check is not None:  # options of the task that the chosen objective (or policies) would not use
        check(args, given)


def _run(args) -> int:
    check_task_options(args)
    if args.columns is not None:
        from atlas_data.errors import InputError
        from atlas_data.jobs_table import parse_column_map

        if not args.jobs:
            raise InputError("--columns maps the columns of a --jobs FILE", where="--columns")
        parse_column_map(args.columns)  # a malformed mapping stops here, before any work
    if args.train_columns is not None:
        from atlas_data.errors import InputError
        from atlas_data.jobs_table import parse_column_map

        if not getattr(args, "train_jobs", None):
            raise InputError("--train-columns maps the columns of a --train-jobs FILE", where="--train-columns")
        parse_column_map(args.train_columns, option="--train-columns")
    if args.output:
        from atlas_data.outputs import check_output_folder

        check_output_folder(args.output, "run")  # before any computation (docs/results-and-tracking.md)
    from benchmark.timings import Timings

    args._timings = Timings()  # a task that records `timings` in results.json fills this (not an option)
    with args._timings.stage("plugins"):
        load_plugins(args.plugins)
    if not args.no_mlflow:
        from benchmark.tracking import preflight, tracking_uri

        # a damaged store is repaired or refused (exit 2) before the work, not after it
        with args._timings.stage("tracking (check the store)"):
            preflight(tracking_uri())
    code = importlib.import_module(TASKS[args.task]).run(args)  # sets args.output to the folder
    after = {}
    if code == 0 and not args.no_mlflow:
        import time

        t0 = time.perf_counter()
        log_to_mlflow(args)
        after["tracking (log to MLflow)"] = time.perf_counter() - t0
    if code == 0 and getattr(args, "profile", False) and getattr(args, "_timings_recorded", None):
        from benchmark.timings import render

        # the folder was logged as written, so the logging's own time is printed, not recorded
        print(render(args._timings_recorded, after))
    return code


def log_to_mlflow(args) -> str:
    """Log a finished run folder (its options: a parsed Namespace, or a `run` argv) as one MLflow parent run."""
    from pathlib import Path

    from benchmark.progress import say
    from benchmark.tracking import log_run, tracking_uri

    if isinstance(args, (list, tuple)):  # a command line whose folder is already written (benchmark demo)
        from benchmark.cli import build_parser

        args = build_parser(["run"]).parse_args([str(a) for a in args] + ["--quiet"])
    options = {k: v for k, v in vars(args).items() if k not in ("handler",)}
    run_id = log_run(Path(args.output), options)
    say(f"MLflow run {run_id} in {tracking_uri()}", args.quiet)
    return run_id


def load_plugins(modules: str | None) -> None:
    """Import user modules or files (which register policies or methods); see atlas_data.plugins."""
    from atlas_data.plugins import load_plugins as _load

    _load(modules)
