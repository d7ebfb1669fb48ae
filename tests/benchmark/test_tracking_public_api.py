"""Tracking rests on MLflow's public API only (issue 32, item 5).

`benchmark compare` shows what MlflowClient.search_runs / mlflow.search_runs return on the same store
(its sqlite3 fast path included); no module of the project imports a private MLflow name, reads MLflow's
migration scripts or uses alembic; a store MLflow refuses is exit 2 with one line and the fix; mlflow
is pinned to the major range these tests ran on.
"""

import ast
import math
import re
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
from cli_checks import exit_2_one_line, sql

from benchmark import tracking
from benchmark.cli import main
from benchmark.commands import compare

# the commands' figures are not rendered: no test here looks at one (tests/conftest.py)
# long_file: started first on the xdist workers (tests/conftest.py)
pytestmark = [pytest.mark.usefixtures("figures_unrendered"), pytest.mark.long_file]

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("atlas_data", "predictors", "schedulers", "benchmark", "leaderboards", "tests")
OLD_SCHEMA = "451aebb31d03"  # MLflow's first schema migration (MLflow 1.x): known to every MLflow, written by none now
T0 = 1_700_000_000_000  # start times of the hand-made runs (ms)


def _run_args(jobs, out, *extra):
    return ["run", "--task", "scheduling", "--objective", "total_completion", "--jobs", str(jobs),
            "--policies", "fifo,srpt,spjf", "--output", str(out), "--quiet", *extra]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One store with what compare has to get right: a `benchmark run` (children, a clairvoyant one),
    a sweep (cells with children), and runs made with MlflowClient: a NaN, an infinite and a re-logged
    metric, a deleted child, a RUNNING run, equal start times, a deleted experiment, an empty one, and
    experiments compare leaves out (`other`, `Atlas-caps`)."""
    import mlflow
    from mlflow.entities import Metric

    root = tmp_path_factory.mktemp("public")
    jobs = root / "jobs.csv"
    pd.DataFrame({"job_id": ["a", "b", "c", "d"], "submit_time": [0, 0, 1, 2],
                  "duration": [3, 1, 2, 1]}).to_csv(jobs, index=False)
    (root / "sweep.yaml").write_text("task: scheduling\njobs: jobs.csv\nobjectives: total_completion\n"
                                     "policies: [fifo, spjf]\nnoise: [0, 1]\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("MLFLOW_TRACKING_URI", raising=False)
        patch.chdir(root)
        assert main(_run_args(jobs, root / "results" / "first", "--noise", "0")) == 0
        assert main(["sweep", "sweep.yaml", "--workers", "1", "--output", str(root / "sweeps" / "noise"),
                     "--quiet"]) == 0
    db = root / "results" / "mlflow.db"
    uri = f"sqlite:///{db}"
    client = mlflow.MlflowClient(uri)
    extra = client.create_experiment("atlas-extra", artifact_location=(root / "art").as_uri())
    parent = client.create_run(extra, run_name="hand", start_time=T0, tags={"atlas.level": "run"}).info.run_id

    def child(name, metrics, start, **tags):
        run = client.create_run(extra, run_name=name, start_time=start,
                                tags={"mlflow.parentRunId": parent, "atlas.level": "child", **tags}).info.run_id
        client.log_batch(run, metrics=[Metric(k, v, T0 + i, step) for i, (k, v, step) in enumerate(metrics)])
        client.set_terminated(run, "FINISHED")
        return run

    child("nan", [("ratio", math.nan, 0), ("rmsle", 5.0, 0), ("rmsle", 2.0, 1)], T0 + 1, policy="fifo")
    child("big", [("ratio", math.inf, 0), ("cov25", 0.25, 0)], T0 + 2, policy="rr")
    child("twin-b", [("ratio", 1.5, 0)], T0 + 3, policy="spjf", predictor="noise:1")
    child("twin-a", [("ratio", 1.25, 0)], T0 + 3, policy="spjf", predictor="noise:0")  # same start: id order
    child("ref", [("ratio", 1.0, 0)], T0 + 4, policy="srpt", **{"atlas.clairvoyant": "true"})
    client.delete_run(child("deleted", [("ratio", 0.1, 0)], T0 + 5, policy="lpt"))  # not shown, not the best
    client.set_terminated(parent, "FINISHED")
    client.create_run(extra, run_name="killed", start_time=T0 + 10)  # left RUNNING, as after a SIGKILL
    client.create_experiment("atlas-empty")
    for name in ("other", "Atlas-caps", "atlas-gone"):
        experiment = client.create_experiment(name)
        client.set_terminated(client.create_run(experiment, run_name=f"in {name}").info.run_id, "FINISHED")
    client.delete_experiment(client.get_experiment_by_name("atlas-gone").experiment_id)
    return db


def _same(a: compare.Store, b: compare.Store) -> None:
    """Equal stores, run order included; NaN equals NaN."""
    assert list(a.runs) == list(b.runs) and a.runs == b.runs
    assert a.parent == b.parent and a.experiments == b.experiments
    shown = lambda s: {r: {k: repr(v) for k, v in m.items()} for r, m in s.metrics.items()}  # noqa: E731
    assert shown(a) == shown(b)


def test_the_store_this_mlflow_writes_is_one_the_fast_path_was_checked_on(store):
    """A new MLflow schema fails here (compare would still answer, through MlflowClient, but slower):
    check the fast path on it with the tests below and add it to CHECKED_SCHEMAS."""
    ((version,),) = sql(store, "SELECT version_num FROM alembic_version")  # as MLflow built it
    assert version in tracking.CHECKED_SCHEMAS, version
    assert tracking.schema_refusal(f"sqlite:///{store}") is None


def test_mlflow_is_pinned_to_the_major_range_the_tests_ran_on():
    from importlib.metadata import version

    from packaging.requirements import Requirement

    text = (REPO / "pyproject.toml").read_text()
    (line,) = re.findall(r'"(mlflow\s*[<>=][^"]*)"', text)
    requirement = Requirement(line)
    installed = version("mlflow")
    major = int(installed.split(".")[0])
    assert installed in requirement.specifier, (line, installed)
    assert f"{major + 1}.0" not in requirement.specifier, f"{line}: no upper bound below MLflow {major + 1}"
    assert f"mlflow=={installed}" in (REPO / "constraints.txt").read_text()


@pytest.mark.parametrize("experiment", [None, "atlas-extra", "atlas-empty", "atlas-scheduling-total_completion",
                                        "atlas-sweep-scheduling", "other"])
@pytest.mark.parametrize("metrics", [compare.DEFAULT_METRICS.split(","), ["rmsle", "no-such"], []])
def test_the_fast_path_reads_what_mlflowclient_search_runs_returns(store, experiment, metrics):
    fast = compare.read_sqlite(store, experiment, metrics)
    client = compare.read_client(f"sqlite:///{store}", experiment, metrics)
    _same(fast, client)
    if experiment is None:  # the store holds what the cases are about
        assert len(fast.runs) == 18 and "atlas-empty" in fast.experiments and "other" not in fast.experiments
        assert not {"Atlas-caps", "atlas-gone"} & fast.experiments
        assert "deleted" not in [run["name"] for run in fast.runs.values()]
        twins = [r for r in fast.runs if fast.runs[r]["name"].startswith("twin")]
        assert len(twins) == 2 and twins == sorted(twins)  # the same start time: in run id order
        if "ratio" in metrics:
            values = [m.get("ratio") for m in fast.metrics.values()]
            assert any(v is not None and math.isnan(v) for v in values) and math.inf > max(
                v for v in values if v is not None and not math.isnan(v)) > 1e300  # MLflow keeps inf as max float
        if "rmsle" in metrics:
            (rmsle,) = [m["rmsle"] for m in fast.metrics.values() if "rmsle" in m]
            assert rmsle == 2.0  # the value at the last step


def _search_runs(uri):
    """Every active run of the atlas-* experiments, by mlflow.search_runs (MLflow's fluent public API)."""
    import mlflow

    tracking.use_store(mlflow, uri)
    names = [e.name for e in mlflow.search_experiments() if e.name.startswith("atlas-")]
    frame = mlflow.search_runs(experiment_names=names, max_results=50000)
    parents = frame.get("tags.mlflow.parentRunId", pd.Series(None, index=frame.index))
    frame = frame.assign(parent=parents.where(parents.notna(), None))
    return frame.sort_values(["start_time", "run_id"], kind="stable").reset_index(drop=True)


def test_compare_shows_what_search_runs_returns(store, tmp_path, monkeypatch, capsys):
    uri = f"sqlite:///{store}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.chdir(tmp_path)
    csv = tmp_path / "compare.csv"
    assert main(["compare", "--csv", str(csv)]) == 0
    shown = pd.read_csv(csv, dtype=str, keep_default_na=False)
    # the same table as compare builds from MlflowClient's answer
    metrics = compare.DEFAULT_METRICS.split(",")
    expected = compare.parents_table(compare.read_client(uri, None, metrics), metrics).astype(str)
    pd.testing.assert_frame_equal(shown, expected)
    # and, column by column, what mlflow.search_runs says
    runs = _search_runs(uri)
    top = runs[runs["parent"].isna()]
    assert shown["run"].tolist() == [r[:8] for r in top["run_id"]]
    assert shown["name"].tolist() == top["tags.mlflow.runName"].tolist()
    assert shown["status"].tolist() == top["status"].tolist()
    assert shown["children"].tolist() == [str(int((runs["parent"] == r).sum())) for r in top["run_id"]]
    import mlflow

    names = {e.experiment_id: e.name for e in mlflow.search_experiments()}
    assert shown["experiment"].tolist() == [names[i] for i in top["experiment_id"]]
    hand = shown.set_index("name").loc["hand"]
    assert hand["children"] == "5" and hand["best"] == "ratio 1.250 (twin-a)"  # not the deleted 0.1, not NaN
    assert "note: 1 run(s) still RUNNING" in capsys.readouterr().out


def test_compare_run_shows_the_metrics_search_runs_returns(store, tmp_path, monkeypatch):
    uri = f"sqlite:///{store}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.chdir(tmp_path)
    runs = _search_runs(uri)
    for name in ("hand", "noise"):  # a run's children; a sweep's cells' children
        (parent,) = runs.loc[runs["tags.mlflow.runName"] == name, "run_id"]
        csv = tmp_path / f"{name}.csv"
        assert main(["compare", "--run", parent[:10], "--metrics", "ratio,rmsle", "--csv", str(csv)]) == 0
        shown = pd.read_csv(csv, keep_default_na=False, na_values={"ratio": [""], "rmsle": [""]})
        below = set(runs.loc[runs["parent"] == parent, "run_id"])
        below |= set(runs.loc[runs["parent"].isin(below), "run_id"])  # a sweep's cells' children
        rows = runs[runs["run_id"].isin(below) & ~runs["run_id"].isin(set(runs["parent"].dropna()))]
        assert len(rows) == len(shown) == {"hand": 5, "noise": 4}[name]  # the rows: runs without children
        assert shown["run"].tolist() == [r[:8] for r in rows["run_id"]]
        assert shown["name"].tolist() == rows["tags.mlflow.runName"].tolist()
        for metric in ("ratio", "rmsle"):
            if f"metrics.{metric}" in rows and rows[f"metrics.{metric}"].notna().any():
                assert shown[metric].tolist() == pytest.approx(rows[f"metrics.{metric}"].tolist(), nan_ok=True)


def test_a_store_of_an_unchecked_schema_is_read_through_mlflowclient(store, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{store}")
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "--csv", str(tmp_path / "fast.csv")]) == 0

    def no_fast_path(*args):
        raise AssertionError("read with sqlite3")

    monkeypatch.setattr(tracking, "CHECKED_SCHEMAS", frozenset())
    monkeypatch.setattr(compare, "read_sqlite", no_fast_path)
    assert main(["compare", "--csv", str(tmp_path / "client.csv")]) == 0
    assert (tmp_path / "client.csv").read_text() == (tmp_path / "fast.csv").read_text()


# ----- no private MLflow names, no reading of MLflow's own files --------------------------------
PRIVATE_ATTRIBUTE = re.compile(r"\bmlflow(\.\w+)*\._(?!_\w*__\b)\w")  # mlflow.x._y, not mlflow.__version__
MLFLOW_FILES = re.compile(r"db_migrations|alembic\.ini|_get_alembic_config|_upgrade_db|_engine_map")


def _project_sources():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            if path.resolve() != Path(__file__).resolve():
                yield path


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_mlflow_uses(source: str) -> list[str]:
    """Where `source` imports a private MLflow name, reaches one as an attribute, uses alembic or
    names MLflow's migration machinery."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mlflow", "alembic"):
            parts = node.module.split(".") + [alias.name for alias in node.names]
            if node.module.startswith("alembic") or any(_private(p) for p in parts):
                found.append(f"line {node.lineno}: from {node.module} import "
                             f"{', '.join(a.name for a in node.names)}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "alembic" or (parts[0] == "mlflow" and any(_private(p) for p in parts)):
                    found.append(f"line {node.lineno}: import {alias.name}")
    for number, line in enumerate(source.splitlines(), 1):
        if PRIVATE_ATTRIBUTE.search(line) or MLFLOW_FILES.search(line):
            found.append(f"line {number}: {line.strip()}")
    return found


def test_no_module_of_the_project_uses_a_private_mlflow_name():
    assert len(list(_project_sources())) > 50
    used = {str(p.relative_to(REPO)): private_mlflow_uses(p.read_text(encoding="utf-8")) for p in _project_sources()}
    assert {path: lines for path, lines in used.items() if lines} == {}


@pytest.mark.parametrize("source", [
    "from mlflow.store.db.utils import _get_alembic_config",
    "from mlflow.store.db.utils import (\n    create_sqlalchemy_engine,\n    _upgrade_db,\n)",
    "import mlflow._private",
    "from mlflow._internal import thing",
    "x = mlflow.store.db.utils._verify_schema(engine)",
    "from mlflow.utils import _private_helper as helper",
    "from alembic.script import ScriptDirectory",
    "folder = root / 'store' / 'db_migrations' / 'versions'",
    "maps = getattr(SqlAlchemyStore, '_engine_map', {})",
])
def test_the_check_finds_each_way_of_reaching_inside_mlflow(source):
    assert private_mlflow_uses(source)


def test_the_check_leaves_the_public_api_alone():
    assert not private_mlflow_uses("import mlflow\nfrom mlflow.entities import Metric, Param, RunTag\n"
                                   "client = mlflow.MlflowClient(uri)\nclient.search_runs(ids)\n"
                                   "from mlflow.data.meta_dataset import MetaDataset\n"
                                   "print(mlflow.__version__)\nfrom mlflow import __version__\n")


# ----- a store MLflow refuses: exit 2, one line, the fix, nothing changed --------------------------
@pytest.mark.parametrize("version", [OLD_SCHEMA, "0123456789ab"])
def test_a_store_mlflow_refuses_is_exit_2_with_one_line_and_the_fix(store, tmp_path, monkeypatch, capsys, version):
    results = tmp_path / "results"
    results.mkdir()
    db = results / "mlflow.db"
    shutil.copyfile(store, db)
    sql(db, "UPDATE alembic_version SET version_num = ?", version)
    before = db.read_bytes()
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.chdir(tmp_path)
    words = (str(db), f"schema version {version}", f"`mlflow db upgrade sqlite:///{db}`", "upgrade MLflow")
    exit_2_one_line(capsys, ["compare"], *words)
    shutil.copyfile(store.parent.parent / "jobs.csv", tmp_path / "jobs.csv")
    started = time.perf_counter()
    exit_2_one_line(capsys, _run_args("jobs.csv", results / "run"), *words)
    assert not (results / "run").exists()  # refused before the work, not after it
    # nothing beside it either: the lock file the refused run created is gone with it
    assert db.read_bytes() == before and sorted(p.name for p in results.iterdir()) == ["mlflow.db"]
    assert time.perf_counter() - started < 60


def test_a_repair_migrates_with_mlflows_public_command(store, tmp_path):
    """_repair finishes a stopped migration with `mlflow db upgrade URI` (no private upgrade function):
    the command runs here, a no-op on a current store, and says no on a version MLflow does not know."""
    db = tmp_path / "mlflow.db"
    shutil.copyfile(store, db)
    before = sql(db, "SELECT version_num FROM alembic_version")
    assert tracking._upgrade(f"sqlite:///{db}") is True
    assert sql(db, "SELECT version_num FROM alembic_version") == before and sql(db, "SELECT COUNT(*) FROM runs")[0][0] > 15
    sql(db, "UPDATE alembic_version SET version_num = '0123456789ab'")
    assert tracking._upgrade(f"sqlite:///{db}") is False
