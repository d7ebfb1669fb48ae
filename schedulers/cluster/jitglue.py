"""The numba glue of the cluster simulator: the state's groups as numba structrefs (their fields read
borrowed, without reference counts: `_define_fields`), the kernel hooks
dispatched on the type of the kernel's state (or, for the compiled run's KernelHandle, called through
a pointer: schedulers.cluster.jitshared), the calls into Python (scipy's assignment) in object mode.

May import numpy, schedulers.jit and the simulator's modules (state, kernels); numba only when a
run is compiled.
"""

from __future__ import annotations

import re

from schedulers import jit
from schedulers.cluster import kernels
from schedulers.cluster.kernels import _KERNELS, HOOKS, assignment, setup
from schedulers.cluster.state import group, kept

_registered = False


def __getattr__(name):
    """The structref classes, made on first use: the compiled run hands its state to Python between
    its compiled functions, so numba's cache index holds their types, pickled by name
    (`schedulers.cluster.jitglue._Ref_...`); a process that loads them from the cache finds them
    here before anything is compiled. Not made at import: they import numba, which every command
    that lists the policies would then pay for."""
    if name in ("_Proxy", "KernelStateRef", "Borrowed"):
        _boxing_classes()
        return globals()[name]
    if name.startswith("_Ref_"):
        register()
        from schedulers.cluster import state  # noqa: PLC0415
        for cls in (state.Job, state.Config, state.Clock, state.Nodes, state.Ledgers, state.Plan, state.Queues,
                    state.Segments, state.State, state.Work, *_KERNELS):
            _reference_class(cls)
        if name in globals():
            return globals()[name]
    raise AttributeError(name)


def _boxing_classes() -> None:
    """`_Proxy` (a structref handed to Python) and `KernelStateRef` (the type of a kernel's state as
    the compiled run's shared code sees it), defined here once so that they are importable by name."""
    if "_Proxy" in globals():
        return
    from numba.core import types  # noqa: PLC0415
    from numba.experimental import structref  # noqa: PLC0415

    class _Proxy(structref.StructRefProxy):
        """A state group handed to Python between the compiled steps of a run."""

    class KernelStateRef(types.StructRef):
        """A kernel's state as the compiled run's shared code sees it (no fields)."""

    class Borrowed(types.Type):
        """A group read through another one in compiled code (`_define_fields`): its meminfo pointer,
        whose reference is not counted; its fields read as the group's own."""

        def __init__(self, owned):
            self.owned = owned
            self.origin = getattr(owned, "origin", None)  # a kernel state's hooks are found by it
            super().__init__(name=f"Borrowed({owned.name})")

    _Proxy.__qualname__ = "_Proxy"
    KernelStateRef.__qualname__ = "KernelStateRef"
    Borrowed.__qualname__ = "Borrowed"
    globals().update(_Proxy=_Proxy, KernelStateRef=KernelStateRef, Borrowed=Borrowed)
    _define_borrowed(Borrowed)


def _overloads() -> None:
    """What numba needs to compile the loop: every `jitable` function registered, the kernel hooks
    dispatched on the type of the kernel's state, and the calls into Python in object mode."""
    import numba  # noqa: PLC0415
    from numba.extending import overload  # noqa: PLC0415

    jit.register_jitables()
    fill = _fill_intrinsic()

    _kept_overload(overload)

    @overload(group)
    def _group(record):
        return _make_reference(record.instance_class, record.types, fill)

    @overload(setup)
    def _setup(s, params, size):
        made = _KERNELS[params.instance_class]
        impl = made.setup
        if made.clairvoyant:
            return lambda s, params, size: impl(s, params, size)
        return lambda s, params, size: impl(s, params)

    for name in HOOKS:
        _overload_hook(overload, name)

    @overload(assignment)
    def _assignment(cost):
        def impl(cost):
            with numba.objmode(rows="int64[:]", cols="int64[:]"):
                rows, cols = assignment(cost)
            return rows, cols
        return impl


_REFERENCE_TYPES: dict[type, type] = {}


def _reference_class(cls):
    """The structref class of the state's group class `cls` (made once)."""
    _make_reference(cls, None, None)
    return _REFERENCE_TYPES[cls]


def _make_reference(cls, field_types, fill):
    """The compiled `group(record)` of a `cls` record (a namedtuple of `field_types`): a numba
    structref with the same fields, of a structref type made once per class (`origin`: the class),
    allocated empty and filled from the record by `fill` (`_fill_intrinsic`): no source is generated."""
    from numba.core import types  # noqa: PLC0415
    from numba.experimental import structref  # noqa: PLC0415

    ref_class = _REFERENCE_TYPES.get(cls)
    if ref_class is None:
        def preprocess_fields(self, fields):
            return tuple((name, types.unliteral(typ)) for name, typ in fields)

        name = "_Ref_" + re.sub(r"\W", "_", f"{cls.__module__}.{cls.__qualname__}")
        ref_class = type(name, (types.StructRef,), {"preprocess_fields": preprocess_fields, "origin": cls,
                                                     "__module__": __name__, "__qualname__": name})
        _define_fields(ref_class)
        globals()[name] = ref_class  # importable: a boxed reference's type is pickled by name
        structref.define_boxing(ref_class, __getattr__("_Proxy"))
        _REFERENCE_TYPES[cls] = ref_class
    if field_types is None:
        return None
    ref_type = ref_class(list(zip(cls._fields, field_types)))
    new = structref.new

    def impl(record):
        ref = new(ref_type)
        fill(ref, record)
        return ref
    return impl


def _payload(context, builder, ref_type, value):
    """The fields of structref `value` (of `ref_type`, or a `Borrowed` one), behind its meminfo."""
    from numba.core import cgutils  # noqa: PLC0415

    if isinstance(ref_type, __getattr__("Borrowed")):  # its value is the group's meminfo
        ref_type, meminfo = ref_type.owned, value
    else:
        meminfo = cgutils.create_struct_proxy(ref_type)(context, builder, value=value).meminfo
    payload = ref_type.get_data_type()
    pointer = builder.bitcast(context.nrt.meminfo_data(builder, meminfo), context.get_value_type(payload).as_pointer())
    return cgutils.create_struct_proxy(payload)(context, builder, ref=pointer)


def _define_fields(ref_class) -> None:
    """A group's fields read in compiled code (`record.name`), as numba's `structref.register` defines
    them but for arrays and groups, which are *borrowed*: an array without its meminfo and a group as
    a `Borrowed` one, so that neither the read nor any copy of it counts a reference (numba's read
    takes one, an atomic operation, and llvmlite's pruning leaves most of them in the simulator's
    branching code: about half of ASTRAEA's compiled run, docs/performance.md). A borrowed value is
    valid while its group lives, and a group's fields are never replaced (they are a namedtuple's in
    the Python run; no setattr is defined here, so compiled code cannot either): every run's groups
    live until its end, so only what outlives them, the run's Outcome handed to Python, takes its
    arrays with `state.kept`."""
    from numba.core.datamodel import default_manager, models  # noqa: PLC0415

    default_manager.register(ref_class, models.StructRefModel)
    _define_reads(ref_class)


def _define_reads(type_class) -> None:
    """The field reads (`record.name`, `_read`) of the groups of numba type class `type_class` (a
    group's own class, or `Borrowed`)."""
    from numba.core.typing.templates import AttributeTemplate  # noqa: PLC0415
    from numba.extending import infer_getattr, lower_getattr_generic  # noqa: PLC0415

    @infer_getattr
    class FieldAttribute(AttributeTemplate):
        key = type_class

        def generic_resolve(self, typ, attr):
            return _read_type(_owned(typ).field_dict.get(attr))

    @lower_getattr_generic(type_class)
    def read_field(context, builder, typ, value, attr):
        return _read(context, builder, typ, value, attr)


def _owned(typ):
    """The group type whose fields `typ` reads: itself, or the group a `Borrowed` one stands for."""
    return typ.owned if isinstance(typ, __getattr__("Borrowed")) else typ


def _read_type(field_type):
    """The type a read of a field of `field_type` gives (a group's: its `Borrowed` type)."""
    from numba.core import types  # noqa: PLC0415

    if isinstance(field_type, types.StructRef) and not isinstance(field_type, __getattr__("KernelStateRef")):
        return __getattr__("Borrowed")(field_type)
    return field_type


def _read(context, builder, typ, value, attr):
    """Field `attr` of group `value` (of type `typ`), read as `_define_fields` says."""
    from numba.core import cgutils, imputils, types  # noqa: PLC0415

    field = getattr(_payload(context, builder, typ, value), attr)
    field_type = _owned(typ).field_dict[attr]
    read_type = _read_type(field_type)
    if read_type is not field_type:  # a group: its meminfo, no reference taken
        return cgutils.create_struct_proxy(field_type)(context, builder, value=field).meminfo
    if not isinstance(field_type, types.Array):
        return imputils.impl_ret_borrowed(context, builder, field_type, field)
    array = context.make_array(field_type)(context, builder, value=field)
    array.meminfo = cgutils.get_null_value(array.meminfo.type)
    array.parent = cgutils.get_null_value(array.parent.type)
    return array._getvalue()


def _define_borrowed(Borrowed) -> None:
    """The model and field reads of `Borrowed` groups (once per process)."""
    from numba.core.datamodel import models  # noqa: PLC0415
    from numba.extending import register_model  # noqa: PLC0415

    register_model(Borrowed)(models.OpaqueModel)  # the group's meminfo pointer, never counted
    _define_reads(Borrowed)


def borrowed():
    """`borrow(group)` in compiled code: the group as a `Borrowed` one (the same meminfo, whose
    reference its holder keeps), so that the functions it is passed to count no reference to it."""
    from numba.core import cgutils, errors, types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    Borrowed = __getattr__("Borrowed")

    @intrinsic
    def borrow(typingctx, group):
        if not isinstance(group, types.StructRef) or isinstance(group, __getattr__("KernelStateRef")):
            raise errors.TypingError(f"borrow: {group} is not a group")

        def codegen(context, builder, signature, args):
            return cgutils.create_struct_proxy(group)(context, builder, value=args[0]).meminfo
        return Borrowed(group)(group), codegen
    return borrow


def _kept_overload(overload) -> None:
    """`state.kept(record, name)` in compiled code: the field as numba reads it, with a reference."""
    from numba.core import errors, imputils, types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    @intrinsic(prefer_literal=True)
    def read_kept(typingctx, record, name):
        owned = _owned(record)
        if not isinstance(name, types.StringLiteral) or name.literal_value not in getattr(owned, "field_dict", {}):
            raise errors.TypingError("kept: a group and the literal name of one of its fields")
        field_type = owned.field_dict[name.literal_value]

        def codegen(context, builder, signature, args):
            field = getattr(_payload(context, builder, record, args[0]), name.literal_value)
            return imputils.impl_ret_borrowed(context, builder, field_type, field)
        return field_type(record, name), codegen

    @overload(kept, prefer_literal=True)
    def _kept(record, name):
        return lambda record, name: read_kept(record, name)


def _fill_intrinsic():
    """`fill(ref, record)` in compiled code: each field of the new (zero-filled) structref `ref` set
    to the record's field of the same place, as `ref.name = record.name` does (the value cast to the
    field's type and its reference taken), for any record and structref of the same fields."""
    from numba.core import types  # noqa: PLC0415
    from numba.extending import intrinsic  # noqa: PLC0415

    @intrinsic
    def fill(typingctx, ref, record):
        def codegen(context, builder, signature, args):
            data = _payload(context, builder, ref, args[0])
            for i, (name, field_type) in enumerate(ref.field_dict.items()):
                value = context.cast(builder, builder.extract_value(args[1], i), record.types[i], field_type)
                context.nrt.incref(builder, field_type, value)
                setattr(data, name, value)  # the field held nothing before (no reference to give back)
            return context.get_dummy_value()
        return types.void(ref, record), codegen
    return fill


_HANDLE_IMPLS: dict = {}  # hook name -> its overload's implementation for a KernelHandle


def handle_hook(name: str, make_impl) -> None:
    """Hook `name` called on a KernelHandle (schedulers.cluster.jitshared) by `make_impl()`."""
    _HANDLE_IMPLS[name] = make_impl


def register() -> None:
    """The overloads, once per process."""
    global _registered
    if not _registered:
        _overloads()
        _registered = True


_OPAQUE = []


def opaque_type():
    """The numba type of a kernel's state as the compiled run's shared code sees it (no fields)."""
    if not _OPAQUE:
        from numba.core import types  # noqa: PLC0415
        from numba.experimental import structref  # noqa: PLC0415

        opaque = __getattr__("KernelStateRef")
        structref.register(opaque)
        structref.define_boxing(opaque, __getattr__("_Proxy"))
        _OPAQUE.append(opaque([]))
    return _OPAQUE[0]


def _overload_hook(overload, name: str) -> None:
    """A compiled call of kernel hook `name` is the hook of the kernel the state's numba type stands
    for: the hook's own function is the implementation (`strict=False`: its parameters are named as
    its kernel names them), not a wrapper calling it, which compiled one more library per hook and
    kernel (its LLVM module, the whole hook, optimized and turned into machine code once more).
    On the compiled run's KernelHandle the implementation (`handle_hook`) is copied into its caller
    (`inline="always"`): its call of a hook through a pointer is then the caller's own code."""
    def typer(s, p, *args):
        if not _is_handle(p):
            return getattr(_KERNELS[p.origin], name)
        return None

    def handle_typer(s, p, *args):
        if _is_handle(p):
            return _HANDLE_IMPLS[name]()
        return None
    overload(getattr(kernels, name), strict=False)(typer)
    overload(getattr(kernels, name), strict=False, inline="always")(handle_typer)


def _is_handle(p) -> bool:
    return getattr(p, "instance_class", None) is not None and p.instance_class.__name__ == "KernelHandle"


def compile_notice(name: str) -> str:
    return (f"compiling the cluster simulator for {name} on this machine (once after installing, "
            "under a minute; cached for later runs)")


def compilable(params) -> bool:
    """Whether the kernel of `params` can run compiled (a Python rule's cannot)."""
    return _KERNELS[type(params)].compilable
