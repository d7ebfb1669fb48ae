"""The streaming SWF reader (atlas_data.swf_log) against the whole-text reader it replaced.

`whole_text_reader` below is that reader as it was (the whole decompressed log decoded at once,
`str.splitlines`, `str.split`, `float()` through numpy): the streaming one must give the same
values bit for bit, the same line numbers, header lines and job numbers, and the same first error,
on the shipped logs and on logs built to hit every block boundary and every rarer byte. Then the
refusals the whole-text reader lacked: a gzip bomb, NUL bytes, an endless line, and its memory.
"""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import atlas_data.swf_log as swf_log
from benchmark.cli import main
from atlas_data.adapters import import_swf, swf_fields
from atlas_data.errors import InputError
from atlas_data.swf_log import SWF_FIELDS, read_swf_columns

PWA = Path(swf_log.__file__).resolve().parent / "resources" / "pwa"


def exit_2_one_line(capsys, argv, line):
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    assert capsys.readouterr().err.splitlines() == [f"error: {line}"]


def whole_text_reader(path):
    """(values, line numbers, header, job numbers) as the reader before streaming computed them."""
    path = Path(path)
    data = (gzip.open if path.name.endswith(".gz") else open)(path, "rb").read()
    rows, numbers, header = [], [], []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
        text = line.strip()
        if not text:
            continue
        if text.startswith(";"):
            header.append(text)
            continue
        rows.append(text)
        numbers.append(number)
    if not rows:
        raise InputError("the SWF log has no job lines", path=str(path))
    tokens = list(map(str.split, rows))
    counts = np.array([len(t) for t in tokens])
    if (counts != 18).any():
        i = int(np.argmax(counts != 18))
        raise InputError(f"expected 18 whitespace-separated SWF fields, got {counts[i]}", path=str(path),
                         where=f"line {numbers[i]}")
    try:
        values = np.array([f for row in tokens for f in row], dtype=np.float64).reshape(len(tokens), 18)
    except ValueError:
        def bad(f):
            try:
                float(f)
                return False
            except ValueError:
                return True
        i, k = next((i, k) for i, row in enumerate(tokens) for k, f in enumerate(row) if bad(f))
        raise InputError(f"field {k + 1} ({SWF_FIELDS[k]}) is not a number: {tokens[i][k]!r}", path=str(path),
                         where=f"line {numbers[i]}") from None
    if not np.isfinite(values).all():
        i, k = (int(a[0]) for a in np.nonzero(~np.isfinite(values)))
        raise InputError(f"field {k + 1} ({SWF_FIELDS[k]}) is not a finite number: {tokens[i][k]!r} (−1 marks a "
                         "missing value)", path=str(path), where=f"line {numbers[i]}")
    return values, np.array(numbers), header, [row[0] for row in tokens]


def assert_same_as_whole_text(path):
    values, lines, header, ids = swf_fields(path)
    old_values, old_lines, old_header, old_ids = whole_text_reader(path)
    assert values.shape == old_values.shape and values.tobytes() == old_values.tobytes()  # bit for bit, −0.0 too
    assert lines.tolist() == old_lines.tolist() and header == old_header and ids.tolist() == old_ids


def test_a_shipped_log_reads_bit_for_bit_as_before_at_every_block_size(monkeypatch):
    path = PWA / "SDSC-SP2-1998-4.2-cln.swf.gz"
    old_values, old_lines, old_header, old_ids = whole_text_reader(path)
    assert old_values.shape == (59715, 18) and len(old_header) > 10
    for block in (1 << 22, 65_536, 4_099):  # one block, some, hundreds (cut mid-line every time)
        monkeypatch.setattr(swf_log, "SWF_BLOCK_BYTES", block)
        assert_same_as_whole_text(path)
    # the imported table's key columns: the kept job lines' fields as the whole-text reader read them
    jobs, report = import_swf(path)
    procs = np.where(old_values[:, 4] > 0, old_values[:, 4], old_values[:, 7])
    keep = (old_values[:, 1] >= 0) & (procs > 0) & (old_values[:, 3] > 0)
    assert report.rows_read == 59715 and report.kept == int(keep.sum()) == len(jobs)
    assert jobs["job_id"].tolist() == np.array(old_ids, dtype=object)[keep].tolist()
    assert jobs["submit_time"].to_numpy().tobytes() == old_values[keep, 1].tobytes()
    assert jobs["duration"].to_numpy().tobytes() == old_values[keep, 3].tobytes()
    assert jobs["gpus"].tolist() == procs[keep].astype(np.int64).tolist()
    assert jobs["tenant"].tolist() == [str(int(u)) if u >= 0 else "default" for u in old_values[keep, 11]]


LINE = "1 0 5 100 4 -1 -1 4 200 -1 1 3 1 7 1 1 -1 -1"
ODD_LOGS = {
    "crlf, blank and indented lines, comments between jobs": f"; MaxProcs: 8\r\n\r\n  {LINE}  \r\n;note\r\n\t{LINE}\r\n",
    "lone carriage returns": f"; MaxProcs: 8\r{LINE}\r\r{LINE}\r",
    "no final line break": f"{LINE}\n{LINE}",
    "tabs between fields": LINE.replace(" ", "\t") + "\n",
    "numbers as float() reads them": "007 1e3 +5 .5 4. 1_000 -0 4 200 -1 1 3 1 7 1 1 -1 -1\n",
    "Arabic-Indic digits and a no-break space": f"{LINE}\n١٢ 0 5 100 4 -1 -1 4 200\u00a0-1 1 3 1 7 1 1 -1 -1\n",
    "form feed and file separator split and end lines": f"{LINE}\x0c{LINE}\x1c{LINE.replace(' ', chr(0x1f))}\n",
    "bytes that are not UTF-8 in a comment": f"; Computer: caf\xe9\n{LINE}\n",
    "unicode line separators": f"{LINE}\u2028{LINE}\u0085{LINE}\n",
}


@pytest.mark.parametrize("case", ODD_LOGS)
@pytest.mark.parametrize("block", [5, 64, 1 << 22])
def test_odd_logs_read_as_the_whole_text_reader_read_them(tmp_path, monkeypatch, case, block):
    monkeypatch.setattr(swf_log, "SWF_BLOCK_BYTES", block)
    path = tmp_path / "log.swf"
    text = ODD_LOGS[case]
    path.write_bytes(text.encode("latin-1") if "not UTF-8" in case else text.encode("utf-8"))
    assert_same_as_whole_text(path)


BAD_LOGS = {
    # a wrong field count anywhere is reported before an earlier field that is not a number
    "count after a word": ([LINE.replace(" 100 ", " abc ")] + [LINE] * 50 + [LINE + " 9"],
                           "line 52: expected 18 whitespace-separated SWF fields, got 19"),
    "word after nan": ([LINE.replace(" 200 ", " nan ")] + [LINE] * 50 + [LINE.replace(" 3 ", " x ")],
                       "line 52: field 12 (user_id) is not a number: 'x'"),
    "inf": ([LINE] * 30 + [LINE.replace(" 100 ", " -inf ")], "line 31: field 4 (run_time) is not a finite number: "
                                                               "'-inf' (−1 marks a missing value)"),
    "no job lines": (["; MaxProcs: 8", "", ";"], "the SWF log has no job lines"),
}


@pytest.mark.parametrize("case", BAD_LOGS)
@pytest.mark.parametrize("block", [40, 1 << 22])
def test_the_first_error_is_the_whole_text_readers(tmp_path, monkeypatch, case, block):
    monkeypatch.setattr(swf_log, "SWF_BLOCK_BYTES", block)
    lines, message = BAD_LOGS[case]
    path = tmp_path / "log.swf"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as old:
        whole_text_reader(path)
    with pytest.raises(InputError) as new:
        read_swf_columns(path)
    assert str(new.value) == str(old.value) == f"{path}: {message}"


def test_only_the_asked_fields_are_kept(tmp_path):
    path = tmp_path / "log.swf"
    path.write_text(f"{LINE}\n{LINE.replace('1 0 5', '2 9 5', 1)}\n")
    log = read_swf_columns(path, ("submit_time", "user_id"))
    assert list(log.columns) == ["submit_time", "user_id"] and len(log) == 2
    assert log.columns["submit_time"].tolist() == [0.0, 9.0] and log.columns["user_id"].tolist() == [3.0, 3.0]
    assert log.lines.tolist() == [1, 2] and log.job_numbers_text().tolist() == ["1", "2"]


@pytest.mark.parametrize("members", ["one", "bomb then a small member"])
def test_a_gzip_bomb_is_refused_before_it_is_read_whole(tmp_path, capsys, monkeypatch, members):
    bomb = tmp_path / "bomb.swf.gz"
    data = gzip.compress((LINE + "\n").encode() * 500_000)  # 23 MB of text in ~70 kB
    if members != "one":  # the trailer read first names the last member's size only: the count must catch it
        data += gzip.compress((LINE + "\n").encode())
    bomb.write_bytes(data)
    size = bomb.stat().st_size
    assert size < 100_000
    monkeypatch.setattr(swf_log, "SWF_GZIP_FLOOR_BYTES", 1 << 20)
    monkeypatch.setattr(swf_log, "SWF_BLOCK_BYTES", 1 << 16)
    read = []
    real = swf_log._fast_block
    monkeypatch.setattr(swf_log, "_fast_block", lambda block, first: read.append(len(block)) or real(block, first))
    limit = max(1 << 20, 100 * size)
    exit_2_one_line(capsys, ["data", "import", "--format", "swf", str(bomb), "--out", str(tmp_path / "jobs.parquet")],
                    f"{bomb}: decompresses to more than {limit / 2**20:,.0f} MiB, over 100 times its {size:,} bytes: "
                    "refused as a gzip bomb (archive logs compress 5 to 10 times; gunzip a genuine log and give the .swf)")
    if members == "one":
        assert read == []  # refused from the trailer, before a byte is inflated
    else:
        assert 0 < sum(read) <= limit < 23_000_000 // 2  # stopped at the limit, not after reading it all
    assert not (tmp_path / "jobs.parquet").exists()


def test_the_shipped_logs_are_far_from_the_bomb_ratio():
    for path in PWA.glob("*.swf.gz"):
        with gzip.open(path, "rb") as fh:
            text = len(fh.read())
        assert text < swf_log.SWF_GZIP_MAX_RATIO * path.stat().st_size / 5


@pytest.mark.parametrize("name", ["nul.swf", "nul.swf.gz"])
def test_a_file_of_nul_bytes_is_refused_with_one_line(tmp_path, capsys, name):
    path = tmp_path / name
    data = b"\0" * 3_000_000
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    exit_2_one_line(capsys, ["data", "import", "--format", "swf", str(path), "--out", str(tmp_path / "jobs.parquet")],
                    f"{path}: a NUL byte on line 1 (byte 0): binary data, not a text SWF log")


def test_a_nul_byte_later_names_its_line(tmp_path):
    path = tmp_path / "log.swf"
    path.write_bytes(f"; MaxProcs: 8\n{LINE}\n".encode() + b"1 2\0 3\n")
    with pytest.raises(InputError, match=r"log.swf: a NUL byte on line 3 \(byte 62\): binary data"):
        read_swf_columns(path)


def test_an_endless_line_is_refused_without_holding_it(tmp_path):
    path = tmp_path / "log.swf"
    path.write_bytes(LINE.encode() + b"\n" + b"7" * (swf_log.SWF_MAX_LINE_BYTES + 10))
    with pytest.raises(InputError, match=r"log.swf: line 2 is longer than 1,048,576 bytes: not an SWF log"):
        read_swf_columns(path)


def test_a_field_is_held_as_int32_until_a_value_is_not_one_then_as_float64_bit_for_bit(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_log, "SWF_BLOCK_BYTES", 4_099)  # the odd values land in later blocks
    row = "{} {} 0 50 2 -1 -1 2 {} -1 1 {} 1 1 1 1 -1 -1"
    lines = [row.format(i + 1, 10 * i, 60, 3) for i in range(2_000)]
    lines[1_200] = row.format(1_201, 12_000.5, 60, 3)  # a fractional submit time
    lines[1_500] = row.format(1_501, 15_000, 2**31, 3)  # a requested time beyond int32
    lines[1_700] = row.format(1_701, 17_000, 60, "-0")  # −0.0, not 0
    path = tmp_path / "mixed.swf"
    path.write_text("\n".join(lines) + "\n")
    log = read_swf_columns(path, ("submit_time", "requested_time", "user_id", "run_time"))
    assert {f: c.dtype.name for f, c in log.columns.items()} == {
        "submit_time": "float64", "requested_time": "float64", "user_id": "float64", "run_time": "int32"}
    assert log.columns["submit_time"][1_199:1_202].tolist() == [11_990, 12_000.5, 12_010]
    assert log.columns["requested_time"][1_500] == 2**31 and np.signbit(log.columns["user_id"][1_700])
    assert_same_as_whole_text(path)


def test_memory_is_that_of_the_kept_columns_not_of_the_text(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_log, "SWF_BLOCK_BYTES", 1 << 16)  # the default 4 MiB block costs ~50 MB: constant
    # tracemalloc counts the address space a column reserves (33 MiB), not the pages written: start small
    monkeypatch.setattr(swf_log._Growing, "RESERVE_BYTES", 1 << 14)
    n = 200_000
    path = tmp_path / "big.swf"
    rows = np.tile(np.array([1, 0, 5, 100, 4, -1, -1, 4, 200, -1, 1, 3, 1, 7, 1, 1, -1, -1]), (n, 1))
    rows[:, 0] = np.arange(1, n + 1)
    rows[:, 1] = np.arange(n) * 7
    np.savetxt(path, rows, fmt="%d")
    text = path.stat().st_size
    assert text > 9_000_000
    tracemalloc.start()
    log = read_swf_columns(path, ("submit_time", "run_time"))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert log.columns["submit_time"].tolist() == (np.arange(n) * 7.0).tolist()
    kept = sum(c.nbytes for c in log.columns.values()) + log.lines.nbytes + log.job_numbers.nbytes  # 200,000 × (2 × 4 + 8 + 6) bytes
    assert kept == n * (2 * 4 + 8 + 6)  # whole numbers: int32 columns
    # the kept columns (grown by a quarter at a time) and one block of text with its parse; the whole-text
    # reader held the text several times over (bytes, str, lines, tokens)
    assert peak < 1.25 * kept + 12 * swf_log.SWF_BLOCK_BYTES < text


def test_a_truncated_gzip_is_unreadable_not_a_bomb(tmp_path):
    path = tmp_path / "cut.swf.gz"
    data = (PWA / "SDSC-SP2-1998-4.2-cln.swf.gz").read_bytes()[:300_000]
    path.write_bytes(data)
    assert int.from_bytes(data[-4:], "little") > swf_log.SWF_GZIP_FLOOR_BYTES  # its last bytes claim a bomb's size
    with pytest.raises(InputError, match=r"cut.swf.gz: cannot read the file: Compressed file ended before"):
        read_swf_columns(path)


def test_a_log_of_comments_without_end_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(swf_log, "SWF_MAX_COMMENT_LINES", 5)
    path = tmp_path / "log.swf"
    path.write_text(";\n" * 5 + f"{LINE}\n")
    assert len(read_swf_columns(path).header) == 5
    path.write_text(";\n" * 6 + f"{LINE}\n")
    with pytest.raises(InputError, match=r"log.swf: more than 5 comment lines \(;\): not an SWF log"):
        read_swf_columns(path)
