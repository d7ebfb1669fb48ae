"""Safe outputs: the one way every command writes a folder or a file (docs/results-and-tracking.md#safe-outputs).

A command never destroys what the user has and never leaves a half-written result:

* **Folders** (`run --output`, `data build --out`, `data synth --out`, `sweep`, `reproduce`,
  `demo`, `submit --template`) are written into a temporary sibling `.NAME.tmp-<pid>-<token>` and
  renamed to NAME only when complete (`output_folder`). The folder then holds the marker file
  `.atlas-bench-output` (JSON: which command wrote it, its command line, `complete: true`).
* The target is refused (InputError, exit 2, one line) when it is the working folder or one of its
  parents, a file or a symbolic link, a folder that holds anything and has no marker (the user's
  files), a folder that another command wrote, or a folder inside a finished output or a dataset
  folder (a rerun of that one would delete it). An empty folder is fine. A folder the same
  command wrote earlier is replaced whole: the old one is moved aside and deleted once the new one
  is in place, so no stale file of the earlier run survives. The marker lists what the command
  wrote (`files`); anything else found there at a rerun (a file dropped in later, another output)
  is refused, never deleted, and so is a folder that could not be deleted whole (not writable).
* A full disk or quota (ENOSPC, EDQUOT) while writing is InputError "no space left on device while
  writing PATH": the temporary folder or file is removed, the earlier output stays.
* **Files** (`data import --out`, `leaderboard --output`, `data describe --output`, ...) are written
  through a temporary file and a rename (`output_file`). An existing file is replaced only when
  it is recognisably the same command's output (a signature inside the file: parquet schema
  metadata, a first-line comment in markdown/HTML, a PNG text chunk), never a folder or a link.
* Paths recorded inside a finished folder (results.json, sweep.json, ...) name its final place,
  not the temporary one; leftovers of a killed process (`.NAME.tmp-<pid>-*` with a marker, whose
  process is gone) are removed by the next write to NAME.

The command line recorded in markers and results.json is the one `benchmark.cli.main` was called
with (`command_line()`; nested calls, e.g. the steps of `benchmark demo`, record their own).

May import the standard library, numpy/pandas/pyarrow (lazily) and atlas_data.errors/io only.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import os
import re
import secrets
import shutil
import struct
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from atlas_data.errors import InputError

MARKER = ".atlas-bench-output"
SIGNATURE_KEY = "atlas-bench"  # parquet schema metadata key / PNG text key naming the writing command
_TEXT_SIGNATURE = "<!-- written by `benchmark {command}` (atlas-bench): it replaces this file on a rerun -->"
# a dataset folder (atlas_data.build DATASET_FILE, CARD_FILE), recognised even without a marker
DATASET_FILES = ("atlas.parquet", "dataset.json")
_LEFTOVER = re.compile(r"^\.(?P<name>.+)\.(?:tmp|old)-(?P<pid>\d+)-[0-9a-f]+$")
# files whose text may record the temporary path of the folder being written (relocated at the end)
_RECORD_SUFFIXES = (".json", ".md")

_RMTREE_ONEXC = sys.version_info >= (3, 12)  # shutil.rmtree(onerror=) is deprecated from 3.12
_COMMAND_LINE: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar("command_line", default=None)


# ----- the command line --------------------------------------------------------------------------
@contextlib.contextmanager
def using_command_line(argv) -> Iterator[None]:
    """Record `benchmark ARGV...` as the command line of everything written inside the block."""
    token = _COMMAND_LINE.set(("benchmark", *map(str, argv)))
    try:
        yield
    finally:
        _COMMAND_LINE.reset(token)


def command_line() -> list[str] | None:
    """`["benchmark", ...]` of the running command, or None outside the command line."""
    value = _COMMAND_LINE.get()
    return None if value is None else list(value)


# ----- what is already there ---------------------------------------------------------------------
def read_marker(folder: Path | str) -> dict | None:
    """The marker of a folder a command wrote, or None (no marker, unreadable, not ours)."""
    try:
        data = json.loads((Path(folder) / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("command"), str) else None


def _is_cwd_or_parent(path: Path) -> bool:
    target = path.resolve()
    cwd = Path.cwd().resolve()
    return target == cwd or target in cwd.parents


def _in_progress(folder: Path) -> bool:
    """Whether `folder` is the temporary folder of an output being written (`.NAME.tmp-<pid>-<hex>`,
    marker `complete: false`): the steps of demo, reproduce and sweep write their outputs inside it."""
    if not _LEFTOVER.match(folder.name) or ".tmp-" not in folder.name:
        return False
    marker = read_marker(folder)
    return marker is not None and marker.get("complete") is False


def final_place(path: Path | str) -> Path:
    """`path` with the temporary folder of an output being written inside it (`.NAME.tmp-<pid>-<hex>`)
    named NAME: where it will be once that output is put in place. For what a command prints: a
    step of demo, reproduce or sweep writes inside their temporary folder, gone when they finish."""
    path = Path(path)
    parts = list(path.parts)
    for i, part in enumerate(parts):
        match = _LEFTOVER.match(part)
        if match and ".tmp-" in part and _in_progress(Path(*parts[: i + 1])):
            parts[i] = match["name"]
    return Path(*parts) if parts else path


def final_text(text) -> str:
    """`text` as a command prints it: a path inside such a temporary folder as `final_place` names it,
    anything else unchanged (a label such as "shipped trace philly" is not touched)."""
    text = str(text)
    return str(final_place(text)) if ".tmp-" in text else text


def _enclosing(path: Path) -> tuple[Path, str] | None:
    """(folder, what) of the nearest finished output or dataset folder above `path`, or None.

    A rerun of that folder would delete `path` with it (it is replaced whole), and a dataset folder
    is read by fingerprint: nothing is written inside either. The folders above are looked up both
    as written and with symbolic links resolved."""
    seen = set()
    for start in (Path(os.path.abspath(path)), path.resolve()):
        for folder in start.parents:
            if folder in seen:
                continue
            seen.add(folder)
            if _in_progress(folder):
                continue
            marker = folder / MARKER
            if marker.is_file():
                command = (read_marker(folder) or {}).get("command")
                return folder, f"the output folder of `benchmark {command}`" if command else "an output folder"
            if all((folder / name).is_file() for name in DATASET_FILES):
                return folder, "a dataset folder"
    return None


def _walk(folder: Path) -> Iterator[tuple[str, bool]]:
    """(relative POSIX path, is a folder) of everything under `folder`, links not followed, marker left out."""
    for root, dirs, files in os.walk(folder):
        rel = Path(root).relative_to(folder)
        for name in dirs:
            yield (rel / name).as_posix(), not os.path.islink(os.path.join(root, name))
        for name in files:
            if root == str(folder) and name == MARKER:
                continue
            yield (rel / name).as_posix(), False


def _listing(folder: Path) -> list[str]:
    """What `output_folder` records in the marker as written by the command (`files`)."""
    return sorted(rel for rel, _ in _walk(folder))


def _check_replaceable(path: Path, marker: dict, command: str, where: str) -> None:
    """Refuse (InputError) replacing our own earlier output when that would delete what the command
    did not write, or when it cannot be deleted whole (a folder inside it, or the folder holding it,
    not writable): found before anything is moved, so the earlier output stays intact."""
    written = marker.get("files")
    if not isinstance(written, list):
        raise InputError(f"was written by `benchmark {command}` of an earlier version, which did not list its files: "
                         "cannot tell them from files added since; delete the folder yourself or give a new one",
                         path=str(path), where=where)
    written = set(written)
    for rel, is_dir in _walk(path):
        if rel in written:
            continue
        if not is_dir and file_signature(path / rel) is not None:
            continue  # a file another command of the product derived (a `data describe` plot): regenerated
        kind = ("another output " if is_dir and (path / rel / MARKER).exists()
                else "a folder " if is_dir else "a file ")
        raise InputError(f"holds {kind}{rel!r} that `benchmark {command}` did not write (added since): a rerun replaces "
                         "the folder whole, so it is refused; move that out or give a new folder", path=str(path),
                         where=where)
    for folder in [path.parent, path] + [path / rel for rel, is_dir in _walk(path) if is_dir]:
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"cannot be replaced: {folder} is not writable (the earlier output could not be deleted "
                             "whole); fix its permissions or give a new folder", path=str(path), where=where)


def check_output_folder(path: Path | str, command: str, *, option: str = "--output", replace_own: bool = True) -> Path:
    """Refuse (InputError) a target folder the command must not replace; return it as a Path.

    Called before any computation, so a bad `--output` fails at once, and again at the end.
    `replace_own=False`: a folder this command wrote earlier is refused too (the user edits it).
    """
    path = Path(path)
    where = f"{option}"
    if str(path).strip() == "":
        raise InputError("empty output path", where=where)
    if _is_cwd_or_parent(path):
        raise InputError("is the working folder or one of its parents; the output would replace it whole: "
                         "give a new folder", path=str(path), where=where)
    if path.is_symlink():
        raise InputError("is a symbolic link: refusing to replace it; give a new folder", path=str(path), where=where)
    enclosing = _enclosing(path)
    if enclosing is not None:
        folder, what = enclosing
        raise InputError(f"is inside {folder}, {what}: a rerun there would delete it; give a folder outside it",
                         path=str(path), where=where)
    if not path.exists():
        return path
    if not path.is_dir():
        raise InputError("is a file, not a folder: refusing to replace it; give a new folder", path=str(path), where=where)
    try:
        entries = sorted(p.name for p in path.iterdir())
    except OSError as exc:
        raise InputError(f"cannot read the folder ({exc.strerror or exc})", path=str(path), where=where) from None
    if not entries:
        return path
    marker = read_marker(path)
    if marker is None:
        shown = [e for e in entries if e != MARKER][:2]
        raise InputError(f"holds files not written by `benchmark {command}` (e.g. {', '.join(shown)}): refusing to "
                         "replace them; give a new or empty folder", path=str(path), where=where)
    if marker["command"] != command:
        raise InputError(f"was written by `benchmark {marker['command']}`, not by `benchmark {command}`: refusing to "
                         "replace it; give another folder", path=str(path), where=where)
    if not replace_own:
        raise InputError(f"already holds the output of an earlier `benchmark {command}` (perhaps edited since): "
                         "refusing to replace it; give a new or empty folder", path=str(path), where=where)
    _check_replaceable(path, marker, command, where)
    return path


# ----- writing a folder ----------------------------------------------------------------------------
def _marker_text(command: str, complete: bool, files: list[str] | None = None) -> str:
    from atlas_data.io import package_version

    doc = {
        "written_by": "atlas-bench", "command": command, "complete": complete, "argv": command_line(),
        "pid": os.getpid(), "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "version": package_version(),
    }
    if files is not None:  # what the command wrote: a rerun deletes these and refuses anything else
        doc["files"] = files
    return json.dumps(doc, indent=2) + "\n"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: someone else's process, alive
        return True
    return True


def remove_leftovers(path: Path) -> list[Path]:
    """Delete `.NAME.tmp-*` / `.NAME.old-*` siblings of `path` left by a killed process (marker inside, pid gone)."""
    removed = []
    parent = path.parent
    if not parent.is_dir():
        return removed
    for sibling in parent.iterdir():
        match = _LEFTOVER.match(sibling.name)
        if not match or match["name"] != path.name or not sibling.is_dir() or sibling.is_symlink():
            continue
        if read_marker(sibling) is None or _alive(int(match["pid"])):
            continue
        shutil.rmtree(sibling, ignore_errors=True)
        removed.append(sibling)
    return removed


def _sibling(path: Path, kind: str) -> Path:
    return path.with_name(f".{path.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}")


def _relocate_records(tmp: Path, final: Path) -> None:
    """Rewrite the temporary folder's path to the final one in the JSON / markdown records inside it."""
    forms = {}
    for given, real in ((tmp, final), (tmp.resolve(), final.resolve()), (tmp.absolute(), final.absolute())):
        forms[str(given)] = str(real)
        forms[json.dumps(str(given))[1:-1]] = json.dumps(str(real))[1:-1]  # as escaped inside JSON strings
    needle = tmp.name
    for file in tmp.rglob("*"):
        if (file.suffix not in _RECORD_SUFFIXES and file.name != MARKER) or not file.is_file():
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if needle not in text:
            continue
        for old in sorted(forms, key=len, reverse=True):
            text = text.replace(old, forms[old])
        file.write_text(text, encoding="utf-8")


@contextlib.contextmanager
def output_folder(path: Path | str, command: str, *, option: str = "--output", replace_own: bool = True) -> Iterator[Path]:
    """Yield a temporary sibling of `path` to write into; on success rename it to `path`.

    On any exception (Ctrl-C included) the temporary folder is deleted and `path` is untouched; a
    full disk (or quota) and a folder that cannot be put in place are InputErrors (exit 2).
    """
    from atlas_data.io import no_space_error

    path = check_output_folder(path, command, option=option, replace_own=replace_own)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_leftovers(path)
        tmp = _sibling(path, "tmp")
        tmp.mkdir()
    except OSError as exc:
        full = no_space_error(exc, path, option)
        raise full or InputError(f"cannot create the output folder ({exc.strerror or exc})", path=str(path),
                                 where=option) from None
    try:
        (tmp / MARKER).write_text(_marker_text(command, complete=False), encoding="utf-8")
        yield tmp
        _relocate_records(tmp, path)
        (tmp / MARKER).write_text(_marker_text(command, complete=True, files=_listing(tmp)), encoding="utf-8")
        check_output_folder(path, command, option=option, replace_own=replace_own)  # nothing appeared meanwhile
        _put_in_place(tmp, path, option)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        full = no_space_error(exc, path, option)
        if full is not None:
            raise full from None
        if isinstance(exc, InputError) and str(tmp) in str(exc):  # e.g. write_text_atomic inside: name the final place
            raise InputError(str(exc).replace(str(tmp), str(path))) from None
        raise


def _put_in_place(tmp: Path, path: Path, option: str = "--output") -> None:
    """Rename `tmp` to `path`; an earlier output there (checked replaceable) is moved aside, then deleted.

    A rename that fails leaves the earlier output where it was (exit 2). What could stop the
    deletion (a folder inside it not writable) was refused before (`_check_replaceable`); should it
    fail still, that is exit 2 too, naming the copy set aside, never a silent exit 0."""
    try:
        if not path.exists() or (path.is_dir() and not any(path.iterdir())):
            os.replace(tmp, path)  # rename(2) replaces an empty folder atomically
            return
        old = _sibling(path, "old")
        os.replace(path, old)  # our own earlier output (checked): aside, then the new one in its place
    except OSError as exc:
        raise InputError(f"cannot put the output in place ({exc.strerror or exc}); the earlier one is unchanged",
                         path=str(path), where=option) from None
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        os.replace(old, path)
        if isinstance(exc, OSError):
            raise InputError(f"cannot put the output in place ({exc.strerror or exc}); the earlier one is unchanged",
                             path=str(path), where=option) from None
        raise
    failed: list[OSError] = []
    shutil.rmtree(old, onexc=lambda *args: failed.append(args[2])) if _RMTREE_ONEXC else \
        shutil.rmtree(old, onerror=lambda *args: failed.append(args[2][1]))
    if failed:
        # checked writable beforehand, so rare (an immutable file, a mount point): tell, leave no stray copy
        raise InputError(f"the new output is in place, but the earlier one, moved aside to {old.name}, could not be "
                         f"deleted entirely ({failed[0].strerror or failed[0]}); delete {old} yourself",
                         path=str(path), where=option)


# ----- writing a file ------------------------------------------------------------------------------
def text_signature(command: str) -> str:
    """The signature line of a markdown / HTML file written by `command`."""
    return _TEXT_SIGNATURE.format(command=command)


def signed_text(text: str, command: str) -> str:
    """`text` with the signature line first (after `<!DOCTYPE ...>`, which must stay first in HTML)."""
    line = text_signature(command) + "\n"
    if text.lstrip().lower().startswith("<!doctype"):
        head, _, rest = text.partition("\n")
        return f"{head}\n{line}{rest}"
    return line + text


def file_signature(path: Path | str) -> str | None:
    """The command recorded inside a file the product wrote (parquet, PNG, markdown/HTML), else None."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            meta = pq.read_schema(path).metadata or {}
            value = meta.get(SIGNATURE_KEY.encode())
            return json.loads(value).get("command") if value else None
        if suffix == ".png":
            return _png_text(path).get(SIGNATURE_KEY)
        with open(path, encoding="utf-8") as fh:
            head = [fh.readline(4096).rstrip("\n") for _ in range(2)]  # the signature, or a doctype then it
        pattern = re.escape(_TEXT_SIGNATURE).replace(r"\{command\}", "(?P<command>.+)")
        for line in head:
            match = re.fullmatch(pattern, line)
            if match:
                return match["command"]
        return None
    except Exception:  # unreadable or not what the suffix says: not ours
        return None


def _png_text(path: Path) -> dict[str, str]:
    """tEXt chunks of a PNG file, read up to the image data."""
    found = {}
    with open(path, "rb") as fh:
        if fh.read(8) != b"\x89PNG\r\n\x1a\n":
            return found
        while True:
            head = fh.read(8)
            if len(head) < 8:
                return found
            length, kind = struct.unpack(">I4s", head)
            if kind in (b"IDAT", b"IEND"):
                return found
            data = fh.read(length)
            fh.read(4)  # CRC
            if kind == b"tEXt" and b"\0" in data:
                key, value = data.split(b"\0", 1)
                found[key.decode("latin-1")] = value.decode("latin-1")


def check_output_file(path: Path | str, command: str, *, option: str = "--output",
                      recognise: Callable[[Path], bool] | None = None) -> Path:
    """Refuse (InputError) a target file the command must not replace; return it as a Path.

    `recognise(path)` says whether an existing file is this command's earlier output (default:
    its signature names `command`).
    """
    path = Path(path)
    if str(path).strip() == "":
        raise InputError("empty output path", where=option)
    if path.is_symlink():
        raise InputError("is a symbolic link: refusing to replace it; give another file name", path=str(path), where=option)
    if path.is_dir():
        raise InputError("is a folder, not a file: refusing to replace it; give a file name", path=str(path), where=option)
    if path.exists():
        ours = recognise(path) if recognise is not None else file_signature(path) == command
        if not ours:
            raise InputError(f"exists and was not written by `benchmark {command}`: refusing to replace it; give "
                             "another file name or delete it first", path=str(path), where=option)
    return path


def output_file(path: Path | str, command: str, write: Callable[[Path], None], *, option: str = "--output",
                recognise: Callable[[Path], bool] | None = None, make_parent: bool = True) -> Path:
    """Write a file through `write(temporary path)` and a rename; refuse what `check_output_file` refuses."""
    from atlas_data.io import no_space_error

    path = check_output_file(path, command, option=option, recognise=recognise)
    try:
        if make_parent:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.parent.is_dir():
            raise InputError("the folder of the output file does not exist", path=str(path), where=option)
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}{path.suffix}")
        tmp.touch(exist_ok=False)
    except OSError as exc:
        full = no_space_error(exc, path, option)
        raise full or InputError(f"cannot write the output file ({exc.strerror or exc})", path=str(path),
                                 where=option) from None
    try:
        write(tmp)
        check_output_file(path, command, option=option, recognise=recognise)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        full = no_space_error(exc, path, option)  # a full disk: exit 2, the earlier file as it was
        if full is not None:
            raise full from None
        raise
    return path


def write_signed_parquet(frame, path: Path, command: str) -> None:
    """`frame` as parquet with the signature of `command` in the schema metadata (no index)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = {**(table.schema.metadata or {}), SIGNATURE_KEY.encode(): json.dumps({"command": command}).encode()}
    pq.write_table(table.replace_schema_metadata(meta), path)


def png_metadata(command: str) -> dict[str, str]:
    """`savefig(metadata=...)` for a PNG file signed by `command`."""
    return {SIGNATURE_KEY: command}


def svg_text(fig, command: str | None = None, *, text_as_text: bool = False, salt: str = "atlas-bench") -> str:
    """A matplotlib figure as SVG text, signed by `command` (when given) like a markdown/HTML file.

    No date and fixed element ids (a salt instead of random ones), so a rerun on the same data
    writes the same file; figures inlined in one HTML page each need their own `salt`, or two could
    share an id. `text_as_text`: labels stay text (drawn by the viewer's fonts), not paths. The XML declaration must stay first, so the signature comment is the
    second line (where `file_signature` looks).
    """
    import io
    import warnings

    from matplotlib import rc_context

    buffer = io.StringIO()
    params = {"svg.hashsalt": salt, **({"svg.fonttype": "none"} if text_as_text else {})}
    with rc_context(params), warnings.catch_warnings():  # restored on exit: no lasting global state
        if text_as_text:  # the viewer draws the text with its fonts: a glyph matplotlib's font lacks is no loss
            warnings.filterwarnings("ignore", message=".*missing from font", category=UserWarning)
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    if command:
        head, _, rest = text.partition("\n")
        text = f"{head}\n{text_signature(command)}\n{rest}"
    return text


def write_figure(fig, path: Path | str, *, dpi: int = 120, command: str | None = None) -> Path:
    """A matplotlib figure as a PNG at `path` and as an SVG beside it (same stem); returns the PNG path.

    With `command`, both are signed (PNG text chunk, SVG comment) like every file the product
    writes. `benchmark.plots.save_figure` is this; it lives here so every layer writes figures alike.
    """
    import warnings

    path = Path(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        fig.savefig(path, dpi=dpi, format="png", metadata=png_metadata(command) if command else None)
    missing = [w for w in caught if "missing from font" in str(w.message)]
    for w in caught:
        if w not in missing:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    # labels in a script the plot font lacks (e.g. Chinese tenant names) are boxes in the PNG, and
    # matplotlib warns once per glyph; the SVG then keeps its text as text, which a browser draws
    # with the system's fonts
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*missing from font", category=UserWarning)
        svg = svg_text(fig, command, text_as_text=bool(missing))
    path.with_suffix(".svg").write_text(svg, encoding="utf-8")
    return path
