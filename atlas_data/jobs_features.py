"""Submit-time features of any jobs table: the ATLAS feature rules on a real trace or a user's file.

A jobs table (docs/data-formats.md) plus its *feature columns* — categorical (text) and numeric
columns known when the job is submitted — becomes a prediction dataset in the ATLAS layout
(`job_id`, `submit_time`, `user`, `group`, `is_recurrent`, the features, `p_star`, `y`, `split`),
so that every prediction method, metric and the three-stage framework run on it unchanged.
See docs/real-traces.md#10-predicting-durations-on-a-jobs-table.

- label p* = `duration`, y = log1p(p*); split: time-ordered 70/15/15 on submit times
  (`atlas_data.split`);
- `log_<col>` = sign(x)·log1p(|x|) per numeric column (NaN kept: the learners handle it);
  `<col>_code` per categorical column, label-encoded on the train categories, unseen or empty → −1;
- calendar: hour sin/cos, day of week, weekend, on the trace's own clock (no time-zone shift);
- signature = every categorical value plus every numeric column bucketed as ⌊log2(1 + |x|)⌉;
  `<col>_prior_submits`, `sig_prior_submits`: earlier submissions with the same value (label-free);
  `is_recurrent`: a train job with the same signature was submitted earlier;
- history (`atlas_data.features.history_features`): per categorical column and per signature,
  count, EB-shrunk mean (λ = 5) and EWMA of y over the jobs *finished* by the job's submit;
  `sig_train_*` the same over train jobs only. A jobs table has no end times, so a job's label
  counts as known from submit_time + duration, the earliest it could have finished — a job's own
  label never reaches its own features (duration > 0), and labels of jobs submitted after T never
  reach the features of jobs submitted before T.

Feature columns are declared by each shipped trace's importer (`atlas_data.adapters.TRACE_FEATURES`)
or named by the user (`--feature-columns`, `check_feature_columns`): the jobs table's own `tenant`
(categorical) and `gpus` (numeric) are always features; a column that does not exist, is empty in
every row, or holds post-execution information (`NEVER_FEATURES`, `POST_EXECUTION_TOKENS`, or
values that track the duration or follow the submit time like an end time) is refused with an
InputError naming the column.

May import numpy, pandas and atlas_data.{errors, features, jobs_table, portable, split}.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.features import (
    calendar_features,
    encode_on_train,
    history_features,
    prior_submits,
    train_categories,
    train_prior,
)
from atlas_data.jobs_table import read_jobs_source, validate_jobs
from atlas_data.portable import log1p
from atlas_data.split import assign_split, split_boundaries, split_ranges

#: the columns every jobs table contributes (present or defaulted by validate_jobs)
BASE_CATEGORICAL = ("tenant",)
BASE_NUMERIC = ("gpus",)
#: jobs-table columns that can never be features, and why
NEVER_FEATURES = {
    "job_id": "the job's own id",
    "submit_time": "already used through the calendar and history features",
    "duration": "the label: the true size",
    "predicted_duration": "a prediction, not a submit-time input",
    "weight": "a scheduling weight, not a property of the job",
    "split": "a reserved name", "p_star": "a reserved name", "y": "a reserved name", "sig": "a reserved name",
}
#: name tokens of post-execution columns (end / start / completion times, run and wait times,
#: outcomes, placement): known only after the job ran or was placed
POST_EXECUTION_TOKENS = frozenset({
    "end", "ended", "finish", "finished", "start", "started", "deletion", "deleted", "scheduled", "completion",
    "completed", "runtime", "elapsed", "duration", "jct", "wait", "waiting", "queued", "queueing", "status", "state",
    "phase", "exit", "attained", "utilization", "utilisation", "util", "machine", "host", "placement", "worker",
})
#: compound names of post-execution columns (e.g. Philly's gpu_time = duration × num_gpus)
POST_EXECUTION_NAMES = frozenset({
    "gpu_time", "run_time", "cpu_time", "wall_time", "used_time", "queue_time", "queue_delay", "gpu_hours",
    "gpu_seconds", "gpu_secs",
})
#: tokens that mark a user's request made at submit time (e.g. requested_duration, time_limit)
REQUEST_TOKENS = frozenset({"requested", "request", "req", "limit", "plan", "planned", "estimate", "estimated", "expected"})
#: a numeric column whose rank correlation with the duration (or, for times never before the
#: submit, with the submit time) reaches this is a post-execution value in disguise
TRACKS_RHO = 0.99


@dataclass(frozen=True)
class FeatureColumns:
    """Which jobs-table columns are submit-time features, and of which kind."""

    categorical: tuple[str, ...] = BASE_CATEGORICAL
    numeric: tuple[str, ...] = BASE_NUMERIC
    utc_offset_s: float = 0.0  # the calendar features' clock: trace time + this offset

    @property
    def names(self) -> tuple[str, ...]:
        return self.categorical + self.numeric

    def as_dict(self) -> dict:
        return {"categorical": list(self.categorical), "numeric": list(self.numeric)}


def _tokens(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name))
    return {t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t}


def post_execution_reason(name: str) -> str | None:
    """Why a column name says "known only after the job ran", or None."""
    low = str(name).strip().lower()
    tokens = _tokens(name)
    if tokens & REQUEST_TOKENS:
        return None
    if low in POST_EXECUTION_NAMES or any(n in low for n in POST_EXECUTION_NAMES):
        return "a post-execution column (computed from what the job used)"
    hit = sorted(tokens & POST_EXECUTION_TOKENS)
    if hit:
        return f"a post-execution column (its name says '{hit[0]}': known only after the job ran or was placed)"
    return None


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 10:
        return float("nan")
    ra = pd.Series(a[ok]).rank().to_numpy()
    rb = pd.Series(b[ok]).rank().to_numpy()
    if ra.std() == 0 or rb.std() == 0:
        return float("nan")
    return float(np.corrcoef(ra, rb)[0, 1])


def check_feature_columns(source: pd.DataFrame, jobs: pd.DataFrame, names, path: str,
                          base: FeatureColumns = FeatureColumns()) -> tuple[FeatureColumns, pd.DataFrame]:
    """Validate the user's `--feature-columns` against the file they come from.

    `source` is the file as read (before validation), row-aligned with the validated `jobs`.
    Returns the feature declaration (text → categorical, numbers → numeric, on top of `base`)
    and the columns' values, row-aligned with `jobs`. Raises InputError on the first bad name.
    """
    names = [str(n).strip() for n in names if str(n).strip()]
    for name in names:
        if name not in source.columns:
            present = ", ".join(map(str, source.columns))
            raise InputError(f"--feature-columns names a column the file does not have (columns present: {present})",
                             path=path, where=f"column '{name}'")
    dup = next((n for i, n in enumerate(names) if n in names[:i]), None)
    if dup is not None:
        raise InputError("--feature-columns names this column twice", path=path, where=f"column '{dup}'")
    submit = jobs["submit_time"].to_numpy(np.float64)
    duration = jobs["duration"].to_numpy(np.float64)
    gpus = jobs["gpus"].to_numpy(np.float64)
    categorical, numeric, values = list(base.categorical), list(base.numeric), {}
    for name in names:
        where = f"column '{name}'"
        if name in NEVER_FEATURES or name in base.names:
            why = NEVER_FEATURES.get(name) or "already a feature of every jobs table"
            raise InputError(f"--feature-columns: '{name}' cannot be a feature ({why})", path=path, where=where)
        reason = post_execution_reason(name)
        if reason:
            raise InputError(f"--feature-columns: '{name}' is {reason} and can never be a feature "
                             "(docs/real-traces.md#which-columns-can-be-features)", path=path, where=where)
        raw = source[name].reset_index(drop=True)
        text = _text(raw)
        empty = raw.isna().to_numpy() | (text == "").to_numpy()
        if empty.all():
            raise InputError("--feature-columns: the column is empty in every row", path=path, where=where)
        if not empty.any() and text.nunique() == 1:  # a learner drops such a column without a word
            raise InputError(f"--feature-columns: the column has one value in every row ({text.iat[0]!r}), "
                             "so it cannot tell jobs apart", path=path, where=where)
        if pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
            x = raw.to_numpy(np.float64, na_value=np.nan)
            rho = max((_spearman(x, d) for d in (duration, duration * gpus)), key=lambda r: abs(np.nan_to_num(r)))
            if np.isfinite(rho) and abs(rho) >= TRACKS_RHO:
                raise InputError(f"--feature-columns: the values track the duration (Spearman ρ = {rho:.3f}): a "
                                 "post-execution value, not a submit-time input", path=path, where=where)
            finite = np.isfinite(x)
            if finite.any() and np.all(x[finite] >= submit[finite]):
                rho_t = np.nanmax([_spearman(x, submit), _spearman(x - submit, duration), -np.inf])
                if rho_t >= TRACKS_RHO:
                    raise InputError(f"--feature-columns: the values are never before the submit time and follow it "
                                     f"or the duration (Spearman ρ = {rho_t:.3f}): a start or end time, known only "
                                     "after the job ran", path=path, where=where)
            numeric.append(name)
            values[name] = x
        else:
            categorical.append(name)
            values[name] = text.to_numpy(object)
    return (FeatureColumns(tuple(categorical), tuple(numeric), base.utc_offset_s),
            pd.DataFrame(values, index=jobs.index))


def read_jobs_with_features(path: str | os.PathLike, names, columns: dict[str, str] | None = None,
                            option: str = "--columns", frame: pd.DataFrame | None = None
                            ) -> tuple[pd.DataFrame, FeatureColumns]:
    """A jobs-table file (or `frame`, a table in memory that `path` names) with the user's feature
    columns kept beside the jobs-table columns.

    `columns` maps jobs-table columns to the file's own names (given by the command-line `option`,
    `--columns` or `--train-columns`); feature columns are named as in the file.
    """
    df, places = read_jobs_source(path, columns, option, frame=frame)
    jobs = validate_jobs(df, str(path), places=places)
    columns, values = check_feature_columns(df, jobs, names, str(path))
    return pd.concat([jobs, values], axis=1), columns


def require_columns(jobs: pd.DataFrame, columns: FeatureColumns, where: str) -> None:
    missing = [c for c in columns.names if c not in jobs.columns]
    if missing:
        raise InputError(f"feature column(s) {', '.join(missing)} missing from the jobs table", path=where)


# ----- the dataset ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JobsDataset:
    """A jobs table as a prediction dataset: the ATLAS-layout frame, its feature list and vocabulary."""

    frame: pd.DataFrame
    features: tuple[str, ...]
    columns: FeatureColumns
    categories: dict = field(default_factory=dict)  # categorical column -> train vocabulary

    def card(self) -> dict:
        counts = self.frame["split"].value_counts()
        return {"features": list(self.features), "feature_columns": self.columns.as_dict(),
                "counts": {s: int(counts.get(s, 0)) for s in ("train", "val", "test")},
                "splits": split_ranges(self.frame)}


def _signature(jobs: pd.DataFrame, columns: FeatureColumns) -> pd.Series:
    parts = [_text(jobs[c]) for c in columns.categorical]
    for c in columns.numeric:
        x = pd.to_numeric(jobs[c], errors="coerce").to_numpy(np.float64)
        with np.errstate(invalid="ignore"):
            bucket = np.where(np.isfinite(x), np.rint(np.log2(1.0 + np.abs(np.nan_to_num(x)))), np.nan)
        parts.append(pd.Series(bucket).map(lambda b: "nan" if b != b else str(int(b))))
    if not parts:
        return pd.Series([""] * len(jobs))
    return parts[0].str.cat(parts[1:], sep="|") if len(parts) > 1 else parts[0]


def _text(values: pd.Series) -> pd.Series:
    """A categorical column as stripped text, missing cells as ""."""
    return values.fillna("").astype(str).str.strip().reset_index(drop=True)


def _key(values: pd.Series, missing_is_unknown: bool = True) -> np.ndarray:
    text = _text(values)
    key = pd.factorize(text)[0].astype(np.int64)
    if missing_is_unknown:
        key[(text == "").to_numpy()] = -1
    return key


def _split(submit: np.ndarray, holdout_test: bool, where: str) -> np.ndarray:
    """70/15/15 by submit time (atlas_data.split); without a test part, train/val in the same 70 : 15 ratio."""
    if holdout_test:
        try:
            t_val, t_test = split_boundaries(submit)
            return assign_split(pd.DataFrame({"submit_time": submit}), t_val, t_test)["split"].to_numpy(object)
        except InputError as exc:
            if exc.path:
                raise
            raise InputError(exc.problem, path=where, where=exc.where) from None
    t_val, _ = split_boundaries(submit, fractions=(0.70 / 0.85, 0.15 / 0.85))
    split = np.where(submit < t_val, "train", "val").astype(object)
    for name in ("train", "val"):
        if not (split == name).any():
            raise InputError(f"the {name} part of the training jobs is empty (too few distinct submit times)", path=where)
    return split


def jobs_dataset(jobs: pd.DataFrame, columns: FeatureColumns, *, categories: dict | None = None,
                 holdout_test: bool = True, where: str = "jobs table") -> JobsDataset:
    """Jobs table (+ its feature columns) -> the prediction dataset; see the module docstring.

    `categories` (categorical column -> vocabulary) replaces the train vocabularies, so that a
    model fitted on another trace reads this trace's categories with its own codes (unseen → −1).
    `holdout_test=False` (the training trace of a transfer) splits train/val only, 70 : 15.
    """
    require_columns(jobs, columns, where)
    jobs = jobs.sort_values(["submit_time", "job_id"], kind="stable").reset_index(drop=True)
    submit = jobs["submit_time"].to_numpy(np.float64)
    p_star = jobs["duration"].to_numpy(np.float64)
    y = log1p(p_star)
    finish = submit + p_star  # the earliest the label can be known (a jobs table has no end times)
    split = _split(submit, holdout_test, where)
    train = split == "train"
    row_order = np.argsort(np.argsort(jobs["job_id"].astype(str).to_numpy(object), kind="stable"), kind="stable")

    parts = {}
    for c in columns.numeric:
        x = pd.to_numeric(jobs[c], errors="coerce").to_numpy(np.float64)
        parts[f"log_{c}"] = np.sign(x) * log1p(np.abs(x))
    vocab = {}
    for c in columns.categorical:
        text = _text(jobs[c])
        vocab[c] = (train_categories(text, train, missing_is_unknown=True) if categories is None or c not in categories
                    else np.asarray(categories[c], dtype=str))
        parts[f"{c}_code"] = encode_on_train(text, train, missing_is_unknown=True, categories=vocab[c]).astype(float)
    calendar = calendar_features(jobs, utc_offset_s=columns.utc_offset_s)
    parts.update({k: calendar[k].to_numpy() for k in calendar.columns})

    sig = _signature(jobs, columns)
    keys = {c: _key(jobs[c]) for c in columns.categorical}
    keys["sig"] = _key(sig, missing_is_unknown=False)
    for name, key in keys.items():
        parts[f"{name}_prior_submits"] = prior_submits(key, submit, row_order)
    prior = train_prior(submit, finish, y, train)
    train_stats = history_features({"sig": keys["sig"]}, submit, finish, y, prior, use_as_event=train, prefix="x")
    parts.update({"sig_train_count": train_stats["x_sig_count"].to_numpy(),
                  "sig_train_mean_eb": train_stats["x_sig_mean_eb"].to_numpy(),
                  "sig_train_ewma": train_stats["x_sig_ewma"].to_numpy()})
    hist = history_features(keys, submit, finish, y, prior)
    parts.update({k: hist[k].to_numpy() for k in hist.columns})

    features = tuple(parts)
    user_column = columns.categorical[0] if columns.categorical else None
    frame = pd.DataFrame({
        "job_id": jobs["job_id"].astype(str).to_numpy(object),
        "submit_time": submit,
        "user": (_text(jobs[user_column]).to_numpy(object) if user_column else ""),
        "group": sig.to_numpy(object),
        "is_recurrent": prior_submits(keys["sig"], submit, row_order, counted=train) > 0,
    })
    frame = pd.concat([frame, pd.DataFrame(parts).astype(float)], axis=1)
    frame["p_star"] = p_star
    frame["y"] = y
    frame["split"] = split.astype(str)
    return JobsDataset(frame, features, columns, vocab)


# ----- transfer: fit on one trace, predict another ------------------------------------------------------
def transfer_dataset(source: pd.DataFrame, source_columns: FeatureColumns, target: pd.DataFrame,
                     target_columns: FeatureColumns, *, same_clock: bool, where: str = "--train-jobs"
                     ) -> tuple[JobsDataset, JobsDataset, dict]:
    """(training dataset, target dataset, notes): a model fitted on `source` predicts `target`'s test part.

    The target is split 70/15/15 and featurised on its own (its history features come from its
    own earlier jobs, exactly as without transfer); its categories are encoded with the source's
    vocabulary. The source loses every job that is also in the target (by job_id) when both come
    from one trace family (`same_clock`: one time axis), and then also every job that had not
    finished (submit + duration) before the target's test part begins — so the model never learns
    from the target's own jobs nor from anything later than the target's test period's start.
    The source is split 70 : 15 into train and validation, with no test part.
    """
    notes = {"source_jobs": int(len(source))}
    if same_clock:
        _, t_test = split_boundaries(target["submit_time"].to_numpy(np.float64))
        shared = source["job_id"].astype(str).isin(set(target["job_id"].astype(str)))
        late = (source["submit_time"] + source["duration"]).to_numpy(np.float64) > t_test
        notes["dropped_target_jobs"] = int(shared.sum())
        notes["dropped_after_target_test_start"] = int((late & ~shared.to_numpy()).sum())
        source = source[~shared.to_numpy() & ~late]
    if len(source) < 3:
        raise InputError(f"the training jobs keep {len(source)} jobs once the target's own and later jobs are "
                         "removed; choose another --train-jobs", where=where)
    source_ds = jobs_dataset(source, source_columns, holdout_test=False, where=where)
    target_ds = jobs_dataset(target, target_columns, categories=source_ds.categories)
    common = tuple(f for f in source_ds.features if f in target_ds.features)
    notes["features_dropped"] = sorted(set(source_ds.features) ^ set(target_ds.features))
    notes["source_jobs_used"] = int(len(source))
    return (JobsDataset(source_ds.frame, common, source_ds.columns, source_ds.categories),
            JobsDataset(target_ds.frame, common, target_ds.columns, target_ds.categories), notes)
