"""`benchmark run --task scheduling`: the LASched objectives on the shared simulator core.

Jobs come from `--jobs FILE` (a jobs table), `--data DS` (the test split of an ATLAS dataset) or,
with neither, the embedded real Alibaba GPU pod trace. Predictions p̂ come from the table's
`predicted_duration` column, from `--noise σ[,σ...]` (p̂ = p·exp(σZ), one seeded Z per job shared
by every σ so the robustness curve is smooth), or from `--predictor NAME[,NAME]` (learned on the
dataset's train/val splits, never on the test split that is scheduled).

Sampling (`--n N`): by default (`--sample window`) N consecutive jobs in submit order, starting at
a seeded uniform offset — a window keeps the real arrival process and its load. `--sample random`
draws N jobs uniformly without replacement (seeded) and keeps them in submit order: the load is
thinned by N / total, which is how a paper-style "n = 5,000" sample of a large test split behaves. May import atlas_data, predictors, schedulers and benchmark.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from benchmark import plots
from benchmark.progress import Progress, say
from benchmark.results import default_output_dir, format_table, write_results
from schedulers.jobs import JobSet
from schedulers.objectives import DEFAULT_MACHINES, DEFAULT_POLICIES, OBJECTIVES, run_objective
from schedulers.policy import get_policy, policy_names

DATA_DEFAULT_N = {"total_completion": 10_000, "max_stretch": 5_000, "makespan": 10_000}


def add_arguments(parser) -> None:
    parser.add_argument("--objective", choices=OBJECTIVES, help="scheduling objective (task scheduling)")
    parser.add_argument("--machines", help="machine counts for makespan, e.g. 5,10,20 (default 5,10,20,50,100)")
    parser.add_argument("--noise", help="noise levels σ for p̂ = p·exp(σZ), e.g. 0,0.5,1")
    parser.add_argument("--prr-lambda", type=float, default=0.7, help="PRR's λ (default 0.7)")
    parser.add_argument("--sample", choices=("window", "random"), default="window",
                        help="with --n: N consecutive jobs from a seeded start (default) or N jobs drawn at random")


# ----- inputs -------------------------------------------------------------------------------
def _csv_list(text: str | None, what: str, convert=str) -> list:
    if text is None:
        return []
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    try:
        return [convert(t) for t in items]
    except ValueError:
        raise InputError(f"cannot read {what} from {text!r}", where=f"--{what}") from None


def load_jobs(args) -> tuple[pd.DataFrame, dict, str]:
    """(jobs table, dataset card, source label) from --jobs / --data / the embedded default."""
    if args.jobs and args.data:
        raise InputError("give either --jobs or --data, not both", where="--jobs/--data")
    if args.jobs:
        from atlas_data.jobs_table import read_jobs

        return read_jobs(args.jobs), {"source": "jobs", "path": str(args.jobs)}, str(args.jobs)
    if args.data:
        from atlas_data.build import load_dataset

        frame, card = load_dataset(args.data)
        test = frame[frame["split"] == "test"]
        jobs = pd.DataFrame(
            {"job_id": test["job_id"].astype(str), "submit_time": test["submit_time"], "duration": test["p_star"]}
        )
        return jobs.reset_index(drop=True), {"source": card.get("source"), "path": str(args.data), "fingerprint": card.get("fingerprint")}, str(args.data)
    from atlas_data.adapters import default_jobs, default_pod_trace_path

    return default_jobs(), {"source": "openb-v2023 (embedded)", "path": str(default_pod_trace_path())}, "embedded openb trace"


def sample_window(jobs: pd.DataFrame, n: int | None, seed: int, how: str = "window") -> pd.DataFrame:
    """n jobs in (submit_time, job_id) order: consecutive from a seeded random start, or drawn at random."""
    ordered = jobs.sort_values(["submit_time", "job_id"], kind="mergesort").reset_index(drop=True)
    if n is None or n >= len(ordered):
        return ordered
    if n < 1:
        raise InputError(f"--n must be at least 1, got {n}", where="--n")
    rng = np.random.default_rng(seed)
    if how == "random":
        return ordered.iloc[np.sort(rng.choice(len(ordered), size=n, replace=False))].reset_index(drop=True)
    start = int(rng.integers(0, len(ordered) - n + 1))
    return ordered.iloc[start : start + n].reset_index(drop=True)


def noise_predictions(size: np.ndarray, sigmas: list[float], seed: int) -> dict[str, np.ndarray]:
    z = np.random.default_rng([seed, 0x5EED]).standard_normal(len(size))
    return {f"noise:{s:g}": size * np.exp(s * z) for s in sigmas}


def _policies(args, objective: str, have_predictions: bool, source: str) -> list[str]:
    kind = "parallel" if objective == "makespan" else "single"
    valid = policy_names(kind)
    if args.policies:
        chosen = _csv_list(args.policies, "policies")
        for name in chosen:
            if name not in valid:
                raise InputError(f"unknown policy '{name}' for {objective} (choose from {', '.join(valid)})", where="--policies")
        if not have_predictions:
            needing = [p for p in chosen if get_policy(p).needs_prediction]
            if needing:
                raise InputError(
                    f"policy '{needing[0]}' needs predicted durations: column 'predicted_duration' is missing "
                    "(add it, or use --noise / --predictor)",
                    path=source,
                )
        return chosen
    chosen = list(DEFAULT_POLICIES[objective])
    if not have_predictions:
        dropped = [p for p in chosen if get_policy(p).needs_prediction]
        chosen = [p for p in chosen if p not in dropped]
        say(f"no predictions (no predicted_duration, --noise or --predictor): skipping {', '.join(dropped)}", args.quiet)
    return chosen


def build_predictions(args, window: pd.DataFrame, jobs: JobSet) -> dict[str, np.ndarray]:
    """p̂ per predictor label, in JobSet row order."""
    predictions: dict[str, np.ndarray] = {}
    order = pd.Index(window["job_id"].astype(str)).get_indexer(jobs.job_id)
    sigmas = _csv_list(args.noise, "noise", float)
    if any(s < 0 or not np.isfinite(s) for s in sigmas):
        raise InputError(f"noise levels must be finite and >= 0, got {args.noise}", where="--noise")
    predictions.update(noise_predictions(jobs.size, sigmas, args.seed))
    for method in _csv_list(args.predictor, "predictor"):
        if not args.data:
            raise InputError("--predictor needs --data DS (a dataset to learn p̂ from)", where="--predictor")
        from predictors.api import method_names, predict_test

        if method not in method_names():
            raise InputError(f"unknown predictor '{method}' (choose from {', '.join(method_names())})", where="--predictor")
        p_hat = predict_test(Path(args.data), method, seed=args.seed, quiet=args.quiet)
        lookup = p_hat.set_index(p_hat["job_id"].astype(str))["p_hat"]
        predictions[method] = lookup.reindex(jobs.job_id).to_numpy(np.float64)
    if not predictions and "predicted_duration" in window.columns:
        predictions["column"] = window["predicted_duration"].to_numpy(np.float64)[order]
    return predictions


# ----- the task -----------------------------------------------------------------------------
def execute(args) -> tuple[Path, dict]:
    if args.objective is None:
        raise InputError("--objective is required for --task scheduling (total_completion, max_stretch or makespan)", where="--objective")
    objective = args.objective
    machines = _csv_list(args.machines, "machines", int) or list(DEFAULT_MACHINES)
    if any(m < 1 for m in machines):
        raise InputError(f"machine counts must be >= 1, got {args.machines}", where="--machines")
    if not 0.0 <= args.prr_lambda <= 1.0:
        raise InputError(f"PRR's λ must be in [0, 1], got {args.prr_lambda}", where="--prr-lambda")
    table, dataset, source = load_jobs(args)
    n = args.n if args.n is not None else (DATA_DEFAULT_N[objective] if args.data else None)
    window = sample_window(table, n, args.seed, args.sample)
    jobs = JobSet.from_frame(window)
    predictions = build_predictions(args, window, jobs)
    policies = _policies(args, objective, bool(predictions), source)
    out = Path(args.output) if args.output else default_output_dir("scheduling", objective)
    steps = sum(len(predictions) if get_policy(p).needs_prediction else 1 for p in policies)
    steps *= len(machines) if objective == "makespan" else 1
    with Progress(f"{objective} on {jobs.n} jobs", total=steps, quiet=args.quiet) as progress:
        rows, per_job, reference = run_objective(
            objective, jobs, policies, predictions, machines=machines, prr_lambda=args.prr_lambda,
            seed=args.seed, on_step=lambda row: progress.update(),
        )
    out.mkdir(parents=True, exist_ok=True)
    per_job.to_parquet(out / "per_job.parquet", index=False)
    dataset = {**dataset, "n_total": int(len(table)), "sample": args.sample if jobs.n < len(table) else "all"}
    doc = write_results(
        out, task="scheduling", objective=objective, n_jobs=jobs.n, dataset=dataset, rows=rows,
        extra={"reference": _jsonable(reference), "options": _options(args, machines)},
    )
    title = f"{objective} — {jobs.n} jobs ({source})"
    plots.ratio_bars(rows, out / "ratios.png", title=title)
    if objective != "makespan":
        plots.stretch_cdf(per_job, out / "stretch_cdf.png", title=title, s_star=reference.get("s_star"))
    if len([k for k in predictions if k.startswith("noise:")]) > 1:
        plots.robustness_curve(rows, out / "robustness.png", title=f"robustness: {title}")
    return out, doc


def run(args) -> int:
    out, doc = execute(args)
    args.output = str(out)
    if not args.quiet:
        print(render(doc))
        print(f"\nresults: {out}")
    return 0


def render(doc: dict) -> str:
    objective = doc["objective"]
    columns = ["policy", "predictor", "value", "reference", "ratio"]
    if objective == "total_completion":
        columns.append("flow_ratio")
    if objective == "max_stretch":
        columns += ["median_ratio", "p99_ratio"]
    rows = doc["rows"]
    if objective == "makespan":
        machines = sorted({r["machines"] for r in rows})
        lines: dict[tuple, dict] = {}
        for r in rows:
            line = lines.setdefault((r["policy"], r["predictor"]), {"policy": r["policy"], "predictor": r["predictor"]})
            line[f"m={r['machines']}"] = r["ratio"]
        for line in lines.values():
            line["mean"] = float(np.mean([line[f"m={m}"] for m in machines]))
        lines = list(lines.values())
        columns = ["policy", "predictor"] + [f"m={m}" for m in machines] + ["mean"]
        header = f"makespan ratio C_max / McNaughton bound ({doc['n_jobs']} jobs)"
        return header + "\n" + format_table(lines, columns)
    header = {
        "total_completion": f"total completion ΣC_j, ratio to SRPT ({doc['n_jobs']} jobs)",
        "max_stretch": f"max stretch, ratio to S* ({doc['n_jobs']} jobs)",
    }[objective]
    return header + "\n" + format_table(rows, columns)


def _options(args, machines) -> dict:
    return {
        "objective": args.objective, "policies": args.policies, "n": args.n, "seed": args.seed,
        "noise": args.noise, "predictor": args.predictor, "prr_lambda": args.prr_lambda, "sample": args.sample,
        "machines": machines, "jobs": args.jobs, "data": args.data,
    }


def _jsonable(reference: dict) -> dict:
    return {str(k): v for k, v in reference.items()}
