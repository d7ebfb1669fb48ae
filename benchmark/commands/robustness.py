"""`benchmark robustness --task fairness`: do the GPU-cluster policies that read p̂ gain anything from it?

The argument handling only: every option is checked here, before any work (scenario and trace names,
the predictor, σs, controls, policies and references, cluster sizes), and the experiment is
benchmark.experiments.robustness (the workloads, the p̂ sources — noise, the learned p̂ of a trace,
the no-information controls — the runs, the tables and the figure; its docstring says what each is).
Writes OUT/robustness.csv (one row per workload × policy × source), robustness_runs.csv,
robustness.md, robustness.json and robustness.png (+ .svg), and with `--readme FILE` the block between
`<!-- robustness:start -->` and `<!-- robustness:end -->`. See docs/fairness.md "Do predictions help?
Robustness curves".

May import benchmark.experiments, benchmark.options, benchmark.progress, benchmark.results,
benchmark.tasks, atlas_data, predictors and schedulers.
"""

from __future__ import annotations

import time
from pathlib import Path

from atlas_data.errors import InputError
from benchmark.experiments.robustness import (CONTROLS, DEFAULT_JOBS, DEFAULT_JOBS_NODES, DEFAULT_NOISE,
                                              DEFAULT_PHILLY_NODES, DEFAULT_REPEATS, DEFAULT_SCENARIOS, END,
                                              MAX_REPEATS, REFERENCES, START, Settings, measure, prepare_workloads,
                                              readme_block, write_outputs)

TASKS = ("fairness",)


def register(subparsers) -> None:
    parser = subparsers.add_parser("robustness", help="robustness curves: each p̂ policy against noise and no-information controls")
    parser.add_argument("--task", choices=TASKS, default="fairness",
                        help="the task (default fairness; the scheduling task draws its curve with "
                             "`run --task scheduling --noise σ1,σ2,...`)")
    parser.add_argument("--scenario", default=DEFAULT_SCENARIOS,
                        help=f"scenarios, comma-separated: venus, philly (default {DEFAULT_SCENARIOS}; none: no scenario)")
    parser.add_argument("--jobs", default=DEFAULT_JOBS,
                        help=f"real traces, comma-separated, as `run --task fairness --jobs`: a shipped trace name "
                             f"(philly, philly:<vc>, elasticflow:<cluster>) or a jobs file with feature columns; its "
                             f"test part is scheduled, with learned p̂ beside the noise and the controls (default "
                             f"{DEFAULT_JOBS}; none: no trace)")
    parser.add_argument("--predictor", help="the predictor of the learned p̂ on the --jobs traces, fitted on their "
                                            "train/validation part (default lgbm-meta)")
    parser.add_argument("--noise", default=DEFAULT_NOISE, help=f"noise levels σ, p̂ = p·exp(σZ) (default {DEFAULT_NOISE})")
    parser.add_argument("--controls", default=",".join(CONTROLS),
                        help=f"no-information p̂ controls, comma-separated: {', '.join(CONTROLS)} (default all)")
    parser.add_argument("--policies", help="p̂ policies, comma-separated (default: every cluster policy that needs p̂)")
    parser.add_argument("--references", default=",".join(REFERENCES),
                        help=f"policies without p̂ drawn as flat lines (default {','.join(REFERENCES)}; none: no references)")
    parser.add_argument("--venus-nodes", type=int, help="Venus-like cluster, nodes of 8 GPUs (default the scenario's 100)")
    parser.add_argument("--philly-nodes", type=int, default=DEFAULT_PHILLY_NODES,
                        help=f"Philly cluster, nodes of 8 GPUs (default {DEFAULT_PHILLY_NODES}: the published trace contends there, "
                             "not on the paper's 210)")
    parser.add_argument("--jobs-nodes", type=int, default=DEFAULT_JOBS_NODES,
                        help=f"cluster of the --jobs traces, nodes of 8 GPUs (default {DEFAULT_JOBS_NODES}, as "
                             "`benchmark demo`)")
    from benchmark.options import integer, job_count
    from benchmark.options import seed as seed_type

    parser.add_argument("--n", type=job_count, help="jobs per workload: N consecutive jobs from a seeded start (of a "
                                                    "trace: of its test part; default all)")
    parser.add_argument("--repeats", type=integer(1, MAX_REPEATS, "a repeat count"), default=DEFAULT_REPEATS,
                        help=f"independent draws of the noise and of the random and permuted controls, averaged "
                             f"(default {DEFAULT_REPEATS}; at most {MAX_REPEATS})")
    parser.add_argument("--seed", type=seed_type, default=0,
                        help="scenario, noise, control, sample and predictor-fit seed (default 0)")
    parser.add_argument("--output", default="results/robustness-fairness",
                        help="output folder (default results/robustness-fairness)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the robustness block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")
    parser.set_defaults(handler=run)



# ----- options ----------------------------------------------------------------------------------
def _none_or_list(text: str, what: str) -> list[str]:
    from benchmark.tasks.inputs import csv_list

    return [] if str(text).strip().lower() == "none" else csv_list(text, what)


def _check_traces(args) -> tuple[list[str], str | None]:
    """(--jobs traces, the predictor of their learned p̂ or None): names checked, nothing read beyond
    the shipped trace's table (cached) — the predictor is fitted later, in `prepare`."""
    from atlas_data.adapters import is_shipped_trace_name, shipped_trace
    from benchmark.tasks.inputs import DEFAULT_PREDICTOR, csv_list
    from predictors.methods import REFERENCE_METHODS, check_method_name

    traces = _none_or_list(args.jobs, "jobs")
    for spec in traces:
        if Path(spec).exists():
            continue  # a jobs file: read, with its feature columns, by the fairness task's loader
        if not is_shipped_trace_name(spec):
            raise InputError(f"unknown trace '{spec}': neither a shipped trace (philly, philly:<vc>, elasticflow, "
                             "elasticflow:<cluster>, openb) nor an existing jobs file", where="--jobs")
        shipped_trace(spec)  # an unknown VC or cluster: its own message, listing the valid ones
    if args.predictor is not None and not traces:
        raise InputError("applies to the --jobs traces only: a scenario has no features to learn p̂ from (it brings "
                         "its own synthetic p̂); give --jobs TRACE", where="--predictor")
    if not traces:
        return traces, None
    predictors = csv_list(args.predictor, "predictor") if args.predictor is not None else [DEFAULT_PREDICTOR]
    if len(predictors) != 1:
        raise InputError(f"one predictor per run, got {len(predictors)} ({args.predictor!r})", where="--predictor")
    check_method_name(predictors[0], where="--predictor")
    if predictors[0] in REFERENCE_METHODS:
        raise InputError(f"'{predictors[0]}' reads the true sizes (p̂ = p): that is the σ = 0 point, not a learned p̂",
                         where="--predictor")
    return traces, predictors[0]


def _check(args):
    """Every option, before any work: (scenarios, traces, predictor, σs, controls, p̂ policies, references)."""
    from benchmark.tasks.config import MAX_NODES
    from benchmark.tasks.inputs import csv_list, noise_level, resolve_policies
    from schedulers.cluster.scenarios import SCENARIOS
    from schedulers.policy import get_policy, policy_names

    scenarios = _none_or_list(args.scenario, "scenario")
    for name in scenarios:
        if name not in SCENARIOS:
            raise InputError(f"unknown scenario '{name}' (choose from {', '.join(sorted(SCENARIOS))}, or none)",
                             where="--scenario")
    sigmas = csv_list(args.noise, "noise", noise_level)
    controls = csv_list(args.controls, "controls")
    for name in controls:
        if name not in CONTROLS:
            raise InputError(f"unknown control '{name}' (choose from {', '.join(CONTROLS)})", where="--controls")
    if not sigmas:
        raise InputError("give at least one noise level", where="--noise")
    for option, value in (("--venus-nodes", args.venus_nodes), ("--philly-nodes", args.philly_nodes),
                          ("--jobs-nodes", args.jobs_nodes)):
        if value is not None and not (1 <= value <= MAX_NODES):
            raise InputError(f"must be from 1 to {MAX_NODES:,} nodes, got {value}", where=option)

    def resolve(text, option):
        return resolve_policies(text, "cluster", option)

    if args.policies is not None:
        policies = resolve(args.policies, "--policies")
        blind = [p for p in policies if not get_policy(p, "cluster").needs_prediction]
        if blind:
            raise InputError(f"policy '{blind[0]}' reads no p̂ (name it in --references)", where="--policies")
    else:
        policies = [p for p in policy_names("cluster") if get_policy(p, "cluster").needs_prediction]
    references = resolve(args.references, "--references") if args.references.strip().lower() != "none" else []
    predictive = [p for p in references if get_policy(p, "cluster").needs_prediction]
    if predictive:
        raise InputError(f"policy '{predictive[0]}' reads p̂: a reference reads none (name it in --policies)",
                         where="--references")
    both = [p for p in references if p in policies]
    if both:
        raise InputError(f"policy '{both[0]}' is in --policies and --references", where="--references")
    traces, predictor = _check_traces(args)
    if not scenarios and not traces:
        raise InputError("no workload: give a scenario (--scenario) or a trace (--jobs)", where="--scenario")
    return scenarios, traces, predictor, sigmas, controls, policies, references


def run(args) -> int:
    from atlas_data.outputs import check_output_folder, output_folder
    from benchmark.progress import say
    from benchmark.results import check_readme_block, replace_readme_block

    started = time.perf_counter()
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    scenarios, traces, predictor, sigmas, controls, policies, references = _check(args)
    settings = Settings(scenarios=scenarios, traces=traces, predictor=predictor, sigmas=sigmas, controls=controls,
                        policies=policies, references=references, venus_nodes=args.venus_nodes,
                        philly_nodes=args.philly_nodes, jobs_nodes=args.jobs_nodes, n=args.n, repeats=args.repeats,
                        seed=args.seed, task=args.task, quiet=args.quiet)
    out = Path(args.output)
    check_output_folder(out, "robustness")  # before any simulation
    prepared = prepare_workloads(settings)  # every workload read and checked before the first simulation
    summary, frame, runs = measure(settings, prepared, started)
    with output_folder(out, "robustness") as folder:  # every file appears together, or none
        text = write_outputs(folder, summary, frame, runs)
    if args.readme:
        replace_readme_block(Path(args.readme), START, END, readme_block(out / "robustness.json"))
    print(text)
    say(f"robustness: {time.perf_counter() - started:.0f} s; written {out / 'robustness.csv'}, .md, .json, .png", args.quiet)
    return 0
