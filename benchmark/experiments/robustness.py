"""The experiment of `benchmark robustness --task fairness`: do the GPU-cluster policies that read p̂ gain anything from it?

Workloads: each scenario of `--scenario` (default `venus,philly`: the Venus-like workload on 100 × 8
GPUs and the Philly snapshot on a contended 64 × 8), and each real trace of `--jobs` (default
`philly`, labelled `jobs:philly`: the test part of the shipped Philly trace — 12,338 jobs of 13 VCs,
their real arrivals — on `--jobs-nodes` × 8 GPUs, exactly the jobs of `benchmark run --task fairness
--jobs philly --predictor lgbm-meta --nodes 64`). `--jobs` mirrors `run`'s own option (a shipped trace
by name or a jobs file with feature columns), because a trace is not a scenario: it is the only
workload with features to learn p̂ from, it is read and split by the fairness task's own loader
(benchmark.tasks.fairness.prepare → benchmark.tasks.traces), and `--predictor` applies to it alone.
On each workload every cluster policy whose class says `needs_prediction` (the registry's flag, so a
new p̂ policy joins by itself) is run under each p̂ source:

- `noise:σ` for σ in `--noise` (default 0,0.25,0.5,1,2,4): p̂ = p·exp(σZ), the seeded noise model
  of every task (benchmark.tasks.inputs.noise_predictions); σ = 0 is the exact size;
- `learned:NAME` (kind `learned`), on a `--jobs` trace only: the p̂ of `--predictor` (default
  lgbm-meta) fitted on the trace's train/validation part — the very numbers `run --task fairness
  --jobs TRACE --predictor NAME` schedules with. Its `sigma` is not a noise level but its measured
  σ-equivalent, the root mean square of log(p̂/p) over the scheduled jobs (the σ at which the noise
  model errs as much), where the figure draws it. A scenario has no features to learn from (it
  brings its own synthetic p̂), so for a scenario the output says so and leaves the source out;
- three controls that carry no information about which job is longer (`--controls`, default all):
  `constant` (every p̂ = the median true size of the scheduled jobs: the scenarios have no train
  split, and the traces use the same definition), `random` (p̂ = median·exp(2Z'), Z' drawn from the
  seed and the job count only, never from p), `permuted` (the true sizes shuffled across the jobs, seeded).

A policy uses p̂ only if exact p̂ beats the controls: a gain that random p̂ produces as well is not a
gain from the prediction. Where learned p̂ exists, the tables place it between the two: the share of
exact p̂'s gain it realises, (best control − learned) / (best control − exact), per policy and metric.
`astraea` and `srtf-oracle` (`--references`), which read no p̂, run once per workload and are drawn
as flat lines. Metrics per (policy, source): avg JCT, avg slowdown, p90 JCT of
the jobs shorter than one lease, sharing_loss_jobs and tenant_loss_intervals (the fairness task's
default definitions; docs/fairness.md#metrics).

`prepare_workloads(settings)` reads every workload, `measure(settings, prepared, started)` runs them
into a summary and two tables, `write_outputs(folder, ...)` writes OUT/robustness.csv (one row per
workload × policy × source), robustness_runs.csv, robustness.md, robustness.json and robustness.png
(+ .svg); `readme_block` is the block between `<!-- robustness:start -->` and `<!-- robustness:end -->`
regenerated from a saved robustness.json. See docs/fairness.md "Do predictions help? Robustness curves".

Part of the experiments package (benchmark.experiments): may import benchmark.* below the commands
(tasks, plots, progress, results), atlas_data, predictors and schedulers; never benchmark.commands.
"""


from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError

START, END = "<!-- robustness:start -->", "<!-- robustness:end -->"
DEFAULT_NOISE = "0,0.25,0.5,1,2,4"
CONTROLS = ("constant", "random", "permuted")
RANDOM_SIGMA = 2.0  # spread of the `random` control around the median: as wide as heavy noise, but blind
REFERENCES = ("astraea", "srtf-oracle")
#: exact p̂ "beats" the controls when its metric is lower than the best control's by more than this share:
#: on one seed the σ ≤ 0.5 points of one policy scatter by about ±5 % (astraea-p's avg slowdown on the
#: Venus-like scenario), so a smaller gap is not told apart from schedule-to-schedule variation
BEAT_MARGIN = 0.05
DEFAULT_SCENARIOS = "venus,philly"
DEFAULT_REPEATS, MAX_REPEATS = 3, 100
DEFAULT_PHILLY_NODES = 64  # the paper's 210 × 8 never fills on the published Philly list: 64 × 8 contends
#: the real traces run by default (`--jobs`): Philly's test part, as in `benchmark demo`, on DEFAULT_JOBS_NODES × 8
DEFAULT_JOBS = "philly"
DEFAULT_JOBS_NODES = 64
JOBS_PREFIX = "jobs:"  # a trace's workload label, `jobs:philly`: the `run --jobs` it is, never a scenario name
#: the columns of robustness.csv, in order
METRICS = ("avg_jct", "avg_slowdown", "p90_short_jct", "sharing_loss_jobs", "tenant_loss_intervals")
KEYS = ("scenario", "cluster", "n_jobs", "policy", "uses_p_hat", "source", "kind", "sigma")
#: the columns of robustness_runs.csv: one row per simulation
RUN_COLUMNS = (*KEYS, "repeat", *METRICS, "short_jobs", "loop", "sim_seconds")
#: the columns of robustness.csv: one row per scenario × policy × source, the metrics averaged over its
#: `repeats` runs (1 for σ = 0, `constant` and the references, whose p̂ draws nothing), `<metric>_std` over them
COLUMNS = (*KEYS, "repeats", *METRICS, *(f"{m}_std" for m in METRICS), "short_jobs", "loop", "sim_seconds")
METRIC_LABELS = {"avg_slowdown": "avg slowdown", "sharing_loss_jobs": "sharing-loss jobs", "avg_jct": "avg JCT (s)",
                 "p90_short_jct": "p90 JCT of jobs < 1 lease (s)", "tenant_loss_intervals": "tenant-loss intervals"}
NO_LEARNED = ("no learned p̂ for a scenario: the fairness task learns p̂ only on --data or --jobs (a scenario brings "
              "its own synthetic p̂ = p·exp(0.9Z)); left out, not imitated")
LEARNED = "learned"  # the kind of a learned p̂ source, named `learned:<predictor>`


@dataclass(frozen=True)
class Settings:
    """What `benchmark robustness` runs, every value checked (its options, docs/cli.md): the workloads
    (`scenarios`, the real `traces` and the `predictor` of their learned p̂), the p̂ sources (`sigmas`,
    `controls`), the p̂ `policies` and the `references`, the clusters in nodes of 8 GPUs, `n` jobs per
    workload (None: all), independent draws (`repeats`) and the seed."""

    scenarios: list
    traces: list
    predictor: str | None
    sigmas: list
    controls: list
    policies: list
    references: list
    venus_nodes: int | None = None
    philly_nodes: int = DEFAULT_PHILLY_NODES
    jobs_nodes: int = DEFAULT_JOBS_NODES
    n: int | None = None
    repeats: int = DEFAULT_REPEATS
    seed: int = 0
    task: str = "fairness"
    quiet: bool = False


# ----- p̂ sources -----------------------------------------------------------------------------------
def control_predictions(size: np.ndarray, controls, seed: int, draw: int = 0) -> dict[str, np.ndarray]:
    """The no-information p̂ of each control in `controls`, for true sizes `size` (one per job, in order).

    `constant`: every job's p̂ = the median of `size`. `random`: median·exp(RANDOM_SIGMA·Z'), with Z'
    drawn from (seed, job count) alone, so it is the same whatever the sizes are (only the median
    scales it). `permuted`: `size` shuffled by a seeded permutation (the same sizes, on other jobs).
    `draw` > 0: other, independent draws of `random` and `permuted` for the same seed (`--repeats`).
    """
    tail = [draw] if draw else []
    size = np.asarray(size, np.float64)
    median = float(np.median(size)) if len(size) else 1.0
    out = {}
    for name in controls:
        if name == "constant":
            out[name] = np.full(len(size), median)
        elif name == "random":
            z = np.random.default_rng([seed, 0xC0DE, 1] + tail).standard_normal(len(size))
            out[name] = median * np.exp(RANDOM_SIGMA * z)
        elif name == "permuted":
            out[name] = size[np.random.default_rng([seed, 0xC0DE, 2] + tail).permutation(len(size))]
        else:
            raise InputError(f"unknown control '{name}' (choose from {', '.join(CONTROLS)})", where="--controls")
    return out


def p_hat_sources(size: np.ndarray, sigmas, controls, seed: int, draw: int = 0,
                  learned: tuple[str, np.ndarray] | None = None) -> dict[str, tuple[str, float | None, np.ndarray]]:
    """{source: (kind, σ or None, p̂)}: `noise:σ` for each σ, then `learned:NAME` if `learned` =
    (predictor, its p̂ of the same jobs) is given, then each control; draw 0 is the noise of
    `benchmark run --noise σ` with the same seed, a draw > 0 an independent repeat. A draw > 0 leaves
    out the sources that do not depend on it (σ = 0, learned p̂ and `constant`: `drawn`). The σ of a
    learned source is its measured σ-equivalent (`sigma_equivalent`)."""
    from benchmark.tasks.inputs import noise_predictions

    out = {}
    size = np.asarray(size, np.float64)
    noisy = noise_predictions(size, list(sigmas), seed, draw)
    for (name, p_hat), sigma in zip(noisy.items(), sigmas):
        if drawn("noise", sigma, name) or not draw:
            out[name] = ("noise", float(sigma), p_hat)
    if learned is not None and not draw:
        predictor, p_hat = learned
        p_hat = np.asarray(p_hat, np.float64)
        if p_hat.shape != size.shape:
            raise ValueError(f"learned p̂ has {p_hat.shape} values for {size.shape} jobs")
        out[f"{LEARNED}:{predictor}"] = (LEARNED, sigma_equivalent(size, p_hat), p_hat)
    for name, p_hat in control_predictions(size, controls, seed, draw).items():
        if drawn("control", None, name) or not draw:
            out[name] = ("control", None, p_hat)
    return out


def drawn(kind: str, sigma, name: str) -> bool:
    """Whether a source's p̂ depends on the random draw (so `--repeats` runs it again): not σ = 0, not
    learned p̂ (one fit, one p̂), not `constant`."""
    return not ((kind == "noise" and sigma == 0) or kind == LEARNED or (kind == "control" and name == "constant"))


def sigma_equivalent(size: np.ndarray, p_hat: np.ndarray) -> float:
    """The root mean square of log(p̂/p): the σ at which the noise model p·exp(σZ) errs as much
    (E[(σZ)²] = σ²). Bias counts as error, as it does for the noise model's spread."""
    ratio = np.log(np.asarray(p_hat, np.float64) / np.asarray(size, np.float64))
    return float(np.sqrt(np.mean(ratio ** 2))) if len(ratio) else math.nan


def short_job_p90(table: pd.DataFrame, lease_s: float) -> tuple[float, int]:
    """(p90 JCT of the jobs whose true duration is shorter than one lease, how many there are); NaN if none."""
    short = table.loc[table["duration"].to_numpy(np.float64) < lease_s, "jct"].to_numpy(np.float64)
    return (float(np.percentile(short, 90)) if len(short) else math.nan), int(len(short))


# ----- the workloads' run options ------------------------------------------------------------------
def scenario_args(args, scenario: str):
    """The FairnessConfig of `benchmark run --task fairness --scenario ...` for one scenario (the run defaults otherwise)."""
    nodes = args.venus_nodes if scenario == "venus" else args.philly_nodes if scenario == "philly" else None
    return _run_args(args, {"scenario": scenario}, nodes)


def trace_args(args, trace: str, predictor: str):
    """The FairnessConfig of `benchmark run --task fairness --jobs TRACE --predictor NAME --nodes N` of one trace:
    `prepare` then reads its test part and learns p̂ on its train/validation part, as `run` does."""
    return _run_args(args, {"jobs": trace, "predictor": predictor}, args.jobs_nodes)


def _run_args(args, source: dict, nodes: int | None):
    from benchmark.tasks.config import make

    options = {**source, "seed": args.seed, "quiet": True, "no_mlflow": True}
    if nodes is not None:
        options["nodes"] = nodes
    if args.n is not None:
        options["n"] = args.n
    return make("fairness", options)


# ----- the runs ---------------------------------------------------------------------------------
def simulate_sources(run_args, prep, policies, sources, *, scenario: str, draw: int = 0, on_run=None,
                     notice=None) -> list[dict]:
    """One row per (policy, source) of `policies` under each p̂ of `sources` ({name: (kind, σ, p̂)});
    a policy whose class reads no p̂ gets one row per source all the same (the caller decides)."""
    from benchmark.tasks.fairness import cluster_policy
    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.policy import PluginPolicyError, PolicyError, get_policy

    rows = []
    for policy_name in policies:
        for source, (kind, sigma, p_hat) in sources.items():
            jobs = prep.jobs if p_hat is None else prep.jobs.with_predictions(p_hat)
            policy = cluster_policy(policy_name)
            try:
                result = simulate_fairness(jobs, policy, tenant_loss_share=run_args.tenant_loss_share, notice=notice,
                                           cluster=prep.cluster)
            except PluginPolicyError:
                raise
            except PolicyError as exc:
                raise InputError(str(exc), where=f"policy {policy_name}") from None
            p90, short = short_job_p90(result.jobs, run_args.lease)
            m = result.metrics
            row = {"scenario": scenario, "cluster": prep.cluster_text, "n_jobs": int(prep.jobs.n), "policy": policy_name,
                   "uses_p_hat": bool(get_policy(policy_name, "cluster").needs_prediction), "source": source,
                   "kind": kind, "sigma": sigma, "repeat": draw, "avg_jct": m["avg_jct"],
                   "avg_slowdown": m["avg_slowdown"],
                   "p90_short_jct": p90, "short_jobs": short, "sharing_loss_jobs": m["sharing_loss_jobs"],
                   "tenant_loss_intervals": m["tenant_loss_intervals"], "loop": result.loop,
                   "sim_seconds": m["sim_seconds"]}
            rows.append(row)
            if on_run is not None:
                on_run(row)
    return rows


def prepare_workloads(settings) -> list[tuple]:
    """Every workload read and checked before the first simulation: (workload, run options, Prepared,
    the learned predictor or None) per scenario, then per trace (the fairness task's own loader: its
    test part, p̂ fitted on its train/validation part only)."""
    from benchmark.progress import say
    from benchmark.tasks.fairness import prepare

    prepared = []
    for scenario in settings.scenarios:
        run_args = scenario_args(settings, scenario)
        prepared.append((scenario, run_args, prepare(run_args), None))
    for trace in settings.traces:
        say(f"robustness {JOBS_PREFIX}{trace}: its test part, p̂ = {settings.predictor} fitted on its train/validation part",
            settings.quiet)
        run_args = trace_args(settings, trace, settings.predictor)
        prepared.append((f"{JOBS_PREFIX}{trace}", run_args, prepare(run_args), settings.predictor))
    return prepared


def measure(settings, prepared: list[tuple], started: float) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """Every policy under every p̂ source on every prepared workload: (the summary of robustness.json,
    the aggregated rows of robustness.csv, the runs of robustness_runs.csv). `started` (perf_counter)
    is when the command began, for the summary's elapsed time."""
    from atlas_data.outputs import command_line
    from benchmark.progress import say

    sigmas, controls, policies, references = settings.sigmas, settings.controls, settings.policies, settings.references
    traces, predictor = settings.traces, settings.predictor
    once = sum(not drawn("noise", s, "") for s in sigmas) + sum(not drawn("control", None, c) for c in controls)
    redrawn = (settings.repeats - 1) * (len(sigmas) + len(controls) - once)
    per_scenario = len(policies) * (len(sigmas) + len(controls) + redrawn)
    per_scenario += len(references)
    total, done = per_scenario * len(prepared) + len(policies) * len(traces), [0]
    rows, notes, learned = [], [], []

    def progress(row):
        done[0] += 1
        say(f"robustness {row['scenario']}: {row['policy']} × {row['source']}: slowdown {row['avg_slowdown']:.3g}, "
            f"sharing loss {100 * row['sharing_loss_jobs']:.1f} % ({row['sim_seconds']:.1f} s, {row['loop']}) "
            f"[{done[0]}/{total}]", settings.quiet)

    def notice(text):
        say(f"robustness: {text}", settings.quiet)

    for scenario, run_args, prep, fitted in prepared:
        if fitted is None:
            notes.append(f"{scenario}: {NO_LEARNED}")
            say(f"robustness {scenario}: {prep.jobs.n} jobs on {prep.cluster_text}; {NO_LEARNED}", settings.quiet)
            own = None
        else:
            own = (fitted, prep.jobs.predicted)
            info = learned_info(scenario, fitted, prep)
            learned.append(info)
            notes.append(info["note"])
            say(f"robustness {scenario}: {prep.jobs.n} jobs on {prep.cluster_text}; {info['note']}", settings.quiet)
        for draw in range(settings.repeats):
            sources = p_hat_sources(prep.jobs.size, sigmas, controls, settings.seed, draw, learned=own)
            rows += simulate_sources(run_args, prep, policies, sources, scenario=scenario, draw=draw, on_run=progress,
                                     notice=notice)
        # a reference reads no p̂ (its class says so): one run, labelled with no source
        rows += simulate_sources(run_args, prep, references, {"none": ("reference", None, None)}, scenario=scenario,
                                 on_run=progress, notice=notice)
    runs = pd.DataFrame(rows, columns=list(RUN_COLUMNS))
    frame = aggregate(runs)
    workloads = [name for name, *_ in prepared]
    summary = {"task": settings.task, "date": time.strftime("%Y-%m-%d"), "seed": settings.seed, "n": settings.n,
               "repeats": settings.repeats,
               "scenarios": workloads, "jobs": traces, "predictor": predictor,
               "jobs_nodes": settings.jobs_nodes if traces else None,
               "noise": sigmas, "controls": controls, "policies": policies,
               "references": references, "random_sigma": RANDOM_SIGMA, "beat_margin": BEAT_MARGIN,
               "lease_s": prepared[0][1].lease if prepared else None,
               "notes": notes, "learned": learned, "realised": realised_table(runs),
               "rows": json.loads(frame.to_json(orient="records")),
               "runs": json.loads(runs.to_json(orient="records")),
               "elapsed_s": round(time.perf_counter() - started, 1), "argv": command_line()}
    return summary, frame, runs


def write_outputs(folder: Path, summary: dict, frame: pd.DataFrame, runs: pd.DataFrame) -> str:
    """Write robustness.csv, robustness_runs.csv, .json, .md and .png into `folder`; the markdown."""
    from benchmark.results import write_text_atomic

    text = markdown(summary)
    frame.to_csv(folder / "robustness.csv", index=False)
    runs.to_csv(folder / "robustness_runs.csv", index=False)
    write_text_atomic(folder / "robustness.json", json.dumps(summary, indent=2, default=str) + "\n")
    write_text_atomic(folder / "robustness.md", text)
    figure(frame, folder / "robustness.png", title=f"p̂ robustness, seed {summary['seed']}")
    return text


def learned_info(workload: str, predictor: str, prep) -> dict:
    """What a trace's learned p̂ is, for robustness.json `learned` and its note: where it was fitted and
    how far it is from the true sizes of the scheduled jobs (measured after the fit, never fed to it)."""
    size, p_hat = prep.jobs.size.astype(np.float64), np.asarray(prep.jobs.predicted, np.float64)
    log_ratio = np.log(p_hat / size)
    rank = float(pd.Series(p_hat).rank().corr(pd.Series(size).rank())) if len(size) > 1 else math.nan
    counts = dict(prep.card.get("counts") or {})
    info = {"scenario": workload, "predictor": predictor, "source": f"{LEARNED}:{predictor}", "n_jobs": int(prep.jobs.n),
            "fit_jobs": {k: counts.get(k) for k in ("train", "val")}, "test_jobs": counts.get("test"),
            "sigma_equivalent": sigma_equivalent(size, p_hat), "mean_log_ratio": float(log_ratio.mean()),
            "rank_correlation": rank}
    fit = " + ".join(f"{counts[k]:,} {k}" for k in ("train", "val") if counts.get(k) is not None)
    info["note"] = (f"{workload}: the test part of the real trace ({prep.jobs.n:,} jobs, their real arrivals, "
                    f"{prep.cluster_text}); {info['source']} = p̂ of {predictor} fitted on its train/validation part "
                    f"only ({fit} jobs, none of the scheduled ones), as `benchmark run --task fairness --jobs "
                    f"{workload[len(JOBS_PREFIX):]} --predictor {predictor}`; its error on the scheduled jobs: rms "
                    f"log(p̂/p) = {info['sigma_equivalent']:.2f} (its σ-equivalent, where the figure draws it), mean "
                    f"log(p̂/p) = {info['mean_log_ratio']:+.2f}, rank correlation with p = {rank:.2f}")
    return info


# ----- reading the rows ---------------------------------------------------------------------------
def aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per scenario × policy × source (in run order): the metrics' mean and std over its runs."""
    keys = list(KEYS)
    grouped = runs.assign(sigma=runs["sigma"].astype(float)).groupby(keys, sort=False, dropna=False)
    out = grouped[list(METRICS)].mean()
    std = grouped[list(METRICS)].std(ddof=0).add_suffix("_std")
    rest = grouped.agg(repeats=("repeat", "size"), short_jobs=("short_jobs", "first"), loop=("loop", "first"),
                       sim_seconds=("sim_seconds", "sum"))
    frame = pd.concat([out, std, rest], axis=1).reset_index()
    frame["sigma"] = frame["sigma"].astype(object).where(frame["sigma"].notna(), None)
    return frame[list(COLUMNS)]


def verdicts(runs: pd.DataFrame, metric: str) -> dict[tuple[str, str], dict]:
    """{(scenario, policy): {exact, best_control, gap, beats}} for the p̂ policies, from the runs (one
    row per simulation): `gap` = exact p̂'s `metric` (σ = 0) / the lowest of every control run (each
    control, each draw) − 1; `beats` when exact p̂ is lower by more than BEAT_MARGIN. The best single
    draw, not the mean, because σ = 0 is one schedule too: a gain that one draw of a control matches
    is not told apart from schedule variation. None when σ = 0 or the controls were not run."""
    out = {}
    for (scenario, policy), part in runs[runs["uses_p_hat"].astype(bool)].groupby(["scenario", "policy"], sort=False):
        exact = part.loc[(part["kind"] == "noise") & (part["sigma"] == 0), metric]
        ctrl = part.loc[part["kind"] == "control", metric]
        if exact.empty or ctrl.empty:
            out[(scenario, policy)] = {"exact": None, "best_control": None, "gap": None, "beats": None}
            continue
        e, c = float(exact.iloc[0]), float(ctrl.min())
        gap = (e / c - 1.0) if c > 0 else (0.0 if e == 0 else math.inf)
        out[(scenario, policy)] = {"exact": e, "best_control": c, "gap": gap, "beats": bool(gap < -BEAT_MARGIN)}
    return out


def realised_table(runs: pd.DataFrame) -> list[dict]:
    """Where learned p̂ lands, per workload × p̂ policy × metric: {scenario, policy, metric, source,
    exact, learned, best_control, beats, share}. `share` = (best control − learned) / (best control −
    exact), the share of exact p̂'s gain over the controls that learned p̂ realises (1 = as good as
    exact, 0 = no better than the best control run, < 0 worse), against the same best control run as
    `verdicts`; None where exact p̂ does not beat the controls (no gain to realise)."""
    out = []
    mine = runs[runs["kind"] == LEARNED]
    if mine.empty:
        return out
    for metric in METRICS:
        judged = verdicts(runs, metric)
        for _, row in mine.iterrows():
            v = judged.get((row["scenario"], row["policy"]))
            if v is None or v["exact"] is None:
                continue
            value = float(row[metric])
            share = None
            if v["beats"] and math.isfinite(value):
                share = (v["best_control"] - value) / (v["best_control"] - v["exact"])
            finite = {k: (x if x is not None and math.isfinite(x) else None)  # robustness.json: null, never NaN
                      for k, x in (("exact", v["exact"]), ("learned", value), ("best_control", v["best_control"]))}
            out.append({"scenario": row["scenario"], "policy": row["policy"], "metric": metric, "source": row["source"],
                        **finite, "beats": v["beats"], "share": share})
    return out


def _share_cell(item: dict | None) -> str:
    if item is None:
        return "–"
    if item["share"] is None:
        return "– (σ=0 does not beat)"
    return f"{100 * item['share']:.0f} %"


def _cell(metric: str, value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if metric in ("sharing_loss_jobs", "tenant_loss_intervals"):
        return f"{100 * value:.1f} %"
    if metric in ("avg_jct", "p90_short_jct"):
        return f"{value:,.0f}"
    return f"{value:.3g}"


def metric_table(frame: pd.DataFrame, runs: pd.DataFrame, scenario: str, metric: str) -> list[str]:
    """Markdown lines: one row per policy, one column per source (the mean over its draws), and σ = 0
    against the best control run (`verdicts`)."""
    part = frame[frame["scenario"] == scenario]
    sources = list(dict.fromkeys(part.loc[part["uses_p_hat"], "source"]))
    judged = verdicts(runs, metric)
    learned = (part["kind"] == LEARNED).any()  # a trace: the learned p̂ placed between exact and the controls
    shares = {(r["policy"]): r for r in realised_table(runs[runs["scenario"] == scenario]) if r["metric"] == metric}
    head = ["policy", *[s.replace("noise:", "σ=") for s in sources], "σ=0 vs best control run"]
    head += ["learned: share of σ=0's gain"] if learned else []
    lines = ["| " + " | ".join(head) + " |",
             "| --- | " + " | ".join("---:" for _ in sources) + " | --- |" + (" ---: |" if learned else "")]
    for policy, rows in part.groupby("policy", sort=False):
        by = dict(zip(rows["source"], rows[metric]))
        if not rows["uses_p_hat"].iloc[0]:
            value = _cell(metric, by.get("none"))
            lines.append(f"| {policy} (no p̂) | " + " | ".join(value for _ in sources) + " | reference |"
                         + (" – |" if learned else ""))
            continue
        v = judged[(scenario, policy)]
        verdict = "–" if v["beats"] is None else f"{100 * v['gap']:+.1f} % " + ("beats" if v["beats"] else "**does not beat**")
        lines.append(f"| {policy} | " + " | ".join(_cell(metric, by.get(s)) for s in sources) + f" | {verdict} |"
                     + (f" {_share_cell(shares.get(policy))} |" if learned else ""))
    return lines


def markdown(summary: dict, metrics=("avg_slowdown", "sharing_loss_jobs", "avg_jct", "p90_short_jct",
                                     "tenant_loss_intervals")) -> str:
    """The tables of robustness.md (all metrics) or of the results block (docs/results.md) (`metrics` = the headline two)."""
    frame = pd.DataFrame(summary["rows"], columns=list(COLUMNS))
    runs = pd.DataFrame(summary["runs"], columns=list(RUN_COLUMNS))
    out = [f"Produced by `benchmark robustness --task {summary['task']}` (seed {summary['seed']}"
           + (f", {summary['n']} jobs per scenario" if summary.get("n") else "") + f", {summary['elapsed_s']:.0f} s). "
           f"Each value with noise, `random` or `permuted` p̂ is the mean over {summary['repeats']} independent draws "
           "(robustness_runs.csv has every run). "
           "p̂ = p·exp(σZ) per σ; controls carry no information about which job is longer: `constant` = the median "
           f"true size for every job, `random` = median·exp({summary['random_sigma']:g}Z') drawn without p, "
           "`permuted` = the true sizes shuffled across jobs. A policy uses p̂ only where σ = 0 (exact p̂) beats every "
           "control: the column \"σ=0 vs best control run\" is σ = 0 against the lowest single control run (any control, any draw), "
           f"\"beats\" when lower by more than {100 * summary['beat_margin']:g} %. "
           "Policies marked (no p̂) read none: the same value in every column."]
    if summary.get("learned"):
        out[0] += (" On a real trace (`jobs:NAME`, its test part), `learned:NAME` is the predictor's p̂ fitted on the "
                   "trace's train/validation part; the column \"learned: share of σ=0's gain\" places it: (best "
                   "control run − learned) / (best control run − σ = 0), the share of exact p̂'s gain it realises (100 % = as good as exact p̂, "
                   "0 % = no better than a control, negative = worse), where σ = 0 beats the controls.")
    for note in summary["notes"]:
        out += ["", f"- {note}"]
    for scenario in summary["scenarios"]:
        part = frame[frame["scenario"] == scenario]
        if part.empty:
            continue
        out += ["", f"**{scenario}**: {int(part['n_jobs'].iloc[0]):,} jobs on {part['cluster'].iloc[0]}"]
        for metric in metrics:
            out += ["", f"{METRIC_LABELS[metric]}" + (f" (jobs shorter than {summary['lease_s']:g} s)"
                                                       if metric == "p90_short_jct" and summary.get("lease_s") else ""), ""]
            out += metric_table(frame, runs, scenario, metric)
    return "\n".join(out).strip() + "\n"


def readme_block(summary_json: Path | str) -> str:
    """The results block (docs/results.md) (avg slowdown and sharing-loss jobs), regenerated from a saved robustness.json."""
    return markdown(json.loads(Path(summary_json).read_text()), metrics=("avg_slowdown", "sharing_loss_jobs"))


def figure(frame: pd.DataFrame, path: Path, *, title: str) -> Path:
    from benchmark.plots import fairness_robustness_figure, save_figure

    return save_figure(fairness_robustness_figure(frame, title=title), path, dpi=100)
