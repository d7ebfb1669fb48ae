"""`benchmark run --task scheduling|prediction|fairness`: one run, one output folder.

Shared options live here; each task module in TASKS adds its own with `add_arguments(parser)`
and does the work in `run(args) -> int`.
"""

from __future__ import annotations

import importlib

# options every task reads; each task module lists the others it reads in READS
COMMON = frozenset({"task", "output", "no_mlflow", "quiet", "plugins", "seed", "handler"})
_PARSER = None  # the `run` parser, for its defaults

TASKS = {
    "scheduling": "benchmark.tasks.scheduling",
    "prediction": "benchmark.tasks.prediction",
    "fairness": "benchmark.tasks.fairness",
}


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="run one task and write an output folder")
    parser.add_argument("--task", required=True, choices=sorted(TASKS))
    parser.add_argument("--jobs", metavar="FILE|TRACE",
                        help="jobs table (CSV or parquet, docs/data-formats.md), or a trace shipped with the package: "
                             "openb, philly, philly:<vc>, elasticflow (10 clusters), elasticflow:<cluster> e.g. "
                             "elasticflow:cluster05 (see docs/real-traces.md)")
    parser.add_argument("--data", help="ATLAS dataset folder (from `benchmark data build`) or a named one: default, paper-scale")
    parser.add_argument("--predictor", help="predictor method name(s), comma-separated")
    parser.add_argument("--policies", help="policy names, comma-separated (default: all for the task)")
    parser.add_argument("--n", type=int, help="number of jobs to sample (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output", help="output folder (default results/<task>-<objective>-<time>)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log this run to MLflow")
    parser.add_argument("--quiet", action="store_true", help="no progress and no table on stdout")
    parser.add_argument("--plugins", help="modules to import first (comma-separated), e.g. ones registering policies")
    for module in TASKS.values():
        importlib.import_module(module).add_arguments(parser)
    parser.set_defaults(handler=_run)
    global _PARSER
    _PARSER = parser


def check_task_options(args) -> None:
    """An option the chosen task does not read is an error, not silently ignored (exit 2)."""
    from atlas_data.errors import InputError

    reads = {task: importlib.import_module(module).READS for task, module in TASKS.items()}
    for dest in sorted(set().union(*reads.values()) - reads[args.task] - COMMON):
        if _PARSER is None or getattr(args, dest, None) == _PARSER.get_default(dest):
            continue
        users = [task for task, names in reads.items() if dest in names]
        option = "--" + dest.replace("_", "-")
        raise InputError(f"{option} is not an option of --task {args.task}"
                         + (f" (it is read by --task {', '.join(users)})" if users else ""), where=option)


def _run(args) -> int:
    check_task_options(args)
    load_plugins(args.plugins)
    if not args.no_mlflow:
        from pathlib import Path

        from benchmark.tracking import preflight, tracking_uri_for

        # a damaged store is repaired or refused (exit 2) before the work, not after it
        preflight(tracking_uri_for(Path(args.output).parent if args.output else Path("results"), create=False))
    code = importlib.import_module(TASKS[args.task]).run(args)  # sets args.output to the folder
    if code == 0 and not args.no_mlflow:
        from pathlib import Path

        from benchmark.progress import say
        from benchmark.tracking import log_run, tracking_uri_for

        options = {k: v for k, v in vars(args).items() if k not in ("handler",)}
        run_id = log_run(Path(args.output), options)
        say(f"MLflow run {run_id} in {tracking_uri_for(Path(args.output).parent)}", args.quiet)
    return code


def load_plugins(modules: str | None) -> None:
    """Import user modules (which register policies with @schedulers.policy.register)."""
    import os
    import sys

    from atlas_data.errors import InputError

    if not modules:
        return
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # a module next to the user's working directory
    importlib.invalidate_caches()
    for name in [m.strip() for m in (modules or "").split(",") if m.strip()]:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise InputError(f"cannot import plugin module '{name}': {exc}", where="--plugins") from None
