"""The three-stage structure decides which split each component sees.

Spy estimators record the row ids and columns they are shown. Clones are new objects, so
records go to a module-level log keyed by the spy's `tag` parameter.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, RegressorMixin

from predictors.data import LABEL_COLUMNS, SplitData
from predictors.framework import ThreeStage
from predictors.methods import run_method
from predictors.synthetic import FEATURES

LOG: dict[str, list] = {}


class SpyLearner(RegressorMixin, BaseEstimator):
    def __init__(self, tag: str = "s1"):
        self.tag = tag

    def fit(self, X, y):
        LOG.setdefault(self.tag, []).append(("fit", list(X.index), list(X.columns), np.asarray(y).copy()))
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        LOG.setdefault(self.tag, []).append(("predict", list(X.index), list(X.columns), None))
        return np.full(len(X), self.mean_)


class SpyCalibrator(RegressorMixin, BaseEstimator):
    def __init__(self, tag: str = "s2"):
        self.tag = tag

    def fit(self, P, y):
        LOG.setdefault(self.tag, []).append(("fit", list(P.index), list(P.columns), np.asarray(y).copy()))
        return self

    def predict(self, P):
        LOG.setdefault(self.tag, []).append(("predict", list(P.index), list(P.columns), None))
        return P.iloc[:, 0].to_numpy()


def _ids(frame, split_name):
    part = frame[frame["split"] == split_name].sort_values(["submit_time", "job_id"])
    return list(part["job_id"]), part["y"].to_numpy()


@pytest.fixture
def spied(atlas_frame, split):
    LOG.clear()
    runner = ThreeStage({"spy": SpyLearner("s1")}, SpyCalibrator("s2")).fit(split)
    runner.predict(split.test_inputs())
    return LOG


def test_stage1_fits_on_train_rows_and_labels_only(spied, atlas_frame):
    train_ids, train_y = _ids(atlas_frame, "train")
    fits = [e for e in spied["s1"] if e[0] == "fit"]
    assert len(fits) == 1
    _, ids, columns, y = fits[0]
    assert ids == train_ids
    np.testing.assert_array_equal(y, train_y)
    assert not set(LABEL_COLUMNS) & set(columns)


def test_stage1_predicts_val_then_test_without_label_columns(spied, atlas_frame):
    val_ids, _ = _ids(atlas_frame, "val")
    test_ids, _ = _ids(atlas_frame, "test")
    predicts = [e for e in spied["s1"] if e[0] == "predict"]
    assert [e[1] for e in predicts] == [val_ids, test_ids]
    for _, _, columns, _ in predicts:
        assert not set(LABEL_COLUMNS) & set(columns)
        assert "split" not in columns


def test_calibrator_sees_only_validation_predictions(spied, atlas_frame):
    val_ids, val_y = _ids(atlas_frame, "val")
    test_ids, _ = _ids(atlas_frame, "test")
    (fit,) = [e for e in spied["s2"] if e[0] == "fit"]
    assert fit[1] == val_ids  # never a train or test row
    assert fit[2] == ["spy"]  # a table of Stage-1 predictions, no features
    np.testing.assert_array_equal(fit[3], val_y)
    # it predicts the validation rows once (their residuals calibrate the predicted spread), then the test rows
    assert [e[1] for e in spied["s2"] if e[0] == "predict"] == [val_ids, test_ids]


def test_test_inputs_carry_no_labels_and_truth_is_separate(split):
    X = split.test_inputs().X
    assert not set(LABEL_COLUMNS) & set(X.columns)
    assert list(split.test_truth().index) == list(X.index)


def test_learner_predict_refuses_label_columns(split):
    runner = ThreeStage({"spy": SpyLearner("x")}, SpyCalibrator("y")).fit(split)
    X = split.val().X.assign(p_star=1.0)
    with pytest.raises(ValueError, match="label"):
        runner.stage1_outputs(X)


def _with_labels(frame, which, values):
    out = frame.copy()
    rows = out["split"] == which
    out.loc[rows, "p_star"] = values
    out.loc[rows, "y"] = np.log1p(values)
    return out


def test_test_labels_do_not_change_predictions(atlas_frame, tiny):
    rng = np.random.default_rng(1)
    n_test = int((atlas_frame["split"] == "test").sum())
    garbage = _with_labels(atlas_frame, "test", rng.uniform(1, 1e6, n_test))
    a = run_method(SplitData(atlas_frame, FEATURES), "lgbm-meta", tiny)
    b = run_method(SplitData(garbage, FEATURES), "lgbm-meta", tiny)
    np.testing.assert_array_equal(a.y_hat, b.y_hat)


def test_validation_labels_reach_stage2_but_not_stage1(atlas_frame, tiny):
    rng = np.random.default_rng(2)
    n_val = int((atlas_frame["split"] == "val").sum())
    shuffled = _with_labels(atlas_frame, "val", rng.permutation(atlas_frame.loc[atlas_frame["split"] == "val", "p_star"].to_numpy()))
    # Passthrough Stage 2: the prediction is Stage 1 alone, so it must ignore validation labels.
    a = run_method(SplitData(atlas_frame, FEATURES), "single-stage", tiny)
    b = run_method(SplitData(shuffled, FEATURES), "single-stage", tiny)
    np.testing.assert_array_equal(a.y_hat, b.y_hat)
    # A calibrated method does use them (through Stage 2).
    c = run_method(SplitData(atlas_frame, FEATURES), "isotonic", tiny)
    d = run_method(SplitData(shuffled, FEATURES), "isotonic", tiny)
    assert n_val > 0 and not np.allclose(c.y_hat, d.y_hat)


def test_only_oracle_reads_test_labels(split, tiny, monkeypatch):
    calls = []
    original = SplitData.test_truth
    monkeypatch.setattr(SplitData, "test_truth", lambda self: calls.append(1) or original(self))
    for name in ("constant", "cqr-stack"):
        run_method(split, name, tiny)
    assert calls == []
    run_method(split, "oracle", tiny)
    assert calls == [1]
