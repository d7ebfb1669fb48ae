"""The streaming reader of Standard Workload Format logs (`.swf`, `.swf.gz`; Parallel Workloads Archive).

`read_swf_columns(path, fields)` reads a log block by block (a few MiB of text at a time, cut at line
breaks) and keeps only the asked-for fields of the job lines as columns grown in place (int32 while a field's
values are whole numbers that fit, float64 otherwise), each row's line number and job number as
written, and the header comment lines: its memory is that of the kept columns, never of the text (a
log of 10⁷ lines is ~60 bytes of text a line and 4 bytes per kept field of whole numbers, 8 otherwise). `atlas_data.adapters.swf_fields` and `import_swf` read through it.

A line's meaning is that of the whole-text reading it replaces, exactly: the text is UTF-8 (a byte
that is not becomes U+FFFD), lines end where `str.splitlines` ends them, a stripped line that is
empty is skipped, one starting with `;` is a header comment, every other one holds the 18 SWF_FIELDS
split at whitespace (`str.split`), each read as `float()` reads it. A block of plain ASCII without
the rarer separators (vertical tab, form feed, \\x1c–\\x1f) is parsed at C speed by numpy.loadtxt,
whose numbers are Python's correctly rounded `float()`; any block it refuses or that holds other
bytes is read by the exact per-line rules above, which also find the error to report, ranked as the
whole-text reader ranked them: the first line with a wrong field count anywhere in the file, else the
first field that is not a number, else the first that is not finite.

Refused with one line (InputError), before the file is read whole: a NUL byte (binary data, not a
text log), a line longer than SWF_MAX_LINE_BYTES, more than SWF_MAX_COMMENT_LINES comment lines, and
a `.gz` file that decompresses to more than SWF_GZIP_MAX_RATIO times its size (and more than
SWF_GZIP_FLOOR_BYTES): a gzip bomb, refused as soon as that much has been inflated (and before any of
it is parsed when the gzip trailer announces it). Archive logs compress 5 to 10 times.

May import only numpy and atlas_data.errors.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from atlas_data.errors import InputError

#: the 18 fields of a Standard Workload Format line, in order [Feitelson14]; −1 means missing
SWF_FIELDS = ("job_number", "submit_time", "wait_time", "run_time", "allocated_processors", "average_cpu_time",
              "used_memory", "requested_processors", "requested_time", "requested_memory", "status", "user_id",
              "group_id", "executable_number", "queue_number", "partition_number", "preceding_job", "think_time")

SWF_BLOCK_BYTES = 1 << 22          # text read and parsed at a time
SWF_MAX_LINE_BYTES = 1 << 20       # an SWF line is ~100 bytes; a 1 MiB one is not a log's
SWF_MAX_COMMENT_LINES = 100_000    # archive headers have tens of lines
SWF_GZIP_MAX_RATIO = 100           # archive logs compress 5 to 10 times
SWF_GZIP_FLOOR_BYTES = 64 << 20    # a small file may compress better: judged from this size on

# bytes on which bytes.splitlines / bytes.split / bytes.strip differ from the str methods of the
# decoded text (str's extra line breaks and whitespace, and every non-ASCII byte)
_NOT_PLAIN = re.compile(rb"[\x0b\x0c\x1c-\x1f\x80-\xff]")


@dataclass(frozen=True)
class SwfColumns:
    """What `read_swf_columns` keeps of a log: {field: column} of the asked-for SWF_FIELDS (one row
    per job line, −1 = missing; int32 where every value of the field is one exactly, else float64: the
    values as `float()` reads them either way; a caller may pop a column to free it), each row's line number
    (int64), the header comment lines (stripped) and each row's job number as written (UTF-8 bytes;
    `job_numbers_text` gives them as text)."""

    columns: dict
    lines: np.ndarray
    header: list
    job_numbers: np.ndarray

    def __len__(self) -> int:
        return len(self.lines)

    def job_numbers_text(self, rows=slice(None)) -> np.ndarray:
        """The job numbers as written of `rows` (a mask, indices or slice), as a numpy array of text."""
        picked = self.job_numbers[rows]
        try:
            return picked.astype(str)  # ASCII, without a Python object per row
        except UnicodeDecodeError:
            return np.char.decode(picked, "utf-8")


class _Growing:
    """A column grown in place (`ndarray.resize`: realloc, which moves large blocks by
    remapping pages, not copying), so the rows are never held twice; `done()` trims the spare rows.
    A `narrow` column is held as int32 while every value is one exactly (SWF fields are whole
    numbers: half the memory of float64), and as float64 from the first value that is not.

    Each column starts at RESERVE_BYTES of address space, not of memory (pages are only counted once
    written): above the C allocator's largest threshold for mapping a block apart, so that it grows by
    remapping from the first row on. Grown from a small start, it was copied in the allocator's heap
    until it got that large, leaving each old copy behind as a hole (10⁶ lines: 116 MB resident for
    63 MB of columns)."""

    RESERVE_BYTES = 33 << 20

    def __init__(self, dtype, narrow: bool = False):
        dtype = np.dtype(np.int32 if narrow else dtype)
        self.array = np.empty(self.RESERVE_BYTES // dtype.itemsize, dtype=dtype)
        self.n = 0

    def add(self, rows: np.ndarray) -> None:
        end = self.n + len(rows)
        if self.array.dtype == np.int32 and rows.dtype != np.int32:
            ints = np.where(np.abs(rows) < 2.0 ** 31, rows, 0).astype(np.int32)
            if (ints.astype(np.float64).view(np.int64) == rows.view(np.int64)).all():  # bit for bit: −0.0 is not 0
                rows = ints
            else:
                wide = np.empty(max(end, len(self.array)), dtype=np.float64)
                wide[:self.n] = self.array[:self.n]
                self.array = wide
        if end > len(self.array):
            self.array.resize(max(end, len(self.array) * 5 // 4), refcheck=False)
        self.array[self.n:end] = rows
        self.n = end

    def done(self) -> np.ndarray:
        self.array.resize(self.n, refcheck=False)
        return self.array


@dataclass
class _Errors:
    """The first error of each kind met so far, as (line number, message)."""

    count: tuple | None = None
    number: tuple | None = None
    finite: tuple | None = None


def _blocks(path: Path) -> Iterator[bytes]:
    """The file's bytes in blocks of about SWF_BLOCK_BYTES, each cut just after a line break (the last
    block may end without one), with the NUL, long-line and gzip-ratio refusals of the module docstring."""
    import gzip

    path_s = str(path)
    if not path.is_file():
        raise InputError("file not found" if not path.exists() else "not a regular file", path=path_s)
    gz = path.name.lower().endswith(".gz")
    try:
        size = path.stat().st_size
        raw = open(path, "rb")
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc}", path=path_s) from None
    limit = max(SWF_GZIP_FLOOR_BYTES, SWF_GZIP_MAX_RATIO * size)
    bomb = InputError(f"decompresses to more than {limit / 2**20:,.0f} MiB, over {SWF_GZIP_MAX_RATIO} times its "
                      f"{size:,} bytes: refused as a gzip bomb (archive logs compress 5 to 10 times; gunzip a genuine "
                      "log and give the .swf)", path=path_s)
    def inflated(stream, n: int) -> bytes:
        try:
            return stream.read(n)
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read the file: {exc}", path=path_s) from None

    with raw:
        if gz and size >= 18:  # the trailer's size (mod 2^32) of the last member says a bomb before any parsing
            raw.seek(size - 4)
            claimed = int.from_bytes(raw.read(4), "little")
            raw.seek(0)
            if claimed > limit:  # confirmed by inflating (not parsing) up to the limit: a truncated file's trailer is noise
                stream, total = gzip.GzipFile(fileobj=raw, mode="rb"), 0
                while chunk := inflated(stream, 1 << 20):
                    total += len(chunk)
                    if total > limit:
                        raise bomb
                raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
        carry, total, line = b"", 0, 1
        while True:
            chunk = inflated(stream, SWF_BLOCK_BYTES)
            total += len(chunk)
            if gz and total > limit:  # what the trailer cannot tell (several members, 4 GiB and more) is counted
                raise bomb
            nul = chunk.find(b"\0")
            if nul >= 0:
                at = line + (carry + chunk[:nul]).count(b"\n")
                raise InputError(f"a NUL byte on line {at:,} (byte {total - len(chunk) + nul:,}): binary data, not a "
                                 "text SWF log", path=path_s)
            text = carry + chunk
            if not chunk:
                if text:
                    yield text
                return
            cut = text.rfind(b"\n") + 1
            if not cut:  # a log with lone \r line breaks: \r ends a line when no \n follows it
                cut = text.rfind(b"\r", 0, len(text) - 1) + 1
            if len(text) - cut > SWF_MAX_LINE_BYTES:
                at = line + text.count(b"\n", 0, cut)
                raise InputError(f"line {at:,} is longer than {SWF_MAX_LINE_BYTES:,} bytes: not an SWF log", path=path_s)
            if not cut:
                carry = text
                continue
            block, carry = text[:cut], text[cut:]
            line += block.count(b"\n") or block.count(b"\r")
            yield block


def _fast_block(block: bytes, first: int):
    """(lines in the block, values n×18, line numbers, header lines, job numbers) of a plain-ASCII block whose job lines
    numpy.loadtxt reads as 18 finite numbers each; None when the exact rules must decide."""
    if _NOT_PLAIN.search(block):
        return None
    lines = [line.strip() for line in block.splitlines()]
    count = len(lines)
    header = [line.decode("ascii") for line in lines if line[:1] == b";"]
    if header or len(lines) != sum(map(bool, lines)):
        numbers = [first + i for i, line in enumerate(lines) if line and line[:1] != b";"]
        data = [line for line in lines if line and line[:1] != b";"]
    else:
        numbers, data = range(first, first + len(lines)), lines
    if not data:
        return count, np.empty((0, len(SWF_FIELDS))), np.empty(0, dtype=np.int64), header, np.empty(0, dtype="S1")
    try:
        values = np.loadtxt(data, dtype=np.float64, comments=None, ndmin=2, encoding="ascii")
    except ValueError:
        return None
    if values.shape != (len(data), len(SWF_FIELDS)) or not np.isfinite(values).all():
        return None
    job_numbers = np.array([line.split(None, 1)[0] for line in data])
    return count, values, np.asarray(numbers, dtype=np.int64), header, job_numbers


def _exact_block(block: bytes, first: int, errors: _Errors, keep: bool):
    """The per-line rules of the module docstring on one block: (lines in the block, values, line numbers,
    header lines, job numbers) with the block's first error of each kind recorded in `errors` (values None once any
    error is known, or when `keep` is False)."""
    header, data, numbers = [], [], []
    lines = block.decode("utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=first):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            header.append(text)
            continue
        data.append(text)
        numbers.append(number)
    tokens = list(map(str.split, data))
    counts = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    bad = counts != len(SWF_FIELDS)
    if bad.any():
        i = int(np.argmax(bad))
        errors.count = (numbers[i], f"expected {len(SWF_FIELDS)} whitespace-separated SWF fields, got {counts[i]}")
        return len(lines), None, None, header, None
    values = None
    if errors.number is None:
        try:
            values = np.array([f for row in tokens for f in row], dtype=np.float64).reshape(len(tokens), len(SWF_FIELDS))
        except ValueError:
            i, k = next((i, k) for i, row in enumerate(tokens) for k, f in enumerate(row) if not _is_number(f))
            errors.number = (numbers[i], f"field {k + 1} ({SWF_FIELDS[k]}) is not a number: {tokens[i][k]!r}")
    if values is not None and errors.finite is None and not np.isfinite(values).all():
        i, k = (int(a[0]) for a in np.nonzero(~np.isfinite(values)))
        errors.finite = (numbers[i], f"field {k + 1} ({SWF_FIELDS[k]}) is not a finite number: {tokens[i][k]!r} "
                                     "(−1 marks a missing value)")
    if not keep or errors.number or errors.finite:
        return len(lines), None, None, header, None
    job_numbers = np.array([row[0].encode("utf-8") for row in tokens]) if tokens else np.empty(0, dtype="S1")
    return len(lines), values, np.array(numbers, dtype=np.int64), header, job_numbers


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_swf_columns(path: str | os.PathLike, fields=SWF_FIELDS) -> SwfColumns:
    """The job lines' `fields` (names of SWF_FIELDS) of an SWF log, `.swf` or `.swf.gz`, read block by
    block (module docstring). A line with a field count other than 18, or a field that is not a finite
    number, is an InputError naming the line; a log without job lines too."""
    path = Path(path)
    path_s = str(path)
    unknown = [f for f in fields if f not in SWF_FIELDS]
    if unknown:
        raise ValueError(f"not SWF fields: {unknown}")
    index = [SWF_FIELDS.index(f) for f in fields]
    kept = {f: _Growing(np.float64, narrow=True) for f in fields}
    lines, job_numbers, header = _Growing(np.int64), [], []
    errors = _Errors()
    first = 1
    for block in _blocks(path):
        ok = errors.number is None and errors.finite is None
        parsed = _fast_block(block, first) if ok else None
        if parsed is None:
            parsed = _exact_block(block, first, errors, keep=ok)
            if errors.count:
                line, message = errors.count
                raise InputError(message, path=path_s, where=f"line {line}")
        count, values, numbers, block_header, ids = parsed
        header += block_header
        if len(header) > SWF_MAX_COMMENT_LINES:
            raise InputError(f"more than {SWF_MAX_COMMENT_LINES:,} comment lines (;): not an SWF log", path=path_s)
        if values is not None and len(values):
            for f, k in zip(fields, index):
                kept[f].add(values[:, k])
            lines.add(numbers)
            job_numbers.append(ids)
        first += count
    for kind in (errors.number, errors.finite):
        if kind:
            raise InputError(kind[1], path=path_s, where=f"line {kind[0]}")
    if not job_numbers:
        raise InputError("the SWF log has no job lines", path=path_s)
    return SwfColumns({f: kept[f].done() for f in fields}, lines.done(), header, np.concatenate(job_numbers))
