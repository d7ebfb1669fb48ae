"""`benchmark perf`: timings against the targets in docs/performance.md (benchmarks, not tests).

With no section flag it runs the scheduling-core section. Each section module has
`add_arguments(parser)` and `run(args) -> dict` (the figures it printed). Each section prints its
figures as it goes, and `--output` is rewritten (atomically) after every finished section, so an
interrupted run keeps the sections it finished. After each section one line says what it cost and on
what machine: its wall-clock and CPU seconds (this process and its finished children) and the 1-minute
load average before and after it, also kept in the section's figures as `measured`: a time read
without the load beside it cannot be compared with another.
"""

from __future__ import annotations

import importlib

SECTIONS = {
    "scheduling": "benchmark.experiments.perf.scheduling",
    "pipeline": "benchmark.experiments.perf.pipeline",
    "predictors": "benchmark.experiments.perf.predictors",
    "fairness": "benchmark.experiments.perf.fairness",
    "traces": "benchmark.experiments.perf.traces",
    "peers": "benchmark.experiments.perf.peers",
    "command": "benchmark.experiments.perf.command",
    "hpc": "benchmark.experiments.perf.hpc",
}


def register(subparsers) -> None:
    parser = subparsers.add_parser("perf", help="measure speed against the performance targets")
    for name in SECTIONS:
        if name != "scheduling":
            parser.add_argument(f"--{name}", action="store_true", help=f"run the {name} section")
    parser.add_argument("--scheduling", action="store_true", help="run the scheduling-core section (default)")
    parser.add_argument("--output", help="write the figures as JSON here")
    parser.add_argument("--quiet", action="store_true", help="no progress lines; the tables are still printed")
    for module in SECTIONS.values():
        importlib.import_module(module).add_arguments(parser)
    parser.set_defaults(handler=_perf)


def _perf(args) -> int:
    import json
    from pathlib import Path

    from atlas_data.outputs import check_output_file, output_file

    chosen = [name for name in SECTIONS if getattr(args, name, False)] or ["scheduling"]
    if args.output:
        check_output_file(Path(args.output), "perf", recognise=_is_perf_json)  # before the timings
    figures = {}
    for name in chosen:
        before = _clock()
        figures[name] = importlib.import_module(SECTIONS[name]).run(args)
        figures[name]["measured"] = measured = _cost(before, _clock())
        print(f"[perf] section {name}: {measured['wall_s']:.1f} s wall, {measured['cpu_s']:.1f} s CPU, load average "
              f"{measured['load_before']:.2f} -> {measured['load_after']:.2f} ({measured['cores']} cores)", flush=True)
        if args.output:  # after each section: Ctrl-C in the next one keeps this one
            text = json.dumps(figures, indent=2, default=float) + "\n"
            output_file(Path(args.output), "perf", lambda tmp, text=text: tmp.write_text(text), recognise=_is_perf_json)
        if not args.quiet:
            saved = f"; figures saved to {args.output}" if args.output else ""
            print(f"[perf] section {name} done{saved}", flush=True)
    return 0


def _clock() -> tuple[float, float, float]:
    """(wall clock, CPU seconds of this process and its finished children, 1-minute load average)."""
    import os
    import time

    from benchmark.timings import cpu_seconds

    return time.perf_counter(), cpu_seconds(), os.getloadavg()[0]


def _cost(before, after) -> dict:
    import os

    return {"wall_s": after[0] - before[0], "cpu_s": after[1] - before[1], "load_before": before[2],
            "load_after": after[2], "cores": os.cpu_count()}


def _is_perf_json(path) -> bool:
    """A figures file an earlier `perf --output` wrote: a JSON object keyed by section names."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data) and set(data) <= set(SECTIONS)
