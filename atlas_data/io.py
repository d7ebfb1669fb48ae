"""File and provenance rules every layer shares: atomic text writes, the one JSON-safety rule, the version.

They live in the bottom layer so that predictors, schedulers, leaderboards and the command line
all write files the same way without importing from a layer above them.

May import numpy and the standard library only.
"""

from __future__ import annotations

import math
import os
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np


def package_version() -> str:
    """The installed atlas-bench version (`0+unknown` when run from a source tree without install)."""
    try:
        return metadata.version("atlas-bench")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def json_safe(value: Any) -> Any:
    """JSON-safe value: numpy scalars to Python, NaN/inf to None."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` through a temporary file and a rename: never a half-written file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
