"""Built-in policies; importing this package registers them (see schedulers.policy.register)."""

import importlib
import importlib.util

for _module in ("single", "distribution", "parallel", "reference"):
    if importlib.util.find_spec(f"schedulers.policies.{_module}") is not None:
        importlib.import_module(f"schedulers.policies.{_module}")

importlib.import_module("schedulers.cluster.policies")  # the cluster half registers its own policies
