"""Sweeps: the cross product of a YAML config's lists, one `benchmark run` per cell, one tidy table.

    task: scheduling                      # required: a `benchmark run --task` name
    jobs: traces/a.csv                    # or data: DS — a path or a list of paths (each a cell);
                                          # relative paths are relative to the config file;
                                          # neither = the task's embedded default data
    objectives: [total_completion, max_stretch]
    policies: [spjf, sprpt, prr, srpt, rr]   # ONE policy list, run together in every cell;
                                             # a list of lists = one cell per inner list
    noise: [0, 0.5, 1, 2]                 # one cell per σ, so the cell's predictor is `noise:σ`
    predictors: [lgbm-meta]               # one cell per learned predictor (needs `data`)
    seeds: [0, 1]
    n: [2000]
    machines: [5, [10, 20]]               # an inner list = one cell running all its counts
    nodes: [4, 8]                         # fairness
    options: {prr-lambda: 0.5}            # fixed extra `benchmark run` options for every cell
    mlflow: false                         # same as --no-mlflow

Axes: dataset × objectives × policies × prediction source × seeds × n × machines × nodes, where
the prediction source is one entry of `predictors` or one entry of `noise` (both are ways to get
p̂, crossing them would run every noise level once per learned predictor). A scalar stands for a
one-element list. Policies are not crossed one by one: a run already loops over its policies and
shares the jobs, the window and the reference (SRPT / S*) between them, so one run per policy
would only repeat that work. Policies that need no p̂ therefore run again in every noise cell and
appear once per cell (their value does not depend on σ). Files named by `jobs`/`data` are not
checked here: a missing one fails its cells only (a remote worker may see paths this host does not).

Table columns: `cell`, `task`, `objective`, `dataset` (as written in the config; null = default),
`policies` (the cell's policy list), `policy`, `predictor` (the row's: `noise:σ`, a method name,
`column`, or null for a policy that uses no p̂), `noise` (the cell's σ), `seed` (0 when not swept:
the run's default), `n`, `machines` (the row's for makespan, else the cell's single count),
`nodes`, `value`, `reference`, `ratio`, then every other metric of the rows (lists and dicts as
JSON text).

Each cell runs `benchmark.cli.main` in a worker with `--output OUT/cells/<cell id> --quiet
--no-mlflow`; its results.json rows, annotated with the cell's coordinates, become rows of
OUT/sweep.parquet (ordered by cell, then the run's own row order, so every executor gives the same
table). A failed cell becomes a record in OUT/failures.json and the others go on. OUT/sweep.json
lists every cell (id, argv, coordinates, ok, seconds); OUT/sweep_ratios.png shows the mean ratio
per policy [predictor] and objective with error bars over seeds, and OUT/sweep_robustness.png
(when `noise` has two values or more) the ratio against σ. Cell ids are `<index>-<the values of
the axes that vary>`, e.g. `0003-max_stretch-noise0.5-seed1`. MLflow logging
is done by the parent process, one cell at a time as cells finish (`tracking.log_run`), so SQLite
never sees two writers; the store is `OUT/cells/mlflow.db` unless MLFLOW_TRACKING_URI is set.

Executors: `local` = a ProcessPoolExecutor; `dask` = a distributed.Client on `--address`, or on a
LocalCluster started (and closed) here. Cells in one process run one at a time (pyplot and
sys.stderr are process-wide and the simulator holds the GIL anyway): scale Dask workers with
processes, one thread each (`dask worker ADDRESS --nworkers N --nthreads 1`). Remote workers
need atlas-bench installed and OUT on a shared filesystem (the table itself comes back over the
wire; MLflow logging in the parent needs the cell folders).

May import benchmark (cli, results, progress, tracking), atlas_data.errors, numpy, pandas, yaml,
matplotlib, and lazily distributed.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import math
import os
import re
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from atlas_data.errors import InputError

SWEEP_KEYS = ("objectives", "policies", "predictors", "noise", "seeds", "n", "machines", "nodes")
CONFIG_KEYS = ("task", "jobs", "data", *SWEEP_KEYS, "options", "mlflow")
# the options a sweep key already sets (or the sweep itself): not allowed under `options`
_MANAGED_OPTIONS = {"task", "jobs", "data", "objective", "policies", "predictor", "methods", "noise", "seed", "n",
                    "machines", "nodes", "output", "quiet", "no-mlflow"}
_OPTION_TO_KEY = {"--task": "task", "--jobs": "jobs", "--data": "data", "--objective": "objectives",
                  "--policies": "policies", "--predictor": "predictors", "--noise": "noise", "--seed": "seeds",
                  "--n": "n", "--machines": "machines", "--nodes": "nodes"}
# coordinates first, then the objective columns, then whatever else the rows carry
TABLE_COLUMNS = ("cell", "task", "objective", "dataset", "policies", "policy", "predictor", "noise", "seed", "n",
                 "machines", "nodes", "value", "reference", "ratio")
_STRING_COLUMNS = ("cell", "task", "objective", "dataset", "policies", "policy", "predictor")
_INT_COLUMNS = ("seed", "n", "machines", "nodes")


# ----- config ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepConfig:
    path: str
    task: str
    datasets: tuple[str | None, ...] = (None,)    # paths as written in the config; None = default
    dataset_option: str | None = None              # "jobs" or "data"
    objectives: tuple[str | None, ...] = (None,)
    policies: tuple[str | None, ...] = (None,)     # comma-joined policy lists, one per cell
    predictors: tuple[str, ...] = ()
    noise: tuple[float, ...] = ()
    seeds: tuple[int | None, ...] = (None,)
    n: tuple[int | None, ...] = (None,)
    machines: tuple[str | None, ...] = (None,)    # "5" or "10,20"
    nodes: tuple[int | None, ...] = (None,)
    options: tuple[tuple[str, Any], ...] = ()
    mlflow: bool = True

    @property
    def base_dir(self) -> Path:
        return Path(self.path).resolve().parent


def load_config(path: str | Path) -> SweepConfig:
    """Read and validate a sweep YAML file; any problem is an InputError naming the file and key."""
    import yaml

    path = str(path)
    try:
        text = Path(path).read_text()
    except FileNotFoundError:
        raise InputError("sweep config not found", path=path) from None
    except OSError as exc:
        raise InputError(f"cannot read sweep config: {exc.strerror}", path=path) from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else None
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise InputError(f"not valid YAML: {problem}", path=path, where=where) from None
    if not isinstance(raw, dict):
        raise InputError("a sweep config must be a mapping of keys (task, objectives, policies, ...)", path=path)

    def fail(key: str, message: str):
        raise InputError(message, path=path, where=str(key))

    for key in raw:
        if key not in CONFIG_KEYS:
            fail(key, f"unknown key '{key}' (allowed: {', '.join(CONFIG_KEYS)})")
    from benchmark.commands.run import TASKS

    task = raw.get("task")
    if task is None:
        fail("task", f"missing key 'task' (one of {', '.join(sorted(TASKS))})")
    if not isinstance(task, str) or task not in TASKS:
        fail("task", f"task must be one of {', '.join(sorted(TASKS))}, got {task!r}")
    if "jobs" in raw and "data" in raw:
        fail("jobs", "give either 'jobs' or 'data', not both")

    def listed(key: str) -> list | None:
        if key not in raw:
            return None
        value = raw[key]
        values = value if isinstance(value, list) else [value]
        if not values or value is None:
            fail(key, f"'{key}' is empty: give at least one value")
        return values

    def scalars(key: str, kind: str) -> list | None:
        values = listed(key)
        if values is None:
            return None
        out = []
        for v in values:
            if kind == "str" and isinstance(v, str) and v.strip():
                out.append(v.strip())
            elif kind == "int" and isinstance(v, int) and not isinstance(v, bool):
                out.append(v)
            elif kind == "number" and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
                out.append(float(v))
            else:
                wanted = {"str": "a non-empty string", "int": "an integer", "number": "a finite number"}[kind]
                fail(key, f"every '{key}' value must be {wanted}, got {v!r}")
        if len(set(out)) < len(out):
            fail(key, f"duplicate value in '{key}': {out}")
        return out

    def positive(key: str, values: list | None) -> list | None:
        if values is not None and any(v < 1 for v in values):
            fail(key, f"'{key}' values must be >= 1, got {values}")
        return values

    dataset_option = "jobs" if "jobs" in raw else ("data" if "data" in raw else None)
    datasets = scalars(dataset_option, "str") if dataset_option else None
    objectives = scalars("objectives", "str")
    if task == "scheduling" and objectives:
        from schedulers.objectives import OBJECTIVES

        for objective in objectives:
            if objective not in OBJECTIVES:
                fail("objectives", f"unknown objective '{objective}' (choose from {', '.join(OBJECTIVES)})")
    noise = scalars("noise", "number")
    if noise and any(s < 0 for s in noise):
        fail("noise", f"noise levels must be >= 0, got {noise}")
    seeds = scalars("seeds", "int")
    n = positive("n", scalars("n", "int"))
    nodes = positive("nodes", scalars("nodes", "int"))
    predictors = scalars("predictors", "str")
    policies = tuple(_policy_lists(raw, fail)) if "policies" in raw else (None,)
    machines = tuple(_machine_lists(raw, fail)) if "machines" in raw else (None,)
    options = _extra_options(raw, fail)
    mlflow = _flag(raw, "mlflow", fail)
    if task == "scheduling" and not objectives:
        fail("objectives", "task scheduling needs 'objectives' (total_completion, max_stretch and/or makespan)")
    return SweepConfig(
        path=path,
        task=task,
        datasets=tuple(datasets) if datasets else (None,),
        dataset_option=dataset_option,
        objectives=tuple(objectives) if objectives else (None,),
        policies=policies,
        predictors=tuple(predictors or ()),
        noise=tuple(noise or ()),
        seeds=tuple(seeds) if seeds else (None,),
        n=tuple(n) if n else (None,),
        machines=machines,
        nodes=tuple(nodes) if nodes else (None,),
        options=options,
        mlflow=mlflow,
    )


def _names(value, key: str, fail) -> str:
    """One comma-joined list from 'a,b' or [a, b]."""
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    for item in items:
        if not isinstance(item, str):
            fail(key, f"'{key}' must hold names (strings), got {item!r}")
        names += [t.strip() for t in item.split(",") if t.strip()]
    if not names:
        fail(key, f"'{key}' holds an empty list")
    if len(set(names)) < len(names):
        fail(key, f"duplicate name in '{key}': {names}")
    return ",".join(names)


def _policy_lists(raw: dict, fail) -> list[str]:
    value = raw["policies"]
    if value is None or value == []:
        fail("policies", "'policies' is empty: give at least one policy")
    if isinstance(value, list) and any(isinstance(v, list) for v in value):
        if not all(isinstance(v, list) for v in value):
            fail("policies", "'policies' must be a list of names or a list of lists, not a mix")
        lists = [_names(v, "policies", fail) for v in value]
    else:
        lists = [_names(value, "policies", fail)]
    if len(set(lists)) < len(lists):
        fail("policies", "duplicate policy list in 'policies'")
    return lists


def _machine_lists(raw: dict, fail) -> list[str]:
    value = raw["machines"]
    entries = value if isinstance(value, list) else [value]
    if not entries or value is None:
        fail("machines", "'machines' is empty: give at least one machine count")
    out = []
    for entry in entries:
        counts = entry if isinstance(entry, list) else [entry]
        if not counts or not all(isinstance(m, int) and not isinstance(m, bool) and m >= 1 for m in counts):
            fail("machines", f"machine counts must be integers >= 1, got {entry!r}")
        out.append(",".join(str(m) for m in counts))
    if len(set(out)) < len(out):
        fail("machines", f"duplicate value in 'machines': {entries}")
    return out


def _extra_options(raw: dict, fail) -> tuple[tuple[str, Any], ...]:
    value = raw.get("options")
    if value is None and "options" not in raw:
        return ()
    if not isinstance(value, dict) or not value:
        fail("options", "'options' must be a non-empty mapping of `benchmark run` options to values")
    out = []
    for name, v in value.items():
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
            fail("options", f"option names are written without dashes in front, like prr-lambda; got {name!r}")
        if name in _MANAGED_OPTIONS:
            fail("options", f"'{name}' is set by the sweep keys (task, jobs/data, objectives, policies, ...), not options")
        if isinstance(v, (list, dict)) or v is None:
            fail("options", f"option '{name}' must have one value (string, number or true/false), got {v!r}")
        out.append((name, v))
    return tuple(out)


def _flag(raw: dict, key: str, fail) -> bool:
    value = raw.get(key, True)
    if not isinstance(value, bool):
        fail(key, f"'{key}' must be true or false, got {value!r}")
    return value


# ----- cells ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cell:
    """One `benchmark run` of the sweep: its argv (without --output/--quiet/--no-mlflow) and coordinates."""

    index: int
    id: str
    argv: tuple[str, ...]
    task: str
    objective: str | None = None
    dataset: str | None = None
    policies: str | None = None
    predictor: str | None = None
    noise: float | None = None
    seed: int | None = None
    n: int | None = None
    machines: str | None = None
    nodes: int | None = None


def cells(config: SweepConfig) -> list[Cell]:
    """The cross product of the config's axes, in config order; every argv is checked by the run parser."""
    sources: list[tuple[str | None, float | None]] = [(p, None) for p in config.predictors]
    sources += [(None, s) for s in config.noise]
    sources = sources or [(None, None)]
    axes = (config.datasets, config.objectives, config.policies, sources, config.seeds, config.n,
            config.machines, config.nodes)
    varying = [len(axis) > 1 for axis in axes]
    out: list[Cell] = []
    for index, (dataset, objective, policies, (predictor, noise), seed, n, machines, nodes) in enumerate(
        itertools.product(*axes)
    ):
        argv = ["run", "--task", config.task]
        if dataset is not None:
            resolved = Path(dataset) if Path(dataset).is_absolute() else config.base_dir / dataset
            argv += [f"--{config.dataset_option}", str(resolved)]
        values = [("objective", objective), ("policies", policies), ("predictor", predictor),
                  ("noise", None if noise is None else repr(noise)), ("seed", seed), ("n", n),
                  ("machines", machines), ("nodes", nodes)]
        argv += [item for name, v in values if v is not None for item in (f"--{name}", str(v))]
        for name, v in config.options:
            if v is True:
                argv.append(f"--{name}")
            elif v is not False:
                argv += [f"--{name}", str(v)]
        labels = [Path(dataset).stem if dataset else None, objective, f"p{config.policies.index(policies)}",
                  predictor or f"noise{noise:g}" if (predictor or noise is not None) else None,
                  f"seed{seed}", f"n{n}", f"m{machines}", f"nodes{nodes}"]
        slug = "-".join(str(label) for label, vary in zip(labels, varying) if vary)
        cell_id = f"{index:04d}" + (f"-{re.sub(r'[^A-Za-z0-9_.=+-]', '_', slug)}" if slug else "")
        out.append(Cell(index=index, id=cell_id, argv=tuple(argv), task=config.task, objective=objective,
                        dataset=dataset, policies=policies, predictor=predictor, noise=noise, seed=seed, n=n,
                        machines=machines, nodes=nodes))
    from benchmark.cli import build_parser

    parser = build_parser()
    for cell in out:
        _check_argv(parser, cell, config)
    return out


def _check_argv(parser, cell: Cell, config: SweepConfig) -> None:
    """Parse the cell's argv now, so an option `benchmark run` rejects is exit 2 before any work."""
    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            parser.parse_args(list(cell.argv) + ["--output", "x", "--quiet", "--no-mlflow"])
    except SystemExit:
        message = _last_line(captured.getvalue()) or "rejected by `benchmark run`"
        message = re.sub(r"^benchmark run: ", "", message)
        option = re.search(r"--[a-z][a-z-]*", message)
        key = _OPTION_TO_KEY.get(option.group(0), "options") if option else "options"
        raise InputError(f"`benchmark run` rejects it: {message}", path=config.path, where=key) from None


# ----- running one cell -----------------------------------------------------------------------
@dataclass(frozen=True)
class CellResult:
    cell: Cell
    rows: tuple[dict, ...] = ()
    error: str | None = None
    seconds: float = 0.0
    out_dir: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None


_CELL_LOCK = threading.Lock()  # one cell at a time per process: stderr capture and pyplot are process-wide


def run_cell(cell: Cell, out_root: str | Path, mlflow: bool = False) -> CellResult:
    """Run one cell in this process; never raises: a failure is a CellResult with `error` set.

    With mlflow=True the cell logs itself (for workers that have their own tracking server in
    MLFLOW_TRACKING_URI); the sweep command passes False and logs from the parent instead.
    """
    from benchmark.cli import main

    out_dir = Path(out_root) / "cells" / cell.id
    argv = list(cell.argv) + ["--output", str(out_dir), "--quiet"] + ([] if mlflow else ["--no-mlflow"])
    start = time.perf_counter()
    captured = io.StringIO()
    with _CELL_LOCK:
        try:
            with contextlib.redirect_stderr(captured), contextlib.redirect_stdout(io.StringIO()):
                code = main(argv)
            if code != 0:
                error = _last_line(captured.getvalue()) or f"`benchmark run` exited with status {code}"
                return CellResult(cell, error=error, seconds=time.perf_counter() - start, out_dir=str(out_dir))
            doc = json.loads((out_dir / "results.json").read_text())
        except SystemExit as exc:  # argparse
            error = _last_line(captured.getvalue()) or f"`benchmark run` exited with status {exc.code}"
            return CellResult(cell, error=error, seconds=time.perf_counter() - start, out_dir=str(out_dir))
        except Exception as exc:  # noqa: BLE001 - one broken cell must not stop the sweep
            return CellResult(cell, error=f"internal error: {type(exc).__name__}: {exc}",
                              seconds=time.perf_counter() - start, out_dir=str(out_dir))
    rows = tuple(_annotate(row, cell, doc) for row in doc.get("rows", []))
    return CellResult(cell, rows=rows, seconds=time.perf_counter() - start, out_dir=str(out_dir))


def _last_line(text: str) -> str | None:
    """The message of the last line of a run's stderr (the CLI's one-line error), without 'error: '."""
    lines = [line.strip() for line in text.replace("\r", "\n").splitlines() if line.strip()]
    return re.sub(r"^error: ", "", lines[-1]) if lines else None


def _annotate(row: dict, cell: Cell, doc: dict) -> dict:
    machines = row.get("machines")
    if machines is None and cell.machines is not None and "," not in cell.machines:
        machines = int(cell.machines)
    coordinates = {
        "cell": cell.id, "task": cell.task, "objective": doc.get("objective") or cell.objective,
        "dataset": cell.dataset, "policies": cell.policies, "policy": row.get("policy"),
        "predictor": row.get("predictor"), "noise": cell.noise,
        "seed": 0 if cell.seed is None else cell.seed,  # the run's default seed
        "n": cell.n, "machines": machines, "nodes": cell.nodes,
    }
    rest = {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in row.items() if k not in coordinates}
    return {**coordinates, **rest}


# ----- executors ------------------------------------------------------------------------------
def run_cells(
    cell_list: list[Cell],
    out_root: Path,
    *,
    executor: str = "local",
    address: str | None = None,
    workers: int | None = None,
    on_result: Callable[[CellResult], None] | None = None,
) -> list[CellResult]:
    """Run every cell on the executor; return the results in cell order (on_result sees completion order)."""
    out_root = Path(out_root).resolve()
    done: dict[int, CellResult] = {}

    def finish(result: CellResult) -> None:
        done[result.cell.index] = result
        if on_result is not None:
            on_result(result)

    if not cell_list:
        return []
    if executor == "local":
        _run_local(cell_list, out_root, workers, finish)
    elif executor == "dask":
        _run_dask(cell_list, out_root, address, workers, finish)
    else:
        raise InputError(f"unknown executor '{executor}' (local or dask)", where="--executor")
    return [done[cell.index] for cell in cell_list]


def _run_local(cell_list, out_root, workers, finish) -> None:
    import multiprocessing

    max_workers = max(1, min(workers or os.cpu_count() or 1, len(cell_list)))
    # forkserver: workers are forked from a clean server process, not from this one (which may
    # hold threads, e.g. a Dask client, and fork is unsafe then); the server pays the imports once
    context = multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(["benchmark.sweeps", "benchmark.tasks.scheduling"])
    pool = ProcessPoolExecutor(max_workers=max_workers, mp_context=context)
    try:
        futures = {pool.submit(run_cell, cell, str(out_root), False): cell for cell in cell_list}
        for future in as_completed(futures):
            cell = futures[future]
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - a worker process died
                result = CellResult(cell, error=f"worker failed: {type(exc).__name__}: {exc}",
                                    out_dir=str(out_root / "cells" / cell.id))
            finish(result)
    except BaseException:
        # Ctrl-C: drop the queued cells instead of running them all before exiting
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


def _run_dask(cell_list, out_root, address, workers, finish) -> None:
    try:
        import logging

        from distributed import Client, LocalCluster, as_completed as dask_as_completed
    except ImportError:
        raise InputError("the dask executor needs dask[distributed] (pip install 'atlas-bench[dask]')",
                         where="--executor") from None
    cluster = None
    try:
        if address:
            try:
                client = Client(address, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"cannot connect to the Dask scheduler: {exc}", where=f"--address {address}") from None
        else:
            cluster = LocalCluster(n_workers=max(1, min(workers or os.cpu_count() or 1, len(cell_list))),
                                   threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
            client = Client(cluster)
        try:
            futures = client.map(run_cell, cell_list, out_root=str(out_root), mlflow=False, pure=False)
            owner = {future.key: cell for future, cell in zip(futures, cell_list)}
            for future in dask_as_completed(futures):
                cell = owner[future.key]
                try:
                    result = future.result()
                except Exception as exc:  # noqa: BLE001 - e.g. KilledWorker
                    result = CellResult(cell, error=f"worker failed: {type(exc).__name__}: {exc}",
                                        out_dir=str(out_root / "cells" / cell.id))
                finish(result)
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


# ----- the sweep ------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SweepResult:
    out_dir: Path
    table: pd.DataFrame = field(repr=False)
    results: tuple[CellResult, ...] = ()

    @property
    def failures(self) -> list[CellResult]:
        return [r for r in self.results if not r.ok]


def run_sweep(
    config: SweepConfig,
    out_dir: Path,
    *,
    executor: str = "local",
    address: str | None = None,
    workers: int | None = None,
    mlflow: bool = True,
    quiet: bool = False,
) -> SweepResult:
    """Run every cell, log each finished one to MLflow (parent only), write the table, plots and records."""
    from benchmark.progress import Progress

    out_dir = Path(out_dir).resolve()
    cell_list = cells(config)
    mlflow = mlflow and config.mlflow
    warnings: list[str] = []
    with Progress(f"sweep: {len(cell_list)} cells ({executor})", total=len(cell_list), quiet=quiet) as progress:

        def on_result(result: CellResult) -> None:
            progress.update()
            if not result.ok:
                progress.note(f"cell {result.cell.id} failed: {result.error}")
            elif mlflow:
                problem = _log_cell(result, out_dir)
                if problem:
                    warnings.append(problem)
                    progress.note(problem)

        results = run_cells(cell_list, out_dir, executor=executor, address=address, workers=workers,
                            on_result=on_result)
    table = sweep_table(results)
    out_dir.mkdir(parents=True, exist_ok=True)  # only now: a scheduler that cannot be reached writes nothing
    table.to_parquet(out_dir / "sweep.parquet", index=False)
    failures = [r for r in results if not r.ok]
    failures_path = out_dir / "failures.json"
    if failures:
        records = [{"cell": r.cell.id, "argv": ["benchmark", *r.cell.argv], "error": r.error} for r in failures]
        failures_path.write_text(json.dumps(records, indent=2) + "\n")
    elif failures_path.exists():
        failures_path.unlink()  # a stale record from an earlier run into the same folder
    manifest = {
        "config": str(Path(config.path).resolve()), "executor": executor, "address": address,
        "cells": [{**{k: v for k, v in asdict(r.cell).items() if k != "index"}, "ok": r.ok,
                   "seconds": round(r.seconds, 3)} for r in results],
        "n_rows": int(len(table)), "n_failed": len(failures), "mlflow_warnings": warnings,
    }
    (out_dir / "sweep.json").write_text(json.dumps(manifest, indent=2) + "\n")
    if len(table) and table["ratio"].notna().any():
        ratio_plot(table, out_dir / "sweep_ratios.png")
        if table["noise"].nunique() >= 2:
            robustness_plot(table, out_dir / "sweep_robustness.png")
    return SweepResult(out_dir=out_dir, table=table, results=tuple(results))


def _log_cell(result: CellResult, out_root: Path) -> str | None:
    """Log a finished cell to MLflow from this (the parent) process; a problem is returned, not raised."""
    out_dir = Path(result.out_dir)
    if not (out_dir / "results.json").exists():
        return f"cell {result.cell.id}: not logged to MLflow: {out_dir} is not visible here"
    try:
        from benchmark.cli import build_parser
        from benchmark.tracking import log_run

        args = build_parser().parse_args(list(result.cell.argv) + ["--output", str(out_dir), "--quiet"])
        options = {k: v for k, v in vars(args).items() if k not in ("handler", "quiet", "no_mlflow")}
        options.update(sweep=str(out_root), sweep_cell=result.cell.id)
        log_run(out_dir, options)
    except Exception as exc:  # noqa: BLE001 - the cell's results stand without its MLflow run
        return f"cell {result.cell.id}: MLflow logging failed: {type(exc).__name__}: {exc}"
    return None


def sweep_table(results: list[CellResult]) -> pd.DataFrame:
    """One tidy frame: every results row of every successful cell, in cell order, typed columns."""
    records = [row for result in sorted(results, key=lambda r: r.cell.index) for row in result.rows]
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=list(TABLE_COLUMNS))
    for column in TABLE_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame = frame[list(TABLE_COLUMNS) + [c for c in frame.columns if c not in TABLE_COLUMNS]]
    for column in _STRING_COLUMNS:
        frame[column] = frame[column].astype("str")
    for column in _INT_COLUMNS:
        frame[column] = pd.array([None if _missing(v) else int(v) for v in frame[column]], dtype="Int64")
    for column in ("noise", "value", "reference", "ratio"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    return frame.reset_index(drop=True)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


# ----- summary and plots ----------------------------------------------------------------------
def _labels(frame: pd.DataFrame) -> pd.Series:
    predictor = frame["predictor"]
    return frame["policy"].where(predictor.isna(), frame["policy"] + " [" + predictor.fillna("") + "]")


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ratio per policy [predictor] (rows) and objective (columns), averaged over the other axes."""
    if not len(table) or table["ratio"].isna().all():
        return pd.DataFrame()
    frame = table.assign(label=_labels(table), objective=table["objective"].fillna(table["task"]))
    order = list(dict.fromkeys(frame["label"].dropna()))
    pivot = frame.pivot_table(index="label", columns="objective", values="ratio", aggfunc="mean", sort=False)
    return pivot.reindex([label for label in order if label in pivot.index])


def _per_seed(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Mean and spread over seeds of the per-seed mean ratio."""
    per_seed = frame.groupby(keys + ["seed"], sort=False, dropna=False)["ratio"].mean().reset_index()
    stats = per_seed.groupby(keys, sort=False, dropna=False)["ratio"].agg(["mean", "std"]).reset_index()
    stats["std"] = stats["std"].fillna(0.0)
    return stats


def _figure(n_panels: int, width: float):
    from benchmark.plots import subplots

    fig, axes = subplots(1, n_panels, figsize=(width * n_panels, 4.5), squeeze=False)
    return fig, axes[0]


def ratio_plot(table: pd.DataFrame, path: Path) -> Path:
    """Mean ratio per policy [predictor], one panel per objective, error bars = std over seeds."""
    frame = table[table["ratio"].notna()].assign(label=lambda f: _labels(f), objective=lambda f: f["objective"].fillna(f["task"]))
    objectives = list(dict.fromkeys(frame["objective"]))
    n_labels = frame.groupby("objective")["label"].nunique().max()
    fig, axes = _figure(len(objectives), max(5.0, 0.42 * n_labels + 2))
    for ax, objective in zip(axes, objectives):
        stats = _per_seed(frame[frame["objective"] == objective], ["label"])
        x = np.arange(len(stats))
        ax.bar(x, stats["mean"], yerr=stats["std"], capsize=3, color="#4C72B0")
        ax.axhline(1.0, color="k", lw=0.8, ls="--")
        ax.set_xticks(x, stats["label"], rotation=60, ha="right", fontsize=8)
        ax.set_title(objective)
        ax.set_ylabel("ratio (1 = optimal / bound), mean over seeds")
        if stats["mean"].max() / max(stats["mean"].min(), 1e-12) > 50:
            ax.set_yscale("log")
    fig.suptitle(f"sweep: {frame['cell'].nunique()} cells, {frame['seed'].nunique()} seed(s)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path


def robustness_plot(table: pd.DataFrame, path: Path) -> Path:
    """Ratio versus the cell's noise σ per policy; policies without p̂ dashed (flat in σ)."""
    frame = table[table["ratio"].notna() & table["noise"].notna()]
    frame = frame.assign(objective=frame["objective"].fillna(frame["task"]))
    objectives = list(dict.fromkeys(frame["objective"]))
    fig, axes = _figure(len(objectives), 6.0)
    for ax, objective in zip(axes, objectives):
        part = frame[frame["objective"] == objective]
        for policy, group in part.groupby("policy", sort=False):
            stats = _per_seed(group, ["noise"]).sort_values("noise")
            blind = group["predictor"].isna().all()
            ax.errorbar(stats["noise"], stats["mean"], yerr=stats["std"], marker="" if blind else "o",
                        ls="--" if blind else "-", lw=1.0 if blind else 1.5, capsize=3, label=policy)
        ax.set_xlabel("prediction noise σ  (p̂ = p·exp(σZ))")
        ax.set_ylabel("ratio (1 = optimal), mean over seeds")
        ax.set_title(objective)
        if part["ratio"].max() / max(part["ratio"].min(), 1e-12) > 10:
            ax.set_yscale("log")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return path
