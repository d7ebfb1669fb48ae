"""A user's scikit-learn regressor plugged in by import path."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge

from atlas_data.errors import InputError
from predictors.methods import run_method
from predictors.metrics import rmsle
from predictors.plugins import resolve_estimator
from predictors.stage1 import SklearnLearner


class FirstColumnRegressor(RegressorMixin, BaseEstimator):
    """A deliberately simple custom model: y ≈ a + b·x0, by least squares."""

    def __init__(self, column: int = 0):
        self.column = column

    def fit(self, X, y):
        x = np.asarray(X)[:, self.column]
        self.slope_, self.intercept_ = np.polyfit(x, y, 1)
        return self

    def predict(self, X):
        return self.intercept_ + self.slope_ * np.asarray(X)[:, self.column]


NOT_AN_ESTIMATOR = object()


@pytest.mark.parametrize("path", ["sklearn.linear_model:Ridge", "sklearn.linear_model.Ridge"])
def test_resolve_sklearn_class_both_spellings(path):
    assert isinstance(resolve_estimator(path), Ridge)


def test_ridge_by_import_path_beats_constant(split, tiny):
    truth = split.test_truth()
    ridge = run_method(split, "sklearn.linear_model:Ridge", tiny).to_frame()
    const = run_method(split, "constant", tiny).to_frame()
    p = truth.loc[ridge["job_id"], "p_star"]
    assert set(ridge["job_id"]) == set(truth.index)
    assert rmsle(ridge["p_hat"], p) < rmsle(const["p_hat"], truth.loc[const["job_id"], "p_star"]) - 0.5


def test_custom_class_from_a_test_module(split, tiny):
    path = f"{__name__}:FirstColumnRegressor"
    est = resolve_estimator(path)
    assert type(est).__name__ == "FirstColumnRegressor"
    pred = run_method(split, path, tiny)
    # The wrapped model is exactly a line on the first feature, fitted on train.
    tr = split.train()
    x0 = tr.X[split.features[0]].to_numpy(float)
    b, a = np.polyfit(x0, tr.y, 1)
    expected = a + b * split.test_inputs().X[split.features[0]].to_numpy(float)
    np.testing.assert_allclose(pred.y_hat, expected, rtol=1e-5)


def test_sklearn_learner_imputes_missing_features(split):
    tr = split.train()
    assert tr.X["hist_mean_y"].isna().any()  # first jobs of a group have no history
    learner = SklearnLearner(Ridge()).fit(tr.X, tr.y)
    assert np.all(np.isfinite(learner.predict(split.test_inputs().X)))


@pytest.mark.parametrize(
    "path, message",
    [
        ("no_such_module_xyz:Model", "cannot import"),
        ("sklearn.linear_model:NoSuchModel", "no attribute"),
        (f"{__name__}:NOT_AN_ESTIMATOR", "not an estimator"),
        ("justaname.", "expected"),
    ],
)
def test_bad_import_paths_are_input_errors(path, message):
    with pytest.raises(InputError, match=message):
        resolve_estimator(path)


def test_register_a_named_method(split, tiny, monkeypatch):
    from predictors import methods
    from predictors.framework import ThreeStage
    from predictors.stage2 import IsotonicCalibrator

    monkeypatch.setattr(methods, "METHODS", dict(methods.METHODS))
    methods.register_method(
        "ridge-iso", lambda features, cfg: ThreeStage({"main": SklearnLearner(Ridge())}, IsotonicCalibrator("main"))
    )
    assert "ridge-iso" in methods.method_names()
    pred = run_method(split, "ridge-iso", tiny)
    assert len(pred.y_hat) == len(split.test_inputs().X)
    with pytest.raises(ValueError, match="already exists"):
        methods.register_method("lgbm-meta", lambda f, c: None)


class BrokenOutput(RegressorMixin, BaseEstimator):
    """Predicts what `kind` says instead of one log1p(seconds) number per row."""

    kind = "nan"

    def fit(self, X, y):
        return self

    def predict(self, X):
        n = len(X)
        return {"nan": np.full(n, np.nan), "seconds": np.full(n, 1e6), "short": np.zeros(n - 1),
                "two-columns": np.zeros((n, 2))}[self.kind]


class SecondsOutput(BrokenOutput):
    kind = "seconds"


class ShortOutput(BrokenOutput):
    kind = "short"


class TwoColumnOutput(BrokenOutput):
    kind = "two-columns"


@pytest.mark.parametrize("model, message", [
    # were internal errors (exit 1): "produced non-finite or non-positive p_hat", after an overflow warning
    ("BrokenOutput", "predictions are not finite in seconds (first: job"),
    ("SecondsOutput", "ŷ = 1e+06; ŷ is log1p of seconds, p̂ = expm1(ŷ)"),
    # were pandas' "Length of values (n - 1) does not match length of index (n)"
    ("ShortOutput", "Stage-1 learner 'main' predicted an array of shape"),
    ("TwoColumnOutput", "Stage-1 learner 'main' predicted an array of shape"),
])
def test_a_plugin_model_output_that_is_not_one_finite_number_per_job_is_one_line(split, model, message):
    with pytest.raises(InputError, match=f"method '{__name__}:{model}' raised ValueError") as info:
        run_method(split, f"{__name__}:{model}")
    assert message in str(info.value)
