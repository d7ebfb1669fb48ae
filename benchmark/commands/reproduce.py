"""`benchmark reproduce`: one sub-command per paper; `reproduce atlas`, the ATLAS paper's scheduling table
beside ours, in one command.

(`reproduce astraea` has its own command module, benchmark.commands.reproduce_astraea, and `reproduce
rlscheduler` and `reproduce hpc` share benchmark.commands.reproduce_swf; each experiment is a module
of benchmark.experiments.)

`reproduce atlas` runs, for each objective (total completion, max stretch, makespan), `benchmark run
--task scheduling` twice on the same jobs — once under `--protocol paper` (the reference code's rules,
leaks labelled) and once under the honest default — and prints a three-column table: the
paper's figure, the paper's protocol on this dataset, the honest protocol on this dataset, with
the relative distance to the paper and one line per row saying where each difference comes
from (protocol leak / data / algorithm / sample). Writes OUT/reproduce-atlas.md, .png and
.json, the six run folders under OUT/, and with `--readme FILE` the block between
`<!-- reproduce-atlas:start -->` and `<!-- reproduce-atlas:end -->`. See docs/reproduce-atlas.md.
OUT is written aside and renamed into place when complete (atlas_data.outputs). Here: the argument
handling; the experiment is benchmark.experiments.atlas.

Jobs: `--data DS` (a dataset folder or a named dataset; default `paper-scale`, the synthetic
generator at 120,000 jobs, whose test split holds the paper's sample sizes), or `--jobs FILE`
(any jobs table, with `predicted_duration` or `--noise σ`). May import benchmark.experiments,
benchmark.options, benchmark.progress, benchmark.results, benchmark.tasks and atlas_data.
"""

from __future__ import annotations

import time
from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.experiments.atlas import END, ISO, META, START, Settings, replace_block, reproduce
from benchmark.options import seed as seed_type
from benchmark.progress import say
from benchmark.results import check_readme_block
from benchmark.tasks.inputs import noise_level


def register(subparsers) -> None:
    from benchmark.commands import reproduce_astraea, reproduce_swf

    command = subparsers.add_parser("reproduce", help="reproduce a paper's tables and figures beside ours")
    papers = command.add_subparsers(dest="paper", metavar="PAPER", parser_class=type(command))
    papers.required = True
    astraea = papers.add_parser("astraea", help="every figure of the ASTRAEA fairness paper beside ours (Venus-like, "
                                "Philly, lease and cluster-size curves; docs/reproduce-astraea.md)")
    reproduce_astraea.add_arguments(astraea)
    astraea.set_defaults(handler=reproduce_astraea.reproduce)
    rls = papers.add_parser("rlscheduler", help="RLScheduler's FCFS / SJF bounded-slowdown table (with and without "
                            "backfilling) on the SDSC-SP2 and HPC2N logs, or any SWF log (docs/reproduce-rlscheduler.md)")
    reproduce_swf.add_rlscheduler_arguments(rls)
    rls.set_defaults(handler=reproduce_swf.reproduce_rlscheduler)
    hpc = papers.add_parser("hpc", help="FCFS, SJF, EASY (requested times, oracle, a learned p̂), EASY++ and "
                            "conservative backfilling on the shipped HPC logs or any SWF log, scored by bounded "
                            "slowdown and the cluster task's metrics (docs/hpc-backfilling.md)")
    reproduce_swf.add_hpc_arguments(hpc)
    hpc.set_defaults(handler=reproduce_swf.reproduce_hpc)
    parser = papers.add_parser("atlas", help="the ATLAS / LASched scheduling table: paper protocol beside the honest one")
    parser.add_argument("--data", help="dataset folder or name (default paper-scale; also: default)")
    parser.add_argument("--jobs", metavar="FILE|TRACE",
                        help="a jobs table, or a shipped trace such as elasticflow:cluster05 or philly:<vc>, instead "
                             "of a dataset (needs predicted_duration or --noise; see docs/real-traces.md)")
    parser.add_argument("--noise", type=noise_level, help="with --jobs: p̂ = p·exp(σZ) with this σ")
    parser.add_argument("--predictor", default=META, help=f"p̂ for the Meta rows (default {META})")
    parser.add_argument("--iso-predictor", default=ISO, help=f"p̂ for the Iso rows (default {ISO})")
    parser.add_argument("--seed", type=seed_type, default=0, help="predictor fit and noise seed (default 0)")
    parser.add_argument("--sample-seed", type=seed_type, default=42, help="paper-protocol sample seed (default 42, the paper's)")
    parser.add_argument("--output", default="results/reproduce-atlas", help="output folder (default results/reproduce-atlas)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the reproduce-atlas block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")
    parser.set_defaults(handler=_reproduce)


def _reproduce(args) -> int:
    started = time.perf_counter()
    if args.jobs and args.data:
        raise InputError("give either --jobs or --data, not both", where="--jobs/--data")
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    check_output_folder(args.output, "reproduce")  # before any computation
    if args.noise is not None:
        from benchmark.tasks.inputs import check_noise_levels

        check_noise_levels([args.noise])  # 0 <= σ <= MAX_NOISE, as in `run`
    if args.jobs:
        data_dir = None
        source = f"the jobs table {args.jobs}"
        roles = {"meta": "column" if args.noise is None else f"noise:{args.noise:g}"}
        roles["iso"] = roles["meta"]
    else:
        if args.noise is not None:
            raise InputError("--noise applies to --jobs only (a dataset gets learned p̂)", where="--noise")
        from atlas_data.named import resolve_dataset

        name = args.data or "paper-scale"
        say(f"dataset: {name}", args.quiet)
        data_dir = resolve_dataset(name, quiet=True)
        source = f"the `{name}` dataset" if not args.data or not Path(args.data).exists() else f"the dataset {args.data}"
        roles = {"meta": args.predictor, "iso": args.iso_predictor}
    settings = Settings(jobs=args.jobs, data_dir=data_dir, noise=args.noise, predictor=args.predictor,
                        iso_predictor=args.iso_predictor, seed=args.seed, sample_seed=args.sample_seed, quiet=args.quiet)
    out = Path(args.output)
    with output_folder(out, "reproduce") as folder:  # the six runs and the table appear together, or not at all
        text, elapsed = reproduce(settings, folder, source, roles, started)
    if args.readme:
        replace_block(Path(args.readme), text)
    print(text)
    say(f"reproduce atlas: {elapsed:.0f} s; written {out / 'reproduce-atlas.md'}, .png, .json", args.quiet)
    return 0
