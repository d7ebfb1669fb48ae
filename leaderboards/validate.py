"""Validate a leaderboard submission folder before anything is scored or written (docs/leaderboards.md).

`validate_submission(dir, card, test_ids, track=...)` -> (Submission, predictions frame). Every
failure is an InputError whose one-line message names the file and the key, column or row
(rows are 1-based data rows, as in atlas_data.jobs_table): missing files (or a folder in a file's
place), bad YAML (atlas_data.yamlio: a key given twice included), missing /
unknown / mistyped keys, a track other than the one asked for, a dataset fingerprint other than
the dataset's, empty (null, '' or blank) / missing / unknown / duplicate job ids (count and first examples), non-finite or
non-positive `p_hat`, values beyond 10^12 s, `lo` > `hi`, wrong column types (date-times and time
spans included: seconds are numbers), duplicate column names.

`check_predictions(frame, test_ids, path)` is the predictions half alone; the built-in methods go
through it too, so their entries obey the rules a submission obeys.

May import pyarrow, numpy, pandas, atlas_data (errors, jobs_table, yamlio) and leaderboards.schema.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.jobs_table import MAX_SECONDS, row_label
from leaderboards.schema import (
    OPTIONAL_COLUMNS,
    PREDICTION_COLUMNS,
    PREDICTIONS_FILE,
    SUBMISSION_FILE,
    TRACKS,
    Submission,
)

MAX_EXAMPLES = 3


def validate_submission(sub_dir: Path | str, card: dict, test_ids: Iterable, *, track: str | None = None,
                        ds_label: str | None = None) -> tuple[Submission, pd.DataFrame]:
    """Check a submission folder against a dataset card and its test job ids."""
    sub_dir = Path(sub_dir)
    if not sub_dir.is_dir():
        what = "does not exist" if not sub_dir.exists() else "is not a folder"
        raise InputError(f"submission folder {what} (expected {SUBMISSION_FILE} and {PREDICTIONS_FILE} in it)", path=str(sub_dir))
    submission = read_submission_yaml(sub_dir / SUBMISSION_FILE)
    yaml_path = str(sub_dir / SUBMISSION_FILE)
    if track is not None:
        if track not in TRACKS:
            raise InputError(f"unknown track {track!r} (choose from {', '.join(TRACKS)})", where="--track")
        if submission.track != track:
            raise InputError(f"track is '{submission.track}' but --track is '{track}'", path=yaml_path, where="key 'track'")
    expected = str(card.get("fingerprint") or "").lower()
    if not expected:
        raise InputError("dataset.json has no 'fingerprint'", path=ds_label)
    if submission.dataset_fingerprint != expected:
        raise InputError(
            f"dataset_fingerprint {submission.dataset_fingerprint[:12]}… does not match the dataset's fingerprint "
            f"{expected[:12]}…" + (f" ({ds_label}/dataset.json)" if ds_label else ""),
            path=yaml_path, where="key 'dataset_fingerprint'",
        )
    predictions = check_predictions(read_predictions(sub_dir / PREDICTIONS_FILE), test_ids, str(sub_dir / PREDICTIONS_FILE))
    return submission, predictions


def _check_file(path: Path) -> None:
    """A missing file, or a folder where the file should be, is an InputError naming it."""
    if path.is_dir():
        raise InputError("is a folder, not a file (a submission folder needs the files submission.yaml and "
                         "predictions.parquet)", path=str(path))
    if not path.is_file():
        raise InputError("missing file (a submission folder needs submission.yaml and predictions.parquet)", path=str(path))


def read_submission_yaml(path: Path) -> Submission:
    from atlas_data.yamlio import load_yaml_file  # safe loading; a key given twice names both lines

    _check_file(path)
    return Submission.from_mapping(load_yaml_file(path, "submission file"), str(path))


def read_predictions(path: Path) -> pd.DataFrame:
    """The parquet file as a frame, with column types checked on the Arrow schema (exact types)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    _check_file(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as exc:
        reason = _one_line(str(exc)).replace(str(path), "").strip(" '.:")
        raise InputError(f"not a readable parquet file ({reason[:100] or type(exc).__name__})", path=str(path)) from None
    names = table.schema.names
    if len(set(names)) != len(names):
        raise InputError("duplicate column names", path=str(path))
    missing = [c for c in PREDICTION_COLUMNS if c not in names]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)} (need job_id, p_hat; optional lo, hi)", path=str(path))
    unknown = [c for c in names if c not in PREDICTION_COLUMNS + OPTIONAL_COLUMNS]
    if unknown:
        hint = ("; a pandas index was written: use to_parquet(..., index=False)"
                if any(re.fullmatch(r"__index_level_\d+__", c) for c in unknown) else "")
        raise InputError(f"unknown column(s) {', '.join(unknown)} (allowed: job_id, p_hat, lo, hi{hint})", path=str(path))
    if ("lo" in names) != ("hi" in names):
        raise InputError("give both interval columns lo and hi, or neither", path=str(path),
                         where=f"column '{'lo' if 'lo' in names else 'hi'}'")
    for name in names:
        typ = table.schema.field(name).type
        if pa.types.is_dictionary(typ):
            typ = typ.value_type
        if name == "job_id":
            ok = pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_integer(typ)
            want = "string or integer"
        else:
            ok = pa.types.is_floating(typ) or pa.types.is_integer(typ)
            want = "a number (float or integer)"
        if not ok:
            raise InputError(f"has type {typ}, must be {want}", path=str(path), where=f"column '{name}'")
    # the columns as stored: a job_id written as the pandas index (df.set_index("job_id")) is a column like any other
    return table.to_pandas(ignore_metadata=True)


def check_predictions(frame: pd.DataFrame, test_ids: Iterable, path: str) -> pd.DataFrame:
    """Exactly the test job ids once each; finite p_hat > 0; 0 <= lo <= hi if given.

    Returns job_id (str), p_hat[, lo, hi] (float64) in the file's row order.
    """
    missing_cols = [c for c in PREDICTION_COLUMNS if c not in frame.columns]
    if missing_cols:
        raise InputError(f"missing column(s) {', '.join(missing_cols)}", path=path)
    if len(frame) == 0:
        raise InputError("has no rows (need one row per test job)", path=path)
    raw_ids = frame["job_id"]
    null = raw_ids.isna().to_numpy() | raw_ids.map(lambda v: isinstance(v, str) and not v.strip()).to_numpy(bool)
    if null.any():  # null, '' or only spaces
        raise InputError("job_id is empty", path=path, where=row_label(int(np.flatnonzero(null)[0]), None))
    ids = pd.Series(raw_ids.astype(str).to_numpy(object), dtype=object)
    dup = ids.duplicated(keep=False).to_numpy()
    if dup.any():
        rows = np.flatnonzero(dup)
        first_id = ids.iloc[rows[0]]
        same = np.flatnonzero(ids.to_numpy(object) == first_id)
        n_dup = int(ids.duplicated().sum())
        raise InputError(
            f"duplicate job_id {first_id!r} (also {row_label(int(same[1]), None)}); "
            f"{n_dup} duplicate row(s) in all", path=path, where=row_label(int(same[0]), None),
        )
    test = pd.Index(pd.Series(list(test_ids), dtype=object).astype(str))
    known = ids.isin(set(test)).to_numpy()
    if not known.all():
        bad = np.flatnonzero(~known)
        examples = ", ".join(repr(ids.iloc[i]) for i in bad[:MAX_EXAMPLES])
        raise InputError(
            f"{len(bad)} job_id(s) not in the dataset's test split, e.g. {examples}",
            path=path, where=row_label(int(bad[0]), None),
        )
    absent = test[~test.isin(set(ids))]
    if len(absent):
        examples = ", ".join(repr(x) for x in absent[:MAX_EXAMPLES])
        raise InputError(f"{len(absent)} of {len(test)} test job_id(s) missing, e.g. {examples}", path=path, where="column 'job_id'")
    out = pd.DataFrame({"job_id": ids.to_numpy(object)})
    for column in ("p_hat",) + tuple(c for c in OPTIONAL_COLUMNS if c in frame.columns):
        values = pd.to_numeric(frame[column], errors="coerce").to_numpy(np.float64, na_value=np.nan)
        bad = ~np.isfinite(values)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{column} is not finite ({values[i]}) for job_id {ids.iloc[i]!r} ({int(bad.sum())} such row(s))",
                             path=path, where=row_label(i, None))
        high = values > MAX_SECONDS  # a unit mistake; the scheduling track would lose precision or overflow
        if high.any():
            i = int(np.flatnonzero(high)[0])
            raise InputError(f"{column} must be at most {MAX_SECONDS:g} s (about 31,700 years), got {values[i]:g} for "
                             f"job_id {ids.iloc[i]!r} ({int(high.sum())} such row(s))", path=path, where=row_label(i, None))
        low = values <= 0 if column == "p_hat" else values < 0
        if low.any():
            i = int(np.flatnonzero(low)[0])
            rule = "> 0" if column == "p_hat" else ">= 0"
            raise InputError(f"{column} must be {rule}, got {values[i]:g} for job_id {ids.iloc[i]!r} ({int(low.sum())} such row(s))",
                             path=path, where=row_label(i, None))
        out[column] = values
    if "lo" in out.columns:
        crossed = out["lo"].to_numpy() > out["hi"].to_numpy()
        if crossed.any():
            i = int(np.flatnonzero(crossed)[0])
            raise InputError(f"lo > hi ({out['lo'].iloc[i]:g} > {out['hi'].iloc[i]:g}) for job_id {ids.iloc[i]!r} "
                             f"({int(crossed.sum())} such row(s))", path=path, where=row_label(i, None))
    return out


def _one_line(text: str) -> str:
    return " ".join(str(text).split())
