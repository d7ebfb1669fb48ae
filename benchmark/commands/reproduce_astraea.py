"""`benchmark reproduce astraea`: every figure of the ASTRAEA paper beside ours, in one command.

Every simulation is a cell of a `benchmark sweep` config that this command writes to OUT/sweeps/,
so each part can be re-run alone, on Dask too (`benchmark sweep OUT/sweeps/lease.yaml --executor
dask`):

- `venus.yaml`: `run --task fairness --scenario venus`, ASTRAEA and the paper's baselines, 900 s lease;
- `philly.yaml`: `--scenario philly`, the same policies, one cell per `--philly-nodes` size (default
  the paper's 210 × 8 and a contended 64 × 8, because the published Philly list never fills 210 × 8);
- `lease.yaml`: `astraea` on the Venus-like scenario, one cell per `--leases` value;
- `nodes.yaml`: `astraea` and `tiresias-l` on the Venus-like scenario, one cell per `--sizes` value;
- `variants.yaml`: the Venus-like main run again under the other metric definitions, those of the
  paper's simulator (ρ_job from the submit time, tenant-loss windows on the quota, eq16; the
  defaults are the first tick and the demand-aware eq8 share), to show how much of each difference
  is the definition rather than the schedule;
- `ablations.yaml`, `ablation-noise.yaml`, `ablation-load.yaml`, `ablation-draws.yaml`: the runs
  behind "Why the ranking differs" (YARN-CS's maximum capacity, a heavier load, Themis's p̂ and
  settings, ASTRAEA given p̂, two more draws of the scenario; `ablation_table`).

All cells run together on one executor (local worker processes by default). The table puts each
figure of the paper beside ours, with a verdict and one line saying why they differ; every verdict
and every line is computed from the runs (the paper's side is the only constant). Writes
OUT/reproduce-astraea.md, .png, .json, OUT/sweep.parquet (the cells' tidy rows), the cells'
ordinary output folders under OUT/cells/, and with `--readme FILE` the block between
`<!-- reproduce-astraea:start -->` and `<!-- reproduce-astraea:end -->` (`readme_block`). See
docs/reproduce-astraea.md. May import benchmark.*, and through it atlas_data and schedulers.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, command_line, output_folder
from benchmark.options import MAX_SECONDS, MAX_SEED, job_count, read_float, workers
from benchmark.progress import Progress, say
from benchmark.results import check_readme_block, replace_readme_block, write_text_atomic
# Cluster-side names, imported in this one place only (the simulator's layout may move under them).
from benchmark.tasks.fairness import LEASE_S, philly_claims
from schedulers.cluster.scenarios import (PAPER_PHILLY_CLAIMS, PAPER_VENUS, PHILLY_NODES, PREDICTION_SIGMA, SCENARIOS,
                                         VENUS_NODES)
from benchmark.options import seed as seed_type

START, END = "<!-- reproduce-astraea:start -->", "<!-- reproduce-astraea:end -->"
PAPER = "ASTRAEA: A Fair Deep Learning Scheduler for Multi-Tenant GPU Clusters (IEEE TPDS 2022)"

# The paper's claims that have no percentage (its Venus figures are PAPER_VENUS, its Philly claims
# PAPER_PHILLY_CLAIMS). The lease of its overhead figure is our default lease (LEASE_S, 900 s).
PAPER_BEST_LEASE_S = 1200.0
PAPER_CLAIMS = {
    "jct": "ASTRAEA's average JCT is below every baseline's",
    "lease_best": "average JCT is lowest near a 1,200 s lease",
    "lease_900": "a 900 s lease is close to 1,200 s in average JCT, with fewer sharing-loss jobs",
    "size": "ASTRAEA beats Tiresias-L in both average JCT and sharing-loss jobs at every cluster size",
}
# the paper's baselines: the policies it reports Venus figures for, other than ASTRAEA
BASELINES = tuple(p for p in PAPER_VENUS if p != "astraea")
# the main runs: ASTRAEA and the paper's baselines (our other cluster policies have no paper figure;
# leaving them out keeps the command within 10 minutes on 2 shared cores)
MAIN_POLICIES = ("astraea", *BASELINES)
SIZE_POLICIES = ("astraea", "tiresias-l")
LEASE_POLICIES = ("astraea",)

# Verdict rules (docs/reproduce-astraea.md): a figure agrees within ±25 % of the paper's value; a
# lease is "near" the best when its JCT is within 1 % of the curve's minimum; "close in JCT" is 5 %.
AGREE_REL = 0.25
NEAR_REL = 0.01
CLOSE_REL = 0.05
AGREE_TEXT = f"within ±{100 * AGREE_REL:.0f} % of the paper"
SHORT_S = 600.0  # "short job": under 10 minutes, the first band of the Venus run-time CDF
SHARING_LOSS_RHO = 0.95

# the other metric definitions (`benchmark run --task fairness` options; the defaults are tick and eq8,
# docs/fairness.md "Why these defaults"), and how the rows name each definition
VARIANT_OPTIONS = {"job-rho-from": "submit", "tenant-loss-share": "eq16"}
DEFINITIONS = {"tick": "ρ_job from the first tick", "submit": "ρ_job from the submit time",
               "eq8": "demand-aware windows", "eq16": "quota windows"}

DEFAULT_LEASES = "300,600,900,1200,1800"
DEFAULT_SIZES = ",".join(str(round(VENUS_NODES * f)) for f in (0.6, 0.8, 1.0, 1.2, 1.4))
DEFAULT_PHILLY_NODES = f"{PHILLY_NODES},64"

# how the policies decide, for the why-lines (docs/policies.md)
MECHANISM = {
    "yarn-cs": "YARN-CS never preempts: lent quota returns only when the borrower finishes",
    "tiresias-l": "Tiresias-L ignores tenants (2D-LAS on attained GPU·s)",
    "gandiva-fair": "Gandiva_fair is stride scheduling over tenant quotas, no credit for idle time",
    "allox": "AlloX never preempts; the least-progressed half of the tenants enter its matching first",
    "themis": "Themis serves the worst (wait + p̂) / p̂ first",
}


# The ablations behind "Why the ranking differs" (docs/fairness.md): the settings that decide why our
# ranking (Themis, then Gandiva_fair, then ASTRAEA) is not the paper's, each a run of the command.
# YARN-CS: how far a tenant may borrow (YARN's maximum-capacity, a multiple of the quota; ours lends
# without limit, the paper calls YARN-CS static quota), YARN's optional preemption, and a heavier
# load. Themis: the p̂ its ρ reads
# (the scenario's σ = 0.9, exact, σ = 2 and 4, one p̂ for every job), the lease re-auction, its knob f;
# ASTRAEA given the same p̂ (astraea-p). Then the same ranking on more draws of the scenario.
YARN_CAPS = (2.0, 1.5, 1.0)
ABLATION_POLICIES = ("astraea-p", "themis(size_blind=True)", "themis(reauction=False)", "themis(f=0.0)",
                     "themis(f=0.95)", "yarn-cs(preempt=True)", *(f"yarn-cs(max_capacity={c:g})" for c in YARN_CAPS))
ABLATION_NOISE = (0.0, 2.0, 4.0)
NOISE_POLICIES = ("themis", "astraea-p")
LOAD_FACTOR = 0.6  # the load run: this fraction of --venus-nodes, the same jobs (offered load / 0.6)
LOAD_POLICIES = ("astraea", "themis", "gandiva-fair", "yarn-cs")
DRAWS = 2  # more draws of the scenario: --seed + 1, --seed + 2
# the same settings on Philly, on the smallest --philly-nodes cluster (the contended one; the paper
# gives no Philly percentages, so this says only whether the explanations carry over)
PHILLY_ABLATIONS = ("themis(size_blind=True)", "yarn-cs(preempt=True)", "yarn-cs(max_capacity=1.5)",
                    "yarn-cs(max_capacity=1)")
PHILLY_POLICIES = ("astraea", "themis", "gandiva-fair", "yarn-cs")
DRAW_POLICIES = ("astraea", "themis", "gandiva-fair", "yarn-cs", "themis(size_blind=True)", "yarn-cs(max_capacity=1.5)")


def add_arguments(parser) -> None:
    parser.add_argument("--n", type=job_count, help="jobs per scenario: N consecutive jobs from a seeded start (default all; "
                        "for quick checks, the paper's figures are for all jobs)")
    parser.add_argument("--seed", type=seed_type, default=0, help="scenario and sample seed (default 0)")
    parser.add_argument("--venus-nodes", type=int, default=VENUS_NODES,
                        help=f"Venus-like cluster (main table and lease curve), nodes of 8 GPUs (default {VENUS_NODES}, "
                             "the paper's)")
    parser.add_argument("--leases", default=DEFAULT_LEASES,
                        help=f"lease-sensitivity curve, s (default {DEFAULT_LEASES})")
    parser.add_argument("--sizes", default=DEFAULT_SIZES,
                        help=f"cluster-size curve: Venus-like nodes of 8 GPUs (default {DEFAULT_SIZES})")
    parser.add_argument("--philly-nodes", default=DEFAULT_PHILLY_NODES,
                        help=f"Philly cluster sizes, nodes of 8 GPUs (default {DEFAULT_PHILLY_NODES}: the paper's, and a "
                             "contended one)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="run the sweep cells on local worker processes (default) or Dask")
    parser.add_argument("--address", help="Dask scheduler, e.g. tcp://host:8786 (default: start a LocalCluster)")
    parser.add_argument("--workers", type=workers, help="worker processes (default: CPU count)")
    parser.add_argument("--output", default="results/reproduce-astraea",
                        help="output folder (default results/reproduce-astraea)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the reproduce-astraea block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")


# ----- the sweeps -------------------------------------------------------------------------------
def _numbers(text: str, what: str, convert, low) -> list:
    from benchmark.tasks.inputs import csv_list

    values = csv_list(text, what, convert)
    if not values or any(not (math.isfinite(v) and v >= low) for v in values) or len(set(values)) < len(values):
        raise InputError(f"--{what} needs distinct values >= {low:g}, got {text!r}", where=f"--{what}")
    return values


def sweep_configs(args) -> dict[str, dict]:
    """The sweep configs (as YAML mappings) behind the table and its ablations, in the order their cells run."""
    common = {"task": "fairness", "seeds": [args.seed], "mlflow": False}
    if args.n is not None:
        common["n"] = [args.n]
    venus, philly = {"scenario": "venus"}, {"scenario": "philly"}
    return {
        "venus": {**common, "options": venus, "policies": list(MAIN_POLICIES), "nodes": [args.venus_nodes]},
        "philly": {**common, "options": philly, "policies": list(MAIN_POLICIES), "nodes": args.philly_nodes},
        "nodes": {**common, "options": venus, "policies": list(SIZE_POLICIES), "nodes": args.sizes},
        "lease": {**common, "options": venus, "nodes": [args.venus_nodes], "policies": list(LEASE_POLICIES),
                  "lease": args.leases},
        "variants": {**common, "options": {**venus, **VARIANT_OPTIONS}, "policies": list(MAIN_POLICIES),
                     "nodes": [args.venus_nodes]},
        # the ablations ("Why the ranking differs"); the defaults' figures are the venus run's
        "ablations": {**common, "options": venus, "policies": list(ABLATION_POLICIES), "nodes": [args.venus_nodes]},
        "ablation-noise": {**common, "options": venus, "policies": list(NOISE_POLICIES), "nodes": [args.venus_nodes],
                           "noise": list(ABLATION_NOISE)},
        "ablation-load": {**common, "options": venus, "policies": list(LOAD_POLICIES),
                          "nodes": [load_nodes(args.venus_nodes)]},
        "ablation-draws": {**common, "seeds": draw_seeds(args.seed), "options": venus,
                           "policies": list(DRAW_POLICIES), "nodes": [args.venus_nodes]},
        "ablation-philly": {**common, "options": philly, "policies": list(PHILLY_ABLATIONS),
                            "nodes": [min(args.philly_nodes)]},
    }


def draw_seeds(seed: int) -> list[int]:
    """The other draws of the scenario: the next DRAWS seeds (wrapping past the largest seed)."""
    return [(seed + 1 + i) % (MAX_SEED + 1) for i in range(DRAWS)]


def load_nodes(venus_nodes: int) -> int:
    """The Venus-like cluster of the load ablation: LOAD_FACTOR of the main one, at least one node."""
    return max(1, round(LOAD_FACTOR * venus_nodes))


class CellsFailed(Exception):
    """Some cells failed: one line each (cell id: the run's one-line error)."""

    def __init__(self, lines: list[str]):
        super().__init__("; ".join(lines))
        self.lines = lines


def run_sweeps(args, out: Path) -> dict[str, list]:
    """Write OUT/sweeps/<name>.yaml, expand them with the sweep machinery and run all cells at once."""
    import yaml

    from benchmark.sweeps import cells, load_config, run_cells, sweep_table

    folder = out / "sweeps"
    folder.mkdir(parents=True, exist_ok=True)
    plan, owner = [], {}
    for name, config in sweep_configs(args).items():
        path = folder / f"{name}.yaml"
        write_text_atomic(path, yaml.safe_dump(config, sort_keys=False))
        for cell in cells(load_config(path)):
            # one executor for all the sweeps, so both cores stay busy; ids stay unique under OUT/cells
            cell = replace(cell, index=len(plan), id=f"{name}-{cell.id}")
            plan.append(cell)
            owner[cell.index] = name
    label = f"reproduce astraea: {len(plan)} runs ({args.executor})"
    with Progress(label, total=len(plan), quiet=args.quiet) as progress:
        results = run_cells(plan, out, executor=args.executor, address=args.address, workers=args.workers,
                            on_result=lambda r: progress.update())
    failed = [r for r in results if not r.ok]
    if failed:
        raise CellsFailed([f"{r.cell.id}: {r.error}" for r in failed])
    sweep_table([r.rows for r in results]).to_parquet(out / "sweep.parquet", index=False)
    runs: dict[str, list] = {name: [] for name in sweep_configs(args)}
    for r in results:
        runs[owner[r.cell.index]].append({"cell": r.cell, "dir": Path(r.out_dir),
                                          "doc": json.loads((Path(r.out_dir) / "results.json").read_text())})
    return runs


# ----- measurements ------------------------------------------------------------------------------
class Run:
    """One cell's results.json and per-job tables, with the diagnostics the why-lines quote."""

    def __init__(self, folder: Path, doc: dict):
        self.folder, self.doc = Path(folder), doc
        self.rows = {r["policy"]: r for r in doc["rows"]}
        self.load = doc.get("offered_load") or {}
        self.gpus = int(self.load.get("gpus") or doc["options"]["gpus"])

    def policies(self) -> list[str]:
        """The policies of this cell, in its results' order."""
        return list(self.rows)

    def metric(self, policy: str, name: str) -> float | None:
        value = self.rows.get(policy, {}).get(name)
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)

    @property
    def contended(self) -> bool:
        return float(self.load.get("peak_demand_gpus") or 0.0) > self.gpus

    def no_contention(self) -> str:
        text = f"no contention: peak demand {self.load.get('peak_demand_gpus', 0):,.0f} of {self.gpus:,} GPUs"
        jct = [r["avg_jct"] for r in self.rows.values() if r.get("avg_jct") is not None]
        if jct and max(jct) - min(jct) <= 1e-9 * max(jct):
            return text + f", and all {len(jct)} policies have the same average JCT ({jct[0]:,.0f} s)"
        return text + f"; average JCTs still differ by up to {100 * (max(jct) / min(jct) - 1):.2f} % (placement)"

    def jobs(self, policy: str) -> pd.DataFrame:
        return pd.read_parquet(self.folder / "jobs" / f"{policy}.parquet")

    def windows(self, policy: str) -> pd.DataFrame:
        return pd.read_parquet(self.folder / "tenant_intervals" / f"{policy}.parquet")

    def context(self, policy: str) -> str:
        utilisation = self.metric(policy, "utilisation") or 0.0
        return f"offered load {self.load.get('load') or 0:.2f}, utilisation {utilisation:.2f}"


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f} %"


def _share(v: float) -> str:
    return f"{100 * v:.0f} %"



NO_PAPER = "no paper figure"  # a policy the paper reports no figure for, listed so that no policy is left out


def verdict(paper: float, ours: float | None) -> str:
    if ours is None:
        return "not measured"
    if abs(ours - paper) <= AGREE_REL * abs(paper):
        return "agrees"
    return "ours higher" if ours > paper else "ours lower"


def tenant_loss_rule(doc: dict) -> str:
    """How the run counted tenant-loss intervals: the window, and the fair share of its denominator."""
    opts = doc.get("options", {})
    share = opts.get("tenant_loss_share") or opts.get("tenant_loss_denominator") or "eq8 (demand-aware)"
    return f"{opts.get('fair_window_s', 0):,g} s windows, denominator {share}"


def noisy_rank_correlation(sigma: float, seed: int) -> float:
    """Spearman correlation with the true sizes of p̂ = p·exp(σZ), the `--noise σ` model, on the
    Venus-like scenario's sizes (does that p̂ still rank sizes?)."""
    from benchmark.tasks.inputs import noise_predictions

    size = SCENARIOS["venus"](seed=seed).jobs["duration"].to_numpy(float)
    (p_hat,) = noise_predictions(size, [sigma], seed).values()
    return float(pd.Series(p_hat).rank().corr(pd.Series(size).rank()))


def p_hat_rank_correlation(scenario: str, seed: int) -> float:
    """Spearman correlation of the scenario's p̂ with the true run times (does p̂ rank sizes?)."""
    jobs = SCENARIOS[scenario](seed=seed).jobs
    return float(jobs["predicted_duration"].rank().corr(jobs["duration"].rank()))


def sharing_loss_why(run: Run, policy: str, paper: float, ours: float | None, rank_corr) -> str:
    v = verdict(paper, ours)
    if v == "not measured":
        return f"not measured: {policy} did not run"
    if not run.contended:
        return run.no_contention()
    if v == "agrees":
        return f"agrees: {AGREE_TEXT} ({run.context(policy)})"
    jobs = run.jobs(policy)
    lost = jobs[jobs["rho"] < SHARING_LOSS_RHO]
    if not len(lost):
        return f"{v}: no sharing-loss job at all here ({run.context(policy)})"
    waited = float(np.mean(lost["preemptions"] == 0))
    short = float(np.mean(lost["duration"] < SHORT_S))
    gangs = float(np.mean(lost["gpus"] >= 8))
    text = (f"{v}: of our {len(lost):,} sharing-loss jobs {_share(waited)} lost only waiting for a first start, "
            f"{_share(short)} are < 10 min, {_share(gangs)} are gangs of ≥ 8 GPUs; {run.context(policy)}")
    opts = run.doc.get("options", {})
    if opts.get("job_rho_from") == "submit":
        tick = float(opts.get("interval_s") or 0.0)
        only_tick = float(np.mean((lost["preemptions"] == 0) & (lost["start_time"] - lost["submit_time"] <= tick + 1e-9)))
        text += (f"; {_share(only_tick)} waited no longer than the next {tick:g} s scheduling tick, which counting ρ_job "
                 "from the submit time charges")
    if policy == "themis":
        text += (f"; {MECHANISM['themis']} and our p̂ ranks sizes (Spearman {rank_corr():.2f}); the paper gives no p̂ "
                 "error for its Themis")
    elif policy in MECHANISM:
        text += f"; {MECHANISM[policy]}"
    return text


def tenant_loss_why(run: Run, policy: str, paper: float, ours: float | None) -> str:
    v = verdict(paper, ours)
    if v == "not measured":
        return f"not measured: {policy} did not run"
    if not run.contended:
        return run.no_contention()
    rule = tenant_loss_rule(run.doc)
    if v == "agrees":
        return f"agrees: {AGREE_TEXT} ({rule})"
    win = run.windows(policy)
    counted = win[win["had_demand"]] if "had_demand" in win else win[win["fair_gpu_s"] > 0]
    lost = counted[counted["rho"] < 1.0 - 1e-9]
    per_tenant = lost.groupby("tenant").size().sort_values(ascending=False)
    top = (f"; most in {per_tenant.index[0]} ({per_tenant.iloc[0]} windows)" if len(per_tenant) else "")
    text = (f"{v}: {len(lost):,} of {len(counted):,} tenant windows with demand below ρ_tenant = 1, in "
            f"{len(per_tenant)} of {counted['tenant'].nunique()} tenants{top} ({rule}; {run.context(policy)})")
    if "fair_eq8_gpu_s" in lost and run.doc.get("options", {}).get("tenant_loss_share") == "eq16" and len(lost):
        under = float(np.mean(lost["fair_eq8_gpu_s"] < lost["fair_eq16_gpu_s"] * (1 - 1e-9)))
        text += (f"; in {_share(under)} of the loss windows the tenant asked for less than its quota, which the quota "
                 "(eq16) denominator counts as loss")
    if policy in MECHANISM and policy != "themis":
        text += f"; {MECHANISM[policy]}"
    return text


def overhead_why(run: Run, paper: float, ours: float | None) -> str:
    v = verdict(paper, ours)
    if v in ("agrees", "not measured"):
        return v
    jobs = run.jobs("astraea")
    cold = run.doc["options"].get("cold_start_s", 0.0)
    resumes = jobs["preemptions"] + (jobs["migrations"] if "migrations" in jobs else 0)
    return (f"{v}: {resumes.mean():.3f} resumes per job (preemptions and migrations) × {cold:g} s cold start = "
            f"{jobs['overhead_s'].mean():.1f} s per job against an average JCT of {jobs['jct'].mean():,.0f} s; the paper "
            "gives neither its cold-start time nor its checkpoint cost")


def jct_claim(run: Run) -> dict:
    mine = run.metric("astraea", "avg_jct")
    others = {p: run.metric(p, "avg_jct") for p in BASELINES if run.metric(p, "avg_jct") is not None}
    row = {"figure": "average JCT vs the paper's baselines", "paper": PAPER_CLAIMS["jct"], "paper_value": None,
           "ours_value": mine}
    if mine is None or not others:
        return {**row, "ours": "–", "verdict": "not measured", "why": "astraea or the baselines did not run"}
    row["ours"] = f"ASTRAEA {mine:,.0f} s; " + ", ".join(f"{p} {v:,.0f} s" for p, v in others.items())
    if not run.contended:
        return {**row, "verdict": "does not hold", "why": run.no_contention()}
    below = {p: v for p, v in others.items() if v <= mine}
    if not below:
        closest = min(others, key=others.get)
        return {**row, "verdict": "holds", "why": f"holds: the closest baseline, {closest}, is "
                f"{100 * (others[closest] / mine - 1):+.2f} % above ASTRAEA"}
    text = ", ".join(f"{p} {100 * (v / mine - 1):+.2f} %" for p, v in sorted(below.items(), key=lambda kv: kv[1]))
    return {**row, "verdict": "does not hold", "why": f"does not hold: at or below ASTRAEA's JCT: {text}"}


FLAT = "flat — not comparable"  # the verdict of a claim the measured curve cannot decide


def lease_claims(curve: pd.DataFrame) -> list[dict]:
    """The two lease-sensitivity claims on the astraea lease curve (lease, avg_jct, sharing_loss_jobs, ...).

    A claim that the curve cannot contradict is reported as FLAT: when the whole curve's JCT spans
    no more than the margin that counts as "near" (or "close"), every lease would pass."""
    c = curve.set_index("lease")
    best = float(c["avg_jct"].idxmin())
    span = float(c["avg_jct"].max() / c["avg_jct"].min() - 1) if len(c) else 0.0
    flat_why = (f"{FLAT}: the whole curve ({c.index.min():g}–{c.index.max():g} s) spans {100 * span:.2f} % in average "
                f"JCT")
    at = lambda lease, m: float(c.loc[lease, m]) if lease in c.index else None  # noqa: E731
    first = {"figure": "lease sensitivity: best lease", "paper": PAPER_CLAIMS["lease_best"], "paper_value": PAPER_BEST_LEASE_S,
             "ours": f"lowest at {best:g} s ({c.loc[best, 'avg_jct']:,.0f} s)", "ours_value": best}
    j1200 = at(PAPER_BEST_LEASE_S, "avg_jct")
    if j1200 is None:
        first.update(verdict="not measured", why=f"add {PAPER_BEST_LEASE_S:g} to --leases")
    else:
        gap = j1200 / float(c.loc[best, "avg_jct"]) - 1
        holds = gap <= NEAR_REL
        if span <= NEAR_REL:
            first.update(verdict=FLAT, why=f"{flat_why}, within the {NEAR_REL:.0%} that counts as near the best: any "
                                          "lease would pass")
        elif best == PAPER_BEST_LEASE_S:
            others = c["avg_jct"].drop(best)
            why = "holds: the lowest JCT of the curve" + (
                f"; the next, {others.idxmin():g} s, is {100 * (others.min() / j1200 - 1):+.2f} %" if len(others) else "")
        else:
            why = (f"{'holds' if holds else 'does not hold'}: JCT at {PAPER_BEST_LEASE_S:g} s is {100 * gap:+.2f} % from "
                   f"the lowest ({best:g} s; {NEAR_REL:.0%} counts as near); preemptions "
                   f"{c.loc[best, 'preemptions']:,.0f} at {best:g} s, {c.loc[PAPER_BEST_LEASE_S, 'preemptions']:,.0f} at "
                   f"{PAPER_BEST_LEASE_S:g} s")
        if span > NEAR_REL:
            first.update(verdict="holds" if holds else "does not hold", why=why)
    second = {"figure": f"lease sensitivity: {LEASE_S:g} s vs {PAPER_BEST_LEASE_S:g} s", "paper": PAPER_CLAIMS["lease_900"],
              "paper_value": None, "ours_value": None}
    j900, s900, s1200 = at(LEASE_S, "avg_jct"), at(LEASE_S, "sharing_loss_jobs"), at(PAPER_BEST_LEASE_S, "sharing_loss_jobs")
    if j900 is None or j1200 is None:
        second.update(ours="–", verdict="not measured", why=f"add {LEASE_S:g} and {PAPER_BEST_LEASE_S:g} to --leases")
        return [first, second]
    gap = j900 / j1200 - 1
    close, fairer = abs(gap) <= CLOSE_REL, s900 <= s1200
    second["ours"] = f"JCT {100 * gap:+.2f} %; sharing-loss jobs {_pct(s900)} vs {_pct(s1200)}"
    second["ours_value"] = gap
    if span <= CLOSE_REL and fairer:  # the JCT half cannot fail, and the sharing-loss half alone is no test of "close"
        second.update(verdict=FLAT, why=f"{flat_why}, within the ±{100 * CLOSE_REL:.0f} % that counts as close; "
                                        f"sharing-loss jobs {_pct(s900)} at {LEASE_S:g} s vs {_pct(s1200)}")
    elif close and fairer:
        second.update(verdict="holds", why=f"holds: within ±{100 * CLOSE_REL:.0f} % in JCT and no more sharing-loss jobs")
    else:
        parts = ([] if close else [f"JCT differs by {100 * gap:+.2f} % (more than ±{100 * CLOSE_REL:.0f} %)"]) + \
                ([] if fairer else [f"more sharing-loss jobs at {LEASE_S:g} s ({_pct(s900)} vs {_pct(s1200)})"])
        second.update(verdict="does not hold", why="does not hold: " + "; ".join(parts))
    return [first, second]


def size_claim(curve: pd.DataFrame) -> dict:
    """ASTRAEA vs Tiresias-L at each cluster size (curve: nodes, policy, avg_jct, sharing_loss_jobs, contended)."""
    wide = curve.pivot_table(index="nodes", columns="policy", values=["avg_jct", "sharing_loss_jobs"])
    a, t = "astraea", "tiresias-l"
    better = (wide[("avg_jct", a)] < wide[("avg_jct", t)]) & (wide[("sharing_loss_jobs", a)] < wide[("sharing_loss_jobs", t)])
    row = {"figure": "cluster-size sensitivity", "paper": PAPER_CLAIMS["size"], "paper_value": None,
           "ours": f"better in both at {int(better.sum())} of {len(better)} sizes", "ours_value": float(better.mean())}
    if better.all():
        gaps = wide[("avg_jct", a)] / wide[("avg_jct", t)] - 1
        return {**row, "verdict": "holds",
                "why": f"holds: ASTRAEA's JCT {100 * gaps.min():+.1f} … {100 * gaps.max():+.1f} % against Tiresias-L"}
    fails = [f"{n} nodes: JCT {wide.loc[n, ('avg_jct', a)]:,.0f} vs {wide.loc[n, ('avg_jct', t)]:,.0f} s, sharing-loss "
             f"{_pct(wide.loc[n, ('sharing_loss_jobs', a)])} vs {_pct(wide.loc[n, ('sharing_loss_jobs', t)])}"
             for n in better.index[~better.to_numpy()]]
    idle = sorted(int(n) for n in curve.loc[~curve["contended"], "nodes"].unique())
    note = f" (no contention at {', '.join(map(str, idle))} nodes: equal schedules)" if idle else ""
    return {**row, "verdict": "does not hold", "why": "does not hold at " + "; ".join(fails) + note}


def philly_rows(run: Run) -> list[dict]:
    """The paper's Philly claims (checked by the fairness task's own rule) and the JCT claim, on one run."""
    out = []
    base = PAPER_VENUS["astraea"]["sharing_loss_jobs"]
    venus_ratio = {p: (PAPER_VENUS[p]["sharing_loss_jobs"], base) for p in ("themis", "yarn-cs")}
    for claim in run.doc.get("paper_claims") or philly_claims(run.doc["rows"]):
        row = {"figure": "Philly: " + ("sharing-loss advantage" if claim["claim"] == PAPER_PHILLY_CLAIMS[0]
                                       else "tenant-loss intervals"), "paper": claim["claim"], "paper_value": None,
               "ours": claim["ours"], "ours_value": None, "verdict": "holds" if claim["holds"] else "does not hold"}
        if claim["holds"]:
            row["why"] = "holds"
        elif not run.contended:
            row["why"] = run.no_contention()
        elif claim["claim"] == PAPER_PHILLY_CLAIMS[0]:
            mine = run.metric("astraea", "sharing_loss_jobs") or 0.0
            parts = []
            for p, (fig, fig_astraea) in venus_ratio.items():
                theirs = run.metric(p, "sharing_loss_jobs") or 0.0
                ours_ratio = theirs / mine if mine > 0 else (math.inf if theirs > 0 else 1.0)
                if ours_ratio <= fig / fig_astraea:
                    parts.append(f"{p} / ASTRAEA {ours_ratio:.2f}x, not above the paper's Venus {fig:g} / {fig_astraea:g} "
                                 f"= {fig / fig_astraea:.2f}x")
            row["why"] = "does not hold: " + "; ".join(parts)
        else:
            mine = run.metric("astraea", "tenant_loss_intervals")
            fewer = [f"{p} {_pct(run.metric(p, 'tenant_loss_intervals'))}" for p in run.rows
                     if p in BASELINES and mine is not None and (run.metric(p, "tenant_loss_intervals") or 0.0) <= mine]
            row["why"] = f"does not hold: at or below ASTRAEA's {_pct(mine)}: {', '.join(fewer)}"
        out.append(row)
    out.append(jct_claim(run))
    return out


def build_table(runs: dict[str, list], seed: int) -> tuple[list[dict], dict]:
    """(rows of the comparison table, the two curves as records)."""
    venus = Run(runs["venus"][0]["dir"], runs["venus"][0]["doc"])
    corr_cache: dict[str, float] = {}

    def rank_corr() -> float:
        if "venus" not in corr_cache:
            corr_cache["venus"] = p_hat_rank_correlation("venus", seed)
        return corr_cache["venus"]

    section = f"Venus-like, {venus.doc['options']['cluster']}"
    lines = []
    for metric, label, why in (("sharing_loss_jobs", "sharing-loss jobs (ρ_job < 0.95)",
                                lambda p, f, o: sharing_loss_why(venus, p, f, o, rank_corr)),
                               ("tenant_loss_intervals", "tenant-loss intervals",
                                lambda p, f, o: tenant_loss_why(venus, p, f, o))):
        for policy, figures in PAPER_VENUS.items():
            if metric not in figures:
                continue
            paper, ours = figures[metric], venus.metric(policy, metric)
            lines.append({"section": section, "figure": f"{label}: {policy}", "paper": _pct(paper), "paper_value": paper,
                          "ours": _pct(ours), "ours_value": ours, "verdict": verdict(paper, ours),
                          "why": why(policy, paper, ours)})
    paper = PAPER_VENUS["astraea"]["overhead_pct"]
    ours = venus.metric("astraea", "overhead_pct")
    lines.append({"section": section, "figure": f"checkpoint + cold-start overhead, {LEASE_S:g} s lease: astraea",
                  "paper": f"{paper:g} % of avg JCT", "paper_value": paper,
                  "ours": "–" if ours is None else f"{ours:.2f} % of avg JCT", "ours_value": ours,
                  "verdict": verdict(paper, ours), "why": overhead_why(venus, paper, ours)})
    lines.append({"section": section, **jct_claim(venus)})
    lines += variant_rows(runs, section)
    lease = _curve(runs["lease"], "lease", LEASE_POLICIES)
    size = _curve(runs["nodes"], "nodes", SIZE_POLICIES)
    lines += [{"section": section, **row} for row in lease_claims(lease)]
    lines.append({"section": section, **size_claim(size)})
    for item in runs["philly"]:
        run = Run(item["dir"], item["doc"])
        name = f"Philly, {run.doc['options']['cluster']}" + (" (the paper's)" if item["cell"].nodes == PHILLY_NODES else "")
        lines += [{"section": name, **row} for row in philly_rows(run)]
    return lines, {"lease": lease.to_dict(orient="records"), "nodes": size.to_dict(orient="records")}


def variant_rows(runs: dict[str, list], section: str) -> list[dict]:
    """The Venus figures again under the other metric definitions (same schedules, other accounting)."""
    if not runs.get("variants"):
        return []
    alt = Run(runs["variants"][0]["dir"], runs["variants"][0]["doc"])
    main = Run(runs["venus"][0]["dir"], runs["venus"][0]["doc"])
    opts = alt.doc["options"]
    rho, share = opts["job_rho_from"], opts.get("tenant_loss_share")
    out = []
    for metric, label, how in (("sharing_loss_jobs", "sharing-loss jobs", f"{DEFINITIONS.get(rho, rho)} ({rho})"),
                               ("tenant_loss_intervals", "tenant-loss intervals", f"{DEFINITIONS.get(share, share)} ({share})")):
        for policy in alt.policies():  # every policy of the run, those without a paper figure too
            paper = PAPER_VENUS.get(policy, {}).get(metric)
            ours, default = alt.metric(policy, metric), main.metric(policy, metric)
            floor = alt.metric(policy, f"{metric}_floor")  # the ideal schedule under these definitions
            ideal = "" if floor is None else f", where an ideal schedule scores {_pct(floor)}"
            said = NO_PAPER if paper is None else verdict(paper, ours)
            out.append({"section": section, "figure": f"{label}, {how}: {policy}",
                        "paper": "–" if paper is None else _pct(paper), "paper_value": paper, "ours": _pct(ours),
                        "ours_value": ours, "verdict": said,
                        "why": f"{said}: the same run with {DEFINITIONS.get(rho, rho)} and "
                               f"{DEFINITIONS.get(share, share)}{ideal}; under the default definitions {_pct(default)}"})
    return out


def _curve(items: list[dict], axis: str, policies) -> pd.DataFrame:
    records = []
    for item in items:
        run = Run(item["dir"], item["doc"])
        value = item["cell"].lease if axis == "lease" else item["cell"].nodes
        for policy in policies:
            r = run.rows[policy]
            records.append({axis: value, "policy": policy, "gpus": run.gpus, "offered_load": run.load.get("load"),
                            "contended": run.contended, **{m: r.get(m) for m in (
                                "avg_jct", "sharing_loss_jobs", "tenant_loss_intervals", "preemptions", "overhead_pct")}})
    return pd.DataFrame.from_records(records).sort_values([axis, "policy"]).reset_index(drop=True)


# ----- why the ranking differs: the ablations ----------------------------------------------------
METRICS = ("sharing_loss_jobs", "tenant_loss_intervals", "avg_slowdown")


def _record(run: Run, policy: str, group: str, label: str, **extra) -> dict:
    paper = {} if extra.get("philly") else (
        PAPER_VENUS.get(policy.split("(")[0], {}) if "(" not in policy or group == "YARN-CS" else {})
    return {"group": group, "run": label, "policy": policy, "gpus": run.gpus, "seed": run.doc["options"].get("seed"),
            "offered_load": run.load.get("load"), **{m: run.metric(policy, m) for m in METRICS},
            "paper_sharing_loss_jobs": paper.get("sharing_loss_jobs"),
            "paper_tenant_loss_intervals": paper.get("tenant_loss_intervals"), **extra}


def ablation_table(runs: dict[str, list]) -> list[dict]:
    """The ablation runs as records (group, run, policy, the three metrics, the paper's figures for the
    policy's figures where the run stands for that baseline), in the order of the section."""
    if not runs.get("ablations"):
        return []
    main = Run(runs["venus"][0]["dir"], runs["venus"][0]["doc"])
    abl = Run(runs["ablations"][0]["dir"], runs["ablations"][0]["doc"])
    out = [_record(main, "yarn-cs", "YARN-CS", "ours: idle quota lent without limit (YARN's elasticity)", cap=math.inf)]
    for cap in YARN_CAPS:
        what = "hard quotas (the paper: a static-quota baseline)" if cap == 1 else f"borrows up to {cap:g} × its quota"
        out.append(_record(abl, f"yarn-cs(max_capacity={cap:g})", "YARN-CS", what, cap=cap))
    out.append(_record(abl, "yarn-cs(preempt=True)", "YARN-CS", "ours with YARN's optional preemption at lease rounds"))
    for item in runs.get("ablation-load", []):
        load = Run(item["dir"], item["doc"])
        for policy in ("yarn-cs", "astraea"):
            out.append(_record(load, policy, "heavier load", f"{policy}, {item['cell'].nodes} nodes (offered load "
                                                        f"{load.load.get('load') or 0:.2f})", nodes=item["cell"].nodes))
    out.append(_record(main, "themis", "Themis", f"ours: the scenario's p̂ (σ = {PREDICTION_SIGMA:g})", noise=None))
    for item in sorted(runs.get("ablation-noise", []), key=lambda i: i["cell"].noise):
        noisy = Run(item["dir"], item["doc"])
        sigma = item["cell"].noise
        out.append(_record(noisy, "themis", "Themis", "exact p̂" if sigma == 0 else f"p̂ = p·exp({sigma:g} Z)",
                           noise=sigma, rank_corr=noisy_rank_correlation(sigma, item["cell"].seed)))
    labels = {"themis(size_blind=True)": "one p̂ for every job (their median): no size information",
              "themis(reauction=False)": "no lease re-auction (a job keeps its GPUs)",
              "themis(f=0.0)": "f = 0: every job bids", "themis(f=0.95)": "f = 0.95: the worst 5 % bid"}
    for policy, label in labels.items():
        out.append({**_record(abl, policy, "Themis", label), "paper_sharing_loss_jobs":
                    PAPER_VENUS["themis"].get("sharing_loss_jobs") if policy == "themis(size_blind=True)" else None})
    out.append(_record(main, "astraea", "ASTRAEA", "ASTRAEA (no p̂)"))
    out.append(_record(abl, "astraea-p", "ASTRAEA", f"ASTRAEA-P: ASTRAEA given the same p̂ (σ = {PREDICTION_SIGMA:g})"))
    for item in runs.get("ablation-noise", []):
        if item["cell"].noise == 0:
            out.append(_record(Run(item["dir"], item["doc"]), "astraea-p", "ASTRAEA", "ASTRAEA-P, exact p̂", noise=0.0))
    out.append(_record(main, "gandiva-fair", "Gandiva_fair", "ours: stride over tenants, least-attained job first"))
    for item in runs.get("ablation-philly", []):
        nodes = item["cell"].nodes
        group = f"Philly {nodes} × 8"
        main_philly = next((Run(i["dir"], i["doc"]) for i in runs.get("philly", []) if i["cell"].nodes == nodes), None)
        if main_philly is not None:
            out += [_record(main_philly, p, group, f"{p} (ours)", philly=True) for p in PHILLY_POLICIES]
        abl_philly = Run(item["dir"], item["doc"])
        out += [_record(abl_philly, p, group, p, philly=True) for p in PHILLY_ABLATIONS]
    for item in sorted(runs.get("ablation-draws", []), key=lambda i: i["cell"].seed):
        draw = Run(item["dir"], item["doc"])
        for policy in DRAW_POLICIES:
            out.append(_record(draw, policy, f"draw {item['cell'].seed}", f"{policy}, --seed {item['cell'].seed}"))
    return out


def _find(table: list[dict], policy: str, group: str | None = None, **where) -> dict | None:
    for r in table:
        if r["policy"] == policy and (group is None or r["group"] == group) and all(r.get(k) == v for k, v in where.items()):
            return r
    return None


def _noise_name(sigma: float) -> str:
    return "exact p̂" if sigma == 0 else f"σ = {sigma:g}"


def _both_agree(r: dict) -> bool:
    return (verdict(r["paper_sharing_loss_jobs"], r["sharing_loss_jobs"]) == "agrees"
            and verdict(r["paper_tenant_loss_intervals"], r["tenant_loss_intervals"]) == "agrees")


def ablation_answers(table: list[dict]) -> list[str]:
    """The section's answers, one paragraph per question, every number read from `table`."""
    if not table:
        return []
    out = []
    yarn = {r["cap"]: r for r in table if r["group"] == "YARN-CS" and "cap" in r}
    paper_y = PAPER_VENUS["yarn-cs"]
    if yarn:
        ours, hard = yarn.get(math.inf), yarn.get(1.0)
        preempt = _find(table, "yarn-cs(preempt=True)", "YARN-CS")
        preempted = ("" if preempt is None else
                     f" With YARN's optional preemption (each tenant's quota taken back from borrowers at lease rounds) "
                     f"it scores {_pct(preempt['sharing_loss_jobs'])} / {_pct(preempt['tenant_loss_intervals'])}: "
                     + ("it brings both figures to the paper's." if _both_agree(preempt) else
                        "preemption is not the difference."))
        agree = sorted((c for c, r in yarn.items() if _both_agree(r)), reverse=True)
        text = (f"**YARN-CS at {_pct(ours['sharing_loss_jobs'])}, not {_pct(paper_y['sharing_loss_jobs'])}.** Ours lends "
                f"idle quota without limit (YARN's default elasticity): at an offered load of "
                f"{ours['offered_load']:.2f}, {_pct(ours['sharing_loss_jobs'])} sharing-loss jobs, "
                f"{_pct(ours['tenant_loss_intervals'])} tenant-loss intervals.{preempted} The paper counts YARN-CS among its "
                "static-quota baselines; capping what a tenant may borrow (YARN's maximum-capacity) moves ours to its "
                "figures: " + "; ".join(f"{'hard quotas' if c == 1 else f'{c:g} × quota'} {_pct(r['sharing_loss_jobs'])} / "
                                         f"{_pct(r['tenant_loss_intervals'])}" for c, r in sorted(yarn.items(), reverse=True)
                                         if c != math.inf)
                + f" (paper {_pct(paper_y['sharing_loss_jobs'])} / {_pct(paper_y['tenant_loss_intervals'])}). ")
        text += (f"Both figures agree ({AGREE_TEXT}) at a cap of {', '.join(f'{c:g}' for c in agree)} × quota"
                 if agree else "No cap makes both figures agree")
        if hard is not None:
            text += (f"; hard quotas overshoot the tenant-loss figure ({_pct(hard['tenant_loss_intervals'])}: a tenant "
                     "at its cap cannot fill a fractional quota with whole gangs, so nearly every window with "
                     "demand loses)")
        loaded = [r for r in table if r["group"] == "heavier load"]
        if loaded:
            y, a = _find(loaded, "yarn-cs"), _find(loaded, "astraea")
            text += (f". A heavier load alone does it too — on {y['nodes']} nodes (offered load {y['offered_load']:.2f}) "
                     f"our YARN-CS scores {_pct(y['sharing_loss_jobs'])} / {_pct(y['tenant_loss_intervals'])} — but "
                     f"there ASTRAEA scores {_pct(a['sharing_loss_jobs'])} / {_pct(a['tenant_loss_intervals'])} against "
                     f"its {_pct(PAPER_VENUS['astraea']['sharing_loss_jobs'])} / "
                     f"{_pct(PAPER_VENUS['astraea']['tenant_loss_intervals'])}, "
                     + ("which agrees too" if _both_agree(a) else "which no longer agrees: the load is not the difference"))
        out.append(text + ".")
    themis = [r for r in table if r["group"] == "Themis"]
    if themis:
        ours = _find(themis, "themis", noise=None)
        blind = _find(themis, "themis(size_blind=True)")
        noisy = [r for r in themis if r["policy"] == "themis" and r.get("noise") is not None]
        paper_t = PAPER_VENUS["themis"]["sharing_loss_jobs"]
        text = (f"**What makes our Themis strong ({_pct(ours['sharing_loss_jobs'])} sharing-loss jobs, "
                f"{_pct(ours['tenant_loss_intervals'])} tenant-loss intervals).** It serves the worst "
                "(wait + remaining p̂) / p̂ first, re-auctioned every lease: with p̂ that ranks sizes this is the "
                "slowdown so far, nearly the ρ_job that sharing loss counts. Given one p̂ for every job it scores "
                f"{_pct(blind['sharing_loss_jobs'])} / {_pct(blind['tenant_loss_intervals'])} "
                f"({verdict(paper_t, blind['sharing_loss_jobs'])} with the paper's {_pct(paper_t)}). p̂'s error hardly "
                "matters while p̂ still ranks sizes: " + ", ".join(
                    f"{_noise_name(r['noise'])} {_pct(r['sharing_loss_jobs'])}"
                    + ("" if r.get("rank_corr") is None else f" (Spearman ≈ {r['rank_corr']:.2f})") for r in noisy) + ". ")
        others = [(_find(themis, p), what) for p, what in (("themis(reauction=False)", "without the lease re-auction"),
                                                            ("themis(f=0.0)", "f = 0"), ("themis(f=0.95)", "f = 0.95"))]
        others = [(r, what) for r, what in others if r is not None]
        size_effect = abs(blind["sharing_loss_jobs"] - ours["sharing_loss_jobs"])
        less = all(abs(r["sharing_loss_jobs"] - ours["sharing_loss_jobs"]) < size_effect for r, _ in others)
        text += ("The lease re-auction and the knob f move it less than p̂ does: " if less else
                 "The lease re-auction and the knob f move it as much as p̂ does or more: ") + "; ".join(
            f"{what} {_pct(r['sharing_loss_jobs'])} / {_pct(r['tenant_loss_intervals'])}" for r, what in others)
        a, ap = _find(table, "astraea", "ASTRAEA"), _find(table, "astraea-p", "ASTRAEA", noise=None)
        if a is not None and ap is not None:
            text += (f". ASTRAEA reads no p̂ ({_pct(a['sharing_loss_jobs'])} / {_pct(a['tenant_loss_intervals'])}); "
                     f"given the same p̂ (ASTRAEA-P) it scores {_pct(ap['sharing_loss_jobs'])} / "
                     f"{_pct(ap['tenant_loss_intervals'])}. The paper does not give its Themis's p̂ error; "
                     + ("ours is strong because it is given per-job sizes that ASTRAEA does not read"
                        if blind["sharing_loss_jobs"] > a["sharing_loss_jobs"] > ours["sharing_loss_jobs"] else
                        "even without per-job sizes ours is not behind ASTRAEA"
                        if blind["sharing_loss_jobs"] <= a["sharing_loss_jobs"] else
                        "ours is behind ASTRAEA even with per-job sizes"))
        out.append(text + ".")
    philly = [r for r in table if r.get("philly")]
    if philly:
        at = {r["policy"]: r for r in philly}
        fig = lambda p: f"{_pct(at[p]['sharing_loss_jobs'])} / {_pct(at[p]['tenant_loss_intervals'])}"  # noqa: E731
        text = (f"**On {philly[0]['group']}** (offered load {philly[0]['offered_load']:.2f}; the paper gives no Philly "
                "percentages): " + ", ".join(f"{p} {fig(p)}" for p in PHILLY_POLICIES if p in at) + ".")
        if "themis(size_blind=True)" in at and "themis" in at:
            text += f" Themis with one p̂ for every job: {fig('themis(size_blind=True)')}."
        if "yarn-cs" in at:
            text += (" YARN-CS " + "; ".join(f"{what} {fig(p)}" for p, what in (
                ("yarn-cs(preempt=True)", "with preemption"), ("yarn-cs(max_capacity=1.5)", "capped at 1.5 × quota"),
                ("yarn-cs(max_capacity=1)", "with hard quotas")) if p in at) + ".")
        out.append(text)
    draws = sorted({r["seed"] for r in table if r["group"].startswith("draw ")})
    if draws:
        order = []
        for seed in draws:
            rows = rows_of(table, seed)
            ranked = sorted(("astraea", "themis", "gandiva-fair"), key=lambda p: (rows[p]["sharing_loss_jobs"], p))
            order.append(f"--seed {seed}: " + " < ".join(f"{p} {_pct(rows[p]['sharing_loss_jobs'])}" for p in ranked)
                         + f"; themis with one p̂ {_pct(rows['themis(size_blind=True)']['sharing_loss_jobs'])}, "
                         f"yarn-cs {_pct(rows['yarn-cs']['sharing_loss_jobs'])}, capped at 1.5 × quota "
                         f"{_pct(rows['yarn-cs(max_capacity=1.5)']['sharing_loss_jobs'])}")
        text = "**Other draws of the scenario** (sharing-loss jobs): " + "; ".join(order) + "."
        gaps = [(rows_of(table, seed)["gandiva-fair"], rows_of(table, seed)["astraea"]) for seed in draws]
        first = (_find(table, "gandiva-fair", "Gandiva_fair"), _find(table, "astraea", "ASTRAEA"))
        if None not in first:
            gaps.insert(0, first)  # the main draw
        for m, what in (("sharing_loss_jobs", "sharing-loss jobs"), ("tenant_loss_intervals", "tenant-loss intervals")):
            d = [100 * (g[m] - a[m]) for g, a in gaps]
            text += (f" Gandiva_fair − ASTRAEA in {what} over the {len(d)} draws: {min(d):+.1f} … {max(d):+.1f} points"
                     + (" (either way: a tie within the draws' spread)" if min(d) <= 0 <= max(d) else
                        " (Gandiva_fair lower in every draw)" if max(d) < 0 else " (Gandiva_fair higher in every draw)")
                     + ".")
        out.append(text)
    return out


def rows_of(table: list[dict], seed: int) -> dict[str, dict]:
    """The records of one extra draw, by policy."""
    return {r["policy"]: r for r in table if r["group"] == f"draw {seed}"}


def ablation_markdown(ablations: dict) -> list[str]:
    """The "Why the ranking differs" section (markdown lines) from the summary's `ablations`."""
    table = ablations.get("table") or []
    if not table:
        return []
    out = ["**Why the ranking differs** (ablations: each row is a run of this command, on the Venus-like scenario "
           "unless it says Philly; in brackets the paper's figure where the run stands for its baseline)", "",
           "| baseline | run | sharing-loss jobs | tenant-loss intervals | avg slowdown |", "| --- | --- | ---: | ---: | ---: |"]
    for r in table:
        if r["group"].startswith("draw "):
            continue
        paper = lambda m: "" if r.get(f"paper_{m}") is None else f" [{_pct(r[f'paper_{m}'])}]"  # noqa: E731
        slow = "–" if r["avg_slowdown"] is None else f"{r['avg_slowdown']:,.2f}"
        out.append(f"| {r['group']} | {r['run']} | {_pct(r['sharing_loss_jobs'])}{paper('sharing_loss_jobs')} | "
                   f"{_pct(r['tenant_loss_intervals'])}{paper('tenant_loss_intervals')} | {slow} |")
    out.append("")
    for line in ablations.get("answers") or []:
        out += [line, ""]
    return out


# ----- outputs ----------------------------------------------------------------------------------
def markdown(summary: dict) -> str:
    """The table and the two curves as markdown, from the JSON summary alone (also the block of docs/results.md)."""
    policies = summary["policies"]
    head = (f"Produced by `benchmark reproduce astraea` ({summary['date']}, {summary['elapsed_s']:.0f} s on the "
            f"{summary['executor']} executor with {summary['workers']} workers; load average "
            f"{summary['load_average'][0]:.1f} at the start, {summary['load_average_end'][0]:.1f} at the end, on "
            f"{summary['cpus']} CPUs); seed {summary['seed']}"
            + (f", {summary['n']} jobs per scenario" if summary.get("n") else ", every job") + ". "
            f"Paper column: *{PAPER}*, on the real Venus snapshot; ours on the synthetic Venus-like scenario and on "
            f"the real Philly trace (docs/reproduce-astraea.md). Verdicts: a figure agrees {AGREE_TEXT}'s; claims "
            f"hold or do not. Policies: {', '.join(policies['main'])} (ASTRAEA and the paper's baselines); lease curve "
            f"{', '.join(policies['lease'])} only, cluster-size curve {', '.join(policies['nodes'])} only. "
            + (f"Every decision was executed as decided: {summary['dropped_choices']} dropped choices in all runs."
               if "dropped_choices" in summary else ""))
    out = [head, ""]
    for section in dict.fromkeys(r["section"] for r in summary["rows"]):
        out += [f"**{section}**", "", "| figure | paper | ours | verdict | why |", "| --- | --- | --- | --- | --- |"]
        out += [f"| {r['figure']} | {r['paper']} | {r['ours']} | {r['verdict']} | {r['why']} |"
                for r in summary["rows"] if r["section"] == section]
        out.append("")
    out += ablation_markdown(summary.get("ablations") or {})
    out += ["**Lease sensitivity** (Venus-like, astraea)", "",
            "| lease (s) | avg JCT (s) | sharing-loss jobs | tenant-loss intervals | preemptions | overhead % |",
            "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    out += [f"| {r['lease']:g} | {r['avg_jct']:,.0f} | {_pct(r['sharing_loss_jobs'])} | {_pct(r['tenant_loss_intervals'])} "
            f"| {r['preemptions']:,} | {r['overhead_pct']:.2f} |" for r in summary["curves"]["lease"]]
    out += ["", "**Cluster size** (Venus-like, 8 GPUs per node)", "",
            "| nodes | GPUs | offered load | policy | avg JCT (s) | sharing-loss jobs | tenant-loss intervals |",
            "| ---: | ---: | ---: | --- | ---: | ---: | ---: |"]
    out += [f"| {r['nodes']} | {r['gpus']} | {r['offered_load']:.2f} | {r['policy']} | {r['avg_jct']:,.0f} | "
            f"{_pct(r['sharing_loss_jobs'])} | {_pct(r['tenant_loss_intervals'])} |" for r in summary["curves"]["nodes"]]
    return "\n".join(out).strip() + "\n"


def readme_block(summary_json: Path | str) -> str:
    """The block of docs/results.md (`--readme`), regenerated from a saved OUT/reproduce-astraea.json (no simulation)."""
    return markdown(json.loads(Path(summary_json).read_text()))


def write_readme(readme: Path | str, summary_json: Path | str) -> None:
    """Rewrite the reproduce-astraea block of a Markdown file (docs/results.md) from a saved OUT/reproduce-astraea.json."""
    replace_readme_block(Path(readme), START, END, readme_block(summary_json))


def figure(summary: dict, path: Path) -> Path:
    """The Venus comparison, JCT per policy, lease and cluster-size curves (PNG + SVG)."""
    from benchmark.plots import outside_legend, save_figure, series_styles, subplots
    from schedulers.policy import get_policy

    rows = [r for r in summary["rows"] if r["section"].startswith("Venus") and r["paper_value"] is not None]
    fig, axes = subplots(2, 3, figsize=(20, 9))
    for ax, key, title in ((axes[0][0], "sharing-loss", "Venus: sharing-loss jobs (%)"),
                           (axes[0][1], "tenant-loss", "Venus: tenant-loss intervals (%)")):
        chosen = [r for r in rows if r["figure"].startswith(key)]
        x = np.arange(len(chosen))
        ax.bar(x - 0.2, [100 * r["paper_value"] for r in chosen], 0.4, label="paper", color="#55A868")
        ax.bar(x + 0.2, [np.nan if r["ours_value"] is None else 100 * r["ours_value"] for r in chosen], 0.4,
               label="ours", color="#4C72B0")
        ax.set_xticks(x, [r["figure"].split(": ")[-1] for r in chosen], rotation=20)
        ax.set_title(title)
        outside_legend(ax, fontsize=8)
    ax = axes[0][2]
    venus_jct = [(r["policy"], r["avg_jct"]) for r in summary["venus_rows"]]
    ax.bar(range(len(venus_jct)), [v / 3600 for _, v in venus_jct],
           color=["#C44E52" if p == "astraea" else "#8C8C8C" for p, _ in venus_jct])
    ax.set_xticks(range(len(venus_jct)), [p for p, _ in venus_jct], rotation=60, ha="right", fontsize=8)
    ax.set_title("Venus: average JCT (h)")
    lease = pd.DataFrame(summary["curves"]["lease"])
    ax = axes[1][0]
    ax.plot(lease["lease"], lease["avg_jct"] / 3600, "o-", color="#4C72B0", label="avg JCT")
    ax.axvline(PAPER_BEST_LEASE_S, color="#55A868", ls="--", lw=0.8, label=f"paper's best ({PAPER_BEST_LEASE_S:g} s)")
    ax.set_xlabel("lease (s)")
    ax.set_ylabel("astraea average JCT (h)")
    twin = ax.twinx()
    twin.plot(lease["lease"], 100 * lease["sharing_loss_jobs"], "s--", color="#DD8452", label="sharing-loss jobs")
    twin.set_ylabel("sharing-loss jobs (%)")
    ax.set_title("Venus: lease sensitivity (astraea)")
    handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    twin.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.18, 1.0), borderaxespad=0.0, fontsize=8, frameon=False)
    size = pd.DataFrame(summary["curves"]["nodes"])
    for ax, metric, scale, label in ((axes[1][1], "avg_jct", 1 / 3600, "average JCT (h)"),
                                     (axes[1][2], "sharing_loss_jobs", 100, "sharing-loss jobs (%)")):
        styles = series_styles((name, "p̂" if get_policy(name, "cluster").needs_prediction else None)
                               for name in dict.fromkeys(size["policy"]))
        for (policy, part), style in zip(size.groupby("policy", sort=False), styles.values()):
            ax.plot(part["gpus"], part[metric] * scale, **{**style.line(), "label": policy})
        ax.set_xlabel("GPUs (Venus-like, 8 per node)")
        ax.set_ylabel(label)
        ax.set_title(f"Venus: cluster size, {label}")
        outside_legend(ax, fontsize=8)
    return save_figure(fig, path, dpi=100)


def reproduce(args) -> int:
    started = time.perf_counter()
    load_average = os.getloadavg()
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    from benchmark.sweeps.execution import check_address

    check_address(args.address, args.executor)
    if args.venus_nodes < 1:  # --n and --workers: their parser types (benchmark.options)
        raise InputError(f"--venus-nodes must be at least 1, got {args.venus_nodes}", where="--venus-nodes")
    args.leases = _numbers(args.leases, "leases", lambda t: read_float(t, 1.0, MAX_SECONDS, "a lease"), 1.0)
    args.sizes = _numbers(args.sizes, "sizes", int, 1)
    args.philly_nodes = _numbers(args.philly_nodes, "philly-nodes", int, 1)
    from benchmark.tasks.config import MAX_NODES

    for what, values in (("venus-nodes", [args.venus_nodes]), ("sizes", args.sizes), ("philly-nodes", args.philly_nodes)):
        if any(v is not None and v > MAX_NODES for v in values):  # the fairness simulator's bound (docs/fairness.md)
            raise InputError(f"at most {MAX_NODES:,} nodes, got {max(v for v in values if v is not None):,}",
                             where=f"--{what}")
    out = Path(args.output)
    check_output_folder(out, "reproduce")  # before any computation
    try:
        with output_folder(out, "reproduce") as folder:  # every run and the table appear together, or not at all
            try:
                runs = run_sweeps(args, folder)
            except CellsFailed as exc:
                import sys

                sys.stderr.write(f"error: {len(exc.lines)} runs failed:\n" + "".join(f"  {line}\n" for line in exc.lines))
                raise _Failed() from None
            text = _write(args, folder, runs, started, load_average)
    except _Failed:
        return 1
    if args.readme:
        write_readme(args.readme, out / "reproduce-astraea.json")
    print(text)
    say(f"reproduce astraea: {time.perf_counter() - started:.0f} s; written {out / 'reproduce-astraea.md'}, .png, .json",
        args.quiet)
    return 0


class _Failed(Exception):
    """Some cells failed (already reported): the output folder is discarded, exit 1."""


def _write(args, out: Path, runs: dict, started: float, load_average) -> str:
    lines, curves = build_table(runs, args.seed)
    table = ablation_table(runs)
    elapsed = time.perf_counter() - started
    summary = {
        "paper": PAPER, "date": time.strftime("%Y-%m-%d"), "elapsed_s": elapsed, "load_average": list(load_average),
        "load_average_end": list(os.getloadavg()), "cpus": os.cpu_count(), "executor": args.executor,
        "workers": args.workers or os.cpu_count(), "seed": args.seed, "n": args.n, "rows": lines, "curves": curves,
        "venus_rows": [{"policy": r["policy"], "avg_jct": r["avg_jct"]} for r in runs["venus"][0]["doc"]["rows"]],
        "policies": {"main": list(MAIN_POLICIES), "lease": list(LEASE_POLICIES), "nodes": list(SIZE_POLICIES)},
        "ablations": {"table": table, "answers": ablation_answers(table)},
        "agree_rel": AGREE_REL, "sweeps": {name: str(out / "sweeps" / f"{name}.yaml") for name in runs},
        "runs": {name: [str(item["dir"]) for item in items] for name, items in runs.items()},
        "dropped_choices": sum(r.get("dropped_choices") or 0 for items in runs.values() for item in items
                               for r in item["doc"]["rows"]),
        "complete": True, "argv": command_line(),
    }
    text = markdown(summary)
    write_text_atomic(out / "reproduce-astraea.json", json.dumps(summary, indent=2, default=str) + "\n")
    write_text_atomic(out / "reproduce-astraea.md", text)
    figure(summary, out / "reproduce-astraea.png")
    return text
