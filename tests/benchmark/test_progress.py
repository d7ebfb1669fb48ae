"""Progress goes to stderr through tqdm and --quiet silences all of it."""

import io
import sys

from benchmark.progress import Progress, say


def _run(quiet: bool, monkeypatch) -> str:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with Progress("simulating", total=4, quiet=quiet) as progress:
        progress.update(3)
        progress.note("cell 7 failed")
        progress.update()
    say("done in 1 s", quiet=quiet)
    return err.getvalue()


def test_progress_reports_label_count_notes_and_messages(monkeypatch):
    text = _run(False, monkeypatch)
    assert "simulating" in text and "4/4" in text  # the closing bar shows the final count
    assert "[simulating] cell 7 failed" in text
    assert text.rstrip().endswith("done in 1 s")


def test_quiet_prints_nothing(monkeypatch):
    assert _run(True, monkeypatch) == ""
