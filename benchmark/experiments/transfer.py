"""The experiment of `benchmark transfer`: does a duration predictor trained on other clusters work on a new one?

The ATLAS paper learns from one data source and names generalisation across clusters as open.
For every cluster of a shipped multi-cluster trace (`elasticflow`: 10 Microsoft GPU clusters;
`philly`: its virtual clusters) `evaluate_cluster` predicts the cluster's test part (the latest 15 %
of its jobs by submit time) twice with the same method:

- **own**: fitted on the cluster's own train/validation part (`--jobs TRACE:<cluster>`);
- **transfer**: fitted on the other clusters (`--jobs TRACE:<cluster> --train-jobs TRACE`: the
  cluster's own jobs, and every other job that had not finished before the cluster's test part
  begins, are left out of the fit; benchmark.tasks.traces / atlas_data.jobs_features).

Both read the cluster's own submit-time features (its requests, calendar and the history of its
finished jobs), so the only difference is which jobs the model learned from. Per cluster and
source: Cov@25, RMSLE and Spearman ρ of p̂ on the test part, and the total-completion ratios
ΣC_j / ΣC_j(SRPT) of SPJF and SPRPT with that p̂, scheduling the test part with its real
arrivals on one machine (FIFO beside them, blind). `measure` runs the clusters into one document,
`write_outputs` writes transfer.json, transfer.csv and transfer.md, `markdown` is also the block
between `<!-- transfer:start -->` and `<!-- transfer:end -->` of docs/results.md.
See docs/real-traces.md#12-cross-cluster-transfer.

Part of the experiments package (benchmark.experiments): may import benchmark.* below the commands
(tasks, markdown, progress, results), atlas_data, predictors and schedulers.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmark.progress import Progress
from benchmark.results import format_table

START, END = "<!-- transfer:start -->", "<!-- transfer:end -->"
POLICIES = ["srpt", "fifo", "spjf", "sprpt"]


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


def measure(trace: str, clusters: list[str], method: str, seed: int, quiet: bool = False) -> dict:
    """Every cluster of `clusters` (checked names of `trace`), own and transferred `method`: the
    document of transfer.json."""
    started = time.perf_counter()
    rows = []
    with Progress(f"transfer on {trace}", total=len(clusters), quiet=quiet) as progress:
        for cluster in clusters:
            progress.note(f"{cluster}: own and transferred {method}")
            rows.append(evaluate_cluster(trace, cluster, method, seed))
            progress.update()
    return {"trace": trace, "method": method, "seed": seed, "policies": POLICIES,
            "objective": "total_completion", "seconds": round(time.perf_counter() - started, 1), "rows": rows}


def write_outputs(folder: Path, doc: dict) -> str:
    """Write transfer.json, transfer.csv and transfer.md into `folder`; the markdown."""
    from atlas_data.io import json_safe

    text = markdown(doc)
    (folder / "transfer.json").write_text(json.dumps(json_safe(doc), indent=2) + "\n")
    pd.DataFrame(doc["rows"]).to_csv(folder / "transfer.csv", index=False)
    (folder / "transfer.md").write_text(text)
    return text


def plain_table(rows: list[dict]) -> str:
    """The rows as the plain-text table the command prints."""
    return format_table([_plain(r) for r in rows], list(_plain(rows[0])))


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
