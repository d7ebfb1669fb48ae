"""Progress lines on stderr for long work; silent under --quiet or when not a terminal-worthy task."""

from __future__ import annotations

import sys
import time


class Progress:
    """`with Progress("simulating", total=n, quiet=q) as p: p.update(k)` — prints at most ~2 lines/s."""

    def __init__(self, label: str, total: int | None = None, quiet: bool = False):
        self.label, self.total, self.quiet = label, total, quiet
        self.done = 0
        self._t0 = time.perf_counter()
        self._last = 0.0

    def __enter__(self) -> "Progress":
        return self

    def update(self, k: int = 1) -> None:
        self.done += k
        now = time.perf_counter()
        # a terminal gets a line redrawn twice a second; a log file a new line every 10 s
        if not self.quiet and now - self._last > (0.5 if sys.stderr.isatty() else 10.0):
            self._last = now
            self._print(final=False)

    def note(self, message: str) -> None:
        if not self.quiet:
            sys.stderr.write(f"[{self.label}] {message}\n")

    def _print(self, final: bool) -> None:
        elapsed = time.perf_counter() - self._t0
        if self.total:
            text = f"{self.label}: {self.done}/{self.total} ({100 * self.done / self.total:.0f}%) {elapsed:.1f}s"
        else:
            text = f"{self.label}: {self.done} {elapsed:.1f}s"
        sys.stderr.write(text + ("\r" if sys.stderr.isatty() and not final else "\n"))
        sys.stderr.flush()

    def __exit__(self, *exc) -> None:
        if not self.quiet:
            self._print(final=True)


def say(message: str, quiet: bool = False) -> None:
    if not quiet:
        sys.stderr.write(message + "\n")
