"""The leaderboard site's figures: the forest plot of a board (its main page) and an entry's plots.

* `forest_figure`: one row per entry of a board, in rank order (rank 1 on top, reference entries
  after the ranking, entries without a score left out): a point at the score, a bar over its 95 %
  interval; the y labels are "rank  name", as in the table. Scheduling track: the score on a log
  axis with the blind p̂ (1) dashed; prediction track: Cov@25 in %.
* `calibration_figure` (p̂ against p per tenth of the test jobs) and `ratios_figure` (each
  objective's ratio with p̂ / with the blind p̂, and the score) for an entry's page.

The conventions of benchmark.plots (which this layer may not import): matplotlib's object API (no
pyplot, no global state), constrained layout, legends outside the axes, written by
atlas_data.outputs (`write_figure`: PNG with an SVG beside it; `svg_text`). Names are drawn as
given: matplotlib's mathtext is off for them (a `$` in a name is a dollar sign, not math).

May import matplotlib, atlas_data.outputs and the standard library.
"""

from __future__ import annotations

import re
from pathlib import Path

SCORE_COLOUR = "#1f77b4"  # tab10 blue, as the bars of an entry page
REFERENCE_COLOUR = "#7f7f7f"  # references are grey, as their italic grey rows in the table


def _figure(width: float, height: float = 3.6):
    from matplotlib.figure import Figure  # no pyplot: no GUI backend, no global state

    return Figure(figsize=(width, height), dpi=90, layout="constrained")


def forest_figure(rows: list, track: str):
    """The forest plot of one board's rows (leaderboards.render.Row, in table order), or None when
    no row has a score."""
    shown = [r for r in rows if r.score is not None]
    if not shown:
        return None
    fig = _figure(7.5, 1.2 + 0.3 * len(shown))
    ax = fig.add_subplot()
    scale = 100.0 if track == "prediction" else 1.0
    for y, row in enumerate(shown):
        lo, hi = row.interval or (row.score, row.score)
        colour = REFERENCE_COLOUR if row.reference else SCORE_COLOUR
        ax.plot([scale * lo, scale * hi], [y, y], color=colour, lw=2.2, solid_capstyle="butt")
        ax.plot([scale * row.score], [y], "o", color=colour, mfc="white" if row.reference else colour, ms=6)
    ax.set_yticks(range(len(shown)), [f"{row.rank}  {row.name}" for row in shown])
    for label in ax.get_yticklabels():
        label.set_parse_math(False)  # a name is text: '$' and '^' are not math
    ax.set_ylim(len(shown) - 0.5, -0.5)  # rank 1 on top; the labels stay in rank order in the SVG
    ax.grid(axis="x", color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)
    if track == "scheduling":
        from matplotlib.ticker import FormatStrFormatter, LogLocator

        ax.axvline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xscale("log")
        # ratios from about 0.05 to 1.5: label 0.05, 0.1, 0.2, 0.5, 1, 2 rather than powers of ten only
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.xaxis.set_minor_formatter(FormatStrFormatter(""))
        ax.set_xlabel("score: ratios with p̂ / with the blind p̂ (95 % interval; lower is better, 1 = blind, dashed)")
    else:
        ax.set_xlabel("Cov@25, % of test jobs within 25 % (95 % interval; higher is better)")
    ax.tick_params(axis="y", labelsize=8)
    ax.set_title(f"{track} track, in rank order" + (" (grey, hollow: reference, not ranked)"
                                                   if any(r.reference for r in shown) else ""), fontsize=9)
    return fig


def forest_svg(fig, salt: str) -> tuple[str, str]:
    """(the SVG file's text, the <svg> element to put inside an HTML page) of a forest plot: labels
    as text (a browser draws and finds them), the ids of markers and clip paths salted per figure;
    the element without the XML declaration and DOCTYPE of a standalone file, and without the ids
    matplotlib numbers its groups with ('figure_1', 'axes_1', …: nothing refers to them, and two
    figures of one page would repeat them), so every id of the page is unique."""
    from atlas_data.outputs import svg_text

    text = svg_text(fig, text_as_text=True, salt=salt)
    return text, re.sub(r'<g id="[^"]*">', "<g>", text[text.index("<svg"):].strip())


def forest_plots(board_sections) -> dict:
    """{board key: {"svg": the <svg> element (Markup: matplotlib escaped its texts), "text": the SVG
    file's text, "unscored": entries without a score, not drawn}} for every board of
    `board_sections` (leaderboards.render.sections) with a score to draw: the one computation of
    the forest plots of the site's main page and of the one-page HTML."""
    from markupsafe import Markup

    plots = {}
    for section in board_sections:
        for board in section.boards:
            fig = forest_figure(board.rows, board.track)
            if fig is None:
                continue
            text, element = forest_svg(fig, salt=f"atlas-bench-{board.key}")
            plots[board.key] = {"svg": Markup(element), "text": text,
                                "unscored": sum(row.score is None for row in board.rows)}
    return plots


# ----- an entry's page ---------------------------------------------------------------------------
def _save(fig, path: Path) -> None:
    from atlas_data.outputs import write_figure  # PNG for the page, SVG beside it

    write_figure(fig, path, dpi=90)


def calibration_figure(cal: dict, path: Path, name: str) -> None:
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
    ax.set_title(f"p̂ against p — {name}"[:70], fontsize=9, parse_math=False)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=7, frameon=False)
    _save(fig, path)


def ratios_figure(s: dict, path: Path, name: str) -> None:
    labels, means, errs = [], [], [[], []]
    for objective, title in (("total_completion", "ΣC_j"), ("max_stretch", "max S_j"), ("makespan", "C_max")):
        summary = (s.get(objective) or {}).get("relative") or {}
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
    fig = _figure(5.5)
    ax = fig.add_subplot()
    has_score = score.get("mean") is not None
    ax.bar(range(len(means)), means, yerr=errs, capsize=4,
           color=[SCORE_COLOUR] * (len(means) - has_score) + ["#ff7f0e"] * has_score)
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylabel("ratio with p̂ / with the blind p̂")
    ax.set_title(f"lower is better, 1 = blind — {name}"[:70], fontsize=9, parse_math=False)
    _save(fig, path)
