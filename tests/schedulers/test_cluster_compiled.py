"""The compiled cluster loop (schedulers.cluster.fastcore, numba) against the Python cluster simulator
it transcribes: for every policy it knows, on workloads that exercise preemption, migration and its
undo, cold starts cut short, heterogeneous nodes, multi-node gangs, job weights, eq8 and tick ledgers
and a zero cold start, the per-job table, the tenant windows, the executed allocations and every
metric are identical, bit for bit. And when it runs: only for exactly those policies, not for a
subclass or with the rule checks on, and as ATLAS_BENCH_JIT says."""

import numpy as np
import pandas as pd
import pytest

from schedulers.cluster import metrics
from schedulers.cluster.metrics import compiled_policies, simulate_fairness
from schedulers.cluster.scenarios import venus
from schedulers.jobs import JobSet
from schedulers.policy import get_policy

pytest.importorskip("numba")


def _frame(n_jobs: int, days: int, seed: int, weights: bool = False) -> pd.DataFrame:
    frame = venus(seed=seed, n_jobs=n_jobs, days=days).jobs
    if weights:  # job weights: several x = gpus / weight per gang size in the ledgers
        rng = np.random.default_rng(seed)
        frame = frame.assign(weight=rng.choice([0.5, 1.0, 2.0, 3.0], size=len(frame)))
    return frame


WORKLOADS = {
    "busy": (lambda: _frame(2000, 3, 3), dict(nodes=20, gpus_per_node=8)),
    "heterogeneous": (lambda: _frame(3000, 4, 5), dict(
        node_capacities=[2, 4, 8, 8, 16, 16, 4, 8, 2, 8, 16, 8, 8, 4, 16, 8, 8, 8, 2, 16, 8, 8, 16, 4],
        cold_start_s=30.0, lease_s=600.0)),
    "eq8-tick-weights": (lambda: _frame(2500, 3, 7, weights=True), dict(
        nodes=24, gpus_per_node=8, fair_share="eq8", rho_from="tick", interval_s=30.0)),
    "no-cold-start": (lambda: _frame(1500, 3, 11), dict(nodes=16, gpus_per_node=8, cold_start_s=0.0, lease_s=300.0)),
}


def _run(monkeypatch, setting, name, jobs, kwargs):
    monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
    return simulate_fairness(jobs, get_policy(name, "cluster")(**kwargs))


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
@pytest.mark.parametrize("name", compiled_policies())
def test_compiled_loop_gives_the_python_run(monkeypatch, same_run, name, workload):
    make, kwargs = WORKLOADS[workload]
    jobs = JobSet.from_frame(make())
    python = _run(monkeypatch, "off", name, jobs, kwargs)
    compiled_run = _run(monkeypatch, "on", name, jobs, kwargs)
    # the workload exercises what the loop transcribes (AlloX never preempts: no rounds)
    if name != "allox":
        assert python.metrics["rounds"] > 0 and python.metrics["preemptions"] > 0
    else:
        assert python.metrics["rounds"] == 0 and python.metrics["preemptions"] == 0
    assert python.metrics["completed"] == jobs.n
    same_run(python, compiled_run)


def test_the_workloads_reach_every_mechanism(monkeypatch):
    """Migrations, multi-node gangs and cold starts cut short happen in these workloads (else the
    comparison above would not cover them)."""
    make, kwargs = WORKLOADS["heterogeneous"]
    run = _run(monkeypatch, "off", "astraea", JobSet.from_frame(make()), kwargs)
    assert run.metrics["migrations"] > 0
    assert run.allocations["nodes"].str.contains(",").any()
    cold = run.allocations[run.allocations["kind"] == "cold-start"]
    assert ((cold["end"] - cold["start"]) < kwargs["cold_start_s"] - 1e-9).any()


def _count_compiled(monkeypatch):
    calls = []
    real = metrics._compiled_run

    def spy(jobs, policy, notice=None):
        state = real(jobs, policy, notice)
        calls.append(state is not None)
        return state
    monkeypatch.setattr(metrics, "_compiled_run", spy)
    return calls


def test_only_the_exact_policies_without_checks_run_compiled(monkeypatch):
    make, kwargs = WORKLOADS["no-cold-start"]
    jobs = JobSet.from_frame(make())
    calls = _count_compiled(monkeypatch)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    astraea = get_policy("astraea", "cluster")

    class Mine(astraea):  # a plugin's subclass may change any hook: the Python simulator runs it
        name = "mine"

    simulate_fairness(jobs, Mine(**kwargs))
    simulate_fairness(jobs, astraea(check=True, **kwargs))
    simulate_fairness(jobs, get_policy("fifo", "cluster")(**kwargs))
    simulate_fairness(jobs, astraea(**kwargs))
    assert calls == [False, False, False, True]


def test_jit_setting_and_threshold(monkeypatch):
    make, kwargs = WORKLOADS["no-cold-start"]
    jobs = JobSet.from_frame(make())
    calls = _count_compiled(monkeypatch)
    for setting in ("off", "auto", "on"):  # auto: the Python loop below AUTO_MIN_JOBS jobs
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        simulate_fairness(jobs, get_policy("srtf-oracle", "cluster")(**kwargs))
    monkeypatch.setattr("schedulers.jit.AUTO_MIN_JOBS", jobs.n)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "auto")
    simulate_fairness(jobs, get_policy("srtf-oracle", "cluster")(**kwargs))
    assert calls == [False, False, True, True]


def test_a_job_larger_than_the_cluster_is_refused_as_in_python(monkeypatch):
    from schedulers.policy import PolicyError

    jobs = JobSet.from_frame(_frame(1500, 3, 11))
    for setting in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        with pytest.raises(PolicyError, match="needs 64 GPUs, the cluster has 32"):
            simulate_fairness(jobs, get_policy("astraea", "cluster")(nodes=4, gpus_per_node=8))


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
    make, kwargs = WORKLOADS["no-cold-start"]
    simulate_fairness(JobSet.from_frame(make()), get_policy("astraea", "cluster")(**kwargs))  # compiled already
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(Stop):
            simulate_fairness(jobs, get_policy("themis", "cluster")(nodes=40, gpus_per_node=8))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_unknown_fair_share_is_refused_as_in_python(monkeypatch):
    jobs = JobSet.from_frame(_frame(1500, 3, 11))
    for setting in ("off", "on"):
        monkeypatch.setenv("ATLAS_BENCH_JIT", setting)
        with pytest.raises(ValueError, match="fair_share must be one of"):
            simulate_fairness(jobs, get_policy("astraea", "cluster")(nodes=16, gpus_per_node=8, fair_share="eq9"))


class _SlowFirstCompile:
    """Stands in for the compiled loop: compiling takes `compile_s`, calls go to the real loop."""

    def __init__(self, real, compile_s, compiled):
        self.real, self.compile_s, self.compiled = real, compile_s, compiled
        self.signatures = list(real.signatures) if compiled else []
        self.compiles = []

    def compile(self, signature):
        import time

        self.compiles.append(signature)
        time.sleep(self.compile_s)

    def __call__(self, *args):
        return self.real(*args)


@pytest.mark.parametrize("compile_s, compiled, told", [(0.5, False, True), (0.0, False, False), (0.5, True, False)])
def test_a_first_compile_that_takes_long_is_told(monkeypatch, compile_s, compiled, told):
    from schedulers.cluster import fastcore

    make, kwargs = WORKLOADS["no-cold-start"]
    jobs = JobSet.from_frame(make())
    policy = get_policy("astraea", "cluster")(**kwargs)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    simulate_fairness(jobs, policy)  # the real loop compiled or loaded
    fake = _SlowFirstCompile(fastcore.simulate, compile_s, compiled)
    monkeypatch.setattr(fastcore, "simulate", fake)
    monkeypatch.setattr(fastcore, "COMPILE_NOTICE_AFTER_S", 0.1)
    notices = []
    run = simulate_fairness(jobs, get_policy("astraea", "cluster")(**kwargs), notice=notices.append)
    assert run.loop == "compiled" and run.metrics["completed"] == jobs.n
    assert notices == ([fastcore.COMPILE_NOTICE] if told else [])
    args, _ = fastcore._arguments(jobs, policy)
    assert fake.compiles == ([] if compiled else [fastcore._signature(args)])


def test_the_signature_compiled_ahead_is_the_one_a_call_uses(monkeypatch):
    """run() compiles for _signature(args) before calling, to time the compile: if that signature
    were not the call's, numba would compile the loop a second time."""
    from schedulers.cluster import fastcore

    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    for name in ("astraea-p", "hived"):  # predictions; HiveD's cell owners
        make, kwargs = WORKLOADS["heterogeneous"]
        jobs = JobSet.from_frame(make())
        jobs = jobs.with_predictions(jobs.size * 1.5)
        policy = get_policy(name, "cluster")(**kwargs)
        simulate_fairness(jobs, policy)
        args, _ = fastcore._arguments(jobs, policy)
        assert fastcore._signature(args) in fastcore.simulate.signatures
    assert len(fastcore.simulate.signatures) == 1
