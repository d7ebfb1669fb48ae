"""One set of OpenBLAS kernels on every x86-64 machine, so a learned p̂ is the same everywhere.

numpy and scipy ship OpenBLAS built for many CPUs at once and pick its kernels when the library
loads: Haswell's on one AVX-512 machine, SkylakeX's on another. Those kernels sum in different
orders, so the Stage-2 meta-model's non-negative least squares and products
(`predictors.stage2`) came out a few ulps apart, and three cells of the demo's learned-p̂ table (PRR, LPPT, SPPT on
elasticflow:cluster05) moved in their third decimal between two machines with the same package
versions. Setting OpenBLAS's own `OPENBLAS_CORETYPE=SkylakeX` here reproduced the other machine's
cells exactly.

So the packages ask OpenBLAS for its Haswell kernels (AVX2 and FMA, which every x86-64 server CPU
since 2013 has) before numpy is first imported: `atlas_data`, `predictors`, `schedulers`,
`leaderboards`, `benchmark` and the test suite import this module first. The variable is read
once, when numpy or scipy loads OpenBLAS; a value the user set is kept, and nothing is set on a CPU
without AVX2 and FMA (forcing those kernels there would stop the process) or on another
architecture (ARM's OpenBLAS has kernels of its own, and results there may differ in the last
digits). `openblas_note()` says when the kernels in use are not the pinned ones: numpy imported
before these packages, in a notebook for instance.

Imports nothing but the standard library: it must run before numpy does.
"""

from __future__ import annotations

import os
import platform
import sys

CORETYPE = "Haswell"
VARIABLE = "OPENBLAS_CORETYPE"


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The first CPU's feature flags from Linux's cpuinfo (empty where it cannot be read)."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        pass
    return frozenset()


def chosen_coretype(machine: str, flags: frozenset[str]) -> str | None:
    """The OpenBLAS core type to ask for on this CPU, or None to leave OpenBLAS its own choice."""
    if machine.lower() not in ("x86_64", "amd64"):
        return None
    return CORETYPE if {"avx2", "fma"} <= flags else None


def pin_openblas(environ=os.environ) -> str | None:
    """Set OPENBLAS_CORETYPE unless it is set, numpy is loaded already, or the CPU lacks the
    kernels' instructions; return the value in force (None: OpenBLAS chooses)."""
    if VARIABLE in environ or "numpy" in sys.modules:
        return environ.get(VARIABLE)
    coretype = chosen_coretype(platform.machine(), cpu_flags())
    if coretype is not None:
        environ[VARIABLE] = coretype
    return coretype


def loaded_coretypes() -> list[str]:
    """The core types of the OpenBLAS libraries loaded in this process (threadpoolctl, which
    scikit-learn depends on, reads them from the libraries)."""
    from threadpoolctl import threadpool_info

    return sorted({info.get("architecture") or "?" for info in threadpool_info() if info.get("internal_api") == "openblas"})


def openblas_note() -> str | None:
    """One line for the user when OpenBLAS runs kernels other than the pinned ones, else None."""
    wanted = chosen_coretype(platform.machine(), cpu_flags())
    if wanted is None or os.environ.get(VARIABLE, wanted) != wanted:
        return None  # nothing pinned here, or the user chose the kernels
    others = [core for core in loaded_coretypes() if core.lower() != wanted.lower()]
    if not others:
        return None
    return (f"note: OpenBLAS runs its {', '.join(others)} kernels, not {wanted} (numpy was imported before "
            f"ATLAS-Bench's packages): a learned p̂ may differ from other machines' in its last digits; "
            f"set {VARIABLE}={wanted} before starting Python to match them")


pin_openblas()
