"""How every command reacts to Ctrl-C (SIGINT), SIGTERM and SIGHUP: stop, clean up, one line, exit 130.

`benchmark.cli.main` runs each command in `one_command()` (its own interrupt state; the signal
handlers it found are the ones it leaves) and wraps it in `terminate_as_interrupt()`, so SIGTERM and SIGHUP (the
terminal or SSH session that started the command closed) raise KeyboardInterrupt just as SIGINT does, every `finally` and cleanup runs, and the CLI prints one
line. An interrupt that lands in a weakref callback or `__del__` (SQLAlchemy and pandas run many)
would be printed as "Exception ignored" and lost; inside the context it is delivered again to the
main thread instead. Short critical sections (creating an MLflow run, marking it KILLED) run inside
`deferred_signals()`: a signal that arrives there is held and raised when the section is done, so
the store never holds a run that nobody will end. Once a command is interrupted, what its torn-down
work reports from finalizers (an SQLite connection closed mid-transaction, a pool's rollback) is a
consequence of the interrupt, not news: `after_interrupt()` keeps it off the terminal, so the
one line stays one line; MLflow's own error log of the session the interrupt cut (a traceback)
is dropped the same way (`quiet_logs_when_interrupted`). `quiet_exit()` makes a Ctrl-C or SIGTERM during
interpreter shutdown (after the command returned) do nothing instead of printing a traceback.

Signal handlers can only be set from the main thread; elsewhere (a Dask worker thread) these are
no-ops. A local sweep worker says so with `leave_signals_to_parent()`: its parent handles Ctrl-C
and stops it, so it keeps SIGTERM's default action. A command started with SIGINT ignored
(`nohup`, or `cmd &` in a script: the shell does that) keeps ignoring Ctrl-C, as such a
background job should, but SIGTERM still stops it cleanly with exit 130. SIGHUP is handled only
if its action is the default: under `nohup` it stays ignored, so the command outlives its terminal.
May import the standard library only.
"""

from __future__ import annotations

import _thread
import atexit
import contextlib
import logging
import signal
import sys
import threading

_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# handled like SIGTERM: a `kill` or a closed terminal stops the command as cleanly as Ctrl-C does
_TERMINATING = (signal.SIGTERM, signal.SIGHUP)
_exit_hook_registered = False
_parent_handles_signals = False
_process_exits_after = False  # the command is the whole process (`benchmark.cli.entry`)


def exit_after_command() -> None:
    """The process ends when the command returns: from then on Ctrl-C and SIGTERM are ignored, with
    no moment between the command's handlers and interpreter shutdown in which SIGTERM still kills."""
    global _process_exits_after
    _process_exits_after = True


def leave_signals_to_parent() -> None:
    """Called first in a local sweep worker: Ctrl-C and SIGHUP (which reach the whole process group) are
    ignored here, the parent stops the worker; SIGTERM ends the process at once."""
    global _parent_handles_signals
    _parent_handles_signals = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _raise_interrupt(signum, frame):  # noqa: ARG001 - signal handler signature
    global _signal_name
    mark_interrupted()
    _signal_name = signal.Signals(signum).name
    raise KeyboardInterrupt(_signal_name)


_interrupted = False  # the command running now was interrupted: finalizers' errors are teardown noise
_exiting_interrupted = False  # a command ended by an interrupt: the same holds through interpreter shutdown
_quiet_shutdown = False  # the process is exiting after an interrupted command: logs are teardown noise too
_signal_name: str | None = None  # the signal that interrupted the command running now


def _quiet_unraisable(previous):
    def hook(unraisable) -> None:
        if not _interrupted:
            previous(unraisable)
    return hook


class _QuietWhenInterrupted(logging.Filter):
    """Drops log records once the command is interrupted: MLflow logs the database error its torn-down
    session raises (with a traceback) before the interrupt reaches the CLI."""

    def filter(self, record) -> bool:  # noqa: ARG002
        return not (_interrupted or _quiet_shutdown)


_QUIET = _QuietWhenInterrupted()


def quiet_logs_when_interrupted(*logger_names: str) -> None:
    """Keep the handlers of these loggers (and logging's last-resort handler, which prints for loggers
    without any) silent while an interrupt is being handled."""
    handlers = [logging.lastResort] if logging.lastResort is not None else []
    for name in logger_names:
        handlers += logging.getLogger(name).handlers
    for handler in handlers:
        if _QUIET not in handler.filters:
            handler.addFilter(_QUIET)


@contextlib.contextmanager
def after_interrupt():
    """Around the handling of an interrupt: from the moment it is known (the KeyboardInterrupt caught, or
    a signal through this module), "Exception ignored …" reports of finalizers are dropped, until the
    block ends; with `quiet_exit()` registered they stay dropped through interpreter shutdown."""
    global _interrupted, _exiting_interrupted, _signal_name
    previous = sys.unraisablehook
    sys.unraisablehook = _quiet_unraisable(previous)
    try:
        yield
    finally:
        sys.unraisablehook = previous
        _exiting_interrupted = _exiting_interrupted or _interrupted
        _interrupted = False  # a caller that goes on (a test, a host program) hears the next command's noise
        _signal_name = None


def begin_command() -> None:
    """A new command starts with no interrupt on record: a signal that interrupted code outside a
    command (a host program's own work, a test) or an earlier command must not make this one's
    errors look like an interrupt (exit 130 instead of 2)."""
    global _interrupted, _signal_name, _exiting_interrupted
    _interrupted = False
    _signal_name = None
    _exiting_interrupted = False  # an earlier command's interrupt is over: its teardown ran (gc.collect)


@contextlib.contextmanager
def one_command():
    """The interrupt state of one command (`benchmark.cli.main`), for a process that runs many (the
    Python API, a notebook, a test): it starts with no interrupt on record (`begin_command`) and
    leaves the SIGINT, SIGTERM and SIGHUP handlers and `sys.unraisablehook` as it found them, however
    it ended — unless the process ends with the command (`exit_after_command`)."""
    begin_command()
    found = {sig: signal.getsignal(sig) for sig in _HANDLED} if _main_thread() else {}
    hook = sys.unraisablehook
    try:
        yield
    finally:
        sys.unraisablehook = hook
        if not _process_exits_after:
            for sig, handler in found.items():
                if handler is not None and signal.getsignal(sig) is not handler:  # None: set outside Python
                    signal.signal(sig, handler)


def interrupting_signal() -> str | None:
    """The signal ("SIGINT", "SIGTERM", "SIGHUP") that interrupted the command running now, or None. A library
    may catch the KeyboardInterrupt and raise its own error instead (SQLAlchemy, rolling back the
    transaction the interrupt cut, raises PendingRollbackError): the CLI still reports the interrupt."""
    return _signal_name


def may_be_signal() -> bool:
    """Whether a KeyboardInterrupt seen now may have been raised by a signal. True once SIGINT or SIGTERM
    arrived through this module; False while neither can raise one unseen (each is handled here,
    ignored, or SIGTERM's default that ends the process): then the code that raised it did so itself
    (a plugin, atlas_data.plugins.user_code). True when it cannot be known: another thread, Python's
    own Ctrl-C handler, or a host program's."""
    if _signal_name is not None or not _main_thread():
        return True
    for sig in _HANDLED:
        handler = signal.getsignal(sig)
        if handler is _raise_interrupt or handler is signal.SIG_IGN or (sig == signal.SIGTERM and handler is signal.SIG_DFL):
            continue
        return True
    return False


def mark_interrupted() -> None:
    global _interrupted
    _interrupted = True


@contextlib.contextmanager
def terminate_as_interrupt():
    """Inside: SIGTERM and SIGHUP raise KeyboardInterrupt like SIGINT (not in a sweep worker: see the module doc).

    Whether SIGINT is handled or ignored (a background job) does not matter: a `kill` must always
    leave the outputs and the tracking store clean.
    """
    if not _main_thread() or _parent_handles_signals:
        yield
        return
    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:  # someone (a host program) handles SIGTERM already: leave it
        yield
        return
    signal.signal(signal.SIGTERM, _raise_interrupt)
    previous_hup = signal.getsignal(signal.SIGHUP)
    if previous_hup is signal.SIG_DFL:  # ignored (`nohup`): the command must outlive its terminal, as asked
        signal.signal(signal.SIGHUP, _raise_interrupt)
    previous_int = signal.getsignal(signal.SIGINT)
    if previous_int is signal.default_int_handler:  # same KeyboardInterrupt, and the flag is set
        signal.signal(signal.SIGINT, _raise_interrupt)
    previous_hook = sys.unraisablehook

    def redeliver(unraisable) -> None:
        if _interrupted:
            return  # teardown noise of the interrupted work (see the module doc)
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            name = str(unraisable.exc_value)
            signum = signal.Signals[name] if name in ("SIGTERM", "SIGHUP") else signal.SIGINT
            # from another thread, a moment later: raised here, it would land in this hook again
            threading.Timer(0.01, _thread.interrupt_main, args=(signum,)).start()
        else:
            previous_hook(unraisable)

    sys.unraisablehook = redeliver
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        if _process_exits_after:  # the command is done and so is the process: nothing may kill it now
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
        else:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGHUP, previous_hup)
            if previous_int is signal.default_int_handler:
                signal.signal(signal.SIGINT, previous_int)


@contextlib.contextmanager
def deferred_signals(*, reraise: bool = True):
    """Hold SIGINT/SIGTERM/SIGHUP while the block runs; afterwards raise KeyboardInterrupt if one came.

    reraise=False drops them instead: for cleanup that runs because of an interrupt already.
    """
    if not _main_thread():
        yield
        return
    received: list[int] = []
    previous = {}
    for sig in _HANDLED:
        current = signal.getsignal(sig)
        if current in (signal.SIG_IGN, None):
            continue  # ignored stays ignored; None = set outside Python, leave it alone
        if sig in _TERMINATING and current is signal.SIG_DFL:
            continue  # SIGTERM/SIGHUP kill this process outright (not under terminate_as_interrupt)
        previous[sig] = current
        signal.signal(sig, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received and reraise:
        raise KeyboardInterrupt(signal.Signals(received[0]).name)


def quiet_exit() -> None:
    """Once the command has returned, a Ctrl-C, SIGTERM or SIGHUP during interpreter shutdown is ignored.

    The command's work and cleanup are done and its exit status is decided; without this, a
    signal in the last moments (joining threads, closing pools) would print a traceback or turn
    exit 0 into death by signal. Registered at the start of shutdown, before threads are joined
    (threading's own exit hooks), and with atexit as well. SIGKILL still ends a stuck shutdown.
    """
    global _exit_hook_registered
    if _exit_hook_registered or not _main_thread() or _parent_handles_signals:
        return
    if signal.getsignal(signal.SIGINT) not in (signal.default_int_handler, signal.SIG_IGN):
        return  # a host program with its own handling
    _exit_hook_registered = True
    register_early = getattr(threading, "_register_atexit", None)  # runs before non-daemon threads are joined
    if register_early is not None:
        with contextlib.suppress(RuntimeError):
            register_early(_ignore_signals)
    atexit.register(_ignore_signals)


def _ignore_signals() -> None:
    if not _main_thread():
        return
    global _quiet_shutdown
    if _exiting_interrupted:  # an interrupted command exits: its finalizers' errors are teardown noise
        sys.unraisablehook = lambda unraisable: None
        _quiet_shutdown = True
    for sig in _HANDLED:
        with contextlib.suppress(ValueError, OSError):
            signal.signal(sig, signal.SIG_IGN)
