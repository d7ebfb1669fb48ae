"""Scoring on the tiny hand-made dataset: exact predictions give the clairvoyant values."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from schedulers.sampling import sample_window
from leaderboards.score import (
    OBJECTIVE_POLICIES,
    MIN_WINDOW_JOBS,
    SCORE_WINDOWS,
    WINDOWS,
    capped_gangs,
    fairness_nodes,
    offered_load,
    score_fairness,
    score_prediction,
    score_scheduling,
    scheduling_score,
    summary,
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


BLIND = 100.0


SCORE_WINDOW_JOBS = 5  # 40 test jobs: 8 disjoint windows of MIN_WINDOW_JOBS


def _window_rows(objective, test, k, p_hat, policies, machines=(5, 10, 20, 50, 100)):
    """run_objective on scoring window k of the test split, recomputed here from its definition:
    jobs 5k … 5k + 4 in submit order."""
    table = pd.DataFrame({"job_id": test["job_id"].astype(str), "submit_time": test["submit_time"],
                          "duration": test["p_star"], "p_hat": p_hat})
    ordered = table.sort_values(["submit_time", "job_id"], kind="mergesort")
    window = ordered.iloc[SCORE_WINDOW_JOBS * k:SCORE_WINDOW_JOBS * (k + 1)]
    jobs = JobSet.from_frame(window[["job_id", "submit_time", "duration"]])
    preds = {"x": window.set_index("job_id")["p_hat"].reindex(jobs.job_id).to_numpy()}
    rows, _, _ = run_objective(objective, jobs, list(policies), preds, machines=machines)
    return rows


def test_scheduling_windows_and_score_by_hand(dataset, no_cpsat):
    _, _, test = dataset
    p = test["p_star"].to_numpy()
    result = score_scheduling(_preds(test, p * 1.3), test, blind_p_hat=BLIND, seed=0, fairness=False)
    windows = len(test) // MIN_WINDOW_JOBS
    assert result["windows"] == windows == 8 < SCORE_WINDOWS
    assert result["window_bounds"] == [[5 * k, 5 * k + 5] for k in range(windows)]  # disjoint, covering the split
    assert result["window_jobs"] == {o: 5 for o in ("total_completion", "max_stretch", "makespan")}
    logs = {o: [] for o in ("total_completion", "max_stretch", "makespan")}
    for k in range(windows):
        for objective, policies in OBJECTIVE_POLICIES:
            mine = _window_rows(objective, test, k, p * 1.3, policies)
            blind = _window_rows(objective, test, k, np.full(len(p), BLIND), policies)
            parts = []
            for policy in policies:
                r = np.mean([row["ratio"] for row in mine if row["policy"] == policy])
                b = np.mean([row["ratio"] for row in blind if row["policy"] == policy])
                assert result[objective][policy]["ratio"]["values"][k] == pytest.approx(r, rel=1e-12)
                assert result[objective][policy]["blind_ratio"]["values"][k] == pytest.approx(b, rel=1e-12)
                parts.append(math.log(r / b))
            logs[objective].append(np.mean(parts))
            assert result[objective]["relative"]["values"][k] == pytest.approx(math.exp(np.mean(parts)), rel=1e-12)
    window_scores = [math.exp(np.mean([logs[o][k] for o in logs])) for k in range(windows)]
    assert result["score"]["values"] == pytest.approx(window_scores, rel=1e-12)
    assert result["score"]["mean"] == pytest.approx(math.exp(np.mean(np.log(window_scores))), rel=1e-12)
    assert result["score"]["lo"] <= result["score"]["mean"] <= result["score"]["hi"]
    assert result["score"]["lo"] < result["score"]["hi"]  # the windows differ
    json.dumps(result, allow_nan=False)  # plain JSON, no NaN


def test_exact_predictions_beat_the_blind_reference(dataset, no_cpsat):
    _, _, test = dataset
    result = score_scheduling(_preds(test, test["p_star"]), test, blind_p_hat=BLIND, fairness=False)
    # p̂ = p: SPRPT is SRPT on every window
    assert result["total_completion"]["sprpt"]["ratio"]["values"] == pytest.approx([1.0] * result["windows"], rel=1e-12)
    assert result["score"]["hi"] < 1.0


def test_the_blind_predictions_score_exactly_one(dataset, no_cpsat):
    """All p̂ equal (the blind reference itself): every ratio equals its blind ratio; SPJF is FIFO."""
    _, _, test = dataset
    result = score_scheduling(_preds(test, np.full(len(test), BLIND)), test, blind_p_hat=BLIND, fairness=False)
    assert result["score"]["values"] == [1.0] * result["windows"] and result["score"]["mean"] == 1.0
    assert result["score"]["lo"] == result["score"]["hi"] == 1.0
    fifo = _window_rows("total_completion", test, 3, np.ones(len(test)), ["fifo"])[0]
    assert result["total_completion"]["spjf"]["ratio"]["values"][3] == pytest.approx(fifo["ratio"], rel=1e-12)
    assert result["fairness"] is None


def test_fairness_part(dataset, no_cpsat):
    _, _, test = dataset
    fair = score_fairness(_preds(test, test["p_star"]), test)
    # half of the 40 test jobs per window; 8-GPU nodes for an offered load of 100 %
    assert fair["n_jobs"] == 20 and fair["tenant_column"] == "user" and fair["fair_share"] == "eq16"
    assert fair["target_load"] == 1.0 and len(fair["windows"]) == WINDOWS
    table = pd.DataFrame({"job_id": test["job_id"].astype(str), "submit_time": test["submit_time"], "duration": test["p_star"],
                          "gpus": np.where(test["job_id"].str.slice(1).astype(int) % 7 == 0, 2, 1)})
    for k, window in enumerate(fair["windows"]):
        jobs = sample_window(table, 20, k)
        span = jobs["submit_time"].max() - jobs["submit_time"].min()
        load = float((jobs["gpus"] * jobs["duration"]).sum() / span)
        assert window["offered_load_gpus"] == pytest.approx(load)
        nodes = max(1, min(math.ceil(load / 8), math.ceil(jobs["gpus"].sum() / 8)))
        assert window["cluster"] == f"{nodes} x 8 GPUs" and window["gpus_capped"] == 0
        for name in ("astraea-p", "astraea"):
            assert 0.0 <= window[name]["sharing_loss_jobs"] <= 1.0 and window[name]["avg_jct"] > 0
        mine, base = window["astraea-p"], window["astraea"]
        assert window["jct_ratio"] == pytest.approx(mine["avg_jct"] / base["avg_jct"])
        assert window["slowdown_ratio"] == pytest.approx(mine["avg_slowdown"] / base["avg_slowdown"])
        assert window["sharing_loss_delta"] == pytest.approx(mine["sharing_loss_jobs"] - base["sharing_loss_jobs"])
        assert window["tenant_loss_delta"] == pytest.approx(mine["tenant_loss_intervals"] - base["tenant_loss_intervals"])
    for key in ("slowdown_ratio", "jct_ratio", "sharing_loss_delta", "tenant_loss_delta"):
        assert fair[key]["values"] == [w[key] for w in fair["windows"]]


def test_fairness_nodes_rule():
    # 4 jobs, 1 GPU each, 100 s, submitted over 100 s: offered load 4 GPUs -> ⌈4 / 8⌉ = 1 node
    jobs = JobSet.from_arrays([0, 10, 50, 100], [100, 100, 100, 100])
    assert offered_load(jobs) == pytest.approx(4.0)
    assert fairness_nodes(jobs) == 1
    # 80 GPUs of offered load: 10 nodes; but only 20 jobs of 1 GPU: more than ⌈20 / 8⌉ = 3 nodes never helps
    jobs = JobSet.from_arrays(np.linspace(0, 100, 40), np.full(40, 200.0))
    assert offered_load(jobs) == pytest.approx(80.0) and fairness_nodes(jobs) == 5
    jobs = JobSet.from_arrays(np.linspace(0, 100, 20), np.full(20, 400.0))
    assert offered_load(jobs) == pytest.approx(80.0)
    assert fairness_nodes(jobs) == 3
    # a 12-GPU gang does not size the cluster: it is capped at the one node the load asks for
    jobs = JobSet.from_arrays([0, 1000], [1, 1], gpus=[12, 1])
    assert fairness_nodes(jobs) == 1
    capped, count = capped_gangs(jobs, 1)
    assert count == 1 and capped.gpus.tolist() == [8, 1] and jobs.gpus.tolist() == [12, 1]
    again, none = capped_gangs(jobs, 2)
    assert again is jobs and none == 0


def test_one_window_score_is_the_geometric_mean_over_objectives():
    assert scheduling_score({"total_completion": 0.5, "max_stretch": 0.125, "makespan": 1.0}) == pytest.approx(0.0625 ** (1 / 3))
    assert scheduling_score({"total_completion": 0.5, "max_stretch": None, "makespan": 1.0}) is None


def test_summary_bootstrap():
    flat = summary([2.0] * 6, geometric=True)
    assert flat["mean"] == pytest.approx(2.0) and flat["lo"] == pytest.approx(2.0) and flat["hi"] == pytest.approx(2.0)
    values = [1.0, 2.0, 4.0, 8.0, 16.0]
    s = summary(values, geometric=True, seed=1)
    assert s["mean"] == pytest.approx(4.0) and s["values"] == values
    assert 1.0 <= s["lo"] < 4.0 < s["hi"] <= 16.0
    assert summary(values, geometric=True, seed=1) == s  # seeded: reproducible
    arithmetic = summary([0.0, 1.0, 2.0, None], seed=1)
    assert arithmetic["mean"] == pytest.approx(1.0) and arithmetic["values"][3] is None


def test_prediction_intervals_and_calibration(dataset):
    _, _, test = dataset
    p = test["p_star"].to_numpy()
    factor = np.r_[[2.0] * 10, [1.0] * 30]
    m = score_prediction(_preds(test, p * factor), test)
    lo, hi = m["intervals"]["cov25"]
    assert m["cov25"] == pytest.approx(0.75) and 0.0 <= lo < 0.75 < hi <= 1.0
    assert m["intervals"]["rmsle"][0] < m["rmsle"] < m["intervals"]["rmsle"][1]
    cal = m["calibration"]
    assert sum(cal["jobs"]) == 40 and len(cal["jobs"]) == 10
    order = np.sort(p)
    assert cal["p_median"][0] == pytest.approx(np.median(order[:4]))
    assert all(a <= b <= c for a, b, c in zip(cal["p_hat_q10"], cal["p_hat_q50"], cal["p_hat_q90"]))
