"""Ranking order and content of the rendered leaderboards, from hand-made entries."""

import hashlib
import json
import re

import pytest

from atlas_data.errors import InputError
from benchmark.cli import main
from leaderboards.render import rank_entries, render_html, render_markdown
from leaderboards.schema import ENTRY_KEYS, ENTRY_SCHEMA
from leaderboards.store import load_entries, write_entry

FP = "ab" * 32
OTHER_FP = "cd" * 32


# How hard each of the 32 scoring windows is, the same for every entry (log units, mean 0): entries with
# different means differ by the same amount on every window, so the paired rule separates them.
DIFFICULTY = [0.3 * ((7 * k) % 11 - 5) / 5 for k in range(32)]
DIFFICULTY = [d - sum(DIFFICULTY) / 32 for d in DIFFICULTY]


def _summary(mean, half=0.0, values=None):
    return None if mean is None else {"values": values or [mean], "mean": mean, "lo": mean - half, "hi": mean + half}


def _windows(mean, *, log=True):
    """Per-window values with this (geometric, for log) mean."""
    import math

    if mean is None:
        return [None] * 32
    return [mean * math.exp(d) for d in DIFFICULTY] if log else [mean + 0.1 * d for d in DIFFICULTY]


def _entry(name, track="prediction", *, cov25=None, rmsle=None, score=None, half=0.01, reference=False, fp=FP, url="",
           sha=None, created="2026-12-01T10:00:00Z", default=True, jct=0.98, slowdown=0.95, spjf=1.25):
    sha = sha or hashlib.sha256(name.encode()).hexdigest()  # distinct predictions per entry
    prediction = {"n_jobs": 10, "rmsle": rmsle, "cov25": cov25, "cov50": None, "cov25_recurrent": None,
                  "cov50_recurrent": None, "spearman": 0.5, "interval_coverage": None, "interval_width": None,
                  "intervals": {"cov25": None if cov25 is None else [cov25 - half, cov25 + half], "rmsle": None},
                  "windows": {"jobs": [5] * 32, "cov25": _windows(cov25, log=False)}}
    scheduling = None
    if track == "scheduling":
        scheduling = {"score": _summary(score, half, _windows(score)), "windows": 32, "window_jobs": {"total_completion": 5},
                      "total_completion": {"spjf": {"ratio": _summary(spjf, 0.01)},
                                           "relative": _summary(score, half)},
                      "fairness": {"n_jobs": 20, "target_load": 1.0, "slowdown_ratio": _summary(slowdown, 0.002),
                                   "jct_ratio": _summary(jct, 0.001), "tenant_loss_delta": _summary(-0.004, 0.001),
                                   "sharing_loss_delta": _summary(0.0, 0.0), "sharing_loss_jobs": _summary(0.071, 0.0),
                                   "windows": [{}] * 8}}
    entry = {
        "schema": ENTRY_SCHEMA, "track": track, "name": name, "slug": re.sub(r"[^a-z0-9]+", "-", name.lower()) + "-" + fp[:8],
        "authors": ["Ann", "Bo"], "description": "", "url": url, "builtin": False, "reference": reference,
        "dataset": {"fingerprint": fp, "source": "synthetic", "n_test": 10, "default": default},
        "prediction": prediction, "scheduling": scheduling,
        "score": cov25 if track == "prediction" else score,
        "score_interval": [None, None] if (cov25 if track == "prediction" else score) is None else
        [(cov25 if track == "prediction" else score) - half, (cov25 if track == "prediction" else score) + half],
        "provenance": {"predictions_sha256": sha, "predictions_file_sha256": None, "package_version": "0.1.0",
                       "created": created, "seed": 0},
    }
    assert tuple(entry) == ENTRY_KEYS
    return entry


PREDICTION = [
    _entry("mid", cov25=0.40, rmsle=0.9),
    _entry("best", cov25=0.50, rmsle=1.2, url="https://example.org/best", sha="0123456789ab" + "0" * 52),
    _entry("tie-better-rmsle", cov25=0.40, rmsle=0.8),
    _entry("oracle", cov25=1.0, rmsle=0.0, reference=True),
    _entry("unscored", cov25=None, rmsle=None),
]
SCHEDULING = [
    _entry("s-worse", "scheduling", score=0.8, cov25=0.1, spjf=1.5),
    _entry("s-better", "scheduling", score=0.4, cov25=0.2),
    _entry("s-oracle", "scheduling", score=0.05, reference=True, spjf=1.0),
    _entry("s-none", "scheduling", score=None),
]


def _names_in_order(text, names):
    pos = {n: text.index(f"| {n} |") if f"| {n} |" in text else text.index(f"[{n}]") for n in names}
    return sorted(names, key=pos.get)


def test_rank_order():
    assert [(r, e["name"]) for r, e in rank_entries(PREDICTION, "prediction")] == [
        ("1", "best"), ("=2", "tie-better-rmsle"), ("=2", "mid"), ("–", "unscored"), ("ref", "oracle")]
    assert [(r, e["name"]) for r, e in rank_entries(SCHEDULING, "scheduling")] == [
        ("1", "s-better"), ("2", "s-worse"), ("–", "s-none"), ("ref", "s-oracle")]


def test_ranks_come_from_the_windows_not_from_overlapping_intervals():
    """Paired rule (leaderboards.ranking; its own tests: test_paired_ranking.py): better on every window
    ranks above, however much the marginal intervals overlap; the same values on every window tie."""
    entries = [_entry("a", "scheduling", score=0.50, half=0.2), _entry("b", "scheduling", score=0.515, half=0.2),
               _entry("b-twin", "scheduling", score=0.515, half=0.2), _entry("c", "scheduling", score=0.70, half=0.2)]
    assert [(r, e["name"]) for r, e in rank_entries(entries, "scheduling")] == [
        ("1", "a"), ("=2", "b"), ("=2", "b-twin"), ("4", "c")]


def test_columns_that_separate_no_two_entries_are_left_out_and_named():
    md = render_markdown({"scheduling": SCHEDULING})
    header = next(line for line in md.splitlines() if line.startswith("| # |"))
    # every ASTRAEA-P interval overlaps (the same values ± a little for all): dropped and explained; SPJF ΣC separates
    assert "ASTRAEA-P" not in header and "SPJF ΣC" in header
    assert "Not shown, as they separate no two entries: " in md
    assert "ASTRAEA-P slowdown (0.950 for every entry)" in md and "ASTRAEA-P JCT (0.980 for every entry)" in md
    assert "ASTRAEA-P Δ tenant loss (-0.40 pp for every entry)" in md
    assert "astraea-p with p̂ beside astraea on 8 windows of 20 jobs, 8-GPU nodes for an offered load of 100.0 %" in md
    # a fairness value that differs beyond the intervals is shown, the others are still left out
    rows = SCHEDULING[:1] + [_entry("fair", "scheduling", score=0.6, slowdown=0.90)]
    header = next(line for line in render_markdown({"scheduling": rows}).splitlines() if line.startswith("| # |"))
    assert "ASTRAEA-P slowdown" in header and "ASTRAEA-P JCT" not in header


def test_markdown_prediction_table():
    md = render_markdown({"prediction": PREDICTION})
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| # |"))
    # Cov@50, Cov@25/50 rec., Spearman and Interval cov. read the same on every row: left out
    assert header == "| # | Name | Authors | Cov@25 | RMSLE | Date | sha256 |"
    rows = [line for line in lines if re.match(r"^\| (=?\d+|ref|–) \|", line)]
    assert rows[0] == "| 1 | [best](https://example.org/best) | Ann, Bo | 50.0 % (49.0–51.0) | 1.200 | 2026-12-01 | 0123456789ab |"
    assert [r.split(" | ")[1] for r in rows] == ["[best](https://example.org/best)", "tie-better-rmsle", "mid", "unscored", "oracle"]
    assert rows[-1].startswith("| ref | oracle |")
    assert "_dataset synthetic (default), fingerprint abababababab…, 10 test jobs, 5 entries_" in md
    assert "ranked by Cov@25 (higher is better; 95 % bootstrap interval over test jobs), then RMSLE" in md
    assert "Cov@50 (– for every entry)" in md and "Spearman (0.500 for every entry)" in md


def test_markdown_scheduling_table_and_empty_track():
    md = render_markdown({"prediction": [], "scheduling": SCHEDULING})
    assert "## Prediction track\n\n_No entries yet._" in md
    rows = [line for line in md.splitlines() if re.match(r"^\| (=?\d+|ref|–) \|", line)]
    assert [r.split(" | ")[1] for r in rows] == ["s-better", "s-worse", "s-none", "s-oracle"]
    header = next(line for line in md.splitlines() if line.startswith("| # |")).split(" | ")
    cells = dict(zip(header, rows[0].split(" | ")))
    assert cells["Score"] == "0.400 (0.390–0.410)" and cells["ΣC_j vs blind"] == "0.400" and cells["SPJF ΣC"] == "1.2500"
    assert "log(ratio with p̂ / ratio with the blind p̂)" in md and "32 disjoint windows of at most 5 consecutive test jobs" in md


def test_datasets_are_separate_tables_default_first():
    entries = [_entry("other-ds", cov25=0.9, rmsle=0.1, fp=OTHER_FP, default=False), _entry("default-ds", cov25=0.2, rmsle=2.0)]
    md = render_markdown({"prediction": entries})
    assert md.index("fingerprint abababababab…") < md.index("fingerprint cdcdcdcdcdcd…")
    rows = [line for line in md.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert [r.split(" | ")[:2] for r in rows] == [["| 1", "default-ds"], ["| 1", "other-ds"]]


def test_html_escapes_and_orders():
    evil = _entry("<script>alert(1)</script>", cov25=0.45, rmsle=1.0, url="https://x.org/?a=1&b=<2>")
    page = render_html({"prediction": PREDICTION + [evil]})
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="https://x.org/?a=1&amp;b=&lt;2&gt;"' in page
    order = [page.index(f">{n}<") for n in ("best", "tie-better-rmsle", "mid", "unscored", "oracle")]
    assert order == sorted(order)
    table = page[page.index("<table"):]  # the forest plot above it holds the names too, as its labels
    assert table.index(">best<") < table.index("&lt;script&gt;") < table.index(">tie-better-rmsle<")
    assert '<tr class="ref"><td class="num">ref</td><td>oracle</td>' in page


def test_cli_renders_stored_entries(tmp_path, capsys):
    for e in PREDICTION + SCHEDULING:
        write_entry(e, tmp_path)
    assert sorted(p.name for p in (tmp_path / "prediction").iterdir()) == sorted(f"{e['slug']}.json" for e in PREDICTION)
    assert len(load_entries(tmp_path, "scheduling")) == 4
    # an entry scored by an older version (another score) is named, not mixed in
    old = dict(SCHEDULING[0], schema=1, name="old", slug="old-abababab")
    (tmp_path / "scheduling" / "old-abababab.json").write_text(json.dumps(old))
    with pytest.raises(InputError, match="old-abababab.json: entry of schema 1"):
        load_entries(tmp_path, "scheduling")
    (tmp_path / "scheduling" / "old-abababab.json").unlink()
    out = tmp_path / "board" / "lb.md"
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(tmp_path), "--output", str(out), "--quiet"]) == 0
    text = out.read_text()
    assert "## Prediction track" in text and "## Scheduling track" not in text
    assert _names_in_order(text, ["mid", "best", "tie-better-rmsle"]) == ["best", "tie-better-rmsle", "mid"]
    capsys.readouterr()
    assert main(["leaderboard", "--format", "html", "--entries-dir", str(tmp_path)]) == 0
    page = capsys.readouterr().out
    assert page.index('id="prediction"') < page.index('id="scheduling"') and ">s-better<" in page


def test_malformed_entry_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "prediction").mkdir()
    (tmp_path / "prediction" / "broken.json").write_text("{not json")
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "broken.json" in err[0] and "invalid JSON" in err[0]
    (tmp_path / "prediction" / "broken.json").write_text(json.dumps({"track": "prediction"}))
    assert main(["leaderboard", "--track", "prediction", "--entries-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "missing key(s) schema" in err[0]


def test_a_missing_entries_folder_is_not_an_empty_board(tmp_path, capsys):
    """A mistyped --entries-dir is exit 2, not "No entries yet"; an existing folder without entries is empty."""
    for where, text in ((tmp_path / "nowhere", "entries folder does not exist"),
                        (tmp_path / "file.json", "entries folder is a file, not a folder")):
        if where.suffix:
            where.write_text("{}")
        assert main(["leaderboard", "--entries-dir", str(where)]) == 2
        captured = capsys.readouterr()
        err = captured.err.splitlines()
        assert len(err) == 1 and str(where) in err[0] and "--entries-dir" in err[0] and text in err[0], err
        assert captured.out == ""
    (tmp_path / "empty").mkdir()
    assert main(["leaderboard", "--entries-dir", str(tmp_path / "empty")]) == 0
    assert "_No entries yet._" in capsys.readouterr().out


def _corrupt(change):
    def apply(entry):
        change(entry)
        return entry
    return apply


# (id, track, change to one valid entry, the key the one error line names)
MISTYPED = [
    ("name-null", "prediction", _corrupt(lambda e: e.update(name=None)), "key 'name'"),
    ("name-number", "scheduling", _corrupt(lambda e: e.update(name=3)), "key 'name'"),
    ("score-text", "scheduling", _corrupt(lambda e: e.update(score="abc")), "key 'score'"),
    ("prediction-null-score-text", "prediction", _corrupt(lambda e: e.update(score="abc", prediction=None)),
     "key 'prediction'"),
    ("score-text-prediction", "prediction", _corrupt(lambda e: e.update(score="abc")), "key 'score'"),
    ("score-not-cov25", "prediction", _corrupt(lambda e: e.update(score=None)), "key 'score'"),
    ("score-not-scheduling-mean", "scheduling", _corrupt(lambda e: e.update(score=0.1)), "key 'score'"),
    ("authors-text", "prediction", _corrupt(lambda e: e.update(authors="Ann")), "key 'authors'"),
    ("builtin-text", "prediction", _corrupt(lambda e: e.update(builtin="no")), "key 'builtin'"),
    ("url-null", "prediction", _corrupt(lambda e: e.update(url=None)), "key 'url'"),
    ("dataset-list", "prediction", _corrupt(lambda e: e.update(dataset=[])), "key 'dataset'"),
    ("rmsle-text", "prediction", _corrupt(lambda e: e["prediction"].update(rmsle="0.9")), "key 'prediction.rmsle'"),
    ("cov25-interval", "prediction", _corrupt(lambda e: e["prediction"]["intervals"].update(cov25=["a", 1])),
     "key 'prediction.intervals.cov25'"),
    ("score-interval-short", "scheduling", _corrupt(lambda e: e.update(score_interval=[0.1])), "key 'score_interval'"),
    ("summary-text", "scheduling", _corrupt(lambda e: e["scheduling"]["total_completion"]["relative"].update(mean="x")),
     "key 'scheduling.total_completion.relative'"),
    ("scheduling-on-prediction", "prediction", _corrupt(lambda e: e.update(scheduling={})), "key 'scheduling'"),
    ("scheduling-null", "scheduling", _corrupt(lambda e: e.update(scheduling=None)), "key 'scheduling'"),
    ("created-number", "prediction", _corrupt(lambda e: e["provenance"].update(created=20261201)), "key 'provenance.created'"),
]


@pytest.mark.parametrize("case", MISTYPED, ids=[c[0] for c in MISTYPED])
def test_mistyped_entry_is_one_line_exit_2(case, tmp_path, capsys):
    """load_entries checks types, not only keys: no internal error, no row of dashes ranked among the others."""
    _, track, change, key = case
    rows = PREDICTION if track == "prediction" else SCHEDULING
    for e in rows:
        write_entry(json.loads(json.dumps(e)), tmp_path)
    victim = tmp_path / track / f"{rows[0]['slug']}.json"
    victim.write_text(json.dumps(change(json.loads(victim.read_text()))))
    for fmt in ("md", "html"):
        capsys.readouterr()
        assert main(["leaderboard", "--track", track, "--format", fmt, "--entries-dir", str(tmp_path)]) == 2
        captured = capsys.readouterr()
        err = captured.err.splitlines()
        assert len(err) == 1 and err[0].startswith("error: "), captured.err
        assert str(victim) in err[0] and key in err[0] and "not a valid entry" in err[0], err[0]
        assert captured.out == ""


def test_entries_without_a_score_are_last_whatever_their_metrics():
    """Order and rank come from the same value: an entry without a score is '–' at the end of the
    table, even with a Cov@25 that would put it first."""
    stray = dict(_entry("stray", cov25=0.9, rmsle=0.1), score=None, score_interval=[None, None])
    ranked = [(r, e["name"]) for r, e in rank_entries(PREDICTION + [stray], "prediction")]
    assert ranked == [("1", "best"), ("=2", "tie-better-rmsle"), ("=2", "mid"), ("–", "stray"), ("–", "unscored"),
                      ("ref", "oracle")]


@pytest.mark.parametrize("name,slug", [("LGBM Meta++ (v2)", "lgbm-meta-plus-plus-v2"), ("crr++", "crr-plus-plus"), ("***", "entry")])
def test_slugify(name, slug):
    from leaderboards.schema import slugify

    assert slugify(name) == slug
