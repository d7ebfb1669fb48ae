"""Scoring on the tiny hand-made dataset: exact predictions give the clairvoyant values."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from schedulers.sampling import sample_window
from leaderboards.score import (
    SCORE_PARTS,
    fairness_nodes,
    offered_load,
    score_fairness,
    score_prediction,
    score_scheduling,
    scheduling_score,
)
from schedulers.jobs import JobSet
from schedulers.objectives import run_objective


def _preds(test, p_hat, **extra):
    return pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": np.asarray(p_hat, float), **extra})


def _ratios(objective, test, policies, machines=(5, 10, 20, 50, 100)):
    """Clairvoyant policies through run_objective on the whole (40-job) test split."""
    window = sample_window(pd.DataFrame({"job_id": test["job_id"].astype(str), "submit_time": test["submit_time"],
                                         "duration": test["p_star"]}), None, 0)
    rows, _, _ = run_objective(objective, JobSet.from_frame(window), list(policies), {}, machines=machines)
    return rows


def test_exact_predictions_are_perfect(dataset):
    _, _, test = dataset
    shuffled = test.sample(frac=1.0, random_state=3)  # row order of the submission must not matter
    metrics = score_prediction(_preds(shuffled, shuffled["p_star"]), test)
    assert metrics["n_jobs"] == 40
    assert metrics["rmsle"] == 0.0
    assert metrics["cov25"] == 1.0 and metrics["cov50"] == 1.0
    assert metrics["cov25_recurrent"] == 1.0 and metrics["spearman"] == pytest.approx(1.0)
    assert metrics["interval_coverage"] is None and metrics["interval_width"] is None


def test_prediction_metrics_by_hand(dataset):
    _, _, test = dataset
    p = test["p_star"].to_numpy()
    # first 10 jobs 2x too long (outside 50 %), next 10 at 1.4x (inside 50 %, outside 25 %), rest exact
    factor = np.r_[[2.0] * 10, [1.4] * 10, [1.0] * 20]
    lo, hi = p * 0.9, p * np.r_[[0.95] * 8, [1.2] * 32]  # 8 intervals miss p
    m = score_prediction(_preds(test, p * factor, lo=lo, hi=hi), test)
    assert m["cov25"] == pytest.approx(20 / 40) and m["cov50"] == pytest.approx(30 / 40)
    rec = test["is_recurrent"].to_numpy()
    assert m["cov25_recurrent"] == pytest.approx(np.mean(factor[rec] == 1.0))
    assert m["rmsle"] == pytest.approx(np.sqrt(np.mean((np.log1p(p * factor) - np.log1p(p)) ** 2)))
    assert m["interval_coverage"] == pytest.approx(32 / 40)
    assert m["interval_width"] == pytest.approx(np.mean(np.log1p(hi) - np.log1p(lo)))


def test_scheduling_with_exact_predictions_matches_clairvoyant(dataset, no_cpsat):
    _, _, test = dataset
    result = score_scheduling(_preds(test, test["p_star"]), test, seed=0)
    tc = {r["policy"]: r for r in _ratios("total_completion", test, ["sjf", "srpt"])}
    assert result["total_completion"]["n_jobs"] == 40
    assert result["total_completion"]["spjf"]["ratio"] == pytest.approx(tc["sjf"]["ratio"], rel=1e-12)
    assert result["total_completion"]["spjf"]["value"] == pytest.approx(tc["sjf"]["value"], rel=1e-12)
    assert tc["sjf"]["ratio"] > 1.0  # the instance has contention: SJF is not optimal here
    assert result["total_completion"]["sprpt"]["ratio"] == pytest.approx(1.0, rel=1e-12)  # p̂ = p: SPRPT is SRPT
    ms = {r["policy"]: r for r in _ratios("max_stretch", test, ["srpt"])}
    assert result["max_stretch"]["sprpt"]["ratio"] == pytest.approx(ms["srpt"]["ratio"], rel=1e-12)
    assert result["max_stretch"]["edf-p"]["ratio"] >= 1.0 - 1e-4  # S* is optimal
    lpt = {str(r["machines"]): r["ratio"] for r in _ratios("makespan", test, ["lpt"])}
    assert sorted(lpt, key=int) == ["5", "10", "20", "50", "100"]
    assert result["makespan"]["lppt"]["by_machines"] == pytest.approx(lpt, rel=1e-12)
    assert result["makespan"]["lppt"]["ratio"] == pytest.approx(np.mean(list(lpt.values())))
    parts = [result[o][p]["ratio"] for o, p in SCORE_PARTS]
    assert result["score"] == pytest.approx(math.exp(np.mean(np.log(parts))))
    json.dumps(result, allow_nan=False)  # plain JSON, no NaN


def test_constant_predictions_make_spjf_fifo(dataset, no_cpsat):
    """All p̂ equal: SPJF breaks every tie by submit order, i.e. it is FIFO."""
    _, _, test = dataset
    result = score_scheduling(_preds(test, np.full(len(test), 100.0)), test, fairness=False)
    fifo = {r["policy"]: r for r in _ratios("total_completion", test, ["fifo"])}
    assert result["total_completion"]["spjf"]["value"] == pytest.approx(fifo["fifo"]["value"], rel=1e-12)
    assert result["fairness"] is None


def test_fairness_part(dataset, no_cpsat):
    _, _, test = dataset
    fair = score_fairness(_preds(test, test["p_star"]), test)
    assert fair["n_jobs"] == 40 and fair["tenant_column"] == "user" and fair["fair_share"] == "eq16"
    # every 7th job asks for 2 GPUs -> a 2-GPU gang; offered load Σ gpus·p / span
    ids = test["job_id"].str.slice(1).astype(int).to_numpy()
    gpus = np.where(ids % 7 == 0, 2, 1)
    span = test["submit_time"].max() - test["submit_time"].min()
    load = float((gpus * test["p_star"].to_numpy()).sum() / span)
    assert fair["offered_load_gpus"] == pytest.approx(load)
    assert fair["cluster"] == f"{max(1, math.ceil(load / 6.4))} x 8 GPUs"
    for name in ("astraea-p", "astraea"):
        assert 0.0 <= fair[name]["sharing_loss_jobs"] <= 1.0 and fair[name]["avg_jct"] > 0
    assert fair["jct_ratio"] == pytest.approx(fair["astraea-p"]["avg_jct"] / fair["astraea"]["avg_jct"])


def test_fairness_nodes_rule():
    # 4 jobs, 1 GPU each, 100 s, submitted over 100 s: offered load 4 GPUs -> ⌈4 / 6.4⌉ = 1 node
    jobs = JobSet.from_arrays([0, 10, 50, 100], [100, 100, 100, 100])
    assert offered_load(jobs) == pytest.approx(4.0)
    assert fairness_nodes(jobs) == 1
    # 80 GPUs of offered load, but only 20 jobs of 1 GPU: more than ⌈20 / 8⌉ = 3 nodes never helps
    jobs = JobSet.from_arrays(np.linspace(0, 100, 20), np.full(20, 400.0))
    assert offered_load(jobs) == pytest.approx(80.0)
    assert fairness_nodes(jobs) == 3
    # a 12-GPU gang needs 2 nodes even when the load is tiny
    jobs = JobSet.from_arrays([0, 1000], [1, 1], gpus=[12, 1])
    assert fairness_nodes(jobs) == 2


def test_scheduling_score_is_a_geometric_mean():
    ratios = dict(zip(SCORE_PARTS, (1.0, 1.0, 4.0, 4.0, 1.0)))
    doc = {}
    for (objective, policy), r in ratios.items():
        doc.setdefault(objective, {})[policy] = {"ratio": r}
    assert scheduling_score(doc) == pytest.approx(4.0 ** (2 / 5))
    doc["makespan"]["lppt"]["ratio"] = None
    assert scheduling_score(doc) is None
