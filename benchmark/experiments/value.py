"""The experiment of `benchmark value`: the value of prediction on many real jobs tables, one table of verdicts.

For each jobs table and objective, one ordinary scheduling run on its test part with the learned p̂
and its controls (`run_lines`: `benchmark run --task scheduling --jobs T --predictor M --controls`);
then the value-of-prediction record of each run (benchmark.value) in one table (`value_cells`, also
the value table of `benchmark demo`), and per objective (`value_summary`): on how many tables the best
policy on p̂ does at least as well as the best blind one, the mean value, and the largest ratio of the
best policy on p̂ to the best blind one. `write_outputs` writes value.json and value.md; `markdown` is
also the block between `<!-- value:start -->` and `<!-- value:end -->` of docs/results.md.

Part of the experiments package (benchmark.experiments): may import benchmark.markdown,
benchmark.results, benchmark.value and the standard library and numpy; never benchmark.commands or
benchmark.cli (the command runs the command lines).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

START, END = "<!-- value:start -->", "<!-- value:end -->"
#: every shipped real GPU-cluster jobs table (docs/real-traces.md)
SHIPPED_TABLES = ("philly", "openb", *(f"elasticflow:cluster{k:02d}" for k in range(1, 11)))
OBJECTIVES = ("total_completion", "max_stretch")


VALUE_HEADER = ["trace", "objective", "p̂", "best blind", "best with p̂", "value", "permuted", "constant", "uses p̂",
                "ceiling", "blind ceiling"]
OBJECTIVE_LABEL = {"total_completion": "ΣC_j / SRPT", "max_stretch": "max S / S*"}


def value_cells(trace: str, objective: str, record: dict) -> list[str]:
    """One Markdown row (VALUE_HEADER) of a value record of `trace`'s `objective` run."""
    from benchmark.markdown import text_cell

    controls = record.get("controls") or {}
    learned = record.get("learned_policies")
    signed = "{:+.2f}"
    return [f"`{trace}`", OBJECTIVE_LABEL.get(objective, objective), record["p_hat"],
            f"{record['best_blind_policy']} {record['best_blind']:.3f}",
            f"{record['best_learned_policy'].split(' / ')[0]} {record['best_learned']:.3f}",
            text_cell(record.get("value"), signed), text_cell(controls.get("permuted"), signed),
            text_cell(controls.get("constant"), signed), "–" if learned is None else str(len(learned)),
            text_cell(record.get("ceiling"), signed), text_cell(record.get("blind_ceiling"), signed)]


def value_summary(entries: list[tuple[str, str, dict]]) -> dict[str, dict]:
    """Per objective over (trace, objective, record) entries: how many tables, on how many the best policy
    on p̂ is at most the best blind one, the mean value, and the largest best-with-p̂ / best-blind ratio."""
    out: dict[str, dict] = {}
    for _, objective, record in entries:
        if record.get("value") is None:
            continue
        item = out.setdefault(objective, {"tables": 0, "not_worse": 0, "values": [], "worst_ratio": 0.0})
        item["tables"] += 1
        item["not_worse"] += record["best_learned"] <= record["best_blind"]
        item["values"].append(record["value"])
        item["worst_ratio"] = max(item["worst_ratio"], record["best_learned"] / record["best_blind"])
    for item in out.values():
        item["mean_value"] = float(np.mean(item.pop("values")))
    return out


def run_lines(predictor: str, tables: list[str], objectives: list[str], folder: Path):
    """(its place in `tables`, table, objective, its output folder, the `run` command line writing there)
    of every run, in order."""
    for i, table in enumerate(tables):
        for objective in objectives:
            sub = folder / f"{i + 1:02d}-{_slug(table)}-{objective}"
            yield i, table, objective, sub, ["run", "--task", "scheduling", "--objective", objective, "--jobs", table,
                                             "--predictor", predictor, "--controls", "--output", str(sub), "--quiet"]


def records_of(run_folder: Path, predictor: str) -> list[dict]:
    """The value-of-prediction records of `predictor`'s p̂ in one run's results.json."""
    doc = json.loads((run_folder / "results.json").read_text(encoding="utf-8"))
    return [record for record in doc.get("value_of_prediction") or [] if record["p_hat"] == predictor]


def _slug(table: str) -> str:
    """A folder name for a table: elasticflow:cluster05 -> elasticflow-cluster05, a file by its stem."""
    name = Path(table).stem if Path(table).suffix else table
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name)


def markdown(entries: list[tuple[str, str, dict]], predictor: str, summary: dict) -> str:
    """The value table of `entries` (trace, objective, record) and one verdict line per objective of
    `summary` (value_summary of the entries)."""
    from benchmark.markdown import markdown_table

    table = markdown_table(VALUE_HEADER, [value_cells(t, o, r) for t, o, r in entries])
    lines = [f"The value of the learned p̂ (`{predictor}`, fitted on each table's train/validation part) on each "
             "table's test part, one machine, with its controls and ceilings (`benchmark value`; columns as in the "
             "demo's table above).", "", table, ""]
    for objective, item in summary.items():
        lines.append(f"- {OBJECTIVE_LABEL.get(objective, objective)}: the best policy on p̂ is at least as good as the "
                     f"best blind one on {item['not_worse']} of {item['tables']} tables; mean value "
                     f"{item['mean_value']:+.2f}; best with p̂ / best blind at most {item['worst_ratio']:.2f}.")
    return "\n".join(lines)


def write_outputs(folder: Path, entries: list[tuple[str, str, dict]], predictor: str, tables: list[str],
                  objectives: list[str], started: float) -> str:
    """Write value.md and value.json into `folder` from the (table, objective, record) entries of the
    runs; the markdown. `started` (perf_counter) is when the runs began."""
    from benchmark.results import write_text_atomic

    summary = value_summary(entries)
    text = markdown(entries, predictor, summary)
    write_text_atomic(folder / "value.md", text + "\n")
    write_text_atomic(folder / "value.json", json.dumps(
        {"predictor": predictor, "tables": tables, "objectives": objectives,
         "records": [{"trace": t, "objective": o, **r} for t, o, r in entries],
         "summary": summary, "seconds": round(time.perf_counter() - started, 1)}, indent=1) + "\n")
    return text
