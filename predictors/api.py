"""Public API for the rest of the project: test-split predictions of a named method, cached.

`predict_test(ds_dir, method)` -> DataFrame `job_id`, `p_hat` (seconds, > 0, not floored —
flooring to 1 s is the scheduler's rule), `log_sd` (the predicted spread σ of ln p around ln p̂,
calibrated on validation: `Prediction.to_frame(spread=True)`), plus `lo`, `hi` for interval methods. Cached as
DS/predictions/<method>-seed<seed>.parquet; the dataset fingerprint, the method settings and the
method's definition (`predictors.definition`: the code and parameters of every component, the
package version) are stored in the parquet metadata, so a rebuilt dataset or an edited method —
a changed plugin module, another estimator parameter — refits instead of reusing stale p̂.
`fit_or_load(ds_dir, method)` is the same lookup returning a `CachedFit`: the frame, the fit's
own seconds and Stage-2 diagnostics (stored beside the key) and whether it came from the cache —
the prediction task scores through it, so it reuses a fit exactly when the scheduling task would.

May import pyarrow, pandas and predictors.*.
"""

from __future__ import annotations

import functools
import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from predictors.data import SplitData
from predictors.methods import MethodConfig, check_method_name, method_names, run_method

__all__ = ["predict_test", "fit_or_load", "CachedFit", "method_names", "cache_path", "file_stem", "remember"]

_META_KEY = b"atlas_predictions"
_FIT_KEY = b"atlas_fit"  # fit seconds and Stage-2 diagnostics: what a reused fit still reports


@dataclass(frozen=True)
class CachedFit:
    """Test predictions of one method and what their fit cost; `cached` when no fit ran now."""

    frame: pd.DataFrame
    fit_seconds: float = float("nan")
    predict_seconds: float = float("nan")
    info: dict = field(default_factory=dict)
    cached: bool = False


def file_stem(method: str) -> str:
    """A method name made safe for a file name (import paths contain ':' and '/')."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", method)


def cache_path(ds_dir: Path | str, method: str, seed: int = 0) -> Path:
    return Path(ds_dir) / "predictions" / f"{file_stem(method)}-seed{seed}.parquet"


def remember(ds_dir: Path | str, method: str, frame: pd.DataFrame, *, seed: int, fingerprint: str | None,
             fit: dict | None = None) -> None:
    """Cache test predictions fitted elsewhere so predict_test reuses them (`fit`: seconds, info)."""
    config = MethodConfig(seed=seed)
    card = _card(Path(ds_dir))
    _write_cache(cache_path(ds_dir, method, seed), frame,
                 _cache_key(fingerprint, method, seed, config, card.get("features") or ()), fit)


def _read_cache(path: Path, key: dict) -> CachedFit | None:
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
        if json.loads(meta.get(_META_KEY, b"{}")) != key:
            return None
        fit = json.loads(meta.get(_FIT_KEY, b"{}"))
        return CachedFit(pd.read_parquet(path), float(fit.get("fit_seconds", float("nan"))),
                         float(fit.get("predict_seconds", float("nan"))), dict(fit.get("info") or {}), cached=True)
    except (OSError, ValueError):
        return None


def _write_cache(path: Path, frame: pd.DataFrame, key: dict, fit: dict | None = None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = {**(table.schema.metadata or {}), _META_KEY: json.dumps(key).encode()}
    if fit:
        meta[_FIT_KEY] = json.dumps(fit, default=float).encode()
    table = table.replace_schema_metadata(meta)
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


@functools.cache
def _note_openblas_once() -> None:
    """Before the first fit of a process: say so when OpenBLAS runs kernels other than the pinned ones
    (atlas_data/blas.py), whose sums move a fitted p̂ in its last digits."""
    from atlas_data.blas import openblas_note

    note = openblas_note()
    if note:
        sys.stderr.write(note + "\n")


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
    return fit_or_load(ds_dir, method, seed=seed, cache=cache, quiet=quiet, n_estimators=n_estimators).frame


def fit_or_load(
    ds_dir: Path | str,
    method: str,
    *,
    seed: int = 0,
    cache: bool = True,
    quiet: bool = True,
    n_estimators: int | None = None,
    split: SplitData | None = None,
) -> CachedFit:
    """`predict_test` with what the fit cost: reused from the cache when its key matches, else fitted
    now (on `split` when the caller already loaded the dataset) and cached."""
    check_method_name(method)
    ds_dir = Path(ds_dir)
    config = MethodConfig(seed=seed, **({"n_estimators": n_estimators} if n_estimators else {}))
    path = cache_path(ds_dir, method, seed)
    on_disk = _card(ds_dir) if cache and path.is_file() else {}
    if on_disk.get("fingerprint"):
        # A cache hit needs only the card (fingerprint, feature names), not the (possibly large) parquet.
        # A card without a fingerprint says nothing of the data: loading computes it (below).
        cached = _read_cache(path, _cache_key(on_disk["fingerprint"], method, seed, config, on_disk.get("features") or ()))
        if cached is not None:
            return cached
    if split is None:
        split, card = SplitData.from_folder(ds_dir)
        fingerprint = card.get("fingerprint")
    else:
        fingerprint = split.fingerprint
    key = _cache_key(fingerprint, method, seed, config, split.features)
    if cache and path.is_file() and not on_disk.get("fingerprint"):  # the fingerprint is known only now
        cached = _read_cache(path, key)
        if cached is not None:
            return cached
    if not quiet:
        sys.stderr.write(f"[predictors] fitting {method} on {ds_dir} (seed {seed})\n")
    _note_openblas_once()
    pred = run_method(split, method, config)
    fitted = CachedFit(pred.to_frame(spread=True), pred.fit_seconds, pred.predict_seconds, dict(pred.info), cached=False)
    if cache:
        _write_cache(path, fitted.frame, key, {"fit_seconds": fitted.fit_seconds,
                                               "predict_seconds": fitted.predict_seconds, "info": fitted.info})
    return fitted
