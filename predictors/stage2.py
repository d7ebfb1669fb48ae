"""Stage 2 combiners and calibrators: fitted on validation predictions only.

A Stage-2 estimator's `fit(P, y)` receives P = the Stage-1 predictions on validation rows (one
column per base learner, index = validation job ids) and y = validation labels (log1p p*);
nothing else. `predict(P)` returns ŷ in log space; interval methods also have
`predict_interval(P) -> (lo, hi)` in log space. Because the input is a table of predictions,
these estimators cannot see features, train rows or test labels.

May import numpy, pandas, scipy, scikit-learn, lightgbm and atlas_data.errors.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin

from atlas_data.errors import InputError
from predictors.stage1 import default_n_jobs


def _col(P: pd.DataFrame, name: str) -> np.ndarray:
    return P[name].to_numpy(float)


class Passthrough(RegressorMixin, BaseEstimator):
    """No calibration: ŷ is one Stage-1 column; optional raw interval columns."""

    def __init__(self, point: str = "main", lower: str | None = None, upper: str | None = None):
        self.point = point
        self.lower = lower
        self.upper = upper

    def fit(self, P: pd.DataFrame, y):
        self.n_val_ = len(P)
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        return _col(P, self.point)

    def predict_interval(self, P: pd.DataFrame):
        if self.lower is None or self.upper is None:
            return None
        lo, hi = _col(P, self.lower), _col(P, self.upper)
        return np.minimum(lo, hi), np.maximum(lo, hi)


class LinearCalibrator(RegressorMixin, BaseEstimator):
    """ŷ = a + b·column, least squares on validation (re-centres a drifted learner)."""

    def __init__(self, column: str = "main"):
        self.column = column

    def fit(self, P: pd.DataFrame, y):
        x = _col(P, self.column)
        A = np.column_stack([np.ones_like(x), x])
        (self.intercept_, self.slope_), *_ = np.linalg.lstsq(A, np.asarray(y, float), rcond=None)
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        return self.intercept_ + self.slope_ * _col(P, self.column)


class IsotonicCalibrator(RegressorMixin, BaseEstimator):
    """Monotone map from one Stage-1 column to y, fitted on validation (clipped outside)."""

    def __init__(self, column: str = "main"):
        self.column = column

    def fit(self, P: pd.DataFrame, y):
        from sklearn.isotonic import IsotonicRegression

        self.model_ = IsotonicRegression(out_of_bounds="clip").fit(_col(P, self.column), np.asarray(y, float))
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        return self.model_.predict(_col(P, self.column))


def _nnls_stack(P: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Intercept + non-negative weights minimising squared error."""
    from scipy.optimize import nnls

    mean_p, mean_y = P.mean(axis=0), y.mean()
    w, _ = nnls(P - mean_p, y - mean_y)
    return float(mean_y - mean_p @ w), w


class CQRStack(RegressorMixin, BaseEstimator):
    """Conformalised quantile regression for the interval + non-negative linear stacking for ŷ.

    Score r = max(Q_lo − y, y − Q_hi) on validation; k = quantile(max(r, 0), score_quantile)
    (the paper uses the 60th percentile); interval [Q_lo − k, Q_hi + k]. ŷ = intercept + Σ w_c·P_c
    over `point_columns` (all columns if None) with w ≥ 0, fitted on validation.
    """

    def __init__(self, lower: str = "q10", upper: str = "q90", point_columns=None, score_quantile: float = 0.6):
        self.lower = lower
        self.upper = upper
        self.point_columns = point_columns
        self.score_quantile = score_quantile

    def fit(self, P: pd.DataFrame, y):
        y = np.asarray(y, float)
        lo, hi = _col(P, self.lower), _col(P, self.upper)
        r = np.maximum(lo - y, y - hi)
        self.k_ = float(np.quantile(np.maximum(r, 0.0), self.score_quantile))
        self.columns_ = list(self.point_columns or P.columns)
        self.intercept_, self.weights_ = _nnls_stack(P[self.columns_].to_numpy(float), y)
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        return self.intercept_ + P[self.columns_].to_numpy(float) @ self.weights_

    def predict_interval(self, P: pd.DataFrame):
        lo, hi = _col(P, self.lower), _col(P, self.upper)
        return np.minimum(lo, hi) - self.k_, np.maximum(lo, hi) + self.k_


class RecencyWeighting(RegressorMixin, BaseEstimator):
    """Weighted mean of Stage-1 columns with weights ∝ 1 / validation MAE^power (HRAS)."""

    def __init__(self, columns=None, power: float = 2.0):
        self.columns = columns
        self.power = power

    def fit(self, P: pd.DataFrame, y):
        self.columns_ = list(self.columns or P.columns)
        y = np.asarray(y, float)
        mae = np.array([np.mean(np.abs(_col(P, c) - y)) for c in self.columns_])
        w = 1.0 / np.maximum(mae, 1e-9) ** self.power
        self.mae_ = dict(zip(self.columns_, mae))
        self.weights_ = w / w.sum()
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        return P[self.columns_].to_numpy(float) @ self.weights_


class MetaStacker(RegressorMixin, BaseEstimator):
    """LightGBM meta-model on validation predictions, with cross-fitting inside validation.

    The meta model boosts from the non-negative linear stack of the Stage-1 columns (its
    `init_score`), so it learns corrections to a strong, stable baseline instead of the whole
    map from a few thousand validation rows. Columns named `ctx_*` are context (e.g. support
    counts): inputs to the trees, not stacked linearly.

    K folds over validation (contiguous in submit order): on each fold the linear stack and the
    trees are fitted on the other folds and early-stopped on the held-out one, which gives honest
    out-of-fold predictions (`oof_`, `oof_rmse_`, and `oof_linear_rmse_` for the linear stack
    alone) and the number of trees (`n_trees_`, 0 when trees do not help). The final model is
    refitted on all validation rows with that number of trees.
    """

    MIN_ROWS = 4

    def __init__(
        self,
        n_splits: int = 5,
        n_estimators: int = 400,
        learning_rate: float = 0.03,
        num_leaves: int = 15,
        min_child_samples: int = 40,
        reg_lambda: float = 1.0,
        objective: str = "l2",
        seed: int = 0,
        n_jobs: int | None = None,
    ):
        self.n_splits = n_splits
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.reg_lambda = reg_lambda
        self.objective = objective
        self.seed = seed
        self.n_jobs = n_jobs

    def _params(self, n_estimators: int, n_rows: int) -> dict:
        return dict(
            objective=self.objective,
            n_estimators=n_estimators,
            learning_rate=self.learning_rate,
            num_leaves=self.num_leaves,
            min_child_samples=self.min_child_samples,
            reg_lambda=self.reg_lambda,
            random_state=self.seed,
            n_jobs=self.n_jobs or default_n_jobs(n_rows),
            deterministic=True,
            force_row_wise=True,
            verbose=-1,
        )

    @staticmethod
    def _linear(M: np.ndarray, intercept: float, weights: np.ndarray) -> np.ndarray:
        return intercept + M @ weights

    def fit(self, P: pd.DataFrame, y):
        import lightgbm as lgb

        y = np.asarray(y, float)
        self.columns_ = list(P.columns)
        self.linear_columns_ = [c for c in self.columns_ if not c.startswith("ctx_")]
        M = P[self.columns_].to_numpy(float)
        L = P[self.linear_columns_].to_numpy(float)
        n = len(y)
        if n < self.MIN_ROWS:  # each of the two folds must leave LightGBM two rows to fit
            raise InputError(f"the Stage-2 meta-model (lgbm-meta) needs at least {self.MIN_ROWS} validation jobs, "
                             f"the dataset has {n}: too small for this method")
        k = max(2, min(self.n_splits, n // 50))
        folds = np.array_split(np.arange(n), k)
        oof, oof_lin = np.empty(n), np.empty(n)
        best = []
        for hold in folds:
            keep = np.setdiff1d(np.arange(n), hold)
            b, w = _nnls_stack(L[keep], y[keep])
            base_keep, base_hold = self._linear(L[keep], b, w), self._linear(L[hold], b, w)
            model = lgb.LGBMRegressor(**self._params(self.n_estimators, n))
            model.fit(
                M[keep], y[keep], init_score=base_keep,
                eval_X=(M[hold],), eval_y=(y[hold],), eval_init_score=[base_hold],
                callbacks=[lgb.early_stopping(50, verbose=False)],
            )
            it = int(model.best_iteration_ or 0)
            best.append(it)
            # predict() excludes init_score: the trees' output is the correction to the stack.
            oof[hold] = base_hold + (model.predict(M[hold], num_iteration=it) if it else 0.0)
            oof_lin[hold] = base_hold
        self.oof_ = pd.Series(oof, index=P.index)
        self.oof_rmse_ = float(np.sqrt(np.mean((oof - y) ** 2)))
        self.oof_linear_rmse_ = float(np.sqrt(np.mean((oof_lin - y) ** 2)))
        self.lin_intercept_, self.lin_weights_ = _nnls_stack(L, y)
        base = self._linear(L, self.lin_intercept_, self.lin_weights_)
        self.n_trees_ = int(round(np.mean(best))) if self.oof_rmse_ < self.oof_linear_rmse_ else 0
        self.model_ = None
        if self.n_trees_:
            self.model_ = lgb.LGBMRegressor(**self._params(self.n_trees_, n)).fit(M, y, init_score=base)
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        base = self._linear(P[self.linear_columns_].to_numpy(float), self.lin_intercept_, self.lin_weights_)
        if self.model_ is None:
            return base
        return base + self.model_.predict(P[self.columns_].to_numpy(float))
