"""Score validated predictions: prediction metrics, and p̂ through the predictive schedulers (docs/leaderboards.md).

- `score_prediction(preds, test)`: every metric of `predictors.metrics.evaluate` (RMSLE, Cov@25/50
  on all and on recurrent test jobs, Spearman, interval coverage / width when lo, hi are given).
- `score_scheduling(preds, test, seed=0)`: the test split becomes a jobs table (job_id,
  submit_time, duration = p_star, predicted_duration = p̂), windowed exactly as
  `benchmark run --task scheduling --data DS` does (`sample_window`, `DATA_DEFAULT_N` jobs per
  objective, same seed), then on the one simulator core:
    total_completion: `spjf`, `sprpt`   (ratio ΣC_j / ΣC_j(SRPT), plus flow_ratio)
    max_stretch:      `sprpt`, `edf-p`  (ratio max S_j / S*, plus median / p99)
    makespan:         `lppt` on m ∈ {5, 10, 20, 50, 100} (C_max / McNaughton bound; mean over m)
    fairness:         `astraea-p` beside plain `astraea` on the same jobs (tenant = user, gpus =
                      ⌈requested GPU % / 100⌉ ≥ 1 as in `--task fairness --data`, lease 900 s,
                      eq16): sharing-loss share, tenant-loss intervals, average JCT and `jct_ratio`
                      = avg JCT(astraea-p) / avg JCT(astraea). The cluster is 8-GPU nodes, as many
                      as make the offered load Σ gpus·p / span about 80 % of capacity (at least
                      enough for the largest gang): fairness only shows under contention, and the
                      default 64-GPU cluster runs the default test split at 14 % utilisation, where
                      every policy is trivially fair. The size depends on true sizes only, so it is
                      the same for every submission on a dataset.
  The ranking score is the geometric mean of the five LASched ratios (lower is better, 1 = the
  clairvoyant optimum or the bound). Geometric, not arithmetic: max-stretch ratios are often ≥ 10
  and would otherwise decide the ranking alone. astraea-p is reported, not folded into the score:
  its main outcome is fairness, which has no optimum to take a ratio to.

May import numpy, pandas, atlas_data, predictors.metrics and schedulers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from atlas_data.build import test_jobs
from schedulers.jobs import JobSet
from schedulers.objectives import DEFAULT_MACHINES, run_objective
from schedulers.sampling import DATA_DEFAULT_N, sample_window

SCHEDULING_RUNS = (
    ("total_completion", ("spjf", "sprpt")),
    ("max_stretch", ("sprpt", "edf-p")),
    ("makespan", ("lppt",)),
)
# (objective, policy) pairs whose ratios make the ranking score, in table order.
SCORE_PARTS = (("total_completion", "spjf"), ("total_completion", "sprpt"), ("max_stretch", "sprpt"),
               ("max_stretch", "edf-p"), ("makespan", "lppt"))
FAIRNESS_N = 5_000  # jobs in the fairness window (the whole test split of the default dataset)
FAIRNESS_TENANT_COLUMN = "user"
GPUS_PER_NODE = 8
FAIRNESS_TARGET_LOAD = 0.8


def offered_load(jobs: JobSet) -> float:
    """Average GPUs busy if every job ran at once on submit: Σ gpus·p / (last submit − first submit)."""
    span = float(jobs.submit_time.max()) if jobs.n else 0.0
    work = float((jobs.gpus * jobs.size).sum())
    return work / span if span > 0 else work


def fairness_nodes(jobs: JobSet) -> int:
    """8-GPU nodes for an offered load of about FAIRNESS_TARGET_LOAD, and room for the largest gang."""
    if not jobs.n:
        return 1
    by_load = math.ceil(offered_load(jobs) / (FAIRNESS_TARGET_LOAD * GPUS_PER_NODE))
    everyone = math.ceil(int(jobs.gpus.sum()) / GPUS_PER_NODE)  # more nodes than this never help
    by_gang = math.ceil(int(jobs.gpus.max()) / GPUS_PER_NODE)
    return int(max(1, min(by_load, everyone), by_gang))


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


def score_prediction(preds: pd.DataFrame, test: pd.DataFrame) -> dict:
    from predictors.metrics import evaluate

    p_hat = _aligned(preds, test, "p_hat")
    lo = _aligned(preds, test, "lo") if "lo" in preds.columns else None
    hi = _aligned(preds, test, "hi") if "hi" in preds.columns else None
    metrics = evaluate(p_hat, test["p_star"].to_numpy(np.float64), test["is_recurrent"].to_numpy(bool), lo, hi)
    return {"n_jobs": int(len(test)), **{k: _num(v) for k, v in metrics.items()}}


def scheduling_jobs(preds: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """The jobs table (docs/data-formats.md) for the test split, with the submission's p̂."""
    table = test_jobs(test)[["job_id", "submit_time", "duration"]]
    table["predicted_duration"] = _aligned(preds, test, "p_hat")
    return table


def score_scheduling(preds: pd.DataFrame, test: pd.DataFrame, *, seed: int = 0, fairness: bool = True,
                     machines=DEFAULT_MACHINES) -> dict:
    """LASched ratios of p̂ through spjf / sprpt / edf-p / lppt, astraea-p metrics, and the score."""
    table = scheduling_jobs(preds, test)
    out: dict = {"seed": int(seed)}
    for objective, policies in SCHEDULING_RUNS:
        window = sample_window(table, DATA_DEFAULT_N[objective], seed)
        jobs = JobSet.from_frame(window[["job_id", "submit_time", "duration"]])
        p_hat = pd.Series(window["predicted_duration"].to_numpy(np.float64),
                          index=pd.Index(window["job_id"].to_numpy(object))).reindex(jobs.job_id).to_numpy(np.float64)
        rows, _, _ = run_objective(objective, jobs, list(policies), {"submission": p_hat}, machines=machines, seed=seed)
        block: dict = {"n_jobs": int(jobs.n)}
        for policy in policies:
            mine = [r for r in rows if r["policy"] == policy]
            if objective == "makespan":
                ratios = {str(r["machines"]): _num(r["ratio"]) for r in mine}
                block[policy] = {"ratio": _num(float(np.mean([r["ratio"] for r in mine]))), "by_machines": ratios,
                                 "opt_ratio": {str(r["machines"]): _num(r["opt_ratio"]) for r in mine}}
            else:
                keep = ("value", "reference", "ratio", "flow_ratio", "median_ratio", "p99_ratio", "edf_p_stretch")
                block[policy] = {k: _num(mine[0][k]) for k in keep if k in mine[0]}
        out[objective] = block
    out["fairness"] = score_fairness(preds, test, seed=seed) if fairness else None
    out["score"] = scheduling_score(out)
    return out


def scheduling_score(result: dict) -> float | None:
    """Geometric mean of the five LASched ratios (None if one is missing)."""
    ratios = []
    for objective, policy in SCORE_PARTS:
        ratio = ((result.get(objective) or {}).get(policy) or {}).get("ratio")
        if ratio is None or not (ratio > 0):
            return None
        ratios.append(float(ratio))
    return float(math.exp(np.mean(np.log(ratios))))


def fairness_jobs(preds: pd.DataFrame, test: pd.DataFrame, tenant_column: str = FAIRNESS_TENANT_COLUMN) -> pd.DataFrame:
    """Test split as a cluster jobs table; gpus from the requested-GPU column, the rule of --task fairness."""
    table = test_jobs(test, tenant_column)
    table["predicted_duration"] = _aligned(preds, test, "p_hat")
    return table


def score_fairness(preds: pd.DataFrame, test: pd.DataFrame, *, seed: int = 0) -> dict:
    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.policy import get_policy

    table = sample_window(fairness_jobs(preds, test), FAIRNESS_N, seed)
    jobs = JobSet.from_frame(table)
    nodes = fairness_nodes(jobs)
    runs = {}
    for name in ("astraea-p", "astraea"):
        policy = get_policy(name, "cluster")(nodes=nodes, gpus_per_node=GPUS_PER_NODE)
        runs[name] = simulate_fairness(jobs, policy).metrics
    mine, base = runs["astraea-p"], runs["astraea"]
    keep = ("sharing_loss_jobs", "tenant_loss_intervals", "avg_jct", "avg_slowdown", "p99_slowdown", "makespan",
            "preemptions", "overhead_pct", "utilisation")
    return {
        "n_jobs": int(jobs.n),
        "cluster": f"{nodes} x {GPUS_PER_NODE} GPUs",
        "offered_load_gpus": _num(offered_load(jobs)),
        "tenant_column": FAIRNESS_TENANT_COLUMN if FAIRNESS_TENANT_COLUMN in test.columns else None,
        "fair_share": mine.get("fair_share"),
        "astraea-p": {k: _num(mine[k]) for k in keep},
        "astraea": {k: _num(base[k]) for k in keep},
        "jct_ratio": _num(mine["avg_jct"] / base["avg_jct"]) if base["avg_jct"] else None,
    }


def _num(value):
    """JSON-ready number: ints stay ints, NaN/inf become None."""
    if value is None:
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    value = float(value)
    return value if math.isfinite(value) else None
