"""Build, write and load the ATLAS dataset: raw tables -> jobs -> labels -> splits -> features.

`build_frame(raw)` is the pure pipeline (raw tables in, dataset frame + card out);
`build_dataset(out, ...)` adds I/O: reads a raw folder (`source="pai"`) or synthesises one
(`source="synthetic"`), writes `atlas.parquet` and `dataset.json` into a temporary folder next to
`out` and renames it into place (atlas_data.outputs), so a failed build never leaves a
half-written dataset and never replaces a folder that `data build` did not write.

atlas.parquet: `job_id` (the raw job_name), `submit_time`, `user`, `group` ("" when the job has
no group tag), `is_recurrent`, the FEATURES columns (float), `p_star`, `y` = log1p(p_star),
`split`; rows in (submit_time, job_id) order.

dataset.json: `source`, `counts{kept, dropped{reason: n}, train, val, test}`, `features`,
`splits{train: [t0, t1], ...}` (submit-time range of each split), `fingerprint` (the content
hash of `content_fingerprint`: column names, dtypes and values in job order — not the bytes of
the parquet file, which change with the writer and library versions; `fingerprint_kind` says
which), plus `source_detail`, `raw_tables` (rows / bad rows per raw table), `raw_stats`
(calibration figures of the raw trace) and `version`.

`ensure_default_dataset()` builds the embedded default dataset (synthetic, seed 0, 30,000 jobs)
once into the user cache (`$ATLAS_BENCH_CACHE` or `~/.cache/atlas-bench`), in a folder named
`default-<package version>-<pipeline revision>` (a hash of the source of every atlas_data module
the pipeline imports and of the bundled files it reads), so a code change never serves a stale
dataset. A first build prints one progress line per step on stderr (`ensure_cached_dataset`).

May import: numpy, pandas, pyarrow, atlas_data.* (never predictors/schedulers/benchmark).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from atlas_data.assemble import jobs_from_raw
from atlas_data.errors import InputError
from atlas_data.features import FEATURES, FORBIDDEN, add_features
from atlas_data.jobs_table import MAX_EXACT_FLOAT_ID, MAX_SECONDS, scalar_ids
from atlas_data.labels import fork_join_spans, keep_labelled, label_jobs
from atlas_data.outputs import check_output_folder, output_folder
from atlas_data.raw import RawTables, read_raw_dir
from atlas_data.split import assign_split, split_boundaries, split_ranges

#: the largest dataset.json read (docs/data-formats.md#limits): a card is a few kB
MAX_CARD_BYTES = 10_000_000

DATASET_FILE = "atlas.parquet"
CARD_FILE = "dataset.json"
ID_COLUMNS = ["job_id", "submit_time", "user", "group", "is_recurrent"]
LABEL_COLUMNS = ["p_star", "y", "split"]
DEFAULT_JOBS = 30_000
DEFAULT_SEED = 0


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("atlas-bench")
    except Exception:  # not installed (running from a source tree)
        return "0.0.0"


def raw_stats(raw: RawTables | dict, jobs: pd.DataFrame) -> dict:
    """Calibration figures of the raw trace (compared with the targets by `describe`)."""
    task = raw["task"]
    inst = task.column("inst_num").to_numpy(zero_copy_only=False) if hasattr(task, "column") else task["inst_num"].to_numpy()
    inst = np.nan_to_num(np.asarray(inst, dtype=float), nan=1.0)
    n_jobs = len(jobs)
    status = jobs["status"].fillna("").astype(str).value_counts()
    submit = jobs["submit_time"].to_numpy(dtype=float)
    submit = submit[np.isfinite(submit)]
    hours = np.floor(np.mod(submit + 8 * 3600, 86400) / 3600).astype(int)
    days = np.mod(np.floor((submit + 8 * 3600) / 86400) + 3, 7).astype(int)
    by_dow = np.bincount(days, minlength=7)
    # the calendar days the trace spans (UTC+8): a ratio needs at least one weekend day and one weekday
    span_dow = np.mod(np.arange(np.floor((submit.min() + 8 * 3600) / 86400),
                                np.floor((submit.max() + 8 * 3600) / 86400) + 1) + 3, 7) if len(submit) else np.array([])
    both_kinds = bool((span_dow >= 5).any() and (span_dow < 5).any())
    inst_rows = raw["instance"].num_rows if hasattr(raw["instance"], "num_rows") else len(raw["instance"])
    spec = jobs["gpu_type_spec"].astype(str).replace("", "(none)").value_counts(normalize=True)
    return {
        "jobs": int(n_jobs),
        "instance_rows": int(inst_rows),
        "instances_per_job": float(inst_rows / max(n_jobs, 1)),
        "gang_instance_share": float(inst[inst >= 2].sum() / max(inst.sum(), 1.0)),
        "status_share": {str(k): float(v / max(n_jobs, 1)) for k, v in status.items()},
        "span_days": float((submit.max() - submit.min()) / 86400) if len(submit) else 0.0,
        "hour_of_day_share": [float(x) for x in np.bincount(hours, minlength=24) / max(len(hours), 1)],
        "weekend_to_weekday_daily_ratio": (float((by_dow[5:].sum() / 2) / max(by_dow[:5].sum() / 5, 1e-9))
                                           if both_kinds else None),
        "gpu_type_spec_share": {str(k): float(v) for k, v in spec.items()},
    }


def build_frame(raw: RawTables | dict, *, source: str = "pai",
                note: Callable[[str], None] | None = None) -> tuple[pd.DataFrame, dict]:
    """The pure pipeline. Returns the dataset frame (contract columns only) and the card (no fingerprint)."""
    note = note or (lambda message: None)
    t0 = time.perf_counter()
    timings = {}
    jobs = jobs_from_raw(raw)
    timings["jobs_s"] = time.perf_counter() - t0
    note(f"{len(jobs):,} jobs assembled")

    t = time.perf_counter()
    labelled = label_jobs(jobs, fork_join_spans(raw["instance"]))
    # boundaries from the submit times of successful jobs, before any label-based filter
    candidates = labelled.loc[(labelled["status"] == "Terminated") & labelled["submit_time"].notna(), "submit_time"]
    kept, dropped = keep_labelled(labelled)
    timings["labels_s"] = time.perf_counter() - t
    if len(kept) < 3:
        raise InputError(f"only {len(kept)} jobs survive labelling (dropped: {dropped})")
    note(f"{len(kept):,} kept, dropped {dropped}")

    t = time.perf_counter()
    t_val, t_test = split_boundaries(candidates.to_numpy())
    kept = assign_split(kept, t_val, t_test)
    kept = kept.sort_values(["submit_time", "job_name"], kind="stable").reset_index(drop=True)
    timings["split_s"] = time.perf_counter() - t

    t = time.perf_counter()
    featured = add_features(kept)
    timings["features_s"] = time.perf_counter() - t
    note(f"features done in {timings['features_s']:.1f}s")

    ds = featured.rename(columns={"job_name": "job_id"})
    ds = ds[ID_COLUMNS + FEATURES + LABEL_COLUMNS].copy()
    for c in ("job_id", "user", "group", "split"):
        ds[c] = ds[c].astype("str")
    ds["submit_time"] = ds["submit_time"].astype(float)
    ds["is_recurrent"] = ds["is_recurrent"].astype(bool)
    assert not set(FORBIDDEN) & set(ds.columns)

    counts = {"kept": int(len(ds)), "dropped": dropped}
    counts.update({s: int((ds["split"] == s).sum()) for s in ("train", "val", "test")})
    reports = getattr(raw, "reports", {}) or {}
    card = {
        "source": source,
        "counts": counts,
        "features": list(FEATURES),
        "splits": split_ranges(ds),
        "split_thresholds": {"val_from": t_val, "test_from": t_test},
        "raw_tables": {k: r.as_dict() for k, r in reports.items()},
        "raw_stats": raw_stats(raw, jobs),
        "timings": timings,
    }
    return ds, card


FINGERPRINT_KIND = "content-v1"  # dataset.json cards without this key carry the file's sha256


def content_fingerprint(frame: pd.DataFrame) -> str:
    """sha256 of a dataset's canonical content: independent of the parquet writer and library versions.

    Rows in job order (submit_time, then job_id, as the dataset is written), columns sorted by
    name; per column its name, a logical dtype (bool, int8…int64, float32 or float64 by width;
    pandas' object, `str` and Arrow string types are all `string`) and its values: numbers as
    little-endian float64 / int64 (every NaN the same bit pattern, -0.0 as 0.0), strings as UTF-8
    with a length prefix (missing: length -1).
    """
    submit = frame["submit_time"].to_numpy(np.float64)
    if (submit[1:] > submit[:-1]).all():  # no ties (a generated or time-ordered table): no text sort needed
        order = np.arange(len(frame))
    else:
        order = np.lexsort((frame["job_id"].astype(str).to_numpy(object), submit))
    h = hashlib.sha256(f"atlas-dataset {FINGERPRINT_KIND} rows={len(frame)}\n".encode())
    for name in sorted(map(str, frame.columns)):
        column = frame[name]
        if pd.api.types.is_bool_dtype(column.dtype):
            kind, data = "bool", column.to_numpy(np.uint8)[order].tobytes()
        elif pd.api.types.is_integer_dtype(column.dtype):
            kind = f"int{_bits(column.dtype)}"
            data = column.to_numpy(np.int64)[order].astype("<i8").tobytes()
        elif pd.api.types.is_float_dtype(column.dtype):
            kind = f"float{_bits(column.dtype)}"
            values = column.to_numpy(np.float64, na_value=np.nan)[order] + 0.0  # -0.0 + 0.0 == +0.0
            values[np.isnan(values)] = np.nan
            data = values.astype("<f8").tobytes()
        else:
            kind, data = "string", _strings_blob(column.to_numpy(object)[order])
        h.update(f"column {name!r} {kind} {len(data)}\n".encode())
        h.update(data)
    return h.hexdigest()


def _bits(dtype) -> int:
    return 8 * np.dtype(getattr(dtype, "numpy_dtype", dtype)).itemsize  # nullable Int64 counts as int64


def _strings_blob(values: np.ndarray) -> bytes:
    if len(values) and pd.api.types.infer_dtype(values, skipna=False) == "string":  # text only, none missing
        try:
            return _text_blob(values)
        except (pa.ArrowException, UnicodeError):  # e.g. a lone surrogate: the loop below says what fails
            pass
    parts = []
    for v in values:
        if v is None or (isinstance(v, float) and v != v) or v is pd.NA:
            parts.append(b"\xff\xff\xff\xff")
        else:
            b = str(v).encode("utf-8")
            parts.append(len(b).to_bytes(4, "little") + b)
    return b"".join(parts)


def _text_blob(values: np.ndarray) -> bytes:
    """`_strings_blob` of str values, built by arrays (a million ids in milliseconds, not a second):
    each value's UTF-8 length as 4 little-endian bytes, then its bytes."""
    text = pa.array(values, type=pa.large_string())
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64)[text.offset:text.offset + len(text) + 1]
    data = np.frombuffer(text.buffers()[2], dtype=np.uint8)
    lengths = np.diff(offsets)
    out = np.empty(4 * len(lengths) + int(lengths.sum()), dtype=np.uint8)
    starts = offsets[:-1] - offsets[0] + 4 * np.arange(len(lengths))  # where each value's length prefix goes
    prefix = starts[:, None] + np.arange(4)
    out[prefix] = lengths.astype("<u4").view(np.uint8).reshape(-1, 4)
    row = np.repeat(np.arange(len(lengths)), lengths)
    out[np.arange(len(row)) + 4 * (row + 1)] = data[offsets[0]:offsets[-1]]
    return out.tobytes()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_dataset(ds: pd.DataFrame, card: dict, out: Path | str, *, option: str = "--out") -> dict:
    """Write atlas.parquet + dataset.json into a temporary sibling of `out`, then rename it into place.

    `out` must be new, empty, or a dataset folder written earlier by `benchmark data build`
    (atlas_data.outputs); anything else is an InputError and nothing is touched.
    """
    with output_folder(out, "data build", option=option) as tmp:
        table = pa.Table.from_pandas(ds, preserve_index=False)
        pq.write_table(table, tmp / DATASET_FILE, compression="zstd")
        card = {k: v for k, v in card.items() if k != "timings"}  # keep dataset.json reproducible
        card["fingerprint"] = content_fingerprint(pd.read_parquet(tmp / DATASET_FILE))  # what readers will see
        card["fingerprint_kind"] = FINGERPRINT_KIND
        card["version"] = _version()
        (tmp / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    return card


def build_dataset(out: Path | str, *, source: str = "synthetic", raw_dir: Path | str | None = None,
                  jobs: int = DEFAULT_JOBS, seed: int = DEFAULT_SEED, quiet: bool = True,
                  note: Callable[[str], None] | None = None) -> dict:
    """Build a dataset folder from a raw PAI folder or from a fresh synthetic trace; return the card."""
    note = note or (lambda message: None)
    check_output_folder(out, "data build", option="--out")  # before the (long) build
    if source == "pai":
        if raw_dir is None:
            raise InputError("--source pai needs --raw-dir")
        raw = read_raw_dir(raw_dir)
        detail = {"raw_dir": str(raw_dir)}
    elif source == "synthetic":
        from atlas_data.synth import synthesize

        t = time.perf_counter()
        tables = synthesize(int(jobs), int(seed))
        note(f"synthesised {jobs:,} jobs in {time.perf_counter() - t:.1f}s")
        raw = RawTables(tables, {})
        detail = {"jobs": int(jobs), "seed": int(seed), "generator": "atlas_data.synth"}
    else:
        raise InputError(f"unknown --source {source!r} (choose synthetic or pai)")
    for name, report in getattr(raw, "reports", {}).items():
        if report.bad_rows:
            note(f"{report.path}: {report.bad_rows} bad row(s) dropped, e.g. {report.examples[0] if report.examples else ''}")
    try:
        ds, card = build_frame(raw, source=source, note=note)
    except InputError as exc:
        if exc.path:
            raise
        # a pipeline error about the data as a whole (too few jobs, an empty split): name the input
        source_name = str(raw_dir) if source == "pai" else f"synthetic trace (--jobs {jobs}, --seed {seed})"
        raise InputError(exc.problem, path=source_name, where=exc.where) from None
    card = {"source": card.pop("source"), "source_detail": detail, **card}
    return write_dataset(ds, card, out)


def load_dataset(ds_dir: Path | str) -> tuple[pd.DataFrame, dict]:
    """Read a dataset folder: (frame, card). Checks the files exist and the fingerprint matches.

    A card with `fingerprint_kind` content-v1 is checked against the content hash; an older card
    (no kind) against the sha256 of the file, as it was made.
    """
    ds_dir = Path(ds_dir)
    if ds_dir.is_file():
        hint = (f"give its folder {ds_dir.parent}" if ds_dir.name == DATASET_FILE and (ds_dir.parent / CARD_FILE).exists()
                else "a jobs table is read by `benchmark run --jobs`")
        raise InputError(f"a file, not an ATLAS dataset folder ({DATASET_FILE} + {CARD_FILE}, written by "
                         f"`benchmark data build`): {hint}", path=str(ds_dir))
    pq_path, card_path = ds_dir / DATASET_FILE, ds_dir / CARD_FILE
    for p in (pq_path, card_path):
        if not p.exists():
            raise InputError("not an ATLAS dataset folder (missing file)", path=str(p))
    from atlas_data.io import check_input_file, read_input_text

    check_input_file(pq_path, "dataset table")  # a FIFO or a device in its place would be read without end
    try:
        card = json.loads(read_input_text(card_path, "dataset card", max_bytes=MAX_CARD_BYTES))
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON ({exc})", path=str(card_path)) from None
    try:
        names = pq.read_schema(pq_path).names
        df = pd.read_parquet(pq_path)
    except Exception as exc:  # not parquet, truncated ...
        raise InputError(f"cannot read parquet file: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}",
                         path=str(pq_path)) from None
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise InputError("column appears more than once", path=str(pq_path), where=f"column '{repeated[0]}'")
    if not isinstance(card, dict):
        raise InputError(f"the card must be a JSON object, not {type(card).__name__}", path=str(card_path))
    check_card_features(card, str(card_path))
    if card.get("fingerprint"):
        kind = card.get("fingerprint_kind")
        if kind not in (None, FINGERPRINT_KIND):
            raise InputError(f"unknown fingerprint_kind {kind!r} (this version knows {FINGERPRINT_KIND})", path=str(card_path))
        actual = content_fingerprint(df) if kind else _sha256(pq_path)
        if card["fingerprint"] != actual:
            raise InputError("fingerprint mismatch: atlas.parquet changed after the build", path=str(pq_path))
    missing = [c for c in ID_COLUMNS + card.get("features", []) + LABEL_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", path=str(pq_path))
    check_dataset_frame(df, str(pq_path))
    check_labels(df, str(pq_path))
    if not card.get("fingerprint"):
        # a hand-made card without one: the content hash of what was read, so that the prediction
        # cache, MLflow and leaderboard entries still know which data they came from (never written
        # back: the user's card is theirs)
        card = {**card, "fingerprint": content_fingerprint(df), "fingerprint_kind": FINGERPRINT_KIND,
                "fingerprint_computed": True}
    return df, card


# true sizes and how the rows were split: a card listing one of them as a feature would hand the
# label (or the split) to every learner
NOT_FEATURES = ("p_star", "y", "split")


def check_card_features(card: dict, path: str) -> None:
    """The card's `features`: a list of distinct column names, none of them a label (p_star, y) or split."""
    features = card.get("features", [])
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise InputError("must be a list of column names", path=path, where="features")
    for name in features:
        if name in NOT_FEATURES:
            what = "the split" if name == "split" else "a label (the true duration)"
            raise InputError(f"'{name}' is {what}, never a feature: remove it from the list", path=path,
                             where="features")
    repeated = sorted({f for f in features if features.count(f) > 1})
    if repeated:
        raise InputError(f"'{repeated[0]}' is listed twice", path=path, where="features")


LABEL_RTOL = 1e-6  # y stored as float32 by another writer still agrees; a hand-edited y does not


def check_labels(df: pd.DataFrame, path: str) -> None:
    """y must be log1p(p_star) on every row (the one label of every method); InputError naming the
    first row that differs, with both values. A wrong y is a broken file, so it is refused rather
    than re-derived: what else in it was edited is unknown."""
    raw = df["y"]
    if not pd.api.types.is_numeric_dtype(raw.dtype) or pd.api.types.is_bool_dtype(raw.dtype):
        raise InputError(f"y has type {raw.dtype}; it must be the number log1p(p_star)", path=path, where="column 'y'")
    y = raw.to_numpy(dtype=np.float64, na_value=np.nan)
    p = df["p_star"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        expected = np.log1p(p)  # numpy's own: last-bit differences between CPUs are far inside the tolerance
    bad = ~np.isclose(y, expected, rtol=LABEL_RTOL, atol=1e-12)
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"y = {y[i]:.9g} but log1p(p_star) = log1p({p[i]:.9g}) = {expected[i]:.9g}: the label y must "
                         "be log1p(p_star) (rebuild the dataset, or write y = log1p(p_star))", path=path,
                         where=f"row {i + 1}")


def check_dataset_frame(df: pd.DataFrame, path: str) -> None:
    """The types and ranges a dataset must hold (docs/data-formats.md#types-and-ranges); InputError otherwise.

    `submit_time` and `p_star` are seconds (numbers, never date-times or time spans read as
    nanoseconds), finite, within MAX_SECONDS, p_star > 0; `job_id` is unique and exact (text,
    integers, or floats that are whole numbers below 2^53).
    """
    for column, positive in (("submit_time", False), ("p_star", True)):
        raw = df[column]
        if not pd.api.types.is_numeric_dtype(raw.dtype) or pd.api.types.is_bool_dtype(raw.dtype):
            raise InputError(f"{column} has type {raw.dtype}; a dataset holds seconds as numbers", path=path,
                             where=f"column '{column}'")
        values = raw.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(values) | (np.abs(values) > MAX_SECONDS) | ((values <= 0) if positive else False)
        if bad.any():
            i = int(np.argmax(bad))
            rule = "finite, > 0 and at most" if positive else "finite and within ±"
            raise InputError(f"{column} must be {rule} {MAX_SECONDS:g} s, got {values[i]:g}", path=path,
                             where=f"row {i + 1}")
    ids = df["job_id"]
    if pd.api.types.is_float_dtype(ids.dtype):
        values = ids.to_numpy(dtype=np.float64)
        bad = ~((values == np.round(values)) & (np.abs(values) < MAX_EXACT_FLOAT_ID))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"job_id {values[i]:g} is a float that is not exactly a whole number below 2^53",
                             path=path, where=f"row {i + 1}")
        ids = pd.Series(values.astype(np.int64))
    elif ids.dtype == object and pd.api.types.infer_dtype(ids, skipna=True) not in ("string", "integer"):
        ids = pd.Series(scalar_ids(ids.to_numpy(dtype=object), "job_id", path, None))  # no list, no non-UTF-8 bytes
    text = ids.astype(str)
    repeated = text.duplicated().to_numpy()
    if repeated.any():
        i = int(np.argmax(repeated))
        raise InputError(f"duplicate job_id {text.iloc[i]!r}", path=path, where=f"row {i + 1}")


PIPELINE_ENTRY = "build"
PIPELINE_RESOURCES = ("pai_machine_spec.csv",)  # bundled files the synthetic generator reads


def pipeline_modules(root: Path | None = None) -> list[str]:
    """atlas_data modules the pipeline runs: `build` and everything it imports, transitively.

    Found from the import statements (lazy ones inside functions included), so a new pipeline
    module is covered without a list to keep up to date. `root`: the package folder (this one).
    """
    import ast

    here = Path(root) if root is not None else Path(__file__).resolve().parent
    seen, todo = set(), [PIPELINE_ENTRY]
    while todo:
        name = todo.pop()
        if name in seen or not (here / f"{name}.py").is_file():
            continue
        seen.add(name)
        for node in ast.walk(ast.parse((here / f"{name}.py").read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            todo += [t.split(".")[1] for t in targets if t.startswith("atlas_data.") and t.count(".") >= 1]
    return sorted(seen)


def pipeline_revision(root: Path | None = None) -> str:
    """Short hash of the pipeline's code and bundled inputs: a cached dataset is rebuilt when they change."""
    h = hashlib.sha256()
    here = Path(root) if root is not None else Path(__file__).resolve().parent
    for name in pipeline_modules(here):
        h.update(f"{name}.py\n".encode())
        h.update((here / f"{name}.py").read_bytes())
    for name in PIPELINE_RESOURCES:
        h.update(f"resources/{name}\n".encode())
        h.update((here / "resources" / name).read_bytes())
    return h.hexdigest()[:10]


def default_dataset_dir() -> Path:
    """Cache folder of the embedded default dataset: `<cache>/default-<version>-<pipeline revision>`."""
    root = os.environ.get("ATLAS_BENCH_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "atlas-bench"
    return base / f"default-{_version()}-{pipeline_revision()}"


def ensure_default_dataset(quiet: bool = True) -> Path:
    """Build the default dataset (synthetic, seed 0, 30,000 jobs) once; return its folder."""
    return ensure_cached_dataset(default_dataset_dir(), "default", jobs=DEFAULT_JOBS, seed=DEFAULT_SEED, quiet=quiet)


# The steps a synthetic build reports through `note` (synthesised, assembled, labelled, features)
# plus the write: the progress lines of a cached build count against this total.
BUILD_STEPS = 5


def ensure_cached_dataset(out: Path, name: str, *, jobs: int, seed: int, quiet: bool = True) -> Path:
    """Build a named synthetic dataset into its cache folder `out` once; return the folder.

    A first use builds for a minute or more (30,000 jobs), so unless `quiet` every step is one
    line on stderr — `[default dataset 2/5] 29,170 jobs assembled (14 s)` — and a last line says
    where the dataset is; a cached dataset prints nothing.
    """
    if (out / DATASET_FILE).exists() and (out / CARD_FILE).exists():
        return out
    t0 = time.perf_counter()
    step = [0]

    def note(message: str) -> None:
        if quiet:
            return
        step[0] = min(step[0] + 1, BUILD_STEPS - 1)  # the write is always the last step
        _progress_line(f"[{name} dataset {step[0]}/{BUILD_STEPS}] {message} ({time.perf_counter() - t0:.0f} s)")

    if not quiet:
        _progress_line(f"[{name} dataset] building {jobs:,} synthetic jobs (seed {seed}) once into {out}; "
                       "later runs reuse it")
    card = build_dataset(out, source="synthetic", jobs=jobs, seed=seed, quiet=quiet, note=note)
    if not quiet:
        _progress_line(f"[{name} dataset {BUILD_STEPS}/{BUILD_STEPS}] written: {card['counts']['kept']:,} jobs, "
                       f"fingerprint {str(card.get('fingerprint'))[:16]} ({time.perf_counter() - t0:.0f} s)")
    return out


def _progress_line(text: str) -> None:
    # stderr, like every progress line of the command line; stdout stays the results
    import sys

    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def requested_gpus(frame: pd.DataFrame) -> np.ndarray:
    """Whole GPUs a dataset job asked for at submit time: ⌈Σ_t plan_gpu_t/100 · inst_num_t⌉, at least 1.

    Read back from `log_gpu` = log1p(GPUs) (a submit-time feature, so no label is involved); a job
    that asked for a fraction of a GPU, or none, counts as one GPU in the cluster model.
    """
    if "log_gpu" in frame.columns:
        requested = np.expm1(pd.to_numeric(frame["log_gpu"], errors="coerce").fillna(0).to_numpy(np.float64))
    else:
        requested = np.zeros(len(frame))
    return np.maximum(1, np.ceil(requested - 1e-6)).astype(np.int64)


def test_jobs(frame: pd.DataFrame, tenant_column: str | None = None) -> pd.DataFrame:
    """The test split as a jobs table (docs/data-formats.md): duration = p_star, gpus = requested_gpus, tenant.

    The one way the scheduling and fairness tasks and the leaderboards turn a dataset into
    jobs; only the test split is ever scheduled. `tenant_column` None (or absent) → "default".
    """
    test = frame[frame["split"] == "test"].reset_index(drop=True)
    tenant = (test[tenant_column].astype(str).to_numpy(object) if tenant_column in test.columns
              else np.full(len(test), "default", object))
    return pd.DataFrame({
        "job_id": test["job_id"].astype(str).to_numpy(object),
        "submit_time": test["submit_time"].to_numpy(np.float64),
        "duration": test["p_star"].to_numpy(np.float64),
        "gpus": requested_gpus(test),
        "tenant": tenant,
    })
