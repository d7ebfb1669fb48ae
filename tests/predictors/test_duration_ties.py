"""Tied durations: `two-stage` and `lgbm-meta` (which stacks a two-stage learner) when the
train-label tertile edges coincide — many jobs at the same (shortest) duration, every job the
same, only two distinct durations. The bands come from the distinct train edges; one band skips
the classifier, two make it binary. On data without ties nothing changes, bit for bit."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from benchmark.cli import main
from predictors.data import SplitData
from predictors.methods import run_method
from predictors.stage1 import (
    MIN_BAND_JOBS,
    TwoStageLearner,
    _lgbm_params,
    _time_holdout,
    duration_bands,
    feature_matrix,
    fit_lgbm,
    model_features,
)
from predictors.synthetic import FEATURES, make_frame

TIED_METHODS = ("two-stage", "lgbm-meta")


def _durations(kind: str, n: int, rng) -> np.ndarray:
    """Durations in seconds: 70 % tied at the shortest, all equal, or two distinct values."""
    if kind == "tied_shortest":
        return np.where(rng.random(n) < 0.7, 60.0, 60.0 + rng.lognormal(5, 1, n).round())
    if kind == "all_equal":
        return np.full(n, 100.0)
    if kind == "two_distinct":
        return np.where(rng.random(n) < 0.5, 60.0, 600.0)
    raise ValueError(kind)


KINDS = ("tied_shortest", "all_equal", "two_distinct")


def _jobs_csv(tmp_path, kind: str, n: int = 200):
    rng = np.random.default_rng(0)
    path = tmp_path / f"{kind}.csv"
    pd.DataFrame({
        "job_id": range(n),
        "submit_time": np.sort(rng.uniform(0, 1e5, n)).round(),
        "duration": _durations(kind, n, rng),
        "gpus": 1,
        "tenant": "a",
    }).to_csv(path, index=False)
    return path


def _frame_x(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"submit_time": np.arange(n) * 10.0, "f": rng.normal(size=n)})


# --- the CLI: exit 0 and positive finite p̂ covering the test split ---------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_prediction_task_on_tied_durations_exits_0(tmp_path, kind):
    out = tmp_path / "out"
    code = main(["run", "--task", "prediction", "--jobs", str(_jobs_csv(tmp_path, kind)), "--methods",
                 ",".join(TIED_METHODS), "--output", str(out), "--no-mlflow", "--quiet"])
    assert code == 0
    n_test = json.loads((out / "results.json").read_text())["n_jobs"]
    for name in TIED_METHODS:
        frame = pd.read_parquet(out / "predictions" / f"{name}.parquet")
        p_hat = frame["p_hat"].to_numpy(float)
        assert len(frame) == n_test and frame["job_id"].is_unique, name
        assert np.all(np.isfinite(p_hat)) and np.all(p_hat > 0), name


def test_scheduling_with_lgbm_meta_on_tied_durations_exits_0(tmp_path):
    code = main(["run", "--task", "scheduling", "--objective", "total_completion", "--predictor", "lgbm-meta",
                 "--jobs", str(_jobs_csv(tmp_path, "tied_shortest")), "--output", str(tmp_path / "out"),
                 "--no-mlflow", "--quiet"])
    assert code == 0


# --- the API on a dataset frame whose labels tie ----------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_methods_on_tied_labels_predict_finite_positive_in_test_order(kind, tiny):
    frame = make_frame(600, seed=3)
    p_star = _durations(kind, len(frame), np.random.default_rng(1))
    frame = frame.assign(p_star=p_star, y=np.log1p(p_star))
    split = SplitData(frame, FEATURES, fingerprint=f"ties-{kind}")
    test_ids = split.test_inputs().X.index.to_numpy()
    for name in TIED_METHODS:
        pred = run_method(split, name, tiny)
        np.testing.assert_array_equal(pred.job_id, test_ids)  # one row per test job, in order
        p_hat = pred.to_frame()["p_hat"].to_numpy(float)
        assert np.all(np.isfinite(p_hat)) and np.all(p_hat > 0), name


# --- the bands and the learner -------------------------------------------------------------------


def test_tied_shortest_durations_leave_one_band_and_no_classifier():
    rng = np.random.default_rng(0)
    y = np.log1p(rng.permutation(np.r_[np.full(280, 60.0), 61.0 + rng.lognormal(5, 1, 120).round()]))
    edges, band = duration_bands(y, 3)
    # both tertile edges sit on the tied shortest duration: nothing is below it
    assert np.quantile(y, 1 / 3) == np.quantile(y, 2 / 3) == y.min()
    assert len(edges) == 0 and np.all(band == 0)
    X = _frame_x(len(y))
    for routing in ("soft", "hard"):
        est = TwoStageLearner(n_estimators=20, n_jobs=1, routing=routing).fit(X, y)
        assert est.n_bands_ == 1 and est.classifier_ is None and len(est.experts_) == 1
        pred = est.predict(X)
        np.testing.assert_array_equal(pred, est.experts_[0].predict(feature_matrix(X, est.features_)))
        assert np.all(np.isfinite(pred))


def test_all_equal_durations_predict_that_duration():
    y = np.full(300, np.log1p(100.0))
    X = _frame_x(len(y))
    est = TwoStageLearner(n_estimators=20, n_jobs=1).fit(X, y)
    assert est.n_bands_ == 1 and est.classifier_ is None
    np.testing.assert_allclose(np.expm1(est.predict(X)), 100.0, rtol=1e-6)


def test_two_distinct_durations_make_a_binary_classifier():
    rng = np.random.default_rng(0)
    y = np.log1p(_durations("two_distinct", 400, rng))
    X = _frame_x(len(y)).assign(f=(y > y.min()) + rng.normal(scale=0.1, size=len(y)))  # f tells them apart
    est = TwoStageLearner(n_estimators=20, n_jobs=1).fit(X, y)
    assert est.n_bands_ == 2 and est.edges_.tolist() == [np.log1p(600.0)]
    assert est.classifier_.objective_ == "binary" and est.classifier_.classes_.tolist() == [0, 1]
    soft = est.predict(X)
    assert np.all(np.isfinite(soft)) and np.all((soft >= y.min() - 1e-9) & (soft <= y.max() + 1e-9))
    hard = TwoStageLearner(n_estimators=20, n_jobs=1, routing="hard").fit(X, y).predict(X)
    np.testing.assert_allclose(np.sort(np.unique(np.round(hard, 6))), np.unique(np.round(y, 6)))


def test_a_band_only_in_the_latest_train_rows_is_not_used_for_early_stopping():
    # tertile edges 1.67 and 3: the middle band holds only the 24 latest jobs, all inside the
    # time holdout, so the rows before it have two bands of three (old code: LightGBMError)
    rng = np.random.default_rng(1)
    y = np.concatenate([rng.permutation(np.r_[np.full(200, 1.0), np.full(376, 3.0)]), np.full(24, 2.0)])
    X = _frame_x(len(y))
    holdout = _time_holdout(X, 0.1)
    _, band = duration_bands(y, 3)
    assert 1 in band[holdout] and set(band[~holdout]) == {0, 2}
    est = TwoStageLearner(n_estimators=20, n_jobs=1).fit(X, y)
    assert est.n_bands_ == 3 and est.classifier_.objective_ == "multiclass"
    assert np.all(np.isfinite(est.predict(X)))


def test_a_band_of_one_job_joins_its_neighbour():
    y = np.r_[np.full(133, 1.0), 2.0, np.full(266, 3.0)]  # tertile edges 2 and 3: [2, 3) holds one job
    edges, band = duration_bands(y, 3)
    assert edges.tolist() == [3.0] and np.bincount(band).tolist() == [134, 266]
    assert MIN_BAND_JOBS == 2
    assert np.all(np.isfinite(TwoStageLearner(n_estimators=20, n_jobs=1).fit(_frame_x(len(y)), y).predict(_frame_x(5))))


def test_bands_only_read_the_train_labels(split, tiny):
    # the learner is handed train rows only (test_stage_isolation); its edges are train quantiles
    tr = split.train()
    est = TwoStageLearner(n_estimators=tiny.n_estimators, n_jobs=1).fit(tr.X, tr.y)
    edges, _ = duration_bands(tr.y, 3)
    np.testing.assert_array_equal(est.edges_, edges)


# --- data without ties: exactly as before ---------------------------------------------------------


def _two_stage_as_before(est: TwoStageLearner, X: pd.DataFrame, y: np.ndarray, X_new: pd.DataFrame) -> np.ndarray:
    """The learner as it was before ties were handled: plain quantile edges, a multiclass fit."""
    import lightgbm as lgb

    features = model_features(X, est.features)
    M = feature_matrix(X, features)
    edges = np.quantile(y, np.linspace(0, 1, est.n_bands + 1)[1:-1])
    band = np.searchsorted(edges, y, side="right")
    holdout = _time_holdout(X, est.holdout_fraction)
    make = lambda n: lgb.LGBMClassifier(**_lgbm_params(est, "multiclass", len(M), n_estimators=n))  # noqa: E731
    classifier, _ = fit_lgbm(make, M, band, None, holdout, est.n_estimators)
    experts = []
    for b in range(est.n_bands):
        rows = band == b
        make = lambda n: lgb.LGBMRegressor(**_lgbm_params(est, "l2", int(rows.sum()), n_estimators=n))  # noqa: E731
        sub = None if holdout is None else holdout[rows]
        if sub is not None and (sub.sum() < 20 or (~sub).sum() < 20):
            sub = None
        experts.append(fit_lgbm(make, M[rows], y[rows], None, sub, est.n_estimators)[0])
    M_new = feature_matrix(X_new, features)
    proba = np.zeros((len(M_new), est.n_bands))
    proba[:, classifier.classes_] = classifier.predict_proba(M_new)
    return (proba * np.column_stack([e.predict(M_new) for e in experts])).sum(axis=1)


def test_untied_data_keeps_the_three_tertile_bands_and_the_same_predictions(split, tiny):
    tr, va = split.train(), split.val()
    est = TwoStageLearner(n_estimators=tiny.n_estimators, n_jobs=1).fit(tr.X, tr.y)
    np.testing.assert_array_equal(est.edges_, np.quantile(tr.y, [1 / 3, 2 / 3]))
    assert est.n_bands_ == 3 and len(est.experts_) == 3
    assert est.classifier_.objective_ == "multiclass" and est.classifier_.classes_.tolist() == [0, 1, 2]
    before = _two_stage_as_before(est, tr.X, tr.y, va.X)
    np.testing.assert_array_equal(est.predict(va.X), before)  # bit for bit
