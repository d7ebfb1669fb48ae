"""The committed built-in entries belong to the default dataset that this code builds, and hold
the scores that this code computes.

If the dataset pipeline changes the default dataset's content, its fingerprint moves; if the
scoring changes (a normaliser, a policy, a metric), the reference entries' figures move. Either
way these tests fail until the entries are rebuilt (`benchmark leaderboard --rebuild-builtin`), so
a fresh install always ranks submissions against built-ins scored by its own code.
"""

import json

import pytest

from atlas_data.build import ensure_default_dataset, load_dataset
from leaderboards.schema import ENTRY_SCHEMA, TRACKS
from leaderboards.store import default_entries_dir, load_entries
from predictors.methods import LEADERBOARD_METHODS


@pytest.fixture(scope="module")
def fresh_default(tmp_path_factory):
    """The default dataset built here, from scratch, by this code (its own cache).

    The entries below are scored with the cluster simulator compiled at any size (where numba is
    installed; `auto` compiles it from CLUSTER_AUTO_MIN_JOBS jobs): an entry's fairness block is 16
    runs of a few hundred jobs, which as Python took 10 of the 12 s of CPU a re-scored entry took,
    compiled (loaded from numba's cache) 2-4 s in all (2026-12-06). The loop changes no figure: both
    give the same runs bit for bit (tests/schedulers/test_cluster_compiled.py), and the entries rebuilt
    either way were the same files but for their time stamps.
    """
    patch = pytest.MonkeyPatch()
    patch.setenv("ATLAS_BENCH_CACHE", str(tmp_path_factory.mktemp("cache")))
    patch.setattr("schedulers.jit.CLUSTER_AUTO_MIN_JOBS", 0)
    yield ensure_default_dataset()
    patch.undo()


def test_committed_entries_match_a_freshly_built_default_dataset(fresh_default):
    frame, card = load_dataset(fresh_default)
    n_test = int((frame["split"] == "test").sum())
    for track in TRACKS:
        entries = [e for e in load_entries(default_entries_dir(), track) if e["builtin"]]
        assert sorted(e["name"] for e in entries) == sorted(LEADERBOARD_METHODS), track
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


def _close(committed, computed, where=""):
    """Equal structure, numbers equal to 1e-12 (relative): the scoring is deterministic."""
    if isinstance(committed, dict):
        assert isinstance(computed, dict) and sorted(committed) == sorted(computed), where
        for key in committed:
            _close(committed[key], computed[key], f"{where}.{key}")
    elif isinstance(committed, list):
        assert isinstance(computed, list) and len(committed) == len(computed), where
        for i, (a, b) in enumerate(zip(committed, computed)):
            _close(a, b, f"{where}[{i}]")
    elif isinstance(committed, float) or isinstance(computed, float):
        assert computed == pytest.approx(committed, rel=1e-12, abs=1e-12), f"{where}: committed {committed}, now {computed}"
    else:
        assert committed == computed, where


@pytest.mark.parametrize("method", ["oracle", "constant"])
def test_committed_reference_scores_are_what_this_code_computes(fresh_default, method):
    """Two cheap entries re-scored end to end (p̂ = p, and the train median): the scheduling block
    (every policy, objective, window and normaliser) and the prediction block."""
    from leaderboards.builtin import rebuild_builtin

    entries_dir = fresh_default.parent / f"entries-{method}"
    written = {json.loads(p.read_text())["track"]: json.loads(p.read_text())
               for p in rebuild_builtin(fresh_default, entries_dir, methods=[method])}
    for track, entry in written.items():
        (committed,) = [e for e in load_entries(default_entries_dir(), track) if e["name"] == method]
        for block in ("prediction", "scheduling", "score", "score_interval"):
            _close(committed.get(block), entry.get(block), f"{track}/{method}.{block}")
