"""Perf section 'traces': every prediction method on a real trace, from the shipped file to test p̂.

`benchmark perf --traces [--perf-trace philly] [--perf-trace-methods a,b]` times, on the shipped
82,247-job Philly trace by default: reading the trace, the submit-time features and split
(`atlas_data.jobs_features`), then each of the ten methods (fit on train, calibrate on
validation, predict test — `benchmark run --task prediction --jobs philly` does the same work).
Target (docs/performance.md): all ten methods in under 3 minutes on 2 cores. LightGBM threads
follow `predictors.stage1.default_n_jobs`.

May import atlas_data, predictors and benchmark.
"""

from __future__ import annotations

import time

TARGET_TOTAL_S = 180.0


def add_arguments(parser) -> None:
    parser.add_argument("--perf-trace", default="philly",
                        help="traces section: a shipped trace or a jobs-table file (default philly, 82,247 jobs)")
    parser.add_argument("--perf-trace-methods", help="traces section: methods to time (default: all ten)")


def run(args) -> dict:
    import os

    from benchmark.progress import say
    from benchmark.results import format_table
    from benchmark.tasks.prediction import DEFAULT_METHODS
    from benchmark.tasks.traces import trace_split
    from predictors.methods import MethodConfig, check_method_name, run_method
    from predictors.metrics import evaluate
    from predictors.stage1 import default_n_jobs

    quiet = bool(getattr(args, "quiet", False))
    names = [m.strip() for m in (args.perf_trace_methods or "").split(",") if m.strip()] or list(DEFAULT_METHODS)
    for name in names:
        check_method_name(name)
    t0 = time.perf_counter()
    trace = trace_split(args.perf_trace)
    data_s = time.perf_counter() - t0
    counts = trace.card["counts"]
    truth = trace.split.test_truth()
    say(f"[perf traces] {args.perf_trace}: features and split in {data_s:.1f}s: {counts}; LightGBM threads "
        f"{default_n_jobs(counts['train'])} (cpu_count {os.cpu_count()})", quiet)
    rows = []
    for name in names:
        started = time.perf_counter()
        pred = run_method(trace.split, name, MethodConfig(seed=0))
        seconds = time.perf_counter() - started
        frame = pred.to_frame()
        m = evaluate(frame["p_hat"], truth.loc[frame["job_id"], "p_star"], truth.loc[frame["job_id"], "is_recurrent"])
        rows.append({"method": name, "seconds": round(seconds, 2), "rmsle": round(m["rmsle"], 4),
                     "cov25": round(m["cov25"], 4)})
        say(f"[perf traces] {name}: {seconds:.1f}s", quiet)
    total = data_s + sum(r["seconds"] for r in rows)
    ok = total < TARGET_TOTAL_S if len(names) == len(DEFAULT_METHODS) else None
    if not quiet:
        print(f"prediction on {args.perf_trace}: train {counts['train']}, val {counts['val']}, test {counts['test']}; "
              f"features {data_s:.1f}s")
        print(format_table(rows, list(rows[0]), floatfmt="{:.4g}"))
        print(f"total {total:.1f}s (target {TARGET_TOTAL_S:.0f}s for all ten methods: "
              f"{'ok' if ok else 'not met' if ok is False else 'n/a, not all methods'})")
    return {"trace": args.perf_trace, "counts": counts, "data_seconds": round(data_s, 2), "rows": rows,
            "total_seconds": round(total, 2), "target_s": TARGET_TOTAL_S, "ok": ok}
