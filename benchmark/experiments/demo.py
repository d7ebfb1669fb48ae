"""The experiment of `benchmark demo`, the main job on the embedded default data: its steps and their summary.

`demo_steps(out)` is every step as an ordinary `benchmark run` (or `data`) command line: besides the
ATLAS dataset, the demo predicts durations on the shipped real traces (PREDICTION_TRACES) and
schedules their test parts with the learned p̂ (SCHEDULING_TRACES, FAIRNESS_TRACE), then runs the
contended cluster (`contended_steps`). `summary_markdown(out)` reads the steps' results back into the
full tables (the `demo-results` block of docs/results.md) and `headline_markdown(out)` into the few
rows of README.md's `demo-headline` block; `blocks_in` / `write_blocks` find and rewrite those blocks.

Part of the experiments package (benchmark.experiments): may import benchmark.experiments.value,
benchmark.markdown, benchmark.results, benchmark.value and atlas_data; never benchmark.commands or
benchmark.cli (the command runs the steps).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmark.markdown import markdown_table, text_cell
from benchmark.value import is_control


PREDICTORS = "lgbm-meta,isotonic,constant"
REAL_ARRIVALS = "elasticflow:cluster05"  # 3,629 real jobs with their real submit times (docs/real-traces.md)
PHILLY_SMALL_NODES = 64  # the paper's 210 x 8 never contends on the published Philly list (peak demand 1,199 GPUs)
# real traces: every prediction method on each (its own time-ordered 70/15/15 split), then their test
# parts scheduled with lgbm-meta p̂ learned on their train/validation parts; noise p̂ = p·exp(σZ)
# (a robustness model that reads the true sizes) only on the first, for the robustness curve
PREDICTION_TRACES = ("philly", "elasticflow:cluster04", "elasticflow:cluster05", "openb")
SCHEDULING_TRACES = (REAL_ARRIVALS, "philly", "openb")
TRACE_PREDICTOR = "lgbm-meta"
# beside it on the real traces' single-machine runs: the ranking objective (predictors trained for the
# decision, docs/predictors.md), and every learned p̂'s controls (permuted, constant) for the value of prediction
DECISION_PREDICTOR = "lgbm-rank"
ROBUSTNESS_NOISE = "0,0.25,0.5,1,2"
FAIRNESS_TRACE = "philly"  # its test part: 12,338 jobs of 13 VCs, on PHILLY_SMALL_NODES x 8 GPUs


def slug(trace: str) -> str:
    """A trace name as a folder name: elasticflow:cluster05 -> elasticflow-cluster05."""
    return trace.replace(":", "-")


def demo_steps(out: Path) -> list[tuple[str, list[str]]]:
    """(title, argv) of every step, in order."""
    ds = out / "dataset"
    steps: list[tuple[str, list[str]]] = [
        ("ATLAS dataset from synthetic PAI-2020 raw tables (30,000 jobs, seed 0)",
         ["data", "build", "--source", "synthetic", "--jobs", "30000", "--seed", "0", "--out", str(ds)]),
        ("describe the dataset", ["data", "describe", str(ds)]),
        ("predictors: every LASched method, fit on train, calibrated on validation, scored on test",
         ["run", "--task", "prediction", "--data", str(ds), "--output", str(out / "prediction")]),
    ]
    for trace in PREDICTION_TRACES:
        steps.append((
            f"predictors on the real trace {trace}: submit-time features of its own columns, its own 70/15/15 split",
            ["run", "--task", "prediction", "--jobs", trace, "--output", str(out / f"prediction-{slug(trace)}")],
        ))
    for objective in ("total_completion", "max_stretch", "makespan"):
        steps.append((
            f"scheduling / {objective} on the ATLAS test split with learned p̂ ({PREDICTORS})",
            ["run", "--task", "scheduling", "--objective", objective, "--data", str(ds), "--predictor", PREDICTORS,
             "--output", str(out / f"atlas-{objective}")],
        ))
    for trace in SCHEDULING_TRACES:
        noise = ["--noise", ROBUSTNESS_NOISE] if trace == REAL_ARRIVALS else []
        for objective in ("total_completion", "max_stretch", "makespan"):
            single = objective != "makespan"
            predictors = f"{TRACE_PREDICTOR},{DECISION_PREDICTOR}" if single else TRACE_PREDICTOR
            steps.append((
                f"scheduling / {objective} on the test part of the real trace {trace} (real arrivals), p̂ = "
                f"{predictors} learned on its train/validation part" + (" and noise p̂ = p·exp(σZ)" if noise else "")
                + (", with each learned p̂'s controls (permuted, constant)" if single else ""),
                ["run", "--task", "scheduling", "--objective", objective, "--jobs", trace, "--predictor", predictors,
                 *noise, *(["--controls"] if single else []), "--output", str(out / f"trace-{slug(trace)}-{objective}")],
            ))
    steps.append((f"fairness: ASTRAEA and the baselines on the test part of the real {FAIRNESS_TRACE} trace "
                   f"({PHILLY_SMALL_NODES} x 8 GPUs, tenant = VC, p̂ = {TRACE_PREDICTOR} learned on its train/validation part)",
                  ["run", "--task", "fairness", "--jobs", FAIRNESS_TRACE, "--predictor", TRACE_PREDICTOR,
                   "--nodes", str(PHILLY_SMALL_NODES), "--output", str(out / "fairness-trace")]))
    steps.append(("fairness: the Venus-like scenario of the ASTRAEA paper (100 x 8 GPUs, 16 tenants)",
                  ["run", "--task", "fairness", "--scenario", "venus", "--output", str(out / "fairness-venus")]))
    steps.append(("fairness: the paper's Philly setup on the real Philly trace (busiest two weeks, 210 x 8 GPUs, "
                  "quota ∝ requested GPUs per VC)",
                  ["run", "--task", "fairness", "--scenario", "philly", "--output", str(out / "fairness-philly")]))
    steps.append((f"fairness: the same Philly snapshot on {PHILLY_SMALL_NODES} x 8 GPUs, where the jobs contend",
                  ["run", "--task", "fairness", "--scenario", "philly", "--nodes", str(PHILLY_SMALL_NODES),
                   "--output", str(out / "fairness-philly-small")]))
    steps.extend(contended_steps(out))
    return steps


def step_chains(argvs: list[list[str]]) -> list[list[int]]:
    """The steps (indices into `argvs`) that must run in order in one process: the longest chain first
    (it bounds the demo's time), then the others in step order (so the output, shown in step order,
    keeps moving).

    A shipped trace's fits are memoised in the process (benchmark.tasks.traces: the Philly lgbm-meta
    fit serves its prediction, scheduling and fairness steps), so the steps that fit on one `--jobs`
    trace form a chain (a step with p̂ = p fits nothing: a chain of its own, off the longest one);
    the ATLAS dataset's steps follow its build (they read it, and its on-disk cache of fitted p̂).
    Every other step is a chain of its own. Chains share nothing, so `benchmark demo` runs them in
    parallel processes with the same results as one after the other."""
    chains: dict[str, list[int]] = {}
    for index, argv in enumerate(argvs):
        if "--jobs" in argv and argv[0] == "run" and _fits_on_trace(argv):
            key = "jobs:" + argv[argv.index("--jobs") + 1]
        elif argv[0] == "data" or "--data" in argv:
            key = "dataset"
        else:
            key = f"step:{index}"
        chains.setdefault(key, []).append(index)
    weight = {key: sum(STEP_WEIGHT.get(_kind(argvs[i]), 1) for i in chain) for key, chain in chains.items()}
    longest = max(chains, key=lambda k: (weight[k], -chains[k][0]))
    return [chains[longest]] + [chain for key, chain in chains.items() if key != longest]


def _fits_on_trace(argv: list[str]) -> bool:
    """Whether a `run` step fits a predictor on the trace it reads: a prediction step, or one with a
    learned p̂ (any `--predictor` but EXACT_PREDICTOR)."""
    if argv[argv.index("--task") + 1] == "prediction":
        return True
    predictors = argv[argv.index("--predictor") + 1].split(",") if "--predictor" in argv else []
    return any(name != EXACT_PREDICTOR for name in predictors)


def _kind(argv: list[str]) -> str:
    """What a step's cost mostly depends on: its task, and the trace it reads."""
    task = argv[argv.index("--task") + 1] if "--task" in argv else argv[0]
    jobs = argv[argv.index("--jobs") + 1] if "--jobs" in argv else None
    return f"{task}:{jobs}" if jobs == FAIRNESS_TRACE else task


# rough costs of the steps (CPU seconds with warm caches, 2026-12-06) that pick the longest chain: the
# single-machine runs on the Philly test part (12,338 jobs; revised and Gittins policies on the engine) dominate
STEP_WEIGHT = {"data": 1, "prediction": 20, "scheduling": 5, f"scheduling:{FAIRNESS_TRACE}": 60, "fairness": 5,
               f"fairness:{FAIRNESS_TRACE}": 5}


# ----- the summary (docs/results.md) and the headline (README.md) ---------------------------------------
START, END = "<!-- demo-results:start -->", "<!-- demo-results:end -->"
HEADLINE_START, HEADLINE_END = "<!-- demo-headline:start -->", "<!-- demo-headline:end -->"


def blocks_in(readme: Path) -> list[tuple[str, str]]:
    """The demo's blocks that `readme` holds, each checked editable (exit 2 on none, or on a damaged one)."""
    from atlas_data.errors import InputError
    from benchmark.results import check_readme_block, readme_text

    text = readme_text(readme)
    present = [(start, end) for start, end in ((START, END), (HEADLINE_START, HEADLINE_END)) if start in text or end in text]
    if not present:
        raise InputError(f"no {START} ... {END} block to replace (nor a {HEADLINE_START} ... {HEADLINE_END} one)",
                         path=str(readme), where="--readme")
    for start, end in present:
        check_readme_block(readme, start, end)
    return present


def write_blocks(readme: Path, out: Path, summary: str) -> None:
    """Rewrite each of the demo's blocks `readme` holds: the full summary, the headline read from `out`."""
    from benchmark.results import replace_readme_block

    for start, end in blocks_in(readme):
        replace_readme_block(readme, start, end, summary if start == START else headline_markdown(out))


def replace_block(readme: Path, summary: str) -> None:
    from benchmark.results import replace_readme_block

    replace_readme_block(readme, START, END, summary)


# the README's headline: total completion with and without p̂ on the synthetic ATLAS data and on a real trace
HEADLINE_ROWS = (("fifo", None), ("rr", None), ("las", None), ("spjf", TRACE_PREDICTOR), ("sprpt", TRACE_PREDICTOR),
                 ("sprpt(revision='double')", TRACE_PREDICTOR), ("prr(revision='double')", TRACE_PREDICTOR),
                 ("gittins", TRACE_PREDICTOR), ("srpt", None))
HEADLINE_FAIRNESS = (("fifo", None), ("yarn-cs", None), ("themis", TRACE_PREDICTOR), ("astraea", None),
                     ("astraea-p", TRACE_PREDICTOR))


def _ratio(rows: list[dict] | None, policy: str, predictor: str | None) -> float | None:
    return next((r["ratio"] for r in rows or [] if r["policy"] == policy and r.get("predictor") == predictor), None)


def headline_markdown(out: Path, shown: Path | None = None) -> str:
    """The README's headline table, read from the demo's results like the full summary (summary_markdown)."""
    docs = {}
    for name in ("atlas-total_completion", "trace-philly-total_completion"):
        path = out / name / "results.json"
        docs[name] = json.loads(path.read_text()) if path.exists() else {}
    parts = [f"Produced by `benchmark demo` ({time.strftime('%Y-%m-%d')}) from `{shown or out}`. Total completion "
             "time ΣC_j / ΣC_j(SRPT) on one machine, online and preemptive (1 = optimal; SRPT knows the true sizes, "
             f"the other policies do not); `{TRACE_PREDICTOR}` p̂ is learned on the train/validation part only, never "
             "on the scheduled jobs.\n"]
    header = ["policy", "p̂"]
    for name, label in (("atlas-total_completion", "ATLAS default (synthetic PAI-2020), test split"),
                        ("trace-philly-total_completion", "real Philly trace, test part with its real arrivals")):
        n = docs[name].get("n_jobs")
        header.append(label if n is None else f"{label} ({n:,} jobs)")
    lines = [[policy, predictor or "–"] + [text_cell(_ratio(doc.get("rows"), policy, predictor)) for doc in docs.values()]
             for policy, predictor in HEADLINE_ROWS]
    parts.append(markdown_table(header, lines))
    value = value_markdown(out)
    if value:
        parts.append(value)
    fair = _rows(out / "fairness-trace")
    if fair:
        cells = [f"{policy}{'' if predictor is None else f' ({predictor} p̂)'} "
                 f"{next((r['sharing_loss_jobs'] for r in fair if r['policy'] == policy), float('nan')):.1%}"
                 for policy, predictor in HEADLINE_FAIRNESS if any(r["policy"] == policy for r in fair)]
        parts.append(f"GPU cluster, the same Philly test part on {PHILLY_SMALL_NODES} × 8 GPUs: sharing-loss jobs "
                     "(long-term fairness, ρ_job < 0.95): " + ", ".join(cells) + ".")
    return "\n\n".join(parts) + "\n"


def value_markdown(out: Path) -> str | None:
    """Where predictions help and where they do not: per real trace and objective, the best blind policy,
    the best policy on each learned p̂, the value of prediction and its controls (benchmark.value)."""
    from benchmark.experiments.value import VALUE_HEADER, value_cells

    lines = []
    for trace in SCHEDULING_TRACES:
        for objective in ("total_completion", "max_stretch"):
            path = out / f"trace-{slug(trace)}-{objective}" / "results.json"
            if not path.exists():
                continue
            for v in json.loads(path.read_text()).get("value_of_prediction") or []:
                lines.append(value_cells(trace, objective, v))
    if not lines:
        return None
    head = ("**The value of prediction on the real traces** (their test parts with real arrivals, one machine): "
            "value = (best blind − best with p̂) / (best blind − clairvoyant) — 1 = as good as knowing the sizes, 0 = no "
            "better than not predicting, below 0 = the predictions hurt; the controls are the same p̂ permuted among "
            "the jobs and made constant; *uses p̂*: how many policies do better on the p̂ than on both controls; "
            "*ceiling*: the value of Gittins on the exact size distribution of the test jobs in each p̂ octile "
            "(it reads true sizes: what this p̂ could be expected to give at best), *blind ceiling* the same with one bin "
            "([evaluation-protocol.md](docs/evaluation-protocol.md#the-value-of-prediction)); on every shipped "
            "table: `benchmark value` ([results.md](docs/results.md#the-value-of-prediction-on-every-shipped-table)).\n")
    return head + "\n" + markdown_table(VALUE_HEADER, lines)


def _rows(folder: Path) -> list[dict] | None:
    path = folder / "results.json"
    return json.loads(path.read_text())["rows"] if path.exists() else None


def summary_markdown(out: Path, shown: Path | None = None) -> str:
    """Markdown tables of the demo's results, read back from its output folders (named `shown`, default `out`)."""
    parts = [f"Produced by `benchmark demo` ({time.strftime('%Y-%m-%d')}); every number below is read from "
             f"`{shown or out}`."]
    rows = _rows(out / "prediction")
    if rows:
        parts.append("**Prediction** (ATLAS default dataset, synthetic; test split). Paper, real PAI: "
                     "LGBM-Meta Cov@25 51.2 %, Cov@50 70.6 %, RMSLE 0.871, Spearman 0.912.\n")
        parts.append(markdown_table(
            ["method", "RMSLE", "Cov@25", "Cov@50", "Cov@25 rec.", "Cov@50 rec.", "Spearman"],
            [[r["method"], text_cell(r.get("rmsle")), text_cell(r.get("cov25"), "{:.1%}"), text_cell(r.get("cov50"), "{:.1%}"),
              text_cell(r.get("cov25_recurrent"), "{:.1%}"), text_cell(r.get("cov50_recurrent"), "{:.1%}"),
              text_cell(r.get("spearman"))] for r in rows],
        ))
    real = _trace_prediction_table(out)
    if real:
        parts.append(real)
    prefixes = [("atlas", "ATLAS test split, learned p̂")] + [(f"trace-{slug(t)}", _trace_label(out, t)) for t in SCHEDULING_TRACES]
    value = value_markdown(out)
    if value:
        parts.append(value.replace("](docs/", "]("))  # docs/results.md links from inside docs/
    for prefix, label in prefixes:
        table = _scheduling_table(out, prefix)
        if table:
            parts.append(f"**Scheduling ratios** ({label}; 1 = optimal; makespan averaged over m = 5…100). "
                         "Paper, real PAI with LGBM-Meta: Meta-SPJF 1.106, RR 1.975, FIFO 5.372 (ΣC); "
                         "Iso-LPPT 1.574 (C_max); Meta-SPRPT 18.13, LAS 205.28 (max S).\n" if prefix == "atlas" else
                         f"**Scheduling ratios** ({label}; 1 = optimal).\n")
            parts.append(table)
    for folder, label in (("fairness-trace", f"test part of the real {FAIRNESS_TRACE} trace, {PHILLY_SMALL_NODES} × 8 GPUs, "
                                             f"p̂ = {TRACE_PREDICTOR} learned on its train/validation part"),
                          ("fairness-venus", "Venus-like scenario, 100 × 8 GPUs"),
                          ("fairness-philly", "real Philly trace, busiest two weeks, the paper's 210 × 8 GPUs"),
                          ("fairness-philly-small", f"real Philly trace, busiest two weeks, {PHILLY_SMALL_NODES} × 8 GPUs")):
        rows = _rows(out / folder)
        if rows:
            doc = json.loads((out / folder / "results.json").read_text())
            paper = doc.get("paper") or {}
            load = (doc.get("offered_load") or {})
            if load.get("load") is not None:
                label += f"; offered load {load['load']:.2f}, peak demand {load['peak_demand_gpus']:,.0f} GPUs"
            if paper:
                caption = "in brackets the ASTRAEA paper's Venus figures where it gives one."
            elif doc.get("paper_claims"):
                caption = "the paper gives no Philly percentages; its claims on our run: " + "; ".join(
                    f"{c['ours']} ({'holds' if c['holds'] else 'does not hold'})" for c in doc["paper_claims"]) + "."
            else:
                caption = "the paper has no figures for this trace."
            opts = doc.get("options") or {}
            caption += (f" ρ_job from {opts.get('job_rho_from', 'tick')}, tenant-loss windows of "
                        f"{opts.get('fair_window_s', 3600):,.0f} s on {opts.get('tenant_loss_share', 'eq8')}; "
                        f"dropped choices: {sum(r.get('dropped_choices') or 0 for r in rows)}.")
            floors = [rows[0].get(f"{m}_floor") for m in ("sharing_loss_jobs", "tenant_loss_intervals")]
            if None not in floors:  # the ideal schedule's values, the same in every row (docs/fairness.md#floors)
                caption += (f" An ideal schedule (every job started at its first tick, never preempted) scores "
                            f"{floors[0]:.1%} sharing-loss jobs and {floors[1]:.1%} tenant-loss intervals.")
            parts.append(f"**Fairness** ({label}); {caption}\n")
            parts.append(markdown_table(
                ["policy", "p̂", "sharing-loss jobs", "tenant-loss intervals", "avg JCT (s)", "avg slowdown", "preemptions",
                 "migrations", "overhead %", "completed"],
                [[r["policy"], _p_hat_cell(r), text_cell(r.get("sharing_loss_jobs"), "{:.1%}") + _paper(paper, r["policy"], "sharing_loss_jobs"),
                  text_cell(r.get("tenant_loss_intervals"), "{:.1%}") + _paper(paper, r["policy"], "tenant_loss_intervals"),
                  text_cell(r.get("avg_jct"), "{:,.0f}"), text_cell(r.get("avg_slowdown"), "{:.2f}"), text_cell(r.get("preemptions"), "{:.0f}"),
                  text_cell(r.get("migrations"), "{:.0f}"), text_cell(r.get("overhead_pct"), "{:.2f}"), text_cell(r.get("completed"), "{:.0f}")] for r in rows],
            ))
    parts.extend(contended_markdown(out))
    return "\n\n".join(parts) + "\n"


# ----- the contended GPU cluster: the Philly test part on fewer GPUs (docs/fairness.md#revising-outlived-predictions)
CONTENDED_NODES = 20  # the Philly test part asks 1.28 times what 20 x 8 GPUs serve over its submit span
CONTENDED_POLICIES = "astraea,astraea-p(revision=none),astraea-p,srtf-oracle"
EXACT_PREDICTOR = "oracle"  # p̂ = p, a reference: nothing fitted
CONTENDED_PREDICTORS = (EXACT_PREDICTOR, TRACE_PREDICTOR)  # exact p̂ (a reference), and learned p̂


def contended_steps(out: Path) -> list[tuple[str, list[str]]]:
    """The contended fairness runs: the Philly test part on CONTENDED_NODES x 8 GPUs, once per p̂."""
    return [(f"fairness: the test part of the real {FAIRNESS_TRACE} trace on {CONTENDED_NODES} x 8 GPUs, where the jobs "
             f"contend (offered load above 1), p̂ = {predictor}" + (" (exact: a reference)" if predictor == "oracle" else ""),
             ["run", "--task", "fairness", "--jobs", FAIRNESS_TRACE, "--predictor", predictor, "--nodes",
              str(CONTENDED_NODES), "--policies", CONTENDED_POLICIES, "--output", str(out / f"fairness-contended-{predictor}")])
            for predictor in CONTENDED_PREDICTORS]


def contended_markdown(out: Path) -> list[str]:
    """The contended runs' table (docs/results.md): each policy's avg slowdown with the share of
    ASTRAEA's avg-slowdown gap to SRTF-oracle it realises, (astraea − it) / (astraea − srtf-oracle)."""
    lines = []
    load = None
    for n_folder, predictor in enumerate(CONTENDED_PREDICTORS):
        folder = out / f"fairness-contended-{predictor}"
        rows = _rows(folder)
        if not rows:
            continue
        load = (json.loads((folder / "results.json").read_text()).get("offered_load") or {}).get("load", load)
        slowdown = {r["policy"]: r.get("avg_slowdown") for r in rows}
        base, best = slowdown.get("astraea"), slowdown.get("srtf-oracle")
        for r in rows:
            if n_folder and not r.get("predictor"):
                continue  # a policy without p̂ runs the same in each folder: shown once
            share = None
            if None not in (base, best, r.get("avg_slowdown")) and base > best:
                share = (base - r["avg_slowdown"]) / (base - best)
            lines.append([r["policy"], _p_hat_cell(r), text_cell(r.get("avg_slowdown"), "{:.2f}"), text_cell(share, "{:.0%}"),
                          text_cell(r.get("sharing_loss_jobs"), "{:.1%}"), text_cell(r.get("tenant_loss_intervals"), "{:.1%}"),
                          text_cell(r.get("preemptions"), "{:.0f}")])
    if not lines:
        return []
    caption = (f"**Fairness, contended** (test part of the real {FAIRNESS_TRACE} trace, {CONTENDED_NODES} × 8 GPUs"
               + ("" if load is None else f", offered load {load:.2f}") + "; p̂ = p (`oracle`, a reference) and "
               f"{TRACE_PREDICTOR}). Gap realised: (ASTRAEA − the policy) / (ASTRAEA − SRTF-oracle) in avg slowdown, "
               "per p̂ source; `astraea-p` revises an outlived p̂ by doubling it, `astraea-p(revision=none)` is the "
               "previous rule.\n")
    return [caption, markdown_table(["policy", "p̂", "avg slowdown", "gap realised", "sharing-loss jobs", "tenant-loss intervals",
                          "preemptions"], lines)]


def _trace_label(out: Path, trace: str) -> str:
    """A real-trace scheduling table's caption, with its size and load read from its results."""
    label = f"real trace `{trace}`, test part with its real arrivals, p̂ = {TRACE_PREDICTOR} learned on its train/validation part"
    path = out / f"trace-{slug(trace)}-total_completion" / "results.json"
    if path.exists():
        doc = json.loads(path.read_text())
        load = (doc.get("load") or {}).get("load")
        label = (f"real trace `{trace}`: its test part, {doc['n_jobs']:,} jobs with their real arrivals; p̂ = "
                 f"{TRACE_PREDICTOR} learned on its train/validation part")
        if any(str(k).startswith("noise:") for k in doc.get("p_hat_sources") or {}):
            label += "; noise p̂ = p·exp(σZ) reads the true sizes (robustness model only)"
        if load is not None:
            label += f"; single-machine load Σp/span = {load:.2f}"
    return label


def _trace_prediction_table(out: Path) -> str | None:
    """Methods × real traces: RMSLE · Cov@25 on each trace's test part, with each trace's features stated."""
    docs = {t: json.loads((out / f"prediction-{slug(t)}" / "results.json").read_text())
            for t in PREDICTION_TRACES if (out / f"prediction-{slug(t)}" / "results.json").exists()}
    if not docs:
        return None
    notes = []
    for trace, doc in docs.items():
        d = doc["dataset"]
        cols = d.get("feature_columns") or {}
        c = d["counts"]
        notes.append(f"`{trace}` {c['train']:,}/{c['val']:,}/{c['test']:,} jobs, feature columns: "
                     f"{', '.join(cols.get('categorical', []) + cols.get('numeric', []))}")
    head = ("**Prediction on real traces** (each trace's own time-ordered 70/15/15 split; features: its submit-time "
            "columns, calendar, and the history of jobs finished before the submit; cells: RMSLE · Cov@25 on the test "
            "part). " + "; ".join(notes) + ". For context, the ATLAS paper on real PAI (richer features: user, group, "
            "workload, GPU type, resources): LGBM-Meta RMSLE 0.871, Cov@25 51.2 %.\n")
    methods = list(dict.fromkeys(r["method"] for doc in docs.values() for r in doc["rows"]))
    lines = []
    for method in methods:
        cells = []
        for doc in docs.values():
            row = next((r for r in doc["rows"] if r["method"] == method), None)
            cells.append("–" if row is None else f"{text_cell(row.get('rmsle'))} · {text_cell(row.get('cov25'), '{:.1%}')}")
        lines.append([method] + cells)
    return head + "\n" + markdown_table(["method"] + [f"`{t}`" for t in docs], lines)


def _p_hat_cell(row: dict) -> str:
    """The p̂ column: the predictor, and for noise p̂ that it reads the true sizes."""
    predictor = row.get("predictor")
    if not predictor:
        return "–"
    return f"{predictor} (noise, uses true sizes)" if str(row.get("p_hat_source", "")).startswith("noise") else predictor


def _paper(paper: dict, policy: str, metric: str) -> str:
    value = (paper.get(policy) or {}).get(metric) if isinstance(paper.get(policy), dict) else None
    return f" ({value:.1%})" if isinstance(value, (int, float)) else ""


def _scheduling_table(out: Path, prefix: str) -> str | None:
    by_objective = {o: _rows(out / f"{prefix}-{o}") for o in ("total_completion", "max_stretch", "makespan")}
    if not any(by_objective.values()):
        return None
    cells: dict[tuple, dict] = {}
    for objective, rows in by_objective.items():
        for r in rows or []:
            if is_control(r.get("predictor")):
                continue  # the controls: in the value-of-prediction table
            key = (r["policy"], _p_hat_cell(r))
            cell = cells.setdefault(key, {})
            cell.setdefault(objective, []).append(r["ratio"])
    lines = []
    for (policy, predictor), cell in cells.items():
        lines.append([policy, predictor] + [
            text_cell(sum(cell[o]) / len(cell[o]) if o in cell else None) for o in ("total_completion", "max_stretch", "makespan")
        ])
    return markdown_table(["policy", "p̂", "ΣC_j / SRPT", "max S / S*", "C_max / bound"], lines)
