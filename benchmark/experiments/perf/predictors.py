"""Perf section 'predictors': fit and predict time of each prediction method at full scale.

`benchmark perf --predictors [--predictor-train-jobs 500000] [--predictor-methods a,b]
[--predictor-data DS]` times every method (Stage 1 + Stage 2 fit, Stage 3 predict) on a dataset
with that many train jobs. By default the dataset is a contract-conforming synthetic frame from
`predictors.synthetic` (seconds to make, so the timing is of the predictors, not of the raw-trace
pipeline, which `--pipeline` measures); `--predictor-data` times an existing dataset folder
instead. Target (issue): `lgbm-meta` under 5 minutes on 2 cores. LightGBM threads follow
`predictors.stage1.default_n_jobs` (at most 2, never more than the CPUs).

May import predictors and benchmark.{progress, results}.
"""

from __future__ import annotations

import time

TARGET_S = {"lgbm-meta": 300.0}
#: --predictor-train-jobs: ten times the default; the frame, its features and every method's model
#: grow with it (the whole frame is train / 0.7 jobs)
MAX_TRAIN_JOBS = 5_000_000


def add_arguments(parser) -> None:
    from benchmark.options import integer

    parser.add_argument("--predictor-train-jobs", type=integer(1, MAX_TRAIN_JOBS, "a number of jobs"), default=500_000,
                        help=f"predictors section: train jobs of the synthetic dataset (default 500000; 1 to "
                             f"{MAX_TRAIN_JOBS:,})")
    parser.add_argument("--predictor-methods", help="predictors section: methods to time (default: all)")
    parser.add_argument("--predictor-data", help="predictors section: time on this dataset folder instead")


def run(args) -> dict:
    import os

    from benchmark.progress import say
    from benchmark.results import format_table
    from predictors.data import SplitData
    from predictors.methods import MethodConfig, check_method_name, method_names, run_method
    from predictors.metrics import evaluate
    from predictors.stage1 import default_n_jobs
    from predictors.synthetic import FEATURES, make_frame

    quiet = bool(getattr(args, "quiet", False))
    names = [m.strip() for m in (args.predictor_methods or "").split(",") if m.strip()] or method_names()
    for name in names:
        check_method_name(name)

    t0 = time.perf_counter()
    if args.predictor_data:
        split, card = SplitData.from_folder(args.predictor_data)
        source = str(args.predictor_data)
    else:
        n_total = int(round(args.predictor_train_jobs / 0.70))
        say(f"[perf predictors] making a synthetic frame of {n_total} jobs", quiet)
        frame = make_frame(n_total, seed=0)
        split = SplitData(frame, FEATURES)
        del frame
        source = f"predictors.synthetic ({n_total} jobs)"
    data_s = time.perf_counter() - t0
    counts = split.counts()
    truth = split.test_truth()
    say(f"[perf predictors] data ready in {data_s:.1f}s: {counts}; LightGBM threads {default_n_jobs(counts['train'])} "
        f"(cpu_count {os.cpu_count()})", quiet)

    rows = []
    for name in names:
        say(f"[perf predictors] {name} ...", quiet)
        pred = run_method(split, name, MethodConfig(seed=0))
        frame = pred.to_frame()
        m = evaluate(frame["p_hat"], truth.loc[frame["job_id"], "p_star"], truth.loc[frame["job_id"], "is_recurrent"])
        row = {
            "method": name,
            "fit_seconds": round(pred.fit_seconds, 2),
            "predict_seconds": round(pred.predict_seconds, 2),
            "train_jobs_per_s": round(counts["train"] / pred.fit_seconds) if pred.fit_seconds > 0 else None,
            "rmsle": round(m["rmsle"], 4),
            "cov25": round(m["cov25"], 4),
            "target_s": TARGET_S.get(name),
            "ok": None if name not in TARGET_S else pred.fit_seconds + pred.predict_seconds < TARGET_S[name],
        }
        rows.append(row)
        say(f"[perf predictors] {name}: fit {pred.fit_seconds:.1f}s predict {pred.predict_seconds:.1f}s", quiet)

    if not quiet:
        print(f"predictors on {source}: train {counts['train']}, val {counts['val']}, test {counts['test']}")
        print(format_table(rows, list(rows[0]), floatfmt="{:.4g}"))
    return {"source": source, "counts": counts, "data_seconds": round(data_s, 2),
            "n_jobs_lightgbm": default_n_jobs(counts["train"]), "rows": rows}
