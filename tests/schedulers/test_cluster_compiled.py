"""The cluster simulator compiled (schedulers.cluster.loop's `run_events`, numba, once for every
kernel: schedulers.cluster.jitshared) against the same source run as Python: for every built-in policy, on workloads that exercise
preemption, migration and its undo, cold starts cut short, heterogeneous nodes, multi-node gangs,
job weights, eq8 and tick ledgers and a zero cold start, the per-job table, the tenant windows, the
executed allocations and every metric are identical, bit for bit (and on generated workloads:
test_cluster_generated.py). And when they run: a Python rule (a plugin's `order` / `select`) only
as Python, every kernel compiled as ATLAS_BENCH_JIT says."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from schedulers.cluster import metrics
from schedulers.cluster.metrics import compiled_policies, simulate_fairness
from schedulers.cluster.scenarios import venus
from schedulers.cluster.settings import ClusterSettings
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

pytest.importorskip("numba")
pytestmark = pytest.mark.long_file  # started first on the xdist workers (tests/conftest.py)


def _frame(n_jobs: int, days: int, seed: int, weights: bool = False) -> pd.DataFrame:
    frame = venus(seed=seed, n_jobs=n_jobs, days=days).jobs
    if weights:  # job weights: several x = gpus / weight per gang size in the ledgers
        rng = np.random.default_rng(seed)
        frame = frame.assign(weight=rng.choice([0.5, 1.0, 2.0, 3.0], size=len(frame)))
    return frame


# Each workload is one day of the Venus-like scenario at the jobs per day of a busy cluster: small, yet
# the Python runs reach every line and branch of schedulers/ that the former workloads (1,500-3,000 jobs
# over three or four days, until 2026-12-06) reached, by branch coverage (coverage.py) of the 48 runs:
# over all of them, and for each policy over its four runs, but one path THEMIS reached only on the
# former eq8 workload: undoing, at the same instant, the preemption of a job in its cold start
# (events.py, stretches.py), which GANDIVA_FAIR's runs here reach. With 36 % of the former events,
# this file took 23 s of CPU instead of 96 s.
WORKLOADS = {
    "busy": (lambda: _frame(900, 1, 4), ClusterSettings.of(nodes=20, gpus_per_node=8)),
    "heterogeneous": (lambda: _frame(750, 1, 5), ClusterSettings.of(
        node_capacities=[2, 4, 8, 8, 16, 16, 4, 8, 2, 8, 16, 8, 8, 4, 16, 8, 8, 8, 2, 16, 8, 8, 16, 4],
        cold_start_s=30.0, lease_s=600.0)),
    "eq8-tick-weights": (lambda: _frame(1000, 1, 7, weights=True), ClusterSettings.of(
        nodes=24, gpus_per_node=8, fair_share="eq8", rho_from="tick", interval_s=30.0)),
    "no-cold-start": (lambda: _frame(1000, 1, 16), ClusterSettings.of(nodes=16, gpus_per_node=8, cold_start_s=0.0,
                                                                       lease_s=300.0)),
}


def _run(monkeypatch, setting, name, jobs, cluster):
    monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
    return simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=cluster)


@pytest.fixture(scope="module")
def python_runs():
    """`python_runs(monkeypatch, name, workload)`: the Python loop's run of `name` on a workload (its jobs,
    its run), made once in this module for the tests that read it."""
    made = {}

    def run(monkeypatch, name, workload):
        if (name, workload) not in made:
            make, cluster = WORKLOADS[workload]
            jobs = JobSet.from_frame(make())
            made[name, workload] = jobs, _run(monkeypatch, "off", name, jobs, cluster)
        return made[name, workload]

    yield run
    made.clear()




@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("name", compiled_policies())
def test_compiled_loop_gives_the_python_run(monkeypatch, same_run, python_runs, name, workload):
    jobs, python = python_runs(monkeypatch, name, workload)
    compiled_run = _run(monkeypatch, "on", name, jobs, WORKLOADS[workload][1])
    assert (python.loop, compiled_run.loop) == ("Python", "compiled")
    # the workload exercises the mechanics (the policies that never preempt have no rounds)
    if get_policy(name, "cluster").preemptive:
        assert python.metrics["rounds"] > 0 and python.metrics["preemptions"] > 0
    else:
        assert python.metrics["rounds"] == 0 and python.metrics["preemptions"] == 0
    assert python.metrics["completed"] == jobs.n
    same_run(python, compiled_run)


def test_the_workloads_reach_every_mechanism(monkeypatch, python_runs):
    """Migrations, multi-node gangs and cold starts cut short happen in these workloads (else the
    comparison above would not cover them)."""
    cluster = WORKLOADS["heterogeneous"][1]
    _, run = python_runs(monkeypatch, "astraea", "heterogeneous")
    assert run.metrics["migrations"] > 0
    assert run.allocations["nodes"].str.contains(",").any()
    cold = run.allocations[run.allocations["kind"] == "cold-start"]
    assert ((cold["end"] - cold["start"]) < cluster.cold_start_s - 1e-9).any()


def test_python_rules_run_as_python_and_kernels_compiled(monkeypatch):
    make, cluster = WORKLOADS["no-cold-start"]
    jobs = JobSet.from_frame(make())
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    astraea = get_policy("astraea", "cluster")

    class Mine(astraea):  # a subclass that only renames: ASTRAEA's kernel, compiled
        name = "mine"

    class Ordered(astraea):  # a subclass with its own rule: the rule, on the Python loop
        name = "mine-ordered"

        def order(self, view, candidates):
            return sorted(candidates)

    checked = dataclasses.replace(cluster, check=True)
    runs = [simulate_fairness(jobs, policy, cluster=on) for policy, on in (
        (Mine(), cluster), (astraea(), checked), (Ordered(), cluster), (astraea(), cluster))]
    assert [run.loop for run in runs] == ["compiled", "compiled", "Python", "compiled"]
    assert runs[0].jobs.equals(runs[3].jobs) and runs[1].jobs.equals(runs[3].jobs)
    assert not runs[2].jobs.equals(runs[3].jobs)  # submit order is not ASTRAEA


def test_jit_setting_and_threshold(monkeypatch):
    make, cluster = WORKLOADS["no-cold-start"]
    jobs = JobSet.from_frame(make())
    loops = []
    for setting in ("off", "auto", "on"):  # auto: the Python loop below CLUSTER_AUTO_MIN_JOBS jobs
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        monkeypatch.setattr("schedulers.jit.CLUSTER_AUTO_MIN_JOBS", jobs.n + 1)
        loops.append(simulate_fairness(jobs, get_policy("srtf-oracle", "cluster")(), cluster=cluster).loop)
    monkeypatch.setattr("schedulers.jit.CLUSTER_AUTO_MIN_JOBS", jobs.n)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "auto")
    loops.append(simulate_fairness(jobs, get_policy("srtf-oracle", "cluster")(), cluster=cluster).loop)
    assert loops == ["Python", "Python", "compiled", "compiled"]


def test_a_job_larger_than_the_cluster_is_refused_as_in_python(monkeypatch):
    from schedulers.policy import PolicyError

    jobs = JobSet.from_frame(_frame(1500, 3, 11))
    for setting in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        with pytest.raises(PolicyError, match="needs 64 GPUs, the cluster has 32"):
            simulate_fairness(jobs, get_policy("astraea", "cluster")(), cluster=ClusterSettings.of(nodes=4, gpus_per_node=8))


def test_a_signal_ends_the_compiled_loop_with_its_own_exception(monkeypatch):
    """Ctrl-C or the perf time limit reach the compiled loop (it polls for signals) and surface as
    the handler's own exception, not as numba's wrapper around it."""
    import signal

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop()

    jobs = JobSet.from_frame(_frame(20000, 20, 13))
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    make, cluster = WORKLOADS["no-cold-start"]
    # the policy the signal interrupts compiled (or loaded) first: the alarm is for its run, and a
    # compile cut short by it would leave numba's compiler in a broken state for the process
    simulate_fairness(JobSet.from_frame(make()), get_policy("themis", "cluster")(), cluster=cluster)
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(Stop):
            simulate_fairness(jobs, get_policy("themis", "cluster")(), cluster=ClusterSettings.of(nodes=40, gpus_per_node=8))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_a_signal_while_a_compiled_call_hands_its_results_to_python_is_delivered_after_it(monkeypatch):
    """A compiled call runs Python code as it hands back structrefs and typed lists (numba's boxing:
    `_numba_unpickle`, `_numba_box_`): a signal whose handler raised there left the boxing half done
    and crashed the process (a segmentation fault in numba's MemInfo) or failed with a SystemError.
    Its handler is deferred (jit.deferred_signals), and its own exception comes out once the call has
    returned. The signal is raised from a profile hook at the first, middle and last such call of a
    run (the first `begin`'s, the last the loop's Outcome), and at each boxing of a structref."""
    import signal
    import sys

    class Stop(Exception):
        pass

    def handler(signum, frame):
        raise Stop()

    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    jobs = JobSet.from_frame(_frame(300, 4, 13))
    cluster = ClusterSettings.of(nodes=4, gpus_per_node=8)
    simulate_fairness(jobs, get_policy("themis", "cluster")(), cluster=cluster)  # compiled or loaded first

    def run(name: str, nth: int) -> int:
        """Run with SIGALRM raised at the nth call of `name` (0: none); how many calls there were."""
        calls = [0]

        def hook(frame, event, arg):
            if event == "call" and frame.f_code.co_name == name:
                calls[0] += 1
                if calls[0] == nth:
                    signal.raise_signal(signal.SIGALRM)

        sys.setprofile(hook)
        try:
            if nth:
                with pytest.raises(Stop):
                    simulate_fairness(jobs, get_policy("themis", "cluster")(), cluster=cluster)
            else:
                simulate_fairness(jobs, get_policy("themis", "cluster")(), cluster=cluster)
        finally:
            sys.setprofile(None)
        return calls[0]

    previous = signal.signal(signal.SIGALRM, handler)
    try:
        unpickles = run("_numba_unpickle", 0)
        boxes = run("_numba_box_", 0)
        assert unpickles >= 10 and boxes == 3  # begin's state and work, the kernel's state
        for name, nth in [("_numba_unpickle", 1), ("_numba_unpickle", unpickles // 2), ("_numba_unpickle", unpickles),
                          ("_numba_box_", 1), ("_numba_box_", 2), ("_numba_box_", 3)]:
            assert run(name, nth) >= nth
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert signal.getsignal(signal.SIGALRM) is previous


def test_an_unknown_fair_share_is_refused_as_in_python(monkeypatch):
    jobs = JobSet.from_frame(_frame(1500, 3, 11))
    for setting in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        with pytest.raises(ValueError, match="fair_share must be one of"):
            simulate_fairness(jobs, get_policy("astraea", "cluster")(),
                              cluster=ClusterSettings.of(nodes=16, gpus_per_node=8, fair_share="eq9"))


def _kind(function) -> str:
    """What a compiled function of the run is: `begin`, `events`, `setup` or a hook's trampoline."""
    name = function.py_func.__qualname__.rsplit(".", 1)[-1]
    return name.split("_", 1)[0] if name.startswith(("begin", "events", "setup")) else "trampoline"


@pytest.mark.parametrize("compile_s, compiled, told", [(0.5, False, True), (0.0, False, False), (0.5, True, False)])
def test_a_first_compile_that_takes_long_is_told(monkeypatch, compile_s, compiled, told):
    """A run whose functions are not compiled in this process yet compiles them (a compile that
    takes `compile_s` is stood in for) before its events, and the user is told once that has taken
    COMPILE_NOTICE_AFTER_S; a run whose functions are made compiles nothing and is not told."""
    import time

    from schedulers.cluster import jitglue, jitshared, simulator

    make, cluster = WORKLOADS["no-cold-start"]
    jobs = JobSet.from_frame(make())
    policy = get_policy("astraea", "cluster")()
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    simulate_fairness(jobs, policy, cluster=cluster)  # the real functions compiled or loaded
    real = jitshared._compiled
    compiles = []

    def slow_first_compile(function, signature):
        if not compiled or signature not in function.overloads:  # not compiled: every function made afresh
            if not compiles:
                time.sleep(compile_s)
            compiles.append((_kind(function), signature))
        return real(function, signature)

    monkeypatch.setattr(jitshared, "_compiled", slow_first_compile)
    monkeypatch.setattr(simulator, "COMPILE_NOTICE_AFTER_S", 0.1)
    notices = []
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(), notice=notices.append, cluster=cluster)
    assert run.loop == "compiled" and run.metrics["completed"] == jobs.n
    assert notices == ([jitglue.compile_notice("astraea")] if told else [])
    kinds = [kind for kind, _ in compiles]
    assert kinds == [] if compiled else (kinds[:2] == ["begin", "setup"] and kinds[-1] == "events"
                                         and set(kinds[2:-1]) == {"trampoline"} and len(kinds) > 3)


def test_the_signature_compiled_ahead_is_the_one_a_call_uses(monkeypatch):
    """run() compiles each of its functions for the arguments' types before calling them, to time
    the compile: if a signature were not the call's, numba would compile the function a second
    time. `begin` and `events` are shared by every kernel; ASTRAEA and ASTRAEA-P share a kernel,
    hence its setup and hooks."""
    from schedulers.cluster import jitshared
    from schedulers.cluster.kernels import _KERNELS

    def kind(name):
        params = _KERNELS[type(get_policy(name, "cluster")().kernel_params())].params
        return f"{params.__module__}.{params.__qualname__}"

    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    for name in ("astraea-p", "astraea", "hived"):  # predictions; HiveD's cell owners
        make, cluster = WORKLOADS["heterogeneous"]
        jobs = JobSet.from_frame(make())
        jobs = jobs.with_predictions(jobs.size * 1.5)
        made = set(jitshared._made)
        simulate_fairness(jobs, get_policy(name, "cluster")(), cluster=cluster)
        assert name != "astraea" or set(jitshared._made) == made  # ASTRAEA-P's run made all ASTRAEA's uses
        own = [key for key in jitshared._made if isinstance(key, tuple) and (key[1] == kind(name)
                                                                             or key[1].startswith(kind(name) + ":"))]
        assert ("setup", kind(name)) in own and len(own) > 1  # its setup and its hooks' trampolines
        for key in ("begin", "events", *own):
            assert len(jitshared._made[key].overloads) == 1, key  # compiled ahead, called, never compiled again
    assert kind("astraea") == kind("astraea-p")  # one kernel


def test_the_compiled_loop_stops_at_its_event_budget_as_the_python_one_does(monkeypatch, python_runs):
    """A budget made smaller than the run stops both loops at the same event with the same line
    (schedulers.jit.EventBudgetExceeded, exit 2); the budget the run needs exactly lets both finish."""
    from schedulers.cluster import jitglue, simulator
    from schedulers.jit import EventBudgetExceeded

    cluster = WORKLOADS["no-cold-start"][1]
    jobs, full = python_runs(monkeypatch, "astraea", "no-cold-start")
    events = full.metrics["events"]
    assert events > 4_000  # a run of thousands of events (4,546)
    monkeypatch.setattr(simulator, "event_budget", lambda jobs, policy: events - 1)
    lines = set()
    for setting in ("off", "on"):
        with pytest.raises(EventBudgetExceeded) as info:
            _run(monkeypatch, setting, "astraea", jobs, cluster)
        lines.add(str(info.value))
    assert len(lines) == 1 and f"astraea on {jobs.n:,} jobs: the cluster simulator's loop went past its budget of " \
                               f"{events - 1:,} events at t = " in lines.pop()
    monkeypatch.setattr(simulator, "event_budget", lambda jobs, policy: events)
    assert _run(monkeypatch, "on", "astraea", jobs, cluster).metrics["events"] == events


def test_the_compiled_outcome_holds_its_arrays_after_the_state_is_freed(monkeypatch, python_runs):
    """The compiled run reads its groups' arrays borrowed, without a reference of their own
    (schedulers.cluster.jitglue); the Outcome it hands to Python takes one for each of its arrays
    (`state.kept`), so they outlive the run's state, freed as `jitshared.run` returns: each is
    backed by numba's memory record (a borrowed one has no base), and holds the Python run's values
    once the memory the state held has been handed out again."""
    import gc

    from schedulers.cluster import jitshared, simulator

    jobs, python = python_runs(monkeypatch, "astraea", "busy")
    args, _ = simulator.arguments(jobs, get_policy("astraea", "cluster")(), None, WORKLOADS["busy"][1])
    out = jitshared.run(args)
    gc.collect()
    reused = [np.full(jobs.n, -7.0) for _ in range(64)]  # noqa: F841 (the freed memory, written over)
    arrays = {name: getattr(out, name) for name in ("completion", "start", "counters", "preempted", "migrations",
                                                       "cold_spent", "job_att", "job_fair")}
    arrays.update(n=out.stretches.n, flat_n=out.stretches.flat_n)
    for name, array in arrays.items():
        assert array.base is not None and type(array.base).__name__ == "_MemInfo", name
    assert np.array_equal(out.completion, python.jobs["completion_time"].to_numpy())
    assert np.array_equal(out.preempted, python.jobs["preemptions"].to_numpy())
