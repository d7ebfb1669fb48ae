"""The jobs table: the one scheduler input format (docs/data-formats.md), read from CSV or parquet and validated.

`read_jobs(path)` reads a file, `validate_jobs(df, path)` checks a DataFrame built in code; both
return a new DataFrame with exactly these columns, in this order and with these dtypes:

    job_id (str) · submit_time (float64) · duration (float64) · gpus (int64, default 1) ·
    tenant (str, default "default") · weight (float64, default 1) ·
    predicted_duration (float64, only when the input has it)

Other input columns are dropped. Defaults apply only when a column is absent: an empty cell in a
present column is an error, never silently filled.

Types and ranges are strict at this door (docs/data-formats.md#types-and-ranges): a date-time
`submit_time` becomes seconds since 1970-01-01 UTC (naive = UTC), a time-span `submit_time`,
`duration` or `predicted_duration` becomes seconds, any other date-time / time-span column is
refused; ids that are floats must be whole numbers below 2^53 (they then read as integers), others
are refused; |submit_time|, `duration` and `predicted_duration` may not exceed MAX_SECONDS (10^12 s)
and `gpus` MAX_GPUS; a job_id or tenant longer than MAX_NAME_CHARS (256) characters is refused; a column name given twice is refused (for CSV from the header row itself,
before pandas renames the second one `x.1`); from CSV, id and tenant cells are text as written,
so `NA`, `null` or `None` are ids like any other. Every problem raises `InputError` naming the
file, the place and the problem. Places are "column 'x'" or "row N" (1-based data row); for CSV
input "row N (line L)" where L = N + 1 is the line of the file (header = line 1; blank lines
count as rows; quoted fields spanning several lines are not accounted for). Adapters that drop
rows keep the source row numbers (`Places`).

May import only numpy, pandas (+ pyarrow via pandas) and `atlas_data.errors`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from atlas_data.errors import InputError

# Bounds of the door: beyond them a value is a unit mistake or garbage, and the simulators would
# lose precision, overflow or run for ages. 10^12 s is about 31,700 years.
MAX_SECONDS = 1e12
MAX_GPUS = 1_000_000
# the longest job_id or tenant, in characters (after stripping): ids and tenant names of real traces are
# under 70; every run hashes, sorts, prints and writes them per job, so a megabyte name would take minutes
MAX_NAME_CHARS = 256
# integral floats up to 2^53 are exact; beyond, or with a fraction, a float id is not the id written
MAX_EXACT_FLOAT_ID = 2.0 ** 53
# the strings pandas reads as missing by default (pandas.read_csv, `na_values`): kept for the
# numeric columns, where they mean an empty cell; id and tenant columns keep them as text
DEFAULT_NA_STRINGS = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                      "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")

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
    hint = ""
    if name.endswith((".json", ".json.gz")):  # e.g. the raw Philly trace's cluster_job_log
        hint = ("; a JSON job log is not read: for Philly, its job list (timestamp, duration, num_gpus, cluster) ships "
                "as --jobs philly and is read by data import --format philly (docs/real-traces.md)")
    raise InputError(
        f"unknown file extension (expected one of {', '.join(CSV_SUFFIXES + PARQUET_SUFFIXES)}){hint}",
        path=str(path),
    )


def read_table(path: str | os.PathLike, *, string_columns: Iterable[str] = ()) -> tuple[pd.DataFrame, str]:
    """Read a CSV or parquet file as-is (no validation); returns (frame, "csv" | "parquet").

    `string_columns` are read as text from CSV, exactly as written (ids such as "007" keep their
    form, "NA" stays "NA"). Column names are stripped of surrounding spaces; a name that appears
    twice is an InputError. Unreadable files raise InputError. Shared with `atlas_data.adapters`.
    """
    path = Path(path)
    kind = _format_of(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a regular file", path=str(path))
    if kind == "csv":
        return read_csv_frame(path, string_columns=string_columns, label=str(path)), kind
    try:
        import pyarrow.parquet as pq

        names = [str(c).strip() for c in pq.read_schema(path).names]
        _refuse_duplicate_names(names, str(path))
        df = pd.read_parquet(path)
    except InputError:
        raise
    except Exception as exc:  # bad parquet magic, permissions ...
        raise InputError(f"cannot read parquet file: {_first_line(exc)}", path=str(path)) from None
    # a frame saved with a named index (e.g. `set_index("job_id")`) keeps that column as its index:
    # it is a column of the file like any other; an unnamed index is only the rows' positions
    if any(name is not None for name in df.index.names):
        df = df.reset_index()
    elif not isinstance(df.index, pd.RangeIndex) or df.index.start != 0 or df.index.step != 1:
        df = df.reset_index(drop=True)
    df.columns = [str(c).strip() for c in df.columns]
    return df, kind


def read_csv_frame(source: Path | bytes, *, string_columns: Iterable[str] = (), label: str,
                   where: str | None = None) -> pd.DataFrame:
    """A CSV file (a path, or its bytes) as a frame, with the rules of `read_table`.

    `label` names the file in messages, `where` the place inside it (e.g. a tar member).
    """
    import io

    def handle():
        return io.BytesIO(source) if isinstance(source, bytes) else source

    string_columns = set(string_columns)
    sep = detect_delimiter(_header_line(source, label, where), label, where)
    try:
        # the header row as written: pandas would rename a repeated name `x.1` and hide it
        head = pd.read_csv(handle(), header=None, nrows=1, dtype=str, keep_default_na=False, encoding="utf-8-sig",
                           sep=sep)
        raw_names = [str(c) for c in head.iloc[0]] if len(head) else []
        _refuse_duplicate_names([c.strip() for c in raw_names], label, where)
        text = [c for c in raw_names if c.strip() in string_columns]
        df = pd.read_csv(
            handle(), dtype={c: str for c in text}, skip_blank_lines=False, encoding="utf-8-sig", sep=sep,
            # keep blank places as all-NaN rows so that row numbers stay equal to file places
            keep_default_na=False, na_values={c: list(DEFAULT_NA_STRINGS) for c in raw_names if c not in text},
        )
    except InputError:
        raise
    except pd.errors.EmptyDataError:
        raise InputError("file is empty (no header, no rows)", path=label, where=where) from None
    except Exception as exc:  # parser errors, permissions, bad encoding ...
        raise InputError(f"cannot read csv file: {_first_line(exc)}", path=label, where=where) from None
    if not (isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1):
        # pandas reads a first data row with more fields than the header as a row index: every value
        # would then sit under the wrong column
        extra = df.index.nlevels
        raise InputError(f"{len(raw_names) + extra} fields, the header has {len(raw_names)} (a value without a "
                         "column name)", path=label, where=(f"{where}: " if where else "") + "row 1 (line 2)")
    df.columns = [str(c).strip() for c in df.columns]
    # a CSV that ends with blank places yields trailing all-NaN (or, in text columns, all-empty) rows: not data
    blank = (df.isna() | df.eq("")).all(axis=1).to_numpy() if len(df.columns) else np.zeros(len(df), bool)
    if blank.any() and blank[-1]:
        last = len(blank) - np.argmin(blank[::-1]) if not blank.all() else 0
        df = df.iloc[:last]
    return df


#: the delimiters a CSV file may use; the header line decides which (docs/data-formats.md#delimiters)
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab"}


def _header_line(source: Path | bytes, label: str, where: str | None) -> str:
    """The first line of a CSV file (gzip-compressed when the name ends in .gz), as text."""
    import gzip

    try:
        if isinstance(source, bytes):
            first = source[:1 << 16]
        else:
            opener = gzip.open if str(source).lower().endswith(".gz") else open
            with opener(source, "rb") as fh:
                first = fh.read(1 << 16)
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read csv file: {_first_line(exc)}", path=label, where=where) from None
    return first.split(b"\n", 1)[0].decode("utf-8-sig", errors="replace").rstrip("\r")


def detect_delimiter(header: str, label: str = "<text>", where: str | None = None) -> str:
    """The delimiter of a CSV header line: comma, semicolon or tab, whichever occurs (outside
    quotes); a line with none is one column (comma). Two of them equally often is an InputError
    that states the counts, never a guess."""
    unquoted = re.sub(r'"[^"]*"', "", header)
    counts = {d: unquoted.count(d) for d in DELIMITERS}
    best = max(counts.values())
    if best == 0:
        return ","
    winners = [d for d, c in counts.items() if c == best]
    if len(winners) > 1:
        found = ", ".join(f"{counts[d]} {DELIMITERS[d]}{'s' if counts[d] != 1 else ''}" for d in winners)
        raise InputError(f"cannot tell the delimiter from the header line ({found}); use one of comma, semicolon "
                         "or tab", path=label, where=where)
    return winners[0]


def _refuse_duplicate_names(names: list[str], label: str, where: str | None = None) -> None:
    seen = set()
    for name in names:
        if name in seen:
            place = f"{where}, column '{name}'" if where else f"column '{name}'"
            raise InputError("column appears more than once", path=label, where=place)
        seen.add(name)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


@dataclass(frozen=True)
class Places:
    """Where each row of a frame came from, for messages.

    `rows[i]` is the 1-based data row in the source of position i (None: i + 1); with
    `line_offset` set (CSV: 1, the header line) messages also give the file line = row + offset.
    """

    rows: np.ndarray | None = None
    line_offset: int | None = None
    lines: np.ndarray | None = None  # the file line of each row, where rows and lines are not a fixed offset apart (SWF)

    @classmethod
    def for_file(cls, kind: str, n: int) -> "Places":
        return cls(np.arange(1, n + 1, dtype=np.int64), 1 if kind == "csv" else None)

    def label(self, i: int) -> str:
        row = i + 1 if self.rows is None else int(self.rows[i])
        if self.lines is not None:
            return f"row {row} (line {int(self.lines[i])})"
        return f"row {row}" if self.line_offset is None else f"row {row} (line {row + self.line_offset})"

    def subset(self, keep: np.ndarray) -> "Places":
        rows = np.arange(1, len(keep) + 1) if self.rows is None else np.asarray(self.rows)
        return Places(rows[keep], self.line_offset, None if self.lines is None else np.asarray(self.lines)[keep])


def row_label(i: int, places: Places | None) -> str:
    """Place of data row i (0-based position): "row N" or, for CSV, "row N (line L)"."""
    return (places or Places()).label(i)


def _value_repr(value) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "empty"
    if value is None or value is pd.NA:
        return "empty"
    return repr(value) if isinstance(value, str) else str(value)


EPOCH = pd.Timestamp(0, tz="UTC")  # the origin of date-time submit times (each run shifts its own to 0)


def seconds_of(raw: pd.Series, column: str, path: str, *, instant: bool, span: bool = True) -> np.ndarray | None:
    """Seconds (float64, NaN where empty) from a date-time or time-span column, else None.

    A date-time counts from 1970-01-01 UTC (a naive one is read as UTC) when `instant`, a time span
    is its length in seconds when `span`; a column of a kind the caller does not accept is refused
    (InputError), never read as its raw nanoseconds.
    """
    dtype = raw.dtype
    if isinstance(dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(dtype):
        if not instant:
            raise InputError(f"{column} holds date-times; it must be seconds" + (" or a time span" if span else ""),
                             path=path, where=f"column '{column}'")
        stamps = raw if isinstance(dtype, pd.DatetimeTZDtype) else raw.dt.tz_localize("UTC")
        return (stamps - EPOCH).dt.total_seconds().to_numpy(dtype=np.float64, na_value=np.nan)
    if pd.api.types.is_timedelta64_dtype(dtype):
        if not span:
            raise InputError(f"{column} holds time spans; it must be a number", path=path, where=f"column '{column}'")
        return raw.dt.total_seconds().to_numpy(dtype=np.float64, na_value=np.nan)
    return None


def _numeric(df: pd.DataFrame, column: str, path: str, places, *, instant: bool = False, span: bool = False) -> np.ndarray:
    """Column as float64; a cell that is present but not a number is an error (date-times and time
    spans only where `instant` / `span` allow them, converted to seconds by `seconds_of`)."""
    raw = df[column]
    converted = seconds_of(raw, column, path, instant=instant, span=span)
    if converted is not None:
        return converted
    values = pd.to_numeric(raw, errors="coerce")
    # bool columns would pass to_numeric as 0/1: refuse them explicitly
    if pd.api.types.is_bool_dtype(raw.dtype):
        raise InputError(f"{column} must be numeric, got booleans", path=path, where=f"column '{column}'")
    values = values.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values) & raw.notna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        hint = ""
        if instant and isinstance(raw.iloc[i], str) and not pd.isna(pd.to_datetime(raw.iloc[i], errors="coerce")):
            hint = ("; a jobs table holds seconds: a Helios log's date-times are read by benchmark data import "
                    "--format helios FILE --out JOBS.parquet")
        raise InputError(
            f"{column} is not a number: {_value_repr(raw.iloc[i])}{hint}", path=path, where=row_label(i, places)
        )
    return values


def _owned(values: np.ndarray) -> np.ndarray:
    """`values` when it owns its memory (made here), a copy when it is a view of the input frame's."""
    return values if values.flags.owndata and values.flags.writeable else values.copy()


def _first_bad(mask: np.ndarray) -> int | None:
    return int(np.argmax(mask)) if mask.any() else None


def _check_finite_positive(values: np.ndarray, column: str, path: str, places, *, positive: bool,
                           bound: float | None = None, unit: str = " s") -> None:
    i = _first_bad(~np.isfinite(values))
    if i is not None:
        # an empty cell and a NaN read the same; "missing/NaN" names both (text columns say "empty")
        what = "is missing/NaN" if np.isnan(values[i]) else f"must be finite, got {values[i]}"
        raise InputError(f"{column} {what}", path=path, where=row_label(i, places))
    if positive:
        i = _first_bad(values <= 0)
        if i is not None:
            raise InputError(f"{column} must be > 0, got {values[i]:g}", path=path, where=row_label(i, places))
    if bound is not None:
        i = _first_bad(np.abs(values) > bound)
        if i is not None:
            limit = f"within ±{bound:g}" if not positive else f"at most {bound:g}"
            about = " (about 31,700 years)" if unit == " s" else ""
            raise InputError(f"{column} must be {limit}{unit}{about}, got {values[i]:g}", path=path,
                             where=row_label(i, places))


def _text(df: pd.DataFrame, column: str, path: str, places) -> pd.Series:
    raw = df[column]
    missing = raw.isna().to_numpy()
    i = _first_bad(missing)
    if i is not None:
        raise InputError(f"{column} is empty", path=path, where=row_label(i, places))
    if pd.api.types.is_float_dtype(raw.dtype):
        # ids read as floats (1.0, 2.0) become "1", "2"; a float that is not exactly a whole number
        # (1.5, or 1e19, beyond 2^53, which int64 would turn into -9223372036854775808) is refused
        vals = raw.to_numpy(dtype=np.float64)
        _refuse_inexact_float_ids(vals, column, path, places)
        raw = pd.Series(vals.astype(np.int64), index=raw.index)
    elif raw.dtype == object and pd.api.types.infer_dtype(raw, skipna=True) not in ("string", "empty", "integer"):
        values = scalar_ids(raw.to_numpy(dtype=object), column, path, places)
        raw = pd.Series(values, index=raw.index)
        floats = np.fromiter((isinstance(v, (float, np.floating)) for v in values), bool, len(values))
        if floats.any():
            vals = np.where(floats, values, 0.0).astype(np.float64)
            _refuse_inexact_float_ids(vals, column, path, places)
            values = values.copy()
            values[floats] = vals[floats].astype(np.int64)
            raw = pd.Series(values, index=raw.index)
    if raw.dtype.kind in "iu":  # whole numbers: their decimal text, made by Arrow without a Python object per
        # row (10^7 ids would be 10^7 objects); never empty, at most 20 characters
        return pd.Series(pa.array(raw.to_numpy()).cast(pa.string()), index=raw.index, dtype=str)
    text = raw.astype(str).str.strip()
    i = _first_bad((text == "").to_numpy())
    if i is not None:
        raise InputError(f"{column} is empty", path=path, where=row_label(i, places))
    i = _first_bad((text.str.len() > MAX_NAME_CHARS).to_numpy())
    if i is not None:
        raise InputError(f"{column} is {len(text.iloc[i]):,} characters long, more than the {MAX_NAME_CHARS} "
                         "allowed (docs/data-formats.md#limits)", path=path, where=row_label(i, places))
    return text


def scalar_ids(values: np.ndarray, column: str, path: str, places) -> np.ndarray:
    """An object column of ids with bytes decoded as UTF-8 text; InputError naming the row for a value
    that is no single id — a list, dict or array (a parquet list column would become the text "[1]"),
    or bytes that are not UTF-8 text. Ids are text or integers."""
    out = values
    for i, value in enumerate(values):
        if isinstance(value, (bytes, bytearray)):
            try:
                text = bytes(value).decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{column} holds bytes that are not UTF-8 text ({bytes(value)[:24]!r}): ids are text "
                                 "or integers", path=path, where=row_label(i, places)) from None
            if out is values:
                out = values.copy()
            out[i] = text
        elif not pd.api.types.is_scalar(value):
            listed = isinstance(value, (list, tuple, np.ndarray))  # a parquet list column reads as arrays
            shown = " ".join(repr(value.tolist() if listed and hasattr(value, "tolist") else value).split())[:40]
            kind = "list" if listed else type(value).__name__
            raise InputError(f"{column} holds a {kind} ({shown}), not one id: ids are text or integers",
                             path=path, where=row_label(i, places))
    return out


def text_column(codes: np.ndarray, texts: np.ndarray) -> pd.Series:
    """A text column given as each row's index (`codes`) into its distinct `texts` (str), built by
    Arrow: no Python object per row, as the column of a table read from parquet."""
    return pd.Series(pa.array(texts.tolist(), pa.string()).take(pa.array(codes)), dtype=str)


def _refuse_inexact_float_ids(vals: np.ndarray, column: str, path: str, places) -> None:
    i = _first_bad(~((vals == np.round(vals)) & (np.abs(vals) < MAX_EXACT_FLOAT_ID)))
    if i is not None:
        raise InputError(f"{column} {vals[i]:g} is a float that is not exactly a whole number below 2^53, so it is "
                         "not the id that was written: store ids as text or integers", path=path,
                         where=row_label(i, places))


def _whole_ids(raw: pd.Series) -> np.ndarray | None:
    """The ids of a column `_text` has accepted as numbers (integers, or floats that are whole numbers
    below 2^53) as an integer array; None for ids that are text."""
    if pd.api.types.is_float_dtype(raw.dtype):
        return raw.to_numpy(dtype=np.float64).astype(np.int64)
    return raw.to_numpy() if raw.dtype.kind in "iu" else None  # (text is never turned into objects here)


def _refuse_duplicate_ids(job_id: pd.Series, path: str, places, whole: np.ndarray | None = None) -> None:
    """InputError naming the first id that repeats an earlier row's (both rows). `whole`: the ids as
    integers when they are numbers (`_whole_ids`), compared by a numpy sort instead of a hash table
    of text objects (memory: two integer columns, for the 10^7 job numbers of a long log)."""
    if whole is not None:
        ordered = np.sort(whole)
        if not (ordered[1:] == ordered[:-1]).any():
            return
        del ordered
        order = np.argsort(whole, kind="stable")  # a run of equal ids in row order: all but its first repeat it
        repeats = np.zeros(len(whole), dtype=bool)
        same = whole[order[1:]] == whole[order[:-1]]
        repeats[order[1:][same]] = True
        i = int(np.argmax(repeats))
        first = int(np.argmax(whole == whole[i]))
    else:
        i = _first_bad(job_id.duplicated(keep="first").to_numpy())
        first = None if i is None else int(np.argmax((job_id == job_id.iloc[i]).to_numpy()))
    if i is not None:
        raise InputError(
            f"duplicate job_id {job_id.iloc[i]!r}: {row_label(first, places)} and {row_label(i, places)}",
            path=path,
            where=row_label(i, places),
        )


def validate_predictions(df: pd.DataFrame, path: str = "<predictions>") -> pd.Series:
    """A predictions frame (`job_id`, `p_hat` in seconds) checked as a jobs table checks its ids and
    `predicted_duration`: p̂ indexed by the job ids as a jobs table writes them (float ids 1.0 -> "1")."""
    for column in ("job_id", "p_hat"):
        if column not in df.columns:
            present = ", ".join(map(str, df.columns)) or "none"
            raise InputError(f"required column is missing (columns present: {present})", path=path,
                             where=f"column '{column}'")
    job_id = _text(df, "job_id", path, None)
    _refuse_duplicate_ids(job_id, path, None, _whole_ids(df["job_id"]))
    p_hat = _numeric(df, "p_hat", path, None, span=True)
    _check_finite_positive(p_hat, "p_hat", path, None, positive=True, bound=MAX_SECONDS)
    return pd.Series(p_hat, index=pd.Index(job_id.to_numpy(), dtype=object), name="p_hat")


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
    _refuse_duplicate_ids(job_id, path, places, _whole_ids(df["job_id"]))

    submit_time = _numeric(df, "submit_time", path, places, instant=True, span=True)
    _check_finite_positive(submit_time, "submit_time", path, places, positive=False, bound=MAX_SECONDS)
    duration = _numeric(df, "duration", path, places, span=True)
    _check_finite_positive(duration, "duration", path, places, positive=True, bound=MAX_SECONDS)

    if "gpus" in df.columns:
        gpus_f = _numeric(df, "gpus", path, places)
        _check_finite_positive(gpus_f, "gpus", path, places, positive=False)
        i = _first_bad(gpus_f != np.round(gpus_f))
        if i is not None:
            raise InputError(f"gpus must be a whole number, got {gpus_f[i]:g}", path=path, where=row_label(i, places))
        i = _first_bad(gpus_f < 1)
        if i is not None:
            raise InputError(f"gpus must be >= 1, got {gpus_f[i]:g}", path=path, where=row_label(i, places))
        _check_finite_positive(gpus_f, "gpus", path, places, positive=True, bound=MAX_GPUS, unit="")
        gpus = gpus_f.astype(np.int64)
    else:
        gpus = np.full(len(df), OPTIONAL_DEFAULTS["gpus"], dtype=np.int64)

    if "tenant" in df.columns:
        tenant = _text(df, "tenant", path, places)
    else:
        tenant = pd.Series([OPTIONAL_DEFAULTS["tenant"]] * len(df), dtype=str)

    if "weight" in df.columns:
        weight = _numeric(df, "weight", path, places)
        _check_finite_positive(weight, "weight", path, places, positive=True, bound=MAX_SECONDS, unit="")
    else:
        weight = np.full(len(df), OPTIONAL_DEFAULTS["weight"], dtype=np.float64)

    out = pd.DataFrame(
        {
            "job_id": pd.Series(job_id.array, dtype=str),  # the column as it is: no Python object per row
            "submit_time": _owned(submit_time),
            "duration": _owned(duration),
            "gpus": gpus,
            "tenant": pd.Series(tenant.array, dtype=str),
            "weight": _owned(weight),
        },
        copy=False,  # each column its own (`_owned`), not copied again into one block
    )
    if PREDICTION_COLUMN in df.columns:
        predicted = _numeric(df, PREDICTION_COLUMN, path, places, span=True)
        _check_finite_positive(predicted, PREDICTION_COLUMN, path, places, positive=True, bound=MAX_SECONDS)
        out[PREDICTION_COLUMN] = predicted
    elif require_prediction:
        raise InputError(
            f"column '{PREDICTION_COLUMN}' is missing and predicted durations are required",
            path=path,
            where=f"column '{PREDICTION_COLUMN}'",
        )
    return out


# ----- column mapping (--columns) ----------------------------------------------------------------------
#: the columns `--columns` may map: every jobs-table column
MAPPABLE_COLUMNS = COLUMNS + (PREDICTION_COLUMN,)
#: file column names a missing jobs-table column is often called, for the suggestion in the error
_USUAL_NAMES = {
    "job_id": ("id", "jobid", "job", "job_name", "jobname", "name", "job_number"),
    "submit_time": ("submit", "submitted", "submission_time", "submit_ts", "submit_timestamp", "arrival",
                    "arrival_time", "timestamp", "creation_time", "created"),
    "duration": ("runtime", "run_time", "duration_s", "elapsed", "length", "job_duration", "wall_time"),
    "gpus": ("gpu", "num_gpu", "num_gpus", "gpu_num", "ngpus", "n_gpus", "gpu_count"),
    "tenant": ("vc", "virtual_cluster", "user", "team", "queue", "cluster", "group"),
}


def parse_column_map(text: str | None, option: str = "--columns") -> dict[str, str]:
    """`job_id=id,submit_time=submit,...` -> {jobs-table column: file column}; bad text is an InputError."""
    if text is None:
        return {}
    mapping: dict[str, str] = {}
    for item in (t.strip() for t in str(text).split(",")):
        if not item:
            continue
        target, eq, source = (part.strip() for part in item.partition("="))
        if not eq or not target or not source:
            raise InputError(f"cannot read {item!r}: write JOBS_COLUMN=FILE_COLUMN, e.g. job_id=id", where=option)
        if target not in MAPPABLE_COLUMNS:
            raise InputError(f"{target!r} is not a jobs-table column (choose from {', '.join(MAPPABLE_COLUMNS)})",
                             where=option)
        if target in mapping:
            raise InputError(f"{target!r} is mapped twice", where=option)
        if source in mapping.values():
            raise InputError(f"file column {source!r} is mapped twice", where=option)
        mapping[target] = source
    if not mapping:
        raise InputError("no mapping given: write JOBS_COLUMN=FILE_COLUMN, e.g. job_id=id", where=option)
    return mapping


def apply_column_map(df: pd.DataFrame, mapping: dict[str, str], path: str, option: str = "--columns") -> pd.DataFrame:
    """Rename the file's columns to jobs-table columns; a mapped name the file lacks, or a file that
    also has the target under its own name (it would be hidden), is an InputError naming it (and
    `option`, the command-line option that gave the mapping)."""
    present = ", ".join(map(str, df.columns)) or "none"
    for target, source in mapping.items():
        if source not in df.columns:
            raise InputError(f"{option} maps {target} to '{source}', which the file does not have "
                             f"(columns present: {present})", path=path, where=f"column '{source}'")
        if target != source and target in df.columns and target not in mapping.values():
            raise InputError(f"{option} maps {target} to '{source}', but the file has its own '{target}' column "
                             "too; map that one or rename it", path=path, where=f"column '{target}'")
    return df.rename(columns={source: target for target, source in mapping.items()})


def suggest_column_map(columns) -> str:
    """A `--columns` value for a file whose required columns have other names (placeholders where no
    usual name is present)."""
    present = {str(c).strip().lower(): str(c).strip() for c in columns}
    items = []
    for target in ("job_id", "submit_time", "duration", "gpus", "tenant"):
        if target in present:
            if present[target] != target:  # the same name in other letter case: it still needs naming
                items.append(f"{target}={present[target]}")
            continue
        found = next((present[n] for n in _USUAL_NAMES[target] if n in present), None)
        if found is not None:
            items.append(f"{target}={found}")
        elif target in REQUIRED_COLUMNS:
            items.append(f"{target}=COLUMN")
    return ",".join(items)


#: the layouts of published traces that no column mapping turns into a jobs table (a duration computed
#: from two columns, no job id, no submit time): a file with one of them is pointed to its importer
_IMPORTER_LAYOUTS = (
    ("an openb pod list", "openb", ("name", "num_gpu", "creation_time", "deletion_time", "scheduled_time")),
    ("a Philly job list", "philly", ("timestamp", "duration", "num_gpus")),
    ("a runtime-only file (a batch at time 0)", "helios", ("runtime",)),
)


def _importer_hint(columns) -> str | None:
    present = {str(c).strip() for c in columns}
    for what, fmt, needed in _IMPORTER_LAYOUTS:
        if set(needed) <= present and (fmt != "helios" or present == set(needed)):  # runtime-only: nothing else
            return f"this is {what}: convert it with benchmark data import --format {fmt} FILE --out JOBS.parquet"
    return None


def read_jobs_source(path: str | os.PathLike, columns: dict[str, str] | None = None, option: str = "--columns",
                     frame: pd.DataFrame | None = None):
    """A jobs-table file as read, its columns renamed by `columns` ({jobs column: file column}, given by
    the command-line `option`): (frame, Places). A missing required column is an InputError that
    suggests the `option` to give. `frame` is a table in memory read in place of the file (`path`
    then only names it in messages, e.g. `<DataFrame>`)."""
    mapping = dict(columns or {})
    text_columns = (mapping.get("job_id", "job_id"), mapping.get("tenant", "tenant"))
    if frame is not None:
        df, kind = frame.copy(), "frame"  # its rows are numbered from 1, as a parquet file's
    else:
        df, kind = read_table(path, string_columns=text_columns)
    df = apply_column_map(df, mapping, str(path), option)
    for column in REQUIRED_COLUMNS:
        if column not in df.columns:
            present = ", ".join(map(str, df.columns)) or "none"
            hint = (None if mapping else _importer_hint(df.columns)) or \
                f"name the file's columns with {option} {suggest_column_map(df.columns)}"
            raise InputError(f"required column is missing (columns present: {present}); {hint}", path=str(path),
                             where=f"column '{column}'")
    return df, Places.for_file(kind, len(df))


def read_jobs(path: str | os.PathLike, *, require_prediction: bool = False,
              columns: dict[str, str] | None = None) -> pd.DataFrame:
    """Read a jobs table from .csv / .csv.gz / .parquet / .pq, validate and normalise it.

    `columns` maps jobs-table columns to the file's own names (`--columns`, `parse_column_map`).
    """
    df, places = read_jobs_source(path, columns)
    return validate_jobs(df, str(path), places=places, require_prediction=require_prediction)


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
