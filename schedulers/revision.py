"""Revising an outlived prediction: the one implementation every prediction-aware policy uses.

A policy that orders jobs by a predicted size p̂ keeps, per job, an *estimate* that starts at p̂.
When a job has received as much service as its estimate and is still running, the prediction is
known to be wrong; a policy that keeps using it treats a long job as nearly done (SPRPT's key
max(0, p̂ − attained) stays 0, so the job keeps the machine). A revision rule gives the next
estimate, always above the service received so far:

- `none`: the estimate stays p̂ (the policies as the ATLAS paper defines them);
- `double`: the estimate doubles until it exceeds the service received (the doubling trick of
  online scheduling; the scheduler then pays at most a constant factor for a wrong guess);
- `tsafrir`: service received plus the k-th step of Tsafrir, Etsion & Feitelson's list (IEEE TPDS
  18(6), 2007, section 4.2): 1, 5, 15, 30 min, 1, 2, 5, 10, 20, 50, 100 h, then 100 h again;
- `quantile`: the conditional median of the job's predicted distribution given the service
  received: with log S ~ N(log p̂, σ²) (σ = the job's `predicted_log_sd`, calibrated on validation
  residuals, never on the scheduled jobs), the median of S given S > attained.

The functions are `jitable`: the single-machine policies call them as Python, the compiled cluster
kernels call the same source compiled. No rule reads a true size. May import numpy, math and
schedulers.jit only (scipy to build the quantile table, once at import).
"""

from __future__ import annotations

import math

import numpy as np

from schedulers.jit import jitable

RULES = ("none", "double", "tsafrir", "quantile")
NONE, DOUBLE, TSAFRIR, QUANTILE = range(4)
# Tsafrir et al. 2007: the increments of successive revisions, in seconds
TSAFRIR_STEPS_S = np.array([60.0, 300.0, 900.0, 1800.0, 3600.0, 7200.0, 18000.0, 36000.0, 72000.0,
                            180000.0, 360000.0])
MIN_STEP_S = 1.0  # a revised estimate exceeds the service received by at least this (the size floor)
QUANTILE_LEVEL = 0.5  # the conditional median

# z' = the QUANTILE_LEVEL-quantile of Z given Z > z, Z standard normal, on a grid of z; beyond the
# grid's top the asymptote z + log(1 / (1 − q)) / z (the tail of a normal is ~ exponential in z²/2)
_Z_LO, _Z_HI, _Z_STEP = -10.0, 30.0, 0.005


def _conditional_table() -> np.ndarray:
    from scipy.special import log_ndtr, ndtri_exp  # noqa: PLC0415 (once, at import)

    z = np.arange(_Z_LO, _Z_HI + _Z_STEP / 2, _Z_STEP)
    return -ndtri_exp(math.log(1.0 - QUANTILE_LEVEL) + log_ndtr(-z))


_Z_GRID = np.arange(_Z_LO, _Z_HI + _Z_STEP / 2, _Z_STEP)
_Z_NEXT = _conditional_table()


def rule_code(name: str) -> int:
    """The integer a policy keeps for rule `name` (ValueError naming the rules if unknown)."""
    try:
        return RULES.index(name)
    except ValueError:
        raise ValueError(f"unknown revision rule {name!r}: expected one of {', '.join(RULES)}") from None


@jitable
def conditional_z(z: float) -> float:
    """The QUANTILE_LEVEL-quantile of a standard normal Z given Z > z (> z)."""
    if z >= _Z_HI:
        return z + math.log(1.0 / (1.0 - QUANTILE_LEVEL)) / z
    if z <= _Z_LO:
        return _Z_NEXT[0]
    return np.interp(z, _Z_GRID, _Z_NEXT)


@jitable
def next_estimate(rule: int, estimate: float, attained: float, revisions: int, log_sd: float,
                  predicted: float) -> float:
    """The estimate of a job that has received `attained` ≥ its `estimate`, after `revisions`
    earlier revisions; p̂ = `predicted` and the predicted log-normal spread `log_sd` (quantile rule).
    Always > attained, except under rule `none`, which returns `estimate` unchanged."""
    if rule == NONE:
        return estimate
    if rule == DOUBLE:
        new = max(estimate, MIN_STEP_S)
        while new <= attained:
            new *= 2.0
    elif rule == TSAFRIR:
        k = revisions if revisions < len(TSAFRIR_STEPS_S) else len(TSAFRIR_STEPS_S) - 1
        new = attained + TSAFRIR_STEPS_S[k]
    else:
        mu = math.log(max(predicted, MIN_STEP_S))
        sd = log_sd if log_sd > 1e-6 else 1e-6
        z = (math.log(max(attained, MIN_STEP_S)) - mu) / sd
        new = math.exp(mu + sd * conditional_z(z))
    return max(new, attained + MIN_STEP_S)


@jitable
def revise_outlived(rule: int, estimate, revisions, j: int, attained: float, log_sd: float, predicted: float) -> float:
    """Job j's estimate (`estimate[j]`), revised in place by `rule` first if the service `attained`
    has reached it, the revision counted in `revisions[j]`: the step every policy takes before it
    reads an estimate (lists or arrays alike, so Python policies and compiled kernels share it)."""
    if attained >= estimate[j]:
        estimate[j] = next_estimate(rule, estimate[j], attained, revisions[j], log_sd, predicted)
        revisions[j] += 1
    return estimate[j]


def check_log_sd(log_sd, rule: int, what: str) -> None:
    """The quantile rule needs a predicted spread per job: refuse a run that has none."""
    if rule == QUANTILE and log_sd is None:
        raise ValueError(f"{what}: revision rule 'quantile' needs predicted distributions (predicted_log_sd), "
                         "and the jobs carry none")
