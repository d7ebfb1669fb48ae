"""Argument types shared by the command parsers, so every command refuses the same bad values alike.

Every numeric option has a range, checked here and only here (docs/data-formats.md#limits lists
them with the reason for each bound): the parser types below for the options argparse converts,
and `read_int` / `read_float` for the items of a comma-separated option (`--machines 5,10`,
`--noise 0,0.5`), which benchmark.tasks.inputs.csv_list converts with them. A sweep config's
values reach the same types: every cell's argv is parsed by the `run` parser before any cell runs
(benchmark.sweeps.config), and the Python API converts its keywords with them too
(benchmark.tasks.config.check_value, which also knows each option's Python type). A bad value is exit 2 with one line that quotes the value as the
user wrote it (not `1e+12` for 1.0000001e12, nor `inf` for 1e400, which is "too large").

`seed` is the type of every `--seed` (and `--sample-seed`, `--pipeline-seed`, `--shake-seed`): an integer from 0 to
MAX_SEED.

May import the standard library and atlas_data.errors.
"""

from __future__ import annotations

import argparse
import math

#: seeds reach numpy's legacy RandomState (the paper protocol's samples and `random-ref`, which adds
#: up to 9 to the seed; it takes 0..2^32-1) and LightGBM's C `int` seed: 2^31 - 1 suits both
MAX_SEED = 2**31 - 1
#: a number of jobs to use (--n, --min-jobs): above any table a run can hold in memory (a 10^8-row
#: table is several GB), small enough for every count and index to stay exact in numpy's int64
MAX_JOBS = 10**9
#: synthetic jobs to generate (`data synth/build --jobs`): the generator holds about 4 kB per job
#: while it runs (1.2 GB at 300,000 jobs), so 2,000,000 needs about 8 GB
MAX_SYNTH_JOBS = 2_000_000
#: machines of a makespan run: each machine is simulator state (100,000 machines: 0.4 GB and half a
#: minute on the default data); the paper's largest is 100. The fairness cluster has its own bounds
#: (benchmark.tasks.config.MAX_NODES, MAX_GPUS)
MAX_MACHINES = 100_000
#: any time span of the fairness simulator, s (--lease, --interval, --fair-window, --cold-start): the
#: bound of every time in a jobs table (atlas_data.jobs_table.MAX_SECONDS, ~31,700 years)
MAX_SECONDS = 1e12
#: worker processes of a local pool (sweep, reproduce astraea): far beyond any one machine's cores
MAX_WORKERS = 1024
#: --max-cells: each cell is a `benchmark run` and a few kB of plan before any runs
MAX_CELLS_LIMIT = 1_000_000


def _bound(value: float) -> str:
    return f"{int(value):,}" if float(value).is_integer() else repr(value)


def _quote(text: str) -> str:
    from atlas_data.errors import shown

    return shown(str(text).strip(), 40)


def read_int(text, low: int, high: int, what: str = "the value") -> int:
    """`text` as an integer from `low` to `high`; else argparse.ArgumentTypeError quoting `text`.

    Digit group separators `_` are allowed (`30_000`), as Python writes them.
    """
    raw = str(text).strip()
    try:
        value = int(raw)
    except ValueError:
        if not raw.lstrip("+-").isdigit():
            raise argparse.ArgumentTypeError(f"not an integer: {_quote(raw)}") from None
        value = -math.inf if raw.startswith("-") else math.inf  # more digits than Python converts (4,300)
    if value < low:
        raise argparse.ArgumentTypeError(f"{what} must be an integer >= {low:,}, got {_quote(raw)}") from None
    if value > high:
        raise argparse.ArgumentTypeError(f"{_quote(raw)} is too large: {what} is at most {high:,} "
                                         "(docs/data-formats.md#limits)")
    return value


def read_float(text, low: float, high: float, what: str = "the value", *, above_low: bool = False) -> float:
    """`text` as a number from `low` (excluded with above_low=True) to `high`; else
    argparse.ArgumentTypeError quoting `text` (a literal beyond the float range is "too large")."""
    raw = str(text).strip()
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {_quote(raw)}") from None
    if math.isnan(value):
        raise argparse.ArgumentTypeError(f"not a number: {_quote(raw)}")
    if value > high:
        raise argparse.ArgumentTypeError(f"{_quote(raw)} is too large: {what} is at most {_bound(high)} "
                                         "(docs/data-formats.md#limits)")
    if value < low or (above_low and value == low):
        raise argparse.ArgumentTypeError(f"{what} must be {'>' if above_low else '>='} {_bound(low)}, got {_quote(raw)}")
    return value


def integer(low: int, high: int, what: str):
    """An argparse type: an integer from `low` to `high` (`what` names it in messages)."""
    def convert(text: str) -> int:
        return read_int(text, low, high, what)

    convert.__name__ = "integer"
    convert.bounds = (low, high)  # what the docs and the boundary tests read
    return convert


def number(low: float, high: float, what: str, *, above_low: bool = False):
    """An argparse type: a number from `low` (excluded with above_low=True) to `high`."""
    def convert(text: str) -> float:
        return read_float(text, low, high, what, above_low=above_low)

    convert.__name__ = "number"
    convert.bounds = (low, high)
    convert.above_low = above_low
    return convert


seed = integer(0, MAX_SEED, "a seed")
job_count = integer(1, MAX_JOBS, "a number of jobs")
synthetic_jobs = integer(1, MAX_SYNTH_JOBS, "a number of synthetic jobs")
workers = integer(1, MAX_WORKERS, "a number of workers")
seconds = number(0.0, MAX_SECONDS, "a time span in seconds", above_low=True)
seconds_or_zero = number(0.0, MAX_SECONDS, "a time span in seconds")


def integers(low: int, high: int, what: str):
    """An argparse type: a comma-separated list of integers, each from `low` to `high` (a tuple;
    empty items are skipped, at least one is needed)."""
    def convert(text: str) -> tuple:
        values = tuple(read_int(item, low, high, what) for item in str(text).split(",") if item.strip())
        if not values:
            raise argparse.ArgumentTypeError(f"expected {what}, or several separated by commas, got {_quote(text)}")
        return values

    convert.__name__ = "integers"
    convert.bounds = (low, high)
    return convert


def machine_count(text: str) -> int:
    """One item of `--machines`."""
    return read_int(text, 1, MAX_MACHINES, "a machine count")
