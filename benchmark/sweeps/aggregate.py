"""Sweep aggregation: the cells' results rows as one tidy, typed table, and its summaries.

Table columns: `cell`, `task`, `objective`, `dataset` (as written in the config; null = default),
`policies` (the cell's policy list), `policy`, `predictor` (the row's: `noise:σ`, a method name,
`column`, or null for a policy that uses no p̂), `noise` (the cell's σ), `seed` (0 when not swept:
the run's default), `n`, `machines` (the row's for makespan, else the cell's single count),
`nodes`, `lease` (the cell's, else the fairness run's own `lease_s`), `value`, `reference`, `ratio`,
then every other metric of the rows (lists and dicts as JSON text). Rows are ordered by cell, then
the run's own row order, so every executor gives the same table.

May import benchmark.sweeps.config, numpy, pandas.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable

import pandas as pd

from benchmark.sweeps.config import Cell

# coordinates first, then the objective columns, then whatever else the rows carry
TABLE_COLUMNS = ("cell", "task", "objective", "dataset", "policies", "policy", "predictor", "noise", "seed", "n",
                 "machines", "nodes", "lease", "value", "reference", "ratio")
_STRING_COLUMNS = ("cell", "task", "objective", "dataset", "policies", "policy", "predictor")
_INT_COLUMNS = ("seed", "n", "machines", "nodes")


def annotate(row: dict, cell: Cell, doc: dict) -> dict:
    """A results.json row with the cell's coordinates in front (lists and dicts as JSON text)."""
    machines = row.get("machines")
    if machines is None and cell.machines is not None and "," not in cell.machines:
        machines = int(cell.machines)
    coordinates = {
        "cell": cell.id, "task": cell.task, "objective": doc.get("objective") or cell.objective,
        "dataset": cell.dataset, "policies": cell.policies, "policy": row.get("policy"),
        "predictor": row.get("predictor"), "noise": cell.noise,
        "seed": 0 if cell.seed is None else cell.seed,  # the run's default seed
        "n": cell.n, "machines": machines, "nodes": cell.nodes,
        "lease": cell.lease if cell.lease is not None else (doc.get("options") or {}).get("lease_s"),
    }
    rest = {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in row.items() if k not in coordinates}
    return {**coordinates, **rest}


def sweep_table(row_lists: Iterable[Iterable[dict]]) -> pd.DataFrame:
    """One tidy frame from the annotated rows of each cell, given in cell order; typed columns."""
    records = [row for rows in row_lists for row in rows]
    frame = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=list(TABLE_COLUMNS))
    for column in TABLE_COLUMNS:
        if column not in frame.columns:
            frame[column] = None
    frame = frame[list(TABLE_COLUMNS) + [c for c in frame.columns if c not in TABLE_COLUMNS]]
    for column in _STRING_COLUMNS:
        frame[column] = frame[column].astype("str")
    for column in _INT_COLUMNS:
        frame[column] = pd.array([None if _missing(v) else int(v) for v in frame[column]], dtype="Int64")
    for column in ("noise", "lease", "value", "reference", "ratio"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("float64")
    return frame.reset_index(drop=True)


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA


def labels(frame: pd.DataFrame) -> pd.Series:
    """`policy [predictor]`, or the policy alone for a row without p̂."""
    predictor = frame["predictor"]
    return frame["policy"].where(predictor.isna(), frame["policy"] + " [" + predictor.fillna("") + "]")


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean ratio per policy [predictor] (rows) and objective (columns), averaged over the other axes."""
    if not len(table) or table["ratio"].isna().all():
        return pd.DataFrame()
    frame = table.assign(label=labels(table), objective=table["objective"].fillna(table["task"]))
    order = list(dict.fromkeys(frame["label"].dropna()))
    pivot = frame.pivot_table(index="label", columns="objective", values="ratio", aggfunc="mean", sort=False)
    return pivot.reindex([label for label in order if label in pivot.index])
