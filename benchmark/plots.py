"""Figures derived from the tidy result tables (never from anything else).

Figures are built with matplotlib's object API (`Figure`, no pyplot): no global backend is
switched, so the library works the same in a terminal, a worker process or a notebook.

May import numpy/pandas/matplotlib only.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def subplots(*args, figsize=None, **kwargs):
    """Like pyplot.subplots, without pyplot's global state: (figure, axes)."""
    fig = Figure(figsize=figsize)
    return fig, fig.subplots(*args, **kwargs)


def _label(policy: str, predictor) -> str:
    return policy if predictor in (None, "") or (isinstance(predictor, float) and np.isnan(predictor)) else f"{policy} [{predictor}]"


def ratio_bars(rows: list[dict], path: Path, *, title: str, value: str = "ratio") -> Path:
    """Bar chart of `value` per policy (and predictor); makespan rows are averaged over machines."""
    frame = pd.DataFrame(rows)
    frame["label"] = [_label(p, q) for p, q in zip(frame["policy"], frame["predictor"])]
    means = frame.groupby("label", sort=False)[value].mean().sort_values()
    fig, ax = subplots(figsize=(max(6, 0.45 * len(means) + 2), 4.2))
    ax.bar(range(len(means)), means.to_numpy(), color="#4C72B0")
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xticks(range(len(means)), means.index, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel(f"{value} (1 = optimal / bound)")
    if means.max() / max(means.min(), 1e-12) > 50:
        ax.set_yscale("log")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def stretch_cdf(per_job: pd.DataFrame, path: Path, *, title: str, s_star: float | None = None) -> Path:
    """Empirical CDF of per-job stretch (C − r)/p for each policy × predictor."""
    fig, ax = subplots(figsize=(7, 4.5))
    for (policy, predictor), group in per_job.groupby(["policy", "predictor"], dropna=False, sort=False):
        s = np.sort(group["stretch"].to_numpy())
        ax.step(s, np.arange(1, len(s) + 1) / len(s), where="post", label=_label(policy, predictor), lw=1.1)
    if s_star is not None:
        ax.axvline(s_star, color="k", ls="--", lw=0.8, label=f"S* = {s_star:.3g}")
    ax.set_xscale("log")
    ax.set_xlabel("stretch (C − r) / p")
    ax.set_ylabel("share of jobs")
    ax.set_title(title)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


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


def _panels(frame: pd.DataFrame, width: float):
    """One panel per objective (a single panel when the frame has no objective column)."""
    objective = frame["objective"].fillna(frame["task"]) if "objective" in frame.columns else pd.Series("", index=frame.index)
    names = list(dict.fromkeys(objective))
    fig, axes = subplots(1, len(names), figsize=(width * len(names), 4.5), squeeze=False)
    return fig, [(ax, name, frame[objective == name]) for ax, name in zip(axes[0], names)]


def robustness_curve(frame: pd.DataFrame, path: Path, *, title: str) -> Path:
    """Ratio against the prediction noise σ, one line per predictive policy, one panel per objective.

    `frame` needs `policy`, `predictor`, `noise` and `ratio` (as from `noise_levels` or a sweep
    table); `objective` and `seed` are optional. Rows with a σ are averaged over seeds (error bars
    = std over seeds); rows without p̂ do not depend on σ and are drawn as dotted horizontal lines.
    """
    frame = frame[frame["ratio"].notna()]
    fig, panels = _panels(frame, 7.0)
    for ax, objective, part in panels:
        noisy = part[part["noise"].notna() & part["predictor"].notna()]
        for policy, group in noisy.groupby("policy", sort=False):
            stats = _seed_stats(group, ["noise"]).sort_values("noise")
            ax.errorbar(stats["noise"], stats["mean"], yerr=stats["std"], marker="o", capsize=3, label=policy)
        x_end = noisy["noise"].max() if len(noisy) else 1.0
        blind = part[part["predictor"].isna()].groupby("policy", sort=False)["ratio"].mean()
        for policy, ratio in blind.items():
            ax.axhline(ratio, ls=":", lw=0.9, color="grey")
            ax.annotate(policy, (x_end, ratio), fontsize=7, color="grey")
        ax.set_xlabel("prediction noise σ  (p̂ = p·exp(σZ))")
        ax.set_ylabel("ratio (1 = optimal)" + (", mean over seeds" if "seed" in part.columns else ""))
        ax.set_yscale("log")
        ax.set_title(objective or title)
        if len(noisy):
            ax.legend(fontsize=8)
    if len(panels) > 1 or panels[0][1]:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def sweep_ratio_bars(table: pd.DataFrame, path: Path) -> Path:
    """A sweep's mean ratio per policy [predictor], one panel per objective, error bars = std over seeds."""
    frame = table[table["ratio"].notna()]
    frame = frame.assign(label=[_label(p, q) for p, q in zip(frame["policy"], frame["predictor"])])
    n_labels = int(frame.groupby(frame["objective"].fillna(frame["task"]))["label"].nunique().max())
    fig, panels = _panels(frame, max(5.0, 0.42 * n_labels + 2))
    for ax, objective, part in panels:
        stats = _seed_stats(part, ["label"])
        x = np.arange(len(stats))
        ax.bar(x, stats["mean"], yerr=stats["std"], capsize=3, color="#4C72B0")
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, stats["label"], rotation=60, ha="right", fontsize=8)
        ax.set_title(objective)
        ax.set_ylabel("ratio (1 = optimal / bound), mean over seeds")
        if stats["mean"].max() / max(stats["mean"].min(), 1e-12) > 50:
            ax.set_yscale("log")
    fig.suptitle(f"sweep: {frame['cell'].nunique()} cells, {frame['seed'].nunique()} seed(s)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path
