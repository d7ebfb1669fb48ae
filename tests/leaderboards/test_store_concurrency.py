"""Concurrent `benchmark submit`s into one entries folder: every submit that exits 0 has its entry
on disk, the slug, clobber and duplicate rules hold as they do one after another, and a submit
that cannot get the lock gives up after a bounded wait (exit 2, nothing written).

The submits are real processes (forked after the imports, so they start at once), released
together by a barrier and, once each has scored its submission, made to store it at the same
moment; each also makes the check-then-write window wide (a slow disk: 0.2 s after the slug is
decided), so without the lock the race is lost every time, not once in a while.
"""

import fcntl
import json
import multiprocessing
import sys
import time

import pandas as pd
import pytest

import leaderboards.store as store
from benchmark.cli import main

FORK = multiprocessing.get_context("fork")


def _preds(test, factor):
    return pd.DataFrame({"job_id": test["job_id"].astype(str), "p_hat": test["p_star"].to_numpy() * factor})


def _child(argv, barriers, err_path):
    import threading

    import leaderboards.pipeline as pipeline

    start, write = barriers
    decide = store.resolve_target
    store_entry = pipeline.write_entry

    def decide_slowly(*args, **kwargs):
        decided = decide(*args, **kwargs)
        time.sleep(0.2)  # a slow disk: the window in which another submit could decide the same
        return decided

    def write_together(*args, **kwargs):
        try:  # every submit has scored and passed the early checks: all write at once
            write.wait(timeout=20)
        except threading.BrokenBarrierError:
            pass
        return store_entry(*args, **kwargs)

    store.resolve_target = decide_slowly
    pipeline.write_entry = write_together
    sys.stderr = open(err_path, "w")
    start.wait(timeout=30)
    code = main(argv)
    sys.stderr.flush()
    sys.exit(code)


def _submit_together(subs, ds, entries, tmp_path):
    """Run one `benchmark submit` per folder at the same moment; [(exit code, stderr lines)]."""
    barriers = (FORK.Barrier(len(subs)), FORK.Barrier(len(subs)))
    procs = []
    for i, sub in enumerate(subs):
        argv = ["submit", str(sub), "--track", "prediction", "--data", str(ds), "--entries-dir", str(entries), "--quiet"]
        proc = FORK.Process(target=_child, args=(argv, barriers, tmp_path / f"err{i}.txt"))
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join(60)
        assert proc.exitcode is not None, "a submit hung"
    return [(p.exitcode, (tmp_path / f"err{i}.txt").read_text().splitlines()) for i, p in enumerate(procs)]


def _stored(entries):
    return {p.stem: json.loads(p.read_text()) for p in sorted((entries / "prediction").glob("*.json"))}


def test_six_names_with_one_slug_by_six_authors_are_six_entries(dataset, submission_writer, tmp_path):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    names = ["My HGB", "my hgb", "MY HGB!", "My  HGB", "my-hgb", "(my) hgb"]
    subs = [submission_writer(tmp_path / f"s{i}", fingerprint=fp, preds=_preds(test, 1.05 + 0.05 * i), name=name,
                              authors=[f"Author {i}"]) for i, name in enumerate(names)]
    results = _submit_together(subs, ds, entries, tmp_path)
    assert results == [(0, [])] * len(subs)
    stored = _stored(entries)
    base = f"my-hgb-{fp[:8]}"
    assert sorted(stored) == sorted([base] + [f"{base}-{i}" for i in range(2, len(names) + 1)])
    assert sorted((e["name"], tuple(e["authors"])) for e in stored.values()) == sorted(
        (name, (f"Author {i}",)) for i, name in enumerate(names))
    assert all(e["slug"] == slug for slug, e in stored.items())
    assert sorted(p.name for p in entries.iterdir()) == ["prediction"]  # no lock file left behind


def test_one_name_by_two_authors_at_once_keeps_the_first_and_refuses_the_second(dataset, submission_writer, tmp_path):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    subs = [submission_writer(tmp_path / f"s{i}", fingerprint=fp, preds=_preds(test, 1.1 + 0.2 * i), name="Shared Name",
                              authors=[who]) for i, who in enumerate(["Ann", "Bo"])]
    results = _submit_together(subs, ds, entries, tmp_path)
    assert sorted(code for code, _ in results) == [0, 2]
    winner = ["Ann", "Bo"][[code for code, _ in results].index(0)]
    loser_err = next(err for code, err in results if code == 2)
    assert len(loser_err) == 1 and f"is by {winner}; only its authors can replace it" in loser_err[0], loser_err
    stored = _stored(entries)
    assert list(stored) == [f"shared-name-{fp[:8]}"] and stored[f"shared-name-{fp[:8]}"]["authors"] == [winner]


def test_the_same_predictions_under_two_names_at_once_are_one_entry(dataset, submission_writer, tmp_path):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    subs = [submission_writer(tmp_path / f"s{i}", fingerprint=fp, preds=_preds(test, 1.1), name=name, authors=[who])
            for i, (name, who) in enumerate([("Original", "Ann"), ("Copy Cat", "Zed")])]
    results = _submit_together(subs, ds, entries, tmp_path)
    assert sorted(code for code, _ in results) == [0, 2]
    winner = ["Original", "Copy Cat"][[code for code, _ in results].index(0)]
    loser_err = next(err for code, err in results if code == 2)
    assert len(loser_err) == 1 and f"already on the prediction leaderboard as {winner!r}" in loser_err[0], loser_err
    assert [e["name"] for e in _stored(entries).values()] == [winner]


@pytest.mark.parametrize("quiet", [False, True])
def test_a_held_lock_is_waited_for_then_exit_2_with_nothing_written(dataset, submission_writer, tmp_path, capsys,
                                                                     monkeypatch, quiet):
    ds, fp, test = dataset
    entries = tmp_path / "entries"
    entries.mkdir()
    monkeypatch.setattr(store, "LOCK_TIMEOUT_S", 0.5)
    sub = submission_writer(tmp_path / "s", fingerprint=fp, preds=_preds(test, 1.1), name="Waiting")
    with open(entries / store.LOCK_FILE, "a") as held:  # another submit in the middle of its write
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        capsys.readouterr()
        started = time.monotonic()
        code = main(["submit", str(sub), "--track", "prediction", "--data", str(ds), "--entries-dir", str(entries)]
                    + (["--quiet"] if quiet else []))
        waited = time.monotonic() - started
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and waited >= 0.5
    assert err[-1].startswith(f"error: {entries}: --entries-dir: another `benchmark submit` has held the lock")
    assert err[-1].endswith("for 0.5 s: nothing was written; submit again once it is done")
    assert err[:-1] == ([] if quiet else [f"waiting for another `benchmark submit` writing to {entries} "
                                          f"(lock {store.LOCK_FILE}, at most 0.5 s)"])
    assert sorted(p.name for p in entries.rglob("*")) == [store.LOCK_FILE]
    # the lock released, the same submit goes through
    assert main(["submit", str(sub), "--track", "prediction", "--data", str(ds), "--entries-dir", str(entries),
                 "--quiet"]) == 0
    assert [e["name"] for e in _stored(entries).values()] == ["Waiting"]
    assert not (entries / store.LOCK_FILE).exists()  # removed by the submit that held it
