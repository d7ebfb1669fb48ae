"""Leaderboard entries on disk: one JSON file per (track, submission name, dataset).

Layout: `<entries dir>/<track>/<slug>.json`, slug = slugified name + '-' + the first 8 hex digits
of the dataset fingerprint (+ '-2', '-3', … when another name already has that slug: "My HGB
(newcomer)" and "my HGB newcomer!!" are two entries). An entry is keyed by (track, name,
dataset fingerprint): the same name on another dataset is another entry; on the same dataset a
resubmission replaces the old entry only when its authors are the same — otherwise it is refused,
and so is a submission whose predictions (predictions_sha256) are already on the board under
another name (`resolve_target`, InputError: exit 2). A submission (an entry that is neither
`builtin` nor `reference`) never replaces a built-in or reference entry, nor takes a name that
reads as one of theirs on the same dataset (same slug: 'CONSTANT', 'Oracle!'), nor carries the
built-in methods' author string (schema.BUILTIN_AUTHORS). `load_entries` checks every entry's
types (a malformed file is exit 2 naming it and the key) before anything is ranked. The default entries
dir is `leaderboards/entries/` inside the package (shipped as package data, committed with the
built-in methods' entries). Writing is atomic (temporary file in the same folder, then rename,
atlas_data.outputs): a reader never sees half an entry, a failure before the rename leaves nothing
behind, and only an entry is ever replaced (any other file at that path is exit 2).
Concurrent submissions: `write_entry` holds an exclusive lock (flock on `<entries dir>/.submit.lock`)
while it re-checks the slug, the clobber and duplicate rules against what is on disk and writes;
another submit waits for it, saying so, at most LOCK_TIMEOUT_S seconds, then gives up (exit 2).

`build_entry(...)` assembles the document (schema in leaderboards.schema.ENTRY_KEYS) with its
provenance: `predictions_sha256` = sha256 of a canonical CSV of the predictions (sorted by
job_id, 17 significant digits — the same for the same numbers whatever the parquet encoding, and
defined for built-in methods, which have no file), `predictions_file_sha256` = sha256 of the
submitted predictions.parquet (what `sha256sum` prints; null for built-ins), package version,
UTC time, seed.

May import the standard library, pandas, atlas_data (errors, io, outputs) and leaderboards.*.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import io
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pandas as pd

from atlas_data.errors import InputError
from atlas_data.io import lock_within
from leaderboards.schema import BUILTIN_AUTHORS, ENTRY_KEYS, ENTRY_SCHEMA, TRACKS, Submission, slugify


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


def is_builtin_authors(authors) -> bool:
    """Whether any of `authors` is the built-in methods' author string (ignoring case and spacing)."""
    reserved = set(_authors_key(BUILTIN_AUTHORS))
    return any(a in reserved for a in _authors_key(authors))


def _name_key(name) -> str:
    """What a name reads as on the board: its slug after Unicode compatibility folding ('ＣＯＮＳＴＡＮＴ' = 'constant')."""
    import unicodedata

    return slugify(unicodedata.normalize("NFKC", str(name)))


def resolve_target(entry: dict, entries_dir: Path | str) -> tuple[str, bool]:
    """(slug to write, replaces an existing entry) for `entry`, or InputError if it may not be stored.

    Same track, name and dataset: replaced if the authors are the same, refused otherwise. A
    submission (neither `builtin` nor `reference`) never replaces a built-in or reference entry:
    a name that reads as theirs (same slug, e.g. 'CONSTANT') on the same track and dataset, or
    the built-in author string, is refused. Same predictions (predictions_sha256) under another
    name on the same track and dataset: refused. A slug taken by another name gets a numeric suffix.
    """
    track, name = entry["track"], entry["name"]
    fingerprint = (entry.get("dataset") or {}).get("fingerprint") or ""
    sha = (entry.get("provenance") or {}).get("predictions_sha256")
    submitted = not (entry.get("builtin") or entry.get("reference"))
    if submitted and is_builtin_authors(entry.get("authors")):
        raise InputError(f"author {BUILTIN_AUTHORS[0]!r} is reserved for the built-in methods; give your own name(s)",
                         where="key 'authors'")
    taken: dict[str, dict] = {}
    for path, other in _stored(entries_dir, track):
        taken[path.stem] = other
        if ((other.get("dataset") or {}).get("fingerprint") or "") != fingerprint:
            continue
        if submitted and (other.get("builtin") or other.get("reference")) and _name_key(other.get("name")) == _name_key(name):
            kind = "reference" if other.get("reference") else "built-in"
            raise InputError(
                f"{name!r} is the name of the {kind} entry {other.get('name')!r} on this dataset; a submission never "
                "replaces a built-in or reference entry — choose another name", path=str(path), where="key 'name'")
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


LOCK_FILE = ".submit.lock"  # in the entries folder while a submit writes; a flock dies with its process
LOCK_TIMEOUT_S = 30.0  # a write holds the lock for milliseconds: this long means a stuck submit


@contextlib.contextmanager
def entries_lock(entries_dir: Path | str, *, note: Callable[[str], None] | None = None,
                 timeout: float | None = None) -> Iterator[None]:
    """Hold the entries folder's exclusive lock; wait for another holder (telling `note` once) at
    most `timeout` seconds (LOCK_TIMEOUT_S), then InputError. No lock where fcntl is missing."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock
        yield
        return
    folder = Path(entries_dir)
    timeout = LOCK_TIMEOUT_S if timeout is None else timeout
    path = folder / LOCK_FILE
    deadline, told = time.monotonic() + timeout, False

    def waiting() -> None:
        nonlocal told
        if not told and note is not None:
            note(f"waiting for another `benchmark submit` writing to {folder} (lock {LOCK_FILE}, at most "
                 f"{timeout:g} s)")
        told = True

    def gave_up() -> InputError:
        return InputError(f"another `benchmark submit` has held the lock {path} for {timeout:g} s: nothing was "
                          "written; submit again once it is done", path=str(folder), where="--entries-dir")

    while True:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            handle = open(path, "a")
        except OSError as exc:
            raise InputError(f"cannot create the lock file {LOCK_FILE} ({exc.strerror or exc})", path=str(folder),
                             where="--entries-dir") from None
        try:
            lock_within(handle, max(0.0, deadline - time.monotonic()), waiting=waiting, gave_up=gave_up)
            try:  # the holder we waited for removes the file as it leaves: lock the one now there
                current = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                current = False
        except BaseException:
            handle.close()
            raise
        if current:
            break
        handle.close()
    try:
        yield
    finally:
        path.unlink(missing_ok=True)  # while still held: no lock file is left in the entries folder
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
        handle.close()


def write_entry(entry: dict, entries_dir: Path | str, *, note: Callable[[str], None] | None = None) -> tuple[Path, bool]:
    """Store `entry` under the slug `resolve_target` gives (refusing clobbers); return (path, replaced).

    Under the entries folder's lock (`entries_lock`): the slug and the clobber and duplicate rules
    are decided on what is on disk now, so concurrent submits neither overwrite each other nor both
    pass as new. Written aside and renamed into place; only an entry is ever replaced (atlas_data.outputs)."""
    from atlas_data.io import json_safe  # NaN/inf -> null: the one JSON rule
    from atlas_data.outputs import output_file

    with entries_lock(entries_dir, note=note):
        slug, replaced = resolve_target(entry, entries_dir)
        entry["slug"] = slug  # the caller sees the slug it was stored under
        path = check_entry_path(entry_path(entries_dir, entry["track"], slug))
        text = json.dumps(json_safe(entry), indent=2, ensure_ascii=False) + "\n"
        output_file(path, "submit", lambda tmp: tmp.write_text(text, encoding="utf-8"), option="--entries-dir",
                    recognise=is_entry_file)
    return path, replaced


def load_entries(entries_dir: Path | str, track: str) -> list[dict]:
    """Every entry of a track; a malformed file is an InputError naming it (and the key: `check_entry`).

    A missing entries folder is an InputError too (a mistyped path is not an empty board); a
    track folder not yet created in an existing entries folder is an empty track."""
    if track not in TRACKS:
        raise InputError(f"unknown track {track!r} (choose from {', '.join(TRACKS)})", where="--track")
    if not Path(entries_dir).is_dir():
        what = "does not exist" if not Path(entries_dir).exists() else "is a file, not a folder"
        raise InputError(f"entries folder {what}", path=str(entries_dir), where="--entries-dir")
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
        _check(entry, "schema", _is_int, "an integer", path)
        _check(entry, "track", lambda v: v in TRACKS, f"one of {', '.join(TRACKS)}", path)
        if entry["track"] != track:
            raise InputError(f"entry of track '{entry['track']}' in the '{track}' folder", path=str(path))
        if entry["schema"] != ENTRY_SCHEMA:
            # an older entry lacks the per-window values the paired ranking compares (schema 3: 8 overlapping
            # windows, no per-window Cov@25): it cannot be ranked beside the others, only scored again
            raise InputError(f"entry of schema {entry['schema']} (this version ranks schema {ENTRY_SCHEMA} entries, scored "
                             "on other windows): submit it again (built-in entries: leaderboard --rebuild-builtin)",
                             path=str(path))
        check_entry(entry, path)
        entries.append(entry)
    return entries


# ----- entry types (what the renderers rely on) --------------------------------------------------
def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    """A finite number or null (JSON has no NaN; a file that spells one is malformed)."""
    import math

    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))


def _is_str(v) -> bool:
    return isinstance(v, str)


def _opt(test):
    return lambda v: v is None or test(v)


def _pair(v) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_is_num(x) for x in v)


def _numbers(v) -> bool:
    return isinstance(v, list) and all(_is_num(x) for x in v)


def _summary(v) -> bool:
    return (isinstance(v, dict) and all(_is_num(v.get(k)) for k in ("mean", "lo", "hi"))
            and _opt(_numbers)(v.get("values")))


def _shown(value) -> str:
    if value is None:
        return "null"
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, (str, list, dict)) else repr(value)
    kind = {str: "string", list: "list", dict: "object", bool: "boolean"}.get(type(value), type(value).__name__)
    return f"{kind} {text[:40] + '…' if len(text) > 40 else text}"


def _check(doc: dict, key: str, test, want: str, path: Path, prefix: str = ""):
    value = doc.get(key) if isinstance(doc, dict) else None
    if not test(value):
        got = "nothing" if isinstance(doc, dict) and key not in doc else _shown(value)
        raise InputError(f"not a valid entry ({prefix}{key} must be {want}, got {got})", path=str(path),
                         where=f"key '{prefix}{key}'")
    return value


PREDICTION_METRICS = ("rmsle", "cov25", "cov50", "cov25_recurrent", "cov50_recurrent", "spearman", "interval_coverage",
                      "interval_width")


def check_entry(entry: dict, path: Path) -> None:
    """InputError naming `path` and the key when a value has a type the renderers cannot show.

    Numbers are finite numbers or null (null shows as '–'); texts are strings; `score` is the
    track's ranking value (Cov@25 on the prediction track, the scheduling score's mean) and must
    say the same as the metric it copies, so that the order and the shown metrics agree."""
    _check(entry, "schema", _is_int, "an integer", path)
    _check(entry, "name", lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string", path)
    for key in ("slug", "description", "url"):
        _check(entry, key, _is_str, "a string", path)
    _check(entry, "authors", lambda v: isinstance(v, list) and all(_is_str(a) for a in v), "a list of strings", path)
    for key in ("builtin", "reference"):
        _check(entry, key, lambda v: isinstance(v, bool), "true or false", path)
    dataset = _check(entry, "dataset", lambda v: isinstance(v, dict), "an object", path)
    _check(dataset, "fingerprint", _is_str, "a string", path, "dataset.")
    _check(dataset, "source", _opt(_is_str), "a string or null", path, "dataset.")
    _check(dataset, "n_test", _opt(_is_int), "an integer or null", path, "dataset.")
    _check(dataset, "default", _opt(lambda v: isinstance(v, bool)), "true, false or null", path, "dataset.")
    prediction = _check(entry, "prediction", lambda v: isinstance(v, dict), "an object", path)
    for key in PREDICTION_METRICS:
        _check(prediction, key, _is_num, "a number or null", path, "prediction.")
    _check(prediction, "n_jobs", _opt(_is_int), "an integer or null", path, "prediction.")
    intervals = _check(prediction, "intervals", _opt(lambda v: isinstance(v, dict)), "an object or null", path, "prediction.")
    for key in intervals or {}:
        _check(intervals, key, _opt(_pair), "[lo, hi] (numbers or null) or null", path, "prediction.intervals.")
    calibration = _check(prediction, "calibration", _opt(lambda v: isinstance(v, dict)), "an object or null", path,
                         "prediction.")
    for key in calibration or {}:
        _check(calibration, key, _numbers, "a list of numbers", path, "prediction.calibration.")
    windows = _check(prediction, "windows", lambda v: isinstance(v, dict), "an object (per-window Cov@25)", path,
                     "prediction.")
    _check(windows, "jobs", lambda v: isinstance(v, list) and all(_is_int(x) for x in v), "a list of integers", path,
           "prediction.windows.")
    _check(windows, "cov25", lambda v: _numbers(v) and len(v) == len(windows["jobs"]),
           "a list of numbers, one per window", path, "prediction.windows.")
    if entry["track"] == "scheduling":
        scheduling = _check(entry, "scheduling", lambda v: isinstance(v, dict), "an object on the scheduling track", path)
        _check_summaries(scheduling, "scheduling", path)
        _check(scheduling, "windows", _is_int, "an integer", path, "scheduling.")
        if scheduling.get("score") is not None:  # null: an unscored entry, ranked '–'
            _check(scheduling["score"], "values", lambda v: _numbers(v) and len(v) == scheduling["windows"],
                   "a list of numbers, one per window", path, "scheduling.score.")
        _check(scheduling, "blind_p_hat", _is_num, "a number or null", path, "scheduling.")
        fairness = _check(scheduling, "fairness", _opt(lambda v: isinstance(v, dict)), "an object or null", path,
                          "scheduling.")
        if fairness:
            _check(fairness, "windows", _opt(lambda v: isinstance(v, list) and all(isinstance(w, dict) for w in v)),
                   "a list of objects or null", path, "scheduling.fairness.")
        copied, source = _get_path(scheduling, "score", "mean"), "scheduling.score.mean"
    else:
        _check(entry, "scheduling", lambda v: v is None, "null on the prediction track", path)
        copied, source = prediction.get("cov25"), "prediction.cov25"
    score = _check(entry, "score", _is_num, "a number or null", path)
    _check(entry, "score_interval", _pair, "[lo, hi] (numbers or null)", path)
    if score != copied:
        raise InputError(f"not a valid entry (score {score!r} is not {source} {copied!r}: the score is the track's "
                         "ranking value)", path=str(path), where="key 'score'")
    provenance = _check(entry, "provenance", lambda v: isinstance(v, dict), "an object", path)
    for key in ("predictions_sha256", "predictions_file_sha256", "package_version", "created"):
        _check(provenance, key, _opt(_is_str), "a string or null", path, "provenance.")
    _check(provenance, "seed", _opt(_is_int), "an integer or null", path, "provenance.")


def _get_path(doc, *keys):
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None
    return doc


def _check_summaries(doc, prefix: str, path: Path) -> None:
    """Every per-window summary ({values, mean, lo, hi}) under `doc` holds numbers."""
    if isinstance(doc, dict):
        if "mean" in doc:
            if not _summary(doc):
                raise InputError(f"not a valid entry ({prefix} must be a summary {{values, mean, lo, hi}} of numbers or "
                                 f"null, got {_shown(doc)})", path=str(path), where=f"key '{prefix}'")
            return
        for key, value in doc.items():
            _check_summaries(value, f"{prefix}.{key}", path)
