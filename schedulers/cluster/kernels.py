"""The registry of the cluster simulator's kernels: each policy's decision and hooks
(`kernel(...)` registers them; `select`, `on_wait`, ... dispatch on the type of the kernel's own
state `p`, in a compiled loop by an overload on its numba type, schedulers.cluster.jitglue).

What a kernel decides (`select(s, p, at_round, now, chosen)`): which candidates run, placed with
`attempt` / `place_in_order` (schedulers.cluster.placement) in priority order onto the plan (at a
round) or the free GPUs (at a fill); `chosen` receives them in that order. Its hooks see jobs start
and stop waiting and running (`on_wait`, `on_unwait`, `on_hold`, `on_unhold`) and each engine
callback (`before_allocate`). A kernel's own state is a namedtuple its `setup` makes (`p`), passed
to every hook.

May import numpy, scipy (lazily), schedulers.jit and schedulers.cluster.queues.
"""

from __future__ import annotations

import inspect
import os
from collections import namedtuple

import numpy as np

from schedulers.cluster.queues import job_order_add, job_order_remove
from schedulers.jit import jitable

Kernel = namedtuple("Kernel", "name params state setup select on_wait on_unwait on_hold on_unhold before_allocate "
                               "one_event compilable preemptive clairvoyant")


_KERNELS: dict[type, Kernel] = {}  # by the kernel's params class and its state class
#: each kernel's source file and its modification time (ns) when the kernel was registered, that is
#: when its module was imported: schedulers.cluster.jitshared names a compiled kernel's cache entry by
#: that file's content, and refuses to when the file changed since (the process runs the code it
#: imported; cached under the new content, that code would be loaded for the new source later)
SOURCE_STAMPS: dict[type, tuple[str, int]] = {}
#: the hooks a kernel may give (`kernel(..., on_wait=...)`); a hook left out keeps the waiting jobs
#: in job order (`s.q.ws`) and does nothing else
OPTIONAL_HOOKS = {"on_wait": "_wait_in_job_order", "on_unwait": "_unwait_in_job_order", "on_hold": "_no_hook",
                  "on_unhold": "_no_hook", "before_allocate": "_no_time_hook"}


def kernel(name, params, state, *, setup, select, one_event=False, compilable=True, preemptive=None,
           clairvoyant=False, **hooks) -> Kernel:
    """Register a policy's kernel: `params` the namedtuple class of its settings (made by the policy
    class's `kernel_params`), `state` the namedtuple class its `setup(s, params)` returns, `select`
    its decision; `hooks`: any of OPTIONAL_HOOKS (`on_wait=...`); hooks left out keep the waiting
    jobs in job order (`s.q.ws`) and do nothing else.
    `compilable=False`: a kernel that calls into Python (schedulers.cluster.rule) runs only as Python;
    `clairvoyant=True`: a kernel that reads true sizes, given them as `setup(s, params, size)` (every
    other kernel's `setup(s, params)` and hooks see only the state, which holds none:
    schedulers.cluster.state); only a clairvoyant policy may run it (schedulers.cluster.rule.params_of);
    `preemptive=False`: a kernel written for a policy that never preempts (its jobs wait once);
    `one_event=True`: the loop hands the kernel's run one event at a time — each arrival, then each
    completion (in order of completion, then job), is an instant of its own with its own decision,
    where by default every event at one time is applied before one decision (the batch schedulers
    of HPC logs, docs/reproduce-rlscheduler.md, decide after each event)."""
    unknown = sorted(set(hooks) - set(OPTIONAL_HOOKS))
    if unknown:
        raise TypeError(f"kernel {name!r}: unknown hook(s) {', '.join(unknown)} (a kernel's hooks: "
                        f"{', '.join(OPTIONAL_HOOKS)})")
    chosen = {hook: jitable(hooks.get(hook) or globals()[default]) for hook, default in OPTIONAL_HOOKS.items()}
    made = Kernel(name=name, params=params, state=state, setup=jitable(setup), select=jitable(select),
                  one_event=jitable(_one_event if one_event else _all_events), compilable=compilable,
                  preemptive=preemptive, clairvoyant=bool(clairvoyant), **chosen)
    _KERNELS[params] = made
    _KERNELS[state] = made
    path = inspect.getsourcefile(select)
    if path is not None:
        SOURCE_STAMPS[params] = (path, os.stat(path).st_mtime_ns)
    return made


def setup(s, params, size):
    """The kernel's own state at time 0: its `setup(s, params)`, or `setup(s, params, size)` with the
    jobs' true sizes for a kernel registered clairvoyant (in a compiled loop, the same choice made by
    an overload on the type of `params`, schedulers.cluster.jitglue)."""
    made = _KERNELS[type(params)]
    if made.clairvoyant:
        return made.setup(s, params, size)
    return made.setup(s, params)


HOOKS = ("select", "on_wait", "on_unwait", "on_hold", "on_unhold", "before_allocate", "one_event")


def _hook(name: str):
    """The call of kernel hook `name` (`hook(s, p, ...)`): the hook of the kernel whose state `p` is
    (in a compiled loop, the same choice made by an overload on p's type: `_overloads`)."""
    def call(s, p, *args):
        return getattr(_KERNELS[type(p)], name)(s, p, *args)
    call.__name__ = call.__qualname__ = name
    return call


select, on_wait, on_unwait, on_hold, on_unhold, before_allocate, one_event = (_hook(name) for name in HOOKS)


def _all_events(s, p):
    return False


def _one_event(s, p):
    return True


def _no_hook(s, p, j):
    pass


def _no_time_hook(s, p, now):
    pass


def _wait_in_job_order(s, p, j, now):
    job_order_add(s, j)


def _unwait_in_job_order(s, p, j):
    job_order_remove(s, j)


def assignment(cost):
    """scipy's linear_sum_assignment(cost) (rows, columns); a compiled loop calls it in object mode,
    so that its choice among equal-cost matchings is the Python run's. (Imported here: scipy.optimize
    costs every command that lists the cluster policies a quarter of a second.)"""
    from scipy.optimize import linear_sum_assignment  # noqa: PLC0415

    rows, cols = linear_sum_assignment(cost)
    return np.asarray(rows, np.int64), np.asarray(cols, np.int64)
