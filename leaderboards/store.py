"""Leaderboard entries on disk: one JSON file per (track, submission name, dataset).

Layout: `<entries dir>/<track>/<slug>.json`, slug = slugified name + '-' + the first 8 hex digits
of the dataset fingerprint (+ '-2', '-3', … when another name already has that slug: "My HGB
(newcomer)" and "my HGB newcomer!!" are two entries). An entry is keyed by (track, name,
dataset fingerprint): the same name on another dataset is another entry; on the same dataset a
resubmission replaces the old entry only when its authors are the same — otherwise it is refused,
and so is a submission whose predictions (predictions_sha256) are already on the board under
another name (`resolve_target`, InputError: exit 2). The default entries
dir is `leaderboards/entries/` inside the package (shipped as package data, committed with the
built-in methods' entries). Writing is atomic (temporary file in the same folder, then rename,
atlas_data.outputs): a reader never sees half an entry, a failure before the rename leaves nothing
behind, and only an entry is ever replaced (any other file at that path is exit 2).

`build_entry(...)` assembles the document (schema in leaderboards.schema.ENTRY_KEYS) with its
provenance: `predictions_sha256` = sha256 of a canonical CSV of the predictions (sorted by
job_id, 17 significant digits — the same for the same numbers whatever the parquet encoding, and
defined for built-in methods, which have no file), `predictions_file_sha256` = sha256 of the
submitted predictions.parquet (what `sha256sum` prints; null for built-ins), package version,
UTC time, seed.

May import the standard library, pandas, atlas_data (errors, io, outputs) and leaderboards.*.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import json
from pathlib import Path

import pandas as pd

from atlas_data.errors import InputError
from leaderboards.schema import ENTRY_KEYS, ENTRY_SCHEMA, TRACKS, Submission, slugify


def default_entries_dir() -> Path:
    return Path(__file__).resolve().parent / "entries"


def sha256_file(path: Path | str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def sha256_predictions(preds: pd.DataFrame) -> str:
    """sha256 of a canonical CSV of the predictions (sorted by job_id, 17 significant digits)."""
    cols = [c for c in ("job_id", "p_hat", "lo", "hi") if c in preds.columns]
    frame = preds[cols].assign(job_id=preds["job_id"].astype(str)).sort_values("job_id", kind="mergesort")
    buf = io.StringIO()
    frame.to_csv(buf, index=False, float_format="%.17g", lineterminator="\n")
    return hashlib.sha256(buf.getvalue().encode()).hexdigest()


def entry_slug(name: str, fingerprint: str) -> str:
    return f"{slugify(name)}-{fingerprint[:8]}"


def entry_path(entries_dir: Path | str, track: str, slug: str) -> Path:
    return Path(entries_dir) / track / f"{slug}.json"


def build_entry(submission: Submission, *, dataset: dict, prediction: dict, scheduling: dict | None,
                predictions_sha256: str, seed: int, predictions_file_sha256: str | None = None, builtin: bool = False, reference: bool = False,
                now: _dt.datetime | None = None) -> dict:
    from atlas_data.io import package_version

    now = now or _dt.datetime.now(_dt.timezone.utc)
    if submission.track == "scheduling":
        summary = (scheduling or {}).get("score") or {}
        score, interval = summary.get("mean"), [summary.get("lo"), summary.get("hi")]
    else:
        score, interval = prediction.get("cov25"), list((prediction.get("intervals") or {}).get("cov25") or [None, None])
    entry = {
        "schema": ENTRY_SCHEMA,
        "track": submission.track,
        "name": submission.name,
        "slug": entry_slug(submission.name, submission.dataset_fingerprint),
        "authors": list(submission.authors),
        "description": submission.description,
        "url": submission.url,
        "builtin": bool(builtin),
        "reference": bool(reference),
        "dataset": dataset,
        "prediction": prediction,
        "scheduling": scheduling if submission.track == "scheduling" else None,
        "score": score,
        "score_interval": interval,
        "provenance": {
            "predictions_sha256": predictions_sha256,
            "predictions_file_sha256": predictions_file_sha256,
            "package_version": package_version(),
            "created": now.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "seed": int(seed),
        },
    }
    assert tuple(entry) == ENTRY_KEYS
    return entry


def is_entry_file(path: Path) -> bool:
    """Whether `path` holds a leaderboard entry (the only kind of file an entry may replace)."""
    try:
        entry = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(entry, dict) and isinstance(entry.get("schema"), int) and entry.get("slug") == Path(path).stem


def check_entry_path(path: Path) -> Path:
    """Refuse (exit 2) an entry path where something other than an entry stands (atlas_data.outputs)."""
    from atlas_data.outputs import check_output_file

    return check_output_file(path, "submit", option="--entries-dir", recognise=is_entry_file)


def _authors_key(authors) -> tuple[str, ...]:
    return tuple(sorted(" ".join(str(a).split()).casefold() for a in authors or []))


def resolve_target(entry: dict, entries_dir: Path | str) -> tuple[str, bool]:
    """(slug to write, replaces an existing entry) for `entry`, or InputError if it may not be stored.

    Same track, name and dataset: replaced if the authors are the same, refused otherwise. Same
    predictions (predictions_sha256) under another name on the same track and dataset: refused.
    A slug taken by another name gets a numeric suffix.
    """
    track, name = entry["track"], entry["name"]
    fingerprint = (entry.get("dataset") or {}).get("fingerprint") or ""
    sha = (entry.get("provenance") or {}).get("predictions_sha256")
    taken: dict[str, dict] = {}
    for path, other in _stored(entries_dir, track):
        taken[path.stem] = other
        if ((other.get("dataset") or {}).get("fingerprint") or "") != fingerprint:
            continue
        if other.get("name") == name:
            if _authors_key(other.get("authors")) != _authors_key(entry.get("authors")):
                raise InputError(
                    f"an entry named {name!r} on this dataset is by {', '.join(other.get('authors') or [])}; only its "
                    "authors can replace it — choose another name", path=str(path), where="key 'name'")
            return path.stem, True
    for path, other in _stored(entries_dir, track):
        same_data = ((other.get("dataset") or {}).get("fingerprint") or "") == fingerprint
        if same_data and sha and (other.get("provenance") or {}).get("predictions_sha256") == sha:
            raise InputError(
                f"these predictions are already on the {track} leaderboard as {other.get('name')!r} (predictions "
                f"sha256 {sha[:12]}…); an entry needs predictions of its own", path=str(path), where="predictions")
    base = entry_slug(name, fingerprint)
    slug, i = base, 1
    while slug in taken:
        i += 1
        slug = f"{base}-{i}"
    return slug, False


def _stored(entries_dir: Path | str, track: str):
    folder = Path(entries_dir) / track
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            other = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # `leaderboard` names a malformed file; it blocks no slug but its own
        if isinstance(other, dict):
            yield path, other


def write_entry(entry: dict, entries_dir: Path | str) -> tuple[Path, bool]:
    """Store `entry` under the slug `resolve_target` gives (refusing clobbers); return (path, replaced).

    Written aside and renamed into place; only an entry is ever replaced (atlas_data.outputs)."""
    from atlas_data.io import json_safe  # NaN/inf -> null: the one JSON rule
    from atlas_data.outputs import output_file

    slug, replaced = resolve_target(entry, entries_dir)
    entry["slug"] = slug  # the caller sees the slug it was stored under
    path = check_entry_path(entry_path(entries_dir, entry["track"], slug))
    text = json.dumps(json_safe(entry), indent=2, ensure_ascii=False) + "\n"
    output_file(path, "submit", lambda tmp: tmp.write_text(text, encoding="utf-8"), option="--entries-dir",
                recognise=is_entry_file)
    return path, replaced


def load_entries(entries_dir: Path | str, track: str) -> list[dict]:
    """Every entry of a track; a malformed file is an InputError naming it."""
    if track not in TRACKS:
        raise InputError(f"unknown track {track!r} (choose from {', '.join(TRACKS)})", where="--track")
    folder = Path(entries_dir) / track
    entries = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise InputError(f"not a valid entry (invalid JSON: {exc})", path=str(path)) from None
        missing = [k for k in ENTRY_KEYS if not isinstance(entry, dict) or k not in entry]
        if missing:
            raise InputError(f"not a valid entry (missing key(s) {', '.join(missing)})", path=str(path))
        if entry["track"] != track:
            raise InputError(f"entry of track '{entry['track']}' in the '{track}' folder", path=str(path))
        if entry["schema"] != ENTRY_SCHEMA:
            raise InputError(f"entry of schema {entry['schema']} (this version scores with schema {ENTRY_SCHEMA}, another "
                             "score): submit it again", path=str(path))
        entries.append(entry)
    return entries
