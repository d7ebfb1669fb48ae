"""Elementwise functions whose bits do not depend on the CPU: the dataset must be the same on every machine.

numpy computes `log1p` on float64 arrays with a vectorised (SVML) loop on CPUs with AVX-512 and
with the C library's `log1p` elsewhere; the two differ in the last bit for a few percent of the
values. The log features, the label y and everything computed from them would then differ in the
last bit between two machines, and with them the dataset's content fingerprint, which names the
dataset that leaderboard entries were scored on. `log1p` here calls the C library's log1p for every
value (Python's `math.log1p`), as numpy does where it has no vectorised loop. May import numpy only.
"""

from __future__ import annotations

import math

import numpy as np


def _log1p(x: float) -> float:
    if x > -1.0:  # NaN is not: it stays NaN below
        return math.log1p(x)
    return -math.inf if x == -1.0 else math.nan  # numpy's values (math raises)


_LOG1P = np.frompyfunc(_log1p, 1, 1)


def log1p(values) -> np.ndarray:
    """log(1 + x) for every value, as float64, the same bits on every CPU (a scalar for a scalar)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim == 0:
        return np.float64(_log1p(float(x)))
    with np.errstate(invalid="ignore"):  # a NaN passed through sets the flag numpy reports
        return _LOG1P(x).astype(np.float64)
