"""The three scheduling objectives of LASched and their normalisers (docs/evaluation-protocol.md).

`evaluate(objective, jobs, policies, ...)` runs every policy on the one engine and returns tidy
rows (`policy`, `predictor`, `value`, `reference`, `ratio`, ...) plus per-job outcomes. The
references are exact: ΣC_j of SRPT (optimal for 1|r_j,pmtn|ΣC_j), S* by bisection with EDF
feasibility, and McNaughton's bound (with the CP-SAT optimum where the instance is small).
May import numpy/pandas and schedulers.* only.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from schedulers import normalisers
from schedulers.engine import simulate
from schedulers.jobs import JobSet
from schedulers.policy import build_policy, get_policy

OBJECTIVES = ("total_completion", "max_stretch", "makespan")
DEFAULT_MACHINES = (5, 10, 20, 50, 100)
# The prediction-aware policies run twice by default: as published (p̂ taken as the truth) and with
# DEFAULT_REVISION, the rule chosen from the real traces (docs/policies.md#revising-outlived-predictions)
DEFAULT_REVISION = "double"
_REVISED = tuple(f"{name}(revision='{DEFAULT_REVISION}')" for name in ("sprpt", "pspjf", "edf-p", "prr"))
# max stretch: a prr whose round-robin share bounds every job's stretch by 4/3 of round robin's bound
_NO_STARVATION = f"prr(lam=0.25, revision='{DEFAULT_REVISION}')"
DEFAULT_POLICIES = {
    "total_completion": ("fifo", "sjf", "spjf", "srpt", "sprpt", "pspjf", "rr", "prr", "las", "edf-p") + _REVISED
                        + ("gittins", "serpt"),
    "max_stretch": ("fifo", "sjf", "spjf", "srpt", "sprpt", "pspjf", "rr", "prr", "las", "edf-p", "edf") + _REVISED
                   + (_NO_STARVATION, "gittins", "serpt"),
    "makespan": ("lpt", "spt", "random", "lppt", "sppt"),
}


def make_policy(name: str, *, prr_lambda: float = 0.7, seed: int = 0, machines: int | None = None, stretch: float | None = None):
    cls = get_policy(name)
    if name == "prr":
        return build_policy(cls, lam=prr_lambda)
    if name == "edf":
        return build_policy(cls, stretch=stretch if stretch is not None else 1.0)
    if cls.kind == "parallel":
        return build_policy(cls, machines=machines, seed=seed)
    return build_policy(cls)


def stretches(jobs: JobSet, completion: np.ndarray) -> np.ndarray:
    return (completion - jobs.submit_time) / jobs.size


def reference_values(objective: str, jobs: JobSet, machines=DEFAULT_MACHINES, *, cpsat_work_limit: float = 10.0,
                     optimum: bool = True) -> dict:
    """The normaliser(s) of an objective on this instance (`optimum=False`: no CP-SAT makespan optimum, `opt` None)."""
    if objective == "total_completion":
        # SRPT's own loop (normalisers), not the engine: the same schedule at a tenth of the cost
        srpt = normalisers.srpt_completion_times(jobs.submit_time, jobs.size)
        return {
            "sum_completion": float(srpt.sum()),
            "sum_flow": float((srpt - jobs.submit_time).sum()),
        }
    if objective == "max_stretch":
        return {"s_star": normalisers.optimal_max_stretch(jobs.submit_time, jobs.size, rel_tol=1e-4)}
    if objective == "makespan":
        out = {}
        for m in machines:
            bound = normalisers.mcnaughton_bound(jobs.size, m)
            opt = None
            if optimum and normalisers.cpsat_feasible_size(jobs.n, m):
                opt = normalisers.makespan_optimum(jobs.size, m, work_limit=cpsat_work_limit)
            out[int(m)] = {"bound": float(bound), "opt": opt}
        return out
    raise ValueError(f"unknown objective {objective!r}")


def score(objective: str, jobs: JobSet, completion: np.ndarray, reference: dict, machines: int | None = None) -> dict:
    """One row's numbers for a finished schedule."""
    if objective == "total_completion":
        value = float(completion.sum())
        flow = float((completion - jobs.submit_time).sum())
        return {
            "value": value,
            "reference": reference["sum_completion"],
            "ratio": value / reference["sum_completion"],
            "flow_ratio": flow / reference["sum_flow"],
        }
    if objective == "max_stretch":
        s = stretches(jobs, completion)
        s_star = reference["s_star"]
        return {
            "value": float(s.max()),
            "reference": s_star,
            "ratio": float(s.max()) / s_star,
            "median_ratio": float(np.median(s)) / s_star,
            "p99_ratio": float(np.quantile(s, 0.99)) / s_star,
        }
    if objective == "makespan":
        ref = reference[int(machines)]
        value = float(completion.max())
        return {
            "machines": int(machines),
            "value": value,
            "reference": ref["bound"],
            "ratio": value / ref["bound"],
            "opt": ref["opt"],
            "opt_ratio": None if ref["opt"] is None else value / ref["opt"],
        }
    raise ValueError(f"unknown objective {objective!r}")


@dataclass
class Watch:
    """What `run_objective` reports while it runs: `on_step(row)` after each simulation, and wall seconds
    in `seconds`: `reference_s`, `per_job_s` (building the per-job frame) and `policies_s`
    {"policy", "policy/predictor" or "policy/m=M": seconds of simulation}.

    `per_job`, when given, takes the per-job rows run by run instead of one frame of every run at the
    end (at 10⁶ jobs × sixteen runs that frame alone was 1 GiB): `per_job.start(frame)` is given
    `per_job_template` of the planned runs before the first one, then `per_job.write(frame)` each run's
    rows as soon as it is scored, in the whole frame's row order; run_objective keeps no run's arrays
    and returns None for the frame."""

    on_step: Callable[[dict], None] | None = None
    seconds: dict = field(default_factory=dict)
    per_job: object | None = None


def run_objective(
    objective: str,
    jobs: JobSet,
    policies: list[str],
    predictions: dict[str, np.ndarray | None],
    *,
    machines=DEFAULT_MACHINES,
    prr_lambda: float = 0.7,
    seed: int = 0,
    optimum: bool = True,
    spreads: dict | None = None,
    watch: Watch | None = None,
) -> tuple[list[dict], pd.DataFrame | None, dict]:
    """Run `policies` on `jobs` for one objective.

    `predictions` maps a predictor label (e.g. "noise:0.5", "lgbm-meta") to p̂ in JobSet row order;
    predictive policies run once per label, the others once with predictor None. Returns tidy
    rows, a per-job frame (policy, predictor, machines, job_id, submit_time, duration,
    predicted_duration, completion_time, stretch, preemptions; None when `watch.per_job` takes it run
    by run) and the reference values. A `watch` (Watch) is told of each row as it is scored and
    receives the wall seconds of each part.
    `optimum=False` skips the CP-SAT makespan optimum (`opt`, `opt_ratio` None) for callers that
    only use the McNaughton-bound ratio: on windows of up to 200 jobs it costs seconds per call.
    `spreads` maps a label to its predicted log-normal spread σ (a number or one per job, JobSet
    row order; schedulers.revision): what `gittins`, `serpt` and the `quantile` revision read. A
    policy that needs one runs only on the labels that have one.
    """
    clock = time.perf_counter
    watch = watch if watch is not None else Watch()
    spent = watch.seconds
    spent.setdefault("policies_s", {})
    if objective == "makespan":  # batch release; ties then go by job_id alone
        jobs, order = jobs.as_batch()
        predictions = {label: np.asarray(p_hat)[order] for label, p_hat in predictions.items()}
    t0 = clock()
    reference = reference_values(objective, jobs, machines, optimum=optimum)
    spent["reference_s"] = clock() - t0
    s_star = reference.get("s_star")
    sink = watch.per_job
    if sink is not None:
        sink.start(per_job_template(jobs, planned_runs(objective, policies, predictions, machines, spreads)))
    spent["per_job_s"] = 0.0
    rows, runs = [], []
    for name in policies:
        for label in _labels(get_policy(name), predictions, spreads):
            run_jobs = jobs if label is None else jobs.with_predictions(predictions[label], (spreads or {}).get(label))
            for m in (machines if objective == "makespan" else [1]):
                policy = make_policy(name, prr_lambda=prr_lambda, seed=seed, machines=m, stretch=s_star)
                t0 = clock()
                result, policy = simulate_once(run_jobs, policy, m)
                key = name + (f"/{label}" if label is not None else "") + (f"/m={m}" if objective == "makespan" else "")
                spent["policies_s"][key] = clock() - t0
                row = {"policy": name, "predictor": label}
                row.update(score(objective, jobs, result.completion_time, reference, machines=m))
                if name == "edf-p":
                    row["edf_p_stretch"] = policy.stretch
                rows.append(row)
                runs.append((name, label, m, run_jobs.predicted, result.completion_time, result.preemptions))
                del result
                if sink is not None:  # this run's rows, then its arrays are let go
                    t0 = clock()
                    frame = per_job_frame(jobs, runs)
                    spent["per_job_s"] += clock() - t0
                    runs.clear()
                    sink.write(frame)
                    del frame
                if watch.on_step is not None:
                    watch.on_step(row)
    if sink is not None:
        return rows, None, reference
    t0 = clock()
    per_job = per_job_frame(jobs, runs)
    spent["per_job_s"] = clock() - t0
    return rows, per_job, reference


def _labels(cls, predictions: dict, spreads: dict | None) -> list:
    """The p̂ labels a policy runs under: every label if it reads p̂ (those with a spread if it reads
    one), else None alone."""
    labels = list(predictions) if cls.needs_prediction else [None]
    if getattr(cls, "needs_spread", False):
        labels = [label for label in labels if (spreads or {}).get(label) is not None]
    return labels


def planned_runs(objective: str, policies: list[str], predictions: dict, machines=DEFAULT_MACHINES,
                 spreads: dict | None = None) -> list[tuple[str, str | None, int]]:
    """(policy, p̂ label or None, machines) of every run `run_objective` makes, in its order."""
    ms = [int(m) for m in machines] if objective == "makespan" else [1]
    return [(name, label, m) for name in policies for label in _labels(get_policy(name), predictions, spreads)
            for m in ms]


# Simulations of this process, by what they depend on (simulate_once): the demo and a sweep run the
# same policies on the same jobs and p̂ for several objectives (ΣC_j and max stretch read one schedule).
_RUNS: OrderedDict = OrderedDict()
_RUNS_KEEP_JOBS = 4_000_000  # jobs held over all kept runs: three float64/int64 columns each, ~100 MB


def simulate_once(jobs: JobSet, policy, machines) -> tuple:
    """(SimResult, the policy after its run) of `simulate(jobs, policy, machines=machines)`, memoised in
    this process: a run is a function of the policy before it (its registered class and its
    attributes) and of the jobs (every column, p̂ and spread included), so a repeated one returns the
    first one's schedule, bit for bit the same. Plugin policies are always run (they may keep state
    of their own), and so is anything that does not pickle."""
    key = _run_key(jobs, policy, machines)
    if key is not None and key in _RUNS:
        _RUNS.move_to_end(key)
        return _RUNS[key]
    result = simulate(jobs, policy, machines=machines)
    if key is not None:
        _RUNS[key] = (result, policy)
        while sum(r.completion_time.size for r, _ in _RUNS.values()) > _RUNS_KEEP_JOBS:
            _RUNS.popitem(last=False)
    return result, policy


def _run_key(jobs: JobSet, policy, machines) -> str | None:
    """What a run depends on, hashed; None for a run not to memoise. The class is named by its
    registry entry (kind, name: a `name(param=value)` setting is a class of its own, not picklable by
    reference), its instance by its attributes."""
    import hashlib
    import pickle

    from atlas_data.plugins import is_plugin

    cls = type(policy)
    if is_plugin(cls) or jobs.n > _RUNS_KEEP_JOBS // 16:
        return None
    try:
        if get_policy(cls.name, cls.kind) is not cls:
            return None
        state = pickle.dumps((cls.kind, cls.name, vars(policy), jobs, machines), protocol=5)
    except Exception:  # noqa: BLE001 - a policy that does not pickle is simply run
        return None
    return hashlib.sha256(state).hexdigest()


def per_job_frame(jobs: JobSet, runs: list[tuple], rows: slice = slice(None)) -> pd.DataFrame:
    """One row per (run, job): each column built once from the runs' arrays.

    Building a frame per run and concatenating them held every row twice; at 10⁶ jobs × a dozen
    runs that was the command's peak memory. `runs` holds (policy, predictor, machines, p̂ or None,
    completion times, preemptions), each array in JobSet row order and cut to `rows` of the jobs.
    Each column has one type whatever the runs' arrays (per_job_template relies on it).
    """
    job_id, submit_time, size = jobs.job_id[rows], jobs.submit_time[rows], jobs.size[rows]
    n, k = len(size), len(runs)
    frame = pd.DataFrame(index=pd.RangeIndex(n * k))

    def text(values: np.ndarray) -> pd.Series:
        # an object column given as a Series of dtype object: pandas neither scans it to infer a
        # type nor copies it (a plain array cost ~1.3 s per 10⁷ rows in that scan)
        return pd.Series(values, index=frame.index, dtype=object, copy=False)

    # column by column, each built just before it is stored: pandas keeps one block per column
    # (no consolidated copy), and parquet then reads every column without copying it
    frame["policy"] = text(np.repeat(np.array([r[0] for r in runs], dtype=object), n))
    frame["predictor"] = text(np.repeat(np.array([r[1] for r in runs], dtype=object), n))
    frame["machines"] = np.repeat(np.array([r[2] for r in runs], dtype=np.int64), n)
    frame["job_id"] = text(np.tile(job_id, k))
    frame["submit_time"] = np.tile(submit_time, k)
    frame["duration"] = np.tile(size, k)
    frame["predicted_duration"] = _stack([r[3] if r[3] is not None else np.full(n, np.nan) for r in runs], np.float64)
    frame["completion_time"] = _stack([r[4] for r in runs], np.float64)
    frame["stretch"] = (frame["completion_time"].to_numpy() - frame["submit_time"].to_numpy()) / frame["duration"].to_numpy()
    frame["preemptions"] = _stack([r[5] for r in runs], np.int64)
    return frame


def per_job_template(jobs: JobSet, plan: list[tuple]) -> pd.DataFrame:
    """The first row of each planned run (`planned_runs`) as `per_job_frame` gives it: its columns with
    the types of the whole frame, known before any run (what a writer of the frame run by run needs;
    the predictor column, for one, is text only if some run has a p̂). No jobs: no rows, as the frame."""
    first = slice(0, min(jobs.n, 1))
    k = first.stop
    return per_job_frame(jobs, [(name, label, m, None, np.zeros(k), np.zeros(k, np.int64)) for name, label, m in plan],
                         rows=first)


def _stack(arrays: list, dtype) -> np.ndarray:
    return np.concatenate(arrays, dtype=dtype) if arrays else np.empty(0, dtype)
