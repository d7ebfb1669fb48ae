"""schedulers.jitlink: while a loop made by `jit.njit` compiles, the functions it calls are linked into
it without machine code of their own, and it runs as before — an object-mode call inside a callee
(`jit.poll`) finds its environment; other compiles are left as numba makes them. (That the compiled
loops give the Python loops' results, bit for bit, is tested in test_fastpath.py and
test_cluster_compiled.py.)"""

import pytest

from schedulers import jit, jitlink

numba = pytest.importorskip("numba")


@jit.jitable
def halve_and_poll(x):
    jit.poll()  # an object-mode call: it reads the callee's environment
    return x // 2


@jit.jitable
def third_and_poll(x):
    jit.poll()
    return x // 3


def loop(n):
    total = 0
    for _ in range(n):
        total += 21 + halve_and_poll(9)
    return total


def plain(n):
    return third_and_poll(n) + halve_and_poll(n)


def _compiled(function, *args):
    """(function(*args), {Python function: the dispatcher numba compiled it with} while it ran)."""
    from numba.core import event  # noqa: PLC0415

    seen = {}

    class Record(event.Listener):
        def on_start(self, ev):
            seen[ev.data["dispatcher"].py_func] = ev.data["dispatcher"]

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", Record()):
        value = function(*args)
    return value, seen


def _library(dispatcher):
    (result,) = dispatcher.overloads.values()
    return result


def test_a_loops_callees_are_linked_into_it_and_only_it_is_machine_code():
    jit.register_jitables()
    jitlink.install()
    compiled_loop = numba.njit(loop)  # made as jit.njit makes it, not cached: compiled here
    setattr(compiled_loop, jitlink.LOOP, True)
    value, seen = _compiled(compiled_loop, 10)
    assert value == 10 * (21 + 4)
    callee = _library(seen[halve_and_poll])
    assert callee.library.atlas_bench_link_only
    assert not callee.library.codegen._engine.is_symbol_defined(callee.fndesc.llvm_func_name)
    own = _library(seen[loop])
    assert not getattr(own.library, "atlas_bench_link_only", False)
    assert own.library.codegen._engine.is_symbol_defined(own.fndesc.llvm_func_name)
    # another function compiled outside a loop: its new callee is compiled as numba does, and the
    # link-only callee it shares with the loop finds its environment
    value, seen = _compiled(numba.njit(plain), 9)
    assert value == 3 + 4
    assert halve_and_poll not in seen
    assert not getattr(_library(seen[third_and_poll]).library, "atlas_bench_link_only", False)
    assert not getattr(_library(seen[plain]).library, "atlas_bench_link_only", False)
