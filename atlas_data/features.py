"""Submit-time features of the ATLAS dataset (docs/data-formats.md), leakage-safe by construction.

Input: kept, labelled jobs with a `split` column (one row per job). Output: the same rows with
the model feature columns of `FEATURES` and the `is_recurrent` flag. Every feature of job j is a
function of (a) submit-time attributes of jobs submitted up to j, (b) the set of categories
seen in train (encoders) and (c) labels y = log1p(p*) of jobs that *finished before j was
submitted* (finish_time ≤ submit_time_j). Hence perturbing any label of a job submitted after
time T leaves every feature of every job submitted before T unchanged (the leakage test).

Families:
- resources: log1p of cpu / gpu / mem / instances / tasks / largest task, and per-instance ratios;
- calendar (UTC+8 wall clock: local = t + 8 h): hour as sin/cos, day of week (Mon = 0), weekend;
- categoricals: user, group, workload, gpu_type_spec label-encoded on train categories (sorted),
  unseen → −1 (a missing group is −1 too);
- recurrence signature = (user, group, workload, gpu_type_spec, ⌊log2(1+gpu)⌉, ⌊log2(1+cpu)⌉,
  ⌊log2 instances⌉). `sig_prior_submits` / `group_prior_submits` / `user_prior_submits` count
  earlier submissions (label-free). `is_recurrent` = a *train* job with the same signature was
  submitted earlier (for validation/test jobs: the signature occurs in train, as in the paper's
  "recurrent" test jobs; label-free, so it is leakage-safe).
  `sig_train_*` are statistics over *train* jobs only (count, EB-shrunk mean, EWMA of y);
- history: expanding count, EB-shrunk mean and EWMA (α = 0.3, in finish order) of y per user,
  group and signature over all earlier-finished jobs.

Empirical-Bayes shrinkage, λ = 5: μ̄ = (n μ + λ μ0)/(n + λ), where μ0 is the train mean of y,
taken — to stay causal for train rows too — over the train jobs finished before the job's
submission (for validation/test jobs this is, in practice, the whole train set). An EWMA with
no history is μ0. Before any train job has finished μ0 = `PRIOR_FALLBACK`.

May import: numpy, pandas, atlas_data.portable.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from atlas_data.portable import log1p

EB_LAMBDA = 5.0
EWMA_ALPHA = 0.3
UTC8 = 8 * 3600
DAY = 86_400
#: μ0 before any train job has finished (only the first minutes of a trace): log1p(10 min)
PRIOR_FALLBACK = float(log1p(600.0))

RESOURCE_FEATURES = ["log_cpu", "log_gpu", "log_mem", "log_instances", "log_tasks", "log_max_task_instances",
                     "log_cpu_per_inst", "log_gpu_per_inst", "log_mem_per_inst"]
CALENDAR_FEATURES = ["hour_sin", "hour_cos", "day_of_week", "is_weekend"]
CATEGORICAL_FEATURES = ["user_code", "group_code", "workload_code", "gpu_spec_code"]
RECURRENCE_FEATURES = ["sig_prior_submits", "group_prior_submits", "user_prior_submits",
                       "sig_train_count", "sig_train_mean_eb", "sig_train_ewma"]
HISTORY_KEYS = ("user", "group", "sig")
HISTORY_FEATURES = [f"hist_{k}_{s}" for k in HISTORY_KEYS for s in ("count", "mean_eb", "ewma")]
FEATURES = RESOURCE_FEATURES + CALENDAR_FEATURES + CATEGORICAL_FEATURES + RECURRENCE_FEATURES + HISTORY_FEATURES

#: columns that must never reach the dataset (post-execution or placement facts)
FORBIDDEN = ("first_start", "last_end", "finish_time", "end_time", "machine", "worker_name", "gpu_type",
             "status", "n_timed_instances")


# ---------------------------------------------------------------------------------------------
# stateless families


def resource_features(jobs: pd.DataFrame) -> pd.DataFrame:
    n_inst = np.maximum(jobs["n_instances"].to_numpy(dtype=float), 1.0)
    cpu, gpu, mem = (jobs[c].to_numpy(dtype=float) for c in ("cpu", "gpu", "mem"))
    return pd.DataFrame({
        "log_cpu": log1p(cpu), "log_gpu": log1p(gpu), "log_mem": log1p(mem),
        "log_instances": log1p(n_inst), "log_tasks": log1p(jobs["n_tasks"].to_numpy(dtype=float)),
        "log_max_task_instances": log1p(jobs["max_task_instances"].to_numpy(dtype=float)),
        "log_cpu_per_inst": log1p(cpu / n_inst), "log_gpu_per_inst": log1p(gpu / n_inst),
        "log_mem_per_inst": log1p(mem / n_inst),
    }, index=jobs.index)


def calendar_features(jobs: pd.DataFrame, utc_offset_s: float = UTC8) -> pd.DataFrame:
    """Hour (sin/cos), day of week and weekend of the submit, on the clock `utc_offset_s` ahead of t."""
    local = jobs["submit_time"].to_numpy(dtype=float) + utc_offset_s
    hour = np.mod(local, DAY) / 3600.0
    dow = np.mod(np.floor(local / DAY) + 3, 7)  # 1970-01-01 was a Thursday; Monday = 0
    return pd.DataFrame({
        "hour_sin": np.sin(2 * np.pi * hour / 24), "hour_cos": np.cos(2 * np.pi * hour / 24),
        "day_of_week": dow, "is_weekend": (dow >= 5).astype(float),
    }, index=jobs.index)


def signature(jobs: pd.DataFrame) -> pd.Series:
    """Recurrence signature string: (user, group, workload, gpu_type_spec, bucketed resources)."""
    b_gpu = np.rint(np.log2(1 + jobs["gpu"].to_numpy(dtype=float))).astype(np.int64)
    b_cpu = np.rint(np.log2(1 + jobs["cpu"].to_numpy(dtype=float))).astype(np.int64)
    b_inst = np.rint(np.log2(np.maximum(jobs["n_instances"].to_numpy(dtype=float), 1))).astype(np.int64)
    buckets = pd.Series(b_gpu.astype(str), index=jobs.index).str.cat(
        [pd.Series(b_cpu.astype(str), index=jobs.index), pd.Series(b_inst.astype(str), index=jobs.index)], sep=".")
    return jobs["user"].astype("str").str.cat(
        [jobs["group"].astype("str"), jobs["workload"].astype("str"), jobs["gpu_type_spec"].astype("str"), buckets], sep="|")


def train_categories(values: pd.Series, train: np.ndarray, missing_is_unknown: bool = False) -> np.ndarray:
    """The sorted categories seen in train (the encoder's vocabulary); "" left out when it means missing."""
    cats = np.sort(pd.unique(values.astype("str")[train].to_numpy(dtype=object)).astype(str))
    return cats[cats != ""] if missing_is_unknown else cats


def encode_on_train(values: pd.Series, train: np.ndarray, missing_is_unknown: bool = False,
                    categories: np.ndarray | None = None) -> np.ndarray:
    """Label codes of the sorted train categories (or of a given vocabulary); unseen (and, optionally, empty) -> -1."""
    values = values.astype("str")
    cats = train_categories(values, train, missing_is_unknown) if categories is None else np.asarray(categories, dtype=str)
    codes = pd.Categorical(values.to_numpy(dtype=object), categories=cats).codes.astype(np.int64)
    if missing_is_unknown:
        codes[(values == "").to_numpy()] = -1
    return codes


def prior_submits(keys: np.ndarray, submit: np.ndarray, job_order: np.ndarray,
                  counted: np.ndarray | None = None) -> np.ndarray:
    """Number of jobs with the same key submitted strictly earlier (label-free); -1 keys -> 0.

    With `counted`, only the flagged jobs are counted (e.g. train jobs for `is_recurrent`).
    """
    order = np.lexsort((job_order, submit))
    mask = np.ones(len(keys)) if counted is None else np.asarray(counted, dtype=float)
    df = pd.DataFrame({"k": keys[order], "t": submit[order], "m": mask[order]})
    # inclusive running counts per key and per (key, instant): their difference counts only
    # jobs submitted strictly before (a job never counts one submitted at the same instant)
    per_key = df.groupby("k", sort=False)["m"].cumsum().to_numpy()
    per_instant = df.groupby(["k", "t"], sort=False)["m"].cumsum().to_numpy()
    out = np.empty(len(keys), dtype=float)
    out[order] = np.where(keys[order] >= 0, per_key - per_instant, 0)
    return out


# ---------------------------------------------------------------------------------------------
# causal statistics


def causal_stats(keys: np.ndarray, submit: np.ndarray, finish: np.ndarray, y: np.ndarray,
                 use_as_event: np.ndarray | None = None, alpha: float = EWMA_ALPHA) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per job: (count, mean, ewma) of y over events with the same key and finish ≤ the job's submit.

    Events are the jobs flagged in `use_as_event` (default all) with key ≥ 0, ordered by finish
    time (ties by row); the EWMA is the pandas `adjust=True` EWMA in that order. Jobs with no
    matching event get count 0 and NaN mean/ewma.
    """
    n = len(keys)
    keys = np.asarray(keys, dtype=np.int64)
    use = keys >= 0 if use_as_event is None else (np.asarray(use_as_event, bool) & (keys >= 0))
    ev_idx = np.flatnonzero(use)
    count = np.zeros(n)
    mean = np.full(n, np.nan)
    ewma = np.full(n, np.nan)
    if len(ev_idx) == 0:
        return count, mean, ewma
    ev_order = ev_idx[np.lexsort((ev_idx, finish[ev_idx], keys[ev_idx]))]
    ev = pd.DataFrame({"key": keys[ev_order], "t": finish[ev_order].astype(float), "y": y[ev_order].astype(float)})
    grp = ev.groupby("key", sort=False)
    ev["cnt"] = grp.cumcount().to_numpy() + 1.0
    ev["csum"] = grp["y"].cumsum().to_numpy()
    ew = grp["y"].ewm(alpha=alpha, adjust=True).mean()
    ev["ewma"] = ew.reset_index(level=0, drop=True).sort_index().to_numpy()
    ev = ev.sort_values(["t", "key", "cnt"], kind="stable")

    q_idx = np.flatnonzero(keys >= 0)
    q = pd.DataFrame({"key": keys[q_idx], "t": submit[q_idx].astype(float), "row": q_idx})
    q = q.sort_values(["t", "row"], kind="stable")
    m = pd.merge_asof(q, ev[["key", "t", "cnt", "csum", "ewma"]], on="t", by="key",
                      direction="backward", allow_exact_matches=True)
    rows = m["row"].to_numpy()
    cnt = m["cnt"].to_numpy(dtype=float)
    hit = np.isfinite(cnt)
    count[rows[hit]] = cnt[hit]
    mean[rows[hit]] = m["csum"].to_numpy(dtype=float)[hit] / cnt[hit]
    ewma[rows[hit]] = m["ewma"].to_numpy(dtype=float)[hit]
    return count, mean, ewma


def shrink(count: np.ndarray, mean: np.ndarray, prior: np.ndarray, lam: float = EB_LAMBDA) -> np.ndarray:
    """Empirical-Bayes shrinkage (n μ + λ μ0)/(n + λ); no history -> μ0."""
    mu = np.where(count > 0, np.nan_to_num(mean), 0.0)
    return (count * mu + lam * prior) / (count + lam)


def train_prior(submit: np.ndarray, finish: np.ndarray, y: np.ndarray, train: np.ndarray) -> np.ndarray:
    """μ0 per job: mean y of the train jobs finished by its submit (`PRIOR_FALLBACK` before any)."""
    zero = np.zeros(len(submit), dtype=np.int64)
    n0, m0, _ = causal_stats(zero, submit, finish, y, use_as_event=train)
    return np.where(n0 > 0, m0, PRIOR_FALLBACK)


def history_features(keys: dict[str, np.ndarray], submit: np.ndarray, finish: np.ndarray, y: np.ndarray,
                     prior: np.ndarray, use_as_event: np.ndarray | None = None, prefix: str = "hist") -> pd.DataFrame:
    """`{prefix}_{name}_count|mean_eb|ewma` per key: causal count, EB-shrunk mean and EWMA of y.

    Over the jobs with the same key (≥ 0) finished by the job's submit (only `use_as_event` ones
    when given); the mean shrinks to `prior` with λ = EB_LAMBDA, an empty history is the prior.
    """
    out = {}
    for name, key in keys.items():
        c, m, e = causal_stats(key, submit, finish, y, use_as_event=use_as_event)
        out[f"{prefix}_{name}_count"] = c
        out[f"{prefix}_{name}_mean_eb"] = shrink(c, m, prior)
        out[f"{prefix}_{name}_ewma"] = np.where(c > 0, e, prior)
    return pd.DataFrame(out)


# ---------------------------------------------------------------------------------------------
# the feature step


def add_features(jobs: pd.DataFrame) -> pd.DataFrame:
    """Labelled, split jobs -> the same rows plus `is_recurrent` and every column of FEATURES.

    Needs: job_name, submit_time, finish_time, y, split, user, group, workload, gpu_type_spec,
    cpu, gpu, mem, n_instances, n_tasks, max_task_instances.
    """
    jobs = jobs.reset_index(drop=True)
    submit = jobs["submit_time"].to_numpy(dtype=float)
    finish = jobs["finish_time"].to_numpy(dtype=float)
    y = jobs["y"].to_numpy(dtype=float)
    train = (jobs["split"] == "train").to_numpy()
    row_order = np.argsort(np.argsort(jobs["job_name"].to_numpy(dtype=object), kind="stable"), kind="stable")

    parts = [resource_features(jobs), calendar_features(jobs)]
    sig = signature(jobs)
    cats = pd.DataFrame({
        "user_code": encode_on_train(jobs["user"], train),
        "group_code": encode_on_train(jobs["group"], train, missing_is_unknown=True),
        "workload_code": encode_on_train(jobs["workload"], train),
        "gpu_spec_code": encode_on_train(jobs["gpu_type_spec"], train),
    }, index=jobs.index).astype(float)
    parts.append(cats)

    # keys over all rows (not train-fitted: they only say "same value", never a label)
    user_key = pd.factorize(jobs["user"].astype("str"))[0].astype(np.int64)
    group_key = pd.factorize(jobs["group"].astype("str"))[0].astype(np.int64)
    group_key[(jobs["group"].astype("str") == "").to_numpy()] = -1
    sig_key = pd.factorize(sig)[0].astype(np.int64)

    rec = pd.DataFrame(index=jobs.index)
    rec["sig_prior_submits"] = prior_submits(sig_key, submit, row_order)
    rec["group_prior_submits"] = prior_submits(group_key, submit, row_order)
    rec["user_prior_submits"] = prior_submits(user_key, submit, row_order)

    prior = train_prior(submit, finish, y, train)
    train_stats = history_features({"sig": sig_key}, submit, finish, y, prior, use_as_event=train, prefix="train")
    rec["sig_train_count"] = train_stats["train_sig_count"].to_numpy()
    rec["sig_train_mean_eb"] = train_stats["train_sig_mean_eb"].to_numpy()
    rec["sig_train_ewma"] = train_stats["train_sig_ewma"].to_numpy()
    parts.append(rec)

    hist = history_features({"user": user_key, "group": group_key, "sig": sig_key}, submit, finish, y, prior)
    parts.append(hist.set_axis(jobs.index))

    feats = pd.concat(parts, axis=1)[FEATURES].astype(float)
    out = pd.concat([jobs, feats], axis=1)
    out["is_recurrent"] = prior_submits(sig_key, submit, row_order, counted=train) > 0
    return out
