"""Predictors trained for the decision: the under-prediction mass, the asymmetric and ranking
methods, the spread-matched lgbm-meta and the predicted spread (log_sd) of every method — hand-made
numbers for the components, the synthetic split for the methods, and no test label in any of it."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from predictors import metrics
from predictors.data import SplitData
from predictors.methods import build_method, run_method
from predictors.stage1 import expectile_metric, expectile_objective, relevance_levels
from predictors.stage2 import IsotonicCalibrator, LogSpread, Passthrough, SpreadMatched
from predictors.synthetic import FEATURES

NEW = ("lgbm-asym", "lgbm-rank", "lgbm-meta-matched")


# ----- the metric -------------------------------------------------------------------------
def test_under_log_by_hand_perfect_and_constant():
    e = math.e
    p = np.array([1.0, e, e**2, 10.0])
    # ln p − ln p̂ = [0, 1, −1, −ln 2]: only the second job is under-predicted, by 1 (a factor e)
    assert metrics.under_log([1.0, 1.0, e**3, 20.0], p) == pytest.approx(0.25)
    assert metrics.under_log(p, p) == 0.0  # a perfect predictor
    # a constant c = e: the jobs above it count by ln(p / c): [0, 0, 1, ln 10 − 1]
    assert metrics.under_log(np.full(4, e), p) == pytest.approx((1 + math.log(10) - 1) / 4)
    assert metrics.under_log(p * 1000, p) == 0.0  # over-predicting everything is no under-prediction
    assert math.isnan(metrics.under_log([], []))
    out = metrics.evaluate([1.0, 1.0, e**3, 20.0], p)
    assert out["under_log"] == pytest.approx(0.25) and list(out) == list(metrics.METRIC_NAMES)


# ----- components on hand-made numbers -----------------------------------------------------
def test_expectile_objective_gradient_hessian_and_metric_by_hand():
    grad, hess = expectile_objective(0.8)(np.array([1.0, 1.0]), np.array([0.0, 2.0]))
    # u = y − ŷ = [1, −1]: the under-prediction weighs 0.8, the over-prediction 0.2
    np.testing.assert_allclose(grad, [-1.6, 0.4])
    np.testing.assert_allclose(hess, [1.6, 0.4])
    name, value, higher_better = expectile_metric(0.8)(np.array([1.0, 1.0]), np.array([0.0, 2.0]))
    assert (name, higher_better) == ("expectile", False) and value == pytest.approx(0.5)


def test_relevance_levels_are_equal_count_levels_of_y():
    y = np.array([5.0, 1.0, 3.0, 3.0, 9.0, 7.0, 2.0, 8.0])
    # mid-ranks − 0.5: 1→0.5, 2→1.5, 3→3.0 (tied), 5→4.5, 7→5.5, 8→6.5, 9→7.5; level = ⌊mid · 4 / 8⌋
    assert relevance_levels(y, 4).tolist() == [2, 0, 1, 1, 3, 2, 0, 3]


def test_strict_isotonic_keeps_the_order_of_distinct_scores():
    P = pd.DataFrame({"s": [0.0, 1.0, 2.0, 3.0]})
    y = np.array([0.0, 2.0, 1.0, 3.0])  # isotonic fit [0, 1.5, 1.5, 3]: a plateau over s = 1, 2
    plain = IsotonicCalibrator("s").fit(P, y)
    strict = IsotonicCalibrator("s", strict=True).fit(P, y)
    np.testing.assert_allclose(plain.predict(P), [0.0, 1.5, 1.5, 3.0])
    # one knot per block at its mean score: (0, 0), (1.5, 1.5), (3, 3); beyond them the end slopes (1),
    # bounded by the validation y range [0, 3]
    np.testing.assert_allclose(strict.knots_x_, [0.0, 1.5, 3.0])
    np.testing.assert_allclose(strict.predict(pd.DataFrame({"s": [-1.0, 1.0, 2.0, 4.0]})), [0.0, 1.0, 2.0, 3.0])
    wide = IsotonicCalibrator("s", strict=True).fit(pd.DataFrame({"s": [0.0, 1.0, 2.0, 3.0]}), np.array([-5.0, 0.0, 1.0, 9.0]))
    # knots (0, −5), (1, 0), (2, 1), (3, 9): slopes 5 below and 8 above, within [−5, 9]
    np.testing.assert_allclose(wide.predict(pd.DataFrame({"s": [-0.5, 0.5, 3.1, 3.5]})), [-5.0, -2.5, 9.0, 9.0])
    np.testing.assert_allclose(IsotonicCalibrator("s", strict=True).fit(pd.DataFrame({"s": [0.0, 1.0]}), np.array([2.0, 1.0]))
                               .predict(pd.DataFrame({"s": [-3.0, 0.5, 7.0]})), [1.5, 1.5, 1.5])  # one block: flat


def test_spread_matched_gives_validation_predictions_the_mean_and_sd_of_y():
    P = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0]})
    y = np.array([0.0, 4.0, 8.0, 12.0])  # mean 6, sd 4 × that of [1, 2, 3, 4] (mean 2.5)
    m = SpreadMatched(Passthrough("a")).fit(P, y)
    assert m.scale_ == pytest.approx(4.0)
    np.testing.assert_allclose(m.predict(P), y)  # ŷ' = 6 + (ŷ − 2.5) · 4
    np.testing.assert_allclose(m.oof_.to_numpy(), y)
    assert m.predict(pd.DataFrame({"a": [5.0]}))[0] == pytest.approx(16.0)


def test_log_spread_by_hand_per_bin_of_p_hat():
    r_short = np.linspace(-0.3, 0.3, 30)  # residuals ln p − ln p̂ of the jobs predicted 10 s
    r_long = np.r_[np.full(15, -2.0), np.full(15, 1.0)]  # and of those predicted 1000 s
    p_hat = np.r_[np.full(30, 10.0), np.full(30, 1000.0)]
    p = p_hat * np.exp(np.r_[r_short, r_long])
    spread = LogSpread(n_bins=2, min_jobs=30).fit(p_hat, p)
    np.testing.assert_allclose(spread.edges_, [math.log(100.0)])  # the median of ln p̂
    # σ around p̂ (0), not around the residuals' median: the long bin's −2/+1 residuals give √((4 + 1) / 2)
    np.testing.assert_allclose(spread.sd_, [np.sqrt(np.mean(r_short**2)), math.sqrt(2.5)])
    np.testing.assert_allclose(spread.predict([5.0, 99.0, 100.0, 1e6]), spread.sd_[[0, 0, 1, 1]])
    mad = LogSpread(n_bins=2, min_jobs=30, scale="mad").fit(p_hat, p)
    np.testing.assert_allclose(mad.sd_, [1.4826 * np.median(np.abs(r_short)), 1.4826 * 1.5])
    # too few jobs for two bins of 30, and p̂ all tied: one bin
    assert len(LogSpread(n_bins=2, min_jobs=31).fit(p_hat, p).sd_) == 1
    tied = LogSpread(n_bins=4, min_jobs=5).fit(np.full(60, 10.0), p)
    assert tied.edges_.size == 0 and tied.sd_[0] == pytest.approx(np.sqrt(np.mean(np.log(p / 10.0) ** 2)))
    with pytest.raises(ValueError, match="unknown scale"):
        LogSpread(scale="iqr").fit(p_hat, p)


# ----- the methods on the synthetic split --------------------------------------------------
@pytest.fixture(scope="module")
def fitted(split, tiny):
    return {name: run_method(split, name, tiny) for name in ("lgbm-meta", *NEW)}


def test_asymmetric_method_under_predicts_less_than_lgbm_meta(split, fitted):
    truth = split.test_truth()
    under = {}
    for name in ("lgbm-meta", "lgbm-asym"):
        frame = fitted[name].to_frame()
        p = truth.loc[frame["job_id"], "p_star"].to_numpy(float)
        under[name] = metrics.under_log(frame["p_hat"], p)
        share_under = float(np.mean(frame["p_hat"].to_numpy() < p))
        under[name + " share"] = share_under
    assert under["lgbm-asym"] < 0.75 * under["lgbm-meta"], under
    assert under["lgbm-asym share"] < under["lgbm-meta share"] - 0.1, under


def test_ranking_method_p_hat_is_monotone_in_its_score(split, tiny):
    method = build_method("lgbm-rank", split.features, tiny).fit(split)
    inputs = split.test_inputs()
    score = method.stage1_outputs(inputs.X)["score"].to_numpy()
    p_hat = method.predict(inputs).to_frame()["p_hat"].to_numpy()
    order = np.argsort(score, kind="stable")
    assert np.all(np.diff(p_hat[order]) >= 0)
    # strictly: distinct scores get distinct p̂ (the ranker's own ties aside, no plateau of the map)
    distinct, first = np.unique(score, return_index=True)
    assert len(distinct) > 20 and np.all(np.diff(p_hat[first]) > 0)
    truth = split.test_truth().loc[inputs.X.index, "p_star"].to_numpy()
    assert metrics.spearman(score, truth) > 0.6  # the score does rank the sizes


def test_new_methods_predict_the_test_split_with_a_spread(split, fitted):
    test_ids = set(split.test_inputs().X.index)
    for name, pred in fitted.items():
        frame = pred.to_frame(spread=True)
        assert set(frame["job_id"]) == test_ids and len(frame) == len(test_ids), name
        assert np.all(np.isfinite(frame["p_hat"])) and np.all(frame["p_hat"] > 0), name
        assert np.all(np.isfinite(frame["log_sd"])) and np.all(frame["log_sd"] > 0), name
        assert list(pred.to_frame().columns) == ["job_id", "p_hat"], name  # spread only when asked for
    assert run_method(split, "oracle").to_frame(spread=True)["log_sd"].eq(0.0).all()


def test_spread_matching_keeps_lgbm_meta_order_and_widens_it(fitted):
    meta, matched = fitted["lgbm-meta"].y_hat, fitted["lgbm-meta-matched"].y_hat
    assert metrics.spearman(matched, meta) == pytest.approx(1.0)
    assert np.std(matched) > np.std(meta)


def _with_labels(frame, which, values):
    out = frame.copy()
    rows = out["split"] == which
    out.loc[rows, "p_star"] = values
    out.loc[rows, "y"] = np.log1p(values)
    return out


def test_test_labels_change_neither_p_hat_nor_log_sd(atlas_frame, tiny, fitted):
    rng = np.random.default_rng(11)
    n_test = int((atlas_frame["split"] == "test").sum())
    garbage = SplitData(_with_labels(atlas_frame, "test", rng.uniform(1, 1e6, n_test)), FEATURES)
    for name, before in fitted.items():
        after = run_method(garbage, name, tiny)
        np.testing.assert_array_equal(after.y_hat, before.y_hat, err_msg=name)
        np.testing.assert_array_equal(after.log_sd, before.log_sd, err_msg=name)


def test_log_sd_is_calibrated_on_validation_labels(atlas_frame, tiny):
    """single-stage's p̂ ignores validation labels (no Stage 2), its spread is made of them."""
    val = atlas_frame["split"] == "val"
    wider = _with_labels(atlas_frame, "val", atlas_frame.loc[val, "p_star"].to_numpy() * np.exp(
        np.random.default_rng(4).normal(scale=2.0, size=int(val.sum()))))
    a = run_method(SplitData(atlas_frame, FEATURES), "single-stage", tiny)
    b = run_method(SplitData(wider, FEATURES), "single-stage", tiny)
    np.testing.assert_array_equal(a.y_hat, b.y_hat)
    assert np.mean(b.log_sd) > np.mean(a.log_sd) + 0.5


def test_expectile_learner_with_nothing_to_split_predicts_the_train_mean():
    from predictors.stage1 import LGBMLearner

    X = pd.DataFrame({"f": np.ones(40), "submit_time": np.arange(40.0)})
    y = np.arange(40.0)
    est = LGBMLearner(objective="expectile", alpha=0.8, features=["f"], n_estimators=5, n_jobs=1).fit(X, y)
    assert est.model_ is None
    np.testing.assert_array_equal(est.predict(X.head(3)), [19.5, 19.5, 19.5])


def test_expectile_by_hand():
    from predictors.stage1 import expectile

    # 0.8·(1 − c) = 0.2·c: c = 0.8; τ = 0.5 is the mean
    assert expectile(np.array([0.0, 1.0]), 0.8) == pytest.approx(0.8)
    assert expectile(np.array([0.0, 0.0, 3.0]), 0.5) == pytest.approx(1.0)


def test_asymmetric_meta_stacker_shifts_its_stack_by_the_expectile_of_the_residuals():
    from predictors.stage1 import expectile
    from predictors.stage2 import MetaStacker, _nnls_stack

    rng = np.random.default_rng(0)
    x = rng.normal(size=800)
    y = x + rng.normal(scale=0.5, size=800)
    P = pd.DataFrame({"a": x})
    sym = MetaStacker(n_estimators=20, n_jobs=1).fit(P, y)
    asym = MetaStacker(n_estimators=20, n_jobs=1, objective="expectile", alpha=0.8).fit(P, y)
    b, w = _nnls_stack(P.to_numpy(), y)
    assert sym.shift_ == 0.0
    assert asym.shift_ == pytest.approx(expectile(y - (b + P.to_numpy() @ w), 0.8)) and asym.shift_ > 0.2
    assert np.mean(y > asym.predict(P)) < np.mean(y > sym.predict(P)) - 0.15  # fewer jobs under-predicted
