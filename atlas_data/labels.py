"""Fork-join duration labels (docs/data-formats.md) and the keep/drop rule of the ATLAS dataset.

For job j with tasks t and instances i ∈ I(t): s_t = min_i start_i, e_t = max_i end_i and
p*_j = max_t e_t − min_t s_t. Because min/max compose, this equals (last instance end) −
(first instance start) over all instances of the job, which is how it is computed (one
hash aggregation over ≈ 7.5 M instance rows in Arrow, no per-task pass needed).

Which instances count: every instance row of the job that has both a start and an end time,
whatever its status — a failed attempt that was retried still held the gang's resources, and
the task is only complete when its last instance ends (fork-join). Rows without a start or an
end (Waiting / Running instances; the raw reader reads a published time of 0 as missing) are
ignored.

Kept: job status Terminated (success), a submit time, at least one timed instance, p* > 0.
Every other job is dropped with one reason (first that applies, in this order):
`missing_submit_time`, `status_<status>` (failed, running, waiting, ...), `no_tasks`,
`no_instances`, `nonpositive_p_star`.

`finish_time` = max(last instance end, submit_time + p*): the moment the label becomes known.
It is used only to decide which jobs a history feature may see, and never enters the dataset.

May import: numpy, pandas, pyarrow, atlas_data.portable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from atlas_data.portable import log1p

DROP_ORDER = ("missing_submit_time", "status", "no_tasks", "no_instances", "nonpositive_p_star")


def fork_join_spans(instances: pa.Table | pd.DataFrame) -> pd.DataFrame:
    """Per job: `first_start`, `last_end`, `n_timed_instances` (instances with start and end)."""
    if isinstance(instances, pd.DataFrame):
        instances = pa.Table.from_pandas(instances[["job_name", "start_time", "end_time"]], preserve_index=False)
    start = instances.column("start_time").cast(pa.float64())
    end = instances.column("end_time").cast(pa.float64())
    timed = pc.and_(pc.is_valid(start), pc.is_valid(end))
    table = pa.table({"job_name": instances.column("job_name"), "start_time": start, "end_time": end}).filter(timed)
    agg = table.group_by("job_name").aggregate([("start_time", "min"), ("end_time", "max"), ("start_time", "count")])
    out = agg.to_pandas()
    out = out.rename(columns={"start_time_min": "first_start", "end_time_max": "last_end",
                              "start_time_count": "n_timed_instances"})
    return out[["job_name", "first_start", "last_end", "n_timed_instances"]]


def label_jobs(jobs: pd.DataFrame, spans: pd.DataFrame) -> pd.DataFrame:
    """Attach `p_star`, `finish_time` and `drop_reason` (empty string = kept) to a jobs frame.

    `jobs` needs job_name, status, submit_time and n_tasks (0 when the job has no task rows).
    """
    out = jobs.merge(spans, on="job_name", how="left", validate="one_to_one")
    out["n_timed_instances"] = out["n_timed_instances"].fillna(0).astype(np.int64)
    out["p_star"] = (out["last_end"] - out["first_start"]).astype(float)
    out["finish_time"] = np.fmax(out["last_end"].to_numpy(dtype=float),
                                 out["submit_time"].to_numpy(dtype=float) + out["p_star"].to_numpy(dtype=float))
    status = out["status"].fillna("").astype(str)
    reason = np.full(len(out), "", dtype=object)
    submit = out["submit_time"].to_numpy(dtype=float)
    p_star = out["p_star"].to_numpy(dtype=float)
    checks = [
        (~np.isfinite(submit), np.full(len(out), "missing_submit_time", dtype=object)),
        ((status != "Terminated").to_numpy(), ("status_" + status.str.lower().replace("", "missing")).to_numpy(dtype=object)),
        (out["n_tasks"].fillna(0).to_numpy() <= 0, np.full(len(out), "no_tasks", dtype=object)),
        (out["n_timed_instances"].to_numpy() <= 0, np.full(len(out), "no_instances", dtype=object)),
        (~(p_star > 0), np.full(len(out), "nonpositive_p_star", dtype=object)),
    ]
    for mask, why in checks:
        pick = mask & (reason == "")
        reason[pick] = why[pick]
    out["drop_reason"] = reason
    return out


def keep_labelled(jobs: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
    """Split a labelled frame into kept jobs (with y = log1p(p*)) and dropped counts by reason."""
    dropped = jobs.loc[jobs["drop_reason"] != "", "drop_reason"].value_counts()
    kept = jobs.loc[jobs["drop_reason"] == ""].drop(columns=["drop_reason"]).copy()
    kept["y"] = log1p(kept["p_star"].to_numpy(dtype=float))
    return kept.reset_index(drop=True), {str(k): int(v) for k, v in sorted(dropped.items())}
