"""The leaderboard as a static HTML site (`benchmark leaderboard --format site --output DIR`).

DIR/index.html       one section per track, one table per dataset (the columns and ranks of
                     leaderboards.render), sortable by clicking a column header (DIR/sort.js);
DIR/entries/<track>/<slug>.html
                     one page per entry: description, dataset, every metric with its 95 %
                     interval, the per-objective scheduling ratios (with p̂ and with the blind p̂)
                     per window, fairness, a p̂-vs-p plot (binned: median and 10–90 % of p̂ per
                     tenth of the test jobs by true p), the ratio bars of the scheduling track, and
                     provenance (sha256 of the predictions and of the submitted file, package
                     version, time, seed, dataset fingerprint) with a link to the entry's JSON;
DIR/entries/<track>/<slug>.json, <slug>-*.png (each with its .svg), DIR/style.css.
Nothing is fetched from the network; every text from an entry is HTML-escaped. The files are
written into DIR as given (the command line decides where DIR is).

May import the standard library, matplotlib, atlas_data.outputs (`write_figure`: PNG and SVG) and
leaderboards.{render, schema}.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

from leaderboards.render import TITLES, _dataset_line, _get, _groups, _notes, rank_entries, visible_columns
from leaderboards.schema import slugify

STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:90em}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.3em .6em}
td.num{text-align:right;font-variant-numeric:tabular-nums}tr.ref{color:#666;font-style:italic}
th{background:#f3f3f3}th.sortable{cursor:pointer}th.sortable:after{content:" \\2195";color:#999}
th[aria-sort=ascending]:after{content:" \\2191"}th[aria-sort=descending]:after{content:" \\2193"}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}code{font-size:90%}
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

esc = html.escape


def _page(title: str, body: list[str], depth: int) -> str:
    up = "../" * depth
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<link rel="icon" href="data:,">',  # no favicon request
        f"<title>{esc(title)}</title>",
        f'<link rel="stylesheet" href="{up}style.css"></head><body>',
        *body,
        f'<script src="{up}sort.js"></script>' if depth == 0 else "",
        "</body></html>",
    ]) + "\n"


def _sort_value(column, entry) -> str:
    value = column.value(entry)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return repr(float(value))
    return "" if value is None and column.numeric else column.text(entry)


def entry_file(entry: dict) -> str:
    """The entry's page name: its slug, made file-safe again (an edited entry file could hold anything)."""
    return slugify(str(entry.get("slug") or entry.get("name") or "entry"))


def write_site(entries_by_track: dict[str, list[dict]], out_dir: Path | str) -> Path:
    """Write the site into `out_dir` (created if missing); return the index page's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "style.css").write_text(STYLE, encoding="utf-8")
    (out / "sort.js").write_text(SORT_JS, encoding="utf-8")
    body = ["<h1>ATLAS-Bench leaderboards</h1>",
            "<p>Click a column header to sort; click a name for the entry's page (metrics, intervals, plots, "
            "provenance).</p>"]
    for track, entries in entries_by_track.items():
        body.append(f'<section id="{esc(track)}"><h2>{esc(TITLES[track].capitalize())}</h2>')
        if not entries:
            body.append("<p><em>No entries yet.</em></p></section>")
            continue
        for ds, group in _groups(entries):
            cols, dropped = visible_columns(track, group)
            body.append(f"<p><em>{esc(_dataset_line(ds, len(group)))}</em></p>")
            body.append(f'<table class="sortable" data-track="{esc(track)}"><thead><tr>'
                        + "".join(f"<th>{esc(c.title)}</th>" for c in cols) + "</tr></thead><tbody>")
            for position, (rank, e) in enumerate(rank_entries(group, track)):
                page = f"entries/{track}/{entry_file(e)}.html"
                cells = [f'<td class="num" data-sort="{position}">{esc(rank)}</td>',
                         f'<td data-sort="{esc(e["name"].lower(), quote=True)}"><a href="{esc(page, quote=True)}">'
                         f'{esc(e["name"])}</a></td>']
                for c in cols[2:]:
                    cls = ' class="num"' if c.numeric else ""
                    cells.append(f'<td{cls} data-sort="{esc(_sort_value(c, e), quote=True)}">{esc(c.text(e))}</td>')
                row_cls = ' class="ref"' if rank == "ref" else ""
                body.append(f"<tr{row_cls}>" + "".join(cells) + "</tr>")
                _write_entry_page(out / "entries" / track, e, track)
            body.append("</tbody></table>")
            body.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in _notes(track, group) + dropped) + "</ul>")
        body.append("</section>")
    index = out / "index.html"
    index.write_text(_page("ATLAS-Bench leaderboards", body, 0), encoding="utf-8")
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


def _table(head: list[str], rows: list[list[str]]) -> str:
    return ("<table><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>" for row in rows)
            + "</tbody></table>")


def _write_entry_page(folder: Path, e: dict, track: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    stem = entry_file(e)
    (folder / f"{stem}.json").write_text(json.dumps(e, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    body = ['<p><a href="../../index.html">← all entries</a></p>', f"<h1>{esc(e['name'])}</h1>",
            f"<p>{esc(', '.join(e.get('authors') or []))} — {esc(TITLES[track])}"
            + (" — built-in" if e.get("builtin") else "") + (" — reference (not ranked)" if e.get("reference") else "")
            + "</p>"]
    if e.get("description"):
        body.append(f"<p>{esc(e['description'])}</p>")
    url = str(e.get("url") or "")
    if url.startswith(("http://", "https://")):
        body.append(f'<p>Project: <a href="{esc(url, quote=True)}">{esc(url)}</a></p>')
    lo, hi = (e.get("score_interval") or [None, None])[:2]
    score_name = "Scheduling score" if track == "scheduling" else "Cov@25"
    body.append(f"<p><strong>{score_name}: {esc(_num(e.get('score')))}</strong>"
                + (f" (95 % interval {esc(_num(lo))}–{esc(_num(hi))})" if lo is not None and hi is not None else "")
                + "</p>")
    p = e.get("prediction") or {}
    intervals = p.get("intervals") or {}
    rows = []
    for key, label in (("cov25", "Cov@25"), ("cov50", "Cov@50"), ("cov25_recurrent", "Cov@25 recurrent"),
                       ("cov50_recurrent", "Cov@50 recurrent"), ("rmsle", "RMSLE"), ("spearman", "Spearman ρ"),
                       ("interval_coverage", "interval coverage"), ("interval_width", "interval log-width")):
        span = intervals.get(key)
        rows.append([label, _num(p.get(key)), f"{_num(span[0])}–{_num(span[1])}" if span and span[0] is not None else "–"])
    body += ["<h2>Prediction metrics</h2>", f"<p>{esc(str(p.get('n_jobs', '?')))} test jobs; intervals: 95 % bootstrap over test jobs.</p>",
             _table(["metric", "value", "95 % interval"], rows)]
    if p.get("calibration"):
        _plot_calibration(p["calibration"], folder / f"{stem}-p-hat-vs-p.png", e["name"])
        body.append(f'<img src="{esc(stem)}-p-hat-vs-p.png" alt="p-hat against p">')
    s = e.get("scheduling")
    if s:
        body.append("<h2>Scheduling</h2>")
        body.append(f"<p>{esc(str(s.get('windows')))} disjoint windows of at most "
                    f"{esc(str((s.get('window_jobs') or {}).get('total_completion')))} consecutive test jobs each; blind p̂ = "
                    f"{esc(_num(s.get('blind_p_hat')))} s for every job. Values: geometric mean over windows (95 % "
                    "bootstrap interval).</p>")
        rows = []
        for objective, policies in (("total_completion", ("spjf", "sprpt")), ("max_stretch", ("sprpt", "edf-p")),
                                    ("makespan", ("lppt",))):
            block = s.get(objective) or {}
            for policy in policies:
                part = block.get(policy) or {}
                rows.append([objective, policy, _with_interval(part.get("ratio")), _with_interval(part.get("blind_ratio"))])
            rows.append([objective, "p̂ / blind", _with_interval(block.get("relative")), ""])
        body.append(_table(["objective", "policy", "ratio with p̂", "ratio with the blind p̂"], rows))
        _plot_ratios(s, folder / f"{stem}-ratios.png", e["name"])
        body.append(f'<img src="{esc(stem)}-ratios.png" alt="ratio bars">')
        fair = s.get("fairness")
        if fair:
            body.append("<h3>Fairness (not in the score)</h3>")
            body.append(_table(["metric", "value"], [
                ["avg slowdown astraea-p / astraea", _with_interval(fair.get("slowdown_ratio"))],
                ["avg JCT astraea-p / astraea", _with_interval(fair.get("jct_ratio"))],
                ["tenant-loss intervals astraea-p − astraea", _with_interval(fair.get("tenant_loss_delta"))],
                ["sharing-loss jobs astraea-p − astraea", _with_interval(fair.get("sharing_loss_delta"))],
                ["astraea-p sharing-loss jobs", _with_interval(fair.get("sharing_loss_jobs"))],
                ["jobs per window", fair.get("n_jobs")],
                ["offered load / capacity", _num(fair.get("target_load"), 2)],
                ["clusters", ", ".join(sorted({w.get("cluster", "?") for w in fair.get("windows") or []}))],
            ]))
    prov = e.get("provenance") or {}
    ds = e.get("dataset") or {}
    body += ["<h2>Provenance</h2>", _table(["field", "value"], [
        ["predictions sha256 (canonical CSV)", prov.get("predictions_sha256") or "–"],
        ["predictions.parquet sha256", prov.get("predictions_file_sha256") or "– (built-in)"],
        ["package version", prov.get("package_version") or "–"],
        ["created (UTC)", prov.get("created") or "–"],
        ["seed", prov.get("seed")],
        ["dataset", f"{ds.get('source')} — fingerprint {ds.get('fingerprint')}"],
    ]), f'<p><a href="{esc(stem)}.json">the entry as JSON</a></p>']
    (folder / f"{stem}.html").write_text(_page(f"{e['name']} — ATLAS-Bench", body, 2), encoding="utf-8")


def _figure(width: float = 5.5):
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    return Figure(figsize=(width, 3.6), dpi=90, layout="constrained")


def _save(fig, path: Path) -> None:
    from atlas_data.outputs import write_figure  # PNG for the page, SVG beside it

    write_figure(fig, path, dpi=90)


def _plot_calibration(cal: dict, path: Path, name: str) -> None:
    fig = _figure(7.0)
    ax = fig.add_subplot()
    x = [v for v in cal.get("p_median") or []]
    q10, q50, q90 = cal.get("p_hat_q10") or [], cal.get("p_hat_q50") or [], cal.get("p_hat_q90") or []
    ax.fill_between(x, q10, q90, alpha=0.3, label="p̂ 10–90 %")
    ax.plot(x, q50, "o-", label="median p̂")
    if x:
        lo, hi = max(min(x + q10), 1e-3), max(x + q90)
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8, label="p̂ = p")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("true p (s), median of each tenth of the test jobs")
    ax.set_ylabel("predicted p̂ (s)")
    ax.set_title(f"p̂ against p — {name}"[:70], fontsize=9)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=7, frameon=False)
    _save(fig, path)


def _plot_ratios(s: dict, path: Path, name: str) -> None:
    labels, means, errs = [], [], [[], []]
    for objective, title in (("total_completion", "ΣC_j"), ("max_stretch", "max S_j"), ("makespan", "C_max")):
        summary = _get(s, objective, "relative") or {}
        if summary.get("mean") is None:
            continue
        labels.append(title)
        means.append(summary["mean"])
        errs[0].append(summary["mean"] - (summary.get("lo") or summary["mean"]))
        errs[1].append((summary.get("hi") or summary["mean"]) - summary["mean"])
    score = s.get("score") or {}
    if score.get("mean") is not None:
        labels.append("score")
        means.append(score["mean"])
        errs[0].append(score["mean"] - (score.get("lo") or score["mean"]))
        errs[1].append((score.get("hi") or score["mean"]) - score["mean"])
    fig = _figure()
    ax = fig.add_subplot()
    has_score = score.get("mean") is not None
    ax.bar(range(len(means)), means, yerr=errs, capsize=4,
           color=["#1f77b4"] * (len(means) - has_score) + ["#ff7f0e"] * has_score)
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("ratio with p̂ / with the blind p̂")
    ax.set_title(f"lower is better, 1 = blind — {name}"[:70], fontsize=9)
    _save(fig, path)
