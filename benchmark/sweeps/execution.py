"""Sweep execution: run cells in worker processes or on Dask, log them to MLflow, write the outputs.

Everything is written into a temporary sibling of OUT, renamed to OUT when complete
(atlas_data.outputs). Each cell runs `benchmark.cli.main` in a worker with `--output
<that folder>/cells/<cell id> --quiet --no-mlflow`; its results.json rows, annotated with the
cell's coordinates, become rows of OUT/sweep.parquet (see `benchmark.sweeps.aggregate`). A failed
cell becomes a record in OUT/failures.json and the others go on. OUT/sweep.json lists every cell
(id, argv, coordinates, ok, seconds). MLflow logging is done by the parent process once OUT is in
place (`tracking.log_sweep`: one sweep run, a nested run per finished cell), so SQLite never sees
two writers and the runs' artifacts name their final place; the store is the project's
(`tracking.tracking_uri`).

Executors: `local` = a ProcessPoolExecutor; `dask` = a distributed.Client on `--address`, or on a
LocalCluster started (and closed) here. Worker processes never outlive the sweep and leave Ctrl-C
to it: local workers get SIGKILL from the kernel when their parent dies (Linux PR_SET_PDEATHSIG)
and poll the sweep's pid as well; local and LocalCluster workers are forked by a fork server
started with SIGINT blocked, so a terminal's Ctrl-C reaches only the sweep, which kills its local
workers or closes its cluster (Dask's log silenced: no "Nanny failed to start"), and the CLI
prints one line and exits 130. Cells in one process run one at a time (sys.stderr is
process-wide and the simulator holds the GIL anyway): scale Dask workers with processes, one
thread each (`dask worker ADDRESS --nworkers N --nthreads 1`). Remote workers need atlas-bench
installed and OUT on a shared filesystem (the table itself comes back over the wire; MLflow
logging in the parent needs the cell folders).

May import benchmark (cli, interrupts, plots, progress, tracking, sweeps.config, sweeps.aggregate),
atlas_data (errors, io, outputs), tqdm, and lazily dask and distributed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
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
_TQDM_LOCK = threading.RLock()  # for tqdm in workers, instead of its multiprocessing lock (see run_cell)


def run_cell(cell: Cell, out_root: str | Path, mlflow: bool = False) -> CellResult:
    """Run one cell in this process; never raises: a failure is a CellResult with `error` set.

    With mlflow=True the cell logs itself (for workers that have their own tracking server in
    MLFLOW_TRACKING_URI); the sweep command passes False and logs from the parent instead.
    """
    from tqdm import tqdm

    from benchmark.cli import main

    # tqdm's default lock is a multiprocessing lock (a named semaphore): a worker killed on Ctrl-C
    # would leave it behind, and the resource tracker would warn about it after the one-line message
    tqdm.set_lock(_TQDM_LOCK)
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


# ----- worker processes that never outlive the sweep ------------------------------------------
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _worker_init(parent_pid: int) -> None:
    """First thing in every local worker: Ctrl-C is the parent's business; die with the parent."""
    from benchmark.interrupts import leave_signals_to_parent

    leave_signals_to_parent()
    die_with_parent(parent_pid)


def _start_fork_server() -> None:
    """Start multiprocessing's fork server with SIGINT blocked, as the stdlib does for its resource
    tracker: the server and every worker forked from it inherit the mask, so a Ctrl-C sent to the
    whole terminal group reaches only the sweep (no KeyboardInterrupt traceback from a worker that
    was importing), and the sweep stops them."""
    from multiprocessing import forkserver, resource_tracker

    if not hasattr(signal, "pthread_sigmask"):
        forkserver.ensure_running()
        return
    # the tracker first: starting it unblocks SIGINT again (it plays the same trick for itself)
    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        forkserver.ensure_running()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def die_with_parent(parent_pid: int, poll_s: float = 1.0) -> None:
    """Make this process end when `parent_pid` ends, even by SIGKILL.

    On Linux the kernel sends SIGKILL when the parent dies (PR_SET_PDEATHSIG; a forkserver worker's
    parent is the fork server, which exits when the sweep does). A daemon thread also polls the
    sweep's pid: it covers other systems and a parent that died before prctl ran.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    first_parent = os.getppid()

    def watch() -> None:
        while True:
            if os.getppid() != first_parent or not _alive(parent_pid):
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(poll_s)

    threading.Thread(target=watch, name="atlas-die-with-parent", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed parent stays a zombie until its own parent reaps it: that is dead too
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL the pool's workers: on an interrupt, running cells are dropped, not waited for."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            process.kill()
    _kill_fork_server()


def _kill_fork_server() -> None:
    """SIGKILL multiprocessing's fork server and every process it forked (the next pool starts a new one).

    A worker the server is still starting (it may still be importing) is in no pool's table yet;
    left alive, it would fail on the pool's semaphores once this process removes them and print a
    traceback. The server is frozen first (SIGSTOP) so it forks nothing more while its children
    are listed (Linux /proc; elsewhere the workers' own watchdog ends them).
    """
    from multiprocessing import forkserver

    server = getattr(getattr(forkserver, "_forkserver", None), "_forkserver_pid", None)
    if not server or not os.path.isdir("/proc"):
        return
    with contextlib.suppress(OSError):
        os.kill(server, signal.SIGSTOP)
        for pid in _children_of(server):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        os.kill(server, signal.SIGKILL)


def _children_of(pid: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == pid:
                        children.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return children


def local_pool(max_workers: int, preload: list[str]) -> ProcessPoolExecutor:
    """A pool of local workers that leave Ctrl-C to this process and die with it (see the module
    docstring); `preload`: modules the fork server imports once for every worker. Stop it on an
    interrupt with `kill_pool`. Used by the local sweep and by `benchmark demo`."""
    import multiprocessing

    # forkserver: workers are forked from a clean server process, not from this one (which may
    # hold threads, e.g. a Dask client, and fork is unsafe then); the server pays the imports once
    context = multiprocessing.get_context("forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn")
    if context.get_start_method() == "forkserver":
        context.set_forkserver_preload(preload)
        _start_fork_server()
    return ProcessPoolExecutor(max_workers=max_workers, mp_context=context, initializer=_worker_init,
                               initargs=(os.getpid(),))


def kill_pool(pool: ProcessPoolExecutor) -> None:
    """Ctrl-C: drop the queued and the running work instead of finishing it before exiting; with the
    workers dead the shutdown is quick, and it releases the pool's semaphores (else multiprocessing's
    resource tracker warns about them after the one-line message)."""
    from benchmark.interrupts import deferred_signals

    _kill_workers(pool)
    with deferred_signals(reraise=False):
        pool.shutdown(wait=True, cancel_futures=True)


def _run_local(cell_list, out_root, workers, finish) -> None:
    max_workers = max(1, min(workers or os.cpu_count() or 1, len(cell_list)))
    pool = local_pool(max_workers, ["benchmark.sweeps.execution", "benchmark.tasks.scheduling"])
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
    except BaseException:  # Ctrl-C: the running cells are dropped, not finished
        kill_pool(pool)
        raise
    pool.shutdown()


def check_address(address: str | None, executor: str) -> None:
    """`--address`: only with `--executor dask`, and a scheduler address Dask can dial
    (`[tcp://]host:port`); InputError (one line) before any work otherwise. An empty one is refused
    too: it would silently start a local cluster instead of the one the user named."""
    if address is None:
        return
    if executor != "dask":
        raise InputError("--address needs --executor dask", where="--address")
    if not address.strip():
        raise InputError("the address is empty: give the Dask scheduler as tcp://host:port, or leave --address out "
                         "to start a local cluster", where="--address")
    try:
        from distributed.comm.addressing import get_address_host_port, parse_address
    except ImportError:
        return  # the dask executor says what to install
    try:
        scheme, _ = parse_address(address.strip(), strict=False)
        if scheme == "inproc":  # a scheduler in this process (LocalCluster(processes=False)): no port
            return
        host, port = get_address_host_port(address.strip())
    except (ValueError, TypeError) as exc:
        raise InputError(f"{address!r} is not a Dask scheduler address ({exc}): write tcp://host:port",
                         where="--address") from None
    if not host or not 0 < int(port) < 65536:
        raise InputError(f"{address!r} is not a Dask scheduler address (host {host!r}, port {port}): write "
                         "tcp://host:port", where="--address")


def _run_dask(cell_list, out_root, address, workers, finish) -> None:
    import logging

    try:
        from distributed import Client, LocalCluster, as_completed as dask_as_completed
    except ImportError:
        raise InputError("the dask executor needs dask[distributed] (pip install 'atlas-bench[dask]')",
                         where="--executor") from None
    cluster = client = None
    interrupted = False
    try:
        if address:
            try:
                client = Client(address, timeout="10s")
            except (OSError, TimeoutError, ValueError) as exc:  # ValueError: an address Dask cannot parse
                raise InputError(f"cannot connect to the Dask scheduler: {exc}", where=f"--address {address}") from None
        else:
            import dask

            # workers forked by a fork server started with SIGINT blocked (see _start_fork_server):
            # a Ctrl-C to the terminal group reaches only the sweep, no traceback from each worker
            with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
                from distributed.utils import get_mp_context

                get_mp_context()  # sets distributed's fork-server preload before the server starts
                _start_fork_server()
                # CRITICAL: a worker's errors reach the sweep as failed cells; logged as well, they
                # would only repeat them, and after a Ctrl-C flood the terminal (lost heartbeats)
                cluster = LocalCluster(n_workers=max(1, min(workers or os.cpu_count() or 1, len(cell_list))),
                                       threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
            client = Client(cluster)
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
    except KeyboardInterrupt:
        # Ctrl-C, at start-up too: distributed then logs every nanny and comm it loses ("Nanny failed
        # to start"); the user asked to stop, so it closes quietly and the CLI prints one line
        interrupted = True
        _silence_distributed()
        raise
    finally:
        from benchmark.interrupts import deferred_signals

        with deferred_signals(reraise=not interrupted):  # a second Ctrl-C must not abandon the cluster
            for closable in (client, cluster):
                if closable is not None:
                    if interrupted:
                        with contextlib.suppress(Exception):
                            closable.close()
                    else:
                        closable.close()
            if interrupted and not address:
                _abandon_local_cluster()


def _abandon_local_cluster() -> None:
    """After an interrupt: end the LocalCluster's worker processes, and keep distributed's exit hook
    from closing a cluster interrupted while it started (it fails with a traceback on those)."""
    import atexit

    _kill_fork_server()
    with contextlib.suppress(Exception):
        from distributed.deploy.spec import close_clusters

        atexit.unregister(close_clusters)



def _silence_distributed() -> None:
    import logging

    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if name.startswith(("distributed", "tornado", "asyncio")) and isinstance(logger, logging.Logger):
            logger.disabled = True


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
    if mlflow and cell_list:
        from benchmark.tracking import preflight, prepare, tracking_uri

        # the store is checked or repaired now: a damaged one is exit 2 before any cell runs, not a
        # warning per cell after all of them (an external one is also created now)
        if os.environ.get("MLFLOW_TRACKING_URI"):
            prepare(os.environ["MLFLOW_TRACKING_URI"])
        else:
            preflight(tracking_uri())
    warnings: list[str] = []
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
    if mlflow and cell_list:
        warnings = _log_sweep(config, out_dir, results, executor)
        for problem in warnings:
            say(problem, quiet)
        if warnings:  # recorded beside the cells (the folder is complete and in place already)
            manifest["mlflow_warnings"] = warnings
            write_text_atomic(out_dir / "sweep.json", json.dumps(manifest, indent=2) + "\n")
    return SweepResult(out_dir=out_dir, table=table, results=tuple(results))


def _log_sweep(config: SweepConfig, out_dir: Path, results: list[CellResult], executor: str) -> list[str]:
    """Log the sweep (one run) and each finished cell (a nested run each) from this, the parent, process;
    problems are returned, not raised (the sweep's results stand without its MLflow runs)."""
    from benchmark.tasks.config import as_options, from_argv
    from benchmark.tracking import log_sweep

    cells, warnings = [], []
    for result in results:
        if not result.ok:
            continue
        cell_dir = Path(result.out_dir)
        if not (cell_dir / "results.json").exists():
            warnings.append(f"cell {result.cell.id}: not logged to MLflow: {cell_dir} is not visible here")
            continue
        cell = from_argv(list(result.cell.argv) + ["--output", str(cell_dir), "--quiet"])
        options = {"command": "run", "task": cell.task,
                   **{k: v for k, v in as_options(cell).items() if k not in ("quiet", "no_mlflow")}}
        options.update(sweep=str(out_dir), sweep_cell=result.cell.id)
        cells.append((result.cell.id, cell_dir, options))
    params = {"config": str(Path(config.path).resolve()), "executor": executor, "n_cells": len(results),
              "n_failed": sum(not r.ok for r in results)}
    try:
        warnings += log_sweep(out_dir, config.task, params, cells)
    except Exception as exc:  # noqa: BLE001 - a damaged store included: the sweep's folder is complete
        warnings.append(f"sweep: MLflow logging failed: {type(exc).__name__}: {exc}")
    return warnings
