"""Public API for the rest of the project: test-split predictions of a named method, cached.

`predict_test(ds_dir, method)` -> DataFrame `job_id`, `p_hat` (seconds, > 0, not floored —
flooring to 1 s is the scheduler's rule), plus `lo`, `hi` for interval methods. Cached as
DS/predictions/<method>-seed<seed>.parquet; the dataset fingerprint, the method settings and the
method's definition (`predictors.definition`: the code and parameters of every component, the
package version) are stored in the parquet metadata, so a rebuilt dataset or an edited method —
a changed plugin module, another estimator parameter — refits instead of reusing stale p̂.

May import pyarrow, pandas and predictors.*.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd

from predictors.data import SplitData
from predictors.methods import MethodConfig, check_method_name, method_names, run_method

__all__ = ["predict_test", "method_names", "cache_path", "file_stem", "remember"]

_META_KEY = b"atlas_predictions"


def file_stem(method: str) -> str:
    """A method name made safe for a file name (import paths contain ':' and '/')."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", method)


def cache_path(ds_dir: Path | str, method: str, seed: int = 0) -> Path:
    return Path(ds_dir) / "predictions" / f"{file_stem(method)}-seed{seed}.parquet"


def remember(ds_dir: Path | str, method: str, frame: pd.DataFrame, *, seed: int, fingerprint: str | None) -> None:
    """Cache test predictions fitted elsewhere (the prediction task) so predict_test reuses them."""
    config = MethodConfig(seed=seed)
    card = _card(Path(ds_dir))
    _write_cache(cache_path(ds_dir, method, seed), frame,
                 _cache_key(fingerprint, method, seed, config, card.get("features") or ()))


def _read_cache(path: Path, key: dict) -> pd.DataFrame | None:
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
        if json.loads(meta.get(_META_KEY, b"{}")) != key:
            return None
        return pd.read_parquet(path)
    except (OSError, ValueError):
        return None


def _write_cache(path: Path, frame: pd.DataFrame, key: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata({**(table.schema.metadata or {}), _META_KEY: json.dumps(key).encode()})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new one


def _card(ds_dir: Path) -> dict:
    try:
        card = json.loads((ds_dir / "dataset.json").read_text())
        return card if isinstance(card, dict) else {}
    except (OSError, ValueError):
        return {}


def _cache_key(fingerprint, method: str, seed: int, config: MethodConfig, features) -> dict:
    from predictors.definition import method_definition

    return {"fingerprint": fingerprint, "method": method, "seed": seed, "n_estimators": config.n_estimators,
            "definition": method_definition(method, tuple(features), config)}


def predict_test(
    ds_dir: Path | str,
    method: str,
    *,
    seed: int = 0,
    cache: bool = True,
    quiet: bool = True,
    n_estimators: int | None = None,
) -> pd.DataFrame:
    """Predictions of `method` for exactly the test split of the dataset in `ds_dir`."""
    check_method_name(method)
    ds_dir = Path(ds_dir)
    config = MethodConfig(seed=seed, **({"n_estimators": n_estimators} if n_estimators else {}))
    path = cache_path(ds_dir, method, seed)
    if cache and path.is_file():
        # A cache hit needs only the card (fingerprint, feature names), not the (possibly large) parquet.
        card = _card(ds_dir)
        cached = _read_cache(path, _cache_key(card.get("fingerprint"), method, seed, config, card.get("features") or ()))
        if cached is not None:
            return cached
    split, card = SplitData.from_folder(ds_dir)
    key = _cache_key(card.get("fingerprint"), method, seed, config, split.features)
    if not quiet:
        import sys

        sys.stderr.write(f"[predictors] fitting {method} on {ds_dir} (seed {seed})\n")
    frame = run_method(split, method, config).to_frame()
    if cache:
        _write_cache(path, frame, key)
    return frame
