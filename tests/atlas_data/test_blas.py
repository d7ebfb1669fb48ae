"""OpenBLAS's kernels are pinned before numpy loads, so a learned p̂ is the same on every x86-64 CPU
with AVX2 and FMA (atlas_data/blas.py): OpenBLAS's own choice, Haswell's kernels on one machine
and SkylakeX's on another, gave three cells of the demo's learned-p̂ table 0.001–0.009 apart."""

import os
import platform
import subprocess
import sys
from pathlib import Path

from atlas_data.blas import CORETYPE, VARIABLE, chosen_coretype, cpu_flags, pin_openblas

ROOT = Path(__file__).resolve().parents[2]


def _python(code: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if k != VARIABLE}
    environ.update(env)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environ, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip() + "\n" + done.stderr.strip()


def test_the_core_type_follows_the_cpu(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f\n")
    flags = cpu_flags(str(info))
    assert {"avx2", "fma", "avx512f"} <= flags
    assert chosen_coretype("x86_64", flags) == CORETYPE == "Haswell"
    assert chosen_coretype("AMD64", flags) == "Haswell"
    assert chosen_coretype("x86_64", frozenset({"avx", "sse2"})) is None  # the kernels would not run there
    assert chosen_coretype("aarch64", flags) is None
    assert cpu_flags(str(tmp_path / "absent")) == frozenset()


def test_a_users_choice_and_a_loaded_numpy_are_left_alone():
    assert pin_openblas({VARIABLE: "Zen"}) == "Zen"
    environ = {}
    assert "numpy" in sys.modules  # this process loaded numpy long ago: setting the variable now would change nothing
    assert pin_openblas(environ) is None and environ == {}


def test_the_command_line_runs_the_pinned_kernels():
    """The entry point's package pins the kernels before anything imports numpy; where the CPU lacks
    AVX2 or FMA nothing is pinned and OpenBLAS keeps its own choice."""
    out = _python("import benchmark.cli, os, numpy, scipy.linalg\n"
                  "from atlas_data.blas import loaded_coretypes\n"
                  "print(os.environ.get('OPENBLAS_CORETYPE'), loaded_coretypes())")
    wanted = chosen_coretype(platform.machine(), cpu_flags())
    if wanted is None:
        assert out.startswith("None ")
    else:
        assert out.splitlines()[0] == f"{wanted} ['{wanted}']"  # numpy's and scipy's OpenBLAS both


def test_a_fit_says_when_numpy_came_first_with_other_kernels():
    """numpy loaded before the packages (here with Sandybridge's kernels, then the variable removed as
    if never set): the first fit's note names the kernels and how to match the published numbers."""
    code = ("import os\nos.environ['OPENBLAS_CORETYPE'] = 'Sandybridge'\nimport numpy\n"
            "del os.environ['OPENBLAS_CORETYPE']\n"
            "from atlas_data.blas import openblas_note, loaded_coretypes\n"
            "print(loaded_coretypes()); print(openblas_note())")
    lines = _python(code).splitlines()
    assert lines[0] == "['Sandybridge']"
    if chosen_coretype(platform.machine(), cpu_flags()) == "Haswell":
        assert lines[1] == ("note: OpenBLAS runs its Sandybridge kernels, not Haswell (numpy was imported before "
                            "ATLAS-Bench's packages): a learned p̂ may differ from other machines' in its last digits; "
                            "set OPENBLAS_CORETYPE=Haswell before starting Python to match them")
    else:
        assert lines[1] == "None"
    assert _python("from atlas_data.blas import openblas_note\nprint(openblas_note())").splitlines()[0] == "None"
