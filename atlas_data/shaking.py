"""Input shaking: slightly perturbed copies of a job log's arrivals, to show a result with its spread.

Tsafrir, Ouaknine and Feitelson ("Reducing performance evaluation sensitivity and variability by
input shaking", MASCOTS 2007) run a simulation on many copies of a workload whose jobs' arrival
times are randomly perturbed by a small amount, and report the results over the copies: an effect
that survives the shaking is real, one that comes and goes with it is an artifact of the one log.

Here a shaken copy moves each job's submit time by an independent whole number of seconds drawn
uniformly from [−max_shift_s, +max_shift_s] (whole seconds: SWF times are whole seconds and the
cluster simulator's HPC runs decide on a one-second tick). Nothing else of a job changes. Shifted
jobs may overtake each other: the copy is re-sorted by its new submit times, stably, so jobs that
land on the same second keep their original order (the log's job-number order), and `order` says
which original job each row is. The copy is then translated so that its first arrival is at 0
(no negative times; a sequence on an empty machine starts at its first arrival, so the translation
changes no schedule).

Copies come from numpy Generators keyed by (seed, copy, part): the same seed always gives the same
copies, whatever order they are drawn in, and every policy compared on one copy sees the same
shaken arrivals (paired comparisons).

May import numpy only.
"""

from __future__ import annotations

import numpy as np


def arrival_shifts(n: int, max_shift_s: int, rng: np.random.Generator) -> np.ndarray:
    """n independent shifts, whole seconds, uniform on [−max_shift_s, +max_shift_s] (int64)."""
    if max_shift_s < 0:
        raise ValueError(f"max_shift_s must be >= 0, got {max_shift_s}")
    return rng.integers(-max_shift_s, max_shift_s, size=n, endpoint=True, dtype=np.int64)


def shake(submit: np.ndarray, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The submit times moved by `shifts`, in the copy's arrival order: (times, order), `times`
    sorted with its first at 0 and `order[i]` the original position of the copy's i-th job
    (a stable sort: jobs landing on the same time keep their original order)."""
    moved = np.asarray(submit, dtype=np.float64) + np.asarray(shifts, dtype=np.float64)
    if moved.shape != np.shape(submit):
        raise ValueError("one shift per job")
    order = np.argsort(moved, kind="stable")
    times = moved[order]
    return times - (times[0] if len(times) else 0.0), order


def copy_rng(seed: int, copy: int, part: int = 0) -> np.random.Generator:
    """The Generator of one shaken copy of one part of a log (a sequence, for the HPC protocol)."""
    return np.random.default_rng([int(seed), int(copy), int(part)])


def shaken_copy(submit: np.ndarray, max_shift_s: int, seed: int, copy: int, part: int = 0
                ) -> tuple[np.ndarray, np.ndarray]:
    """`shake` with the shifts of copy `copy` of part `part` under `seed`."""
    return shake(submit, arrival_shifts(len(submit), max_shift_s, copy_rng(seed, copy, part)))


def spread(values, level: float = 0.95) -> dict:
    """The mean of the copies' results and the central `level` range of them (empirical quantiles,
    numpy's linear interpolation; with few copies that is close to their min and max)."""
    v = np.asarray(values, dtype=np.float64)
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(v, [tail, 1.0 - tail])
    return {"mean": float(v.mean()), "lo": float(lo), "hi": float(hi)}
