"""The three-stage runner (Algorithm 1 of ATLAS/LASched) and the prediction result type.

`ThreeStage(stage1={name: learner}, stage2=combiner).fit(split)`:
  Stage 1 — each learner is cloned and fitted on `split.train()` only (X_train, y_train); a plain
            scikit-learn regressor (one without `reads_frame = True`) is wrapped in
            `SklearnLearner`, which hands it numbers only (text context columns encoded);
            `stage2=None` means no calibration (one learner only);
  Stage 2 — the Stage-1 learners predict the validation inputs, and the combiner is fitted on
            that table of predictions and y_val only;
  Stage 3 — `predict(split.test_inputs())` gets test inputs without label columns.
Beside ŷ, every job gets a predicted spread `log_sd`: σ of ln p − ln p̂, calibrated on validation
residuals only (`predictors.stage2.LogSpread`, per bin of p̂), so a job's predicted distribution is
log S ~ N(ln p̂, σ²). The validation p̂ it is fitted on is the combiner's out-of-fold prediction where
it keeps one (`oof_`, the cross-fitted `MetaStacker`), else the combiner's prediction of the
validation rows (out of sample for Stage 1; in sample for a fitted calibrator, whose few parameters
barely shrink the residuals).
The runner is the only code that takes a `SplitData` apart, so which split a component sees is
fixed by this structure: a learner never gets validation labels, a combiner never gets train or
test rows, nobody but the `oracle` reference path (predictors.methods) reads test labels.

May import numpy, pandas, scikit-learn and predictors.{data, stage1, stage2}.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.base import clone

from predictors.data import LABEL_COLUMNS, SplitData, Unlabelled


@dataclass(frozen=True)
class Prediction:
    """Stage-3 output for the test split; ŷ, lo, hi in log space (log1p seconds)."""

    job_id: np.ndarray
    y_hat: np.ndarray
    lo: np.ndarray | None = None
    hi: np.ndarray | None = None
    log_sd: np.ndarray | None = None  # σ of ln p around ln p̂ per job (validation residuals); None: not fitted
    fit_seconds: float = 0.0
    predict_seconds: float = 0.0
    info: dict = field(default_factory=dict)

    def to_frame(self, spread: bool = False) -> pd.DataFrame:
        """job_id, p_hat (seconds, p̂ = expm1(ŷ), kept > 0), and lo, hi in seconds if any; with `spread`,
        `log_sd` too (σ of ln p around ln p̂; 0 where no spread was fitted, e.g. the `oracle`)."""
        out = pd.DataFrame({"job_id": pd.array(self.job_id, dtype="str"), "p_hat": to_seconds(self.y_hat)})
        if self.lo is not None and self.hi is not None:
            out["lo"] = to_seconds(self.lo)
            out["hi"] = to_seconds(self.hi)
        if spread:
            out["log_sd"] = np.zeros(len(out)) if self.log_sd is None else np.asarray(self.log_sd, float)
        return out


def _one_per_row(values, n: int, what: str) -> np.ndarray:
    """A model's output as one float per row, or a ValueError saying what it returned instead."""
    out = np.asarray(values, float)
    if out.shape != (n,):
        raise ValueError(f"{what} predicted an array of shape {out.shape} for {n} rows (one number per row expected)")
    return out


P_HAT_FLOOR_S = 1e-3  # every p̂ is at least 1 ms: positive, so Cov@τ, RMSLE and stretch are defined


def to_seconds(y_log: np.ndarray) -> np.ndarray:
    """p = expm1(y), at least P_HAT_FLOOR_S (flooring to 1 s is the scheduler's job). Even the `oracle`
    reference is floored: on sub-millisecond jobs its p̂ ≠ p (the prediction task says how many)."""
    return np.maximum(np.expm1(np.asarray(y_log, float)), P_HAT_FLOOR_S)


class ThreeStage:
    """Fit Stage 1 on train, Stage 2 on validation predictions, predict test. See module doc."""

    def __init__(self, stage1: dict, stage2=None):
        if not stage1:
            raise ValueError("ThreeStage needs at least one Stage-1 learner")
        self.stage1 = dict(stage1)
        self.stage2 = stage2

    def fit(self, split: SplitData) -> "ThreeStage":
        from predictors.stage1 import as_stage1_learner
        from predictors.stage2 import LogSpread, Passthrough

        stage2 = self.stage2
        if stage2 is None:  # no calibration: the prediction is the one Stage-1 learner's
            if len(self.stage1) != 1:
                raise ValueError(f"stage2=None needs exactly one Stage-1 learner, got {len(self.stage1)} "
                                 "(give a combiner, e.g. predictors.stage2.MetaStacker())")
            stage2 = Passthrough(next(iter(self.stage1)))
        t0 = time.perf_counter()
        train = split.train()
        self.stage1_ = {name: as_stage1_learner(clone(est)).fit(train.X, train.y) for name, est in self.stage1.items()}
        del train
        val = split.val()
        P_val = self.stage1_outputs(val.X)
        self.stage2_ = clone(stage2).fit(P_val, val.y)
        oof = getattr(self.stage2_, "oof_", None)  # honest validation ŷ of a cross-fitted combiner
        y_val_hat = (_one_per_row(oof.reindex(P_val.index) if isinstance(oof, pd.Series) else oof, len(P_val), "Stage 2")
                     if oof is not None else _one_per_row(self.stage2_.predict(P_val), len(P_val), "Stage 2"))
        with np.errstate(over="ignore", invalid="ignore"):  # a ŷ beyond seconds is refused by predict, with its job
            self.spread_ = LogSpread().fit(to_seconds(y_val_hat), np.expm1(val.y))
        self.fit_seconds_ = time.perf_counter() - t0
        return self

    def stage1_outputs(self, X: pd.DataFrame) -> pd.DataFrame:
        """The Stage-1 table: one column of ŷ per learner, indexed like X."""
        leaked = set(LABEL_COLUMNS) & set(X.columns)
        if leaked:
            raise ValueError(f"label column(s) {sorted(leaked)} must not reach a learner's predict")
        return pd.DataFrame({name: _one_per_row(est.predict(X), len(X), f"Stage-1 learner {name!r}")
                             for name, est in self.stage1_.items()}, index=X.index)

    def predict(self, inputs: Unlabelled) -> Prediction:
        t0 = time.perf_counter()
        P = self.stage1_outputs(inputs.X)
        y_hat = _one_per_row(self.stage2_.predict(P), len(P), "Stage 2")
        with np.errstate(over="ignore"):
            bad = ~np.isfinite(np.expm1(y_hat))
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{int(bad.sum())} of {len(y_hat)} predictions are not finite in seconds (first: job "
                             f"{inputs.X.index[i]}, ŷ = {y_hat[i]:g}; ŷ is log1p of seconds, p̂ = expm1(ŷ))")
        interval = self.stage2_.predict_interval(P) if hasattr(self.stage2_, "predict_interval") else None
        lo, hi = (None, None) if interval is None else (np.asarray(interval[0], float), np.asarray(interval[1], float))
        return Prediction(
            job_id=inputs.X.index.to_numpy(),
            y_hat=y_hat,
            lo=lo,
            hi=hi,
            log_sd=self.spread_.predict(to_seconds(y_hat)) if hasattr(self, "spread_") else None,
            fit_seconds=getattr(self, "fit_seconds_", 0.0),
            predict_seconds=time.perf_counter() - t0,
            info=_diagnostics(self.stage2_),
        )


def _diagnostics(stage2) -> dict:
    info = {}
    for attr in ("oof_rmse_", "oof_linear_rmse_", "k_", "n_trees_", "scale_"):
        if hasattr(stage2, attr):
            info[attr.rstrip("_")] = float(getattr(stage2, attr))
    return info
