"""What a policy is: the Policy base class, the Allocation it returns, the registry it registers into,
and the errors of a policy that breaks the engine's rules. The policy modules import this module only;
finding them (discovery), listing and resolving names is schedulers.policy, one layer up, so that
the registry that imports every policy module is imported by none of them.

A policy owns only its decision (STYLE.md, after Gavel): at each event the engine calls
`allocate(view)` and applies the returned Allocation, which is a *change*: jobs moved into or out
of service groups, group rates, and an optional wake-up time. Keeping decisions incremental is what
lets processor-sharing policies run in O(log n) per event.

`register` is how a policy module registers its classes, by `name` within their `kind`; a class may
declare its `listing_rank`, its place among the built-in policies of its kind in every listing
(schedulers.policy).
`guard(policy)` turns an exception inside a plugin policy into one line naming it (exit 2).
May import the standard library and atlas_data (errors, plugins) only.
"""

from __future__ import annotations

import contextlib
import math
from typing import ClassVar

from atlas_data.errors import InputError
from atlas_data.plugins import is_plugin, user_code

IDLE = -1  # group id meaning "not in service"


class PolicyError(RuntimeError):
    """A policy broke the engine's rules (ran an unreleased job, exceeded capacity, ...)."""


class PluginPolicyError(PolicyError, InputError):
    """A plugin policy broke the engine's rules: still a PolicyError, reported like bad input (exit 2)."""

    def __init__(self, message: str):
        InputError.__init__(self, message)  # path, where and problem, as every InputError has


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
    # The place of a built-in policy in every listing, default run and results table of its kind: by
    # listing_rank, then name (a class that declares none comes after the ranked ones, by name). Plugins
    # follow the built-in policies in registration order, whatever their listing_rank.
    listing_rank: ClassVar[float] = math.inf
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


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make a policy available by its `name` within its `kind`.

    Names are unique per kind only: the cluster task has its own `fifo` beside the single-machine one.
    (A plugin registers through schedulers.policy.register, which discovers the built-in policies
    first, so that a plugin taking a built-in name is the one refused.)
    """
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
