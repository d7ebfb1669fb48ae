"""Task 'prediction': fit LASched prediction methods, score them on the test split, write the run.

`benchmark run --task prediction [--data DS | --jobs TRACE|FILE [--feature-columns a,b]
[--train-jobs TRACE|FILE] [--n N]] [--methods a,b] [--output OUT] [--seed S] [--quiet]`
writes OUT/results.json + results.csv (one row per method: the metrics of predictors.metrics and
fit/predict seconds, `fit_cached`), OUT/predictions/<method>.parquet (job_id, p_hat, log_sd[, lo, hi]) covering exactly
the test split, OUT/pred_vs_true.png and OUT/coverage_curve.png (each with an SVG beside it), and prints the paper-style table.
Without --data or --jobs it uses the embedded default dataset. With --jobs the data is any jobs
table — a shipped trace or a file — featurised by `atlas_data.jobs_features` (its own
time-ordered 70/15/15 split; `--n` keeps N consecutive jobs first); `--train-jobs` fits on
another trace and predicts the --jobs test part (benchmark.tasks.traces). `--predictor` is
accepted as a synonym of `--methods`; `--policies` does not apply to this task.
On a dataset every method goes through the dataset's prediction cache (`predictors.api.fit_or_load`,
the lookup the scheduling and fairness tasks use): a fit whose key still matches is reused — one
line on stderr names the reused methods, and their rows say `fit_cached` true with the original
fit's seconds — and a new fit is cached for the next run of any task.

May import predictors, benchmark.results, benchmark.progress, matplotlib.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.progress import Progress, say
from benchmark.results import Run, default_output_dir, format_table, write_results

DEFAULT_METHODS = (
    "constant",
    "single-stage",
    "crr++",
    "hras",
    "quantile-median",
    "cqr-stack",
    "isotonic",
    "two-stage",
    "lgbm-meta",
    "oracle",
)


def _method_list(config) -> list[str]:
    from predictors.methods import check_method_name

    # empty items and a method given twice were refused when the configuration was made, not merged
    given = config.methods if config.methods is not None else config.predictor
    names = list(given) if given is not None else list(DEFAULT_METHODS)
    for name in names:
        check_method_name(name)
    return names


@dataclass(frozen=True)
class PredictionData:
    """What the methods are fitted and scored on: a dataset folder (`ds_dir`, whose prediction cache is
    used) or a jobs table cut for prediction (`trace`, benchmark.tasks.traces.TraceSplit), with the
    split and the card either gives."""

    split: object  # predictors.data.SplitData
    card: dict
    ds_dir: Path | None = None
    trace: object | None = None


def execute(config, timings=None):
    """Fit, score and write the run of a PredictionConfig (benchmark.tasks.config): a Run."""
    from benchmark.tasks.traces import check_trace_options

    methods = _method_list(config)  # validate names before any expensive work
    if config.output:
        check_output_folder(config.output, "run")
    check_trace_options(config, needs_predictor=False)
    if config.jobs and config.data:
        raise InputError("give either --jobs or --data, not both", where="--jobs/--data")
    if config.n is not None and not config.jobs:
        raise InputError("--n applies to --jobs in the prediction task (a dataset is used whole)", where="--n")
    data = _load(config)
    out_dir = Path(config.output) if config.output else default_output_dir("prediction")
    with output_folder(out_dir, "run") as folder:  # renamed to `out_dir` once every file is written
        rows, dataset, doc = _fit_and_write(folder, data, methods, int(config.seed or 0), config.quiet)
    return Run(out_dir, doc, replace(config, output=str(out_dir)))


def _load(config) -> PredictionData:
    """The --jobs table cut for prediction, or the --data (default) dataset."""
    from predictors.data import SplitData, default_dataset_dir

    from benchmark.tasks.traces import trace_split

    if config.jobs:
        trace = trace_split(config.jobs, feature_columns=config.feature_columns, train_spec=config.train_jobs,
                            n=config.n, seed=int(config.seed or 0), columns=config.columns,
                            train_columns=config.train_columns, quiet=config.quiet, frame=config.frame)
        return PredictionData(trace.split, trace.card, trace=trace)
    ds_dir = Path(config.data) if config.data else default_dataset_dir(quiet=config.quiet)
    split, card = SplitData.from_folder(ds_dir)
    return PredictionData(split, card, ds_dir=ds_dir)


def run(config, timings=None):
    """`benchmark run --task prediction`: execute, then print the table (unless quiet)."""
    result = execute(config, timings)
    if not config.quiet:
        if config.jobs:
            print(trace_header(result.doc["dataset"], config.jobs))
        print(paper_table(result.doc["rows"]))
        from atlas_data.outputs import final_place

        say(f"wrote {final_place(result.output)}", config.quiet)  # inside the demo's temporary folder: its final name
    return result


def _fit_and_write(out_dir: Path, data: PredictionData, methods: list[str], seed: int,
                   quiet: bool) -> tuple[list[dict], dict, dict]:
    """Fit and score every method; write predictions, results and plots into the (temporary) folder."""
    from predictors.api import CachedFit, file_stem, fit_or_load
    from predictors.methods import MethodConfig
    from predictors.metrics import evaluate

    from benchmark.tasks.traces import fit_trace_method

    ds_dir, trace, split, card = data.ds_dir, data.trace, data.split, data.card
    truth = split.test_truth()
    config = MethodConfig(seed=seed)

    rows, frames, reused = [], {}, []
    (out_dir / "predictions").mkdir(parents=True, exist_ok=True)
    with Progress("prediction methods", total=len(methods), quiet=quiet) as progress:
        for name in methods:
            if trace is not None:
                # a trace's fits are memoised in-process, so a demo's scheduling step reuses them
                progress.note(f"fitting {name}")
                pred = fit_trace_method(trace, name, seed=config.seed)
                pred = CachedFit(pred.to_frame(spread=True), pred.fit_seconds, pred.predict_seconds, dict(pred.info))
            else:
                # the dataset's prediction cache, the very lookup of the scheduling and fairness tasks:
                # a fit they (or an earlier run) made is reused, a fit made here is left for them
                pred = fit_or_load(ds_dir, name, seed=config.seed, split=split)
                if pred.cached:
                    reused.append(name)
                else:
                    progress.note(f"fitted {name} in {pred.fit_seconds:.1f} s")
            frame = pred.frame
            _check_covers_test(frame, truth, name)
            frame.to_parquet(out_dir / "predictions" / f"{file_stem(name)}.parquet", index=False)
            p = truth.loc[frame["job_id"], "p_star"].to_numpy(float)
            rec = truth.loc[frame["job_id"], "is_recurrent"].to_numpy(bool)
            metrics = evaluate(frame["p_hat"], p, rec, frame.get("lo"), frame.get("hi"))
            rows.append(
                {
                    "method": name,
                    "predictor": name,
                    **metrics,
                    "fit_seconds": pred.fit_seconds,
                    "predict_seconds": pred.predict_seconds,
                    "fit_cached": pred.cached,
                    **{f"stage2_{k}": v for k, v in pred.info.items()},
                    **_floor_note(name, p, progress),
                }
            )
            frames[name] = (frame, p)
            progress.update()
    if reused:
        say(f"reused the cached fit of {', '.join(reused)} from {ds_dir / 'predictions'} (same dataset fingerprint, "
            f"seed and method definition; fit s is the original fit's)", quiet)

    if trace is not None:
        dataset = dict(card)
    else:
        dataset = {k: card.get(k) for k in ("source", "counts", "features", "splits", "fingerprint")}
        dataset["path"] = str(ds_dir)
    doc = write_results(
        out_dir, task="prediction", objective=None, n_jobs=len(truth), dataset=dataset, rows=rows,
        extra={"seed": config.seed, "n_estimators": config.n_estimators},
    )
    _plots(out_dir, frames)
    return rows, dataset, doc


def _floor_note(name: str, p: np.ndarray, progress) -> dict:
    """A reference method (`oracle`: p̂ = p) is floored like every p̂ (predictors.framework.P_HAT_FLOOR_S):
    on jobs shorter than the floor its p̂ is not p, and its coverage is not 100 %. Said on stderr and
    in its row (`p_hat_floored_jobs`), so that the score is not read as the reference's."""
    from predictors.framework import P_HAT_FLOOR_S
    from predictors.methods import REFERENCE_METHODS

    if name not in REFERENCE_METHODS:
        return {}
    floored = int(np.count_nonzero(p < P_HAT_FLOOR_S))
    if floored:
        progress.note(f"note: {name}: p̂ of {floored:,} of {len(p):,} test jobs raised to the floor of "
                      f"{P_HAT_FLOOR_S * 1000:g} ms (their p* is shorter), so its Cov@25/Cov@50/RMSLE are not those of p̂ = p")
    return {"p_hat_floored_jobs": floored} if floored else {}


def trace_header(dataset: dict, spec: str) -> str:
    """What a --jobs prediction run learned from: the trace, its split and its feature columns."""
    counts, cols = dataset["counts"], dataset.get("feature_columns") or {}
    text = (f"prediction on {spec}: train {counts['train']:,}, validation {counts['val']:,}, test {counts['test']:,} jobs "
            f"(time-ordered); feature columns: categorical {', '.join(cols.get('categorical', [])) or '-'}, numeric "
            f"{', '.join(cols.get('numeric', [])) or '-'}, plus calendar and the history of finished jobs")
    transfer = dataset.get("transfer")
    if transfer:
        text += (f"\ntransfer: fitted on {transfer['train_jobs']} ({transfer['source_jobs_used']:,} of "
                 f"{transfer['source_jobs']:,} jobs used"
                 + (f"; {transfer['dropped_target_jobs']:,} of them are the target's own and "
                    f"{transfer['dropped_after_target_test_start']:,} finish after its test part begins: left out"
                    if "dropped_target_jobs" in transfer else "") + ")")
    return text


def _check_covers_test(frame, truth, name: str) -> None:
    ids = frame["job_id"].astype(str)
    if ids.duplicated().any() or set(ids) != set(truth.index):
        raise RuntimeError(f"method {name!r} did not predict exactly the test split")
    if not np.all(np.isfinite(frame["p_hat"].to_numpy(float)) & (frame["p_hat"].to_numpy(float) > 0)):
        raise RuntimeError(f"method {name!r} produced non-finite or non-positive p_hat")


def paper_table(rows: list[dict]) -> str:
    """Method | Cov@25 All/Rec | Cov@50 All/Rec | RMSLE | Spearman | under-prediction, coverages in %, as in
    the paper (plus the under-prediction mass, predictors.metrics.under_log)."""

    def pct(a, b):
        fmt = lambda v: "-" if v is None or not np.isfinite(v) else f"{100 * v:.1f}"  # noqa: E731
        return f"{fmt(a)} / {fmt(b)}"

    table = [
        {
            "Method": r["method"],
            "Cov@25 (%) All/Rec": pct(r["cov25"], r["cov25_recurrent"]),
            "Cov@50 (%) All/Rec": pct(r["cov50"], r["cov50_recurrent"]),
            "RMSLE": r["rmsle"],
            "Spearman": r["spearman"],
            "under": r["under_log"],
            "PI cov": r["interval_coverage"],
            "PI width": r["interval_width"],
            "fit s": r["fit_seconds"],
        }
        for r in rows
    ]
    return format_table(table, list(table[0]), floatfmt="{:.3f}")


def _plots(out_dir: Path, frames: dict) -> None:
    """pred_vs_true.png and coverage_curve.png (each with an SVG beside it)."""
    from benchmark.plots import save_figure

    save_figure(pred_vs_true_figure(frames), out_dir / "pred_vs_true.png", dpi=100)
    save_figure(coverage_curve_figure(frames), out_dir / "coverage_curve.png", dpi=100)


def _method_styles(names):
    from benchmark.plots import series_styles

    # every method is a predictor: one colour and one marker each, the same in both figures
    return {name: style for name, style in zip(names, series_styles((name, name) for name in names).values())}


def pred_vs_true_figure(frames: dict):
    """p̂ against p on log axes, one panel per method (at most 5000 jobs each, drawn at random)."""
    from benchmark.plots import subplots

    names = list(frames)
    styles = _method_styles(names)
    cols = min(4, len(names))
    rows = int(np.ceil(len(names) / cols))
    fig, axes = subplots(rows, cols, figsize=(3.2 * cols, 3.2 * rows), squeeze=False)
    rng = np.random.default_rng(0)
    for ax, name in zip(axes.flat, names):
        frame, p = frames[name]
        p_hat = frame["p_hat"].to_numpy(float)
        show = rng.choice(len(p), size=min(len(p), 5000), replace=False)
        ax.scatter(p[show], p_hat[show], s=2, alpha=0.3, color=styles[name].color)
        lo, hi = max(1.0, min(p.min(), p_hat.min())), max(p.max(), p_hat.max())
        if hi <= lo * 1.01:  # every duration and prediction alike: widen the axes around them (log scale)
            lo, hi = lo / 2.0, hi * 2.0
            ax.set_xlim(lo, hi)
            ax.set_ylim(lo, hi)
        ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("true p (s)", fontsize=8)
        ax.set_ylabel("predicted p̂ (s)", fontsize=8)
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    return fig


def coverage_curve_figure(frames: dict):
    """Cov@τ against τ, one line per method, legend right of the axes."""
    from benchmark.plots import outside_legend, subplots
    from predictors.metrics import coverage_curve

    names = list(frames)
    styles = _method_styles(names)
    taus = np.linspace(0.0, 1.0, 101)
    fig, ax = subplots(figsize=(7.5, 4))
    for name in names:
        frame, p = frames[name]
        ax.plot(taus, coverage_curve(frame["p_hat"].to_numpy(float), p, taus), color=styles[name].color,
                marker=styles[name].marker, markevery=(names.index(name) % 10, 10), markersize=4,
                label=name)
    ax.set_xlabel("τ (relative error |p̂ − p| / p)")
    ax.set_ylabel("Cov@τ")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    outside_legend(ax, title="method")
    return fig
