"""Ranking tables of leaderboard entries, as Markdown or as a standalone HTML page (the site: leaderboards.site).

Ranking (one table per dataset fingerprint, the default dataset first):
- prediction track: Cov@25 descending (95 % bootstrap interval over test jobs), then RMSLE, then name;
- scheduling track: the score (leaderboards.score: the ratios of p̂ over those of the blind p̂,
  geometric mean over objectives and seeded windows, 95 % bootstrap interval) ascending, then name.
Ranks (leaderboards.ranking): paired over the scoring windows every entry shares — signed-rank
test per pair, Holm's correction over the table's pairs; rank = 1 + the number of entries separated
from it and better, shared ranks shown as "=k"; the table is in (rank, score, name) order. Entries
without a score are ranked '–' at the end of the ranking.
Reference entries (the `oracle` method, p̂ = p) are listed after the ranking, unranked: they show
the ceiling, they do not compete. Every row shows name (linked to its url), authors, the key
metrics, the date and the first 12 hex digits of the predictions' sha256. A metric column that
separates no two rows of a table (every pair of 95 % intervals overlaps, or, without intervals,
every cell reads the same) is left out and named in the notes under the table.

Every format is a Jinja2 template of leaderboards/templates rendered from `sections` (the boards);
`board_rows` is the one place the formats take a row's rank, score and interval from (its order,
rank label, and the figure of the site: leaderboards.figures). Escaping is
the environments' (HTML: autoescape; Markdown: `md_escape` on every printed value), not each
template's.

May import the standard library, jinja2 and markupsafe (entries are plain dicts).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

TITLES = {"prediction": "prediction track", "scheduling": "scheduling track"}
RANK_RULE = {
    "prediction": ("ranked by Cov@25 (higher is better; 95 % bootstrap interval over test jobs), then RMSLE (lower "
                   "is better); rank = 1 + the entries better on the paired test over the scoring windows "
                   "(Wilcoxon signed-rank on per-window Cov@25, Holm-corrected over the table's pairs, 5 %); "
                   "'=k': tied"),
    "scheduling": ("ranked by the score (lower is better; 1 = the blind p̂, every job predicted as the train median): "
                   "per window exp(⅓ Σ_objectives mean_policies log(ratio with p̂ / ratio with the blind p̂)), "
                   "geometric mean over the disjoint windows of the test split (95 % bootstrap interval); objectives "
                   "ΣC_j (SPJF, SPRPT; ratio to SRPT), max S_j (SPRPT, EDF-P; ratio to S*), C_max (LPPT; ratio to the "
                   "McNaughton bound, mean over m = 5, 10, 20, 50, 100); rank = 1 + the entries better on the paired "
                   "test over the windows (Wilcoxon signed-rank on per-window log scores, Holm-corrected over the "
                   "table's pairs, 5 %); '=k': tied"),
}


def _get(d: dict | None, *path):
    for p in path:
        if not isinstance(d, dict):
            return None
        d = d.get(p)
    return d


# ----- ranking ---------------------------------------------------------------------------------
def _interval(entry: dict) -> tuple[float, float] | None:
    """The ranking key's 95 % interval (the point value twice if the entry has none)."""
    lo, hi = (entry.get("score_interval") or [None, None])[:2]
    if entry.get("score") is None:
        return None
    return (entry["score"] if lo is None else lo, entry["score"] if hi is None else hi)


def rank_entries(entries: list[dict], track: str) -> list[tuple[str, dict]]:
    """[(rank label, entry)] in table order: ranked entries, then reference entries ('ref').

    The paired rule of leaderboards.ranking (`paired_ranking(...).rows`; its `pairs` hold every
    pairwise comparison for a renderer to show)."""
    from leaderboards.ranking import paired_ranking

    return paired_ranking(entries, track).rows


def _groups(entries: list[dict]) -> list[tuple[dict, list[dict]]]:
    """Entries per dataset fingerprint: the default dataset first, then the most entries first."""
    by_fp: dict[str, list[dict]] = {}
    for e in entries:
        by_fp.setdefault((e.get("dataset") or {}).get("fingerprint") or "?", []).append(e)
    groups = [(lst[0].get("dataset") or {}, lst) for lst in by_fp.values()]
    groups.sort(key=lambda g: (not g[0].get("default"), -len(g[1]), g[0].get("fingerprint") or ""))
    return groups


# ----- columns -----------------------------------------------------------------------------------
def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f} %"


def _f(v, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def _pp(v) -> str:
    """A difference of two shares, in percentage points."""
    return "–" if v is None else f"{100 * v:+.2f} pp"


@dataclass(frozen=True)
class Column:
    """One table column: its cell text, its sort value, and (when the entry has one) a 95 % interval."""

    title: str
    text: Callable[[dict], str]
    value: Callable[[dict], float | None] = lambda e: None
    interval: Callable[[dict], tuple | None] = lambda e: None
    numeric: bool = True
    fixed: bool = False  # always shown (rank, name, score, provenance), never dropped


def _summary_column(title: str, path: tuple, fmt=_f, digits: int = 3, **kw) -> Column:
    """A column of a per-window summary ({mean, lo, hi}) stored at `path` in the entry."""
    return Column(
        title,
        text=lambda e: fmt(_get(e, *path, "mean"), digits) if fmt is _f else fmt(_get(e, *path, "mean")),
        value=lambda e: _get(e, *path, "mean"),
        interval=lambda e: (_get(e, *path, "lo"), _get(e, *path, "hi")) if _get(e, *path, "lo") is not None else None,
        **kw,
    )


def _score_text(e: dict) -> str:
    lo, hi = (e.get("score_interval") or [None, None])[:2]
    if e.get("score") is None:
        return "–"
    return f"{e['score']:.3f}" + (f" ({lo:.3f}–{hi:.3f})" if lo is not None and hi is not None else "")


def _cov_text(e: dict) -> str:
    lo, hi = (_get(e, "prediction", "intervals", "cov25") or [None, None])[:2]
    return _pct(_get(e, "prediction", "cov25")) + (f" ({100 * lo:.1f}–{100 * hi:.1f})" if lo is not None else "")


def _plain(title: str, path: tuple, fmt) -> Column:
    return Column(title, text=lambda e: fmt(_get(e, *path)), value=lambda e: _get(e, *path))


def columns(track: str) -> list[Column]:
    """Every column a track's table can have, in order (`visible_columns` drops the uninformative ones)."""
    head = [
        Column("#", text=lambda e: "", numeric=True, fixed=True),
        Column("Name", text=lambda e: e["name"], numeric=False, fixed=True),
        Column("Authors", text=lambda e: ", ".join(e.get("authors") or []), numeric=False, fixed=True),
    ]
    tail = [
        Column("Date", text=lambda e: str(_get(e, "provenance", "created") or "")[:10], numeric=False, fixed=True),
        Column("sha256", text=lambda e: str(_get(e, "provenance", "predictions_sha256") or "")[:12], numeric=False,
               fixed=True),
    ]
    cov25 = Column("Cov@25", text=_cov_text, value=lambda e: _get(e, "prediction", "cov25"),
                   interval=lambda e: tuple(_get(e, "prediction", "intervals", "cov25") or ()) or None)
    if track == "prediction":
        body = [
            Column(cov25.title, cov25.text, cov25.value, cov25.interval, fixed=True),
            _plain("Cov@50", ("prediction", "cov50"), _pct),
            _plain("Cov@25 rec.", ("prediction", "cov25_recurrent"), _pct),
            _plain("Cov@50 rec.", ("prediction", "cov50_recurrent"), _pct),
            Column("RMSLE", text=lambda e: _f(_get(e, "prediction", "rmsle")), value=lambda e: _get(e, "prediction", "rmsle"),
                   interval=lambda e: tuple(_get(e, "prediction", "intervals", "rmsle") or ()) or None),
            _plain("Spearman", ("prediction", "spearman"), _f),
            _plain("Interval cov.", ("prediction", "interval_coverage"), _pct),
        ]
    else:
        sched = ("scheduling",)
        body = [
            Column("Score", text=_score_text, value=lambda e: e.get("score"),
                   interval=lambda e: _interval(e), fixed=True),
            _summary_column("ΣC_j vs blind", sched + ("total_completion", "relative")),
            _summary_column("max S_j vs blind", sched + ("max_stretch", "relative")),
            _summary_column("C_max vs blind", sched + ("makespan", "relative")),
            _summary_column("SPJF ΣC", sched + ("total_completion", "spjf", "ratio"), digits=4),
            _summary_column("SPRPT ΣC", sched + ("total_completion", "sprpt", "ratio"), digits=4),
            _summary_column("SPRPT max S", sched + ("max_stretch", "sprpt", "ratio"), digits=1),
            _summary_column("EDF-P max S", sched + ("max_stretch", "edf-p", "ratio"), digits=1),
            _summary_column("LPPT C_max", sched + ("makespan", "lppt", "ratio"), digits=4),
            _summary_column("ASTRAEA-P slowdown", sched + ("fairness", "slowdown_ratio")),
            _summary_column("ASTRAEA-P JCT", sched + ("fairness", "jct_ratio")),
            _summary_column("ASTRAEA-P Δ tenant loss", sched + ("fairness", "tenant_loss_delta"), fmt=_pp),
            cov25,
        ]
    return head + body + tail


def separates(column: Column, rows: list[dict]) -> bool:
    """Does the column tell at least two rows apart? With intervals: two that do not overlap."""
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            ia, ib = column.interval(a), column.interval(b)
            if ia and ib and None not in ia and None not in ib:
                if ia[1] < ib[0] or ib[1] < ia[0]:
                    return True
            elif column.text(a) != column.text(b):
                return True
    return False


def visible_columns(track: str, rows: list[dict]) -> tuple[list[Column], list[str]]:
    """(columns to show, notes naming the ones left out and why)."""
    shown, dropped = [], []
    for column in columns(track):
        if column.fixed or separates(column, rows):
            shown.append(column)
            continue
        values = sorted({column.text(e) for e in rows})
        dropped.append(f"{column.title} ({values[0]} for every entry)" if len(values) == 1 else
                       f"{column.title} ({values[0]} to {values[-1]}, every pair of 95 % intervals overlapping)")
    notes = []
    if dropped and len(rows) > 1:
        notes.append("Not shown, as they separate no two entries: " + "; ".join(dropped) + ".")
    return shown, notes


def _dataset_line(ds: dict, n: int) -> str:
    fp = ds.get("fingerprint") or "?"
    parts = [f"dataset {ds.get('source') or '?'}" + (" (default)" if ds.get("default") else ""),
             f"fingerprint {fp[:12]}…", f"{ds.get('n_test', '?')} test jobs", f"{n} entr{'y' if n == 1 else 'ies'}"]
    return ", ".join(parts)


def _notes(track: str, entries: list[dict]) -> list[str]:
    notes = [RANK_RULE[track] + "."]
    if track == "scheduling":
        windows = {(_get(e, "scheduling", "windows"), str(_get(e, "scheduling", "window_jobs", "total_completion")))
                   for e in entries if e.get("scheduling")}
        for count, size in sorted(windows, key=str):
            notes.append(f"{count} disjoint windows of at most {size} consecutive test jobs each. "
                         "'vs blind' columns: that objective's ratio with p̂ / with the blind p̂ (geometric mean over "
                         "windows). ΣC, max S, C_max columns: the LASched ratios themselves.")
        # the fairness windows are their own (seeded, fewer than the scoring windows)
        fairness = {(len(_get(e, "scheduling", "fairness", "windows") or []) or None, _get(e, "scheduling", "fairness", "n_jobs"),
                     _get(e, "scheduling", "fairness", "target_load")) for e in entries if _get(e, "scheduling", "fairness")}
        for count, size, load in sorted(fairness, key=str):
            notes.append(f"ASTRAEA-P columns (not part of the score): astraea-p with p̂ beside astraea on {count} "
                         f"windows of {size} jobs, 8-GPU nodes for an offered load of {_pct(load)}; slowdown and JCT: "
                         "average of astraea-p / astraea (1 = the constant predictor, lower is better); Δ tenant "
                         "loss: astraea-p − astraea, in percentage points, of the tenant-intervals served below their "
                         "fair share (lower is fairer).")
        missing = [e["name"] for e in entries if _get(e, "scheduling", "fairness") is None]
        if missing:
            notes.append(f"astraea-p not scored for: {', '.join(missing)}.")
    if any(e.get("reference") for e in entries):
        notes.append("'ref' rows are references (p̂ = p), not ranked.")
    return notes


# ----- what every format shows ---------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One row of a board: everything a format (table or figure) shows of an entry.

    `board_rows` is the one place that reads an entry's rank, score and interval; every format
    reads them from here.
    """

    rank: str  # '1', '=2', '–' (no score) or 'ref' (a reference entry, not ranked)
    entry: dict
    name: str
    url: str  # the entry's url when it is http(s), else ''
    score: float | None
    interval: tuple[float, float] | None  # the score's 95 % interval (the score twice when it has none)
    reference: bool
    cells: tuple  # one Cell per column after Name, in the board's column order


@dataclass(frozen=True)
class Cell:
    text: str
    numeric: bool
    sort: str  # the value a sortable table sorts by ('' = no value, sorted last)


@dataclass(frozen=True)
class Board:
    """One table: the entries of one track on one dataset, in rank order."""

    track: str
    key: str  # file-safe: track and the first 12 characters of the dataset fingerprint
    line: str  # the dataset, its fingerprint, test jobs and entries
    columns: list
    rows: list
    notes: list


@dataclass(frozen=True)
class Section:
    track: str
    title: str
    boards: list


def _sort_value(column: Column, entry: dict) -> str:
    value = column.value(entry)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return repr(float(value))
    return "" if value is None and column.numeric else column.text(entry)


def board_rows(entries: list[dict], track: str, cols: list[Column] | None = None) -> list[Row]:
    """The rows of one board in table order (ranked entries, then '–', then references)."""
    cols = cols if cols is not None else columns(track)
    rows = []
    for rank, e in rank_entries(entries, track):
        url = str(e.get("url") or "")
        rows.append(Row(rank=rank, entry=e, name=e["name"], url=url if url.startswith(("http://", "https://")) else "",
                        score=e.get("score"), interval=_interval(e), reference=rank == "ref",
                        cells=tuple(Cell(c.text(e), c.numeric, _sort_value(c, e)) for c in cols[2:])))
    return rows


def sections(entries_by_track: dict[str, list[dict]]) -> list[Section]:
    """Every board of every track, in page order (the default dataset first)."""
    out = []
    for track, entries in entries_by_track.items():
        boards = []
        for ds, group in _groups(entries):
            cols, dropped = visible_columns(track, group)
            fingerprint = re.sub(r"[^0-9A-Za-z]", "", str(ds.get("fingerprint") or ""))[:12] or "unknown"
            key = f"{track}-{fingerprint}"
            while key in {b.key for b in boards}:  # two fingerprints alike in their first 12 characters
                key += "-2"
            boards.append(Board(track=track, key=key, line=_dataset_line(ds, len(group)),
                                columns=cols, rows=board_rows(group, track, cols), notes=_notes(track, group) + dropped))
        out.append(Section(track=track, title=TITLES[track].capitalize(), boards=boards))
    return out


# ----- formats -----------------------------------------------------------------------------------
# Every format is a template of leaderboards/templates, rendered from `sections`. HTML templates
# escape every value (autoescape); the Markdown one escapes every value with `md_escape`, so a
# template can only show a text unescaped by marking it (`Markup`: the column titles, the links).
def environment(kind: str):
    """The Jinja2 environment of a format: 'html' (autoescape) or 'md' (every value through md_escape)."""
    return _environments()[kind]


@lru_cache(maxsize=None)
def _environments() -> dict:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    common = dict(loader=PackageLoader("leaderboards", "templates"), trim_blocks=True, lstrip_blocks=True,
                  keep_trailing_newline=True, undefined=StrictUndefined)
    md = Environment(autoescape=False, finalize=lambda v: v if hasattr(v, "__html__") else md_escape(v), **common)
    md.filters["md_url"] = md_url
    md.filters["trusted"] = _trusted
    return {"html": Environment(autoescape=True, **common), "md": md}


def _trusted(text: str):
    """A text of this module (a column title), shown as written."""
    from markupsafe import Markup

    return Markup(text)


def render_markdown(entries_by_track: dict[str, list[dict]]) -> str:
    text = environment("md").get_template("board.md.j2").render(sections=sections(entries_by_track))
    return text.rstrip() + "\n"


def render_html(entries_by_track: dict[str, list[dict]]) -> str:
    """One standalone page: per board its line, its forest plot (inline SVG, as on the site's main
    page) and its table."""
    from leaderboards.figures import forest_plots

    board_sections = sections(entries_by_track)
    return environment("html").get_template("board.html.j2").render(sections=board_sections,
                                                                     figures=forest_plots(board_sections))


def render(entries_by_track: dict[str, list[dict]], fmt: str) -> str:
    if fmt == "md":
        return render_markdown(entries_by_track)
    if fmt == "html":
        return render_html(entries_by_track)
    raise ValueError(f"unknown format {fmt!r}")


# inside a table cell only these start or end inline markup (links, images, emphasis, code, cells;
# `$` math, which GitHub renders between two of them)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~$])")


def md_escape(text) -> str:
    """Text as literal Markdown, safe in a table cell: HTML-significant characters as entities (no
    raw tag survives), Markdown punctuation backslash-escaped (`|` cannot end the cell, a backtick
    cannot open code), whitespace runs (newlines included) as one space."""
    text = " ".join(str(text).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_url(url: str):
    """A URL safe inside `[..](..)`: characters that could end the link or open HTML percent-encoded."""
    from urllib.parse import quote

    from markupsafe import Markup

    return Markup(quote(str(url), safe=":/?#@!$&*+,;=%~-._"))
