"""The specialised loops of schedulers.fastpath against the reference engine: for every built-in
single-machine policy, on random instances with ties (equal releases, equal sizes, equal p̂),
idle gaps and predictions, the same completion and start times, preemption counts and event
counts, bit for bit — except for the loops that skip the engine's wake-ups that change nothing
(edf-p, las): they sum time over fewer steps, so their times agree to 1e-9 relative, with the
same preemption counts and fewer events. And the same loops compiled by numba against the Python
ones: for every policy and setting, the same completion and start times, preemption counts and
event counts, bit for bit (when they run: test_jit.py)."""

import dataclasses

import numpy as np
import pytest

from benchmark.experiments.perf.scheduling import generated_jobs
from schedulers import fastpath
from schedulers.engine import Engine, simulate
from schedulers.fastpath import fast_simulate
from schedulers.jobs import JobSet
from schedulers.policies import single
from schedulers.policy import get_policy, policy_names

FAST = ["fifo", "sjf", "spjf", "pspjf", "srpt", "sprpt", "edf", "edf-p", "rr", "prr", "las", "las-ref", "edf-p-ref"]
# settings as constructor arguments (not registered: the registry holds only the package's names)
# loops that skip the engine's idle wake-ups: equal to rounding, not bit for bit
RELAXED = {"edf-p", "las"}
VARIANTS = [("prr", {"lam": 0.3}), ("prr", {"lam": 1.0}), ("prr", {"lam": 0.0}), ("edf", {"stretch": 3.5}),
            ("edf-p", {"initial_stretch": 0.25}), ("edf-p-ref", {"stretch": 2.0})]


def _make(name: str, **kwargs):
    if name in ("edf", "edf-p-ref") and not kwargs:
        kwargs = {"stretch": 3.0}
    return get_policy(name)(**kwargs)


@pytest.mark.parametrize("name, kwargs", [(name, {}) for name in FAST] + VARIANTS)
def test_fast_path_gives_the_engine_schedule(name, kwargs, instance):
    for seed in range(40):
        jobs = instance(seed)
        fast_policy, ref_policy = _make(name, **kwargs), _make(name, **kwargs)
        fast = simulate(jobs, fast_policy)
        ref = Engine(jobs, ref_policy).run()
        if name in RELAXED:
            assert np.allclose(fast.completion_time, ref.completion_time, rtol=1e-9, atol=0.0), (name, seed)
            assert np.allclose(fast.start_time, ref.start_time, rtol=1e-9, atol=0.0, equal_nan=True), (name, seed)
            assert np.array_equal(np.isnan(fast.start_time), np.isnan(ref.start_time)), (name, seed)
            assert 0 < fast.events <= ref.events or jobs.n == 0, (name, seed)
        else:
            assert np.array_equal(fast.completion_time, ref.completion_time), (name, seed)
            assert np.array_equal(fast.start_time, ref.start_time, equal_nan=True), (name, seed)
            assert fast.events == ref.events, (name, seed)
        assert np.array_equal(fast.preemptions, ref.preemptions), (name, seed)
        if name == "edf-p":
            assert (fast_policy.stretch, fast_policy.doublings) == (ref_policy.stretch, ref_policy.doublings)


# the policies that read a predicted distribution run on the engine only (a rank table per spread and
# a look-ahead on it; their cost per event is measured by `benchmark perf --scheduling`)
ENGINE_ONLY = {"gittins", "serpt"}


def test_every_built_in_single_machine_policy_has_a_fast_path(instance):
    jobs = instance(1)
    built_in = [n for n in policy_names("single") if get_policy(n).__module__.startswith("schedulers.policies.")]
    assert set(FAST) <= set(built_in)
    assert set(built_in) - set(FAST) == ENGINE_ONLY
    for name in FAST:
        assert fast_simulate(jobs, _make(name)) is not None, name
    for name in ENGINE_ONLY:
        assert fast_simulate(jobs, _make(name)) is None, name


def test_an_empty_job_set_runs_on_the_fast_path():
    jobs = JobSet.from_arrays([], [], [])
    for name in FAST:
        result = simulate(jobs, _make(name))
        assert len(result.completion_time) == 0 and result.events == 0


def test_a_subclass_that_changes_a_decision_runs_on_the_engine(instance):
    class Aged(get_policy("spjf")):
        name = "spjf-test-aged"

        def key(self, view, j):
            return view.jobs.predicted[j] - 0.5 * view.jobs.submit_time[j]

    jobs = instance(2)
    assert fast_simulate(jobs, Aged()) is None
    assert np.array_equal(simulate(jobs, Aged()).completion_time, Engine(jobs, Aged()).run().completion_time)

    class Setting(get_policy("prr")):  # what a `prr(lam=0.5)` setting is: a subclass that only fixes parameters
        name = "prr-test-setting"

        def __init__(self):
            super().__init__(lam=0.5)

    assert fast_simulate(jobs, Setting()) is not None


def test_reference_flag_and_observers_run_the_engine(monkeypatch, instance):
    import schedulers.engine as engine

    calls = []
    monkeypatch.setattr(engine, "fast_simulate", lambda *a: calls.append(a))
    jobs = instance(4)
    simulate(jobs, _make("srpt"), reference=True)
    assert calls == []
    simulate(jobs, _make("srpt"))
    assert len(calls) == 1  # returned None: the engine ran instead


def test_fast_path_refuses_a_predictive_policy_without_predictions():
    jobs = JobSet.from_arrays([0.0, 1.0], [2.0, 3.0])
    with pytest.raises(Exception, match="needs predicted durations"):
        simulate(jobs, _make("sprpt"))
    for name in ("spjf", "pspjf", "sprpt", "prr", "edf-p", "edf-p-ref"):  # called directly: never the sizes instead
        with pytest.raises(ValueError, match="reads predicted durations and the job set has none"):
            fast_simulate(jobs, _make(name))


@pytest.mark.parametrize("load", [0.6, 1.5])
def test_loops_without_idle_wake_ups_match_the_engine_at_scale(load):
    """edf-p and las skip wake-ups that change nothing: fewer events than the engine, the same
    schedule to rounding, the same final S and doublings."""
    jobs = generated_jobs(1500, seed=3, load=load)
    for name in sorted(RELAXED):
        fast_policy, ref_policy = _make(name), _make(name)
        fast = simulate(jobs, fast_policy)
        ref = Engine(jobs, ref_policy).run()
        assert np.allclose(fast.completion_time, ref.completion_time, rtol=1e-9, atol=0.0), name
        assert np.allclose(fast.start_time, ref.start_time, rtol=1e-9, atol=0.0), name
        assert np.array_equal(fast.preemptions, ref.preemptions), name
        assert 2 * jobs.n <= fast.events < ref.events, name
        if name == "edf-p":
            assert ref_policy.doublings > 0
            assert (fast_policy.stretch, fast_policy.doublings) == (ref_policy.stretch, ref_policy.doublings)


def test_edf_p_doubles_by_one_rule_on_the_engine_and_both_loops(monkeypatch):
    """EDF-P by hand (S from 1): A (r 0, p 10, p̂ 2), B (r 1, p 1, p̂ 1.4), C (r 1, p 1, p̂ 1.6).
    At t = 1 B and C wait (deadlines 2.4 and 2.6 after A's 2). t = 2, A late: S = 2, deadlines
    A 4, B 3.8, C 4.2: B preempts A. B done at 3; A (4) before C (4.2) — C's deadline at S = 1
    (2.6) would have been first. t = 4, A late: S = 4, A 8, C 7.4: C preempts A. C done at 5,
    A resumes; t = 8, A late (6 of 10 done): S = 8, A 16; A done at 12. Three doublings, two of
    them preemptions; the same on the engine, the Python loop and the compiled loop."""
    jobs = JobSet.from_arrays([0.0, 1.0, 1.0], [10.0, 1.0, 1.0], [2.0, 1.4, 1.6])
    runs = []
    for setting, reference in (("off", True), ("off", False), ("on", False)):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        policy = _make("edf-p")
        runs.append((simulate(jobs, policy, reference=reference), policy))
    for result, policy in runs:
        assert result.completion_time.tolist() == pytest.approx([12.0, 3.0, 5.0], rel=1e-12)
        assert result.start_time.tolist() == [0.0, 2.0, 4.0]
        assert result.preemptions.tolist() == [2, 0, 0]
        assert (policy.stretch, policy.doublings) == (8.0, 3)
    assert runs[0][0].events > runs[1][0].events == runs[2][0].events  # the engine's stale wake-ups


def test_edf_p_refuses_a_key_its_doubling_does_not_read():
    """The doubling rule recomputes deadlines with the class's key function at no attained service:
    a subclass whose key would read more is refused, not run on other deadlines than its own."""
    jobs = JobSet.from_arrays([0.0, 1.0], [3.0, 1.0], [1.0, 1.0])

    class ReadsAttained(get_policy("edf-p")):
        name = "edf-p-test-attained"
        key_reads_attained = True

    class OwnKey(get_policy("edf-p")):
        name = "edf-p-test-own-key"

        def key(self, view, j):
            return view.jobs.submit_time[j]

    for cls in (ReadsAttained, OwnKey):
        assert fast_simulate(jobs, cls()) is None
        with pytest.raises(Exception, match="raised TypeError: .*at no attained service"):
            Engine(jobs, cls()).run()
    assert simulate(jobs, _make("edf-p")).completion_time.tolist() == [3.0, 4.0]  # S doubled twice while A runs


# ----- the compiled loops (numba) against the Python ones they are compiled from ------------------
def _both(monkeypatch, jobs, name, kwargs):
    """((Python run, policy after it), (compiled run, policy after it))."""
    runs = []
    for setting in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        policy = _make(name, **kwargs)
        runs.append((simulate(jobs, policy), policy))
    return runs


def _assert_identical(python, compiled_run, what):
    assert np.array_equal(python.completion_time, compiled_run.completion_time), what
    assert np.array_equal(python.start_time, compiled_run.start_time, equal_nan=True), what
    assert np.array_equal(python.preemptions, compiled_run.preemptions), what
    assert python.events == compiled_run.events, what


@pytest.mark.parametrize("name, kwargs", [(name, {}) for name in FAST] + VARIANTS)
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
    loops = fastpath.loops_for(0)
    jobs = JobSet.from_arrays([], [], [])
    for name in FAST:
        result = simulate(jobs, _make(name))
        assert len(result.completion_time) == 0 and result.events == 0, name
    made = loops.made()  # the fixed loops, and one per loop and key function of the one-job-at-a-time policies
    keyed = {(name == "edf-p", get_policy(name).order_key) for name in FAST
             if name not in ("fifo", "rr", "prr", "las") and get_policy(name).preemptive}
    assert len(made) == 5 + len(keyed) == 12  # fifo, rr, prr, las, the non-preemptive loop (sjf, spjf)
    assert all(hasattr(loop, "py_func") for loop in made)  # numba dispatchers


# ----- the key functions: one source for the engine and the keyed loop, no true size for a non-clairvoyant key ---
KEYED = ["sjf", "spjf", "pspjf", "srpt", "sprpt", "edf", "edf-p", "las-ref", "edf-p-ref"]


def test_the_keyed_loop_runs_the_policy_s_own_key_function(monkeypatch, instance):
    """Each preemptive one-job-at-a-time policy's fast loop is made for the key function and the
    preemption rule its class names (the ones its `key` and `allocate` call on the engine), with the
    release keys of that key function, and a non-clairvoyant one's key reads a placeholder, never the
    true sizes (on the engine it gets no sizes at all). A non-preemptive one (sjf, spjf) reads its
    key at release only: its loop takes the release keys of its key function and no key function."""
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    jobs = instance(3)
    seen = []
    real, real_np = fastpath._PYTHON_LOOPS.keyed, fastpath._PYTHON_LOOPS.non_preemptive

    def spy(make, cls):
        loop = real(make, cls)

        def recorded(submit, size, *rest):
            key_size = rest[0] if make is fastpath._make_edf_p else rest[1]
            seen.append((fastpath._plug_ins(make, cls), list(key_size), None if make is fastpath._make_edf_p else rest[0]))
            return loop(submit, size, *rest)
        return recorded

    def spy_np(submit, size, release_key, *rest):
        seen.append((None, None, release_key))
        return real_np(submit, size, release_key, *rest)

    monkeypatch.setattr(fastpath._PYTHON_LOOPS, "keyed", spy)
    monkeypatch.setattr(fastpath._PYTHON_LOOPS, "non_preemptive", spy_np)
    for name in KEYED:
        seen.clear()
        policy = _make(name)
        cls = type(policy)
        simulate(jobs, policy)
        assert len(seen) == 1, name
        if cls.preemptive:
            assert seen[0][0][0] is cls.order_key, name
            assert seen[0][0][-2 if name == "edf-p" else -1] is cls.preemption_rule is single.preempts, name
            if name == "edf-p":
                assert seen[0][0][-1] is cls.doubling_rule is single.double_while_late
            assert seen[0][1] == (jobs.size.tolist() if policy.clairvoyant else [0.0] * jobs.n), name
        else:
            assert seen[0][0] is None, name
        if name != "edf-p":  # the release keys: the key function on each job at attained 0.0, bit for bit
            columns = (jobs.submit_time.tolist(), jobs.size.tolist() if policy.clairvoyant else None,
                       jobs.predicted.tolist(), float(policy.stretch))
            expected = [cls.order_key(j, 0.0, *columns) for j in range(jobs.n)]
            assert seen[0][2] == expected and all(type(k) is float for k in seen[0][2]), name
        engine_policy = _make(name)
        Engine(jobs, engine_policy).run()
        assert (engine_policy.sizes is None) == (not policy.clairvoyant), name
    assert {name for name in KEYED if not get_policy(name).clairvoyant} == {"spjf", "pspjf", "sprpt", "edf-p", "las-ref",
                                                                           "edf-p-ref"}
    assert {name for name in KEYED if not get_policy(name).preemptive} == {"sjf", "spjf"}


def test_a_subclass_with_another_key_function_runs_on_the_engine(instance):
    from schedulers.policies.single import remaining_size, true_size

    jobs = instance(2)

    class BySize(get_policy("spjf")):  # not clairvoyant: a key that reads true sizes gets none
        name = "spjf-test-by-size"
        order_key = staticmethod(true_size)

    class Remaining(get_policy("srpt")):  # clairvoyant, but says its key does not read attained service
        name = "srpt-test-no-attained"
        order_key = staticmethod(remaining_size)
        key_reads_attained = False

    assert fast_simulate(jobs, BySize()) is None and fast_simulate(jobs, Remaining()) is None
    with pytest.raises(Exception, match="NoneType"):
        Engine(jobs, BySize()).run()
    # keyed by the true size alone, preemptively: pspjf with the true sizes as its predictions, not srpt
    exact = dataclasses.replace(jobs, predicted=jobs.size.copy())
    by_size = simulate(jobs, Remaining()).completion_time
    assert np.array_equal(by_size, Engine(exact, _make("pspjf")).run().completion_time)
    assert not np.array_equal(by_size, Engine(jobs, _make("srpt")).run().completion_time)


def test_the_keyed_loops_cache_key_reads_every_file_that_shapes_their_code():
    """The keyed loops are cached under a digest of the sources they are compiled from: this module,
    schedulers.jit, schedulers.jitlink (how a loop's callees are optimised into it) and a plug-in key
    function's module; numba's own cache checks only the loop's file."""
    import hashlib
    import inspect
    from pathlib import Path

    from schedulers import jit

    def plug_in(job):  # a plug-in key function: its module is this test file
        return job

    files = [Path(fastpath.__file__), Path(jit.__file__), Path(jit.__file__).with_name("jitlink.py"),
             Path(inspect.getsourcefile(plug_in))]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.read_bytes())
    assert fastpath._sources_digest((plug_in, None)) == digest.hexdigest()[:16]
