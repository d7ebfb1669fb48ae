"""The leaderboard as a static HTML site (`benchmark leaderboard --format site --output DIR`).

DIR/index.html       one section per track; per dataset a forest plot of the scores with their 95 %
                     intervals in rank order (inline SVG, also DIR/figures/forest-<track>-<fp>.svg;
                     leaderboards.figures) and the table (the columns and ranks of
                     leaderboards.render), sortable by clicking a column header (DIR/sort.js);
DIR/entries/<track>/<slug>.html
                     one page per entry: description, dataset, every metric with its 95 %
                     interval, the per-objective scheduling ratios (with p̂ and with the blind p̂)
                     per window, fairness, a p̂-vs-p plot (binned: median and 10–90 % of p̂ per
                     tenth of the test jobs by true p), the ratio bars of the scheduling track, and
                     provenance (sha256 of the predictions and of the submitted file, package
                     version, time, seed, dataset fingerprint) with a link to the entry's JSON;
DIR/entries/<track>/<slug>.json, <slug>-*.png (each with its .svg), DIR/style.css.
The pages are the templates of leaderboards/templates (site_index, entry), rendered with
autoescape: every text from an entry is HTML-escaped. Nothing is fetched from the network. The
files are written into DIR as given (the command line decides where DIR is).

May import the standard library, markupsafe (to mark the figures' SVG as markup: matplotlib escaped its
texts) and leaderboards.{render, schema, figures}.
"""

from __future__ import annotations

import json
from pathlib import Path


from leaderboards import figures
from leaderboards.render import TITLES, environment, sections
from leaderboards.schema import slugify

STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr.ref{color:#666;font-style:italic}
th{background:#f3f3f3}th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#999}
th[aria-sort=ascending]:after{content:" \\2191"}th[aria-sort=descending]:after{content:" \\2193"}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}code{font-size:90%}
figure.forest{margin:1em 0}figure.forest svg{max-width:100%;height:auto}figcaption{font-size:90%;color:#444}
"""

# Sort a table by the clicked column: numbers by value (data-sort), text alphabetically; a second
# click reverses. Written without any library so the site works from a file:// URL, offline.
SORT_JS = """"use strict";
document.querySelectorAll("table.sortable").forEach(function (table) {
  var heads = table.querySelectorAll("th");
  heads.forEach(function (th, col) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-sort"), y = b.cells[col].getAttribute("data-sort");
        var nx = parseFloat(x), ny = parseFloat(y), c;
        if (x === "" && y === "") { c = 0; } else if (x === "") { return 1; } else if (y === "") { return -1; }
        else if (!isNaN(nx) && !isNaN(ny)) { c = nx - ny; } else { c = x.localeCompare(y); }
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def entry_file(entry: dict) -> str:
    """The entry's page name: its slug, made file-safe again (an edited entry file could hold anything)."""
    return slugify(str(entry.get("slug") or entry.get("name") or "entry"))


def write_site(entries_by_track: dict[str, list[dict]], out_dir: Path | str) -> Path:
    """Write the site into `out_dir` (created if missing); return the index page's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "style.css").write_text(STYLE, encoding="utf-8")
    (out / "sort.js").write_text(SORT_JS, encoding="utf-8")
    board_sections = sections(entries_by_track)
    plots = figures.forest_plots(board_sections)
    for key, plot in plots.items():
        plot["file"] = f"figures/forest-{key}.svg"
        (out / "figures").mkdir(exist_ok=True)
        (out / plot["file"]).write_text(plot["text"], encoding="utf-8")
    for section in board_sections:
        for board in section.boards:
            for row in board.rows:
                _write_entry_page(out / "entries" / board.track, row.entry, board.track)
    index = out / "index.html"
    index.write_text(environment("html").get_template("site_index.html.j2").render(
        title="ATLAS-Bench leaderboards", up="", script=True, sections=board_sections, figures=plots,
        page=lambda track, row: f"entries/{track}/{entry_file(row.entry)}.html"), encoding="utf-8")
    return index


# ----- entry pages -------------------------------------------------------------------------------
def _num(v, digits: int = 4) -> str:
    return "–" if v is None else f"{v:.{digits}g}"


def _with_interval(summary: dict | None, digits: int = 4) -> str:
    if not isinstance(summary, dict) or summary.get("mean") is None:
        return "–"
    text = _num(summary["mean"], digits)
    if summary.get("lo") is not None and summary.get("hi") is not None:
        text += f" ({_num(summary['lo'], digits)}–{_num(summary['hi'], digits)})"
    return text


def _write_entry_page(folder: Path, e: dict, track: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    stem = entry_file(e)
    (folder / f"{stem}.json").write_text(json.dumps(e, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    url = str(e.get("url") or "")
    lo, hi = (e.get("score_interval") or [None, None])[:2]
    p = e.get("prediction") or {}
    intervals = p.get("intervals") or {}
    metrics = []
    for key, label in (("cov25", "Cov@25"), ("cov50", "Cov@50"), ("cov25_recurrent", "Cov@25 recurrent"),
                       ("cov50_recurrent", "Cov@50 recurrent"), ("rmsle", "RMSLE"), ("spearman", "Spearman ρ"),
                       ("interval_coverage", "interval coverage"), ("interval_width", "interval log-width")):
        span = intervals.get(key)
        metrics.append([label, _num(p.get(key)), f"{_num(span[0])}–{_num(span[1])}" if span and span[0] is not None else "–"])
    calibration = None
    if p.get("calibration"):
        calibration = f"{stem}-p-hat-vs-p.png"
        figures.calibration_figure(p["calibration"], folder / calibration, e["name"])
    s = e.get("scheduling")
    scheduling = None
    if s:
        rows = []
        for objective, policies in (("total_completion", ("spjf", "sprpt")), ("max_stretch", ("sprpt", "edf-p")),
                                    ("makespan", ("lppt",))):
            block = s.get(objective) or {}
            for policy in policies:
                part = block.get(policy) or {}
                rows.append([objective, policy, _with_interval(part.get("ratio")), _with_interval(part.get("blind_ratio"))])
            rows.append([objective, "p̂ / blind", _with_interval(block.get("relative")), ""])
        figures.ratios_figure(s, folder / f"{stem}-ratios.png", e["name"])
        fair = s.get("fairness")
        scheduling = {
            "windows": s.get("windows"),
            "jobs": (s.get("window_jobs") or {}).get("total_completion"), "blind": _num(s.get("blind_p_hat")),
            "rows": rows, "figure": f"{stem}-ratios.png",
            "fairness": [
                ["avg slowdown astraea-p / astraea", _with_interval(fair.get("slowdown_ratio"))],
                ["avg JCT astraea-p / astraea", _with_interval(fair.get("jct_ratio"))],
                ["tenant-loss intervals astraea-p − astraea", _with_interval(fair.get("tenant_loss_delta"))],
                ["sharing-loss jobs astraea-p − astraea", _with_interval(fair.get("sharing_loss_delta"))],
                ["astraea-p sharing-loss jobs", _with_interval(fair.get("sharing_loss_jobs"))],
                ["jobs per window", fair.get("n_jobs")],
                ["offered load / capacity", _num(fair.get("target_load"), 2)],
                ["clusters", ", ".join(sorted({w.get("cluster", "?") for w in fair.get("windows") or []}))],
            ] if fair else None,
        }
    prov = e.get("provenance") or {}
    ds = e.get("dataset") or {}
    provenance = [
        ["predictions sha256 (canonical CSV)", prov.get("predictions_sha256") or "–"],
        ["predictions.parquet sha256", prov.get("predictions_file_sha256") or "– (built-in)"],
        ["package version", prov.get("package_version") or "–"],
        ["created (UTC)", prov.get("created") or "–"],
        ["seed", prov.get("seed")],
        ["dataset", f"{ds.get('source')} — fingerprint {ds.get('fingerprint')}"],
    ]
    page = environment("html").get_template("entry.html.j2").render(
        title=f"{e['name']} — ATLAS-Bench", up="../../", script=False, e=e, track_title=TITLES[track],
        authors=", ".join(e.get("authors") or []), url=url if url.startswith(("http://", "https://")) else "",
        score_name="Scheduling score" if track == "scheduling" else "Cov@25", score=_num(e.get("score")),
        interval=(_num(lo), _num(hi)) if lo is not None and hi is not None else None,
        n_jobs=p.get("n_jobs", "?"), metrics=metrics, calibration=calibration, scheduling=scheduling,
        provenance=provenance, json=f"{stem}.json")
    (folder / f"{stem}.html").write_text(page, encoding="utf-8")
