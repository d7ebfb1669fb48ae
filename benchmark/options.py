"""Argument types shared by the command parsers, so every command refuses the same bad values alike.

`seed` is the type of every `--seed` (and `--sample-seed`, `--pipeline-seed`): an integer >= 0
(numpy's generators take no negative seed). The sweep config's `seeds` key applies the same
rule (benchmark.sweeps.config). A bad value is argparse's own exit 2 with one line.

May import only the standard library.
"""

from __future__ import annotations

import argparse


def seed(text: str) -> int:
    """An `--seed` value: an integer >= 0."""
    try:
        value = int(str(text).strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a seed must be an integer >= 0, got {value}")
    return value
