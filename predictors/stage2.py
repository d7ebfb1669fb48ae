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
    """Monotone map from one Stage-1 column to y, fitted on validation (clipped outside).

    `strict=True` makes the map strictly increasing inside the validation range (centred isotonic
    regression): the isotonic fit's blocks of equal value are replaced by one point each, at the
    block's mean input, joined by straight lines — so distinct inputs keep their order (a ranking
    score stays a ranking) instead of tying on a plateau; beyond the first and last block centres
    the map goes on with the slope of its nearest segment, bounded by the smallest and the largest
    validation y (flat for a single block)."""

    def __init__(self, column: str = "main", strict: bool = False):
        self.column = column
        self.strict = strict

    def fit(self, P: pd.DataFrame, y):
        from sklearn.isotonic import IsotonicRegression

        x, y = _col(P, self.column), np.asarray(y, float)
        self.model_ = IsotonicRegression(out_of_bounds="clip").fit(x, y)
        if self.strict:
            order = np.argsort(x, kind="stable")
            xs, fitted = x[order], self.model_.predict(x[order])
            block = np.r_[0, np.cumsum(fitted[1:] != fitted[:-1])]
            counts = np.bincount(block)
            self.knots_x_ = np.bincount(block, weights=xs) / counts
            self.knots_y_ = np.bincount(block, weights=fitted) / counts
            self.y_range_ = (float(np.min(y)), float(np.max(y)))
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        x = _col(P, self.column)
        if not self.strict:
            return self.model_.predict(x)
        kx, ky = self.knots_x_, self.knots_y_
        out = np.interp(x, kx, ky)
        if len(kx) > 1:
            first, last = (ky[1] - ky[0]) / (kx[1] - kx[0]), (ky[-1] - ky[-2]) / (kx[-1] - kx[-2])
            out = np.where(x < kx[0], ky[0] + first * (x - kx[0]), out)
            out = np.where(x > kx[-1], ky[-1] + last * (x - kx[-1]), out)
        return np.clip(out, *self.y_range_)


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


class SpreadMatched(RegressorMixin, BaseEstimator):
    """A combiner whose validation predictions are given the spread of the validation sizes.

    A regression of y on weak features predicts E[y | x]: calibrated (on validation the slope of y
    on ŷ is ≈ 1), but its predictions spread less than the sizes do, so the longest jobs are
    predicted too short and the shortest too long (the pull toward the middle). This wrapper fits
    `combiner` (a `MetaStacker` by default), takes its out-of-fold validation ŷ (`oof_`; its
    in-sample prediction if it keeps none) and maps ŷ linearly, ŷ' = μ_y + (ŷ − μ_ŷ)·s_y / s_ŷ, so
    that on validation ŷ' has the mean and standard deviation of y. The map is increasing: the order
    of the jobs, and so the rank correlation, is the combiner's. `oof_` is the mapped out-of-fold ŷ.
    """

    def __init__(self, combiner=None):
        self.combiner = combiner

    def fit(self, P: pd.DataFrame, y):
        from sklearn.base import clone

        y = np.asarray(y, float)
        self.combiner_ = clone(self.combiner if self.combiner is not None else MetaStacker()).fit(P, y)
        oof = getattr(self.combiner_, "oof_", None)
        base = (oof.reindex(P.index).to_numpy(float) if isinstance(oof, pd.Series)
                else np.asarray(oof, float) if oof is not None else np.asarray(self.combiner_.predict(P), float))
        self.mean_hat_, self.mean_y_ = float(np.mean(base)), float(np.mean(y))
        sd_hat, sd_y = float(np.std(base)), float(np.std(y))
        self.scale_ = sd_y / sd_hat if sd_hat > 0 else 1.0
        self.oof_ = pd.Series(self._map(base), index=P.index)
        return self

    def _map(self, y_hat: np.ndarray) -> np.ndarray:
        return self.mean_y_ + (np.asarray(y_hat, float) - self.mean_hat_) * self.scale_

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        return self._map(self.combiner_.predict(P))


MAD_TO_SD = 1.4826  # σ = 1.4826 × median |r| for a normal r centred at 0


class LogSpread(BaseEstimator):
    """The predicted spread of a job's log size around p̂, calibrated on validation residuals only.

    `fit(p_hat, p)` takes the validation jobs' p̂ and true sizes in seconds (p̂ out of sample where the
    method allows: see ThreeStage.fit) and the residuals r = ln p − ln p̂. The validation jobs are cut
    into at most `n_bins` bins at the quantiles of ln p̂ (fewer when a bin would hold fewer than
    `min_jobs` jobs; tied p̂ merge bins), and each bin gets a σ_b of the residuals around 0 — not
    around their median: the policies read log S ~ N(ln p̂, σ²), centred at p̂, so a bin whose p̂ is
    biased gets the bias in its spread. `scale='rms'`: σ_b = √ mean r², the maximum-likelihood σ of
    that normal, which keeps the weight of the tails the policies' expected remaining times hinge
    on; `scale='mad'`: σ_b = 1.4826 × median |r|, robust to them (smaller on heavy-tailed residuals).
    `predict(p_hat)` gives each job the σ of the bin its p̂ falls in (below the first edge: the first
    bin; above the last: the last).
    """

    def __init__(self, n_bins: int = 4, min_jobs: int = 30, scale: str = "rms"):
        self.n_bins = n_bins
        self.min_jobs = min_jobs
        self.scale = scale

    def fit(self, p_hat, p):
        if self.scale not in ("rms", "mad"):
            raise ValueError(f"unknown scale {self.scale!r} (rms or mad)")
        log_hat = np.log(np.asarray(p_hat, float))
        r = np.log(np.asarray(p, float)) - log_hat
        if not len(r):
            raise ValueError("LogSpread needs at least one validation job")
        k = max(1, min(int(self.n_bins), len(r) // max(1, int(self.min_jobs))))
        edges = np.unique(np.quantile(log_hat, np.linspace(0, 1, k + 1)[1:-1])) if k > 1 else np.empty(0)
        while len(edges):  # a bin below min_jobs (ties) joins its neighbour, as duration_bands does
            counts = np.bincount(np.searchsorted(edges, log_hat, side="right"), minlength=len(edges) + 1)
            small = np.flatnonzero(counts < self.min_jobs)
            if not len(small):
                break
            edges = np.delete(edges, max(small[0] - 1, 0))
        band = np.searchsorted(edges, log_hat, side="right")
        self.edges_ = edges  # in ln p̂ (seconds)
        rb = [r[band == b] for b in range(len(edges) + 1)]
        self.sd_ = np.array([float(np.sqrt(np.mean(x * x))) if self.scale == "rms" else MAD_TO_SD * float(np.median(np.abs(x)))
                             for x in rb])
        return self

    def predict(self, p_hat) -> np.ndarray:
        return self.sd_[np.searchsorted(self.edges_, np.log(np.asarray(p_hat, float)), side="right")]


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

    `objective='expectile'` fits the asymmetric squared loss of `predictors.stage1.LGBMLearner`
    (w·(y − ŷ)², w = `alpha` for an under-prediction, 1 − `alpha` otherwise): the linear stack is
    shifted by the `alpha`-expectile of its residuals, the trees boost from there with that loss
    as a custom objective and early-stop on it, and trees are kept when they lower it out of fold.
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
        alpha: float = 0.5,
        seed: int = 0,
        n_jobs: int | None = None,
    ):
        self.alpha = alpha
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
        from predictors.stage1 import expectile_objective

        return dict(
            objective=expectile_objective(self.alpha) if self.objective == "expectile" else self.objective,
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
        from predictors.stage1 import expectile, expectile_metric, no_usable_feature

        asym = self.objective == "expectile"
        shift = (lambda r: expectile(r, self.alpha)) if asym else (lambda r: 0.0)  # noqa: E731
        k = max(2, min(self.n_splits, n // 50))
        folds = np.array_split(np.arange(n), k)
        oof, oof_lin = np.empty(n), np.empty(n)
        best = []
        for hold in folds:
            keep = np.setdiff1d(np.arange(n), hold)
            b, w = _nnls_stack(L[keep], y[keep])
            base_keep, base_hold = self._linear(L[keep], b, w), self._linear(L[hold], b, w)
            c = shift(y[keep] - base_keep)
            base_keep, base_hold = base_keep + c, base_hold + c
            model = lgb.LGBMRegressor(**self._params(self.n_estimators, n))
            try:
                model.fit(
                    M[keep], y[keep], init_score=base_keep,
                    eval_X=(M[hold],), eval_y=(y[hold],), eval_init_score=[base_hold],
                    **({"eval_metric": expectile_metric(self.alpha)} if asym else {}),
                    callbacks=[lgb.early_stopping(50, verbose=False)],
                )
                it = int(model.best_iteration_ or 0)
            except lgb.basic.LightGBMError as exc:  # a custom objective with nothing to split on: no trees
                if not (asym and no_usable_feature(exc)):
                    raise
                it = 0
            best.append(it)
            # predict() excludes init_score: the trees' output is the correction to the stack.
            oof[hold] = base_hold + (model.predict(M[hold], num_iteration=it) if it else 0.0)
            oof_lin[hold] = base_hold
        self.oof_ = pd.Series(oof, index=P.index)
        self.oof_rmse_ = float(np.sqrt(np.mean((oof - y) ** 2)))
        self.oof_linear_rmse_ = float(np.sqrt(np.mean((oof_lin - y) ** 2)))
        if asym:  # trees are kept when they lower the loss being fitted
            loss = lambda pred: expectile_metric(self.alpha)(y, pred)[1]  # noqa: E731
            trees_help = loss(oof) < loss(oof_lin)
        else:
            trees_help = self.oof_rmse_ < self.oof_linear_rmse_
        self.lin_intercept_, self.lin_weights_ = _nnls_stack(L, y)
        base = self._linear(L, self.lin_intercept_, self.lin_weights_)
        self.shift_ = float(shift(y - base))
        self.lin_intercept_ += self.shift_
        base = base + self.shift_
        self.n_trees_ = int(round(np.mean(best))) if trees_help else 0
        self.model_ = None
        if self.n_trees_:
            self.model_ = lgb.LGBMRegressor(**self._params(self.n_trees_, n)).fit(M, y, init_score=base)
        return self

    def predict(self, P: pd.DataFrame) -> np.ndarray:
        base = self._linear(P[self.linear_columns_].to_numpy(float), self.lin_intercept_, self.lin_weights_)
        if self.model_ is None:
            return base
        return base + self.model_.predict(P[self.columns_].to_numpy(float))
