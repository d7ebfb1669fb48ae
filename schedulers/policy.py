"""The registry of policies by name: discovery, listings, lookup, and `--policies` items resolved to names.

A policy is discovered from its file: every module of the policy packages (POLICY_PACKAGES:
`schedulers/policies/`, `schedulers/cluster/policies/`) is imported the first time a name is asked
for, and registers its classes itself (`register`, schedulers.policy_base); a new built-in policy is
one more file there, with its name written once, in its class. The built-in policies of a kind are
listed by the `listing_rank` their class declares, then by name; plugin policies follow in registration
order. Installed packages add policies through the `atlas_bench.plugins` entry-point group.

`resolve_policy(spec, kind)` is the one way a `--policies` item becomes a registered name: a
registered name, `package.module:Class` (a user's Policy subclass, found through the one plugin
route of atlas_data.plugins and registered on first use), either with constructor parameters in
parentheses — `spjf-aging(alpha=0.01)` is registered as its own name, so results say which
setting ran. What a policy is (Policy, Allocation, IDLE, the errors, `guard`) is schedulers.policy_base,
which every policy module imports instead of this module; the names are here too, for plugins.
May import the standard library, atlas_data (errors, plugins) and schedulers.policy_base; the policy
packages it discovers.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re

from atlas_data.errors import InputError
from atlas_data.plugins import import_object, is_plugin, load_entry_points, looks_like_import_path, user_code
from schedulers import policy_base
from schedulers.policy_base import IDLE, Allocation, PluginPolicyError, Policy, PolicyError, guard  # noqa: F401

KINDS = ("single", "parallel", "cluster")  # get_policy(name) without a kind: the first of these; listings of every kind
# the packages whose every module is a policy module (discover); a module there registers its own policies
POLICY_PACKAGES = ("schedulers.policies", "schedulers.cluster.policies")
_discovered: dict[str, tuple] = {}  # package -> the search path its modules were imported from


def discover() -> None:
    """Import every module of POLICY_PACKAGES, each registering its policies (again only when a
    package's search path changed), then the installed packages' plugins (entry points)."""
    for package_name in POLICY_PACKAGES:
        path = tuple(importlib.import_module(package_name).__path__)
        if _discovered.get(package_name) != path:
            for module in sorted(info.name for info in pkgutil.iter_modules(path)):
                importlib.import_module(f"{package_name}.{module}")
            _discovered[package_name] = path
    load_entry_points()


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator of a plugin's policy: schedulers.policy_base.register once the built-in policies
    are discovered, so that a plugin taking a built-in name is refused (the built-in module would
    otherwise fail to import, an internal error naming no plugin)."""
    if is_plugin(cls):
        discover()
    return policy_base.register(cls)


def _kinds(kind: str | None) -> tuple[str, ...]:
    if kind is None:
        return KINDS
    if kind not in KINDS:
        raise InputError(f"unknown kind of policy {kind!r} (choose from {', '.join(KINDS)})")
    return (kind,)


def task_kind(task: str | None, objective: str | None = None) -> str:
    """The kind of policy a task runs: `cluster` for fairness, `parallel` for the makespan objective
    (m machines), `single` for every other scheduling objective."""
    if task == "fairness":
        return "cluster"
    return "parallel" if objective == "makespan" else "single"


def builtin_classes(kind: str) -> list[type[Policy]]:
    """The built-in policy classes of `kind` (not plugins, not `(param=value)` settings), by their
    declared `listing_rank`, then name: the order of every listing, and what the specialised loops derive
    the classes they run from."""
    discover()
    kind, = _kinds(kind)
    found = [cls for (k, name), cls in policy_base._REGISTRY.items() if k == kind and "(" not in name and not is_plugin(cls)]
    return sorted(found, key=lambda cls: (cls.listing_rank, cls.name))


def policy_names(kind: str | None = None) -> list[str]:
    """Registered names of one kind: the built-in ones (`builtin_classes`), then plugins in
    registration order; every kind (single, parallel, cluster), without duplicates, if None; an
    unknown kind is refused (InputError), not answered with no names.

    A `(param=value)` setting resolved earlier in the process (`resolve_policy`) is registered under
    its label, but it is not a policy of its own: it is left out, so that it neither joins a later
    run's default policies nor the names an error suggests."""
    names = []
    for k in _kinds(kind):
        names += [cls.name for cls in builtin_classes(k)]
        names += [name for (k2, name), cls in policy_base._REGISTRY.items() if k2 == k and "(" not in name and is_plugin(cls)]
    return list(dict.fromkeys(names))


def get_policy(name: str, kind: str | None = None) -> type[Policy]:
    """The policy class called `name`: of `kind` if given, else the first of single, parallel, cluster."""
    discover()
    for k in _kinds(kind):
        cls = policy_base._REGISTRY.get((k, name))
        if cls is not None:
            return cls
    raise KeyError(name)


_SPEC = re.compile(r"^\s*([^()\s]+)\s*(?:\((.*)\))?\s*$", re.S)


def split_policy_list(text: str | None) -> list[str]:
    """Items of a comma-separated `--policies` value; commas inside parentheses belong to the item."""
    items, depth, current = [], 0, []
    for ch in str(text or ""):
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return [item.strip() for item in items if item.strip()]


def _parse_params(text: str, spec: str) -> dict:
    params = {}
    for part in split_policy_list(text):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key.isidentifier():
            raise InputError(f"policy '{spec}': expected name(param=value, ...), got {part!r}", where="--policies")
        try:
            params[key] = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            params[key] = value.strip()  # a bare word is a string
    return params


def resolve_policy(spec: str, kind: str) -> str:
    """The registered name of a `--policies` item of `kind` (see the module docstring); InputError if none."""
    discover()
    match = _SPEC.match(spec)
    if not match:
        raise InputError(f"policy '{spec}': expected a name, package.module:Class, or either with (param=value, ...)",
                         where="--policies")
    base, param_text = match.group(1), match.group(2)
    cls = policy_base._REGISTRY.get((kind, base))
    if cls is None and looks_like_import_path(base):
        obj = import_object(base, what="policy", where="--policies")
        if not (isinstance(obj, type) and issubclass(obj, Policy)):
            raise InputError(f"policy '{base}': not a policy (a subclass of schedulers.policy.Policy)", where="--policies")
        if obj.kind != kind:
            raise InputError(f"policy '{base}' is a {obj.kind} policy, this task needs a {kind} one", where="--policies")
        if not obj.name:
            raise InputError(f"policy '{base}': the class sets no `name`", where="--policies")
        registered = policy_base._REGISTRY.get((kind, obj.name))
        if registered is not None and registered is not obj:
            raise InputError(f"policy '{base}': the name '{obj.name}' is taken by {registered.__module__}."
                             f"{registered.__qualname__}", where="--policies")
        cls = policy_base._REGISTRY.setdefault((kind, obj.name), obj)
    if cls is None:
        raise InputError(f"unknown policy '{base}' (choose from {', '.join(policy_names(kind))}, or "
                         "package.module:Class)", where="--policies")
    if param_text is None:
        return cls.name
    params = _parse_params(param_text, spec)
    accepted = inspect.signature(cls.__init__).parameters
    set_by_task = getattr(cls, "task_settings", ())  # a cluster policy's cluster: the simulator's, from the task
    unknown = [k for k in params if k not in accepted and k not in set_by_task]
    if unknown:
        names = [p for p in accepted if p not in ("self", *set_by_task) and accepted[p].kind not in (
            inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)]
        raise InputError(f"policy '{cls.name}' has no parameter '{unknown[0]}' (it takes: {', '.join(names) or 'none'})",
                         where="--policies")
    label = f"{cls.name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    cluster = [k for k in params if k in set_by_task]
    if cluster:  # the simulator's, from the task's options: never a policy's setting
        raise _set_by_task(label, cluster[0], "--lease, --nodes, --cold-start")
    if (kind, label) not in policy_base._REGISTRY:
        init = cls.__init__

        def __init__(self, *args, **kwargs):
            taken = [k for k in params if k in kwargs]
            if taken:  # the task's value would silently win, under a label that names the user's
                raise _set_by_task(label, taken[0], "--machines, --seed")
            init(self, *args, **{**params, **kwargs})

        policy_base._REGISTRY[(kind, label)] = type(cls.__name__, (cls,), {"name": label, "__init__": __init__,
                                                                "__module__": cls.__module__,
                                                                "__qualname__": cls.__qualname__})
    return label


def _set_by_task(label: str, key: str, options: str) -> InputError:
    """The refusal of a setting `key` written in --policies that the task sets from its own `options`."""
    return InputError(f"policy '{label}': '{key}' is set by the task from its own options ({options}, …), "
                      "not in --policies", where="--policies")


def build_policy(cls: type[Policy], **kwargs) -> Policy:
    """`cls(**kwargs)`, where an exception is one line (exit 2) when it is the user's: raised by a
    plugin's constructor, or a built-in's refusal of a `(param=value)` setting given in --policies."""
    if is_plugin(cls):
        with user_code(f"policy '{cls.name}' ({cls.__module__}.{cls.__qualname__})"):
            return cls(**kwargs)
    try:
        return cls(**kwargs)
    except (ValueError, TypeError) as exc:
        if "(" not in cls.name:  # no setting of the user's: a bug of ours
            raise
        raise InputError(f"policy '{cls.name}': {exc}", where="--policies") from None
