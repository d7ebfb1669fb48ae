"""Fixtures for the predictor tests: a small synthetic ATLAS frame that follows the dataset
contract (docs/data-formats.md) and has real signal, so learned methods beat `constant`."""

from __future__ import annotations

import pytest

from predictors.data import SplitData
from predictors.methods import MethodConfig
from predictors.synthetic import FEATURES, make_frame, write_dataset

N_JOBS = 3000


@pytest.fixture(scope="session")
def atlas_frame():
    return make_frame(N_JOBS, seed=7)


@pytest.fixture(scope="session")
def split(atlas_frame):
    return SplitData(atlas_frame, FEATURES, fingerprint="test")


@pytest.fixture(scope="session")
def tiny():
    """Few trees: the tests check structure and orderings, not the last digit of accuracy."""
    return MethodConfig(seed=0, n_estimators=40, n_jobs=1)


@pytest.fixture
def dataset_dir(tmp_path, atlas_frame):
    write_dataset(atlas_frame, tmp_path / "ds")
    return tmp_path / "ds"
