"""The one results schema (docs/results-and-tracking.md): results.json + results.csv in an output folder.

Every task builds a list of row dicts and calls `write_results` inside the temporary folder of
`atlas_data.outputs.output_folder`; plots and leaderboards are derived from these rows.
results.json records `complete: true` and the command line: the folder appears under its name
only once everything in it is written. May import numpy/pandas and atlas_data (io, outputs).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from atlas_data.io import json_safe, write_text_atomic
from atlas_data.outputs import command_line

__all__ = ["default_output_dir", "json_safe", "package_versions", "write_results", "write_text_atomic"]

#: the installed packages whose version can move a result's numbers (their fits, solvers, float
#: paths); every results.json records them under `versions`, so two runs that differ can be told apart
RESULT_PACKAGES = ("numpy", "pandas", "scikit-learn", "lightgbm", "scipy", "numba", "ortools", "pyarrow")


def default_output_dir(task: str, objective: str | None = None) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parts = [task] + ([objective] if objective else []) + [stamp]
    return Path("results") / "-".join(parts)


def check_readme_block(readme: Path, start: str, end: str) -> str:
    """The README's text, refused (exit 2, nothing touched) unless it can be edited safely.

    Called before any work by every command with `--readme`, and again just before the edit: the
    README (or, for a symbolic link, its target) must be a UTF-8 text file that this user can
    rewrite, in a folder where its backup can be written, holding exactly one start marker and, after
    it, exactly one end marker, with no backup of an interrupted edit beside it.
    """
    import os

    from atlas_data.errors import InputError

    readme, where = Path(readme), "--readme"
    text = readme_text(readme)
    backup = readme_backup(readme)
    if os.path.lexists(backup):
        raise InputError(f"{backup} holds the text from before an interrupted edit: compare, keep the right text in "
                         "the file, remove the backup and rerun", path=str(readme), where=where)
    _check_markers(text, readme, start, end)
    # rewritten in place after a backup in its folder: both must be writable
    target = Path(os.path.realpath(readme))
    for need, what in ((target, "the file"), (target.parent, "its folder")):
        if not os.access(need, os.W_OK | (os.X_OK if need.is_dir() else 0)):
            raise InputError(f"cannot rewrite it: {what} {need} is not writable", path=str(readme), where=where)
    return text


def readme_backup(readme: Path) -> Path:
    """Where `replace_readme_block` keeps the old text while it rewrites `readme` (beside its target)."""
    import os

    target = Path(os.path.realpath(readme))
    return target.with_name(f".{target.name}.readme-backup")


def _check_markers(text: str, readme: Path, start: str, end: str) -> None:
    from atlas_data.errors import InputError

    where = "--readme"
    starts, ends = text.count(start), text.count(end)
    if starts == 0 or ends == 0:
        raise InputError(f"no {start} ... {end} block to replace", path=str(readme), where=where)
    if starts > 1 or ends > 1:
        raise InputError(f"{starts} {start} and {ends} {end} markers: which block to replace is ambiguous; keep one "
                         "of each", path=str(readme), where=where)
    if text.index(end) < text.index(start):
        raise InputError(f"{end} stands before {start}: no block to replace", path=str(readme), where=where)


def readme_text(readme: Path) -> str:
    """The text of a file given to `--readme` (through a symbolic link), refused unless it is readable UTF-8."""
    import os

    from atlas_data.errors import InputError

    readme = Path(readme)
    where = "--readme"
    if not readme.is_file():
        raise InputError("README file not found", path=str(readme), where=where)
    target = Path(os.path.realpath(readme))
    try:
        data = target.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror or exc})", path=str(readme), where=where) from None
    return _utf8(data, readme)


def _utf8(data: bytes, readme: Path) -> str:
    from atlas_data.errors import InputError

    try:
        return data.decode("utf-8")  # bytes as they are: CRLF line ends and a BOM are kept
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}): refusing to edit it",
                         path=str(readme), where="--readme") from None


#: how long an edit waits for another command's edit of the same README to end
README_LOCK_WAIT_S = 10.0


def replace_readme_block(readme: Path, start: str, end: str, body: str) -> None:
    """Rewrite what stands between the README's start and end markers with `body`, in place.

    Everything else stays byte for byte (the block takes the file's line ends). The file keeps its
    identity: it is written in place (same inode, so hard links, owner and permission bits stay; a
    symbolic link is written through), under an exclusive lock (flock; a second edit waits up to
    README_LOCK_WAIT_S), after its old text is written and synced to `readme_backup(readme)`. A
    failure or Ctrl-C while writing puts the old text back; a crash leaves the backup, which the
    next edit names and refuses to overwrite. The backup is removed once the new text is synced."""
    import os
    import sys

    from atlas_data.errors import InputError
    from atlas_data.io import lock_within, no_space_error

    readme = Path(readme)
    check_readme_block(readme, start, end)
    target, backup = Path(os.path.realpath(readme)), readme_backup(readme)
    with open(target, "r+b", buffering=0) as fh:
        lock_within(fh, README_LOCK_WAIT_S,
                    waiting=lambda: print(f"note: {readme}: another command is editing it; waiting up to "
                                          f"{README_LOCK_WAIT_S:g} s", file=sys.stderr),
                    gave_up=lambda: InputError(f"another command kept it locked for {README_LOCK_WAIT_S:g} s; rerun "
                                               "when it ends", path=str(readme), where="--readme"))
        old = fh.read()
        text = _utf8(old, readme)  # as it is now, under the lock: checked again
        _check_markers(text, readme, start, end)
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        newline = "\r\n" if "\r\n" in text else "\n"  # the README's own line ends
        body = body.strip().replace("\r\n", "\n").replace("\n", newline)
        new = f"{head}{start}{newline}{body}{newline}{end}{tail}".encode("utf-8")
        try:
            fd = os.open(backup, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as copy:
                copy.write(old)
                copy.flush()
                os.fsync(copy.fileno())
        except BaseException as exc:
            if os.path.lexists(backup) and not isinstance(exc, FileExistsError):
                os.unlink(backup)
            full = no_space_error(exc, backup, where="--readme")
            if full is not None:
                raise full from None
            if isinstance(exc, FileExistsError):
                raise InputError(f"{backup} appeared while it was checked: another edit is under way", path=str(readme),
                                 where="--readme") from None
            raise
        try:
            _write_in_place(fh, new)
        except BaseException as exc:
            try:
                _write_in_place(fh, old)
            except BaseException:
                raise InputError(f"the edit failed ({exc}) and so did putting the old text back: it is in {backup}",
                                 path=str(readme), where="--readme") from None
            os.unlink(backup)
            full = no_space_error(exc, readme, where="--readme")
            if full is not None:
                raise full from None
            raise
        os.unlink(backup)


def _write_in_place(fh, data: bytes) -> None:
    import os

    fh.seek(0)
    view = memoryview(data)
    while view:
        view = view[fh.write(view):]
    fh.truncate(len(data))
    os.fsync(fh.fileno())


def package_versions() -> dict[str, str | None]:
    """results.json `versions`: Python's and each RESULT_PACKAGES' installed version (null: not installed).

    Read from the installed distributions' metadata, so nothing is imported for it."""
    import platform
    from importlib import metadata

    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in RESULT_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # numba is optional: the loops then run as Python
            versions[name] = None
    return versions


@dataclass(frozen=True)
class Run:
    """A finished `benchmark run`: its output folder, results.json (`doc`), the configuration as run
    (benchmark.tasks.config: a dataset resolved, the default predictor filled in) and, for fairness,
    the per-policy simulations ({policy: FairnessRun})."""

    output: Path
    doc: dict
    config: object
    runs: dict | None = None


def write_results(
    out_dir: Path,
    *,
    task: str,
    objective: str | None,
    n_jobs: int,
    dataset: dict[str, Any],
    rows: list[dict[str, Any]],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write results.json and results.csv; return the JSON document."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"task": task, "objective": objective, "n_jobs": int(n_jobs), "dataset": dataset, "rows": rows}
    if extra:
        doc.update(extra)
    # the folder is renamed into place only once complete, so a visible results.json is complete
    doc.update(complete=True, argv=command_line(), versions=package_versions())
    doc = json_safe(doc)
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    pd.DataFrame(doc["rows"]).to_csv(out_dir / "results.csv", index=False)
    return doc


def format_table(rows: list[dict[str, Any]], columns: list[str], floatfmt: str = "{:.4g}") -> str:
    """A plain aligned text table for stdout."""
    cells = [[_fmt(r.get(c), floatfmt) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join([line, sep, *body])


def _fmt(value: Any, floatfmt: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        return "-" if not math.isfinite(value) else floatfmt.format(value)
    return str(value)
