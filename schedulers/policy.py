"""Policy base class, the Allocation a policy returns, and the registry of policies by name.

A policy owns only its decision (STYLE.md, after Gavel): at each event the engine calls
`allocate(view)` and applies the returned Allocation, which is a *change*: jobs moved into or out
of service groups, group rates, and an optional wake-up time. Keeping decisions incremental is what
lets processor-sharing policies run in O(log n) per event.

`resolve_policy(spec, kind)` is the one way a `--policies` item becomes a registered name: a
registered name, `package.module:Class` (a user's Policy subclass, found through the one plugin
route of atlas_data.plugins and registered on first use), either with constructor parameters in
parentheses — `spjf-aging(alpha=0.01)` is registered as its own name, so results say which
setting ran. Installed packages add policies through the `atlas_bench.plugins` entry-point group.
`guard(policy)` turns an exception inside a plugin policy into one line naming it (exit 2).
May import numpy, the standard library and atlas_data (errors, plugins) only.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import re
from typing import ClassVar

from atlas_data.errors import InputError
from atlas_data.plugins import import_object, is_plugin, load_entry_points, looks_like_import_path, user_code

IDLE = -1  # group id meaning "not in service"


class PolicyError(RuntimeError):
    """A policy broke the engine's rules (ran an unreleased job, exceeded capacity, ...)."""


class Allocation:
    """A change to the current allocation, applied by the engine after `allocate` returns."""

    __slots__ = ("moves", "rates", "wake")

    def __init__(self) -> None:
        self.moves: list[tuple[int, int]] = []
        self.rates: dict[int, float] = {}
        self.wake: float | None = None

    def assign(self, job: int, group: int) -> "Allocation":
        """Put `job` into service group `group` (IDLE to take it out of service)."""
        self.moves.append((job, group))
        return self

    def set_rate(self, group: int, rate: float) -> "Allocation":
        """Set a group's rate: its total rate if shared, else each member's rate."""
        self.rates[group] = rate
        return self

    def wake_at(self, time: float) -> "Allocation":
        """Ask to be called again at `time` even if nothing else happens."""
        self.wake = time if self.wake is None else min(self.wake, time)
        return self


class Policy:
    """Base class. Subclasses set `name`, and `needs_prediction` / `clairvoyant` when true."""

    name: ClassVar[str] = ""
    needs_prediction: ClassVar[bool] = False  # reads view.jobs.predicted; refused without p̂
    clairvoyant: ClassVar[bool] = False  # may read true sizes (view.jobs.size, view.remaining)
    kind: ClassVar[str] = "single"  # "single" (one machine), "parallel" (m machines), "cluster"
    description: ClassVar[str] = ""
    # The specialised loop that runs this built-in single-machine class with the same results as the
    # engine: a kind of schedulers.fastpath's loops. Read only from the class that sets it, so a
    # subclass runs on the engine unless fastpath finds it changes no decision; "" (default): the
    # engine always. (A built-in cluster class names its kernel by its own `kernel_params`.)
    fast_loop: ClassVar[str] = ""

    def reset(self, view) -> None:
        """Called once before the first event; build empty per-run state here."""

    def allocate(self, view) -> Allocation | None:  # pragma: no cover - abstract
        raise NotImplementedError


_REGISTRY: dict[tuple[str, str], type[Policy]] = {}  # (kind, name) -> class: one name space per kind
_LOOKUP_ORDER = ("single", "parallel", "cluster")  # get_policy(name) without a kind; listings of every kind
# The built-in policies of each kind in the order of every listing, default run and results table,
# whatever order their modules were imported in; plugin policies follow in registration order.
# tests/schedulers/test_registry_order.py checks that it names exactly the built-in policies.
BUILTIN_ORDER = {
    "single": ("fifo", "sjf", "spjf", "srpt", "sprpt", "pspjf", "edf", "edf-p", "rr", "prr", "las", "gittins", "serpt",
               "las-ref", "edf-p-ref"),
    "parallel": ("lpt", "spt", "random", "lppt", "sppt", "random-ref"),
    "cluster": ("fifo", "srtf-oracle", "yarn-cs", "tiresias-l", "themis", "gandiva-fair", "hived", "astraea",
                "astraea-p", "allox", "qssf", "easy-p"),
}


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make a policy available by its `name` within its `kind`.

    Names are unique per kind only: the cluster task has its own `fifo` beside the single-machine one.
    """
    if is_plugin(cls):
        # the built-in names first: a plugin taking one would otherwise register, and the built-in
        # module then fail to import (an internal error, naming no plugin)
        _load_builtin()
    key = (cls.kind, cls.name)
    old = _REGISTRY.get(key)
    if old is not None and (old.__module__, old.__qualname__) == (cls.__module__, cls.__qualname__):
        old = None  # the same class again: its module was imported anew (reloaded, or a plugin file)
    if not cls.name:
        raise ValueError(f"policy class {cls.__qualname__} sets no `name`")
    if old is not None:
        raise ValueError(f"policy name {cls.name!r} is already registered for kind {cls.kind!r} by "
                         f"{old.__module__}.{old.__qualname__}")
    _REGISTRY[key] = cls
    return cls


def task_kind(task: str | None, objective: str | None = None) -> str:
    """The kind of policy a task runs: `cluster` for fairness, `parallel` for the makespan objective
    (m machines), `single` for every other scheduling objective."""
    if task == "fairness":
        return "cluster"
    return "parallel" if objective == "makespan" else "single"


def policy_names(kind: str | None = None) -> list[str]:
    """Registered names of one kind: the built-in ones in BUILTIN_ORDER, then plugins in registration
    order; every kind (single, parallel, cluster), without duplicates, if None.

    A `(param=value)` setting resolved earlier in the process (`resolve_policy`) is registered under
    its label, but it is not a policy of its own: it is left out, so that it neither joins a later
    run's default policies nor the names an error suggests."""
    _load_builtin()
    names = []
    for k in ((kind,) if kind is not None else _LOOKUP_ORDER):
        registered = [n for (k2, n) in _REGISTRY if k2 == k and "(" not in n]
        builtin = [n for n in BUILTIN_ORDER.get(k, ()) if (k, n) in _REGISTRY]
        names += builtin + [n for n in registered if n not in builtin]
    return list(dict.fromkeys(names))


def builtin_classes(kind: str) -> list[type[Policy]]:
    """The built-in policy classes of `kind` in BUILTIN_ORDER (not plugins, not `(param=value)`
    settings): what the specialised loops derive the classes they run from (`fast_loop`)."""
    _load_builtin()
    return [cls for name in BUILTIN_ORDER.get(kind, ()) if (cls := _REGISTRY.get((kind, name))) is not None
            and not is_plugin(cls)]


def get_policy(name: str, kind: str | None = None) -> type[Policy]:
    """The policy class called `name`: of `kind` if given, else the first of single, parallel, cluster."""
    _load_builtin()
    kinds = (kind,) if kind is not None else _LOOKUP_ORDER
    for k in kinds:
        cls = _REGISTRY.get((k, name))
        if cls is not None:
            return cls
    raise KeyError(name)


def _load_builtin() -> None:
    # Imported lazily so that `schedulers.policy` itself has no dependency on the policy modules.
    import schedulers.policies  # noqa: F401

    load_entry_points()


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
    _load_builtin()
    match = _SPEC.match(spec)
    if not match:
        raise InputError(f"policy '{spec}': expected a name, package.module:Class, or either with (param=value, ...)",
                         where="--policies")
    base, param_text = match.group(1), match.group(2)
    cls = _REGISTRY.get((kind, base))
    if cls is None and looks_like_import_path(base):
        obj = import_object(base, what="policy", where="--policies")
        if not (isinstance(obj, type) and issubclass(obj, Policy)):
            raise InputError(f"policy '{base}': not a policy (a subclass of schedulers.policy.Policy)", where="--policies")
        if obj.kind != kind:
            raise InputError(f"policy '{base}' is a {obj.kind} policy, this task needs a {kind} one", where="--policies")
        if not obj.name:
            raise InputError(f"policy '{base}': the class sets no `name`", where="--policies")
        registered = _REGISTRY.get((kind, obj.name))
        if registered is not None and registered is not obj:
            raise InputError(f"policy '{base}': the name '{obj.name}' is taken by {registered.__module__}."
                             f"{registered.__qualname__}", where="--policies")
        cls = _REGISTRY.setdefault((kind, obj.name), obj)
    if cls is None:
        raise InputError(f"unknown policy '{base}' (choose from {', '.join(policy_names(kind))}, or "
                         "package.module:Class)", where="--policies")
    if param_text is None:
        return cls.name
    params = _parse_params(param_text, spec)
    accepted = inspect.signature(cls.__init__).parameters
    unknown = [k for k in params if k not in accepted]
    if unknown:
        names = [p for p in accepted if p != "self" and accepted[p].kind not in (inspect.Parameter.VAR_KEYWORD,
                                                                                 inspect.Parameter.VAR_POSITIONAL)]
        raise InputError(f"policy '{cls.name}' has no parameter '{unknown[0]}' (it takes: {', '.join(names) or 'none'})",
                         where="--policies")
    label = f"{cls.name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    if (kind, label) not in _REGISTRY:
        init = cls.__init__

        def __init__(self, *args, **kwargs):
            taken = [k for k in params if k in kwargs]
            if taken:  # the task's value would silently win, under a label that names the user's
                raise InputError(f"policy '{label}': '{taken[0]}' is set by the task from its own options "
                                 "(--lease, --machines, --seed, …), not in --policies", where="--policies")
            init(self, *args, **{**params, **kwargs})

        _REGISTRY[(kind, label)] = type(cls.__name__, (cls,), {"name": label, "__init__": __init__,
                                                                "__module__": cls.__module__,
                                                                "__qualname__": cls.__qualname__})
    return label


class PluginPolicyError(PolicyError, InputError):
    """A plugin policy broke the engine's rules: still a PolicyError, reported like bad input (exit 2)."""

    def __init__(self, message: str):
        InputError.__init__(self, message)  # path, where and problem, as every InputError has


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


@contextlib.contextmanager
def guard(policy):
    """A context in which an exception raised by a plugin policy is one line naming it (exit 2)."""
    if not is_plugin(type(policy)):
        yield
        return
    cls = type(policy)
    label = f"policy '{getattr(policy, 'name', '') or cls.__name__}' ({cls.__module__}.{cls.__qualname__})"
    try:
        yield
    except PolicyError as exc:
        raise PluginPolicyError(f"{label} broke the engine's rules: {exc}") from exc
    except BaseException:  # whatever the plugin raised (sys.exit too): one line naming it; a Ctrl-C stays one
        with user_code(label):
            raise

