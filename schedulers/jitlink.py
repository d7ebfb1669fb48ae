"""How numba turns a compiled loop's callees into machine code: once, inside the loop.

numba compiles every function a loop calls (a `jitable` function, one of numba's own overloads) as a
code library of its own, and finalizes each library as it is made: it optimizes the library's
module (the function with its callees linked in) and turns it into machine code. A caller then
links in a copy of the callee's optimized module, and is optimized and turned into machine code in
its turn, callees included. A function deep in the cluster simulator was thus optimized and
compiled to machine code once per level above it, about half of the simulator's compile CPU; yet
none of these libraries' own machine code ever runs (they have no entry point from Python: numba
compiles them without one), only their copies inside the loop.

While a loop made by schedulers.jit.njit compiles (`LOOP`: the mark on its dispatcher), a library
without an entry point from Python is made link-only: its functions are optimized one by one (numba's
function passes, as before), and it is linked into its callers as it is, neither optimized as a module
nor turned into machine code. The loop's own library, the one numba caches, is optimized as one
module with every callee in it (the same passes as before, once) and is the only one turned into
machine code. The environments of the functions linked into it (what an object-mode call reads) are
set in it, as numba does when it loads a loop from its cache. The loop performs the same operations
(no fast-math: LLVM's optimizations keep every floating-point result), so its runs are the same,
bit for bit.

Installed once per process (`install`), on numba's JIT code libraries; other compiles in the process
are finalized as numba does. A numba without these internals compiles every library as before.
May import threading, and numba (only when a loop is compiled).
"""

from __future__ import annotations

import threading

#: the attribute schedulers.jit.njit sets on the dispatchers of the loops it makes
LOOP = "atlas_bench_loop"

_scope = threading.local()  # .depth: the loops made by `njit` this thread is compiling (nested)
_installed = False


def _compiling_loop() -> bool:
    return getattr(_scope, "depth", 0) > 0


def install() -> None:
    """Make the callees of the loops compiled from now on in this process link-only (once)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from numba.core import codegen, event, typed_passes  # noqa: PLC0415
        from numba.core.environment import lookup_environment  # noqa: PLC0415

        library_class, lowering = codegen.JITCodeLibrary, typed_passes.BaseNativeLowering
        plain_lowering, plain_set_env = lowering.run_pass, codegen.JITCPUCodegen.set_env
        plain_optimize, plain_finalize = library_class._optimize_final_module, library_class._finalize_final_module
        library_class._finalize_dynamic_globals, library_class._verify_declare_only_symbols  # noqa: B018 (used below)
    except (ImportError, AttributeError):
        return  # compiled as numba does

    class Scope(event.Listener):
        def on_start(self, ev):
            if getattr(ev.data["dispatcher"], LOOP, False):
                _scope.depth = getattr(_scope, "depth", 0) + 1

        def on_end(self, ev):
            if getattr(ev.data["dispatcher"], LOOP, False):
                _scope.depth -= 1

    def run_pass(self, state):
        if _compiling_loop() and state.flags.no_cpython_wrapper:
            if state.library is None:  # as numba's lowering makes it
                state.library = state.targetctx.codegen().create_library(state.func_id.func_qualname)
                state.library.enable_object_caching()
            state.library.atlas_bench_link_only = True
        return plain_lowering(self, state)

    def optimize_final_module(self):
        if not getattr(self, "atlas_bench_link_only", False):
            plain_optimize(self)

    def finalize_final_module(self):
        if getattr(self, "atlas_bench_link_only", False):
            self._finalize_dynamic_globals()
            self._verify_declare_only_symbols()
            self._finalized = True
            return
        plain_finalize(self)
        for variable in self._final_module.global_variables:
            env = lookup_environment(variable.name)
            if env is not None:
                self._codegen.set_env(variable.name, env)

    def set_env(self, env_name, env):
        if self._engine.get_global_value_address(env_name):  # none in a link-only library
            plain_set_env(self, env_name, env)

    event.register("numba:compile", Scope())
    lowering.run_pass = run_pass
    library_class._optimize_final_module = optimize_final_module
    library_class._finalize_final_module = finalize_final_module
    codegen.JITCPUCodegen.set_env = set_env
