"""JobSet: the simulator's read-only view of a jobs table, as numpy arrays.

Rows are sorted by (submit_time, job_id) — the tie rule of docs/evaluation-protocol.md — so a job's index is its
rank in that order and comparing indices breaks ties. Times are shifted so that the earliest
submit is 0; true and predicted sizes are floored at 1 s. May import numpy/pandas only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

SIZE_FLOOR_S = 1.0


@dataclass(frozen=True, eq=False)
class JobSet:
    job_id: np.ndarray  # object (str)
    submit_time: np.ndarray  # float64, shifted: min == 0
    size: np.ndarray  # float64, true size p_j, floored at 1 s
    predicted: np.ndarray | None  # float64 p̂_j floored at 1 s, or None
    gpus: np.ndarray  # int64 >= 1
    tenant: np.ndarray  # int64 codes into tenant_names
    tenant_names: tuple[str, ...]
    weight: np.ndarray  # float64 > 0
    time_offset: float  # original earliest submit time (added back on output)
    # σ of log p around log p̂ per job (a predicted log-normal distribution with median p̂), or None;
    # calibrated on validation residuals by whoever made p̂ (schedulers.revision, docs/policies.md)
    predicted_log_sd: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.size)

    def require_finite(self) -> None:
        """ValueError naming the column if a submit time or size is not a finite number: a simulation
        loop advances its clock by these times, and infinities or NaN leave it nothing to order (a
        jobs table's times are bounded at the door; this guards JobSets built by hand). p̂ may be
        infinite: "no estimate", which a policy that reads none is given (reproduce hpc)."""
        for name, values in (("submit_time", self.submit_time), ("size", self.size)):
            if not np.isfinite(values).all():
                j = int(np.argmin(np.isfinite(values)))
                raise ValueError(f"job {self.job_id[j]}: {name} is {float(values[j])!r}, not a finite number")

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, batch: bool = False) -> "JobSet":
        """Build from a validated jobs table (columns in docs/data-formats.md).

        `batch=True` releases every job at time 0 (the P||Cmax setting of the makespan task).
        """
        frame = pd.DataFrame(
            {
                "job_id": df["job_id"].astype(str).to_numpy(object),
                "submit_time": 0.0 if batch else df["submit_time"].to_numpy(np.float64),
            }
        )
        order = tie_order(frame["job_id"].to_numpy(object), frame["submit_time"].to_numpy(np.float64))
        submit = frame["submit_time"].to_numpy(np.float64)[order]
        offset = float(submit[0]) if len(submit) else 0.0
        take = lambda col, default, dtype: (  # noqa: E731
            df[col].to_numpy(dtype)[order] if col in df.columns else np.full(len(order), default, dtype)
        )
        tenants = df["tenant"].astype(str).to_numpy(object)[order] if "tenant" in df.columns else np.full(len(order), "default", object)
        names, codes = _sorted_codes(tenants)
        predicted = None
        if "predicted_duration" in df.columns:
            predicted = np.maximum(df["predicted_duration"].to_numpy(np.float64)[order], SIZE_FLOOR_S)
        log_sd = None
        if "predicted_log_sd" in df.columns:
            log_sd = np.maximum(df["predicted_log_sd"].to_numpy(np.float64)[order], 0.0)
        return cls(
            job_id=frame["job_id"].to_numpy(object)[order],
            submit_time=submit - offset,
            size=np.maximum(df["duration"].to_numpy(np.float64)[order], SIZE_FLOOR_S),
            predicted=predicted,
            gpus=take("gpus", 1, np.int64),
            tenant=codes.astype(np.int64),
            tenant_names=tuple(str(t) for t in names),
            weight=take("weight", 1.0, np.float64),
            time_offset=offset,
            predicted_log_sd=log_sd,
        )

    @classmethod
    def from_arrays(cls, submit_time, size, predicted=None, *, gpus=None, tenant=None, weight=None, job_id=None) -> "JobSet":
        """Convenience for tests and generated instances."""
        n = len(size)
        data = {
            "job_id": job_id if job_id is not None else [f"{i:07d}" for i in range(n)],
            "submit_time": submit_time,
            "duration": size,
        }
        for name, value in (("predicted_duration", predicted), ("gpus", gpus), ("tenant", tenant), ("weight", weight)):
            if value is not None:
                data[name] = value
        return cls.from_frame(pd.DataFrame(data))

    def as_batch(self) -> tuple["JobSet", np.ndarray]:
        """The same jobs all released at 0 (P||C_max), re-sorted by the tie rule (job_id).

        Returns the batch JobSet and `order`: row i of the batch is row order[i] of this one, so
        arrays in this JobSet's row order (p̂) follow with `array[order]`.
        """
        from dataclasses import replace

        order = tie_order(self.job_id, np.zeros(self.n))
        return replace(
            self, job_id=self.job_id[order], submit_time=np.zeros(self.n), size=self.size[order],
            predicted=None if self.predicted is None else self.predicted[order], gpus=self.gpus[order],
            predicted_log_sd=None if self.predicted_log_sd is None else self.predicted_log_sd[order],
            tenant=self.tenant[order], weight=self.weight[order],
        ), order

    def with_predictions(self, predicted: np.ndarray, log_sd=None) -> "JobSet":
        """Same jobs, new p̂ (in this JobSet's row order), floored at 1 s, with the predicted
        log-normal spread `log_sd` (a number for every job, an array, or None: none known)."""
        from dataclasses import replace

        spread = None
        if log_sd is not None:
            spread = np.broadcast_to(np.asarray(log_sd, np.float64), (self.n,)).copy()
            if not (np.isfinite(spread).all() and (spread >= 0).all()):
                raise ValueError("predicted_log_sd must be finite and >= 0")
        return replace(self, predicted=np.maximum(np.asarray(predicted, np.float64), SIZE_FLOOR_S),
                       predicted_log_sd=spread)


def _sorted_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True) for text: the sorted distinct values and each value's
    index among them, by hashing (a million rows of a few tenants: no sort of a million strings)."""
    codes, uniques = pd.factorize(values)
    uniques = np.asarray(uniques, dtype=object)
    order = np.argsort(uniques, kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return uniques[order], rank[codes]


def strictly_increasing(values) -> bool:
    """True when every value is greater than the one before it (a NaN after the first value: False)."""
    values = np.asarray(values, dtype=np.float64)
    return bool((values[1:] > values[:-1]).all())


def tie_order(job_id: np.ndarray, submit: np.ndarray) -> np.ndarray:
    """Stable order by submit time, then job_id: as whole numbers, exactly, if every id is written as
    one (then "007" before "7", as text), else as text."""
    if strictly_increasing(submit):  # no ties to break (a generated or time-ordered trace): the rows' own order
        return np.arange(len(submit), dtype=np.int64)
    text = pd.Series(job_id, dtype=object).astype(str)
    if len(text) and text.str.fullmatch(r"[+-]?[0-9]+").all():
        try:
            number = text.astype(np.int64)
        except (OverflowError, ValueError):  # beyond 64 bits: Python's integers are exact at any size
            rank = sorted(range(len(text)), key=lambda i: (submit[i], int(text.iat[i]), text.iat[i]))
            return np.asarray(rank, np.int64)
        frame = pd.DataFrame({"submit": submit, "number": number.to_numpy(), "text": text.to_numpy()})
        return frame.sort_values(["submit", "number", "text"], kind="mergesort").index.to_numpy(np.int64)
    frame = pd.DataFrame({"submit": submit, "text": text.to_numpy()})
    return frame.sort_values(["submit", "text"], kind="mergesort").index.to_numpy(np.int64)
