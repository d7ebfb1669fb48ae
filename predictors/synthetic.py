"""A small, fast stand-in for an ATLAS dataset frame, following the dataset contract exactly.

Used by the predictor tests (tiny frames) and by `benchmark perf --predictors` (500 k train jobs)
so neither depends on the raw-trace pipeline. The generator has real signal of the kinds the
paper reports: recurring job groups with their own typical duration (the strongest signal),
resources, a weak diurnal effect, and heavy-tailed noise. Features are computed leakage-safely:
categorical codes and signature statistics from train only (unseen -> -1; train rows out-of-fold), history
statistics as one-step-lagged expanding means and EWMAs in submit order.

May import numpy, pandas and atlas_data.build (the fingerprint rule) only.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd

DAY_S = 86_400.0

FEATURES = (
    "log_cpu",
    "log_gpu",
    "log_mem",
    "log_instances",
    "log_tasks",
    "gpu_per_instance",
    "hour_sin",
    "hour_cos",
    "day_of_week",
    "is_weekend",
    "user_code",
    "group_code",
    "sig_train_mean_y",
    "sig_train_count",
    "hist_mean_y",
    "hist_count",
    "hist_ewm_y",
)


def make_frame(n_jobs: int = 3000, *, seed: int = 0, n_groups: int | None = None, days: float = 30.0) -> pd.DataFrame:
    """One row per job with the columns of an ATLAS `atlas.parquet` (contract in docs/data-formats.md)."""
    rng = np.random.default_rng(seed)
    n_groups = n_groups or max(20, n_jobs // 25)
    n_users = max(5, n_groups // 6)

    group_user = rng.integers(0, n_users, n_groups)
    group_mu = rng.normal(6.5, 1.8, n_groups)  # log-seconds: minutes to days
    group_gpu = rng.choice([0.25, 0.5, 1.0, 2.0, 4.0, 8.0], n_groups, p=[0.1, 0.2, 0.35, 0.15, 0.1, 0.1])
    group_inst = rng.choice([1, 1, 1, 2, 4, 8], n_groups)
    popularity = rng.pareto(1.2, n_groups) + 0.05

    submit = np.sort(rng.uniform(0.0, days * DAY_S, n_jobs))
    # Groups appear over time: a job of group g can only come after the group's birth.
    birth = rng.uniform(-0.5, 1.0, n_groups).clip(0.0) * days * DAY_S * 0.8
    group = np.empty(n_jobs, dtype=np.int64)
    probs = popularity / popularity.sum()
    draws = rng.choice(n_groups, size=n_jobs, p=probs)
    alive = birth[draws] <= submit
    # Jobs drawn from a not-yet-born group go to the most popular group already alive.
    fallback = int(np.argmin(birth))
    group[:] = np.where(alive, draws, fallback)

    user = group_user[group]
    gpu = group_gpu[group] * rng.choice([1.0, 1.0, 1.0, 0.5, 2.0], n_jobs)
    instances = np.maximum(1, group_inst[group] * rng.choice([1, 1, 1, 2], n_jobs))
    tasks = rng.choice([1, 1, 1, 2, 3], n_jobs)
    cpu = np.round(gpu * rng.uniform(400, 1200, n_jobs) + 100, -1)
    mem = np.round(cpu / 100 * rng.uniform(2, 8, n_jobs), 1)
    hour = (submit / 3600.0) % 24
    dow = (submit // DAY_S) % 7

    y = (
        group_mu[group]
        + 0.35 * np.log1p(gpu)
        + 0.15 * np.log1p(instances)
        + 0.25 * np.sin(2 * np.pi * hour / 24)
        + rng.standard_t(4, n_jobs) * 0.45
    )
    y = np.clip(y, np.log1p(5.0), np.log1p(30 * DAY_S))
    p_star = np.round(np.expm1(y), 3)
    y = np.log1p(p_star)

    n_train, n_val = int(0.70 * n_jobs), int(0.85 * n_jobs)
    split = np.array(["train"] * n_train + ["val"] * (n_val - n_train) + ["test"] * (n_jobs - n_val))

    frame = pd.DataFrame(
        {
            "job_id": [f"j{i:07d}" for i in range(n_jobs)],
            "submit_time": submit,
            "user": [f"u{u}" for u in user],
            "group": [f"g{g}" for g in group],
            "log_cpu": np.log1p(cpu),
            "log_gpu": np.log1p(gpu),
            "log_mem": np.log1p(mem),
            "log_instances": np.log1p(instances),
            "log_tasks": np.log1p(tasks),
            "gpu_per_instance": gpu / instances,
            "hour_sin": np.sin(2 * np.pi * hour / 24),
            "hour_cos": np.cos(2 * np.pi * hour / 24),
            "day_of_week": dow.astype(float),
            "is_weekend": (dow >= 5).astype(float),
        }
    )
    train = split == "train"
    frame["user_code"] = _codes(frame["user"], train)
    frame["group_code"] = _codes(frame["group"], train)
    sig_mean, sig_count = _signature_stats(group, y, train)
    frame["sig_train_mean_y"] = sig_mean
    frame["sig_train_count"] = sig_count
    hist_mean, hist_count, hist_ewm = _history(group, y, submit, p_star)
    frame["hist_mean_y"] = hist_mean
    frame["hist_count"] = hist_count
    frame["hist_ewm_y"] = hist_ewm
    frame["is_recurrent"] = hist_count > 0
    frame["p_star"] = p_star
    frame["y"] = y
    frame["split"] = split
    return frame


def card_for(frame: pd.DataFrame, source: str = "synthetic-frame") -> dict:
    """A `dataset.json`-shaped card for a frame made here (fingerprint over the frame's bytes)."""
    digest = hashlib.sha256(pd.util.hash_pandas_object(frame, index=False).values.tobytes()).hexdigest()
    splits = {
        s: [float(frame.loc[frame["split"] == s, "submit_time"].min()), float(frame.loc[frame["split"] == s, "submit_time"].max())]
        for s in ("train", "val", "test")
    }
    return {
        "source": source,
        "counts": {s: int((frame["split"] == s).sum()) for s in ("train", "val", "test")},
        "features": list(FEATURES),
        "splits": splits,
        "fingerprint": digest,
    }


def write_dataset(frame: pd.DataFrame, out_dir, source: str = "synthetic-frame") -> dict:
    """Write `atlas.parquet` + `dataset.json` (fingerprint = the dataset content hash, as `data build` does)."""
    import json
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    frame.to_parquet(out / "atlas.parquet", index=False)
    card = card_for(frame, source)
    from atlas_data.build import FINGERPRINT_KIND, content_fingerprint

    card["fingerprint"] = content_fingerprint(pd.read_parquet(out / "atlas.parquet"))
    card["fingerprint_kind"] = FINGERPRINT_KIND
    (out / "dataset.json").write_text(json.dumps(card, indent=2) + "\n")
    return card


def _codes(values: pd.Series, train: np.ndarray) -> np.ndarray:
    categories = pd.Index(pd.unique(values[train]))
    return categories.get_indexer(values).astype(float)  # unseen -> -1


def _signature_stats(group: np.ndarray, y: np.ndarray, train: np.ndarray, lam: float = 5.0, folds: int = 5):
    """EB-shrunk train mean of y per group; train rows get out-of-fold values (their own label
    never enters their own statistic, which would make the feature look better on train)."""
    size = group.max() + 1
    mu0 = y[train].mean()

    def table(rows):
        n = np.bincount(group[rows], minlength=size).astype(float)
        s = np.bincount(group[rows], weights=y[rows], minlength=size)
        return (s + lam * mu0) / (n + lam), n

    shrunk, n = table(train)
    mean, count = shrunk[group], n[group]
    train_idx = np.flatnonzero(train)
    fold = np.arange(train_idx.size) % folds
    for k in range(folds):
        rows_in = np.zeros_like(train)
        rows_in[train_idx[fold != k]] = True
        sk, nk = table(rows_in)
        held = train_idx[fold == k]
        mean[held], count[held] = sk[group[held]], nk[group[held]]
    return mean, count


def _history(group: np.ndarray, y: np.ndarray, submit: np.ndarray, p_star: np.ndarray, alpha: float = 0.3):
    """Per-group statistics over jobs that finished before this job was submitted."""
    n = len(group)
    end = submit + p_star
    order_end = np.argsort(end, kind="stable")
    mean = np.full(n, np.nan)
    count = np.zeros(n)
    ewm = np.full(n, np.nan)
    g_sum: dict[int, float] = {}
    g_cnt: dict[int, int] = {}
    g_ewm: dict[int, float] = {}
    k = 0
    for j in range(n):  # submit order
        t = submit[j]
        while k < n and end[order_end[k]] <= t:
            i = order_end[k]
            g = int(group[i])
            g_sum[g] = g_sum.get(g, 0.0) + y[i]
            g_cnt[g] = g_cnt.get(g, 0) + 1
            g_ewm[g] = y[i] if g not in g_ewm else alpha * y[i] + (1 - alpha) * g_ewm[g]
            k += 1
        g = int(group[j])
        c = g_cnt.get(g, 0)
        if c:
            count[j] = c
            mean[j] = g_sum[g] / c
            ewm[j] = g_ewm[g]
    return mean, count, ewm
