"""MLflow tracking (docs/results-and-tracking.md): one MLflow run per `benchmark run` (and per sweep cell).

Experiment `atlas-<task>` or `atlas-scheduling-<objective>`; params = every option plus dataset
fingerprint, package version and git commit; metrics = every numeric field of every results row,
named `<policy>.<metric>` (`<policy>/<predictor>.<metric>` when a predictor is set,
`<policy>.m<machines>.<metric>` for makespan rows, `<method>.<metric>` for prediction rows);
artifacts = the output folder. Store: $MLFLOW_TRACKING_URI if set, else SQLite at
`<parent of the output folder>/mlflow.db` (so `results/mlflow.db` by default), artifacts in
`<parent>/mlartifacts`.
May import mlflow and the standard library; mlflow is imported lazily (it is slow to import).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from atlas_data.io import package_version

_SAFE = re.compile(r"[^A-Za-z0-9_\-.:/ ]")
_KEY_COLUMNS = ("policy", "method", "predictor", "machines")


def tracking_uri_for(results_dir: Path) -> str:
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    results_dir = Path(results_dir).resolve()
    results_dir.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{results_dir / 'mlflow.db'}"


def experiment_name(task: str, objective: str | None) -> str:
    return f"atlas-{task}" + (f"-{objective}" if objective else "")


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parent, capture_output=True, text=True, timeout=5
        )
        return out.stdout.strip() or None if out.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def row_prefix(row: dict) -> str:
    name = str(row.get("policy") or row.get("method") or "run")
    if row.get("predictor") and row.get("predictor") != name:  # a prediction row names its method twice
        name += f"/{row['predictor']}"
    if row.get("machines") is not None:
        name += f".m{row['machines']}"
    return _SAFE.sub("_", name)


def metrics_of(doc: dict) -> dict[str, float]:
    """Flatten results rows into MLflow metrics."""
    metrics: dict[str, float] = {}
    for row in doc.get("rows", []):
        prefix = row_prefix(row)
        for key, value in row.items():
            if key in _KEY_COLUMNS or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if value is not None and math.isfinite(value):
                metrics[f"{prefix}.{_SAFE.sub('_', key)}"] = float(value)
    return metrics


def params_of(options: dict[str, Any], doc: dict) -> dict[str, str]:
    params = {k: ("" if v is None else str(v))[:500] for k, v in options.items() if not callable(v) and not k.startswith("_")}
    dataset = doc.get("dataset") or {}
    params["dataset_fingerprint"] = str(dataset.get("fingerprint") or "")
    params["dataset_source"] = str(dataset.get("source") or "")
    params["n_jobs"] = str(doc.get("n_jobs"))
    params["package_version"] = package_version()
    params["git_commit"] = git_commit() or ""
    return params


def log_run(out_dir: Path, options: dict[str, Any], *, run_name: str | None = None) -> str:
    """Log the finished output folder `out_dir` as one MLflow run; return the run id."""
    out_dir = Path(out_dir)
    doc = json.loads((out_dir / "results.json").read_text())
    mlflow = import_mlflow()
    local = not os.environ.get("MLFLOW_TRACKING_URI")
    use_store(mlflow, tracking_uri_for(out_dir.parent))
    name = experiment_name(doc["task"], doc.get("objective"))
    if mlflow.get_experiment_by_name(name) is None:
        # with the default local store, artifacts sit beside mlflow.db, not in ./mlruns of the cwd
        where = (out_dir.parent.resolve() / "mlartifacts").as_uri() if local else None
        mlflow.create_experiment(name, artifact_location=where)
    mlflow.set_experiment(name)
    with mlflow.start_run(run_name=run_name or out_dir.name) as run:
        mlflow.log_params(params_of(options, doc))
        metrics = metrics_of(doc)
        if metrics:
            mlflow.log_metrics(metrics)
        mlflow.set_tags({"task": doc["task"], "objective": str(doc.get("objective")), "output": str(out_dir.resolve())})
        mlflow.log_artifacts(str(out_dir))
        return run.info.run_id


def use_store(mlflow, uri: str) -> None:
    """Point mlflow at `uri` without leaving it in os.environ.

    mlflow.set_tracking_uri also exports MLFLOW_TRACKING_URI, which would pin every later run in
    this process (tests, sweeps, the demo) to the first store and hide the user's own setting.
    """
    previous = os.environ.get("MLFLOW_TRACKING_URI")
    mlflow.set_tracking_uri(uri)
    if previous is None:
        os.environ.pop("MLFLOW_TRACKING_URI", None)
    else:
        os.environ["MLFLOW_TRACKING_URI"] = previous


def import_mlflow():
    """mlflow, imported with its INFO chatter (database migrations, new experiments) silenced."""
    import mlflow

    for name in ("mlflow", "alembic", "sqlalchemy"):
        logging.getLogger(name).setLevel(logging.ERROR)
    return mlflow
