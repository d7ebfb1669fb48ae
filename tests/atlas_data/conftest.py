import pytest

from atlas_data.build import build_frame
from atlas_data.raw import RawTables
from atlas_data.synth import synthesize


@pytest.fixture(scope="session")
def small_raw():
    return synthesize(4000, seed=7)


@pytest.fixture(scope="session")
def small_dataset(small_raw):
    return build_frame(RawTables(dict(small_raw), {}), source="synthetic")
