"""The job filter of Gaussier, Glesser, Reis & Trystram (SC'15) on a Parallel Workloads Archive log.

"Improving backfilling by using machine learning to predict running times" (SC'15) runs every
scheduler on whole logs after one filter, their `strong_filter_all_swf` (predictsim,
`experiments/data_manipulation/`), read here rule by rule and applied in its order to the job lines
of an SWF log (`MaxProcs` m from the header):

1. allocated processors (field 5) ≤ m;
2. requested processors (field 8) ≤ m;
3. processors: both > 0 kept as they are; only one > 0, the other set to it; neither, dropped;
4. run time (field 4) > 0;
5. requested time (field 9) > 0 (a log without requested times keeps no job);
6. a run time above the requested time is cut to it (the job was killed there): no job dropped;
7. submit time (field 2) ≥ 0.

Then their simulator reads a job's processors from field 8 (the request; field 5 where it is not
> 0, which step 3 has already made impossible), its run time and requested time as whole seconds,
and its user from field 12. `gaussier15_jobs` returns the kept jobs and the count after each step, so
a log whose counts differ from the paper's shows where (docs/hpc-backfilling.md).
May import numpy and atlas_data.
"""

from __future__ import annotations

import numpy as np

from atlas_data.adapters import swf_fields, swf_header_int
from atlas_data.errors import InputError

#: the SWF fields the filter reads (the others are never held in memory)
FIELDS = ("job_number", "submit_time", "run_time", "allocated_processors", "requested_processors", "requested_time",
          "user_id")
#: the steps of the filter, in order (the labels of `gaussier15_jobs`' counts)
STEPS = ("read", "allocated processors <= MaxProcs", "requested processors <= MaxProcs",
         "some processor count > 0", "run time > 0", "requested time > 0", "run time cut to the requested time",
         "submit time >= 0")


def gaussier15_jobs(path, processors: int | None = None) -> tuple[dict, list[tuple[str, int]]]:
    """({number, submit, run, requested, procs, user (int64 arrays, in file order), processors (the
    machine: `processors` or the header's MaxProcs), path}, [(step, jobs after it)]): the log's jobs
    through the SC'15 filter (module docstring). InputError for a header without MaxProcs (and no
    `processors`) or a log that keeps no job."""
    values, _, header, _ = swf_fields(path, FIELDS, job_numbers=False)
    machine = processors or swf_header_int(header, "MaxProcs", path)
    if machine <= 0:
        raise InputError("the header gives no MaxProcs: the machine's size is unknown", path=str(path))
    number, submit, run = values[:, 0], values[:, 1], values[:, 2].copy()
    allocated, requested, request, user = values[:, 3].copy(), values[:, 4].copy(), values[:, 5], values[:, 6]
    m = swf_header_int(header, "MaxProcs", path) or machine  # the filter's m is the header's
    counts = [(STEPS[0], len(values))]
    keep = np.ones(len(values), dtype=bool)

    def step(label, mask):
        nonlocal keep
        keep &= mask
        counts.append((label, int(keep.sum())))

    step(STEPS[1], allocated <= m)
    step(STEPS[2], requested <= m)
    allocated = np.where(allocated > 0, allocated, requested)
    requested = np.where(requested > 0, requested, allocated)
    step(STEPS[3], requested > 0)
    step(STEPS[4], run > 0)
    step(STEPS[5], request > 0)
    run = np.where(request < run, request, run)
    step(STEPS[6], np.ones(len(values), dtype=bool))
    step(STEPS[7], submit >= 0)
    if not keep.any():
        raise InputError("no job passes the SC'15 filter (" + "; ".join(f"{k}: {n:,}" for k, n in counts) + ")",
                         path=str(path))
    # their reader: whole seconds (int()), at least 1; the processors capped at the machine
    run_s = np.maximum(run[keep].astype(np.int64), 1)
    req_s = np.maximum(request[keep].astype(np.int64), run_s)
    jobs = {"number": number[keep].astype(np.int64), "submit": submit[keep].astype(np.int64), "run": run_s,
            "requested": req_s, "procs": np.minimum(requested[keep].astype(np.int64), machine),
            "user": user[keep].astype(np.int64), "processors": int(machine), "path": str(path)}
    return jobs, counts
