"""Fixtures of the command-line tests."""

import pytest

from benchmark.cli import main


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


@pytest.fixture
def one_error(capsys):
    """`one_error(argv)` runs `benchmark ARGV` and checks the bad-input rule: exit 2, exactly one
    line on stderr, no traceback, nothing on stdout; it returns that line."""
    def run(argv) -> str:
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse usage errors leave through SystemExit(2)
            code = exc.code
        captured = capsys.readouterr()
        assert code == 2, captured.err
        lines = captured.err.splitlines()
        assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
        assert captured.out == "", captured.out
        return lines[0]
    return run
