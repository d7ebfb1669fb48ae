"""Reader for the raw Alibaba PAI-2020 trace tables (see docs/data-formats.md), the input of the ATLAS pipeline.

Accepted layouts, per table `pai_<table>`, looked up in one folder:

- `pai_<table>.csv` without a header row plus a sibling `pai_<table>.header` (the published layout);
- `pai_<table>.tar.gz` as published (the CSV inside; header from a `.header` beside or inside it);
- `pai_<table>.csv` with a header row.

When no header is found anywhere, the column order of the published `.header` files (shipped in
`atlas_data/resources/`) is assumed. Only the columns the pipeline needs are materialised
(pyarrow `include_columns`), so the full trace (≈ 1.2 M jobs, ≈ 7.5 M instances) fits easily in
memory. Rows with the wrong number of fields (whatever their bytes), non-numeric values in
numeric columns, missing keys or impossible values are counted and dropped; each table keeps a
`TableReport` with the count and a few examples, each naming its file line. The text must be
UTF-8: a row with the right number of fields holding bytes that are not UTF-8 raises
`InputError` naming the line (invalid bytes are shown escaped, `\\xe9`, never raw). A missing
file or column, an empty file or a file that is mostly garbage raises `InputError` (one line:
file, column/row, problem). The CSV is parsed on one thread so that every dropped row has its
line number (parsing is not the bottleneck: the file is read about as fast either way).

Sensor and machine-metric tables are post-execution measurements and are never read.

May import: numpy, pandas, pyarrow, atlas_data.errors.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from atlas_data.errors import InputError

#: table key -> file stem of the published trace
STEMS = {
    "job": "pai_job_table",
    "task": "pai_task_table",
    "instance": "pai_instance_table",
    "group_tag": "pai_group_tag_table",
    "machine_spec": "pai_machine_spec",
}

#: full column order of each table (the published `.header` files)
COLUMNS = {
    "job": ["job_name", "inst_id", "user", "status", "start_time", "end_time"],
    "task": ["job_name", "task_name", "inst_num", "status", "start_time", "end_time",
             "plan_cpu", "plan_mem", "plan_gpu", "gpu_type"],
    "instance": ["job_name", "task_name", "inst_name", "worker_name", "inst_id", "status",
                 "start_time", "end_time", "machine"],
    "group_tag": ["inst_id", "user", "gpu_type_spec", "group", "workload"],
    "machine_spec": ["machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"],
}

#: the columns the pipeline reads (projection) and their types; everything else is skipped.
#: Task start/end, gpu_type (the *assigned* GPU type) and the instance machine/worker are
#: placement or post-execution facts: not read for the dataset.
NEEDED = {
    "job": {"job_name": pa.string(), "inst_id": pa.string(), "user": pa.string(),
            "status": pa.string(), "start_time": pa.float64()},
    "task": {"job_name": pa.string(), "task_name": pa.string(), "inst_num": pa.float64(),
             "plan_cpu": pa.float64(), "plan_mem": pa.float64(), "plan_gpu": pa.float64()},
    "instance": {"job_name": pa.string(), "start_time": pa.float64(), "end_time": pa.float64()},
    "group_tag": {"inst_id": pa.string(), "user": pa.string(), "gpu_type_spec": pa.string(),
                  "group": pa.string(), "workload": pa.string()},
    "machine_spec": {"machine": pa.string(), "gpu_type": pa.string(), "cap_cpu": pa.float64(),
                     "cap_mem": pa.float64(), "cap_gpu": pa.float64()},
}

#: columns that must be non-null for a row to be usable
KEYS = {"job": ["job_name"], "task": ["job_name"], "instance": ["job_name"],
        "group_tag": ["inst_id"], "machine_spec": ["machine"]}

#: columns that must be >= 0 when present
#: time columns where the published trace writes 0 for "not recorded" (an instance that never started
#: or never ended; the trace's clock starts near 5e5 s, so 0 is never a real time): read as missing
ZERO_IS_MISSING = {"instance": ["start_time", "end_time"]}

NON_NEGATIVE = {"task": ["inst_num", "plan_cpu", "plan_mem", "plan_gpu"],
                "machine_spec": ["cap_cpu", "cap_mem", "cap_gpu"]}

REQUIRED_TABLES = ("job", "task", "instance")
MAX_EXAMPLES = 5
#: above this share of bad rows the file is treated as the wrong layout, not as noisy data
MAX_BAD_SHARE = 0.5


@dataclass
class TableReport:
    """What reading one table found: rows read, rows dropped as bad, a few examples."""

    table: str
    path: str
    rows: int = 0
    bad_rows: int = 0
    examples: list[str] = field(default_factory=list)

    def add_bad(self, count: int, examples: list[str]) -> None:
        self.bad_rows += int(count)
        room = MAX_EXAMPLES - len(self.examples)
        if room > 0:
            self.examples.extend(examples[:room])

    def as_dict(self) -> dict:
        return {"path": self.path, "rows": self.rows, "bad_rows": self.bad_rows, "examples": list(self.examples)}


@dataclass
class RawTables:
    """The raw tables as Arrow tables (projected columns only) and one report per table."""

    tables: dict[str, pa.Table]
    reports: dict[str, TableReport]

    def __getitem__(self, key: str) -> pa.Table:
        return self.tables[key]

    def get(self, key: str):
        return self.tables.get(key)


# ---------------------------------------------------------------------------------------------
# locating files and headers


def bundled_header(table: str) -> list[str]:
    """Column names from the `.header` file shipped in atlas_data/resources/."""
    text = resources.files("atlas_data").joinpath("resources", STEMS[table] + ".header").read_text()
    return _parse_header_line(text)


def bundled_machine_spec_path() -> Path:
    """The real PAI machine list (1,897 machines, CSV with a header row), shipped in the package."""
    return Path(str(resources.files("atlas_data").joinpath("resources", "pai_machine_spec.csv")))


def _parse_header_line(text: str) -> list[str]:
    first = text.strip().splitlines()[0] if text.strip() else ""
    return [c.strip().strip('"') for c in first.split(",") if c.strip()]


def find_table(raw_dir: Path, table: str) -> Path | None:
    stem = STEMS[table]
    for name in (stem + ".csv", stem + ".tar.gz", stem + ".csv.gz"):
        path = raw_dir / name
        if path.exists():
            return path
    return None


class _TarMember(io.RawIOBase):
    """A readable stream over one member of a streamed tar.gz; closing it closes the archive."""

    def __init__(self, archive: tarfile.TarFile, member):
        self._archive, self._member = archive, member

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        return self._member.read(size)

    def readinto(self, buffer) -> int:
        data = self._member.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def readline(self, size: int = -1) -> bytes:
        return self._member.readline(size)

    def close(self) -> None:
        self._archive.close()
        super().close()


class _Utf8Checked(io.RawIOBase):
    """The CSV bytes, with any line that is not UTF-8 passed on escaped (`\\xe9`) and recorded.

    pyarrow cannot hand a row that is not UTF-8 to the invalid-row handler (it fails decoding
    it), so bytes are checked here, a whole number of lines at a time: ASCII chunks (the
    published trace) pass untouched. `invalid` maps a bad line's number (1-based) to a
    description of its first bad byte; `empty` lists empty lines (pyarrow skips them, which
    shifts row indices against file lines).
    """

    CHUNK = 1 << 22

    def __init__(self, raw):
        self._raw = raw
        self._pending = b""
        self._out = memoryview(b"")
        self._eof = False
        self.lines = 0
        self.invalid: dict[int, str] = {}
        self.empty: list[int] = []

    def readable(self) -> bool:
        return True

    def _next(self) -> bool:
        while not self._eof:
            data = self._raw.read(self.CHUNK)
            if not data:
                self._eof = True
                complete, self._pending = self._pending, b""
            else:
                data = self._pending + data
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    self._pending = data
                    continue
                complete, self._pending = data[:cut], data[cut:]
            if not complete:
                return False
            self._out = memoryview(self._check(complete))
            return True
        return False

    def _check(self, chunk: bytes) -> bytes:
        first = self.lines + 1
        self.lines += chunk.count(b"\n")
        if chunk.startswith((b"\n", b"\r\n")) or b"\n\n" in chunk or b"\n\r\n" in chunk:
            self.empty.extend(first + i for i, line in enumerate(chunk.split(b"\n")[:-1])
                              if line in (b"", b"\r"))
        if chunk.isascii():
            return chunk
        try:
            chunk.decode("utf-8")
            return chunk
        except UnicodeDecodeError:
            pass
        lines = chunk.split(b"\n")
        for i, line in enumerate(lines):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                self.invalid[first + i] = f"byte 0x{line[exc.start]:02x} at column {exc.start + 1} is not UTF-8"
                lines[i] = line.decode("utf-8", "backslashreplace").encode("utf-8")
        return b"\n".join(lines)

    def readinto(self, buffer) -> int:
        if not self._out and not self._next():
            return 0
        n = min(len(buffer), len(self._out))
        buffer[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


def _open_source(path: Path) -> tuple[io.IOBase, list[str] | None]:
    """A binary stream with the CSV text and, for archives, a header found inside before it.

    A tar.gz is streamed (mode r|gz): the archive is decompressed once, never listed first.
    """
    if path.name.endswith(".tar.gz"):
        try:
            archive = tarfile.open(path, "r|gz")
            header = None
            for member in archive:
                if not member.isfile():
                    continue
                if member.name.endswith(".header"):
                    header = _parse_header_line(archive.extractfile(member).read().decode("utf-8", "replace"))
                elif member.name.endswith(".csv"):
                    return _TarMember(archive, archive.extractfile(member)), header
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise InputError(f"cannot open archive ({exc})", path=str(path)) from None
        archive.close()
        raise InputError("archive holds no .csv file", path=str(path))
    if path.name.endswith(".gz"):
        import gzip

        return gzip.open(path, "rb"), None
    return open(path, "rb"), None


def _first_line(path: Path) -> tuple[str, list[str] | None]:
    """The first line of the CSV text and, for archives, the header found inside."""
    stream, inner_header = _open_source(path)
    with stream:
        try:
            line = stream.readline(1 << 16)
        except (OSError, EOFError, tarfile.TarError) as exc:
            raise InputError(f"cannot read ({exc})", path=str(path)) from None
    return line.decode("utf-8", "replace").strip(), inner_header


# ---------------------------------------------------------------------------------------------
# reading one table


def read_table(path: Path | str, table: str, header_path: Path | str | None = None) -> tuple[pa.Table, TableReport]:
    """Read one raw table with only the NEEDED columns; bad rows are dropped and reported.

    The header is, in order: `header_path` if given, a sibling `<stem>.header`, a `.header`
    inside a tar.gz, the file's own first row when it names the columns, else the published
    column order.
    """
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", path=str(path))
    report = TableReport(table=table, path=str(path))
    stem = STEMS[table]
    sibling = Path(header_path) if header_path else path.parent / (stem + ".header")
    first, inner_header = _first_line(path)
    if not first:
        raise InputError("file is empty", path=str(path))
    first_fields = [c.strip().strip('"') for c in first.split(",")]
    if sibling.exists():
        try:
            names = _parse_header_line(sibling.read_bytes().decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"header is not UTF-8 text (byte {exc.start + 1})", path=str(sibling)) from None
        if not names:
            raise InputError("header file is empty", path=str(sibling))
        header_source = str(sibling)
    elif inner_header:
        names, header_source = inner_header, f"{path} (inner .header)"
    elif set(first_fields) >= set(NEEDED[table]):
        names, header_source = first_fields, f"{path} (header row)"
    else:
        names, header_source = bundled_header(table), "published column order"
    # a header row repeated inside a file that also has a .header: skip it
    skip_first = first_fields == names

    missing = [c for c in NEEDED[table] if c not in names]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(missing)} (header from {header_source}: {','.join(names)})",
            path=str(path), where=f"table {table}")
    if len(set(names)) != len(names):
        raise InputError(f"duplicate column names in header {','.join(names)}", path=str(path))

    width_errors: list[str] = []
    width_lines: list[int] = []
    checked: list[_Utf8Checked] = []

    def on_invalid(row) -> str:
        # row.number is the file line (serial parsing); a ragged row is dropped whatever its bytes
        width_lines.append(row.number)
        not_utf8 = " (not UTF-8)" if checked[-1].invalid.pop(row.number, None) else ""
        if len(width_errors) < MAX_EXAMPLES:
            width_errors.append(f"line {row.number}: {row.actual_columns} fields, expected {row.expected_columns}: "
                                f"{row.text[:80]!r}{not_utf8}")
        return "skip"

    def _read(types: dict[str, pa.DataType]) -> pa.Table:
        stream, _ = _open_source(path)
        checked.append(_Utf8Checked(stream))
        with checked[-1]:
            return pacsv.read_csv(
                checked[-1],
                read_options=pacsv.ReadOptions(column_names=names, skip_rows=1 if skip_first else 0,
                                               block_size=1 << 24, use_threads=False),
                parse_options=pacsv.ParseOptions(invalid_row_handler=on_invalid),
                convert_options=pacsv.ConvertOptions(
                    include_columns=list(NEEDED[table]), column_types=types,
                    strings_can_be_null=True, quoted_strings_can_be_null=True),
            )

    lines = None
    try:
        try:
            data = _read(NEEDED[table])
        except pa.ArrowInvalid as exc:
            if "conversion error" not in str(exc) and "CSV conversion" not in str(exc):
                raise
            # slow path: some numeric cell is not a number; read as text and find the rows
            width_errors.clear()
            width_lines.clear()
            data = _read({c: pa.string() for c in NEEDED[table]})
            _check_utf8(checked[-1], path)
            lines = _LineMap(skip_first, width_lines, checked[-1].empty)
            data = _coerce_numeric(data, table, report, lines)
    except pa.ArrowInvalid as exc:
        _check_utf8(checked[-1], path)
        raise InputError(f"cannot parse as CSV ({str(exc).splitlines()[0]})", path=str(path)) from None
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise InputError(f"cannot read ({exc})", path=str(path)) from None
    _check_utf8(checked[-1], path)
    if lines is None:
        lines = _LineMap(skip_first, width_lines, checked[-1].empty)

    report.add_bad(len(width_lines), width_errors)
    data = _zero_as_missing(data, table)
    data = _drop_invalid(data, table, report, lines)
    report.rows = data.num_rows + report.bad_rows
    if data.num_rows == 0:
        raise InputError(f"no valid rows ({report.bad_rows} bad)", path=str(path), where=f"table {table}")
    if report.bad_rows > MAX_BAD_SHARE * report.rows:
        raise InputError(
            f"{report.bad_rows} of {report.rows} rows are bad - wrong layout? first: {report.examples[0] if report.examples else ''}",
            path=str(path), where=f"table {table}")
    return data, report


def _check_utf8(checked: _Utf8Checked, path: Path) -> None:
    """A row with the right number of fields that is not UTF-8: one-line error naming the line."""
    if checked.invalid:
        line = min(checked.invalid)
        more = len(checked.invalid) - 1
        extra = f" ({more} more such line{'s' if more != 1 else ''})" if more else ""
        raise InputError(f"{checked.invalid[line]} - the file must be UTF-8 text{extra}",
                         path=str(path), where=f"line {line}")


class _LineMap:
    """File line (1-based) of a parsed row, given the lines skipped before it.

    Skipped: a repeated header row, dropped ragged rows, empty lines and rows dropped by an
    earlier check (`drop`).
    """

    def __init__(self, skip_first: bool, ragged: list[int], empty: list[int]):
        skipped = set(ragged) | set(empty) | ({1} if skip_first else set())
        self._set(np.array(sorted(skipped), dtype=np.int64))

    def _set(self, skipped: np.ndarray) -> None:
        self._skipped = skipped
        # lines not skipped before each skipped line: row r follows every skipped line with <= r
        self._before = skipped - np.arange(1, len(skipped) + 1)

    def lines(self, rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        return rows + 1 + np.searchsorted(self._before, rows, side="right")

    def __call__(self, mask: np.ndarray) -> np.ndarray:
        """File lines of the first MAX_EXAMPLES rows in `mask`."""
        return self.lines(np.flatnonzero(mask)[:MAX_EXAMPLES])

    def drop(self, mask: np.ndarray) -> None:
        """The rows in `mask` are removed from the table: later row indices skip their lines."""
        if mask.any():
            self._set(np.union1d(self._skipped, self.lines(np.flatnonzero(mask))))


def _coerce_numeric(data: pa.Table, table: str, report: TableReport, lines: _LineMap) -> pa.Table:
    """Text columns that should be numbers: convert, report and drop rows that are not."""
    bad = np.zeros(data.num_rows, dtype=bool)
    examples: list[str] = []
    columns = {}
    for name, typ in NEEDED[table].items():
        col = data.column(name)
        if pa.types.is_floating(typ):
            text = pd.Series(col.to_numpy(zero_copy_only=False), dtype=object)
            values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
            wrong = np.isnan(values) & text.notna().to_numpy() & (text.astype(str).str.strip() != "").to_numpy()
            for index, line in zip(np.flatnonzero(wrong), lines(wrong)):
                examples.append(f"line {line}: column {name}: not a number {text.iloc[index]!r}")
            bad |= wrong
            columns[name] = pa.array(values, type=pa.float64(), mask=np.isnan(values))
        else:
            columns[name] = col
    report.add_bad(int(bad.sum()), examples)
    lines.drop(bad)
    out = pa.table(columns)
    return out.filter(pa.array(~bad)) if bad.any() else out


def _zero_as_missing(data: pa.Table, table: str) -> pa.Table:
    """A 0 in a ZERO_IS_MISSING column becomes null: the row stays, without that time."""
    for name in ZERO_IS_MISSING.get(table, []):
        col = data.column(name)
        index = data.schema.get_field_index(name)
        data = data.set_column(index, name, pc.if_else(pc.equal(col, 0.0), pa.scalar(None, col.type), col))
    return data


def _drop_invalid(data: pa.Table, table: str, report: TableReport, lines: _LineMap) -> pa.Table:
    """Rows with a missing key, a negative resource or end < start are reported and dropped."""
    bad = np.zeros(data.num_rows, dtype=bool)
    examples: list[str] = []

    def flag(mask: np.ndarray, problem: str) -> None:
        nonlocal bad
        new = mask & ~bad
        for line in lines(new):
            examples.append(f"line {line}: {problem}")
        bad |= mask

    for key in KEYS[table]:
        col = data.column(key)
        empty = pc.or_(pc.is_null(col), pc.equal(pc.utf8_length(pc.fill_null(col, "")), 0))
        flag(empty.to_numpy(zero_copy_only=False), f"empty {key}")
    for name in NON_NEGATIVE.get(table, []):
        values = data.column(name).to_numpy(zero_copy_only=False)
        flag(np.nan_to_num(values, nan=0.0) < 0, f"negative {name}")
    if table == "instance":
        start = data.column("start_time").to_numpy(zero_copy_only=False)
        end = data.column("end_time").to_numpy(zero_copy_only=False)
        with np.errstate(invalid="ignore"):
            flag(end < start, "end_time before start_time")
    if table == "job":
        codes, _ = pd.factorize(data.column("job_name").to_pandas())
        dup = pd.Series(codes).duplicated().to_numpy()
        flag(dup, "duplicate job_name")
    report.add_bad(int(bad.sum()), examples)
    return data.filter(pa.array(~bad)) if bad.any() else data


# ---------------------------------------------------------------------------------------------
# reading a folder


def read_raw_dir(raw_dir: Path | str, tables: tuple[str, ...] = ("job", "task", "instance", "group_tag")) -> RawTables:
    """Read the raw PAI tables found in `raw_dir` (job, task and instance are required)."""
    raw_dir = Path(raw_dir)
    if not raw_dir.is_dir():
        raise InputError("raw folder not found", path=str(raw_dir))
    out: dict[str, pa.Table] = {}
    reports: dict[str, TableReport] = {}
    for table in tables:
        path = find_table(raw_dir, table)
        if path is None:
            if table in REQUIRED_TABLES:
                raise InputError(f"missing {STEMS[table]}.csv or {STEMS[table]}.tar.gz", path=str(raw_dir))
            continue
        out[table], reports[table] = read_table(path, table)
    return RawTables(out, reports)
