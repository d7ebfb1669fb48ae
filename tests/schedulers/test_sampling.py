"""The shared sampling rules: windows and random samples in the simulator's own tie order."""

import numpy as np
import pandas as pd
import pytest

from atlas_data.errors import InputError
from schedulers.jobs import JobSet
from schedulers.sampling import sample_window


def _jobs(ids, submits) -> pd.DataFrame:
    return pd.DataFrame({"job_id": ids, "submit_time": submits, "duration": np.ones(len(ids))})


def test_integer_ids_tie_by_number_as_the_engine_orders_them():
    jobs = _jobs([10, 9, 2, 1], [5.0, 5.0, 5.0, 0.0])
    ordered = sample_window(jobs, None, seed=0)
    assert ordered["job_id"].tolist() == [1, 2, 9, 10]  # text order would put 10 before 2 and 9
    engine = JobSet.from_arrays(jobs["submit_time"], jobs["duration"], job_id=jobs["job_id"].astype(str))
    assert list(engine.job_id) == ["1", "2", "9", "10"]


def test_window_is_consecutive_from_the_seeded_start():
    jobs = _jobs([f"j{i}" for i in range(10)], np.arange(10.0)[::-1])  # submit order = reverse of rows
    window = sample_window(jobs, 4, seed=3)
    start = int(np.random.default_rng(3).integers(0, 7))
    assert window["submit_time"].tolist() == [float(start + k) for k in range(4)]


def test_random_sample_is_seeded_and_kept_in_submit_order():
    jobs = _jobs(list(range(100)), np.arange(100.0))
    sample = sample_window(jobs, 10, seed=7, how="random")
    expected = np.sort(np.random.default_rng(7).choice(100, size=10, replace=False))
    assert sample["job_id"].tolist() == expected.tolist()


def test_n_below_one_is_a_clear_error():
    with pytest.raises(InputError, match="--n must be at least 1"):
        sample_window(_jobs([1, 2], [0.0, 1.0]), 0, seed=0)
