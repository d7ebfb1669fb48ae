"""`benchmark reproduce hpc --shake K`: every backfilling result with its spread over shaken copies of
each sequence (input shaking, atlas_data.shaking), the same copies for every policy; without shaking
the table is unchanged, and a zero shift gives the unshaken result exactly."""

import json

import numpy as np
import pytest

from atlas_data.shaking import shaken_copy
from benchmark.cli import main
from benchmark.experiments import hpc
from benchmark.experiments import rlscheduler as rls
from swf_logs import random_swf

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
pytestmark = pytest.mark.usefixtures("figures_unrendered")


def _swf(path, n):
    """A small SWF log: busy enough that arrivals a minute apart change who backfills."""
    return random_swf(path, n, seed=5, max_gap=120, max_request=600)


@pytest.fixture
def one_sequence(monkeypatch):
    """The protocol on its first sequence only: the same code path, a tenth of the runs."""
    starts = rls.sequence_starts
    monkeypatch.setattr(hpc, "sequence_starts", lambda n, slice_=0: starts(n, slice_)[:1])


def _run(tmp_path, name, *extra):
    log = _swf(tmp_path / "log.swf", 2_100)
    out = tmp_path / name
    assert main(["reproduce", "hpc", "--jobs", str(log), "--policies", "easy,easy-pp",
                 "--output", str(out), "--quiet", *map(str, extra)]) == 0
    return json.loads((out / "results.json").read_text()), (out / "reproduce-hpc.md").read_text()


def test_shaking_reports_a_spread_beside_each_unshaken_result(tmp_path, one_sequence):
    plain, plain_md = _run(tmp_path, "plain")
    assert plain["shaking"] is None and "shaken" not in plain_md and "bsld_shaken" not in plain["rows"][0]

    doc, text = _run(tmp_path, "shaken", "--shake", 3, "--shake-seed", 2)
    assert doc["shaking"] == {"copies": 3, "seed": 2, "max_shift_s": 60}
    for row, base in zip(doc["rows"], plain["rows"]):
        assert row["bsld"] == base["bsld"] and row["wait"] == base["wait"]  # unshaken values untouched
        assert row["shaken_copies"] == 3 and len(row["bsld_shaken"]) == 3
        assert row["bsld_shaken_mean"] == pytest.approx(np.mean(row["bsld_shaken"]))
        assert min(row["bsld_shaken"]) <= row["bsld_shaken_lo"] <= row["bsld_shaken_hi"] <= max(row["bsld_shaken"])
        line = next(x for x in text.splitlines() if x.startswith(f"| log.swf | {row['label']} |"))
        assert line.endswith(f"| {row['bsld_shaken_mean']:.2f} | {row['bsld_shaken_lo']:.2f} – "
                             f"{row['bsld_shaken_hi']:.2f} |")
    # a minute's shake moves the results: not every copy gives the unshaken value
    assert any(set(r["bsld_shaken"]) != {r["bsld"]} for r in doc["rows"])
    assert "±60 s (seed 2)" in text


def test_zero_shift_copies_give_the_unshaken_result_exactly(tmp_path, one_sequence):
    doc, _ = _run(tmp_path, "zero", "--shake", 2, "--shake-shift", 0)
    for row in doc["rows"]:
        assert row["bsld_shaken"] == [row["bsld"], row["bsld"]], row["label"]
        # every metric's spread: the unshaken value on both copies
        assert set(row["shaken"]) == {"wait", "utilisation", *hpc.CLUSTER_METRICS}
        for key, got in row["shaken"].items():
            assert got == {"mean": pytest.approx(row[key]), "lo": pytest.approx(row[key]),
                           "hi": pytest.approx(row[key])}, key


def test_differences_between_policies_are_paired_copy_by_copy(tmp_path, one_sequence):
    doc, text = _run(tmp_path, "diffs", "--shake", 3, "--shake-seed", 4)
    rows = {r["label"]: r for r in doc["rows"]}
    # of the pairs, only easy-pp − easy has both rows in an easy,easy-pp run
    assert [(d["a"], d["b"]) for d in doc["differences"]] == [("easy-pp", "easy")]
    d = doc["differences"][0]
    per_copy = np.subtract(rows["easy-pp"]["bsld_shaken"], rows["easy"]["bsld_shaken"])
    assert d["diff"] == pytest.approx(rows["easy-pp"]["bsld"] - rows["easy"]["bsld"])
    assert d["diff_shaken_mean"] == pytest.approx(per_copy.mean())
    assert d["same_sign"] == bool(np.all(np.sign(per_copy) == np.sign(d["diff"])))
    assert f"| log.swf | easy-pp | easy | {d['diff']:+.2f} | {d['diff_shaken_mean']:+.2f} |" in text
    plain, plain_text = _run(tmp_path, "plain")
    assert plain["differences"] == [] and "Differences between policies" not in plain_text


def test_the_pairs_compare_each_p_hat_with_the_users_estimates():
    assert hpc.pairs("oracle") == [("easy", "fcfs"), ("easy-p (oracle)", "easy"), ("easy-pp", "easy"),
                                   ("conservative", "easy")]
    assert ("easy-p (lgbm-meta)", "easy") in hpc.pairs("lgbm-meta")
    assert ("easy-pp (lgbm-meta)", "easy-pp") in hpc.pairs("lgbm-meta")


def test_a_shaken_sequence_is_the_run_of_the_shaken_log(tmp_path):
    """The run on a shaken copy equals the run of a log whose jobs arrive at the copy's times (every
    field of a job moves with it: its run time, request, processors and user)."""
    log = rls.load_log(str(_swf(tmp_path / "log.swf", 2_100)))
    start = 100
    times, order = shaken_copy(log["submit"][start:start + 300] - log["submit"][start], 60, 0, 0, 0)
    moved = {k: (v[start:start + 300][order] if isinstance(v, np.ndarray) and len(v) == log["jobs"] else v)
             for k, v in log.items()}
    moved["submit"] = times
    for policy in ("easy", "easy-pp", "conservative"):
        shaken = hpc.run_sequence(log, start, policy, length=300, compiled=False, shaken=(times, order))
        direct = hpc.run_sequence(moved, 0, policy, length=300, compiled=False)
        assert shaken["bsld"] == direct["bsld"] and shaken["wait"] == direct["wait"], policy
        assert np.array_equal(shaken["start"], direct["start"]), policy


def test_shaking_options_need_shake(tmp_path, capsys):
    log = _swf(tmp_path / "log.swf", 2_100)
    out = tmp_path / "out"
    assert main(["reproduce", "hpc", "--jobs", str(log), "--shake-shift", "30", "--output", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--shake-shift needs --shake K" in err[0] and not out.exists()
