"""Time-ordered 70/15/15 split of the ATLAS dataset (docs/data-formats.md).

The two boundaries are submit-time thresholds computed from submit times only: with the
candidate submit times sorted, t_val = s[⌊0.70·n⌋] and t_test = s[⌊0.85·n⌋]. A job is train if
submit < t_val, val if t_val ≤ submit < t_test, test if submit ≥ t_test (ties go to the later
split, so no train job shares a submit instant with a validation job). The build passes the
submit times of all successful (Terminated) jobs, before any label-based filtering, so changing
labels can never move a boundary.

May import: numpy, pandas, atlas_data.errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from atlas_data.errors import InputError

SPLITS = ("train", "val", "test")
FRACTIONS = (0.70, 0.15, 0.15)


def split_boundaries(submit_times, fractions=FRACTIONS) -> tuple[float, float]:
    """(t_val, t_test): the submit-time thresholds of the validation and test periods."""
    s = np.sort(np.asarray(submit_times, dtype=float))
    s = s[np.isfinite(s)]
    n = len(s)
    if n < 3:
        raise InputError(f"need at least 3 jobs to split train/val/test, got {n}")
    i_val = int(np.floor(fractions[0] * n))
    i_test = int(np.floor((fractions[0] + fractions[1]) * n))
    return float(s[min(i_val, n - 1)]), float(s[min(i_test, n - 1)])


def assign_split(jobs: pd.DataFrame, t_val: float, t_test: float) -> pd.DataFrame:
    """Add the `split` column from the two thresholds."""
    submit = jobs["submit_time"].to_numpy(dtype=float)
    out = jobs.copy()
    out["split"] = np.where(submit < t_val, "train", np.where(submit < t_test, "val", "test"))
    out["split"] = out["split"].astype("str")
    for name in SPLITS:
        if not (out["split"] == name).any():
            raise InputError(f"the {name} split is empty (too few distinct submit times: {len(np.unique(submit))})")
    return out


def split_ranges(jobs: pd.DataFrame) -> dict[str, list[float]]:
    """{split: [first submit, last submit]}."""
    g = jobs.groupby("split")["submit_time"].agg(["min", "max"])
    return {s: [float(g.loc[s, "min"]), float(g.loc[s, "max"])] for s in SPLITS if s in g.index}
