"""The jobs table: the one scheduler input format (docs/data-formats.md), read from CSV or parquet and validated.

`read_jobs(path)` reads a file, `validate_jobs(df, path)` checks a DataFrame built in code; both
return a new DataFrame with exactly these columns, in this order and with these dtypes:

    job_id (str) · submit_time (float64) · duration (float64) · gpus (int64, default 1) ·
    tenant (str, default "default") · weight (float64, default 1) ·
    predicted_duration (float64, only when the input has it)

Other input columns are dropped. Defaults apply only when a column is absent: an empty cell in a
present column is an error, never silently filled. Every problem raises `InputError` naming the
file, the place and the problem. Places are "column 'x'" or "row N" (1-based data row); for CSV
input "row N (line L)" where L = N + 1 is the line of the file (header = line 1; blank lines
count as rows; quoted fields spanning several lines are not accounted for). Adapters that drop
rows keep the source row numbers (`Places`).

May import only numpy, pandas (+ pyarrow via pandas) and `atlas_data.errors`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError

REQUIRED_COLUMNS = ("job_id", "submit_time", "duration")
OPTIONAL_DEFAULTS = {"gpus": 1, "tenant": "default", "weight": 1.0}
PREDICTION_COLUMN = "predicted_duration"
COLUMNS = REQUIRED_COLUMNS + tuple(OPTIONAL_DEFAULTS)  # output order; predicted_duration last

CSV_SUFFIXES = (".csv", ".csv.gz")
PARQUET_SUFFIXES = (".parquet", ".pq")


def _format_of(path: Path) -> str:
    name = path.name.lower()
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    raise InputError(
        f"unknown file extension (expected one of {', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)})",
        path=str(path),
    )


def read_table(path: str | os.PathLike, *, string_columns: Iterable[str] = ()) -> tuple[pd.DataFrame, str]:
    """Read a CSV or parquet file as-is (no validation); returns (frame, "csv" | "parquet").

    `string_columns` are read as text from CSV so that ids such as "007" keep their form.
    Column names are stripped of surrounding spaces. Unreadable files raise InputError.
    Shared with `atlas_data.adapters`.
    """
    path = Path(path)
    kind = _format_of(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a regular file", path=str(path))
    try:
        if kind == "csv":
            # keep blank places as all-NaN rows so that row numbers stay equal to file places
            df = pd.read_csv(
                path, dtype={c: str for c in string_columns}, skip_blank_lines=False, encoding="utf-8-sig"
            )
        else:
            df = pd.read_parquet(path)
    except pd.errors.EmptyDataError:
        raise InputError("file is empty (no header, no rows)", path=str(path)) from None
    except Exception as exc:  # parser errors, bad parquet magic, permissions, bad encoding ...
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"cannot read {kind} file: {detail}", path=str(path)) from None
    df.columns = [str(c).strip() for c in df.columns]
    if kind == "csv":
        # a CSV that ends with blank places yields trailing all-NaN rows: not data
        blank = df.isna().all(axis=1).to_numpy()
        if blank.any() and blank[-1]:
            last = len(blank) - np.argmin(blank[::-1]) if not blank.all() else 0
            df = df.iloc[:last]
    return df, kind


@dataclass(frozen=True)
class Places:
    """Where each row of a frame came from, for messages.

    `rows[i]` is the 1-based data row in the source of position i (None: i + 1); with
    `line_offset` set (CSV: 1, the header line) messages also give the file line = row + offset.
    """

    rows: np.ndarray | None = None
    line_offset: int | None = None

    @classmethod
    def for_file(cls, kind: str, n: int) -> "Places":
        return cls(np.arange(1, n + 1, dtype=np.int64), 1 if kind == "csv" else None)

    def label(self, i: int) -> str:
        row = i + 1 if self.rows is None else int(self.rows[i])
        return f"row {row}" if self.line_offset is None else f"row {row} (line {row + self.line_offset})"

    def subset(self, keep: np.ndarray) -> "Places":
        rows = np.arange(1, len(keep) + 1) if self.rows is None else np.asarray(self.rows)
        return Places(rows[keep], self.line_offset)


def row_label(i: int, places: Places | None) -> str:
    """Place of data row i (0-based position): "row N" or, for CSV, "row N (line L)"."""
    return (places or Places()).label(i)


def _value_repr(value) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "empty"
    if value is None or value is pd.NA:
        return "empty"
    return repr(value) if isinstance(value, str) else str(value)


def _numeric(df: pd.DataFrame, column: str, path: str, places) -> np.ndarray:
    """Column as float64; a cell that is present but not a number is an error."""
    raw = df[column]
    values = pd.to_numeric(raw, errors="coerce")
    # bool columns would pass to_numeric as 0/1: refuse them explicitly
    if pd.api.types.is_bool_dtype(raw.dtype):
        raise InputError(f"{column} must be numeric, got booleans", path=path, where=f"column '{column}'")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & raw.notna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"{column} is not a number: {_value_repr(raw.iloc[i])}", path=path, where=row_label(i, places)
        )
    return values


def _first_bad(mask: np.ndarray) -> int | None:
    return int(np.argmax(mask)) if mask.any() else None


def _check_finite_positive(values: np.ndarray, column: str, path: str, places, *, positive: bool) -> None:
    i = _first_bad(~np.isfinite(values))
    if i is not None:
        what = "is empty" if np.isnan(values[i]) else f"must be finite, got {values[i]}"
        raise InputError(f"{column} {what}", path=path, where=row_label(i, places))
    if positive:
        i = _first_bad(values <= 0)
        if i is not None:
            raise InputError(f"{column} must be > 0, got {values[i]:g}", path=path, where=row_label(i, places))


def _text(df: pd.DataFrame, column: str, path: str, places) -> pd.Series:
    raw = df[column]
    missing = raw.isna().to_numpy()
    i = _first_bad(missing)
    if i is not None:
        raise InputError(f"{column} is empty", path=path, where=row_label(i, places))
    if pd.api.types.is_float_dtype(raw.dtype):
        # ids read as floats (1.0, 2.0) become "1", "2" when integral
        vals = raw.to_numpy(dtype=np.float64)
        if np.all(np.isfinite(vals)) and np.all(vals == np.round(vals)):
            raw = pd.Series(vals.astype(np.int64), index=raw.index)
    text = raw.astype(str).str.strip()
    i = _first_bad((text == "").to_numpy())
    if i is not None:
        raise InputError(f"{column} is empty", path=path, where=row_label(i, places))
    return text


def validate_jobs(
    df: pd.DataFrame,
    path: str | os.PathLike = "<DataFrame>",
    *,
    places: Places | None = None,
    require_prediction: bool = False,
) -> pd.DataFrame:
    """Validate and normalise a jobs table held in memory; returns a new DataFrame.

    `path` names the source in messages; `places` says which source row (and CSV line) each
    position came from (default: position + 1, no lines).
    """
    path = str(path)
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}", path=path)
    df = df.rename(columns=lambda c: str(c).strip())
    dup_cols = df.columns[df.columns.duplicated()].tolist()
    if dup_cols:
        raise InputError("column appears more than once", path=path, where=f"column '{dup_cols[0]}'")
    for column in REQUIRED_COLUMNS:
        if column not in df.columns:
            present = ", ".join(map(str, df.columns)) or "none"
            raise InputError(
                f"required column is missing (columns present: {present})", path=path, where=f"column '{column}'"
            )
    if len(df) == 0:
        raise InputError("the jobs table has no rows", path=path)
    if places is not None and places.rows is not None and len(places.rows) != len(df):
        raise ValueError("places.rows must have one entry per row")

    job_id = _text(df, "job_id", path, places)
    duplicated = job_id.duplicated(keep="first").to_numpy()
    i = _first_bad(duplicated)
    if i is not None:
        first = int(np.argmax((job_id == job_id.iloc[i]).to_numpy()))
        raise InputError(
            f"duplicate job_id {job_id.iloc[i]!r}: {row_label(first, places)} and {row_label(i, places)}",
            path=path,
            where=row_label(i, places),
        )

    submit_time = _numeric(df, "submit_time", path, places)
    _check_finite_positive(submit_time, "submit_time", path, places, positive=False)
    duration = _numeric(df, "duration", path, places)
    _check_finite_positive(duration, "duration", path, places, positive=True)

    if "gpus" in df.columns:
        gpus_f = _numeric(df, "gpus", path, places)
        _check_finite_positive(gpus_f, "gpus", path, places, positive=False)
        i = _first_bad(gpus_f != np.round(gpus_f))
        if i is not None:
            raise InputError(f"gpus must be a whole number, got {gpus_f[i]:g}", path=path, where=row_label(i, places))
        i = _first_bad(gpus_f < 1)
        if i is not None:
            raise InputError(f"gpus must be >= 1, got {gpus_f[i]:g}", path=path, where=row_label(i, places))
        gpus = gpus_f.astype(np.int64)
    else:
        gpus = np.full(len(df), OPTIONAL_DEFAULTS["gpus"], dtype=np.int64)

    if "tenant" in df.columns:
        tenant = _text(df, "tenant", path, places)
    else:
        tenant = pd.Series([OPTIONAL_DEFAULTS["tenant"]] * len(df), dtype=str)

    if "weight" in df.columns:
        weight = _numeric(df, "weight", path, places)
        _check_finite_positive(weight, "weight", path, places, positive=True)
    else:
        weight = np.full(len(df), OPTIONAL_DEFAULTS["weight"], dtype=np.float64)

    out = pd.DataFrame(
        {
            "job_id": pd.Series(job_id.to_numpy(), dtype=str),
            "submit_time": submit_time,
            "duration": duration,
            "gpus": gpus,
            "tenant": pd.Series(tenant.to_numpy(), dtype=str),
            "weight": weight,
        }
    )
    if PREDICTION_COLUMN in df.columns:
        predicted = _numeric(df, PREDICTION_COLUMN, path, places)
        _check_finite_positive(predicted, PREDICTION_COLUMN, path, places, positive=True)
        out[PREDICTION_COLUMN] = predicted
    elif require_prediction:
        raise InputError(
            f"column '{PREDICTION_COLUMN}' is missing and predicted durations are required",
            path=path,
            where=f"column '{PREDICTION_COLUMN}'",
        )
    return out


def read_jobs(path: str | os.PathLike, *, require_prediction: bool = False) -> pd.DataFrame:
    """Read a jobs table from .csv / .csv.gz / .parquet / .pq, validate and normalise it."""
    df, kind = read_table(path, string_columns=("job_id", "tenant"))
    return validate_jobs(df, str(path), places=Places.for_file(kind, len(df)), require_prediction=require_prediction)


def require_predictions(df: pd.DataFrame, path: str | os.PathLike | None, policies: Iterable[str]) -> None:
    """Refuse to go on when `policies` (names of policies that need p̂) meet a table without p̂."""
    names = [str(p) for p in policies]
    if not names or PREDICTION_COLUMN in df.columns:
        return
    quoted = ", ".join(f"'{n}'" for n in names)
    subject = f"policy {quoted} needs" if len(names) == 1 else f"policies {quoted} need"
    raise InputError(
        f"{subject} predicted durations: column '{PREDICTION_COLUMN}' is missing "
        "(add it, or use --noise / --predictor)",
        path=str(path) if path is not None else None,
        where=f"column '{PREDICTION_COLUMN}'",
    )
