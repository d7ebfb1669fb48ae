"""Sweep execution: run cells in worker processes or on Dask, log them to MLflow, write the outputs.

Everything is written into a temporary sibling of OUT, renamed to OUT when complete
(atlas_data.outputs). Each cell runs `benchmark.cli.main` in a worker with `--output
<that folder>/cells/<cell id> --quiet --no-mlflow`; its results.json rows, annotated with the
cell's coordinates, become rows of OUT/sweep.parquet (see `benchmark.sweeps.aggregate`). A failed
cell becomes a record in OUT/failures.json and the others go on. OUT/sweep.json lists every cell
(id, argv, coordinates, ok, seconds). MLflow logging is done by the parent process, one cell at a
time once OUT is in place (`tracking.log_run`), so SQLite never sees two writers and the runs'
artifacts name their final place; the store is `OUT/cells/mlflow.db` unless MLFLOW_TRACKING_URI
is set.

Executors: `local` = a ProcessPoolExecutor; `dask` = a distributed.Client on `--address`, or on a
LocalCluster started (and closed) here. Cells in one process run one at a time (sys.stderr is
process-wide and the simulator holds the GIL anyway): scale Dask workers with processes, one
thread each (`dask worker ADDRESS --nworkers N --nthreads 1`). Remote workers need atlas-bench
installed and OUT on a shared filesystem (the table itself comes back over the wire; MLflow
logging in the parent needs the cell folders).

May import benchmark (cli, plots, progress, tracking, sweeps.config, sweeps.aggregate),
atlas_data (errors, io, outputs), and lazily distributed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

import pandas as pd

from atlas_data.errors import InputError
from atlas_data.io import write_text_atomic
from atlas_data.outputs import command_line
from benchmark import plots
from benchmark.progress import say
from benchmark.sweeps.aggregate import annotate, sweep_table
from benchmark.sweeps.config import Cell, SweepConfig, cells, last_line


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
                error = last_line(captured.getvalue()) or f"`benchmark run` exited with status {code}"
                return CellResult(cell, error=error, seconds=time.perf_counter() - start, out_dir=str(out_dir))
            doc = json.loads((out_dir / "results.json").read_text())
        except SystemExit as exc:  # argparse
            error = last_line(captured.getvalue()) or f"`benchmark run` exited with status {exc.code}"
            return CellResult(cell, error=error, seconds=time.perf_counter() - start, out_dir=str(out_dir))
        except Exception as exc:  # noqa: BLE001 - one broken cell must not stop the sweep
            return CellResult(cell, error=f"internal error: {type(exc).__name__}: {exc}",
                              seconds=time.perf_counter() - start, out_dir=str(out_dir))
    rows = tuple(annotate(row, cell, doc) for row in doc.get("rows", []))
    return CellResult(cell, rows=rows, seconds=time.perf_counter() - start, out_dir=str(out_dir))


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
        context.set_forkserver_preload(["benchmark.sweeps.execution", "benchmark.tasks.scheduling"])
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
    """Run every cell, write the table, plots and records, then log each finished cell to MLflow (parent only).

    Everything is written into a temporary sibling of `out_dir`, renamed into place when complete
    (atlas_data.outputs): an interrupted sweep leaves nothing, a rerun replaces the earlier sweep
    whole. MLflow logs the cells from their final place, after the rename.
    """
    from atlas_data.outputs import output_folder
    from benchmark.progress import Progress

    out_dir = Path(out_dir).resolve()
    cell_list = cells(config)
    mlflow = mlflow and config.mlflow
    with output_folder(out_dir, "sweep") as folder:
        with Progress(f"sweep: {len(cell_list)} cells ({executor})", total=len(cell_list), quiet=quiet) as progress:

            def on_result(result: CellResult) -> None:
                progress.update()
                if not result.ok:
                    progress.note(f"cell {result.cell.id} failed: {result.error}")

            results = run_cells(cell_list, folder, executor=executor, address=address, workers=workers,
                                on_result=on_result)
        # each cell's folder under its final name, for the records and for MLflow
        results = [replace(r, out_dir=str(out_dir / "cells" / r.cell.id)) for r in results]
        table = sweep_table([r.rows for r in sorted(results, key=lambda r: r.cell.index)])
        table.to_parquet(folder / "sweep.parquet", index=False)
        failures = [r for r in results if not r.ok]
        if failures:
            records = [{"cell": r.cell.id, "argv": ["benchmark", *r.cell.argv], "error": r.error} for r in failures]
            (folder / "failures.json").write_text(json.dumps(records, indent=2) + "\n")
        manifest = {
            "config": str(Path(config.path).resolve()), "executor": executor, "address": address,
            "cells": [{**{k: v for k, v in asdict(r.cell).items() if k != "index"}, "ok": r.ok,
                       "seconds": round(r.seconds, 3)} for r in results],
            "n_rows": int(len(table)), "n_failed": len(failures), "mlflow_warnings": [],
            "complete": True, "argv": command_line(),
        }
        (folder / "sweep.json").write_text(json.dumps(manifest, indent=2) + "\n")
        if len(table) and table["ratio"].notna().any():
            plots.sweep_ratio_bars(table, folder / "sweep_ratios.png")
            if table["noise"].nunique() >= 2:
                plots.robustness_curve(table, folder / "sweep_robustness.png", title="sweep: ratio against prediction noise")
    if mlflow:
        warnings = [problem for r in results if r.ok and (problem := _log_cell(r, out_dir))]
        for problem in warnings:
            say(problem, quiet)
        if warnings:  # recorded beside the cells (the folder is complete and in place already)
            manifest["mlflow_warnings"] = warnings
            write_text_atomic(out_dir / "sweep.json", json.dumps(manifest, indent=2) + "\n")
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
