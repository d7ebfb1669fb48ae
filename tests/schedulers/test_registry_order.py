"""The policy registry is the one list of policies, in one order: listings, default runs and results
tables follow each built-in class's declared `listing_rank` (then its name) whatever order the policy modules
were imported in, plugins after the built-ins in registration order; and the specialised loops
(schedulers.fastpath, the compiled cluster loop) take the classes they run from the classes (`fast_loop`)
and the registry."""

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

import schedulers.policy
import schedulers.policy_base
from atlas_data.errors import InputError
from atlas_data.plugins import is_plugin
from schedulers import fastpath
from schedulers.cluster.metrics import compiled_policies
from schedulers.policy import KINDS, Policy, builtin_classes, get_policy, policy_names, register

ROOT = Path(__file__).resolve().parents[2]
# the modules that register the built-in policies, from the registry (a new policy file is among them)
SINGLE_MODULES = sorted({cls.__module__ for kind in ("single", "parallel") for cls in builtin_classes(kind)})
CLUSTER_MODULES = sorted({cls.__module__ for cls in builtin_classes("cluster")})

# The registry emptied, then every policy module imported anew in the order given: what a process
# that happened to import them in that order registers (the registration order is the import order).
_LISTING_AFTER = """
import importlib, json, sys
import schedulers.policy as policy, schedulers.policy_base as base
first, modules = sys.argv[1], sys.argv[2:]
importlib.import_module(first)
base._REGISTRY.clear()
for name in modules:
    importlib.reload(importlib.import_module(name))
print(json.dumps({str(kind): policy.policy_names(kind) for kind in (None, "single", "parallel", "cluster")}))
"""


def _listing_after(first: str, modules: list[str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _LISTING_AFTER, first, *modules], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_order_is_each_classs_declared_rank_then_its_name():
    # the one place the product's order is written out: the results tables' order of these cluster
    # policies (a new policy file takes its place among them by its rank)
    shipped = ["fifo", "srtf-oracle", "yarn-cs", "tiresias-l", "themis", "gandiva-fair", "hived", "astraea", "astraea-p",
               "allox", "qssf", "easy-p"]
    assert [name for name in policy_names("cluster") if name in shipped] == shipped
    assert [name for name in policy_names("single") if name in ("fifo", "sjf", "spjf", "srpt")] == ["fifo", "sjf", "spjf",
                                                                                                    "srpt"]
    for kind in KINDS:
        classes = builtin_classes(kind)
        assert classes == sorted(classes, key=lambda cls: (cls.listing_rank, cls.name)), kind
        assert all(cls.__module__.startswith(("schedulers.policies.", "schedulers.cluster.policies.")) for cls in classes)
        assert all("listing_rank" in cls.__dict__ for cls in classes), kind  # every built-in policy declares its place
    every_kind = [n for n in policy_names() if not is_plugin(get_policy(n))]  # other tests may have added plugins
    assert every_kind == list(dict.fromkeys(sum(([c.name for c in builtin_classes(k)] for k in KINDS), [])))


def test_a_built_in_class_without_a_rank_comes_after_the_ranked_ones_by_name(monkeypatch):
    policy_names()
    monkeypatch.setattr(schedulers.policy_base, "_REGISTRY", dict(schedulers.policy_base._REGISTRY))
    cluster = get_policy("fifo", "cluster")
    for name, rank in (("zz-unranked", math.inf), ("aa-unranked", math.inf), ("between", 15)):
        schedulers.policy_base.register(type("X", (cluster,), {"name": name, "listing_rank": rank,
                                                                "__module__": "schedulers.cluster.policies.x"}))
    names = policy_names("cluster")
    assert [n for n in names if n in ("fifo", "between", "srtf-oracle")] == ["fifo", "between", "srtf-oracle"]
    assert names.index("between") == names.index("srtf-oracle") - 1  # rank 15: after every rank 10, before 20
    assert names[-2:] == ["aa-unranked", "zz-unranked"]


def test_an_unknown_kind_is_refused_not_answered_with_no_names():
    with pytest.raises(InputError, match="unknown kind of policy 'clustr' \\(choose from single, parallel, cluster\\)"):
        policy_names("clustr")
    with pytest.raises(InputError, match="unknown kind of policy"):
        get_policy("fifo", "clustr")


@pytest.mark.parametrize("first, modules", [
    # the cluster package before the single-machine one, then every module in reverse
    ("schedulers.cluster.policies", list(reversed(SINGLE_MODULES + CLUSTER_MODULES))),
    # shuffled (seeded), the cluster modules first
    ("schedulers.policies", random.Random(7).sample(CLUSTER_MODULES, len(CLUSTER_MODULES))
     + random.Random(8).sample(SINGLE_MODULES, len(SINGLE_MODULES))),
])
def test_import_order_does_not_change_the_listing(first, modules):
    expected = {kind: [cls.name for cls in builtin_classes(kind)] for kind in KINDS}
    expected["None"] = list(dict.fromkeys(expected["single"] + expected["parallel"] + expected["cluster"]))
    assert _listing_after(first, modules) == expected


def test_plugins_follow_the_builtins_in_registration_order(monkeypatch):
    policy_names()  # the built-in policies registered first, into the real registry
    monkeypatch.setattr(schedulers.policy_base, "_REGISTRY", dict(schedulers.policy_base._REGISTRY))
    cluster = get_policy("fifo", "cluster")
    made = []
    for name in ("zz-second-name-first", "aa-first-name-second"):
        made.append(register(type("Mine", (cluster,), {"name": name, "listing_rank": 0, "__module__": "my_plugin"})))
    names = policy_names("cluster")  # other tests may have registered plugins before these
    builtin = [cls.name for cls in builtin_classes("cluster")]
    assert names[:len(builtin)] == builtin and "fifo" in builtin
    assert names[-2:] == ["zz-second-name-first", "aa-first-name-second"]  # a plugin's listing_rank does not move it
    assert not set(made) & set(builtin_classes("cluster"))  # never a specialised loop's class


def test_the_fast_loops_run_the_registry_classes_that_name_them():
    assert {cls.name: fastpath.fast_loop_of(cls) for cls in builtin_classes("single") if fastpath.fast_loop_of(cls)} == {
        name: name for name in ("fifo", "sjf", "spjf", "pspjf", "srpt", "sprpt", "edf", "edf-p", "rr", "prr", "las",
                                "las-ref", "edf-p-ref")}
    assert compiled_policies() == [cls.name for cls in builtin_classes("cluster")]  # each has a kernel


def test_every_built_in_cluster_policy_runs_on_its_kernel():
    from schedulers.cluster import jitglue, kernels, rule
    from schedulers.cluster.rule import RuleParams

    for name in compiled_policies():
        policy = get_policy(name, "cluster")()
        assert not policy.uses_python_rule()
        assert jitglue.compilable(rule.params_of(policy, None))
        assert type(policy.kernel_params()) in kernels._KERNELS

    class Mine(get_policy("astraea", "cluster")):  # a subclass that changes nothing runs ASTRAEA's kernel
        name = "mine-astraea"

    class Ordered(get_policy("astraea", "cluster")):  # one that defines a rule runs its rule
        name = "mine-ordered"

        def order(self, view, candidates):
            return sorted(candidates, reverse=True)

    assert not Mine().uses_python_rule()
    assert Ordered().uses_python_rule() and isinstance(rule.params_of(Ordered(), None), RuleParams)
    assert not jitglue.compilable(rule.params_of(Ordered(), None))


def test_a_plugin_naming_a_fast_loop_runs_on_the_engine():
    class Mine(Policy):  # claims srpt's loop but decides otherwise: not a class of the registry's built-ins
        name = "mine-not-srpt"
        fast_loop = "srpt"

    assert fastpath._fast_kind(Mine()) is None
    assert fastpath._fast_kind(get_policy("srpt")()) == "srpt"
