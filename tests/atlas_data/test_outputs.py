"""atlas_data.outputs: folders written aside and renamed into place, refusals, reruns, leftovers, files."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from atlas_data.errors import InputError
from atlas_data.outputs import (
    MARKER,
    check_output_folder,
    file_signature,
    output_file,
    output_folder,
    read_marker,
    remove_leftovers,
    signed_text,
    using_command_line,
    write_signed_parquet,
)


def _siblings(path):
    """Everything next to `path` whose name mentions it (temporary and set-aside folders included)."""
    return sorted(p.name for p in path.parent.iterdir() if path.name in p.name)


def test_the_folder_appears_only_when_complete_with_its_marker(tmp_path):
    out = tmp_path / "out"
    with using_command_line(["run", "--output", str(out)]):
        with output_folder(out, "run") as folder:
            assert folder.parent == tmp_path and folder.name.startswith(".out.tmp-")
            (folder / "a.txt").write_text("a")
            assert not out.exists()  # nothing under the final name while writing
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "a.txt"]
    marker = read_marker(out)
    assert marker["command"] == "run" and marker["complete"] is True
    assert marker["argv"] == ["benchmark", "run", "--output", str(out)]
    assert _siblings(out) == ["out"]


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyboardInterrupt()])
def test_a_failure_leaves_the_earlier_output_untouched_and_no_leftovers(tmp_path, error):
    out = tmp_path / "out"
    with output_folder(out, "run") as folder:
        (folder / "old.txt").write_text("old")
    with pytest.raises(type(error)):
        with output_folder(out, "run") as folder:
            (folder / "new.txt").write_text("new")
            raise error
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "old.txt"]
    assert (out / "old.txt").read_text() == "old"
    assert _siblings(out) == ["out"]


def test_a_rerun_replaces_its_own_output_whole(tmp_path):
    out = tmp_path / "out"
    with output_folder(out, "run") as folder:
        (folder / "robustness.png").write_bytes(b"old plot")
        (folder / "sub").mkdir()
        (folder / "sub" / "x").write_text("x")
    with output_folder(out, "run") as folder:
        (folder / "results.json").write_text("{}")
    assert sorted(p.name for p in out.iterdir()) == [MARKER, "results.json"]
    assert _siblings(out) == ["out"]


def test_an_empty_existing_folder_is_used(tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    with output_folder(out, "sweep") as folder:
        (folder / "sweep.json").write_text("{}")
    assert (out / "sweep.json").exists() and read_marker(out)["command"] == "sweep"


def test_refusals_name_the_path_and_touch_nothing(tmp_path, monkeypatch):
    user = tmp_path / "thesis"
    (user / "sub").mkdir(parents=True)
    (user / "thesis.tex").write_text("my thesis")
    (user / "sub" / "data.csv").write_text("1,2\n")
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    other = tmp_path / "ds"
    with output_folder(other, "data build") as folder:
        (folder / "atlas.parquet").write_bytes(b"x")
    link = tmp_path / "link"
    link.symlink_to(other)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    cases = [
        (user, "holds files not written by `benchmark run`"),
        (a_file, "is a file, not a folder"),
        (other, "was written by `benchmark data build`, not by `benchmark run`"),
        (link, "is a symbolic link"),
        (".", "is the working folder or one of its parents"),
        ("../work", "is the working folder or one of its parents"),
        (tmp_path, "is the working folder or one of its parents"),
        ("/", "is the working folder or one of its parents"),
    ]
    for target, message in cases:
        with pytest.raises(InputError) as info:
            with output_folder(target, "run"):
                pytest.fail("must not be reached")
        assert message in str(info.value) and str(target) in str(info.value) and "--output" in str(info.value)
    assert (user / "thesis.tex").read_text() == "my thesis" and (user / "sub" / "data.csv").read_text() == "1,2\n"
    assert a_file.read_text() == "keep me" and (other / "atlas.parquet").read_bytes() == b"x"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "link", "notes.txt", "thesis", "work"]


def test_a_template_is_never_replaced_even_by_its_own_command(tmp_path):
    out = tmp_path / "sub"
    with output_folder(out, "submit --template", replace_own=False) as folder:
        (folder / "predictions.parquet").write_bytes(b"edited by the user")
    with pytest.raises(InputError, match="already holds the output of an earlier"):
        check_output_folder(out, "submit --template", replace_own=False)


def test_records_inside_name_the_final_folder(tmp_path):
    out = tmp_path / "sweep"
    with output_folder(out, "sweep") as folder:
        (folder / "cells" / "c1").mkdir(parents=True)
        (folder / "cells" / "c1" / "results.json").write_text(json.dumps({"argv": ["--output", str(folder / "cells" / "c1")]}))
        (folder / "SUMMARY.md").write_text(f"read from `{folder}`\n")
        (folder / "table.csv").write_text(f"{folder}\n")  # not a record: left as written
    assert json.loads((out / "cells" / "c1" / "results.json").read_text())["argv"] == ["--output", str(out / "cells" / "c1")]
    assert (out / "SUMMARY.md").read_text() == f"read from `{out}`\n"
    assert ".sweep.tmp-" in (out / "table.csv").read_text()


def test_leftovers_of_a_killed_process_are_removed_by_the_next_write(tmp_path):
    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    for name, pid in ((f".out.tmp-{dead_pid}-0abc", dead_pid), (f".out.old-{dead_pid}-0def", dead_pid),
                      (f".out.tmp-{os.getpid()}-0123", os.getpid())):
        (tmp_path / name).mkdir()
        (tmp_path / name / MARKER).write_text(json.dumps({"command": "run", "complete": False, "pid": pid}))
    (tmp_path / f".out.tmp-{dead_pid}-0fff").mkdir()  # no marker: not ours, left alone
    removed = remove_leftovers(out)
    assert sorted(p.name for p in removed) == [f".out.old-{dead_pid}-0def", f".out.tmp-{dead_pid}-0abc"]
    assert _siblings(out) == sorted([f".out.tmp-{dead_pid}-0fff", f".out.tmp-{os.getpid()}-0123"])


def test_files_are_replaced_only_when_the_same_command_signed_them(tmp_path):
    board = tmp_path / "board.md"
    output_file(board, "leaderboard", lambda tmp: tmp.write_text(signed_text("# ranking 1\n", "leaderboard")))
    assert file_signature(board) == "leaderboard"
    output_file(board, "leaderboard", lambda tmp: tmp.write_text(signed_text("# ranking 2\n", "leaderboard")))
    assert board.read_text().endswith("# ranking 2\n")
    page = tmp_path / "board.html"
    page.write_text(signed_text("<!DOCTYPE html>\n<html></html>\n", "leaderboard"))
    assert page.read_text().startswith("<!DOCTYPE html>\n<!-- written by") and file_signature(page) == "leaderboard"

    jobs = tmp_path / "jobs.parquet"
    output_file(jobs, "data import", lambda tmp: write_signed_parquet(pd.DataFrame({"a": [1]}), tmp, "data import"))
    assert file_signature(jobs) == "data import"

    thesis = tmp_path / "thesis.md"
    thesis.write_text("my thesis\n")
    for target, command, message in ((thesis, "leaderboard", "exists and was not written by `benchmark leaderboard`"),
                                     (jobs, "leaderboard", "exists and was not written by `benchmark leaderboard`"),
                                     (tmp_path, "leaderboard", "is a folder, not a file")):
        with pytest.raises(InputError, match=message):
            output_file(target, command, lambda tmp: pytest.fail("must not write"))
    assert thesis.read_text() == "my thesis\n"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
