"""Ranking order and content of the rendered leaderboards, from hand-made entries."""

import hashlib
import json
import re

import pytest

from benchmark.cli import main
from leaderboards.render import rank_entries, render_html, render_markdown
from leaderboards.schema import ENTRY_KEYS
from leaderboards.store import load_entries, write_entry

FP = "ab" * 32
OTHER_FP = "cd" * 32


def _entry(name, track="prediction", *, cov25=None, rmsle=None, score=None, reference=False, fp=FP, url="",
           sha=None, created="2026-12-01T10:00:00Z", default=True):
    sha = sha or hashlib.sha256(name.encode()).hexdigest()  # distinct predictions per entry
    prediction = {"n_jobs": 10, "rmsle": rmsle, "cov25": cov25, "cov50": None, "cov25_recurrent": None,
                  "cov50_recurrent": None, "spearman": 0.5, "interval_coverage": None, "interval_width": None}
    scheduling = None
    if track == "scheduling":
        scheduling = {"score": score, "total_completion": {"spjf": {"ratio": 1.25, "flow_ratio": 1.5}},
                      "fairness": {"jct_ratio": 0.98, "astraea-p": {"sharing_loss_jobs": 0.071}}}
    entry = {
        "schema": 1, "track": track, "name": name, "slug": re.sub(r"[^a-z0-9]+", "-", name.lower()) + "-" + fp[:8],
        "authors": ["Ann", "Bo"], "description": "", "url": url, "builtin": False, "reference": reference,
        "dataset": {"fingerprint": fp, "source": "synthetic", "n_test": 10, "default": default},
        "prediction": prediction, "scheduling": scheduling,
        "score": cov25 if track == "prediction" else score,
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
    _entry("s-worse", "scheduling", score=3.5, cov25=0.1),
    _entry("s-better", "scheduling", score=1.75, cov25=0.2),
    _entry("s-oracle", "scheduling", score=1.01, reference=True),
    _entry("s-none", "scheduling", score=None),
]


def _names_in_order(text, names):
    pos = {n: text.index(f"| {n} |") if f"| {n} |" in text else text.index(f"[{n}]") for n in names}
    return sorted(names, key=pos.get)


def test_rank_order():
    assert [(r, e["name"]) for r, e in rank_entries(PREDICTION, "prediction")] == [
        ("1", "best"), ("2", "tie-better-rmsle"), ("3", "mid"), ("4", "unscored"), ("ref", "oracle")]
    assert [(r, e["name"]) for r, e in rank_entries(SCHEDULING, "scheduling")] == [
        ("1", "s-better"), ("2", "s-worse"), ("3", "s-none"), ("ref", "s-oracle")]


def test_markdown_prediction_table():
    md = render_markdown({"prediction": PREDICTION})
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| # |"))
    assert header == ("| # | Name | Authors | Cov@25 | Cov@50 | Cov@25 rec. | Cov@50 rec. | RMSLE | Spearman | "
                      "Interval cov. | Date | sha256 |")
    rows = [line for line in lines if re.match(r"^\| (\d+|ref) \|", line)]
    assert rows[0] == ("| 1 | [best](https://example.org/best) | Ann, Bo | 50.0 % | – | – | – | 1.200 | 0.500 | – | "
                       "2026-12-01 | 0123456789ab |")
    assert [r.split(" | ")[1] for r in rows] == ["[best](https://example.org/best)", "tie-better-rmsle", "mid", "unscored", "oracle"]
    assert rows[-1].startswith("| ref | oracle |")
    assert "_dataset synthetic (default), fingerprint abababababab…, 10 test jobs, 5 entries_" in md
    assert "ranked by Cov@25 (higher is better), then RMSLE (lower is better)" in md


def test_markdown_scheduling_table_and_empty_track():
    md = render_markdown({"prediction": [], "scheduling": SCHEDULING})
    assert "## Prediction track\n\n_No entries yet._" in md
    rows = [line for line in md.splitlines() if re.match(r"^\| (\d+|ref) \|", line)]
    assert [r.split(" | ")[1] for r in rows] == ["s-better", "s-worse", "s-none", "s-oracle"]
    # score, SPJF ΣC, SPJF ΣF, ..., ASTRAEA-P JCT ratio and sharing loss
    cells = rows[0].split(" | ")
    assert cells[3:6] == ["1.7500", "1.2500", "1.5000"]
    assert "0.9800" in cells and "7.1 %" in cells
    assert "geometric mean of the five LASched ratios" in md


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
    assert page.index(">best<") < page.index("&lt;script&gt;") < page.index(">tie-better-rmsle<")
    assert '<tr class="ref"><td class="num">ref</td><td>oracle</td>' in page


def test_cli_renders_stored_entries(tmp_path, capsys):
    for e in PREDICTION + SCHEDULING:
        write_entry(e, tmp_path)
    assert sorted(p.name for p in (tmp_path / "prediction").iterdir()) == sorted(f"{e['slug']}.json" for e in PREDICTION)
    assert len(load_entries(tmp_path, "scheduling")) == 4
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


@pytest.mark.parametrize("name,slug", [("LGBM Meta++ (v2)", "lgbm-meta-plus-plus-v2"), ("crr++", "crr-plus-plus"), ("***", "entry")])
def test_slugify(name, slug):
    from leaderboards.schema import slugify

    assert slugify(name) == slug
