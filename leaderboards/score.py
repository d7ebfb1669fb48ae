"""Score validated predictions: prediction metrics, and p̂ through the predictive schedulers (docs/leaderboards.md).

- `score_prediction(preds, test)`: the entry schema's metrics of `predictors.metrics.evaluate` (RMSLE, Cov@25/50
  on all and on recurrent test jobs, Spearman, interval coverage / width when lo, hi are given)
  on the whole test split, with 95 % bootstrap intervals over test jobs for Cov@25 and RMSLE, and
  a binned p̂-vs-p summary (`calibration`) for the entry's plot.
- `score_scheduling(preds, test, blind_p_hat=...)`: the test split becomes a jobs table (job_id,
  submit_time, duration = p_star, predicted_duration = p̂), in (submit_time, job_id) order, cut into
  K = min(SCORE_WINDOWS, ⌊n_test / MIN_WINDOW_JOBS⌋) (at least 1) disjoint blocks of consecutive jobs
  (`score_windows`: ⌊n_test / K⌋ or ⌈n_test / K⌉ jobs each); window k of objective o is the first
  min(DATA_DEFAULT_N[o], |block k|) jobs of block k. Disjoint windows are what the paired ranking
  (leaderboards.ranking) needs: its test treats windows as independent. On each window, on the one
  simulator core:
    total_completion: `spjf`, `sprpt`   (ratio ΣC_j / ΣC_j(SRPT), plus flow_ratio)
    max_stretch:      `sprpt`, `edf-p`  (ratio max S_j / S*)
    makespan:         `lppt`, mean over m ∈ {5, 10, 20, 50, 100} of C_max / McNaughton bound
  each policy fed twice: with the submission's p̂ and with the *blind* p̂ (the same number for
  every job: the train median, what the built-in `constant` method predicts). The score of a
  window is

      score_k = exp( (1/3) Σ_o (1/|P_o|) Σ_{π ∈ P_o} log( ratio_π(p̂) / ratio_π(blind) ) )

  — each objective weighs one third whatever the size of its ratios (max-stretch ratios are in
  the hundreds, ΣC_j ratios near 1); < 1 is better than knowing nothing about sizes, 1 is the
  constant predictor, lower is better. The entry's score is the geometric mean over the windows,
  with a 95 % percentile-bootstrap interval (BOOTSTRAP_RESAMPLES resamples of the windows); the
  per-window scores (`score.values`) are what the paired ranking compares.
- `score_prediction` also keeps Cov@25 per scoring window (`windows`: the same disjoint blocks), the
  prediction track's paired comparison.
    fairness (shown, not scored): `astraea-p(revision=none)` beside plain `astraea` on each of WINDOWS seeded
                      windows (`sample_window`, seeds seed·WINDOWS + k) of n_f = min(FAIRNESS_N, ⌈n_test / FAIRNESS_WINDOW_SHARE⌉)
                      consecutive jobs (tenant = user, gpus = ⌈requested GPU % / 100⌉ ≥ 1 as in
                      `--task fairness --data`, lease 900 s, the fairness task's default definitions).
                      The cluster is 8-GPU nodes, as many as make the window's offered load Σ gpus·p /
                      span about FAIRNESS_TARGET_LOAD (100 %) of capacity; a gang larger than that
                      cluster is capped at its size (the `--task fairness --data` rule; counted in
                      `gpus_capped`). The size depends on true sizes only, so it is the same for every
                      submission. Per window: `slowdown_ratio` = avg slowdown(astraea-p) /
                      avg slowdown(astraea) — what p̂ mostly changes: the band serves the tenant whose
                      best job is predicted shortest —, `jct_ratio` the same for avg JCT, and the
                      paired differences astraea-p − astraea of the sharing-loss and tenant-loss
                      shares (`sharing_loss_delta`, `tenant_loss_delta`). Since astraea-p with one p̂
                      for every job is astraea, the constant predictor scores exactly 1 and 0.
                      Why these settings (load, window size): docs/leaderboards.md.
  Every per-window quantity is kept with its mean and interval (`summary`), so the renderer can
  tell which columns separate entries.

May import numpy, pandas, atlas_data, predictors.metrics, schedulers and leaderboards.store.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from atlas_data.build import test_jobs
from leaderboards.store import PREDICTION_METRICS
from schedulers.jobs import JobSet
from schedulers.objectives import DEFAULT_MACHINES, run_objective
from schedulers.sampling import DATA_DEFAULT_N, sample_window

OBJECTIVE_POLICIES = (
    ("total_completion", ("spjf", "sprpt")),
    ("max_stretch", ("sprpt", "edf-p")),
    ("makespan", ("lppt",)),
)
# (objective, policy) pairs whose ratios make the score, in table order.
SCORE_PARTS = tuple((objective, policy) for objective, policies in OBJECTIVE_POLICIES for policy in policies)
# Scoring windows: disjoint blocks of the test split. 32 so that a paired test can separate entries
# after a correction for every pair of a board (with 8 windows the smallest two-sided signed-rank
# p-value is 2/2^8 = 0.0078, above 0.05 / 45 for 10 entries: nothing could ever be separated). On
# the default dataset (2,710 test jobs) a window holds 84-85 jobs; p̂ still matters in every one:
# p̂ = p beats the blind p̂ in all 32 windows on each objective (ΣC_j, max S_j, C_max).
SCORE_WINDOWS = 32
MIN_WINDOW_JOBS = 5  # fewer windows on a smaller test split, so that a window is never one or two jobs
WINDOWS = 8  # seeded fairness windows (the ASTRAEA-P columns; shown, not ranked)
BOOTSTRAP_RESAMPLES = 2000
FAIRNESS_N = 5_000  # at most this many jobs in a fairness window
# A fairness window holds at most half the test split: on the default dataset a quarter (678 jobs)
# leaves too few queued jobs for p̂ to matter (p̂ = p moved avg slowdown by 1-3 %, inside the noise)
FAIRNESS_WINDOW_SHARE = 2
FAIRNESS_TENANT_COLUMN = "user"
GPUS_PER_NODE = 8
# offered load / capacity: at 0.8 the oracle's slowdown interval reached the learned predictors'
FAIRNESS_TARGET_LOAD = 1.0


def offered_load(jobs: JobSet) -> float:
    """Average GPUs busy if every job ran at once on submit: Σ gpus·p / (last submit − first submit)."""
    span = float(jobs.submit_time.max()) if jobs.n else 0.0
    work = float((jobs.gpus * jobs.size).sum())
    return work / span if span > 0 else work


def fairness_nodes(jobs: JobSet) -> int:
    """8-GPU nodes for an offered load of about FAIRNESS_TARGET_LOAD (never more than run every job at once).

    The largest gang does not size the cluster (it is capped instead, `capped_gangs`): on the
    default dataset one 256-GPU job per window would otherwise make every cluster 32 nodes, about
    half busy, whatever the load."""
    if not jobs.n:
        return 1
    by_load = math.ceil(offered_load(jobs) / (FAIRNESS_TARGET_LOAD * GPUS_PER_NODE))
    everyone = math.ceil(int(jobs.gpus.sum()) / GPUS_PER_NODE)  # more nodes than this never help
    return int(max(1, min(by_load, everyone)))


def capped_gangs(jobs: JobSet, nodes: int) -> tuple[JobSet, int]:
    """(jobs with every gang capped at the cluster's GPUs, how many were capped): `--task fairness --data`'s rule."""
    from dataclasses import replace

    total = nodes * GPUS_PER_NODE
    capped = int((jobs.gpus > total).sum())
    return (replace(jobs, gpus=np.minimum(jobs.gpus, total)) if capped else jobs), capped


def test_split(frame: pd.DataFrame) -> pd.DataFrame:
    """The test rows of a dataset frame, job_id as str, in file order."""
    test = frame[frame["split"] == "test"].reset_index(drop=True)
    return test.assign(job_id=test["job_id"].astype(str).to_numpy(object))


def _aligned(preds: pd.DataFrame, test: pd.DataFrame, column: str) -> np.ndarray:
    """preds[column] in the row order of `test` (validation guarantees every test id once)."""
    lookup = pd.Series(preds[column].to_numpy(np.float64), index=pd.Index(preds["job_id"].astype(str).to_numpy(object)))
    values = lookup.reindex(test["job_id"].astype(str).to_numpy(object)).to_numpy(np.float64)
    if np.isnan(values).any():
        raise ValueError(f"predictions do not cover the test split ({int(np.isnan(values).sum())} missing)")
    return values


def summary(values, *, seed: int = 0, geometric: bool = False) -> dict:
    """Mean of per-window values with a 95 % percentile-bootstrap interval of that mean.

    `geometric`: the mean and the interval are taken on log values (for ratios and scores).
    None values (a window where the quantity is undefined) are left out; no values: all None.
    """
    kept = np.asarray([v for v in values if v is not None and np.isfinite(v)], np.float64)
    out = {"values": [_num(v) for v in values], "mean": None, "lo": None, "hi": None}
    if not len(kept) or (geometric and (kept <= 0).any()):
        return out
    data = np.log(kept) if geometric else kept
    rng = np.random.default_rng([seed, 0xB007])
    means = data[rng.integers(0, len(data), size=(BOOTSTRAP_RESAMPLES, len(data)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    back = np.exp if geometric else (lambda x: x)
    out.update(mean=_num(back(data.mean())), lo=_num(back(lo)), hi=_num(back(hi)))
    return out


def score_prediction(preds: pd.DataFrame, test: pd.DataFrame, *, seed: int = 0) -> dict:
    from predictors.metrics import evaluate

    p_hat = _aligned(preds, test, "p_hat")
    p = test["p_star"].to_numpy(np.float64)
    lo = _aligned(preds, test, "lo") if "lo" in preds.columns else None
    hi = _aligned(preds, test, "hi") if "hi" in preds.columns else None
    metrics = evaluate(p_hat, p, test["is_recurrent"].to_numpy(bool), lo, hi)
    # an entry holds the metrics of its schema (leaderboards.store.PREDICTION_METRICS), not every metric
    # the prediction task reports (the under-prediction mass `under_log` is not part of the entries)
    return {"n_jobs": int(len(test)), **{k: _num(metrics[k]) for k in PREDICTION_METRICS},
            "intervals": _job_bootstrap(p_hat, p, seed), "calibration": calibration(p_hat, p),
            "windows": window_cov25(p_hat, p, test)}


def window_cov25(p_hat: np.ndarray, p: np.ndarray, test: pd.DataFrame) -> dict:
    """Cov@25 on each scoring window (`score_windows`, the scheduling track's blocks): the prediction
    track's paired comparison. `jobs`: jobs per window."""
    order = _in_order(pd.DataFrame({"job_id": test["job_id"].to_numpy(object), "submit_time": test["submit_time"].to_numpy(),
                                    "row": np.arange(len(test))}))["row"].to_numpy()
    within = (np.abs(p_hat - p) <= 0.25 * p)[order]
    blocks = score_windows(len(test))
    return {"jobs": [int(len(b)) for b in blocks], "cov25": [_num(within[b].mean()) for b in blocks]}


def _job_bootstrap(p_hat: np.ndarray, p: np.ndarray, seed: int) -> dict:
    """95 % bootstrap intervals over test jobs of Cov@25 and RMSLE (the prediction track's keys)."""
    rng = np.random.default_rng([seed, 0xC0F])
    within = (np.abs(p_hat - p) <= 0.25 * p).astype(np.float64)
    sq = (np.log1p(p_hat) - np.log1p(p)) ** 2
    idx = rng.integers(0, len(p), size=(BOOTSTRAP_RESAMPLES // 2, len(p)))
    cov = np.percentile(within[idx].mean(axis=1), [2.5, 97.5])
    rmsle = np.percentile(np.sqrt(sq[idx].mean(axis=1)), [2.5, 97.5])
    return {"cov25": [_num(cov[0]), _num(cov[1])], "rmsle": [_num(rmsle[0]), _num(rmsle[1])]}


CALIBRATION_BINS = 10


def calibration(p_hat: np.ndarray, p: np.ndarray) -> dict:
    """p̂ against p in CALIBRATION_BINS bins of equal job count by true p: median p and the
    10 / 50 / 90 % quantiles of p̂ per bin (what the entry page plots)."""
    order = np.argsort(p, kind="stable")
    bins = [b for b in np.array_split(order, min(CALIBRATION_BINS, len(p))) if len(b)]
    return {
        "p_median": [_num(np.median(p[b])) for b in bins],
        "p_hat_q10": [_num(np.quantile(p_hat[b], 0.1)) for b in bins],
        "p_hat_q50": [_num(np.median(p_hat[b])) for b in bins],
        "p_hat_q90": [_num(np.quantile(p_hat[b], 0.9)) for b in bins],
        "jobs": [int(len(b)) for b in bins],
    }


def scheduling_jobs(preds: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """The jobs table (docs/data-formats.md) for the test split, with the submission's p̂."""
    table = test_jobs(test)[["job_id", "submit_time", "duration"]]
    table["predicted_duration"] = _aligned(preds, test, "p_hat")
    return table


def score_windows(n_test: int) -> list[np.ndarray]:
    """Positions (in (submit_time, job_id) order) of the disjoint scoring windows of an n_test-job split."""
    count = int(max(1, min(SCORE_WINDOWS, n_test // MIN_WINDOW_JOBS)))
    return [block for block in np.array_split(np.arange(n_test), count) if len(block)]


def window_jobs(objective: str, n_test: int) -> int:
    """Jobs in the largest scoring window of an objective: its block, at most the `run --task scheduling --data` size."""
    return int(max(1, min(DATA_DEFAULT_N[objective], max(len(b) for b in score_windows(n_test)))))


def window_seeds(seed: int = 0) -> list[int]:
    """Seeds of the fairness windows (`sample_window`)."""
    return [seed * WINDOWS + k for k in range(WINDOWS)]


def _in_order(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame in (submit_time, job_id) order: the simulator's own tie rule (`sample_window`)."""
    return sample_window(frame, None, 0)


def blind_p_hat(train_y: np.ndarray) -> float:
    """The blind reference p̂ (seconds): the train median, exactly what the `constant` method predicts."""
    from predictors.framework import to_seconds
    from predictors.stage1 import ConstantLearner

    value = ConstantLearner().fit(None, train_y).predict(np.zeros(1))
    return float(to_seconds(value)[0])


def score_scheduling(preds: pd.DataFrame, test: pd.DataFrame, *, blind_p_hat: float, seed: int = 0,
                     fairness: bool = True, machines=DEFAULT_MACHINES) -> dict:
    """Per-window LASched ratios of p̂ and of the blind p̂, their log-ratio score, astraea-p metrics."""
    table = _in_order(scheduling_jobs(preds, test))
    blocks = score_windows(len(table))
    out: dict = {"seed": int(seed), "windows": len(blocks),
                 "window_bounds": [[int(b[0]), int(b[-1]) + 1] for b in blocks], "blind_p_hat": _num(blind_p_hat),
                 "window_jobs": {}}
    relative = {objective: [] for objective, _ in OBJECTIVE_POLICIES}
    for objective, policies in OBJECTIVE_POLICIES:
        n = window_jobs(objective, len(table))
        out["window_jobs"][objective] = n
        per_policy = {p: {"ratio": [], "blind_ratio": [], "by_machines": {}} for p in policies}
        for k, block in enumerate(blocks):
            window = table.iloc[block[:n]].reset_index(drop=True)
            jobs = JobSet.from_frame(window[["job_id", "submit_time", "duration"]])
            p_hat = pd.Series(window["predicted_duration"].to_numpy(np.float64),
                              index=pd.Index(window["job_id"].to_numpy(object))).reindex(jobs.job_id).to_numpy(np.float64)
            rows, _, _ = run_objective(objective, jobs, list(policies),
                                       {"submission": p_hat, "blind": np.full(jobs.n, float(blind_p_hat))},
                                       machines=machines, seed=seed * len(blocks) + k, optimum=False)
            logs = []
            for policy in policies:
                ratio = {label: [r["ratio"] for r in rows if r["policy"] == policy and r["predictor"] == label]
                         for label in ("submission", "blind")}
                if objective == "makespan":
                    for r in rows:
                        if r["policy"] == policy and r["predictor"] == "submission":
                            per_policy[policy]["by_machines"].setdefault(str(r["machines"]), []).append(_num(r["ratio"]))
                mine, blind = float(np.mean(ratio["submission"])), float(np.mean(ratio["blind"]))
                per_policy[policy]["ratio"].append(mine)
                per_policy[policy]["blind_ratio"].append(blind)
                logs.append(math.log(mine / blind) if mine > 0 and blind > 0 else math.nan)
            relative[objective].append(float(np.exp(np.mean(logs))))
        block: dict = {"n_jobs": n}
        for policy, parts in per_policy.items():
            block[policy] = {key: summary(values, seed=seed, geometric=True) for key, values in parts.items()
                             if key != "by_machines"}
            if parts["by_machines"]:
                block[policy]["by_machines"] = {m: summary(v, seed=seed, geometric=True)["mean"]
                                                for m, v in parts["by_machines"].items()}
        block["relative"] = summary(relative[objective], seed=seed, geometric=True)
        out[objective] = block
    window_scores = [scheduling_score({o: relative[o][k] for o, _ in OBJECTIVE_POLICIES}) for k in range(len(blocks))]
    out["score"] = summary(window_scores, seed=seed, geometric=True)
    out["fairness"] = score_fairness(preds, test, seed=seed) if fairness else None
    return out


def scheduling_score(relative: dict[str, float]) -> float | None:
    """One window's score from its per-objective relative ratios: their geometric mean (None if one is missing)."""
    values = [relative.get(objective) for objective, _ in OBJECTIVE_POLICIES]
    if any(v is None or not (v > 0) for v in values):
        return None
    return float(math.exp(np.mean(np.log(values))))


def fairness_jobs(preds: pd.DataFrame, test: pd.DataFrame, tenant_column: str = FAIRNESS_TENANT_COLUMN) -> pd.DataFrame:
    """Test split as a cluster jobs table; gpus from the requested-GPU column, the rule of --task fairness."""
    table = test_jobs(test, tenant_column)
    table["predicted_duration"] = _aligned(preds, test, "p_hat")
    return table


FAIRNESS_KEEP = ("sharing_loss_jobs", "tenant_loss_intervals", "avg_jct", "avg_slowdown", "p99_slowdown",
                 "makespan", "preemptions", "overhead_pct", "utilisation")


def score_fairness(preds: pd.DataFrame, test: pd.DataFrame, *, seed: int = 0) -> dict:
    """astraea-p (the submission's p̂) beside astraea on each fairness window; summaries over windows."""
    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.cluster.settings import ClusterSettings
    from schedulers.policy import get_policy

    table = fairness_jobs(preds, test)
    n = fairness_window_jobs(len(table))
    windows = []
    for window_seed in window_seeds(seed):
        jobs = JobSet.from_frame(sample_window(table, n, window_seed))
        nodes = fairness_nodes(jobs)
        load = offered_load(jobs)
        jobs, capped = capped_gangs(jobs, nodes)
        runs = {}
        for name in ("astraea-p", "astraea"):
            # ASTRAEA-P without revising outlived p̂ (revision none): with one p̂ for every job it is
            # astraea, which the column's normalisation needs; with a rule, a constant p̂ still tells it
            # which started jobs are predicted to end within a lease (docs/fairness.md)
            settings = {"revision": "none"} if name == "astraea-p" else {}
            policy = get_policy(name, "cluster")(**settings)
            runs[name] = simulate_fairness(jobs, policy, cluster=ClusterSettings.of(nodes=nodes,
                                                                                  gpus_per_node=GPUS_PER_NODE)).metrics
        mine, base = runs["astraea-p"], runs["astraea"]
        windows.append({
            "cluster": f"{nodes} x {GPUS_PER_NODE} GPUs",
            "offered_load_gpus": _num(load),
            "gpus_capped": capped,
            "fair_share": mine.get("fair_share"),
            "tenant_loss_share": mine.get("tenant_loss_share"),
            "astraea-p": {k: _num(mine[k]) for k in FAIRNESS_KEEP},
            "astraea": {k: _num(base[k]) for k in FAIRNESS_KEEP},
            "slowdown_ratio": _ratio(mine["avg_slowdown"], base["avg_slowdown"]),
            "jct_ratio": _ratio(mine["avg_jct"], base["avg_jct"]),
            "sharing_loss_delta": _difference(mine["sharing_loss_jobs"], base["sharing_loss_jobs"]),
            "tenant_loss_delta": _difference(mine["tenant_loss_intervals"], base["tenant_loss_intervals"]),
        })
    return {
        "n_jobs": int(n),
        "target_load": FAIRNESS_TARGET_LOAD,
        "tenant_column": FAIRNESS_TENANT_COLUMN if FAIRNESS_TENANT_COLUMN in test.columns else None,
        "fair_share": windows[0]["fair_share"],
        "windows": windows,
        **{key: summary([w[key] for w in windows], seed=seed, geometric=True) for key in ("slowdown_ratio", "jct_ratio")},
        **{key: summary([w[key] for w in windows], seed=seed) for key in ("sharing_loss_delta", "tenant_loss_delta")},
        "sharing_loss_jobs": summary([w["astraea-p"]["sharing_loss_jobs"] for w in windows], seed=seed),
        "tenant_loss_intervals": summary([w["astraea-p"]["tenant_loss_intervals"] for w in windows], seed=seed),
    }


def fairness_window_jobs(n_test: int) -> int:
    """Jobs per fairness window: at most FAIRNESS_N, at most ⌈n_test / FAIRNESS_WINDOW_SHARE⌉."""
    return int(max(1, min(FAIRNESS_N, math.ceil(n_test / FAIRNESS_WINDOW_SHARE))))


def _ratio(mine, base):
    return _num(mine / base) if base and math.isfinite(base) and math.isfinite(mine) else None


def _difference(mine, base):
    return _num(mine - base) if mine is not None and base is not None else None


def _num(value):
    """JSON-ready number: ints stay ints, NaN/inf become None."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None
