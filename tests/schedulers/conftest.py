"""Shared helpers of the scheduler tests: small random single-machine instances, and the bit-for-bit
comparison of two cluster runs (the compiled loop against the Python simulator)."""

import numpy as np
import pytest

from schedulers.jobs import JobSet


def random_instance(seed: int) -> JobSet:
    """1–59 jobs: for seeds divisible by 3 small integers (ties in release, size and p̂), otherwise
    log-normal sizes with idle gaps, 20 % simultaneous releases and p̂ = p·exp(0.8 Z)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    if seed % 3 == 0:
        submit = rng.integers(0, 3 * n, n).astype(float)
        size = rng.integers(1, 6, n).astype(float)
        predicted = rng.integers(1, 6, n).astype(float)
    else:
        size = rng.lognormal(2.0, 1.2, n)
        gaps = rng.exponential(size.mean() / rng.choice([0.5, 1.5, 4.0]), n)
        gaps[rng.random(n) < 0.2] = 0.0
        submit = np.cumsum(gaps)
        predicted = size * np.exp(0.8 * rng.standard_normal(n))
    return JobSet.from_arrays(submit, size, predicted)


@pytest.fixture
def instance():
    """`instance(seed)`: a small random JobSet (random_instance)."""
    return random_instance


def assert_same_run(python, compiled_run) -> None:
    """Two FairnessRuns are identical bit for bit: per-job table, tenant windows, executed
    allocations and every metric (but the wall-clock `sim_seconds`)."""
    import pandas as pd

    for attr in ("jobs", "tenant_intervals", "allocations"):
        pd.testing.assert_frame_equal(getattr(python, attr), getattr(compiled_run, attr), check_exact=True, obj=attr)
    left = {k: v for k, v in python.metrics.items() if k != "sim_seconds"}
    right = {k: v for k, v in compiled_run.metrics.items() if k != "sim_seconds"}
    assert left.keys() == right.keys()
    for key, value in left.items():
        other = right[key]
        assert value == other or (isinstance(value, float) and np.isnan(value) and np.isnan(other)), key


@pytest.fixture
def same_run():
    """`same_run(python, compiled)`: assert_same_run."""
    return assert_same_run
