"""The ATLAS_BENCH_JIT switch (schedulers.jit): when the compiled loops run — its threshold, a
missing numba, a bad setting, and describing the loops without loading them. (That the compiled
loops give the Python loops' schedule, bit for bit, is tested in test_fastpath.py and
test_cluster_compiled.py.)"""

import numpy as np
import pytest

from benchmark.cli import main
from schedulers import fastpath, jit
from schedulers.engine import simulate
from schedulers.policy import get_policy


def _policy(name: str):
    return get_policy(name)()


def _assert_identical(python, compiled_run, what):
    assert np.array_equal(python.completion_time, compiled_run.completion_time), what
    assert np.array_equal(python.start_time, compiled_run.start_time, equal_nan=True), what
    assert np.array_equal(python.preemptions, compiled_run.preemptions), what
    assert python.events == compiled_run.events, what


def _spy(monkeypatch) -> list:
    calls = []
    real = fastpath.compiled_loops
    monkeypatch.setattr(fastpath, "compiled_loops", lambda: calls.append(1) or real())
    return calls


def test_auto_runs_python_below_the_threshold_and_compiled_from_it(monkeypatch, instance):
    monkeypatch.delenv("ATLAS_BENCH_JIT", raising=False)
    calls = _spy(monkeypatch)
    jobs = instance(1)
    monkeypatch.setattr(jit, "AUTO_MIN_JOBS", jobs.n + 1)
    below = simulate(jobs, _policy("srpt"))
    assert calls == []
    monkeypatch.setattr(jit, "AUTO_MIN_JOBS", jobs.n)
    at = simulate(jobs, _policy("srpt"))
    assert calls == [1]
    _assert_identical(below, at, "auto")
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    simulate(jobs, _policy("srpt"))
    assert calls == [1]


def test_a_missing_numba_falls_back_in_auto_and_is_an_error_when_asked_for(monkeypatch, instance):
    monkeypatch.setattr(jit, "available", lambda: False)
    monkeypatch.setattr(jit, "AUTO_MIN_JOBS", 0)
    calls = _spy(monkeypatch)
    jobs = instance(2)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "auto")
    assert simulate(jobs, _policy("rr")).completion_time.shape == (jobs.n,)
    assert calls == []
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    with pytest.raises(jit.JitSettingError, match="numba is not installed"):
        simulate(jobs, _policy("rr"))


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
    assert jit.describe(10) == "compiled (numba; ATLAS_BENCH_JIT=on)"
    monkeypatch.setenv("ATLAS_BENCH_JIT", "auto")
    assert jit.describe(10) == f"Python (ATLAS_BENCH_JIT=auto, compiled from {jit.AUTO_MIN_JOBS:,} jobs)"
    assert calls == []
