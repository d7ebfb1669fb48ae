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


def robustness_curve(rows: list[dict], path: Path, *, title: str) -> Path:
    """Ratio versus noise σ per predictive policy, non-predictive policies as horizontal lines."""
    frame = pd.DataFrame(rows)
    noisy = frame[frame["predictor"].astype(str).str.startswith("noise:")].copy()
    noisy["sigma"] = noisy["predictor"].str.slice(6).astype(float)
    fig, ax = subplots(figsize=(7, 4.5))
    for policy, group in noisy.groupby("policy", sort=False):
        curve = group.groupby("sigma")["ratio"].mean()
        ax.plot(curve.index, curve.to_numpy(), marker="o", label=policy)
    blind = frame[frame["predictor"].isna()].groupby("policy", sort=False)["ratio"].mean()
    for policy, ratio in blind.items():
        ax.axhline(ratio, ls=":", lw=0.9, color="grey")
        ax.annotate(policy, (noisy["sigma"].max() if len(noisy) else 1.0, ratio), fontsize=7, color="grey")
    ax.set_xlabel("prediction noise σ  (p̂ = p·exp(σZ))")
    ax.set_ylabel("ratio (1 = optimal)")
    ax.set_yscale("log")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path
