"""Nothing lost: outputs nested in outputs, reruns over foreign files, folders that cannot be
replaced, a full disk, and `--readme` edits (docs/results-and-tracking.md#safe-outputs).

Every refusal is exit status 2 with one line on stderr, and the user's files stay byte for byte
(sha256 of every file, hidden ones included), with no `.NAME.tmp-*` / `.NAME.old-*` left beside.
"""

import errno
import json
import os
import shutil
import stat
import time

import pandas as pd
import pytest

import atlas_data.outputs as outputs
from atlas_data.errors import InputError
from atlas_data.io import write_text_atomic
from atlas_data.outputs import MARKER, output_folder, read_marker
from benchmark.cli import main
from benchmark.results import replace_readme_block
from cli_checks import exit_2_one_line, snapshot

pytestmark = pytest.mark.usefixtures("figures_unrendered")  # no test here looks at a figure its commands draw (tests/conftest.py)


def _strays(folder, name):
    """Temporary or set-aside siblings of folder/name (`.NAME.tmp-*`, `.NAME.old-*`)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(f".{name}."))


@pytest.fixture
def jobs(tmp_path):
    path = tmp_path / "jobs.csv"
    path.write_text("job_id,submit_time,duration\na,0,3\nb,0,1\nc,1,2\nd,2,1\n")
    return path


def _run(jobs, out):
    return ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs), "--no-mlflow",
            "--quiet", "--output", str(out)]


# ----- 1. nesting ------------------------------------------------------------------------------------
def test_an_output_inside_an_output_is_refused_and_a_rerun_keeps_what_it_did_not_write(tmp_path, jobs, capsys):
    out = tmp_path / "A"
    assert main(_run(jobs, out)) == 0
    assert read_marker(out)["files"] == sorted(p.name for p in out.iterdir() if p.name != MARKER)
    before = snapshot(tmp_path)
    exit_2_one_line(capsys, _run(jobs, out / "inner"), f"{out / 'inner'}: --output: is inside {out}, the output folder "
                     "of `benchmark run`: a rerun there would delete it")
    exit_2_one_line(capsys, _run(jobs, out / "deep" / "er"), f"is inside {out}")
    assert snapshot(tmp_path) == before and not (out / "inner").exists() and not (out / "deep").exists()

    # something dropped into the folder later (a file, a folder, an output moved in): refused, kept
    (out / "notes.txt").write_text("mine\n")
    keep = snapshot(tmp_path)
    exit_2_one_line(capsys, _run(jobs, out), "holds a file 'notes.txt' that `benchmark run` did not write (added since)")
    (out / "notes.txt").unlink()
    other = tmp_path / "B"
    assert main(_run(jobs, other)) == 0
    shutil.move(other, out / "inner")
    keep = snapshot(tmp_path)
    exit_2_one_line(capsys, _run(jobs, out), "holds another output 'inner' that `benchmark run` did not write")
    assert snapshot(tmp_path) == keep and _strays(tmp_path, "A") == []
    shutil.rmtree(out / "inner")
    assert main(_run(jobs, out)) == 0  # only its own files: replaced whole


def test_an_output_inside_a_dataset_folder_is_refused(tmp_path, jobs, capsys):
    ds = tmp_path / "ds"
    assert main(["data", "build", "--jobs", "300", "--quiet", "--out", str(ds)]) == 0
    link = tmp_path / "link"
    link.symlink_to(ds)
    handmade = tmp_path / "handmade"  # a dataset folder without a marker (copied, or from an older version)
    handmade.mkdir()
    for name in ("atlas.parquet", "dataset.json"):
        shutil.copy(ds / name, handmade / name)
    before = snapshot(tmp_path)
    exit_2_one_line(capsys, _run(jobs, ds / "x"), f"is inside {ds}, the output folder of `benchmark data build`")
    exit_2_one_line(capsys, _run(jobs, link / "x"), "the output folder of `benchmark data build`")
    exit_2_one_line(capsys, _run(jobs, handmade / "runs" / "x"), f"is inside {handmade}, a dataset folder")
    exit_2_one_line(capsys, ["data", "build", "--jobs", "300", "--quiet", "--out", ds / "again"], f"is inside {ds}")
    assert snapshot(tmp_path) == before


def test_the_steps_of_a_command_still_write_inside_its_temporary_folder(tmp_path):
    out = tmp_path / "demo"
    with output_folder(out, "demo") as folder:
        with output_folder(folder / "run1", "run") as inner:  # as `benchmark demo` runs its steps
            (inner / "results.json").write_text("{}")
    assert read_marker(out / "run1")["command"] == "run"
    assert read_marker(out)["files"] == ["run1", f"run1/{MARKER}", "run1/results.json"]
    with output_folder(out, "demo") as folder:  # a rerun: all of it was written by the command
        (folder / "SUMMARY.md").write_text("new\n")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "SUMMARY.md"]


def test_an_output_of_an_older_version_without_its_list_of_files_is_not_replaced(tmp_path, jobs, capsys):
    out = tmp_path / "A"
    out.mkdir()
    (out / MARKER).write_text(json.dumps({"command": "run", "complete": True}))
    (out / "results.json").write_text("{}")
    before = snapshot(tmp_path)
    exit_2_one_line(capsys, _run(jobs, out), "of an earlier version, which did not list its files")
    assert snapshot(tmp_path) == before


# ----- 2. a folder that cannot be replaced -------------------------------------------------------------
def test_an_earlier_output_that_cannot_be_deleted_whole_is_refused_before_the_run(tmp_path, jobs, capsys, monkeypatch):
    out = tmp_path / "A"
    assert main(_run(jobs, out)) == 0
    stuck = out / "sub"
    with output_folder(tmp_path / "C", "run") as folder:  # an output with a sub-folder
        (folder / "sub").mkdir()
        (folder / "sub" / "x.txt").write_text("x")
    out, stuck = tmp_path / "C", tmp_path / "C" / "sub"
    stuck.chmod(0o555)  # not writable: its files cannot be deleted (for root too, through os.access below)
    real_access = os.access
    monkeypatch.setattr(outputs.os, "access", lambda p, mode, **kw: False if str(p) == str(stuck) else real_access(p, mode, **kw))
    before = snapshot(tmp_path)
    try:
        with pytest.raises(InputError, match=f"cannot be replaced: {stuck} is not writable"):
            with output_folder(out, "run"):
                pytest.fail("refused before any work")
    finally:
        stuck.chmod(0o755)
    assert snapshot(tmp_path) == before and _strays(tmp_path, "C") == []


@pytest.mark.parametrize("failing", ["aside", "into_place"])
def test_a_rename_that_fails_is_exit_2_with_the_earlier_output_intact(tmp_path, jobs, capsys, monkeypatch, failing):
    out = tmp_path / "A"
    assert main(_run(jobs, out)) == 0
    before = snapshot(out)
    real_replace = os.replace

    def replace(src, dst):
        moving_aside = os.path.basename(str(dst)).startswith(".A.old-")
        if (failing == "aside" and moving_aside) or (failing == "into_place" and str(dst) == str(out)
                                                      and ".A.tmp-" in str(src)):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_replace(src, dst)

    monkeypatch.setattr(outputs.os, "replace", replace)
    exit_2_one_line(capsys, _run(jobs, out), f"{out}: --output: cannot put the output in place (Permission denied); "
                     "the earlier one is unchanged")
    assert snapshot(out) == before and _strays(tmp_path, "A") == []


def test_a_set_aside_output_that_cannot_be_deleted_is_never_a_silent_exit_0(tmp_path, jobs, capsys, monkeypatch):
    out = tmp_path / "A"
    assert main(_run(jobs, out)) == 0

    real_rmtree = shutil.rmtree

    def rmtree(path, *args, **kw):  # e.g. an immutable file in the set-aside copy
        if not os.path.basename(str(path)).startswith(".A.old-"):
            return real_rmtree(path, *args, **kw)
        error = PermissionError(errno.EPERM, "Operation not permitted")
        if "onexc" in kw:
            kw["onexc"](os.unlink, str(path), error)
        else:
            kw["onerror"](os.unlink, str(path), (PermissionError, error, None))

    monkeypatch.setattr(outputs.shutil, "rmtree", rmtree)
    line = exit_2_one_line(capsys, _run(jobs, out), "the new output is in place, but the earlier one, moved aside to "
                            ".A.old-", "could not be deleted entirely (Operation not permitted)")
    assert read_marker(out)["complete"] is True and _strays(tmp_path, "A")[0] in line


# ----- 5. a full disk ----------------------------------------------------------------------------------
@pytest.mark.parametrize("code, reason", [(errno.ENOSPC, "no space left on device"), (errno.EDQUOT, "disk quota exceeded")])
def test_a_full_disk_during_a_run_is_exit_2_with_the_earlier_output_intact(tmp_path, jobs, capsys, monkeypatch, code, reason):
    out = tmp_path / "A"
    assert main(_run(jobs, out)) == 0
    before = snapshot(out)

    def full(self, *args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(pd.DataFrame, "to_csv", full)  # results.csv, inside the temporary folder
    exit_2_one_line(capsys, _run(jobs, out), f"--output: {reason} while writing {out}")
    assert snapshot(out) == before and _strays(tmp_path, "A") == []
    exit_2_one_line(capsys, _run(jobs, tmp_path / "new"), f"{reason} while writing {tmp_path / 'new'}")
    assert not (tmp_path / "new").exists() and _strays(tmp_path, "new") == []


def test_a_full_disk_during_data_build_and_import_is_exit_2_with_nothing_left(tmp_path, jobs, capsys, monkeypatch):
    import pyarrow.parquet as pq

    imported = tmp_path / "jobs.parquet"
    assert main(["data", "import", str(jobs), "--format", "jobs", "--out", str(imported), "--quiet"]) == 0
    before = snapshot(tmp_path)

    def full(*args, **kwargs):  # pyarrow's own error: no errno, the reason in the text, raised from the OSError
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError as exc:
            raise RuntimeError("IOError: failed to write the column chunk") from exc

    monkeypatch.setattr(pq, "write_table", full)
    exit_2_one_line(capsys, ["data", "import", jobs, "--format", "jobs", "--out", imported, "--quiet"],
                     f"no space left on device while writing {imported}")
    exit_2_one_line(capsys, ["data", "build", "--jobs", "300", "--quiet", "--out", tmp_path / "ds"],
                     f"--out: no space left on device while writing {tmp_path / 'ds'}")
    assert snapshot(tmp_path) == before and not (tmp_path / "ds").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_full_disk_while_writing_the_leaderboard_is_exit_2(tmp_path, capsys, monkeypatch):
    from pathlib import Path

    entries = tmp_path / "entries"
    (entries / "prediction").mkdir(parents=True)
    board = tmp_path / "board.md"
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(entries), "--output", str(board), "--quiet"]) == 0
    before = snapshot(tmp_path)
    real = Path.write_text

    def write_text(self, *args, **kwargs):
        if self.name.startswith(".board.md.tmp-"):
            real(self, "half a boa", encoding="utf-8")
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)
    exit_2_one_line(capsys, ["leaderboard", "--track", "prediction", "--entries-dir", entries, "--output", board],
                     f"--output: no space left on device while writing {board}")
    assert snapshot(tmp_path) == before


def test_write_text_atomic_on_a_full_disk_leaves_the_file_as_it_was(tmp_path, monkeypatch):
    path = tmp_path / "summary.md"
    path.write_text("earlier\n")
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, *args, **kwargs):
            self.fh = real_fdopen(*args, **kwargs)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def write(self, text):
            self.fh.write(text[:3])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("atlas_data.io.os.fdopen", Full)
    with pytest.raises(InputError, match=f"^no space left on device while writing {path}$"):
        write_text_atomic(path, "a much longer text\n")
    assert path.read_text() == "earlier\n" and sorted(p.name for p in tmp_path.iterdir()) == ["summary.md"]


# ----- 3. --readme ---------------------------------------------------------------------------------------
DEMO_START, DEMO_END = "<!-- demo-results:start -->", "<!-- demo-results:end -->"
BAD_READMES = {
    "two starts": (f"intro\n{DEMO_START}\nmy text\n{DEMO_START}\nold\n{DEMO_END}\n".encode(), "2 <!-- demo-results:start --> and 1"),
    "two ends": (f"{DEMO_START}\nold\n{DEMO_END}\nmine\n{DEMO_END}\n".encode(), "1 <!-- demo-results:start --> and 2"),
    "end first": (f"{DEMO_END}\nmine\n{DEMO_START}\n".encode(), f"{DEMO_END} stands before {DEMO_START}"),
    "latin-1": (f"caf\xe9\n{DEMO_START}\nold\n{DEMO_END}\n".encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 3)"),
    "no block": (b"# my project\n", f"no {DEMO_START} ... {DEMO_END} block"),
}
COMMANDS = {
    "demo": (["demo", "--no-mlflow", "--quiet"], DEMO_START, DEMO_END),
    "transfer": (["transfer", "--quiet"], "<!-- transfer:start -->", "<!-- transfer:end -->"),
    "reproduce atlas": (["reproduce", "atlas", "--quiet"], "<!-- reproduce-atlas:start -->", "<!-- reproduce-atlas:end -->"),
    "reproduce astraea": (["reproduce", "astraea", "--quiet"], "<!-- reproduce-astraea:start -->",
                          "<!-- reproduce-astraea:end -->"),
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("case", BAD_READMES)
def test_a_readme_that_cannot_be_edited_safely_is_refused_before_any_work(tmp_path, capsys, command, case):
    argv, start, end = COMMANDS[command]
    content, message = BAD_READMES[case]
    readme = tmp_path / "README.md"
    readme.write_bytes(content.replace(DEMO_START.encode(), start.encode()).replace(DEMO_END.encode(), end.encode()))
    out = tmp_path / "out"
    message = message.replace(DEMO_START, start).replace(DEMO_END, end)
    started = time.monotonic()
    exit_2_one_line(capsys, argv + ["--output", out, "--readme", readme], f"{readme}: --readme: {message}")
    assert time.monotonic() - started < 5  # refused up front, not after the runs
    assert readme.read_bytes() == content.replace(DEMO_START.encode(), start.encode()).replace(DEMO_END.encode(), end.encode())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


def test_an_unwritable_readme_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(f"{DEMO_START}\nold\n{DEMO_END}\n")
    readme.chmod(0o444)
    real_access = os.access  # root may write anything: say no as a user would hear it
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(readme) else real_access(p, mode, **kw))
    exit_2_one_line(capsys, ["demo", "--no-mlflow", "--quiet", "--output", tmp_path / "out", "--readme", readme],
                     f"--readme: cannot rewrite it: the file {readme} is not writable")
    assert not (tmp_path / "out").exists()


def _demo_folder(tmp_path):
    out = tmp_path / "demo"
    with output_folder(out, "demo"):
        pass
    return out


def test_the_readme_block_is_rewritten_through_a_link_keeping_the_mode_and_every_other_byte(tmp_path, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    target = docs / "README.md"
    head, tail = "\ufeff# Title\r\nintro \u00e9\r\n", "\r\nafter\r\nthe end"
    target.write_bytes(f"{head}{DEMO_START}\r\nold\r\n{DEMO_END}{tail}".encode())
    target.chmod(0o664)
    link = tmp_path / "README.md"
    link.symlink_to(target)
    out = _demo_folder(tmp_path)
    assert main(["demo", "--summary-only", "--no-mlflow", "--output", str(out), "--readme", str(link)]) == 0
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert stat.S_IMODE(target.stat().st_mode) == 0o664
    data = target.read_bytes().decode()
    assert data.startswith(f"{head}{DEMO_START}\r\nProduced by `benchmark demo`") and data.endswith(f"\r\n{DEMO_END}{tail}")
    assert "old" not in data and "\n" not in data.replace("\r\n", "")  # the block takes the file's line ends
    assert sorted(p.name for p in docs.iterdir()) == ["README.md"]
    assert stat.S_IMODE((out / "SUMMARY.md").stat().st_mode) == 0o666 & ~_umask()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_replace_readme_block_rechecks_the_markers_at_the_end(tmp_path):
    readme = tmp_path / "README.md"
    content = f"{DEMO_START}\nmine\n{DEMO_START}\nold\n{DEMO_END}\n"
    readme.write_text(content)  # e.g. edited while the command ran
    with pytest.raises(InputError, match="ambiguous"):
        replace_readme_block(readme, DEMO_START, DEMO_END, "new")
    assert readme.read_text() == content


def test_the_readme_keeps_its_inode_hard_links_owner_and_mode(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# mine\n{DEMO_START}\nold\n{DEMO_END}\nafter\n")
    readme.chmod(0o640)
    other = tmp_path / "copy-of-readme.md"
    os.link(readme, other)  # a second name of the same file
    if os.geteuid() == 0:  # root can give it another owner: the edit must not take it back
        os.chown(readme, 4321, 4321)
    before = readme.stat()
    replace_readme_block(readme, DEMO_START, DEMO_END, "new\nlines")
    after = readme.stat()
    assert (after.st_ino, after.st_dev, after.st_nlink) == (before.st_ino, before.st_dev, 2)
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert stat.S_IMODE(after.st_mode) == 0o640
    expected = f"# mine\n{DEMO_START}\nnew\nlines\n{DEMO_END}\nafter\n"
    assert readme.read_text() == expected and other.read_text() == expected  # both names see the new text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "copy-of-readme.md"]  # no backup left


def test_a_shorter_block_leaves_no_old_bytes_at_the_end(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"{DEMO_START}\n{'x' * 5000}\n{DEMO_END}\nend\n")
    replace_readme_block(readme, DEMO_START, DEMO_END, "y")
    assert readme.read_bytes() == f"{DEMO_START}\ny\n{DEMO_END}\nend\n".encode()


def test_a_failed_write_puts_the_old_text_back(tmp_path, monkeypatch):
    import benchmark.results as results

    readme = tmp_path / "README.md"
    content = f"{DEMO_START}\nold\n{DEMO_END}\n"
    readme.write_text(content)
    real = results._write_in_place
    calls = []

    def full_disk(fh, data):  # the first write (the new text) fails half-way; the second (the old text) works
        calls.append(data)
        if len(calls) == 1:
            fh.seek(0)
            fh.write(data[:7])
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fh, data)

    monkeypatch.setattr(results, "_write_in_place", full_disk)
    with pytest.raises(InputError, match=f"^--readme: no space left on device while writing {readme}$"):
        replace_readme_block(readme, DEMO_START, DEMO_END, "a much longer new block")
    assert readme.read_text() == content and calls[1] == content.encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]


def test_a_crash_leaves_a_backup_that_the_next_edit_names(tmp_path, capsys):
    import signal
    import subprocess
    import sys

    readme = tmp_path / "README.md"
    content = f"{DEMO_START}\nold\n{DEMO_END}\n"
    readme.write_text(content)
    # the process is killed (SIGKILL) half-way through writing the new text: nothing of it cleans up
    crash = (
        "import os, signal, sys\n"
        "import benchmark.results as results\n"
        "def killed(fh, data):\n"
        "    fh.seek(0); fh.write(b'half-written'); os.fsync(fh.fileno()); os.kill(os.getpid(), signal.SIGKILL)\n"
        "results._write_in_place = killed\n"
        f"results.replace_readme_block({str(readme)!r}, {DEMO_START!r}, {DEMO_END!r}, 'a new block')\n")
    done = subprocess.run([sys.executable, "-c", crash], cwd=os.getcwd(), env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == -signal.SIGKILL
    backup = tmp_path / ".README.md.readme-backup"
    assert backup.read_text() == content and readme.read_text() != content  # the old text is recoverable
    exit_2_one_line(capsys, ["demo", "--no-mlflow", "--quiet", "--output", tmp_path / "out", "--readme", readme],
                    f"{readme}: --readme: {backup} holds the text from before an interrupted edit: compare, keep the "
                    "right text in the file, remove the backup and rerun")
    assert backup.read_text() == content and not (tmp_path / "out").exists()


def test_a_second_edit_waits_for_the_lock_and_then_gives_up_with_one_line(tmp_path, monkeypatch):
    import fcntl

    import benchmark.results as results

    readme = tmp_path / "README.md"
    content = f"{DEMO_START}\nold\n{DEMO_END}\n"
    readme.write_text(content)
    monkeypatch.setattr(results, "README_LOCK_WAIT_S", 0.2)
    with open(readme, "rb") as holder:  # another command's edit in progress
        fcntl.flock(holder.fileno(), fcntl.LOCK_EX)
        with pytest.raises(InputError, match=r"^.*README.md: --readme: another command kept it locked for 0.2 s; rerun"):
            replace_readme_block(readme, DEMO_START, DEMO_END, "new")
    assert readme.read_text() == content and sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]
