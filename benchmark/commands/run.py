"""`benchmark run --task scheduling|prediction|fairness`: one run, one output folder.

Shared options live here; each task module in TASKS adds its own with `add_arguments(parser)`
and does the work in `run(args) -> int`.
"""

from __future__ import annotations

import importlib

TASKS = {
    "scheduling": "benchmark.tasks.scheduling",
    "prediction": "benchmark.tasks.prediction",
    "fairness": "benchmark.tasks.fairness",
}


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="run one task and write an output folder")
    parser.add_argument("--task", required=True, choices=sorted(TASKS))
    parser.add_argument("--jobs", help="jobs table (CSV or parquet, SPEC §3)")
    parser.add_argument("--data", help="ATLAS dataset folder (from `benchmark data build`)")
    parser.add_argument("--predictor", help="predictor method name(s), comma-separated")
    parser.add_argument("--policies", help="policy names, comma-separated (default: all for the task)")
    parser.add_argument("--n", type=int, help="number of jobs to sample (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output", help="output folder (default results/<task>-<objective>-<time>)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log this run to MLflow")
    parser.add_argument("--quiet", action="store_true", help="no progress and no table on stdout")
    for module in TASKS.values():
        importlib.import_module(module).add_arguments(parser)
    parser.set_defaults(handler=_run)


def _run(args) -> int:
    return importlib.import_module(TASKS[args.task]).run(args)
