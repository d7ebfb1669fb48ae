"""`benchmark reproduce rlscheduler` and `benchmark reproduce hpc`: the reproductions on Parallel
Workloads Archive logs (SWF), and the input-shaking options they share (`--shake`, `--shake-shift`,
`--shake-seed`).

`reproduce rlscheduler` puts RLScheduler's FCFS / SJF bounded-slowdown table (SC'20) beside ours, on
the two shipped logs or any SWF log (`--jobs FILE`; the table's Lublin logs are recognised by their
jobs); the experiment is benchmark.experiments.rlscheduler. Writes OUT/reproduce-rlscheduler.md and
results.json, and with `--readme FILE` the block between the `reproduce-rlscheduler` markers
(docs/reproduce-rlscheduler.md).

The argument handling only: options checked before any computation, then the experiment. May import
benchmark.experiments, benchmark.options, benchmark.progress, benchmark.results and atlas_data.
"""

from __future__ import annotations

import time
from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.experiments import rlscheduler as rls
from benchmark.options import integer
from benchmark.options import seed as seed_type
from benchmark.progress import say
from benchmark.results import check_readme_block, replace_readme_block


def add_shake_arguments(parser, cost: str) -> None:
    """--shake K, --shake-shift S, --shake-seed N (input shaking; `cost`: what a copy costs)."""
    parser.add_argument("--shake", type=integer(0, rls.MAX_SHAKE_COPIES, "a number of shaken copies"), default=0,
                        metavar="K", help="also run every cell on K shaken copies of each sequence (input shaking: "
                        "each submit time moved by a random whole number of seconds) and show each result's spread "
                        f"(default 0: off; {cost})")
    parser.add_argument("--shake-shift", type=integer(0, rls.MAX_SHAKE_SHIFT_S, "a shift in seconds"), metavar="S",
                        help=f"with --shake: the largest shift, s (uniform on [-S, S]; "
                        f"default {rls.DEFAULT_SHAKE_SHIFT_S})")
    parser.add_argument("--shake-seed", type=seed_type, metavar="N", help="with --shake: the seed of the shaken "
                        "copies (default 0; the same seed gives the same copies)")


def shaking_settings(args) -> dict | None:
    """The shaking of a command line ({copies, seed, max_shift_s}) or None; InputError for --shake-shift
    or --shake-seed without --shake."""
    copies = args.shake
    for option, value in (("--shake-shift", args.shake_shift), ("--shake-seed", args.shake_seed)):
        if value is not None and not copies:
            raise InputError(f"{option} needs --shake K (a number of shaken copies, at least 1): without it "
                             "no copy is run")
    return None if not copies else {
        "copies": copies, "seed": 0 if args.shake_seed is None else args.shake_seed,
        "max_shift_s": rls.DEFAULT_SHAKE_SHIFT_S if args.shake_shift is None else args.shake_shift}


def check_swf_path(jobs: str) -> None:
    """--jobs names an SWF log (.swf or .swf.gz), or exit 2."""
    from atlas_data.adapters import is_swf_path

    if not is_swf_path(jobs):
        raise InputError("expected an SWF log (.swf or .swf.gz)", path=str(jobs), where="--jobs")


# ----- reproduce rlscheduler ----------------------------------------------------------------------------
def add_rlscheduler_arguments(parser) -> None:
    parser.add_argument("--jobs", metavar="FILE", help="an SWF log (.swf or .swf.gz) instead of the two shipped logs "
                        "of the published table (N = the log's size, no published cells; the table's Lublin-1 and "
                        "Lublin-2 logs are recognised by their jobs and get the paper's cells)")
    parser.add_argument("--output", default="results/reproduce-rlscheduler",
                        help="output folder (default results/reproduce-rlscheduler)")
    parser.add_argument("--readme", metavar="FILE",
                        help="rewrite the reproduce-rlscheduler block of this Markdown file (docs/results.md)")
    add_shake_arguments(parser, "about 10 s a copy on the two shipped logs")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")


def reproduce_rlscheduler(args) -> int:
    started = time.perf_counter()
    if args.readme:
        check_readme_block(Path(args.readme), rls.START, rls.END)
    check_output_folder(args.output, "reproduce")  # before any computation
    shaking = shaking_settings(args)
    if args.jobs:
        check_swf_path(args.jobs)
    todo, source = rls.read_logs(args.jobs, args.quiet)  # every log checked before the first simulation
    rows, diffs = rls.measure(todo, shaking, args.quiet)
    elapsed = time.perf_counter() - started
    out = Path(args.output)
    with output_folder(out, "reproduce") as folder:
        text = rls.write_outputs(folder, rows, source, elapsed, shaking, diffs)
    if args.readme:
        replace_readme_block(Path(args.readme), rls.START, rls.END, text)
    print(text)
    say(f"reproduce rlscheduler: {elapsed:.0f} s; written {out / 'reproduce-rlscheduler.md'}, results.json", args.quiet)
    return 0
