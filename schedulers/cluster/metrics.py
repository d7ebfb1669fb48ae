"""Run a cluster policy on the cluster simulator and turn its ledgers into the fairness metrics (docs/fairness.md).

`simulate_fairness(jobs, policy, cluster=...)` -> FairnessRun (the policy on the cluster, a
ClusterSettings): per-job table, per-(tenant, window) table and the metric dict. Metric definitions (names as in the results rows):

- `sharing_loss_jobs`: share of jobs with ρ_job < 0.95, ρ_job over [t_begin, completion], t_begin =
  the first scheduling tick at or after the submit by default, or the submit (the cluster's `rho_from`).
- `tenant_loss_intervals`: share of (tenant, window) pairs with ρ_tenant < 1 among the pairs in
  which the tenant had demand (some active job in the window). Windows are `window_s` long (the
  cluster's `fair_window_s`, default 3,600 s; the ASTRAEA paper does not give its length), the last
  one cut at the makespan. Inside a window ρ_tenant = attained / fair GPU·s with the fair GPU·s of
  `tenant_loss_share`: `eq8` (default) = ∫ min(demand, quota), the demand-aware share (a window
  counts as a loss only when the tenant was refused what it asked for); `eq16` (the paper's
  simulator) = quota × window length — the quota denominator keeps growing while the tenant's
  demand is below it, so a tenant that asked for less than its quota counts as a loss, as in the paper.
- floors (`ideal_fairness`): both metrics on the ideal schedule of the same jobs (every job from
  its first tick, uninterrupted; capacity ignored), by the same ledger and code (`_ledger_metrics`).
- `avg_jct` (C − r), `avg_slowdown` / `p99_slowdown` = JCT / true duration = (pending + running) /
  running, where cold-start time counts as pending (no progress).
- `makespan` = last completion (time origin = first submit), `preemptions` (leases not renewed),
  `overhead_pct` = 100 × mean per-job cold-start seconds / avg JCT (checkpoints are overlapped
  with training and restored inside the cold start, see docs/fairness.md),
  `utilisation` = held GPU·s / (GPUs × makespan), `completed`.

Every policy runs on the one cluster simulator (schedulers.cluster.simulator): its kernel compiled or
as Python from the same source as `ATLAS_BENCH_JIT` says (schedulers.jit: compiled from
`CLUSTER_AUTO_MIN_JOBS` jobs by default, when numba is installed), or a plugin's Python rule
(`order` / `select`, schedulers.cluster.rule) on the Python loop. `FairnessRun.loop` says which ran:
"compiled" or "Python".

May import numpy, pandas and schedulers.*.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from schedulers.cluster.ltgf import LTGF
from schedulers.cluster.settings import ClusterSettings, first_tick
from schedulers.jobs import JobSet
from schedulers.policy_base import guard

SHARING_LOSS_RHO = 0.95
METRICS = ("sharing_loss_jobs", "tenant_loss_intervals", "avg_jct", "avg_slowdown", "p99_slowdown",
           "makespan", "preemptions", "migrations", "dropped_choices", "work_conservation_gaps", "overhead_pct",
           "utilisation", "completed")
JOB_COLUMNS = ("job_id", "tenant", "gpus", "submit_time", "start_time", "completion_time", "run_time",
               "gpu_seconds", "rho", "preemptions", "migrations")
# denominator of tenant_loss_intervals; the first is the default (docs/fairness.md: with eq16 an ideal
# schedule already loses most windows, and every policy lands within about 2 points of it)
TENANT_LOSS_SHARES = ("eq8", "eq16")
FLOOR = "_floor"  # suffix of a metric's value on the ideal schedule (`ideal_fairness`)
ALLOCATION_COLUMNS = ("job_id", "tenant", "start", "end", "nodes", "gpus", "kind")


@dataclass(frozen=True, eq=False)
class FairnessRun:
    policy: str
    jobs: pd.DataFrame
    tenant_intervals: pd.DataFrame
    metrics: dict = field(default_factory=dict)
    allocations: pd.DataFrame | None = None
    loop: str = "Python"  # how the cluster simulator (schedulers.cluster.simulator) ran: "compiled" or "Python"


def simulate_fairness(jobs: JobSet, policy, *, tenant_loss_share: str = TENANT_LOSS_SHARES[0],
                      notice=None, compiled: bool | None = None, cluster=None) -> FairnessRun:
    """Simulate one cluster policy (an instance of ClusterPolicy) on `jobs` on `cluster` (a
    ClusterSettings, schedulers.cluster.settings: the simulator's, never the policy's; None: the
    default one, `ClusterSettings()`); `notice(text)` is told
    when the compiled loop is being compiled (the first large run after installing); `compiled`:
    the loop to run (None: as `ATLAS_BENCH_JIT` and the run's size say). A plugin's exception (or a
    broken rule) is one line naming it (schedulers.policy_base.guard)."""
    from schedulers import jit  # noqa: PLC0415
    from schedulers.cluster import rule, simulator  # noqa: PLC0415

    if tenant_loss_share not in TENANT_LOSS_SHARES:
        raise ValueError(f"tenant_loss_share must be one of {TENANT_LOSS_SHARES}")
    t0 = time.perf_counter()
    with guard(policy):
        if compiled is None:
            compiled = jit.use_compiled(jobs.n, jit.CLUSTER_AUTO_MIN_JOBS)
        state = simulator.run(jobs, policy, compiled, notice, rule.params_of(policy, jobs), cluster)
    cluster = state.cluster
    completion, start, events = state.completion, state.start, state.events
    wall = time.perf_counter() - t0
    n = jobs.n
    makespan = float(np.nanmax(completion)) if n else 0.0
    gpus = jobs.gpus.astype(np.int64)
    gpu_seconds, rho, win, loss = _ledger_metrics(jobs, state.ltgf, makespan, tenant_loss_share)
    run_time = gpu_seconds / gpus
    jct = completion - jobs.submit_time
    slowdown = jct / jobs.size
    overhead_s = np.asarray(state.cold_spent, np.float64)
    preempt = np.asarray(state.preempted, np.int64)
    job_ids = _texts(jobs.job_id)
    table = pd.DataFrame({
        "job_id": job_ids,
        "tenant": pd.Series(np.asarray(jobs.tenant_names, dtype=object)[jobs.tenant] if n else [], dtype=str),
        "gpus": gpus,
        "submit_time": jobs.submit_time,
        "start_time": start,
        "completion_time": completion,
        "run_time": run_time,
        "gpu_seconds": gpu_seconds,
        "rho": rho,
        "preemptions": preempt,
        "migrations": np.asarray(state.migrations, np.int64),
        "duration": jobs.size,
        "jct": jct,
        "slowdown": slowdown,
        "overhead_s": overhead_s,
    })
    done = int(np.isfinite(completion).sum())
    avg_jct = float(np.mean(jct)) if n else math.nan
    metrics = {
        **loss,
        "avg_jct": avg_jct,
        "avg_slowdown": float(np.mean(slowdown)) if n else math.nan,
        "p99_slowdown": float(np.percentile(slowdown, 99)) if n else math.nan,
        "makespan": makespan,
        "preemptions": int(preempt.sum()),
        "overhead_pct": float(100.0 * overhead_s.mean() / avg_jct) if n and avg_jct > 0 else 0.0,
        "utilisation": float(gpu_seconds.sum() / (state.M * makespan)) if makespan > 0 else math.nan,
        "completed": done,
        "dropped_choices": int(state.dropped_choices),
        "migrations": int(np.sum(state.migrations)),
        "work_conservation_gaps": int(state.work_conservation_gaps),
        "fair_share": cluster.fair_share,
        "tenant_loss_share": tenant_loss_share,
        "tenant_window_s": float(cluster.fair_window_s),
        "job_rho_from": cluster.rho_from,
        "rounds": int(state.rounds),
        "events": int(events),
        "sim_seconds": round(wall, 3),
    }
    return FairnessRun(policy.name, table, win, metrics, allocation_table(jobs, state, job_ids), loop=state.loop)


def _ledger_metrics(jobs: JobSet, ltgf, makespan: float, tenant_loss_share: str):
    """The ρ metrics from a finished run's LTGF ledgers (every job completed at or before `makespan`):
    per-job attained GPU·s and ρ_job, the per-(tenant, window) table, and {sharing_loss_jobs,
    tenant_loss_intervals}. The one computation of both, for a policy's run and for the ideal schedule."""
    n = jobs.n
    gpu_seconds = np.asarray(ltgf.job_att, np.float64)
    fair = np.asarray(ltgf.job_fair, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.where(fair > 0, gpu_seconds / np.where(fair > 0, fair, 1.0), np.where(gpu_seconds > 0, np.inf, 0.0))
    win = pd.DataFrame(ltgf.window_table(makespan))
    win.insert(0, "tenant", pd.Series(np.asarray(jobs.tenant_names, dtype=object)[win["tenant_code"].to_numpy(np.int64)], dtype=str))
    win = win.drop(columns="tenant_code")
    win["had_demand"] = win["fair_eq8_gpu_s"] > 0
    fair_w = win[f"fair_{tenant_loss_share}_gpu_s"].to_numpy(np.float64)
    att_w = win["attained_gpu_s"].to_numpy(np.float64)
    win["fair_gpu_s"] = fair_w
    with np.errstate(divide="ignore", invalid="ignore"):
        win["rho"] = np.where((fair_w > 0) & win["had_demand"].to_numpy(), att_w / np.where(fair_w > 0, fair_w, 1.0), np.nan)
    win["cum_rho"] = _cumulative_rho(win)
    counted = win["had_demand"] & (win["fair_gpu_s"] > 0)
    loss = {
        "sharing_loss_jobs": float(np.mean(rho < SHARING_LOSS_RHO)) if n else math.nan,
        "tenant_loss_intervals": float(np.mean(win.loc[counted, "rho"] < 1.0 - 1e-9)) if counted.any() else math.nan,
    }
    return gpu_seconds, rho, win, loss


def ideal_fairness(jobs: JobSet, *, tenant_loss_share: str = TENANT_LOSS_SHARES[0], cluster=None) -> dict:
    """{sharing_loss_jobs, tenant_loss_intervals} of the ideal schedule of `jobs` under the ledger
    options of `cluster` (a ClusterSettings; None: the default one — its GPUs for the quotas, tenant
    weights, fair share, window, ρ_job start, interval), whatever the policy: every job starts at
    its first scheduling tick and runs its true duration uninterrupted, with no cold start —
    cluster capacity ignored (as if it were unlimited; the quotas still split the cluster's GPUs). The same ledger (LTGF) and the same metric code as a
    real run (`_ledger_metrics`). Under the default definitions (ρ_job from the tick, eq8 windows)
    both are 0 by construction (every ρ ≥ 1); under `submit` / `eq16` they are what the definition
    charges a schedule without any contention (docs/fairness.md, "Floors")."""
    n = jobs.n
    if not n:
        return {"sharing_loss_jobs": math.nan, "tenant_loss_intervals": math.nan}
    cluster = ClusterSettings() if cluster is None else cluster
    ledger = LTGF(jobs.gpus, jobs.tenant, jobs.weight, len(jobs.tenant_names), cluster.total_gpus,
                  tenant_weights=cluster.tenant_weights, fair_share=cluster.fair_share, window_s=cluster.fair_window_s)
    submit = np.asarray(jobs.submit_time, np.float64)
    start = np.array([first_tick(float(t), cluster.interval_s) for t in submit])
    end = start + np.asarray(jobs.size, np.float64)
    enter = submit if cluster.rho_from == "submit" else start
    # events in time order (each tenant's ledger only moves forward); at one instant the order
    # changes no integral: completions, then arrivals, then starts
    times = np.concatenate([end, enter, start])
    kind = np.repeat([0, 1, 2], n)
    who = np.tile(np.arange(n), 3)
    for i in np.lexsort((who, kind, times)):
        j, t = int(who[i]), float(times[i])
        if kind[i] == 0:
            ledger.complete(j, t)
        elif kind[i] == 1:
            ledger.arrive(j, t)
        else:
            ledger.hold(j, t)
    return _ledger_metrics(jobs, ledger, float(end.max()), tenant_loss_share)[3]


def span_estimate(submit, size, gpus, tenants: int, total_gpus: int, window_s: float) -> tuple[float, float]:
    """(the simulated span's estimate in seconds, the tenant windows it needs): a work-conserving
    cluster keeps its makespan near the submit span + GPU·s / GPUs + the longest job, and the ledger
    keeps one record per tenant per window up to the makespan (what a run's memory grows with)."""
    size = np.asarray(size, np.float64)
    if not len(size):
        return 0.0, 0.0
    submit = np.asarray(submit, np.float64)
    horizon = float(submit.max() - submit.min()) + float((np.asarray(gpus) * size).sum()) / total_gpus + float(size.max())
    return horizon, tenants * horizon / window_s


def compiled_policies() -> list[str]:
    """The built-in cluster policies (each runs on its kernel, compiled or as Python), in the
    registry's order (without importing numba)."""
    from schedulers.policy import builtin_classes  # noqa: PLC0415 (the registry discovers the policy modules)

    return [cls.name for cls in builtin_classes("cluster")]


def allocation_table(jobs: JobSet, state, job_ids: pd.Series | None = None) -> pd.DataFrame:
    """The executed allocations of a finished run (a schedulers.cluster.simulator.RunState): one row per stretch a job held GPUs.
    `job_ids`: the jobs' ids as text, when the caller made them already (the per-job table's column).

    `nodes` is the placement as text "node:gpus[,node:gpus]" (node = index into the cluster's node
    list), `kind` is "run" or "cold-start" (GPUs held, no progress). The text columns (`job_id`,
    `tenant`, `nodes`, `kind`) are categorical: a run of 10⁶ jobs has tens of millions of rows over
    a million job ids and tens of thousands of placements, and text per row would take most of the time
    and memory of the run.

    The run's stretches are handed over to the table (`state.segments` is None after it): their
    placement records are freed once coded, before the table's own columns are made (at 10⁶ ASTRAEA
    jobs, about 200 MB that would otherwise be held beside them)."""
    stretches, state.segments = state.segments, None
    idx, start, end, code, texts, kind = _allocation_codes(stretches)
    del stretches
    # the tenants' codes gathered in pandas' type for that many categories (int8 for up to 127), not
    # gathered wider and converted: a run's tens of millions of rows
    tenant = _categorical(jobs.tenant, list(jobs.tenant_names))
    # copy=False: every array here is new, and float columns kept apart are not copied into one block
    return pd.DataFrame({
        "job_id": _categorical(idx, _texts(jobs.job_id) if job_ids is None else job_ids),
        "tenant": pd.Categorical.from_codes(tenant.codes[idx], dtype=tenant.dtype, validate=False),
        "start": start,
        "end": end,
        "nodes": _categorical(code, texts),
        "gpus": jobs.gpus.astype(np.int64)[idx],
        "kind": _categorical(kind, ["run", "cold-start"]),
    }, columns=list(ALLOCATION_COLUMNS), copy=False)


#: stretches coded at a time by _allocation_codes: a block's selections and gathers take a few MB
#: where the whole column's took a copy of it (two int64 columns of 17 million stretches at 10⁶ jobs)
CODE_BLOCK = 1 << 20


def _allocation_codes(stretches):
    """The executed stretches (schedulers.cluster.loop.Stretches) as codes: (job index, start, end, placement code, the placements'
    texts "node:gpus[,node:gpus]" indexed by the code, kind code 0 = run / 1 = cold start).
    A run of 10⁶ jobs has ~17 million stretches over ~65,000 distinct placements, so a text is
    made once per distinct placement and the stretches are coded without sorting them: one-node
    placements by their (node, GPUs), block by block (CODE_BLOCK), gangs by the parts of their
    placement record, column by column: the coding needs little memory beyond the codes it makes."""
    s_job, s_start, s_end, s_kind = stretches.job, stretches.start, stretches.end, stretches.kind
    flat_node, flat_k = stretches.flat_node, stretches.flat_k
    offsets, parts = stretches.pl, stretches.pn
    positive = s_end > s_start
    if not positive.all():  # a run's stretches are all of positive length (loop.collect), kept without a copy
        rows = np.flatnonzero(positive)
        s_job, s_start, s_end, s_kind = s_job[rows], s_start[rows], s_end[rows], s_kind[rows]
        offsets, parts = offsets[rows], parts[rows]
    del positive
    code = np.empty(len(s_start), dtype=np.int32)
    texts: list[str] = []
    if not len(s_start):
        return s_job, s_start, s_end, code, texts, s_kind
    width = int(flat_k.max()) + 1
    bound = (int(flat_node.max()) + 1) * width  # above every part's number: node · width + GPUs
    number = np.int32 if bound <= np.iinfo(np.int32).max else np.int64  # a part's number's type

    def part(at):  # the numbers of the placement parts at offsets `at`
        return flat_node[at].astype(number) * width + flat_k[at]

    blocks = [slice(lo, lo + CODE_BLOCK) for lo in range(0, len(s_start), CODE_BLOCK)]
    one = parts == 1
    if one.any():
        seen = np.zeros(bound, dtype=bool)
        for b in blocks:
            seen[part(offsets[b][one[b]])] = True
        texts = [f"{v // width}:{v % width}" for v in np.flatnonzero(seen).tolist()]
        rank = np.cumsum(seen, dtype=np.int32) - 1
        for b in blocks:
            chosen = one[b]
            code[b][chosen] = rank[part(offsets[b][chosen])]
    if not one.all():
        many = np.flatnonzero(~one)
        del one
        # the gangs' placement records (a job's stretches of one start share its record) ...
        placed = offsets[many]
        used = np.zeros(len(flat_node) + 1, dtype=bool)
        used[placed] = True
        records = np.flatnonzero(used)
        del used
        record_of = np.searchsorted(records, placed)  # its index among the records (sorted)
        del placed
        size = np.zeros(len(records), dtype=np.int64)
        size[record_of] = parts[many]
        # ... as rows of their parts (padded with -1), filled column by column, and the distinct rows
        table = np.full((len(records), int(size.max())), -1, dtype=number)
        for column in range(table.shape[1]):
            longer = np.flatnonzero(size > column)
            table[longer, column] = part(records[longer] + column)
        del size, records
        record_code, first = _distinct_rows(table, bound + 1)
        code[many] = len(texts) + record_code[record_of]
        texts += _placement_texts(table[first], width)
    return s_job, s_start, s_end, code, texts, s_kind


def _placement_texts(rows: np.ndarray, width: int) -> list[str]:
    """The texts "node:gpus,node:gpus[,...]" of placements given as rows of part numbers (node · width +
    GPUs; a row's parts first, then -1): a text per distinct part, joined column by column (Python's
    string additions on whole columns, not a join per row: 64,000 gangs of 465,000 parts at 10⁶
    ASTRAEA jobs)."""
    parts = np.unique(rows[rows >= 0])
    names = np.array([f"{v // width}:{v % width}" for v in parts.tolist()], dtype=object)
    text = names[np.searchsorted(parts, rows[:, 0])]
    for column in rows.T[1:]:
        more = np.flatnonzero(column >= 0)
        text[more] = text[more] + ("," + names[np.searchsorted(parts, column[more])])
    return text.tolist()


def _distinct_rows(table: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """(a code per row of `table`, equal for equal rows, numbered in order of first appearance; the
    index of each code's first row), for entries in [-1, base - 2]: the columns are folded in one at
    a time by hashing (np.unique(axis=0) sorts the rows as bytes, several times slower)."""
    code = np.zeros(len(table), dtype=np.int64)
    for column in table.T:
        code, _ = pd.factorize(code * base + column + 1)
    first = np.empty(int(code.max()) + 1 if len(code) else 0, dtype=np.int64)
    first[code[::-1]] = np.arange(len(code) - 1, -1, -1)
    return code.astype(np.int32), first


def _categorical(codes: np.ndarray, names) -> pd.Categorical:
    """The texts names[codes] as a categorical column (names that repeat are one category). Distinct
    names are their own categories in order, and `codes` are taken as they are (no copy of a column
    of tens of millions of rows when their type is pandas' for that many categories). Distinct names
    (a run's job ids) cost one pass over them: pandas' own check that categories are distinct."""
    categories = pd.Index(names, dtype=str)
    try:
        dtype = pd.CategoricalDtype(categories)
    except ValueError:  # names that repeat (or are missing): coded by their first appearance
        which, categories = pd.factorize(categories)
        return pd.Categorical.from_codes(which.astype(np.int32)[codes], categories, validate=False)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def _texts(values: np.ndarray) -> pd.Series:
    """`values` (an object array) as a text column; values that are not text are their str(), as
    numpy's astype(str) makes them (a run's job ids are already text: no copy of a million of them)."""
    if pd.api.types.infer_dtype(values, skipna=False) == "string":
        return pd.Series(values, dtype=str)
    return pd.Series(values.astype(str), dtype=str)


def _cumulative_rho(win: pd.DataFrame) -> np.ndarray:
    att = win.groupby("tenant", sort=False)["attained_gpu_s"].cumsum().to_numpy()
    fair = win.groupby("tenant", sort=False)["fair_gpu_s"].cumsum().to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(fair > 0, att / np.where(fair > 0, fair, 1.0), np.nan)
