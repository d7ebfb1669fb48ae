"""The fast loops of schedulers.fastpath compiled with numba: the same source, the same schedule.

numba is an optional extra (`pip install 'atlas-bench[fast]'`; `make install` installs it). Each
loop in schedulers.fastpath is written so that numba compiles it unchanged (typed empty heaps,
outputs passed in, no dictionaries): the compiled loop performs the same IEEE floating-point
operations in the same order as the Python one (no fast-math), so completion and start times,
preemption counts and event counts are identical, bit for bit (tests/schedulers/test_compiled.py).
The Python loops stay the reference, and the fallback when numba is missing.

When the compiled loops run is set by the environment variable `ATLAS_BENCH_JIT`:
- `auto` (default): from `AUTO_MIN_JOBS` jobs up, when numba is installed. Loading a compiled
  loop from numba's on-disk cache costs a few tenths of a second per process (compiling it the
  first time, a few seconds), which the Python loops beat on smaller instances;
- `on`: always (an error if numba is missing); `off`: never.
May import atlas_data.errors, and lazily numpy, numba and schedulers.fastpath (the CLI imports
this module at start-up to check ATLAS_BENCH_JIT).
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from atlas_data.errors import InputError

AUTO_MIN_JOBS = 100_000
_ENV = "ATLAS_BENCH_JIT"
_MODES = ("auto", "on", "off")
_loops = None  # the compiled loops once made (numba compiles each on its first call)


class JitSettingError(InputError):
    """ATLAS_BENCH_JIT has a value it does not know, or asks for numba where it is missing."""


def mode() -> str:
    value = os.environ.get(_ENV, "auto").strip().lower() or "auto"
    if value not in _MODES:
        raise JitSettingError(f"{_ENV}={value!r}: expected one of {', '.join(_MODES)}")
    return value


@contextmanager
def setting(value: str):
    """ATLAS_BENCH_JIT set to `value` inside the block (what `benchmark perf --peers` times)."""
    old = os.environ.get(_ENV)
    os.environ[_ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(_ENV, None)
        else:
            os.environ[_ENV] = old


def describe(n_jobs: int) -> str:
    """Which loops `simulate` runs a built-in single-machine policy on at `n_jobs` jobs, in words
    (without loading numba)."""
    setting_now = mode()
    if _use_compiled(n_jobs):
        return f"compiled (numba; {_ENV}={setting_now})"
    if not available():
        return "Python (numba not installed)"
    threshold = f", compiled from {AUTO_MIN_JOBS:,} jobs" if setting_now == "auto" else ""
    return f"Python ({_ENV}={setting_now}{threshold})"


def available() -> bool:
    """Whether numba can be imported (without importing it)."""
    from importlib.util import find_spec  # noqa: PLC0415

    return find_spec("numba") is not None


def _use_compiled(n_jobs: int) -> bool:
    """Whether the compiled loops run on `n_jobs` jobs (see the module doc)."""
    setting_now = mode()
    if setting_now == "off" or (setting_now == "auto" and n_jobs < AUTO_MIN_JOBS):
        return False
    if not available():
        if setting_now == "on":
            raise JitSettingError(f"{_ENV}=on but numba is not installed: pip install 'atlas-bench[fast]'")
        return False
    return True


def loops_for(n_jobs: int):
    """The compiled loops if they should run on `n_jobs` jobs, else None."""
    return compiled_loops() if _use_compiled(n_jobs) else None


def compiled_loops():
    """The loops of schedulers.fastpath compiled by numba (each on its first call)."""
    global _loops
    if _loops is None:
        import numba  # noqa: PLC0415

        from schedulers import fastpath  # noqa: PLC0415

        _loops = fastpath._Loops(lambda f: _jit(numba, f))
    return _loops


def _jit(numba, function, nogil: bool = True):
    """`function` compiled lazily, cached on disk where numba finds a writable place (next to the
    source, else the user's cache folder), else compiled once per process."""
    try:
        return numba.njit(cache=True, nogil=nogil)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available": nowhere to write
        return numba.njit(nogil=nogil)(function)


def column(values, then: float | None = None):
    """A job column as the compiled loops take it: a writable float64 array of its own (one array
    type for every column, so that each loop compiles once), with `then` appended if given."""
    import numpy as np  # noqa: PLC0415

    return np.array(values, np.float64) if then is None else np.append(np.asarray(values, np.float64), then)


def buffers(n: int, preemptive: bool) -> tuple:
    """The completion, start (NaN: not started) and preemption arrays the compiled loops fill in."""
    import numpy as np  # noqa: PLC0415

    return np.full(n, np.nan), np.full(n, np.nan), (np.zeros(n, np.int64) if preemptive else None)
