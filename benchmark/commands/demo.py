"""`benchmark demo`: the main job on the embedded default data (what `make demo` runs).

Each step is an ordinary `benchmark run` command line, printed before it runs, so a newcomer can
repeat any step by hand. Results go under --output, MLflow runs into <output>/mlflow.db.
"""

from __future__ import annotations

import shlex
import time
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("demo", help="run the main job on the embedded default data")
    parser.add_argument("--output", default="results/demo", help="output folder (default results/demo)")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log the runs to MLflow")
    parser.add_argument("--quiet", action="store_true", help="only the final summary")
    parser.set_defaults(handler=_demo)


def demo_steps(out: Path) -> list[tuple[str, list[str]]]:
    """(title, argv) of every step, in order."""
    noise = ["--noise", "0,0.25,0.5,1,2"]
    steps = [
        (
            f"scheduling / {objective} on the real Alibaba GPU pod trace, p̂ = p·exp(σZ)",
            ["run", "--task", "scheduling", "--objective", objective, *noise, "--output", str(out / f"scheduling-{objective}")],
        )
        for objective in ("total_completion", "max_stretch", "makespan")
    ]
    return steps


def _demo(args) -> int:
    from benchmark.cli import main

    out = Path(args.output)
    started = time.perf_counter()
    for title, argv in demo_steps(out):
        argv = argv + (["--no-mlflow"] if args.no_mlflow else []) + (["--quiet"] if args.quiet else [])
        if not args.quiet:
            print(f"\n=== {title}\n$ benchmark {shlex.join(argv)}", flush=True)
        code = main(argv)
        if code != 0:
            return code
    elapsed = time.perf_counter() - started
    print(f"\nDemo finished in {elapsed:.0f} s.")
    print(f"Results and plots: {out.resolve()}/*/ (results.json, results.csv, *.png, per-job parquet)")
    if not args.no_mlflow:
        from benchmark.tracking import tracking_uri_for

        uri = tracking_uri_for(out)
        print(f"MLflow store:      {uri}")
        print(f"Open the MLflow UI: .venv/bin/mlflow ui --backend-store-uri {uri}")
        print(f"Compare the runs:   .venv/bin/benchmark compare --results {out}")
    return 0
