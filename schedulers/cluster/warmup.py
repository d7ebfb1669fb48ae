"""Compile the cluster simulator for every built-in cluster policy ahead of its first run, so that a
user's first compiled run loads it from numba's cache instead of compiling it
(`python -m schedulers.cluster.warmup`; `make install` runs it).

The compiled run (schedulers.cluster.jitshared) is made of functions every kernel shares (`begin`,
`events`: the task SHARED) and each kernel's own (its setup and hooks: one task per kernel), each
compiled once on a few jobs of the Venus-like scenario: the argument types do not depend on the
jobs, so the cached functions are those every run of a policy with its default settings loads. The
tasks run in `--processes` processes at once (default: 2, or 1 on a one-core machine): a compile
is one core's work, and a policy whose kernel another one has shares its functions. Nothing is
compiled when ATLAS_BENCH_JIT is `off` or numba is missing; what is already in the cache is loaded,
in well under a second. The single-machine fast loops (schedulers.fastpath), which run compiled
from 100,000 jobs, are compiled beside them, as one task of their own (`compile_single_machine`).

May import numpy, schedulers.jit, schedulers.jobs, schedulers.policy, schedulers.fastpath and the
cluster simulator's modules (scenarios, kernels, simulator); numba through the simulators.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

#: the jobs each task compiles on (a compile does not depend on their number)
WARM_UP_JOBS = 50


def kernel_policies() -> dict[str, list[str]]:
    """{kernel name: the built-in cluster policies that run on it}, in the registry's order."""
    from schedulers.cluster.kernels import _KERNELS  # noqa: PLC0415
    from schedulers.policy import builtin_classes  # noqa: PLC0415

    by_kernel: dict[str, list[str]] = {}
    for cls in builtin_classes("cluster"):
        params = cls().kernel_params()
        if params is None or not _KERNELS[type(params)].compilable:
            continue
        by_kernel.setdefault(_KERNELS[type(params)].name, []).append(cls.name)
    return by_kernel


def _kernel_source_size(name: str) -> int:
    """The size of the source file of cluster policy `name`'s kernel (what its compile grows with)."""
    import inspect  # noqa: PLC0415

    from schedulers.cluster.kernels import _KERNELS  # noqa: PLC0415
    from schedulers.policy import get_policy  # noqa: PLC0415

    made = _KERNELS[type(get_policy(name, "cluster")().kernel_params())]
    return os.path.getsize(inspect.getsourcefile(made.select))


def _few_jobs():
    """(JobSet, its ClusterSettings): the first WARM_UP_JOBS jobs of the Venus-like scenario on its cluster."""
    import numpy as np  # noqa: PLC0415

    from schedulers.cluster.scenarios import venus  # noqa: PLC0415
    from schedulers.cluster.settings import ClusterSettings  # noqa: PLC0415
    from schedulers.jobs import JobSet  # noqa: PLC0415

    sc = venus(seed=0, n_jobs=WARM_UP_JOBS, days=1)
    jobs = JobSet.from_frame(sc.jobs)
    weights = np.array([sc.tenant_weights[t] for t in jobs.tenant_names])
    return jobs, ClusterSettings.of(nodes=sc.nodes, gpus_per_node=sc.gpus_per_node, tenant_weights=weights)


SHARED = "shared"  # the task compiling what every kernel's run shares, named beside the kernels


def compile_policy(name: str) -> tuple[str, float, float]:
    """Compile (or load from the cache) in this process what is the own of cluster policy `name`'s
    kernel (its setup and hooks), or (`name` SHARED) what every kernel's run shares: (name, wall
    seconds, CPU seconds of this process)."""
    import warnings  # noqa: PLC0415

    from schedulers.cluster import jitshared, simulator  # noqa: PLC0415
    from schedulers.policy import get_policy  # noqa: PLC0415

    jobs, cluster = _few_jobs()
    wall, cpu = time.perf_counter(), time.process_time()
    args, _ = simulator.arguments(jobs, get_policy("fifo" if name == SHARED else name, "cluster")(), None, cluster)
    with warnings.catch_warnings():  # numba's own pedantic check of its inlining (as in simulator.run)
        warnings.simplefilter("ignore")
        (jitshared.compile_shared if name == SHARED else jitshared.compile_kernel)(args)
    return name, time.perf_counter() - wall, time.process_time() - cpu


SINGLE_MACHINE = "single-machine"  # the task compiling the single-machine loops, named beside the kernels


def compile_single_machine() -> tuple[str, float, float]:
    """Compile (or load) the fast loop of every built-in single-machine policy that has one, on a
    few jobs with p̂ (the loops' argument types do not depend on the jobs): (SINGLE_MACHINE, wall
    seconds, CPU seconds of this process)."""
    import numpy as np  # noqa: PLC0415

    from schedulers import jit  # noqa: PLC0415
    from schedulers.fastpath import fast_simulate  # noqa: PLC0415
    from schedulers.jobs import JobSet  # noqa: PLC0415
    from schedulers.policy import get_policy, policy_names  # noqa: PLC0415

    rng = np.random.default_rng(0)
    size = rng.lognormal(3.0, 1.0, WARM_UP_JOBS)
    jobs = JobSet.from_arrays(np.cumsum(rng.exponential(20.0, WARM_UP_JOBS)), size, size * 1.5)
    wall, cpu = time.perf_counter(), time.process_time()
    with jit.setting("on"):
        for name in policy_names("single"):  # runs the policy's fast loop, if it has one (None otherwise)
            fast_simulate(jobs, get_policy(name)())
    return SINGLE_MACHINE, time.perf_counter() - wall, time.process_time() - cpu


def _compile(name: str) -> tuple[str, float, float]:
    return compile_single_machine() if name == SINGLE_MACHINE else compile_policy(name)


def tasks() -> list[str]:
    """The warm-up's tasks in the order they start: the shared functions (the longest), the
    single-machine loops beside them, then one policy per kernel (the others share its functions),
    the largest kernels first: a compile's time grows with its kernel's source, and the processes
    finish together when the longest start first."""
    by_kernel = kernel_policies()
    names = sorted((policies[0] for policies in by_kernel.values()), key=_kernel_source_size, reverse=True)
    return [SHARED, SINGLE_MACHINE, *names]


def warm_up(processes: int, say=print) -> float | None:
    """Compile what every built-in cluster policy's compiled run needs, and the single-machine
    loops, in `processes` processes; the wall seconds, or None when nothing is compiled
    (ATLAS_BENCH_JIT=off, numba missing)."""
    from schedulers import jit  # noqa: PLC0415

    if jit.mode() == "off" or not jit.available():
        say("cluster loops: not compiled (" + ("ATLAS_BENCH_JIT=off" if jit.mode() == "off" else "numba is not installed")
            + "); they run as Python")
        return None
    names = tasks()
    say(f"compiling the cluster simulator for {len(names) - 2} kernels and the single-machine loops in "
        f"{processes} process(es) (once after installing; later runs load them from numba's cache)")
    t0 = time.perf_counter()
    if processes <= 1:
        done = map(_compile, names)
        for name, wall, cpu in done:
            say(f"  {name:14s} {wall:6.1f} s wall, {cpu:6.1f} s CPU")
    else:
        import multiprocessing  # noqa: PLC0415
        from concurrent.futures import ProcessPoolExecutor, as_completed  # noqa: PLC0415

        # a fresh interpreter per process: nothing numba-related is inherited from this one
        with ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn")) as pool:
            for future in as_completed([pool.submit(_compile, name) for name in names]):
                name, wall, cpu = future.result()
                say(f"  {name:14s} {wall:6.1f} s wall, {cpu:6.1f} s CPU")
    seconds = time.perf_counter() - t0
    say(f"compiled loops ready in {seconds:.0f} s")
    return seconds


def default_processes() -> int:
    return max(1, min(2, os.cpu_count() or 1))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m schedulers.cluster.warmup", description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=default_processes(),
                        help="processes compiling at once (default: %(default)s)")
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    warm_up(args.processes, say=lambda text: print(text, flush=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
