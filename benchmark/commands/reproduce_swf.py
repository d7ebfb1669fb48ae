"""`benchmark reproduce rlscheduler` and `benchmark reproduce hpc`: the reproductions on Parallel
Workloads Archive logs (SWF), and the input-shaking options they share (`--shake`, `--shake-shift`,
`--shake-seed`).

`reproduce hpc` runs FCFS, SJF, EASY (requested times, the oracle, a learned p̂), EASY++ and
conservative backfilling on the shipped logs or any SWF log, on RLScheduler's sequences or `--whole`
logs; the experiment is benchmark.experiments.hpc. Writes OUT/reproduce-hpc.md, results.json and
reproduce-hpc.png / .svg, and with `--readme FILE` the block between the `reproduce-hpc` markers
(`reproduce-hpc-whole` with --whole; docs/hpc-backfilling.md). `--protocol gaussier15|tsafrir07`
runs a published whole-log table instead (benchmark.experiments.hpc_protocols): OUT/reproduce-hpc-
PROTOCOL.md and results.json, and the block between the `reproduce-hpc-PROTOCOL` markers.

`reproduce rlscheduler` puts RLScheduler's FCFS / SJF bounded-slowdown table (SC'20) beside ours, on
the two shipped logs or any SWF log (`--jobs FILE`; the table's Lublin logs are recognised by their
jobs); the experiment is benchmark.experiments.rlscheduler. Writes OUT/reproduce-rlscheduler.md and
results.json, and with `--readme FILE` the block between the `reproduce-rlscheduler` markers
(docs/reproduce-rlscheduler.md).

The argument handling only: options checked before any computation, then the experiment. May import
benchmark.experiments, benchmark.options, benchmark.progress, benchmark.results, atlas_data and
predictors (a method name's check, the online methods).
"""

from __future__ import annotations

import time
from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, output_folder
from benchmark.experiments import hpc, hpc_protocols
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


# ----- reproduce hpc -------------------------------------------------------------------------------------
def add_hpc_arguments(parser) -> None:
    parser.add_argument("--protocol", choices=("gaussier15", "tsafrir07"),
                        help="a published whole-log table instead: SC'15's (gaussier15) or TPDS'07's Table 3 "
                             "(tsafrir07), their job filter and schedulers, the paper's cells beside ours "
                             "(--policies then names rows: easy, easy-sjbf, easy-clairvoyant, easy-sjbf-clairvoyant, "
                             "easy-pp, easy-pp-double, easy-pp-tsafrir, easy-recent; docs/hpc-backfilling.md)")
    parser.add_argument("--jobs", metavar="FILE", help="an SWF log (.swf or .swf.gz) instead of the three shipped logs")
    parser.add_argument("--policies", metavar="A,B,...", help=f"policies, comma-separated (default all: {', '.join(hpc.POLICIES)})")
    parser.add_argument("--predictor", metavar="METHOD", default="oracle",
                        help="easy-p's p̂: oracle (the run time; default) or a prediction method (docs/predictors.md) "
                             "fitted on each log's time-ordered train part, then also given to easy-pp in place of "
                             "its own prediction (rows easy-p (METHOD), easy-p (oracle), easy-pp (METHOD)); every "
                             "run is then on the test part. With --protocol: an online method (online-lgbm, or "
                             "one of its variants online-lgbm-*: docs/hpc-backfilling.md), each job's p̂ from the jobs terminated before its submission, given to the EASY++ "
                             "rows in place of their two-job mean")
    parser.add_argument("--whole", action="store_true",
                        help="run each policy once on the whole log (every kept job from an empty machine; with a "
                             "learned --predictor the whole test part) instead of the 10 sequences of 1,024 jobs")
    parser.add_argument("--seed", type=seed_type, default=0, help="the predictor's fit seed (default 0)")
    parser.add_argument("--output", default="results/reproduce-hpc", help="output folder (default results/reproduce-hpc)")
    parser.add_argument("--readme", metavar="FILE",
                        help="rewrite the reproduce-hpc block of this Markdown file (with --whole the reproduce-hpc-whole "
                             "block; docs/hpc-backfilling.md)")
    add_shake_arguments(parser, "each copy costs as much as the unshaken runs, about 30 s on the three shipped logs")
    parser.add_argument("--quiet", action="store_true", help="no progress; the table is still printed")


def reproduce_hpc(args) -> int:
    if getattr(args, "protocol", None):
        return reproduce_hpc_protocol(args)
    started = time.perf_counter()
    names = hpc.policy_names(args.policies)
    method = args.predictor
    whole = bool(args.whole)
    if method != "oracle":
        from predictors.methods import check_method_name

        check_method_name(method, where="--predictor")
    markers = (hpc.WHOLE_START, hpc.WHOLE_END) if whole else (hpc.START, hpc.END)
    if args.readme:
        check_readme_block(Path(args.readme), *markers)
    check_output_folder(args.output, "reproduce")  # before any computation
    settings = hpc.Settings(method=method, seed=args.seed, whole=whole, shaking=shaking_settings(args), quiet=args.quiet)
    if args.jobs:
        check_swf_path(args.jobs)
    todo, per_log, source = hpc.read_logs(args.jobs, names, args.policies is None, settings)
    rows, diffs, sequences = hpc.measure(todo, per_log, settings)
    elapsed = time.perf_counter() - started
    out = Path(args.output)
    with output_folder(out, "reproduce") as folder:
        text = hpc.write_outputs(folder, rows, diffs, sequences, source, elapsed, settings)
    if args.readme:
        replace_readme_block(Path(args.readme), *markers, text)
    print(text)
    say(f"reproduce hpc: {elapsed:.0f} s; written {out / 'reproduce-hpc.md'}, results.json, reproduce-hpc.png / .svg",
        args.quiet)
    return 0


def row_names(text: str | None, protocol: str) -> list[str]:
    """The --policies list under a protocol (default DEFAULT_ROWS), InputError for an unknown or repeated name."""
    if text is None:
        return list(hpc_protocols.DEFAULT_ROWS[protocol])
    names = [t.strip() for t in text.split(",")]
    for name in names:
        if name not in hpc_protocols.ROWS:
            raise InputError(f"unknown row {name!r} under --protocol {protocol} (choose from "
                             f"{', '.join(hpc_protocols.ROWS)})", where="--policies")
    if len(set(names)) < len(names):
        raise InputError("a row is named twice", where="--policies")
    return names


def reproduce_hpc_protocol(args) -> int:
    """`benchmark reproduce hpc --protocol gaussier15|tsafrir07`: the published whole-log tables beside ours."""
    from predictors.online_jobs import ONLINE_METHODS

    started = time.perf_counter()
    protocol = args.protocol
    rows = row_names(args.policies, protocol)
    if args.whole:
        raise InputError("a protocol runs whole logs: leave out --whole", where="--protocol")
    shaking = shaking_settings(args)
    method = None if args.predictor == "oracle" else args.predictor
    if method is not None and method not in ONLINE_METHODS:
        raise InputError(f"under --protocol, --predictor names an online method ({', '.join(ONLINE_METHODS)}): "
                         f"every job of the whole log is predicted from the jobs finished before it, got {method!r}",
                         where="--predictor")
    markers = hpc_protocols.markers(protocol)
    if args.readme:
        check_readme_block(Path(args.readme), *markers)
    check_output_folder(args.output, "reproduce")
    if args.jobs:
        check_swf_path(args.jobs)
        todo = [(Path(args.jobs).name, Path(args.jobs))]
        source = f"the SWF log {args.jobs}"
    else:
        todo = [(name, rls.shipped_log(file)) for name, file in hpc_protocols.SHIPPED.items()]
        source = "the shipped SDSC-SP2 and CTC-SP2 logs"
    measured = hpc_protocols.measure_protocol(todo, protocol, rows, method, args.seed, shaking, args.quiet)
    elapsed = time.perf_counter() - started
    out_dir = Path(args.output)
    with output_folder(out_dir, "reproduce") as folder:
        text = hpc_protocols.write_protocol_outputs(folder, protocol, measured, source, elapsed, method, args.seed,
                                                    shaking)
    if args.readme:
        replace_readme_block(Path(args.readme), *markers, text)
    print(text)
    say(f"reproduce hpc --protocol {protocol}: {elapsed:.0f} s; written {out_dir / f'reproduce-hpc-{protocol}.md'}, "
        "results.json", args.quiet)
    return 0
