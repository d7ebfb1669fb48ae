"""Sweeps: the cross product of a YAML config's lists, one `benchmark run` per cell, one tidy table.

Three parts, one job each:

- `benchmark.sweeps.config` reads and checks the YAML file and expands it into cells;
- `benchmark.sweeps.execution` runs the cells on local worker processes or on Dask, logs each to
  MLflow from the parent, and writes OUT/sweep.parquet, OUT/sweep.json, OUT/failures.json;
- `benchmark.sweeps.aggregate` turns the cells' results rows into the tidy table and summaries.

The figures (OUT/sweep_ratios.png, OUT/sweep_robustness.png) come from `benchmark.plots`.
The config format is documented in docs/results-and-tracking.md and in `benchmark.sweeps.config`.
"""

from benchmark.sweeps.aggregate import TABLE_COLUMNS, summary, sweep_table
from benchmark.sweeps.config import (CONFIG_KEYS, DEFAULT_MAX_CELLS, SWEEP_KEYS, Cell, SweepConfig, cell_count, cells,
                                     load_config)
from benchmark.sweeps.execution import CellResult, SweepResult, run_cell, run_cells, run_sweep

__all__ = ["CONFIG_KEYS", "DEFAULT_MAX_CELLS", "SWEEP_KEYS", "TABLE_COLUMNS", "Cell", "CellResult", "SweepConfig", "SweepResult",
           "cell_count", "cells", "load_config", "run_cell", "run_cells", "run_sweep", "summary", "sweep_table"]
