"""File and provenance rules every layer shares: atomic text writes, the one JSON-safety rule, the version.

They live in the bottom layer so that predictors, schedulers, leaderboards and the command line
all write files the same way without importing from a layer above them.

`lock_within` is the one bounded wait for an exclusive flock (the MLflow store's lock, the
leaderboard entries' lock): it says once that it waits and gives up after a stated time.

`read_input_text` / `check_input_file` are the one check of a file the user names before it is read:
a regular file (a folder, a device such as /dev/zero, a FIFO or a socket is refused: reading one
would never end or fail later), and for a file read whole, at most a stated size.

May import numpy, the standard library and atlas_data.errors only.
"""

from __future__ import annotations

import errno
import math
import os
import secrets
import stat
import time
from collections.abc import Callable
from enum import Enum
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
    """JSON-safe value: numpy scalars to Python, an enum member (a configuration's choice) to its value,
    NaN/inf to None."""
    if isinstance(value, Enum):
        value = value.value
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


def check_input_file(path, what: str, *, max_bytes: int | None = None) -> int:
    """The size of the input file `path` (a `what`, e.g. "sweep config"), after checking, without
    opening it, that it exists, is a regular file and holds at most `max_bytes`; else an InputError
    naming it."""
    from atlas_data.errors import InputError

    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{what} not found", path=str(path)) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {what}: {getattr(exc, 'strerror', None) or exc}", path=str(path)) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"is a folder, not a file (expected a {what})", path=str(path))
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"is not a regular file (a device, FIFO or socket); give the {what} as a file",
                         path=str(path))
    if max_bytes is not None and info.st_size > max_bytes:
        raise InputError(f"{info.st_size:,} bytes is more than the {max_bytes:,} a {what} may have "
                         "(docs/data-formats.md#limits)", path=str(path))
    return info.st_size


def read_input_text(path, what: str, *, max_bytes: int) -> str:
    """The UTF-8 text of the input file `path`, checked by `check_input_file` first; at most `max_bytes`
    are read even if the file grows meanwhile. Every problem is an InputError naming the file."""
    from atlas_data.errors import InputError

    check_input_file(path, what, max_bytes=max_bytes)
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", path=str(path)) from None
    if len(data) > max_bytes:
        raise InputError(f"more than the {max_bytes:,} bytes a {what} may have (docs/data-formats.md#limits)",
                         path=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                         f"save the {what} as UTF-8", path=str(path)) from None


def lock_within(handle, timeout_s: float, *, waiting: Callable[[], None], gave_up: Callable[[], Exception]) -> None:
    """Take an exclusive flock on the open file `handle` (POSIX): at once if it is free, else call
    `waiting()` once and retry every 50 ms for at most `timeout_s` seconds, then raise `gave_up()`."""
    import fcntl

    def take() -> bool:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    if take():
        return
    waiting()
    deadline = time.monotonic() + timeout_s
    while not take():
        if time.monotonic() >= deadline:
            raise gave_up()
        time.sleep(0.05)
