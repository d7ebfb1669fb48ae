"""`benchmark compare`: the tracked task invocations, one row each, or the results of one of them.

Without `--run`: one row per parent run (a `benchmark run`, a sweep, or a run logged before runs
had children), oldest first — run id, experiment, start, name, status, number of child runs, and
the best child by the first `--metrics` name its children have (`ratio 1.124 (spjf)`; children that
read true sizes — clairvoyant policies, oracle p̂ — only when no other child has the metric). With
`--run ID` (a prefix is enough): that run's children (a sweep's: its cells' children), one row
each, with policy / method / predictor / machines and the `--metrics` columns.

The store is the project's (benchmark.tracking.tracking_uri) or `<--results>/mlflow.db`. It is read
through MlflowClient.search_runs, MLflow's public API, with one fast path: a local SQLite store whose
schema version is one of benchmark.tracking.CHECKED_SCHEMAS is read with plain sqlite3, read-only,
because importing MLflow alone takes seconds and its search loads every metric of every run. The
fast path gives the same answer, not a second opinion: tests/benchmark/test_tracking_public_api.py
checks it against MlflowClient.search_runs on the same store, and that the schema this MLflow writes
is among those versions. A store of any other schema version goes through MlflowClient, whose
refusal of a version it does not open is exit 2 with the fix (`mlflow db upgrade URI`). Reading
changes nothing: it never creates, locks, migrates or repairs a store (so it works on read-only media
and while a run logs); without a store, "nothing to compare" (exit 0). A file that is not an MLflow
store is exit 2 (benchmark.tracking.check_store); a half-migrated one (benchmark.tracking.damage),
which MLflow would migrate on opening, is read as far as the fast path can, with a note that the
next `run` repairs it.
A run still RUNNING while nobody holds the store's lock was being logged by a process that was
killed outright (SIGKILL, power loss): a note under the table counts them.
`--csv FILE` is written atomically and replaces only a CSV an earlier `compare` wrote (atlas_data.outputs).
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

from atlas_data.errors import InputError

DEFAULT_METRICS = "ratio,rmsle,cov25,sharing_loss_jobs"
# metrics where more is better (coverage, rank correlation, utilisation); every other one: less is better
HIGHER_IS_BETTER = frozenset({"cov25", "cov50", "cov25_recurrent", "cov50_recurrent", "spearman",
                              "interval_coverage", "utilisation", "completed"})
PARENT_LINK = "mlflow.parentRunId"


def register(subparsers) -> None:
    parser = subparsers.add_parser("compare", help="show tracked MLflow runs side by side")
    parser.add_argument("--experiment", help="experiment name (default: every atlas-* experiment)")
    parser.add_argument("--results", metavar="DIR",
                        help="read the store DIR/mlflow.db (default: $MLFLOW_TRACKING_URI, else the project's "
                             "results/mlflow.db; docs/results-and-tracking.md)")
    parser.add_argument("--run", metavar="ID", help="show this run's child runs (a run id or its first characters)")
    parser.add_argument("--metrics", default=DEFAULT_METRICS,
                        help=f"metric names to show, in order of preference (default {DEFAULT_METRICS})")
    parser.add_argument("--csv", help="also write the table to this CSV file")
    parser.set_defaults(handler=_compare)


CLAIRVOYANT_TAG = "atlas.clairvoyant"  # benchmark.tracking.CLAIRVOYANT_TAG (not imported: tracking is slower to load)
RUN_TAGS = ("policy", "method", "predictor", "machines", "atlas.level", CLAIRVOYANT_TAG)  # the tags compare reads


@dataclass
class Store:
    """What compare reads of a store: runs, their parent links and the chosen metrics of every run."""

    runs: dict[str, dict] = field(default_factory=dict)    # run id -> experiment, start, name, status, tags
    parent: dict[str, str] = field(default_factory=dict)   # child run id -> parent run id
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)  # run id -> {metric: value}
    experiments: set[str] = field(default_factory=set)    # the active experiments read (with or without runs)


def store_uri(results: Path | None) -> str:
    """`DIR/mlflow.db` of `--results DIR` (the option beats the environment), else the default store."""
    from benchmark.tracking import tracking_uri

    return f"sqlite:///{Path(results).resolve() / 'mlflow.db'}" if results is not None else tracking_uri()


def _wanted(name: str, experiment: str | None) -> bool:
    """The experiments compare reads: `experiment`, else every atlas-* one (case as written)."""
    return name == experiment if experiment else name.startswith("atlas-")


def read_store(uri: str, experiment: str | None, metrics: list[str]) -> Store | None:
    """The atlas-* runs of the store (or of `experiment`); None when there is no store at all.
    Read-only: no lock, no migration, no repair, no file created (benchmark.tracking.check_store)."""
    from benchmark.tracking import CHECKED_SCHEMAS, check_store, damage, sqlite_path

    db = sqlite_path(uri)
    if db is not None and not db.exists():  # nothing tracked here yet; do not create a store by looking
        return None
    state = check_store(uri, write=False)  # not an MLflow store, server down, no driver: exit 2 now
    if db is None:
        return read_client(uri, experiment, metrics)
    if state.objects == 0:  # a 0-byte or schema-less file: a store that holds nothing yet
        return Store()
    problem = damage(state)
    if problem is None and state.versions[0] not in CHECKED_SCHEMAS:
        return read_client(uri, experiment, metrics)  # MLflow's answer, or its refusal of the version (exit 2)
    try:
        store = read_sqlite(db, experiment, metrics)
    except sqlite3.DatabaseError as exc:
        why = (f"an interrupted run left it half-migrated ({problem}); the next `benchmark run` or `sweep` "
               "repairs it (compare only reads)") if problem else str(exc)
        raise InputError(f"cannot read the MLflow store: {why}", path=str(db)) from None
    if problem:
        sys.stderr.write(f"note: {db}: an interrupted run left the MLflow store half-migrated ({problem}); "
                         "compare only reads it, the next `benchmark run` or `sweep` repairs it\n")
    return store


def read_sqlite(db: Path, experiment: str | None, metrics: list[str]) -> Store:
    """The fast path: the same as read_client, with plain sqlite3 on a read-only connection."""
    from benchmark.tracking import connect_readonly

    store = Store()
    with contextlib.closing(connect_readonly(db)) as con:
        names = {eid: name for eid, name in con.execute(
            "SELECT experiment_id, name FROM experiments WHERE lifecycle_stage = 'active'")
            if _wanted(name, experiment)}
        store.experiments = set(names.values())
        rows = con.execute("SELECT run_uuid, experiment_id, start_time, name, status FROM runs "
                           "WHERE lifecycle_stage = 'active' ORDER BY start_time, run_uuid").fetchall()
        for run_id, eid, start, run_name, status in rows:
            if eid in names:
                store.runs[run_id] = {"experiment": names[eid], "start": start, "name": run_name, "status": status,
                                      "tags": {}}
        for run_id, key, value in con.execute(
                f"SELECT run_uuid, key, value FROM tags WHERE key IN ({','.join('?' * (1 + len(RUN_TAGS)))})",
                (PARENT_LINK, *RUN_TAGS)):
            if run_id not in store.runs:
                continue
            if key == PARENT_LINK:
                store.parent[run_id] = value
            else:
                store.runs[run_id]["tags"][key] = value
        if metrics:
            marks = ",".join("?" * len(metrics))
            for run_id, key, value, is_nan in con.execute(
                    f"SELECT run_uuid, key, value, is_nan FROM latest_metrics WHERE key IN ({marks})", metrics):
                if run_id in store.runs:  # MLflow stores a NaN as 0 with is_nan set
                    store.metrics.setdefault(run_id, {})[key] = math.nan if is_nan else float(value)
    return store


PAGE = 1000  # runs per search_runs call (MLflow's own default page size)


def read_client(uri: str, experiment: str | None, metrics: list[str]) -> Store:
    """Through MLflow's public client (MlflowClient.search_runs): any store, the reference answer."""
    from benchmark.tracking import import_mlflow, store_errors

    mlflow = import_mlflow()
    store = Store()
    with store_errors(uri):  # MLflow's refusal of the store (another schema version): exit 2 with the fix
        client = mlflow.MlflowClient(uri)
        experiments, token = [], None
        while True:
            page = client.search_experiments(max_results=PAGE, page_token=token)
            experiments += [e for e in page if _wanted(e.name, experiment)]
            token = page.token
            if not token:
                break
        runs, token = [], None
        while experiments:
            page = client.search_runs([e.experiment_id for e in experiments], max_results=PAGE, page_token=token,
                                      order_by=["attributes.start_time ASC"])
            runs += page
            token = page.token
            if not token:
                break
    names = {e.experiment_id: e.name for e in experiments}
    store.experiments = set(names.values())
    for run in sorted(runs, key=lambda r: (r.info.start_time or 0, r.info.run_id)):
        run_id, tags = run.info.run_id, run.data.tags
        store.runs[run_id] = {"experiment": names[run.info.experiment_id], "start": run.info.start_time,
                              "name": run.info.run_name, "status": run.info.status,
                              "tags": {k: v for k, v in tags.items() if k in RUN_TAGS}}
        if PARENT_LINK in tags:
            store.parent[run_id] = tags[PARENT_LINK]
        chosen = {k: v for k, v in run.data.metrics.items() if k in metrics}
        if chosen:
            store.metrics[run_id] = chosen
    return store


def _start(ms) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms else ""


def _descendants(store: Store) -> dict[str, list[str]]:
    """Each top-level run's descendants (children, a sweep's cells and their children), in start order."""
    top: dict[str, list[str]] = {run_id: [] for run_id in store.runs if run_id not in store.parent}
    for run_id in store.runs:
        ancestor, seen = run_id, set()
        while ancestor in store.parent and ancestor not in seen:
            seen.add(ancestor)
            ancestor = store.parent[ancestor]
        if ancestor != run_id and ancestor in top:
            top[ancestor].append(run_id)
    return top


def _clairvoyant(store: Store, run_id: str) -> bool:
    return store.runs[run_id]["tags"].get(CLAIRVOYANT_TAG) == "true"


def _best(store: Store, runs: list[str], metrics: list[str]) -> str:
    """`<metric> <value> (<child>)` for the first metric the runs have, best of them; '' if none.

    Rows that read true sizes (srpt, oracle p̂, …: the references) are passed over while another row
    has the metric — `ratio 1.000 (srpt)` says nothing about the competitors; a reference that is the
    only row with it is shown marked `clairvoyant`."""
    competitors = [r for r in runs if not _clairvoyant(store, r)]
    for metric in metrics:
        for pool in (competitors, runs):
            values = [(store.metrics[r][metric], r) for r in pool
                      if not math.isnan(store.metrics.get(r, {}).get(metric, math.nan))]  # a NaN is no value
            if values:
                sign = -1 if metric in HIGHER_IS_BETTER else 1
                value, run_id = min(values, key=lambda v: sign * v[0])  # ties: the first logged
                shown = f"{value:.3f}" if abs(value) < 1000 else f"{value:.4g}"
                mark = ", clairvoyant" if _clairvoyant(store, run_id) else ""
                return f"{metric} {shown} ({store.runs[run_id]['name']}{mark})"
    return ""


def parents_table(store: Store, metrics: list[str]):
    """One row per top-level run: run, experiment, start, name, status, children, best."""
    import pandas as pd

    family = _descendants(store)
    records = []
    for run_id, descendants in family.items():
        run = store.runs[run_id]
        children = sum(1 for r in descendants if store.parent.get(r) == run_id)
        records.append({"run": run_id[:8], "experiment": run["experiment"], "start": _start(run["start"]),
                        "name": run["name"], "status": run["status"], "children": children,
                        "best": _best(store, descendants, metrics)})
    return pd.DataFrame(records, columns=["run", "experiment", "start", "name", "status", "children", "best"])


def children_table(store: Store, run: str, metrics: list[str]):
    """The result rows of one run (its children; a sweep's: its cells' children), with the chosen metrics."""
    import pandas as pd

    matches = [r for r in store.runs if r.startswith(run) and r not in store.parent] or \
              [r for r in store.runs if r.startswith(run)]
    if len(matches) != 1:
        found = "no tracked run" if not matches else f"{len(matches)} tracked runs"
        raise InputError(f"{found} with an id starting '{run}'", where="--run")
    (top,) = matches
    family = _descendants(store).get(top)
    if family is None:  # a run inside a sweep: its own children
        family = [r for r in store.runs if store.parent.get(r) == top]
    with_children = set(store.parent.values())
    records = []
    for run_id in family:
        if run_id in with_children:
            continue  # a sweep's cell: its children are the rows
        info, parent = store.runs[run_id], store.parent.get(run_id)
        record = {"run": run_id[:8], "cell": store.runs[parent]["name"] if parent and parent != top else "",
                  "name": info["name"], "status": info["status"]}
        record.update({key: info["tags"].get(key) for key in ("policy", "method", "predictor", "machines")})
        record["clairvoyant"] = "yes" if _clairvoyant(store, run_id) else None
        record.update({m: store.metrics.get(run_id, {}).get(m) for m in metrics})
        records.append(record)
    table = pd.DataFrame(records, columns=["run", "cell", "name", "status", "policy", "method", "predictor",
                                           "machines", "clairvoyant", *metrics])
    if not table["cell"].astype(bool).any():
        table = table.drop(columns="cell")
    return table.dropna(axis=1, how="all")


def _is_compare_csv(path: Path) -> bool:
    """A CSV that `compare --csv` wrote (its header row), the only file `--csv` may replace."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().startswith(("run,experiment,start", "run,cell,name", "run,name,status"))
    except (OSError, UnicodeDecodeError):
        return False


def _compare(args) -> int:
    from benchmark.results import format_table
    from benchmark.tracking import check_store_kind, store_is_idle

    metrics = [s.strip() for s in args.metrics.split(",") if s.strip()]
    if args.csv:
        from atlas_data.outputs import check_output_file

        check_output_file(Path(args.csv), "compare", option="--csv", recognise=_is_compare_csv)
    uri = store_uri(Path(args.results) if args.results else None)
    check_store_kind(uri, write=False)  # a file store, an unknown scheme: exit 2 with the fix, not MLflow's exception
    store = read_store(uri, args.experiment, metrics)
    if store is None:
        if args.experiment:
            raise InputError(f"no experiment named '{args.experiment}' in {uri} (no store there)", where="--experiment")
        print(f"nothing to compare: no MLflow store at {uri}")
        return 0
    if args.experiment and args.experiment not in store.experiments:
        raise InputError(f"no experiment named '{args.experiment}' in {uri}", where="--experiment")
    if not store.runs:
        print(f"nothing to compare: no tracked runs in {uri}")
        return 0
    table = children_table(store, args.run, metrics) if args.run else parents_table(store, metrics)
    if args.csv:
        from atlas_data.outputs import output_file

        output_file(Path(args.csv), "compare", lambda tmp: table.to_csv(tmp, index=False), option="--csv",
                    recognise=_is_compare_csv)
    print(format_table(table.to_dict("records"), list(table.columns)))
    running = int((table["status"] == "RUNNING").sum()) if len(table) else 0
    if running and store_is_idle(uri):
        print(f"note: {running} run(s) still RUNNING although no run is being logged: their process was killed "
              "while logging (their output folders hold the results)")
    return 0
