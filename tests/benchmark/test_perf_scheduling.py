"""`benchmark perf` (scheduling section) on tiny sizes: it times every policy and checks the engine
against the O(n²) simulators on the same instance."""

import json

from benchmark.cli import main
from benchmark.experiments.perf.scheduling import ENGINE, REVISED
from schedulers.policy import policy_names, resolve_policy


def _timed():
    """Every registered single-machine policy, the revising settings and sprpt on the engine."""
    return set(policy_names("single")) | {resolve_policy(spec, "single") for spec in REVISED} | {ENGINE}


def test_perf_scheduling_small(tmp_path, capsys):
    out = tmp_path / "perf.json"
    assert main(["perf", "--sizes", "300,600", "--naive-n", "300", "--output", str(out), "--quiet"]) == 0
    figures = json.loads(out.read_text())["scheduling"]
    assert set(figures["policies"]) == {"300", "600"}
    assert set(figures["policies"]["600"]) == _timed()
    events = figures["events"]["600"]
    # a revision is a wake-up: the revising sprpt takes at least sprpt's events, sprpt on the engine exactly its own
    assert events["sprpt(revision='double')"] >= events["sprpt"] == events[ENGINE]
    for name in ("rr", "prr", "las"):
        naive = figures["naive"][name]
        assert naive["same_schedule"] is True and naive["speedup"] == naive["naive_s"] / naive["engine_s"]
    assert figures["loops"]["600"].startswith("Python (ATLAS_BENCH_JIT=auto, compiled from 100,000 jobs")
    out_text = capsys.readouterr().out
    assert "engine vs plain O(n²) loop at n = 300" in out_text
    # the section's cost beside the machine's load: printed and kept
    measured = figures["measured"]
    assert measured["wall_s"] >= sum(figures["policies"]["600"].values()) > 0
    assert 0 < measured["cpu_s"] and measured["load_before"] >= 0 and measured["load_after"] >= 0
    assert measured["cores"] >= 1
    assert (f"[perf] section scheduling: {measured['wall_s']:.1f} s wall, {measured['cpu_s']:.1f} s CPU, load average "
            f"{measured['load_before']:.2f} -> {measured['load_after']:.2f}") in out_text


def test_the_engine_time_against_the_plain_loops_is_the_fastest_of_its_runs(tmp_path, monkeypatch):
    """One run of 0.02–0.07 s is at the mercy of the machine (a first-in-process run of prr read 0.15 s
    where its loop takes 0.05–0.07 s): the engine runs NAIVE_ENGINE_REPEAT times and the fastest counts.
    A clock that each simulation advances by a scripted time: prr's second run is the fast one."""
    import benchmark.experiments.perf.scheduling as section

    clock = [0.0]
    runs = []
    real_simulate, real_naive = section.simulate, section.simulate_naive

    def simulate(jobs, policy, **kwargs):
        if jobs.n == 250:
            runs.append(policy.name)
        clock[0] += 0.25 if jobs.n == 250 and runs.count("prr") == 2 and runs[-1] == "prr" else 1.0
        return real_simulate(jobs, policy, **kwargs)

    def simulate_naive(*args):
        clock[0] += 10.0
        return real_naive(*args)

    monkeypatch.setattr(section, "simulate", simulate)
    monkeypatch.setattr(section, "simulate_naive", simulate_naive)
    monkeypatch.setattr(section.time, "perf_counter", lambda: clock[0])
    out = tmp_path / "perf.json"
    assert main(["perf", "--sizes", "20", "--naive-n", "250", "--output", str(out), "--quiet"]) == 0
    naive = json.loads(out.read_text())["scheduling"]["naive"]
    assert runs == ["rr"] * 3 + ["prr"] * 3 + ["las"] * 3
    assert [naive[name]["engine_s"] for name in ("rr", "prr", "las")] == [1.0, 0.25, 1.0]
    assert [naive[name]["speedup"] for name in ("rr", "prr", "las")] == [10.0, 40.0, 10.0]


def test_perf_saves_each_section_as_it_finishes(tmp_path, capsys, monkeypatch):
    """A run interrupted in its second section keeps the first one's figures in --output."""
    import benchmark.experiments.perf.traces

    def interrupted(args):
        assert json.loads(out.read_text())["scheduling"]["policies"]["300"]  # already saved
        raise KeyboardInterrupt

    out = tmp_path / "perf.json"
    monkeypatch.setattr(benchmark.experiments.perf.traces, "run", interrupted)
    assert main(["perf", "--scheduling", "--traces", "--sizes", "300", "--naive-n", "200", "--output", str(out)]) == 130
    figures = json.loads(out.read_text())
    assert list(figures) == ["scheduling"] and set(figures["scheduling"]["policies"]["300"]) == _timed()
    printed = capsys.readouterr().out
    assert f"[perf] section scheduling done; figures saved to {out}" in printed
    assert printed.index("seconds per policy") < printed.index("[perf] section scheduling done")
