"""Prediction metrics of LASched, on durations in seconds (p̂ and p, both > 0).

- rmsle = sqrt(mean((log1p(p̂) − log1p(p))²))
- cov_τ = mean(|p̂ − p| / p ≤ τ)            (Cov@25 = cov(τ=0.25), Cov@50 = cov(τ=0.5))
- spearman = Spearman rank correlation of p̂ and p (average ranks for ties; NaN if constant)
- under_log = mean(max(0, ln p − ln p̂)): the under-prediction mass, the mean factor (in log, nats)
  by which jobs are predicted shorter than they are; an over-prediction counts 0. A perfect
  predictor scores 0; a constant c scores mean(max(0, ln(p / c))), the upper tail of the sizes
  above c (docs/predictors.md#metrics says why this definition).
- interval_coverage = mean(lo ≤ p ≤ hi)
- interval_width = mean(log1p(hi) − log1p(lo)): the width in log space, i.e. the log of the
  hi/lo ratio for long jobs. Log space, not seconds, because widths in seconds are dominated by
  the few longest jobs and are not comparable across datasets.

May import numpy, pandas and scipy only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

METRIC_NAMES = (
    "rmsle",
    "cov25",
    "cov50",
    "cov25_recurrent",
    "cov50_recurrent",
    "spearman",
    "under_log",
    "interval_coverage",
    "interval_width",
)


def _arrays(*arrays):
    out = [np.asarray(a, dtype=float) for a in arrays]
    if len({a.shape for a in out}) != 1:
        raise ValueError(f"arrays of different shapes: {[a.shape for a in out]}")
    return out


def rmsle(p_hat, p) -> float:
    p_hat, p = _arrays(p_hat, p)
    return float(np.sqrt(np.mean((np.log1p(p_hat) - np.log1p(p)) ** 2)))


def coverage(p_hat, p, tau: float) -> float:
    p_hat, p = _arrays(p_hat, p)
    if p.size == 0:
        return float("nan")
    # A tiny slack so that an exact boundary (|p̂ − p| = τ p) counts despite float rounding.
    return float(np.mean(np.abs(p_hat - p) <= tau * p * (1 + 1e-12)))


def coverage_curve(p_hat, p, taus) -> np.ndarray:
    p_hat, p = _arrays(p_hat, p)
    rel = np.abs(p_hat - p) / p
    return np.array([np.mean(rel <= t * (1 + 1e-12)) for t in taus])


def spearman(p_hat, p) -> float:
    p_hat, p = _arrays(p_hat, p)
    if p.size < 2 or np.all(p_hat == p_hat[0]) or np.all(p == p[0]):
        return float("nan")
    return float(spearmanr(p_hat, p).statistic)


def under_log(p_hat, p) -> float:
    """Under-prediction mass: mean over jobs of max(0, ln p − ln p̂) (NaN for no job)."""
    p_hat, p = _arrays(p_hat, p)
    if p.size == 0:
        return float("nan")
    return float(np.mean(np.maximum(0.0, np.log(p) - np.log(p_hat))))


def interval_coverage(lo, hi, p) -> float:
    lo, hi, p = _arrays(lo, hi, p)
    return float(np.mean((lo <= p) & (p <= hi)))


def interval_width(lo, hi) -> float:
    lo, hi = _arrays(lo, hi)
    return float(np.mean(np.log1p(hi) - np.log1p(lo)))


def evaluate(p_hat, p, is_recurrent=None, lo=None, hi=None) -> dict[str, float]:
    """Every metric in METRIC_NAMES; interval metrics are NaN for point-only methods."""
    p_hat, p = _arrays(p_hat, p)
    rec = np.ones(p.shape, bool) if is_recurrent is None else np.asarray(is_recurrent, bool)
    out = {
        "rmsle": rmsle(p_hat, p),
        "cov25": coverage(p_hat, p, 0.25),
        "cov50": coverage(p_hat, p, 0.50),
        "cov25_recurrent": coverage(p_hat[rec], p[rec], 0.25),
        "cov50_recurrent": coverage(p_hat[rec], p[rec], 0.50),
        "spearman": spearman(p_hat, p),
        "under_log": under_log(p_hat, p),
        "interval_coverage": float("nan"),
        "interval_width": float("nan"),
    }
    if lo is not None and hi is not None and not (pd.isna(lo).all() or pd.isna(hi).all()):
        out["interval_coverage"] = interval_coverage(lo, hi, p)
        out["interval_width"] = interval_width(lo, hi)
    return out
