"""Figures derived from the tidy result tables (never from anything else), and the one scheme they share.

Figures are built with matplotlib's object API (`Figure`, no pyplot): no global backend is
switched, so the library works the same in a terminal, a worker process or a notebook.

The scheme (docs/results-and-tracking.md, "Figures"): a policy that uses no p̂ (blind) is drawn
dashed in a grey shade (bars: light grey, hatched); a policy that uses p̂ is drawn solid in the
colour of its predictor (or noise level), one colour per predictor from 18 distinct ones
(tab20 without its greys, then tab20b); the policy is told by its marker. Legends sit outside the
axes (right of them), and every figure uses constrained layout so nothing is clipped.
`save_figure` writes each figure as PNG and as SVG beside it.

May import numpy/pandas/matplotlib and atlas_data.outputs (where `write_figure` lives, for every layer).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import LogFormatterSciNotation, ScalarFormatter

PREDICTIVE_LINESTYLE = "-"
BLIND_LINESTYLE = "--"
BLIND_HATCH = "//"
BLIND_BAR_COLOUR = "#d9d9d9"
# blind series are few (fifo, sjf, srpt, rr, las, …): shades of grey keep them apart from every p̂
# colour, their markers apart from each other; the first three shades differ most
BLIND_COLOURS = ("#000000", "#6e6e6e", "#b0b0b0", "#383838", "#8f8f8f", "#cfcfcf")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*", "h", "p", "d", "8")


def _predictor_colours() -> tuple:
    # tab20 pairs a strong and a light shade of ten hues: strong shades first so the first ten
    # predictors get ten different hues; its two greys are left to the blind series
    tab20 = colormaps["tab20"].colors
    order = [i for i in range(0, 20, 2) if i != 14] + [i for i in range(1, 20, 2) if i != 15]
    tab20b = colormaps["tab20b"].colors
    return tuple(tab20[i] for i in order) + tuple(tab20b[i] for i in range(0, 20, 4)) + tuple(tab20b[i] for i in range(2, 20, 4))


PREDICTOR_COLOURS = _predictor_colours()


def is_blind(predictor) -> bool:
    """True when a row's predictor says the policy ran without p̂ (None, empty or NaN)."""
    return predictor is None or predictor == "" or (isinstance(predictor, float) and np.isnan(predictor))


@dataclass(frozen=True)
class SeriesStyle:
    """How one series (policy × predictor) is drawn; `line` / `bar` give matplotlib keyword arguments."""

    label: str
    color: tuple | str
    linestyle: str
    marker: str
    hatch: str | None
    blind: bool

    def line(self) -> dict:
        return {"color": self.color, "linestyle": self.linestyle, "marker": self.marker, "label": self.label}

    def bar(self) -> dict:
        if self.blind:
            return {"facecolor": BLIND_BAR_COLOUR, "hatch": BLIND_HATCH, "edgecolor": "#404040", "linewidth": 0.6}
        return {"facecolor": self.color, "edgecolor": "#404040", "linewidth": 0.6}


def series_styles(keys) -> dict:
    """One `SeriesStyle` per distinct (policy, predictor) key, in order of first appearance.

    Predictors take colours in order of appearance, policies take markers in order of appearance,
    so a policy keeps its marker and a predictor its colour across every figure of a run.
    """
    keys = list(dict.fromkeys((policy, None if is_blind(q) else q) for policy, q in keys))
    predictors = list(dict.fromkeys(q for _, q in keys if q is not None))
    policies = list(dict.fromkeys(p for p, _ in keys))
    blind_policies = list(dict.fromkeys(p for p, q in keys if q is None))
    styles = {}
    for policy, predictor in keys:
        marker = MARKERS[policies.index(policy) % len(MARKERS)]
        if predictor is None:
            colour = BLIND_COLOURS[blind_policies.index(policy) % len(BLIND_COLOURS)]
            styles[(policy, None)] = SeriesStyle(_label(policy, None), colour, BLIND_LINESTYLE, marker, BLIND_HATCH, True)
        else:
            colour = PREDICTOR_COLOURS[predictors.index(predictor) % len(PREDICTOR_COLOURS)]
            styles[(policy, predictor)] = SeriesStyle(_label(policy, predictor), colour, PREDICTIVE_LINESTYLE, marker, None, False)
    return styles


def style_of(styles: dict, policy, predictor) -> SeriesStyle:
    return styles[(policy, None if is_blind(predictor) else predictor)]


def subplots(*args, figsize=None, **kwargs):
    """Like pyplot.subplots, without pyplot's global state: (figure, axes), constrained layout."""
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(*args, **kwargs)


def outside_legend(ax, handles=None, labels=None, *, title=None, fontsize=7):
    """A legend right of the axes' data area, in as many columns as 24 rows per column need."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    ncol = max(1, math.ceil(len(handles) / 24))
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize=fontsize, ncol=ncol, title=title, title_fontsize=fontsize, frameon=False)


def figure_legend(fig, handles, labels, *, title=None, fontsize=7):
    """One legend for every panel of `fig`, right of them (constrained layout makes room)."""
    ncol = max(1, math.ceil(len(handles) / 24))
    return fig.legend(handles, labels, loc="outside right upper", fontsize=fontsize, ncol=ncol, title=title,
                      title_fontsize=fontsize, frameon=False)


def scheme_handles(styles) -> tuple[list, list]:
    """Legend patches for bar charts: one per predictor colour, one for the blind policies."""
    handles, labels, seen = [], [], set()
    for style in styles.values():
        key = "blind" if style.blind else style.label.rsplit("[", 1)[-1].rstrip("]")
        if key in seen:
            continue
        seen.add(key)
        handles.append(Patch(**style.bar()))
        labels.append("blind (no p̂)" if style.blind else f"p̂: {key}")
    blind_first = sorted(range(len(labels)), key=lambda i: labels[i] != "blind (no p̂)")
    return [handles[i] for i in blind_first], [labels[i] for i in blind_first]


# ----- log axes ---------------------------------------------------------------------------------------
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_MATHTEXT = re.compile(r"\$\\mathdefault\{(.*)\}\$")


class PlainLogFormatter(LogFormatterSciNotation):
    """matplotlib's labels of a log axis (10⁰, 10¹, 2×10³, ...) written as plain text with superscript
    digits instead of mathtext: the same labels, without building matplotlib's mathtext parser (about
    0.15 s of the first figure of a process) and parsing every label at each resolution drawn."""

    def __call__(self, x, pos=None):
        text = super().__call__(x, pos)
        found = _MATHTEXT.fullmatch(text)
        if not found:
            return text
        body = re.sub(r"\^\{(-?[0-9]+)\}", lambda m: m.group(1).translate(_SUPERSCRIPT), found.group(1))
        body = body.replace("\\times", "×")
        if any(c in body for c in "\\^{}$"):  # a form this does not know: matplotlib's own label
            return text
        return "−" + body[1:] if body.startswith("-") else body


def log_scale(ax, which: str = "x") -> None:
    """A log scale on `ax`'s x or y axis, its ticks labelled by PlainLogFormatter where matplotlib's
    log scale labels them (minor ticks too where few decades are shown)."""
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    axis = ax.xaxis if which == "x" else ax.yaxis
    axis.set_major_formatter(PlainLogFormatter(10.0))
    axis.set_minor_formatter(PlainLogFormatter(10.0, labelOnlyBase=False))


# ----- saving ---------------------------------------------------------------------------------------
def save_figure(fig: Figure, path: Path | str, *, dpi: int = 120, signed_by: str | None = None) -> Path:
    """Write `fig` to `path` (PNG) and to the same name with .svg beside it; returns the PNG path.

    `signed_by` = the command recorded in both files (a PNG text chunk, an SVG comment).
    """
    from atlas_data.outputs import write_figure

    return write_figure(fig, path, dpi=dpi, command=signed_by)


def _label(policy: str, predictor) -> str:
    return policy if is_blind(predictor) else f"{policy} [{predictor}]"


# ----- scheduling figures -----------------------------------------------------------------------------
def _bars(ax, labels, means, styles_in_order, *, yerr=None) -> None:
    x = np.arange(len(labels))
    for i, style in enumerate(styles_in_order):
        ax.bar(x[i], means[i], yerr=None if yerr is None else yerr[i], capsize=3, **style.bar())
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=8)
    if len(means) and np.nanmax(means) / max(np.nanmin(means), 1e-12) > 50:
        log_scale(ax, "y")


def ratio_bars_figure(rows: list[dict], *, title: str, value: str = "ratio") -> Figure:
    """Bars of `value` per policy (and predictor); makespan rows are averaged over machines."""
    frame = pd.DataFrame(rows)
    styles = series_styles(zip(frame["policy"], frame["predictor"]))
    frame["label"] = [style_of(styles, p, q).label for p, q in zip(frame["policy"], frame["predictor"])]
    by_label = {s.label: s for s in styles.values()}
    means = frame.groupby("label", sort=False)[value].mean().sort_values()
    fig, ax = subplots(figsize=(max(6, 0.45 * len(means) + 3.5), 4.6))
    _bars(ax, list(means.index), means.to_numpy(float), [by_label[k] for k in means.index])
    ax.set_ylabel(f"{value} (1 = optimal / bound)")
    ax.set_title(title, fontsize=10)
    outside_legend(ax, *scheme_handles(styles), fontsize=8)
    return fig


def ratio_bars(rows: list[dict], path: Path, *, title: str, value: str = "ratio") -> Path:
    """`ratio_bars_figure` written to `path` (PNG + SVG)."""
    return save_figure(ratio_bars_figure(rows, title=title, value=value), path)


CDF_POINTS = 4000  # steps drawn per CDF: finer than a figure's pixels, so the picture is the same


def cdf_steps(values: np.ndarray, points: int = CDF_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """(sorted values, share of values ≤ each) for a step plot, thinned to about `points` steps.

    The kept steps are the exact empirical CDF at evenly spaced ranks (first and last included),
    so a million-job series draws (and stores in the SVG) a few thousand vertices, not a million.
    """
    s = np.sort(np.asarray(values, dtype=np.float64))
    n = len(s)
    if n <= points:
        return s, np.arange(1, n + 1) / n
    ranks = np.unique(np.linspace(0, n - 1, points).round().astype(np.int64))
    return s[ranks], (ranks + 1) / n


def series_cdf_steps(per_job: pd.DataFrame, value: str = "stretch") -> list[tuple[tuple, tuple]]:
    """((policy, predictor), cdf_steps of `value`) per series, in the order of each series' first row
    (as `groupby(["policy", "predictor"], sort=False, dropna=False)` gives them; no predictor: NaN).

    One boolean mask per series instead of group codes and indexers for every row: a 10⁶-job run of
    ten policies groups 10⁷ rows, which took 400 MiB more at the run's peak; this takes about 50."""
    policy, predictor = per_job["policy"], per_job["predictor"]
    values = per_job[value].to_numpy()
    no_predictor = predictor.isna().to_numpy(dtype=bool)
    found = []
    for p in policy.unique():
        in_policy = (policy == p).to_numpy(dtype=bool, na_value=False)
        for q in predictor[in_policy].unique():
            same = no_predictor if pd.isna(q) else (predictor == q).to_numpy(dtype=bool, na_value=False)
            mask = in_policy & same
            found.append((int(mask.argmax()), (p, q), cdf_steps(values[mask])))
    found.sort(key=lambda item: item[0])
    return [(key, steps) for _, key, steps in found]


def stretch_cdf_figure(per_job: pd.DataFrame | list, *, title: str, s_star: float | None = None) -> Figure:
    """Empirical CDF of per-job stretch (C − r)/p for each policy × predictor: of a per-job frame, or
    of its `series_cdf_steps(frame, "stretch")` taken beforehand (benchmark.per_job, which takes them
    run by run instead of holding the frame)."""
    groups = list(per_job) if isinstance(per_job, list) else series_cdf_steps(per_job, "stretch")
    groups.sort(key=lambda item: not is_blind(item[0][1]))  # blind series first in the legend
    styles = series_styles(key for key, _ in groups)
    fig, ax = subplots(figsize=(9, 4.8))
    for (policy, predictor), (s, share) in groups:
        style = style_of(styles, policy, predictor)
        # markers on a few evenly spaced steps, so twenty series stay apart where they cross
        ax.step(s, share, where="post", lw=1.1, markersize=4, markevery=max(1, len(s) // 6), **style.line())
    if s_star is not None:
        ax.axvline(s_star, color="#d62728", ls=":", lw=1.0, label=f"S* = {s_star:.3g}")
    log_scale(ax, "x")
    ax.set_xlabel("stretch (C − r) / p")
    ax.set_ylabel("share of jobs")
    ax.set_title(title, fontsize=10)
    outside_legend(ax, title="dashed grey: blind; solid: colour = p̂")
    return fig


def stretch_cdf(per_job: pd.DataFrame | list, path: Path, *, title: str, s_star: float | None = None) -> Path:
    """`stretch_cdf_figure` written to `path` (PNG + SVG)."""
    return save_figure(stretch_cdf_figure(per_job, title=title, s_star=s_star), path)


def noise_levels(rows: list[dict]) -> pd.DataFrame:
    """A run's rows as a frame with the noise σ of `noise:σ` predictors in `noise` (NaN otherwise)."""
    frame = pd.DataFrame(rows)
    predictor = frame["predictor"].astype("object")
    noisy = predictor.map(lambda q: isinstance(q, str) and q.startswith("noise:"))
    frame["noise"] = [float(q[6:]) if is_noisy else np.nan for q, is_noisy in zip(predictor, noisy)]
    # learned predictors have no σ: keep only noise rows and the rows that use no p̂ at all
    return frame[noisy | predictor.isna()].reset_index(drop=True)


def _seed_stats(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean and std over seeds of the per-seed mean ratio (std 0 with one seed or no seed column)."""
    if "seed" not in frame.columns:
        frame = frame.assign(seed=0)
    per_seed = frame.groupby(keys + ["seed"], sort=False, dropna=False)["ratio"].mean().reset_index()
    stats = per_seed.groupby(keys, sort=False, dropna=False)["ratio"].agg(["mean", "std"]).reset_index()
    stats["std"] = stats["std"].fillna(0.0)
    return stats


def _panels(frame: pd.DataFrame, width: float, *, extra_width: float = 0.0):
    """One panel per objective (a single panel when the frame has no objective column)."""
    objective = frame["objective"].fillna(frame["task"]) if "objective" in frame.columns else pd.Series("", index=frame.index)
    names = list(dict.fromkeys(objective))
    fig, axes = subplots(1, len(names), figsize=(width * len(names) + extra_width, 4.8), squeeze=False)
    return fig, [(ax, name, frame[objective == name]) for ax, name in zip(axes[0], names)]


def robustness_curve_figure(frame: pd.DataFrame, *, title: str) -> Figure:
    """Ratio against the prediction noise σ, one line per predictive policy, one panel per objective.

    `frame` needs `policy`, `predictor`, `noise` and `ratio` (as from `noise_levels` or a sweep
    table); `objective` and `seed` are optional. Rows with a σ are averaged over seeds (error bars
    = std over seeds); rows without p̂ do not depend on σ and are drawn as dashed horizontal lines.
    Predictive policies that coincide (spjf and sprpt on one machine) stay visible: each has its
    own colour, an open marker of its own size and a line of its own width, thinner ones on top.
    """
    frame = frame[frame["ratio"].notna()]
    fig, panels = _panels(frame, 6.0, extra_width=2.2)
    noisy_all = frame[frame["noise"].notna() & frame["predictor"].notna()]
    predictive = list(dict.fromkeys(noisy_all["policy"]))
    blind_styles = series_styles((p, None) for p in dict.fromkeys(frame.loc[frame["predictor"].isna(), "policy"]))
    # predictors here are noise levels on the x axis, so colour tells the policy
    handles = {}
    for ax, objective, part in panels:
        noisy = part[part["noise"].notna() & part["predictor"].notna()]
        for policy, group in noisy.groupby("policy", sort=False):
            k = predictive.index(policy)
            stats = _seed_stats(group, ["noise"]).sort_values("noise")
            handle = ax.errorbar(stats["noise"], stats["mean"], yerr=stats["std"], capsize=3, label=policy,
                                 color=PREDICTOR_COLOURS[k % len(PREDICTOR_COLOURS)], marker=MARKERS[k % len(MARKERS)],
                                 markersize=max(3.0, 11.0 - 3.5 * k), markerfacecolor="none", markeredgewidth=1.2,
                                 linestyle=PREDICTIVE_LINESTYLE, lw=max(1.0, 3.4 - 0.8 * k), zorder=2 + 0.01 * k)
            handles.setdefault(policy, handle)
        blind = part[part["predictor"].isna()].groupby("policy", sort=False)["ratio"].mean()
        n_blind = max(2, len(blind_styles))
        x_lo, x_hi = (noisy["noise"].min(), noisy["noise"].max()) if len(noisy) else (0.0, 1.0)
        for policy, ratio in blind.items():
            k = list(blind_styles).index((policy, None))
            style = blind_styles[(policy, None)]
            # dashes of the blind lines interleave (shifted phase) and each has its marker at its own
            # σ, so blind policies with equal ratios (sjf and srpt on one machine) all stay visible
            dash = (4.0 * k, (4.0, 4.0 * (n_blind - 1)))
            ax.axhline(ratio, ls=dash, lw=1.2, color=style.color)
            ax.plot([x_lo + (x_hi - x_lo) * (k + 0.5) / n_blind], [ratio], marker=style.marker, color=style.color,
                    markersize=6, linestyle="none")
            handles.setdefault(f"{policy} (blind)", Line2D([], [], color=style.color, ls=BLIND_LINESTYLE, lw=1.2,
                                                            marker=style.marker, markersize=6))
        ax.set_xlabel("prediction noise σ  (p̂ = p·exp(σZ))")
        ax.set_ylabel("ratio (1 = optimal)" + (", mean over seeds" if "seed" in part.columns else ""))
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(ScalarFormatter())
        ax.set_title(objective or title, fontsize=10)
    if handles:
        figure_legend(fig, list(handles.values()), list(handles), title="policy", fontsize=8)
    if len(panels) > 1 or panels[0][1]:
        fig.suptitle(title, fontsize=10)
    return fig


def robustness_curve(frame: pd.DataFrame, path: Path, *, title: str) -> Path:
    """`robustness_curve_figure` written to `path` (PNG + SVG)."""
    return save_figure(robustness_curve_figure(frame, title=title), path)


def sweep_ratio_bars_figure(table: pd.DataFrame) -> Figure:
    """A sweep's mean ratio per policy [predictor], one panel per objective, error bars = std over seeds."""
    frame = table[table["ratio"].notna()]
    styles = series_styles(zip(frame["policy"], frame["predictor"]))
    frame = frame.assign(label=[style_of(styles, p, q).label for p, q in zip(frame["policy"], frame["predictor"])])
    by_label = {s.label: s for s in styles.values()}
    n_labels = int(frame.groupby(frame["objective"].fillna(frame["task"]))["label"].nunique().max())
    fig, panels = _panels(frame, max(5.0, 0.42 * n_labels + 2), extra_width=2.0)
    for ax, objective, part in panels:
        stats = _seed_stats(part, ["label"])
        _bars(ax, list(stats["label"]), stats["mean"].to_numpy(float), [by_label[k] for k in stats["label"]],
              yerr=stats["std"].to_numpy(float))
        ax.set_title(objective, fontsize=10)
        ax.set_ylabel("ratio (1 = optimal / bound), mean over seeds")
    figure_legend(fig, *scheme_handles(styles), fontsize=8)
    fig.suptitle(f"sweep: {frame['cell'].nunique()} cells, {frame['seed'].nunique()} seed(s)", fontsize=10)
    return fig


def sweep_ratio_bars(table: pd.DataFrame, path: Path) -> Path:
    """`sweep_ratio_bars_figure` written to `path` (PNG + SVG)."""
    return save_figure(sweep_ratio_bars_figure(table), path)


# ----- fairness robustness curves (benchmark robustness --task fairness) ----------------------------------
#: how each no-information control is drawn (benchmark.experiments.robustness): horizontal lines in colours
#: no policy curve uses, each with its own dash, so "is the σ = 0 point below every control?" is read at a glance
CONTROL_STYLES = {"constant": ("#d62728", (0, (6, 2))), "random": ("#9467bd", (0, (1, 1.5))),
                  "permuted": ("#8c564b", (0, (4, 1.5, 1, 1.5)))}
_CONTROL_FALLBACK = ("#bcbd22", (0, (2, 2)))


def fairness_robustness_figure(frame: pd.DataFrame, *, title: str,
                               metrics=(("avg_slowdown", "avg slowdown", 1.0),
                                        ("sharing_loss_jobs", "sharing-loss jobs (%)", 100.0))) -> Figure:
    """One panel per (scenario, metric) row and p̂ policy column: the metric against σ (p̂ = p·exp(σZ)),
    the policy's controls as horizontal lines (CONTROL_STYLES) and the policies that read no p̂ as
    grey dashed lines (blind style), so each panel shows whether exact p̂ beats its controls. With
    `<metric>_std` columns (several draws) the curve gets error bars and each control a faint ± std band.
    A learned p̂ (kind `learned`, a real trace) is a star in the policy's colour at its σ-equivalent
    (its `sigma`: the rms of log(p̂/p)), so it reads against the noise curve at the same error size.

    `frame` has the columns of robustness.csv: scenario, policy, uses_p_hat, source, kind
    (noise / learned / control / reference), sigma and the metrics.
    """
    policies = list(dict.fromkeys(frame.loc[frame["uses_p_hat"].astype(bool), "policy"]))
    scenarios = list(dict.fromkeys(frame["scenario"]))
    n_rows, n_cols = len(scenarios) * len(metrics), max(1, len(policies))
    fig, axes = subplots(n_rows, n_cols, figsize=(3.6 * n_cols + 2.2, 2.8 * n_rows + 0.6), squeeze=False)
    references = list(dict.fromkeys(frame.loc[frame["kind"] == "reference", "policy"]))
    blind = series_styles((p, None) for p in references)
    handles: dict = {}
    for i, (scenario, (metric, label, scale)) in enumerate((s, m) for s in scenarios for m in metrics):
        part = frame[frame["scenario"] == scenario]
        for j in range(n_cols):
            ax = axes[i][j]
            if j >= len(policies):
                ax.axis("off")
                continue
            policy = policies[j]
            mine = part[part["policy"] == policy]
            noisy = mine[mine["kind"] == "noise"].sort_values("sigma")
            colour = PREDICTOR_COLOURS[j % len(PREDICTOR_COLOURS)]
            spread = f"{metric}_std" in noisy.columns
            line = ax.errorbar(noisy["sigma"], noisy[metric] * scale,
                               yerr=noisy[f"{metric}_std"] * scale if spread else None, capsize=2, color=colour,
                               marker=MARKERS[j % len(MARKERS)], linestyle=PREDICTIVE_LINESTYLE, lw=1.6,
                               label=f"{policy}: p̂ = p·exp(σZ)")
            handles.setdefault(line.get_label(), line)
            values = list(noisy[metric] * scale)
            for _, row in mine[mine["kind"] == "learned"].iterrows():
                h, = ax.plot([row["sigma"]], [row[metric] * scale], marker="*", markersize=13, color=colour,
                             markeredgecolor="black", linestyle="none", zorder=5,
                             label="learned p̂ (real trace), at its σ-equivalent = rms log(p̂/p)")
                handles.setdefault(h.get_label(), h)
                values.append(row[metric] * scale)
            for _, row in mine[mine["kind"] == "control"].iterrows():
                c, dash = CONTROL_STYLES.get(row["source"], _CONTROL_FALLBACK)
                y = row[metric] * scale
                h = ax.axhline(y, color=c, ls=dash, lw=1.3, label=f"control: {row['source']}")
                if spread and row[f"{metric}_std"] > 0:  # ± std over the draws, as a faint band
                    ax.axhspan(y - row[f"{metric}_std"] * scale, y + row[f"{metric}_std"] * scale, color=c, alpha=0.12, lw=0)
                handles.setdefault(h.get_label(), h)
                values.append(y)
            for _, row in part[part["kind"] == "reference"].iterrows():
                style = blind[(row["policy"], None)]
                h = ax.axhline(row[metric] * scale, color=style.color, ls=BLIND_LINESTYLE, lw=1.0,
                               label=f"{row['policy']} (no p̂)")
                handles.setdefault(h.get_label(), h)
                values.append(row[metric] * scale)
            finite = [v for v in values if np.isfinite(v) and v > 0]
            if metric == "avg_slowdown" and finite and max(finite) / min(finite) > 20:
                log_scale(ax, "y")
            ax.set_title(f"{scenario}: {policy}", fontsize=8)
            ax.tick_params(labelsize=7)
            if j == 0:
                ax.set_ylabel(label, fontsize=8)
            if i == n_rows - 1:
                ax.set_xlabel("σ (p̂ = p·exp(σZ))", fontsize=8)
    if handles:
        figure_legend(fig, list(handles.values()), list(handles), fontsize=7)
    fig.suptitle(title + " — a policy uses p̂ where its σ = 0 point lies below every control line", fontsize=9)
    return fig
