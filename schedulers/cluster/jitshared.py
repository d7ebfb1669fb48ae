"""The cluster simulator compiled: once for every kernel, the kernels' hooks called through function
pointers. Three kinds of compiled functions, each cached on disk by numba under a digest of its
sources (a change to a kernel's source recompiles only that kernel's own functions):
- `begin(jobs, cluster, cfg)`: the run's state and the engine's work (shared by every kernel),
  handed to Python as structref proxies (schedulers.cluster.jitglue);
- per kernel, `setup(s, params, size)` (its own state, returned as an opaque reference, the same
  numba type for every kernel) and one trampoline per hook (`hook(s, q, ...)`, which turns the
  opaque reference back into the kernel's state and calls the kernel's hook);
- `events(s, work, ks, hooks, one, max_events)`: schedulers.cluster.loop.run_events, the source the
  Python run runs, shared by every kernel, whose hook calls go to the trampolines' addresses
  (`hooks`, a tuple of int64; 0 for a hook that does nothing, which is not called; DEFAULT_HOOK for
  a default hook that keeps the waiting jobs in job order, compiled into the shared code and called
  directly).

Compiling each kernel's whole loop instead (the hooks linked into `decide`, `allocate` and the
loop, each level optimised and turned into machine code again for every kernel) took about twice
the CPU (docs/performance.md, "Compiling"). A hook call is copied into its caller and returns a
hook's error as a marked raise (`_raise`), so that the call costs no reference counts: unmarked, it
cost the kernels with the cheapest events about 0.1 µs per event. Every other call between the
simulator's compiled functions returns a callee's error the same way while they are compiled
(`_mark_errors`).

May import numpy, atlas_data.errors, schedulers.jit and the simulator's modules; numba only when a
run is compiled.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import threading
from collections import namedtuple
from pathlib import Path

from atlas_data.errors import InputError
from schedulers import jit
from schedulers.cluster import jitglue, kernels
from schedulers.cluster.kernels import _KERNELS, Kernel
from schedulers.cluster.loop import SIMULATOR_MODULES, run_events
from schedulers.cluster.state import new_state, new_work

#: the hooks called through a pointer, in the order of `KernelHandle.hooks`, with their arguments
#: after (s, p): numba types made in `_extra_types`
POINTER_HOOKS = ("select", "on_wait", "on_unwait", "on_hold", "on_unhold", "before_allocate")
#: what the shared code takes as a kernel's state in a compiled run: its opaque state, its hooks'
#: addresses and whether it decides after each event
KernelHandle = namedtuple("KernelHandle", "ks hooks one")
#: the hooks that do nothing (a kernel's hook left out, kernels.OPTIONAL_HOOKS): address 0, not called
_NO_OPS = (kernels._no_hook, kernels._no_time_hook)
#: the default hooks that do something (keep the waiting jobs in job order), compiled into the shared
#: code and called directly for a kernel that keeps them: their address is DEFAULT_HOOK
_DEFAULT_BODIES = {name: getattr(kernels, default) for name, default in kernels.OPTIONAL_HOOKS.items()
                   if getattr(kernels, default) not in _NO_OPS}
DEFAULT_HOOK = 1


class SourceChangedError(InputError):
    """A simulator or kernel source file changed after the process imported it (one line, exit 2)."""


_lock = threading.Lock()
_ready = False
_marking = threading.local()  # .on: this thread compiles the simulator's functions (`_compiled`)
_KEYS: dict[str, tuple] = {}  # trampoline key -> (kernel, params numba type, size numba type)
_made: dict = {}  # compiled functions by (kind, ...)


#: the files every compiled function depends on, and their modification times (ns) when this module
#: was imported (the simulator's modules just before it; schedulers.revision's file, imported lazily,
#: is stamped here too; jit.SOURCES: schedulers.jit and jitlink, which shape every compiled loop)
_SHARED_FILES = (*SIMULATOR_MODULES, Path(__file__), *map(Path, jit.SOURCES), Path(jitglue.__file__))
_REVISION_FILE = Path(jit.__file__).with_name("revision.py")
_STAMPS = {str(path): os.stat(path).st_mtime_ns for path in (*_SHARED_FILES, _REVISION_FILE)}


def _digest(paths) -> str:
    """The cache key of compiled code: a digest of its source files' content, read now. A file that
    changed since this process imported it is refused: the process compiles the code it imported, and
    that code, cached under the new content, would be loaded later for a source it is not."""
    digest = hashlib.sha256()
    for path in paths:
        stamp = _STAMPS.get(str(path))
        if stamp is not None and os.stat(path).st_mtime_ns != stamp:
            raise SourceChangedError(f"{path} changed after this process imported it: its compiled loop would be "
                                     "cached under the new source; run the command again")
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def _shared_digest() -> str:
    return _digest(_SHARED_FILES)


def _kernel_digest(made: Kernel) -> str:
    path, stamp = kernels.SOURCE_STAMPS.get(made.params) or (inspect.getsourcefile(made.select), None)
    if stamp is not None:
        _STAMPS.setdefault(str(path), stamp)
    return _digest((*_SHARED_FILES, _REVISION_FILE, Path(path)))


def _extra_types():
    from numba.core import types  # noqa: PLC0415
    return {"select": (types.boolean, types.float64, types.List(types.int64, reflected=False)),
            "on_wait": (types.int64, types.float64), "on_unwait": (types.int64,), "on_hold": (types.int64,),
            "on_unhold": (types.int64,), "before_allocate": (types.float64,)}


def _register() -> None:
    """The opaque kernel state type, its casts, the pointer calls and the hooks' overloads for a
    KernelHandle (once per process; after jitglue's overloads)."""
    global _ready, KS, to_opaque, from_opaque, call_hook, borrow
    if _ready:
        return
    jitglue.register()
    borrow = jitglue.borrowed()
    from numba.core import cgutils, errors, types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    KS = jitglue.opaque_type()
    extra = _extra_types()

    def _same_reference(context, builder, fromty, toty, value):
        meminfo = cgutils.create_struct_proxy(fromty)(context, builder, value=value).meminfo
        out = cgutils.create_struct_proxy(toty)(context, builder)
        out.meminfo = builder.bitcast(meminfo, out.meminfo.type)
        result = out._getvalue()
        context.nrt.incref(builder, toty, result)
        return result

    @intrinsic
    def to_opaque_(typingctx, p):
        def codegen(context, builder, signature, args):
            return _same_reference(context, builder, p, KS, args[0])
        return KS(p), codegen

    @intrinsic(prefer_literal=True)
    def from_opaque_(typingctx, s, q, key):
        if not isinstance(key, types.StringLiteral):
            raise errors.TypingError("from_opaque: the key must be a literal")
        made, params_type, size_type = _KEYS[key.literal_value]
        setup_type = typingctx.resolve_value_type(kernels.setup)
        target = typingctx.resolve_function_type(setup_type, (s, params_type, size_type), {}).return_type

        def codegen(context, builder, signature, args):
            return _same_reference(context, builder, KS, target, args[1])
        return target(s, q, key), codegen

    @intrinsic(prefer_literal=True)
    def call_hook_(typingctx, index, s, p, args):
        if not isinstance(index, types.IntegerLiteral):
            raise errors.TypingError("call_hook: the hook's index must be a literal")
        declared = extra[POINTER_HOOKS[index.literal_value]]
        if len(args.types) != len(declared):
            raise errors.TypingError(f"call_hook: {len(args.types)} arguments for {declared}")
        for got, want in zip(args.types, declared):
            if typingctx.can_convert(got, want) is None:
                raise errors.TypingError(f"call_hook: {got} is not {want}")
        argtypes = (s, KS, *declared)

        def codegen(context, builder, signature, llargs):
            _, s_v, p_v, args_v = llargs
            i = index.literal_value
            address = builder.extract_value(builder.extract_value(p_v, p.fields.index("hooks")), i)
            values = [context.cast(builder, builder.extract_value(args_v, k), args.types[k], declared[k])
                      for k in range(len(declared))]
            default = _DEFAULT_BODIES.get(POINTER_HOOKS[i])
            if default is not None:
                with builder.if_then(builder.icmp_unsigned("==", address, address.type(DEFAULT_HOOK))):
                    sig = types.none(s, p, *declared)
                    body = context.compile_subroutine(builder, default, sig)
                    status, _ = context.call_internal_no_propagate(builder, body.fndesc, sig, [s_v, p_v, *values])
                    with cgutils.if_unlikely(builder, status.is_error):
                        _raise(context, builder, status)
            called = builder.icmp_unsigned("!=", address, address.type(0))
            if default is not None:
                called = builder.and_(called, builder.icmp_unsigned("!=", address, address.type(DEFAULT_HOOK)))
            with builder.if_then(called):
                values = [s_v, builder.extract_value(p_v, p.fields.index("ks")), *values]
                fnty = context.call_conv.get_function_type(types.none, argtypes)
                pointer = builder.inttoptr(address, fnty.as_pointer())
                status, _ = context.call_conv.call_function(builder, pointer, types.none, argtypes, values)
                with cgutils.if_unlikely(builder, status.is_error):
                    _raise(context, builder, status)
            return context.get_dummy_value()
        return types.none(index, s, p, args), codegen

    to_opaque, from_opaque, call_hook = to_opaque_, from_opaque_, call_hook_
    _mark_errors()
    for i, name in enumerate(POINTER_HOOKS):
        jitglue.handle_hook(name, _pointer_impl(i, len(extra[name])))
    jitglue.handle_hook("one_event", lambda: (lambda s, p: p.one))
    _ready = True


def _raise(context, builder, status):
    """The caller returns the hook's error as its own, marked as numba marks a `raise` (the excinfo
    stored with `numba_exception_output`): llvmlite's reference-count pruning then takes the path
    for an exit that raises, and removes the reference counts the caller takes of its arguments
    around the call (unmarked, four atomic increments and four decrements at every hook call)."""
    from llvmlite import ir  # noqa: PLC0415

    store = builder.store(status.excinfoptr, context.call_conv._get_excinfo_argument(builder.function))
    store.set_metadata("numba_exception_output", builder.module.add_metadata([ir.IntType(1)(1)]))
    builder.ret(status.code)


def _mark_errors() -> None:
    """While this module compiles the simulator's functions (`_compiled`), a call that returns an
    error returns it as its caller's own as `_raise` does, marked as a raise (outside a `try`, which
    the simulator has none of; inside one, as numba does). numba leaves such an exit unmarked:
    llvmlite's reference-count pruning then keeps the increments a function takes of its arguments
    and of the arrays it reads, and their decrements, around any call in their range (atomic
    operations, most of the cost of ASTRAEA's picks). An error ends the run either way, and numba
    drops no reference on that exit, marked or not. The pruning assumes, as numba's own does, that
    a callee never drops the last reference to an array its caller still reads: the simulator
    replaces a tenant's array in a list (queues.room, ASTRAEA's capacity and grown_rows) only after
    its last read of the old one. Installed once per process, on numba's CPU call convention; other
    code compiles as before."""
    from numba.core import callconv  # noqa: PLC0415

    plain = callconv.CPUCallConv.return_status_propagate

    def return_status_propagate(self, builder, status):
        if not getattr(_marking, "on", False):
            return plain(self, builder, status)
        in_try = self.check_try_status(builder).in_try
        with builder.if_else(in_try) as (caught, raised):
            with caught:
                builder.store(status.excinfoptr, self._get_excinfo_argument(builder.function))
            with raised:
                _raise(self.context, builder, status)
        return None

    callconv.CPUCallConv.return_status_propagate = return_status_propagate


def _pointer_impl(i: int, n: int):
    """The overload of hook number `i` (POINTER_HOOKS, `n` arguments after (s, p)) for a
    KernelHandle, copied into its caller (numba's inliner takes no `*args`: one version per count
    of arguments): `call_hook`, which calls the hook's default body (address DEFAULT_HOOK: compiled
    into the shared code) or the trampoline at its address (none at 0)."""
    def make():
        if n == 1:
            def impl(s, p, a):
                call_hook(i, s, p, (a,))
        elif n == 2:
            def impl(s, p, a, b):
                call_hook(i, s, p, (a, b))
        else:
            def impl(s, p, a, b, c):
                call_hook(i, s, p, (a, b, c))
        return impl
    return make


def _trampoline(hook, key: str, sources: str):
    """The compiled `hook(s, q, ...)` of one kernel: its opaque state q turned back into its own.
    Compiled for (s, q, the hook's arguments as one StarArgTuple): numba passes a tuple's members
    as arguments of their own, so that its machine code takes the arguments `call_hook` passes.
    The hook is given both states borrowed (`borrow`: the caller holds them), so that it and its
    callees count no reference to them."""
    def trampoline(s, q, *args):
        sources  # noqa: B018 (the cache key)
        hook(borrow(s), borrow(from_opaque(s, q, key)), *args)
    return trampoline


def _make_setup(sources: str):
    def setup(s, params, size):
        sources  # noqa: B018
        return to_opaque(kernels.setup(s, params, size))
    return setup


def _make_begin(sources: str):
    def begin(jobs, cluster, cfg):
        sources  # noqa: B018
        s = new_state(jobs, cluster, cfg)
        return s, new_work(jobs.size)
    return begin


def _make_events(sources: str):
    def events(s, work, ks, hooks, one, max_events):
        sources  # noqa: B018 (the run's state, held by the caller, passed on borrowed, as in _trampoline)
        return run_events(borrow(s), borrow(work), KernelHandle(ks, hooks, one), max_events)
    return events


def _named(function, name: str):
    function.__qualname__ = function.__qualname__ + "_" + re.sub(r"\W", "_", name)
    return function


def _shared(kind: str):
    function = _made.get(kind)
    if function is None:
        maker = {"begin": _make_begin, "events": _make_events}[kind]
        function = _made[kind] = jit.njit(maker(_shared_digest()), nogil=False)
    return function


def _compiled(function, signature):
    """`function`'s compiled overload for `signature`, compiled (or loaded from numba's cache) first
    when this process has not made it yet."""
    if signature not in function.overloads:
        _marking.on = True
        try:
            function.compile(signature)
        finally:
            _marking.on = False
    return function.overloads[signature]


def _begin(args):
    """The run's state and work (`begin`, compiled or loaded first)."""
    import numba  # noqa: PLC0415

    with _lock:
        _register()
        begin = _shared("begin")
        _compiled(begin, tuple(numba.typeof(a) for a in (args.jobs, args.cluster, args.cfg)))
    return jit.call(begin, args.jobs, args.cluster, args.cfg)  # its signals deferred while it boxes the state


def _kernel(args, s):
    """(the kernel's opaque state, its hooks' addresses, whether it decides after each event) for
    the run of state `s`: its setup and trampolines compiled or loaded first."""
    import numba  # noqa: PLC0415
    from numba.core import types  # noqa: PLC0415

    made = _KERNELS[type(args.params)]
    size = args.jobs.size
    s_type, params_type, size_type = numba.typeof(s), numba.typeof(args.params), numba.typeof(size)
    with _lock:
        kind = f"{made.params.__module__}.{made.params.__qualname__}"
        sources = _kernel_digest(made)
        key = f"{kind}:{params_type}:{size_type}"
        _KEYS[key] = (made, params_type, size_type)
        setup = _made.get(("setup", kind))
        if setup is None:
            setup = _made["setup", kind] = jit.njit(_named(_make_setup(sources), kind), nogil=False)
        _compiled(setup, (s_type, params_type, size_type))
        addresses = [0] * len(POINTER_HOOKS)
        extra = _extra_types()
        for i, name in enumerate(POINTER_HOOKS):
            if getattr(made, name) in _NO_OPS:
                continue  # not called
            if getattr(made, name) is _DEFAULT_BODIES.get(name):
                addresses[i] = DEFAULT_HOOK
                continue
            trampoline = _made.get((name, key))
            if trampoline is None:
                trampoline = _made[name, key] = jit.njit(_named(_trampoline(getattr(made, name), key, sources),
                                                                f"{kind}_{name}"))
            result = _compiled(trampoline, (s_type, KS, types.StarArgTuple.from_types(extra[name])))
            addresses[i] = result.library.get_pointer_to_function(result.fndesc.llvm_func_name)
    return jit.call(setup, s, args.params, size), tuple(addresses), bool(made.one_event is kernels._one_event)


def _events(s, work, args):
    """The shared `events`, compiled or loaded for the run of state `s`."""
    import numba  # noqa: PLC0415
    from numba.core import types  # noqa: PLC0415

    with _lock:
        events = _shared("events")
        _compiled(events, (numba.typeof(s), numba.typeof(work), KS, types.UniTuple(types.int64, len(POINTER_HOOKS)),
                           types.boolean, numba.typeof(args.max_events)))
    return events


def run(args, started=lambda: None):
    """The Outcome of the compiled run on `args` (schedulers.cluster.simulator.LoopArguments);
    `started()` is called once every function is compiled or loaded, before the run's events."""
    s, work = _begin(args)
    ks, addresses, one = _kernel(args, s)
    events = _events(s, work, args)
    started()
    return jit.call(events, s, work, ks, addresses, one, args.max_events)


def compile_kernel(args) -> None:
    """Compile (or load) what is the kernel's own for a run on `args`: its setup and hooks."""
    s, _ = _begin(args)
    _kernel(args, s)


def compile_shared(args) -> None:
    """Compile (or load) what every kernel's run on `args`' types shares: `begin` and `events`."""
    s, work = _begin(args)
    _events(s, work, args)
