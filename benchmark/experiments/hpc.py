"""The experiment of `benchmark reproduce hpc`: the HPC batch schedulers on the shipped Parallel Workloads Archive logs.

FCFS, SJF, EASY backfilling on the users' requested times, EASY on the true run times (the oracle
p̂), EASY++ (Tsafrir, Etsion & Feitelson, TPDS 2007: the user's recent jobs as prediction) and
conservative backfilling, each on the cluster simulator (schedulers.cluster.simulator) with its kernel,
on the sequences of RLScheduler's protocol (benchmark.experiments.rlscheduler: the same logs,
the same 10 × 1,024-job sequences, the same machine), with one difference: a job is killed at its
requested time, as the schedulers of these logs do (its run time is capped there). Prints, per log
and policy, the average bounded slowdown (τ = 10 s), the mean wait and the utilisation, and the
cluster task's metrics of the same runs (schedulers.cluster.metrics.simulate_fairness, each user a
tenant: JCT, slowdown, the sharing losses). With `--whole` each policy runs once on the whole log
(or the whole test part) instead of the sequences; a run whose users × hours would overflow the
sharing metrics' ledger is refused before any simulation (`check_span`).
With `--predictor METHOD` easy-p's p̂ is a prediction method's, fitted on each log's time-ordered
train part (benchmark.tasks.traces), and every run is on sequences of the test part: user estimates,
EASY++'s recent-jobs predictor, learned p̂ and (with `--predictor oracle`, the default) the true run
times side by side. With `--shake K` every row also runs on K shaken copies of each sequence (input
shaking, atlas_data.shaking; the same copies for every policy) and shows its spread.
`--protocol gaussier15|tsafrir07` runs a published whole-log table instead
(benchmark.experiments.hpc_protocols). docs/hpc-backfilling.md.

`read_logs` reads and checks the logs before any simulation, `measure` runs every policy on them,
`write_outputs` writes reproduce-hpc.md, results.json and reproduce-hpc.png / .svg (each row's
bounded slowdown with its shaken range, per log); `markdown` is also the block between the markers
below (with --whole, the reproduce-hpc-whole ones).

Part of the experiments package (benchmark.experiments): may import benchmark.experiments.rlscheduler,
benchmark.* below the commands (plots, progress, tasks), atlas_data and schedulers; never
benchmark.commands.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from atlas_data.errors import InputError
from atlas_data.outputs import command_line
from atlas_data.shaking import spread
from benchmark.experiments.rlscheduler import (LENGTH, LOGS, SHAKEN_HEAD, SHAKEN_RULE, SHORT_RUN_S, differences_table,
                                               load_log, paired_differences, print_notes, sequence_starts,
                                               shaken_caption, shaken_cells, shaken_fields, shaken_sequences,
                                               shipped_log)
from benchmark.progress import say

START, END = "<!-- reproduce-hpc:start -->", "<!-- reproduce-hpc:end -->"
WHOLE_START, WHOLE_END = "<!-- reproduce-hpc-whole:start -->", "<!-- reproduce-hpc-whole:end -->"  # with --whole
#: every policy of the comparison, in table order, and what decides it (docs/hpc-backfilling.md)
POLICIES = {
    "fcfs": "FCFS, no backfilling (hpc_queue)",
    "sjf": "SJF by requested time, no backfilling (hpc_queue)",
    "easy": "EASY backfilling, p̂ = requested time (easy_p)",
    "easy-p": "EASY backfilling, p̂ = --predictor: the run time (oracle) or a learned p̂ (easy_p)",
    "easy-pp": "EASY++: p̂ = the user's two last run times, raised to the requested time when outlived, SJBF (easy_p)",
    "conservative": "conservative backfilling, p̂ = requested time (conservative)",
}
#: the cluster task's metrics of every run (schedulers.cluster.metrics, docs/fairness.md), users as tenants
CLUSTER_METRICS = ("avg_jct", "avg_slowdown", "p99_slowdown", "sharing_loss_jobs", "tenant_loss_intervals")
#: the most (user, one-hour window) records a run may need: the cluster metrics' ledger keeps one per
#: user per window up to the makespan, about 135 bytes each with their table (≈ 2.7 GB here); the
#: whole HPC2N log needs about 8 million
MAX_USER_WINDOWS = 20_000_000
#: the shipped logs: RLScheduler's two (their sequences) and CTC-SP2 (sequences over the whole log)
HPC_LOGS = {**{name: (file, slice_) for name, (file, slice_, _) in LOGS.items()},
            "CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", 0)}


def pairs(method: str) -> list[tuple[str, str]]:
    """The differences between rows (labels a, b: a − b) shown over the shaken copies: what backfilling
    gains, what the oracle, a learned p̂ and EASY++ change against the users' requested times, the learned
    p̂ against EASY++'s own prediction inside EASY++, conservative against EASY backfilling."""
    out = [("easy", "fcfs"), ("easy-p (oracle)", "easy")]
    if method != "oracle":
        out.append((f"easy-p ({method})", "easy"))
    out.append(("easy-pp", "easy"))
    if method != "oracle":
        out.append((f"easy-pp ({method})", "easy-pp"))
    return out + [("conservative", "easy")]


def policy_names(text: str | None, where: str = "--policies") -> list[str]:
    """The --policies list (default: all), InputError for an unknown or repeated name."""
    if text is None:
        return list(POLICIES)
    names = [t.strip() for t in text.split(",")]
    for name in names:
        if name not in POLICIES:
            raise InputError(f"unknown policy {name!r} (choose from {', '.join(POLICIES)})", where=where)
    if len(set(names)) < len(names):
        raise InputError("a policy is named twice", where=where)
    return names


def killed_runs(log: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(run time capped at the requested time, the user estimate, whether the job was killed): a job
    that runs past its requested time is killed at it. Where the log leaves the requested time out
    (−1, or any value not > 0) nothing is killed and the estimate is the site's limit (`site_limit`),
    never the job's own run time: RLScheduler's protocol puts the run time there
    (benchmark.experiments.rlscheduler.load_log), which would hand sjf, EASY, EASY++,
    conservative backfilling and a learned p̂'s cap the job's true size."""
    requested = log["requested"]
    given = requested > 0
    killed = given & (log["run"] > requested)
    run = np.where(killed, requested, log["run"])
    return run, np.where(given, requested, site_limit(log)), killed


def site_limit(log: dict) -> float:
    """The user estimate of a job whose log gives no requested time: the machine's wall-time limit —
    the header's MaxRuntime, or else the longest requested time of the whole log (`with_site_limit`
    keeps it when the log is cut to a part) — a property of the site, not of the job; inf when the log
    gives neither (no estimate: the policies that need one are refused, `check_estimates`)."""
    if "site_limit" in log:
        return log["site_limit"]
    if log.get("max_runtime", 0) > 0:
        return float(log["max_runtime"])
    given = log["requested"][log["requested"] > 0]
    return float(given.max()) if len(given) else math.inf


def with_site_limit(log: dict) -> dict:
    """The log with its site limit fixed from the whole log (before it is cut to its test part)."""
    return {**log, "site_limit": site_limit(log)}


#: the policies that read the users' requested times (sjf, easy, easy-pp, conservative)
NEEDS_ESTIMATES = ("sjf", "easy", "easy-pp", "conservative")


def check_estimates(log: dict, names: list[str]) -> None:
    """InputError for a log that gives no requested time and no MaxRuntime when a policy needs one."""
    needing = [n for n in names if n in NEEDS_ESTIMATES]
    if needing and math.isinf(site_limit(log)):
        raise InputError(f"the log gives no requested time (field 9) and no MaxRuntime: {', '.join(needing)} "
                         "need the users' estimates (fcfs and easy-p do not)", path=log["path"], where="--policies")


def default_narrowed(name: str, log: dict, names: list[str]) -> list[str]:
    """The default policy list narrowed to what the log supports: without any requested time or
    MaxRuntime, the policies that read no estimate (fcfs, easy-p), with a note on stderr."""
    if not math.isinf(site_limit(log)):
        return names
    import sys

    left = [n for n in names if n not in NEEDS_ESTIMATES]
    print(f"{name}: note: the log gives no requested time (field 9) and no MaxRuntime: running "
          f"{', '.join(left)} only ({', '.join(n for n in names if n in NEEDS_ESTIMATES)} need the users' "
          "estimates)", file=sys.stderr)
    return left


def check_span(log: dict, starts: list[int], length: int) -> None:
    """InputError (before any simulation) for a run whose users × one-hour windows would exceed
    MAX_USER_WINDOWS (schedulers.cluster.metrics.span_estimate on the killed run times)."""
    from schedulers.cluster.metrics import span_estimate

    run, _, _ = killed_runs(log)
    window_s = machine(log["machine"]).fair_window_s
    for s0 in starts:
        sl = slice(s0, s0 + length)
        users = len(np.unique(log["user"][sl]))
        horizon, windows = span_estimate(log["submit"][sl], run[sl], log["nodes"][sl], users, log["machine"], window_s)
        if windows > MAX_USER_WINDOWS:
            raise InputError(f"a run of {min(length, log['jobs'] - s0):,} jobs spans about {horizon / 86400:,.0f} days "
                             f"for {users:,} users: about {windows:.3g} (user, hour) records of the sharing metrics, "
                             f"more than {MAX_USER_WINDOWS:,}" + (" (run the protocol's sequences: leave out --whole)"
                                                                   if length >= log["jobs"] else ""),
                             path=log["path"], where="--whole" if length >= log["jobs"] else "--jobs")


def runs_of(log: dict, slice_: int, whole: bool) -> tuple[list[int], int]:
    """(first job of each run, jobs per run): the protocol's sequences, or the whole log at once."""
    return ([0], log["jobs"]) if whole else (sequence_starts(log["jobs"], slice_), LENGTH)


def make_policy(name: str, estimate=None):
    """The simulator policy of `name` (its decision only: the machine is the simulator's, `machine`);
    `estimate`: easy-pp's p̂ in place of its recent-jobs prediction."""
    from schedulers.cluster.policies.conservative import ConservativeBackfill
    from schedulers.cluster.policies.easy_p import EasyP, EasyPlusPlus
    from schedulers.cluster.policies.hpc_queue import HPCQueue

    if name in ("fcfs", "sjf"):
        return HPCQueue(sjf=name == "sjf")
    if name == "easy-pp":
        return EasyPlusPlus(estimate=estimate)
    return {"easy": EasyP, "easy-p": EasyP, "conservative": ConservativeBackfill}[name]()


def machine(processors: int, interval_s: float = 1.0):
    """The cluster the simulator runs a log on: one node of `processors` processors (rigid jobs), a
    decision at every second, which SWF's whole-second times fall on (`interval_s` 0 for a log with
    fractional times: a decision at every event), no rounds, no cold starts
    (schedulers.cluster.policies.hpc_queue.machine)."""
    from schedulers.cluster.policies.hpc_queue import machine as hpc_machine

    return hpc_machine(processors, interval_s)


def decision_interval(log: dict) -> float:
    """The simulator's scheduling interval for the log: 1 s where every submit, run and requested time
    is a whole number of seconds (every event falls on a tick), else 0 (a decision at every event)."""
    times = np.concatenate([log["submit"], log["run"], log["requested"]])
    return 1.0 if bool(np.all(times == np.floor(times))) else 0.0


def run_sequence(log: dict, start: int, name: str, length: int = LENGTH, compiled: bool | None = None,
                 p_hat: str | None = None, shaken: tuple | None = None) -> dict:
    """One sequence of `length` jobs from job `start` under policy `name`: {bsld, wait, utilisation,
    the cluster task's CLUSTER_METRICS (each user a tenant), seconds (the simulation's)} and the
    run's start times. `p_hat`: easy-p's p̂, `oracle` (the killed run time; the default) or a
    method's (the log's `learned`, from `held_out_part`); easy-pp's, its recent-jobs prediction (the
    default) or a method's. `shaken` = (times, order) from atlas_data.shaking on the sequence's
    relative submit times: the run on that shaken copy of the same jobs (in the copy's arrival order)."""
    from schedulers import jit
    from schedulers.cluster.metrics import simulate_fairness
    from schedulers.jobs import JobSet

    sl = slice(start, start + length)
    submit = log["submit"][sl] - log["submit"][start]
    run, request, _ = killed_runs(log)
    order = np.arange(len(submit))  # the jobs in arrival order: the log's, or a shaken copy's
    if shaken is not None:
        submit, order = shaken
    run, request, nodes = run[sl][order], request[sl][order], log["nodes"][sl][order]
    n = len(run)
    users = log["user"][sl][order]
    names, tenant = np.unique(users, return_inverse=True)
    predicted = request  # the requested time; EASY++ predicts inside the run, capped at it
    learned = log["learned"][sl][order] if "learned" in log else None
    if name == "easy-p":  # the oracle (the killed run time), or a learned p̂ capped at the requested time
        predicted = run if p_hat in (None, "oracle") else np.minimum(learned, request)
    estimate = learned if name == "easy-pp" and p_hat is not None else None
    jobs = JobSet(job_id=order.astype(str).astype(object), submit_time=submit.astype(np.float64),
                  size=run.astype(np.float64), predicted=predicted.astype(np.float64),
                  gpus=nodes.astype(np.int64), tenant=tenant.astype(np.int64),
                  tenant_names=tuple(f"{u:g}" for u in names), weight=np.ones(n), time_offset=0.0)
    if compiled is None:
        compiled = jit.use_compiled(n, jit.CLUSTER_AUTO_MIN_JOBS)
    done = simulate_fairness(jobs, make_policy(name, estimate), compiled=compiled,
                             cluster=machine(log["machine"], decision_interval(log)))
    start_s = done.jobs["start_time"].to_numpy()
    wait = start_s - submit
    end = start_s + run
    busy = float(np.sum(run * nodes))
    return {"bsld": float(np.mean(np.maximum(1.0, (wait + run) / np.maximum(run, SHORT_RUN_S)))),
            "wait": float(np.mean(wait)), "utilisation": busy / (log["machine"] * float(end.max() - submit.min())),
            **{k: float(done.metrics[k]) for k in CLUSTER_METRICS}, "seconds": float(done.metrics["sim_seconds"]),
            "start": start_s}


def held_out_part(log: dict, method: str, seed: int, quiet: bool, whole: bool = False) -> dict:
    """The log restricted to its time-ordered test part (benchmark.tasks.traces.trace_split: the
    SWF log read by atlas_data.adapters.import_swf, its submit-time fields as features), with
    `learned`: `method`'s p̂ for each of its jobs, fitted on the train part (`load_log` with
    `exact_times` keeps the jobs the importer keeps: the test part is the importer's)."""
    from benchmark.tasks.traces import trace_predictions, trace_split

    ts = trace_split(log["path"], quiet=quiet)
    ids = ts.test_jobs["job_id"].astype(str).to_numpy()
    numbers = np.array([float(i) for i in ids])
    keep = np.isin(log["number"], numbers)
    part = {k: (v[keep] if isinstance(v, np.ndarray) else v) for k, v in log.items()}
    part["jobs"] = int(keep.sum())
    if not whole and part["jobs"] - LENGTH - 1 <= LENGTH:  # before the fit
        raise InputError(f"{part['jobs']} jobs in the log's test part: the sequences need at least {2 * LENGTH + 2} "
                         "(--whole runs on the whole test part)", path=log["path"], where="--predictor")
    if not part["jobs"]:
        raise InputError("no job in the log's test part", path=log["path"], where="--predictor")
    learned = trace_predictions(ts, [method], ids, seed=seed, quiet=quiet)[method]
    by_number = dict(zip(numbers.tolist(), learned.tolist()))
    part["learned"] = np.array([by_number[x] for x in part["number"].tolist()])
    return part


def markdown(rows: list[dict], source: str, elapsed_s: float, method: str, shaking: dict | None = None,
             whole: bool = False, diffs: list[dict] = ()) -> str:
    import datetime

    day = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    learned = f"easy-p's p̂: {method}, fitted on the train part"
    if whole:
        what = ("each policy once on the whole of each log, from an empty machine" if method == "oracle" else
                f"each policy once on the whole of each log's time-ordered test part, from an empty machine ({learned})")
    else:
        where = ("RLScheduler's starts, over the jobs that can run" if method == "oracle" else
                 f"consecutive jobs of each log's time-ordered test part; {learned}")
        what = f"the mean over 10 sequences of {LENGTH:,} jobs ({where})"
    lines = [f"Produced by `benchmark reproduce hpc{' --whole' if whole else ''}` on {source} ({day}, "
             f"{elapsed_s:.0f} s): {what}, jobs killed at their requested time (docs/hpc-backfilling.md)."]
    head, rule = "| log | policy | bounded slowdown | mean wait (s) | utilisation | killed jobs |", "|---|---|---:|---:|---:|---:|"
    if shaking:
        lines[0] += shaken_caption(shaking, "bounded slowdown")
        head, rule = head + SHAKEN_HEAD, rule + SHAKEN_RULE
    lines += ["", head, rule]
    for r in rows:
        line = (f"| {r['log']} | {r['label']} | {r['bsld']:.2f} | {r['wait']:,.0f} | {r['utilisation']:.3f} | "
                f"{r['killed']} |")
        if shaking:
            line += shaken_cells(r)
        lines.append(line)
    lines += differences_table(diffs)
    lines += ["", "The cluster task's metrics of the same runs (docs/fairness.md; each user a tenant, "
              "fair shares over one-hour windows; 0 on the ideal schedule):", "",
              "| log | policy | mean JCT (h) | mean slowdown | p99 slowdown | sharing loss (jobs) | tenant-loss windows |",
              "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['log']} | {r['label']} | {r['avg_jct'] / 3600:.2f} | {r['avg_slowdown']:,.1f} | "
                     f"{r['p99_slowdown']:,.0f} | {r['sharing_loss_jobs']:.3f} | {r['tenant_loss_intervals']:.3f} |")
    return "\n".join(lines) + "\n"


#: a row's colour by what decides its p̂: none, the users' requested times, EASY++'s, a learned one, the truth
P_HAT_COLOURS = {"none": "#8C8C8C", "requested": "#4C72B0", "easy++": "#DD8452", "learned": "#C44E52", "oracle": "#55A868"}


def p_hat_kind(row: dict) -> str:
    """What a row's p̂ is (P_HAT_COLOURS' key)."""
    if row["policy"] == "fcfs":
        return "none"
    if row["p_hat"] == "oracle":
        return "oracle"
    if row["p_hat"] is not None:
        return "learned"
    return "easy++" if row["policy"] == "easy-pp" else "requested"


def figure(rows: list[dict], path: Path) -> Path:
    """One panel per log: each row's bounded slowdown (log scale), with the central 95 % of the shaken
    copies as a bar where there are any, coloured by what decides its p̂ (PNG + SVG)."""
    from matplotlib.lines import Line2D

    from benchmark.plots import figure_legend, log_scale, save_figure, subplots

    logs = list(dict.fromkeys(r["log"] for r in rows))
    height = 0.9 + 0.28 * max(sum(r["log"] == log for r in rows) for log in logs)
    fig, axes = subplots(1, len(logs), figsize=(5.2 * len(logs) + 1.8, height), squeeze=False)
    for ax, log in zip(axes[0], logs):
        mine = [r for r in rows if r["log"] == log][::-1]  # the table's first row on top
        y = np.arange(len(mine))
        for k, r in zip(y, mine):
            colour = P_HAT_COLOURS[p_hat_kind(r)]
            if "bsld_shaken_lo" in r:
                ax.plot([r["bsld_shaken_lo"], r["bsld_shaken_hi"]], [k, k], color=colour, lw=3, alpha=0.45,
                        solid_capstyle="butt")
            ax.plot([r["bsld"]], [k], "o", color=colour, ms=5)
        ax.set_yticks(y, [r["label"] for r in mine], fontsize=8)
        log_scale(ax, "x")
        ax.tick_params(axis="x", which="both", labelsize=7)
        ax.set_xlabel("bounded slowdown (τ = 10 s; lower is better)", fontsize=8)
        ax.set_title(log, fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    names = {"none": "no p̂", "requested": "users' requested times", "easy++": "EASY++'s recent jobs",
             "learned": "learned", "oracle": "oracle (true run times)"}
    shown = {p_hat_kind(r) for r in rows}
    handles = [Line2D([], [], marker="o", ls="", color=c) for k, c in P_HAT_COLOURS.items() if k in shown]
    labels = [names[k] for k in P_HAT_COLOURS if k in shown]
    if any("bsld_shaken_lo" in r for r in rows):
        handles.append(Line2D([], [], color="#8C8C8C", lw=3, alpha=0.45))
        labels.append("central 95 % of the shaken copies")
    figure_legend(fig, handles, labels, title="p̂", fontsize=8)
    return save_figure(fig, path, dpi=110)


@dataclass(frozen=True)
class Settings:
    """How `benchmark reproduce hpc` runs, checked: easy-p's p̂ (`method`: oracle or a prediction method
    fitted on each log's train part), its fit `seed`, `whole` logs instead of the sequences, the
    `shaking` ({copies, seed, max_shift_s}) or None."""

    method: str = "oracle"
    seed: int = 0
    whole: bool = False
    shaking: dict | None = None
    quiet: bool = False


def read_logs(jobs: str | None, names: list[str], all_policies: bool, settings: Settings) -> tuple[list, dict, str]:
    """The logs to run, read and checked before the first simulation: ([(name, log, slice)], {name: its
    policies}, the source for the caption). `jobs`: an SWF log's path, or None for the shipped logs;
    `all_policies`: no --policies given, so a log that cannot run a policy narrows the default."""
    if jobs:
        todo = [(Path(jobs).name, with_site_limit(load_log(jobs, exact_times=True)), 0)]
        source = f"the SWF log {jobs}"
    else:
        todo = [(name, with_site_limit(load_log(shipped_log(file), exact_times=True)), slice_)
                for name, (file, slice_) in HPC_LOGS.items()]
        source = "the shipped SDSC-SP2, HPC2N and CTC-SP2 logs"
    per_log = {}
    for name, log, slice_ in todo:  # every log checked before the first simulation
        print_notes(name, log)
        per_log[name] = default_narrowed(name, log, names) if all_policies else names
        check_estimates(log, per_log[name])
        if not settings.whole and (slice_ or log["jobs"]) - LENGTH - 1 <= LENGTH:
            raise InputError(f"{log['jobs']} jobs kept: the sequences need at least {2 * LENGTH + 2} "
                             "(--whole runs on the whole log)", path=log["path"], where="--jobs")
        if settings.method == "oracle":  # a learned p̂'s runs are on the test part, checked once it is known
            check_span(log, *runs_of(log, slice_, settings.whole))
    return todo, per_log, source


def measure(todo: list, per_log: dict, settings: Settings) -> tuple[list[dict], list[dict], int]:
    """Every policy of `per_log` on every log of `todo` (read_logs): (the rows, the differences between
    rows over the shaken copies, the number of runs per policy on the last log)."""
    method, shaking, quiet = settings.method, settings.shaking, settings.quiet
    rows, starts = [], []
    for name, log, slice_ in todo:
        if method != "oracle":
            say(f"{name}: fitting {method} on the train part", quiet)
            log, slice_ = held_out_part(log, method, settings.seed, quiet, settings.whole), 0
        starts, length = runs_of(log, slice_, settings.whole)
        if method != "oracle":
            check_span(log, starts, length)
        # the same shaken copies for every policy (paired), drawn from the sequences' relative times
        shaken = shaken_sequences(log, starts, shaking["copies"], shaking["max_shift_s"], shaking["seed"], length) \
            if shaking else []
        _, _, killed = killed_runs(log)
        in_sequences = int(sum(killed[s0:s0 + length].sum() for s0 in starts))
        for policy in per_log[name]:
            rows += policy_rows(name, log, policy, starts, length, in_sequences, shaken, settings)
    diffs = paired_differences(rows, pairs(method), lambda r: r["label"]) if shaking else []
    return rows, diffs, len(starts)


def policy_rows(name: str, log: dict, policy: str, starts: list[int], length: int, killed: int, shaken: list,
                settings: Settings) -> list[dict]:
    """The rows of one policy on one log: easy-p once per p̂ (the learned one and, on the same sequences,
    the oracle), easy-pp with its own prediction and with the learned one; every other policy once."""
    method = settings.method
    learned = method != "oracle"
    variants = {"easy-p": (method, "oracle") if learned else ("oracle",),
                "easy-pp": (None, method) if learned else (None,)}.get(policy, (None,))
    out = []
    for p_hat in variants:
        label = policy if p_hat is None else f"{policy} ({p_hat})"
        say(f"{name}: {label}", settings.quiet)
        runs = [run_sequence(log, s0, policy, length=length, p_hat=p_hat) for s0 in starts]
        out.append({"log": name, "policy": policy, "p_hat": p_hat, "label": label, "runs": len(starts),
                    "jobs": length, "killed": killed,
                    **{k: float(np.mean([r[k] for r in runs])) for k in ("bsld", "wait", "utilisation",
                                                                           *CLUSTER_METRICS)},
                    "seconds": float(sum(r["seconds"] for r in runs))})
        if settings.shaking:  # every metric over the copies (each copy: the mean over its sequences)
            copies = [[run_sequence(log, s0, policy, length=length, p_hat=p_hat, shaken=copy[i])
                       for i, s0 in enumerate(starts)] for copy in shaken]
            per_copy = {k: [float(np.mean([r[k] for r in runs])) for runs in copies]
                        for k in ("bsld", "wait", "utilisation", *CLUSTER_METRICS)}
            out[-1].update(shaken_fields(per_copy.pop("bsld")))
            out[-1]["shaken"] = {k: spread(v) for k, v in per_copy.items()}
    return out


def write_outputs(folder: Path, rows: list[dict], diffs: list[dict], sequences: int, source: str, elapsed_s: float,
                  settings: Settings) -> str:
    """Write reproduce-hpc.md, reproduce-hpc.png / .svg and results.json into `folder`; the markdown."""
    whole = settings.whole
    text = markdown(rows, source, elapsed_s, settings.method, settings.shaking, whole, diffs)
    (folder / "reproduce-hpc.md").write_text(text)
    figure(rows, folder / "reproduce-hpc.png")
    summary = {"source": source, "whole": whole, "sequences": None if whole else sequences,
               "length": None if whole else LENGTH, "policies": POLICIES,
               "predictor": settings.method, "seed": settings.seed, "shaking": settings.shaking, "rows": rows,
               "differences": diffs, "elapsed_s": elapsed_s, "complete": True, "argv": command_line()}
    (folder / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    return text
