"""`benchmark run --task scheduling|prediction|fairness`: one run, one output folder.

The options are declared once, in benchmark.tasks.config (OPTIONS, one frozen configuration per
task); this module adds them to the `run` parser, turns the options given into the task's
configuration (`config.from_namespace`: an option of another task is exit 2) and runs it with
`perform`, which `benchmark.api.run` calls too: same checks, same folder, same rows.
"""

from __future__ import annotations

import importlib
from pathlib import Path

TASKS = {
    "scheduling": "benchmark.tasks.scheduling",
    "prediction": "benchmark.tasks.prediction",
    "fairness": "benchmark.tasks.fairness",
}


def register(subparsers) -> None:
    from benchmark.tasks.config import add_run_arguments

    parser = subparsers.add_parser("run", help="run one task and write an output folder")
    parser.add_argument("--task", required=True, choices=sorted(TASKS),
                        help="fairness: the GPU cluster (docs/fairness.md); prediction: score duration predictors; "
                             "scheduling: single- or parallel-machine objectives (docs/evaluation-protocol.md)")
    add_run_arguments(parser)
    parser.set_defaults(handler=_run)


def _run(args) -> int:
    from benchmark.tasks.config import from_namespace

    perform(from_namespace(args))
    return 0


def perform(config):
    """Run a validated configuration as `benchmark run` does: output folder checked, plugins loaded and
    the MLflow store checked before the work; the task (which prints its report unless quiet); the
    folder logged to MLflow unless no_mlflow; the time report with profile. Returns the task's
    benchmark.results.Run."""
    if config.output:
        from atlas_data.outputs import check_output_folder

        check_output_folder(config.output, "run")  # before any computation (docs/results-and-tracking.md)
    from benchmark.timings import Timings

    timings = Timings()  # a task that records `timings` in results.json fills this
    with timings.stage("plugins"):
        load_plugins(config.plugins)
    if not config.no_mlflow:
        from benchmark.tracking import preflight, tracking_uri

        # a damaged store is repaired or refused (exit 2) before the work, not after it
        with timings.stage("tracking (check the store)"):
            preflight(tracking_uri())
    result = importlib.import_module(TASKS[config.task]).run(config, timings)
    after = {}
    if not config.no_mlflow:
        import time

        t0 = time.perf_counter()
        log_to_mlflow(result.config, result.output)
        after["tracking (log to MLflow)"] = time.perf_counter() - t0
    if getattr(config, "profile", False) and result.doc.get("timings"):
        from benchmark.timings import render

        # the folder was logged as written, so the logging's own time is printed, not recorded
        print(render(result.doc["timings"], after))
    return result


def log_to_mlflow(config, output=None) -> str:
    """Log a finished run folder as one MLflow parent run; `config` is the run's configuration, or a
    `run` argv whose folder is already written (benchmark demo)."""
    from benchmark.progress import say
    from benchmark.tasks.config import as_options, from_argv
    from benchmark.tracking import log_run, tracking_uri

    if isinstance(config, (list, tuple)):
        config = from_argv(list(config) + ["--quiet"])
    output = Path(output if output is not None else config.output)
    options = {"command": "run", "task": config.task, **as_options(config), "output": str(output)}
    run_id = log_run(output, options)
    say(f"MLflow run {run_id} in {tracking_uri()}", config.quiet)
    return run_id


def load_plugins(modules: str | None) -> None:
    """Import user modules or files (which register policies or methods); see atlas_data.plugins."""
    from atlas_data.plugins import load_plugins as _load

    _load(modules)
