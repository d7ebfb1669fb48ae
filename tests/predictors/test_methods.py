"""The method registry, reference methods, orderings, determinism, and Stage-2 rules on
hand-made numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from atlas_data.errors import InputError
from predictors.api import method_names
from predictors.data import SplitData
from predictors.methods import METHODS, feature_groups, naive_features, run_method
from predictors.metrics import evaluate
from predictors.stage1 import SignatureStatsLearner, TwoStageLearner, recency_weights
from predictors.stage2 import CQRStack, MetaStacker, RecencyWeighting
from predictors.synthetic import FEATURES

ALL = ["single-stage", "crr++", "hras", "quantile-median", "cqr-stack", "isotonic", "two-stage", "lgbm-meta", "oracle", "constant"]
# the methods trained for the decision (tests/predictors/test_decision_methods.py)
DECISION = ["lgbm-asym", "lgbm-rank", "lgbm-meta-matched"]


def _score(split, pred):
    truth = split.test_truth().loc[pred.job_id]
    frame = pred.to_frame()
    return evaluate(frame["p_hat"], truth["p_star"], truth["is_recurrent"], frame.get("lo"), frame.get("hi"))


@pytest.fixture(scope="module")
def scores(split, tiny):
    return {name: _score(split, run_method(split, name, tiny)) for name in ALL}


def test_registry_has_every_method():
    assert sorted(method_names()) == sorted(ALL + DECISION)
    assert {n for n, s in METHODS.items() if s.interval} == {"quantile-median", "cqr-stack"}


def test_unknown_method_is_input_error_listing_valid_names(split, tiny):
    with pytest.raises(InputError, match=r"'nope'.*lgbm-meta"):
        run_method(split, "nope", tiny)


def test_oracle_is_perfect(scores):
    assert scores["oracle"]["rmsle"] == 0.0
    assert scores["oracle"]["cov25"] == 1.0 and scores["oracle"]["cov50"] == 1.0
    assert scores["oracle"]["spearman"] == pytest.approx(1.0)


def test_constant_predicts_train_median(split, tiny):
    pred = run_method(split, "constant", tiny).to_frame()
    assert np.allclose(pred["p_hat"], split.train_label_median_s())


def test_learned_methods_beat_constant_and_meta_beats_single_stage(scores):
    const = scores["constant"]
    for name in ALL:
        if name in ("constant", "oracle"):
            continue
        assert scores[name]["rmsle"] < const["rmsle"], name
    assert scores["lgbm-meta"]["rmsle"] < scores["single-stage"]["rmsle"] < const["rmsle"]
    assert scores["lgbm-meta"]["cov25"] > scores["single-stage"]["cov25"] > const["cov25"]


def test_every_method_predicts_exactly_the_test_split(split, tiny):
    test_ids = set(split.test_inputs().X.index)
    for name in ALL:
        frame = run_method(split, name, tiny).to_frame()
        assert set(frame["job_id"]) == test_ids and len(frame) == len(test_ids), name
        assert np.all(np.isfinite(frame["p_hat"])) and np.all(frame["p_hat"] > 0), name
        if METHODS[name].interval:
            assert np.all(frame["lo"] <= frame["hi"]), name
        else:
            assert "lo" not in frame


def test_interval_methods_report_interval_metrics(scores):
    for name in ("quantile-median", "cqr-stack"):
        assert 0.3 < scores[name]["interval_coverage"] <= 1.0
        assert scores[name]["interval_width"] > 0
    assert np.isnan(scores["lgbm-meta"]["interval_coverage"])


def test_permuted_labels_are_no_better_than_constant(atlas_frame, tiny):
    rng = np.random.default_rng(3)
    permuted = atlas_frame.copy()
    fit_rows = permuted["split"] != "test"
    perm = rng.permutation(int(fit_rows.sum()))
    for col in ("p_star", "y"):
        permuted.loc[fit_rows, col] = permuted.loc[fit_rows, col].to_numpy()[perm]
    split = SplitData(permuted, FEATURES)
    const = _score(split, run_method(split, "constant", tiny))
    real = _score(SplitData(atlas_frame, FEATURES), run_method(SplitData(atlas_frame, FEATURES), "lgbm-meta", tiny))
    for name in ("single-stage", "lgbm-meta"):
        noise = _score(split, run_method(split, name, tiny))
        assert noise["rmsle"] > const["rmsle"] - 0.05, name
        assert noise["cov25"] < const["cov25"] + 0.03, name
    assert real["rmsle"] < const["rmsle"] - 0.5  # the same data with true labels is learnable


def test_fixed_seed_is_deterministic(split, tiny):
    for name in ("lgbm-meta", "cqr-stack"):
        a, b = run_method(split, name, tiny), run_method(split, name, tiny)
        np.testing.assert_array_equal(a.y_hat, b.y_hat)
        if a.lo is not None:
            np.testing.assert_array_equal(a.lo, b.lo)


def test_naive_features_exclude_signature_and_history():
    assert naive_features(FEATURES) == [
        "log_cpu", "log_gpu", "log_mem", "log_instances", "log_tasks", "gpu_per_instance",
        "hour_sin", "hour_cos", "day_of_week", "is_weekend", "user_code", "group_code",
    ]
    groups = feature_groups(["sig_prior_submits", "hist_sig_ewma", "hist_user_mean_eb", "sig_train_mean_eb", "log_gpu", "hour_sin"])
    assert groups["signature"] == ["sig_prior_submits", "hist_sig_ewma", "sig_train_mean_eb"]
    assert groups["history"] == ["hist_user_mean_eb"]


def test_cqr_conformal_margin_by_hand():
    P = pd.DataFrame({"q10": np.zeros(5), "q90": np.ones(5), "q50": np.full(5, 0.5)})
    y = np.array([0.5, 1.5, -1.0, 0.2, 3.0])
    # r = max(q10 − y, y − q90) = [−.5, .5, 1, −.2, 2]; max(r, 0) sorted = [0, 0, .5, 1, 2]; Q60 = 0.7
    cqr = CQRStack(point_columns=["q50"]).fit(P, y)
    assert cqr.k_ == pytest.approx(0.7)
    lo, hi = cqr.predict_interval(P)
    assert np.allclose(lo, -0.7) and np.allclose(hi, 1.7)


def test_recency_weighting_by_validation_mae():
    y = np.zeros(4)
    P = pd.DataFrame({"a": np.ones(4), "b": np.full(4, -2.0)})  # MAE 1 and 2
    rw = RecencyWeighting(power=2.0).fit(P, y)
    assert np.allclose(rw.weights_, [0.8, 0.2])
    assert np.allclose(rw.predict(P), 0.8 * 1 - 0.2 * 2)


def test_recency_weights_halve_every_half_life():
    assert np.allclose(recency_weights(np.array([0.0, 10.0, 20.0]), 10.0), [0.25, 0.5, 1.0])


def test_signature_stats_empirical_bayes_by_hand():
    X = pd.DataFrame({"group": ["a"] * 5 + ["b"] * 5})
    y = np.array([2.0] * 5 + [0.0] * 5)  # global mean 1
    est = SignatureStatsLearner(keys=("group",), shrinkage=5.0).fit(X, y)
    # (n μ + λ μ0)/(n + λ): a -> (10 + 5)/10, b -> (0 + 5)/10, unseen -> μ0
    assert np.allclose(est.predict(pd.DataFrame({"group": ["a", "b", "zzz"]})), [1.5, 0.5, 1.0])


def test_two_stage_bands_are_train_tertiles(split, tiny):
    tr = split.train()
    est = TwoStageLearner(n_estimators=tiny.n_estimators, n_jobs=1).fit(tr.X, tr.y)
    assert np.allclose(est.edges_, np.quantile(tr.y, [1 / 3, 2 / 3]))
    assert len(est.experts_) == 3


def test_meta_stacker_reports_honest_out_of_fold_scores():
    rng = np.random.default_rng(0)
    y = rng.normal(size=600)
    P = pd.DataFrame({"good": y + rng.normal(scale=0.3, size=600), "bad": rng.normal(size=600)})
    meta = MetaStacker(n_estimators=50, n_jobs=1).fit(P, y)
    assert meta.lin_weights_[0] > 0.8 and meta.lin_weights_[1] < 0.1
    # Out-of-fold error is about the noise level of the good column, not an in-sample fit.
    assert 0.25 < meta.oof_rmse_ < 0.4
    assert meta.oof_.index.equals(P.index)


@pytest.mark.parametrize("n", [1, 3])
def test_meta_stacker_on_too_few_validation_jobs_is_an_input_error(n):
    # A PAI excerpt of 10 jobs has 1 validation job: lightgbm's "Found array with 0 sample(s)"
    # came out as "internal error" (exit 1) from run --task scheduling (default lgbm-meta p̂).
    P = pd.DataFrame({"a": np.arange(n, dtype=float), "ctx_b": np.ones(n)})
    with pytest.raises(InputError, match=f"needs at least 4 validation jobs, the dataset has {n}"):
        MetaStacker(n_jobs=1).fit(P, np.arange(n, dtype=float))
    P4 = pd.DataFrame({"a": np.arange(4, dtype=float), "ctx_b": np.ones(4)})
    assert np.isfinite(MetaStacker(n_jobs=1).fit(P4, np.arange(4.0)).predict(P4)).all()


def test_lightgbm_threads_honour_the_machine(monkeypatch):
    import os

    from predictors.stage1 import default_n_jobs

    monkeypatch.delenv("ATLAS_N_JOBS", raising=False)
    assert default_n_jobs(1_000) == 1  # small problems: one thread
    assert 1 <= default_n_jobs(1_000_000) <= min(2, os.cpu_count() or 1)
    monkeypatch.setattr(os, "getloadavg", lambda: (50.0, 50.0, 50.0))
    assert default_n_jobs(1_000_000) == 1  # a busy machine gets one thread
    monkeypatch.setenv("ATLAS_N_JOBS", "2")
    assert default_n_jobs(1_000) == 2


def test_feature_groups_on_the_atlas_pipeline_features():
    features = pytest.importorskip("atlas_data.features")
    from predictors.stage1 import is_frozen_train_statistic

    naive = naive_features(features.FEATURES)
    assert naive == features.RESOURCE_FEATURES + features.CALENDAR_FEATURES + features.CATEGORICAL_FEATURES
    assert not set(naive) & set(features.RECURRENCE_FEATURES + features.HISTORY_FEATURES)
    assert [f for f in features.FEATURES if is_frozen_train_statistic(f)] == [
        "sig_train_count", "sig_train_mean_eb", "sig_train_ewma"
    ]


def test_the_default_methods_are_the_leaderboard_built_ins():
    """The prediction task runs, by default, the methods with a leaderboard entry: every built-in but those
    trained for the decision, which run when named."""
    from benchmark.tasks.prediction import DEFAULT_METHODS
    from predictors.methods import BUILTIN_METHODS, LEADERBOARD_METHODS

    assert sorted(DEFAULT_METHODS) == sorted(LEADERBOARD_METHODS) == sorted(ALL)
    assert sorted(set(BUILTIN_METHODS) - set(LEADERBOARD_METHODS)) == sorted(DECISION)
