"""Input shaking (atlas_data.shaking; `benchmark reproduce rlscheduler --shake K`): the perturbation's
properties, zero shaking giving exactly the unshaken result, the spread reported on a real log
sequence, and bad shaking options refused with one line before anything is written."""

import json

import numpy as np
import pytest

from atlas_data import shaking
from benchmark.cli import main
from benchmark.experiments import rlscheduler as rls
from cli_checks import exit_2_one_line

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")

SDSC = "SDSC-SP2-1998-4.2-cln.swf.gz"


@pytest.fixture(scope="module")
def sdsc():
    return rls.load_log(rls.shipped_log(SDSC))


# ----- the perturbation ---------------------------------------------------------------------------
def test_shifts_are_whole_seconds_bounded_and_cover_the_range():
    s = shaking.arrival_shifts(20_000, 60, shaking.copy_rng(0, 0))
    assert s.dtype == np.int64 and s.min() == -60 and s.max() == 60  # both ends drawn (endpoint included)
    assert len(np.unique(s)) == 121 and abs(s.mean()) < 1.5  # uniform on [-60, 60]: mean 0, sd 35
    assert not shaking.arrival_shifts(50, 0, shaking.copy_rng(0, 0)).any()
    with pytest.raises(ValueError):
        shaking.arrival_shifts(5, -1, shaking.copy_rng(0, 0))


def test_a_copy_is_the_same_jobs_reordered_by_their_shifted_submits():
    submit = np.array([0.0, 5, 5, 7, 300, 301, 1000])
    shifts = np.array([30, -4, 0, -3, 2, -2, -60])
    times, order = shaking.shake(submit, shifts)
    # moved: 30, 1, 5, 4, 302, 299, 940 → stable order 1, 3, 2, 0, 5, 4, 6, translated to start at 0
    assert order.tolist() == [1, 3, 2, 0, 5, 4, 6]
    assert times.tolist() == [0, 3, 4, 29, 298, 301, 939]
    # every job once; each moved by its own shift (up to the common translation)
    assert sorted(order.tolist()) == list(range(7))
    np.testing.assert_array_equal(times - (submit[order] + shifts[order]), -1.0)
    # ties keep the original (job-number) order: jobs 0 and 1 both land on 10
    times, order = shaking.shake(np.array([0.0, 10, 20]), np.array([10, 0, -20]))
    assert order.tolist() == [2, 0, 1] and times.tolist() == [0, 10, 10]


def test_copies_are_seeded_independent_of_drawing_order_and_never_negative(sdsc):
    rel = sdsc["submit"][1981:1981 + rls.LENGTH] - sdsc["submit"][1981]
    a = shaking.shaken_copy(rel, 60, 7, 2, 3)
    rls.shaken_sequences(sdsc, [1981, 2756], 3, 60, 7)  # drawing others first changes nothing
    b = shaking.shaken_copy(rel, 60, 7, 2, 3)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    for other in (shaking.shaken_copy(rel, 60, 7, 1, 3), shaking.shaken_copy(rel, 60, 8, 2, 3),
                  shaking.shaken_copy(rel, 60, 7, 2, 4)):  # another copy, seed, sequence: other shifts
        assert not np.array_equal(a[0], other[0])
    times, order = a
    assert times[0] == 0 and (np.diff(times) >= 0).all() and (times >= 0).all()
    assert sorted(order.tolist()) == list(range(rls.LENGTH))
    moved = times - (rel[order] - rel[order][0])  # each job's move, up to the translation
    assert np.ptp(moved) <= 120 and (moved == np.round(moved)).all()
    assert (order != np.arange(rls.LENGTH)).any()  # a minute reorders some of SDSC-SP2's jobs


def test_zero_shift_is_the_unshaken_sequence_exactly(sdsc):
    rel = sdsc["submit"][2756:2756 + rls.LENGTH] - sdsc["submit"][2756]
    times, order = shaking.shaken_copy(rel, 0, 5, 0, 0)
    assert order.tolist() == list(range(rls.LENGTH))
    np.testing.assert_array_equal(times, rel)
    for policy, backfill in (("fcfs", True), ("sjf", False)):
        assert rls.run_sequence(sdsc, 2756, policy, backfill, shaken=(times, order)) == \
            rls.run_sequence(sdsc, 2756, policy, backfill)


def test_a_shaken_run_is_the_run_of_the_shaken_log(sdsc):
    # the copy written out as a log of its own (each job's run, request and processors moved with it)
    # gives the same schedule: the shaken run keeps every job's fields with its new submit time
    rel = sdsc["submit"][4299:4299 + rls.LENGTH] - sdsc["submit"][4299]
    times, order = shaking.shaken_copy(rel, 60, 0, 0, 2)
    assert (order != np.arange(rls.LENGTH)).any()
    sl = slice(4299, 4299 + rls.LENGTH)
    copy = {"submit": times, "run": sdsc["run"][sl][order], "request": sdsc["request"][sl][order],
            "nodes": sdsc["nodes"][sl][order], "machine": sdsc["machine"]}
    shaken = rls.run_sequence(sdsc, 4299, "sjf", True, shaken=(times, order))
    assert shaken == rls.run_sequence(copy, 0, "sjf", True)
    assert shaken != rls.run_sequence(sdsc, 4299, "sjf", True)


def test_spread_is_the_mean_and_the_central_95_percent():
    values = list(range(101))
    assert shaking.spread(values) == pytest.approx({"mean": 50.0, "lo": 2.5, "hi": 97.5})
    assert shaking.spread([3.0, 3.0]) == {"mean": 3.0, "lo": 3.0, "hi": 3.0}


# ----- the command --------------------------------------------------------------------------------
@pytest.fixture
def one_sequence(monkeypatch):
    """The protocol on its first sequence only: the same code path, a tenth of the runs."""
    starts = rls.sequence_starts
    monkeypatch.setattr(rls, "sequence_starts", lambda n, slice_=0: starts(n, slice_)[:1])


def _run(tmp_path, name, *extra):
    out = tmp_path / name
    assert main(["reproduce", "rlscheduler", "--quiet", "--jobs", str(rls.shipped_log(SDSC)), "--output", str(out),
                 *map(str, extra)]) == 0
    return json.loads((out / "results.json").read_text()), (out / "reproduce-rlscheduler.md").read_text()


def test_shaking_reports_a_spread_beside_the_unshaken_result(tmp_path, one_sequence):
    plain, plain_md = _run(tmp_path, "plain")
    assert plain["shaking"] is None and plain["differences"] == [] and "shaken" not in plain_md
    assert "bsld_shaken" not in plain["rows"][0]

    doc, text = _run(tmp_path, "shaken", "--shake", 3, "--shake-seed", 4)
    assert doc["shaking"] == {"copies": 3, "seed": 4, "max_shift_s": 60}
    assert len(doc["rows"]) == 4
    for row, base in zip(doc["rows"], plain["rows"]):
        assert row["bsld"] == base["bsld"]  # the unshaken value is untouched by shaking
        assert row["shaken_copies"] == 3 and len(row["bsld_shaken"]) == 3
        assert row["bsld_shaken_mean"] == pytest.approx(np.mean(row["bsld_shaken"]))
        assert min(row["bsld_shaken"]) <= row["bsld_shaken_lo"] < row["bsld_shaken_hi"] <= max(row["bsld_shaken"])
        assert len(set(row["bsld_shaken"]) | {row["bsld"]}) == 4  # a minute's shake moves every cell on every copy
        line = next(x for x in text.splitlines() if x.startswith(
            f"| {SDSC} | {row['policy'].upper()} | {'yes' if row['backfill'] else 'no'} |"))
        assert line.endswith(f"| {row['bsld_shaken_mean']:.2f} | {row['bsld_shaken_lo']:.2f} – "
                             f"{row['bsld_shaken_hi']:.2f} |")
    assert "shaken: 95 % range" in text and "±60 s (seed 4)" in text

    cells = {(r["policy"], r["backfill"]): r for r in doc["rows"]}
    assert len(doc["differences"]) == 4
    first = doc["differences"][0]  # SJF − FCFS without backfilling, copy by copy
    per_copy = np.subtract(cells[("sjf", False)]["bsld_shaken"], cells[("fcfs", False)]["bsld_shaken"])
    assert (first["a"], first["b"]) == ("SJF", "FCFS")
    assert first["diff"] == pytest.approx(cells[("sjf", False)]["bsld"] - cells[("fcfs", False)]["bsld"])
    assert first["diff_shaken_mean"] == pytest.approx(per_copy.mean())
    assert first["same_sign"] == bool((np.sign(per_copy) == np.sign(first["diff"])).all())
    assert f"| {first['diff']:+.2f} | {first['diff_shaken_mean']:+.2f} |" in text


def test_zero_shift_copies_give_the_unshaken_result_exactly(tmp_path, one_sequence):
    doc, _ = _run(tmp_path, "zero", "--shake", 2, "--shake-shift", 0)
    for row in doc["rows"]:
        assert row["bsld_shaken"] == [row["bsld"], row["bsld"]]
        assert row["bsld_shaken_lo"] == row["bsld_shaken_hi"] == row["bsld"]


@pytest.mark.parametrize("argv, fragments", [
    (["--shake", "-1"], ["--shake", "a number of shaken copies must be an integer >= 0"]),
    (["--shake", "1001"], ["--shake", "is too large"]),
    (["--shake", "two"], ["--shake", "not an integer"]),
    (["--shake", "2", "--shake-shift", "86401"], ["--shake-shift", "is too large"]),
    (["--shake", "2", "--shake-shift", "1.5"], ["--shake-shift", "not an integer"]),
    (["--shake", "2", "--shake-seed", "-3"], ["--shake-seed", "must be an integer >= 0"]),
    (["--shake-shift", "30"], ["--shake-shift needs --shake K"]),
    (["--shake", "0", "--shake-seed", "3"], ["--shake-seed needs --shake K"]),
])
def test_bad_shaking_options_are_one_line_and_write_nothing(tmp_path, capsys, argv, fragments):
    out = tmp_path / "out"
    exit_2_one_line(capsys, ["reproduce", "rlscheduler", "--output", out, "--quiet", *argv], *fragments)
    assert not out.exists()
