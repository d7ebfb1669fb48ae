"""Policy base class, the Allocation a policy returns, and the registry of policies by name.

A policy owns only its decision (STYLE.md, after Gavel): at each event the engine calls
`allocate(view)` and applies the returned Allocation, which is a *change*: jobs moved into or out
of service groups, group rates, and an optional wake-up time. Keeping decisions incremental is what
lets processor-sharing policies run in O(log n) per event. May import numpy only.
"""

from __future__ import annotations

from typing import ClassVar

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

    def reset(self, view) -> None:
        """Called once before the first event; build empty per-run state here."""

    def allocate(self, view) -> Allocation | None:  # pragma: no cover - abstract
        raise NotImplementedError


_REGISTRY: dict[tuple[str, str], type[Policy]] = {}  # (kind, name) -> class: one registry per kind
_LOOKUP_ORDER = ("single", "parallel", "cluster")  # get_policy(name) without a kind


def register(cls: type[Policy]) -> type[Policy]:
    """Class decorator: make a policy available by its `name` within its `kind`.

    Names are unique per kind only: the cluster task has its own `fifo` beside the single-machine one.
    """
    key = (cls.kind, cls.name)
    if not cls.name or key in _REGISTRY:
        raise ValueError(f"policy name {cls.name!r} empty or already registered for kind {cls.kind!r}")
    _REGISTRY[key] = cls
    return cls


def policy_names(kind: str | None = None) -> list[str]:
    """Registered names of one kind (registration order); all kinds, without duplicates, if None."""
    _load_builtin()
    names = [n for (k, n) in _REGISTRY if kind is None or k == kind]
    return list(dict.fromkeys(names))


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

