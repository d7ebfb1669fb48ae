"""atlas_data.portable.log1p: the C library's log1p for every value, the same bits on every CPU.

numpy's own log1p takes a vectorised path on CPUs with AVX-512 whose results differ in the last
bit from the C library's; the dataset's log features and label went through it, so the default
dataset's content fingerprint (the name leaderboard entries carry) changed from one machine to
another (tests/leaderboards/test_builtin_entries.py failed on an AVX-512 machine)."""

import math
import subprocess
import sys

import numpy as np

from atlas_data.portable import log1p


def test_every_value_is_math_log1p_bit_for_bit():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.lognormal(3.0, 3.0, 20_000), rng.uniform(-0.999, 2.0, 5_000), rng.integers(0, 4096, 5_000)])
    got = log1p(x)
    assert got.dtype == np.float64 and got.shape == x.shape
    want = np.array([math.log1p(v) for v in x.tolist()])
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_edge_values_are_numpys():
    x = np.array([np.nan, -1.0, -2.0, np.inf, -0.0, 0.0, 1e-300])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.log1p(x)
    got = log1p(x)
    assert np.array_equal(got, want, equal_nan=True)
    assert math.copysign(1.0, got[4]) == -1.0  # -0.0 stays -0.0
    assert log1p(600.0) == math.log1p(600.0) and log1p([[1.0, 3.0]]).shape == (1, 2)


def test_features_do_not_depend_on_the_cpus_vector_units():
    """The same resource features with numpy's AVX-512 loops switched off (a no-op on a CPU without them)."""
    code = ("import numpy as np, pandas as pd; from atlas_data.features import resource_features;"
            "rng = np.random.default_rng(1); n = 3000;"
            "jobs = pd.DataFrame({'cpu': rng.integers(1, 64, n) * 100.0, 'gpu': rng.integers(0, 9, n) * 50.0,"
            "'mem': rng.lognormal(3, 1, n), 'n_instances': rng.integers(1, 9, n).astype(float),"
            "'n_tasks': rng.integers(1, 4, n).astype(float), 'max_task_instances': rng.integers(1, 9, n).astype(float)});"
            "import sys; sys.stdout.write(resource_features(jobs).to_numpy(np.float64).tobytes().hex())")
    outputs = []
    for disabled in ("", "X86_V4 AVX512_ICL AVX512_SKX AVX512F"):
        env = {"NPY_DISABLE_CPU_FEATURES": disabled} if disabled else {}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**_env(), **env}, check=True)
        outputs.append(run.stdout)
    assert outputs[0] and outputs[0] == outputs[1]


def _env() -> dict:
    import os

    return {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
