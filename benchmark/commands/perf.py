"""`benchmark perf`: timings against the targets in docs/performance.md (benchmarks, not tests).

With no section flag it runs the scheduling-core section. Each section module has
`add_arguments(parser)` and `run(args) -> dict` (the figures it printed).
"""

from __future__ import annotations

import importlib

SECTIONS = {
    "scheduling": "benchmark.perf_scheduling",
    "pipeline": "benchmark.perf_pipeline",
    "predictors": "benchmark.perf_predictors",
    "fairness": "benchmark.perf_fairness",
    "traces": "benchmark.perf_traces",
}


def register(subparsers) -> None:
    parser = subparsers.add_parser("perf", help="measure speed against the performance targets")
    for name in SECTIONS:
        if name != "scheduling":
            parser.add_argument(f"--{name}", action="store_true", help=f"run the {name} section")
    parser.add_argument("--scheduling", action="store_true", help="run the scheduling-core section (default)")
    parser.add_argument("--output", help="write the figures as JSON here")
    parser.add_argument("--quiet", action="store_true")
    for module in SECTIONS.values():
        importlib.import_module(module).add_arguments(parser)
    parser.set_defaults(handler=_perf)


def _perf(args) -> int:
    import json
    from pathlib import Path

    chosen = [name for name in SECTIONS if getattr(args, name, False)] or ["scheduling"]
    figures = {name: importlib.import_module(SECTIONS[name]).run(args) for name in chosen}
    if args.output:
        Path(args.output).parent.mkdir(parents=True, exist_ok=True)
        Path(args.output).write_text(json.dumps(figures, indent=2, default=float) + "\n")
    return 0
