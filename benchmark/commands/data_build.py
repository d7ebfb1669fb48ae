"""`benchmark data synth | build | describe`: the ATLAS pipeline on the command line.

- `synth --jobs N --seed S --out RAWDIR`: write a synthetic PAI-2020 trace in the raw layout;
- `build --source pai --raw-dir RAWDIR --out DS` or `build --source synthetic [--jobs N --seed S] --out DS`:
  write DS/atlas.parquet + DS/dataset.json (atomically);
- `describe DS [--output DIR|FILE.png]`: print the summary, write the duration histogram PNG.

Every folder and file goes through atlas_data.outputs: written aside, renamed into place when
complete, never replacing what the command did not write itself.

May import: atlas_data, benchmark.progress.
"""

from __future__ import annotations

import time

from atlas_data.errors import InputError
from atlas_data.outputs import final_text
from benchmark.options import seed as seed_type
from benchmark.options import synthetic_jobs
from benchmark.progress import say


def _job_count(text: str) -> int:
    """--jobs: 1 to MAX_SYNTH_JOBS (benchmark.options), written 30000, 30_000 or 30,000."""
    return synthetic_jobs(text.replace(",", ""))


def register(data_subparsers) -> None:
    p = data_subparsers.add_parser("synth", help="write a synthetic PAI-2020 trace in the raw layout")
    p.add_argument("--jobs", type=_job_count, default=30_000, help="number of jobs (default 30,000; at most 2,000,000)")
    p.add_argument("--seed", type=seed_type, default=0, help="random seed (default 0)")
    p.add_argument("--out", required=True, help="folder for the raw pai_*.csv and .header files")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.set_defaults(handler=_synth)

    p = data_subparsers.add_parser("build", help="build the ATLAS dataset (parquet + dataset.json)")
    p.add_argument("--source", choices=["synthetic", "pai"], default="synthetic",
                   help="synthetic: a calibrated synthetic PAI-2020 trace made here (default); pai: the real raw "
                        "PAI-2020 tables in --raw-dir")
    p.add_argument("--raw-dir", help="folder with the raw PAI tables (--source pai)")
    # None = not given: --source pai reads every job of its raw tables and refuses both (nothing ignored)
    p.add_argument("--jobs", type=_job_count, help="synthetic jobs (--source synthetic; default 30,000; at most 2,000,000)")
    p.add_argument("--seed", type=seed_type, help="synthetic seed (--source synthetic; default 0)")
    p.add_argument("--out", required=True, help="dataset folder to write")
    p.add_argument("--quiet", action="store_true", help="no progress lines and no summary")
    p.set_defaults(handler=_build)

    p = data_subparsers.add_parser("describe", help="summarise an ATLAS dataset and plot its durations")
    p.add_argument("dataset", help="dataset folder (from `benchmark data build`)")
    p.add_argument("--output", help="folder (or .png path) for the plot (default: the dataset folder)")
    p.add_argument("--quiet", action="store_true", help="accepted for symmetry; the summary is the output")
    p.set_defaults(handler=_describe)


def _synth(args) -> int:
    from atlas_data.outputs import check_output_folder, output_folder
    from atlas_data.synth import synthesize, write_raw

    if args.jobs < 10:
        raise InputError(f"--jobs must be at least 10 (got {args.jobs})")
    check_output_folder(args.out, "data synth", option="--out")
    t = time.perf_counter()
    say(f"synthesising {args.jobs:,} jobs (seed {args.seed})", args.quiet)
    tables = synthesize(args.jobs, args.seed)
    with output_folder(args.out, "data synth", option="--out") as folder:
        paths = write_raw(tables, folder)
    rows = ", ".join(f"{k} {tables[k].num_rows:,}" for k in tables)
    say(f"wrote {len(paths)} tables to {args.out} ({rows}) in {time.perf_counter() - t:.1f}s", args.quiet)
    return 0


def _build(args) -> int:
    from atlas_data.build import build_dataset

    if args.source == "pai" and not args.raw_dir:
        raise InputError("--source pai needs --raw-dir")
    if args.source == "synthetic" and args.raw_dir:
        raise InputError("--raw-dir is only for --source pai")
    if args.source == "pai":
        for option, value in (("--jobs", args.jobs), ("--seed", args.seed)):
            if value is not None:
                raise InputError(f"{option} is only for --source synthetic (--source pai keeps every job of the raw "
                                 "tables)", where=option)
    args.jobs = 30_000 if args.jobs is None else args.jobs
    args.seed = 0 if args.seed is None else args.seed
    t = time.perf_counter()
    card = build_dataset(args.out, source=args.source, raw_dir=args.raw_dir, jobs=args.jobs, seed=args.seed,
                         quiet=args.quiet, note=lambda m: say(m, args.quiet))
    c = card["counts"]
    dropped = ", ".join(f"{k} {v:,}" for k, v in c["dropped"].items()) or "none"
    if not args.quiet:
        print(f"{final_text(args.out)}: kept {c['kept']:,} jobs (train {c['train']:,}, val {c['val']:,}, test {c['test']:,}); "
              f"dropped {dropped}; {len(card['features'])} features; fingerprint {card['fingerprint'][:16]}; "
              f"{time.perf_counter() - t:.1f}s")
    return 0


def _describe(args) -> int:
    from atlas_data.describe import describe

    text, png, _ = describe(args.dataset, args.output)
    print(text)
    print(f"plot: {final_text(png)}")
    return 0
