"""`benchmark run --task fairness`: ASTRAEA / LTGF and the baselines on a multi-tenant GPU cluster.

Jobs come from (first that applies):
- `--scenario venus`: the seeded Venus-like workload of `schedulers.cluster.scenarios` (100 × 8 GPUs,
  16 tenants with quotas, 11,304 jobs over two weeks, synthetic p̂); the paper's Venus figures
  are printed beside ours and stored in results.json under `paper`;
- `--scenario philly`: the paper's Philly setup on the shipped real trace (busiest two weeks,
  210 × 8 GPUs, tenant = VC, quota ∝ GPUs requested per VC); the derived quota table is printed
  and saved as quota.csv (quota_gpus recomputed for the cluster actually simulated, so
  `--nodes` may shrink it), and the paper's Philly claims are checked against our numbers;
- `--jobs FILE`: a jobs table (docs/data-formats.md; gpus, tenant, weight, predicted_duration are used), or a
  shipped trace by name (`philly`, `philly:<vc>`, `elasticflow`, `elasticflow:<cluster>`, `openb`);
  with `--predictor NAME` only its test part is scheduled, with p̂ learned on its train/validation
  part (or on `--train-jobs`; benchmark.tasks.traces);
- `--data DS`: the test split of an ATLAS dataset (duration = p_star, gpus = ⌈requested GPUs⌉ =
  ⌈Σ plan_gpu/100 · instances⌉ read back from `log_gpu`, at least 1 — jobs asking for more than the
  cluster are capped at its size and counted in results.json `dataset.gpus_capped`; tenant =
  `--tenant-column`, default `user`), p̂ from `--predictor NAME` (predictors.api.predict_test),
  `lgbm-meta` when neither --predictor nor --noise is given;
- nothing: the ATLAS default dataset, as `--data default`.

p̂ for the policies that need it (`needs_prediction`: `themis`, `astraea-p`, `allox`, `qssf`,
`easy-p`): the table's `predicted_duration`, or `--noise σ` (one value; p̂ = p·exp(σZ), seeded,
the same noise model as the scheduling task; labelled "noise (uses true sizes)"), or `--predictor`
with `--data` or `--jobs`. Without p̂ these policies are skipped when not asked for, and refused
(exit 2) when named in `--policies`.

Cluster: `--nodes` × `--gpus-per-node` (default 8 × 8 = 64 GPUs; the openb pod trace 4 × 8, which
contends enough for the policies to differ; the scenario's 100 × 8), or the
real node list of `--node-list openb|pai` (GPU nodes of the v2023 / PAI-2020 clusters).
Tenant quotas: `--tenant-weights FILE` (CSV `tenant,weight` or JSON {tenant: weight}; every tenant
of the jobs listed once, no other, weights from 1e-9 to 1e9) or equal weights. `--n N` schedules N consecutive jobs from a seeded
start (as the scheduling task).

Every run reports the offered load (Σ duration × GPUs / (submit span × cluster GPUs), with the span) and
the peak GPU demand if no job ever waited: jobs that outlast the submit span can give a load above 1 with
a peak below the cluster size, where little or nothing contends.

Output folder: results.json / results.csv (one row per policy: the fairness metrics), jobs/<policy>.parquet,
tenant_intervals/<policy>.parquet, allocations/<policy>.parquet (the executed allocations: job_id,
tenant, start, end, nodes, gpus, kind = run / cold-start), rho_cdf.png (CDF of ρ_job, the paper's main figure),
tenant_rho.png (ρ_tenant per window over time), jct_slowdown.png; each PNG with an SVG beside it.
May import atlas_data, predictors, schedulers and benchmark.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.progress import Progress, say
from benchmark.results import Run, default_output_dir, format_table, write_results
from benchmark.tasks.config import (DEFAULT_GPUS_PER_NODE, DEFAULT_NODES, EMBEDDED_TRACE_SHAPE, check_cluster_size,
                                    option_text)
from benchmark.tasks.inputs import (DEFAULT_PREDICTOR, choose_policies, learned_predictions,
                                    noise_predictions, note_unused_predictions, resolve_names)
from schedulers.sampling import sample_window
from schedulers.cluster.metrics import FLOOR, JOB_COLUMNS, METRICS, ideal_fairness, simulate_fairness
from schedulers.jobs import JobSet
from schedulers.cluster.base import LEASE_S  # noqa: F401 - benchmark.experiments.astraea_runs reads it here
from schedulers.cluster.settings import ClusterSettings
from schedulers.policy import PluginPolicyError, PolicyError, build_policy, get_policy, policy_names
from schedulers.cluster.scenarios import PAPER_PHILLY_CLAIMS, PAPER_VENUS, SCENARIOS, vc_quotas

# The cluster's default shape and bounds (DEFAULT_NODES, EMBEDDED_TRACE_SHAPE for the openb pod trace,
# MAX_NODES, MAX_GPUS) and check_cluster_size are benchmark.tasks.config's: options checked before any work.
# What one run may ask of the simulator (check_simulated_span): about a gigabyte of window records
# and minutes of lease renewals per policy at most; the shipped traces stay over ten times below.
MAX_TENANT_WINDOWS = 5_000_000
MAX_LEASE_RENEWALS = 20_000_000
POD_TRACE = "openb"
TABLE_COLUMNS = ["policy", "predictor", "p_hat_source", "sharing_loss_jobs", "sharing_loss_jobs_floor", "tenant_loss_intervals",
                 "tenant_loss_intervals_floor", "avg_jct", "avg_slowdown", "p99_slowdown",
                 "makespan", "preemptions", "migrations", "dropped_choices", "overhead_pct", "utilisation", "completed",
                 "sim_seconds"]


# ----- inputs ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PHat:
    """Where the scheduled jobs' p̂ comes from: the predictor's label (results' `predictor`) and its
    source (`p_hat_source`); both None when the jobs have no p̂."""

    label: str | None = None
    source: str | None = None


@dataclass(frozen=True)
class Loaded:
    """The jobs a fairness run reads, before sampling, with what their source brings."""

    config: object  # the FairnessConfig with its data source resolved (a dataset's path, its default predictor)
    table: pd.DataFrame  # every job read (the scenario, trace or dataset)
    card: dict  # results.json `dataset`
    p_hat: PHat  # of the table's own p̂ (a scenario's, a learned one, a `predicted_duration` column)
    tenant_weights: dict | None = None  # a scenario's {tenant: weight}
    shape: tuple[int, int] | None = None  # the source's default cluster (nodes, GPUs per node)


def _load(config) -> Loaded:
    """The jobs of the run's data source (a scenario, --jobs, --data or the default dataset)."""
    from benchmark.tasks.traces import COLUMN_SOURCE, LEARNED_SOURCE, NOISE_SOURCE, TRANSFER_SOURCE, check_trace_options

    sources = [s for s in ("scenario", "jobs", "data") if getattr(config, s)]
    if len(sources) > 1:
        raise InputError(f"give only one of --scenario, --jobs, --data (got {', '.join('--' + s for s in sources)})",
                         where="--" + sources[1])
    check_trace_options(config, needs_predictor=True)
    if config.predictor and config.scenario:
        raise InputError("--predictor needs --data or --jobs (a scenario brings its own p̂)", where="--predictor")
    if config.scenario:
        if config.tenant_column:
            raise InputError("--tenant-column does not apply to --scenario (a scenario defines its tenants)",
                             where="--tenant-column")
        sc = SCENARIOS[config.scenario](seed=config.seed)
        card = {"source": f"scenario {sc.name}", "description": sc.description, "seed": config.seed}
        if sc.info:
            card["snapshot"] = sc.info
        return Loaded(config, sc.jobs, card, PHat("scenario (p·exp(0.9 Z))", NOISE_SOURCE), sc.tenant_weights,
                      (sc.nodes, sc.gpus_per_node))
    if config.jobs:
        if config.tenant_column:
            raise InputError("--tenant-column applies to --data, not to --jobs", where="--tenant-column")
        shape = (EMBEDDED_TRACE_SHAPE if config.frame is None and config.jobs == POD_TRACE and not Path(config.jobs).exists()
                 else None)
        if config.predictor:
            table, card = _load_trace_learned(config)
            source = TRANSFER_SOURCE if config.train_jobs else LEARNED_SOURCE
            return Loaded(config, table, card, PHat(option_text(config, "predictor"), source), shape=shape)
        from benchmark.tasks.inputs import read_jobs_or_trace

        table, card = read_jobs_or_trace(config.jobs, columns=config.columns, quiet=config.quiet, frame=config.frame)
        own = "predicted_duration" in table.columns
        return Loaded(config, table, card, PHat("column", COLUMN_SOURCE) if own else PHat(), shape=shape)
    from atlas_data.named import resolve_dataset

    # one default data source for every task: the ATLAS default dataset
    config = replace(config, data=str(resolve_dataset(config.data or "default", quiet=config.quiet)))
    if not config.predictor and not config.noise:
        config = replace(config, predictor=(DEFAULT_PREDICTOR,))
    table, card, label = _load_dataset(config)
    return Loaded(config, table, card, PHat(label, LEARNED_SOURCE) if label else PHat())


def _load_trace_learned(config) -> tuple[pd.DataFrame, dict]:
    """The --jobs trace's test part with p̂ learned on its train/validation part (or on --train-jobs)."""
    from benchmark.tasks.traces import trace_predictions, trace_split

    methods = list(config.predictor)
    if len(methods) != 1:
        raise InputError("the fairness task takes one predictor", where="--predictor")
    trace = trace_split(config.jobs, feature_columns=config.feature_columns, train_spec=config.train_jobs, seed=config.seed,
                        columns=config.columns, train_columns=config.train_columns,
                        quiet=config.quiet, frame=config.frame)
    note_unused_predictions(trace.own_predictions, f"--predictor {option_text(config, 'predictor')}", config.quiet)
    jobs = trace.test_jobs.copy()
    jobs["predicted_duration"] = trace_predictions(trace, methods, jobs["job_id"], seed=config.seed, quiet=config.quiet)[methods[0]]
    return jobs, {**trace.card, "scheduled": "test part (its real arrivals)"}


def _load_dataset(config):
    from atlas_data.build import load_dataset, test_jobs

    frame, card = load_dataset(config.data)
    column = config.tenant_column or "user"
    if column not in frame.columns:
        raise InputError(f"dataset has no column '{column}' for tenants", path=str(config.data), where="--tenant-column")
    jobs = test_jobs(frame, column)
    label = None
    if config.predictor:
        methods = list(config.predictor)
        if len(methods) != 1:
            raise InputError("the fairness task takes one predictor", where="--predictor")
        jobs["predicted_duration"] = learned_predictions(config.data, methods[0], jobs["job_id"], seed=config.seed, quiet=config.quiet)
        label = methods[0]
    from atlas_data.jobs_table import validate_jobs

    jobs = validate_jobs(jobs, str(config.data))
    from benchmark.tasks.scheduling import dataset_name

    card = {"source": card.get("source"), "path": str(config.data), "fingerprint": card.get("fingerprint"),
            "tenant_column": column, **dataset_name(config.data)}
    return jobs, card, label


#: bounds of a --tenant-weights weight: quotas Q_k = M·W_k/ΣW stay normal floats (no overflow to inf, no
#: underflow to 0 or to subnormal numbers) whatever the number of tenants, and a tenant's quota is at
#: least 10⁻¹⁸ of another's (docs/fairness.md#ltgf-accounting)
WEIGHT_MIN, WEIGHT_MAX = 1e-9, 1e9


def _tenant_weights(config, names, scenario_weights, known=None) -> np.ndarray | None:
    """Weights of the tenants `names` (of the scheduled jobs) from --tenant-weights, the scenario, or None.

    `known` are the tenants of the whole jobs table: a file naming any other tenant is refused (a typo
    would otherwise leave the real tenant unweighted or be dropped silently).
    """
    mapping = scenario_weights
    source = None
    if config.tenant_weights:
        source = str(config.tenant_weights)
        mapping = _read_tenant_weights(Path(config.tenant_weights))
        known = sorted(set(names) | set(known if known is not None else ()))
        unknown = [t for t in mapping if t not in set(known)]
        if unknown:
            listed = ", ".join(known[:20]) + (f", … ({len(known)} in all)" if len(known) > 20 else "")
            raise InputError(f"tenant '{unknown[0]}' is not a tenant of the jobs (they are: {listed})",
                             path=source, where="--tenant-weights")
    if mapping is None:
        return None
    weights = []
    for name in names:
        if name not in mapping:
            raise InputError(f"tenant '{name}' has no weight", path=source, where="--tenant-weights")
        w = float(mapping[name])
        if not (WEIGHT_MIN <= w <= WEIGHT_MAX):
            raise InputError(f"tenant '{name}' weight must be a number from {WEIGHT_MIN:g} to {WEIGHT_MAX:g}, got "
                             f"{mapping[name]!r}", path=source, where="--tenant-weights")
        weights.append(w)
    return np.asarray(weights)


def _read_tenant_weights(path: Path) -> dict[str, float]:
    """{tenant: weight} of a JSON object or a CSV file with exactly the columns tenant,weight.

    A tenant given twice, a weight that is not a number (null, true, text) or any other column is an
    InputError naming the file: nothing the user wrote is dropped or overridden silently.
    """
    label = str(path)

    def fail(problem: str):
        raise InputError(problem, path=label, where="--tenant-weights")

    if not path.is_file():
        fail("file not found")
    mapping: dict[str, float] = {}

    def add(tenant: str, value, place: str) -> None:
        if tenant in mapping:
            fail(f"tenant '{tenant}' is given twice ({place})")
        number = None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            number = float(value)
        elif isinstance(value, str) and place != "JSON":  # a CSV cell is text; a JSON weight is a number
            try:
                number = float(value.strip())
            except ValueError:
                pass
        if number is None or not math.isfinite(number):
            fail(f"tenant '{tenant}' weight must be a finite number, got {value!r} ({place})")
        mapping[tenant] = number

    if path.suffix.lower() == ".json":
        def pairs(items):
            seen = [k for k, _ in items]
            for key in seen:
                if seen.count(key) > 1:
                    fail(f"key '{key}' is given twice")
            return dict(items)

        try:
            doc = json.loads(path.read_text(encoding="utf-8"), object_pairs_hook=pairs)
        except (ValueError, UnicodeDecodeError) as exc:
            fail(f"cannot read tenant weights: {exc}")
        if not isinstance(doc, dict) or not doc:
            fail(f"must be a JSON object {{tenant: weight, ...}}, got {type(doc).__name__ if doc != {} else 'an empty object'}")
        for tenant, value in doc.items():
            add(str(tenant), value, "JSON")
        return mapping
    from atlas_data.jobs_table import read_csv_frame

    # tenants and weights as written ("NA" is a tenant name), a repeated column refused
    frame = read_csv_frame(path, string_columns=("tenant", "weight"), label=label)
    columns = [str(c).strip() for c in frame.columns]
    if not {"tenant", "weight"} <= set(columns):
        fail("needs columns tenant,weight")
    if len(columns) != 2:
        fail(f"has columns other than tenant,weight: {', '.join(c for c in columns if c not in ('tenant', 'weight'))}")
    frame.columns = columns
    for row, (tenant, weight) in enumerate(zip(frame["tenant"], frame["weight"]), start=2):
        tenant, weight = ("" if pd.isna(v) else str(v) for v in (tenant, weight))
        if tenant == "" and weight == "":
            continue  # a blank line
        add(tenant, weight, f"line {row}")
    if not mapping:
        fail("lists no tenant")
    return mapping


def _predictions(config, jobs: JobSet, p_hat: PHat) -> tuple[JobSet, PHat]:
    """The jobs with the run's p̂ and where it comes from: --noise σ replaces any other p̂ (`p_hat`, the
    source's own)."""
    from benchmark.tasks.traces import COLUMN_SOURCE, NOISE_SOURCE

    sigmas = config.noise or ()  # one σ, without --predictor (FairnessConfig.validate)
    if sigmas:
        note_unused_predictions(p_hat.source == COLUMN_SOURCE, f"--noise {option_text(config, 'noise')}", config.quiet)
        (name, values), = noise_predictions(jobs.size, list(sigmas), config.seed).items()
        return jobs.with_predictions(values), PHat(name, NOISE_SOURCE)
    return jobs, (p_hat if jobs.predicted is not None else PHat())


def check_simulated_span(config, jobs: JobSet, total_gpus: int) -> None:
    """Refuse (exit 2, before any simulation) a run whose simulated span would take hours or all memory.

    The simulator keeps one record per tenant per fairness window up to the makespan, and renews
    every running job's lease each `--lease` seconds; both grow with the simulated span, which a
    work-conserving cluster keeps near submit span + GPU·s / GPUs + the longest job.
    """
    from schedulers.cluster.metrics import span_estimate

    if not jobs.n:
        return
    size = jobs.size.astype(np.float64)
    horizon, windows = span_estimate(jobs.submit_time, size, jobs.gpus, len(jobs.tenant_names), total_gpus,
                                     config.fair_window)
    if windows > MAX_TENANT_WINDOWS:
        days = horizon / 86400
        raise InputError(f"the simulated span (about {f'{days:,.0f}' if days < 1e6 else f'{days:.3g}'} days for "
                         f"{len(jobs.tenant_names)} tenant(s)) "
                         f"needs about {windows:.3g} fairness windows of {config.fair_window:g} s, more than "
                         f"{MAX_TENANT_WINDOWS:,}: use a longer --fair-window, or fewer or shorter jobs",
                         where="--fair-window")
    renewals = float(size.sum()) / config.lease
    if renewals > MAX_LEASE_RENEWALS:
        raise InputError(f"the jobs hold GPUs for {float(size.sum()):.3g} s in all, about {renewals:.3g} leases of "
                         f"{config.lease:g} s, more than {MAX_LEASE_RENEWALS:,}: use a longer --lease, or fewer or "
                         "shorter jobs", where="--lease")


def _capacities(config, default_shape) -> tuple[list[int], str]:
    if config.node_list != "none":
        if config.nodes is not None or config.gpus_per_node is not None:
            raise InputError("--node-list replaces --nodes/--gpus-per-node; give one or the other", where="--node-list")
        from schedulers.cluster.nodes import node_capacities

        caps = node_capacities(config.node_list).tolist()
        return caps, f"{config.node_list} node list ({len(caps)} nodes, {sum(caps)} GPUs)"
    nodes, gpn = default_shape or (DEFAULT_NODES, DEFAULT_GPUS_PER_NODE)
    nodes = config.nodes if config.nodes is not None else nodes
    gpn = config.gpus_per_node if config.gpus_per_node is not None else gpn
    check_cluster_size(nodes, gpn)
    return [gpn] * nodes, f"{nodes} x {gpn} GPUs"


# ----- the task ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Prepared:
    """A fairness run's inputs, checked: the jobs to schedule (with p̂ if any), the cluster, the quotas."""

    config: object  # the FairnessConfig with its data source resolved (a dataset's path, its default predictor)
    table: pd.DataFrame  # every job read (the scenario, trace or dataset), before sampling
    card: dict
    window: pd.DataFrame  # the scheduled jobs (--n / --sample)
    jobs: JobSet
    p_hat: PHat
    cluster_text: str  # "8 x 8 GPUs", "openb node list (…)"
    # what the simulator runs every policy on (cluster_settings): the GPUs per node, the tenant weights
    # in jobs.tenant_names order (None: equal), the lease and ledger options
    cluster: ClusterSettings


@dataclass(frozen=True)
class Simulated:
    """Every policy's simulation of a prepared run and its results row (metrics beside the ideal
    schedule's floors), in the order the policies ran."""

    runs: dict  # {policy: schedulers.cluster.metrics.FairnessRun}
    rows: list[dict]


def execute(config, timings=None):
    """Simulate and write the run of a validated FairnessConfig (benchmark.tasks.config): a Run whose
    `runs` are the simulations ({policy: FairnessRun}). `timings` is the tasks' common signature: the
    fairness task records none."""
    if config.output:
        check_output_folder(config.output, "run")  # a bad --output fails before any computation
    prep = prepare(config)  # load, predict, size the cluster
    policies = _policies(prep)
    out = Path(config.output) if config.output else default_output_dir("fairness")
    with output_folder(out, "run") as folder:  # renamed to `out` once every file is written
        simulated = simulate(prep, policies)
        doc = _write(folder, prep, policies, simulated)
    return Run(out, doc, replace(prep.config, output=str(out)), simulated.runs)


def prepare(config) -> Prepared:
    """Check the options, read the jobs, draw p̂ and size the cluster: everything before the first
    simulation (also `benchmark robustness`, which runs one scenario under many p̂). The options
    themselves were checked by FairnessConfig.validate (lease, cluster bounds, noise levels)."""
    # every predictor and policy name (a plugin's imported) before a job is read or a model fitted
    resolve_names(predictors=config.predictor, policies=config.policies, kind="cluster", one_predictor=True)
    loaded = _load(config)
    config, table, card = loaded.config, loaded.table, loaded.card
    window = sample_window(table, config.n, config.seed, config.sample)
    jobs, p_hat = _predictions(config, JobSet.from_frame(window), loaded.p_hat)
    capacities, cluster_text = _capacities(config, loaded.shape)
    if config.data and int(jobs.gpus.max()) > sum(capacities):
        capped = int((jobs.gpus > sum(capacities)).sum())
        card = {**card, "gpus_capped": capped}
        say(f"{capped} dataset jobs ask for more than {sum(capacities)} GPUs: capped at the cluster size", config.quiet)
        jobs = replace(jobs, gpus=np.minimum(jobs.gpus, sum(capacities)))
    if int(jobs.gpus.max()) > sum(capacities):
        too_big = np.flatnonzero(jobs.gpus > sum(capacities))
        first = int(too_big[np.argmax(jobs.gpus[too_big])])
        more = f"; {len(too_big)} jobs ask for more than the cluster" if len(too_big) > 1 else ""
        raise InputError(f"asks for {int(jobs.gpus[first])} GPUs, the cluster has {sum(capacities)} (--nodes × "
                         f"--gpus-per-node, or --node-list){more}", path=str(config.jobs) if config.jobs else None,
                         where=f"job '{jobs.job_id[first]}'")
    check_simulated_span(config, jobs, sum(capacities))
    known = table["tenant"].astype(str).unique().tolist() if "tenant" in table.columns else None
    weights = _tenant_weights(config, jobs.tenant_names, loaded.tenant_weights, known)
    return Prepared(config, table, card, window, jobs, p_hat, cluster_text, cluster_settings(config, capacities, weights))


def _policies(prep: Prepared) -> list[str]:
    """The policies of the run: --policies (a predictive one refused without p̂) or every cluster policy
    that can run."""
    source = prep.card.get("path") or prep.card.get("source")
    return choose_policies(prep.config.policies, "cluster", policy_names("cluster"),
                           have_predictions=prep.jobs.predicted is not None, source=str(source), task="fairness",
                           quiet=prep.config.quiet)


def cluster_settings(config, capacities: list[int], weights) -> ClusterSettings:
    """The cluster the simulator runs every policy of a run on: its nodes, lease, tick, cold start, the
    tenants' quotas and the ledger options."""
    return ClusterSettings.of(node_capacities=capacities, lease_s=config.lease, interval_s=config.interval,
                              cold_start_s=config.cold_start, tenant_weights=weights, fair_share=config.fair_share,
                              fair_window_s=config.fair_window, rho_from=config.job_rho_from)


def cluster_policy(name: str):
    """The cluster policy `name` (with the settings written in it, `astraea-p(band=0.5)`): its decision
    only; the cluster is the simulator's (`cluster_settings`)."""
    return build_policy(get_policy(name, "cluster"))


def simulate(prep: Prepared, policies: list[str]) -> Simulated:
    """Simulate every policy on the prepared jobs and cluster; each row carries the ideal schedule's floors
    (the same for every policy: same jobs, same ledger options)."""
    config, jobs = prep.config, prep.jobs
    runs, rows = {}, []
    floors = None
    with Progress(f"fairness on {jobs.n} jobs, {prep.cluster_text}", total=len(policies), quiet=config.quiet) as progress:
        for name in policies:
            policy = cluster_policy(name)
            try:
                run = simulate_fairness(jobs, policy, tenant_loss_share=config.tenant_loss_share, notice=progress.note,
                                        cluster=prep.cluster)
            except PluginPolicyError:
                raise  # its line names the plugin already
            except PolicyError as exc:
                raise InputError(str(exc), where=f"policy {name}") from None
            runs[name] = run
            reads = get_policy(name, "cluster").needs_prediction
            row = {"policy": name, "predictor": prep.p_hat.label if reads else None,
                   "p_hat_source": prep.p_hat.source if reads else None,
                   "value": run.metrics["sharing_loss_jobs"], "reference": None, "ratio": None}
            row.update(run.metrics)
            if floors is None:
                floors = ideal_fairness(jobs, tenant_loss_share=config.tenant_loss_share, cluster=prep.cluster)
            row.update({f"{metric}{FLOOR}": value for metric, value in floors.items()})
            rows.append(row)
            progress.update()
    return Simulated(runs, rows)


def _write(out: Path, prep: Prepared, policies: list[str], simulated: Simulated) -> dict:
    """The output files of a simulated run in the (temporary) folder `out`: per-policy tables,
    results.json / results.csv and the figures; returns results.json's document."""
    for name, run in simulated.runs.items():
        for table, frame in (("jobs", run.jobs), ("tenant_intervals", run.tenant_intervals),
                             ("allocations", run.allocations)):
            (out / table).mkdir(parents=True, exist_ok=True)
            frame.to_parquet(out / table / f"{name}.parquet", index=False)
    config, jobs, table, gpus = prep.config, prep.jobs, prep.table, prep.cluster.total_gpus
    extra = {"options": _recorded_options(prep, policies), "value": "sharing_loss_jobs",
             # how the cluster simulator ran each policy: "compiled" or "Python" (same runs)
             "cluster_loops": {name: run.loop for name, run in simulated.runs.items()}}
    if config.scenario == "venus":
        extra["paper"] = PAPER_VENUS
    if config.scenario == "philly":
        # the weights are the whole snapshot's requested GPUs; quotas split the simulated cluster
        # among the VCs present in the run (all of them unless --n samples a window)
        quota = vc_quotas(table[table["tenant"].isin(set(jobs.tenant_names))], gpus)
        quota.to_csv(out / "quota.csv", index=False)
        extra["quota"] = quota.to_dict(orient="records")
        extra["paper_claims"] = philly_claims(simulated.rows)
    extra["offered_load"] = offered_load(prep.window, gpus)
    from benchmark.tasks.inputs import with_fingerprint

    dataset = {**with_fingerprint(prep.card, table), "n_total": int(len(table)),
               "sample": config.sample if jobs.n < len(table) else "all"}
    doc = write_results(out, task="fairness", objective=None, n_jobs=jobs.n, dataset=dataset, rows=simulated.rows,
                        extra=extra)
    _plots(out, simulated.runs, title=f"{jobs.n} jobs, {prep.cluster_text}, {config.fair_share}")
    return doc


def _recorded_options(prep: Prepared, policies: list[str]) -> dict:
    """results.json `options`: the cluster, the ledger options and the run's inputs as they were run."""
    config, names = prep.config, prep.jobs.tenant_names
    weights = prep.cluster.tenant_weights
    weights = weights.tolist() if weights is not None else [1.0] * len(names)
    return {
        "cluster": prep.cluster_text, "gpus": prep.cluster.total_gpus, "lease_s": config.lease,
        "interval_s": config.interval, "cold_start_s": config.cold_start, "fair_share": config.fair_share,
        "fair_window_s": config.fair_window, "tenant_loss_share": config.tenant_loss_share,
        "job_rho_from": config.job_rho_from, "tenant_weights": dict(zip(names, weights)),
        "policies": policies, "n": config.n, "seed": config.seed, "predictor": prep.p_hat.label,
        "scenario": config.scenario, "p_hat_source": prep.p_hat.source, "train_jobs": config.train_jobs,
        "feature_columns": option_text(config, "feature_columns"),
    }


def run(config, timings=None):
    """`benchmark run --task fairness`: execute, then print the report (unless quiet)."""
    result = execute(config, timings)
    if not config.quiet:
        print(render(result.doc))
        from atlas_data.outputs import final_place

        print(f"\nresults: {final_place(result.output)}")  # inside the demo's temporary folder: its final name
    return result


def offered_load(window: pd.DataFrame, total_gpus: int) -> dict:
    """GPU·s the jobs ask for / GPU·s the cluster offers over the submit span, and the peak GPU
    demand if every job started at its submit time (no contention at all below the cluster size)."""
    submit = window["submit_time"].to_numpy(np.float64)
    gpus = window["gpus"].to_numpy(np.float64)
    size = window["duration"].to_numpy(np.float64)
    span = float(submit.max() - submit.min()) if len(window) > 1 else 0.0
    t = np.concatenate([submit, submit + size])
    d = np.concatenate([gpus, -gpus])
    order = np.lexsort((d, t))  # at equal times releases (negative) first
    peak = float(np.cumsum(d[order]).max()) if len(window) else 0.0
    return {"gpu_seconds": float((gpus * size).sum()), "span_s": span,
            "load": float((gpus * size).sum() / (total_gpus * span)) if span > 0 else None,
            "peak_demand_gpus": peak, "gpus": int(total_gpus)}


def philly_claims(rows: list[dict]) -> list[dict]:
    """The paper's two Philly claims, each with our numbers and whether it holds here."""
    by = {r["policy"]: r for r in rows}
    out = []

    def ratio(a, b, metric):
        if a not in by or b not in by:
            return None
        x, y = by[a][metric], by[b][metric]
        return None if x is None or y is None else (math.inf if y == 0 and x > 0 else (1.0 if x == y == 0 else x / y))

    themis, yarn = ratio("themis", "astraea", "sharing_loss_jobs"), ratio("yarn-cs", "astraea", "sharing_loss_jobs")
    if themis is not None or yarn is not None:
        holds = all(r is not None and r > v for r, v in ((themis, 2.8), (yarn, 10.3)))
        out.append({"claim": PAPER_PHILLY_CLAIMS[0], "ours": f"Themis / ASTRAEA = {_x(themis)}, YARN-CS / ASTRAEA = {_x(yarn)}",
                    "holds": holds})
    others = [p for p in ("allox", "gandiva-fair", "tiresias-l", "yarn-cs") if p in by]
    if "astraea" in by and others:
        mine = by["astraea"]["tenant_loss_intervals"]
        worse = {p: by[p]["tenant_loss_intervals"] for p in others}
        holds = mine is not None and all(v is not None and mine < v for v in worse.values())
        text = ", ".join(f"{p} {_pct(v)}" for p, v in worse.items())
        out.append({"claim": PAPER_PHILLY_CLAIMS[1], "ours": f"astraea {_pct(mine)}; {text}", "holds": holds})
    return out


def _x(v):
    return "n/a" if v is None else ("inf" if v == math.inf else f"{v:.2f}x")


def load_line(load: dict) -> str:
    """The offered load (`offered_load`) as the run prints it: the figure with what it divides, and the
    peak demand beside it — a load above 1 says the GPU·s asked exceed the cluster's over the submit
    span, not that jobs ever wait (jobs that outlast the span can give both a load above 1 and a peak
    below the cluster)."""
    text = (f"offered load {load['load']:.2f} = Σ duration × GPUs / (submit span × cluster GPUs) = "
            f"{load['gpu_seconds']:,.0f} GPU·s / ({load['span_s'] / 3600:,.2f} h × {load['gpus']} GPUs); "
            f"peak demand if nobody waited: {load['peak_demand_gpus']:.0f} of {load['gpus']} GPUs")
    if load["peak_demand_gpus"] <= load["gpus"]:
        text += " (never more asked at once than the cluster has)"
    return text


def render(doc: dict) -> str:
    from benchmark.tasks.traces import describe_data

    opts = doc["options"]
    head = (f"fairness: {doc['n_jobs']} jobs on {opts['cluster']}, lease {opts['lease_s']:g} s, interval "
            f"{opts['interval_s']:g} s, cold start {opts['cold_start_s']:g} s, fair share {opts['fair_share']}, "
            f"job ρ from {opts['job_rho_from']}, tenant-loss windows {opts['fair_window_s']:g} s on "
            f"{opts.get('tenant_loss_share', 'eq8')}")
    load = doc.get("offered_load") or {}
    if load.get("load") is not None:
        head += "\n" + load_line(load)
    snap = (doc.get("dataset") or {}).get("snapshot")
    if snap:
        head += (f"\nsnapshot: {snap['start']} to {snap['end']} (exclusive), {snap['jobs']} jobs, {snap['tenants']} VCs "
                 f"— {snap['rule']}; the paper's snapshot: {snap['paper_jobs']} jobs, {snap['paper_vcs']} VCs")
    text = head + "\n" + format_table(doc["rows"], TABLE_COLUMNS) + f"\ndata: {describe_data(doc.get('dataset'))}"
    if "quota" in doc:
        text += "\n\nVC quotas (∝ GPUs requested by the VC's jobs; saved as quota.csv)\n" + format_table(
            doc["quota"], ["tenant", "jobs", "requested_gpus", "share", "quota_gpus"])
    if "paper" in doc:
        text += "\n\n" + paper_table(doc["rows"], doc["paper"])
    if "paper_claims" in doc:
        text += "\n\nPhilly: the paper gives no percentages, only claims — checked on our run:"
        for c in doc["paper_claims"]:
            text += f"\n- {c['claim']}\n  ours: {c['ours']} -> {'holds' if c['holds'] else 'does not hold'}"
    return text


def paper_table(rows: list[dict], paper: dict) -> str:
    """Ours beside the paper's Venus figures."""
    lines = []
    ours = {r["policy"]: r for r in rows}
    for name in list(ours) + [p for p in paper if p not in ours]:
        fig = paper.get(name, {})
        r = ours.get(name, {})
        lines.append({
            "policy": name,
            "sharing_loss ours": _pct(r.get("sharing_loss_jobs")), "paper": _pct(fig.get("sharing_loss_jobs")),
            "tenant_loss ours": _pct(r.get("tenant_loss_intervals")), "paper ": _pct(fig.get("tenant_loss_intervals")),
            "overhead% ours": _num(r.get("overhead_pct")), "paper  ": _num(fig.get("overhead_pct")),
        })
    cols = list(lines[0]) if lines else []
    return "Venus: ours vs the paper's Venus figures\n" + format_table(lines, cols)


def _pct(v):
    return None if v is None else f"{100 * v:.1f}%"


def _num(v):
    return None if v is None else f"{v:.2f}"


# ----- figures (derived from the per-policy tables) ----------------------------------------------------
def _plots(out: Path, runs: dict, *, title: str) -> None:
    """rho_cdf.png, tenant_rho.png and jct_slowdown.png (each with an SVG beside it)."""
    from benchmark.plots import save_figure

    if not runs:
        return
    predictive = {name for name in runs if get_policy(name, "cluster").needs_prediction}
    save_figure(rho_cdf_figure(runs, predictive, title=title), out / "rho_cdf.png", dpi=110)
    save_figure(tenant_rho_figure(runs, title=title), out / "tenant_rho.png", dpi=100)
    save_figure(jct_slowdown_figure(runs, predictive, title=title), out / "jct_slowdown.png", dpi=110)


def _styles(runs: dict, predictive: set, *, colour_per_policy: bool = False):
    from benchmark.plots import series_styles

    # a fairness run has one p̂ at most: bars of predictive policies share its colour; lines of
    # predictive policies get one colour each (one p̂, so colour is free to tell the policies apart)
    return series_styles((name, (name if colour_per_policy else "p̂") if name in predictive else None) for name in runs)


def rho_cdf_figure(runs: dict, predictive: set, *, title: str):
    """CDF of ρ_job per policy (blind dashed grey, predictive solid), legend right of the axes."""
    from benchmark.plots import outside_legend, subplots

    styles = _styles(runs, predictive, colour_per_policy=True)
    fig, ax = subplots(figsize=(8.5, 4.5))
    for (name, run), style in zip(runs.items(), styles.values()):
        rho = np.sort(np.clip(run.jobs["rho"].to_numpy(np.float64), 0, 10))
        line = {**style.line(), "label": name + ("" if name in predictive else " (blind)")}
        ax.step(rho, np.arange(1, len(rho) + 1) / len(rho), where="post", markevery=max(1, len(rho) // 6),
                markersize=4, **line)
    ax.axvline(0.95, color="#d62728", ls=":", lw=1.0, label="ρ = 0.95")
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlabel("ρ_job (attained / fair GPU·s), clipped at 10")
    ax.set_ylabel("CDF of jobs")
    ax.set_title(f"ρ_job CDF — {title}", fontsize=9)
    outside_legend(ax, title="policy")
    return fig


def tenant_rho_figure(runs: dict, *, title: str):
    """ρ_tenant per window over time, one panel per policy, one colour per tenant in every panel."""
    from benchmark.plots import PREDICTOR_COLOURS, figure_legend, subplots

    n = len(runs)
    cols = min(3, n)
    rows_ = int(math.ceil(n / cols))
    tenants = sorted({str(t) for run in runs.values() for t in run.tenant_intervals["tenant"].unique()})
    colour = {t: PREDICTOR_COLOURS[k % len(PREDICTOR_COLOURS)] for k, t in enumerate(tenants)}
    fig, axes = subplots(rows_, cols, figsize=(4.2 * cols + 1.8, 3.0 * rows_ + 0.4), squeeze=False, sharey=True)
    handles = {}
    for ax, (name, run) in zip(axes.ravel(), runs.items()):
        for tenant, part in run.tenant_intervals.groupby("tenant", sort=True):
            (line,) = ax.plot(part["start_s"].to_numpy() / 86400.0, np.clip(part["rho"].to_numpy(np.float64), 0, 3),
                              lw=0.8, color=colour[str(tenant)], label=str(tenant))
            handles.setdefault(str(tenant), line)
        ax.axhline(1.0, color="k", ls="--", lw=0.6)
        ax.set_title(name, fontsize=8)
        ax.set_xlabel("day", fontsize=7)
        ax.tick_params(labelsize=7)
    for ax in axes[:, 0]:  # the panels share y: the label on the first column, inside the figure
        ax.set_ylabel("ρ_tenant per window, ≤ 3", fontsize=8)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    if handles:
        names = sorted(handles)
        figure_legend(fig, [handles[t] for t in names], names, title="tenant")
    fig.suptitle(f"ρ_tenant over time — {title}", fontsize=9)
    return fig


def jct_slowdown_figure(runs: dict, predictive: set, *, title: str):
    """Average JCT and average slowdown per policy; predictive bars coloured, blind ones grey and hatched."""
    from benchmark.plots import scheme_handles, figure_legend, subplots

    styles = _styles(runs, predictive)
    names = list(runs)
    n = len(names)
    jct = [runs[p].metrics["avg_jct"] / 3600.0 for p in names]
    slow = [runs[p].metrics["avg_slowdown"] for p in names]
    fig, (a1, a2) = subplots(1, 2, figsize=(11.5, 4.2))
    for ax, values in ((a1, jct), (a2, slow)):
        for i, style in enumerate(styles.values()):
            ax.bar(i, values[i], **style.bar())
        ax.set_xticks(range(n), names, rotation=60, ha="right", fontsize=8)
    a1.set_ylabel("average JCT (h)")
    a2.set_ylabel("average slowdown")
    a2.set_yscale("log")
    handles, labels = scheme_handles(styles)
    figure_legend(fig, handles, [label.replace("p̂: p̂", "uses p̂") for label in labels])
    fig.suptitle(title, fontsize=9)
    return fig


__all__ = ["run", "execute", "prepare", "Prepared", "PHat", "Simulated", "simulate", "cluster_policy", "render",
           "paper_table", "JOB_COLUMNS", "METRICS"]
