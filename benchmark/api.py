"""The Python API of ATLAS-Bench: the benchmark's steps as functions returning DataFrames.

For notebooks and scripts (docs/api.md is the quick start). Each function wraps the code the
`benchmark` command runs — the same importers, the same three-stage fit, the same engine, the same
objectives and fairness task — so a number computed here is the number a command line gives:

| function | does | wraps |
|---|---|---|
| `load_jobs(spec)` | a shipped trace by name, or a jobs-table / SWF file, as a jobs table | `benchmark.tasks.inputs.read_jobs_or_trace` |
| `import_trace(path, format)` | another trace format as a jobs table, and what was dropped | `atlas_data.adapters.import_trace` |
| `build_dataset(out)` / `load_dataset(data)` | the ATLAS dataset (frame + card) | `atlas_data.build`, `atlas_data.named` |
| `predict(data, method)` | test-split p̂ of a method name or of any scikit-learn regressor | `predictors.api.predict_test`, `predictors.framework.ThreeStage` |
| `prediction_scores(data, predictions)` | RMSLE, Cov@τ, Spearman … per method | `predictors.metrics.evaluate` |
| `test_jobs(data, predictor)` | the test split as a jobs table, with learned p̂ | `atlas_data.build.test_jobs` |
| `simulate(jobs, policy)` | one policy on the engine: per-job start and completion | `schedulers.engine.simulate` |
| `score(jobs, objective)` | ratio to the optimum / bound per policy and p̂ | `schedulers.objectives.run_objective` |
| `fairness(...)` | the fairness task: metrics per policy, per-job and per-tenant tables | `run("fairness", ...)` |
| `run(task, **options)` | any task, every option of `benchmark run --task TASK`: the results rows | `benchmark.commands.run.perform` |

Bad input raises `atlas_data.errors.InputError` with the same one-line message the command line
prints; an argument of the wrong kind (an array where a DataFrame goes, …) a TypeError or ValueError. Nothing here writes outside the folders it is given, except that a dataset's
learned p̂ is cached inside the dataset folder (docs/predictors.md#caching) and that the named
datasets (`default`, `paper-scale`) are built once into the user cache.

Examples run as doctests (tests/benchmark/test_api.py); `folder` in them is an empty temporary
folder. May import every package of the project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "Dataset", "FairnessResult", "build_dataset", "fairness", "import_trace", "load_dataset", "load_jobs",
    "method_names", "policy_names", "predict", "prediction_scores", "run", "score", "simulate", "test_jobs",
]

PathLike = str | os.PathLike


# ----- data ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Dataset:
    """An ATLAS dataset: its folder, the frame (one row per job) and the card (`dataset.json`)."""

    path: Path
    frame: pd.DataFrame
    card: dict

    @property
    def features(self) -> list[str]:
        """The model feature columns (submit-time information only)."""
        return list(self.card["features"])

    def split(self, name: str) -> pd.DataFrame:
        """The rows of one split: `train`, `val` or `test`."""
        if name not in ("train", "val", "test"):
            raise ValueError(f"split must be train, val or test, got {name!r}")
        return self.frame[self.frame["split"] == name].reset_index(drop=True)


def build_dataset(out: PathLike, *, jobs: int = 30_000, seed: int = 0, source: str = "synthetic",
                  raw_dir: PathLike | None = None, quiet: bool = True) -> Dataset:
    """Build an ATLAS dataset into the new folder `out` and load it (`benchmark data build`).

    `source="synthetic"` generates `jobs` raw PAI-2020 jobs (seeded); `source="pai"` reads the raw
    tables in `raw_dir`. Failed and unlabelled jobs are dropped and counted in the card.

    >>> ds = build_dataset(folder / "ds", jobs=2000, seed=1)
    >>> ds.card["counts"]["kept"] == len(ds.frame) == sum(ds.card["counts"][s] for s in ("train", "val", "test"))
    True
    >>> sorted(ds.frame["split"].unique())
    ['test', 'train', 'val']
    >>> len(ds.features)
    32
    """
    from atlas_data.build import build_dataset as _build

    _build(out, source=source, raw_dir=raw_dir, jobs=jobs, seed=seed, quiet=quiet)
    return load_dataset(out)


def load_dataset(data: PathLike | Dataset = "default", *, quiet: bool = False) -> Dataset:
    """A dataset folder, or a named one (`default`, `paper-scale`: built once into the user cache,
    with one progress line per step on stderr unless `quiet`). The fingerprint is checked.

    >>> built = build_dataset(folder / "ds", jobs=2000, seed=1)
    >>> ds = load_dataset(folder / "ds")
    >>> ds.card["fingerprint"] == built.card["fingerprint"]
    True
    >>> bool(ds.split("test")["p_star"].gt(0).all())
    True
    """
    if isinstance(data, Dataset):
        return data
    from atlas_data.build import load_dataset as _load
    from atlas_data.named import resolve_dataset

    path = resolve_dataset(data, quiet=quiet)
    frame, card = _load(path)
    return Dataset(Path(path), frame, dict(card))


def load_jobs(spec: PathLike | pd.DataFrame, *, columns: dict[str, str] | str | None = None) -> pd.DataFrame:
    """A jobs table (docs/data-formats.md), validated: a shipped trace by name (`openb`, `philly`,
    `philly:<vc>`, `elasticflow`, `elasticflow:<cluster>`), a CSV / parquet file or a DataFrame
    (`columns` maps their names: `{"duration": "runtime"}` or `"duration=runtime"`), or a `.swf`
    log. Columns that are not jobs-table columns are left out of the result.

    >>> jobs = load_jobs("elasticflow:cluster05")
    >>> len(jobs), list(jobs.columns[:4])
    (3629, ['job_id', 'submit_time', 'duration', 'gpus'])
    >>> _ = (folder / "mine.csv").write_text("id,submit,runtime\\na,0,10\\nb,5,3\\n")
    >>> load_jobs(folder / "mine.csv", columns="job_id=id,submit_time=submit,duration=runtime")[["job_id", "duration", "gpus"]]
      job_id  duration  gpus
    0      a      10.0     1
    1      b       3.0     1
    """
    from atlas_data.jobs_table import apply_column_map, parse_column_map, validate_jobs

    if isinstance(columns, dict):
        columns = ",".join(f"{k}={v}" for k, v in columns.items())
    if isinstance(spec, pd.DataFrame):
        if columns is not None:  # was ignored: a mapped gpus column became 1 GPU per job, silently
            spec = apply_column_map(spec, parse_column_map(columns, "columns"), "<DataFrame>", "columns")
        return validate_jobs(spec)
    _check_jobs_spec(spec)
    from benchmark.tasks.inputs import read_jobs_or_trace

    table, _ = read_jobs_or_trace(str(spec), columns=columns, quiet=True)
    return table


def _check_jobs_spec(spec) -> None:
    if not isinstance(spec, (str, os.PathLike)):
        raise TypeError(f"jobs must be a pandas DataFrame, a file path or a shipped trace name, got "
                        f"{type(spec).__name__}" + (" (pd.DataFrame(...) makes one)"
                                                    if isinstance(spec, (np.ndarray, dict, list)) else ""))


def import_trace(path: PathLike, format: str, *, tenant_column: str | None = None,
                 columns: dict[str, str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Read a trace in `format` (`openb`, `helios`, `philly`, `elasticflow`, `swf`, `jobs`) as a
    jobs table, as `benchmark data import` does: `(jobs, report)`, the report saying how many
    rows were read and how many were dropped, by reason (reasons with none dropped left out).

    >>> _ = (folder / "log.swf").write_text(
    ...     "; MaxProcs: 8\\n"
    ...     "1 0 5 100 2 -1 -1 2 200 -1 1 7 3 -1 1 -1 -1 -1\\n"
    ...     "2 10 0 -1 1 -1 -1 1 50 -1 0 7 3 -1 1 -1 -1 -1\\n")
    >>> jobs, report = import_trace(folder / "log.swf", "swf")
    >>> jobs[["job_id", "submit_time", "duration", "gpus", "tenant"]]
      job_id  submit_time  duration  gpus tenant
    0      1          0.0     100.0     2      7
    >>> report["rows_read"], report["dropped"]
    (2, {'no_duration': 1})
    """
    from atlas_data.adapters import import_trace as _import

    jobs, report = _import(format, path, tenant_column=tenant_column, columns=columns)
    return jobs, {"rows_read": report.rows_read, "dropped": {k: int(v) for k, v in report.dropped.items() if v}}


# ----- predictions -----------------------------------------------------------------------------------
def method_names() -> list[str]:
    """The registered prediction methods (built in, then plugins)."""
    from predictors.methods import method_names as _names

    return _names()


_CALIBRATIONS = ("linear", "isotonic", None)


def predict(data: PathLike | Dataset, method="lgbm-meta", *, seed: int = 0, calibration: str | None = None,
            cache: bool = True) -> pd.DataFrame:
    """Test-split predictions `job_id`, `p_hat` (seconds; plus `lo`, `hi` for interval methods).

    `data` is a dataset (folder, name or `Dataset`) or a jobs table with its own time-ordered
    70/15/15 split (a shipped trace name or a file). `method` is a method name (`method_names()`),
    a `predictors.framework.ThreeStage`, or any scikit-learn-compatible regressor. Every route is
    the three-stage framework: fitted on train only, calibrated on validation only, then the test
    inputs — without their labels — are predicted. A regressor learns y = log1p(p) and is
    calibrated by `calibration`: None (the default: no Stage 2, exactly what `--methods
    package.module:Class` does, so both routes give the same p̂), `"linear"` (a + b·ŷ, least
    squares on validation) or `"isotonic"`. Named methods on a dataset use its prediction
    cache, as the scheduling task does (docs/predictors.md#caching).

    >>> from sklearn.linear_model import Ridge
    >>> ds = build_dataset(folder / "ds", jobs=2000, seed=1)
    >>> ridge = predict(ds, Ridge(alpha=1.0))
    >>> list(ridge.columns), len(ridge) == len(ds.split("test"))
    (['job_id', 'p_hat'], True)
    >>> set(ridge["job_id"]) == set(ds.split("test")["job_id"])
    True
    >>> cqr = predict(ds, "cqr-stack")
    >>> list(cqr.columns), bool((cqr["lo"] <= cqr["hi"]).all())
    (['job_id', 'p_hat', 'lo', 'hi'], True)
    """
    if calibration not in _CALIBRATIONS:
        raise ValueError(f"calibration must be one of {_CALIBRATIONS}, got {calibration!r}")
    ds_dir, trace = _prediction_source(data, seed)
    if isinstance(method, str):
        from predictors.api import predict_test

        if trace is None:  # the columns of the other paths (the cache also keeps the spread, log_sd)
            frame = predict_test(ds_dir, method, seed=seed, cache=cache)
            return frame[[c for c in ("job_id", "p_hat", "lo", "hi") if c in frame.columns]]
        from benchmark.tasks.traces import fit_trace_method

        return fit_trace_method(trace, method, seed=seed).to_frame()
    from predictors.data import SplitData

    split = trace.split if trace is not None else SplitData.from_folder(ds_dir)[0]
    model = _three_stage(method, calibration)
    return model.fit(split).predict(split.test_inputs()).to_frame()


def _three_stage(method, calibration):
    from predictors.framework import ThreeStage
    from predictors.stage2 import IsotonicCalibrator, LinearCalibrator, Passthrough

    if isinstance(method, ThreeStage):
        return method
    if not (hasattr(method, "fit") and hasattr(method, "predict")):
        raise TypeError(f"method must be a method name, a ThreeStage or an estimator with fit and predict, "
                        f"got {type(method).__name__}")
    stage2 = {"linear": LinearCalibrator, "isotonic": IsotonicCalibrator, None: Passthrough}[calibration]("main")
    return ThreeStage({"main": method}, stage2)


def _is_dataset_folder(path: Path) -> bool:
    return path.is_dir() and (path / "dataset.json").is_file()


def _prediction_source(data, seed: int):
    """(dataset folder, None) or (None, TraceSplit) for `data`."""
    from atlas_data.adapters import is_shipped_trace_name
    from atlas_data.named import NAMED_DATASETS

    if isinstance(data, Dataset):
        return data.path, None
    if not isinstance(data, (str, os.PathLike)):  # str() of a DataFrame was taken for a path ("File name too long")
        hint = (": to learn from a jobs table in memory, save it (frame.to_parquet('jobs.parquet')) and give the path"
                if isinstance(data, pd.DataFrame) else "")
        raise TypeError(f"data must be a dataset (folder, name or Dataset), a jobs file or a shipped trace name, got "
                        f"{type(data).__name__}{hint}")
    text = str(data)
    if (text in NAMED_DATASETS and not Path(text).exists()) or _is_dataset_folder(Path(text)):
        return load_dataset(text).path, None  # a named dataset's first build shows its progress
    if is_shipped_trace_name(text) or Path(text).is_file():
        from benchmark.tasks.traces import trace_split

        return None, trace_split(text, seed=seed, quiet=True)
    from atlas_data.errors import InputError

    raise InputError("neither a dataset folder (no dataset.json), a named dataset, a shipped trace nor a jobs file",
                     path=text)


def prediction_scores(data: PathLike | Dataset, predictions: pd.DataFrame | dict[str, pd.DataFrame],
                      *, seed: int = 0) -> pd.DataFrame:
    """The prediction metrics (docs/predictors.md#metrics) of test-split predictions, one row per
    method (index `method`): `rmsle`, `cov25`, `cov50`, their `_recurrent` variants, `spearman`, `under_log`,
    `interval_coverage`, `interval_width`. `predictions` is one frame of `predict` or a dict
    {method: frame}; they must cover exactly the test split.

    >>> ds = build_dataset(folder / "ds", jobs=2000, seed=1)
    >>> table = prediction_scores(ds, {m: predict(ds, m) for m in ("constant", "single-stage", "oracle")})
    >>> float(table.loc["oracle", "rmsle"]), float(table.loc["oracle", "cov25"])
    (0.0, 1.0)
    >>> bool(table.loc["single-stage", "rmsle"] < table.loc["constant", "rmsle"])
    True
    """
    from predictors.metrics import evaluate

    truth = _test_truth(data, seed)
    frames = predictions if isinstance(predictions, dict) else {"predictions": predictions}
    rows = []
    for name, frame in frames.items():
        p_hat = _predictions_frame(name, frame)
        ids = p_hat.index
        if set(ids) != set(truth.index):
            raise ValueError(f"predictions {name!r} do not cover exactly the test split ({len(truth)} jobs)")
        p = truth.loc[ids, "p_star"].to_numpy(float)
        rec = truth.loc[ids, "is_recurrent"].to_numpy(bool)
        rows.append({"method": name, **evaluate(p_hat.to_numpy(), p, rec, frame.get("lo"), frame.get("hi"))})
    return pd.DataFrame(rows).set_index("method")


def _test_truth(data, seed: int) -> pd.DataFrame:
    from predictors.data import SplitData

    ds_dir, trace = _prediction_source(data, seed)
    split = trace.split if trace is not None else SplitData.from_folder(ds_dir)[0]
    return split.test_truth()


def test_jobs(data: PathLike | Dataset = "default", *, predictor: str | None = None, seed: int = 0,
              tenant_column: str | None = None) -> pd.DataFrame:
    """The jobs a scheduling run schedules from `data` — a dataset's test split (duration = p*,
    gpus = requested GPUs, tenant from `tenant_column`) or a jobs table's time-ordered test part —
    with `predicted_duration` learned by `predictor` on train/validation when one is named.

    >>> ds = build_dataset(folder / "ds", jobs=2000, seed=1)
    >>> jobs = test_jobs(ds, predictor="single-stage")
    >>> list(jobs.columns)
    ['job_id', 'submit_time', 'duration', 'gpus', 'tenant', 'predicted_duration']
    >>> len(jobs) == ds.card["counts"]["test"], bool((jobs["predicted_duration"] > 0).all())
    (True, True)
    """
    from atlas_data.errors import InputError

    ds_dir, trace = _prediction_source(data, seed)
    if trace is not None:
        if tenant_column is not None:  # as --tenant-column with --jobs
            raise InputError("tenant_column applies to a dataset; a jobs table brings its own tenant column")
        jobs = trace.test_jobs.copy()
    else:
        from atlas_data.build import test_jobs as _test_jobs

        frame = load_dataset(ds_dir).frame
        if tenant_column is not None and tenant_column not in frame.columns:  # was: every tenant 'default'
            raise InputError(f"dataset has no column '{tenant_column}' for tenants", path=str(ds_dir))
        jobs = _test_jobs(frame, tenant_column)
    if predictor is not None:
        frame = predict(data, predictor, seed=seed)
        lookup = frame.set_index(frame["job_id"].astype(str))["p_hat"]
        jobs["predicted_duration"] = lookup.reindex(jobs["job_id"].astype(str)).to_numpy(np.float64)
    return jobs


# ----- scheduling ------------------------------------------------------------------------------------
def policy_names(kind: str | None = None) -> list[str]:
    """Registered policies of a kind: `single` (one machine), `parallel`, `cluster`; all if None."""
    from schedulers.policy import policy_names as _names

    return _names(kind)


def simulate(jobs: pd.DataFrame, policy: str, *, machines: int = 1, seed: int = 0, prr_lambda: float = 0.7,
             stretch: float | None = None) -> pd.DataFrame:
    """Run one single-machine or parallel-machine policy on the engine; one row per job.

    `jobs` is a jobs table (`predicted_duration` is what predictive policies read — refused
    without it); `machines` > 1 needs a parallel policy. Columns: `job_id`, `submit_time`,
    `duration`, `predicted_duration`, `start_time`, `completion_time` (both on the table's own
    clock), `flow_time` = completion − submit, `stretch` = flow / duration, `preemptions`; rows in
    the engine's order (submit time, then job id). Sizes below 1 s count as 1 s. A parallel policy
    (`lpt`, `spt`, …) schedules the jobs as one batch released at time 0, as the makespan
    objective does: its times start at 0.

    >>> jobs = pd.DataFrame({"job_id": ["a", "b", "c"], "submit_time": [100.0, 100.0, 101.0],
    ...                      "duration": [4.0, 2.0, 1.0]})
    >>> simulate(jobs, "srpt")[["job_id", "start_time", "completion_time", "preemptions"]]
      job_id  start_time  completion_time  preemptions
    0      a       103.0            107.0            0
    1      b       100.0            102.0            0
    2      c       102.0            103.0            0
    >>> simulate(jobs, "fifo")["completion_time"].tolist()
    [104.0, 106.0, 107.0]
    >>> simulate(jobs, "lpt", machines=2)[["job_id", "completion_time"]]
      job_id  completion_time
    0      a              4.0
    1      b              2.0
    2      c              3.0
    """
    from schedulers.engine import simulate as _simulate
    from schedulers.jobs import JobSet
    from schedulers.objectives import make_policy

    from schedulers.policy import get_policy

    from atlas_data.errors import InputError

    _check_machines([machines])
    table = load_jobs(jobs)
    name, kind = _resolve_policy(policy, machines)
    if kind == "single" and machines != 1:
        raise ValueError(f"policy {policy!r} runs on one machine; use a parallel policy for machines={machines}")
    if get_policy(name, kind).needs_prediction and "predicted_duration" not in table.columns:
        raise InputError(f"policy '{name}' needs predicted durations: give the jobs a predicted_duration column "
                         "(test_jobs(data, predictor=...) adds one)")
    # parallel policies solve P||C_max: every job released at once, as the makespan objective runs them
    job_set = JobSet.from_frame(table, batch=kind == "parallel")
    instance = make_policy(name, prr_lambda=prr_lambda, seed=seed, machines=machines if kind == "parallel" else None,
                           stretch=stretch)
    result = _simulate(job_set, instance, machines=machines)
    offset = job_set.time_offset
    completion = result.completion_time + offset
    submit = job_set.submit_time + offset
    return pd.DataFrame({
        "job_id": job_set.job_id,
        "submit_time": submit,
        "duration": job_set.size,
        "predicted_duration": job_set.predicted if job_set.predicted is not None else np.nan,
        "start_time": result.start_time + offset,
        "completion_time": completion,
        "flow_time": completion - submit,
        "stretch": (completion - submit) / job_set.size,
        "preemptions": result.preemptions,
    })


def _resolve_policy(spec: str, machines: int) -> tuple[str, str]:
    """(registered name, kind) of a single-machine or parallel policy, written as `--policies` takes
    one: a name or `package.module:Class`, either with `(param=value, ...)`."""
    from schedulers.policy import resolve_policy

    from atlas_data.errors import InputError

    if not isinstance(spec, str):
        raise TypeError(f"policy must be a name or 'package.module:Class' text, got {type(spec).__name__} "
                        "(a class of your own: decorate it with schedulers.policy.register and give its name)")
    refusals = []
    for kind in ("parallel", "single") if machines > 1 else ("single", "parallel"):
        try:
            return resolve_policy(spec, kind), kind
        except InputError as exc:
            refusals.append(exc)
    # a policy of this name that refuses its setting (or a plugin that fails) says so itself
    for exc in refusals:
        if not exc.problem.startswith("unknown policy"):
            raise exc
    raise InputError(f"unknown policy '{spec}' (choose from {', '.join(policy_names('single') + policy_names('parallel'))}; "
                     "cluster policies run in fairness())")


def score(jobs: pd.DataFrame, objective: str = "total_completion", *, policies=None, predictions=None,
          noise=None, machines=(5, 10, 20, 50, 100), n: int | None = None, seed: int = 0, sample: str = "window",
          prr_lambda: float = 0.7) -> pd.DataFrame:
    """The scheduling task's table for one objective: one row per policy, p̂ source (and machine
    count for makespan) with `value`, `reference` and `ratio` (1 = optimal), as `benchmark run
    --task scheduling` computes them (docs/evaluation-protocol.md).

    `objective`: `total_completion` (ΣC_j / SRPT's), `max_stretch` (max S / S*) or `makespan`
    (C_max / McNaughton's bound over `machines`, one count or several). `predictions`: {label:
    DataFrame job_id, p_hat} or {label: array in the rows' order}, every p̂ a finite number > 0,
    checked as a `predicted_duration` column is; `noise`: σ or a list of σ, p̂ = p·exp(σZ) labelled
    `noise:σ` (one seeded Z per job — a robustness model that reads the true sizes); without
    either a `predicted_duration` column is used (label `column`), and without any p̂ only the
    blind policies run. Predictive policies run once per p̂ label. `policies`: a list of names or
    comma-separated text (default: the objective's set). `n` samples that many jobs (`sample` =
    window or random, seeded).

    >>> jobs = pd.DataFrame({"job_id": list("abcd"), "submit_time": [0.0, 0.0, 1.0, 2.0],
    ...                      "duration": [8.0, 2.0, 1.0, 4.0], "predicted_duration": [8.0, 2.0, 1.0, 4.0]})
    >>> table = score(jobs, "total_completion", policies=["fifo", "srpt", "spjf"])
    >>> table[["policy", "predictor", "value", "reference", "ratio"]]
      policy predictor  value  reference  ratio
    0   fifo       NaN   44.0       27.0   1.63
    1   srpt       NaN   27.0       27.0   1.00
    2   spjf    column   27.0       27.0   1.00
    >>> score(jobs, "max_stretch", policies=["edf-p"], noise=[0, 2])[["policy", "predictor", "ratio"]]
      policy predictor  ratio
    0  edf-p   noise:0  1.067
    1  edf-p   noise:2  1.867
    """
    from schedulers.jobs import JobSet
    from schedulers.objectives import DEFAULT_POLICIES, OBJECTIVES, run_objective
    from schedulers.policy import get_policy, task_kind
    from schedulers.sampling import sample_window

    from atlas_data.errors import InputError

    if objective not in OBJECTIVES:
        raise InputError(f"unknown objective {objective!r} (choose {', '.join(OBJECTIVES)})")
    from benchmark.tasks.inputs import noise_predictions

    from schedulers.policy import split_policy_list

    machines = [machines] if isinstance(machines, (int, np.integer)) else list(machines)
    _check_machines(machines)
    if isinstance(policies, str):  # "srpt,spjf", as --policies and fairness() take them
        policies = split_policy_list(policies)
    table = load_jobs(jobs)
    sigmas = [] if noise is None else [float(s) for s in np.atleast_1d(noise)]
    by_id = _predictions_by_id(table, predictions, use_column=not sigmas)
    window = sample_window(table, n, seed, sample)
    job_set = JobSet.from_frame(window.drop(columns=["predicted_duration"], errors="ignore"))
    # the scheduling task's order: noise first, then named p̂, then the table's column
    p_hat = noise_predictions(job_set.size, sigmas, seed)
    for label, lookup in by_id.items():
        ids = pd.Index(job_set.job_id.astype(str))
        missing = ~ids.isin(lookup.index)
        if missing.any():
            raise InputError(f"predictions {label!r} have no p̂ for {int(missing.sum())} of the {len(ids)} jobs "
                             f"(job_id {ids[missing][0]!r}, …)")
        p_hat[label] = lookup.reindex(ids).to_numpy(np.float64)
    kind = task_kind("scheduling", objective)
    chosen = list(policies) if policies is not None else [
        p for p in DEFAULT_POLICIES[objective] if p_hat or not get_policy(p, kind).needs_prediction]
    if not chosen:
        raise ValueError("policies is empty: name at least one (or leave it out for the objective's set)")
    for i, spec in enumerate(chosen):
        name, its_kind = _resolve_policy(spec, 2 if kind == "parallel" else 1)
        if its_kind != kind:
            raise InputError(f"policy '{spec}' is a {its_kind} policy; objective {objective} runs {kind} ones")
        if name in chosen[:i]:  # two identical rows otherwise; --policies refuses it too
            raise InputError(f"policy '{name}' is given twice")
        chosen[i] = name
        if get_policy(name, kind).needs_prediction and not p_hat:
            raise InputError(f"policy '{name}' needs predicted durations: give predictions= or a "
                             "predicted_duration column")
    rows, _, _ = run_objective(objective, job_set, chosen, p_hat, machines=tuple(machines),
                               prr_lambda=prr_lambda, seed=seed)
    return pd.DataFrame(rows).round({"ratio": 3})


def _predictions_by_id(table: pd.DataFrame, predictions, use_column: bool = True) -> dict[str, pd.Series]:
    """{label: p̂ indexed by job_id (str)} from the forms `score` accepts, each checked."""
    ids = pd.Index(table["job_id"].astype(str))
    if predictions is None:
        if use_column and "predicted_duration" in table.columns:
            return {"column": pd.Series(table["predicted_duration"].to_numpy(np.float64), index=ids)}
        return {}
    if not isinstance(predictions, dict):
        raise TypeError(f"predictions must be a dict {{label: DataFrame job_id, p_hat, or values in the rows' "
                        f"order}}, got {type(predictions).__name__}")
    out = {}
    for label, value in predictions.items():
        if not isinstance(value, pd.DataFrame):
            values = np.asarray(value)
            if values.ndim != 1 or len(values) != len(table):
                raise ValueError(f"predictions {label!r}: {values.size} values for {len(table)} jobs "
                                 "(give one per row, in the rows' order, or a DataFrame job_id, p_hat)")
            value = pd.DataFrame({"job_id": ids, "p_hat": values})
        out[str(label)] = _predictions_frame(label, value)
    return out


def _predictions_frame(label, frame: pd.DataFrame) -> pd.Series:
    """p̂ of one predictions frame by job id, checked as a jobs table's predicted_duration is."""
    from atlas_data.jobs_table import validate_predictions

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"predictions {label!r} must be a DataFrame job_id, p_hat, got {type(frame).__name__}")
    return validate_predictions(frame, f"predictions {label!r}")


def _check_machines(machines) -> None:
    for m in machines:
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ValueError(f"machines must be whole numbers >= 1, got {m!r}")


# ----- fairness --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class FairnessResult:
    """What the fairness task writes, in memory: `metrics` (one row per policy, index `policy`:
    `sharing_loss_jobs`, `tenant_loss_intervals`, each with its `_floor` — the ideal schedule's value —,
    `avg_jct`, …, docs/fairness.md#metrics),
    `jobs` and `tenant_intervals` ({policy: DataFrame}: per-job ρ, JCT, slowdown; per tenant and
    window ρ_tenant), and `options` (cluster, lease, … as results.json records them)."""

    metrics: pd.DataFrame
    jobs: dict
    tenant_intervals: dict
    options: dict


def fairness(jobs: PathLike | pd.DataFrame | None = None, *, scenario: str | None = None,
             data: PathLike | Dataset | None = None, policies=None, **options) -> FairnessResult:
    """The fairness task (`benchmark run --task fairness`) on a multi-tenant GPU cluster: `run("fairness", ...)`
    with the per-job and per-tenant tables of every policy beside the metrics.

    Jobs from one of: `jobs` (a jobs table — DataFrame, file or shipped trace name; its `gpus`,
    `tenant`, `weight`, `predicted_duration` are used), `scenario` (`venus`, `philly`), `data`
    (a dataset's test split); none = the default dataset. `policies`: cluster policy names
    (default: all that can run). Every other option of the task by its command-line name with `_`,
    checked as `run` checks it (an unknown name is an InputError naming its close matches):
    `nodes`, `gpus_per_node`, `n`, `predictor` (p̂ learned on the data's train/validation part),
    `noise` (σ of p̂ = p·exp(σZ)), `seed`, `lease`, `interval`, `cold_start`, `fair_share`,
    `fair_window`, `tenant_weights`, `tenant_column`, `node_list`, `tenant_loss_share` (default
    `eq8`), `job_rho_from` (default `tick`), `sample`, `feature_columns`, `columns`, `train_jobs`;
    every default is the command line's, except `quiet=True` and `no_mlflow=True`. With `output`
    the task's folder (results.json, per-job parquet files, plots) is written there too.

    >>> jobs = pd.DataFrame({"job_id": [f"j{i}" for i in range(8)], "submit_time": [0.0, 0, 0, 0, 60, 60, 120, 120],
    ...                      "duration": [3600.0] * 8, "gpus": [4, 4, 4, 4, 2, 2, 2, 2],
    ...                      "tenant": ["a"] * 4 + ["b"] * 4})
    >>> result = fairness(jobs, policies=["fifo", "astraea"], nodes=1, gpus_per_node=8)
    >>> result.metrics[["sharing_loss_jobs", "completed", "preemptions"]]
             sharing_loss_jobs  completed  preemptions
    policy
    fifo                  0.50          8            0
    astraea               0.25          8           29
    >>> result.jobs["astraea"][["job_id", "tenant", "gpus", "rho"]].head(2)
      job_id tenant  gpus  rho
    0     j0      a     4  ...
    1     j1      a     4  ...
    >>> result.options["cluster"]
    '1 x 8 GPUs'
    """
    if data is not None and not isinstance(data, (str, os.PathLike, Dataset)):
        raise TypeError(f"data must be a dataset (folder, name or Dataset), got {type(data).__name__}"
                        + (" (a jobs table goes in the first argument, jobs)" if isinstance(data, pd.DataFrame) else ""))
    given = {"jobs": jobs, "scenario": scenario, "data": data.path if isinstance(data, Dataset) else data,
             "policies": policies, **options}
    done = _perform("fairness", given, "fairness")
    doc, runs = done.doc, done.runs
    # value / reference / ratio repeat sharing_loss_jobs in the task's common row schema: left out here
    metrics = pd.DataFrame(doc["rows"]).set_index("policy").drop(columns=["value", "reference", "ratio"])
    return FairnessResult(metrics, {name: run.jobs for name, run in runs.items()},
                          {name: run.tenant_intervals for name, run in runs.items()}, dict(doc.get("options") or {}))


# ----- any task, as `benchmark run` ------------------------------------------------------------------
#: the two defaults of the API that are not the command line's: nothing on stdout, no MLflow run
API_DEFAULTS = {"quiet": True, "no_mlflow": True}


def run(task: str, **options) -> pd.DataFrame:
    """`benchmark run --task TASK` with every option by its long name with `_` (`jobs=`, `feature_columns=`,
    `columns=`, `train_jobs=`, `predictor=`, `policies=`, `objective=`, `nodes=`, …): the results rows —
    the rows of results.json, one per method (prediction), per policy and p̂ (scheduling) or per
    policy (fairness) — as a DataFrame, computed by the code the command line runs with the same
    configuration (benchmark.tasks.config), so its numbers are the command line's.

    Values are Python values: a list for a comma-separated option (`policies=["srpt", "fifo"]`, or
    the text `"srpt,fifo"`), a dict for `columns=`, numbers for numbers, True for a flag; a DataFrame
    is a jobs table too (`jobs=frame`). None means "not given". Every default is the command line's,
    except `quiet=True` and `no_mlflow=True`. Without `output` the run's folder is a temporary one,
    deleted on return. An option that is not one of `benchmark run` is an InputError naming it and
    its close matches; an option of another task is the command line's error.

    >>> _ = (folder / "jobs.csv").write_text("id,submit,runtime,est\\n" + "".join(
    ...     f"j{i},{i},{10 + (7 * i) % 50},{12 + (7 * i) % 50}\\n" for i in range(40)))
    >>> rows = run("scheduling", jobs=folder / "jobs.csv", objective="total_completion", policies=["fifo", "srpt"],
    ...            columns={"job_id": "id", "submit_time": "submit", "duration": "runtime"})
    >>> rows[["policy", "value", "reference", "ratio"]].round(3)
      policy    value  reference  ratio
    0   fifo  27820.0    21203.0  1.312
    1   srpt  21203.0    21203.0  1.000
    >>> run("scheduling", jobs=folder / "jobs.csv", objectve="makespan")
    Traceback (most recent call last):
    atlas_data.errors.InputError: objectve: run() has no option 'objectve' (did you mean objective?)
    """
    return pd.DataFrame(_perform(task, options, "run").doc["rows"])


def _perform(task: str, options: dict, function: str):
    """`benchmark.commands.run.perform` of the configuration built from keyword `options`: a
    `benchmark.results.Run`. A DataFrame given as `jobs` is read as a file would be, named
    `<DataFrame>` in messages and in results.json."""
    import tempfile
    from dataclasses import replace

    from benchmark.commands.run import perform
    from benchmark.tasks.config import FRAME_LABEL, from_options

    options = dict(options)
    frame = options.get("jobs")
    if isinstance(frame, pd.DataFrame):
        options["jobs"] = FRAME_LABEL
    else:
        frame = None
        if options.get("jobs") is not None:
            _check_jobs_spec(options["jobs"])
    with tempfile.TemporaryDirectory(prefix=f"atlas-{task}-") as tmp:
        if options.get("output") is None:
            options["output"] = Path(tmp) / "run"
        config = from_options(task, options, function=function, defaults=API_DEFAULTS)
        return perform(config if frame is None else replace(config, frame=frame))
