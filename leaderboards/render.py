"""Ranking tables of leaderboard entries, as Markdown or as a standalone HTML page.

Ranking (one table per dataset fingerprint, the default dataset first):
- prediction track: Cov@25 descending, then RMSLE ascending, then name;
- scheduling track: the score (geometric mean of the five LASched ratios, see leaderboards.score)
  ascending, then name.
Reference entries (the `oracle` method, p̂ = p) are listed after the ranking, unranked: they show
the ceiling, they do not compete. Every row shows name (linked to its url), authors, the key
metrics, the date and the first 12 hex digits of the predictions' sha256.

May import the standard library only (entries are plain dicts).
"""

from __future__ import annotations

import html
import math
import re

TITLES = {"prediction": "prediction track", "scheduling": "scheduling track"}
RANK_RULE = {
    "prediction": "ranked by Cov@25 (higher is better), then RMSLE (lower is better)",
    "scheduling": ("ranked by the geometric mean of the five LASched ratios (lower is better, 1 = optimal): "
                   "SPJF and SPRPT on ΣC_j / ΣC_j(SRPT), SPRPT and EDF-P on max stretch / S*, "
                   "LPPT on C_max / McNaughton bound (mean over m = 5, 10, 20, 50, 100)"),
}


# ----- ranking ---------------------------------------------------------------------------------
def _key(entry: dict, track: str) -> tuple:
    if track == "prediction":
        p = entry.get("prediction") or {}
        cov = p.get("cov25")
        rmsle = p.get("rmsle")
        return (cov is None, -(cov or 0.0), rmsle if rmsle is not None else math.inf, entry["name"].lower())
    score = entry.get("score")
    return (score is None, score if score is not None else math.inf, entry["name"].lower())


def rank_entries(entries: list[dict], track: str) -> list[tuple[str, dict]]:
    """[(rank label, entry)] in table order: ranked entries 1..n, then reference entries ('ref')."""
    ranked = sorted((e for e in entries if not e.get("reference")), key=lambda e: _key(e, track))
    refs = sorted((e for e in entries if e.get("reference")), key=lambda e: _key(e, track))
    return [(str(i), e) for i, e in enumerate(ranked, 1)] + [("ref", e) for e in refs]


def _groups(entries: list[dict]) -> list[tuple[dict, list[dict]]]:
    """Entries per dataset fingerprint: the default dataset first, then the most entries first."""
    by_fp: dict[str, list[dict]] = {}
    for e in entries:
        by_fp.setdefault((e.get("dataset") or {}).get("fingerprint") or "?", []).append(e)
    groups = [(lst[0].get("dataset") or {}, lst) for lst in by_fp.values()]
    groups.sort(key=lambda g: (not g[0].get("default"), -len(g[1]), g[0].get("fingerprint") or ""))
    return groups


# ----- cells -------------------------------------------------------------------------------------
def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f} %"


def _f(v, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _get(d: dict | None, *path):
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


def columns(track: str) -> list[tuple[str, callable]]:
    common_tail = [
        ("Date", lambda e: str(_get(e, "provenance", "created") or "")[:10]),
        ("sha256", lambda e: str(_get(e, "provenance", "predictions_sha256") or "")[:12]),
    ]
    if track == "prediction":
        body = [
            ("Cov@25", lambda e: _pct(_get(e, "prediction", "cov25"))),
            ("Cov@50", lambda e: _pct(_get(e, "prediction", "cov50"))),
            ("Cov@25 rec.", lambda e: _pct(_get(e, "prediction", "cov25_recurrent"))),
            ("Cov@50 rec.", lambda e: _pct(_get(e, "prediction", "cov50_recurrent"))),
            ("RMSLE", lambda e: _f(_get(e, "prediction", "rmsle"))),
            ("Spearman", lambda e: _f(_get(e, "prediction", "spearman"))),
            ("Interval cov.", lambda e: _pct(_get(e, "prediction", "interval_coverage"))),
        ]
    else:
        body = [
            ("Score", lambda e: _f(e.get("score"), 4)),
            ("SPJF ΣC", lambda e: _f(_get(e, "scheduling", "total_completion", "spjf", "ratio"), 4)),
            ("SPJF ΣF", lambda e: _f(_get(e, "scheduling", "total_completion", "spjf", "flow_ratio"), 4)),
            ("SPRPT ΣC", lambda e: _f(_get(e, "scheduling", "total_completion", "sprpt", "ratio"), 4)),
            ("SPRPT max S", lambda e: _f(_get(e, "scheduling", "max_stretch", "sprpt", "ratio"), 3)),
            ("EDF-P max S", lambda e: _f(_get(e, "scheduling", "max_stretch", "edf-p", "ratio"), 3)),
            ("LPPT C_max", lambda e: _f(_get(e, "scheduling", "makespan", "lppt", "ratio"), 4)),
            ("ASTRAEA-P JCT", lambda e: _f(_get(e, "scheduling", "fairness", "jct_ratio"), 4)),
            ("ASTRAEA-P loss", lambda e: _pct(_get(e, "scheduling", "fairness", "astraea-p", "sharing_loss_jobs"))),
            ("Cov@25", lambda e: _pct(_get(e, "prediction", "cov25"))),
        ]
    return [("#", None), ("Name", None), ("Authors", lambda e: ", ".join(e.get("authors") or []))] + body + common_tail


def _dataset_line(ds: dict, n: int) -> str:
    fp = ds.get("fingerprint") or "?"
    parts = [f"dataset {ds.get('source') or '?'}" + (" (default)" if ds.get("default") else ""),
             f"fingerprint {fp[:12]}…", f"{ds.get('n_test', '?')} test jobs", f"{n} entr{'y' if n == 1 else 'ies'}"]
    return ", ".join(parts)


def _notes(track: str, entries: list[dict]) -> list[str]:
    notes = [RANK_RULE[track] + "."]
    if track == "scheduling":
        notes.append("ΣF: flow-time ratio ΣF_j / ΣF_j(SRPT) of SPJF (ΣC_j ratios are diluted by Σr_j). "
                     "ASTRAEA-P JCT: average JCT of astraea-p / astraea on the same cluster; ASTRAEA-P loss: share "
                     "of jobs with ρ_job < 0.95 (not part of the score).")
        missing = [e["name"] for e in entries if _get(e, "scheduling", "fairness") is None]
        if missing:
            notes.append(f"astraea-p not scored for: {', '.join(missing)}.")
    if any(e.get("reference") for e in entries):
        notes.append("'ref' rows are references (p̂ = p), not ranked.")
    return notes


# ----- formats -----------------------------------------------------------------------------------
def render_markdown(entries_by_track: dict[str, list[dict]]) -> str:
    out = ["# ATLAS-Bench leaderboards", ""]
    for track, entries in entries_by_track.items():
        out += [f"## {TITLES[track].capitalize()}", ""]
        if not entries:
            out += ["_No entries yet._", ""]
            continue
        cols = columns(track)
        for ds, group in _groups(entries):
            out += [f"_{_dataset_line(ds, len(group))}_", ""]
            out.append("| " + " | ".join(name for name, _ in cols) + " |")
            out.append("|" + "|".join("---:" if name not in ("Name", "Authors") else "---" for name, _ in cols) + "|")
            for rank, e in rank_entries(group, track):
                name = _md_escape(e["name"])
                if str(e.get("url") or "").startswith(("http://", "https://")):
                    name = f"[{name}]({_md_url(e['url'])})"
                cells = [rank, name] + [_md_escape(fn(e)) for _, fn in cols[2:]]
                out.append("| " + " | ".join(cells) + " |")
            out.append("")
            out += [f"- {_md_escape(n)}" for n in _notes(track, group)]
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_html(entries_by_track: dict[str, list[dict]]) -> str:
    esc = html.escape
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>ATLAS-Bench leaderboards</title>',
        "<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}"
        "th,td{border:1px solid #ccc;padding:.3em .6em}td.num{text-align:right;font-variant-numeric:tabular-nums}"
        "tr.ref{color:#666;font-style:italic}th{background:#f3f3f3}</style></head><body>",
        "<h1>ATLAS-Bench leaderboards</h1>",
    ]
    for track, entries in entries_by_track.items():
        out.append(f'<section id="{esc(track)}"><h2>{esc(TITLES[track].capitalize())}</h2>')
        if not entries:
            out.append("<p><em>No entries yet.</em></p></section>")
            continue
        cols = columns(track)
        for ds, group in _groups(entries):
            out.append(f"<p><em>{esc(_dataset_line(ds, len(group)))}</em></p>")
            out.append("<table><thead><tr>" + "".join(f"<th>{esc(n)}</th>" for n, _ in cols) + "</tr></thead><tbody>")
            for rank, e in rank_entries(group, track):
                name = esc(e["name"])
                url = e.get("url") or ""
                if url.startswith(("http://", "https://")):
                    name = f'<a href="{esc(url, quote=True)}">{name}</a>'
                cells = [f'<td class="num">{esc(rank)}</td>', f"<td>{name}</td>"]
                for title, fn in cols[2:]:
                    cls = "" if title in ("Authors",) else ' class="num"'
                    cells.append(f"<td{cls}>{esc(fn(e))}</td>")
                row_cls = ' class="ref"' if rank == "ref" else ""
                out.append(f"<tr{row_cls}>" + "".join(cells) + "</tr>")
            out.append("</tbody></table>")
            out.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in _notes(track, group)) + "</ul>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def render(entries_by_track: dict[str, list[dict]], fmt: str) -> str:
    if fmt == "md":
        return render_markdown(entries_by_track)
    if fmt == "html":
        return render_html(entries_by_track)
    raise ValueError(f"unknown format {fmt!r}")


# inside a table cell only these start or end inline markup (links, images, emphasis, code, cells)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _md_escape(text: str) -> str:
    """Text as literal Markdown: HTML-significant characters as entities (no raw tag survives),
    Markdown punctuation backslash-escaped, whitespace runs (newlines included) as one space."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_url(url: str) -> str:
    """A URL safe inside `[..](..)`: characters that could end the link or open HTML percent-encoded."""
    from urllib.parse import quote

    return quote(url, safe=":/?#@!$&*+,;=%~-._")
