"""Reproducible installs and results: the lock `make install` uses, the versions every results.json
records, and LightGBM configured for deterministic fits (docs/install.md)."""

from __future__ import annotations

import json
import platform
import re
import tomllib
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from benchmark.cli import main

ROOT = Path(__file__).resolve().parents[2]
SHAPING = ("numpy", "pandas", "scikit-learn", "lightgbm", "scipy", "numba", "ortools", "pyarrow")


def _pins() -> dict[str, str]:
    pins = {}
    for number, line in enumerate((ROOT / "constraints.txt").read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line.strip())
        assert match, f"constraints.txt line {number} is not an exact pin: {line!r}"
        name = canonicalize_name(match[1])
        assert name not in pins, f"constraints.txt pins {name} twice"
        pins[name] = match[2]
    return pins


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def test_results_json_records_the_installed_versions(tmp_path):
    jobs = tmp_path / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c"], "submit_time": [0, 0, 1], "duration": [3, 1, 2]}).to_csv(jobs, index=False)
    out = tmp_path / "out"
    assert main(["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs),
                 "--policies", "fifo,srpt", "--output", str(out), "--quiet", "--no-mlflow"]) == 0
    versions = json.loads((out / "results.json").read_text())["versions"]
    assert list(versions) == ["python", *SHAPING]
    assert versions["python"] == platform.python_version()
    assert versions["numpy"] == np.__version__ and versions["pandas"] == pd.__version__
    for name in SHAPING:
        assert versions[name] == _installed(name), name
    assert versions["lightgbm"] is not None and versions["scikit-learn"] is not None


def test_the_lock_pins_every_direct_dependency_at_the_installed_version():
    """A stale constraints.txt (a package upgraded in the venv, a dependency added to pyproject.toml
    without `make lock`) fails here."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    makefile = (ROOT / "Makefile").read_text()
    extras = re.search(r"^EXTRAS := (\S+)$", makefile, re.M)[1].split(",")
    assert re.search(r"pip install .*-c constraints\.txt -e '\.\[\$\(EXTRAS\)\]'", makefile)  # make install uses the lock
    direct = [Requirement(r) for r in project["dependencies"]]
    for extra in extras:
        direct += [Requirement(r) for r in project["optional-dependencies"][extra]]
    pins = _pins()
    assert "atlas-bench" not in pins  # the project itself is installed from the checkout
    stale = []
    for req in direct:
        name = canonicalize_name(req.name)
        pinned, installed = pins.get(name), _installed(name)
        if pinned is None or pinned != installed:
            stale.append(f"{name}: pinned {pinned}, installed {installed}")
        elif not req.specifier.contains(pinned, prereleases=True):
            stale.append(f"{name}: pinned {pinned} outside pyproject's {req.specifier}")
    assert not stale, "constraints.txt is stale (run `make lock`): " + "; ".join(stale)
    # the rest of the lock too, where installed (a marker may leave a pinned package out on another Python)
    drift = [f"{n}: pinned {v}, installed {_installed(n)}" for n, v in pins.items() if _installed(n) not in (None, v)]
    assert not drift, "constraints.txt is stale (run `make lock`): " + "; ".join(drift)


def _frame(n: int, rng) -> tuple[pd.DataFrame, np.ndarray]:
    x = rng.uniform(0, 3, n)
    X = pd.DataFrame({"x": x, "z": rng.normal(size=n), "submit_time": np.arange(n, dtype=float),
                      "user": "u", "group": "g", "is_recurrent": False})
    return X, np.sin(3 * x) * 2 + 5  # not linear in x: the meta-model's trees beat the linear stack


def _assert_deterministic(model, seed: int) -> None:
    params = model.get_params()
    assert params["deterministic"] is True and params["force_row_wise"] is True, params
    assert params["random_state"] == seed and isinstance(params["n_jobs"], int) and params["n_jobs"] >= 1


def test_every_lightgbm_model_is_configured_deterministic():
    from predictors.stage1 import LGBMLearner, TwoStageLearner
    from predictors.stage2 import MetaStacker

    X, y = _frame(300, np.random.default_rng(0))
    single = LGBMLearner(n_estimators=5, holdout_fraction=0, seed=7).fit(X, y)
    _assert_deterministic(single.model_, 7)
    banded = TwoStageLearner(n_estimators=5, holdout_fraction=0, seed=3).fit(X, y)
    for model in [banded.classifier_, *banded.experts_]:
        _assert_deterministic(model, 3)
    meta = MetaStacker(n_estimators=20, min_child_samples=5, seed=5).fit(X[["x", "z"]], y)
    assert meta.model_ is not None  # the trees were kept, so the refitted model is checked
    _assert_deterministic(meta.model_, 5)
