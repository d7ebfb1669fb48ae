"""What a leaderboard submission and a leaderboard entry look like (docs/leaderboards.md).

A submission folder holds `submission.yaml` (the keys of REQUIRED_KEYS, nothing else) and
`predictions.parquet` (`job_id`, `p_hat`, optional `lo`, `hi`: one row per test job). `Submission`
is the checked content of the YAML file; `Submission.from_mapping` turns a parsed YAML document
into one or raises InputError naming the file and the key.

An entry is the JSON document stored for a scored submission (see ENTRY_KEYS); `leaderboards.store`
writes and reads them, `leaderboards.render` ranks them.

May import the standard library and atlas_data.errors only.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from atlas_data.errors import InputError

SUBMISSION_FILE = "submission.yaml"
PREDICTIONS_FILE = "predictions.parquet"
TRACKS = ("prediction", "scheduling")
REQUIRED_KEYS = ("name", "authors", "description", "url", "track", "dataset_fingerprint")
PREDICTION_COLUMNS = ("job_id", "p_hat")
OPTIONAL_COLUMNS = ("lo", "hi")
MAX_NAME_CHARS = 80
# the other free-text keys (docs/data-formats.md#limits): each is rendered in every leaderboard page
MAX_AUTHORS, MAX_AUTHOR_CHARS = 100, 200
MAX_URL_CHARS, MAX_DESCRIPTION_CHARS = 2_000, 10_000
BUILTIN_AUTHORS = ("ATLAS-Bench (built-in)",)  # the built-in methods' authors: reserved, no submission may use it
# 2: windowed scheduling score relative to the blind p̂, with intervals; 3: the same score, the fairness block
# re-scored (load 1.0, gangs capped, half-split windows; slowdown ratio and paired loss differences); 4: the
# score on 32 disjoint windows (was 8 overlapping seeded ones), per-window Cov@25 (`prediction.windows`): the
# per-window values the paired ranking (leaderboards.ranking) compares
ENTRY_SCHEMA = 4
# Every entry has these keys; `scheduling` is null on the prediction track.
ENTRY_KEYS = ("schema", "track", "name", "slug", "authors", "description", "url", "builtin", "reference",
              "dataset", "prediction", "scheduling", "score", "score_interval", "provenance")

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Submission:
    name: str
    authors: tuple[str, ...]
    description: str
    url: str
    track: str
    dataset_fingerprint: str

    @classmethod
    def from_mapping(cls, data, path: str) -> "Submission":
        """Check a parsed submission.yaml; every problem is an InputError naming `path` and the key."""
        if not isinstance(data, dict):
            kind = "empty" if data is None else f"a {type(data).__name__}"
            raise InputError(f"must be a mapping of {', '.join(REQUIRED_KEYS)}; the file is {kind}", path=path)
        missing = [k for k in REQUIRED_KEYS if k not in data]
        if missing:
            raise InputError(f"missing key(s) {', '.join(missing)} (required: {', '.join(REQUIRED_KEYS)})", path=path)
        unknown = [str(k) for k in data if k not in REQUIRED_KEYS]
        if unknown:
            raise InputError(f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(REQUIRED_KEYS)})", path=path)
        data = dict(data)
        for key in ("description", "url"):  # `url:` with nothing after it is YAML null: read it as empty
            if data[key] is None:
                data[key] = ""
        for key in ("name", "description", "url", "track", "dataset_fingerprint"):
            if not isinstance(data[key], str):
                raise InputError(f"must be a string, got {type(data[key]).__name__} {data[key]!r}", path=path, where=f"key '{key}'")
        for key in ("name", "description", "url"):
            if _control_characters(data[key], allow="\n\t" if key == "description" else ""):
                raise InputError("contains control characters", path=path, where=f"key '{key}'")
        name = data["name"].strip()
        if not name or len(name) > MAX_NAME_CHARS or "\n" in name:
            raise InputError(f"must be one non-empty line of at most {MAX_NAME_CHARS} characters", path=path, where="key 'name'")
        if not any(ch.isalnum() for ch in name):  # any script: 'Модель 2', '日本語モデル'
            raise InputError("must contain a letter or a digit", path=path, where="key 'name'")
        authors = data["authors"]
        if isinstance(authors, str):
            authors = [a.strip() for a in authors.split(",")]
        if not isinstance(authors, list) or not authors or not all(isinstance(a, str) and a.strip() for a in authors):
            raise InputError("must be a non-empty string or a list of non-empty strings", path=path, where="key 'authors'")
        if any(_control_characters(a) for a in authors):
            raise InputError("contains control characters", path=path, where="key 'authors'")
        if len(authors) > MAX_AUTHORS or any(len(a.strip()) > MAX_AUTHOR_CHARS for a in authors):
            raise InputError(f"at most {MAX_AUTHORS} authors of at most {MAX_AUTHOR_CHARS} characters each",
                             path=path, where="key 'authors'")
        for key, most in (("url", MAX_URL_CHARS), ("description", MAX_DESCRIPTION_CHARS)):
            if len(data[key].strip()) > most:
                raise InputError(f"at most {most:,} characters, got {len(data[key].strip()):,}", path=path,
                                 where=f"key '{key}'")
        reserved = {" ".join(a.split()).casefold() for a in BUILTIN_AUTHORS}
        if any(" ".join(a.split()).casefold() in reserved for a in authors):
            raise InputError(f"author {BUILTIN_AUTHORS[0]!r} is reserved for the built-in methods; give your own name(s)",
                             path=path, where="key 'authors'")
        url = data["url"].strip()
        if url and not re.match(r"^https?://\S+$", url):
            raise InputError(f"must be an http(s) URL or empty, got {url!r}", path=path, where="key 'url'")
        track = data["track"].strip()
        if track not in TRACKS:
            raise InputError(f"unknown track {track!r} (choose from {', '.join(TRACKS)})", path=path, where="key 'track'")
        fingerprint = data["dataset_fingerprint"].strip().lower()
        if not _SHA256.match(fingerprint):
            raise InputError("must be the 64-hex-digit sha256 'fingerprint' of the dataset's dataset.json",
                             path=path, where="key 'dataset_fingerprint'")
        return cls(
            name=name,
            authors=tuple(a.strip() for a in authors),
            description=data["description"].strip(),
            url=url,
            track=track,
            dataset_fingerprint=fingerprint,
        )

    def to_dict(self) -> dict:
        out = asdict(self)
        out["authors"] = list(self.authors)
        return out


def _control_characters(text: str, allow: str = "") -> bool:
    """Terminal escapes, zero-width and other non-printing characters (Unicode category C*)."""
    import unicodedata

    return any(unicodedata.category(ch).startswith("C") and ch not in allow for ch in text)


def slugify(text: str) -> str:
    """File-name-safe lower-case slug: 'LGBM Meta++ (v2)' -> 'lgbm-meta-plus-plus-v2'."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower().replace("+", "-plus-")).strip("-")
    return slug or "entry"
