"""The published whole-log tables of HPC backfilling, reproduced: SC'15's and TPDS'07's protocols.

Two papers give EASY backfilling's average bounded slowdown on whole Parallel Workloads Archive logs:

- **gaussier15**: Gaussier, Glesser, Reis & Trystram, "Improving backfilling by using machine
  learning to predict running times", SC'15. Their raw results (predictsim,
  `experiments/data/<log>/sim_analysis/metrics_complete`, column `avgbsld`) are the cells of
  `GAUSSIER15`. Protocol: their job filter (atlas_data.pwa_filter), pyss's schedulers
  (schedulers.backfill_events), every job of the filtered log from an empty machine, the mean bounded
  slowdown max(1, (wait + run) / max(run, 10 s)) over all of them.
- **tsafrir07**: Tsafrir, Etsion & Feitelson, "Backfilling using system-generated predictions rather
  than user runtime estimates", IEEE TPDS 18(6), 2007, Table 3 (`TSAFRIR07`: bounded slowdown and
  wait in minutes). Protocol: the same jobs and schedulers, scored by pyss's own statistics
  (`tsafrir07_statistics`: the first 1 % of jobs by finish time and the jobs that end after the last
  submission left out, jobs of one processor and a requested time of 1 s ignored), and CTC-SP2 on
  512 processors, the whole machine (the log's header says 338: its batch partition, the nodes its
  jobs were seen to use). With 512 EASY's cell comes out at 4.5 against the paper's 5; with 338 at
  49.9 (docs/hpc-backfilling.md).

The rows (`ROWS`) are predictsim's scheduler, predictor and corrector triples. `run_protocol` runs
one log; a notebook can call it. `measure_protocol` runs the logs of `benchmark reproduce hpc
--protocol gaussier15|tsafrir07`, `write_protocol_outputs` writes reproduce-hpc-PROTOCOL.md and
results.json; `protocol_markdown` is also the block between the `reproduce-hpc-PROTOCOL` markers
(docs/hpc-backfilling.md#the-published-whole-log-tables).

Part of the experiments package (benchmark.experiments): may import benchmark.experiments.rlscheduler
(the shaking's tables), benchmark.progress, predictors.online_jobs (the online methods), numpy,
atlas_data and schedulers.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from atlas_data.pwa_filter import gaussier15_jobs
from benchmark.experiments.rlscheduler import (SHAKEN_HEAD, SHAKEN_RULE, differences_table, paired_differences,
                                               shaken_caption, shaken_cells, shaken_fields)
from schedulers import backfill_events as be

PROTOCOLS = ("gaussier15", "tsafrir07")
#: row name → (what it is, predictsim's scheduler / predictor / corrector, simulate() settings)
ROWS = {
    "easy": ("EASY, requested times", "easy_backfill_scheduler", dict()),
    "easy-sjbf": ("EASY, requested times, shortest backfilled first", "easy_sjbf_scheduler", dict(sjbf=True)),
    "easy-clairvoyant": ("EASY, true run times", "easy_prediction_backfill_scheduler / clairvoyant",
                         dict(predictor="clairvoyant")),
    "easy-sjbf-clairvoyant": ("EASY++'s SJBF, true run times (PERFECT++)",
                              "easy_plus_plus_scheduler / clairvoyant", dict(predictor="clairvoyant", plus=True)),
    "easy-pp": ("EASY++: two-job mean, corrected to the requested time, SJBF",
                "easy_plus_plus_scheduler / tsafrir / reqtime", dict(predictor="recent", plus=True)),
    "easy-pp-double": ("EASY++ with the prediction doubled when over", "easy_plus_plus_scheduler / tsafrir / "
                       "recursive_doubling", dict(predictor="recent", plus=True, corrector="double")),
    "easy-pp-tsafrir": ("EASY++ with Tsafrir's increments when over", "easy_plus_plus_scheduler / tsafrir / tsafrir",
                        dict(predictor="recent", plus=True, corrector="tsafrir")),
    "easy-recent": ("EASY (submit order) on the two-job mean, corrected to the requested time",
                    "easy_prediction_backfill_scheduler / tsafrir / reqtime", dict(predictor="recent")),
}
#: SC'15's raw results (avgbsld, predictsim metrics_complete) and the jobs their filter kept
GAUSSIER15 = {
    "SDSC-SP2": {"jobs": 54006, "easy": 87.8703, "easy-sjbf": 84.8889, "easy-clairvoyant": 70.4779,
                 "easy-sjbf-clairvoyant": 56.8362, "easy-pp": 65.0636, "easy-pp-double": 98.0032,
                 "easy-pp-tsafrir": 79.3963, "easy-recent": 79.2121},
    "CTC-SP2": {"jobs": 77199, "easy": 49.5713, "easy-sjbf": 30.0411, "easy-clairvoyant": 37.1654,
                "easy-sjbf-clairvoyant": 17.5717, "easy-pp": 26.5338, "easy-pp-double": 55.6406,
                "easy-pp-tsafrir": 85.7672, "easy-recent": 35.3240},
    # logs not shipped: `--jobs` with the archive's file (its name starting with the key) gets these
    "KTH-SP2": {"jobs": 28481, "easy": 92.5765, "easy-sjbf": 69.4054, "easy-clairvoyant": 71.7224,
                "easy-sjbf-clairvoyant": 49.8477, "easy-pp": 62.8569, "easy-pp-double": 64.5275,
                "easy-pp-tsafrir": 63.5007, "easy-recent": 65.7236},
    "SDSC-BLUE": {"jobs": 232542, "easy": 36.5234, "easy-sjbf": 19.8260, "easy-clairvoyant": 30.6215,
                  "easy-sjbf-clairvoyant": 13.1776, "easy-pp": 16.8269, "easy-pp-double": 22.3393,
                  "easy-pp-tsafrir": 20.9864, "easy-recent": 26.5836},
}
#: TPDS'07 Table 3: (bounded slowdown, mean wait in minutes) of EASY, EASY-SJBF, EASY++, PERFECT++
TSAFRIR07 = {
    "SDSC-SP2": {"easy": (99, 363), "easy-sjbf": (89, 362), "easy-pp-tsafrir": (72, 326),
                 "easy-sjbf-clairvoyant": (58, 278)},
    "CTC-SP2": {"easy": (5, 21), "easy-sjbf": (4, 19), "easy-pp-tsafrir": (3, 14), "easy-sjbf-clairvoyant": (3, 19)},
}
#: the machine TPDS'07 simulated where it differs from the log's MaxProcs
TSAFRIR07_PROCESSORS = {"CTC-SP2": 512}


def shaken_jobs(jobs: dict, max_shift_s: int, seed: int, copy: int) -> dict:
    """A shaken copy of the filtered jobs (atlas_data.shaking: each submit time moved by a whole number
    of seconds in ±max_shift_s, the jobs in the copy's arrival order, its first submit where the log's was)."""
    from atlas_data.shaking import shaken_copy

    times, order = shaken_copy(jobs["submit"], max_shift_s, seed, copy)
    out = {k: (v[order] if isinstance(v, np.ndarray) else v) for k, v in jobs.items()}
    out["submit"] = np.maximum(times.astype(np.int64) + int(jobs["submit"].min()), 0)
    return out


def paper_key(log: str) -> str:
    """The name the papers' tables give a log: `log` itself, or the key of GAUSSIER15 / TSAFRIR07 that
    a file name starts with (`KTH-SP2-1996-2.1-cln.swf.gz` → `KTH-SP2`)."""
    for key in (*GAUSSIER15, *TSAFRIR07):
        if log == key or log.startswith(key + "-"):
            return key
    return log


def predictor_of(kind: str | None, jobs: dict) -> be.Predictor | None:
    """The row's predictor on these jobs (None: the requested time)."""
    if kind == "clairvoyant":
        return be.Clairvoyant(jobs["run"].tolist())
    if kind == "recent":
        return be.RecentMean(jobs["run"].tolist(), jobs["requested"].tolist(), jobs["user"].tolist())
    return None


def run_row(jobs: dict, row: str, predictor: be.Predictor | None = None, corrector: str | None = None) -> dict:
    """One row on the filtered jobs: {start, predicted, corrections, seconds}. `predictor` (and
    `corrector`) replace the row's (an online learned p̂ in EASY++'s place)."""
    settings = dict(ROWS[row][2])
    plus = settings.pop("plus", False)
    kind = settings.pop("predictor", None)
    if corrector is not None:
        settings["corrector"] = corrector
    began = time.perf_counter()
    out = be.simulate(jobs["submit"], jobs["run"], jobs["requested"], jobs["procs"], jobs["processors"],
                      predictor=predictor or predictor_of(kind, jobs), sjbf=plus or settings.pop("sjbf", False),
                      submit_check=not plus, name=row, **settings)
    out["seconds"] = time.perf_counter() - began
    return out


def tsafrir07_statistics(jobs: dict, start: np.ndarray) -> dict:
    """pyss's `print_statistics` (the TPDS'07 simulator's): jobs in order of finish time; a job of one
    processor and a requested time of 1 s is ignored (and leaves the count); the first 1 % of the
    count is skipped; the first job that ends after the last submission ends the count.
    {bsld, wait_min, counted}."""
    run, submit = jobs["run"], jobs["submit"]
    finish = start + run
    tiny = (jobs["requested"] == 1) & (jobs["procs"] == 1)
    last_submit = int(submit.max())
    size = len(run)
    skip = size // 100
    seen = counted = 0
    waits, bslds = [], []
    for j in np.argsort(finish, kind="stable").tolist():
        seen += 1
        if tiny[j]:
            size -= 1
            skip = size // 100
            continue
        if size >= 100 and seen <= skip:
            continue
        if finish[j] > last_submit:
            break
        counted += 1
        wait = float(start[j] - submit[j])
        waits.append(wait)
        bslds.append(max(1.0, (wait + run[j]) / max(float(run[j]), 10.0)))
    return {"bsld": float(np.mean(bslds)) if bslds else float("nan"),
            "wait_min": float(np.mean(waits)) / 60 if waits else float("nan"), "counted": counted}


def run_protocol(path, log: str, protocol: str, rows: list[str], predictor_factory=None,
                 predictor_name: str | None = None, processors: int | None = None,
                 shaking: dict | None = None) -> tuple[list[dict], list]:
    """Every row of `rows` on the log at `path` (named `log`) under `protocol`: (one dict per row —
    log, row, bsld, wait (s), utilisation, jobs, corrections, seconds, the paper's cell(s) — and
    the filter's counts per step). `predictor_factory(jobs)` → a Predictor: then each EASY++ row also
    runs with it in place of the two-job mean (row label `ROW (predictor_name)`). Under tsafrir07 a log
    whose machine TPDS'07 took bigger (TSAFRIR07_PROCESSORS) runs `easy` on the header's MaxProcs too
    (row label `easy (N processors)`): the reason its cells differ from SC'15's, measured. `shaking`
    ({copies, max_shift_s, seed}): every row also runs on that many shaken copies of the log (the same
    copies for every row; a learned row's predictor starts afresh on each), `bsld_shaken` its scores."""
    key = paper_key(log)
    override = processors is None and protocol == "tsafrir07" and key in TSAFRIR07_PROCESSORS
    jobs, counts = gaussier15_jobs(path, TSAFRIR07_PROCESSORS[key] if override else processors)
    variants = [(r, None, jobs) for r in rows]
    if predictor_factory is not None:
        variants += [(r, "learned", jobs) for r in rows if ROWS[r][2].get("predictor") == "recent"]
    if override and "easy" in rows:  # the measured reason: EASY on the log's own machine size too
        variants.append(("easy", "header", gaussier15_jobs(path)[0]))
    out = []
    for row, kind, on in variants:
        learned = kind == "learned"
        r = run_row(on, row, predictor_factory(on) if learned else None)
        start = r["start"]
        wait = start - on["submit"]
        span = float((start + on["run"]).max() - on["submit"].min())
        label = {"learned": f"{row} ({predictor_name})", "header": f"{row} ({on['processors']} processors)"}
        result = {"log": log, "protocol": protocol, "row": row, "p_hat": predictor_name if learned else None,
                  "label": label.get(kind, row), "jobs": len(start),
                  "processors": on["processors"], "corrections": r["corrections"], "seconds": r["seconds"],
                  "bsld": float(be.bounded_slowdowns(on["submit"], on["run"], start).mean()),
                  "wait": float(wait.mean()),
                  "utilisation": float((on["run"] * on["procs"]).sum()) / (on["processors"] * span)}
        if protocol == "tsafrir07":
            stats = tsafrir07_statistics(on, start)
            result.update(bsld=stats["bsld"], wait=stats["wait_min"] * 60, counted=stats["counted"])
            paper = None if kind else TSAFRIR07.get(key, {}).get(row)
            result["paper_bsld"], result["paper_wait_min"] = paper if paper else (None, None)
        else:
            result["paper_bsld"] = None if kind else GAUSSIER15.get(key, {}).get(row)
            result["paper_jobs"] = GAUSSIER15.get(key, {}).get("jobs")
        if shaking:
            scores = []
            for c in range(shaking["copies"]):
                copy = shaken_jobs(on, shaking["max_shift_s"], shaking["seed"], c)
                started = run_row(copy, row, predictor_factory(copy) if learned else None)["start"]
                scores.append(tsafrir07_statistics(copy, started)["bsld"] if protocol == "tsafrir07" else
                              float(be.bounded_slowdowns(copy["submit"], copy["run"], started).mean()))
            result["bsld_shaken"] = scores
        out.append(result)
    return out, counts


# ----- `benchmark reproduce hpc --protocol`: the logs, the table, the outputs ---------------------------
#: the rows each protocol runs by default: all of SC'15's; TPDS'07's Table 3 and EASY++ as SC'15 runs it
DEFAULT_ROWS = {"gaussier15": list(ROWS),
                "tsafrir07": ["easy", "easy-sjbf", "easy-pp-tsafrir", "easy-sjbf-clairvoyant", "easy-pp"]}
SHIPPED = {"SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz", "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz"}


def markers(protocol: str) -> tuple[str, str]:
    return f"<!-- reproduce-hpc-{protocol}:start -->", f"<!-- reproduce-hpc-{protocol}:end -->"


def _pct(ours: float, paper: float | None) -> str:
    if paper is None:
        return "—"
    pct = 100 * (ours - paper) / paper
    return "0.00 %" if abs(pct) < 0.005 else f"{pct:+.2f} %"


def protocol_markdown(protocol: str, results: list[tuple[str, list[dict], list]], source: str, elapsed_s: float,
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


def measure_protocol(todo: list[tuple[str, Path]], protocol: str, rows: list[str], method: str | None, seed: int,
                     shaking: dict | None = None, quiet: bool = False) -> tuple[list, list[dict], list[dict]]:
    """`rows` of `protocol` on every (log, path) of `todo`, easy-pp's rows also with the online `method`'s
    p̂ (or None): ([(log, its rows, its filter counts)], all rows, the differences over the shaken copies)."""
    from benchmark.progress import say
    from predictors.online_jobs import online_predictor

    results = []
    for log, path in todo:
        say(f"{log}: {protocol}: {', '.join(rows)}", quiet)
        factory = None if method is None else (lambda jobs: online_predictor(method, jobs, seed))
        out, counts = run_protocol(path, log, protocol, rows, predictor_factory=factory, predictor_name=method,
                                   shaking=shaking)
        for r in out:
            if shaking:
                r.update(shaken_fields(r.pop("bsld_shaken")))
        results.append((log, out, counts))
    all_rows = [r for _, rs, _ in results for r in rs]
    pairs = [(f"{r['row']} ({method})", r["row"]) for r in all_rows if r["p_hat"]]
    diffs = paired_differences(all_rows, list(dict.fromkeys(pairs)), lambda r: r["label"]) if shaking else []
    return results, all_rows, diffs


def write_protocol_outputs(folder: Path, protocol: str, measured: tuple, source: str, elapsed_s: float,
                           method: str | None, seed: int, shaking: dict | None = None) -> str:
    """Write reproduce-hpc-PROTOCOL.md and results.json into `folder` from `measured` (measure_protocol's
    result); the markdown."""
    from atlas_data.outputs import command_line
    from predictors.online_jobs import ONLINE_METHODS

    results, all_rows, diffs = measured
    text = protocol_markdown(protocol, results, source, elapsed_s, method, shaking, diffs)
    (folder / f"reproduce-hpc-{protocol}.md").write_text(text)
    summary = {"source": source, "protocol": protocol, "predictor": method, "seed": seed,
               "online_settings": ONLINE_METHODS.get(method), "shaking": shaking, "differences": diffs,
               "rows": all_rows,
               "filter": {log: counts for log, _, counts in results},
               "paper": GAUSSIER15 if protocol == "gaussier15" else TSAFRIR07,
               "row_settings": {k: {"what": v[0], "predictsim": v[1]} for k, v in ROWS.items()},
               "elapsed_s": elapsed_s, "complete": True, "argv": command_line()}
    (folder / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    return text
