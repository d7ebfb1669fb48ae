"""`benchmark transfer`: does a duration predictor trained on other clusters work on a new one?

The ATLAS paper learns from one data source and names generalisation across clusters as open.
For every cluster of a shipped multi-cluster trace (default `elasticflow`: 10 Microsoft GPU
clusters; `philly`: its virtual clusters) the command predicts the cluster's test part (the
latest 15 % of its jobs by submit time) twice with the same method:

- **own**: fitted on the cluster's own train/validation part (`--jobs TRACE:<cluster>`);
- **transfer**: fitted on the other clusters (`--jobs TRACE:<cluster> --train-jobs TRACE`: the
  cluster's own jobs, and every other job that had not finished before the cluster's test part
  begins, are left out of the fit; benchmark.tasks.traces / atlas_data.jobs_features).

Both read the cluster's own submit-time features (its requests, calendar and the history of its
finished jobs), so the only difference is which jobs the model learned from. Per cluster and
source: Cov@25, RMSLE and Spearman ρ of p̂ on the test part, and the total-completion ratios
ΣC_j / ΣC_j(SRPT) of SPJF and SPRPT with that p̂, scheduling the test part with its real
arrivals on one machine (FIFO beside them, blind). Writes OUT/transfer.json, transfer.csv and
transfer.md (a safe output folder, atlas_data.outputs); `--readme FILE` rewrites the block between `<!-- transfer:start -->` and
`<!-- transfer:end -->`. See docs/real-traces.md#12-cross-cluster-transfer.

May import atlas_data, predictors, schedulers and benchmark.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.options import MAX_JOBS, integer
from benchmark.options import seed as seed_type
from benchmark.progress import Progress, say
from benchmark.results import check_readme_block, format_table, replace_readme_block

START, END = "<!-- transfer:start -->", "<!-- transfer:end -->"
TRACES = ("elasticflow", "philly")
POLICIES = ["srpt", "fifo", "spjf", "sprpt"]


def register(subparsers) -> None:
    parser = subparsers.add_parser("transfer", help="cross-cluster transfer of a duration predictor (own vs other clusters)")
    parser.add_argument("--trace", default="elasticflow", choices=TRACES,
                        help="shipped multi-cluster trace (default elasticflow: 10 clusters; philly: its VCs)")
    parser.add_argument("--clusters", help="clusters to evaluate, comma-separated (default: all)")
    parser.add_argument("--method", default="lgbm-meta", help="prediction method (default lgbm-meta)")
    parser.add_argument("--min-jobs", type=integer(0, MAX_JOBS, "a number of jobs"), default=None,
                        help="skip clusters with fewer jobs (default 100: their test part is too small to score); "
                             "with --clusters, a named cluster with fewer jobs is an error")
    parser.add_argument("--seed", type=seed_type, default=0, help="predictor seed (default 0)")
    parser.add_argument("--output", default="results/transfer", help="output folder (default results/transfer)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the transfer block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")
    parser.set_defaults(handler=_transfer)


def _clusters(args) -> list[str]:
    from atlas_data.adapters import shipped_trace

    jobs, _ = shipped_trace(args.trace)
    sizes = jobs["tenant"].value_counts()
    if args.clusters is not None:
        from benchmark.tasks.inputs import csv_list

        if not args.clusters.replace(",", "").strip():
            raise InputError(f"names no cluster (choose from {', '.join(sorted(sizes.index))})", where="--clusters")
        wanted = csv_list(args.clusters, "clusters")  # an empty item or a name given twice: exit 2
        for c in wanted:
            try:
                shipped_trace(f"{args.trace}:{c}")
            except InputError as exc:  # unknown name: exit 2 listing the valid ones, naming this option
                raise InputError(exc.problem, where="--clusters") from None
        names = [f"cluster{int(c):02d}" if args.trace == "elasticflow" and c.isdigit() else c for c in wanted]
        for i, name in enumerate(names):
            if name in names[:i]:  # `5` and `cluster05` are one cluster
                raise InputError(f"cluster '{name}' is given twice in {args.clusters!r}", where="--clusters")
            if args.min_jobs is not None and sizes.get(name, args.min_jobs) < args.min_jobs:
                raise InputError(f"cluster '{name}' has {sizes[name]} jobs, fewer than --min-jobs {args.min_jobs}",
                                 where="--clusters")
        return names
    return sorted(c for c in sizes.index if sizes[c] >= (100 if args.min_jobs is None else args.min_jobs))


def evaluate_cluster(trace: str, cluster: str, method: str, seed: int) -> dict:
    """One cluster: metrics and scheduling ratios of its own and of the transferred p̂."""
    from benchmark.tasks.traces import fit_trace_method, trace_split
    from predictors.metrics import evaluate
    from schedulers.jobs import JobSet
    from schedulers.objectives import run_objective

    spec = f"{trace}:{cluster}"
    own = trace_split(spec, seed=seed)
    moved = trace_split(spec, train_spec=trace, seed=seed)
    jobs = JobSet.from_frame(own.test_jobs)
    truth = own.split.test_truth()
    row = {"cluster": cluster, "jobs": int(own.card["n_total"]), "test_jobs": int(jobs.n),
           "own_train_jobs": own.card["counts"]["train"] + own.card["counts"]["val"],
           "transfer_train_jobs": moved.card["counts"]["train"] + moved.card["counts"]["val"]}
    predictions = {}
    for label, ts in (("own", own), ("transfer", moved)):
        frame = fit_trace_method(ts, method, seed=seed).to_frame().set_index("job_id")
        p_hat = frame["p_hat"].reindex(pd.Index(jobs.job_id).astype(str)).to_numpy(np.float64)
        m = evaluate(p_hat, truth.loc[jobs.job_id.astype(str), "p_star"].to_numpy(float))
        row.update({f"{label}_cov25": m["cov25"], f"{label}_rmsle": m["rmsle"], f"{label}_spearman": m["spearman"]})
        predictions[label] = p_hat
    rows, _, _ = run_objective("total_completion", jobs, POLICIES, predictions)
    for r in rows:
        key = r["policy"] if r["predictor"] is None else f"{r['policy']}_{r['predictor']}"
        row[f"{key}_ratio"] = r["ratio"]
    return row


def _transfer(args) -> int:
    from predictors.methods import check_method_name

    check_method_name(args.method)
    if args.method == "oracle":
        raise InputError("the oracle reads true sizes: nothing to transfer", where="--method")
    out = Path(args.output)
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    check_output_folder(out, "transfer")  # before any fitting (docs/results-and-tracking.md#safe-outputs)
    clusters = _clusters(args)
    if not clusters:
        least = 100 if args.min_jobs is None else args.min_jobs
        raise InputError(f"no cluster of {args.trace} has at least {least} jobs", where="--min-jobs")
    started = time.perf_counter()
    rows = []
    with Progress(f"transfer on {args.trace}", total=len(clusters), quiet=args.quiet) as progress:
        for cluster in clusters:
            progress.note(f"{cluster}: own and transferred {args.method}")
            rows.append(evaluate_cluster(args.trace, cluster, args.method, args.seed))
            progress.update()
    doc = {"trace": args.trace, "method": args.method, "seed": args.seed, "policies": POLICIES,
           "objective": "total_completion", "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    from atlas_data.io import json_safe

    text = markdown(doc)
    with output_folder(out, "transfer") as folder:  # the three files appear together, under OUT, or not at all
        (folder / "transfer.json").write_text(json.dumps(json_safe(doc), indent=2) + "\n")
        pd.DataFrame(rows).to_csv(folder / "transfer.csv", index=False)
        (folder / "transfer.md").write_text(text)
    if args.readme:
        replace_readme_block(Path(args.readme), START, END, text)
    print(format_table([_plain(r) for r in rows], list(_plain(rows[0]))))
    say(f"wrote {out} in {doc['seconds']:.0f} s", args.quiet)
    return 0


def _plain(row: dict) -> dict:
    return {"cluster": row["cluster"], "test": row["test_jobs"],
            "Cov@25 own": row["own_cov25"], "Cov@25 transfer": row["transfer_cov25"],
            "RMSLE own": row["own_rmsle"], "RMSLE transfer": row["transfer_rmsle"],
            "ρ own": row["own_spearman"], "ρ transfer": row["transfer_spearman"],
            "FIFO": row.get("fifo_ratio"), "SPJF own": row.get("spjf_own_ratio"),
            "SPJF transfer": row.get("spjf_transfer_ratio"), "SPRPT own": row.get("sprpt_own_ratio"),
            "SPRPT transfer": row.get("sprpt_transfer_ratio")}


def _f(value, spec: str = "{:.3f}") -> str:
    return "–" if value is None or (isinstance(value, float) and not np.isfinite(value)) else spec.format(value)


def markdown(doc: dict) -> str:
    """The transfer table as Markdown (also the block of docs/results.md)."""
    head = (f"Cross-cluster transfer on `{doc['trace']}` with `{doc['method']}` (`benchmark transfer`): each cluster's "
            "test part (latest 15 % of its jobs) predicted by a model fitted on its own train/validation part (own) "
            "and by one fitted on the other clusters (transfer); ΣC_j / ΣC_j(SRPT) of SPJF and SPRPT with that p̂ "
            "on the test part with its real arrivals, FIFO for reference.\n")
    header = ["cluster", "test jobs", "Cov@25 own", "Cov@25 transfer", "RMSLE own", "RMSLE transfer", "ρ own",
              "ρ transfer", "FIFO", "SPJF own", "SPJF transfer", "SPRPT own", "SPRPT transfer"]
    lines = []
    for r in doc["rows"]:
        lines.append([r["cluster"], f"{r['test_jobs']:,}", _f(r["own_cov25"], "{:.1%}"), _f(r["transfer_cov25"], "{:.1%}"),
                      _f(r["own_rmsle"]), _f(r["transfer_rmsle"]), _f(r["own_spearman"]), _f(r["transfer_spearman"]),
                      _f(r.get("fifo_ratio")), _f(r.get("spjf_own_ratio")), _f(r.get("spjf_transfer_ratio")),
                      _f(r.get("sprpt_own_ratio")), _f(r.get("sprpt_transfer_ratio"))])
    from benchmark.markdown import markdown_table

    return head + "\n" + markdown_table(header, lines) + "\n"
