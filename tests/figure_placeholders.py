"""Placeholder figures for the suite (tests/conftest.py `figures_unrendered`, `cell_figures_unrendered`).

A module of its own, not part of conftest: the worker processes of sweeps, reproductions and `benchmark
demo` (benchmark.sweeps.execution.local_pool, forked by multiprocessing's fork server) import it by name
to install the placeholder in themselves (`WorkerInit`); the folder of this file is on their sys.path,
which the fork server takes from the suite's process.
"""

from __future__ import annotations

from pathlib import Path


def write_placeholder(fig, path, *, dpi=120, command=None) -> Path:
    """`atlas_data.outputs.write_figure` without the rendering: a placeholder PNG and SVG at the same paths.

    The figure is still built by the caller, so an error in building it still fails; only matplotlib's
    layout and drawing (most of a small run's CPU) are left out."""
    path = Path(path)
    path.write_bytes(b"\x89PNG\r\n\x1a\n")  # the PNG signature
    path.with_suffix(".svg").write_text('<svg xmlns="http://www.w3.org/2000/svg"/>\n', encoding="utf-8")
    return path


RENDERED = [False]  # the running test is marked figures_rendered (set by tests/conftest.py)


class WorkerInit:
    """Initializer of a local pool's workers (in place of benchmark.sweeps.execution._worker_init): the
    product's own initializer, then, unless `rendered`, placeholder figures in the worker.

    Pickled when the pool starts a worker: `rendered` is the running test's RENDERED then, so a pool
    made by a test marked `figures_rendered` draws its figures for real, as that test's process does."""

    def __init__(self, rendered: bool = False):
        self.rendered = rendered

    def __reduce__(self):
        return WorkerInit, (RENDERED[0],)

    def __call__(self, parent_pid: int) -> None:
        from atlas_data import outputs
        from benchmark.sweeps import execution

        execution._worker_init(parent_pid)  # the worker's own module, never patched
        if not self.rendered:
            outputs.write_figure = write_placeholder
