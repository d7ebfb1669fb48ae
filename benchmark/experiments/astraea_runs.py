"""The runs of `benchmark reproduce astraea`: the paper's figures and the settings of every sweep, the
sweep configs (OUT/sweeps/*.yaml) and their cells run on one executor, and `Run`, one cell's results
read back with the diagnostics the table's why-lines quote.

Every simulation is a cell of a `benchmark sweep` config written to OUT/sweeps/, so each part can be
re-run alone, on Dask too (`benchmark sweep OUT/sweeps/lease.yaml --executor dask`):

- `venus.yaml`: `run --task fairness --scenario venus`, ASTRAEA and the paper's baselines, 900 s lease;
- `philly.yaml`: `--scenario philly`, the same policies, one cell per Philly cluster size (default
  the paper's 210 × 8 and a contended 64 × 8, because the published Philly list never fills 210 × 8);
- `lease.yaml`: `astraea` on the Venus-like scenario, one cell per lease;
- `nodes.yaml`: `astraea` and `tiresias-l` on the Venus-like scenario, one cell per cluster size;
- `variants.yaml`: the Venus-like main run again under the other metric definitions, those of the
  paper's simulator (ρ_job from the submit time, tenant-loss windows on the quota, eq16; the
  defaults are the first tick and the demand-aware eq8 share), to show how much of each difference
  is the definition rather than the schedule;
- `ablations.yaml`, `ablation-noise.yaml`, `ablation-load.yaml`, `ablation-draws.yaml`,
  `ablation-philly.yaml`: the runs behind "Why the ranking differs" (benchmark.experiments.astraea_ablations).

Part of the experiments package (benchmark.experiments): may import benchmark.sweeps, benchmark.tasks,
benchmark.options, benchmark.progress, benchmark.results and atlas_data, schedulers; never
benchmark.commands or benchmark.cli.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import pandas as pd

from benchmark.options import MAX_SEED
from benchmark.progress import Progress
from benchmark.results import write_text_atomic
# Cluster-side names, imported in this one place only (the simulator's layout may move under them).
from benchmark.tasks.fairness import LEASE_S, philly_claims  # noqa: F401 - astraea's table reads them from here
from schedulers.cluster.scenarios import (PAPER_PHILLY_CLAIMS, PAPER_VENUS, PHILLY_NODES, PREDICTION_SIGMA,  # noqa: F401
                                         SCENARIOS, VENUS_NODES)

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


@dataclass(frozen=True)
class Settings:
    """What `benchmark reproduce astraea` runs: its options, checked (docs/cli.md). `leases`, `sizes` and
    `philly_nodes` are lists of distinct numbers; `n` None means every job; `workers` None the CPU count."""

    seed: int = 0
    n: int | None = None
    venus_nodes: int = VENUS_NODES
    leases: list = field(default_factory=lambda: [float(x) for x in DEFAULT_LEASES.split(",")])
    sizes: list = field(default_factory=lambda: [int(x) for x in DEFAULT_SIZES.split(",")])
    philly_nodes: list = field(default_factory=lambda: [int(x) for x in DEFAULT_PHILLY_NODES.split(",")])
    executor: str = "local"
    address: str | None = None
    workers: int | None = None
    quiet: bool = False



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

