"""Which jobs of a trace an evaluation schedules: the sampling rules shared by every caller.

`benchmark run --task scheduling` and the leaderboard's scheduling track both take their
instances from here, so a submission is scored on exactly the jobs a run would use.

- `DATA_DEFAULT_N`: jobs per objective when scheduling an ATLAS test split (the ATLAS paper's
  sizes: 10,000 for total completion and makespan, 5,000 for max stretch).
- `sample_window(jobs, n, seed, how)`: `window` = n consecutive jobs in (submit_time, job_id)
  order from a seeded random start, which keeps the real arrival process and its load;
  `random` = n jobs drawn uniformly (seeded), kept in submit order, which thins the load by
  n / total. See docs/evaluation-protocol.md.

May import numpy, pandas, atlas_data.errors and schedulers.jobs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from schedulers.jobs import tie_order

DATA_DEFAULT_N = {"total_completion": 10_000, "max_stretch": 5_000, "makespan": 10_000}


def sample_window(jobs: pd.DataFrame, n: int | None, seed: int, how: str = "window") -> pd.DataFrame:
    """n jobs in (submit_time, job_id) order: consecutive from a seeded random start, or drawn at random."""
    # the simulator's own tie rule (ids compared as numbers when all are integers), so a window's
    # edge falls where the engine would put it
    if how not in ("window", "random"):
        raise InputError(f"sample must be window or random, got {how!r}", where="--sample")
    if n is not None and (isinstance(n, bool) or not isinstance(n, (int, np.integer))):
        raise InputError(f"--n must be a whole number, got {n!r}", where="--n")
    ordered = jobs.iloc[tie_order(jobs["job_id"].to_numpy(), jobs["submit_time"].to_numpy())].reset_index(drop=True)
    if n is None or n >= len(ordered):
        return ordered
    if n < 1:
        raise InputError(f"--n must be at least 1, got {n}", where="--n")
    rng = np.random.default_rng(seed)
    if how == "random":
        return ordered.iloc[np.sort(rng.choice(len(ordered), size=n, replace=False))].reset_index(drop=True)
    start = int(rng.integers(0, len(ordered) - n + 1))
    return ordered.iloc[start : start + n].reset_index(drop=True)
