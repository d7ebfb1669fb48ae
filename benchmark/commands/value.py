"""`benchmark value`: the value of prediction on many real jobs tables at once, one table of verdicts.

For each jobs table (`--jobs`, default every shipped real GPU-cluster table: Philly, openb and the ten
ElasticFlow clusters) and each objective, one ordinary scheduling run on its test part with the
learned p̂ and its controls (`benchmark run --task scheduling --jobs T --predictor M --controls`,
printed before it runs, so any line can be repeated by hand); then the value-of-prediction record of
each run (benchmark.value) in one table, and per objective: on how many tables the best policy on p̂
does at least as well as the best blind one, the mean value, and the largest ratio of the best policy
on p̂ to the best blind one. Writes OUT/value.json and OUT/value.md beside the runs' folders;
`--readme FILE` rewrites the block between `<!-- value:start -->` and `<!-- value:end -->`
(docs/results.md). A table that cannot be scheduled is exit 2 before any run, named with the problem.


The argument handling and the running of the command lines; the runs' command lines, the table and
its verdicts are benchmark.experiments.value. May import benchmark.cli (in-process runs),
benchmark.commands.run (MLflow logging), benchmark.experiments, benchmark.results, benchmark.tasks,
benchmark.tracking, atlas_data and predictors.
"""

from __future__ import annotations

import shlex
import sys
import time
from pathlib import Path

from benchmark.experiments.value import END, OBJECTIVES, SHIPPED_TABLES, START, records_of, run_lines, write_outputs


def register(subparsers) -> None:
    parser = subparsers.add_parser("value", help="the value of prediction on many real jobs tables, one table of verdicts")
    parser.add_argument("--jobs", default=",".join(SHIPPED_TABLES), metavar="T1,T2,...",
                        help="jobs tables (shipped trace names or files, as `run --jobs` takes; default: every shipped "
                             "real GPU-cluster table, Philly, openb and the ten ElasticFlow clusters)")
    parser.add_argument("--predictor", default="lgbm-meta", metavar="METHOD",
                        help="the learned p̂, fitted on each table's train/validation part (default lgbm-meta)")
    parser.add_argument("--objectives", default=",".join(OBJECTIVES), metavar="O1,O2",
                        help="total_completion and/or max_stretch (default both)")
    parser.add_argument("--output", default="results/value", help="output folder (default results/value)")
    parser.add_argument("--readme", metavar="FILE", help="rewrite the value block of this Markdown file (docs/results.md)")
    parser.add_argument("--quiet", action="store_true", help="only the final table")
    parser.add_argument("--no-mlflow", action="store_true", help="do not log the runs to MLflow")
    parser.set_defaults(handler=_value)


def _tables(text: str) -> list[str]:
    from atlas_data.errors import InputError

    tables = [t.strip() for t in text.split(",")]
    if not all(tables):
        raise InputError(f"an empty name in {text!r}", where="--jobs")
    if len(set(tables)) < len(tables):
        raise InputError(f"a table named twice in {text!r}", where="--jobs")
    return tables


def _objectives(text: str) -> list[str]:
    from atlas_data.errors import InputError

    chosen = [o.strip() for o in text.split(",")]
    wrong = [o for o in chosen if o not in OBJECTIVES]
    if wrong or not chosen or len(set(chosen)) < len(chosen):
        raise InputError(f"{text!r}: give total_completion and/or max_stretch, each once", where="--objectives")
    return chosen


def _value(args) -> int:
    from atlas_data.outputs import check_output_folder, output_folder
    from benchmark.cli import StepFailed
    from benchmark.results import check_readme_block, replace_readme_block
    from benchmark.tasks.inputs import resolve_names

    tables, objectives = _tables(args.jobs), _objectives(args.objectives)
    resolve_names(predictors=args.predictor, one_predictor=True)  # an unknown method: exit 2 before any run
    from predictors.methods import REFERENCE_METHODS

    if args.predictor in REFERENCE_METHODS or args.predictor.startswith("noise:"):
        from atlas_data.errors import InputError

        raise InputError(f"{args.predictor} p̂ reads the true sizes: the value of prediction is measured on a learned "
                         "method (e.g. lgbm-meta)", where="--predictor")
    if args.readme:
        check_readme_block(Path(args.readme), START, END)
    out = Path(args.output)
    check_output_folder(out, "value")
    if not args.no_mlflow:
        from benchmark.tracking import preflight, tracking_uri

        preflight(tracking_uri())  # a store the logging would fail on is exit 2 now, not after every run
    started = time.perf_counter()
    try:  # the runs write inside a temporary sibling of OUT, renamed to OUT when the last one is done
        with output_folder(out, "value") as folder:
            entries = _run_tables(args, tables, objectives, folder, out)
            text = write_outputs(folder, entries, args.predictor, tables, objectives, started)
    except StepFailed as failed:  # the run printed its error; the partial folder is gone
        return failed.code
    if not args.no_mlflow:  # each run logged from its final place, as the demo does
        from benchmark.commands.run import log_to_mlflow

        for *_, argv in run_lines(args.predictor, tables, objectives, out):
            log_to_mlflow(argv)
    print(text)
    if args.readme:
        replace_readme_block(Path(args.readme), START, END, text)
    return 0


def _run_tables(args, tables: list[str], objectives: list[str], folder: Path, out: Path) -> list[tuple[str, str, dict]]:
    """Run every table × objective into `folder` (each printed as it writes into `out`, where it can be
    repeated by hand); (table, objective, value record) of each."""
    from benchmark.cli import run_step

    entries = []
    for (i, table, objective, sub, argv), (*_, shown) in zip(run_lines(args.predictor, tables, objectives, folder),
                                                             run_lines(args.predictor, tables, objectives, out)):
        if not args.quiet:
            sys.stderr.write(f"[value] {i + 1}/{len(tables)} {table} {objective}: benchmark {shlex.join(shown)}\n")
        run_step(argv + ["--no-mlflow"])  # logged once in its final place (_value)
        entries.extend((table, objective, record) for record in records_of(sub, args.predictor))
    return entries
