"""`benchmark demo`: the main job on the embedded default data (what `make demo` runs).

Each step is an ordinary `benchmark run` command line, printed before it runs, so a newcomer can
repeat any step by hand. Results go under --output — written aside and renamed into place when
the last step is done (atlas_data.outputs) —, then each run is logged to the project's MLflow
store (benchmark.tracking) from its final place. Besides the ATLAS dataset, the demo predicts durations on
the shipped real traces (PREDICTION_TRACES) and schedules their test parts with the learned p̂
(SCHEDULING_TRACES, FAIRNESS_TRACE); all steps run in one process, so a trace's lgbm-meta fit is
made once and reused (benchmark.tasks.traces). `--readme FILE`, once per file, rewrites the demo's
blocks that FILE holds: the full tables (`demo-results`, in docs/results.md) and the headline
(`demo-headline`, a few rows in README.md); a file with neither is exit 2 before any work.

The argument handling and the running of the steps; the steps and the summary read from their
results are benchmark.experiments.demo. May import benchmark.cli (in-process steps),
benchmark.commands.run (MLflow logging), benchmark.experiments, benchmark.results,
benchmark.tracking and atlas_data.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path

from benchmark.experiments.demo import blocks_in, demo_steps, summary_markdown, write_blocks


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the main job on the embedded default data")
    parser.add_argument("--output", default="results/demo", help="output folder (default results/demo)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log the runs to MLflow")
    parser.add_argument("--quiet", action="store_true", help="only the final summary")
    parser.add_argument("--readme", action="append", metavar="FILE",
                        help="rewrite the demo's blocks in this Markdown file from the results: the full tables "
                             "(demo-results, docs/results.md) and/or the headline table (demo-headline, README.md); "
                             "repeat for several files")
    parser.add_argument("--summary-only", action="store_true", help="do not run; summarise an existing --output")
    parser.set_defaults(handler=_demo)


def _demo(args) -> int:
    from atlas_data.outputs import check_output_folder, output_folder, read_marker
    from benchmark.cli import StepFailed
    from benchmark.results import write_text_atomic

    out = Path(args.output)
    started = time.perf_counter()
    for readme in args.readme or []:  # every file refused now, before any work, not after the runs
        blocks_in(Path(readme))
    if args.summary_only:
        if (read_marker(out) or {}).get("command") != "demo":
            from atlas_data.errors import InputError

            raise InputError("not a folder written by `benchmark demo` (nothing to summarise)", path=str(out),
                             where="--summary-only")
        summary = summary_markdown(out)
        write_text_atomic(out / "SUMMARY.md", summary)
    else:
        check_output_folder(out, "demo")
        if not args.no_mlflow:
            from benchmark.tracking import preflight, tracking_uri

            preflight(tracking_uri())  # a store the logging would fail on is exit 2 now, not after every step
        # every step writes inside a temporary sibling of OUT, renamed to OUT when the last one is done;
        # the printed command lines name OUT, where a step repeated by hand writes
        try:
            with output_folder(out, "demo") as folder:
                summary = _run_steps(args, out, folder)
        except StepFailed as failed:  # the step printed its error; the partial folder is gone
            return failed.code
        if not args.no_mlflow:
            from benchmark.commands.run import log_to_mlflow

            for _, argv in demo_steps(out):
                if argv[0] == "run":
                    log_to_mlflow(argv)
    elapsed = time.perf_counter() - started
    for readme in args.readme or []:
        write_blocks(Path(readme), out, summary)
    print("\n" + summary)
    if not args.summary_only:
        print(f"Demo finished in {elapsed:.0f} s.")
    print(f"Results and plots: {out.resolve()}/*/ (results.json, results.csv, *.png, per-job parquet); summary in SUMMARY.md")
    if not args.no_mlflow:
        from benchmark.tracking import tracking_uri

        uri = tracking_uri()
        print(f"MLflow store:       {uri}")
        print(f"Open the MLflow UI: .venv/bin/mlflow ui --backend-store-uri {uri}")
        print("Compare the runs:   .venv/bin/benchmark compare")
    return 0


def _run_steps(args, out: Path, folder: Path) -> str:
    """Run every step into `folder` (printing them as run into `out`); return the summary."""
    from benchmark.cli import run_step

    for (title, shown), (_, argv) in zip(demo_steps(out), demo_steps(folder)):
        if argv[0] == "run":  # MLflow logs the runs once they are in their final place
            extra = ["--no-mlflow"] + (["--quiet"] if args.quiet else [])
            argv, shown = argv + extra, shown + extra[1:]
        elif args.quiet and argv[:2] == ["data", "build"]:
            argv, shown = argv + ["--quiet"], shown + ["--quiet"]
        if not args.quiet:
            print(f"\n=== {title}\n$ benchmark {shlex.join(shown)}", flush=True)
        run_step(argv)
    summary = summary_markdown(folder, shown=out)
    (folder / "SUMMARY.md").write_text(summary)
    return summary
