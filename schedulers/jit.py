"""The ATLAS_BENCH_JIT switch: when the compiled (numba) loops run, and the one way they are compiled.

numba is an optional extra (`pip install 'atlas-bench[fast]'`; `make install` installs it). Two
loops run compiled from their Python source with the same results, bit for bit: the single-machine
fast loops (schedulers.fastpath) and the cluster simulator (schedulers.cluster.simulator, one event
loop for every policy kernel). When they run is set by the environment variable `ATLAS_BENCH_JIT`:
- `auto` (default): from `AUTO_MIN_JOBS` jobs up (the cluster simulator: from its own
  `CLUSTER_AUTO_MIN_JOBS`), when numba is installed. Loading a compiled loop from numba's on-disk
  cache costs a few tenths of a second per process (compiling it the first time, a few seconds
  for a single-machine loop, 20–40 s for the cluster simulator's shared loop and 1–20 s for each
  policy kernel), which the Python loops beat on smaller instances;
- `on`: always (an error if numba is missing); `off`: never.

Every loop, compiled or not, has an event budget (the most events a run of its input can take,
which its owner derives from the jobs and settings) and checks in every POLL_EVERY events
(`checkpoint`): past the budget it stops and its owner raises EventBudgetExceeded (exit 2, one
line) instead of spinning; otherwise it calls `poll`, where a compiled loop hands Python the
moment to run a pending signal handler, so Ctrl-C and SIGTERM stop it within a second or two.
The check is one comparison per event, and changes nothing in the run.

This module knows no loop: the loops import it (`use_compiled`, `njit`, `checkpoint`), never the
other way round. May import atlas_data.errors, and lazily numba and schedulers.jitlink (`njit`) and
importlib; the CLI imports it at start-up to check ATLAS_BENCH_JIT before any work.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from atlas_data.errors import InputError

AUTO_MIN_JOBS = 100_000
# the cluster simulator as Python costs about 1 ms per job (its state is numpy arrays, read one
# element at a time), several times its compiled loop once that is cached
CLUSTER_AUTO_MIN_JOBS = 2_000
ENV = "ATLAS_BENCH_JIT"
MODES = ("auto", "on", "off")
#: the files that shape every loop `njit` compiles, beside the loop's own sources: this module and
#: schedulers.jitlink (how a loop's callees are optimised into it); the loops' cache keys read them
SOURCES = (__file__, os.path.join(os.path.dirname(__file__), "jitlink.py"))


#: a loop returns to Python (`poll`) and checks its event budget every this many events: at the
#: cluster simulator's 10-100 µs per event, a Ctrl-C is honoured within a second or two; at the
#: single-machine loops' 0.1-1 µs, the poll costs under 1 % of the loop
POLL_EVERY = 16_384


class JitSettingError(InputError):
    """ATLAS_BENCH_JIT has a value it does not know, or asks for numba where it is missing."""


class EventBudgetExceeded(InputError):
    """A simulation loop went past its event budget, the most events a run of its input can take
    (derived from the jobs and settings by the loop's owner), and was stopped instead of spinning."""


#: the signals whose Python handlers a compiled call defers (`deferred_signals`): those a user or a
#: time limit sends to stop a run
DEFERRED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGALRM")
_deferred: dict = {}  # while a compiled call runs in the main thread: {signal number: its own handler}
_pending: list = []  # the signals that came meanwhile, in order, not yet handed to their handlers


def _defer(signum, frame) -> None:
    _pending.append(signum)


def _deliver() -> None:
    """Hand each pending signal to its own handler (deferred while a compiled call ran), in order:
    its exception, if it raises one, comes out here."""
    while _pending:
        signum = _pending.pop(0)
        _deferred[signum](signum, None)


@contextmanager
def deferred_signals():
    """While compiled code runs, the Python handlers of the signals of DEFERRED only note a signal,
    and `poll` or the end of the block hands it to its own handler.

    A compiled function runs Python code when it hands its results to Python (numba's boxing of a
    structref or a typed list calls Python functions), and Python runs a pending signal's handler at
    any such call: an exception raised there (KeyboardInterrupt, the perf timer's) leaves numba's
    boxing half done, and the process crashes (a segmentation fault in numba's MemInfo) or the call
    fails with a SystemError. Deferred, the handler runs in `poll` (inside the loop, where numba
    passes the exception on) or once the call has returned. In the main thread only (where Python
    runs signal handlers, and may set them); a signal whose handler is not Python's own is left alone.
    """
    import signal  # noqa: PLC0415
    import threading  # noqa: PLC0415

    if _deferred or threading.current_thread() is not threading.main_thread():
        yield  # nested, or not where handlers run
        return
    for name in DEFERRED:
        number = getattr(signal, name, None)
        handler = None if number is None else signal.getsignal(number)
        if callable(handler):
            _deferred[number] = handler
            signal.signal(number, _defer)
    try:
        yield
    finally:
        for number, handler in _deferred.items():
            signal.signal(number, handler)
        try:
            _deliver()  # what came since the last poll, in order
        finally:
            _deferred.clear()
            _pending.clear()


def poll() -> None:
    """Called by a loop every POLL_EVERY events (through `checkpoint`): a compiled loop gives Python
    the chance to run a pending signal handler here (Ctrl-C, SIGTERM, the `--fairness-limit` timer;
    deferred while it runs, `deferred_signals`), whose exception ends the loop (`call` unwraps it);
    a Python loop's handlers run by themselves."""
    if _pending:
        _deliver()


def checkpoint(events, budget):
    """Where a loop that has counted `events` checks in next: the event count of its next
    checkpoint (after a `poll`), or -1 when `events` is past `budget` (the loop then stops and says
    so). A loop calls it when its count reaches the last answer: one comparison per event."""
    if events > budget:
        return -1
    poll()
    nxt = events + POLL_EVERY
    return nxt if nxt <= budget + 1 else budget + 1


def call(loop, *args):
    """`loop(*args)` for a compiled loop (or any compiled function whose results hold structrefs or
    typed lists), its signals deferred (`deferred_signals`): an exception a signal handler raised
    inside its `poll` (KeyboardInterrupt, the perf timer's) comes out as itself, not wrapped by numba."""
    try:
        with deferred_signals():
            return loop(*args)
    except SystemError as exc:  # numba wraps an exception a handler raised in object mode, not deferred
        if isinstance(exc.__cause__, BaseException):
            raise exc.__cause__ from None
        raise


def mode() -> str:
    """The ATLAS_BENCH_JIT setting (`auto` when unset or empty); JitSettingError if unknown."""
    value = os.environ.get(ENV, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise JitSettingError(f"{ENV}={value!r}: expected one of {', '.join(MODES)}")
    return value


@contextmanager
def setting(value: str):
    """ATLAS_BENCH_JIT set to `value` inside the block (what `benchmark perf --peers` times)."""
    old = os.environ.get(ENV)
    os.environ[ENV] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = old


def available() -> bool:
    """Whether numba can be imported (without importing it)."""
    from importlib.util import find_spec  # noqa: PLC0415

    return find_spec("numba") is not None


def use_compiled(n_jobs: int, min_jobs: int | None = None) -> bool:
    """Whether the compiled loops run on `n_jobs` jobs (see the module doc; `min_jobs`: the `auto`
    threshold, AUTO_MIN_JOBS when None); JitSettingError for `on` without numba."""
    setting_now = mode()
    if min_jobs is None:
        min_jobs = AUTO_MIN_JOBS
    if setting_now == "off" or (setting_now == "auto" and n_jobs < min_jobs):
        return False
    if not available():
        if setting_now == "on":
            raise JitSettingError(f"{ENV}=on but numba is not installed: pip install 'atlas-bench[fast]'")
        return False
    return True


def describe(n_jobs: int) -> str:
    """Which loops `simulate` runs a built-in single-machine policy on at `n_jobs` jobs, in words
    (without loading numba)."""
    setting_now = mode()
    if use_compiled(n_jobs):
        return f"compiled (numba; {ENV}={setting_now})"
    if not available():
        return "Python (numba not installed)"
    threshold = f", compiled from {AUTO_MIN_JOBS:,} jobs" if setting_now == "auto" else ""
    return f"Python ({ENV}={setting_now}{threshold})"


_JITABLE: dict[int, tuple] = {}  # id -> (function, inline): marked `jitable`, not yet registered with numba
_INLINE: dict[int, object] = {}  # id -> function: marked `jitable(inline=True)`, for good (schedulers.inlining)


def jitable(function=None, *, inline: bool = False):
    """Mark `function` as one a compiled loop calls: it stays the plain Python function (Python
    calls it as it is); when a loop is compiled, `register_jitables` lets numba compile it into
    that loop (numba's `register_jitable`). `inline=True` (`@jitable(inline=True)`): numba copies
    its body into every caller instead of calling it (for small functions on the hottest paths:
    a call passes the run's state and counts references to it). Does not import numba."""
    def mark(f):
        _JITABLE[id(f)] = (f, inline)
        if inline:
            _INLINE[id(f)] = f
        return f
    return mark if function is None else mark(function)


_poll_registered = False


def _register_poll() -> None:
    """A compiled `poll` calls the Python one in object mode, taking the GIL for it (once per process)."""
    global _poll_registered
    if _poll_registered:
        return
    import numba  # noqa: PLC0415
    from numba.extending import overload  # noqa: PLC0415

    @overload(poll)
    def _poll():
        def impl():
            with numba.objmode():
                poll()
        return impl

    _poll_registered = True


jitable(checkpoint)


def marked_inline(function) -> bool:
    """Whether `function` is marked `jitable(inline=True)`, before and after its registration."""
    return _INLINE.get(id(function)) is function


def register_jitables() -> None:
    """Register every `jitable` function with numba, and the compiled `poll` (imports numba; once
    per function)."""
    from numba.extending import register_jitable  # noqa: PLC0415

    _register_poll()
    while _JITABLE:
        _, (function, inline) = _JITABLE.popitem()
        # no C-callable wrapper: a compiled loop calls it, never C code (numba makes one by default)
        register_jitable(inline="always" if inline else "never", no_cfunc_wrapper=True)(function)


def njit(function, nogil: bool = True):
    """`function` compiled by numba (lazily, on its first call; imports numba), without fast-math so
    that it performs the Python source's floating-point operations; cached on disk where numba
    finds a writable place (next to the source, else the user's cache folder), else compiled once
    per process. The functions it calls are turned into machine code once, inside it (schedulers.jitlink)."""
    import numba  # noqa: PLC0415

    from schedulers import jitlink  # noqa: PLC0415

    register_jitables()  # `checkpoint` and `poll`, which every loop calls
    jitlink.install()
    try:
        loop = numba.njit(cache=True, nogil=nogil)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available": nowhere to write
        loop = numba.njit(nogil=nogil)(function)
    setattr(loop, jitlink.LOOP, True)
    return loop
