"""The one results schema (docs/results-and-tracking.md): results.json + results.csv in an output folder.

Every task builds a list of row dicts and calls `write_results` inside the temporary folder of
`atlas_data.outputs.output_folder`; plots and leaderboards are derived from these rows.
results.json records `complete: true` and the command line: the folder appears under its name
only once everything in it is written. May import numpy/pandas and atlas_data (io, outputs).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from atlas_data.io import json_safe, write_text_atomic
from atlas_data.outputs import command_line

__all__ = ["default_output_dir", "json_safe", "write_results", "write_text_atomic"]


def default_output_dir(task: str, objective: str | None = None) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    parts = [task] + ([objective] if objective else []) + [stamp]
    return Path("results") / "-".join(parts)


def check_readme_block(readme: Path, start: str, end: str) -> str:
    """The README's text, refused (exit 2) unless it exists and holds the start ... end markers."""
    from atlas_data.errors import InputError

    readme = Path(readme)
    if not readme.is_file():
        raise InputError("README file not found", path=str(readme), where="--readme")
    text = readme.read_text()
    if start not in text or end not in text:
        raise InputError(f"no {start} ... {end} block to replace", path=str(readme), where="--readme")
    return text


def replace_readme_block(readme: Path, start: str, end: str, body: str) -> None:
    """Rewrite what stands between the README's start and end markers with `body`, atomically."""
    head, rest = check_readme_block(readme, start, end).split(start, 1)
    _, tail = rest.split(end, 1)
    write_text_atomic(Path(readme), f"{head}{start}\n{body.strip()}\n{end}{tail}")


def write_results(
    out_dir: Path,
    *,
    task: str,
    objective: str | None,
    n_jobs: int,
    dataset: dict[str, Any],
    rows: list[dict[str, Any]],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write results.json and results.csv; return the JSON document."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    doc = {"task": task, "objective": objective, "n_jobs": int(n_jobs), "dataset": dataset, "rows": rows}
    if extra:
        doc.update(extra)
    # the folder is renamed into place only once complete, so a visible results.json is complete
    doc.update(complete=True, argv=command_line())
    doc = json_safe(doc)
    (out_dir / "results.json").write_text(json.dumps(doc, indent=2) + "\n")
    pd.DataFrame(doc["rows"]).to_csv(out_dir / "results.csv", index=False)
    return doc


def format_table(rows: list[dict[str, Any]], columns: list[str], floatfmt: str = "{:.4g}") -> str:
    """A plain aligned text table for stdout."""
    cells = [[_fmt(r.get(c), floatfmt) for c in columns] for r in rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    line = "  ".join(c.ljust(w) for c, w in zip(columns, widths))
    sep = "  ".join("-" * w for w in widths)
    body = ["  ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
    return "\n".join([line, sep, *body])


def _fmt(value: Any, floatfmt: str) -> str:
    if value is None:
        return "-"
    if isinstance(value, (float, np.floating)):
        return "-" if not math.isfinite(value) else floatfmt.format(value)
    return str(value)
