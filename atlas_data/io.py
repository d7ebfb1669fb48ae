"""File and provenance rules every layer shares: atomic text writes, the one JSON-safety rule, the version.

They live in the bottom layer so that predictors, schedulers, leaderboards and the command line
all write files the same way without importing from a layer above them.

May import numpy, the standard library and atlas_data.errors only.
"""

from __future__ import annotations

import errno
import math
import os
import secrets
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


# errno of a full disk or an exhausted quota: the user's environment, not a bug (exit 2)
_NO_SPACE = {errno.ENOSPC: "no space left on device", getattr(errno, "EDQUOT", -1): "disk quota exceeded"}


def no_space(exc: BaseException) -> str | None:
    """'no space left on device' / 'disk quota exceeded' when `exc` (or what it was raised from) is
    that OSError, else None. Libraries (pyarrow, matplotlib) sometimes wrap it or drop its errno."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError):
            if exc.errno in _NO_SPACE:
                return _NO_SPACE[exc.errno]
            text = str(exc).lower()
            for reason in _NO_SPACE.values():
                if reason in text:
                    return reason
        exc = exc.__cause__ or exc.__context__
    return None


def no_space_error(exc: BaseException, path: Path | str, where: str | None = None):
    """The one-line InputError (exit 2) for a full disk while writing `path`, or None for another error."""
    from atlas_data.errors import InputError

    reason = no_space(exc)
    return None if reason is None else InputError(f"{reason} while writing {path}", where=where)


def write_text_atomic(path: Path, text: str) -> Path:
    """Write `text` to `path` through a temporary file and a rename: never a half-written file.

    A symbolic link is written through (its target is replaced; the link stays), and an existing
    file keeps its permission bits (a new one gets the usual 0666 minus the umask). A full disk is
    an InputError (exit 2) naming `path`, with the temporary file removed and `path` untouched.
    """
    path = Path(path)
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        # O_EXCL: a fresh file; 0o666 minus the umask, as open() would give a new file
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            if mode is not None:
                os.fchmod(fh.fileno(), mode)
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        full = no_space_error(exc, path)
        if full is not None:
            raise full from None
        raise
    return path
