"""`benchmark submit` and `benchmark leaderboard` (docs/leaderboards.md).

    benchmark submit DIR --track prediction|scheduling [--data DS] [--entries-dir D] [--quiet]
    benchmark submit --template DIR [--method constant] [--track T] [--data DS]
    benchmark leaderboard [--track T] [--format md|html|site] [--output FILE|DIR] [--entries-dir D]
    benchmark leaderboard --rebuild-builtin [--data DS] [--methods a,b] [--entries-dir D]

`submit` validates the folder against the dataset (default: the embedded default dataset), scores
it and stores one JSON entry under the entries dir (default: leaderboards/entries/ in the
package); any problem exits 2 with one line and writes nothing. `--template` writes an example
submission folder from a method's predictions (built-in by default; a new or empty folder only: a template
is meant to be edited). `leaderboard` renders the ranking(s); `--output FILE` is written through
atlas_data.outputs (signed, replaced only when an earlier `leaderboard` wrote it).
There is no --seed: every entry is scored with seed 0 (scheduling windows, built-in predictors),
so all entries on a dataset are comparable.
May import leaderboards, predictors.api (method names), atlas_data.errors and benchmark.progress.
"""

from __future__ import annotations

import sys
from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_file, check_output_folder, output_file, output_folder, signed_text
from leaderboards.schema import TRACKS


def register(subparsers) -> None:
    sub = subparsers.add_parser("submit", help="validate, score and store a leaderboard submission")
    sub.add_argument("dir", nargs="?", help="submission folder: submission.yaml + predictions.parquet")
    sub.add_argument("--track", choices=TRACKS, help="leaderboard track (must match submission.yaml)")
    sub.add_argument("--data", help="ATLAS dataset folder (default: the embedded default dataset)")
    sub.add_argument("--entries-dir", help="where entries are stored (default: the package's leaderboards/entries)")
    sub.add_argument("--template", metavar="DIR", help="write an example submission folder to DIR instead")
    sub.add_argument("--method", default="constant",
                     help="method whose test predictions --template writes: a registered name (default constant) or a "
                          "plugin's package.module:Object (docs/plugins.md)")
    sub.add_argument("--plugins", metavar="MODULES|FILES", help="Python modules or .py files to import first (comma-separated)")
    sub.add_argument("--quiet", action="store_true", help="print nothing on success")
    sub.set_defaults(handler=_submit)

    board = subparsers.add_parser("leaderboard", help="render the leaderboard ranking(s)")
    board.add_argument("--track", choices=TRACKS, help="one track (default: both)")
    board.add_argument("--format", choices=("md", "html", "site"), default="md",
                       help="md, html (one page) or site (a static site: index with a forest plot of the scores, one page per "
                            "entry; needs --output DIR)")
    board.add_argument("--output", help="write to this file instead of stdout (the folder, with --format site)")
    board.add_argument("--entries-dir", help="entries folder (default: the package's leaderboards/entries)")
    board.add_argument("--rebuild-builtin", action="store_true",
                       help="score the built-in prediction methods for both tracks and write their entries first")
    board.add_argument("--data", help="dataset for --rebuild-builtin (default: the embedded default dataset)")
    board.add_argument("--methods", help="methods for --rebuild-builtin, comma-separated (default: every built-in but those "
                       "trained for the decision, docs/predictors.md)")
    board.add_argument("--plugins", metavar="MODULES|FILES", help="Python modules or .py files to import first (comma-separated)")
    board.add_argument("--quiet", action="store_true", help="no progress lines")
    board.set_defaults(handler=_leaderboard)


def _submit(args) -> int:
    from atlas_data.plugins import load_plugins
    from benchmark.progress import say
    from leaderboards.pipeline import submit, write_template

    load_plugins(args.plugins)
    if args.template:
        if args.dir:
            raise InputError("give a submission folder DIR or --template DIR, not both", where="--template")
        out = write_template(args.template, args.data, method=args.method, track=args.track or "prediction",
                             quiet=args.quiet)
        say(f"wrote an example submission to {out} (edit submission.yaml, replace predictions.parquet, then "
            f"`benchmark submit {out} --track {args.track or 'prediction'}`)", args.quiet)
        return 0
    if not args.dir:
        raise InputError("missing the submission folder DIR (or use --template DIR to get an example)", where="submit")
    if not args.track:
        raise InputError("--track is required (prediction or scheduling)", where="--track")
    entry, path, replaced = submit(args.dir, args.track, args.data, args.entries_dir, quiet=args.quiet)
    if not args.quiet:
        p = entry["prediction"]
        line = (f"{entry['name']} ({entry['track']}): cov25 {_pct(p.get('cov25'))}, cov50 {_pct(p.get('cov50'))}, "
                f"rmsle {_fmt(p.get('rmsle'))}, spearman {_fmt(p.get('spearman'))}")
        if entry["track"] == "scheduling":
            lo, hi = entry["score_interval"]
            line += (f"; scheduling score {_fmt(entry['score'], 4)} [95 % interval {_fmt(lo, 4)}–{_fmt(hi, 4)}] "
                     "(your ratios / the blind p̂'s, geometric mean over objectives and windows; lower is better, "
                     "1 = as good as knowing nothing)")
        print(line)
        print(f"{'replaced' if replaced else 'wrote'} entry {path}")
    return 0


def _leaderboard(args) -> int:
    from benchmark.progress import say
    from leaderboards.render import render
    from leaderboards.store import default_entries_dir, load_entries

    from atlas_data.plugins import load_plugins

    load_plugins(args.plugins)
    entries_dir = Path(args.entries_dir) if args.entries_dir else default_entries_dir()
    if args.output and args.format == "site":
        check_output_folder(args.output, "leaderboard")  # before any scoring
    elif args.output:
        check_output_file(Path(args.output), "leaderboard")  # before any scoring
    if args.rebuild_builtin:
        from leaderboards.builtin import rebuild_builtin

        methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods else None
        if methods:
            from predictors.methods import BUILTIN_METHODS

            for method in methods:
                if method not in BUILTIN_METHODS:
                    raise InputError(f"'{method}' is not a built-in method (choose from {', '.join(BUILTIN_METHODS)}); "
                                     "your own predictor goes on the board with `benchmark submit --template DIR "
                                     "--method ...` and `benchmark submit DIR`", where="--methods")
        paths = rebuild_builtin(args.data, entries_dir, methods=methods, quiet=args.quiet,
                                note=lambda m: say(m, args.quiet))
        say(f"wrote {len(paths)} built-in entries under {entries_dir}", args.quiet)
    elif args.data or args.methods:
        raise InputError("--data and --methods apply only with --rebuild-builtin", where="--data" if args.data else "--methods")
    tracks = [args.track] if args.track else list(TRACKS)
    entries = {t: load_entries(entries_dir, t) for t in tracks}
    if args.format == "site":
        from leaderboards.site import write_site

        if not args.output:
            raise InputError("--format site writes a folder: give it with --output DIR", where="--output")
        with output_folder(args.output, "leaderboard") as folder:  # renamed into place once complete
            write_site(entries, folder)
        say(f"wrote {Path(args.output) / 'index.html'} (open it in a browser)", args.quiet)
        return 0
    text = render(entries, args.format)
    if args.output:
        # signed on its first line(s), so a rerun replaces it and any other file is refused
        out = output_file(Path(args.output), "leaderboard",
                          lambda tmp: tmp.write_text(signed_text(text, "leaderboard"), encoding="utf-8"))
        say(f"wrote {out}", args.quiet)
    else:
        sys.stdout.write(text)
    return 0


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _fmt(v, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"
