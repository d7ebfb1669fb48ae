"""`benchmark run --task scheduling`: the LASched objectives on the shared simulator core.

Jobs come from `--jobs FILE` (a jobs table), `--jobs TRACE` (a trace shipped with the package:
`elasticflow:<cluster>` — one of the 10 ElasticFlow clusters with its real arrivals —,
`elasticflow`, `philly`, `philly:<vc>`, `openb`), `--data DS` (the test split of an ATLAS dataset)
or, with neither, the ATLAS default dataset (`--data default`). On a dataset without `--noise`
or `--predictor`, p̂ is `lgbm-meta` (cached per dataset), so the learning-augmented policies
run beside the blind ones by default.

Every run states the single-machine load Σp / span (span = last − first submit of the scheduled
jobs) in results.json (`load`) and in the printed report: above 1 the backlog grows over the
trace and ΣC_j is dominated by queueing; the makespan objective ignores release times. Predictions p̂ come from the table's
`predicted_duration` column, from `--noise σ[,σ...]` (p̂ = p·exp(σZ), one seeded Z per job shared
by every σ so the robustness curve is smooth), or from `--predictor NAME[,NAME]` (learned on the
dataset's train/val splits, never on the test split that is scheduled). With `--jobs` and
`--predictor` the jobs table is split 70/15/15 by submit time like a dataset
(benchmark.tasks.traces): the predictors are fitted on its train/validation part (or on
`--train-jobs`) and its test part is scheduled with its real arrivals. Every row names its p̂
source in `p_hat_source`; noise p̂ is "noise (uses true sizes)": a robustness model, not a predictor.

Sampling (`--n N`): by default (`--sample window`) N consecutive jobs in submit order, starting at
a seeded uniform offset — a window keeps the real arrival process and its load. `--sample random`
draws N jobs uniformly without replacement (seeded) and keeps them in submit order: the load is
thinned by N / total, which is how a paper-style "n = 5,000" sample of a large test split behaves.

Protocol (`--protocol`): `honest` (default) is everything above. `paper` reproduces the ATLAS
paper's reference code rule by rule (its samples, floors, normaliser, `las-ref`, `edf-p-ref`,
`random-ref`; see schedulers/protocol.py and docs/reproduce-atlas.md), including two rules that
read true sizes; every row they touch lists them under `leaks`, `results.json` lists them under
`leaks`, and a warning goes to stderr. `--sample-seed` seeds the job sample apart from `--seed`
(the predictor fit and the noise draw); the paper's is 42. Every run reports the single-machine
load Σp / span of each scheduled instance under `instances`.

May import atlas_data, predictors, schedulers and benchmark.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, final_text, output_folder
from benchmark.per_job import PerJobTable
from benchmark.progress import Progress
from benchmark.results import Run, default_output_dir, format_table, write_results
from benchmark.tasks.config import option_text
from benchmark.tasks.inputs import (DEFAULT_PREDICTOR, choose_policies, learned_predictions, learned_spread,
                                    noise_predictions, note_unused_predictions, resolve_names)
from benchmark.timings import Timings
from benchmark.value import CEILING_BINS, ceilings, control_predictions, is_control, value_of_prediction
from schedulers import jit
from schedulers.jobs import JobSet
from schedulers.objectives import DEFAULT_MACHINES, DEFAULT_POLICIES, Watch, planned_runs, run_objective
from schedulers.policy import get_policy, task_kind
from schedulers.protocol import LEAKS, PAPER_POLICIES, PAPER_SAMPLE_SEED, run_paper, single_machine_load
from schedulers.sampling import DATA_DEFAULT_N, sample_window


# ----- inputs -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    """Where a run's jobs come from, beside the jobs table itself (which the run drops once sampled)."""

    card: dict  # results.json `dataset`
    label: str  # the source as titles and messages name it
    # learner(methods, job_ids) -> {method: p̂ for job_ids} learned without the scheduled jobs' labels, with
    # `learner.spreads` alike; None when the source cannot learn (a jobs table without --predictor)
    learner: object | None = None


@dataclass(frozen=True)
class PHats:
    """The p̂ a run schedules with, by label (`noise:σ`, a method, `column`, a control): the values in
    JobSet row order, where each comes from (`p_hat_source`) and its predicted spread σ (or None)."""

    values: dict[str, np.ndarray]
    sources: dict[str, str]
    spreads: dict


def load_jobs(config) -> tuple[pd.DataFrame, Source]:
    """The jobs table of --jobs / --data and where it comes from."""
    if config.jobs and config.data:
        raise InputError("give either --jobs or --data, not both", where="--jobs/--data")
    if config.jobs:
        if config.predictor:
            from benchmark.tasks.traces import trace_prediction_spreads, trace_predictions, trace_split

            trace = trace_split(config.jobs, feature_columns=config.feature_columns,
                                train_spec=config.train_jobs, seed=config.seed,
                                columns=config.columns,
                                train_columns=config.train_columns, quiet=config.quiet, frame=config.frame)

            def learner(methods, job_ids):
                return trace_predictions(trace, methods, job_ids, seed=config.seed, quiet=config.quiet)

            def spreads(methods, job_ids):
                return trace_prediction_spreads(trace, methods, job_ids, seed=config.seed, quiet=config.quiet)

            learner.spreads = spreads
            note_unused_predictions(trace.own_predictions, f"--predictor {option_text(config, 'predictor')}",
                                    config.quiet)
            card = {**trace.card, "scheduled": "test part (its real arrivals)"}
            return trace.test_jobs, Source(card, f"{config.jobs} (test part)", learner)
        from benchmark.tasks.inputs import read_jobs_or_trace

        table, card = read_jobs_or_trace(config.jobs, columns=config.columns, quiet=config.quiet, frame=config.frame)
        return table, Source(card, str(config.jobs))
    from atlas_data.build import load_dataset, test_jobs

    frame, card = load_dataset(config.data)

    def learner(methods, job_ids):
        return {m: learned_predictions(config.data, m, job_ids, seed=config.seed, quiet=config.quiet) for m in methods}

    def spreads(methods, job_ids):
        return {m: learned_spread(config.data, m, job_ids, seed=config.seed, quiet=config.quiet) for m in methods}

    learner.spreads = spreads

    dataset = {"source": card.get("source"), "path": str(config.data), "fingerprint": card.get("fingerprint")}
    dataset.update(dataset_name(config.data))
    return test_jobs(frame), Source(dataset, str(config.data), learner)


def build_predictions(config, frame: pd.DataFrame, job_ids, size: np.ndarray, learner=None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """(p̂ per predictor label aligned with `job_ids`, p̂ source per label); `size` feeds the noise model."""
    from benchmark.tasks.traces import COLUMN_SOURCE, LEARNED_SOURCE, NOISE_SOURCE, TRANSFER_SOURCE

    predictions: dict[str, np.ndarray] = {}
    predictions.update(noise_predictions(size, list(config.noise or ()), config.seed))
    if predictions:
        note_unused_predictions("predicted_duration" in frame.columns, f"--noise {option_text(config, 'noise')}",
                                config.quiet)
    sources = {label: NOISE_SOURCE for label in predictions}
    methods = list(config.predictor or ())
    if methods:
        if learner is None:
            raise InputError("--predictor needs data to learn p̂ from: --data DS, or --jobs TRACE|FILE", where="--predictor")
        learned = learner(methods, job_ids)
        predictions.update(learned)
        sources.update({m: TRANSFER_SOURCE if config.train_jobs else LEARNED_SOURCE for m in learned})
    if not predictions and "predicted_duration" in frame.columns:
        order = pd.Index(frame["job_id"].astype(str)).get_indexer(pd.Index(job_ids).astype(str))
        predictions["column"] = frame["predicted_duration"].to_numpy(np.float64)[order]
        sources["column"] = COLUMN_SOURCE
    return predictions, sources


def resolve_data_source(config):
    """The configuration with its data source resolved: neither --jobs nor --data is the ATLAS default
    dataset; a dataset with no p̂ source gets lgbm-meta."""
    from atlas_data.named import resolve_dataset

    if not config.jobs and not config.data:
        config = replace(config, data="default")
    if config.data:
        config = replace(config, data=str(resolve_dataset(config.data, quiet=config.quiet)))
        if not config.predictor and not config.noise:
            config = replace(config, predictor=(DEFAULT_PREDICTOR,))
    return config


def dataset_name(folder) -> dict:
    """{"name": NAME} when `folder` is the cache folder of a named dataset (default, paper-scale)."""
    from atlas_data.named import NAMED_DATASETS, named_dataset_dir

    for name in NAMED_DATASETS:
        if Path(folder).resolve() == named_dataset_dir(name).resolve():
            return {"name": name}
    return {}


def prediction_spreads(predictions: dict, sources: dict, frame: pd.DataFrame, job_ids, learner=None) -> dict:
    """{label: the predicted spread σ of its p̂ (a number, or one per job in `job_ids` order), or None}:
    a noise label's σ is its own level (p̂ = p·exp(σZ) is log-normal around p by construction); a
    learned method's is calibrated on validation residuals (`learner.spreads`); a jobs table's p̂
    has the table's `predicted_log_sd` column if it has one. What `gittins`, `serpt` and the
    `quantile` revision read (schedulers.revision)."""
    from benchmark.tasks.traces import COLUMN_SOURCE, NOISE_SOURCE

    out: dict = {}
    learned = [label for label, source in sources.items() if source not in (NOISE_SOURCE, COLUMN_SOURCE)]
    fitted = learner.spreads(learned, job_ids) if learned and hasattr(learner, "spreads") else {}
    for label in predictions:
        if sources.get(label) == NOISE_SOURCE:
            out[label] = float(label.split(":", 1)[1])
        elif sources.get(label) == COLUMN_SOURCE and "predicted_log_sd" in frame.columns:
            order = pd.Index(frame["job_id"].astype(str)).get_indexer(pd.Index(job_ids).astype(str))
            out[label] = frame["predicted_log_sd"].to_numpy(np.float64)[order]
        else:
            out[label] = fitted.get(label)
    return out


def _p_hats(config, window: pd.DataFrame, jobs: JobSet, learner) -> PHats:
    """Every p̂ of an honest run for the sampled `jobs` (`window`, their rows): noise, learned or the
    table's column, with their spreads, and the controls of each learned p̂ with --controls."""
    predictions, sources = build_predictions(config, window, jobs.job_id, jobs.size, learner)
    spreads = prediction_spreads(predictions, sources, window, jobs.job_id, learner)
    if config.controls:
        add_controls(predictions, sources, spreads, config.seed)
    return PHats(predictions, sources, spreads)


def add_controls(predictions: dict, sources: dict, spreads: dict, seed: int) -> None:
    """Beside each learned p̂ (not noise, not a column), its controls (benchmark.value): the same values
    permuted among the jobs and one constant, with the same spread."""
    from benchmark.tasks.traces import CONTROL_SOURCE, LEARNED_SOURCE, TRANSFER_SOURCE

    for label in [k for k, v in sources.items() if v in (LEARNED_SOURCE, TRANSFER_SOURCE)]:
        for suffix, p_hat in control_predictions(predictions[label], seed).items():
            predictions[label + suffix] = p_hat
            sources[label + suffix] = CONTROL_SOURCE
            spreads[label + suffix] = spreads.get(label)


def add_ceilings(value: list[dict], jobs: JobSet, predictions: dict, srpt_sum: float) -> None:
    """Beside each learned p̂'s value, the value of its calibration ceilings (benchmark.value,
    schedulers.policies.distribution.CalibrationCeiling): Gittins on the exact size distribution of the
    scheduled jobs in each of CEILING_BINS p̂-quantile bins (`ceiling`) and in one bin (`blind_ceiling`,
    the same for every p̂: what the best blind policy could reach knowing the size distribution).
    Diagnostics that read true sizes; never result rows."""
    from schedulers.engine import simulate
    from schedulers.policies.distribution import CalibrationCeiling

    def ratio(p_hat, bins: int) -> float:
        with_p = jobs.with_predictions(np.maximum(np.asarray(p_hat, np.float64), 1e-9))
        return float(simulate(with_p, CalibrationCeiling(bins)).completion_time.sum()) / srpt_sum

    blind = ratio(predictions[value[0]["p_hat"]], 1)  # one bin: p̂ is not read
    for record in value:
        record.update(ceilings(record, {"ceiling": ratio(predictions[record["p_hat"]], CEILING_BINS),
                                        "blind_ceiling": blind}))


def with_sources(rows: list[dict], sources: dict[str, str]) -> list[dict]:
    """Every row names where its p̂ came from (None for policies that read no p̂)."""
    for row in rows:
        row["p_hat_source"] = sources.get(row.get("predictor")) if row.get("predictor") else None
    return rows


# ----- the task -----------------------------------------------------------------------------
def execute(config, timings: Timings | None = None):
    """Schedule and score the run of a validated SchedulingConfig (benchmark.tasks.config): a Run.

    `timings` collects where the time went (results.json `timings`; `--profile` prints it)."""
    objective = config.objective
    # every predictor and policy name (a plugin's imported) before a job is read or a model fitted
    resolve_names(predictors=config.predictor, policies=config.policies, kind=task_kind("scheduling", objective))
    if config.output:
        check_output_folder(config.output, "run")  # a bad --output fails before any computation
    machines = list(config.machines or DEFAULT_MACHINES)  # each >= 1, and the noise levels in range: checked
    if not 0.0 <= config.prr_lambda <= 1.0:             # when the configuration was made
        raise InputError(f"PRR's λ must be in [0, 1], got {config.prr_lambda}", where="--prr-lambda")
    from benchmark.tasks.traces import check_trace_options

    timings = timings or Timings()
    check_trace_options(config, needs_predictor=True)
    with timings.stage("read"):
        config = resolve_data_source(config)
        table, source = load_jobs(config)
    if config.protocol == "paper":
        return _execute_paper(config, machines, table, source, timings)
    sample_seed = config.seed if config.sample_seed is None else config.sample_seed
    n = config.n if config.n is not None else (DATA_DEFAULT_N[objective] if config.data else None)
    with timings.stage("read"):
        window = sample_window(table, n, sample_seed, config.sample)
        jobs = JobSet.from_frame(window)
    n_total = int(len(table))
    del table  # the whole table is not needed past the sample (a million-row trace holds it twice otherwise)
    with timings.stage("predictions"):
        p_hats = _p_hats(config, window, jobs, source.learner)
    del window
    policies = choose_policies(
        config.policies, task_kind("scheduling", objective), DEFAULT_POLICIES[objective],
        have_predictions=bool(p_hats.values), source=source.label, task=objective, quiet=config.quiet,
        have_spreads=any(v is not None for v in p_hats.spreads.values()),
    )
    out = Path(config.output) if config.output else default_output_dir("scheduling", objective)
    # renamed to `out` once every file below is written; per_job.parquet is written there run by run
    with output_folder(out, "run") as folder, \
            PerJobTable(folder / "per_job.parquet", cdf=objective != "makespan") as per_job:
        rows, reference = _simulate(config, jobs, policies, p_hats, machines, timings, per_job)
        dataset = {**source.card, "n_total": n_total, "sample": config.sample if jobs.n < n_total else "all"}
        for row in rows:
            row["leaks"] = []
        with_sources(rows, p_hats.sources)
        clairvoyant = [p for p in policies if get_policy(p).clairvoyant]
        value = value_of_prediction(rows, clairvoyant) if objective != "makespan" else []
        if config.controls and objective == "total_completion" and value:
            with timings.stage("ceilings"):
                add_ceilings(value, jobs, p_hats.values, reference["sum_completion"])
        load = _load_parts(jobs)
        instances = [{"objective": objective, "n": jobs.n, "load": load["load"]}]
        robustness = len([k for k in p_hats.values if k.startswith("noise:")]) > 1
        title = f"{objective} — {jobs.n} jobs ({final_text(source.label)})"
        _write_plots(folder, timings, per_job, rows, objective, title, reference.get("s_star"), robustness)
        doc = write_results(  # last, so that its timings cover everything above
            folder, task="scheduling", objective=objective, n_jobs=jobs.n, dataset=dataset, rows=rows,
            extra={"reference": _jsonable(reference), "options": _options(config, machines), "protocol": "honest",
                   "leaks": [], "instances": instances, "load": load, "p_hat_sources": p_hats.sources,
                   "value_of_prediction": value, "timings": timings.as_dict()},
        )
    return Run(out, doc, replace(config, output=str(out)))


def _simulate(config, jobs: JobSet, policies: list[str], p_hats: PHats, machines: list[int],
              timings: Timings, per_job: PerJobTable) -> tuple[list[dict], dict]:
    """Run and score every policy under each p̂ it reads (schedulers.objectives.run_objective): the
    rows and the reference values; the per-job rows go to `per_job` run by run, the time split to
    `timings`."""
    objective = config.objective
    steps = len(planned_runs(objective, policies, p_hats.values, machines, p_hats.spreads))
    t0 = time.perf_counter()
    with Progress(f"{objective} on {jobs.n} jobs", total=steps, quiet=config.quiet) as progress:
        watch = Watch(on_step=lambda row: progress.update(), per_job=per_job)
        rows, _, reference = run_objective(
            objective, jobs, policies, p_hats.values, machines=machines, prr_lambda=config.prr_lambda,
            seed=config.seed, spreads=p_hats.spreads, watch=watch,
        )
        per_job.close()
    _add_objective_timings(timings, watch.seconds, per_job, time.perf_counter() - t0)
    timings.fast_loops = jit.describe(jobs.n)
    return rows, reference


def _add_objective_timings(timings: Timings, spent: dict, per_job: PerJobTable, total_s: float) -> None:
    """run_objective's split (normalisers, each policy, per-job rows, writing them) as stages of
    `timings`; the figure's share of the per-job rows goes to `plots`."""
    timings.add("normalisers (reference values)", spent.get("reference_s", 0.0))
    timings.add("policies", sum(spent.get("policies_s", {}).values()))
    timings.policies.update(spent.get("policies_s", {}))
    timings.add("per-job table", spent.get("per_job_s", 0.0))
    timings.add("write per_job.parquet", per_job.write_s)
    accounted = (spent.get("reference_s", 0.0) + sum(spent.get("policies_s", {}).values()) + spent.get("per_job_s", 0.0)
                 + per_job.write_s + per_job.figure_s)
    timings.add("scoring", max(0.0, total_s - accounted))



def _write_plots(folder, timings, per_job: PerJobTable, rows, objective, title, s_star, robustness: bool) -> None:
    """The figures of one scheduling run (the stretch CDF from the steps `per_job` took of each run),
    timed as the stage `plots`; the controls of --controls are read in the value-of-prediction
    table, not drawn: a figure of three times the series would hide the policies it is for."""
    timings.add("plots", per_job.figure_s)
    with timings.stage("plots"):
        from benchmark import plots  # matplotlib: imported when a figure is drawn, not by every command

        rows = [r for r in rows if not is_control(r.get("predictor"))]
        plots.ratio_bars(rows, folder / "ratios.png", title=title)
        if objective != "makespan":
            plots.stretch_cdf(per_job.series, folder / "stretch_cdf.png", title=title, s_star=s_star)
        if robustness:
            plots.robustness_curve(plots.noise_levels(rows), folder / "robustness.png", title=f"robustness: {title}")

def _execute_paper(config, machines: list[int], table: pd.DataFrame, source: Source, timings: Timings):
    """--protocol paper: the reference code's rules on the table's rows in their own order; a Run."""
    objective = config.objective
    sample_seed = PAPER_SAMPLE_SEED if config.sample_seed is None else config.sample_seed
    if config.n is not None and config.n < 1:
        raise InputError(f"--n must be at least 1, got {config.n}", where="--n")
    if config.n is not None and objective == "makespan":
        raise InputError("--n does not apply to makespan under --protocol paper (n(m) = m·max(10, ⌊10·log₂ m⌋))", where="--n")
    ordered = table.reset_index(drop=True)
    # in the table's own row order, the order the reference samples from
    with timings.stage("predictions"):
        predictions, sources = build_predictions(config, ordered, ordered["job_id"].astype(str).to_numpy(object),
                                                 ordered["duration"].to_numpy(np.float64), source.learner)
    kind = task_kind("scheduling", objective)
    policies = choose_policies(config.policies, kind, PAPER_POLICIES[objective], have_predictions=bool(predictions),
                               source=source.label, task=objective, quiet=config.quiet)
    out = Path(config.output) if config.output else default_output_dir("scheduling", objective)
    with timings.stage("samples, normalisers and policies (paper protocol)"), \
            Progress(f"{objective} (paper protocol) on {len(ordered)} jobs", quiet=config.quiet) as progress:
        rows, per_job, reference, instances = run_paper(
            objective, ordered, predictions, policies=policies, machines=machines, prr_lambda=config.prr_lambda,
            sample_seed=sample_seed, n=config.n, on_step=lambda row: progress.update(),
        )
    with_sources(rows, sources)
    leaks = [{"leak": leak, "rule": LEAKS[leak], "rows": [f"{r['policy']}/{r['predictor']}" for r in rows if leak in r["leaks"]]}
             for leak in LEAKS if any(leak in r["leaks"] for r in rows)]
    if leaks:
        sys.stderr.write("warning: --protocol paper reads true sizes: "
                         + "; ".join(f"{x['leak']} ({x['rule']})" for x in leaks)
                         + " — see docs/reproduce-atlas.md\n")
    n_jobs = max(i["n"] for i in instances)
    dataset = {**source.card, "n_total": int(len(table)), "sample": "paper"}
    options = {**_options(config, machines), "sample_seed": sample_seed}
    with output_folder(out, "run") as folder, \
            PerJobTable(folder / "per_job.parquet", cdf=objective != "makespan") as written:
        written.start(per_job)  # the paper's samples are small: the whole frame in one write
        written.write(per_job)
        written.close()
        timings.add("write per_job.parquet", written.write_s)
        title = f"{objective} — paper protocol ({final_text(source.label)})"
        _write_plots(folder, timings, written, rows, objective, title, reference.get("s_emp"), robustness=False)
        doc = write_results(
            folder, task="scheduling", objective=objective, n_jobs=n_jobs, dataset=dataset, rows=rows,
            extra={"reference": _jsonable(reference), "options": options, "protocol": "paper",
                   "leaks": leaks, "instances": instances, "p_hat_sources": sources, "timings": timings.as_dict()},
        )
    return Run(out, doc, replace(config, output=str(out)))


def run(config, timings: Timings | None = None):
    """`benchmark run --task scheduling`: execute, then print the report (unless quiet)."""
    result = execute(config, timings)
    if not config.quiet:
        print(render(result.doc))
        from atlas_data.outputs import final_place

        print(f"\nresults: {final_place(result.output)}")  # inside the demo's temporary folder: its final name
    return result


def _load_parts(jobs: JobSet) -> dict:
    """Σp / span of the scheduled jobs (sizes already floored at 1 s by the JobSet), and its parts."""
    span = float(jobs.submit_time.max() - jobs.submit_time.min()) if jobs.n else 0.0
    return {"sum_p_s": float(jobs.size.sum()), "span_s": span,
            "load": single_machine_load(jobs.submit_time, jobs.size)}


def _load_text(doc: dict) -> str:
    if "load" not in doc:
        return ""
    load = doc["load"] or {}
    if load.get("load") is None:
        return "; single-machine load undefined (all jobs released at once)"
    return f"; single-machine load Σp/span = {load['load']:.3g} (Σp {load['sum_p_s']:.4g} s over {load['span_s'] / 86400:.3g} days of arrivals)"


def render(doc: dict) -> str:
    from benchmark.tasks.traces import describe_data

    return _render_table(doc) + _render_value(doc) + f"\ndata: {describe_data(doc.get('dataset'))}"


def _render_value(doc: dict) -> str:
    """The value-of-prediction lines of a run (benchmark.value): one per learned p̂."""
    lines = []
    for v in doc.get("value_of_prediction") or []:
        if v.get("value") is None:
            continue
        line = (f"value of {v['p_hat']} p̂: {v['value']:+.2f} (best blind {v['best_blind']:.4g} {v['best_blind_policy']}, "
                f"best with p̂ {v['best_learned']:.4g} {v['best_learned_policy']}; 1 = clairvoyant, 0 = blind)")
        controls = {k: c for k, c in (v.get("controls") or {}).items() if c is not None}
        if controls:
            line += "; controls " + ", ".join(f"{k} {c:+.2f}" for k, c in controls.items())
        if v.get("ceiling") is not None:
            line += f"; ceiling {v['ceiling']:+.2f} (blind {v['blind_ceiling']:+.2f})"
        lines.append(line)
    return ("\n" + "\n".join(lines)) if lines else ""


def _render_table(doc: dict) -> str:
    objective = doc["objective"]
    columns = ["policy", "predictor", "p_hat_source", "value", "reference", "ratio"]
    if objective == "total_completion" and doc.get("protocol") != "paper":
        columns.append("flow_ratio")
    if objective == "max_stretch":
        columns += ["median_ratio", "p99_ratio"] + (["median_opt_ratio"] if doc.get("protocol") == "paper" else [])
    rows = doc["rows"]
    if objective == "makespan":
        machines = sorted({r["machines"] for r in rows})
        lines: dict[tuple, dict] = {}
        for r in rows:
            line = lines.setdefault((r["policy"], r["predictor"]), {"policy": r["policy"], "predictor": r["predictor"],
                                                                   "p_hat_source": r.get("p_hat_source")})
            line[f"m={r['machines']}"] = r["ratio"]
            line["leaks"] = _leak_cell(r)
        for line in lines.values():
            line["mean"] = float(np.mean([line[f"m={m}"] for m in machines]))
        lines = list(lines.values())
        columns = ["policy", "predictor", "p_hat_source"] + [f"m={m}" for m in machines] + ["mean", "leaks"]
        header = f"makespan ratio C_max / McNaughton bound ({doc['n_jobs']} jobs, batch{_load_text(doc)})"
        return header + "\n" + format_table(lines, columns)
    header = {
        "total_completion": f"total completion ΣC_j, ratio to SRPT ({doc['n_jobs']} jobs{_load_text(doc)})",
        "max_stretch": f"max stretch, ratio to S* ({doc['n_jobs']} jobs{_load_text(doc)})",
    }[objective]
    if doc.get("protocol") == "paper":
        header += " — PAPER PROTOCOL" + (", normaliser S_emp (max stretch of EDF at the bisected S*)" if objective == "max_stretch" else "")
    rows = [{**r, "leaks": _leak_cell(r)} for r in rows]
    return header + "\n" + format_table(rows, columns + ["leaks"])


def _leak_cell(row: dict) -> str:
    return ",".join(row.get("leaks") or []) or "–"


def _options(config, machines) -> dict:
    return {
        # the lists as the command line wrote them
        "objective": config.objective, "policies": option_text(config, "policies"), "n": config.n, "seed": config.seed,
        "noise": option_text(config, "noise"), "predictor": option_text(config, "predictor"),
        "prr_lambda": config.prr_lambda, "sample": config.sample, "controls": config.controls,
        "machines": machines, "jobs": config.jobs, "data": config.data, "train_jobs": config.train_jobs,
        "feature_columns": option_text(config, "feature_columns"),
        "protocol": config.protocol, "sample_seed": config.sample_seed,
    }


def _jsonable(reference: dict) -> dict:
    return {str(k): v for k, v in reference.items()}
