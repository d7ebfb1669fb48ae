"""A policy is discovered from its file (schedulers.policy.discover): copying the FIFO cluster policy's
file under a new module name, with a new policy name written in it, is all it takes for the new
policy to be listed and to run — nothing else is touched (no list, no import, no registration)."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

import schedulers.cluster.policies as cluster_package
import schedulers.policies as single_package
from benchmark.cli import main
from schedulers import policy_base
from schedulers.policy import builtin_classes, get_policy, policy_names


@pytest.fixture
def policy_file(tmp_path, monkeypatch):
    """`write(package, module, source)`: a policy file in a folder that `package` searches (its
    `__path__`, as a file copied into the package's folder would be); registry and modules restored after."""
    policy_names()  # the built-in policies discovered first: the registry restored after holds them
    registry, added = dict(policy_base._REGISTRY), []

    def write(package, module: str, source: str) -> Path:
        folder = tmp_path / package.__name__
        folder.mkdir(exist_ok=True)
        path = folder / f"{module}.py"
        path.write_text(source)
        if str(folder) not in package.__path__:
            monkeypatch.setattr(package, "__path__", [*package.__path__, str(folder)])
        added.append((package, module))
        return path

    yield write
    policy_base._REGISTRY.clear()
    policy_base._REGISTRY.update(registry)
    for package, module in added:
        sys.modules.pop(f"{package.__name__}.{module}", None)
        if hasattr(package, module):
            delattr(package, module)


def _fifo_source(name: str) -> str:
    source = Path(cluster_package.__file__).with_name("fifo.py").read_text()
    assert source.count('"fifo"') == 1  # the policy's name is written once, in its class
    return source.replace('name = "fifo"', f'name = "{name}"')


def test_a_copy_of_the_fifo_file_with_a_new_name_is_listed_and_runs_as_fifo(policy_file, tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_JIT", "off")
    policy_file(cluster_package, "fifo_twin", _fifo_source("fifo-twin"))
    names = policy_names("cluster")
    assert [n for n in names if n in ("fifo", "fifo-twin", "srtf-oracle")] == ["fifo", "fifo-twin", "srtf-oracle"]
    twin = get_policy("fifo-twin", "cluster")
    assert twin.__module__ == "schedulers.cluster.policies.fifo_twin" and twin in builtin_classes("cluster")
    assert type(twin().kernel_params()) is not type(get_policy("fifo", "cluster")().kernel_params())  # its own kernel

    jobs = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": [f"j{i}" for i in range(8)], "submit_time": [0, 0, 5, 5, 9, 20, 21, 40],
                  "duration": [100, 50, 30, 400, 10, 60, 5, 70], "gpus": [8, 4, 4, 8, 2, 8, 1, 4],
                  "tenant": ["a", "b", "a", "b", "a", "b", "a", "b"]}).to_csv(jobs, index=False)
    out = tmp_path / "out"
    assert main(["run", "--task", "fairness", "--no-mlflow", "--quiet", "--jobs", str(jobs), "--nodes", "1",
                 "--policies", "fifo,fifo-twin", "--output", str(out)]) == 0
    doc = json.loads((out / "results.json").read_text())
    assert [r["policy"] for r in doc["rows"]] == ["fifo", "fifo-twin"]
    fifo, copy = (pd.read_parquet(out / "jobs" / f"{name}.parquet") for name in ("fifo", "fifo-twin"))
    assert fifo.equals(copy)
    # one 8-GPU node, submit order, head-of-line blocking: j0 runs 0–100, j1 and j2 (4 + 4) 100–150 and
    # 100–130, j3 (8) 150–550, j4 550–560, j5 560–620, j6 620–625 (behind j5's 8 GPUs), j7 620–690
    assert fifo.set_index("job_id")["start_time"].to_dict() == {
        "j0": 0.0, "j1": 100.0, "j2": 100.0, "j3": 150.0, "j4": 550.0, "j5": 560.0, "j6": 620.0, "j7": 620.0}


@pytest.mark.slow
def test_the_copy_runs_compiled_as_fifo_does(policy_file):
    # its kernel is compiled into a loop of its own (about a minute and a half on 2 cores)
    import numpy as np

    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.cluster.settings import ClusterSettings
    from schedulers.jobs import JobSet

    policy_file(cluster_package, "fifo_twin", _fifo_source("fifo-twin"))
    rng = np.random.default_rng(0)
    n = 300
    jobs = JobSet.from_arrays(np.sort(rng.integers(0, 20_000, n)).astype(float), rng.integers(20, 3000, n).astype(float),
                              gpus=rng.choice([1, 2, 4, 8], n), tenant=rng.choice(["a", "b"], n))
    cluster = ClusterSettings.of(nodes=2, gpus_per_node=8)
    runs = [simulate_fairness(jobs, get_policy(name, "cluster")(), compiled=compiled, cluster=cluster).jobs
            for name, compiled in (("fifo-twin", True), ("fifo", False))]
    assert runs[0]["completion_time"].tolist() == runs[1]["completion_time"].tolist()


def test_a_new_single_machine_policy_file_is_discovered_in_its_rank(policy_file):
    policy_file(single_package, "lifo", '''"""Last come, first served: a policy file of the package, nothing else."""
from schedulers.policies.single import _OneAtATime
from schedulers.policy_base import register


@register
class LIFO(_OneAtATime):
    name = "lifo"
    listing_rank = 15  # between fifo (10) and sjf (20)
    description = "non-preemptive; the job submitted last first"

    def key(self, view, j):
        return -j
''')
    assert [n for n in policy_names("single") if n in ("fifo", "lifo", "sjf")] == ["fifo", "lifo", "sjf"]
    assert policy_names("single").index("lifo") == policy_names("single").index("sjf") - 1  # rank 15, before 20
    from benchmark import api

    jobs = pd.DataFrame({"job_id": ["a", "b", "c"], "submit_time": [0.0, 1.0, 2.0], "duration": [5.0, 1.0, 1.0]})
    done = api.simulate(jobs, "lifo").set_index("job_id")
    assert done["start_time"].to_dict() == {"a": 0.0, "b": 6.0, "c": 5.0}  # c (the last) before b
