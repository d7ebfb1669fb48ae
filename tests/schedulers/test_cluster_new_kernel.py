"""A new cluster policy is one file: its class (name, flags, settings) and its kernel (what the cluster
simulator runs, as Python or compiled), written here as a user of the simulator's modules would
(docs/policies.md#a-built-in-cluster-policy-one-file): largest gang first, then submit order. Its runs
as Python and compiled are the run of the same rule written as a plugin's `order` (schedulers.cluster.rule),
bit for bit."""

import hashlib
import os
import re
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

from schedulers.cluster.base import ClusterPolicy
from schedulers.cluster.kernels import kernel
from schedulers.cluster.metrics import simulate_fairness
from schedulers.cluster.placement import place_in_order
from schedulers.cluster.queues import candidates
from schedulers.cluster.scenarios import venus
from schedulers.cluster.settings import ClusterSettings
from schedulers.cluster.state import group
from schedulers.jit import jitable
from schedulers.jobs import JobSet


class LargestFirst(ClusterPolicy):
    name = "largest-first"
    description = "largest gang first at every round (a test policy)"

    def __init__(self, *, fail_at_hold: int = 0):
        super().__init__()
        self.fail_at_hold = fail_at_hold  # > 0: its on_hold raises there (a hook's error, as a test makes one)

    def kernel_params(self):
        return LargestFirstParams(self.fail_at_hold)


class LargestFirstRule(ClusterPolicy):
    """The same rule as a plugin's Python `order`."""

    name = "largest-first-rule"

    def order(self, view, candidates):
        return sorted(candidates, key=lambda j: (-view.jobs.gpus[j], j))


LargestFirstParams = namedtuple("LargestFirstParams", "fail_at_hold")
LargestFirstState = namedtuple("LargestFirstState", "params holds")


def setup(s, params):
    return group(LargestFirstState(params, np.zeros(1, np.int64)))


@jitable
def on_hold(s, p, j):
    p.holds[0] += 1
    if p.holds[0] == p.params.fail_at_hold:
        raise ValueError("largest-first: the test's hook raised at the hold it was told to")


@jitable
def decide(s, p, at_round, now, chosen):
    cand = candidates(s, at_round)  # in job order
    key = np.empty(len(cand), np.int64)
    for i in range(len(cand)):
        key[i] = -s.job.gpus[cand[i]]
    order = cand[np.argsort(key, kind="mergesort")]
    place_in_order(s, order, len(order), now, at_round, chosen)


kernel("largest-first", LargestFirstParams, LargestFirstState, setup=setup, select=decide, on_hold=on_hold)


@pytest.mark.parametrize("jit", ["off", "on"])
def test_a_kernel_in_one_file_runs_as_its_python_rule(monkeypatch, same_run, jit):
    if jit == "on":
        pytest.importorskip("numba")
    jobs = JobSet.from_frame(venus(seed=4, n_jobs=1500, days=3).jobs)
    cluster = ClusterSettings.of(nodes=16, gpus_per_node=8, cold_start_s=30.0, lease_s=600.0)
    monkeypatch.setenv("ATLAS_BENCH_JIT", jit)
    rule = simulate_fairness(jobs, LargestFirstRule(), cluster=cluster)  # a Python rule: always the Python loop
    assert rule.loop == "Python"
    run = simulate_fairness(jobs, LargestFirst(), cluster=cluster)
    assert run.loop == {"off": "Python", "on": "compiled"}[jit]
    assert rule.metrics["rounds"] > 0 and rule.metrics["preemptions"] > 0
    same_run(rule, run)


@pytest.mark.parametrize("jit", ["off", "on"])
def test_an_error_in_a_hook_reaches_the_caller_and_the_next_run_is_whole(monkeypatch, same_run, jit):
    """A hook's raise ends the run with its own error, compiled as in Python: a compiled hook is called
    through its address, and its error is returned through the shared loop without the reference
    counts its callers once took (schedulers.cluster.jitshared); the process's next run is exact."""
    from atlas_data.plugins import PluginError

    if jit == "on":
        pytest.importorskip("numba")
    jobs = JobSet.from_frame(venus(seed=4, n_jobs=1500, days=3).jobs)
    cluster = ClusterSettings.of(nodes=16, gpus_per_node=8, cold_start_s=30.0, lease_s=600.0)
    monkeypatch.setenv("ATLAS_BENCH_JIT", jit)
    for _ in range(3):
        with pytest.raises(PluginError, match=r"^policy 'largest-first' \(test_cluster_new_kernel.LargestFirst\) raised "
                                              "ValueError: largest-first: the test's hook raised at the hold it was told to$"):
            simulate_fairness(jobs, LargestFirst(fail_at_hold=250), cluster=cluster)
    run = simulate_fairness(jobs, LargestFirst(), cluster=cluster)
    assert run.loop == {"off": "Python", "on": "compiled"}[jit]
    same_run(simulate_fairness(jobs, LargestFirstRule(), cluster=cluster), run)


def test_a_kernel_only_a_test_can_import_does_not_break_the_built_in_loops(monkeypatch):
    """numba keeps one cache index per compiled loop: a process that cannot import this module (its
    kernel's types are pickled in its own index) still loads and runs a built-in policy's loop."""
    pytest.importorskip("numba")
    import subprocess
    import sys
    from pathlib import Path

    jobs = JobSet.from_frame(venus(seed=4, n_jobs=300, days=1).jobs)
    monkeypatch.setenv("ATLAS_BENCH_JIT", "on")
    assert simulate_fairness(jobs, LargestFirst()).loop == "compiled"  # its index is written (8 × 8 GPUs, the default)
    code = ("import os; os.environ['ATLAS_BENCH_JIT'] = 'on'\n"
            "from schedulers.cluster.metrics import simulate_fairness\n"
            "from schedulers.cluster.scenarios import venus\n"
            "from schedulers.jobs import JobSet\n"
            "from schedulers.policy import get_policy\n"
            "jobs = JobSet.from_frame(venus(seed=4, n_jobs=300, days=1).jobs)\n"
            "for name in ('srtf-oracle', 'fifo'):\n"
            "    assert simulate_fairness(jobs, get_policy(name, 'cluster')()).loop == 'compiled'\n")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_source_changed_since_its_import_is_refused_as_a_cache_key(monkeypatch):
    """A compiled kernel is cached under a digest of its source files' content, read when it compiles or
    loads. The process runs the code it imported: had a file changed since, that code would be cached
    under the new content and loaded later for a source it is not. So each file's modification time at
    import (a kernel's at its registration) must still be the file's, or the digest is refused."""
    from schedulers.cluster import jitshared, kernels

    made = kernels._KERNELS[LargestFirstParams]
    here = Path(__file__)
    assert kernels.SOURCE_STAMPS[LargestFirstParams] == (str(here), os.stat(here).st_mtime_ns)
    files = (*jitshared.SIMULATOR_MODULES, Path(jitshared.__file__), Path(jitshared.jit.__file__),
             Path(jitshared.jit.__file__).with_name("jitlink.py"), Path(jitshared.jitglue.__file__),
             jitshared._REVISION_FILE, here)
    content = hashlib.sha256()
    for path in files:
        content.update(path.read_bytes())
    assert jitshared._kernel_digest(made) == content.hexdigest()[:16]  # the key numba's cache already has
    for path in (here, jitshared.SIMULATOR_MODULES[0]):
        with monkeypatch.context() as patch:  # as if the process had imported the file before its last change
            patch.setitem(jitshared._STAMPS, str(path), os.stat(path).st_mtime_ns - 1)
            with pytest.raises(jitshared.SourceChangedError,
                               match=f"^{re.escape(str(path))} changed after this process imported it: its compiled "
                                     "loop would be cached under the new source; run the command again$"):
                jitshared._kernel_digest(made)
    assert jitshared._kernel_digest(made) == content.hexdigest()[:16]
