"""`benchmark perf --peers` at tiny n: the table's columns, and the implementations (engine with
compiled loops, the same loops as Python, bare heapq loop, transcription of the reference loops)
agree on the total completion time."""

import json

import pytest

from benchmark.experiments.perf import peer_heapq, peer_reference
from benchmark.experiments.perf import peers as perf_peers
from benchmark.cli import main
from benchmark.experiments.perf.scheduling import generated_jobs
from schedulers.engine import simulate
from schedulers.policy import get_policy


def test_perf_peers_section_writes_the_table(tmp_path, capsys):
    out = tmp_path / "perf.json"
    assert main(["perf", "--peers", "--peers-sizes", "150,300", "--peers-repeat", "1", "--output", str(out), "--quiet"]) == 0
    figures = json.loads(out.read_text())["peers"]
    rows = figures["rows"]
    assert [(r["n"], r["policy"]) for r in rows] == [(n, p) for n in (150, 300) for p in perf_peers.POLICIES]
    for row in rows:
        assert set(row) == set(perf_peers.COLUMNS)
        assert row["events"] >= 2 * row["n"] and row["engine_us"] > 0 and row["heapq_us"] > 0
        # the divisor is the reference engine's event count; a fast path may skip idle wake-ups
        assert 0 < row["fast_events"] <= row["events"]
        assert row["engine_vs_heapq"] == pytest.approx(row["engine_us"] / row["heapq_us"])
        assert row["python_vs_heapq"] == pytest.approx(row["python_us"] / row["heapq_us"])
        has_reference = row["policy"] in peer_reference.POLICIES
        assert (row["reference_us"] is not None) == has_reference
        if has_reference:
            assert row["reference_vs_engine"] == pytest.approx(row["reference_us"] / row["engine_us"])
        assert row["load"] >= 0
    assert figures["worst_engine_vs_heapq"] == max(r["engine_vs_heapq"] for r in rows)
    assert figures["backend"] == "compiled (numba)"  # numba is installed with the tests
    printed = capsys.readouterr().out
    assert "engine_vs_heapq" in printed and "reference_vs_engine" in printed and "worst engine/heapq ratio" in printed


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("load", [0.6, 1.5])
def test_the_three_implementations_give_the_same_total_completion(seed, load):
    jobs = generated_jobs(400, seed=seed, load=load)
    submit, size, predicted = jobs.submit_time.tolist(), jobs.size.tolist(), jobs.predicted.tolist()
    records = peer_reference.jobs_from_lists(submit, size, predicted)
    for name in perf_peers.POLICIES:
        engine = float(simulate(jobs, get_policy(name)()).completion_time.sum())
        heap = sum(perf_peers.heapq_loop(name, submit, size, predicted)())
        assert heap == pytest.approx(engine, rel=1e-9), name
        if name in peer_reference.POLICIES:
            total, frame = peer_reference.POLICIES[name](records)
            assert total == pytest.approx(engine, rel=1e-9), name
            assert len(frame) == jobs.n


def test_a_wrong_peer_is_caught(monkeypatch):
    monkeypatch.setattr(peer_heapq, "rr", lambda submit, size: [c + 1.0 for c in peer_heapq.non_preemptive(submit, size)])
    with pytest.raises(AssertionError, match="heapq rr"):
        perf_peers.measure(100, 1)


def test_a_compiled_loop_that_differs_from_python_is_caught(monkeypatch):
    from schedulers import fastpath

    def wrong_rr(submit, size, completion, start, budget):
        events = fastpath._rr(submit, size, completion, start, budget)
        completion[0] += 1e-6
        return events

    monkeypatch.setattr(fastpath, "compiled_loops", lambda: fastpath._Loops(lambda f: wrong_rr if f is fastpath._rr else f))
    with pytest.raises(AssertionError, match="compiled rr at n=100"):
        perf_peers.measure(100, 1)


def test_costs_are_per_reference_engine_event():
    """The divisor is the reference engine's events, not the fast path's: las skips wake-ups."""
    rows = {r["policy"]: r for r in perf_peers.measure(300, 1)}
    jobs = generated_jobs(300, seed=0, load=0.9)
    for name in ("las", "edf-p", "srpt"):
        reference = simulate(jobs, get_policy(name)(), reference=True).events
        fast = simulate(jobs, get_policy(name)()).events
        assert rows[name]["events"] == reference and rows[name]["fast_events"] == fast, name
    assert rows["las"]["fast_events"] < rows["las"]["events"]
    assert rows["srpt"]["fast_events"] == rows["srpt"]["events"]
