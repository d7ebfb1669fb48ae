"""Built-in policies; importing this package registers them (see schedulers.policy.register)."""

import importlib
import importlib.util

for _module in ("single", "parallel", "reference", "cluster"):
    if importlib.util.find_spec(f"schedulers.policies.{_module}") is not None:
        importlib.import_module(f"schedulers.policies.{_module}")
