"""`benchmark demo`: the main job on the embedded default data (what `make demo` runs).

Each step is an ordinary `benchmark run` command line, printed before it runs, so a newcomer can
repeat any step by hand. Results go under --output — written aside and renamed into place when the
last step is done (atlas_data.outputs) —, then each run is logged to the project's MLflow store
(benchmark.tracking, without a disk wait per commit: unsynced_commits) from its final place. Besides
the ATLAS dataset, the demo predicts durations on the shipped real traces (PREDICTION_TRACES) and
schedules their test parts with the learned p̂ (SCHEDULING_TRACES, FAIRNESS_TRACE). The steps run in
`--workers` processes (default the CPU count), in chains (benchmark.experiments.demo.step_chains):
the steps that fit on one trace share a process, so its lgbm-meta fit is made once and reused
(benchmark.tasks.traces); their output is shown in step order, the results are those of one process.
`--readme FILE`, once per file, rewrites the demo's blocks that FILE holds: the full tables
(`demo-results`, in docs/results.md) and the headline (`demo-headline`, a few rows in README.md); a
file with neither is exit 2 before any work.

The argument handling and the running of the steps; the steps and the summary read from their
results are benchmark.experiments.demo. May import benchmark.cli (in-process steps),
benchmark.commands.run (MLflow logging), benchmark.experiments, benchmark.options, benchmark.results,
benchmark.sweeps.execution (the worker processes), benchmark.tracking and atlas_data.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
import time
from pathlib import Path

from benchmark.experiments.demo import blocks_in, demo_steps, summary_markdown, write_blocks
from benchmark.options import workers


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
    parser.add_argument("--workers", type=workers, default=None, metavar="N",
                        help="processes that run the steps (default: the CPU count; 1 = all in this one); the "
                             "results are the same")
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
            from benchmark.tracking import preflight, sqlite_path, tracking_uri

            uri = tracking_uri()
            db = sqlite_path(uri)  # a store this demo makes holds nothing else: its commits may skip
            new_store = db is not None and not db.exists()  # the disk wait, a user's may not
            preflight(uri)  # a store the logging would fail on is exit 2 now, not after every step
        # every step writes inside a temporary sibling of OUT, renamed to OUT when the last one is done;
        # the printed command lines name OUT, where a step repeated by hand writes
        try:
            with output_folder(out, "demo") as folder:
                summary = _run_steps(args, out, folder)
        except StepFailed as failed:  # the step printed its error; the partial folder is gone
            return failed.code
        if not args.no_mlflow:
            from benchmark.commands.run import log_to_mlflow
            from benchmark.tracking import unsynced_commits

            # ~6,000 commits in a row: one fsync at the end, into a store the demo made (an OS crash
            # could damage a store while its commits are unsynced: never one that holds other runs)
            with unsynced_commits(uri) if new_store else contextlib.nullcontext():
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
    from benchmark.experiments.demo import step_chains

    steps = []  # (what is printed before the step, its argv)
    for (title, shown), (_, argv) in zip(demo_steps(out), demo_steps(folder)):
        if argv[0] == "run":  # MLflow logs the runs once they are in their final place
            extra = ["--no-mlflow"] + (["--quiet"] if args.quiet else [])
            argv, shown = argv + extra, shown + extra[1:]
        elif args.quiet and argv[:2] == ["data", "build"]:
            argv, shown = argv + ["--quiet"], shown + ["--quiet"]
        steps.append(("" if args.quiet else f"\n=== {title}\n$ benchmark {shlex.join(shown)}\n", argv))
    chains = step_chains([argv for _, argv in steps])
    workers = min(args.workers or os.cpu_count() or 1, len(chains))
    if workers > 1:
        _run_in_workers(steps, chains, workers, beside=None if args.no_mlflow else _prepare_store)
    else:
        for header, argv in steps:
            print(header, end="", flush=True)
            run_step(argv)
    summary = summary_markdown(folder, shown=out)
    (folder / "SUMMARY.md").write_text(summary)
    return summary


# ----- the steps in worker processes, their output shown in step order --------------------------
def _prepare_store() -> None:
    """Import MLflow and build the store if it is missing (benchmark.tracking.ensure_store), while the
    workers run the first steps: a few seconds the logging after the last step no longer waits for."""
    from benchmark.tracking import ensure_store, import_mlflow, store_lock, tracking_uri

    import_mlflow()
    uri = tracking_uri(create=True)
    with store_lock(uri):
        ensure_store(uri)


def _run_in_workers(steps: list[tuple[str, list[str]]], chains: list[list[int]], workers: int, beside=None) -> None:
    """Run the chains of steps (benchmark.experiments.demo.step_chains) in `workers` processes.

    Each step's stdout and stderr go to files of a temporary folder, which this process copies to its
    own, step after step in the demo's order while they are written: the output reads as when the
    steps run one after the other, and the step shown is followed live (its progress lines, every
    10 s in a file); a step finished early on the other worker is shown when its turn comes. A failed
    step's own error line is shown in its place, then the demo stops (StepFailed: the partial folder
    is removed); Ctrl-C kills the workers (benchmark.sweeps.execution.kill_pool). `beside()`, if given,
    runs in this process once the workers have their steps and the first step's header is shown."""
    import tempfile

    from benchmark.cli import StepFailed
    from benchmark.sweeps.execution import kill_pool, local_pool

    with tempfile.TemporaryDirectory(prefix="atlas-demo-") as logs:
        pool = local_pool(workers, ["benchmark.cli", "benchmark.tasks.scheduling", "benchmark.tasks.fairness",
                                    "benchmark.tasks.prediction"])
        try:
            futures = [pool.submit(run_chain, [(i, steps[i][1]) for i in chain], logs) for chain in chains]
            for index, (header, _) in enumerate(steps):
                print(header, end="", flush=True)
                if index == 0 and beside is not None:
                    beside()
                code = _follow(Path(logs) / str(index), futures)
                if code != 0:
                    raise StepFailed(code)
        except BaseException:  # a failed step, a dead worker, Ctrl-C: the other steps are not waited for
            kill_pool(pool)
            raise
        pool.shutdown()


def _follow(base: Path, futures) -> int:
    """Copy step `base`'s output files to stdout and stderr until the step is done; its exit status."""
    import sys

    from benchmark.cli import StepFailed

    tails = [_Tail(base.with_suffix(".out"), sys.stdout), _Tail(base.with_suffix(".err"), sys.stderr)]
    status = base.with_suffix(".status")
    while True:
        done = status.exists()  # written after both files are closed: what is read next is all of it
        for tail in tails:
            tail.pump()
        if done:
            return int(status.read_text())
        broken = next((f.exception() for f in futures if f.done() and f.exception() is not None), None)
        if broken is not None or all(f.done() for f in futures):
            sys.stderr.write(f"error: a worker process of the demo stopped before this step finished "
                             f"({type(broken).__name__ if broken else 'no status'}: {broken}); run it with --workers 1\n")
            raise StepFailed(2)
        time.sleep(0.2)


class _Tail:
    """What has been appended to a file since the last `pump`, written to `stream` (UTF-8 kept whole)."""

    def __init__(self, path: Path, stream):
        import codecs

        self.path, self.stream, self.offset = path, stream, 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def pump(self) -> None:
        try:
            with open(self.path, "rb") as file:
                file.seek(self.offset)
                data = file.read()
        except FileNotFoundError:
            return
        if data:
            self.offset += len(data)
            self.stream.write(self.decoder.decode(data))
            self.stream.flush()


_TQDM_LOCK = threading.RLock()  # tqdm's default is a multiprocessing lock, which a killed worker leaves behind


def run_chain(chain: list[tuple[int, list[str]]], logs: str) -> None:
    """In a worker: run each (index, argv) step, its output into LOGS/index.out and .err, then its exit
    status into LOGS/index.status; stop at the first failure (the later steps of a chain build on it).
    LightGBM gets one thread (ATLAS_N_JOBS, unless set): the other worker has the second core."""
    import contextlib

    from tqdm import tqdm

    from benchmark.cli import main

    tqdm.set_lock(_TQDM_LOCK)
    os.environ.setdefault("ATLAS_N_JOBS", "1")
    for index, argv in chain:
        base = Path(logs) / str(index)
        with open(base.with_suffix(".out"), "w", buffering=1, encoding="utf-8") as out, \
                open(base.with_suffix(".err"), "w", buffering=1, encoding="utf-8") as err, \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        partial = base.with_suffix(".status-partial")
        partial.write_text(str(code))
        partial.replace(base.with_suffix(".status"))
        if code != 0:
            return
