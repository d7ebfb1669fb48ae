"""`benchmark compare`: MLflow runs side by side, one row per run, its status, key metrics as columns.

A run whose status is still RUNNING while nobody holds the store's lock was being logged by a
process that was killed outright (SIGKILL, power loss): it is shown as RUNNING and counted in a
note. Reading never creates a store; a damaged one is repaired or refused as for `run`.
`--csv FILE` is written atomically and replaces only a CSV an earlier `compare` wrote (atlas_data.outputs).
"""

from __future__ import annotations

from pathlib import Path

from atlas_data.errors import InputError


def register(subparsers) -> None:
    parser = subparsers.add_parser("compare", help="show tracked MLflow runs side by side")
    parser.add_argument("--experiment", help="experiment name (default: every atlas-* experiment)")
    parser.add_argument("--results", default="results", help="results folder holding mlflow.db (default results)")
    parser.add_argument("--metrics", default="ratio,rmsle,cov25,sharing_loss_jobs",
                        help="metric suffixes to show as columns (default ratio,rmsle,cov25,sharing_loss_jobs)")
    parser.add_argument("--csv", help="also write the table to this CSV file")
    parser.set_defaults(handler=_compare)


def compare_runs(results: Path, experiment: str | None, suffixes: list[str]):
    """DataFrame with one row per run: run id, experiment, start time, run name, status, chosen metrics."""
    import pandas as pd

    from benchmark.tracking import (ensure_store, import_mlflow, sqlite_path, store_errors, store_lock, tracking_uri_for,
                                    use_store)

    uri = tracking_uri_for(results, create=False)
    db = sqlite_path(uri)
    if db is not None and not db.exists():  # nothing tracked here yet; do not create a store by looking
        if experiment:
            raise InputError(f"no experiment named '{experiment}' in {uri} (no store there)", where="--experiment")
        return pd.DataFrame()
    mlflow = import_mlflow()
    with store_lock(uri):
        ensure_store(uri, create=False)
    use_store(mlflow, uri)
    with store_errors(uri):
        experiments = [e for e in mlflow.MlflowClient().search_experiments() if e.name.startswith("atlas-")]
    if experiment:
        experiments = [e for e in experiments if e.name == experiment]
        if not experiments:
            raise InputError(f"no experiment named '{experiment}' in {uri}", where="--experiment")
    if not experiments:
        return pd.DataFrame()
    runs = mlflow.search_runs(experiment_ids=[e.experiment_id for e in experiments], order_by=["attributes.start_time ASC"])
    if runs.empty:
        return pd.DataFrame()
    names = {e.experiment_id: e.name for e in experiments}
    keep = [c for c in runs.columns if c.startswith("metrics.") and c.rsplit(".", 1)[-1] in suffixes]
    table = pd.DataFrame(
        {
            "run": runs["run_id"].str.slice(0, 8),
            "experiment": runs["experiment_id"].map(names),
            "start": runs["start_time"].dt.strftime("%Y-%m-%d %H:%M:%S"),
            "name": runs.get("tags.mlflow.runName"),
            "status": runs["status"],
        }
    )
    metrics = runs[sorted(keep)].rename(columns=lambda c: c[len("metrics."):])
    return pd.concat([table, metrics], axis=1).dropna(axis=1, how="all")


def _is_compare_csv(path: Path) -> bool:
    """A CSV that `compare --csv` wrote (its header row), the only file `--csv` may replace."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().startswith("run,experiment,start")
    except (OSError, UnicodeDecodeError):
        return False


def _compare(args) -> int:
    from benchmark.results import format_table

    suffixes = [s.strip() for s in args.metrics.split(",") if s.strip()]
    if args.csv:
        from atlas_data.outputs import check_output_file

        check_output_file(Path(args.csv), "compare", option="--csv", recognise=_is_compare_csv)
    table = compare_runs(Path(args.results), args.experiment, suffixes)
    if table.empty:
        print("no tracked runs found")
        return 0
    if args.csv:
        from atlas_data.outputs import output_file

        output_file(Path(args.csv), "compare", lambda tmp: table.to_csv(tmp, index=False), option="--csv",
                    recognise=_is_compare_csv)
    print(format_table(table.to_dict("records"), list(table.columns)))
    running = int((table["status"] == "RUNNING").sum())
    if running:
        from benchmark.tracking import store_is_idle, tracking_uri_for

        if store_is_idle(tracking_uri_for(Path(args.results), create=False)):
            print(f"note: {running} run(s) still RUNNING although no run is being logged: their process was killed "
                  "while logging (their output folders hold the results)")
    return 0
