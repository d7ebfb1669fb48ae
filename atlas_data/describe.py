"""`benchmark data describe DS`: a text summary of an ATLAS dataset and a duration-histogram PNG.

Prints counts (kept, dropped by reason, per split), label skew before/after log1p, the
recurrent share of the test split, split time ranges, the features most correlated with y on
train (Spearman), and — from `raw_stats` in dataset.json — the calibration figures of the raw
trace next to the synthetic generator's targets (`atlas_data.synth.CALIBRATION_TARGETS`).

May import: numpy, pandas, matplotlib, atlas_data.build, atlas_data.errors, atlas_data.outputs, atlas_data.synth.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.build import load_dataset
from atlas_data.errors import InputError
from atlas_data.outputs import check_output_file, file_signature, output_file, png_metadata, read_marker, svg_text
from atlas_data.synth import CALIBRATION_TARGETS


def _skew(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    if len(x) < 3:
        return float("nan")
    d = x - x.mean()
    s = d.std()
    return float(np.mean(d**3) / s**3) if s > 0 else 0.0


def summarize(df: pd.DataFrame, card: dict) -> dict:
    """The figures `describe` prints, as a dict (also used by tests and the perf report)."""
    counts = card["counts"]
    test = df[df["split"] == "test"]
    train = df[df["split"] == "train"]
    feats = card["features"]
    corr = {}
    if len(train) > 2:
        ranks = train[feats + ["y"]].rank()
        c = ranks.corr()["y"].drop("y").dropna()
        corr = {k: float(v) for k, v in c.reindex(c.abs().sort_values(ascending=False).index).head(10).items()}
    raw = card.get("raw_stats", {})
    kept_share = counts["kept"] / max(raw.get("jobs", 0), 1) if raw.get("jobs") else float("nan")
    achieved = {
        "p_star_skew": _skew(df["p_star"].to_numpy()),
        "y_skew": _skew(df["y"].to_numpy()),
        "test_recurrent_share": float(test["is_recurrent"].mean()) if len(test) else float("nan"),
        "kept_share": float(kept_share),
        "instances_per_job": float(raw.get("instances_per_job", float("nan"))),
        "gang_instance_share": float(raw.get("gang_instance_share", float("nan"))),
        "span_days": float(raw.get("span_days", float("nan"))),
    }
    return {
        "source": card.get("source"),
        "counts": counts,
        "p_star_quantiles_s": {q: float(df["p_star"].quantile(q)) for q in (0.1, 0.5, 0.9, 0.99)},
        "calibration": achieved,
        "splits": card.get("splits", {}),
        "top_correlations": corr,
        "status_share": raw.get("status_share", {}),
        "weekend_to_weekday_daily_ratio": raw.get("weekend_to_weekday_daily_ratio"),
        "hour_of_day_share": raw.get("hour_of_day_share"),
        "gpu_type_spec_share": raw.get("gpu_type_spec_share", {}),
        "fingerprint": card.get("fingerprint"),
    }


def format_summary(s: dict) -> str:
    c = s["counts"]
    lines = [f"ATLAS dataset ({s['source']}), fingerprint {str(s['fingerprint'])[:16]}…",
             f"jobs kept {c['kept']:,}  train {c['train']:,}  val {c['val']:,}  test {c['test']:,}",
             "dropped: " + (", ".join(f"{k} {v:,}" for k, v in c["dropped"].items()) or "none")]
    q = s["p_star_quantiles_s"]
    lines.append("p* quantiles (s): " + "  ".join(f"q{int(k * 100)} {v:,.0f}" for k, v in q.items()))
    lines.append("split submit-time ranges (s):")
    for name, (t0, t1) in s["splits"].items():
        lines.append(f"  {name:<5} {t0:>12,.0f} .. {t1:>12,.0f}  ({(t1 - t0) / 86400:.1f} days)")
    lines.append("calibration (achieved vs target of the synthetic generator / published trace):")
    lines.append(f"  {'quantity':<24} {'achieved':>10} {'target':>10}  source")
    for key, value in s["calibration"].items():
        target, source = CALIBRATION_TARGETS[key]
        lines.append(f"  {key:<24} {value:>10.3f} {target:>10.3f}  {source}")
    if s["status_share"]:
        lines.append("raw job status: " + ", ".join(f"{k} {v:.1%}" for k, v in s["status_share"].items()))
    if s.get("hour_of_day_share"):
        hours = np.asarray(s["hour_of_day_share"])
        quiet = int(hours.argmin())
        # a short excerpt can have no arrival in some hour: the ratio is then not a number
        ratio = f"{hours.max() / hours.min():.1f}" if hours.min() > 0 else f"- (no arrivals at {quiet:02d}:00)"
        weekly = s.get("weekend_to_weekday_daily_ratio")
        weekly = f"{weekly:.2f}" if weekly is not None else "- (the trace spans no weekend day or no weekday)"
        lines.append(f"arrivals: weekend/weekday daily ratio {weekly}, "
                     f"busiest hour (UTC+8) {int(hours.argmax()):02d}:00, quietest {quiet:02d}:00, "
                     f"peak/trough {ratio}")
    if s["gpu_type_spec_share"]:
        lines.append("gpu_type_spec: " + ", ".join(f"{k} {v:.1%}" for k, v in s["gpu_type_spec_share"].items()))
    lines.append("top features by |Spearman ρ| with y (train):")
    for k, v in s["top_correlations"].items():
        lines.append(f"  {k:<24} {v:+.3f}")
    return "\n".join(lines)


def plot_durations(df: pd.DataFrame, path: Path, recognise=None) -> Path:

    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 3.8), layout="constrained")  # room for the legend right of the first panel
    axes = fig.subplots(1, 2)
    p = df["p_star"].to_numpy(dtype=float)
    bins = np.logspace(0, np.log10(max(p.max(), 10)), 60)
    for name in ("train", "val", "test"):
        sel = (df["split"] == name).to_numpy()
        if sel.any():  # share of the split's jobs per log-width bin
            axes[0].hist(p[sel], bins=bins, histtype="step", label=name, weights=np.full(sel.sum(), 1.0 / sel.sum()))
    axes[0].set_xscale("log")
    axes[0].set_xlabel("p* (s, log scale)")
    axes[0].set_ylabel("share of jobs")
    axes[0].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, frameon=False, title="split")
    axes[0].set_title("fork-join duration by split")
    axes[1].hist(df["y"], bins=60, color="tab:gray")
    axes[1].set_xlabel("y = log1p(p*)")
    axes[1].set_title(f"skew {_skew(p):.1f} → {_skew(df['y'].to_numpy()):.2f} after log")
    # signed (a PNG text chunk, an SVG comment), written aside and renamed: a rerun replaces them,
    # nothing else is replaced; the SVG sits beside the PNG under the same name
    output_file(path.with_suffix(".svg"), "data describe",
                lambda tmp: tmp.write_text(svg_text(fig, "data describe"), encoding="utf-8"), recognise=recognise or _ours)
    return output_file(path, "data describe", lambda tmp: fig.savefig(tmp, dpi=100, format="png",
                                                                       metadata=png_metadata("data describe")),
                       recognise=recognise or _ours)


def _ours(path: Path) -> bool:
    """A plot this command wrote, or the plot inside a dataset folder that `data build` wrote."""
    marker = read_marker(path.parent)
    return file_signature(path) == "data describe" or (marker or {}).get("command") == "data build"


def describe(ds_dir: Path | str, output: Path | str | None = None) -> tuple[str, Path, dict]:
    """Summary text, PNG path and figures for a dataset folder."""
    out = Path(output) if output else Path(ds_dir)
    png = (out / "durations.png") if out.suffix.lower() != ".png" else out
    if output and png != out and (out.is_file() or (out.exists() and not out.is_dir())):
        # --output is a folder for durations.png/.svg (or a .png path): an existing other file is not one
        raise InputError("is a file, not a folder: give a folder for durations.png/.svg or a .png file name",
                         path=str(out), where="--output")
    # the plot inside the dataset folder itself is this command's by convention; elsewhere it must be signed
    recognise = _ours if output else (lambda path: True)
    check_output_file(png, "data describe", recognise=recognise)  # before reading the dataset
    check_output_file(png.with_suffix(".svg"), "data describe", recognise=recognise)
    df, card = load_dataset(ds_dir)
    s = summarize(df, card)
    return format_summary(s), plot_durations(df, png, recognise), s
