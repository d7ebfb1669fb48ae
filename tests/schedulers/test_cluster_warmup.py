"""The install-time compile of the cluster loops (schedulers.cluster.warmup, `make compile`, run by
`make install`): the functions every kernel's compiled run shares, one task per kernel, every
built-in cluster policy covered (a run after the warm-up compiles nothing), nothing compiled when
ATLAS_BENCH_JIT is off, a bad process count refused."""

import re
from pathlib import Path

import pytest

from schedulers.cluster import warmup
from schedulers.cluster.kernels import _KERNELS
from schedulers.cluster.metrics import compiled_policies
from schedulers.policy import get_policy

ROOT = Path(__file__).resolve().parents[2]


def test_one_policy_per_kernel_and_every_policy_covered():
    by_kernel = warmup.kernel_policies()
    assert sorted(p for policies in by_kernel.values() for p in policies) == sorted(compiled_policies())
    assert by_kernel["astraea"] == ["astraea", "astraea-p"]  # ASTRAEA-P runs on ASTRAEA's kernel: one loop
    for kernel_name, policies in by_kernel.items():
        for name in policies:
            params = get_policy(name, "cluster")().kernel_params()
            assert _KERNELS[type(params)].name == kernel_name


def test_the_tasks_are_the_shared_functions_the_single_machine_loops_and_one_policy_per_kernel():
    names = warmup.tasks()
    assert names[:2] == [warmup.SHARED, warmup.SINGLE_MACHINE]
    kernels = [_KERNELS[type(get_policy(name, "cluster")().kernel_params())].name for name in names[2:]]
    assert sorted(kernels) == sorted(warmup.kernel_policies()) and len(set(kernels)) == len(kernels)


def test_a_run_after_the_warm_up_compiles_nothing(monkeypatch):
    """What the warm-up's tasks compile is all a run of a policy needs, on any jobs (the argument
    types do not depend on them): ASTRAEA-P's run on ASTRAEA's task, FIFO's on its own."""
    pytest.importorskip("numba")
    from schedulers.cluster import jitshared, simulator
    from schedulers.cluster.scenarios import venus
    from schedulers.cluster.settings import ClusterSettings
    from schedulers.jobs import JobSet

    for name in (warmup.SHARED, "astraea", "fifo"):
        assert warmup.compile_policy(name)[0] == name
    real, compiles = jitshared._compiled, []

    def recording(function, signature):
        if signature not in function.overloads:
            compiles.append((function, signature))
        return real(function, signature)

    monkeypatch.setattr(jitshared, "_compiled", recording)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    jobs = JobSet.from_frame(venus(seed=3, n_jobs=300, days=3).jobs)
    for name in ("astraea-p", "fifo"):
        run = simulator.run(jobs, get_policy(name, "cluster")(), compiled=True,
                            cluster=ClusterSettings.of(nodes=8, gpus_per_node=8))
        assert run.loop == "compiled" and int((run.completion == run.completion).sum()) == jobs.n
    assert compiles == []


def test_the_warm_up_jobs_run_on_every_loop_with_the_types_of_a_run():
    """The loop's argument types, not the jobs, pick the compiled loop: the warm-up's jobs have the
    columns every run has (predictions, several tenants)."""
    jobs, cluster = warmup._few_jobs()
    assert jobs.n == warmup.WARM_UP_JOBS and jobs.predicted is not None
    weights = cluster.tenant_weights
    assert len(jobs.tenant_names) > 1 and len(weights) == len(jobs.tenant_names) and cluster.total_gpus > 0


def test_off_compiles_nothing(monkeypatch, capsys):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    assert warmup.main(["--processes", "1"]) == 0
    assert "not compiled (ATLAS_BENCH_JIT=off)" in capsys.readouterr().out


def test_a_bad_process_count_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        warmup.main(["--processes", "0"])
    assert exit_.value.code == 2
    assert "--processes must be at least 1" in capsys.readouterr().err


def test_make_install_compiles_the_loops():
    makefile = (ROOT / "Makefile").read_text()
    recipe = re.search(r"^\$\(STAMP\):.*?\n((?:\t.*\n)+)", makefile, re.M).group(1)
    assert "$(MAKE) --no-print-directory compile" in recipe
    assert re.search(r"^compile:\n\t\$\(BIN\)/python -m schedulers\.cluster\.warmup$", makefile, re.M)


def test_the_single_machine_task_compiles_every_fast_loop(monkeypatch):
    """`make compile` also compiles the single-machine fast loops (a fresh clone's test suite compiled
    them otherwise, on each of its workers): after the task, every loop schedulers.fastpath made is
    a numba dispatcher with a compiled signature, one per built-in fast loop."""
    pytest.importorskip("numba")
    from schedulers import fastpath

    monkeypatch.setattr(fastpath, "_compiled", None)  # a fresh set of loops, made by the task alone
    name, wall, cpu = warmup.compile_single_machine()
    assert name == warmup.SINGLE_MACHINE and wall >= 0 and cpu >= 0
    made = fastpath.compiled_loops().made()
    assert len(made) == 12  # fifo, rr, prr, las, the non-preemptive loop and one per key function
    assert all(loop.signatures for loop in made)
