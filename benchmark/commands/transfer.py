"""`benchmark transfer`: does a duration predictor trained on other clusters work on a new one?

The argument handling only: the experiment, and what it measures per cluster (own fit against a fit
on the other clusters, on the cluster's test part), is benchmark.experiments.transfer. Writes
OUT/transfer.json, transfer.csv and transfer.md (a safe output folder, atlas_data.outputs);
`--readme FILE` rewrites the block between `<!-- transfer:start -->` and `<!-- transfer:end -->`.
See docs/real-traces.md#12-cross-cluster-transfer. May import benchmark.experiments,
benchmark.options, benchmark.progress, benchmark.results, benchmark.tasks, atlas_data and predictors.
"""

from __future__ import annotations

from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.experiments.transfer import END, START, measure, plain_table, write_outputs
from benchmark.options import MAX_JOBS, integer
from benchmark.options import seed as seed_type
from benchmark.progress import say
from benchmark.results import check_readme_block, replace_readme_block

TRACES = ("elasticflow", "philly")


def register(subparsers) -> None:
    parser = subparsers.add_parser("transfer", help="cross-cluster transfer of a duration predictor (own vs other clusters)")
    parser.add_argument("--trace", default="elasticflow", choices=TRACES,
                        help="shipped multi-cluster trace (default elasticflow: 10 clusters; philly: its VCs)")
    parser.add_argument("--clusters", help="clusters to evaluate, comma-separated (default: all)")
    parser.add_argument("--method", default="lgbm-meta", help="prediction method (default lgbm-meta)")
    parser.add_argument("--min-jobs", type=integer(0, MAX_JOBS, "a number of jobs"), default=None,
                        help="skip clusters with fewer jobs (default 100: their test part is too small to score); "
                             "with --clusters, a named cluster with fewer jobs is an error")
    parser.add_argument("--seed", type=seed_type, default=0, help="predictor seed (default 0)")
    parser.add_argument("--output", default="results/transfer", help="output folder (default results/transfer)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the transfer block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")
    parser.set_defaults(handler=_transfer)


def _clusters(args) -> list[str]:
    from atlas_data.adapters import shipped_trace

    jobs, _ = shipped_trace(args.trace)
    sizes = jobs["tenant"].value_counts()
    if args.clusters is not None:
        from benchmark.tasks.inputs import csv_list

        if not args.clusters.replace(",", "").strip():
            raise InputError(f"names no cluster (choose from {', '.join(sorted(sizes.index))})", where="--clusters")
        wanted = csv_list(args.clusters, "clusters")  # an empty item or a name given twice: exit 2
        for c in wanted:
            try:
                shipped_trace(f"{args.trace}:{c}")
            except InputError as exc:  # unknown name: exit 2 listing the valid ones, naming this option
                raise InputError(exc.problem, where="--clusters") from None
        names = [f"cluster{int(c):02d}" if args.trace == "elasticflow" and c.isdigit() else c for c in wanted]
        for i, name in enumerate(names):
            if name in names[:i]:  # `5` and `cluster05` are one cluster
                raise InputError(f"cluster '{name}' is given twice in {args.clusters!r}", where="--clusters")
            if args.min_jobs is not None and sizes.get(name, args.min_jobs) < args.min_jobs:
                raise InputError(f"cluster '{name}' has {sizes[name]} jobs, fewer than --min-jobs {args.min_jobs}",
                                 where="--clusters")
        return names
    return sorted(c for c in sizes.index if sizes[c] >= (100 if args.min_jobs is None else args.min_jobs))


def _transfer(args) -> int:
    from predictors.methods import check_method_name

    check_method_name(args.method)
    if args.method == "oracle":
        raise InputError("the oracle reads true sizes: nothing to transfer", where="--method")
    out = Path(args.output)
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    check_output_folder(out, "transfer")  # before any fitting (docs/results-and-tracking.md#safe-outputs)
    clusters = _clusters(args)
    if not clusters:
        least = 100 if args.min_jobs is None else args.min_jobs
        raise InputError(f"no cluster of {args.trace} has at least {least} jobs", where="--min-jobs")
    doc = measure(args.trace, clusters, args.method, args.seed, quiet=args.quiet)
    with output_folder(out, "transfer") as folder:  # the three files appear together, under OUT, or not at all
        text = write_outputs(folder, doc)
    if args.readme:
        replace_readme_block(Path(args.readme), START, END, text)
    print(plain_table(doc["rows"]))
    say(f"wrote {out} in {doc['seconds']:.0f} s", args.quiet)
    return 0
