"""Single-machine policies that read a *predicted distribution* per job, not only p̂ (docs/policies.md).

Each job j carries p̂_j and a spread σ_j (`predicted_log_sd`): its size is predicted to be
log-normal, log S_j ~ N(log p̂_j, σ_j²), so p̂_j is the predicted median. The spread comes with the
prediction (calibrated on validation residuals for a learned predictor, the noise level for a
noise model); a policy never sees a true size. Both policies serve one job at a time, the one of
smallest *rank* at its attained service a (lowest rank first; ties by job index):

- `gittins`: rank = 1 / Gittins index, r_j(a) = inf over b > a of ∫_a^b P(S_j > t) dt / P(a < S_j ≤ b),
  the expected service to the next stopping point per unit of completion probability (Gittins
  1989; for M/G/1 mean response time with a size distribution per job class it is the optimal
  blind policy — Scully, Harchol-Balter & Scheller-Wolf, SOAP, 2018). A point mass at p̂ (σ = 0)
  gives r = p̂ − a: predicted SRPT, and with p̂ = p the SRPT schedule. One distribution shared by
  every job with decreasing hazard gives a rank that grows with a: least attained service first.
- `serpt`: shortest expected remaining processing time, r_j(a) = E[S_j − a | S_j > a].

Exactness: for σ > 0 the rank of a job is scale × R_σ(a / p̂_j) with R_σ tabulated once per distinct σ
(rounded to 0.01) on a geometric grid of normalised ages (8 points per doubling, 2^-14 to 2^14 of p̂)
and constant on each cell, from the cell's left end; for σ = 0 it is exact. Only the running job
gains service, so only its rank changes: the policy asks to be woken when the running job reaches
the first grid age at which its rank exceeds the best waiting job's, and at no other time. Cost per
event: O(log n) for the heap plus O(grid) for that look-ahead, never a scan of the jobs.

`CalibrationCeiling` is not a policy to run but a measuring stick, and it reads true sizes: Gittins on
the *exact* distribution of true sizes among the scheduled jobs whose p̂ falls in the same p̂-quantile
bin — what a scheduler could reach if it knew perfectly how the test jobs' sizes are spread given
their p̂. Its share of the blind-to-clairvoyant gap is the ceiling that p̂'s information sets for a
policy that reads p̂ only through its bin (docs/evaluation-protocol.md#the-value-of-prediction).

May import numpy, scipy and schedulers.policy_base / schedulers.policies.single.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from schedulers.policies.single import _OneAtATime, clock_slack
from schedulers.policy_base import IDLE, Allocation, PolicyError, register

GRID = tuple(float(x) for x in 2.0 ** (np.arange(-14 * 8, 14 * 8 + 1) / 8))  # normalised ages a / p̂
_SIGMA_STEP = 0.01  # spreads closer than this share a rank table
_B_POINTS = 4096  # stopping points b of the Gittins infimum, per table
_TOL = 1e-9


def _lognormal_parts(sd: float, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """P(X > x) and E[min(X, x)] for log X ~ N(0, sd²)."""
    from scipy.special import ndtr  # noqa: PLC0415

    lx = np.log(np.maximum(x, 1e-300))
    survival = ndtr(-lx / sd)
    partial = math.exp(sd * sd / 2.0) * ndtr((lx - sd * sd) / sd) + x * survival
    return survival, partial


def gittins_table(sd: float, ages=GRID) -> np.ndarray:
    """R_σ on `ages`: the Gittins rank of log X ~ N(0, sd²) at each normalised age (sd > 0)."""
    ages = np.asarray(ages, np.float64)
    b = np.exp(np.linspace(math.log(ages[0]) - 1.0, 12.0 * sd + math.log(ages[-1]) + 1.0, _B_POINTS))
    s_b, e_b = _lognormal_parts(sd, b)
    s_a, e_a = _lognormal_parts(sd, ages)
    work = e_b[None, :] - e_a[:, None]  # ∫_a^b P(X > t) dt
    done = s_a[:, None] - s_b[None, :]  # P(a < X ≤ b)
    ok = (b[None, :] > ages[:, None]) & (done > 1e-300)
    ratio = np.where(ok, work / np.where(ok, done, 1.0), np.inf)
    table = ratio.min(axis=1)
    # past the last stopping point the distribution has no mass left to resolve: the rank of the
    # last finite cell (a job that old is treated as one more cell of its kind, never as done)
    finite = np.isfinite(table)
    if not finite.any():
        raise ValueError(f"σ = {sd}: no finite Gittins rank on the age grid")
    last = np.flatnonzero(finite)[-1]
    table[last + 1:] = table[last]
    if not np.isfinite(table).all():
        raise ValueError(f"σ = {sd}: a Gittins rank below the age grid's last finite one is not finite")
    return table


def serpt_table(sd: float, ages=GRID) -> np.ndarray:
    """E[X − a | X > a] / 1 on `ages` for log X ~ N(0, sd²) (sd > 0)."""
    ages = np.asarray(ages, np.float64)
    s_a, e_a = _lognormal_parts(sd, ages)
    mean = math.exp(sd * sd / 2.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        table = (mean - e_a) / s_a
    # deep in the tail P(X > a) underflows: the mean residual life of a log-normal grows like
    # a·σ²/log a; keep the last finite value's growth (rank increasing, the job keeps its place)
    finite = np.isfinite(table)
    last = np.flatnonzero(finite)[-1]
    table[last + 1:] = table[last] * ages[last + 1:] / ages[last]
    return table


class _RankPolicy(_OneAtATime):
    """One job at a time, smallest rank at its attained service first (see the module docstring):
    the one-job-at-a-time loop of schedulers.policies.single with the rank as the key, and a wake-up
    where the running job's rank passes the best waiting one's."""

    needs_prediction = True
    needs_spread = True  # reads predicted_log_sd: a run schedules it only with a p̂ that has one
    preemptive = True
    _table = None  # staticmethod(sd -> R_σ on GRID), set by subclasses

    def reset(self, view) -> None:
        log_sd = view.jobs.predicted_log_sd
        if log_sd is None:
            raise PolicyError(f"policy '{self.name}' needs predicted distributions (a spread σ per job, "
                              "predicted_log_sd) and the jobs carry only p̂")
        super().reset(view)
        self.scale = view.jobs.predicted.tolist()
        keys = np.round(np.asarray(log_sd, np.float64) / _SIGMA_STEP).astype(np.int64)
        self.tables: dict[int, list[float] | None] = {}
        for key in np.unique(keys).tolist():
            sd = key * _SIGMA_STEP
            self.tables[key] = None if sd <= 0.0 else type(self)._table(sd).tolist()
        self.table_of = keys.tolist()

    def rank(self, j: int, attained: float) -> float:
        table, scale = self.tables[self.table_of[j]], self.scale[j]
        if table is None:  # a point mass at p̂: exact predicted remaining size
            return max(0.0, scale - attained)
        return scale * table[self._cell(attained / scale)]

    @staticmethod
    def _cell(x: float) -> int:
        # float rounding of a wake-up time counts as reaching the grid point
        return max(0, bisect.bisect_right(GRID, x * (1.0 + _TOL) + 1e-300) - 1)

    def key(self, view, j: int) -> float:
        attained = view.attained(j)
        return self.rank(j, attained + clock_slack(view.now) if attained > 0.0 else 0.0)

    def after(self, view, alloc: Allocation) -> Allocation:
        if self.running != IDLE and self.waiting:
            slack = clock_slack(view.now)
            wake = self._overtaken_at(view.attained(self.running) + slack, self.waiting[0])
            if wake is not None:
                alloc.wake_at(view.now + max(wake, slack))
        return alloc

    def _overtaken_at(self, attained: float, best: tuple[float, int]) -> float | None:
        """Service the running job still receives before its rank passes the best waiting job's
        (None: never, on the grid)."""
        j = self.running
        table, scale = self.tables[self.table_of[j]], self.scale[j]
        if table is None:
            return None  # p̂ − a only falls while the job runs
        best_rank, best_job = best
        for k in range(self._cell(attained / scale) + 1, len(GRID)):
            r = scale * table[k]
            if r > best_rank or (r == best_rank and best_job < j):
                return max(0.0, scale * GRID[k] - attained)
        return None


def empirical_gittins_table(sizes, ages) -> np.ndarray:
    """The Gittins rank r(a) = inf over b > a of E[min(S, b) − a | S > a] / P(S ≤ b | S > a) of the
    empirical distribution of `sizes` (each value equally likely) at each age of `ages`; exact: for a
    discrete distribution the infimum is reached at a support point. Past the largest size the rank of
    the last age that still has mass (as gittins_table does past its grid)."""
    s = np.sort(np.asarray(sizes, np.float64))
    ages = np.asarray(ages, np.float64)
    if not len(s) or not (s > 0).all():
        raise ValueError("an empirical Gittins table needs positive sizes")
    out = np.full(len(ages), np.nan)
    for k, a in enumerate(ages):
        alive = s[np.searchsorted(s, a, side="right"):]
        if not len(alive):
            break
        m = len(alive)
        stop = np.arange(1, m + 1)  # b = alive[t-1]: t survivors finish by b
        # E[min(S, b) − a; S > a] · m = Σ_{u ≤ t} (s_u − a) + (m − t)(b − a)
        work = np.cumsum(alive - a) + (m - stop) * (alive - a)
        out[k] = float(np.min(work / stop))
    last = np.flatnonzero(np.isfinite(out))
    out[last[-1] + 1:] = out[last[-1]]
    return out


class CalibrationCeiling(_RankPolicy):
    """Gittins on the exact size distribution of each p̂-quantile bin of the scheduled jobs (module
    docstring): a diagnostic that reads true sizes, never a learned policy (not registered)."""

    name = "gittins-ceiling"
    description = "diagnostic, reads true sizes: Gittins on the exact size distribution of each p̂-quantile bin"
    clairvoyant = True
    needs_spread = False

    def __init__(self, bins: int = 8):
        if int(bins) < 1:
            raise PolicyError(f"gittins-ceiling needs at least one bin, got {bins}")
        self.bins = int(bins)

    def reset(self, view) -> None:
        _OneAtATime.reset(self, view)
        size = np.asarray(view.jobs.size, np.float64)
        log_p = np.log(np.maximum(np.asarray(view.jobs.predicted, np.float64), 1e-300))
        inner = np.quantile(log_p, np.arange(1, self.bins) / self.bins) if self.bins > 1 else np.zeros(0)
        bin_of = np.searchsorted(inner, log_p, side="right")
        scale = float(np.median(size))
        ages = np.asarray(GRID) * scale
        self.tables = {int(b): (empirical_gittins_table(size[bin_of == b], ages) / scale).tolist()
                       for b in np.unique(bin_of)}
        self.table_of = bin_of.tolist()
        self.scale = [scale] * view.jobs.n


@register
class Gittins(_RankPolicy):
    name = "gittins"
    listing_rank = 120  # its place in every listing of single policies
    description = "preemptive, highest Gittins index of the job's predicted log-normal distribution (median p̂, spread σ)"
    _table = staticmethod(gittins_table)


@register
class SERPT(_RankPolicy):
    name = "serpt"
    listing_rank = 130  # its place in every listing of single policies
    description = "preemptive, shortest expected remaining size E[S - attained | S > attained] under the predicted distribution"
    _table = staticmethod(serpt_table)
