"""The committed built-in entries belong to the default dataset that this code builds.

If the dataset pipeline changes the default dataset's content, its fingerprint moves and this test
fails until the entries are rebuilt (`benchmark leaderboard --rebuild-builtin`), so a fresh
install always ranks submissions against the built-ins.
"""

import json

from atlas_data.build import ensure_default_dataset, load_dataset
from leaderboards.schema import ENTRY_SCHEMA, TRACKS
from leaderboards.store import default_entries_dir, load_entries
from predictors.methods import BUILTIN_METHODS


def test_committed_entries_match_a_freshly_built_default_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("ATLAS_BENCH_CACHE", str(tmp_path))  # built here, from scratch, by this code
    frame, card = load_dataset(ensure_default_dataset())
    n_test = int((frame["split"] == "test").sum())
    for track in TRACKS:
        entries = [e for e in load_entries(default_entries_dir(), track) if e["builtin"]]
        assert sorted(e["name"] for e in entries) == sorted(BUILTIN_METHODS), track
        for e in entries:
            assert e["schema"] == ENTRY_SCHEMA
            assert e["dataset"]["fingerprint"] == card["fingerprint"], (
                f"{track}/{e['slug']}: built for dataset {e['dataset']['fingerprint'][:12]}…, the default dataset is now "
                f"{card['fingerprint'][:12]}… — run `benchmark leaderboard --rebuild-builtin`")
            assert e["dataset"]["default"] is True and e["dataset"]["n_test"] == n_test
            assert e["slug"].endswith(card["fingerprint"][:8])
    # one table per track: every built-in entry is on the same dataset
    fingerprints = {json.loads(p.read_text())["dataset"]["fingerprint"] for p in default_entries_dir().rglob("*.json")}
    assert fingerprints == {card["fingerprint"]}
