"""The compiled fast loops (schedulers.compiled, numba) against the Python ones they are compiled
from: for every built-in single-machine policy and setting, on random instances with ties, idle
gaps and predictions, and on larger busy ones, the same completion and start times, preemption
counts and event counts, bit for bit (the Python loops are checked against the reference engine
in test_fastpath.py). And when each backend runs: ATLAS_BENCH_JIT, its threshold and its errors."""

import numpy as np
import pytest

from benchmark.cli import main
from benchmark.perf_scheduling import generated_jobs
from schedulers import compiled
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

FAST = ["fifo", "sjf", "spjf", "pspjf", "srpt", "sprpt", "edf", "edf-p", "rr", "prr", "las", "las-ref", "edf-p-ref"]
SETTINGS = [(name, {}) for name in FAST] + [
    ("prr", {"lam": 0.3}), ("prr", {"lam": 1.0}), ("prr", {"lam": 0.0}), ("edf", {"stretch": 3.5}),
    ("edf-p", {"initial_stretch": 0.25}), ("edf-p-ref", {"stretch": 2.0})]


def _policy(name: str, kwargs: dict):
    if name in ("edf", "edf-p-ref") and not kwargs:
        kwargs = {"stretch": 3.0}
    return get_policy(name)(**kwargs)


def _both(monkeypatch, jobs, name, kwargs):
    """(Python run, compiled run, the two policies after their runs)."""
    runs = []
    for setting in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        policy = _policy(name, kwargs)
        runs.append((simulate(jobs, policy), policy))
    return runs


def _assert_identical(python, compiled_run, what):
    assert np.array_equal(python.completion_time, compiled_run.completion_time), what
    assert np.array_equal(python.start_time, compiled_run.start_time, equal_nan=True), what
    assert np.array_equal(python.preemptions, compiled_run.preemptions), what
    assert python.events == compiled_run.events, what


@pytest.mark.parametrize("name, kwargs", SETTINGS)
def test_compiled_loops_give_the_python_schedule_bit_for_bit(monkeypatch, name, kwargs, instance):
    for seed in range(30):
        jobs = instance(seed)
        (python, p_policy), (fast, c_policy) = _both(monkeypatch, jobs, name, kwargs)
        _assert_identical(python, fast, (name, seed))
        if name == "edf-p":
            assert (p_policy.stretch, p_policy.doublings) == (c_policy.stretch, c_policy.doublings)


@pytest.mark.parametrize("load", [0.9, 1.5])
def test_compiled_loops_match_at_scale(monkeypatch, load):
    """Thousands of jobs: long heaps, many preemptions, prr favourites changing, las cohorts merging."""
    jobs = generated_jobs(4000, seed=5, load=load)
    for name in FAST:
        (python, p_policy), (fast, c_policy) = _both(monkeypatch, jobs, name, {})
        _assert_identical(python, fast, (name, load))
        assert python.events >= 2 * jobs.n - 1, name  # a real run, not an empty one
        if name in ("srpt", "sprpt", "edf-p"):
            assert python.preemptions.sum() > 0, name
        if name == "edf-p":
            assert (p_policy.stretch, p_policy.doublings) == (c_policy.stretch, c_policy.doublings)


def test_an_empty_job_set_runs_compiled(monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    loops = compiled.loops_for(0)
    assert all(hasattr(getattr(loops, kind), "py_func") for kind in vars(loops))  # numba dispatchers
    jobs = JobSet.from_arrays([], [], [])
    for name in FAST:
        result = simulate(jobs, _policy(name, {}))
        assert len(result.completion_time) == 0 and result.events == 0, name


def _spy(monkeypatch) -> list:
    calls = []
    real = compiled.compiled_loops
    monkeypatch.setattr(compiled, "compiled_loops", lambda: calls.append(1) or real())
    return calls


def test_auto_runs_python_below_the_threshold_and_compiled_from_it(monkeypatch, instance):
    monkeypatch.delenv("ATLAS_BENCH_JIT", raising=False)
    calls = _spy(monkeypatch)
    jobs = instance(1)
    monkeypatch.setattr(compiled, "AUTO_MIN_JOBS", jobs.n + 1)
    below = simulate(jobs, _policy("srpt", {}))
    assert calls == []
    monkeypatch.setattr(compiled, "AUTO_MIN_JOBS", jobs.n)
    at = simulate(jobs, _policy("srpt", {}))
    assert calls == [1]
    _assert_identical(below, at, "auto")
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    simulate(jobs, _policy("srpt", {}))
    assert calls == [1]


def test_a_missing_numba_falls_back_in_auto_and_is_an_error_when_asked_for(monkeypatch, instance):
    monkeypatch.setattr(compiled, "available", lambda: False)
    monkeypatch.setattr(compiled, "AUTO_MIN_JOBS", 0)
    calls = _spy(monkeypatch)
    jobs = instance(2)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "auto")
    assert simulate(jobs, _policy("rr", {})).completion_time.shape == (jobs.n,)
    assert calls == []
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    with pytest.raises(compiled.JitSettingError, match="numba is not installed"):
        simulate(jobs, _policy("rr", {}))


def test_a_bad_setting_exits_2_before_any_work(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "fast")
    out = tmp_path / "out"
    code = main(["run", "--task", "scheduling", "--policies", "srpt", "--output", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == ["error: ATLAS_BENCH_JIT='fast': expected one of auto, on, off"]
    assert not out.exists()


def test_describing_the_loops_does_not_load_them(monkeypatch):
    """results.json and perf name the loops; that must not import numba where no loop ran compiled."""
    calls = _spy(monkeypatch)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    assert compiled.describe(10) == "compiled (numba; ATLAS_BENCH_JIT=on)"
    monkeypatch.setenv("ATLAS_BENCH_JIT", "auto")
    assert compiled.describe(10) == f"Python (ATLAS_BENCH_JIT=auto, compiled from {compiled.AUTO_MIN_JOBS:,} jobs)"
    assert calls == []
