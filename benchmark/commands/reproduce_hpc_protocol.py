"""`benchmark reproduce hpc --protocol gaussier15|tsafrir07`: the published whole-log tables beside ours.

Argument handling and the report; the protocols themselves (the job filter, pyss's schedulers, the
statistics, the papers' cells) are benchmark.hpc_protocols. Writes OUT/reproduce-hpc-PROTOCOL.md and
results.json, and with `--readme FILE` the block between the `reproduce-hpc-PROTOCOL` markers
(docs/hpc-backfilling.md#the-published-whole-log-tables). May import benchmark.*,
predictors.online_jobs (the online methods) and through benchmark atlas_data and schedulers.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from atlas_data.errors import InputError
from atlas_data.outputs import check_output_folder, command_line, output_folder
from benchmark.hpc_protocols import GAUSSIER15, ROWS, TSAFRIR07, run_protocol
from benchmark.commands.reproduce_swf import shaking_settings
from benchmark.experiments.rlscheduler import (SHAKEN_HEAD, SHAKEN_RULE, differences_table, paired_differences,
                                               shaken_caption, shaken_cells, shaken_fields)
from benchmark.progress import say
from predictors.online_jobs import ONLINE_METHODS, online_predictor
from benchmark.results import check_readme_block, replace_readme_block

#: the rows each protocol runs by default: all of SC'15's; TPDS'07's Table 3 and EASY++ as SC'15 runs it
DEFAULT_ROWS = {"gaussier15": list(ROWS),
                "tsafrir07": ["easy", "easy-sjbf", "easy-pp-tsafrir", "easy-sjbf-clairvoyant", "easy-pp"]}
SHIPPED = {"SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz", "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz"}


def markers(protocol: str) -> tuple[str, str]:
    return f"<!-- reproduce-hpc-{protocol}:start -->", f"<!-- reproduce-hpc-{protocol}:end -->"


def row_names(text: str | None, protocol: str) -> list[str]:
    """The --policies list under a protocol (default DEFAULT_ROWS), InputError for an unknown or repeated name."""
    if text is None:
        return list(DEFAULT_ROWS[protocol])
    names = [t.strip() for t in text.split(",")]
    for name in names:
        if name not in ROWS:
            raise InputError(f"unknown row {name!r} under --protocol {protocol} (choose from {', '.join(ROWS)})",
                             where="--policies")
    if len(set(names)) < len(names):
        raise InputError("a row is named twice", where="--policies")
    return names


def _pct(ours: float, paper: float | None) -> str:
    if paper is None:
        return "—"
    pct = 100 * (ours - paper) / paper
    return "0.00 %" if abs(pct) < 0.005 else f"{pct:+.2f} %"


def markdown(protocol: str, results: list[tuple[str, list[dict], list]], source: str, elapsed_s: float,
             method: str | None = None, shaking: dict | None = None, diffs: list[dict] = ()) -> str:
    import datetime

    day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    command = f"--protocol {protocol}" + (f" --predictor {method}" if method else "")
    lines = [f"Produced by `benchmark reproduce hpc {command}` on {source} ({day}, {elapsed_s:.0f} s): "
             + ("every job the SC'15 filter keeps, from an empty machine, on pyss's schedulers; the mean bounded "
                "slowdown (τ = 10 s) over all of them; paper: Gaussier et al.'s raw results (predictsim "
                "metrics_complete, avgbsld)." if protocol == "gaussier15" else
                "the SC'15 filter's jobs on pyss's schedulers, scored by pyss's statistics (the first 1 % by "
                "finish time and the jobs ending after the last submission left out); paper: Tsafrir, Etsion & "
                "Feitelson, TPDS 2007, Table 3 (EASY++ there: the tsafrir correction).")
             + " docs/hpc-backfilling.md#the-published-whole-log-tables."
             + (shaken_caption(shaking, "the same score").replace("every sequence", "the whole log") if shaking else ""),
             ""]
    head, rule, tail = (SHAKEN_HEAD, SHAKEN_RULE, shaken_cells) if shaking else ("", "", lambda r: "")
    if protocol == "gaussier15":
        lines += ["| log | row | jobs (paper) | bounded slowdown | paper | difference | mean wait (s) | utilisation | "
                  "corrections | seconds |" + head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" + rule]
        for _, rows, _ in results:
            for r in rows:
                paper = "—" if r["paper_bsld"] is None else f"{r['paper_bsld']:.2f}"
                jobs = f"{r['jobs']:,}" + ("" if r["paper_jobs"] is None else f" ({r['paper_jobs']:,})")
                lines.append(f"| {r['log']} | {r['label']} | {jobs} | {r['bsld']:.2f} | {paper} | "
                             f"{_pct(r['bsld'], r['paper_bsld'])} | {r['wait']:,.0f} | {r['utilisation']:.3f} | "
                             f"{r['corrections']:,} | {r['seconds']:.1f} |" + tail(r))
    else:
        lines += ["| log | row | processors | bounded slowdown | paper | mean wait (min) | paper | jobs counted | "
                  "seconds |" + head, "|---|---|---:|---:|---:|---:|---:|---:|---:|" + rule]
        for _, rows, _ in results:
            for r in rows:
                pb = "—" if r["paper_bsld"] is None else f"{r['paper_bsld']}"
                pw = "—" if r["paper_wait_min"] is None else f"{r['paper_wait_min']}"
                lines.append(f"| {r['log']} | {r['label']} | {r['processors']} | {r['bsld']:.2f} | {pb} | "
                             f"{r['wait'] / 60:.1f} | {pw} | {r['counted']:,} | {r['seconds']:.1f} |" + tail(r))
    learned = [(r, own) for _, rows, _ in results for r in rows if r["p_hat"]
               for own in rows if own["label"] == r["row"] and own["log"] == r["log"]]
    if learned:
        lines += ["", f"`ROW ({learned[0][0]['p_hat']})`: the row's scheduler and correction with the online learned "
                  "p̂ (predictors.online_jobs: each job's from a model fitted only on jobs terminated before its "
                  "submission) in place of EASY++'s two-job mean. Against the same row with the two-job mean:", ""]
        lines += [f"- {r['log']}, {r['row']}: {r['bsld']:.2f} against {own['bsld']:.2f} "
                  f"({_pct(r['bsld'], own['bsld'])}; {r['seconds']:.0f} s with the predictor)" for r, own in learned]
    lines += differences_table(list(diffs))
    lines += ["", "The SC'15 filter's jobs after each step (atlas_data.pwa_filter):", "",
              "| log | " + " | ".join(k for k, _ in results[0][2]) + " |",
              "|---|" + "---:|" * len(results[0][2])]
    for log, rows, counts in results:
        lines.append(f"| {log} | " + " | ".join(f"{n:,}" for _, n in counts) + " |")
    return "\n".join(lines) + "\n"


def reproduce_protocol(args) -> int:
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
    if args.readme:
        check_readme_block(Path(args.readme), *markers(protocol))
    check_output_folder(args.output, "reproduce")
    if args.jobs:
        from atlas_data.adapters import is_swf_path

        if not is_swf_path(args.jobs):
            raise InputError("expected an SWF log (.swf or .swf.gz)", path=str(args.jobs), where="--jobs")
        todo = [(Path(args.jobs).name, Path(args.jobs))]
        source = f"the SWF log {args.jobs}"
    else:
        from benchmark.experiments.rlscheduler import shipped_log

        todo = [(name, shipped_log(file)) for name, file in SHIPPED.items()]
        source = "the shipped SDSC-SP2 and CTC-SP2 logs"
    results = []
    for log, path in todo:
        say(f"{log}: {protocol}: {', '.join(rows)}", args.quiet)
        factory = None if method is None else (lambda jobs: online_predictor(method, jobs, args.seed))
        out, counts = run_protocol(path, log, protocol, rows, predictor_factory=factory, predictor_name=method,
                                   shaking=shaking)
        for r in out:
            if shaking:
                r.update(shaken_fields(r.pop("bsld_shaken")))
        results.append((log, out, counts))
    all_rows = [r for _, rs, _ in results for r in rs]
    pairs = [(f"{r['row']} ({method})", r["row"]) for r in all_rows if r["p_hat"]]
    diffs = paired_differences(all_rows, list(dict.fromkeys(pairs)), lambda r: r["label"]) if shaking else []
    elapsed = time.perf_counter() - started
    text = markdown(protocol, results, source, elapsed, method, shaking, diffs)
    out_dir = Path(args.output)
    with output_folder(out_dir, "reproduce") as folder:
        (folder / f"reproduce-hpc-{protocol}.md").write_text(text)
        summary = {"source": source, "protocol": protocol, "predictor": method, "seed": args.seed,
                   "online_settings": ONLINE_METHODS.get(method), "shaking": shaking, "differences": diffs,
                   "rows": all_rows,
                   "filter": {log: counts for log, _, counts in results},
                   "paper": GAUSSIER15 if protocol == "gaussier15" else TSAFRIR07,
                   "row_settings": {k: {"what": v[0], "predictsim": v[1]} for k, v in ROWS.items()},
                   "elapsed_s": elapsed, "complete": True, "argv": command_line()}
        (folder / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    if args.readme:
        replace_readme_block(Path(args.readme), *markers(protocol), text)
    print(text)
    say(f"reproduce hpc --protocol {protocol}: {elapsed:.0f} s; written {out_dir / f'reproduce-hpc-{protocol}.md'}, "
        "results.json", args.quiet)
    return 0
