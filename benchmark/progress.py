"""Progress on stderr for long work, drawn by tqdm; silent under --quiet.

A terminal gets a bar redrawn at most twice a second; a log file (stderr not a terminal) gets a
new line at most every 10 s, so CI logs and `2> run.log` stay short. `note` writes a line above
the bar without breaking it.

May import tqdm only.
"""

from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """`with Progress("simulating", total=n, quiet=q) as p: p.update(k)`; `p.note(text)` for a message."""

    def __init__(self, label: str, total: int | None = None, quiet: bool = False):
        self.label, self.total, self.quiet = label, total, quiet
        tty = sys.stderr.isatty()
        self._bar = tqdm(total=total, desc=label, disable=quiet, file=sys.stderr, leave=True, dynamic_ncols=tty,
                         mininterval=0.5 if tty else 10.0, ascii=not tty, unit="step")

    def __enter__(self) -> "Progress":
        return self

    def update(self, k: int = 1) -> None:
        self._bar.update(k)

    def note(self, message: str) -> None:
        if not self.quiet:
            self._bar.write(f"[{self.label}] {message}", file=sys.stderr)

    def __exit__(self, *exc) -> None:
        self._bar.close()


def say(message: str, quiet: bool = False) -> None:
    """One line on stderr (above any running bar), unless quiet."""
    if not quiet:
        tqdm.write(message, file=sys.stderr)
