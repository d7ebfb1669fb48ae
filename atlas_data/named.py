"""Named embedded datasets, built deterministically from the synthetic generator and cached.

`default` is the embedded default dataset (30,000 synthetic jobs, seed 0; `build.ensure_default_dataset`).
`paper-scale` is the same generator at 120,000 jobs (seed 0): its test split has 11,399 jobs,
enough for the ATLAS paper's 10,000-job total-completion window and its 5,000-job max-stretch
sample. The generator's span is fixed (≈ 61 days), so more jobs means a proportionally higher
arrival rate: the single-machine load Σp / span grows with the size (docs/reproduce-atlas.md).

Both are built once into the user cache (`$ATLAS_BENCH_CACHE` or `~/.cache/atlas-bench`) in a
folder named `<name>-<package version>-<pipeline revision>`, exactly like the default one.
`resolve_dataset(text)` turns a `--data` value into a folder: a name builds/caches, anything
else is a path. May import atlas_data.* only.
"""

from __future__ import annotations

from pathlib import Path

from atlas_data.build import DEFAULT_JOBS, DEFAULT_SEED, default_dataset_dir, ensure_cached_dataset

NAMED_DATASETS = {
    "default": {"jobs": DEFAULT_JOBS, "seed": DEFAULT_SEED},
    "paper-scale": {"jobs": 120_000, "seed": 0},
}


def named_dataset_dir(name: str) -> Path:
    base = default_dataset_dir()  # <cache>/default-<version>-<revision>
    return base if name == "default" else base.with_name(base.name.replace("default-", f"{name}-", 1))


def ensure_named_dataset(name: str, quiet: bool = True) -> Path:
    """Build the named dataset once into the cache; return its folder."""
    spec = NAMED_DATASETS[name]
    return ensure_cached_dataset(named_dataset_dir(name), name, jobs=spec["jobs"], seed=spec["seed"], quiet=quiet)


def resolve_dataset(text: str | Path, quiet: bool = True) -> Path:
    """A `--data` value as a folder: a name of NAMED_DATASETS (built on first use) or a path."""
    if str(text) in NAMED_DATASETS and not Path(str(text)).exists():
        return ensure_named_dataset(str(text), quiet=quiet)
    return Path(text)
