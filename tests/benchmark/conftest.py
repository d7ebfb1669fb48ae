"""Fixtures of the command-line tests."""

import pytest


@pytest.fixture(scope="module")
def small_default(tmp_path_factory):
    """The ATLAS default dataset swapped for a 3,000-job one in a private cache (seconds to build and fit),
    so the tests of "no --jobs, no --data" exercise the default path without the full-size build."""
    from atlas_data import named

    patch = pytest.MonkeyPatch()
    patch.setenv("ATLAS_BENCH_CACHE", str(tmp_path_factory.mktemp("cache")))
    patch.setitem(named.NAMED_DATASETS, "default", {"jobs": 3000, "seed": 1})
    yield named.named_dataset_dir("default")
    patch.undo()
